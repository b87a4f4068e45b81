/* cpu.h: private helpers of the CPU kernels: how an OpenMP team splits a range,
 * and the rule for CBLAS. Not a public header: the trainer sees ops.h only.
 *
 * One thread pool. GEMMs are called from inside the ops' OpenMP regions, each
 * thread on its own block of rows, with the BLAS itself single-threaded
 * (cpu_blas_serial). A BLAS with its own pool (OpenBLAS's pthread build) next
 * to libgomp's pool makes two sets of threads that spin or yield against each
 * other on every op boundary; on 2 cores that cost more than the math. The
 * split is a function of the team size only, so results are bitwise the same
 * for a given thread count. */
#ifndef TR_KERNELS_CPU_H
#define TR_KERNELS_CPU_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Rows [*lo, *hi) of [0, n) for the calling thread of the current team, in
 * chunks that are multiples of align (but the last). Outside a parallel
 * region the caller gets everything. */
static inline void team_range(int n, int align, int *lo, int *hi)
{
#ifdef _OPENMP
    int nt = omp_get_num_threads(), me = omp_get_thread_num();
#else
    int nt = 1, me = 0;
#endif
    int chunk = (n + nt - 1) / nt;
    chunk = (chunk + align - 1) / align * align;
    *lo = me * chunk < n ? me * chunk : n;
    *hi = *lo + chunk < n ? *lo + chunk : n;
}

/* e^x in plain float arithmetic (Cephes' expf: x = n ln2 + r, |r| <= ln2/2,
 * a degree-7 polynomial in r, 2^n put in the exponent bits), within 2 ulp
 * of expf for x in [-87, 88] and clamped outside. A call to libm's expf
 * keeps a loop scalar; this one the compiler vectorizes, and a vector lane
 * gives the same bits as the scalar code. */
static inline float exp_fast(float x)
{
    x = __builtin_isless(x, -87.0f) ? -87.0f : x; /* quiet compares: no branch */
    x = __builtin_isgreater(x, 88.0f) ? 88.0f : x;
    /* n = round(x / ln2) by the 1.5 * 2^23 trick: no libm call, no SSE4.1 */
    float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    union { int32_t i; float f; } two_n = {.i = ((int32_t)n + 127) << 23};
    return p * two_n.f;
}

/* GELU, GPT-2's tanh approximation. tanh through one exp: glibc's tanhf
 * goes through expm1f and was a third of a gpt-tiny step. Absolute error
 * ~1e-7 near 0 (cancellation), exact +-1 in the tails. */
#define GELU_SCALE 0.7978845608028654f /* sqrt(2/pi) */
static inline float tanh_fast(float u) { return 1.0f - 2.0f / (exp_fast(2.0f * u) + 1.0f); }
static inline float gelu_value(float x)
{
    return 0.5f * x * (1.0f + tanh_fast(GELU_SCALE * (x + 0.044715f * x * x * x)));
}

/* out[i] = gelu_value(inp[i]) for i < n, in vector lanes (gelu.c): for the
 * fused bias+GELU epilogue of a GEMM, the bits op_gelu_forward_cpu gives. */
void cpu_gelu_span(float *restrict out, const float *restrict inp, size_t n);

/* One AdamW step over [lo, hi) with decay wd and the gradient times
 * grad_scale; c1, c2 are the bias corrections (adamw.c: sixteen lanes on
 * AVX-512, then four on SSE, then scalar, all with the scalar formula's bits). */
void cpu_adamw_span(float *param, const float *grad, float *m, float *v, size_t lo, size_t hi, float lr,
                    float beta1, float beta2, float c1, float c2, float eps, float wd, float grad_scale);

/* The backward's GEMMs without the BLAS (gemm.c): rows [m0, m1) of C (M,N),
 * row-major ldc, = (accumulate: +=) A @ B, with A(i, k) = a[i * ai + k * ak]
 * (ak 1: A by rows; ai 1: A by columns, a transposed operand) and B (K,N)
 * row-major ldb. row_sums (NULL, or with ai 1 only): row_sums[i] += the sum
 * of A's row i, the bias gradient read while A streams by. Only where
 * cpu_gemm_usable(N) said yes: AVX-512 and N a multiple of 32. */
bool cpu_gemm_usable(int N);
void cpu_gemm_rows(int m0, int m1, int N, int K, const float *a, size_t ai, size_t ak, const float *b, size_t ldb,
                   float *c, size_t ldc, bool accumulate, float *row_sums);

/* Makes the BLAS single-threaded, once per process; every op that calls
 * CBLAS calls this first. */
void cpu_blas_serial(void);

#endif
