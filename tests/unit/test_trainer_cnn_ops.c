/* test_trainer_cnn_ops.c: the CNN's CPU ops (kernels/cpu/conv.c,
 * conv_nhwc.c, batchnorm.c, pool.c): forwards against plain loops, and every
 * backward against central finite differences of L = sum(out * R) for a
 * random R. The channels-last (NHWC) ops against the NCHW ones on the same
 * values transposed: forwards, input gradients that accumulate, parameter
 * gradients written then added. */
#include "ops.h"
#include "gt_test.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t seed = 42;
static float frand(void)
{
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((seed >> 40) / (double)(1 << 24)) * 2.0f - 1.0f;
}
static float *rand_buf(size_t n)
{
    float *p = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        p[i] = frand();
    return p;
}
static double dot(const float *a, const float *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

/* A function of the parameters x whose output is dotted with R. */
typedef void (*forward_fn)(float *out, void *ctx);

/* Checks grad[i] against (L(x+h) - L(x-h)) / 2h for every i of x (n_check of them). */
static int check_fd(float *x, const float *grad, size_t n, float *out, const float *R, size_t n_out, forward_fn f,
                    void *ctx, float h, float tol)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        float keep = x[i];
        x[i] = keep + h;
        f(out, ctx);
        double lp = dot(out, R, n_out);
        x[i] = keep - h;
        f(out, ctx);
        double lm = dot(out, R, n_out);
        x[i] = keep;
        double num = (lp - lm) / (2.0 * h);
        if (fabs(num - grad[i]) > tol * (1.0 + fabs(num))) {
            if (bad < 5)
                fprintf(stderr, "  element %zu: analytic %g, finite differences %g\n", i, grad[i], num);
            bad++;
        }
    }
    return bad;
}

/* ---- conv2d ---- */

typedef struct conv_case {
    int B, C, H, W, OC, K, stride, pad, OH, OW;
    float *x, *w, *b, *ws;
} conv_case;

static void conv_fwd(float *out, void *ctx)
{
    conv_case *c = ctx;
    op_conv2d_forward_cpu(out, c->x, c->w, c->b, c->ws, c->B, c->C, c->H, c->W, c->OC, c->K, c->stride, c->pad);
}

