/* matmul.c: the linear layer (out = inp @ W^T + b) and its backward, on CBLAS
 * when configure found it, else on plain OpenMP loops (the reference the
 * BLAS path is tested against). */
#include "config.h"
#include "ops.h"

#ifdef HAVE_CBLAS
#include <cblas.h>
#endif

void op_matmul_forward_cpu(float *out, const float *inp, const float *weight, const float *bias,
                           int N, int C, int OC)
{
#ifdef HAVE_CBLAS
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, C, 1.0f, inp, C, weight, C, 0.0f, out, OC);
    if (bias) {
#pragma omp parallel for
        for (int n = 0; n < N; n++)
            for (int o = 0; o < OC; o++)
                out[(size_t)n * OC + o] += bias[o];
    }
#else
#pragma omp parallel for collapse(2)
    for (int n = 0; n < N; n++)
        for (int o = 0; o < OC; o++) {
            const float *x = inp + (size_t)n * C, *w = weight + (size_t)o * C;
            float s = bias ? bias[o] : 0.0f;
            for (int i = 0; i < C; i++)
                s += x[i] * w[i];
            out[(size_t)n * OC + o] = s;
        }
#endif
}

void op_matmul_backward_cpu(float *dinp, float *dweight, float *dbias, const float *dout,
                            const float *inp, const float *weight, int N, int C, int OC)
{
#ifdef HAVE_CBLAS
    if (dinp) /* dinp (N,C) += dout (N,OC) @ W (OC,C) */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C, OC, 1.0f, dout, OC, weight, C, 1.0f, dinp, C);
    /* dW (OC,C) += dout^T (OC,N) @ inp (N,C) */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, N, 1.0f, dout, OC, inp, C, 1.0f, dweight, C);
#else
    if (dinp) {
#pragma omp parallel for
        for (int n = 0; n < N; n++)
            for (int o = 0; o < OC; o++) {
                float d = dout[(size_t)n * OC + o];
                const float *w = weight + (size_t)o * C;
                float *dx = dinp + (size_t)n * C;
                for (int i = 0; i < C; i++)
                    dx[i] += d * w[i];
            }
    }
#pragma omp parallel for
    for (int o = 0; o < OC; o++)
        for (int n = 0; n < N; n++) {
            float d = dout[(size_t)n * OC + o];
            const float *x = inp + (size_t)n * C;
            float *dw = dweight + (size_t)o * C;
            for (int i = 0; i < C; i++)
                dw[i] += d * x[i];
        }
#endif
    if (dbias) {
#pragma omp parallel for
        for (int o = 0; o < OC; o++) {
            float s = 0.0f;
            for (int n = 0; n < N; n++)
                s += dout[(size_t)n * OC + o];
            dbias[o] += s;
        }
    }
}
