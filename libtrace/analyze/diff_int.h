/* diff_int.h: what diff.c, diff_samples.c and stats.c share: one run's
 * per-step samples, and the statistics the diff decides with. Not installed;
 * the diff's unit test includes it to check the statistics on samples of
 * known distributions. */
#ifndef GT_DIFF_INT_H
#define GT_DIFF_INT_H

#include "analyze_int.h"
#include "gt_metrics.h"

/* One metric measured in every step of a run: v[i] is step i's value
 * (NaN: the step has none, e.g. a bandwidth without copies). */
typedef struct an_samples {
    char *key; /* "step time", "idle host-wait", "op: NAME"... */
    double *v; /* (n_steps) */
} an_samples;

struct gt_diff_run {
    gt_report *r;
    bool borrowed;               /* r is the caller's (gt_diff_compute) */
    size_t n_steps;              /* the report's steps: the samples' length */
    an_samples *m; size_t n_m, cap_m;
};

/* The samples of key in run (NULL: none). */
const double *an_run_samples(const gt_diff_run *run, const char *key);
/* Adds (or returns) key's samples, zeroed; NULL when out of memory. */
double *an_run_metric(gt_diff_run *run, const char *key);
/* The samples a report alone gives: step time, utilization, memory at step end. */
int an_run_report_samples(gt_diff_run *run);
/* A run of report r with every sample from its model m and gaps; r is the
 * run's (freed with it) unless borrowed, also on failure. */
int an_diff_run_build(gt_diff_run **out, gt_report *r, bool borrowed, const an_model *m, const gt_gap_span *gaps,
                      size_t n_gaps);

typedef enum an_stat { AN_STAT_MEDIAN, AN_STAT_MEAN, AN_STAT_P95, AN_STAT_P10 } an_stat;

/* The statistic of v[0..n) (reorders v); NaN for n 0. Percentiles interpolate linearly. */
double an_stat_of(an_stat s, double *v, size_t n);
/* How many steps at the start of a run are warm-up: the first, and each
 * next one while it is more than k MADs above the median (MAD at least 1% of
 * the median, so identical steps have a spread); never more than half. */
size_t an_warmup_n(const double *v, size_t n, double k);
#define AN_WARMUP_MADS 3.0

typedef struct an_series { const double *v; size_t n; } an_series; /* one run's kept samples */

typedef struct an_change { /* stat(after) - stat(before), pooled over runs */
    double before, after;   /* the statistic of each side's pooled samples */
    double lo, hi;          /* 95% interval of after - before */
    double rlo, rhi;        /* 95% interval of each replicate's after / before - 1; NaN when a before was 0 */
} an_change;

/* The change of statistic s from the runs a[0..na) to b[0..nb), with a
 * percentile interval from n_boot hierarchical bootstrap replicates: runs
 * are drawn with replacement, then each drawn run's steps in circular blocks
 * of about cbrt(n) steps (steps next to each other are alike under a
 * changing load). xorshift from seed: the same input gives the same
 * interval. Every series has at least one sample. */
int an_boot_change(an_change *out, an_stat s, const an_series *a, size_t na, const an_series *b, size_t nb,
                   int n_boot, uint64_t seed);

/* Which runs of one side ran on a busier machine. Every run of a side ran
 * the same code, and contention from other programs only ever adds time, so
 * the run with the fastest steps is the side's best measure and a run whose
 * fastest steps are slower may have been slowed by the machine, from its
 * first step to its last. But a program's own threads make runs of one
 * command differ too (26% with two threads on two idle cores), so where the
 * scheduler's account is known (wait[i]: the share of run i's threads' time
 * spent runnable, waiting for a CPU; NaN unknown; wait NULL: none known) a
 * run is busy only if it also waited more than the fastest run did, by over
 * AN_BUSY_WAIT_MARGIN. slower[i]: how much run i's 10th percentile of steps
 * exceeds the lowest of the side's (0 for that run; NaN for a run under
 * GT_DIFF_MIN_SAMPLES steps, which is not judged); busy[i]: slower[i] over
 * share, and that evidence where both runs have it; *fastest: the fastest
 * run (n: none judged). The fastest run is never busy. Returns how many are. */
size_t an_busy_runs(bool *busy, double *slower, size_t *fastest, const an_series *runs, const double *wait,
                    size_t n, double share);
/* How much runs of one command differ, whatever the code: the standard
 * deviation of ln(the 10th percentile of step time) between the runs of a
 * side, pooled over the sides (sides[k]: side k's n_runs[k] runs; runs under
 * GT_DIFF_MIN_SAMPLES steps left out; used[k]: the runs of side k it was
 * measured on). NaN where no side has two runs. */
double an_runs_spread(const an_series *const *sides, const size_t *n_runs, size_t n_sides, size_t *used);
/* The smallest change between sides of na and nb runs with that spread
 * that the diff finds 4 times in 5 (a 95% interval, 80% power: 1.96 +
 * 0.84 standard errors of the difference of the sides' means of ln). */
#define AN_FOUND_Z 2.8
double an_smallest_change(double spread, size_t na, size_t nb);
/* The runs a side needs (as many on each) for change to be that smallest change. */
double an_runs_for_change(double spread, double change);
/* Of the side's fastest run: a run whose 10th percentile of step time is
 * more than this above it ran beside another program. */
#define AN_BUSY_SHARE 0.05
/* How much more of its time a busy run waited for a CPU than the fastest
 * run (2 percentage points): waiting alone that makes a run AN_BUSY_SHARE
 * slower adds 4.8 points to a one-thread program's share, 2.4 where one of
 * two threads waited; runs of one command on an idle machine differ by
 * less (bench/results/2026-12-02-diff-noise-quiet.md). */
#define AN_BUSY_WAIT_MARGIN 0.02

#endif