static void conv_check(int B, int C, int H, int W, int OC, int K, int stride, int pad)
{
    conv_case c = {.B = B, .C = C, .H = H, .W = W, .OC = OC, .K = K, .stride = stride, .pad = pad,
                   .OH = (H + 2 * pad - K) / stride + 1, .OW = (W + 2 * pad - K) / stride + 1};
    size_t nx = (size_t)B * C * H * W, nw = (size_t)OC * C * K * K, ny = (size_t)B * OC * c.OH * c.OW;
    c.x = rand_buf(nx);
    c.w = rand_buf(nw);
    c.b = rand_buf(OC);
    c.ws = malloc(op_conv2d_workspace_cpu(C, OC, K, c.OH, c.OW) * sizeof(float));
    float *y = malloc(ny * sizeof(float)), *R = rand_buf(ny);
    conv_fwd(y, &c);
    /* the forward against the definition */
    int bad = 0;
    for (int b = 0; b < B; b++)
        for (int o = 0; o < OC; o++)
            for (int oh = 0; oh < c.OH; oh++)
                for (int ow = 0; ow < c.OW; ow++) {
                    double s = c.b[o];
                    for (int ci = 0; ci < C; ci++)
                        for (int i = 0; i < K; i++)
                            for (int j = 0; j < K; j++) {
                                int h = oh * stride - pad + i, w = ow * stride - pad + j;
                                if (h >= 0 && h < H && w >= 0 && w < W)
                                    s += (double)c.x[((size_t)(b * C + ci) * H + h) * W + w] *
                                         c.w[((size_t)(o * C + ci) * K + i) * K + j];
                            }
                    bad += fabs(s - y[((size_t)(b * OC + o) * c.OH + oh) * c.OW + ow]) > 1e-4 * (1 + fabs(s));
                }
    CU_ASSERT_EQUAL(bad, 0);
    /* dinp accumulates onto what it held; dweight written, then added */
    float *dx = calloc(nx, sizeof(float)), *dw = rand_buf(nw), *db = rand_buf(OC);
    for (size_t i = 0; i < nx; i++)
        dx[i] = 0.5f;
    op_conv2d_backward_cpu(dx, dw, db, R, c.x, c.w, c.ws, B, C, H, W, OC, K, stride, pad, 0);
    for (size_t i = 0; i < nx; i++)
        dx[i] -= 0.5f;
    CU_ASSERT_EQUAL(check_fd(c.x, dx, nx, y, R, ny, conv_fwd, &c, 1e-2f, 2e-3f), 0);
    CU_ASSERT_EQUAL(check_fd(c.w, dw, nw, y, R, ny, conv_fwd, &c, 1e-2f, 2e-3f), 0);
    CU_ASSERT_EQUAL(check_fd(c.b, db, OC, y, R, ny, conv_fwd, &c, 1e-2f, 2e-3f), 0);
    float *dw2 = malloc(nw * sizeof(float));
    memcpy(dw2, dw, nw * sizeof(float));
    op_conv2d_backward_cpu(NULL, dw2, NULL, R, c.x, c.w, c.ws, B, C, H, W, OC, K, stride, pad, 1);
    int twice = 1;
    for (size_t i = 0; i < nw; i++)
        twice &= fabsf(dw2[i] - 2 * dw[i]) <= 1e-4f * (1 + fabsf(dw[i]));
    CU_ASSERT(twice);
    /* the direct algorithm: the same values to rounding, forward and backward */
    float *y2 = malloc(ny * sizeof(float)), *dx2 = calloc(nx, sizeof(float)), *dw3 = malloc(nw * sizeof(float)),
          *db2 = malloc(OC * sizeof(float));
    for (size_t i = 0; i < nx; i++)
        dx[i] += 0.25f, dx2[i] = 0.25f; /* both accumulate */
    conv_fwd(y, &c); /* the finite differences left y at a perturbed point */
    op_conv2d_direct_forward_cpu(y2, c.x, c.w, c.b, B, C, H, W, OC, K, stride, pad);
    op_conv2d_direct_backward_cpu(dx2, dw3, db2, R, c.x, c.w, B, C, H, W, OC, K, stride, pad, 0);
    int same = 1;
    for (size_t i = 0; i < ny; i++)
        same &= fabsf(y2[i] - y[i]) <= 1e-4f * (1 + fabsf(y[i]));
    for (size_t i = 0; i < nx; i++)
        same &= fabsf(dx2[i] - dx[i]) <= 1e-4f * (1 + fabsf(dx[i]));
    for (size_t i = 0; i < nw; i++)
        same &= fabsf(dw3[i] - dw[i]) <= 1e-4f * (1 + fabsf(dw[i]));
    for (int i = 0; i < OC; i++)
        same &= fabsf(db2[i] - db[i]) <= 1e-4f * (1 + fabsf(db[i]));
    CU_ASSERT(same);
    free(y2); free(dx2); free(dw3); free(db2);
    free(c.x); free(c.w); free(c.b); free(c.ws); free(y); free(R); free(dx); free(dw); free(db); free(dw2);
}

static void test_trainer_cnn_ops__conv2d_3x3_pad1(void) { conv_check(3, 2, 6, 5, 4, 3, 1, 1); }
static void test_trainer_cnn_ops__conv2d_stride2(void) { conv_check(2, 3, 7, 7, 5, 3, 2, 1); }
static void test_trainer_cnn_ops__conv2d_1x1(void) { conv_check(2, 4, 5, 5, 3, 1, 1, 0); }
static void test_trainer_cnn_ops__conv2d_1x1_stride2(void) { conv_check(2, 4, 6, 6, 3, 1, 2, 0); }
static void test_trainer_cnn_ops__conv2d_5x5_valid(void) { conv_check(5, 1, 9, 8, 3, 5, 1, 0); }

/* ---- batchnorm ---- */

typedef struct bn_case {
    int B, C, HW;
    float *x, *w, *b, *mean, *rstd, *rm, *rv;
} bn_case;

static void bn_fwd(float *out, void *ctx)
{
    bn_case *c = ctx;
    op_batchnorm_forward_cpu(out, c->mean, c->rstd, c->rm, c->rv, c->x, c->w, c->b, c->B, c->C, c->HW, 1, 0.1f,
                             1e-5f, 0);
}

