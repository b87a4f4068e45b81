/* tensor.c: dtype sizes, names and conversions of tensor.h. */
#include "tensor.h"

#include "lowp.h"

#include <math.h>
#include <string.h>

size_t tr_dtype_size(tr_dtype t) { return t == TR_F32 || t == TR_I32 ? 4 : 2; }

const char *tr_dtype_name(tr_dtype t)
{
    static const char *const names[] = {"F32", "BF16", "F16", "I32"};
    return names[t];
}

int64_t tr_tensor_numel(const tr_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->n_dims; i++)
        n *= t->shape[i];
    return n;
}

size_t tr_tensor_bytes(const tr_tensor *t) { return (size_t)tr_tensor_numel(t) * tr_dtype_size(t->dtype); }

uint16_t tr_f32_to_bf16(float f) { return lowp_f32_to_bf16(f); }
float tr_bf16_to_f32(uint16_t h) { return lowp_bf16_to_f32(h); }
uint16_t tr_f32_to_f16(float f) { return lowp_f32_to_f16(f); }
float tr_f16_to_f32(uint16_t h) { return lowp_f16_to_f32(h); }
