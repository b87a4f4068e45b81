/* backend_cuda_ops.c: the CUDA backend's ops but the GEMMs: one launcher of
 * kernels/cuda each, behind the dtype roles' check (op_roles.h) and one NVTX
 * range; attention on cuDNN's fused kernel (attention_cudnn.c) or our own;
 * the optimizer's updates by value or from the device step state; the
 * reductions read back to the host. */
#include "backend_cuda_core.h"

#include "backend_cuda_step.h"
#include "error.h"
#ifdef HAVE_CUDNN
#include "attention_cudnn.h"
#include "cnn_cudnn.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the other ops: one launcher each ---- */

static void encoder_forward(tr_backend *be, tr_tensor *out, const tr_tensor *inp, const tr_tensor *wte,
                            const tr_tensor *wpe, int B, int T, int C)
{
    OP("encoder_forward");
    int dt = ROLES(out, inp, wte, wpe);
    void *o = D(out);
    const void *e = D(wte), *p = D(wpe);
    DONE(kc_encoder_forward(o, dt, I(inp), e, p, B, T, C, cb->compute));
}

static void encoder_backward(tr_backend *be, tr_tensor *dwte, tr_tensor *dwpe, const tr_tensor *dout,
                             const tr_tensor *inp, int B, int T, int C, bool add_dparams)
{
    OP("encoder_backward");
    int dt = ROLES(dwte, dwpe, dout, inp);
    const void *d = D(dout);
    DONE(kc_encoder_backward(F(dwte), F(dwpe), d, dt, I(inp), B, T,
                             C, (int)dwpe->shape[0], add_dparams, cb->compute));
}

static void layernorm_forward(tr_backend *be, tr_tensor *out, tr_tensor *mean, tr_tensor *rstd,
                              const tr_tensor *inp, const tr_tensor *w, const tr_tensor *b, int N, int C)
{
    OP("layernorm_forward");
    int dt = ROLES(out, mean, rstd, inp, w, b);
    void *o = D(out);
    DONE(kc_layernorm_forward(o, dt, F(mean), F(rstd), F(inp),
                              F(w), F(b), N, C, cb->compute));
}

static void layernorm_backward(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *db,
                               const tr_tensor *dout, const tr_tensor *inp, const tr_tensor *w,
                               const tr_tensor *mean, const tr_tensor *rstd, int N, int C, bool add_dparams)
{
    OP("layernorm_backward");
    int dt = ROLES(dinp, dw, db, dout, inp, w, mean, rstd);
    const void *d = D(dout);
    float *s = tr_cuda_scratch(cb, kc_layernorm_backward_scratch_bytes(N, C));
    DONE(kc_layernorm_backward(F(dinp), F(dw), F(db), d,
                               dt, F(inp), F(w), F(mean),
                               F(rstd), add_dparams, s, N, C, cb->compute));
}

static void residual_layernorm_forward(tr_backend *be, tr_tensor *res, tr_tensor *out, tr_tensor *mean,
                                       tr_tensor *rstd, const tr_tensor *a, const tr_tensor *b, const tr_tensor *w,
                                       const tr_tensor *bias, int N, int C)
{
    OP("residual_layernorm_forward");
    int dt = ROLES(res, out, mean, rstd, a, b, w, bias);
    void *o = D(out);
    const void *y = D(b);
    DONE(kc_residual_layernorm_forward(F(res), o, dt, F(mean),
                                       F(rstd), F(a), y, F(w),
                                       F(bias), N, C, cb->compute));
}

static void residual_layernorm_backward(tr_backend *be, tr_tensor *da, tr_tensor *db, tr_tensor *dres,
                                        tr_tensor *dw, tr_tensor *dbias, const tr_tensor *dout, const tr_tensor *res,
                                        const tr_tensor *w, const tr_tensor *mean, const tr_tensor *rstd, int N,
                                        int C, bool add_dparams)
{
    OP("residual_layernorm_backward");
    int dt = ROLES(da, db, dres, dw, dbias, dout, res, w, mean, rstd);
    void *y = D(db);
    const void *d = D(dout);
    float *s = tr_cuda_scratch(cb, kc_layernorm_backward_scratch_bytes(N, C));
    DONE(kc_residual_layernorm_backward(F(da), y, F(dres),
                                        F(dw), F(dbias), d, dt,
                                        F(res), F(w), F(mean),
                                        F(rstd), add_dparams, s, N, C, cb->compute));
}