static void test_trainer_cnn_ops__batchnorm(void)
{
    bn_case c = {.B = 4, .C = 3, .HW = 5};
    size_t n = (size_t)c.B * c.C * c.HW;
    c.x = rand_buf(n);
    c.w = rand_buf(c.C);
    c.b = rand_buf(c.C);
    c.mean = calloc(c.C, 4); c.rstd = calloc(c.C, 4);
    c.rm = calloc(c.C, 4); c.rv = calloc(c.C, 4);
    for (int i = 0; i < c.C; i++)
        c.rv[i] = 1.0f;
    float *y = malloc(n * 4), *R = rand_buf(n);
    bn_fwd(y, &c);
    /* channel 1: mean 0, variance 1 before the affine; running averages moved by 0.1 */
    double s = 0, ss = 0;
    for (int b = 0; b < c.B; b++)
        for (int i = 0; i < c.HW; i++) {
            double v = (y[((size_t)b * c.C + 1) * c.HW + i] - c.b[1]) / c.w[1];
            s += v;
            ss += v * v;
        }
    CU_ASSERT(fabs(s / 20) < 1e-5);
    CU_ASSERT(fabs(ss / 20 - 1) < 1e-3);
    double mu = 0, var = 0;
    for (int b = 0; b < c.B; b++)
        for (int i = 0; i < c.HW; i++)
            mu += c.x[((size_t)b * c.C + 1) * c.HW + i] / 20.0;
    for (int b = 0; b < c.B; b++)
        for (int i = 0; i < c.HW; i++)
            var += pow(c.x[((size_t)b * c.C + 1) * c.HW + i] - mu, 2) / 19.0;
    CU_ASSERT(fabs(c.rm[1] - 0.1 * mu) < 1e-5);
    CU_ASSERT(fabs(c.rv[1] - (0.9 + 0.1 * var)) < 1e-5);
    float *dx = calloc(n, 4), *dw = calloc(c.C, 4), *db = calloc(c.C, 4);
    op_batchnorm_backward_cpu(dx, dw, db, R, c.x, c.w, c.mean, c.rstd, c.B, c.C, c.HW, 0, NULL);
    CU_ASSERT_EQUAL(check_fd(c.x, dx, n, y, R, n, bn_fwd, &c, 1e-2f, 5e-3f), 0);
    CU_ASSERT_EQUAL(check_fd(c.w, dw, c.C, y, R, n, bn_fwd, &c, 1e-2f, 5e-3f), 0);
    CU_ASSERT_EQUAL(check_fd(c.b, db, c.C, y, R, n, bn_fwd, &c, 1e-2f, 5e-3f), 0);
    /* evaluation: the running statistics, not the batch's */
    float rm[3] = {0.5f, -1.0f, 2.0f}, rv[3] = {4.0f, 0.25f, 1.0f};
    op_batchnorm_forward_cpu(y, NULL, NULL, rm, rv, c.x, c.w, c.b, c.B, c.C, c.HW, 0, 0.1f, 0.0f, 0);
    CU_ASSERT(fabsf(y[c.HW + 2] - ((c.x[c.HW + 2] + 1.0f) / 0.5f * c.w[1] + c.b[1])) < 1e-5f);
    CU_ASSERT_EQUAL(rm[1], -1.0f);
    free(c.x); free(c.w); free(c.b); free(c.mean); free(c.rstd); free(c.rm); free(c.rv);
    free(y); free(R); free(dx); free(dw); free(db);
}

/* ---- channels-last against NCHW ---- */

/* (B,C,HW) -> (B,HW,C), a new buffer */
static float *to_nhwc(const float *x, int B, int C, int HW)
{
    float *y = malloc((size_t)B * C * HW * sizeof(float));
    op_layout_transpose_cpu(y, x, B, C, HW, 1, 0);
    return y;
}

/* a (NHWC) equals b (NCHW) to rounding */
static int same_nhwc(const float *a, const float *b, int B, int C, int HW, float tol)
{
    int bad = 0;
    for (int n = 0; n < B; n++)
        for (int c = 0; c < C; c++)
            for (int i = 0; i < HW; i++) {
                float u = a[((size_t)n * HW + i) * C + c], v = b[((size_t)n * C + c) * HW + i];
                if (!(fabsf(u - v) <= tol * (1 + fabsf(v)))) {
                    if (bad < 5)
                        fprintf(stderr, "  (%d,%d,%d): nhwc %g, nchw %g\n", n, c, i, u, v);
                    bad++;
                }
            }
    return bad;
}

