/* batchnorm.c: BatchNorm2d over NCHW and over channels-last (NHWC) tensors:
 * per channel, statistics over the batch and the pixels. Training
 * normalizes with the batch's mean and biased variance and moves the
 * running averages (PyTorch's rule: the running variance takes the unbiased
 * estimate); evaluation normalizes with the running averages. Sums in
 * double. NCHW: one channel per loop iteration, so results do not depend on
 * the thread count. NHWC: each thread sums its rows for every channel (the
 * channels are the contiguous, vectorized axis) and the partials are added
 * in thread order: the same results for a given thread count; one pass for
 * the mean and the variance (in double), one to normalize. */
#include "ops.h"
#include "cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void op_batchnorm_forward_cpu(float *out, float *mean, float *rstd, float *running_mean, float *running_var,
                              const float *inp, const float *weight, const float *bias, int B, int C, int HW,
                              int training, float momentum, float eps)
{
    double n = (double)B * HW;
#pragma omp parallel for schedule(static)
    for (int c = 0; c < C; c++) {
        float m, r;
        if (training) {
            double s = 0.0, ss = 0.0;
            for (int b = 0; b < B; b++) {
                const float *x = inp + ((size_t)b * C + c) * HW;
                for (int i = 0; i < HW; i++)
                    s += x[i];
            }
            double mu = s / n;
            for (int b = 0; b < B; b++) {
                const float *x = inp + ((size_t)b * C + c) * HW;
                for (int i = 0; i < HW; i++)
                    ss += (x[i] - mu) * (x[i] - mu);
            }
            double var = ss / n;
            m = (float)mu;
            r = (float)(1.0 / sqrt(var + eps));
            mean[c] = m;
            rstd[c] = r;
            running_mean[c] = (1.0f - momentum) * running_mean[c] + momentum * m;
            running_var[c] = (1.0f - momentum) * running_var[c] + momentum * (float)(n > 1 ? ss / (n - 1) : var);
        } else {
            m = running_mean[c];
            r = 1.0f / sqrtf(running_var[c] + eps);
        }
        float w = weight[c] * r, sh = bias[c] - m * w;
        for (int b = 0; b < B; b++) {
            const float *x = inp + ((size_t)b * C + c) * HW;
            float *y = out + ((size_t)b * C + c) * HW;
            for (int i = 0; i < HW; i++)
                y[i] = x[i] * w + sh;
        }
    }
}

void op_batchnorm_backward_cpu(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                               const float *weight, const float *mean, const float *rstd, int B, int C, int HW,
                               int add_dparams)
{
    double n = (double)B * HW;
#pragma omp parallel for schedule(static)
    for (int c = 0; c < C; c++) {
        float m = mean[c], r = rstd[c];
        double sd = 0.0, sdx = 0.0;
        for (int b = 0; b < B; b++) {
            const float *x = inp + ((size_t)b * C + c) * HW, *dy = dout + ((size_t)b * C + c) * HW;
            for (int i = 0; i < HW; i++) {
                sd += dy[i];
                sdx += dy[i] * (x[i] - m) * r;
            }
        }
        dbias[c] = (add_dparams ? dbias[c] : 0.0f) + (float)sd;
        dweight[c] = (add_dparams ? dweight[c] : 0.0f) + (float)sdx;
        if (!dinp)
            continue;
        float k = weight[c] * r, a = (float)(sd / n), g = (float)(sdx / n);
        for (int b = 0; b < B; b++) {
            const float *x = inp + ((size_t)b * C + c) * HW, *dy = dout + ((size_t)b * C + c) * HW;
            float *dx = dinp + ((size_t)b * C + c) * HW;
            for (int i = 0; i < HW; i++)
                dx[i] += k * (dy[i] - a - (x[i] - m) * r * g);
        }
    }
}

/* ---- channels-last (NHWC: N = B*H*W rows of C channels) ---- */

