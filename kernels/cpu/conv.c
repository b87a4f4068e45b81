/* conv.c: 2-D convolution (nn.Conv2d: NCHW, square kernels, stride,
 * zero padding, no groups or dilation) as im2col + GEMM, one image per
 * thread of the team at a time: each thread unfolds its image into its own
 * (C*K*K, OH*OW) columns and multiplies them by the (OC, C*K*K) weights
 * with a single-threaded GEMM (cpu.h's one thread pool). The weight
 * gradient is summed per thread, then the threads add their partial sums in
 * thread order, so results are bitwise the same for a given thread count.
 * Without CBLAS the GEMMs are plain loops (the reference). */
#include "config.h"
#include "ops.h"
#include "cpu.h"

#include <string.h>

#ifdef HAVE_CBLAS
#include <cblas.h>
#endif

static int max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* C(M,N) = alpha? A(M,K) [or A^T] @ B(K,N) [or B^T] + beta C, row-major. */
static void gemm(int ta, int tb, int M, int N, int K, const float *A, int lda, const float *B, int ldb, float beta,
                 float *C, int ldc)
{
#ifdef HAVE_CBLAS
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, A, lda,
                B, ldb, beta, C, ldc);
#else
    for (int m = 0; m < M; m++) {
        float *c = C + (size_t)m * ldc;
        for (int n = 0; n < N; n++)
            c[n] = beta == 0.0f ? 0.0f : beta * c[n];
        for (int k = 0; k < K; k++) {
            float a = ta ? A[(size_t)k * lda + m] : A[(size_t)m * lda + k];
            if (a == 0.0f)
                continue;
            if (tb)
                for (int n = 0; n < N; n++)
                    c[n] += a * B[(size_t)n * ldb + k];
            else
                for (int n = 0; n < N; n++)
                    c[n] += a * B[(size_t)k * ldb + n];
        }
    }
#endif
}

/* col (C*K*K, OH*OW) from one image (C,H,W). */
static void im2col(float *col, const float *img, int C, int H, int W, int K, int stride, int pad, int OH, int OW)
{
    for (int c = 0; c < C; c++)
        for (int ki = 0; ki < K; ki++)
            for (int kj = 0; kj < K; kj++) {
                float *dst = col + ((size_t)(c * K + ki) * K + kj) * OH * OW;
                const float *src = img + (size_t)c * H * W;
                for (int oh = 0; oh < OH; oh++) {
                    int h = oh * stride - pad + ki;
                    float *d = dst + (size_t)oh * OW;
                    if (h < 0 || h >= H) {
                        memset(d, 0, (size_t)OW * sizeof(float));
                        continue;
                    }
                    const float *s = src + (size_t)h * W;
                    if (stride == 1) {
                        int lo = pad - kj, ow0 = lo > 0 ? lo : 0, ow1 = W + pad - kj < OW ? W + pad - kj : OW;
                        for (int ow = 0; ow < ow0; ow++)
                            d[ow] = 0.0f;
                        if (ow1 > ow0)
                            memcpy(d + ow0, s + ow0 - pad + kj, (size_t)(ow1 - ow0) * sizeof(float));
                        for (int ow = ow1 > ow0 ? ow1 : ow0; ow < OW; ow++)
                            d[ow] = 0.0f;
                    } else {
                        for (int ow = 0; ow < OW; ow++) {
                            int w = ow * stride - pad + kj;
                            d[ow] = w >= 0 && w < W ? s[w] : 0.0f;
                        }
                    }
                }
            }
}

/* img (C,H,W) += the columns folded back. */
static void col2im(float *img, const float *col, int C, int H, int W, int K, int stride, int pad, int OH, int OW)
{
    for (int c = 0; c < C; c++)
        for (int ki = 0; ki < K; ki++)
            for (int kj = 0; kj < K; kj++) {
                const float *src = col + ((size_t)(c * K + ki) * K + kj) * OH * OW;
                float *dst = img + (size_t)c * H * W;
                for (int oh = 0; oh < OH; oh++) {
                    int h = oh * stride - pad + ki;
                    if (h < 0 || h >= H)
                        continue;
                    const float *s = src + (size_t)oh * OW;
                    float *d = dst + (size_t)h * W;
                    for (int ow = 0; ow < OW; ow++) {
                        int w = ow * stride - pad + kj;
                        if (w >= 0 && w < W)
                            d[w] += s[ow];
                    }
                }
            }
}

size_t op_conv2d_workspace_cpu(int C, int OC, int K, int OH, int OW)
{
    size_t ckk = (size_t)C * K * K;
    return (size_t)max_threads() * (ckk * OH * OW + (size_t)OC * ckk + OC);
}

