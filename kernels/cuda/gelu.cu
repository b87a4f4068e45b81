/* gelu.cu: GELU (GPT-2's tanh approximation) and its backward on the GPU;
 * kernels/cpu/gelu.c is the reference, with the same formulas. */
#include "common.cuh"

template <typename T> __global__ void gelu_forward_kernel(T *out, const T *inp, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        out[i] = from_f32<T>(gelu_f(to_f32(inp[i])));
}

/* dinp += GELU'(inp) * dout */
template <typename T> __global__ void gelu_backward_kernel(T *dinp, const T *inp, const T *dout, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        float x = to_f32(inp[i]);
        float u = GELU_SCALE * (x + 0.044715f * x * x * x);
        float th = tanh_ref(u), sech2 = 1.0f - th * th;
        float g = 0.5f * (1.0f + th) + 0.5f * x * sech2 * GELU_SCALE * (1.0f + 3.0f * 0.044715f * x * x);
        dinp[i] = from_f32<T>(to_f32(dinp[i]) + g * to_f32(dout[i]));
    }
}

extern "C" int kc_gelu_forward(void *out, const void *inp, int dt, long n, cudaStream_t stream)
{
    kc_range r("gelu_forward");
    KC_DISPATCH(dt, S, gelu_forward_kernel<S><<<kc_blocks(n, 256), 256, 0, stream>>>((S *)out, (const S *)inp, n));
    return kc_launched();
}

extern "C" int kc_gelu_backward(void *dinp, const void *inp, const void *dout, int dt, long n, cudaStream_t stream)
{
    kc_range r("gelu_backward");
    KC_DISPATCH(dt, S, gelu_backward_kernel<S><<<kc_blocks(n, 256), 256, 0, stream>>>((S *)dinp, (const S *)inp,
                                                                                      (const S *)dout, n));
    return kc_launched();
}
