/* backend_cpu.c: the CPU backend: kernels/cpu behind the backend table, one
 * NVTX range per op, fp32 only (a bf16/fp16 tensor is refused with a message
 * until the CPU kernels grow those paths). One stream: work runs in order on
 * the calling thread, so synchronize has nothing to wait for. */
#include "backend.h"

#include "config.h"
#include "nvtx.h"
#include "ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

static float *f32(const tr_tensor *t, const char *op)
{
    if (!t)
        return NULL;
    if (t->dtype != TR_F32 || t->device != TR_CPU) {
        fprintf(stderr, "trainer: the cpu backend has no %s kernel for %s tensors on %s\n", op,
                tr_dtype_name(t->dtype), t->device == TR_CPU ? "cpu" : "cuda");
        exit(1);
    }
    return t->data;
}

static const int32_t *i32(const tr_tensor *t)
{
    if (t->dtype != TR_I32) {
        fprintf(stderr, "trainer: token tensors must be I32, not %s\n", tr_dtype_name(t->dtype));
        exit(1);
    }
    return t->data;
}

static void *seg_alloc(size_t n, void *ctx)
{
    (void)ctx;
    void *p = NULL;
    return posix_memalign(&p, 4096, n) == 0 ? p : NULL;
}
static void seg_free(void *p, size_t n, void *ctx) { (void)n; (void)ctx; free(p); }

static void copy(tr_backend *be, void *dst, const void *src, size_t n, int stream)
{
    (void)be; (void)stream;
    memcpy(dst, src, n);
}
static void memset0(tr_backend *be, void *dst, size_t n, int stream)
{
    (void)be; (void)stream;
    memset(dst, 0, n);
}
static void synchronize(tr_backend *be, int stream) { (void)be; (void)stream; }
static void *host_alloc(tr_backend *be, size_t n) { (void)be; return seg_alloc(n, NULL); }
static void host_free(tr_backend *be, void *p) { (void)be; free(p); }

#define RANGE(name) tr_nvtx_push_op(name) /* category "compute" */
#define END() tr_nvtx_pop()

