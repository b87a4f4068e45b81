/* optim.h: the optimizers over a model's flat parameter buffer (AdamW, SGD
 * with momentum), the global gradient norm and clipping, and the weight EMA.
 * The state (AdamW's m and v, SGD's momentum) is flat buffers in the
 * parameters' order covering a range [begin, end) of the flat buffer, so a
 * rank can own a shard (ZeRO); the whole model is [0, n_params).
 * Weight decay applies to the slices the model marks (model.h: the GPT's
 * matrices and embeddings, not biases and LayerNorm gains, as GPT-2 and
 * nanoGPT; the CNNs' conv and linear weights).
 * Unfused: one backend call per parameter tensor (a for-loop optimizer);
 * fused: one pass over the range (multi-tensor apply), which also takes the
 * loss scaler's 1/S so gradients are unscaled on the fly. */
#ifndef TR_OPTIM_H
#define TR_OPTIM_H

#include "backend.h"
#include "model.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum tr_optim_kind { TR_OPTIM_ADAMW, TR_OPTIM_SGD } tr_optim_kind;

typedef struct tr_optim_config {
    tr_optim_kind kind;
    float beta1, beta2, eps; /* AdamW */
    float momentum;          /* SGD; 0 keeps no buffer */
    float weight_decay;      /* AdamW: decoupled; SGD: L2 added to the gradient, as torch.optim.SGD */
    bool fused;
} tr_optim_config;

typedef struct tr_optim {
    tr_optim_config cfg;
    int t;                  /* steps taken */
    size_t begin, end;      /* the range of the flat buffers this state covers */
    tr_tensor m;            /* (end - begin): AdamW's first moment, SGD's momentum buffer */
    tr_tensor v;            /* (end - begin): AdamW's second moment; data NULL for SGD */
} tr_optim;

/* Allocates and zeroes the state for [begin, end) of the flat buffers. */
int tr_optim_init(tr_optim *o, tr_model *model, const tr_optim_config *cfg, size_t begin, size_t end);
void tr_optim_release(tr_optim *o, tr_model *model);
/* One step over [begin, end) with what the step decided in *h (backend.h:
 * values from the host, or the device state the kernels read, which also
 * skips a skipped step); o->t is the caller's to advance. The gradients are
 * multiplied by h's grad_scale first when h->scaled (the fused path does it
 * inside the update, the unfused path in a pass of its own).
 * NVTX range "optimizer". */
void tr_optim_step(tr_optim *o, tr_model *model, const tr_step_hyper *h);
/* A step the host decided to take: advances o->t and gives the values. */
tr_step_hyper tr_optim_host_step(tr_optim *o, float lr, float grad_scale);

/* The gradient check over [begin, end): fused, one pass; unfused, per
 * tensor, a sum of squares then a finite check. tr_grad_sumsq reads the sum
 * of squares and whether all are finite back to the host;
 * tr_grad_check_device accumulates them into the device step state
 * (kernels/step_state.h; the backend's step_ops must exist). NVTX range
 * "grad norm". */
double tr_grad_sumsq(tr_model *model, bool fused, size_t begin, size_t end, bool *finite);
void tr_grad_check_device(tr_model *model, bool fused, size_t begin, size_t end);

/* The weight EMA: ema = decay*ema + (1-decay)*params after each step, and
 * so for the model's running statistics when it has any (AveragedModel
 * with use_buffers); evaluation swaps it in and back
 * (torch.optim.swa_utils.AveragedModel). */
typedef struct tr_ema {
    float decay;
    tr_tensor w;     /* (n_params) */
    tr_tensor stats; /* the model's stats averaged; data NULL when it has none */
} tr_ema;
int tr_ema_init(tr_ema *e, tr_model *model, float decay);
void tr_ema_release(tr_ema *e, tr_model *model);
/* After a step; h as tr_optim_step's (on the device a skipped step changes nothing). */
void tr_ema_update(tr_ema *e, tr_model *model, const tr_step_hyper *h);
/* Exchanges the model's parameters (and statistics) with the EMA (twice restores them). */
void tr_ema_swap(tr_ema *e, tr_model *model);

/* The learning-rate schedule. constant: lr after a linear warmup; cosine:
 * linear warmup, then cosine decay to lr*min_frac at the last step;
 * onecycle: torch.optim.lr_scheduler.OneCycleLR (cosine annealing from
 * lr/25 up to lr over the warmup, or 30% of the steps without one, then down
 * to lr/25/1e4). */
typedef enum tr_schedule_kind { TR_SCHEDULE_CONSTANT, TR_SCHEDULE_COSINE, TR_SCHEDULE_ONECYCLE } tr_schedule_kind;
typedef struct tr_schedule {
    tr_schedule_kind kind;
    float lr, min_frac;
    int warmup, total_steps;
} tr_schedule;
float tr_schedule_lr(const tr_schedule *s, int step);

#endif
