/* lowp.h: fp32 <-> bf16/fp16 conversions, round to nearest even, with IEEE
 * behaviour at the edges: NaN stays NaN, fp16 overflow becomes infinity (as
 * a loss scaler needs), fp16 subnormals are kept. Header-only so the CPU
 * kernels inline them; the trainer's tensor.c uses the same ones. */
#ifndef KERNELS_LOWP_H
#define KERNELS_LOWP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t lowp_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t rounded = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    uint16_t quiet_nan = (uint16_t)((u >> 16) | 0x40); /* NaN stays a (quiet) NaN */
    return (u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded; /* a select: vectorizes */
}

static inline float lowp_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint16_t lowp_f32_to_f16(float f)
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

static inline float lowp_f16_to_f32(uint16_t h)
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

/* The value f takes once stored in the format (identity for fp32). */
enum { LOWP_F32, LOWP_BF16, LOWP_F16 };
static inline float lowp_round(float f, int format)
{
    return format == LOWP_BF16  ? lowp_bf16_to_f32(lowp_f32_to_bf16(f))
           : format == LOWP_F16 ? lowp_f16_to_f32(lowp_f32_to_f16(f))
                                : f;
}

#endif