/* ---- attention: cuDNN's fused attention (attention_cudnn.c) or the own kernel ---- */

/* Whether attention on activations of dtype dt at this shape runs on cuDNN,
 * and its workspace then: --attention own never; cudnn always, or an error
 * naming why it cannot; auto when cuDNN loaded, dt is bf16 or fp16 and cuDNN
 * has plans for the shape (else the own kernel, said once). */
static bool use_cudnn(cuda_backend *cb, int dt, int B, int T, int C, int NH, size_t *workspace_bytes)
{
    *workspace_bytes = 0;
    if (cb->opt.attention == TR_CUDA_ATTENTION_OWN)
        return false;
    bool must = cb->opt.attention == TR_CUDA_ATTENTION_CUDNN;
    if (dt == KC_F32) {
        if (!must)
            return false;
        fprintf(stderr, "trainer: --attention cudnn: cuDNN's fused attention has no fp32; train with --amp bf16 "
                        "or fp16, or --attention own\n");
        exit(1);
    }
#ifdef HAVE_CUDNN
    if (cb->cudnn) {
        if (tr_attn_cudnn_prepare(cb->cudnn, (tr_dtype)dt, B, T, NH, C / NH, workspace_bytes) == TR_OK)
            return true;
        if (must) {
            fprintf(stderr, "trainer: --attention cudnn: %s\n", tr_error_last());
            exit(1);
        }
        if (!cb->cudnn_fallback_said)
            fprintf(stderr, "trainer: attention runs on the own kernel: %s\n", tr_error_last());
        cb->cudnn_fallback_said = true;
        return false;
    }
#else
    (void)B, (void)T, (void)C, (void)NH;
#endif
    if (must) { /* tr_backend_cuda_new refused this already; kept for callers that change the options */
        fprintf(stderr, "trainer: --attention cudnn: %s\n", cb->cudnn_why);
        exit(1);
    }
    return false;
}

static void attention_layout(tr_backend *be, tr_dtype act_dt, int B, int T, int C, int NH, tr_tensor *att,
                             tr_tensor *scr)
{
    size_t ws;
    if (use_cudnn(cb_of(be), (int)act_dt, B, T, C, NH, &ws)) {
        *att = (tr_tensor){NULL, TR_F32, TR_CUDA, 3, {B, NH, T}};
        *scr = (tr_tensor){NULL, TR_F32, TR_CUDA, 1, {0}};
    } else {
        *att = (tr_tensor){NULL, act_dt, TR_CUDA, 4, {B, NH, T, T}};
        *scr = (tr_tensor){NULL, TR_F32, TR_CUDA, 4, {B, NH, T, T}};
    }
}

#ifdef HAVE_CUDNN
/* The softmax statistics fused attention keeps in att: (B,NH,T) fp32. */
static float *cudnn_stats(const char *op, const tr_tensor *att, int B, int T, int NH)
{
    if (att->dtype != TR_F32)
        tr_cuda_refuse(op, "att", att, "F32 softmax statistics with cuDNN attention");
    float *s = att->data;
    if (tr_tensor_numel(att) != (int64_t)B * NH * T) {
        fprintf(stderr, "trainer: %s: cuDNN attention keeps (B,NH,T) = %lld softmax statistics in att, which holds "
                        "%lld (see attention_layout)\n",
                op, (long long)B * NH * T, (long long)tr_tensor_numel(att));
        exit(1);
    }
    return s;
}

static void cudnn_check(const char *op, int rc)
{
    if (rc < 0) {
        fprintf(stderr, "trainer: cuda: %s: %s\n", op, tr_error_last());
        exit(1);
    }
}
#endif

