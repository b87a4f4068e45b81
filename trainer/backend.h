/* backend.h: what a model asks of a device. Memory (segments for the
 * caching allocator, copies), streams in order, and the ops of
 * kernels/ops.h on tensors. The CPU backend (backend_cpu.c) runs the kernels
 * of kernels/cpu; a CUDA backend fills the same table with kernels/cuda.
 * Each op opens an NVTX range named after it. Ops check the dtype and device
 * of their tensors and refuse what they have no kernel for. Dimensions are
 * passed explicitly, as in llm.c, to keep call sites readable. */
#ifndef TR_BACKEND_H
#define TR_BACKEND_H

#include "alloc.h"
#include "tensor.h"

typedef struct tr_backend tr_backend;
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
    /* Page-locked host memory for staging buffers (plain memory on CPU). */
    void *(*host_alloc)(tr_backend *be, size_t n_bytes);
    void (*host_free)(tr_backend *be, void *p);

    void (*encoder_forward)(tr_backend *be, tr_tensor *out, const tr_tensor *inp, const tr_tensor *wte,
                            const tr_tensor *wpe, int B, int T, int C);
    void (*encoder_backward)(tr_backend *be, tr_tensor *dwte, tr_tensor *dwpe, const tr_tensor *dout,
                             const tr_tensor *inp, int B, int T, int C);
    void (*layernorm_forward)(tr_backend *be, tr_tensor *out, tr_tensor *mean, tr_tensor *rstd,
                              const tr_tensor *inp, const tr_tensor *w, const tr_tensor *b, int N, int C);
    void (*layernorm_backward)(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *db,
                               const tr_tensor *dout, const tr_tensor *inp, const tr_tensor *w,
                               const tr_tensor *mean, const tr_tensor *rstd, int N, int C);
    void (*matmul_forward)(tr_backend *be, tr_tensor *out, const tr_tensor *inp, const tr_tensor *w,
                           const tr_tensor *bias, int N, int C, int OC);
    void (*matmul_backward)(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *dbias,
                            const tr_tensor *dout, const tr_tensor *inp, const tr_tensor *w, int N, int C, int OC);
    void (*attention_forward)(tr_backend *be, tr_tensor *out, tr_tensor *att, const tr_tensor *qkv,
                              int B, int T, int C, int NH);
    void (*attention_backward)(tr_backend *be, tr_tensor *dqkv, tr_tensor *scratch, const tr_tensor *dout,
                               const tr_tensor *qkv, const tr_tensor *att, int B, int T, int C, int NH);
    void (*gelu_forward)(tr_backend *be, tr_tensor *out, const tr_tensor *inp);
    void (*gelu_backward)(tr_backend *be, tr_tensor *dinp, const tr_tensor *inp, const tr_tensor *dout);
    void (*residual_forward)(tr_backend *be, tr_tensor *out, const tr_tensor *a, const tr_tensor *b);
    void (*residual_backward)(tr_backend *be, tr_tensor *da, tr_tensor *db, const tr_tensor *dout);
    void (*crossentropy_forward)(tr_backend *be, tr_tensor *losses, tr_tensor *probs, const tr_tensor *logits,
                                 const tr_tensor *targets, int N, int V, int Vp);
    void (*crossentropy_backward)(tr_backend *be, tr_tensor *dlogits, const tr_tensor *probs,
                                  const tr_tensor *targets, float dloss, int N, int V, int Vp);
    /* One AdamW step over a flat range (a shard is updated as the whole would be). */
    void (*adamw)(tr_backend *be, tr_tensor *param, const tr_tensor *grad, tr_tensor *m, tr_tensor *v,
                  float lr, float beta1, float beta2, float eps, float weight_decay, int t);
};

/* The CPU backend: CBLAS GEMMs, OpenMP elsewhere, n_threads OpenMP threads
 * (0: OMP_NUM_THREADS or the core count). Static; never freed. */
tr_backend *tr_backend_cpu(int n_threads);

#endif
