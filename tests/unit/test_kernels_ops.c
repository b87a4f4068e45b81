/* test_kernels_ops.c: every CPU op's forward against a plain loop and its
 * backward against central finite differences of L = sum(w * out) with
 * random w (so dout = w). */
#include "gt_test.h"
#include "lowp.h"
#include "ops.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long rng = 42;
static float frand(void) /* uniform in [-1, 1) */
{
    rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
    return (float)((rng * 2685821657736338717ULL) >> 40) / (float)(1 << 23) - 1.0f;
}
static float *rand_buf(size_t n, float scale)
{
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = frand() * scale;
    return p;
}
static float *zeros(size_t n) { return calloc(n, sizeof(float)); }

/* The op under test as L(params) = sum(w * out); ctx carries the buffers. */
typedef double (*loss_fn)(void *ctx);

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

/* Compares grad with finite differences on up to 64 entries of x; returns the
 * worst error relative to the largest gradient. */
static double fd_check(loss_fn f, void *ctx, float *x, const float *grad, size_t n, float eps)
{
    double gmax = 1e-6, worst = 0;
    for (size_t i = 0; i < n; i++)
        gmax = fmax(gmax, fabs(grad[i]));
    size_t step = n > 64 ? n / 64 : 1;
    for (size_t i = 0; i < n; i += step) {
        float keep = x[i];
        x[i] = keep + eps;
        double lp = f(ctx);
        x[i] = keep - eps;
        double lm = f(ctx);
        x[i] = keep;
        double num = (lp - lm) / (2.0 * eps);
        worst = fmax(worst, fabs(num - grad[i]) / gmax);
    }
    return worst;
}

/* ---- layernorm ---- */
struct ln_ctx { float *out, *mean, *rstd, *inp, *w, *b, *dout; int N, C; };
static double ln_loss(void *p)
{
    struct ln_ctx *c = p;
    op_layernorm_forward_cpu(c->out, c->mean, c->rstd, c->inp, c->w, c->b, c->N, c->C);
    return dot(c->out, c->dout, (size_t)c->N * c->C);
}
static void test_kernels__layernorm(void)
{
    int N = 6, C = 32;
    struct ln_ctx c = {zeros(N * C), zeros(N), zeros(N), rand_buf(N * C, 2), rand_buf(C, 1),
                       rand_buf(C, 1), rand_buf(N * C, 1), N, C};
    ln_loss(&c);
    for (int n = 0; n < N; n++) { /* normalized rows: (out - b) / w has mean 0, variance 1 */
        double m = 0, v = 0;
        for (int i = 0; i < C; i++)
            m += (c.out[n * C + i] - c.b[i]) / c.w[i];
        m /= C;
        for (int i = 0; i < C; i++) {
            double z = (c.out[n * C + i] - c.b[i]) / c.w[i] - m;
            v += z * z;
        }
        CU_ASSERT(fabs(m) < 1e-4);
        CU_ASSERT(fabs(v / C - 1.0) < 1e-2);
    }
    float *dinp = zeros(N * C), *dw = zeros(C), *db = zeros(C);
    op_layernorm_backward_cpu(dinp, dw, db, c.dout, c.inp, c.w, c.mean, c.rstd, N, C, 1);
    CU_ASSERT(fd_check(ln_loss, &c, c.inp, dinp, N * C, 1e-2f) < 1e-2);
    CU_ASSERT(fd_check(ln_loss, &c, c.w, dw, C, 1e-2f) < 1e-2);
    CU_ASSERT(fd_check(ln_loss, &c, c.b, db, C, 1e-2f) < 1e-2);
    free(c.out); free(c.mean); free(c.rstd); free(c.inp); free(c.w); free(c.b); free(c.dout);
    free(dinp); free(dw); free(db);
}

/* ---- matmul ---- */
struct mm_ctx { float *out, *inp, *w, *b, *dout; int N, C, OC; };
static double mm_loss(void *p)
{
    struct mm_ctx *c = p;
    op_matmul_forward_cpu(c->out, c->inp, c->w, c->b, c->N, c->C, c->OC);
    return dot(c->out, c->dout, (size_t)c->N * c->OC);
}
static void test_kernels__matmul(void)
{
    int N = 7, C = 13, OC = 9;
    struct mm_ctx c = {zeros(N * OC), rand_buf(N * C, 1), rand_buf(OC * C, 1), rand_buf(OC, 1),
                       rand_buf(N * OC, 1), N, C, OC};
    mm_loss(&c);
    double worst = 0;
    for (int n = 0; n < N; n++)
        for (int o = 0; o < OC; o++) {
            double s = c.b[o];
            for (int i = 0; i < C; i++)
                s += (double)c.inp[n * C + i] * c.w[o * C + i];
            worst = fmax(worst, fabs(s - c.out[n * OC + o]));
        }
    CU_ASSERT(worst < 1e-4);
    float *dinp = zeros(N * C), *dw = zeros(OC * C), *db = zeros(OC);
    op_matmul_backward_cpu(dinp, dw, db, c.dout, c.inp, c.w, N, C, OC, 1);
    CU_ASSERT(fd_check(mm_loss, &c, c.inp, dinp, N * C, 1e-2f) < 1e-3);
    CU_ASSERT(fd_check(mm_loss, &c, c.w, dw, OC * C, 1e-2f) < 1e-3);
    CU_ASSERT(fd_check(mm_loss, &c, c.b, db, OC, 1e-2f) < 1e-3);
    /* backward accumulates: a second call doubles the gradients */
    float keep = dw[5];
    op_matmul_backward_cpu(NULL, dw, NULL, c.dout, c.inp, c.w, N, C, OC, 1);
    CU_ASSERT(fabsf(dw[5] - 2 * keep) < 1e-4f);
    free(c.out); free(c.inp); free(c.w); free(c.b); free(c.dout); free(dinp); free(dw); free(db);
}

