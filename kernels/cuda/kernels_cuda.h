/* kernels_cuda.h: C-callable launchers of the CUDA kernels in kernels/cuda.
 * Each returns a cudaError_t as int (0 on success); launches are asynchronous
 * on `stream`. Low-precision tensors are passed as their 16-bit storage. */
#ifndef KERNELS_CUDA_H
#define KERNELS_CUDA_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int kc_cast_f32_to_bf16(uint16_t *out, const float *in, long n, cudaStream_t stream);
int kc_cast_bf16_to_f32(float *out, const uint16_t *in, long n, cudaStream_t stream);
int kc_cast_f32_to_f16(uint16_t *out, const float *in, long n, cudaStream_t stream);
int kc_cast_f16_to_f32(float *out, const uint16_t *in, long n, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
