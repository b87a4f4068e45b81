/* attention.c: causal multi-head self-attention, CPU reference. q, k and v
 * come packed per position as (q | k | v), each C wide and split into NH
 * heads of C/NH. The forward keeps the probabilities att for the backward. */
#include "ops.h"

#include <math.h>
#include <string.h>

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
