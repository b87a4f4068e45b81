/* test_cuda_cast: the GPU casts store the same bits as round-to-nearest-even
 * on the CPU, for ordinary values, ties, subnormals, infinities and NaN.
 * Exits 77 (skipped) on a machine without a usable GPU. */
#include "kernels_cuda.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CPU reference: fp32 -> bf16 with round to nearest even; NaN stays NaN. */
static uint16_t ref_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static int check(const char *what, cudaError_t err)
{
    if (err != cudaSuccess) {
        fprintf(stderr, "test_cuda_cast: %s: %s\n", what, cudaGetErrorString(err));
        return 1;
    }
    return 0;
}

int main(void)
{
    int n_devices = 0;
    if (cudaGetDeviceCount(&n_devices) != cudaSuccess || n_devices == 0) {
        printf("SKIP: no CUDA device (%s)\n", cudaGetErrorString(cudaGetLastError()));
        return 77;
    }
    enum { N = 1 << 20 };
    float *h_in = malloc(N * sizeof *h_in), *h_back = malloc(N * sizeof *h_back);
    uint16_t *h_out = malloc(N * sizeof *h_out);
    srand(7);
    for (int i = 0; i < N; i++) {
        uint32_t u = ((uint32_t)rand() << 16) ^ (uint32_t)rand();
        memcpy(&h_in[i], &u, 4); /* every bit pattern: subnormals, inf, NaN, ties */
    }
    h_in[0] = 1.0f + 0x1p-8f; /* a tie: rounds to even (1.0) */
    h_in[1] = INFINITY;
    h_in[2] = -0.0f;

    float *d_in, *d_back;
    uint16_t *d_out;
    int fails = 0;
    fails += check("cudaMalloc", cudaMalloc((void **)&d_in, N * sizeof(float)));
    fails += check("cudaMalloc", cudaMalloc((void **)&d_back, N * sizeof(float)));
    fails += check("cudaMalloc", cudaMalloc((void **)&d_out, N * sizeof(uint16_t)));
    if (fails)
        return 1;
    fails += check("copy in", cudaMemcpy(d_in, h_in, N * sizeof(float), cudaMemcpyHostToDevice));
    fails += check("launch f32->bf16", (cudaError_t)kc_cast_f32_to_bf16(d_out, d_in, N, 0));
    fails += check("launch bf16->f32", (cudaError_t)kc_cast_bf16_to_f32(d_back, d_out, N, 0));
    fails += check("copy out", cudaMemcpy(h_out, d_out, N * sizeof(uint16_t), cudaMemcpyDeviceToHost));
    fails += check("copy back", cudaMemcpy(h_back, d_back, N * sizeof(float), cudaMemcpyDeviceToHost));
    if (fails)
        return 1;

    long mismatches = 0;
    for (int i = 0; i < N; i++) {
        uint16_t want = ref_bf16(h_in[i]);
        int both_nan = isnan(h_in[i]) && (h_out[i] & 0x7fff) > 0x7f80;
        if (h_out[i] != want && !both_nan && mismatches++ < 5)
            fprintf(stderr, "bf16 of %a: GPU %04x, CPU %04x\n", h_in[i], h_out[i], want);
        uint32_t widened = (uint32_t)h_out[i] << 16;
        float w;
        memcpy(&w, &widened, 4);
        if (!isnan(w) && memcmp(&w, &h_back[i], 4) != 0 && mismatches++ < 5)
            fprintf(stderr, "bf16->f32 of %04x: GPU %a, CPU %a\n", h_out[i], h_back[i], w);
    }
    cudaFree(d_in);
    cudaFree(d_back);
    cudaFree(d_out);
    printf("%ld mismatches in %d values\n", mismatches, N);
    return mismatches == 0 ? 0 : 1;
}
