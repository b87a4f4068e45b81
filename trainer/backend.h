/* backend.h: what a model asks of a device. Memory (segments for the
 * caching allocator, copies), streams in order, and the ops of
 * kernels/ops.h on tensors. The CPU backend (backend_cpu.c) runs the kernels
 * of kernels/cpu; a CUDA backend fills the same table with kernels/cuda.
 * Each op opens one NVTX range named after it (category "compute"). Ops
 * check their tensors' dtypes and device against the roles of op_roles.h,
 * the same table on every backend, and refuse what has no kernel. Dimensions are
 * passed explicitly, as in llm.c, to keep call sites readable.
 * Mixed precision: activations may be bf16 or fp16 (autocast's choice per
 * op is the model's); an op reads and writes each tensor in its own dtype
 * and computes in fp32. Backward ops add into activation gradients; they
 * add into parameter gradients only if add_dparams, else write them
 * (set_to_none gradients need no memset pass). */
#ifndef TR_BACKEND_H
#define TR_BACKEND_H

#include "mem_ops.h"
#include "tensor.h"

#include <stdbool.h>

typedef struct tr_backend tr_backend;

/* What an optimizer update reads that the step decides. Decided on the host
 * (the CPU backend, distributed training): the values, dev NULL. Decided on
 * the device: dev, and the kernels read lr, t, grad_scale and the verdict
 * from it when they run (a skipped step writes nothing); the values are
 * unused. One interface, so the optimizer's code is the same for both. */
typedef struct tr_step_hyper {
    float lr;
    float grad_scale;   /* the gradients are multiplied by it (1/S times the clipping factor) */
    int t;              /* optimizer steps taken, this one included */
    bool scaled;        /* grad_scale may not be 1: an unfused update unscales the gradients first */
    const struct tr_step_state *dev; /* device memory; NULL: decided on the host */
} tr_step_hyper;

/* The step decided on the device (kernels/step_state.h) and CUDA graphs of it.
 * A step on the device: begin(lr); per micro-batch forward, add_loss,
 * backward; check_grads per gradient slice; verdict; the optimizer's updates
 * with state() as their tr_step_hyper's dev. */