/* Against plain loops in double. add_dparams 0: dW and dbias are written over
 * whatever they held. */
static double matmul_rows_error(int N, int C, int OC, int add_dparams)
{
    float *inp = rand_buf((size_t)N * C, 1), *w = rand_buf((size_t)OC * C, 1), *bias = rand_buf(OC, 1);
    float *dout = rand_buf((size_t)N * OC, 1), *out = zeros((size_t)N * OC);
    float *dinp = rand_buf((size_t)N * C, 1), *dw = rand_buf((size_t)OC * C, 1), *db = rand_buf(OC, 1);
    float *dinp0 = malloc((size_t)N * C * 4), *dw0 = malloc((size_t)OC * C * 4), *db0 = malloc(OC * 4);
    memcpy(dinp0, dinp, (size_t)N * C * 4);
    memcpy(dw0, dw, (size_t)OC * C * 4);
    memcpy(db0, db, OC * 4);
    op_matmul_forward_cpu(out, inp, w, bias, N, C, OC);
    op_matmul_backward_cpu(dinp, dw, db, dout, inp, w, N, C, OC, add_dparams);
    double worst = 0;
    for (int n = 0; n < N; n++)
        for (int o = 0; o < OC; o++) {
            double s = bias[o];
            for (int i = 0; i < C; i++)
                s += (double)inp[n * C + i] * w[o * C + i];
            worst = fmax(worst, fabs(s - out[n * OC + o]));
        }
    for (int n = 0; n < N; n++)
        for (int i = 0; i < C; i++) {
            double s = dinp0[n * C + i]; /* dinp always accumulates */
            for (int o = 0; o < OC; o++)
                s += (double)dout[n * OC + o] * w[o * C + i];
            worst = fmax(worst, fabs(s - dinp[n * C + i]));
        }
    for (int o = 0; o < OC; o++) {
        double sb = add_dparams ? db0[o] : 0;
        for (int n = 0; n < N; n++)
            sb += dout[n * OC + o];
        worst = fmax(worst, fabs(sb - db[o]));
        for (int i = 0; i < C; i++) {
            double s = add_dparams ? dw0[o * C + i] : 0;
            for (int n = 0; n < N; n++)
                s += (double)dout[n * OC + o] * inp[n * C + i];
            worst = fmax(worst, fabs(s - dw[o * C + i]));
        }
    }
    free(inp); free(w); free(bias); free(dout); free(out); free(dinp); free(dw); free(db);
    free(dinp0); free(dw0); free(db0);
    return worst;
}

/* Big enough that every thread of the team gets rows of out, dinp and dW.
 * The second shape takes gemm.c's path where the CPU has AVX-512 (C a
 * multiple of 32) through all its edges: rows left over after the 12-row
 * tiles, two chunks of K in both products (397 and 403 > 384), two blocks
 * of columns (416 > 384), and dW both written and accumulated. */
static void test_kernels__matmul_rows(void)
{
    CU_ASSERT(matmul_rows_error(150, 40, 70, 1) < 1e-3);
    CU_ASSERT(matmul_rows_error(403, 416, 397, 1) < 1e-2);
    CU_ASSERT(matmul_rows_error(403, 416, 397, 0) < 1e-2);
    CU_ASSERT(matmul_rows_error(37, 64, 29, 0) < 1e-3);
}

