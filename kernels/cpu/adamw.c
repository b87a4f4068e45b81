/* adamw.c: one AdamW step (Loshchilov & Hutter: decay decoupled from the
 * adaptive update), CPU reference. Element-wise, so a shard of a flat
 * buffer is updated exactly as the whole would be. */
#include "ops.h"
#include "cpu.h"

#include <math.h>

void op_adamw_cpu(float *param, const float *grad, float *m, float *v, size_t n, float lr,
                  float beta1, float beta2, float eps, float weight_decay, int t)
{
    float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
#pragma omp parallel for schedule(static)
    for (size_t lo = 0; lo < n; lo += 4096)
        adamw_span(param, grad, m, v, lo, n - lo > 4096 ? lo + 4096 : n, lr, beta1, beta2, c1, c2, eps,
                   weight_decay, 1.0f);
}
