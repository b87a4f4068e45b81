/* cast.cu: dtype conversions on the GPU (fp32 <-> bf16, fp32 <-> fp16), the
 * storage casts mixed precision needs. Rounding is to nearest even, as the
 * CPU reference does, so both backends store identical low-precision bits.
 * kc_cast converts between any two storage types (the backend's cast op).
 * Kernels sit above their launchers; each launcher opens an NVTX range. */
#include "common.cuh"

#define THREADS 256

__global__ void f32_to_bf16_kernel(__nv_bfloat16 *out, const float *in, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        out[i] = __float2bfloat16_rn(in[i]);
}

__global__ void bf16_to_f32_kernel(float *out, const __nv_bfloat16 *in, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        out[i] = __bfloat162float(in[i]);
}

__global__ void f32_to_f16_kernel(__half *out, const float *in, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        out[i] = __float2half_rn(in[i]);
}

__global__ void f16_to_f32_kernel(float *out, const __half *in, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        out[i] = __half2float(in[i]);
}

/* Any storage type to any other, through fp32. */
template <typename D, typename S> __global__ void cast_kernel(D *out, const S *in, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        out[i] = from_f32<D>(to_f32(in[i]));
}

static unsigned blocks_for(long n) { return kc_blocks(n, THREADS); }

extern "C" int kc_cast_f32_to_bf16(uint16_t *out, const float *in, long n, cudaStream_t stream)
{
    kc_range r("cast f32->bf16");
    f32_to_bf16_kernel<<<blocks_for(n), THREADS, 0, stream>>>((__nv_bfloat16 *)out, in, n);
    return kc_launched();
}

extern "C" int kc_cast_bf16_to_f32(float *out, const uint16_t *in, long n, cudaStream_t stream)
{
    kc_range r("cast bf16->f32");
    bf16_to_f32_kernel<<<blocks_for(n), THREADS, 0, stream>>>(out, (const __nv_bfloat16 *)in, n);
    return kc_launched();
}

extern "C" int kc_cast_f32_to_f16(uint16_t *out, const float *in, long n, cudaStream_t stream)
{
    kc_range r("cast f32->f16");
    f32_to_f16_kernel<<<blocks_for(n), THREADS, 0, stream>>>((__half *)out, in, n);
    return kc_launched();
}

extern "C" int kc_cast_f16_to_f32(float *out, const uint16_t *in, long n, cudaStream_t stream)
{
    kc_range r("cast f16->f32");
    f16_to_f32_kernel<<<blocks_for(n), THREADS, 0, stream>>>(out, (const __half *)in, n);
    return kc_launched();
}

extern "C" void kc_nvtx_ranges(int on) { kc_ranges_on = on; }

extern "C" int kc_cast(void *dst, int dst_dt, const void *src, int src_dt, long n, cudaStream_t stream)
{
    kc_range r("cast");
    KC_DISPATCH(dst_dt, D, KC_DISPATCH(src_dt, S, cast_kernel<D, S><<<blocks_for(n), THREADS, 0, stream>>>(
                                                      (D *)dst, (const S *)src, n)));
    return kc_launched();
}
