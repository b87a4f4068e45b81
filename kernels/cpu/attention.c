/* attention.c: causal multi-head self-attention, CPU reference. q, k and v
 * come packed per position as (q | k | v), each C wide and split into NH
 * heads of C/NH. The forward keeps the probabilities att for the backward.
 *
 * With CBLAS, each (batch, head) is a handful of GEMMs over blocks of BLOCK
 * query rows: rows [r0, r1) only see keys [0, r1), so the masked upper
 * triangle is (mostly) never computed. The team splits over (batch, head);
 * each GEMM is single-threaded (cpu.h). Without CBLAS, plain loops. The
 * softmax's loops vectorize (exp_fast, and no trapping math: see gelu.c),
 * built for AVX-512, AVX2 and the baseline where GCC makes ifunc clones:
 * on SSE2 alone the softmax was a fifth of the forward. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif
#include "config.h"
#include "ops.h"
#include "cpu.h"

#include <math.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define VECTOR_CLONES
#endif

#ifdef HAVE_CBLAS
#include <cblas.h>

enum { BLOCK = 32 }; /* query rows per GEMM: fewer masked scores than 64; 16 was no faster */

/* Rows [r0, r1) of the (T,T) scores A, in place: the causal softmax of
 * each row t over keys [0, t], zeros after. */
VECTOR_CLONES static void softmax_rows(float *A, int r0, int r1, int T)
{
    for (int t = r0; t < r1; t++) {
        float *a = A + (size_t)t * T, maxv = -INFINITY, sum = 0.0f;
#pragma omp simd reduction(max : maxv)
        for (int t2 = 0; t2 <= t; t2++)
            maxv = a[t2] > maxv ? a[t2] : maxv;
#pragma omp simd reduction(+ : sum)
        for (int t2 = 0; t2 <= t; t2++) {
            a[t2] = exp_fast(a[t2] - maxv);
            sum += a[t2];
        }
        float inv = 1.0f / sum;
#pragma omp simd
        for (int t2 = 0; t2 <= t; t2++)
            a[t2] *= inv;
        /* the causal mask, explicit for the backward and for readers */
        memset(a + t + 1, 0, (size_t)(T - t - 1) * sizeof *a);
    }
}

/* Rows [r0, r1) through the softmax, in place in D (rows of T, keys up to
 * r1): dpre = att * (datt - sum(att * datt)) * scale, zero after the diagonal. */
VECTOR_CLONES static void softmax_backward_rows(float *D, const float *A, int r0, int r1, int T, float scale)
{
    for (int t = r0; t < r1; t++) {
        const float *at = A + (size_t)t * T;
        float *dt = D + (size_t)t * T, dot = 0.0f;
#pragma omp simd reduction(+ : dot)
        for (int t2 = 0; t2 <= t; t2++)
            dot += at[t2] * dt[t2];
#pragma omp simd
        for (int t2 = 0; t2 <= t; t2++)
            dt[t2] = at[t2] * (dt[t2] - dot) * scale;
        for (int t2 = t + 1; t2 < r1; t2++)
            dt[t2] = 0.0f;
    }
}

void op_attention_forward_cpu(float *out, float *att, const float *qkv, int B, int T, int C, int NH)
{
    int hs = C / NH, C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
    cpu_blas_serial();
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++) {
            const float *q = qkv + (size_t)b * T * C3 + h * hs, *k = q + C, *v = q + 2 * C; /* (T,hs), stride 3C */
            float *A = att + ((size_t)b * NH + h) * T * T; /* (T,T) */
            float *o = out + (size_t)b * T * C + h * hs;   /* (T,hs), stride C */
            for (int r0 = 0; r0 < T; r0 += BLOCK) {
                int r1 = r0 + BLOCK < T ? r0 + BLOCK : T, nr = r1 - r0;
                /* scores (nr, r1) = scale * q[r0:r1] @ k[0:r1]^T */
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nr, r1, hs, scale, q + (size_t)r0 * C3, C3, k,
                            C3, 0.0f, A + (size_t)r0 * T, T);
                softmax_rows(A, r0, r1, T);
                /* out[r0:r1] (nr, hs) = att[r0:r1, 0:r1] @ v[0:r1] */
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nr, hs, r1, 1.0f, A + (size_t)r0 * T, T, v,
                            C3, 0.0f, o + (size_t)r0 * C, C);
            }
        }
}

/* Same blocks; dk and dv of a head gather from every block after them, in
 * block order, on one thread: deterministic. */