static void encoder_forward(tr_backend *be, tr_tensor *out, const tr_tensor *inp, const tr_tensor *wte,
                            const tr_tensor *wpe, int B, int T, int C)
{
    RANGE("encoder_forward");
    op_encoder_forward_cpu(f32(out, "encoder"), i32(inp), f32(wte, "encoder"), f32(wpe, "encoder"), B, T, C);
    END();
}
static void encoder_backward(tr_backend *be, tr_tensor *dwte, tr_tensor *dwpe, const tr_tensor *dout,
                             const tr_tensor *inp, int B, int T, int C)
{
    RANGE("encoder_backward");
    op_encoder_backward_cpu(f32(dwte, "encoder"), f32(dwpe, "encoder"), f32(dout, "encoder"), i32(inp), B, T, C);
    END();
}
static void layernorm_forward(tr_backend *be, tr_tensor *out, tr_tensor *mean, tr_tensor *rstd,
                              const tr_tensor *inp, const tr_tensor *w, const tr_tensor *b, int N, int C)
{
    RANGE("layernorm_forward");
    op_layernorm_forward_cpu(f32(out, "layernorm"), f32(mean, "layernorm"), f32(rstd, "layernorm"),
                             f32(inp, "layernorm"), f32(w, "layernorm"), f32(b, "layernorm"), N, C);
    END();
}
static void layernorm_backward(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *db,
                               const tr_tensor *dout, const tr_tensor *inp, const tr_tensor *w,
                               const tr_tensor *mean, const tr_tensor *rstd, int N, int C)
{
    RANGE("layernorm_backward");
    op_layernorm_backward_cpu(f32(dinp, "layernorm"), f32(dw, "layernorm"), f32(db, "layernorm"),
                              f32(dout, "layernorm"), f32(inp, "layernorm"), f32(w, "layernorm"),
                              f32(mean, "layernorm"), f32(rstd, "layernorm"), N, C);
    END();
}
static void matmul_forward(tr_backend *be, tr_tensor *out, const tr_tensor *inp, const tr_tensor *w,
                           const tr_tensor *bias, int N, int C, int OC)
{
    RANGE("matmul_forward");
    op_matmul_forward_cpu(f32(out, "matmul"), f32(inp, "matmul"), f32(w, "matmul"), f32(bias, "matmul"), N, C, OC);
    END();
}
static void matmul_backward(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *dbias,
                            const tr_tensor *dout, const tr_tensor *inp, const tr_tensor *w, int N, int C, int OC)
{
    RANGE("matmul_backward");
    op_matmul_backward_cpu(f32(dinp, "matmul"), f32(dw, "matmul"), f32(dbias, "matmul"), f32(dout, "matmul"),
                           f32(inp, "matmul"), f32(w, "matmul"), N, C, OC);
    END();
}
static void attention_forward(tr_backend *be, tr_tensor *out, tr_tensor *att, const tr_tensor *qkv,
                              int B, int T, int C, int NH)
{
    RANGE("attention_forward");
    op_attention_forward_cpu(f32(out, "attention"), f32(att, "attention"), f32(qkv, "attention"), B, T, C, NH);
    END();
}
static void attention_backward(tr_backend *be, tr_tensor *dqkv, tr_tensor *scratch, const tr_tensor *dout,
                               const tr_tensor *qkv, const tr_tensor *att, int B, int T, int C, int NH)
{
    RANGE("attention_backward");
    op_attention_backward_cpu(f32(dqkv, "attention"), f32(scratch, "attention"), f32(dout, "attention"),
                              f32(qkv, "attention"), f32(att, "attention"), B, T, C, NH);
    END();
}
static void gelu_forward(tr_backend *be, tr_tensor *out, const tr_tensor *inp)
{
    RANGE("gelu_forward");
    op_gelu_forward_cpu(f32(out, "gelu"), f32(inp, "gelu"), (size_t)tr_tensor_numel(inp));
    END();
}
static void gelu_backward(tr_backend *be, tr_tensor *dinp, const tr_tensor *inp, const tr_tensor *dout)
{
    RANGE("gelu_backward");
    op_gelu_backward_cpu(f32(dinp, "gelu"), f32(inp, "gelu"), f32(dout, "gelu"), (size_t)tr_tensor_numel(inp));
    END();
}
static void residual_forward(tr_backend *be, tr_tensor *out, const tr_tensor *a, const tr_tensor *b)
{
    RANGE("residual_forward");
    op_residual_forward_cpu(f32(out, "residual"), f32(a, "residual"), f32(b, "residual"), (size_t)tr_tensor_numel(a));
    END();
}
static void residual_backward(tr_backend *be, tr_tensor *da, tr_tensor *db, const tr_tensor *dout)
{
    RANGE("residual_backward");
    op_residual_backward_cpu(f32(da, "residual"), f32(db, "residual"), f32(dout, "residual"),
                             (size_t)tr_tensor_numel(dout));
    END();
}
static void crossentropy_forward(tr_backend *be, tr_tensor *losses, tr_tensor *probs, const tr_tensor *logits,
                                 const tr_tensor *targets, int N, int V, int Vp)
{
    RANGE("crossentropy_forward");
    op_crossentropy_forward_cpu(f32(losses, "crossentropy"), f32(probs, "crossentropy"),
                                f32(logits, "crossentropy"), i32(targets), N, V, Vp);
    END();
}
static void crossentropy_backward(tr_backend *be, tr_tensor *dlogits, const tr_tensor *probs,
                                  const tr_tensor *targets, float dloss, int N, int V, int Vp)
{
    RANGE("crossentropy_backward");
    op_crossentropy_backward_cpu(f32(dlogits, "crossentropy"), f32(probs, "crossentropy"), i32(targets), dloss,
                                 N, V, Vp);
    END();
}
static void adamw(tr_backend *be, tr_tensor *param, const tr_tensor *grad, tr_tensor *m, tr_tensor *v,
                  float lr, float beta1, float beta2, float eps, float weight_decay, int t)
{
    RANGE("adamw");
    op_adamw_cpu(f32(param, "adamw"), f32(grad, "adamw"), f32(m, "adamw"), f32(v, "adamw"),
                 (size_t)tr_tensor_numel(param), lr, beta1, beta2, eps, weight_decay, t);
    END();
}

static tr_backend cpu = {
    .name = "cpu",
    .device = TR_CPU,
    .mem = {seg_alloc, seg_free, NULL, "cpu"},
    .copy_h2d = copy,
    .copy_d2h = copy,
    .memset0 = memset0,
    .synchronize = synchronize,
    .host_alloc = host_alloc,
    .host_free = host_free,
    .encoder_forward = encoder_forward,
    .encoder_backward = encoder_backward,
    .layernorm_forward = layernorm_forward,
    .layernorm_backward = layernorm_backward,
    .matmul_forward = matmul_forward,
    .matmul_backward = matmul_backward,
    .attention_forward = attention_forward,
    .attention_backward = attention_backward,
    .gelu_forward = gelu_forward,
    .gelu_backward = gelu_backward,
    .residual_forward = residual_forward,
    .residual_backward = residual_backward,
    .crossentropy_forward = crossentropy_forward,
    .crossentropy_backward = crossentropy_backward,
    .adamw = adamw,
};

tr_backend *tr_backend_cpu(int n_threads)
{
#ifdef _OPENMP
    if (n_threads > 0)
        omp_set_num_threads(n_threads);
    cpu.n_threads = omp_get_max_threads();
#else
    cpu.n_threads = 1;
#endif
    /* The kernels call the BLAS single-threaded from inside their OpenMP
     * regions (kernels/cpu/cpu.h): one pool of n_threads, not two. */
    return &cpu;
}
