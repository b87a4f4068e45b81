/* ckpt_cnn.h: checkpoints of the CNN models (model_cnn.h) as safetensors,
 * through ckpt_io.h: the flat parameters ("params"), BatchNorm's running
 * statistics ("bn_running_stats"), the optimizer's state
 * ("optimizer.m"/"optimizer.v" for AdamW, "optimizer.momentum" for SGD with
 * momentum), under --ema the averaged parameters and statistics
 * ("ema.params", "ema.bn_running_stats"), the epoch's order of training images ("data.order", int32),
 * and in __metadata__ (format "gtrace-trainer-cnn-1") the model, its shape,
 * the optimizer, the step, the optimizer's step count, the seed, the epoch
 * and position in it, the two random streams (the data's shuffle and
 * dropout's masks), the epoch's loss so far and the dynamic loss scale
 * (--amp fp16), so that a resumed run draws
 * and prints what the uninterrupted one would, bit for bit.
 * Loading refuses a GPT's checkpoint, the other preset, another optimizer
 * or training-set size, a file with an EMA for a run without one or the
 * other way round, a truncated file and values no run writes, with a
 * message naming the file and the field. */
#ifndef TR_CKPT_CNN_H
#define TR_CKPT_CNN_H

#include "model_cnn.h"
#include "optim.h"

#include <stdint.h>

typedef struct tr_ckpt_cnn_state {
    int64_t step;         /* optimizer steps done */
    int t;                /* the optimizer's step count */
    uint64_t seed;        /* --seed of the run that began it */
    int epoch, pos;       /* epochs begun; the next image's position in order */
    int n_order;          /* training images */
    int *order;           /* (n_order) host: this epoch's order */
    uint64_t data_rng, dropout_rng; /* the shuffle's and dropout's generator states */
    double loss_sum;      /* the epoch's step losses so far, and their count */
    int loss_n;
    double loss_scale;    /* the dynamic loss scale and its good steps in a row; 0: none (saved or loaded) */
    int loss_scale_good_steps;
    float *ema_params;    /* --ema: device (n_params) and (n_stats); NULL without an EMA */
    float *ema_stats;
} tr_ckpt_cnn_state;

/* Saves m and the optimizer's state (device buffers: AdamW's m and v, or
 * SGD's momentum in opt_m; NULL where the optimizer keeps none). */
int tr_ckpt_cnn_save(const char *path, tr_cnn *m, const tr_optim_config *oc, const float *opt_m, const float *opt_v,
                     const tr_ckpt_cnn_state *st);
/* Loads into m, opt_m, opt_v and st (st->n_order and st->order given: the
 * run's training-set size and a buffer for the order). Nothing of m or
 * the optimizer is usable after a failure: the caller stops. */
int tr_ckpt_cnn_load(const char *path, tr_cnn *m, const tr_optim_config *oc, float *opt_m, float *opt_v,
                     tr_ckpt_cnn_state *st);

#endif