static int team_max(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* Per-channel sums over the rows, two of them (a[c] += fa, b[c] += fb), in
 * double: each thread its block of rows into its partials (part: 2*C per
 * thread), then added in thread order into sum (2*C), so results are
 * bitwise the same for a given thread count. Called inside a parallel
 * region by every thread; ends after a barrier. */
#define ROW_SUMS(N, C, part, sum, FA, FB)                                                                             \
    do {                                                                                                               \
        int me_ = 0, nt_ = 1, lo_, hi_;                                                                                \
        GET_TEAM(me_, nt_);                                                                                            \
        double *pa_ = (part) + (size_t)me_ * 2 * (C), *pb_ = pa_ + (C);                                                \
        for (int c = 0; c < (C); c++)                                                                                  \
            pa_[c] = pb_[c] = 0.0;                                                                                     \
        team_range((N), 1, &lo_, &hi_);                                                                                \
        for (int r = lo_; r < hi_; r++)                                                                                \
            for (int c = 0; c < (C); c++) {                                                                            \
                size_t i = (size_t)r * (C) + c;                                                                        \
                pa_[c] += (FA);                                                                                        \
                pb_[c] += (FB);                                                                                        \
            }                                                                                                          \
        _Pragma("omp barrier");                                                                                        \
        _Pragma("omp single") for (int c = 0; c < 2 * (C); c++)                                                        \
        {                                                                                                              \
            double s_ = 0.0;                                                                                           \
            for (int t = 0; t < nt_; t++)                                                                              \
                s_ += (part)[(size_t)t * 2 * (C) + c];                                                                 \
            (sum)[c] = s_;                                                                                             \
        }                                                                                                              \
    } while (0)

#ifdef _OPENMP
#define GET_TEAM(me, nt) ((me) = omp_get_thread_num(), (nt) = omp_get_num_threads())
#else
#define GET_TEAM(me, nt) ((void)0)
#endif

void op_batchnorm_nhwc_forward_cpu(float *out, float *mean, float *rstd, float *running_mean, float *running_var,
                                   const float *inp, const float *weight, const float *bias, int N, int C,
                                   int training, float momentum, float eps)
{
    double *part = malloc(((size_t)team_max() + 1) * 2 * C * sizeof(double)), *sum = part + (size_t)team_max() * 2 * C;
    float *scale = malloc(2 * (size_t)C * sizeof(float)), *shift = scale + C;
    if (!part || !scale) {
        free(part);
        free(scale);
        fprintf(stderr, "trainer: batchnorm: out of host memory\n");
        exit(1);
    }
    double n = (double)N;
#pragma omp parallel
    {
        if (training) {
            ROW_SUMS(N, C, part, sum, (double)inp[i], (double)inp[i] * inp[i]);
#pragma omp single
            for (int c = 0; c < C; c++) {
                double mu = sum[c] / n, var = sum[C + c] / n - mu * mu;
                var = var > 0.0 ? var : 0.0;
                mean[c] = (float)mu;
                rstd[c] = (float)(1.0 / sqrt(var + eps));
                running_mean[c] = (1.0f - momentum) * running_mean[c] + momentum * (float)mu;
                running_var[c] =
                    (1.0f - momentum) * running_var[c] + momentum * (float)(n > 1 ? var * n / (n - 1) : var);
                scale[c] = weight[c] * rstd[c];
                shift[c] = bias[c] - mean[c] * scale[c];
            }
        } else {
#pragma omp single
            for (int c = 0; c < C; c++) {
                float r = 1.0f / sqrtf(running_var[c] + eps);
                scale[c] = weight[c] * r;
                shift[c] = bias[c] - running_mean[c] * scale[c];
            }
        }
        int lo, hi;
        team_range(N, 1, &lo, &hi);
        for (int r = lo; r < hi; r++) {
            const float *x = inp + (size_t)r * C;
            float *y = out + (size_t)r * C;
            for (int c = 0; c < C; c++)
                y[c] = x[c] * scale[c] + shift[c];
        }
    }
    free(part);
    free(scale);
}

void op_batchnorm_nhwc_backward_cpu(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                                    const float *weight, const float *mean, const float *rstd, int N, int C,
                                    int add_dparams)
{
    double *part = malloc(((size_t)team_max() + 1) * 2 * C * sizeof(double)), *sum = part + (size_t)team_max() * 2 * C;
    float *k = malloc(3 * (size_t)C * sizeof(float)), *a = k + C, *g = a + C;
    if (!part || !k) {
        free(part);
        free(k);
        fprintf(stderr, "trainer: batchnorm: out of host memory\n");
        exit(1);
    }
    double n = (double)N;
#pragma omp parallel
    {
        /* sum of dy, and of dy times the normalized input */
        ROW_SUMS(N, C, part, sum, (double)dout[i], (double)dout[i] * ((inp[i] - mean[c]) * rstd[c]));
#pragma omp single
        for (int c = 0; c < C; c++) {
            dbias[c] = (add_dparams ? dbias[c] : 0.0f) + (float)sum[c];
            dweight[c] = (add_dparams ? dweight[c] : 0.0f) + (float)sum[C + c];
            k[c] = weight[c] * rstd[c];
            a[c] = (float)(sum[c] / n);
            g[c] = (float)(sum[C + c] / n) * rstd[c];
        }
        if (dinp) {
            int lo, hi;
            team_range(N, 1, &lo, &hi);
            for (int r = lo; r < hi; r++) {
                const float *x = inp + (size_t)r * C, *dy = dout + (size_t)r * C;
                float *dx = dinp + (size_t)r * C;
                for (int c = 0; c < C; c++)
                    dx[c] += k[c] * (dy[c] - a[c] - (x[c] - mean[c]) * g[c]);
            }
        }
    }
    free(part);
    free(k);
}