/* ---- attention ---- */
struct at_ctx { float *out, *att, *qkv, *dout; int B, T, C, NH; };
static double at_loss(void *p)
{
    struct at_ctx *c = p;
    op_attention_forward_cpu(c->out, c->att, c->qkv, c->B, c->T, c->C, c->NH);
    return dot(c->out, c->dout, (size_t)c->B * c->T * c->C);
}
static void test_kernels__attention(void)
{
    int B = 2, T = 5, C = 8, NH = 2;
    struct at_ctx c = {zeros(B * T * C), zeros(B * NH * T * T), rand_buf(B * T * 3 * C, 1),
                       rand_buf(B * T * C, 1), B, T, C, NH};
    at_loss(&c);
    /* causal: rows sum to one and nothing attends to the future */
    for (int r = 0; r < B * NH * T; r++) {
        int t = r % T;
        double s = 0;
        for (int t2 = 0; t2 < T; t2++) {
            s += c.att[r * T + t2];
            if (t2 > t)
                CU_ASSERT(c.att[r * T + t2] == 0.0f);
        }
        CU_ASSERT(fabs(s - 1) < 1e-5);
    }
    /* the first position sees only itself: out = its own v */
    for (int i = 0; i < C; i++)
        CU_ASSERT(fabsf(c.out[i] - c.qkv[2 * C + i]) < 1e-6f);
    float *dqkv = zeros(B * T * 3 * C), *scratch = zeros(B * NH * T * T);
    op_attention_backward_cpu(dqkv, scratch, c.dout, c.qkv, c.att, B, T, C, NH);
    CU_ASSERT(fd_check(at_loss, &c, c.qkv, dqkv, B * T * 3 * C, 1e-2f) < 1e-2);
    free(c.out); free(c.att); free(c.qkv); free(c.dout); free(dqkv); free(scratch);
}

/* Longer than one block of the GEMM path (64 query rows) and not a multiple
 * of it: forward and backward against plain loops in double. */
static void test_kernels__attention_blocks(void)
{
    int B = 2, T = 150, C = 24, NH = 3, hs = C / NH, C3 = 3 * C;
    float *qkv = rand_buf((size_t)B * T * C3, 1), *dout = rand_buf((size_t)B * T * C, 1);
    float *out = zeros((size_t)B * T * C), *att = zeros((size_t)B * NH * T * T);
    float *dqkv = zeros((size_t)B * T * C3), *scratch = zeros((size_t)B * NH * T * T);
    double *a = malloc(T * sizeof *a), *da = malloc(T * sizeof *da);
    double *ref = calloc((size_t)B * T * C3, sizeof *ref);
    op_attention_forward_cpu(out, att, qkv, B, T, C, NH);
    op_attention_backward_cpu(dqkv, scratch, dout, qkv, att, B, T, C, NH);
    double worst_out = 0, worst_att = 0, worst_d = 0, dmax = 0;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++)
            for (int t = 0; t < T; t++) {
                const float *q = qkv + ((size_t)b * T + t) * C3 + h * hs;
                double m = -1e300, sum = 0, dot = 0;
                for (int u = 0; u <= t; u++) {
                    const float *k = qkv + ((size_t)b * T + u) * C3 + C + h * hs;
                    a[u] = 0;
                    for (int i = 0; i < hs; i++)
                        a[u] += (double)q[i] * k[i] / sqrt(hs);
                    m = fmax(m, a[u]);
                }
                for (int u = 0; u <= t; u++)
                    sum += (a[u] = exp(a[u] - m));
                const float *d = dout + ((size_t)b * T + t) * C + h * hs;
                for (int u = 0; u <= t; u++) {
                    a[u] /= sum;
                    worst_att = fmax(worst_att, fabs(a[u] - att[(((size_t)b * NH + h) * T + t) * T + u]));
                    const float *v = qkv + ((size_t)b * T + u) * C3 + 2 * C + h * hs;
                    da[u] = 0;
                    for (int i = 0; i < hs; i++) {
                        da[u] += (double)d[i] * v[i];
                        ref[((size_t)b * T + u) * C3 + 2 * C + h * hs + i] += a[u] * d[i];
                    }
                    dot += a[u] * da[u];
                }
                for (int i = 0; i < hs; i++) {
                    double o = 0;
                    for (int u = 0; u <= t; u++)
                        o += a[u] * qkv[((size_t)b * T + u) * C3 + 2 * C + h * hs + i];
                    worst_out = fmax(worst_out, fabs(o - out[((size_t)b * T + t) * C + h * hs + i]));
                }
                for (int u = 0; u <= t; u++) {
                    double dpre = a[u] * (da[u] - dot) / sqrt(hs);
                    const float *k = qkv + ((size_t)b * T + u) * C3 + C + h * hs;
                    for (int i = 0; i < hs; i++) {
                        ref[((size_t)b * T + t) * C3 + h * hs + i] += dpre * k[i];
                        ref[((size_t)b * T + u) * C3 + C + h * hs + i] += dpre * q[i];
                    }
                }
            }
    for (size_t i = 0; i < (size_t)B * T * C3; i++) {
        dmax = fmax(dmax, fabs(ref[i]));
        worst_d = fmax(worst_d, fabs(ref[i] - dqkv[i]));
    }
    CU_ASSERT(worst_out < 1e-5);
    CU_ASSERT(worst_att < 1e-6);
    CU_ASSERT(worst_d < 1e-5 * fmax(dmax, 1));
    free(qkv); free(dout); free(out); free(att); free(dqkv); free(scratch); free(a); free(da); free(ref);
}

