/* adamw.c: one AdamW step (Loshchilov & Hutter: decay decoupled from the
 * adaptive update), CPU reference. Element-wise, so a shard of a flat
 * buffer is updated exactly as the whole would be. */
#include "ops.h"

#include <math.h>

void op_adamw_cpu(float *param, const float *grad, float *m, float *v, size_t n, float lr,
                  float beta1, float beta2, float eps, float weight_decay, int t)
{
    float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) {
        float g = grad[i];
        float mi = beta1 * m[i] + (1.0f - beta1) * g;
        float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
        m[i] = mi;
        v[i] = vi;
        param[i] -= lr * ((mi / c1) / (sqrtf(vi / c2) + eps) + weight_decay * param[i]);
    }
}
