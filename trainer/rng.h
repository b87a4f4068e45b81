/* rng.h: the trainer's random numbers: splitmix64, one uint64 of state, so
 * a checkpoint can save it and a resumed run draws what the original would. */
#ifndef TR_RNG_H
#define TR_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct tr_rng { uint64_t state; } tr_rng;

static inline uint64_t tr_rng_u64(tr_rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
/* Uniform in [0, 1). */
static inline double tr_rng_uniform(tr_rng *r) { return (double)(tr_rng_u64(r) >> 11) * 0x1.0p-53; }
/* Uniform in [0, n) (n > 0), without modulo bias worth caring about at n < 2^32. */
static inline uint64_t tr_rng_below(tr_rng *r, uint64_t n) { return (uint64_t)(tr_rng_uniform(r) * (double)n); }
/* Standard normal (Box-Muller). */
static inline double tr_rng_normal(tr_rng *r)
{
    double u1 = tr_rng_uniform(r), u2 = tr_rng_uniform(r);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
}

#endif