static int same(const float *a, const float *b, size_t n, float tol)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += !(fabsf(a[i] - b[i]) <= tol * (1 + fabsf(b[i])));
    return bad;
}

static void conv_nhwc_check(int B, int C, int H, int W, int OC, int K, int stride, int pad, int with_dx)
{
    int OH = (H + 2 * pad - K) / stride + 1, OW = (W + 2 * pad - K) / stride + 1;
    size_t nx = (size_t)B * C * H * W, nw = (size_t)OC * C * K * K, ny = (size_t)B * OC * OH * OW;
    float *x = rand_buf(nx), *w = rand_buf(nw), *bias = rand_buf(OC), *dy = rand_buf(ny);
    float *ws = malloc(op_conv2d_workspace_cpu(C, OC, K, OH, OW) * sizeof(float));
    float *wsn = malloc(op_conv2d_nhwc_workspace_cpu(C, OC, K, H, W, stride, pad) * sizeof(float));
    float *xn = to_nhwc(x, B, C, H * W), *dyn = to_nhwc(dy, B, OC, OH * OW);
    float *y = malloc(ny * 4), *yn = malloc(ny * 4);
    op_conv2d_forward_cpu(y, x, w, bias, ws, B, C, H, W, OC, K, stride, pad);
    op_conv2d_nhwc_forward_cpu(yn, xn, w, bias, wsn, B, C, H, W, OC, K, stride, pad, 0);
    CU_ASSERT_EQUAL(same_nhwc(yn, y, B, OC, OH * OW, 1e-4f), 0);
    op_conv2d_nhwc_forward_cpu(yn, xn, w, NULL, wsn, B, C, H, W, OC, K, stride, pad, 0);
    op_conv2d_forward_cpu(y, x, w, NULL, ws, B, C, H, W, OC, K, stride, pad);
    CU_ASSERT_EQUAL(same_nhwc(yn, y, B, OC, OH * OW, 1e-4f), 0);
    /* with the ReLU fused: the same, clamped at 0 */
    op_conv2d_nhwc_forward_cpu(yn, xn, w, bias, wsn, B, C, H, W, OC, K, stride, pad, 1);
    op_conv2d_forward_cpu(y, x, w, bias, ws, B, C, H, W, OC, K, stride, pad);
    op_relu_forward_cpu(y, y, ny);
    CU_ASSERT_EQUAL(same_nhwc(yn, y, B, OC, OH * OW, 1e-4f), 0);
    /* dx accumulates onto 0.5; dw and db written, then added */
    float *dx = malloc(nx * 4), *dxn = malloc(nx * 4), *dw = rand_buf(nw), *dwn = rand_buf(nw), *db = rand_buf(OC),
          *dbn = rand_buf(OC);
    for (size_t i = 0; i < nx; i++)
        dx[i] = dxn[i] = 0.5f;
    op_conv2d_backward_cpu(with_dx ? dx : NULL, dw, db, dy, x, w, ws, B, C, H, W, OC, K, stride, pad, 0);
    op_conv2d_nhwc_backward_cpu(with_dx ? dxn : NULL, dwn, dbn, dyn, xn, w, wsn, B, C, H, W, OC, K, stride, pad, 0);
    CU_ASSERT_EQUAL(same_nhwc(dxn, dx, B, C, H * W, 1e-4f), 0);
    CU_ASSERT_EQUAL(same(dwn, dw, nw, 1e-4f), 0);
    CU_ASSERT_EQUAL(same(dbn, db, OC, 1e-4f), 0);
    op_conv2d_nhwc_backward_cpu(NULL, dwn, NULL, dyn, xn, w, wsn, B, C, H, W, OC, K, stride, pad, 1);
    for (size_t i = 0; i < nw; i++)
        dw[i] *= 2;
    CU_ASSERT_EQUAL(same(dwn, dw, nw, 1e-4f), 0);
    free(x); free(w); free(bias); free(dy); free(ws); free(wsn); free(xn); free(dyn); free(y); free(yn);
    free(dx); free(dxn); free(dw); free(dwn); free(db); free(dbn);
}

