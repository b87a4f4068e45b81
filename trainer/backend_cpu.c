/* backend_cpu.c: the CPU backend: kernels/cpu behind the backend table, one
 * NVTX range per op (category "compute"). One stream: work runs in order on
 * the calling thread, so synchronize has nothing to wait for.
 * Mixed precision: the kernels compute in fp32. A bf16/fp16 tensor is
 * widened into scratch before a kernel reads it and rounded back (to nearest
 * even) after the kernel wrote it: what a low-precision kernel with fp32
 * arithmetic does at its loads and stores, so the values an AMP run sees are
 * those a GPU run would store. The scratch is the backend's own host memory,
 * not the caching allocator's: it stands for registers, not for tensors. On
 * the CPU this costs time; the memory saved in activations is real. */
#include "backend.h"

#include "config.h"
#include "lowp.h"
#include "nvtx.h"
#include "op_roles.h"
#include "ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Tokens: I32 by the op's roles (checked at the op's start). */
static const int32_t *i32(const tr_tensor *t) { return t->data; }

static int format_of(tr_dtype t) { return t == TR_BF16 ? LOWP_BF16 : t == TR_F16 ? LOWP_F16 : LOWP_F32; }

/* ---- staging of low-precision tensors ---- */

/* Scratch buffers, reused from op to op (the trainer calls the backend from
 * one thread). */
enum { N_SCRATCH = 10 };
static struct scratch { float *p; size_t n; } scratch[N_SCRATCH];

typedef struct stage {
    const char *op;
    int n_used;
    tr_tensor *out[N_SCRATCH]; /* written or accumulated low-precision tensors */
    float *out_f32[N_SCRATCH];
    int n_out;
} stage;

static float *take_scratch(stage *s, size_t n)
{
    if (s->n_used == N_SCRATCH) {
        fprintf(stderr, "trainer: %s: more low-precision operands than the cpu backend stages\n", s->op);
        exit(1);
    }
    struct scratch *b = &scratch[s->n_used++];
    if (b->n < n) {
        free(b->p);
        b->p = malloc(n * sizeof(float));
        b->n = b->p ? n : 0;
        if (!b->p) {
            fprintf(stderr, "trainer: %s: out of host memory for %zu staged elements\n", s->op, n);
            exit(1);
        }
    }
    return b->p;
}

/* The op's tensors were checked against its dtype roles (ROLES, op_roles.h)
 * before these stage them. An input: fp32 as is, else widened. */
static float *in(stage *s, const tr_tensor *t)
{
    if (!t)
        return NULL;
    if (t->dtype == TR_F32)
        return t->data;
    size_t n = (size_t)tr_tensor_numel(t);
    float *f = take_scratch(s, n);
    op_cast_cpu(f, LOWP_F32, t->data, format_of(t->dtype), n);
    return f;
}

/* An output: written (add = false) or added to (add = true); rounded at done(). */
static float *out(stage *s, tr_tensor *t, bool add)
{
    if (!t)
        return NULL;
    if (t->dtype == TR_F32)
        return t->data;
    float *f = add ? in(s, t) : take_scratch(s, (size_t)tr_tensor_numel(t));
    s->out[s->n_out] = t;
    s->out_f32[s->n_out++] = f;
    return f;
}

static void done(stage *s)
{
    for (int i = 0; i < s->n_out; i++)
        op_cast_cpu(s->out[i]->data, format_of(s->out[i]->dtype), s->out_f32[i], LOWP_F32,
                    (size_t)tr_tensor_numel(s->out[i]));
    tr_nvtx_pop();
}

#define BEGIN(name)                  \
    (void)be;                        \
    stage st = {.op = name};         \
    tr_nvtx_push_op(name) /* category "compute" */
#define END() done(&st)
/* The op's tensors against their dtype roles (op_roles.h): what the CUDA backend would refuse is refused here. */
#define ROLES(name, ...) TR_OP_ROLES(be, name, __VA_ARGS__)

/* Segments of 2 MiB and more are aligned to 2 MiB and offered to the kernel
 * as transparent huge pages: a GEMM walks its operands by rows a few KiB
 * apart, one 4 KiB page each, more pages than the first-level TLB holds. */
