/* faulty_kernels.cu: kernels with the bugs the SIMT emulator must catch
 * (tests/simt/simt.h), and one correct warp reduction to show it runs what
 * is right; test_kernels_simt's simt suite launches them. Plain CUDA: built
 * only through the emulator, never by nvcc. */
#include <cuda_runtime.h>

__global__ void warp_sum_kernel(float *out, const float *in)
{
    float v = in[threadIdx.x];
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    out[threadIdx.x] = v;
}

/* writes one element past the end */
__global__ void write_past_end_kernel(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n)
        out[i] = 1.0f;
}

/* reads the element after the last: in[n] */
__global__ void read_past_end_kernel(float *out, const float *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i + 1];
}

/* half the warp leaves, the rest shuffles with the full mask */
__global__ void divergent_shuffle_kernel(float *out)
{
    if (threadIdx.x % 32 < 16)
        return;
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.0f, 1);
}

/* half the warp waits at __syncthreads, the other half at __syncwarp */
__global__ void split_barrier_kernel(float *out)
{
    if (threadIdx.x < 16)
        __syncthreads();
    else
        __syncwarp();
    out[threadIdx.x] = 1.0f;
}

/* lanes read their neighbour's shared slot without __syncwarp */
__global__ void missing_syncwarp_kernel(float *out)
{
    __shared__ float s[32];
    s[threadIdx.x] = (float)threadIdx.x;
    out[threadIdx.x] = s[(threadIdx.x + 1) % 32];
}

extern "C" int simt_faulty_warp_sum(float *out, const float *in)
{
    warp_sum_kernel<<<1, 32>>>(out, in);
    return (int)cudaGetLastError();
}

extern "C" int simt_faulty_write_past_end(float *out, int n)
{
    write_past_end_kernel<<<(n + 127) / 128 + 1, 128>>>(out, n);
    return (int)cudaGetLastError();
}

extern "C" int simt_faulty_read_past_end(float *out, const float *in, int n)
{
    read_past_end_kernel<<<(n + 127) / 128, 128>>>(out, in, n);
    return (int)cudaGetLastError();
}

extern "C" int simt_faulty_divergent_shuffle(float *out)
{
    divergent_shuffle_kernel<<<1, 32>>>(out);
    return (int)cudaGetLastError();
}

extern "C" int simt_faulty_split_barrier(float *out)
{
    split_barrier_kernel<<<1, 32>>>(out);
    return (int)cudaGetLastError();
}

extern "C" int simt_faulty_missing_syncwarp(float *out)
{
    missing_syncwarp_kernel<<<1, 32>>>(out);
    return (int)cudaGetLastError();
}

extern "C" int simt_faulty_block_too_big(float *out)
{
    warp_sum_kernel<<<1, 2048>>>(out, out);
    return (int)cudaGetLastError();
}
