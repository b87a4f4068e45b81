/* step_state.h: the training step decided on the device, and CUDA graphs of it.
 *
 * On the CPU backend train.c decides each step on the host: it reads the
 * gradient check back, applies the loss scaler's rules and the clipping, and
 * passes the learning rate, Adam's step count and the gradients' scale to
 * the optimizer by value. A GPU backend offers the ops below instead (its
 * table's step_ops; NULL on the CPU): the same decisions are kept in a small
 * struct in device memory, tr_step_state, written and read by kernels, so a
 * step needs no host synchronization and one captured CUDA graph of it is
 * right on every step (--cuda-graph). The rules are scaler.h's, the same
 * code compiled for the device.
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

#ifndef __CUDACC__
#include "tensor.h"

typedef struct tr_backend tr_backend;

typedef struct tr_step_ops {
    /* Sets the device state from *host (the first step, or after a resume); waits. */
    int (*load)(tr_backend *be, const tr_step_state *host);
    /* Copies the device state to *host; waits for the device. */
    void (*read)(tr_backend *be, tr_step_state *host);
    /* A step's start: state.lr = lr_src ? *lr_src : lr (lr_src: pinned host
     * memory, read when the op runs: a replay's value), sums cleared. */
    void (*begin)(tr_backend *be, float lr, const float *lr_src);
    /* loss_sum += the mean of losses (fp32) */
    void (*add_loss)(tr_backend *be, const tr_tensor *losses);
    /* sumsq += the sum of g^2, finite &= all of g finite */
    void (*check_grads)(tr_backend *be, const tr_tensor *g);
    /* GradScaler's rules and the clipping factor (scaler.h) */
    void (*verdict)(tr_backend *be);
    /* backend.h's optimizer ops with lr, t and grad_scale from the state;
     * nothing is written on a skipped step. scale multiplies x by grad_scale. */
    void (*adamw)(tr_backend *be, tr_tensor *param, const tr_tensor *grad, tr_tensor *m, tr_tensor *v, float beta1,
                  float beta2, float eps, float weight_decay);
    void (*adamw_fused)(tr_backend *be, tr_tensor *param, const tr_tensor *grad, tr_tensor *m, tr_tensor *v,
                        const size_t *bounds, const float *decay, int n_ranges, float beta1, float beta2, float eps);
    void (*sgd)(tr_backend *be, tr_tensor *param, const tr_tensor *grad, tr_tensor *buf, float momentum,
                float weight_decay);
    void (*scale)(tr_backend *be, tr_tensor *x);
    void (*ema)(tr_backend *be, tr_tensor *ema, const tr_tensor *x, float decay);

    /* ---- CUDA graphs ---- */
    /* Page-locked host memory the device can read (the graph's inputs). */
    void *(*pinned_alloc)(tr_backend *be, size_t n_bytes);
    void (*pinned_free)(tr_backend *be, void *p);
    /* Starts capturing the compute stream; inputs: the pinned bytes the step
     * copies in, the only host memory a captured copy may read. */
    int (*capture_begin)(tr_backend *be, const void *inputs, size_t n_bytes);
    /* During the capture, after the last copy of the inputs: replays mark
     * there that the inputs were read. */
    void (*inputs_read)(tr_backend *be);
    /* Ends the capture and instantiates the graph (*n_nodes: its nodes);
     * TR_EINVAL naming the cause. */
    int (*capture_end)(tr_backend *be, size_t *n_nodes);
    /* Waits until the last replay has read its inputs (the host may rewrite them). */
    void (*wait_inputs)(tr_backend *be);
    /* Launches the graph on the compute stream: NVTX range "graph replay". */
    void (*replay)(tr_backend *be);
    /* Waits for the device and destroys the graph (none: nothing). */
    void (*graph_free)(tr_backend *be);
} tr_step_ops;
#endif

#endif
