/* tensor.h: a tensor is a view: data, dtype, device and shape. It owns
 * nothing; buffers come from the caching allocator and are pointed into
 * (llm.c's one allocation per group). fp32 is what the CPU kernels compute
 * in; bf16 and fp16 are real storage types for AMP and checkpoints. */
#ifndef TR_TENSOR_H
#define TR_TENSOR_H

#include <stddef.h>
#include <stdint.h>

typedef enum tr_dtype { TR_F32, TR_BF16, TR_F16, TR_I32 /* token ids */ } tr_dtype;
typedef enum tr_device { TR_CPU, TR_CUDA } tr_device;

#define TR_MAX_DIMS 4
typedef struct tr_tensor {
    void *data;
    tr_dtype dtype;
    tr_device device;
    int n_dims;
    int64_t shape[TR_MAX_DIMS];
} tr_tensor;

size_t tr_dtype_size(tr_dtype t);
/* safetensors' name for the dtype: "F32", "BF16", "F16", "I32". */
const char *tr_dtype_name(tr_dtype t);
int64_t tr_tensor_numel(const tr_tensor *t);
size_t tr_tensor_bytes(const tr_tensor *t);

/* Conversions (round to nearest even). */
uint16_t tr_f32_to_bf16(float f);
float tr_bf16_to_f32(uint16_t h);
uint16_t tr_f32_to_f16(float f);
float tr_f16_to_f32(uint16_t h);

#endif
