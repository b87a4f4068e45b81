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

/* GELU, GPT-2's tanh approximation. tanh through one expf: glibc's tanhf
 * goes through expm1f and was a third of a gpt-tiny step. Absolute error
 * ~1e-7 near 0 (cancellation), exact +-1 in the tails. */
#define GELU_SCALE 0.7978845608028654f /* sqrt(2/pi) */
static inline float tanh_fast(float u) { return 1.0f - 2.0f / (expf(2.0f * u) + 1.0f); }
static inline float gelu_value(float x)
{
    return 0.5f * x * (1.0f + tanh_fast(GELU_SCALE * (x + 0.044715f * x * x * x)));
}

/* Makes the BLAS single-threaded, once per process; every op that calls
 * CBLAS calls this first. */
void cpu_blas_serial(void);

#endif
