/* schedstat.h: how long a traced process's threads ran on a CPU and how
 * long they waited on a runqueue for one, read from outside the process
 * (/proc/PID/task/TID/schedstat) by the collector's reader thread, and
 * written into the trace's run configuration (GT_CONFIG_SCHED_*, per
 * global pid) when the process ends. The diff reads them as evidence that a run
 * was slowed by another program (a busier machine). */
#ifndef GT_RECORD_SCHEDSTAT_H
#define GT_RECORD_SCHEDSTAT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct gt_sched gt_sched; /* one process image's threads, as last read */

/* A sampler of pid, read once now: what its threads had run and waited
 * before this is left out (the time of an image it exec'd from). NULL when
 * out of memory. */
gt_sched *gt_sched_new(int64_t pid);
/* Reads every thread's statistics once (one read per thread); a thread
 * gone since keeps the last values seen. */
void gt_sched_sample(gt_sched *s);
/* The sums since gt_sched_new; false when no read ever found a thread
 * (no /proc, or a kernel without schedstats): nothing to write. */
bool gt_sched_totals(const gt_sched *s, int64_t *run_ns, int64_t *wait_ns, int64_t *n_samples);
void gt_sched_free(gt_sched *s);

#endif
