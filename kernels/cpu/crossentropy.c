/* crossentropy.c: fused softmax + cross-entropy over a padded vocabulary,
 * CPU reference. Columns V..Vp-1 are padding (GEMM-friendly widths) and
 * never get probability or gradient. The exponentials are exp_fast (cpu.h)
 * in vector lanes; each row's sum is in order, the same in the fused and
 * the unfused classifier, so both give the same bits. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math") /* see gelu.c */
#endif

#include "ops.h"

#include "cpu.h"

#include <math.h>

static float row_max(const float *l, int V)
{
    float maxv = -INFINITY;
#pragma omp simd reduction(max : maxv)
    for (int i = 0; i < V; i++)
        maxv = l[i] > maxv ? l[i] : maxv;
    return maxv;
}

/* e[i] = exp(l[i] - maxv) for i < V (e may be l); returns their sum. */
static float row_exp(float *e, const float *l, float maxv, int V)
{
#pragma omp simd
    for (int i = 0; i < V; i++)
        e[i] = exp_fast(l[i] - maxv);
    float sum = 0.0f;
    for (int i = 0; i < V; i++)
        sum += e[i];
    return sum;
}

void op_crossentropy_forward_cpu(float *losses, float *probs, const float *logits,
                                 const int32_t *targets, int N, int V, int Vp)
{
#pragma omp parallel for
    for (int n = 0; n < N; n++) {
        const float *l = logits + (size_t)n * Vp;
        float *p = probs + (size_t)n * Vp;
        float maxv = row_max(l, V), sum = row_exp(p, l, maxv, V);
#pragma omp simd
        for (int i = 0; i < V; i++)
            p[i] /= sum;
        for (int i = V; i < Vp; i++)
            p[i] = 0.0f;
        /* log-sum-exp rather than log(p): exact even when p underflows */
        losses[n] = logf(sum) + maxv - l[targets[n]];
    }
}

void op_crossentropy_backward_cpu(float *dlogits, const float *probs, const int32_t *targets,
                                  float dloss, int N, int V, int Vp)
{
#pragma omp parallel for
    for (int n = 0; n < N; n++) {
        const float *p = probs + (size_t)n * Vp;
        float *d = dlogits + (size_t)n * Vp;
#pragma omp simd
        for (int i = 0; i < V; i++)
            d[i] = p[i] * dloss;
        d[targets[n]] = (p[targets[n]] - 1.0f) * dloss;
        for (int i = V; i < Vp; i++)
            d[i] = 0.0f;
    }
}

void op_crossentropy_fused_forward_cpu(float *losses, float *logits, const int32_t *targets, float dloss, int N,
                                       int V, int Vp)
{
#pragma omp parallel for
    for (int n = 0; n < N; n++) {
        float *l = logits + (size_t)n * Vp;
        float maxv = row_max(l, V), target_logit = l[targets[n]];
        if (dloss == 0.0f) { /* no gradient: the logits stay */
            float sum = 0.0f;
            for (int i = 0; i < V; i++)
                sum += exp_fast(l[i] - maxv);
            losses[n] = logf(sum) + maxv - target_logit;
            continue;
        }
        /* the same operations as the unfused forward then backward: same bits */
        float sum = row_exp(l, l, maxv, V), target_exp = l[targets[n]];
        losses[n] = logf(sum) + maxv - target_logit;
#pragma omp simd
        for (int i = 0; i < V; i++)
            l[i] = (l[i] / sum) * dloss;
        l[targets[n]] = (target_exp / sum - 1.0f) * dloss;
        for (int i = V; i < Vp; i++)
            l[i] = 0.0f;
    }
}
