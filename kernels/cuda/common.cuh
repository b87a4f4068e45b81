/* common.cuh: what every kernels/cuda/<family>.cu shares: fp32 loads and
 * stores of the three storage types, dtype dispatch in launchers, warp and
 * block reductions in a fixed order (so results do not depend on timing),
 * grid sizes and the NVTX range of a launcher. Private to kernels/cuda. */
#ifndef KERNELS_CUDA_COMMON_CUH
#define KERNELS_CUDA_COMMON_CUH

#include "kernels_cuda.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

/* Storage <-> fp32: every kernel computes in fp32 and rounds to nearest
 * even at its stores, as the CPU reference does (kernels/lowp.h). */
__device__ __forceinline__ float to_f32(float x) { return x; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_f32(__half x) { return __half2float(x); }

template <typename T> __device__ __forceinline__ T from_f32(float x);
template <> __device__ __forceinline__ float from_f32<float>(float x) { return x; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <> __device__ __forceinline__ __half from_f32<__half>(float x) { return __float2half_rn(x); }

/* The value x takes once stored as T. */
template <typename T> __device__ __forceinline__ float round_to(float x) { return to_f32(from_f32<T>(x)); }

/* Runs the statements with T bound to the storage type of dtype `dt`; an
 * unknown dtype returns cudaErrorInvalidValue from the launcher. */
#define KC_DISPATCH(dt, T, ...)                                                   \
    switch (dt) {                                                                 \
    case KC_F32: { typedef float T; __VA_ARGS__; } break;                         \
    case KC_BF16: { typedef __nv_bfloat16 T; __VA_ARGS__; } break;                \
    case KC_F16: { typedef __half T; __VA_ARGS__; } break;                        \
    default: return (int)cudaErrorInvalidValue;                                   \
    }

#define WARP 32

/* GELU, GPT-2's tanh approximation, with tanh through one expf as the CPU
 * reference computes it (kernels/cpu/cpu.h), so both round alike. */
#define GELU_SCALE 0.7978845608028654f /* sqrt(2/pi) */
__device__ __forceinline__ float tanh_ref(float u) { return 1.0f - 2.0f / (expf(2.0f * u) + 1.0f); }
__device__ __forceinline__ float gelu_f(float x)
{
    return 0.5f * x * (1.0f + tanh_ref(GELU_SCALE * (x + 0.044715f * x * x * x)));
}

__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = WARP / 2; o > 0; o /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v)
{
    for (int o = WARP / 2; o > 0; o /= 2)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ double warp_sum_d(double v)
{
    for (int o = WARP / 2; o > 0; o /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* Block-wide sum/max for blocks of a multiple of 32 threads (<= 1024); every
 * thread gets the result. The order is fixed by thread index. */
__device__ __forceinline__ float block_sum(float v)
{
    __shared__ float part[WARP];
    int lane = threadIdx.x % WARP, w = threadIdx.x / WARP, n_warps = blockDim.x / WARP;
    v = warp_sum(v);
    __syncthreads(); /* part[] may still be read by a previous call */
    if (lane == 0)
        part[w] = v;
    __syncthreads();
    v = lane < n_warps ? part[lane] : 0.0f;
    return warp_sum(v);
}
__device__ __forceinline__ float block_max(float v)
{
    __shared__ float part[WARP];
    int lane = threadIdx.x % WARP, w = threadIdx.x / WARP, n_warps = blockDim.x / WARP;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0)
        part[w] = v;
    __syncthreads();
    v = lane < n_warps ? part[lane] : -INFINITY;
    return warp_max(v);
}

/* Grid-stride loops: enough blocks to fill the GPU, never more than the work. */
static inline unsigned kc_blocks(long n, int threads)
{
    long b = (n + threads - 1) / threads;
    return (unsigned)(b < 1 ? 1 : (b > 65535L * 16 ? 65535L * 16 : b));
}

/* A launcher's NVTX range, closed when the launcher returns; none while a
 * caller that opens its own range per op turned them off (kc_nvtx_ranges). */
inline int kc_ranges_on = 1;
struct kc_range {
    bool on;
    explicit kc_range(const char *name) : on(kc_ranges_on != 0)
    {
        if (on)
            nvtxRangePushA(name);
    }
    ~kc_range()
    {
        if (on)
            nvtxRangePop();
    }
};

/* The launch's own error (bad configuration), not an earlier kernel's. */
static inline int kc_launched(void) { return (int)cudaGetLastError(); }

#endif
