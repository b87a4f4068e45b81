/* adamw.c: one AdamW step (Loshchilov & Hutter: decay decoupled from the
 * adaptive update), CPU reference, and its AVX-512 lanes (cpu_adamw_span).
 * Element-wise, so a shard of a flat buffer is updated exactly as the whole
 * would be. */
/* No FMA contraction: the lanes must give the bits of the scalar formula. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#elif defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#include "ops.h"
#include "cpu.h"

#include <math.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* The scalar formula of adamw_span, op for op (no FMA), in 16 lanes. */
__attribute__((target("avx512f"))) static size_t span_avx512(float *param, const float *grad, float *m, float *v,
                                                             size_t lo, size_t hi, float lr, float beta1,
                                                             float beta2, float c1, float c2, float eps, float wd,
                                                             float grad_scale)
{
    const __m512 b1 = _mm512_set1_ps(beta1), nb1 = _mm512_set1_ps(1.0f - beta1), b2 = _mm512_set1_ps(beta2),
                 nb2 = _mm512_set1_ps(1.0f - beta2), vc1 = _mm512_set1_ps(c1), vc2 = _mm512_set1_ps(c2),
                 veps = _mm512_set1_ps(eps), vwd = _mm512_set1_ps(wd), vlr = _mm512_set1_ps(lr),
                 vscale = _mm512_set1_ps(grad_scale);
    size_t i = lo;
    for (; i + 16 <= hi; i += 16) {
        __m512 g = _mm512_mul_ps(_mm512_loadu_ps(grad + i), vscale);
        __m512 mi = _mm512_add_ps(_mm512_mul_ps(b1, _mm512_loadu_ps(m + i)), _mm512_mul_ps(nb1, g));
        __m512 vi = _mm512_add_ps(_mm512_mul_ps(b2, _mm512_loadu_ps(v + i)), _mm512_mul_ps(_mm512_mul_ps(nb2, g), g));
        _mm512_storeu_ps(m + i, mi);
        _mm512_storeu_ps(v + i, vi);
        __m512 p = _mm512_loadu_ps(param + i);
        __m512 step = _mm512_div_ps(_mm512_div_ps(mi, vc1), _mm512_add_ps(_mm512_sqrt_ps(_mm512_div_ps(vi, vc2)), veps));
        _mm512_storeu_ps(param + i, _mm512_sub_ps(p, _mm512_mul_ps(vlr, _mm512_add_ps(step, _mm512_mul_ps(vwd, p)))));
    }
    return i;
}
#endif

/* The first multiple of 16 elements of [lo, hi) in AVX-512 lanes where the CPU has them; where it stopped. */
static size_t span16(float *param, const float *grad, float *m, float *v, size_t lo, size_t hi, float lr,
                     float beta1, float beta2, float c1, float c2, float eps, float wd, float grad_scale)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (__builtin_cpu_supports("avx512f"))
        return span_avx512(param, grad, m, v, lo, hi, lr, beta1, beta2, c1, c2, eps, wd, grad_scale);
#endif
    (void)param, (void)grad, (void)m, (void)v, (void)hi, (void)lr, (void)beta1, (void)beta2, (void)c1, (void)c2;
    (void)eps, (void)wd, (void)grad_scale;
    return lo;
}

/* One AdamW step over [lo, hi) with decay wd and the gradient times
 * grad_scale; c1, c2 are the bias corrections. Sixteen lanes at a time on
 * AVX-512, then four on SSE (the compiler keeps a loop with sqrtf scalar for
 * errno's sake); the lanes compute what the scalar tail computes, bit for
 * bit. Two divisions and a square root per element keep SSE alone from
 * the memory's speed. */
void cpu_adamw_span(float *param, const float *grad, float *m, float *v, size_t lo, size_t hi, float lr,
                    float beta1, float beta2, float c1, float c2, float eps, float wd, float grad_scale)
{
    size_t i = span16(param, grad, m, v, lo, hi, lr, beta1, beta2, c1, c2, eps, wd, grad_scale);
#ifdef __SSE2__
    const __m128 b1 = _mm_set1_ps(beta1), nb1 = _mm_set1_ps(1.0f - beta1), b2 = _mm_set1_ps(beta2),
                 nb2 = _mm_set1_ps(1.0f - beta2), vc1 = _mm_set1_ps(c1), vc2 = _mm_set1_ps(c2),
                 veps = _mm_set1_ps(eps), vwd = _mm_set1_ps(wd), vlr = _mm_set1_ps(lr),
                 vscale = _mm_set1_ps(grad_scale);
    for (; i + 4 <= hi; i += 4) {
        __m128 g = _mm_mul_ps(_mm_loadu_ps(grad + i), vscale);
        __m128 mi = _mm_add_ps(_mm_mul_ps(b1, _mm_loadu_ps(m + i)), _mm_mul_ps(nb1, g));
        __m128 vi = _mm_add_ps(_mm_mul_ps(b2, _mm_loadu_ps(v + i)), _mm_mul_ps(_mm_mul_ps(nb2, g), g));
        _mm_storeu_ps(m + i, mi);
        _mm_storeu_ps(v + i, vi);
        __m128 p = _mm_loadu_ps(param + i);
        __m128 step = _mm_div_ps(_mm_div_ps(mi, vc1), _mm_add_ps(_mm_sqrt_ps(_mm_div_ps(vi, vc2)), veps));
        _mm_storeu_ps(param + i, _mm_sub_ps(p, _mm_mul_ps(vlr, _mm_add_ps(step, _mm_mul_ps(vwd, p)))));
    }
#endif
    for (; i < hi; i++) {
        float g = grad[i] * grad_scale;
        float mi = beta1 * m[i] + (1.0f - beta1) * g;
        float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
        m[i] = mi;
        v[i] = vi;
        param[i] -= lr * ((mi / c1) / (sqrtf(vi / c2) + eps) + wd * param[i]);
    }
}

void op_adamw_cpu(float *param, const float *grad, float *m, float *v, size_t n, float lr,
                  float beta1, float beta2, float eps, float weight_decay, int t)
{
    float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
#pragma omp parallel for schedule(static)
    for (size_t lo = 0; lo < n; lo += 4096)
        cpu_adamw_span(param, grad, m, v, lo, n - lo > 4096 ? lo + 4096 : n, lr, beta1, beta2, c1, c2, eps,
                       weight_decay, 1.0f);
}