enum { HUGE_PAGE = 2 << 20 };
static void *seg_alloc(size_t n, void *ctx)
{
    (void)ctx;
    void *p = NULL;
    if (posix_memalign(&p, n >= HUGE_PAGE ? HUGE_PAGE : 4096, n) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (n >= HUGE_PAGE)
        (void)madvise(p, n, MADV_HUGEPAGE); /* advice only: refused where THP is off */
#endif
    return p;
}
static void seg_free(void *p, size_t n, void *ctx) { (void)n; (void)ctx; free(p); }

static void copy(tr_backend *be, void *dst, const void *src, size_t n, int stream)
{
    (void)be; (void)stream;
    memcpy(dst, src, n);
}
/* A memset is device work on a GPU: an op range here, so the CPU trace has the same shape. */
static void memset0(tr_backend *be, void *dst, size_t n, int stream)
{
    (void)be; (void)stream;
    tr_nvtx_push_op("memset");
    op_zero_cpu(dst, n);
    tr_nvtx_pop();
}
static void synchronize(tr_backend *be, int stream) { (void)be; (void)stream; }
static void *host_alloc(tr_backend *be, size_t n) { (void)be; return seg_alloc(n, NULL); }
static void host_free(tr_backend *be, void *p) { (void)be; free(p); }

static void encoder_forward(tr_backend *be, tr_tensor *out_, const tr_tensor *inp, const tr_tensor *wte,
                            const tr_tensor *wpe, int B, int T, int C)
{
    BEGIN("encoder_forward");
    ROLES("encoder_forward", out_, inp, wte, wpe);
    op_encoder_forward_cpu(out(&st, out_, false), i32(inp), in(&st, wte), in(&st, wpe), B, T, C);
    END();
}
static void encoder_backward(tr_backend *be, tr_tensor *dwte, tr_tensor *dwpe, const tr_tensor *dout,
                             const tr_tensor *inp, int B, int T, int C, bool add_dparams)
{
    BEGIN("encoder_backward");
    ROLES("encoder_backward", dwte, dwpe, dout, inp);
    float *pe = out(&st, dwpe, true);
    op_encoder_backward_cpu(out(&st, dwte, true), pe, in(&st, dout), i32(inp), B, T, C, add_dparams);
    if (!add_dparams && dwpe->shape[0] > T) /* positions past T take no part: zero, not stale */
        memset(pe + (size_t)T * C, 0, (size_t)(dwpe->shape[0] - T) * C * sizeof(float));
    END();
}
static void layernorm_forward(tr_backend *be, tr_tensor *out_, tr_tensor *mean, tr_tensor *rstd,
                              const tr_tensor *inp, const tr_tensor *w, const tr_tensor *b, int N, int C)
{
    BEGIN("layernorm_forward");
    ROLES("layernorm_forward", out_, mean, rstd, inp, w, b);
    op_layernorm_forward_cpu(out(&st, out_, false), out(&st, mean, false), out(&st, rstd, false), in(&st, inp),
                             in(&st, w), in(&st, b), N, C);
    END();
}
static void layernorm_backward(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *db,
                               const tr_tensor *dout, const tr_tensor *inp, const tr_tensor *w,
                               const tr_tensor *mean, const tr_tensor *rstd, int N, int C, bool add_dparams)
{
    BEGIN("layernorm_backward");
    ROLES("layernorm_backward", dinp, dw, db, dout, inp, w, mean, rstd);
    op_layernorm_backward_cpu(out(&st, dinp, true), out(&st, dw, true), out(&st, db, true), in(&st, dout),
                              in(&st, inp), in(&st, w), in(&st, mean), in(&st, rstd), N, C, add_dparams);
    END();
}
static void matmul_forward(tr_backend *be, tr_tensor *out_, const tr_tensor *inp, const tr_tensor *w,
                           const tr_tensor *bias, int N, int C, int OC)
{
    BEGIN("matmul_forward");
    ROLES("matmul_forward", out_, inp, w, bias);
    op_matmul_forward_cpu(out(&st, out_, false), in(&st, inp), in(&st, w), in(&st, bias), N, C, OC);
    END();
}
static void matmul_backward(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *dbias,
                            const tr_tensor *dout, const tr_tensor *inp, const tr_tensor *w, int N, int C, int OC,
                            bool add_dparams)
{
    BEGIN("matmul_backward");
    ROLES("matmul_backward", dinp, dw, dbias, dout, inp, w);
    op_matmul_backward_cpu(out(&st, dinp, true), out(&st, dw, true), out(&st, dbias, true), in(&st, dout),
                           in(&st, inp), in(&st, w), N, C, OC, add_dparams);
    END();
}
static void attention_forward(tr_backend *be, tr_tensor *out_, tr_tensor *att, const tr_tensor *qkv,
                              int B, int T, int C, int NH)
{
    BEGIN("attention_forward");
    ROLES("attention_forward", out_, att, qkv);
    op_attention_forward_cpu(out(&st, out_, false), out(&st, att, false), in(&st, qkv), B, T, C, NH);
    END();
}
static void attention_backward(tr_backend *be, tr_tensor *dqkv, tr_tensor *scratch_, const tr_tensor *dout,
                               const tr_tensor *qkv, const tr_tensor *out_, const tr_tensor *att, int B, int T,
                               int C, int NH)
{
    (void)out_; /* the probabilities in att are all the backward needs */
    BEGIN("attention_backward");
    ROLES("attention_backward", dqkv, scratch_, dout, qkv, out_, att);
    op_attention_backward_cpu(out(&st, dqkv, true), out(&st, scratch_, true), in(&st, dout), in(&st, qkv),
                              in(&st, att), B, T, C, NH);
    END();
}
static void gelu_forward(tr_backend *be, tr_tensor *out_, const tr_tensor *inp)
{
    BEGIN("gelu_forward");
    ROLES("gelu_forward", out_, inp);
    op_gelu_forward_cpu(out(&st, out_, false), in(&st, inp), (size_t)tr_tensor_numel(inp));
    END();
}
static void gelu_backward(tr_backend *be, tr_tensor *dinp, const tr_tensor *inp, const tr_tensor *dout)
{
    BEGIN("gelu_backward");
    ROLES("gelu_backward", dinp, inp, dout);
    op_gelu_backward_cpu(out(&st, dinp, true), in(&st, inp), in(&st, dout), (size_t)tr_tensor_numel(inp));
    END();
}
static void residual_forward(tr_backend *be, tr_tensor *out_, const tr_tensor *a, const tr_tensor *b)
{
    BEGIN("residual_forward");
    ROLES("residual_forward", out_, a, b);
    op_residual_forward_cpu(out(&st, out_, false), in(&st, a), in(&st, b), (size_t)tr_tensor_numel(a));
    END();
}
static void residual_backward(tr_backend *be, tr_tensor *da, tr_tensor *db, const tr_tensor *dout)
{
    BEGIN("residual_backward");
    ROLES("residual_backward", da, db, dout);
    op_residual_backward_cpu(out(&st, da, true), out(&st, db, true), in(&st, dout), (size_t)tr_tensor_numel(dout));
    END();
}
static void crossentropy_forward(tr_backend *be, tr_tensor *losses, tr_tensor *probs, const tr_tensor *logits,
                                 const tr_tensor *targets, int N, int V, int Vp)
{
    BEGIN("crossentropy_forward");
    ROLES("crossentropy_forward", losses, probs, logits, targets);
    op_crossentropy_forward_cpu(out(&st, losses, false), out(&st, probs, false), in(&st, logits), i32(targets), N,
                                V, Vp);
    END();
}
static void crossentropy_backward(tr_backend *be, tr_tensor *dlogits, const tr_tensor *probs,
                                  const tr_tensor *targets, float dloss, int N, int V, int Vp)
{
    BEGIN("crossentropy_backward");
    ROLES("crossentropy_backward", dlogits, probs, targets);
    op_crossentropy_backward_cpu(out(&st, dlogits, false), in(&st, probs), i32(targets), dloss, N, V, Vp);
    END();
}
static void residual_layernorm_forward(tr_backend *be, tr_tensor *res, tr_tensor *out_, tr_tensor *mean,
                                       tr_tensor *rstd, const tr_tensor *a, const tr_tensor *b, const tr_tensor *w,
                                       const tr_tensor *bias, int N, int C)
{
    BEGIN("residual_layernorm_forward");
    ROLES("residual_layernorm_forward", res, out_, mean, rstd, a, b, w, bias);
    op_residual_layernorm_forward_cpu(out(&st, res, false), out(&st, out_, false), out(&st, mean, false),
                                      out(&st, rstd, false), in(&st, a), in(&st, b), in(&st, w), in(&st, bias), N,
                                      C);
    END();
}
static void residual_layernorm_backward(tr_backend *be, tr_tensor *da, tr_tensor *db, tr_tensor *dres,
                                        tr_tensor *dw, tr_tensor *dbias, const tr_tensor *dout, const tr_tensor *res,
                                        const tr_tensor *w, const tr_tensor *mean, const tr_tensor *rstd, int N,
                                        int C, bool add_dparams)
{
    BEGIN("residual_layernorm_backward");
    ROLES("residual_layernorm_backward", da, db, dres, dw, dbias, dout, res, w, mean, rstd);
    op_residual_layernorm_backward_cpu(out(&st, da, true), out(&st, db, true), out(&st, dres, true),
                                       out(&st, dw, true), out(&st, dbias, true), in(&st, dout), in(&st, res),
                                       in(&st, w), in(&st, mean), in(&st, rstd), N, C, add_dparams);
    END();
}
static void matmul_bias_gelu_forward(tr_backend *be, tr_tensor *pre, tr_tensor *out_, const tr_tensor *inp,
                                     const tr_tensor *w, const tr_tensor *bias, int N, int C, int OC)
{
    BEGIN("matmul_bias_gelu_forward");
    ROLES("matmul_bias_gelu_forward", pre, out_, inp, w, bias);
    op_matmul_bias_gelu_forward_cpu(out(&st, pre, false), out(&st, out_, false), in(&st, inp), in(&st, w),
                                    in(&st, bias), N, C, OC, format_of(pre->dtype));
    END();
}
static void crossentropy_fused_forward(tr_backend *be, tr_tensor *losses, tr_tensor *logits,
                                       const tr_tensor *targets, float dloss, int N, int V, int Vp)
{
    BEGIN("crossentropy_fused_forward");
    ROLES("crossentropy_fused_forward", losses, logits, targets);
    op_crossentropy_fused_forward_cpu(out(&st, losses, false), out(&st, logits, true), i32(targets), dloss, N, V,
                                      Vp);
    END();
}
static void cast(tr_backend *be, tr_tensor *dst, const tr_tensor *src)
{
    BEGIN("cast");
    ROLES("cast", dst, src);
    op_cast_cpu(dst->data, format_of(dst->dtype), src->data, format_of(src->dtype), (size_t)tr_tensor_numel(src));
    END();
}

/* ---- optimizer ops: fp32 master weights and state only ---- */

/* fp32 by the op's roles (checked at the op's start): the master weights and optimizer state */
static float *f32(const tr_tensor *t) { return t ? t->data : NULL; }
#define F32(t) f32(t)

/* The host decides every step here: values, never a device state. */
static const tr_step_hyper *host_hyper(const stage *s, const tr_step_hyper *h)
{
    if (h->dev) {
        fprintf(stderr, "trainer: %s: the cpu backend has no device step state; the host decides its steps\n", s->op);
        exit(1);
    }
    return h;
}

static void adamw(tr_backend *be, tr_tensor *param, const tr_tensor *grad, tr_tensor *m, tr_tensor *v,
                  const tr_step_hyper *h_, float beta1, float beta2, float eps, float weight_decay)
{
    BEGIN("adamw");
    ROLES("adamw", param, grad, m, v);
    const tr_step_hyper *h = host_hyper(&st, h_);
    op_adamw_cpu(F32(param), F32(grad), F32(m), F32(v),
                 (size_t)tr_tensor_numel(param), h->lr, beta1, beta2, eps, weight_decay, h->t);
    END();
}
static void adamw_fused(tr_backend *be, tr_tensor *param, const tr_tensor *grad, tr_tensor *m, tr_tensor *v,
                        const size_t *bounds, const float *decay, int n_ranges, const tr_step_hyper *h_,
                        float beta1, float beta2, float eps)
{
    BEGIN("adamw_fused");
    ROLES("adamw_fused", param, grad, m, v);
    const tr_step_hyper *h = host_hyper(&st, h_);
    op_adamw_fused_cpu(F32(param), F32(grad), F32(m), F32(v), bounds, decay,
                       n_ranges, h->lr, beta1, beta2, eps, h->grad_scale, h->t);
    END();
}
static void sgd(tr_backend *be, tr_tensor *param, const tr_tensor *grad, tr_tensor *buf, const tr_step_hyper *h_,
                float momentum, float weight_decay)
{
    BEGIN("sgd");
    ROLES("sgd", param, grad, buf);
    const tr_step_hyper *h = host_hyper(&st, h_);
    op_sgd_cpu(F32(param), F32(grad), F32(buf), (size_t)tr_tensor_numel(param), h->lr, momentum,
               weight_decay, h->t == 1);
    END();
}
static void unscale(tr_backend *be, tr_tensor *x, const tr_step_hyper *h)
{
    BEGIN("scale");
    ROLES("scale", x);
    op_scale_cpu(F32(x), host_hyper(&st, h)->grad_scale, (size_t)tr_tensor_numel(x));
    END();
}
static double sumsq(tr_backend *be, const tr_tensor *x)
{
    BEGIN("sumsq");
    ROLES("sumsq", x);
    double s = op_sumsq_cpu(F32(x), (size_t)tr_tensor_numel(x));
    END();
    return s;
}
static int all_finite(tr_backend *be, const tr_tensor *x)
{
    BEGIN("all_finite");
    ROLES("all_finite", x);
    int ok = op_all_finite_cpu(F32(x), (size_t)tr_tensor_numel(x));
    END();
    return ok;
}
static double sumsq_finite(tr_backend *be, const tr_tensor *x, int *finite)
{
    BEGIN("sumsq_finite");
    ROLES("sumsq_finite", x);
    double s = op_sumsq_finite_cpu(F32(x), (size_t)tr_tensor_numel(x), finite);
    END();
    return s;
}
static void scale(tr_backend *be, tr_tensor *x, float s)
{
    BEGIN("scale");
    ROLES("scale", x);
    op_scale_cpu(F32(x), s, (size_t)tr_tensor_numel(x));
    END();
}
static void ema(tr_backend *be, tr_tensor *e, const tr_tensor *x, float decay, const tr_step_hyper *h)
{
    BEGIN("ema");
    ROLES("ema", e, x);
    host_hyper(&st, h);
    op_ema_cpu(F32(e), F32(x), decay, (size_t)tr_tensor_numel(x));
    END();
}

/* ---- the CNN's ops: activations staged as the GPT's, BatchNorm's statistics and parameters fp32 ---- */

static size_t conv2d_workspace_bytes(tr_backend *be, int B, int C, int H, int W, int OC, int K, int stride, int pad)
{
    (void)B; /* per thread, not per image */
    if (be->cnn_nhwc)
        return op_conv2d_nhwc_workspace_cpu(C, OC, K, H, W, stride, pad) * sizeof(float);
    return op_conv2d_workspace_cpu(C, OC, K, (H + 2 * pad - K) / stride + 1, (W + 2 * pad - K) / stride + 1) *
           sizeof(float);
}

/* A range inside each conv op that names its algorithm and shape (what
 * gtrace's advice reads): "conv <algo> CxHxW->OC kK sS pP[ bias]". */
static void push_algo(const char *algo, int C, int H, int W, int OC, int K, int stride, int pad, bool bias)
{
    char name[128];
    snprintf(name, sizeof name, "conv %s %dx%dx%d->%d k%d s%d p%d%s", algo, C, H, W, OC, K, stride, pad,
             bias ? " bias" : "");
    tr_nvtx_push(name);
}
/* ---- --conv-autotune: both CPU algorithms timed once per shape, the faster kept ---- */

enum { ALGO_IM2COL, ALGO_DIRECT, N_CONV_ALGOS, MAX_TUNED = 128 };
static const char *const algo_names[N_CONV_ALGOS] = {"im2col+gemm", "direct"};
static struct tuned {
    int key[9]; /* B, C, H, W, OC, K, stride, pad, backward */
    int algo;
    double ms[N_CONV_ALGOS];
} tuned[MAX_TUNED];
static int n_tuned;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static struct tuned *find_tuned(const int *key)
{
    for (int i = 0; i < n_tuned; i++)
        if (!memcmp(tuned[i].key, key, sizeof tuned[i].key))
            return &tuned[i];
    return NULL;
}

static void *scratch_f32(size_t n, const char *op)
{
    float *p = calloc(n ? n : 1, sizeof(float));
    if (!p) {
        fprintf(stderr, "trainer: %s: out of host memory for the autotuning trial\n", op);
        exit(1);
    }
    return p;
}

static void conv_fwd_algo(int algo, float *out_, const float *x, const float *w, const float *b, float *ws, int B,
                          int C, int H, int W, int OC, int K, int stride, int pad)
{
    if (algo == ALGO_DIRECT)
        op_conv2d_direct_forward_cpu(out_, x, w, b, B, C, H, W, OC, K, stride, pad);
    else
        op_conv2d_forward_cpu(out_, x, w, b, ws, B, C, H, W, OC, K, stride, pad);
}

static void conv_bwd_algo(int algo, float *dx, float *dw, float *db, const float *dy, const float *x, const float *w,
                          float *ws, int B, int C, int H, int W, int OC, int K, int stride, int pad, bool add)
{
    if (algo == ALGO_DIRECT)
        op_conv2d_direct_backward_cpu(dx, dw, db, dy, x, w, B, C, H, W, OC, K, stride, pad, add);
    else
        op_conv2d_backward_cpu(dx, dw, db, dy, x, w, ws, B, C, H, W, OC, K, stride, pad, add);
}

int tr_backend_cpu_conv_choices(char *buf, size_t n)
{
    size_t at = 0;
    if (n)
        buf[0] = '\0';
    for (int i = 0; i < n_tuned && at < n; i++) {
        const int *k = tuned[i].key;
        int w = snprintf(buf + at, n - at, "conv %s batch %d, %dx%dx%d -> %d, k%d s%d p%d: %s (%s %.2f ms, %s %.2f ms)\n",
                         k[8] ? "backward" : "forward", k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7],
                         algo_names[tuned[i].algo], algo_names[0], tuned[i].ms[0], algo_names[1], tuned[i].ms[1]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
    return n_tuned;
}

/* The algorithm for this shape: im2col+gemm without autotuning (measured
 * faster on every shape of the presets); with it, the cached choice, or
 * none yet (-1): the caller times both. */
static int conv_algo(const tr_backend *be, const int *key)
{
    if (!be->conv_autotune)
        return ALGO_IM2COL;
    struct tuned *t = find_tuned(key);
    return t ? t->algo : -1;
}

static void remember(const int *key, const double *ms)
{
    if (n_tuned == MAX_TUNED)
        return; /* more shapes than the cache holds: the later ones are timed again */
    struct tuned *t = &tuned[n_tuned++];
    memcpy(t->key, key, sizeof t->key);
    memcpy(t->ms, ms, sizeof t->ms);
    t->algo = ms[ALGO_DIRECT] < ms[ALGO_IM2COL] ? ALGO_DIRECT : ALGO_IM2COL;
}

static void conv_forward(tr_backend *be, tr_tensor *out_, const tr_tensor *inp, const tr_tensor *w,
                         const tr_tensor *bias, tr_tensor *ws, int B, int C, int H, int W, int OC, int K, int stride,
                         int pad, bool relu)
{
    BEGIN(relu ? "conv2d_relu_forward" : "conv2d_forward");
    ROLES("conv2d_forward", out_, inp, w, bias, ws);
    float *y = out(&st, out_, false), *x = in(&st, inp), *wt = in(&st, w);
    if (be->cnn_nhwc) { /* one algorithm; the ReLU as the results are stored */
        push_algo("nhwc-direct", C, H, W, OC, K, stride, pad, bias != NULL);
        op_conv2d_nhwc_forward_cpu(y, x, wt, F32(bias), F32(ws), B, C, H, W, OC, K, stride, pad, relu);
        tr_nvtx_pop();
        END();
        return;
    }
    int key[9] = {B, C, H, W, OC, K, stride, pad, 0}, algo = conv_algo(be, key);
    if (algo < 0) { /* the trial: each algorithm into scratch, timed */
        tr_nvtx_push("conv autotune");
        float *trial = scratch_f32((size_t)tr_tensor_numel(out_), "conv2d_forward");
        double ms[N_CONV_ALGOS];
        for (int a = 0; a < N_CONV_ALGOS; a++) /* the better of two runs: the first pays for cold pages */
            for (int rep = 0; rep < 2; rep++) {
                double t0 = now_ms();
                conv_fwd_algo(a, trial, x, wt, F32(bias), F32(ws), B, C, H, W, OC, K, stride, pad);
                double t = now_ms() - t0;
                ms[a] = rep == 0 || t < ms[a] ? t : ms[a];
            }
        free(trial);
        remember(key, ms);
        algo = ms[ALGO_DIRECT] < ms[ALGO_IM2COL] ? ALGO_DIRECT : ALGO_IM2COL;
        tr_nvtx_pop();
    }
    push_algo(algo_names[algo], C, H, W, OC, K, stride, pad, bias != NULL);
    conv_fwd_algo(algo, y, x, wt, F32(bias), F32(ws), B, C, H, W, OC, K, stride, pad);
    tr_nvtx_pop();
    if (relu) /* NCHW: a pass of its own */
        op_relu_forward_cpu(y, y, (size_t)tr_tensor_numel(out_));
    END();
}
static void conv2d_forward(tr_backend *be, tr_tensor *out_, const tr_tensor *inp, const tr_tensor *w,
                           const tr_tensor *bias, tr_tensor *ws, int B, int C, int H, int W, int OC, int K, int stride,
                           int pad)
{
    conv_forward(be, out_, inp, w, bias, ws, B, C, H, W, OC, K, stride, pad, false);
}
static void conv2d_relu_forward(tr_backend *be, tr_tensor *out_, const tr_tensor *inp, const tr_tensor *w,
                                const tr_tensor *bias, tr_tensor *ws, int B, int C, int H, int W, int OC, int K,
                                int stride, int pad)
{
    conv_forward(be, out_, inp, w, bias, ws, B, C, H, W, OC, K, stride, pad, true);
}
static void conv2d_backward(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *dbias, const tr_tensor *dout,
                            const tr_tensor *inp, const tr_tensor *w, tr_tensor *ws, int B, int C, int H, int W, int OC,
                            int K, int stride, int pad, bool add_dparams)
{
    BEGIN("conv2d_backward");
    ROLES("conv2d_backward", dinp, dw, dbias, dout, inp, w, ws);
    float *dx = out(&st, dinp, true), *dy = in(&st, dout), *x = in(&st, inp), *wt = in(&st, w);
    if (be->cnn_nhwc) {
        push_algo("nhwc-direct", C, H, W, OC, K, stride, pad, dbias != NULL);
        op_conv2d_nhwc_backward_cpu(dx, F32(dw), F32(dbias), dy, x, wt, F32(ws), B, C, H, W, OC, K, stride, pad,
                                    add_dparams);
        tr_nvtx_pop();
        END();
        return;
    }
    int key[9] = {B, C, H, W, OC, K, stride, pad, 1}, algo = conv_algo(be, key);
    if (algo < 0) { /* the trial: each algorithm into scratch gradients, timed */
        tr_nvtx_push("conv autotune");
        float *tdx = dinp ? scratch_f32((size_t)tr_tensor_numel(dinp), "conv2d_backward") : NULL,
              *tdw = scratch_f32((size_t)tr_tensor_numel(dw), "conv2d_backward"),
              *tdb = dbias ? scratch_f32((size_t)OC, "conv2d_backward") : NULL;
        double ms[N_CONV_ALGOS];
        for (int a = 0; a < N_CONV_ALGOS; a++) /* dx accumulates: scratch values are never read */
            for (int rep = 0; rep < 2; rep++) {
                double t0 = now_ms();
                conv_bwd_algo(a, tdx, tdw, tdb, dy, x, wt, F32(ws), B, C, H, W, OC, K, stride, pad, false);
                double t = now_ms() - t0;
                ms[a] = rep == 0 || t < ms[a] ? t : ms[a];
            }
        free(tdx);
        free(tdw);
        free(tdb);
        remember(key, ms);
        algo = ms[ALGO_DIRECT] < ms[ALGO_IM2COL] ? ALGO_DIRECT : ALGO_IM2COL;
        tr_nvtx_pop();
    }
    push_algo(algo_names[algo], C, H, W, OC, K, stride, pad, dbias != NULL);
    conv_bwd_algo(algo, dx, F32(dw), F32(dbias), dy, x, wt, F32(ws), B, C, H, W, OC, K, stride, pad, add_dparams);
    tr_nvtx_pop();
    END();
}
static void bn_forward(tr_backend *be, tr_tensor *out_, tr_tensor *mean, tr_tensor *rstd, tr_tensor *running_mean,
                       tr_tensor *running_var, const tr_tensor *inp, const tr_tensor *w, const tr_tensor *b, int B,
                       int C, int HW, bool training, float momentum, float eps, bool relu)
{
    const char *name = relu ? "batchnorm_relu_forward" : "batchnorm_forward";
    BEGIN(name);
    ROLES("batchnorm_forward", out_, mean, rstd, running_mean, running_var, inp, w, b);
    float *y = out(&st, out_, false), *x = in(&st, inp);
    if (be->cnn_nhwc)
        op_batchnorm_nhwc_forward_cpu(y, F32(mean), F32(rstd), F32(running_mean), F32(running_var), x, F32(w), F32(b),
                                      B * HW, C, training, momentum, eps, relu);
    else
        op_batchnorm_forward_cpu(y, F32(mean), F32(rstd), F32(running_mean), F32(running_var), x, F32(w), F32(b), B,
                                 C, HW, training, momentum, eps, relu);
    END();
}
static void batchnorm_forward(tr_backend *be, tr_tensor *out_, tr_tensor *mean, tr_tensor *rstd,
                              tr_tensor *running_mean, tr_tensor *running_var, const tr_tensor *inp, const tr_tensor *w,
                              const tr_tensor *b, int B, int C, int HW, bool training, float momentum, float eps)
{
    bn_forward(be, out_, mean, rstd, running_mean, running_var, inp, w, b, B, C, HW, training, momentum, eps, false);
}
static void batchnorm_relu_forward(tr_backend *be, tr_tensor *out_, tr_tensor *mean, tr_tensor *rstd,
                                   tr_tensor *running_mean, tr_tensor *running_var, const tr_tensor *inp,
                                   const tr_tensor *w, const tr_tensor *b, int B, int C, int HW, bool training,
                                   float momentum, float eps)
{
    bn_forward(be, out_, mean, rstd, running_mean, running_var, inp, w, b, B, C, HW, training, momentum, eps, true);
}
static void bn_backward(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *db, const tr_tensor *dout,
                        const tr_tensor *inp, const tr_tensor *w, const tr_tensor *relu_bias, const tr_tensor *mean,
                        const tr_tensor *rstd, int B, int C, int HW, bool add_dparams)
{
    BEGIN(relu_bias ? "batchnorm_relu_backward" : "batchnorm_backward");
    ROLES("batchnorm_backward", dinp, dw, db, dout, inp, w, mean, rstd);
    float *dx = out(&st, dinp, true), *dy = in(&st, dout), *x = in(&st, inp);
    if (be->cnn_nhwc)
        op_batchnorm_nhwc_backward_cpu(dx, F32(dw), F32(db), dy, x, F32(w), F32(mean), F32(rstd), B * HW, C,
                                       add_dparams, F32(relu_bias));
    else
        op_batchnorm_backward_cpu(dx, F32(dw), F32(db), dy, x, F32(w), F32(mean), F32(rstd), B, C, HW, add_dparams,
                                  F32(relu_bias));
    END();
}
static void batchnorm_backward(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *db, const tr_tensor *dout,
                               const tr_tensor *inp, const tr_tensor *w, const tr_tensor *mean, const tr_tensor *rstd,
                               int B, int C, int HW, bool add_dparams, float eps)
{
    (void)eps; /* rstd was kept */
    bn_backward(be, dinp, dw, db, dout, inp, w, NULL, mean, rstd, B, C, HW, add_dparams);
}
static void batchnorm_relu_backward(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *db,
                                    const tr_tensor *dout, const tr_tensor *inp, const tr_tensor *w,
                                    const tr_tensor *b, const tr_tensor *mean, const tr_tensor *rstd, int B, int C,
                                    int HW, bool add_dparams, float eps)
{
    (void)eps;
    bn_backward(be, dinp, dw, db, dout, inp, w, b, mean, rstd, B, C, HW, add_dparams);
}
static int32_t *i32w(tr_tensor *t) { return t->data; }
static void maxpool_forward(tr_backend *be, tr_tensor *out_, tr_tensor *idx, const tr_tensor *inp, int B, int C,
                            int H, int W, int K, int stride)
{
    BEGIN("maxpool_forward");
    ROLES("maxpool_forward", out_, idx, inp);
    (be->cnn_nhwc ? op_maxpool_nhwc_forward_cpu : op_maxpool_forward_cpu)(out(&st, out_, false), i32w(idx),
                                                                          in(&st, inp), B, C, H, W, K, stride);
    END();
}
static void maxpool_backward(tr_backend *be, tr_tensor *dinp, const tr_tensor *dout, const tr_tensor *idx, int B,
                             int C, int H, int W, int K, int stride)
{
    BEGIN("maxpool_backward");
    ROLES("maxpool_backward", dinp, dout, idx);
    (be->cnn_nhwc ? op_maxpool_nhwc_backward_cpu : op_maxpool_backward_cpu)(out(&st, dinp, true), in(&st, dout),
                                                                            i32(idx), B, C, H, W, K, stride);
    END();
}
static void avgpool_forward(tr_backend *be, tr_tensor *out_, const tr_tensor *inp, int B, int C, int H, int W, int K,
                            int stride)
{
    BEGIN("avgpool_forward");
    ROLES("avgpool_forward", out_, inp);
    (be->cnn_nhwc ? op_avgpool_nhwc_forward_cpu : op_avgpool_forward_cpu)(out(&st, out_, false), in(&st, inp), B, C,
                                                                          H, W, K, stride);
    END();
}
static void avgpool_backward(tr_backend *be, tr_tensor *dinp, const tr_tensor *dout, int B, int C, int H, int W,
                             int K, int stride)
{
    BEGIN("avgpool_backward");
    ROLES("avgpool_backward", dinp, dout);
    (be->cnn_nhwc ? op_avgpool_nhwc_backward_cpu : op_avgpool_backward_cpu)(out(&st, dinp, true), in(&st, dout), B,
                                                                            C, H, W, K, stride);
    END();
}
static void residual_relu_forward(tr_backend *be, tr_tensor *out_, const tr_tensor *a, const tr_tensor *b)
{
    BEGIN("residual_relu_forward");
    ROLES("residual_relu_forward", out_, a, b);
    op_residual_relu_forward_cpu(out(&st, out_, false), in(&st, a), in(&st, b), (size_t)tr_tensor_numel(a));
    END();
}
static void residual_relu_backward(tr_backend *be, tr_tensor *da, tr_tensor *db, const tr_tensor *out_,
                                   const tr_tensor *dout)
{
    BEGIN("residual_relu_backward");
    ROLES("residual_relu_backward", da, db, out_, dout);
    op_residual_relu_backward_cpu(out(&st, da, true), out(&st, db, true), in(&st, out_), in(&st, dout),
                                  (size_t)tr_tensor_numel(dout));
    END();
}
static void relu_forward(tr_backend *be, tr_tensor *out_, const tr_tensor *inp)
{
    BEGIN("relu_forward");
    ROLES("relu_forward", out_, inp);
    op_relu_forward_cpu(out(&st, out_, false), in(&st, inp), (size_t)tr_tensor_numel(inp));
    END();
}
static void relu_backward(tr_backend *be, tr_tensor *dinp, const tr_tensor *out_, const tr_tensor *dout)
{
    BEGIN("relu_backward");
    ROLES("relu_backward", dinp, out_, dout);
    op_relu_backward_cpu(out(&st, dinp, true), in(&st, out_), in(&st, dout), (size_t)tr_tensor_numel(dout));
    END();
}
static void dropout_forward(tr_backend *be, tr_tensor *out_, const tr_tensor *inp, const tr_tensor *mask)
{
    BEGIN("dropout_forward");
    ROLES("dropout_forward", out_, inp, mask);
    op_dropout_forward_cpu(out(&st, out_, false), in(&st, inp), F32(mask), (size_t)tr_tensor_numel(inp));
    END();
}
static void dropout_backward(tr_backend *be, tr_tensor *dinp, const tr_tensor *mask, const tr_tensor *dout)
{
    BEGIN("dropout_backward");
    ROLES("dropout_backward", dinp, mask, dout);
    op_dropout_backward_cpu(out(&st, dinp, true), F32(mask), in(&st, dout), (size_t)tr_tensor_numel(dout));
    END();
}
static void cnn_transpose(tr_backend *be, tr_tensor *out_, const tr_tensor *inp, int B, int C, int HW, bool to_nhwc,
                          bool add)
{
    BEGIN("layout_transpose");
    ROLES("layout_transpose", out_, inp);
    op_layout_transpose_cpu(out(&st, out_, add), in(&st, inp), B, C, HW, to_nhwc, add);
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
    .residual_layernorm_forward = residual_layernorm_forward,
    .residual_layernorm_backward = residual_layernorm_backward,
    .matmul_bias_gelu_forward = matmul_bias_gelu_forward,
    .crossentropy_fused_forward = crossentropy_fused_forward,
    .cast = cast,
    .adamw = adamw,
    .adamw_fused = adamw_fused,
    .sgd = sgd,
    .sumsq = sumsq,
    .all_finite = all_finite,
    .sumsq_finite = sumsq_finite,
    .unscale = unscale,
    .scale = scale,
    .ema = ema,
    .conv2d_workspace_bytes = conv2d_workspace_bytes,
    .conv_choices = tr_backend_cpu_conv_choices,
    .conv2d_forward = conv2d_forward,
    .conv2d_backward = conv2d_backward,
    .batchnorm_forward = batchnorm_forward,
    .batchnorm_backward = batchnorm_backward,
    .maxpool_forward = maxpool_forward,
    .maxpool_backward = maxpool_backward,
    .avgpool_forward = avgpool_forward,
    .avgpool_backward = avgpool_backward,
    .relu_forward = relu_forward,
    .relu_backward = relu_backward,
    .dropout_forward = dropout_forward,
    .dropout_backward = dropout_backward,
    .cnn_transpose = cnn_transpose,
    .conv2d_relu_forward = conv2d_relu_forward,
    .batchnorm_relu_forward = batchnorm_relu_forward,
    .batchnorm_relu_backward = batchnorm_relu_backward,
    .residual_relu_forward = residual_relu_forward,
    .residual_relu_backward = residual_relu_backward,
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