typedef struct tr_step_ops {
    /* Sets the device state from *host (the first step, or after a resume); waits. */
    int (*load)(tr_backend *be, const struct tr_step_state *host);
    /* Copies the device state to *host; waits for the device. */
    void (*read)(tr_backend *be, struct tr_step_state *host);
    /* The state's device address (after load). */
    const struct tr_step_state *(*state)(tr_backend *be);
    /* A step's start: state.lr = lr_src ? *lr_src : lr (lr_src: pinned host
     * memory, read when the op runs: a replay's value), sums cleared. */
    void (*begin)(tr_backend *be, float lr, const float *lr_src);
    /* loss_sum += the mean of losses (fp32) */
    void (*add_loss)(tr_backend *be, const tr_tensor *losses);
    /* sumsq += the sum of g^2, finite &= all of g finite */
    void (*check_grads)(tr_backend *be, const tr_tensor *g);
    /* GradScaler's rules and the clipping factor (scaler.h) */
    void (*verdict)(tr_backend *be);

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

struct tr_backend {
    const char *name; /* "cpu" */
    tr_device device;
    int n_threads;
    tr_mem_ops mem; /* segments for the caching allocator */

    /* Copies between host and device on a stream; the CPU backend copies at
     * once. Non-blocking host-to-device copies need pinned host memory. */
    void (*copy_h2d)(tr_backend *be, void *dst, const void *src, size_t n_bytes, int stream);
    void (*copy_d2h)(tr_backend *be, void *dst, const void *src, size_t n_bytes, int stream);
    void (*memset0)(tr_backend *be, void *dst, size_t n_bytes, int stream);
    void (*synchronize)(tr_backend *be, int stream);
    /* The device's stream every op runs on (a cudaStream_t) and, in *device,
     * its index: for a transport that orders its own stream against the ops
     * (NCCL, dist_nccl.c). NULL on the CPU. */
    void *(*compute_stream)(tr_backend *be, int *device);
    /* Page-locked host memory for staging buffers (plain memory on CPU). */
    void *(*host_alloc)(tr_backend *be, size_t n_bytes);
    void (*host_free)(tr_backend *be, void *p);

    void (*encoder_forward)(tr_backend *be, tr_tensor *out, const tr_tensor *inp, const tr_tensor *wte,
                            const tr_tensor *wpe, int B, int T, int C);
    /* dwte always adds (the LM head wrote it first); dwpe as add_dparams. */
    void (*encoder_backward)(tr_backend *be, tr_tensor *dwte, tr_tensor *dwpe, const tr_tensor *dout,
                             const tr_tensor *inp, int B, int T, int C, bool add_dparams);
    void (*layernorm_forward)(tr_backend *be, tr_tensor *out, tr_tensor *mean, tr_tensor *rstd,
                              const tr_tensor *inp, const tr_tensor *w, const tr_tensor *b, int N, int C);
    void (*layernorm_backward)(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *db,
                               const tr_tensor *dout, const tr_tensor *inp, const tr_tensor *w,
                               const tr_tensor *mean, const tr_tensor *rstd, int N, int C, bool add_dparams);
    void (*matmul_forward)(tr_backend *be, tr_tensor *out, const tr_tensor *inp, const tr_tensor *w,
                           const tr_tensor *bias, int N, int C, int OC);
    void (*matmul_backward)(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *dbias,
                            const tr_tensor *dout, const tr_tensor *inp, const tr_tensor *w, int N, int C, int OC,
                            bool add_dparams);
    /* What attention keeps from its forward for its backward (att) and the
     * fp32 scratch its backward takes, for activations of dtype act: each
     * one's dtype and shape (data NULL). NULL member: the probabilities
     * (B,NH,T,T) in act and a (B,NH,T,T) scratch, as kernels/cpu does; fused
     * attention (cuDNN) keeps the softmax statistics (B,NH,T) in fp32 and
     * takes no scratch. */
    void (*attention_layout)(tr_backend *be, tr_dtype act, int B, int T, int C, int NH, tr_tensor *att,
                             tr_tensor *scratch);
    void (*attention_forward)(tr_backend *be, tr_tensor *out, tr_tensor *att, const tr_tensor *qkv,
                              int B, int T, int C, int NH);
    /* out: the forward's output (fused attention reads it). dqkv is zero on
     * entry (the model clears it): the own kernels add, cuDNN writes. */
    void (*attention_backward)(tr_backend *be, tr_tensor *dqkv, tr_tensor *scratch, const tr_tensor *dout,
                               const tr_tensor *qkv, const tr_tensor *out, const tr_tensor *att, int B, int T,
                               int C, int NH);
    void (*gelu_forward)(tr_backend *be, tr_tensor *out, const tr_tensor *inp);
    void (*gelu_backward)(tr_backend *be, tr_tensor *dinp, const tr_tensor *inp, const tr_tensor *dout);
    void (*residual_forward)(tr_backend *be, tr_tensor *out, const tr_tensor *a, const tr_tensor *b);
    void (*residual_backward)(tr_backend *be, tr_tensor *da, tr_tensor *db, const tr_tensor *dout);
    void (*crossentropy_forward)(tr_backend *be, tr_tensor *losses, tr_tensor *probs, const tr_tensor *logits,
                                 const tr_tensor *targets, int N, int V, int Vp);
    void (*crossentropy_backward)(tr_backend *be, tr_tensor *dlogits, const tr_tensor *probs,
                                  const tr_tensor *targets, float dloss, int N, int V, int Vp);
    /* Fusions (--fuse on), see kernels/ops.h. */
    void (*residual_layernorm_forward)(tr_backend *be, tr_tensor *res, tr_tensor *out, tr_tensor *mean,
                                       tr_tensor *rstd, const tr_tensor *a, const tr_tensor *b, const tr_tensor *w,
                                       const tr_tensor *bias, int N, int C);
    void (*residual_layernorm_backward)(tr_backend *be, tr_tensor *da, tr_tensor *db, tr_tensor *dres,
                                        tr_tensor *dw, tr_tensor *dbias, const tr_tensor *dout, const tr_tensor *res,
                                        const tr_tensor *w, const tr_tensor *mean, const tr_tensor *rstd, int N,
                                        int C, bool add_dparams);
    void (*matmul_bias_gelu_forward)(tr_backend *be, tr_tensor *pre, tr_tensor *out, const tr_tensor *inp,
                                     const tr_tensor *w, const tr_tensor *bias, int N, int C, int OC);
    /* losses, and dlogits written over logits when dloss is not 0 */
    void (*crossentropy_fused_forward)(tr_backend *be, tr_tensor *losses, tr_tensor *logits,
                                       const tr_tensor *targets, float dloss, int N, int V, int Vp);
    /* dst = src converted to dst's dtype (same number of elements) */
    void (*cast)(tr_backend *be, tr_tensor *dst, const tr_tensor *src);
    /* The optimizer's updates. What the step decides (lr, t, the gradients'
     * scale, the verdict) comes in *h: by value when the host decided it, or
     * read by the kernels from the device state (h->dev, step_state.h). */
    /* One AdamW step over a flat range (a shard is updated as the whole would be). */
    void (*adamw)(tr_backend *be, tr_tensor *param, const tr_tensor *grad, tr_tensor *m, tr_tensor *v,
                  const tr_step_hyper *h, float beta1, float beta2, float eps, float weight_decay);
    /* The fused AdamW over flat buffers: ranges [bounds[i], bounds[i+1]) decay
     * by decay[i]; gradients are multiplied by h's grad_scale on the fly. */
    void (*adamw_fused)(tr_backend *be, tr_tensor *param, const tr_tensor *grad, tr_tensor *m, tr_tensor *v,
                        const size_t *bounds, const float *decay, int n_ranges, const tr_step_hyper *h, float beta1,
                        float beta2, float eps);
    /* SGD with momentum (torch.optim.SGD); buf NULL when momentum is 0; the first step (t 1) fills buf. */
    void (*sgd)(tr_backend *be, tr_tensor *param, const tr_tensor *grad, tr_tensor *buf, const tr_step_hyper *h,
                float momentum, float weight_decay);
    /* x times h's grad_scale (unscaling and clipping before an unfused update) */
    void (*unscale)(tr_backend *be, tr_tensor *x, const tr_step_hyper *h);
    /* Reductions read back to the host (one synchronization each). */
    double (*sumsq)(tr_backend *be, const tr_tensor *x);
    int (*all_finite)(tr_backend *be, const tr_tensor *x);
    double (*sumsq_finite)(tr_backend *be, const tr_tensor *x, int *finite);
    void (*scale)(tr_backend *be, tr_tensor *x, float s);
    /* ema = decay*ema + (1-decay)*x; nothing on a skipped step (h) */
    void (*ema)(tr_backend *be, tr_tensor *ema, const tr_tensor *x, float decay, const tr_step_hyper *h);

    /* ---- the CNN's ops (model_cnn.c): NCHW or NHWC (cnn_nhwc), fp32 (op_roles.c); NULL where none ---- */
    /* --conv-autotune: each conv shape's algorithms timed at its first call, the faster kept */
    bool conv_autotune;
    /* the timed shapes' choices, a line each, into buf; returns how many (NULL: no CNN ops) */
    int (*conv_choices)(char *buf, size_t n);
    /* --layout nhwc: the CNN ops' activations are channels-last, (B,H,W,C); conv weights stay (OC,C,K,K) */
    bool cnn_nhwc;
    /* out = inp with its channel and pixel axes swapped, (B,C,HW) -> (B,HW,C) if to_nhwc, else back; add: out +=
     * (a flatten in front of a linear layer reads PyTorch's C,H,W order); NULL: no channels-last ops */
    void (*cnn_transpose)(tr_backend *be, tr_tensor *out, const tr_tensor *inp, int B, int C, int HW, bool to_nhwc,
                          bool add);
    /* Bytes of workspace the conv2d ops take for this shape at batch B (0 with a message: no convolution). */
    size_t (*conv2d_workspace_bytes)(tr_backend *be, int B, int C, int H, int W, int OC, int K, int stride, int pad);
    void (*conv2d_forward)(tr_backend *be, tr_tensor *out, const tr_tensor *inp, const tr_tensor *w,
                           const tr_tensor *bias, tr_tensor *ws, int B, int C, int H, int W, int OC, int K, int stride,
                           int pad);
    /* dinp and dbias may be NULL */
    void (*conv2d_backward)(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *dbias, const tr_tensor *dout,
                            const tr_tensor *inp, const tr_tensor *w, tr_tensor *ws, int B, int C, int H, int W, int OC,
                            int K, int stride, int pad, bool add_dparams);
    /* training: batch statistics into mean, rstd, running averages moved; else the running averages */
    void (*batchnorm_forward)(tr_backend *be, tr_tensor *out, tr_tensor *mean, tr_tensor *rstd,
                              tr_tensor *running_mean, tr_tensor *running_var, const tr_tensor *inp, const tr_tensor *w,
                              const tr_tensor *b, int B, int C, int HW, bool training, float momentum, float eps);
    void (*batchnorm_backward)(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *db, const tr_tensor *dout,
                               const tr_tensor *inp, const tr_tensor *w, const tr_tensor *mean, const tr_tensor *rstd,
                               int B, int C, int HW, bool add_dparams, float eps);
    void (*maxpool_forward)(tr_backend *be, tr_tensor *out, tr_tensor *idx, const tr_tensor *inp, int B, int C, int H,
                            int W, int K, int stride);
    void (*maxpool_backward)(tr_backend *be, tr_tensor *dinp, const tr_tensor *dout, const tr_tensor *idx, int B, int C,
                             int H, int W, int K, int stride);
    void (*avgpool_forward)(tr_backend *be, tr_tensor *out, const tr_tensor *inp, int B, int C, int H, int W, int K,
                            int stride);
    void (*avgpool_backward)(tr_backend *be, tr_tensor *dinp, const tr_tensor *dout, int B, int C, int H, int W, int K,
                             int stride);
    void (*relu_forward)(tr_backend *be, tr_tensor *out, const tr_tensor *inp);
    void (*relu_backward)(tr_backend *be, tr_tensor *dinp, const tr_tensor *out, const tr_tensor *dout);
    void (*dropout_forward)(tr_backend *be, tr_tensor *out, const tr_tensor *inp, const tr_tensor *mask);
    void (*dropout_backward)(tr_backend *be, tr_tensor *dinp, const tr_tensor *mask, const tr_tensor *dout);
    /* Fused pairs (NULL: the model runs them apart). batchnorm_forward then ReLU in one pass, out the ReLU's
     * output; the backward of both from the ReLU's output gradient dout, masked where the ReLU's input (recomputed
     * from inp, mean, rstd, w and the BatchNorm's bias b) is not positive */
    void (*batchnorm_relu_forward)(tr_backend *be, tr_tensor *out, tr_tensor *mean, tr_tensor *rstd,
                                   tr_tensor *running_mean, tr_tensor *running_var, const tr_tensor *inp,
                                   const tr_tensor *w, const tr_tensor *b, int B, int C, int HW, bool training,
                                   float momentum, float eps);
    void (*batchnorm_relu_backward)(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *db,
                                    const tr_tensor *dout, const tr_tensor *inp, const tr_tensor *w,
                                    const tr_tensor *b, const tr_tensor *mean, const tr_tensor *rstd, int B, int C,
                                    int HW, bool add_dparams, float eps);
    /* conv2d_forward then ReLU as the results are stored: out is the ReLU's output (the conv's is not written) */
    void (*conv2d_relu_forward)(tr_backend *be, tr_tensor *out, const tr_tensor *inp, const tr_tensor *w,
                                const tr_tensor *bias, tr_tensor *ws, int B, int C, int H, int W, int OC, int K,
                                int stride, int pad);
    /* out = max(0, a + b); the backward adds dout where out > 0 into da and db (either may be NULL) */
    void (*residual_relu_forward)(tr_backend *be, tr_tensor *out, const tr_tensor *a, const tr_tensor *b);
    void (*residual_relu_backward)(tr_backend *be, tr_tensor *da, tr_tensor *db, const tr_tensor *out,
                                   const tr_tensor *dout);

    /* The step decided on the device and its CUDA graph (step_state.h);
     * NULL on the CPU backend, whose step train.c decides on the host. */
    const tr_step_ops *step_ops;
    void *step_ctx; /* the step_ops' own state */
};

/* The CPU backend: CBLAS GEMMs, OpenMP elsewhere, n_threads OpenMP threads
 * (0: OMP_NUM_THREADS or the core count). Static; never freed. */
tr_backend *tr_backend_cpu(int n_threads);
/* The CPU backend's --conv-autotune choices so far, one line each, into buf
 * (truncated to n); returns how many shapes were timed. */
int tr_backend_cpu_conv_choices(char *buf, size_t n);

#endif
