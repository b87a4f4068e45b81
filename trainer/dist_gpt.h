/* dist_gpt.h: distributed data parallel training of a tr_gpt on tr_dist:
 * what PyTorch's DistributedDataParallel and FullyShardedDataParallel do
 * to a model, through the model's hooks (gpt.h tr_gpt_hooks).
 *   DDP      every rank holds everything; gradients are all-reduced in
 *            buckets started during backward (only on the last micro-batch).
 *   ZeRO-1   as DDP, but each rank updates only its shard of the flat
 *            buffers with its shard of the optimizer state, then the
 *            parameters are all-gathered.
 *   ZeRO-2   also the gradients: each block's are reduce-scattered as soon
 *            as its backward is done, into the rank's gradient shard (every
 *            micro-batch, accumulated); full gradients never exist.
 *   ZeRO-3   also the parameters: a block's are all-gathered just before it
 *            runs (forward, and again for backward), the next one's
 *            prefetched, and freed after; the embeddings and final LayerNorm
 *            (the root unit) are gathered for the whole step, as FSDP's root.
 * The shard is one range [begin, end) of the flat order (dist.h). Under
 * ZeRO-2/3 the model's full buffers are released and its flat pointers
 * address the shard: element i of the flat order at flat.data + i for i in
 * [begin, end) only, which is what the optimizer and the norm read. */
#ifndef TR_DIST_GPT_H
#define TR_DIST_GPT_H

#include "ckpt.h"
#include "dist.h"
#include "gpt.h"

typedef enum tr_dist_strategy { TR_DIST_DDP, TR_DIST_FSDP } tr_dist_strategy;

typedef struct tr_dist_gpt_config {
    tr_dist_strategy strategy;
    int zero;             /* FSDP's ZeRO stage, 1 to 3 */
    size_t bucket_bytes;  /* DDP/ZeRO-1 all-reduce bucket capacity (--bucket-mb) */
} tr_dist_gpt_config;

typedef struct tr_dist_gpt tr_dist_gpt;

/* Installs the hooks and, for ZeRO-2/3, replaces the model's buffers by
 * shards. Call after tr_gpt_set_amp and before the optimizer is made (over
 * tr_dist_gpt_range). Every rank must have the same initial weights. */
int tr_dist_gpt_new(tr_dist_gpt **out, tr_dist *d, tr_gpt *m, const tr_dist_gpt_config *cfg);
/* Removes the hooks and frees the shards; the model's flat buffers are left
 * NULL under ZeRO-2/3 (tr_gpt_free accepts that). NULL is fine. */
void tr_dist_gpt_free(tr_dist_gpt *w);
tr_dist *tr_dist_gpt_dist(const tr_dist_gpt *w);
/* The range of the flat buffers this rank updates: its shard, or all for DDP. */
void tr_dist_gpt_range(const tr_dist_gpt *w, size_t *begin, size_t *end);
/* "ddp", "fsdp zero-2", ... */
const char *tr_dist_gpt_name(const tr_dist_gpt *w);

/* Before every forward (training or eval): ZeRO-3 gathers the root unit. */
int tr_dist_gpt_forward_begin(tr_dist_gpt *w);
/* Around a backward. last: the step's last micro-batch (DDP and ZeRO-1
 * communicate only then); first: its first (ZeRO-2/3 overwrite their
 * gradient shard instead of adding). backward_end waits for the
 * reductions: afterwards the range's gradients are averaged over ranks. */
int tr_dist_gpt_backward_begin(tr_dist_gpt *w, bool first, bool last);
int tr_dist_gpt_backward_end(tr_dist_gpt *w);
/* After an eval forward: ZeRO-3 frees the root unit. */
int tr_dist_gpt_eval_end(tr_dist_gpt *w);
/* The sum of squares of the whole gradient and whether it is finite on
 * every rank (the range's, all-reduced). */
int tr_dist_gpt_grad_sumsq(tr_dist_gpt *w, bool fused, double *sumsq, bool *finite);
/* After the optimizer step: ZeRO-1/2 all-gather the updated parameters. */
int tr_dist_gpt_step_end(tr_dist_gpt *w, bool stepped);
/* x averaged over the ranks (the loss for printing). */
int tr_dist_gpt_mean(tr_dist_gpt *w, float *x);

/* Checkpoints (ckpt.h), FSDP's two state-dict kinds. Collective: every
 * rank calls, and every rank returns the same status (a rank that failed
 * keeps its own message; the others say another rank failed).
 * Save, full: the parameters and the optimizer's state (opt: this rank's
 * range) gathered to rank 0, which writes one ordinary checkpoint at path
 * (DDP: rank 0 writes what it holds). Sharded (FSDP only): every rank
 * writes its shard, path.rank<r>-of-<N>. */
int tr_dist_gpt_save(tr_dist_gpt *w, const char *path, bool full, const tr_optim *opt, const tr_ckpt_state *st);
/* Resumes from a full checkpoint at path (each rank reads its range; ZeRO-1
 * and 2 then all-gather the parameters) or a sharded one (each rank its
 * own file; refused on another rank count, for DDP, or with a file
 * missing). Refuses shards saved at different steps. */
int tr_dist_gpt_load(tr_dist_gpt *w, const char *path, tr_optim *opt, tr_ckpt_state *st);

/* Model-state memory per rank: what this trainer's buffers should take at
 * this stage (expected: fp32 parameters, fp32 gradients, the optimizer's
 * optim_bytes_per_param, the AMP weight copy), the ZeRO paper's figure for
 * 16 bytes per parameter, and the caching allocator's allocated bytes (the
 * model states when called between steps). */
typedef struct tr_dist_gpt_memory {
    double expected_bytes, paper_bytes, measured_bytes;
} tr_dist_gpt_memory;
void tr_dist_gpt_get_memory(tr_dist_gpt *w, double optim_bytes_per_param, tr_dist_gpt_memory *out);

#endif
