/* residual.cu: the residual add and its backward on the GPU (reference:
 * kernels/cpu/residual.c). The stream (out, a, da, dout) is fp32; the
 * branch (b, db) is in the activation dtype. */
#include "common.cuh"

template <typename T> __global__ void residual_forward_kernel(float *out, const float *a, const T *b, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        out[i] = a[i] + to_f32(b[i]);
}

template <typename T> __global__ void residual_backward_kernel(float *da, T *db, const float *dout, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        float d = dout[i];
        da[i] += d;
        db[i] = from_f32<T>(to_f32(db[i]) + d);
    }
}

extern "C" int kc_residual_forward(float *out, const float *a, const void *b, int dt, long n, cudaStream_t stream)
{
    kc_range r("residual_forward");
    KC_DISPATCH(dt, S, residual_forward_kernel<S><<<kc_blocks(n, 256), 256, 0, stream>>>(out, a, (const S *)b, n));
    return kc_launched();
}

extern "C" int kc_residual_backward(float *da, void *db, int dt, const float *dout, long n, cudaStream_t stream)
{
    kc_range r("residual_backward");
    KC_DISPATCH(dt, S, residual_backward_kernel<S><<<kc_blocks(n, 256), 256, 0, stream>>>(da, (S *)db, dout, n));
    return kc_launched();
}
