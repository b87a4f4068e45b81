/* crossentropy.c: fused softmax + cross-entropy over a padded vocabulary,
 * CPU reference. Columns V..Vp-1 are padding (GEMM-friendly widths) and
 * never get probability or gradient. */
#include "ops.h"

#include <math.h>

void op_crossentropy_forward_cpu(float *losses, float *probs, const float *logits,
                                 const int32_t *targets, int N, int V, int Vp)
{
#pragma omp parallel for
    for (int n = 0; n < N; n++) {
        const float *l = logits + (size_t)n * Vp;
        float *p = probs + (size_t)n * Vp;
        float maxv = -INFINITY;
        for (int i = 0; i < V; i++)
            if (l[i] > maxv)
                maxv = l[i];
        float sum = 0.0f;
        for (int i = 0; i < V; i++) {
            p[i] = expf(l[i] - maxv);
            sum += p[i];
        }
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
        for (int i = 0; i < V; i++)
            d[i] = (p[i] - (i == targets[n] ? 1.0f : 0.0f)) * dloss;
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
        float maxv = -INFINITY;
        for (int i = 0; i < V; i++)
            if (l[i] > maxv)
                maxv = l[i];
        float sum = 0.0f;
        for (int i = 0; i < V; i++)
            sum += expf(l[i] - maxv);
        losses[n] = logf(sum) + maxv - l[targets[n]];
        if (dloss == 0.0f)
            continue;
        /* the same operations as the unfused forward then backward: same bits */
        for (int i = 0; i < V; i++) {
            float p = expf(l[i] - maxv) / sum;
            l[i] = (p - (i == targets[n] ? 1.0f : 0.0f)) * dloss;
        }
        for (int i = V; i < Vp; i++)
            l[i] = 0.0f;
    }
}
