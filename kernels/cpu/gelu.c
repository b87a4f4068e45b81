/* gelu.c: GELU with GPT-2's tanh approximation, CPU reference. */
#include "ops.h"

#include "cpu.h"

#include <math.h>

void op_gelu_forward_cpu(float *out, const float *inp, size_t n)
{
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) {
        out[i] = gelu_value(inp[i]);
    }
}

void op_gelu_backward_cpu(float *dinp, const float *inp, const float *dout, size_t n)
{
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float u = GELU_SCALE * (x + 0.044715f * x * x * x);
        float th = tanh_fast(u), sech2 = 1.0f - th * th;
        float g = 0.5f * (1.0f + th) + 0.5f * x * sech2 * GELU_SCALE * (1.0f + 3.0f * 0.044715f * x * x);
        dinp[i] += g * dout[i];
    }
}