/* ---- gelu and residual ---- */
struct ge_ctx { float *out, *inp, *dout; size_t n; };
static double ge_loss(void *p)
{
    struct ge_ctx *c = p;
    op_gelu_forward_cpu(c->out, c->inp, c->n);
    return dot(c->out, c->dout, c->n);
}
static void test_kernels__gelu(void)
{
    size_t n = 100;
    struct ge_ctx c = {zeros(n), rand_buf(n, 4), rand_buf(n, 1), n};
    ge_loss(&c);
    for (size_t i = 0; i < n; i++) { /* the exact GELU, x * Phi(x), is within 1e-3 of the tanh form */
        double x = c.inp[i], exact = 0.5 * x * (1 + erf(x / sqrt(2.0)));
        CU_ASSERT(fabs(exact - c.out[i]) < 1e-3);
    }
    float *dinp = zeros(n);
    op_gelu_backward_cpu(dinp, c.inp, c.dout, n);
    CU_ASSERT(fd_check(ge_loss, &c, c.inp, dinp, n, 1e-2f) < 1e-2);
    /* the backward adds into dinp, as the backends' callers expect (the CUDA kernel does too) */
    float *twice = zeros(n);
    op_gelu_backward_cpu(twice, c.inp, c.dout, n);
    op_gelu_backward_cpu(twice, c.inp, c.dout, n);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT(twice[i] == 2 * dinp[i]);
    free(twice);
    free(c.out); free(c.inp); free(c.dout); free(dinp);
}

static void test_kernels__residual(void)
{
    size_t n = 33;
    float *a = rand_buf(n, 1), *b = rand_buf(n, 1), *out = zeros(n), *d = rand_buf(n, 1);
    float *da = zeros(n), *db = zeros(n);
    op_residual_forward_cpu(out, a, b, n);
    op_residual_backward_cpu(da, db, d, n);
    op_residual_backward_cpu(da, db, d, n);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT(out[i] == a[i] + b[i]);
        CU_ASSERT(da[i] == 2 * d[i] && db[i] == 2 * d[i]);
    }
    free(a); free(b); free(out); free(d); free(da); free(db);
}

/* ---- encoder ---- */
struct en_ctx { float *out, *wte, *wpe, *dout; int32_t *inp; int B, T, C; };
static double en_loss(void *p)
{
    struct en_ctx *c = p;
    op_encoder_forward_cpu(c->out, c->inp, c->wte, c->wpe, c->B, c->T, c->C);
    return dot(c->out, c->dout, (size_t)c->B * c->T * c->C);
}
static void test_kernels__encoder(void)
{
    int B = 2, T = 4, C = 6, V = 5;
    int32_t inp[8] = {1, 3, 3, 0, 4, 1, 1, 2}; /* repeated tokens: gradients must add */
    struct en_ctx c = {zeros(B * T * C), rand_buf(V * C, 1), rand_buf(T * C, 1), rand_buf(B * T * C, 1),
                       inp, B, T, C};
    en_loss(&c);
    CU_ASSERT(c.out[1 * C + 2] == c.wte[3 * C + 2] + c.wpe[1 * C + 2]);
    float *dwte = zeros(V * C), *dwpe = zeros(T * C);
    op_encoder_backward_cpu(dwte, dwpe, c.dout, inp, B, T, C, 1);
    CU_ASSERT(fd_check(en_loss, &c, c.wte, dwte, V * C, 1e-2f) < 1e-3);
    CU_ASSERT(fd_check(en_loss, &c, c.wpe, dwpe, T * C, 1e-2f) < 1e-3);
    free(c.out); free(c.wte); free(c.wpe); free(c.dout); free(dwte); free(dwpe);
}

/* ---- cross-entropy ---- */
struct ce_ctx { float *losses, *probs, *logits; int32_t *targets; int N, V, Vp; };
static double ce_loss(void *p)
{
    struct ce_ctx *c = p;
    op_crossentropy_forward_cpu(c->losses, c->probs, c->logits, c->targets, c->N, c->V, c->Vp);
    double s = 0;
    for (int n = 0; n < c->N; n++)
        s += c->losses[n];
    return s / c->N;
}
static void test_kernels__crossentropy(void)
{
    int N = 5, V = 10, Vp = 16;
    int32_t targets[5] = {0, 9, 3, 3, 7};
    float *logits = rand_buf(N * Vp, 3), *stale = rand_buf(N * Vp, 7);
    /* probs in a reused buffer, not zeroed: the padding must be written */
    struct ce_ctx c = {zeros(N), stale, logits, targets, N, V, Vp};
    double mean = ce_loss(&c);
    CU_ASSERT(mean > 0);
    for (int n = 0; n < N; n++) {
        CU_ASSERT(fabsf(c.losses[n] + logf(c.probs[n * Vp + targets[n]])) < 1e-5f);
        for (int i = V; i < Vp; i++)
            CU_ASSERT(c.probs[n * Vp + i] == 0.0f); /* padding takes no probability */
    }
    float *dlogits = zeros(N * Vp);
    op_crossentropy_backward_cpu(dlogits, c.probs, targets, 1.0f / N, N, V, Vp);
    CU_ASSERT(fd_check(ce_loss, &c, c.logits, dlogits, N * Vp, 1e-2f) < 1e-2);
    for (int n = 0; n < N; n++)
        CU_ASSERT(dlogits[n * Vp + V + 1] == 0.0f);
    /* uniform logits: loss is exactly ln(V) */
    memset(c.logits, 0, N * Vp * sizeof(float));
    CU_ASSERT(fabs(ce_loss(&c) - log(V)) < 1e-5);
    free(c.losses); free(c.probs); free(c.logits); free(dlogits);
}

