/* matmul.c: the linear layer (out = inp @ W^T + b) and its backward, on CBLAS
 * when configure found it, else on plain OpenMP loops (the reference the
 * BLAS path is tested against). With CBLAS each thread of the team runs a
 * single-threaded GEMM on its own rows (cpu.h): no second thread pool. */
#include "config.h"
#include "ops.h"
#include "cpu.h"
#include "lowp.h"

#include <stdbool.h>
#include <string.h>

#ifdef HAVE_CBLAS
#include <cblas.h>
#endif

#ifdef HAVE_CBLAS
/* Rows lo..hi of out start as the bias, and the GEMM adds into them (beta 1):
 * one pass over out instead of the BLAS's zeroing for beta 0 and an add. */
static void rows_of_bias(float *out, const float *bias, int lo, int hi, int OC)
{
    for (int n = lo; bias && n < hi; n++)
        memcpy(out + (size_t)n * OC, bias, (size_t)OC * sizeof *bias);
}
#endif

void op_matmul_forward_cpu(float *out, const float *inp, const float *weight, const float *bias,
                           int N, int C, int OC)
{
#ifdef HAVE_CBLAS
    cpu_blas_serial();
#pragma omp parallel
    {
        int lo, hi; /* this thread's rows of out */
        team_range(N, 16, &lo, &hi);
        if (hi > lo) {
            rows_of_bias(out, bias, lo, hi, OC);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, hi - lo, OC, C, 1.0f, inp + (size_t)lo * C, C,
                        weight, C, bias ? 1.0f : 0.0f, out + (size_t)lo * OC, OC);
        }
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
                            const float *inp, const float *weight, int N, int C, int OC, int add_dparams)
{
#ifdef HAVE_CBLAS
    bool own = cpu_gemm_usable(C); /* gemm.c, else the BLAS; both products have C columns */
    cpu_blas_serial();
#pragma omp parallel
    {
        int lo, hi;
        if (dinp) { /* this thread's rows of dinp (N,C) += dout (N,OC) @ W (OC,C) */
            team_range(N, 16, &lo, &hi);
            if (hi > lo && own)
                cpu_gemm_rows(lo, hi, C, OC, dout, OC, 1, weight, C, dinp, C, true, NULL);
            else if (hi > lo)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, hi - lo, C, OC, 1.0f, dout + (size_t)lo * OC,
                            OC, weight, C, 1.0f, dinp + (size_t)lo * C, C);
        }
        /* this thread's rows o of dW (OC,C) += dout^T (OC,N) @ inp (N,C), and of dbias */
        team_range(OC, 16, &lo, &hi);
        if (hi > lo) {
            for (int o = lo; dbias && !add_dparams && o < hi; o++)
                dbias[o] = 0.0f;
            if (own) /* dbias rides along: dout's columns are the rows of A */
                cpu_gemm_rows(lo, hi, C, N, dout, 1, OC, inp, C, dweight, C, add_dparams, dbias);
            else
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, hi - lo, C, N, 1.0f, dout + lo, OC, inp, C,
                            add_dparams ? 1.0f : 0.0f, dweight + (size_t)lo * C, C);
            for (int n = 0; dbias && !own && n < N; n++)
#pragma omp simd
                for (int o = lo; o < hi; o++)
                    dbias[o] += dout[(size_t)n * OC + o];
        }
    }
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
    for (int o = 0; o < OC; o++) {
        for (int i = 0; !add_dparams && i < C; i++)
            dweight[(size_t)o * C + i] = 0.0f;
        for (int n = 0; n < N; n++) {
            float d = dout[(size_t)n * OC + o];
            const float *x = inp + (size_t)n * C;
            float *dw = dweight + (size_t)o * C;
            for (int i = 0; i < C; i++)
                dw[i] += d * x[i];
        }
        if (dbias) {
            float s = 0.0f;
            for (int n = 0; n < N; n++)
                s += dout[(size_t)n * OC + o];
            dbias[o] = (add_dparams ? dbias[o] : 0.0f) + s;
        }
    }
#endif
}

void op_matmul_bias_gelu_forward_cpu(float *pre, float *out, const float *inp, const float *weight,
                                     const float *bias, int N, int C, int OC, int pre_format)
{
#ifdef HAVE_CBLAS
    cpu_blas_serial();
#pragma omp parallel
    {
        int lo, hi;
        team_range(N, 16, &lo, &hi);
        if (hi > lo) {
            bool f32 = pre_format == LOWP_F32; /* else the bias is added after, then rounded */
            rows_of_bias(pre, f32 ? bias : NULL, lo, hi, OC);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, hi - lo, OC, C, 1.0f, inp + (size_t)lo * C, C,
                        weight, C, f32 ? 1.0f : 0.0f, pre + (size_t)lo * OC, OC);
            /* the epilogue, while the rows are in cache */
            for (int n = lo; n < hi; n++) {
                float *p = pre + (size_t)n * OC, *g = out + (size_t)n * OC;
                for (int o = 0; !f32 && o < OC; o++)
                    p[o] = lowp_round(p[o] + bias[o], pre_format);
                cpu_gelu_span(g, p, (size_t)OC);
            }
        }
    }
#else /* as op_matmul_forward_cpu then GELU: the sums start from the bias in fp32 */
    bool f32 = pre_format == LOWP_F32;
#pragma omp parallel for
    for (int n = 0; n < N; n++) {
        for (int o = 0; o < OC; o++) {
            const float *x = inp + (size_t)n * C, *w = weight + (size_t)o * C;
            float s = f32 ? bias[o] : 0.0f;
            for (int i = 0; i < C; i++)
                s += x[i] * w[i];
            pre[(size_t)n * OC + o] = f32 ? s : lowp_round(s + bias[o], pre_format);
        }
        cpu_gelu_span(out + (size_t)n * OC, pre + (size_t)n * OC, (size_t)OC);
    }
#endif
}
