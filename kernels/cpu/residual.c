/* residual.c: the residual add and its backward, CPU reference. */
#include "ops.h"

void op_residual_forward_cpu(float *out, const float *a, const float *b, size_t n)
{
#pragma omp parallel for
    for (size_t i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}

void op_residual_backward_cpu(float *da, float *db, const float *dout, size_t n)
{
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) {
        da[i] += dout[i];
        db[i] += dout[i];
    }
}
