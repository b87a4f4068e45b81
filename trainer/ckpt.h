/* ckpt.h: checkpoints as safetensors: the weights under their names in
 * tr_gpt_tensor_names (nn.Linear layout, (out, in); per-layer tensors
 * stacked as (L, ...)), AdamW's moments as "optimizer.m.<name>" and
 * "optimizer.v.<name>" (SGD's momentum as "optimizer.momentum.<name>"), and
 * in __metadata__ the optimizer, the step, the optimizer's step count,
 * the data seed (the loader's only state besides the step) and the shape.
 * PyTorch (safetensors.torch.load_file) and Hugging Face tools read it.
 * Writes are atomic: a temporary file beside the target, fsync, rename.
 * Loading refuses a truncated file, a file of another kind and a checkpoint
 * of another shape, with a message that names the file. */
#ifndef TR_CKPT_H
#define TR_CKPT_H

#include "gpt.h"
#include "optim.h"

#include <stdint.h>

typedef struct tr_ckpt_state {
    int64_t step;  /* steps done; the next batch index */
    uint64_t seed; /* the data order */
} tr_ckpt_state;

int tr_ckpt_save(const char *path, tr_gpt *m, const tr_optim *opt, const tr_ckpt_state *st);
int tr_ckpt_load(const char *path, tr_gpt *m, tr_optim *opt, tr_ckpt_state *st);

#endif
