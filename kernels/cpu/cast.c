/* cast.c: conversions between fp32, bf16 and fp16 storage (lowp.h), CPU
 * reference, OpenMP. One loop per pair of formats, so the compiler sees
 * straight-line code it can vectorize (AMP on the CPU converts every
 * low-precision operand at every op). Zeroing is here too: the other bulk
 * store of a buffer. */
#include "ops.h"

#include "cpu.h"
#include "lowp.h"

#include <string.h>

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

/* One core's stores do not fill the memory bandwidth: each thread of the team
 * clears its own 4 KiB-aligned share of the bytes. */
void op_zero_cpu(void *dst, size_t n_bytes)
{
    if (n_bytes < ((size_t)1 << 18)) { /* below 256 KiB waking the team costs more */
        memset(dst, 0, n_bytes);
        return;
    }
#pragma omp parallel
    {
        int lo, hi, n_pages = (int)((n_bytes + 4095) / 4096);
        team_range(n_pages, 1, &lo, &hi);
        size_t a = (size_t)lo * 4096, b = (size_t)hi * 4096 < n_bytes ? (size_t)hi * 4096 : n_bytes;
        if (b > a)
            memset((char *)dst + a, 0, b - a);
    }
}
