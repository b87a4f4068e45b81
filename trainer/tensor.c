/* tensor.c: dtype sizes, names and conversions of tensor.h. */
#include "tensor.h"

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

uint16_t tr_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN stays a (quiet) NaN */
        return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float tr_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t tr_f32_to_f16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u, abs = u & 0x7fffffffu;
    if (abs > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u);
    if (abs >= 0x477ff000u) /* rounds to >= 65520: infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (abs < 0x38800000u) { /* subnormal in half: scale and round */
        float a;
        memcpy(&a, &abs, 4);
        return (uint16_t)(sign | (uint32_t)lrintf(a * 16777216.0f)); /* 2^24 */
    }
    uint32_t mant = abs + 0xfffu + ((abs >> 13) & 1u) - 0x38000000u; /* rebias 127 -> 15 */
    return (uint16_t)(sign | (mant >> 13));
}

float tr_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float f;
    if (e == 0) {
        f = ldexpf((float)m, -24);
        return sign ? -f : f;
    }
    uint32_t u = e == 31 ? sign | 0x7f800000u | (m << 13) : sign | ((e + 112) << 23) | (m << 13);
    memcpy(&f, &u, 4);
    return f;
}
