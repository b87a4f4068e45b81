/* step_state.h: the state of the training step decided on the device; its
 * kernels are in kernels/cuda/optim.cu, and the trainer drives them through
 * its backend's step_ops (trainer/backend.h). It lives with the kernels that
 * read and write it; the trainer includes it, never the other way round.
 *
 * On the CPU backend the trainer decides each step on the host: it reads the
 * gradient check back, applies the loss scaler's rules and the clipping, and
 * passes the learning rate, Adam's step count and the gradients' scale to
 * the optimizer by value. A GPU backend keeps the same decisions in a small
 * struct in device memory, tr_step_state, written and read by kernels, so a
 * step needs no host synchronization and one captured CUDA graph of it is
 * right on every step (--cuda-graph); the optimizer then gets a pointer to
 * it where the host passes values. The rules are scaler.h's, the same code
 * compiled for the device.
 *
 * A step on the device:
 *   begin(lr)              lr in; the sums below cleared
 *   per micro-batch:       forward; add_loss(the forward's losses); backward
 *   check_grads(g)...      sum of squares and the inf/NaN check, accumulated
 *   verdict                GradScaler's rules and the clipping factor: the
 *                          scale used, grad_scale, grad_norm, skipped; the
 *                          next scale and good-step count; t += taken
 *   optimizer ops          lr, t and grad_scale from the state; on a skipped
 *                          step they write nothing
 * The cross-entropy backward multiplies its dloss by the state's loss scale
 * once the state is loaded, so the trainer passes 1/K there (K micro-batches)
 * instead of S/K: the same value for a power-of-two S.
 * The host learns the loss, the scale and the verdict only when it reads the
 * state back (read: one wait), on the steps that print.
 *
 * CUDA graphs (--cuda-graph): the step is run eagerly as warm-up, then
 * captured once on the compute stream and replayed. What changes per step is
 * in pinned host memory the graph reads (the learning rate, the tokens):
 * the host waits for the previous replay to have read them (wait_inputs)
 * before it writes the next step's. The caching allocator is frozen during
 * the capture and keeps the graph's blocks in a private pool (alloc.h). */
#ifndef TR_STEP_STATE_H
#define TR_STEP_STATE_H

#include "scaler.h"

#include <stddef.h>
#include <stdint.h>

/* In device memory; the host reads and writes it whole. */
typedef struct tr_step_state {
    /* carried from step to step */
    tr_scaler scaler;   /* GradScaler's state: the scale the next backward uses, its good steps, skips */
    float clip;         /* global gradient-norm clipping; 0 off (set once) */
    int32_t check;      /* 1: the gradient check runs (a scaler or clipping is on; set once) */
    int32_t t;          /* optimizer steps taken: AdamW's bias correction, SGD's first step */
    /* this step */
    float lr;           /* the schedule's learning rate */
    float scale_used;   /* the loss scale this step's backward used */
    float grad_scale;   /* what the optimizer multiplies the gradients by: 1/S times the clipping factor */
    float grad_norm;    /* of the unscaled gradients before clipping; NaN when not checked or not finite */
    int32_t finite;     /* every gradient checked is finite */
    int32_t skipped;    /* the verdict: inf/NaN gradients, no update */
    double sumsq;       /* of the (scaled) gradients checked */
    double loss_sum;    /* each micro-batch's mean loss, summed */
} tr_step_state;
#ifdef __cplusplus
static_assert(sizeof(tr_step_state) == 88, "tr_step_state: one layout for the host and the device");
#else
_Static_assert(sizeof(tr_step_state) == 88, "tr_step_state: one layout for the host and the device");
#endif

#endif
