/* clock.h: how producers stamp their records (clock.c). */
#ifndef GT_CAPTURE_CLOCK_H
#define GT_CAPTURE_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC at the trace's zero (the launcher's start, shared by every
 * traced process through GTRACE_T0_NS; else this process's start). */
extern int64_t gt_cap_t0_ns;
/* Stamps are raw TSC ticks (invariant TSC on x86-64), else CLOCK_MONOTONIC ns. */
extern bool gt_cap_use_tsc;

#if defined(__x86_64__)
#include <x86intrin.h>
static inline uint64_t gt_cap_stamp_tsc(void) { return __rdtsc(); }
#else
static inline uint64_t gt_cap_stamp_tsc(void) { return 0; }
#endif

/* A producer's timestamp: cheap; the launcher turns it into trace time. */
static inline uint64_t gt_cap_stamp(void)
{
    if (__builtin_expect(gt_cap_use_tsc, 1))
        return gt_cap_stamp_tsc();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Nanoseconds since the trace's zero, now (any thread). */
static inline int64_t gt_cap_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - gt_cap_t0_ns;
}

/* Sets the trace's zero and decides how producers stamp (at session start,
 * before any event). */
void gt_cap_clock_init(int64_t t0_ns);

#endif
