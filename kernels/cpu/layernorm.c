/* layernorm.c: LayerNorm forward and backward, CPU reference (eps 1e-5).
 * The row loops say omp simd (sums in vector lanes): the default CFLAGS'
 * -O2, which come after the kernels' -O3, vectorize no loop here. Where GCC
 * makes ifunc clones the row functions are built for AVX-512, AVX2 and the
 * baseline, picked at load time. */
#include "ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define VECTOR_CLONES
#endif

/* One row; shared by the fused residual+LayerNorm so both give the same bits. */
VECTOR_CLONES static void layernorm_row(float *o, float *mean, float *rstd, const float *x,
                                        const float *weight, const float *bias, int C)
{
    float m = 0.0f, v = 0.0f;
#pragma omp simd reduction(+ : m)
    for (int i = 0; i < C; i++)
        m += x[i];
    m /= C;
#pragma omp simd reduction(+ : v)
    for (int i = 0; i < C; i++)
        v += (x[i] - m) * (x[i] - m);
    float s = 1.0f / sqrtf(v / C + 1e-5f);
#pragma omp simd
    for (int i = 0; i < C; i++)
        o[i] = (x[i] - m) * s * weight[i] + bias[i];
    *mean = m;
    *rstd = s;
}

void op_layernorm_forward_cpu(float *out, float *mean, float *rstd, const float *inp,
                              const float *weight, const float *bias, int N, int C)
{
#pragma omp parallel for
    for (int n = 0; n < N; n++)
        layernorm_row(out + (size_t)n * C, &mean[n], &rstd[n], inp + (size_t)n * C, weight, bias, C);
}

void op_residual_layernorm_forward_cpu(float *res, float *out, float *mean, float *rstd, const float *a,
                                       const float *b, const float *weight, const float *bias, int N, int C)
{
#pragma omp parallel for
    for (int n = 0; n < N; n++) {
        float *r = res + (size_t)n * C;
        const float *x = a + (size_t)n * C, *y = b + (size_t)n * C;
#pragma omp simd
        for (int i = 0; i < C; i++)
            r[i] = x[i] + y[i];
        layernorm_row(out + (size_t)n * C, &mean[n], &rstd[n], r, weight, bias, C);
    }
}

/* Rows [n0, n1) of the backward: dinp (and da, db) rows, and the rows' sums
 * of the weight's and the bias's gradients added into pw and pb. */
VECTOR_CLONES static void backward_rows(float *dinp, float *da, float *db, float *pw, float *pb, const float *dout,
                                        const float *inp, const float *weight, const float *mean,
                                        const float *rstd, int n0, int n1, int C)
{
    for (int n = n0; n < n1; n++) {
        const float *x = inp + (size_t)n * C, *d = dout + (size_t)n * C;
        float m = mean[n], s = rstd[n], dnorm_mean = 0.0f, dnorm_norm_mean = 0.0f;
#pragma omp simd reduction(+ : dnorm_mean, dnorm_norm_mean)
        for (int i = 0; i < C; i++) {
            float norm = (x[i] - m) * s, dnorm = weight[i] * d[i];
            dnorm_mean += dnorm;
            dnorm_norm_mean += dnorm * norm;
            pw[i] += norm * d[i];
            pb[i] += d[i];
        }
        dnorm_mean /= C;
        dnorm_norm_mean /= C;
        float *dx = dinp + (size_t)n * C;
#pragma omp simd
        for (int i = 0; i < C; i++) {
            float norm = (x[i] - m) * s, dnorm = weight[i] * d[i];
            dx[i] += (dnorm - dnorm_mean - norm * dnorm_norm_mean) * s;
        }
        if (da) {
            float *ra = da + (size_t)n * C, *rb = db + (size_t)n * C;
#pragma omp simd
            for (int i = 0; i < C; i++) {
                ra[i] += dx[i];
                rb[i] += dx[i];
            }
        }
    }
}

/* dinp is parallel over rows; dweight/dbias are reduced per thread in fixed
 * chunks and summed in chunk order, so the result does not depend on timing.
 * With da/db (the fused residual), each row of dinp is then added to both. */
static void layernorm_backward(float *dinp, float *da, float *db, float *dweight, float *dbias,
                               const float *dout, const float *inp, const float *weight, const float *mean,
                               const float *rstd, int N, int C, int add_dparams)
{
    enum { CHUNK = 64 };
    int n_chunks = (N + CHUNK - 1) / CHUNK;
    float *part = calloc((size_t)n_chunks * 2 * C, sizeof *part);
    if (!part)
        abort(); /* a few KB of workspace; the caller's allocator owns the big buffers */
#pragma omp parallel for
    for (int k = 0; k < n_chunks; k++) {
        float *pw = part + (size_t)k * 2 * C, *pb = pw + C;
        backward_rows(dinp, da, db, pw, pb, dout, inp, weight, mean, rstd, k * CHUNK,
                      (k + 1) * CHUNK < N ? (k + 1) * CHUNK : N, C);
    }
    for (int k = 0; k < n_chunks; k++) {
        const float *pw = part + (size_t)k * 2 * C, *pb = pw + C;
        for (int i = 0; i < C; i++) {
            dweight[i] = (add_dparams || k > 0 ? dweight[i] : 0.0f) + pw[i];
            dbias[i] = (add_dparams || k > 0 ? dbias[i] : 0.0f) + pb[i];
        }
    }
    free(part);
}

void op_layernorm_backward_cpu(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                               const float *weight, const float *mean, const float *rstd, int N, int C,
                               int add_dparams)
{
    layernorm_backward(dinp, NULL, NULL, dweight, dbias, dout, inp, weight, mean, rstd, N, C, add_dparams);
}

void op_residual_layernorm_backward_cpu(float *da, float *db, float *dres, float *dweight, float *dbias,
                                        const float *dout, const float *res, const float *weight,
                                        const float *mean, const float *rstd, int N, int C, int add_dparams)
{
    layernorm_backward(dres, da, db, dweight, dbias, dout, res, weight, mean, rstd, N, C, add_dparams);
}