/* the plain loops (channels not a multiple of 16) */
static void test_trainer_cnn_ops__conv2d_nhwc_small(void)
{
    conv_nhwc_check(3, 2, 6, 5, 4, 3, 1, 1, 1);
    conv_nhwc_check(2, 3, 7, 7, 5, 3, 2, 1, 1);
    conv_nhwc_check(2, 4, 6, 6, 3, 1, 2, 0, 1);
    conv_nhwc_check(5, 1, 9, 8, 3, 5, 1, 0, 1);
}
/* the vector kernels: 16 and 32 channels, every block width and stride of the presets */
static void test_trainer_cnn_ops__conv2d_nhwc_vector(void)
{
    conv_nhwc_check(2, 1, 13, 13, 16, 3, 1, 1, 0);   /* the stem: no input gradient */
    conv_nhwc_check(3, 16, 15, 15, 16, 3, 1, 1, 1);  /* rows of 15: blocks of 8, 4, 2, 1 */
    conv_nhwc_check(2, 16, 14, 14, 32, 3, 2, 1, 1);  /* stride 2: the scattered input gradient */
    conv_nhwc_check(2, 32, 7, 7, 64, 3, 1, 1, 1);    /* blocks of 7; two 32-channel blocks */
    conv_nhwc_check(2, 16, 14, 14, 32, 1, 2, 0, 1);  /* 1x1 stride 2 */
    conv_nhwc_check(2, 32, 10, 9, 32, 3, 1, 0, 1);   /* no padding */
    conv_nhwc_check(2, 16, 9, 9, 48, 5, 1, 2, 1);    /* 5x5; 48 = 16 + 32 output channels */
    conv_nhwc_check(2, 48, 6, 6, 16, 3, 1, 1, 1);    /* 48 input channels */
}

/* BatchNorm in NHWC against NCHW, each alone and fused with the ReLU after
 * it (relu): the fused op against BatchNorm then ReLU. */
static void batchnorm_nhwc_check(int relu, const int C)
{
    enum { B = 3, HW = 7 };
    size_t n = (size_t)B * C * HW;
    float *x = rand_buf(n), *w = rand_buf(C), *b = rand_buf(C), *dy = rand_buf(n);
    float mean[C], rstd[C], meann[C], rstdn[C], rm[C], rv[C], rmn[C], rvn[C];
    for (int c = 0; c < C; c++)
        rm[c] = rmn[c] = 0.5f, rv[c] = rvn[c] = 2.0f;
    float *xn = to_nhwc(x, B, C, HW), *dyn = to_nhwc(dy, B, C, HW), *y = malloc(n * 4), *yn = malloc(n * 4);
    float *dx = malloc(n * 4), *dxn = malloc(n * 4), dw[C], db[C], dwn[C], dbn[C];
    for (size_t i = 0; i < n; i++)
        dx[i] = dxn[i] = 0.25f;
    op_batchnorm_forward_cpu(y, mean, rstd, rm, rv, x, w, b, B, C, HW, 1, 0.1f, 1e-5f, 0);
    op_batchnorm_nhwc_forward_cpu(yn, meann, rstdn, rmn, rvn, xn, w, b, B * HW, C, 1, 0.1f, 1e-5f, relu);
    if (relu) { /* the reference: ReLU after, and its backward into the BN's output gradient */
        float *r = malloc(n * 4), *dr = calloc(n, 4);
        op_relu_forward_cpu(r, y, n);
        op_relu_backward_cpu(dr, r, dy, n);
        memcpy(y, r, n * 4);
        op_batchnorm_backward_cpu(dx, dw, db, dr, x, w, mean, rstd, B, C, HW, 0, NULL);
        free(r); free(dr);
    } else {
        op_batchnorm_backward_cpu(dx, dw, db, dy, x, w, mean, rstd, B, C, HW, 0, NULL);
    }
    CU_ASSERT_EQUAL(same_nhwc(yn, y, B, C, HW, 1e-4f), 0);
    CU_ASSERT_EQUAL(same(meann, mean, C, 1e-5f) + same(rstdn, rstd, C, 1e-4f), 0);
    CU_ASSERT_EQUAL(same(rmn, rm, C, 1e-5f) + same(rvn, rv, C, 1e-5f), 0);
    op_batchnorm_nhwc_backward_cpu(dxn, dwn, dbn, dyn, xn, w, meann, rstdn, B * HW, C, 0, relu ? b : NULL);
    CU_ASSERT_EQUAL(same_nhwc(dxn, dx, B, C, HW, 1e-4f), 0);
    CU_ASSERT_EQUAL(same(dwn, dw, C, 1e-4f) + same(dbn, db, C, 1e-4f), 0);
    if (relu) { /* the NCHW fused op against the same reference */
        float *y2 = malloc(n * 4), *dx2 = malloc(n * 4), dw2[C], db2[C], m2[C], r2[C], rm2[C], rv2[C];
        for (int c = 0; c < C; c++)
            rm2[c] = 0.5f, rv2[c] = 2.0f;
        for (size_t i = 0; i < n; i++)
            dx2[i] = 0.25f;
        op_batchnorm_forward_cpu(y2, m2, r2, rm2, rv2, x, w, b, B, C, HW, 1, 0.1f, 1e-5f, 1);
        op_batchnorm_backward_cpu(dx2, dw2, db2, dy, x, w, m2, r2, B, C, HW, 0, b);
        CU_ASSERT_EQUAL(same(y2, y, n, 1e-6f) + same(dx2, dx, n, 1e-5f), 0);
        CU_ASSERT_EQUAL(same(dw2, dw, C, 1e-5f) + same(db2, db, C, 1e-5f), 0);
        free(y2); free(dx2);
    } else { /* evaluation: the running statistics */
        op_batchnorm_forward_cpu(y, NULL, NULL, rm, rv, x, w, b, B, C, HW, 0, 0.1f, 1e-5f, 0);
        op_batchnorm_nhwc_forward_cpu(yn, NULL, NULL, rm, rv, xn, w, b, B * HW, C, 0, 0.1f, 1e-5f, 0);
        CU_ASSERT_EQUAL(same_nhwc(yn, y, B, C, HW, 1e-5f), 0);
    }
    free(x); free(w); free(b); free(dy); free(xn); free(dyn); free(y); free(yn); free(dx); free(dxn);
}
/* 20 channels: the plain loops; 32: the vector ones */
static void test_trainer_cnn_ops__batchnorm_nhwc(void)
{
    batchnorm_nhwc_check(0, 20);
    batchnorm_nhwc_check(0, 32);
}
static void test_trainer_cnn_ops__batchnorm_relu(void)
{
    batchnorm_nhwc_check(1, 20);
    batchnorm_nhwc_check(1, 32);
}