void op_conv2d_forward_cpu(float *out, const float *inp, const float *weight, const float *bias, float *ws, int B,
                           int C, int H, int W, int OC, int K, int stride, int pad)
{
    int OH = (H + 2 * pad - K) / stride + 1, OW = (W + 2 * pad - K) / stride + 1, CKK = C * K * K;
    size_t per = (size_t)CKK * OH * OW + (size_t)OC * CKK + OC;
#ifdef HAVE_CBLAS
    cpu_blas_serial();
#endif
#pragma omp parallel
    {
#ifdef _OPENMP
        float *col = ws + (size_t)omp_get_thread_num() * per;
#else
        float *col = ws;
#endif
#pragma omp for schedule(static)
        for (int b = 0; b < B; b++) {
            const float *x = inp + (size_t)b * C * H * W;
            float *y = out + (size_t)b * OC * OH * OW;
            if (K == 1 && stride == 1 && pad == 0) {
                gemm(0, 0, OC, H * W, C, weight, C, x, H * W, 0.0f, y, H * W);
            } else {
                im2col(col, x, C, H, W, K, stride, pad, OH, OW);
                gemm(0, 0, OC, OH * OW, CKK, weight, CKK, col, OH * OW, 0.0f, y, OH * OW);
            }
            for (int o = 0; bias && o < OC; o++)
                for (int i = 0; i < OH * OW; i++)
                    y[(size_t)o * OH * OW + i] += bias[o];
        }
    }
}

void op_conv2d_backward_cpu(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                            const float *weight, float *ws, int B, int C, int H, int W, int OC, int K, int stride,
                            int pad, int add_dparams)
{
    int OH = (H + 2 * pad - K) / stride + 1, OW = (W + 2 * pad - K) / stride + 1, CKK = C * K * K;
    size_t per = (size_t)CKK * OH * OW + (size_t)OC * CKK + OC, n_dw = (size_t)OC * CKK + OC;
    int direct = K == 1 && stride == 1 && pad == 0; /* the image is its own columns */
#ifdef HAVE_CBLAS
    cpu_blas_serial();
#endif
#pragma omp parallel
    {
#ifdef _OPENMP
        int me = omp_get_thread_num(), nt = omp_get_num_threads();
#else
        int me = 0, nt = 1;
#endif
        float *col = ws + (size_t)me * per, *dw = col + (size_t)CKK * OH * OW, *db = dw + (size_t)OC * CKK;
        memset(dw, 0, n_dw * sizeof(float));
#pragma omp for schedule(static)
        for (int b = 0; b < B; b++) {
            const float *x = inp + (size_t)b * C * H * W, *dy = dout + (size_t)b * OC * OH * OW;
            const float *cols = x;
            if (!direct) {
                im2col(col, x, C, H, W, K, stride, pad, OH, OW);
                cols = col;
            }
            /* dW (OC, CKK) += dy (OC, OHOW) @ col^T */
            gemm(0, 1, OC, CKK, OH * OW, dy, OH * OW, cols, OH * OW, 1.0f, dw, CKK);
            for (int o = 0; o < OC; o++) {
                float s = 0.0f;
                for (int i = 0; i < OH * OW; i++)
                    s += dy[(size_t)o * OH * OW + i];
                db[o] += s;
            }
            if (dinp) {
                float *dx = dinp + (size_t)b * C * H * W;
                if (direct) {
                    gemm(1, 0, C, H * W, OC, weight, C, dy, H * W, 1.0f, dx, H * W);
                } else { /* dcol (CKK, OHOW) = W^T @ dy, folded into dx */
                    gemm(1, 0, CKK, OH * OW, OC, weight, CKK, dy, OH * OW, 0.0f, col, OH * OW);
                    col2im(dx, col, C, H, W, K, stride, pad, OH, OW);
                }
            }
        }
        /* the implicit barrier of the loop: every partial sum is complete */
        int lo, hi;
        team_range((int)n_dw, 64, &lo, &hi);
        for (int i = lo; i < hi; i++) {
            float s = 0.0f;
            for (int t = 0; t < nt; t++)
                s += ws[(size_t)t * per + (size_t)CKK * OH * OW + i];
            if (i < OC * CKK)
                dweight[i] = (add_dparams ? dweight[i] : 0.0f) + s;
            else if (dbias)
                dbias[i - OC * CKK] = (add_dparams ? dbias[i - OC * CKK] : 0.0f) + s;
        }
    }
}

/* ---- the direct algorithm: no columns, no GEMM; each output row is a sum
 * of shifted input rows. Fewer bytes moved, fewer flops per cycle: which
 * wins depends on the shape (--conv-autotune times both). ---- */

