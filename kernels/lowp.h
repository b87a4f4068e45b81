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

/* Every case computed and one selected by masks, without branches, so that
 * a loop of these vectorizes (the CPU backend converts whole tensors under
 * --amp fp16). Subnormals round in the FPU: adding 0.5 (whose ulp is 2^-24,
 * fp16's smallest step) rounds to nearest even and leaves the result in the
 * low bits. */
static inline uint32_t lowp_pick(uint32_t cond, uint32_t a, uint32_t b) /* cond 0 or 1: a if 1 */
{
    uint32_t mask = 0u - cond;
    return (a & mask) | (b & ~mask);
}

static inline uint16_t lowp_f32_to_f16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u, abs = u & 0x7fffffffu;
    uint32_t normal = (abs + 0xfffu + ((abs >> 13) & 1u) - 0x38000000u) >> 13; /* rebias 127 -> 15 */
    float a, t;
    memcpy(&a, &abs, 4);
    t = a + 0.5f;
    uint32_t tb;
    memcpy(&tb, &t, 4);
    uint32_t sub = tb - 0x3f000000u;                   /* round(a * 2^24) */
    uint32_t h = lowp_pick(abs < 0x38800000u, sub, normal); /* below 2^-14: subnormal in half */
    h = lowp_pick(abs >= 0x477ff000u, 0x7c00u, h);          /* rounds to >= 65520: infinity */
    h = lowp_pick(abs > 0x7f800000u, 0x7e00u, h);           /* NaN stays a (quiet) NaN */
    return (uint16_t)(sign | h);
}

static inline float lowp_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    uint32_t u = sign | ((e + 112) << 23) | (m << 13);
    u = lowp_pick(e == 31, sign | 0x7f800000u | (m << 13), u);
    float sub = (float)m * 5.9604644775390625e-8f; /* m * 2^-24, exact */
    uint32_t su;
    memcpy(&su, &sub, 4);
    u = lowp_pick(e == 0, sign | su, u);
    float f;
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
