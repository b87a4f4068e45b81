/* cupti_control.h: starting and flushing CUDA tracing through CUPTI (cupti.c;
 * built only with the CUPTI headers). Not named cupti.h: that is CUPTI's own. */
#ifndef GT_CAPTURE_CUPTI_CONTROL_H
#define GT_CAPTURE_CUPTI_CONTROL_H

#include <stdbool.h>

/* Loads libcupti and subscribes, unless --cuda=off. Says why once if it cannot. */
void gt_cupti_start(void);
/* Flushes CUPTI's activity buffers into the rings (before the final drain). */
void gt_cupti_flush(void);
/* Whether CUPTI records this process (for the --cuda=on message at exit). */
bool gt_cupti_started(void);

#endif