static void attention_forward(tr_backend *be, tr_tensor *out, tr_tensor *att, const tr_tensor *qkv, int B, int T,
                              int C, int NH)
{
    OP("attention_forward");
    int dt = ROLES(out, att, qkv);
    void *o = D(out);
    const void *x = D(qkv);
    size_t ws;
    if (use_cudnn(cb, dt, B, T, C, NH, &ws)) {
#ifdef HAVE_CUDNN
        cudnn_check(op_name, tr_attn_cudnn_forward(cb->cudnn, o, cudnn_stats(op_name, att, B, T, NH), x, (tr_dtype)dt,
                                                   B, T, NH, C / NH, tr_cuda_scratch(cb, ws), cb->compute));
#endif
        DONE(0);
        return;
    }
    if ((int)att->dtype != dt)
        tr_cuda_refuse(op_name, "att", att, "the activation dtype: the own kernel keeps the probabilities");
    void *a = D(att);
    DONE(kc_attention_forward(o, a, x, dt, B, T, C, NH, cb->compute));
}

static void attention_backward(tr_backend *be, tr_tensor *dqkv, tr_tensor *scr, const tr_tensor *dout,
                               const tr_tensor *qkv, const tr_tensor *out, const tr_tensor *att, int B, int T, int C,
                               int NH)
{
    OP("attention_backward");
    int dt = ROLES(dqkv, scr, dout, qkv, out, att);
    void *dq = D(dqkv);
    const void *d = D(dout), *q = D(qkv);
    size_t ws;
    if (use_cudnn(cb, dt, B, T, C, NH, &ws)) {
#ifdef HAVE_CUDNN
        const void *o = D(out);
        cudnn_check(op_name,
                    tr_attn_cudnn_backward(cb->cudnn, dq, d, q, o, cudnn_stats(op_name, att, B, T, NH), (tr_dtype)dt, B,
                                           T, NH, C / NH, tr_cuda_scratch(cb, ws), cb->compute));
#endif
        DONE(0);
        return;
    }
    if ((int)att->dtype != dt)
        tr_cuda_refuse(op_name, "att", att, "the activation dtype: the own kernel keeps the probabilities");
    const void *a = D(att);
    DONE(kc_attention_backward(dq, F(scr), d, q, a, dt, B, T, C, NH, cb->compute));
}

static void gelu_forward(tr_backend *be, tr_tensor *out, const tr_tensor *inp)
{
    OP("gelu_forward");
    int dt = ROLES(out, inp);
    void *o = D(out);
    DONE(kc_gelu_forward(o, D(inp), dt, (long)tr_tensor_numel(inp), cb->compute));
}

static void gelu_backward(tr_backend *be, tr_tensor *dinp, const tr_tensor *inp, const tr_tensor *dout)
{
    OP("gelu_backward");
    int dt = ROLES(dinp, inp, dout);
    void *dx = D(dinp);
    const void *x = D(inp), *d = D(dout);
    DONE(kc_gelu_backward(dx, x, d, dt, (long)tr_tensor_numel(inp), cb->compute));
}

static void residual_forward(tr_backend *be, tr_tensor *out, const tr_tensor *a, const tr_tensor *b)
{
    OP("residual_forward");
    int dt = ROLES(out, a, b);
    const void *y = D(b);
    DONE(kc_residual_forward(F(out), F(a), y, dt, (long)tr_tensor_numel(a),
                             cb->compute));
}

static void residual_backward(tr_backend *be, tr_tensor *da, tr_tensor *db, const tr_tensor *dout)
{
    OP("residual_backward");
    int dt = ROLES(da, db, dout);
    void *y = D(db);
    DONE(kc_residual_backward(F(da), y, dt, F(dout), (long)tr_tensor_numel(dout),
                              cb->compute));
}

static void crossentropy_forward(tr_backend *be, tr_tensor *losses, tr_tensor *probs, const tr_tensor *logits,
                                 const tr_tensor *targets, int N, int V, int Vp)
{
    OP("crossentropy_forward");
    int dt = ROLES(losses, probs, logits, targets);
    const void *l = D(logits);
    DONE(kc_crossentropy_forward(F(losses), F(probs), l, dt,
                                 I(targets), N, V, Vp, cb->compute));
}

static void crossentropy_backward(tr_backend *be, tr_tensor *dlogits, const tr_tensor *probs,
                                  const tr_tensor *targets, float dloss, int N, int V, int Vp)
{
    OP("crossentropy_backward");
    int dt = ROLES(dlogits, probs, targets);
    void *d = D(dlogits);
    DONE(kc_crossentropy_backward(d, dt, F(probs), I(targets), dloss,
                                  tr_cuda_step_loss_scale(cb->step), N, V, Vp,
                                  cb->compute));
}

