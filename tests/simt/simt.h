/* simt.h: a SIMT emulator that runs the CUDA kernels of kernels/cuda on the
 * CPU, so that CI (no GPU) executes their real source against the CPU
 * reference. tests/simt/local.mk compiles each .cu as C++ with this header
 * forced in, after rewriting its launches `k<<<grid, block, smem, stream>>>(..)`
 * as `simt::launch("k", grid, block, smem, stream)[k](..)`.
 *
 * A launch runs at once, block after block; a block's threads are fibers on
 * the calling thread. __syncthreads, __syncwarp and the warp intrinsics are
 * barriers where the scheduler switches fibers, so reductions, shuffles and
 * __shared__ arrays (function statics: one block runs at a time; each block
 * finds them filled with NaNs) work as written. What it catches that a GPU reports badly or not at all: bad launch
 * configurations, a warp intrinsic whose mask names a lane that has exited or
 * waits somewhere else, barriers that can never complete, and (on buffers
 * from simt_alloc) reads and writes out of bounds. What it cannot tell:
 * speed, the memory model, races between blocks, or how a GPU rounds expf.
 * Not supported: dynamic shared memory, cooperative groups, streams (all
 * work is synchronous). */
#ifndef GT_SIMT_H
#define GT_SIMT_H

/* Defined before the CUDA headers, which keep a definition they find. */
#define __global__
#define __device__
#define __host__
/* One block runs at a time, so a block's shared memory is a function's
 * statics, kept in one section that each block starts by poisoning. */
#define __shared__ static __attribute__((section("simt_shared")))
#define __launch_bounds__(...)

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

namespace simt {

extern uint3 block_idx;
extern dim3 block_dim, grid_dim;

uint3 thread_idx(void);
int lane(void);
void syncthreads(void);
void syncwarp(unsigned mask);
/* The warp's exchange: every lane of mask offers v and gets src_lane's. */
uint64_t exchange(unsigned mask, uint64_t v, int src_lane);
/* Every lane of mask offers pred; returns the ballot of the lanes in mask. */
unsigned ballot(unsigned mask, int pred);

struct launch_config;
void run(const launch_config &c, void (*body)(void *), void *ctx);

template <typename... P> struct bound_launch;

/* An argument as the kernel's parameter; NULL (an integer once forwarded)
 * as a pointer. */
template <typename P, typename A> inline P convert(A &&a)
{
    if constexpr (std::is_pointer_v<P> && std::is_integral_v<std::decay_t<A>>)
        return a == 0 ? nullptr : throw "simt: a non-zero integer passed as a pointer";
    else
        return static_cast<P>(std::forward<A>(a));
}

struct launch_config {
    const char *name;
    dim3 grid, block;
    size_t smem_bytes;
    cudaStream_t stream;
    template <typename... P> bound_launch<P...> operator[](void (*k)(P...)) const { return {*this, k}; }
};

/* The kernel's arguments are converted to its parameter types once, as
 * CUDA copies them; each thread gets its own copy (kernels modify them). */
template <typename... P> struct bound_launch {
    launch_config c;
    void (*k)(P...);
    template <typename... A> void operator()(A &&...a) const
    {
        static_assert(sizeof...(A) == sizeof...(P), "kernel launched with a wrong number of arguments");
        struct call {
            void (*k)(P...);
            std::tuple<P...> args;
        } cl{k, std::tuple<P...>(convert<P>(std::forward<A>(a))...)};
        run(c, [](void *p) { std::apply(static_cast<call *>(p)->k, static_cast<call *>(p)->args); }, &cl);
    }
};

inline launch_config launch(const char *name, dim3 grid, dim3 block, size_t smem_bytes = 0, cudaStream_t stream = 0)
{
    return launch_config{name, grid, block, smem_bytes, stream};
}

template <typename T> inline uint64_t bits_of(T v)
{
    static_assert(sizeof(T) <= sizeof(uint64_t), "shuffles move at most 8 bytes");
    uint64_t b = 0;
    memcpy(&b, &v, sizeof v);
    return b;
}
template <typename T> inline T from_bits(uint64_t b)
{
    T v;
    memcpy(&v, &b, sizeof v);
    return v;
}

} /* namespace simt */

/* The built-in variables, per fiber. */
#define threadIdx (::simt::thread_idx())
#define blockIdx (::simt::block_idx)
#define blockDim (::simt::block_dim)
#define gridDim (::simt::grid_dim)
#define warpSize 32

inline void __syncthreads(void) { simt::syncthreads(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { simt::syncwarp(mask); }

/* Shuffles as the CUDA programming guide defines them for width w: a lane
 * reads within its own segment of w lanes, else gets its own value. */
template <typename T> inline T __shfl_sync(unsigned mask, T v, int src, int w = warpSize)
{
    int l = simt::lane(), base = l / w * w;
    return simt::from_bits<T>(simt::exchange(mask, simt::bits_of(v), base + src % w));
}
template <typename T> inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int w = warpSize)
{
    int l = simt::lane(), src = l ^ lane_mask;
    return simt::from_bits<T>(simt::exchange(mask, simt::bits_of(v), src / w == l / w ? src : l));
}
template <typename T> inline T __shfl_down_sync(unsigned mask, T v, unsigned d, int w = warpSize)
{
    int l = simt::lane(), src = l + (int)d;
    return simt::from_bits<T>(simt::exchange(mask, simt::bits_of(v), src / w == l / w ? src : l));
}
template <typename T> inline T __shfl_up_sync(unsigned mask, T v, unsigned d, int w = warpSize)
{
    int l = simt::lane(), src = l - (int)d;
    return simt::from_bits<T>(simt::exchange(mask, simt::bits_of(v), src >= l / w * w ? src : l));
}
inline unsigned __ballot_sync(unsigned mask, int pred) { return simt::ballot(mask, pred); }
inline int __all_sync(unsigned mask, int pred) { return simt::ballot(mask, pred) == mask; }
inline int __any_sync(unsigned mask, int pred) { return simt::ballot(mask, pred) != 0; }

/* Fibers switch only at barriers, so a plain read-modify-write is atomic. */
template <typename T> inline T atomicAdd(T *p, T v)
{
    T old = *p;
    *p = old + v;
    return old;
}
template <typename T> inline T atomicMax(T *p, T v)
{
    T old = *p;
    *p = old < v ? v : old;
    return old;
}
template <typename T> inline T atomicCAS(T *p, T expected, T v)
{
    T old = *p;
    if (old == expected)
        *p = v;
    return old;
}

/* Device functions CUDA gives host code no definition of. */
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long min(long a, long b) { return a < b ? a : b; }
inline long max(long a, long b) { return a > b ? a : b; }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __fdividef(float a, float b) { return a / b; }
template <typename T> inline T __ldg(const T *p) { return *p; }

/* tests/simt/simt_mem.h: the buffers that stand for device memory */
#include "simt_mem.h"

#endif
