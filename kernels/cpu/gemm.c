/* gemm.c: the linear layer's backward GEMMs on AVX-512, without packing.
 *
 * Both backward products already have their operands in the order a kernel
 * wants: dinp += dout @ W reads W by rows, and dW += dout^T @ inp reads inp
 * by rows, so the vector operand B is read in place, 32 columns at a time,
 * and the broadcast operand A (rows of dout, or columns of dout: 12 floats
 * side by side) is read in place too. The BLAS packs both operands of every
 * call, on each thread: on the trainer's shapes that packing was a tenth of
 * the GEMM time (bench/results/2026-11-26-trainer-gemm.md). The forward's
 * inp @ W^T would need W transposed, so it stays on the BLAS.
 *
 * Blocking: K in chunks of at most 384 (the 12 rows of A stay in L1, 18 KiB),
 * 384 columns of B at a time (a block of B stays in L2, 576 KiB), and a 12 x
 * 32 tile of C in 24 registers. The loops are fixed by the shape, so results
 * are bitwise the same run to run. Built only where GCC can target AVX-512
 * in one function; elsewhere, and on CPUs without it, the callers use the
 * BLAS (cpu_gemm_usable). */
#include "cpu.h"

#include <stdbool.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define GEMM_AVX512 1
#include <immintrin.h>
#endif

enum { MR = 12, NR = 32, KC_MAX = 384, NC = 384 };

bool cpu_gemm_usable(int N)
{
#ifdef GEMM_AVX512
    /* reads the CPU model libgcc filled in at load time: no cache of our own */
    return __builtin_cpu_supports("avx512f") && N % NR == 0;
#else
    (void)N;
    return false;
#endif
}

#ifdef GEMM_AVX512
#define AVX512 __attribute__((target("avx512f")))

/* The mr x 32 tile at c (+)= sum over k < kc of A(i, k) B(k, 0..31), with
 * A(i, k) = a[i * ai + k * ak]. load: start from c, else from zero. sums
 * (only with ai 1, A's rows side by side): sums[i] += sum over k of A(i, k),
 * one masked load and add per k (the bias gradient, from the first tile of
 * a row block). */
static inline __attribute__((always_inline)) AVX512 void tile(int mr, float *c, size_t ldc, const float *a,
                                                              size_t ai, size_t ak, const float *b, size_t ldb,
                                                              int kc, bool load, float *sums)
{
    __m512 lo[MR], hi[MR], row_sum = _mm512_setzero_ps();
    __mmask16 rows = (__mmask16)((1u << mr) - 1);
#pragma GCC unroll 12
    for (int i = 0; i < mr; i++) {
        lo[i] = load ? _mm512_loadu_ps(c + i * ldc) : _mm512_setzero_ps();
        hi[i] = load ? _mm512_loadu_ps(c + i * ldc + 16) : _mm512_setzero_ps();
    }
    for (int k = 0; k < kc; k++) {
        __m512 b0 = _mm512_loadu_ps(b + (size_t)k * ldb), b1 = _mm512_loadu_ps(b + (size_t)k * ldb + 16);
        const float *ak_ = a + (size_t)k * ak;
        if (sums)
            row_sum = _mm512_add_ps(row_sum, _mm512_maskz_loadu_ps(rows, ak_));
#pragma GCC unroll 12
        for (int i = 0; i < mr; i++) {
            __m512 x = _mm512_set1_ps(ak_[i * ai]);
            lo[i] = _mm512_fmadd_ps(x, b0, lo[i]);
            hi[i] = _mm512_fmadd_ps(x, b1, hi[i]);
        }
    }
#pragma GCC unroll 12
    for (int i = 0; i < mr; i++) {
        _mm512_storeu_ps(c + i * ldc, lo[i]);
        _mm512_storeu_ps(c + i * ldc + 16, hi[i]);
    }
    if (sums)
        _mm512_mask_storeu_ps(sums, rows, _mm512_add_ps(_mm512_maskz_loadu_ps(rows, sums), row_sum));
}