static void crossentropy_fused_forward(tr_backend *be, tr_tensor *losses, tr_tensor *logits,
                                       const tr_tensor *targets, float dloss, int N, int V, int Vp)
{
    OP("crossentropy_fused_forward");
    int dt = ROLES(losses, logits, targets);
    void *l = D(logits);
    DONE(kc_crossentropy_fused_forward(F(losses), l, dt, I(targets), dloss,
                                       tr_cuda_step_loss_scale(cb->step), N, V, Vp,
                                       cb->compute));
}

static void cast(tr_backend *be, tr_tensor *dst, const tr_tensor *src)
{
    OP("cast");
    ROLES(dst, src);
    int ddt = (int)dst->dtype, sdt = (int)src->dtype;
    void *d = D(dst);
    const void *s = D(src);
    DONE(kc_cast(d, ddt, s, sdt, (long)tr_tensor_numel(src), cb->compute));
}

/* ---- optimizer ops: fp32 master weights and state ---- */

/* The updates take what the step decided by value (kc_adamw, ...) or read it
 * from the device state (kc_adamw_step, ...: a skipped step writes nothing). */
static void adamw(tr_backend *be, tr_tensor *param, const tr_tensor *grad, tr_tensor *m, tr_tensor *v,
                  const tr_step_hyper *h, float beta1, float beta2, float eps, float weight_decay)
{
    OP("adamw");
    ROLES(param, grad, m, v);
    float *p = F(param), *mm = F(m), *vv = F(v);
    const float *g = F(grad);
    long n = (long)tr_tensor_numel(param);
    DONE(h->dev ? kc_adamw_step(p, g, mm, vv, n, beta1, beta2, eps, weight_decay, h->dev, cb->compute)
                : kc_adamw(p, g, mm, vv, n, h->lr, beta1, beta2, eps, weight_decay, h->t, cb->compute));
}

static void adamw_fused(tr_backend *be, tr_tensor *param, const tr_tensor *grad, tr_tensor *m, tr_tensor *v,
                        const size_t *bounds, const float *decay, int n_ranges, const tr_step_hyper *h, float beta1,
                        float beta2, float eps)
{
    OP("adamw_fused");
    ROLES(param, grad, m, v);
    if (n_ranges < 1 || n_ranges > KC_MAX_RANGES) {
        fprintf(stderr, "trainer: adamw_fused: %d ranges (the cuda kernel takes 1 to %d)\n", n_ranges, KC_MAX_RANGES);
        exit(1);
    }
    kc_ranges r = {.n = n_ranges};
    memcpy(r.bounds, bounds, (n_ranges + 1) * sizeof *bounds);
    memcpy(r.decay, decay, n_ranges * sizeof *decay);
    float *p = F(param), *mm = F(m), *vv = F(v);
    const float *g = F(grad);
    DONE(h->dev ? kc_adamw_fused_step(p, g, mm, vv, &r, beta1, beta2, eps, h->dev, cb->compute)
                : kc_adamw_fused(p, g, mm, vv, &r, h->lr, beta1, beta2, eps, h->grad_scale, h->t, cb->compute));
}

static void sgd(tr_backend *be, tr_tensor *param, const tr_tensor *grad, tr_tensor *buf, const tr_step_hyper *h,
                float momentum, float weight_decay)
{
    OP("sgd");
    ROLES(param, grad, buf);
    float *p = F(param), *b = F(buf);
    const float *g = F(grad);
    long n = (long)tr_tensor_numel(param);
    DONE(h->dev ? kc_sgd_step(p, g, b, n, momentum, weight_decay, h->dev, cb->compute)
                : kc_sgd(p, g, b, n, h->lr, momentum, weight_decay, h->t == 1, cb->compute));
}

static void unscale(tr_backend *be, tr_tensor *x, const tr_step_hyper *h)
{
    OP("scale");
    ROLES(x);
    float *p = F(x);
    long n = (long)tr_tensor_numel(x);
    DONE(h->dev ? kc_scale_step(p, n, h->dev, cb->compute) : kc_scale(p, h->grad_scale, n, cb->compute));
}