/* ---- adamw ---- */
static void test_kernels__adamw(void)
{
    /* the first step of Adam moves every weight by lr * sign(g) (bias correction),
     * plus the decoupled decay lr * wd * p */
    float p[3] = {1.0f, -2.0f, 0.5f}, g[3] = {0.3f, -1e-3f, 0.0f}, m[3] = {0}, v[3] = {0};
    op_adamw_cpu(p, g, m, v, 3, 0.1f, 0.9f, 0.999f, 1e-8f, 0.01f, 1);
    CU_ASSERT(fabsf(p[0] - (1.0f - 0.1f - 0.1f * 0.01f * 1.0f)) < 1e-5f);
    CU_ASSERT(fabsf(p[1] - (-2.0f + 0.1f - 0.1f * 0.01f * -2.0f)) < 1e-4f);
    CU_ASSERT(fabsf(p[2] - (0.5f - 0.1f * 0.01f * 0.5f)) < 1e-6f);
    CU_ASSERT(fabsf(m[0] - 0.03f) < 1e-6f && fabsf(v[0] - 9e-5f) < 1e-8f /* 1 - 0.999f is not exact */);
}

/* torch.optim.SGD(momentum=0.9, weight_decay=0.1), two steps by hand: the
 * decay joins the gradient before the buffer, and the first step takes the
 * buffer from that gradient whatever the buffer held (a reused allocation). */
static void test_kernels__sgd(void)
{
    float p[2] = {1.0f, -2.0f}, g[2] = {0.5f, 0.25f}, buf[2] = {7.0f, -7.0f};
    op_sgd_cpu(p, g, buf, 2, 0.1f, 0.9f, 0.1f, 1);
    /* d = g + 0.1 p = (0.6, 0.05); buf = d; p -= 0.1 d */
    CU_ASSERT(fabsf(buf[0] - 0.6f) < 1e-6f && fabsf(buf[1] - 0.05f) < 1e-6f);
    CU_ASSERT(fabsf(p[0] - 0.94f) < 1e-6f && fabsf(p[1] - -2.005f) < 1e-6f);
    op_sgd_cpu(p, g, buf, 2, 0.1f, 0.9f, 0.1f, 0);
    /* d = (0.5 + 0.094, 0.25 - 0.2005); buf = 0.9 buf + d; p -= 0.1 buf */
    CU_ASSERT(fabsf(buf[0] - (0.54f + 0.594f)) < 1e-6f && fabsf(buf[1] - (0.045f + 0.0495f)) < 1e-6f);
    CU_ASSERT(fabsf(p[0] - (0.94f - 0.1134f)) < 1e-6f && fabsf(p[1] - (-2.005f - 0.00945f)) < 1e-6f);
}

/* Every element of a long buffer (vector lanes, span edges, the scalar tail)
 * gets the bits of the one-element formula, written out here, and the fused
 * multi-range AdamW, with ranges cut at odd places, the bits of AdamW per range. */
static void test_kernels__adamw_lanes(void)
{
    size_t n = 3 * 4096 + 7;
    float *g = rand_buf(n, 1e-2f), *p1 = rand_buf(n, 1), *m1 = rand_buf(n, 1e-3f), *v1 = zeros(n);
    for (size_t i = 0; i < n; i++)
        v1[i] = fabsf(frand()) * 1e-5f;
    float *p2 = malloc(n * 4), *m2 = malloc(n * 4), *v2 = malloc(n * 4);
    float *p3 = malloc(n * 4), *m3 = malloc(n * 4), *v3 = malloc(n * 4);
    memcpy(p2, p1, n * 4); memcpy(m2, m1, n * 4); memcpy(v2, v1, n * 4);
    memcpy(p3, p1, n * 4); memcpy(m3, m1, n * 4); memcpy(v3, v1, n * 4);
    float lr = 3e-3f, b1 = 0.9f, b2 = 0.95f, eps = 1e-8f, wd = 0.1f;
    int t = 7;
    op_adamw_cpu(p2, g, m2, v2, n, lr, b1, b2, eps, wd, t);
    float c1 = 1.0f - powf(b1, (float)t), c2 = 1.0f - powf(b2, (float)t);
    size_t n_same = 0;
    for (size_t i = 0; i < n; i++) {
        volatile float gi = g[i] * 1.0f; /* volatile: no FMA contraction in the reference either */
        volatile float mi = b1 * m1[i] + (1.0f - b1) * gi, vi = b2 * v1[i] + (1.0f - b2) * gi * gi;
        volatile float step = (mi / c1) / (sqrtf(vi / c2) + eps), pi = p1[i] - lr * (step + wd * p1[i]);
        n_same += memcmp((const float *)&pi, &p2[i], 4) == 0 && memcmp((const float *)&mi, &m2[i], 4) == 0 &&
                  memcmp((const float *)&vi, &v2[i], 4) == 0;
    }
    CU_ASSERT_EQUAL(n_same, n);
    size_t bounds[4] = {0, 4099, 4101, n};
    float decay[3] = {wd, 0.0f, wd};
    op_adamw_fused_cpu(p3, g, m3, v3, bounds, decay, 3, lr, b1, b2, eps, 1.0f, t);
    memcpy(p2, p1, n * 4); memcpy(m2, m1, n * 4); memcpy(v2, v1, n * 4);
    for (int r = 0; r < 3; r++) {
        size_t a = bounds[r], len = bounds[r + 1] - a;
        op_adamw_cpu(p2 + a, g + a, m2 + a, v2 + a, len, lr, b1, b2, eps, decay[r], t);
    }
    CU_ASSERT(memcmp(p2, p3, n * 4) == 0 && memcmp(m2, m3, n * 4) == 0 && memcmp(v2, v3, n * 4) == 0);
    free(g); free(p1); free(m1); free(v1); free(p2); free(m2); free(v2); free(p3); free(m3); free(v3);
}