/* The output columns [*lo, *hi) whose input column ow*stride - pad + kj is inside [0, W). */
static void valid_cols(int W, int OW, int stride, int pad, int kj, int *lo, int *hi)
{
    int a = pad - kj, l = a > 0 ? (a + stride - 1) / stride : 0, h = (W - 1 + pad - kj) / stride + 1;
    if (W - 1 + pad - kj < 0)
        h = 0;
    *lo = l;
    *hi = h < OW ? h : OW;
}

void op_conv2d_direct_forward_cpu(float *out, const float *inp, const float *weight, const float *bias, int B,
                                  int C, int H, int W, int OC, int K, int stride, int pad)
{
    int OH = (H + 2 * pad - K) / stride + 1, OW = (W + 2 * pad - K) / stride + 1;
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < B; b++)
        for (int o = 0; o < OC; o++) {
            float *y = out + ((size_t)b * OC + o) * OH * OW;
            for (int i = 0; i < OH * OW; i++)
                y[i] = bias ? bias[o] : 0.0f;
            for (int c = 0; c < C; c++) {
                const float *x = inp + ((size_t)b * C + c) * H * W;
                for (int ki = 0; ki < K; ki++)
                    for (int kj = 0; kj < K; kj++) {
                        float wv = weight[(((size_t)o * C + c) * K + ki) * K + kj];
                        int lo, hi;
                        valid_cols(W, OW, stride, pad, kj, &lo, &hi);
                        for (int oh = 0; oh < OH; oh++) {
                            int h = oh * stride - pad + ki;
                            if (h < 0 || h >= H)
                                continue;
                            const float *xr = x + (size_t)h * W - pad + kj;
                            float *yr = y + (size_t)oh * OW;
                            if (stride == 1)
                                for (int ow = lo; ow < hi; ow++)
                                    yr[ow] += wv * xr[ow];
                            else
                                for (int ow = lo; ow < hi; ow++)
                                    yr[ow] += wv * xr[ow * stride];
                        }
                    }
            }
        }
}

void op_conv2d_direct_backward_cpu(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                                   const float *weight, int B, int C, int H, int W, int OC, int K, int stride, int pad,
                                   int add_dparams)
{
    int OH = (H + 2 * pad - K) / stride + 1, OW = (W + 2 * pad - K) / stride + 1;
    /* the weight gradient: one (o, c) pair per iteration, summed over the batch */
#pragma omp parallel for collapse(2) schedule(static)
    for (int o = 0; o < OC; o++)
        for (int c = 0; c < C; c++)
            for (int ki = 0; ki < K; ki++)
                for (int kj = 0; kj < K; kj++) {
                    int lo, hi;
                    valid_cols(W, OW, stride, pad, kj, &lo, &hi);
                    float s = 0.0f;
                    for (int b = 0; b < B; b++) {
                        const float *x = inp + ((size_t)b * C + c) * H * W, *dy = dout + ((size_t)b * OC + o) * OH * OW;
                        for (int oh = 0; oh < OH; oh++) {
                            int h = oh * stride - pad + ki;
                            if (h < 0 || h >= H)
                                continue;
                            const float *xr = x + (size_t)h * W - pad + kj, *dr = dy + (size_t)oh * OW;
                            for (int ow = lo; ow < hi; ow++)
                                s += dr[ow] * xr[ow * stride];
                        }
                    }
                    float *dw = dweight + (((size_t)o * C + c) * K + ki) * K + kj;
                    *dw = (add_dparams ? *dw : 0.0f) + s;
                }
    if (dbias) {
#pragma omp parallel for schedule(static)
        for (int o = 0; o < OC; o++) {
            float s = 0.0f;
            for (int b = 0; b < B; b++)
                for (int i = 0; i < OH * OW; i++)
                    s += dout[((size_t)b * OC + o) * OH * OW + i];
            dbias[o] = (add_dparams ? dbias[o] : 0.0f) + s;
        }
    }
    if (!dinp)
        return;
    /* the input gradient: one (b, c) plane per iteration */
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < B; b++)
        for (int c = 0; c < C; c++) {
            float *dx = dinp + ((size_t)b * C + c) * H * W;
            for (int o = 0; o < OC; o++) {
                const float *dy = dout + ((size_t)b * OC + o) * OH * OW;
                for (int ki = 0; ki < K; ki++)
                    for (int kj = 0; kj < K; kj++) {
                        float wv = weight[(((size_t)o * C + c) * K + ki) * K + kj];
                        int lo, hi;
                        valid_cols(W, OW, stride, pad, kj, &lo, &hi);
                        for (int oh = 0; oh < OH; oh++) {
                            int h = oh * stride - pad + ki;
                            if (h < 0 || h >= H)
                                continue;
                            float *xr = dx + (size_t)h * W - pad + kj;
                            const float *dr = dy + (size_t)oh * OW;
                            for (int ow = lo; ow < hi; ow++)
                                xr[ow * stride] += wv * dr[ow];
                        }
                    }
            }
        }
}
