/* ckpt.h: checkpoints as safetensors: the weights under their names in
 * tr_gpt_tensor_names (nn.Linear layout, (out, in); per-layer tensors
 * stacked as (L, ...)), AdamW's moments as "optimizer.m.<name>" and
 * "optimizer.v.<name>" (SGD's momentum as "optimizer.momentum.<name>"), and
 * the weight EMA (--ema) as "ema.<name>" when the run keeps one, and
 * in __metadata__ the optimizer, the step, the optimizer's step count,
 * the data seed (the loader's only state besides the step), the shape and,
 * with mixed precision, the loss scaler's scale and count of good steps.
 * PyTorch (safetensors.torch.load_file) and Hugging Face tools read it.
 *
 * Sharded checkpoints (FSDP's SHARDED_STATE_DICT) are one file per rank,
 * "<path>.rank<r>-of-<N>": the rank's range [begin, end) of the flat order
 * as 1-D tensors "shard.params", "shard.optimizer.<m|v|momentum>", and the
 * rank, rank count, ZeRO stage, range and parameter count in the metadata,
 * under another format name, so a full loader never mistakes one for a
 * checkpoint. Nothing is written at <path> itself.
 * A full file can be loaded for any range [begin, end): that is how FSDP on
 * any number of ranks resumes from one. tr_ckpt_locate tells which kind a
 * path names.
 *
 * Writes are atomic: a temporary file beside the target, fsync, rename.
 * A save replaces only a regular file (through a symbolic link, the file
 * it names) or creates one; a device, FIFO, folder or a link to one is
 * refused, and a signal that ends the process during a save removes its
 * temporary file.
 * Loading refuses what is not a regular file (without waiting on a FIFO),
 * a truncated file, a file of another kind, a checkpoint of another shape,
 * optimizer, rank or range, and metadata numbers the trainer cannot run
 * with (step, optimizer_t, seed, loss scale), with a message that names
 * the file and the field. It does not know MPI: dist_gpt.c gathers and scatters. */
#ifndef TR_CKPT_H
#define TR_CKPT_H

#include "ckpt_io.h"
#include "gpt.h"
#include "optim.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct tr_ckpt_state {
    int64_t step;  /* steps done; the next batch index */
    uint64_t seed; /* the data order */
    double loss_scale;         /* the loss scaler's scale; 0: none saved */
    int loss_scale_good_steps; /* its good steps in a row */
    tr_tensor *ema;            /* the weight EMA (n_params floats) to save, or to load into; NULL: none.
                                  Full checkpoints only: a shard save refuses it */
    bool ema_loaded;           /* after a load: the file held an EMA and it was read into ema */
} tr_ckpt_state;

/* One rank's part of a sharded checkpoint. */
typedef struct tr_ckpt_shard {
    int rank, n_ranks;
    int zero;           /* the ZeRO stage that saved it (informative: the range does not depend on it) */
    size_t begin, end;  /* of the flat order; equal to the optimizer's range */
} tr_ckpt_shard;

/* The optimizer's state buffers saved after the weights: AdamW 2 (m, v),
 * SGD with momentum 1, SGD without it 0. */
int tr_ckpt_n_optim_groups(const tr_optim_config *cfg);

/* A full checkpoint from the model and an optimizer over all parameters. */
int tr_ckpt_save(const char *path, tr_gpt *m, const tr_optim *opt, const tr_ckpt_state *st);
/* The same file from host buffers (gathered from ranks): groups[0] the
 * weights, then the tr_ckpt_n_optim_groups state buffers, each n_params
 * floats in the flat order. opt gives the optimizer's kind and step count. */
int tr_ckpt_save_host(const char *path, const tr_gpt *m, const tr_optim *opt, const tr_ckpt_state *st,
                      const float *const *groups);
/* Loads a full checkpoint's range [opt->begin, opt->end) of the weights
 * (into params_flat.data + i) and the optimizer's state. For a range less
 * than everything the other weights are left as they are: the caller
 * gathers them (ZeRO-1/2) or does not hold them (ZeRO-3). */
int tr_ckpt_load(const char *path, tr_gpt *m, tr_optim *opt, tr_ckpt_state *st);

/* "<path>.rank<r>-of-<n>"; the caller frees it. NULL when out of memory. */
char *tr_ckpt_shard_path(const char *path, int rank, int n_ranks);
/* Writes this rank's shard to tr_ckpt_shard_path(path, ...): the weights
 * and the optimizer's state over sh's range, which must be opt's. */
int tr_ckpt_save_shard(const char *path, tr_gpt *m, const tr_optim *opt, const tr_ckpt_state *st,
                       const tr_ckpt_shard *sh);
/* Loads this rank's shard of the sharded checkpoint path; refuses a missing
 * file, another rank or rank count, range, shape or optimizer. */
int tr_ckpt_load_shard(const char *path, tr_gpt *m, tr_optim *opt, tr_ckpt_state *st, const tr_ckpt_shard *sh);

/* What path names: a full checkpoint (the file exists), a sharded one
 * (files "<path>.rank<r>-of-<N>" exist, *n_ranks = N), or nothing.
 * TR_EFORMAT when both exist or shards of several rank counts do. */
typedef enum tr_ckpt_kind { TR_CKPT_NONE, TR_CKPT_FULL, TR_CKPT_SHARDED } tr_ckpt_kind;
int tr_ckpt_locate(const char *path, tr_ckpt_kind *kind, int *n_ranks);
/* After a save at path of kind kept (sharded: over n_ranks), removes what
 * an earlier save of the other kind or rank count left there, so that path
 * names one checkpoint. The number of files removed, or a negative code. */
int tr_ckpt_remove_stale(const char *path, tr_ckpt_kind kept, int n_ranks);

#endif