static void test_trainer_cnn_ops__residual_relu(void)
{
    enum { N = 40 };
    float *a = rand_buf(N), *b = rand_buf(N), *dy = rand_buf(N), s[N], r[N], y[N], da[N], db[N], da2[N], db2[N],
          ds[N] = {0};
    for (int i = 0; i < N; i++)
        da[i] = db[i] = da2[i] = db2[i] = 0.5f;
    op_residual_forward_cpu(s, a, b, N);
    op_relu_forward_cpu(r, s, N);
    op_relu_backward_cpu(ds, r, dy, N);
    op_residual_backward_cpu(da, db, ds, N);
    op_residual_relu_forward_cpu(y, a, b, N);
    op_residual_relu_backward_cpu(da2, db2, y, dy, N);
    CU_ASSERT_EQUAL(memcmp(y, r, sizeof y), 0);
    CU_ASSERT_EQUAL(memcmp(da2, da, sizeof da) + memcmp(db2, db, sizeof db), 0);
    free(a); free(b); free(dy);
}

static void pool_nhwc_check(int max, int K, int stride)
{
    enum { B = 2, C = 5, H = 7, W = 6 };
    int OH = (H - K) / stride + 1, OW = (W - K) / stride + 1;
    size_t n = (size_t)B * C * H * W, ny = (size_t)B * C * OH * OW;
    float *x = rand_buf(n), *dy = rand_buf(ny), *xn = to_nhwc(x, B, C, H * W), *dyn = to_nhwc(dy, B, C, OH * OW);
    float *y = malloc(ny * 4), *yn = malloc(ny * 4), *dx = calloc(n, 4), *dxn = calloc(n, 4);
    int32_t *idx = malloc(ny * 4), *idxn = malloc(ny * 4);
    if (max) {
        op_maxpool_forward_cpu(y, idx, x, B, C, H, W, K, stride);
        op_maxpool_nhwc_forward_cpu(yn, idxn, xn, B, C, H, W, K, stride);
        op_maxpool_backward_cpu(dx, dy, idx, B, C, H, W, K, stride);
        op_maxpool_nhwc_backward_cpu(dxn, dyn, idxn, B, C, H, W, K, stride);
    } else {
        op_avgpool_forward_cpu(y, x, B, C, H, W, K, stride);
        op_avgpool_nhwc_forward_cpu(yn, xn, B, C, H, W, K, stride);
        op_avgpool_backward_cpu(dx, dy, B, C, H, W, K, stride);
        op_avgpool_nhwc_backward_cpu(dxn, dyn, B, C, H, W, K, stride);
    }
    CU_ASSERT_EQUAL(same_nhwc(yn, y, B, C, OH * OW, 1e-6f), 0);
    CU_ASSERT_EQUAL(same_nhwc(dxn, dx, B, C, H * W, 1e-6f), 0);
    free(x); free(dy); free(xn); free(dyn); free(y); free(yn); free(dx); free(dxn); free(idx); free(idxn);
}

