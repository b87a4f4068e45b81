/* gelu.c: GELU with GPT-2's tanh approximation, CPU reference. The loops
 * vectorize: tanh goes through exp_fast (cpu.h), not libm; the file is
 * compiled without trapping math, without which GCC keeps exp_fast's clamps
 * as branches, and without contracting a * b + c into one FMA, so that a
 * vector lane computes the bits the scalar gelu_value computes (the fused
 * bias+GELU of matmul.c). Where GCC can make ifunc clones, the per-thread
 * spans are built for AVX-512, AVX2 and the baseline, picked at load time.
 * The loops say omp simd: the library's -O3 is overridden by the -O2 of
 * the default CFLAGS, which come last, and -O2 vectorizes only cheap loops. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math", "fp-contract=off")
#endif

#include "ops.h"

#include "cpu.h"

#include <math.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define VECTOR_CLONES
#endif

enum { SPAN = 4096 }; /* elements per call of a span function */

VECTOR_CLONES void cpu_gelu_span(float *restrict out, const float *restrict inp, size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        out[i] = gelu_value(inp[i]);
}

VECTOR_CLONES static void backward_span(float *restrict dinp, const float *restrict inp,
                                        const float *restrict dout, size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float u = GELU_SCALE * (x + 0.044715f * x * x * x);
        float th = tanh_fast(u), sech2 = 1.0f - th * th;
        float g = 0.5f * (1.0f + th) + 0.5f * x * sech2 * GELU_SCALE * (1.0f + 3.0f * 0.044715f * x * x);
        dinp[i] += g * dout[i];
    }
}

void op_gelu_forward_cpu(float *out, const float *inp, size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t lo = 0; lo < n; lo += SPAN)
        cpu_gelu_span(out + lo, inp + lo, n - lo < SPAN ? n - lo : SPAN);
}

void op_gelu_backward_cpu(float *dinp, const float *inp, const float *dout, size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t lo = 0; lo < n; lo += SPAN)
        backward_span(dinp + lo, inp + lo, dout + lo, n - lo < SPAN ? n - lo : SPAN);
}