/* Full tiles, with the stride of A that is 1 known to the compiler. */
static AVX512 void tile_rows(float *c, size_t ldc, const float *a, size_t ai, const float *b, size_t ldb, int kc,
                             bool load)
{
    tile(MR, c, ldc, a, ai, 1, b, ldb, kc, load, NULL);
}
static AVX512 void tile_cols(float *c, size_t ldc, const float *a, size_t ak, const float *b, size_t ldb, int kc,
                             bool load)
{
    tile(MR, c, ldc, a, 1, ak, b, ldb, kc, load, NULL);
}
static AVX512 void tile_cols_sums(float *c, size_t ldc, const float *a, size_t ak, const float *b, size_t ldb,
                                  int kc, bool load, float *sums)
{
    tile(MR, c, ldc, a, 1, ak, b, ldb, kc, load, sums);
}
static AVX512 void tile_any(float *c, size_t ldc, const float *a, size_t ai, size_t ak, const float *b, size_t ldb,
                            int kc, bool load)
{
    tile(MR, c, ldc, a, ai, ak, b, ldb, kc, load, NULL);
}
/* The last rows of a range, fewer than MR. */
static AVX512 void tile_tail(int mr, float *c, size_t ldc, const float *a, size_t ai, size_t ak, const float *b,
                             size_t ldb, int kc, bool load, float *sums)
{
    switch (mr) {
#define TAIL(n)                                                                                                  \
    case n:                                                                                                      \
        tile(n, c, ldc, a, ai, ak, b, ldb, kc, load, sums);                                                      \
        break;
        TAIL(1) TAIL(2) TAIL(3) TAIL(4) TAIL(5) TAIL(6) TAIL(7) TAIL(8) TAIL(9) TAIL(10) TAIL(11)
#undef TAIL
    }
}

static AVX512 void gemm_rows_avx512(int m0, int m1, int N, int K, const float *a, size_t ai, size_t ak,
                                    const float *b, size_t ldb, float *c, size_t ldc, bool accumulate,
                                    float *row_sums)
{
    int n_k = (K + KC_MAX - 1) / KC_MAX, kc_step = (K + n_k - 1) / n_k; /* even chunks: no short last one */
    for (int k0 = 0; k0 < K; k0 += kc_step) {
        int kc = K - k0 < kc_step ? K - k0 : kc_step;
        bool load = accumulate || k0 > 0;
        for (int n0 = 0; n0 < N; n0 += NC) {
            int n1 = N - n0 < NC ? N : n0 + NC;
            for (int i = m0; i < m1; i += MR) {
                int mr = m1 - i < MR ? m1 - i : MR;
                const float *a_i = a + (size_t)i * ai + (size_t)k0 * ak;
                for (int j = n0; j < n1; j += NR) {
                    float *c_ij = c + (size_t)i * ldc + j, *sums = row_sums && j == 0 ? row_sums + i : NULL;
                    const float *b_j = b + (size_t)k0 * ldb + j;
                    if (mr < MR)
                        tile_tail(mr, c_ij, ldc, a_i, ai, ak, b_j, ldb, kc, load, sums);
                    else if (sums)
                        tile_cols_sums(c_ij, ldc, a_i, ak, b_j, ldb, kc, load, sums);
                    else if (ak == 1)
                        tile_rows(c_ij, ldc, a_i, ai, b_j, ldb, kc, load);
                    else if (ai == 1)
                        tile_cols(c_ij, ldc, a_i, ak, b_j, ldb, kc, load);
                    else
                        tile_any(c_ij, ldc, a_i, ai, ak, b_j, ldb, kc, load);
                }
            }
        }
    }
}
#endif

void cpu_gemm_rows(int m0, int m1, int N, int K, const float *a, size_t ai, size_t ak, const float *b, size_t ldb,
                   float *c, size_t ldc, bool accumulate, float *row_sums)
{
#ifdef GEMM_AVX512
    gemm_rows_avx512(m0, m1, N, K, a, ai, ak, b, ldb, c, ldc, accumulate, row_sums);
#else /* not reached through cpu_gemm_usable; plain loops, so the function is whole everywhere */
    for (int i = m0; i < m1; i++) {
        for (int j = 0; j < N; j++) {
            float s = accumulate ? c[(size_t)i * ldc + j] : 0.0f;
            for (int k = 0; k < K; k++)
                s += a[(size_t)i * ai + (size_t)k * ak] * b[(size_t)k * ldb + j];
            c[(size_t)i * ldc + j] = s;
        }
        for (int k = 0; row_sums && k < K; k++)
            row_sums[i] += a[(size_t)i * ai + (size_t)k * ak];
    }
#endif
}