/* One reduction, read back with one synchronization. */
static kc_reduction reduce(cuda_backend *cb, const char *op, const tr_tensor *x)
{
    if (tr_cuda_step_capturing(cb->step))
        tr_cuda_step_refuse("a reduction read back to the host");
    void *s = tr_cuda_scratch(cb, kc_sumsq_scratch_bytes());
    int err = kc_sumsq_finite(cb->red_dev, F(x), (long)tr_tensor_numel(x), s, cb->compute);
    if (err)
        tr_cuda_fail(op, (cudaError_t)err);
    tr_cuda_check(cudaMemcpyAsync(cb->red_host, cb->red_dev, sizeof *cb->red_host, cudaMemcpyDeviceToHost, cb->compute),
          "reading a reduction back");
    tr_cuda_check(cudaStreamSynchronize(cb->compute), op);
    return *cb->red_host;
}

static double sumsq(tr_backend *be, const tr_tensor *x)
{
    OP("sumsq");
    ROLES(x);
    double s = reduce(cb, op_name, x).sumsq;
    DONE(0);
    return s;
}

static int all_finite(tr_backend *be, const tr_tensor *x)
{
    OP("all_finite");
    ROLES(x);
    int ok = reduce(cb, op_name, x).finite;
    DONE(0);
    return ok;
}

static double sumsq_finite(tr_backend *be, const tr_tensor *x, int *finite)
{
    OP("sumsq_finite");
    ROLES(x);
    kc_reduction r = reduce(cb, op_name, x);
    *finite = r.finite;
    DONE(0);
    return r.sumsq;
}

static void scale_by(tr_backend *be, tr_tensor *x, float s)
{
    OP("scale");
    ROLES(x);
    DONE(kc_scale(F(x), s, (long)tr_tensor_numel(x), cb->compute));
}

static void ema(tr_backend *be, tr_tensor *e, const tr_tensor *x, float decay, const tr_step_hyper *h)
{
    OP("ema");
    ROLES(e, x);
    float *w = F(e);
    const float *p = F(x);
    long n = (long)tr_tensor_numel(x);
    DONE(h->dev ? kc_ema_step(w, p, decay, n, h->dev, cb->compute) : kc_ema(w, p, decay, n, cb->compute));
}

/* ---- the CNN: convolution and BatchNorm on cuDNN (cnn_cudnn.c), the rest on kernels/cuda/pool.cu ---- */

/* A cuDNN call of the CNN that failed, or a build without cuDNN: exits naming the op. */
static void cnn_check(const char *op, int rc)
{
    if (rc < 0) {
        fprintf(stderr, "trainer: cuda: %s: %s\n", op, tr_error_last());
        exit(1);
    }
}

/* The CNN's ops run cuDNN and the pooling kernels in fp32: the roles allow
 * bf16/fp16 activations (the cpu backend's --amp), this backend does not. */
static void cnn_fp32(const char *op, int dt)
{
    if (dt != TR_F32) {
        fprintf(stderr, "trainer: cuda: %s: %s activations: the cuda backend's CNN ops are fp32 only\n", op,
                tr_dtype_name((tr_dtype)dt));
        exit(1);
    }
}

#ifndef HAVE_CUDNN
static int no_cudnn(void)
{
    return tr_error_set(TR_EINVAL, "this trainer was built without cuDNN's headers; the CNN's convolution and "
                                   "BatchNorm run on cuDNN on the cuda backend (use --backend cpu)");
}
#endif

static size_t conv2d_workspace_bytes(tr_backend *be, int B, int C, int H, int W, int OC, int K, int stride, int pad)
{
#ifdef HAVE_CUDNN
    size_t n;
    if (be->conv_autotune)
        tr_nvtx_push("conv autotune"); /* a shape's first query times its algorithms */
    int rc = tr_cnn_cudnn_conv_workspace(&n, B, C, H, W, OC, K, stride, pad, be->conv_autotune);
    if (be->conv_autotune)
        tr_nvtx_pop();
    if (rc < 0)
        return 0;
    return n > 0 ? n : 256;
#else
    (void)be; (void)B; (void)C; (void)H; (void)W; (void)OC; (void)K; (void)stride; (void)pad;
    no_cudnn();
    return 0;
#endif
}