/* GELU over a long buffer, the tails included (where tanh saturates to +-1
 * and x^3 overflows), against the tanh form in double; and the softmax rows
 * of the attention (exp without libm) summing to 1. */
static void test_kernels__gelu_range(void)
{
    size_t n = 2 * 4096 + 5;
    float *x = malloc(n * 4), *y = zeros(n);
    for (size_t i = 0; i < n; i++)
        x[i] = -12.0f + 24.0f * (float)i / (float)n;
    const float tails[] = {-1e30f, -100.0f, -0.0f, 0.0f, 100.0f, 1e30f};
    memcpy(x + n - 6, tails, sizeof tails);
    op_gelu_forward_cpu(y, x, n);
    double worst = 0;
    for (size_t i = 0; i < n - 6; i++) {
        double xi = x[i], ref = 0.5 * xi * (1 + tanh(0.7978845608028654 * (xi + 0.044715 * xi * xi * xi)));
        worst = fmax(worst, fabs(ref - y[i]));
    }
    CU_ASSERT(worst < 2e-6);
    CU_ASSERT(y[n - 6] == 0.0f && y[n - 5] == 0.0f && y[n - 4] == 0.0f && y[n - 3] == 0.0f);
    CU_ASSERT(y[n - 2] == 100.0f && y[n - 1] == 1e30f);
    free(x); free(y);
    int B = 1, T = 70, C = 8, NH = 2; /* rows of 1 to 70 keys, scores up to +-80 */
    float *qkv = rand_buf((size_t)B * T * 3 * C, 6), *out = zeros((size_t)B * T * C), *att = zeros((size_t)B * NH * T * T);
    op_attention_forward_cpu(out, att, qkv, B, T, C, NH);
    size_t n_rows_ok = 0;
    for (int r = 0; r < NH * T; r++) {
        double s = 0;
        for (int t2 = 0; t2 < T; t2++)
            s += att[(size_t)r * T + t2];
        n_rows_ok += fabs(s - 1.0) < 1e-5;
    }
    CU_ASSERT_EQUAL(n_rows_ok, (size_t)NH * T);
    free(qkv); free(out); free(att);
}

