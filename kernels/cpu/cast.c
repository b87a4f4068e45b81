/* cast.c: conversions between fp32, bf16 and fp16 storage (lowp.h), CPU
 * reference, OpenMP. One loop per pair of formats, so the compiler sees
 * straight-line code it can vectorize (AMP on the CPU converts every
 * low-precision operand at every op). */
#include "ops.h"

#include "lowp.h"

void op_cast_cpu(void *dst, int dst_format, const void *src, int src_format, size_t n)
{
    const uint16_t *s16 = src;
    const float *s32 = src;
    uint16_t *d16 = dst;
    float *d32 = dst;
    if (src_format == dst_format) {
        memcpy(dst, src, n * (dst_format == LOWP_F32 ? 4 : 2));
    } else if (src_format == LOWP_F32 && dst_format == LOWP_BF16) {
#pragma omp parallel for simd
        for (size_t i = 0; i < n; i++)
            d16[i] = lowp_f32_to_bf16(s32[i]);
    } else if (src_format == LOWP_BF16 && dst_format == LOWP_F32) {
#pragma omp parallel for simd
        for (size_t i = 0; i < n; i++)
            d32[i] = lowp_bf16_to_f32(s16[i]);
    } else if (src_format == LOWP_F32 && dst_format == LOWP_F16) {
#pragma omp parallel for simd
        for (size_t i = 0; i < n; i++)
            d16[i] = lowp_f32_to_f16(s32[i]);
    } else if (src_format == LOWP_F16 && dst_format == LOWP_F32) {
#pragma omp parallel for simd
        for (size_t i = 0; i < n; i++)
            d32[i] = lowp_f16_to_f32(s16[i]);
    } else { /* bf16 <-> fp16, through fp32 */
#pragma omp parallel for
        for (size_t i = 0; i < n; i++) {
            float f = src_format == LOWP_BF16 ? lowp_bf16_to_f32(s16[i]) : lowp_f16_to_f32(s16[i]);
            d16[i] = dst_format == LOWP_BF16 ? lowp_f32_to_bf16(f) : lowp_f32_to_f16(f);
        }
    }
}
