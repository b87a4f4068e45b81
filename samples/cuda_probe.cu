// cuda_probe: exits 0 when a CUDA device can be used, 77 (Automake's
// "skipped") when there is none, so GPU tests can skip on machines without one.
#include <cstdio>
#include <cuda_runtime.h>

int main()
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        std::printf("no usable CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    std::printf("%d CUDA device(s)\n", n);
    return 0;
}
