/* encoder.c: token + position embedding, CPU reference. */
#include "ops.h"

void op_encoder_forward_cpu(float *out, const int32_t *inp, const float *wte, const float *wpe,
                            int B, int T, int C)
{
#pragma omp parallel for collapse(2)
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            float *o = out + ((size_t)b * T + t) * C;
            const float *e = wte + (size_t)inp[b * T + t] * C, *p = wpe + (size_t)t * C;
#pragma omp simd
            for (int i = 0; i < C; i++)
                o[i] = e[i] + p[i];
        }
}

/* dwte is a scatter, serial over (b,t): two positions may share a token,
 * and a parallel scatter would need atomics and lose determinism. dwpe is
 * a sum over the batch, parallel over positions. */
void op_encoder_backward_cpu(float *dwte, float *dwpe, const float *dout, const int32_t *inp,
                             int B, int T, int C, int add_dwpe)
{
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            const float *d = dout + ((size_t)b * T + t) * C;
            float *e = dwte + (size_t)inp[b * T + t] * C;
#pragma omp simd
            for (int i = 0; i < C; i++)
                e[i] += d[i];
        }
#pragma omp parallel for
    for (int t = 0; t < T; t++) {
        float *p = dwpe + (size_t)t * C;
        for (int i = 0; i < C; i++) {
            float s = add_dwpe ? p[i] : 0.0f;
            for (int b = 0; b < B; b++)
                s += dout[((size_t)b * T + t) * C + i];
            p[i] = s;
        }
    }
}
