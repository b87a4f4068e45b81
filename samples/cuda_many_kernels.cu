// cuda_many_kernels: the worst case for kernel tracing, for
// bench/bench_capture_cuda.sh: N launches of a tiny kernel (one block of 32
// threads, a few nanoseconds of work), so the time is launch overhead and
// whatever a tracer adds per kernel. Synchronizes every K launches, as a
// training step does once per step.
//   usage: cuda_many_kernels [N=200000] [K=1000]
// Prints "launches N sync_every K seconds S us_per_launch U"; exits 1 on a
// CUDA error, 77 without a device.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

#define CHECK(call)                                                                                  \
    do {                                                                                             \
        cudaError_t e_ = (call);                                                                     \
        if (e_ != cudaSuccess) {                                                                     \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                                            \
        }                                                                                            \
    } while (0)

__global__ void bump(float *x)
{
    x[threadIdx.x] += 1.0f;
}

static double now_s()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long arg(int argc, char **argv, int i, long dflt)
{
    if (argc <= i)
        return dflt;
    char *end;
    long v = std::strtol(argv[i], &end, 10);
    if (*end || v <= 0) {
        std::fprintf(stderr, "cuda_many_kernels: argument %d must be a positive integer, got '%s'\n", i, argv[i]);
        std::exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    long n = arg(argc, argv, 1, 200000), k = arg(argc, argv, 2, 1000);
    int n_dev = 0;
    if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev == 0) {
        std::printf("no usable CUDA device\n");
        return 77;
    }
    float *x;
    CHECK(cudaMalloc(&x, 32 * sizeof(float)));
    CHECK(cudaMemset(x, 0, 32 * sizeof(float)));
    for (int i = 0; i < 100; i++) // warm-up: module load, first-launch costs
        bump<<<1, 32>>>(x);
    CHECK(cudaDeviceSynchronize());
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        bump<<<1, 32>>>(x);
        if ((i + 1) % k == 0)
            CHECK(cudaDeviceSynchronize());
    }
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    double s = now_s() - t0;
    float first;
    CHECK(cudaMemcpy(&first, x, sizeof first, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(x));
    if (n + 100 < (1L << 24) && first != (float)(n + 100)) { // every launch ran (counts are exact below 2^24)
        std::fprintf(stderr, "cuda_many_kernels: counted %.0f launches, expected %ld\n", first, n + 100);
        return 1;
    }
    std::printf("launches %ld sync_every %ld seconds %.4f us_per_launch %.3f\n", n, k, s, s * 1e6 / (double)n);
    return 0;
}