/* ---- casts, and the fusions against their unfused ops ---- */
static void test_kernels__cast(void)
{
    /* exact bit patterns: a tie rounds to even, overflow to inf, NaN stays NaN, subnormals */
    const float in[] = {1.0f, 1.00390625f /* 1 + 2^-8: bf16 tie, rounds down to 1 */,
                        1.01171875f /* 1 + 3*2^-8: tie, rounds up to 1 + 2^-6 */, -2.5f, 65504.0f, 65520.0f,
                        1e-7f, INFINITY, NAN, 0.0f};
    enum { N = sizeof in / sizeof *in };
    uint16_t bf[N], hf[N];
    float back[N];
    op_cast_cpu(bf, LOWP_BF16, in, LOWP_F32, N);
    op_cast_cpu(hf, LOWP_F16, in, LOWP_F32, N);
    CU_ASSERT_EQUAL(bf[0], 0x3f80);
    CU_ASSERT_EQUAL(bf[1], 0x3f80);
    CU_ASSERT_EQUAL(bf[2], 0x3f82);
    CU_ASSERT_EQUAL(bf[3], 0xc020);
    CU_ASSERT_EQUAL(bf[7], 0x7f80);
    CU_ASSERT((bf[8] & 0x7f80) == 0x7f80 && (bf[8] & 0x7f) != 0);
    CU_ASSERT_EQUAL(hf[0], 0x3c00);
    CU_ASSERT_EQUAL(hf[4], 0x7bff); /* fp16's largest */
    CU_ASSERT_EQUAL(hf[5], 0x7c00); /* 65520 rounds to infinity: what makes a loss scale overflow */
    CU_ASSERT_EQUAL(hf[6], 0x0002); /* 1e-7 is subnormal in fp16: 2 * 2^-24 */
    op_cast_cpu(back, LOWP_F32, hf, LOWP_F16, N);
    CU_ASSERT_EQUAL(back[4], 65504.0f);
    CU_ASSERT(isinf(back[5]) && isnan(back[8]));
    CU_ASSERT_EQUAL(back[6], ldexpf(2.0f, -24));
    /* a large buffer through every pair: bf16 -> f16 -> f32 equals rounding twice */
    size_t n = 100003;
    float *x = rand_buf(n, 100.0f), *y = malloc(n * sizeof *y);
    uint16_t *a = malloc(n * 2), *b = malloc(n * 2);
    op_cast_cpu(a, LOWP_BF16, x, LOWP_F32, n);
    op_cast_cpu(b, LOWP_F16, a, LOWP_BF16, n);
    op_cast_cpu(y, LOWP_F32, b, LOWP_F16, n);
    size_t n_ok = 0;
    for (size_t i = 0; i < n; i++)
        n_ok += y[i] == lowp_round(lowp_round(x[i], LOWP_BF16), LOWP_F16);
    CU_ASSERT_EQUAL(n_ok, n);
    /* a cast into its own format (fp32 AMP's operands) copies every byte */
    op_cast_cpu(y, LOWP_F32, x, LOWP_F32, n);
    CU_ASSERT_EQUAL(memcmp(y, x, n * sizeof *x), 0);
    free(x); free(y); free(a); free(b);
}

/* fp16 conversions against the compiler's own _Float16 (libgcc's software
 * rounding, independent of lowp.h): every fp16 value widened, and fp32
 * values across the whole range (every 257th bit pattern, both signs, and
 * the neighbourhood of each boundary) narrowed, through the cast op. NaNs
 * need only stay NaN. */
static void test_kernels__cast_f16_exhaustive(void)
{
#ifdef __FLT16_MAX__
    enum { NH = 65536 };
    uint16_t *h = malloc(NH * 2);
    float *f = malloc(NH * sizeof *f);
    for (uint32_t i = 0; i < NH; i++)
        h[i] = (uint16_t)i;
    op_cast_cpu(f, LOWP_F32, h, LOWP_F16, NH);
    size_t n_bad = 0;
    for (uint32_t i = 0; i < NH; i++) {
        _Float16 v;
        memcpy(&v, &h[i], 2);
        float want = (float)v;
        n_bad += isnan(want) ? !isnan(f[i]) : memcmp(&want, &f[i], 4) != 0;
    }
    CU_ASSERT_EQUAL(n_bad, 0);
    free(h); free(f);
    size_t n = (size_t)(UINT32_MAX / 257) + 1 + 2 * 6 * 4096;
    float *x = malloc(n * sizeof *x);
    uint16_t *y = malloc(n * 2);
    size_t k = 0;
    for (uint64_t u = 0; u <= UINT32_MAX; u += 257) {
        uint32_t b = (uint32_t)u;
        memcpy(&x[k++], &b, 4);
    }
    const uint32_t edges[] = {0x33000000u /* 2^-25 */, 0x38800000u /* 2^-14 */, 0x477fe000u /* 65504 */,
                              0x477ff000u /* 65520 */, 0x7f800000u /* inf */, 0x00000000u};
    for (int e = 0; e < 6; e++)
        for (int sgn = 0; sgn < 2; sgn++)
            for (int d = -2048; d < 2048; d++) {
                uint32_t b = (edges[e] + (uint32_t)d) ^ (sgn ? 0x80000000u : 0);
                memcpy(&x[k++], &b, 4);
            }
    op_cast_cpu(y, LOWP_F16, x, LOWP_F32, k);
    n_bad = 0;
    for (size_t i = 0; i < k; i++) {
        _Float16 want = (_Float16)x[i];
        uint16_t wb;
        memcpy(&wb, &want, 2);
        bool nan_ok = isnan(x[i]) && (y[i] & 0x7c00) == 0x7c00 && (y[i] & 0x3ff) != 0;
        uint32_t xb;
        memcpy(&xb, &x[i], 4);
        if (!(isnan(x[i]) ? nan_ok : wb == y[i]) && n_bad++ < 5)
            fprintf(stderr, "  f32 0x%08x: cast 0x%04x, _Float16 0x%04x\n", xb, y[i], wb);
    }
    CU_ASSERT_EQUAL(n_bad, 0);
    free(x); free(y);
#else
    fprintf(stderr, "  (no _Float16 in this compiler: the exhaustive check is left out)\n");
#endif
}