static void test_trainer_cnn_ops__pool_nhwc(void)
{
    pool_nhwc_check(1, 2, 2);
    pool_nhwc_check(1, 3, 2);
    pool_nhwc_check(0, 2, 2);
    pool_nhwc_check(0, 6, 1);
}

/* Windows with equal maxima, as after a ReLU (its zeros): the index is the
 * first of them in the window, as PyTorch's max_pool2d gives, and the
 * backward sends the gradient there alone. */
static void test_trainer_cnn_ops__maxpool_ties_take_the_first(void)
{
    float x[8] = {0, 0, 0, 0, /* the second channel: */ 0, 3, 1, 3}, y[2], dy[2] = {1.5f, 2.5f}, dx[8] = {0};
    int32_t idx[2];
    op_maxpool_forward_cpu(y, idx, x, 1, 2, 2, 2, 2, 2);
    CU_ASSERT_EQUAL(idx[0], 0);
    CU_ASSERT_EQUAL(idx[1], 1);
    CU_ASSERT_EQUAL(y[1], 3.0f);
    op_maxpool_backward_cpu(dx, dy, idx, 1, 2, 2, 2, 2, 2);
    CU_ASSERT_EQUAL(dx[0], 1.5f);
    CU_ASSERT_EQUAL(dx[1] + dx[2] + dx[3], 0.0f);
    CU_ASSERT_EQUAL(dx[5], 2.5f);
    CU_ASSERT_EQUAL(dx[7], 0.0f);
}

static void test_trainer_cnn_ops__layout_transpose(void)
{
    enum { B = 2, C = 3, HW = 5 };
    float *x = rand_buf(B * C * HW), *xn = to_nhwc(x, B, C, HW), back[B * C * HW];
    CU_ASSERT_EQUAL(xn[(1 * HW + 4) * C + 2], x[(1 * C + 2) * HW + 4]);
    op_layout_transpose_cpu(back, xn, B, C, HW, 0, 0);
    CU_ASSERT_EQUAL(memcmp(back, x, sizeof back), 0);
    op_layout_transpose_cpu(back, xn, B, C, HW, 0, 1); /* added: twice */
    CU_ASSERT_EQUAL(back[7], 2 * x[7]);
    free(x); free(xn);
}

/* ---- pooling, ReLU, dropout ---- */

typedef struct pool_case {
    int B, C, H, W, K, stride, max;
    float *x;
    int32_t *idx;
} pool_case;

static void pool_fwd(float *out, void *ctx)
{
    pool_case *c = ctx;
    if (c->max)
        op_maxpool_forward_cpu(out, c->idx, c->x, c->B, c->C, c->H, c->W, c->K, c->stride);
    else
        op_avgpool_forward_cpu(out, c->x, c->B, c->C, c->H, c->W, c->K, c->stride);
}