static void conv2d_forward(tr_backend *be, tr_tensor *out, const tr_tensor *inp, const tr_tensor *w,
                           const tr_tensor *bias, tr_tensor *ws, int B, int C, int H, int W, int OC, int K, int stride,
                           int pad)
{
    OP("conv2d_forward");
    cnn_fp32(op_name, ROLES(out, inp, w, bias, ws));
#ifdef HAVE_CUDNN
    cnn_check(op_name, tr_cnn_cudnn_conv_forward(F(out), F(inp), F(w), F(bias), D(ws), tr_tensor_bytes(ws), B, C, H,
                                                 W, OC, K, stride, pad, cb->compute));
#else
    (void)B; (void)C; (void)H; (void)W; (void)OC; (void)K; (void)stride; (void)pad;
    cnn_check(op_name, no_cudnn());
#endif
    DONE(0);
}

static void conv2d_backward(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *dbias, const tr_tensor *dout,
                            const tr_tensor *inp, const tr_tensor *w, tr_tensor *ws, int B, int C, int H, int W, int OC,
                            int K, int stride, int pad, bool add_dparams)
{
    OP("conv2d_backward");
    cnn_fp32(op_name, ROLES(dinp, dw, dbias, dout, inp, w, ws));
#ifdef HAVE_CUDNN
    cnn_check(op_name, tr_cnn_cudnn_conv_backward(F(dinp), F(dw), F(dbias), F(dout), F(inp), F(w), D(ws),
                                                  tr_tensor_bytes(ws), B, C, H, W, OC, K, stride, pad, add_dparams,
                                                  cb->compute));
#else
    (void)B; (void)C; (void)H; (void)W; (void)OC; (void)K; (void)stride; (void)pad; (void)add_dparams;
    cnn_check(op_name, no_cudnn());
#endif
    DONE(0);
}

static void batchnorm_forward(tr_backend *be, tr_tensor *out, tr_tensor *mean, tr_tensor *rstd,
                              tr_tensor *running_mean, tr_tensor *running_var, const tr_tensor *inp, const tr_tensor *w,
                              const tr_tensor *b, int B, int C, int HW, bool training, float momentum, float eps)
{
    OP("batchnorm_forward");
    cnn_fp32(op_name, ROLES(out, mean, rstd, running_mean, running_var, inp, w, b));
#ifdef HAVE_CUDNN
    cnn_check(op_name, tr_cnn_cudnn_batchnorm_forward(F(out), F(mean), F(rstd), F(running_mean), F(running_var),
                                                      F(inp), F(w), F(b), B, C, HW, training, momentum, eps,
                                                      cb->compute));
#else
    (void)B; (void)C; (void)HW; (void)training; (void)momentum; (void)eps;
    cnn_check(op_name, no_cudnn());
#endif
    DONE(0);
}

static void batchnorm_backward(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *db, const tr_tensor *dout,
                               const tr_tensor *inp, const tr_tensor *w, const tr_tensor *mean, const tr_tensor *rstd,
                               int B, int C, int HW, bool add_dparams, float eps)
{
    OP("batchnorm_backward");
    cnn_fp32(op_name, ROLES(dinp, dw, db, dout, inp, w, mean, rstd));
#ifdef HAVE_CUDNN
    cnn_check(op_name, tr_cnn_cudnn_batchnorm_backward(F(dinp), F(dw), F(db), F(dout), F(inp), F(w), F(mean), F(rstd),
                                                       B, C, HW, add_dparams, eps, cb->compute));
#else
    (void)B; (void)C; (void)HW; (void)add_dparams; (void)eps;
    cnn_check(op_name, no_cudnn());
#endif
    DONE(0);
}

static void maxpool_forward(tr_backend *be, tr_tensor *out, tr_tensor *idx, const tr_tensor *inp, int B, int C,
                            int H, int W, int K, int stride)
{
    OP("maxpool_forward");
    cnn_fp32(op_name, ROLES(out, idx, inp));
    DONE(kc_maxpool_forward(F(out), (int32_t *)D(idx), F(inp), B, C, H, W, K, stride, cb->compute));
}

static void maxpool_backward(tr_backend *be, tr_tensor *dinp, const tr_tensor *dout, const tr_tensor *idx, int B,
                             int C, int H, int W, int K, int stride)
{
    OP("maxpool_backward");
    cnn_fp32(op_name, ROLES(dinp, dout, idx));
    DONE(kc_maxpool_backward(F(dinp), F(dout), I(idx), B, C, H, W, K, stride, cb->compute));
}