static void test_kernels__fusions(void)
{
    enum { N = 37, C = 48, OC = 96 };
    float *a = rand_buf(N * C, 1), *b = rand_buf(N * C, 1), *w = rand_buf(C, 1), *bias = rand_buf(C, 1);
    float *res1 = malloc(N * C * 4), *out1 = malloc(N * C * 4), *mean1 = malloc(N * 4), *rstd1 = malloc(N * 4);
    float *res2 = malloc(N * C * 4), *out2 = malloc(N * C * 4), *mean2 = malloc(N * 4), *rstd2 = malloc(N * 4);
    op_residual_forward_cpu(res1, a, b, N * C);
    op_layernorm_forward_cpu(out1, mean1, rstd1, res1, w, bias, N, C);
    op_residual_layernorm_forward_cpu(res2, out2, mean2, rstd2, a, b, w, bias, N, C);
    CU_ASSERT(memcmp(out1, out2, N * C * 4) == 0 && memcmp(res1, res2, N * C * 4) == 0);
    /* backward: unfused LayerNorm backward then residual backward, against the fused op */
    float *dout = rand_buf(N * C, 1), *dres0 = rand_buf(N * C, 1);
    float *da1 = calloc(N * C, 4), *db1 = calloc(N * C, 4), *dres1 = malloc(N * C * 4), *dw1 = malloc(C * 4),
          *dbi1 = malloc(C * 4);
    float *da2 = calloc(N * C, 4), *db2 = calloc(N * C, 4), *dres2 = malloc(N * C * 4), *dw2 = malloc(C * 4),
          *dbi2 = malloc(C * 4);
    memcpy(dres1, dres0, N * C * 4);
    memcpy(dres2, dres0, N * C * 4);
    op_layernorm_backward_cpu(dres1, dw1, dbi1, dout, res1, w, mean1, rstd1, N, C, 0);
    op_residual_backward_cpu(da1, db1, dres1, N * C);
    op_residual_layernorm_backward_cpu(da2, db2, dres2, dw2, dbi2, dout, res1, w, mean1, rstd1, N, C, 0);
    CU_ASSERT(memcmp(da1, da2, N * C * 4) == 0 && memcmp(db1, db2, N * C * 4) == 0);
    CU_ASSERT(memcmp(dw1, dw2, C * 4) == 0 && memcmp(dbi1, dbi2, C * 4) == 0);
    /* bias+GELU in the GEMM's epilogue against matmul then GELU */
    float *x = rand_buf(N * C, 1), *W = rand_buf(OC * C, 0.2f), *bb = rand_buf(OC, 0.1f);
    float *pre1 = malloc(N * OC * 4), *g1 = malloc(N * OC * 4), *pre2 = malloc(N * OC * 4), *g2 = malloc(N * OC * 4);
    op_matmul_forward_cpu(pre1, x, W, bb, N, C, OC);
    op_gelu_forward_cpu(g1, pre1, N * OC);
    op_matmul_bias_gelu_forward_cpu(pre2, g2, x, W, bb, N, C, OC, LOWP_F32);
    /* both start the GEMM from the bias, so the same bits */
    CU_ASSERT(memcmp(pre1, pre2, N * OC * 4) == 0 && memcmp(g1, g2, N * OC * 4) == 0);
    /* with bf16 storage the pre-activation is rounded before GELU reads it */
    op_matmul_bias_gelu_forward_cpu(pre2, g2, x, W, bb, N, C, OC, LOWP_BF16);
    CU_ASSERT_EQUAL(pre2[5], lowp_round(pre2[5], LOWP_BF16));
    op_gelu_forward_cpu(g1, pre2, N * OC);
    CU_ASSERT(memcmp(g1, g2, N * OC * 4) == 0);
    free(a); free(b); free(w); free(bias); free(res1); free(out1); free(mean1); free(rstd1);
    free(res2); free(out2); free(mean2); free(rstd2); free(dout); free(dres0);
    free(da1); free(db1); free(dres1); free(dw1); free(dbi1); free(da2); free(db2); free(dres2); free(dw2); free(dbi2);
    free(x); free(W); free(bb); free(pre1); free(g1); free(pre2); free(g2);
}

static const gt_test_case cases[] = {
    {"test_kernels__encoder", test_kernels__encoder},
    {"test_kernels__layernorm", test_kernels__layernorm},
    {"test_kernels__matmul", test_kernels__matmul},
    {"test_kernels__attention", test_kernels__attention},
    {"test_kernels__attention_blocks", test_kernels__attention_blocks},
    {"test_kernels__matmul_rows", test_kernels__matmul_rows},
    {"test_kernels__gelu", test_kernels__gelu},
    {"test_kernels__sgd", test_kernels__sgd},
    {"test_kernels__residual", test_kernels__residual},
    {"test_kernels__crossentropy", test_kernels__crossentropy},
    {"test_kernels__adamw", test_kernels__adamw},
    {"test_kernels__adamw_lanes", test_kernels__adamw_lanes},
    {"test_kernels__gelu_range", test_kernels__gelu_range},
    {"test_kernels__cast", test_kernels__cast},
    {"test_kernels__cast_f16_exhaustive", test_kernels__cast_f16_exhaustive},
    {"test_kernels__fusions", test_kernels__fusions},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"kernels", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
