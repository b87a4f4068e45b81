/* clock.c: how producers stamp their records.
 *
 * Times in a trace are CLOCK_MONOTONIC nanoseconds since the run's zero. On
 * x86-64 with an invariant TSC (constant_tsc and nonstop_tsc), producers
 * store raw TSC stamps (rdtsc costs a fraction of clock_gettime, the larger
 * part of an NVTX call's cost) and the launcher turns them into
 * CLOCK_MONOTONIC ns from (TSC, CLOCK_MONOTONIC) pairs it samples as it
 * reads (record/drain.c); the TSC is one clock for every process of the
 * machine. Elsewhere stamps are CLOCK_MONOTONIC ns already. The region
 * says which (gt_shm_header.stamp_tsc).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "clock.h"

int64_t gt_cap_t0_ns;
bool gt_cap_use_tsc;

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

void gt_cap_clock_init(int64_t t0_ns)
{
    gt_cap_t0_ns = t0_ns;
    gt_cap_use_tsc = tsc_is_invariant() && !getenv("GTRACE_NO_TSC");
}
