/* tsc_clock.c: the launcher's clock mapping: CLOCK_MONOTONIC times for the
 * TSC stamps traced processes write (capture/clock.c), by interpolating
 * between (TSC, CLOCK_MONOTONIC) pairs sampled as the collector reads.
 * Stamps after the last pair are extrapolated from the last two.
 *
 * One thread samples and converts (the collector's writer): the samples
 * are not locked. It does not read rings or write traces.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "tsc_clock.h"

typedef struct sample {
    uint64_t tsc;
    int64_t mono_ns;
} sample;

#define MAX_SAMPLES (1u << 20)
#define MIN_SAMPLE_GAP_NS 100000 /* closer samples add only noise */
static sample *samples;
static size_t n_samples, cap_samples;

int64_t gt_clock_mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t read_tsc(void)
{
#if defined(__x86_64__)
    return __rdtsc();
#else
    return 0;
#endif
}

/* One pair read as close together as we can: the TSC halfway between two
 * reads around clock_gettime, best of three. */
static sample take_sample(void)
{
    sample best = {0, 0};
    uint64_t best_gap = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        uint64_t a = read_tsc();
        int64_t m = gt_clock_mono_now();
        uint64_t b = read_tsc();
        if (b - a < best_gap) {
            best_gap = b - a;
            best.tsc = a + (b - a) / 2;
            best.mono_ns = m;
        }
    }
    return best;
}

void gt_clock_sample(void)
{
    sample s = take_sample();
    if (n_samples > 0 && s.mono_ns - samples[n_samples - 1].mono_ns < MIN_SAMPLE_GAP_NS)
        return;
    if (n_samples == cap_samples) {
        if (cap_samples >= MAX_SAMPLES)
            return; /* beyond: extrapolate from the last pair */
        size_t cap = cap_samples ? cap_samples * 2 : 256;
        sample *v = realloc(samples, cap * sizeof *v);
        if (!v)
            return;
        samples = v;
        cap_samples = cap;
    }
    samples[n_samples++] = s;
}

int64_t gt_clock_tsc_to_mono(uint64_t stamp)
{
    /* A second sample, if there is none yet: wait out the gap (once). */
    for (long spin = 0; n_samples < 2; spin++) {
        if (spin > 10000000)
            return gt_clock_mono_now(); /* no memory for a second sample: the best we can say */
        gt_clock_sample();
    }
    /* Most stamps fall between the same two samples as the one before
     * (a chunk's stamps all follow the previous sample): that pair and its
     * rate are kept. Samples are only appended, so a pair never changes. */
    static size_t last_lo = SIZE_MAX;
    static double last_rate;
    size_t lo = 0, hi = n_samples - 1;
    if (last_lo < n_samples - 1 && stamp >= samples[last_lo].tsc
        && (stamp < samples[last_lo + 1].tsc || last_lo + 1 == hi)) {
        lo = last_lo;
    } else if (stamp >= samples[hi].tsc) {
        lo = hi - 1;
    } else if (stamp > samples[0].tsc) {
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (samples[mid].tsc <= stamp)
                lo = mid;
            else
                hi = mid;
        }
    }
    const sample *a = &samples[lo], *b = &samples[lo + 1];
    if (lo != last_lo) {
        last_lo = lo;
        last_rate = (double)(b->mono_ns - a->mono_ns) / (double)(b->tsc - a->tsc);
    }
    double rate = last_rate;
    return a->mono_ns + (int64_t)(((double)(int64_t)(stamp - a->tsc)) * rate);
}
