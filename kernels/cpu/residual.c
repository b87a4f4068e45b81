/* residual.c: the residual add and its backward, CPU reference; and the
 * add followed by ReLU in one pass (a ResNet block's end). */
#include "ops.h"

/* Elements per chunk handed to a thread as it comes free. */
enum { ELEMS = 16384 };

void op_residual_forward_cpu(float *out, const float *a, const float *b, size_t n)
{
#pragma omp parallel for simd schedule(static)
    for (size_t i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}

void op_residual_backward_cpu(float *da, float *db, const float *dout, size_t n)
{
#pragma omp parallel for simd schedule(static)
    for (size_t i = 0; i < n; i++) {
        da[i] += dout[i];
        db[i] += dout[i];
    }
}

void op_residual_relu_forward_cpu(float *restrict out, const float *restrict a, const float *restrict b, size_t n)
{
#pragma omp parallel for schedule(dynamic, ELEMS)
    for (size_t i = 0; i < n; i++) {
        float v = a[i] + b[i];
        out[i] = v > 0.0f ? v : 0.0f;
    }
}

void op_residual_relu_backward_cpu(float *restrict da, float *restrict db, const float *restrict out,
                                   const float *restrict dout, size_t n)
{
#pragma omp parallel for schedule(dynamic, ELEMS)
    for (size_t i = 0; i < n; i++) {
        float d = out[i] > 0.0f ? dout[i] : 0.0f;
        if (da)
            da[i] += d;
        if (db)
            db[i] += d;
    }
}
