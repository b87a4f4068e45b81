// cuda_ops: CUDA work with known counts, for tests/gpu/capture_cuda.sh:
//   6 cudaMalloc + 6 cudaFree of 1 MiB (from alloc_buffers / free_buffers),
//   5 launches of fill<<<4, 128>>>,
//   3 pageable and 2 pinned host-to-device copies, 1 device-to-pinned copy,
//   4 cudaMemset, 2 cudaDeviceSynchronize, 1 cudaStreamSynchronize.
// Prints the counts on stdout; exits 1 on any CUDA error.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                                  \
    do {                                                                                             \
        cudaError_t e_ = (call);                                                                     \
        if (e_ != cudaSuccess) {                                                                     \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                                            \
        }                                                                                            \
    } while (0)

enum { N_BUFFERS = 6, BUFFER_BYTES = 1 << 20 };

__global__ void fill(float *out, float v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = v;
}

// Not static: their names must resolve in the recorded call stacks (-rdynamic).
extern "C" __attribute__((noinline)) void alloc_buffers(float **bufs)
{
    for (int i = 0; i < N_BUFFERS; i++)
        CHECK(cudaMalloc(&bufs[i], BUFFER_BYTES));
}

extern "C" __attribute__((noinline)) void free_buffers(float **bufs)
{
    for (int i = 0; i < N_BUFFERS; i++)
        CHECK(cudaFree(bufs[i]));
}

int main()
{
    float *bufs[N_BUFFERS];
    alloc_buffers(bufs);
    for (int i = 0; i < 5; i++) {
        fill<<<4, 128>>>(bufs[0], (float)i, 512);
        CHECK(cudaGetLastError());
    }
    CHECK(cudaDeviceSynchronize());

    float *pageable = (float *)std::malloc(BUFFER_BYTES);
    float *pinned = nullptr;
    CHECK(cudaMallocHost(&pinned, BUFFER_BYTES));
    for (int i = 0; i < 3; i++)
        CHECK(cudaMemcpy(bufs[1], pageable, BUFFER_BYTES, cudaMemcpyHostToDevice));
    for (int i = 0; i < 2; i++)
        CHECK(cudaMemcpy(bufs[2], pinned, BUFFER_BYTES, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(pinned, bufs[0], BUFFER_BYTES, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 4; i++)
        CHECK(cudaMemset(bufs[3], 0, BUFFER_BYTES));
    CHECK(cudaStreamSynchronize(0));
    CHECK(cudaDeviceSynchronize());
    free_buffers(bufs);
    CHECK(cudaFreeHost(pinned));
    std::free(pageable);
    std::printf("kernels 5 memcpy 6 memset 4 malloc %d free %d\n", N_BUFFERS, N_BUFFERS);
    return 0;
}
