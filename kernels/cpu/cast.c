/* cast.c: conversions between fp32, bf16 and fp16 storage (lowp.h), CPU
 * reference, OpenMP. */
#include "ops.h"

#include "lowp.h"

void op_cast_cpu(void *dst, int dst_format, const void *src, int src_format, size_t n)
{
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) {
        float f = src_format == LOWP_BF16  ? lowp_bf16_to_f32(((const uint16_t *)src)[i])
                  : src_format == LOWP_F16 ? lowp_f16_to_f32(((const uint16_t *)src)[i])
                                           : ((const float *)src)[i];
        if (dst_format == LOWP_BF16)
            ((uint16_t *)dst)[i] = lowp_f32_to_bf16(f);
        else if (dst_format == LOWP_F16)
            ((uint16_t *)dst)[i] = lowp_f32_to_f16(f);
        else
            ((float *)dst)[i] = f;
    }
}