static void pool_check(int max, int K, int stride)
{
    pool_case c = {.B = 2, .C = 3, .H = 7, .W = 6, .K = K, .stride = stride, .max = max};
    int OH = (c.H - K) / stride + 1, OW = (c.W - K) / stride + 1;
    size_t n = (size_t)c.B * c.C * c.H * c.W, ny = (size_t)c.B * c.C * OH * OW;
    c.x = rand_buf(n);
    c.idx = malloc(ny * sizeof(int32_t));
    float *y = malloc(ny * 4), *R = rand_buf(ny), *dx = calloc(n, 4);
    pool_fwd(y, &c);
    int ow = OW > 1 ? 1 : 0;
    float want = max ? -INFINITY : 0.0f; /* window (0,1,1,ow) */
    for (int i = 0; i < K; i++)
        for (int j = 0; j < K; j++) {
            float v = c.x[((size_t)(0 * c.C + 1) * c.H + stride + i) * c.W + ow * stride + j];
            want = max ? fmaxf(want, v) : want + v / (K * K);
        }
    CU_ASSERT(fabsf(y[(size_t)1 * OH * OW + OW + ow] - want) < 1e-6f);
    if (max)
        op_maxpool_backward_cpu(dx, R, c.idx, c.B, c.C, c.H, c.W, K, stride);
    else
        op_avgpool_backward_cpu(dx, R, c.B, c.C, c.H, c.W, K, stride);
    CU_ASSERT_EQUAL(check_fd(c.x, dx, n, y, R, ny, pool_fwd, &c, 1e-3f, 1e-2f), 0);
    free(c.x); free(c.idx); free(y); free(R); free(dx);
}

static void test_trainer_cnn_ops__maxpool(void) { pool_check(1, 2, 2); }
static void test_trainer_cnn_ops__maxpool_overlapping(void) { pool_check(1, 3, 2); }
static void test_trainer_cnn_ops__avgpool(void) { pool_check(0, 2, 2); }
static void test_trainer_cnn_ops__avgpool_global(void) { pool_check(0, 6, 1); }

static void test_trainer_cnn_ops__relu_dropout(void)
{
    float x[6] = {-1, 2, -3, 4, 0.5f, -0.25f}, y[6], mask[6] = {2, 0, 2, 2, 0, 2}, dy[6] = {1, 1, 1, 1, 1, 1};
    float dx[6] = {0};
    op_relu_forward_cpu(y, x, 6);
    CU_ASSERT_EQUAL(y[0], 0.0f);
    CU_ASSERT_EQUAL(y[1], 2.0f);
    op_relu_backward_cpu(dx, y, dy, 6);
    CU_ASSERT_EQUAL(dx[0], 0.0f);
    CU_ASSERT_EQUAL(dx[3], 1.0f);
    op_dropout_forward_cpu(y, x, mask, 6);
    CU_ASSERT_EQUAL(y[1], 0.0f);
    CU_ASSERT_EQUAL(y[3], 8.0f);
    op_dropout_backward_cpu(dx, mask, dy, 6);
    CU_ASSERT_EQUAL(dx[3], 3.0f); /* added to ReLU's 1 */
    CU_ASSERT_EQUAL(dx[4], 1.0f);
}

static const gt_test_case cases[] = {
    {"conv2d_3x3_pad1", test_trainer_cnn_ops__conv2d_3x3_pad1},
    {"conv2d_stride2", test_trainer_cnn_ops__conv2d_stride2},
    {"conv2d_1x1", test_trainer_cnn_ops__conv2d_1x1},
    {"conv2d_1x1_stride2", test_trainer_cnn_ops__conv2d_1x1_stride2},
    {"conv2d_5x5_valid", test_trainer_cnn_ops__conv2d_5x5_valid},
    {"batchnorm", test_trainer_cnn_ops__batchnorm},
    {"maxpool", test_trainer_cnn_ops__maxpool},
    {"maxpool_overlapping", test_trainer_cnn_ops__maxpool_overlapping},
    {"avgpool", test_trainer_cnn_ops__avgpool},
    {"avgpool_global", test_trainer_cnn_ops__avgpool_global},
    {"relu_dropout", test_trainer_cnn_ops__relu_dropout},
    {"conv2d_nhwc_small", test_trainer_cnn_ops__conv2d_nhwc_small},
    {"conv2d_nhwc_vector", test_trainer_cnn_ops__conv2d_nhwc_vector},
    {"batchnorm_nhwc", test_trainer_cnn_ops__batchnorm_nhwc},
    {"batchnorm_relu", test_trainer_cnn_ops__batchnorm_relu},
    {"residual_relu", test_trainer_cnn_ops__residual_relu},
    {"pool_nhwc", test_trainer_cnn_ops__pool_nhwc},
    {"maxpool_ties_take_the_first", test_trainer_cnn_ops__maxpool_ties_take_the_first},
    {"layout_transpose", test_trainer_cnn_ops__layout_transpose},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"trainer_cnn_ops", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