static void avgpool_forward(tr_backend *be, tr_tensor *out, const tr_tensor *inp, int B, int C, int H, int W, int K,
                            int stride)
{
    OP("avgpool_forward");
    cnn_fp32(op_name, ROLES(out, inp));
    DONE(kc_avgpool_forward(F(out), F(inp), B, C, H, W, K, stride, cb->compute));
}

static void avgpool_backward(tr_backend *be, tr_tensor *dinp, const tr_tensor *dout, int B, int C, int H, int W,
                             int K, int stride)
{
    OP("avgpool_backward");
    cnn_fp32(op_name, ROLES(dinp, dout));
    DONE(kc_avgpool_backward(F(dinp), F(dout), B, C, H, W, K, stride, cb->compute));
}

static void relu_forward(tr_backend *be, tr_tensor *out, const tr_tensor *inp)
{
    OP("relu_forward");
    cnn_fp32(op_name, ROLES(out, inp));
    DONE(kc_relu_forward(F(out), F(inp), (long)tr_tensor_numel(inp), cb->compute));
}

static void relu_backward(tr_backend *be, tr_tensor *dinp, const tr_tensor *out, const tr_tensor *dout)
{
    OP("relu_backward");
    cnn_fp32(op_name, ROLES(dinp, out, dout));
    DONE(kc_relu_backward(F(dinp), F(out), F(dout), (long)tr_tensor_numel(dout), cb->compute));
}

static void dropout_forward(tr_backend *be, tr_tensor *out, const tr_tensor *inp, const tr_tensor *mask)
{
    OP("dropout_forward");
    cnn_fp32(op_name, ROLES(out, inp, mask));
    DONE(kc_dropout_forward(F(out), F(inp), F(mask), (long)tr_tensor_numel(inp), cb->compute));
}

static void dropout_backward(tr_backend *be, tr_tensor *dinp, const tr_tensor *mask, const tr_tensor *dout)
{
    OP("dropout_backward");
    cnn_fp32(op_name, ROLES(dinp, mask, dout));
    DONE(kc_dropout_backward(F(dinp), F(mask), F(dout), (long)tr_tensor_numel(dout), cb->compute));
}

void tr_cuda_ops_fill(tr_backend *table)
{
    table->encoder_forward = encoder_forward;
    table->encoder_backward = encoder_backward;
    table->layernorm_forward = layernorm_forward;
    table->layernorm_backward = layernorm_backward;
    table->attention_layout = attention_layout;
    table->attention_forward = attention_forward;
    table->attention_backward = attention_backward;
    table->gelu_forward = gelu_forward;
    table->gelu_backward = gelu_backward;
    table->residual_forward = residual_forward;
    table->residual_backward = residual_backward;
    table->crossentropy_forward = crossentropy_forward;
    table->crossentropy_backward = crossentropy_backward;
    table->residual_layernorm_forward = residual_layernorm_forward;
    table->residual_layernorm_backward = residual_layernorm_backward;
    table->crossentropy_fused_forward = crossentropy_fused_forward;
    table->cast = cast;
    table->adamw = adamw;
    table->adamw_fused = adamw_fused;
    table->sgd = sgd;
    table->sumsq = sumsq;
    table->all_finite = all_finite;
    table->sumsq_finite = sumsq_finite;
    table->unscale = unscale;
    table->scale = scale_by;
    table->ema = ema;
    table->conv2d_workspace_bytes = conv2d_workspace_bytes;
#ifdef HAVE_CUDNN
    table->conv_choices = tr_cnn_cudnn_conv_choices;
#endif
    table->conv2d_forward = conv2d_forward;
    table->conv2d_backward = conv2d_backward;
    table->batchnorm_forward = batchnorm_forward;
    table->batchnorm_backward = batchnorm_backward;
    table->maxpool_forward = maxpool_forward;
    table->maxpool_backward = maxpool_backward;
    table->avgpool_forward = avgpool_forward;
    table->avgpool_backward = avgpool_backward;
    table->relu_forward = relu_forward;
    table->relu_backward = relu_backward;
    table->dropout_forward = dropout_forward;
    table->dropout_backward = dropout_backward;
}