void op_attention_backward_cpu(float *dqkv, float *scratch, const float *dout, const float *qkv,
                               const float *att, int B, int T, int C, int NH)
{
    int hs = C / NH, C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
    cpu_blas_serial();
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++) {
            size_t pos = (size_t)b * T * C3 + h * hs;
            const float *q = qkv + pos, *k = q + C, *v = q + 2 * C;
            float *dq = dqkv + pos, *dk = dq + C, *dv = dq + 2 * C;
            const float *A = att + ((size_t)b * NH + h) * T * T;
            float *D = scratch + ((size_t)b * NH + h) * T * T;
            const float *d = dout + (size_t)b * T * C + h * hs;
            for (int r0 = 0; r0 < T; r0 += BLOCK) {
                int r1 = r0 + BLOCK < T ? r0 + BLOCK : T, nr = r1 - r0;
                const float *a = A + (size_t)r0 * T, *dO = d + (size_t)r0 * C;
                float *da = D + (size_t)r0 * T;
                /* through out = att @ v: dv[0:r1] += a^T @ dO, datt (nr, r1) = dO @ v[0:r1]^T */
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, r1, hs, nr, 1.0f, a, T, dO, C, 1.0f, dv, C3);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nr, r1, hs, 1.0f, dO, C, v, C3, 0.0f, da, T);
                softmax_backward_rows(D, A, r0, r1, T, scale);
                /* through the scores: dq[r0:r1] += dpre @ k[0:r1], dk[0:r1] += dpre^T @ q[r0:r1] */
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nr, hs, r1, 1.0f, da, T, k, C3, 1.0f,
                            dq + (size_t)r0 * C3, C3);
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, r1, hs, nr, 1.0f, da, T, q + (size_t)r0 * C3, C3,
                            1.0f, dk, C3);
            }
        }
}

#else /* plain loops */

void op_attention_forward_cpu(float *out, float *att, const float *qkv, int B, int T, int C, int NH)
{
    int hs = C / NH, C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
#pragma omp parallel for collapse(3)
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int h = 0; h < NH; h++) {
                const float *q = qkv + ((size_t)b * T + t) * C3 + h * hs;
                float *a = att + (((size_t)b * NH + h) * T + t) * T;
                float maxv = -INFINITY;
                for (int t2 = 0; t2 <= t; t2++) {
                    const float *k = qkv + ((size_t)b * T + t2) * C3 + C + h * hs;
                    float s = 0.0f;
                    for (int i = 0; i < hs; i++)
                        s += q[i] * k[i];
                    s *= scale;
                    a[t2] = s;
                    if (s > maxv)
                        maxv = s;
                }
                float sum = 0.0f;
                for (int t2 = 0; t2 <= t; t2++) {
                    a[t2] = expf(a[t2] - maxv);
                    sum += a[t2];
                }
                float inv = 1.0f / sum;
                for (int t2 = 0; t2 <= t; t2++)
                    a[t2] *= inv;
                for (int t2 = t + 1; t2 < T; t2++)
                    a[t2] = 0.0f; /* the causal mask, explicit for the backward and for readers */
                float *o = out + ((size_t)b * T + t) * C + h * hs;
                memset(o, 0, hs * sizeof *o);
                for (int t2 = 0; t2 <= t; t2++) {
                    const float *v = qkv + ((size_t)b * T + t2) * C3 + 2 * C + h * hs;
                    for (int i = 0; i < hs; i++)
                        o[i] += a[t2] * v[i];
                }
            }
}

/* Parallel over (b, h) only: every t of a head adds into the same dk and dv rows. */
void op_attention_backward_cpu(float *dqkv, float *scratch, const float *dout, const float *qkv,
                               const float *att, int B, int T, int C, int NH)
{
    int hs = C / NH, C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
#pragma omp parallel for collapse(2)
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++)
            for (int t = 0; t < T; t++) {
                const float *a = att + (((size_t)b * NH + h) * T + t) * T;
                float *da = scratch + (((size_t)b * NH + h) * T + t) * T;
                const float *d = dout + ((size_t)b * T + t) * C + h * hs;
                /* through out = att @ v */
                float dot = 0.0f;
                for (int t2 = 0; t2 <= t; t2++) {
                    const float *v = qkv + ((size_t)b * T + t2) * C3 + 2 * C + h * hs;
                    float *dv = dqkv + ((size_t)b * T + t2) * C3 + 2 * C + h * hs;
                    float s = 0.0f;
                    for (int i = 0; i < hs; i++) {
                        s += v[i] * d[i];
                        dv[i] += a[t2] * d[i];
                    }
                    da[t2] = s;
                    dot += s * a[t2];
                }
                /* through the softmax: dpre = att * (datt - sum(att * datt)), then q.k */
                const float *q = qkv + ((size_t)b * T + t) * C3 + h * hs;
                float *dq = dqkv + ((size_t)b * T + t) * C3 + h * hs;
                for (int t2 = 0; t2 <= t; t2++) {
                    float dpre = a[t2] * (da[t2] - dot) * scale;
                    const float *k = qkv + ((size_t)b * T + t2) * C3 + C + h * hs;
                    float *dk = dqkv + ((size_t)b * T + t2) * C3 + C + h * hs;
                    for (int i = 0; i < hs; i++) {
                        dq[i] += k[i] * dpre;
                        dk[i] += q[i] * dpre;
                    }
                }
            }
}

#endif
