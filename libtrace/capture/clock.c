/* clock.c: the trace's one clock, cheaply read by producers.
 *
 * Times in a trace are CLOCK_MONOTONIC nanoseconds since the run's zero. On
 * x86-64 with an invariant TSC (constant_tsc and nonstop_tsc), producers
 * store raw TSC stamps (rdtsc costs a fraction of clock_gettime, the larger
 * part of an NVTX call's cost) and the writer thread turns them into
 * CLOCK_MONOTONIC ns: it samples (TSC, CLOCK_MONOTONIC) pairs at every drain
 * and interpolates between the two samples around each stamp, so the
 * conversion follows the clock over the whole run to within the jitter of
 * one clock_gettime. Elsewhere stamps are CLOCK_MONOTONIC ns already.
 *
 * Only the writer thread touches the samples (after the first, taken at
 * session start).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "capture.h"

bool gt_cap_use_tsc;

typedef struct sample {
    uint64_t tsc;
    int64_t mono_ns;  /* absolute CLOCK_MONOTONIC */
} sample;

#define MAX_SAMPLES (1u << 20)
static sample *samples;
static size_t n_samples, cap_samples;

static int64_t mono_abs_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One pair read as close together as we can: the TSC halfway between two
 * reads around clock_gettime, best of three. */
static sample take_sample(void)
{
    sample best = {0, 0};
    uint64_t best_gap = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        uint64_t a = gt_cap_stamp_tsc();
        int64_t m = mono_abs_ns();
        uint64_t b = gt_cap_stamp_tsc();
        if (b - a < best_gap) {
            best_gap = b - a;
            best.tsc = a + (b - a) / 2;
            best.mono_ns = m;
        }
    }
    return best;
}

/* CPUID 0x80000007 EDX bit 8: the TSC ticks at a constant rate in every
 * P-, C- and T-state (Linux's nonstop_tsc and, with it, constant_tsc). */
static bool tsc_is_invariant(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return false;
    if (!__get_cpuid(0x80000007u, &a, &b, &c, &d))
        return false;
    return (d >> 8) & 1;
#else
    return false;
#endif
}

static void add_sample(sample s)
{
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

void gt_cap_clock_init(void)
{
    gt_cap_use_tsc = false;
    n_samples = 0;
    if (!tsc_is_invariant() || getenv("GTRACE_NO_TSC"))
        return;
    add_sample(take_sample());
    gt_cap_use_tsc = n_samples == 1;
}

/* Samples closer than this add nothing but noise to the interpolation. */
#define MIN_SAMPLE_GAP_NS 100000

void gt_cap_clock_sample(void)
{
    if (!gt_cap_use_tsc)
        return;
    sample s = take_sample();
    if (n_samples > 0 && s.mono_ns - samples[n_samples - 1].mono_ns < MIN_SAMPLE_GAP_NS)
        return;
    add_sample(s);
}

static int64_t between(const sample *a, const sample *b, uint64_t tsc)
{
    double rate = (double)(b->mono_ns - a->mono_ns) / (double)(b->tsc - a->tsc);
    return a->mono_ns + (int64_t)(((double)(int64_t)(tsc - a->tsc)) * rate);
}

int64_t gt_cap_stamp_to_ns(uint64_t stamp)
{
    if (!gt_cap_use_tsc)
        return (int64_t)stamp - gt_cap_t0_ns;
    /* A second sample, if the writer has not taken one yet: wait out the gap (once). */
    for (long spin = 0; n_samples < 2; spin++) {
        if (spin > 10000000)
            return gt_cap_now(); /* no memory for a second sample: the best we can say */
        gt_cap_clock_sample();
    }
    /* The last pair of samples at or before the stamp (the last two when it is newer). */
    size_t lo = 0, hi = n_samples - 1;
    if (stamp >= samples[hi].tsc) {
        lo = hi - 1;
    } else if (stamp <= samples[0].tsc) {
        lo = 0;
    } else {
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (samples[mid].tsc <= stamp)
                lo = mid;
            else
                hi = mid;
        }
    }
    return between(&samples[lo], &samples[lo + 1], stamp) - gt_cap_t0_ns;
}
