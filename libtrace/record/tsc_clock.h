/* tsc_clock.h: TSC stamps to CLOCK_MONOTONIC (tsc_clock.c). */
#ifndef GT_RECORD_TSC_CLOCK_H
#define GT_RECORD_TSC_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC now, in ns. */
int64_t gt_clock_mono_now(void);
/* Takes a (TSC, CLOCK_MONOTONIC) pair now, unless the last is under 100 us old:
 * every stamp taken before can then be converted by interpolation. */
void gt_clock_sample(void);
/* An absolute CLOCK_MONOTONIC time for a TSC stamp, interpolated between
 * the samples around it. */
int64_t gt_clock_tsc_to_mono(uint64_t tsc);

#endif
