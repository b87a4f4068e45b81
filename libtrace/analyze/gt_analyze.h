/* gt_analyze.h: what gtrace computes from a trace, shared by the CLI and the viewer.
 *
 * Everything here reads a trace through the store's reader (gt_store.h) and
 * returns plain C structs; renderers turn them into text or JSON on a FILE*.
 * Nothing here parses command lines or opens output files for the user's
 * terminal: that is the CLI's job.
 *
 * Conventions are the store's: functions return 0 or a negative gt_status
 * with the message in gt_error_last(); `T **out` hands ownership to the
 * caller, who frees it with T's _free (which accepts NULL). Times are int64
 * nanoseconds on the trace's clock.
 */
#ifndef GT_ANALYZE_H
#define GT_ANALYZE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gt_store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- options ------------------------------------------------------------ */

typedef struct gt_report_options {
    /* --steps A:B: analyse only steps A..B (by step number, inclusive);
     * -1 leaves that side open. With both -1 the whole trace is analysed. */
    int64_t step_first, step_last;
    int top_n; /* rows in "top" tables and gap lists; 0: 10 */
} gt_report_options;

void gt_report_options_init(gt_report_options *opt);

/* ---- results ------------------------------------------------------------ */

typedef struct gt_dist { /* a distribution of durations */
    int64_t n;
    int64_t total_ns, min_ns, max_ns;
    double mean_ns, median_ns, p95_ns; /* percentiles interpolate linearly */
} gt_dist;

typedef struct gt_step {
    int64_t number; /* N of "step N"; the ordinal when the name has no number */
    int64_t start_ns, end_ns;
    int64_t busy_ns;        /* device busy time inside the step */
    int64_t n_dev_allocs;   /* device allocations (cudaMalloc level) in the step */
    int64_t n_dev_frees;
    int64_t n_block_allocs; /* allocator blocks (NVTX memory regions) handed out */
    int64_t n_block_frees;
    int64_t allocated_end_bytes; /* bytes allocated when the step ended */
} gt_step;

typedef struct gt_device_util {
    int32_t device_id; /* -1: the CPU timeline (compute ops of a CPU-only trace) */
    int64_t busy_ns;   /* union of kernels, copies and memsets (or CPU ops) */
    int64_t kernel_ns; /* union of kernels alone */
    int64_t span_ns;   /* the analysed window */
    double utilization; /* busy / span */
} gt_device_util;

typedef struct gt_name_row { /* kernels and API calls by name */
    char *name;
    gt_dist d;
    double share; /* of all kernel (or API) time */
} gt_name_row;

typedef struct gt_copy_row { /* memcpy by direction, or memset (copy_kind -1) */
    int32_t copy_kind; /* GT_COPY_*; -1: memset */
    int64_t n, bytes, total_ns;
    int64_t n_pageable, pageable_bytes, pageable_ns; /* host side in pageable memory */
    int64_t n_pinned, pinned_bytes, pinned_ns;
    double gb_per_s; /* bytes / total time */
} gt_copy_row;

typedef enum gt_gap_cause {
    GT_GAP_HOST_WAIT = 0, /* nothing was queued: the host had not issued the next work yet */
    GT_GAP_KERNEL_WAIT,   /* work was queued; a short gap (< 30 us): launch overhead */
    GT_GAP_OTHER,         /* work was queued but waited longer (events, other streams) */
    GT_GAP_N_CAUSES
} gt_gap_cause;

const char *gt_gap_cause_name(gt_gap_cause c); /* "host-wait", "kernel-wait", "other" */

typedef struct gt_gap {
    int32_t device_id; /* -1: CPU timeline */
    int64_t start_ns, end_ns;
    gt_gap_cause cause;
    char *nvtx;     /* innermost NVTX range of the host thread during the gap ("" if none) */
    char *nvtx_path; /* its enclosing ranges, outermost first: "step 3 > data" */
    char *api;      /* the CUDA call that overlapped the gap most ("" if none) */
    int64_t api_overlap_ns;
} gt_gap;

typedef struct gt_gap_activity { /* what the host did during host-wait and other gaps */
    char *nvtx;  /* innermost range ("" none) */
    char *api;   /* CUDA call ("" none) */
    int64_t n_gaps, total_ns;
} gt_gap_activity;

typedef struct gt_gaps {
    int64_t n_gaps;
    int64_t n_by_cause[GT_GAP_N_CAUSES];
    int64_t idle_by_cause_ns[GT_GAP_N_CAUSES];
    int64_t idle_ns; /* sum over causes */
    int64_t n_long, long_ns;   /* gaps of 500 ms or more (nsys analyze's gpu_gaps) */
    int64_t loader_idle_ns;    /* host-wait while the host was in a data-loading NVTX range */
    gt_gap *longest; size_t n_longest;              /* the top_n longest gaps */
    gt_gap_activity *activity; size_t n_activity;   /* by (nvtx, api), longest total first */
} gt_gaps;

typedef struct gt_leak {
    int64_t pid;      /* the process that made them; 0 unknown */
    char *origin;     /* NVTX range path (and call stack) that made the allocations */
    int64_t n_alive, alive_bytes; /* never freed */
    int64_t n_steps_grew;         /* steps in which the never-freed total grew */
    double bytes_per_step;        /* growth per step */
    int64_t first_ns, last_ns;    /* when the first and last of them were made */
} gt_leak;

typedef struct gt_spike {
    int64_t pid;
    char *origin;
    uint64_t address;
    int64_t bytes;
    int64_t start_ns, end_ns;
    int64_t step; /* step it lived in; -1 none */
} gt_spike;

/* Memory of one process, or of the whole trace. Heap and region handles and
 * addresses are a process's own, so each process is replayed by itself
 * (its pid: the allocating thread's globalTid >> 24). The whole trace's
 * figures are those of the process that reserved most (what a device's
 * memory is compared with), with every process's leaks and spikes; procs
 * has each process's; the total_* figures are all processes at once. */
typedef struct gt_memory gt_memory;
struct gt_memory {
    int64_t pid;       /* the process these figures are of; 0 unknown */
    int32_t device_id; /* the one device of its device allocations; -1 none or several */
    bool has_blocks;   /* allocator blocks (NVTX memory regions) were seen */
    bool has_segments; /* allocator heaps were seen */
    bool has_device;   /* device allocation events were seen */
    int64_t peak_allocated_bytes, peak_allocated_ns;
    int64_t peak_reserved_bytes, peak_reserved_ns;
    int64_t end_allocated_bytes, end_reserved_bytes;
    double fragmentation; /* (reserved - allocated) / reserved at the allocated peak */
    int64_t total_device_bytes; /* from TARGET_INFO_GPU; 0 unknown */
    int64_t n_dev_allocs, n_dev_frees, n_block_allocs, n_block_frees;
    double dev_churn_per_step;   /* device allocs+frees per step, first step excluded */
    double block_churn_per_step; /* block allocs+frees per step, first step excluded */
    gt_leak *leaks; size_t n_leaks;
    gt_spike *spikes; size_t n_spikes;
    /* whole trace only (zero in procs): */
    gt_memory *procs; size_t n_procs; /* each process with allocation events, by pid */
    /* the sums over processes at one moment, at their most (never sums of
     * peaks); total_one_pool: no two processes are on different known
     * devices, so the sum is what one memory held */
    int64_t total_peak_allocated_bytes, total_peak_allocated_ns;
    int64_t total_peak_reserved_bytes, total_peak_reserved_ns;
    bool total_one_pool;
    int64_t n_skipped_rows; /* rows with impossible times or sizes, left out */
};

/* Communication of a distributed job, per rank. What is communication: NCCL
 * kernels (names starting "nccl") on a device, and NVTX ranges of a category
 * named "communication" (any domain) on a host thread; a process with NCCL
 * kernels is measured on its devices. Compute is the device timeline the rest
 * of the report uses: kernels that are not NCCL's, or the CPU ops of a trace
 * without kernels, of the same process (and device). */
typedef enum gt_comm_source {
    GT_COMM_NVTX = 0, /* NVTX ranges of a "communication" category (host side) */
    GT_COMM_NCCL = 1, /* NCCL kernels on a device */
} gt_comm_source;

typedef struct gt_comm_step { /* one rank's communication in one step */
    int64_t number;           /* the step's number */
    int64_t start_ns, end_ns; /* the step as this rank ran it */
    int64_t comm_ns;          /* union of communication intervals */
    int64_t compute_ns;       /* union of compute intervals */
    int64_t overlap_ns;       /* communication while compute ran */
    int64_t exposed_ns;       /* communication with no compute: comm - overlap, what the step waits for */
    int64_t n_collectives;    /* collectives that started in the step */
    int64_t bytes;            /* their bytes, of the n_bytes_known that say (an integer NVTX payload; NCCL
                               * ranks: of the process's NVTX communication ranges) */
    int64_t n_bytes_known;
} gt_comm_step;

typedef struct gt_comm_rank { /* a process (a rank of the job); NCCL: one of its devices */
    int64_t pid;
    int32_t rank;             /* its rank in the job, from the launcher's variables; -1 unknown */
    int32_t device_id;        /* NCCL: the device; -1: host communication */
    gt_comm_source source;
    char *name;               /* the process's name ("" unknown) */
    bool own_steps;           /* its own step ranges; else the report's steps, or the window when none */
    gt_comm_step *steps; size_t n_steps; /* 0: the figures are over the analysed window */
    int64_t span_ns;          /* the steps' total time (or the window) */
    int64_t comm_ns, compute_ns, overlap_ns, exposed_ns; /* sums over the steps */
    int64_t n_collectives, bytes, n_bytes_known;
    double hidden;            /* overlap / comm: the share compute hid */
    double exposed_share;     /* exposed / span: the share of step time waiting on communication */
} gt_comm_rank;

typedef struct gt_comm_kind { /* collectives by name, a trailing number dropped ("allreduce bucket") */
    char *name;
    int64_t n, total_ns;
    int64_t exposed_ns; /* each one's own time with no compute, summed */
} gt_comm_kind;

typedef struct gt_comm {
    gt_comm_rank *ranks; size_t n_ranks; /* by rank (unknown last), pid, device; none: no communication */
    gt_comm_kind *kinds; size_t n_kinds; /* over all ranks, longest total first, top_n */
    int64_t n_kind_names;
    bool per_step; /* the ranks have steps: the means below are per step */
    /* means over the ranks of each rank's figure per step (or over the window) */
    double comm_ns, compute_ns, overlap_ns, exposed_ns, collectives;
    double hidden;          /* all ranks' overlap / all ranks' communication */
    int64_t most_exposed;   /* the rank with most exposed communication per step; -1 none */
    int64_t slowest;        /* the rank with most compute per step (a straggler the others wait for); -1 */
    bool collective_ops;    /* some communication is collective CPU ops (c10d::allreduce_, gloo:...) */
} gt_comm;

/* Steps per rank: a job whose processes (two or more) each have their own
 * steps, matched by number. A rank's work in a step is the step's time less
 * its exposed communication (the Communication section's, where the trace
 * has any): the slowest rank of a step, with most work, is the one the
 * others waited for. */
typedef struct gt_rank_steps_rank {
    int64_t pid;
    int32_t rank;      /* from the launcher's variables (RANK, OMPI_COMM_WORLD_RANK...); -1 unknown */
    char *name;        /* the process's name ("" unknown) */
    gt_dist step_time; /* its steps' durations */
    gt_dist work;      /* per step: its time less its exposed communication */
    int64_t waited_ns; /* exposed communication in its steps, summed */
    int64_t n_slowest; /* steps in which it had the most work */
} gt_rank_steps_rank;

typedef struct gt_rank_step { /* one step number, over the ranks that ran it */
    int64_t number;
    int64_t n_ranks;
    int64_t slowest, fastest; /* indexes into ranks, by work */
    int64_t slowest_work_ns, fastest_work_ns;
} gt_rank_step;

typedef struct gt_rank_steps {
    gt_rank_steps_rank *ranks; size_t n_ranks; /* by rank (unknown last), pid; none: under 2 processes with steps */
    gt_rank_step *steps; size_t n_steps;       /* by number: the steps two ranks or more ran */
    bool waits_known; /* the ranks' communication was measured: work is less their exposed time */
} gt_rank_steps;

typedef struct gt_advice {
    const char *rule;  /* "pageable_copies", "cuda_api_sync"... */
    const char *title;
    bool fired;
    char *threshold;   /* what makes it fire */
    char *evidence;    /* numbers; "" when silent */
    char *suggestion;
    char *gain;        /* expected gain in words */
    int64_t gain_ns;   /* estimated time saved; 0 unknown */
    int64_t from_ns, to_ns; /* the worst instance; both 0 if none */
} gt_advice;

/* The PyTorch tables: what `gtrace --pytorch` names (libtrace/python/gtrace_torch/hooks.py). */
typedef struct gt_phase_row { /* a phase of the steps: data, forward, backward, optimizer, other */
    char *name;
    gt_dist d;    /* its time in each step (0 in a step without it) */
    double share; /* of the steps' total time; the rows sum to 1 */
} gt_phase_row;

typedef struct gt_module_row { /* a module by qualified name; backward: its "NAME backward" ranges */
    char *name;
    int64_t n_forward, n_backward;             /* calls */
    int64_t fwd_self_ns, fwd_total_ns;         /* self: less its submodules' ranges */
    int64_t bwd_self_ns, bwd_total_ns;
    double share;                              /* self (both) of all modules' self */
} gt_module_row;

typedef struct gt_op_row { /* CPU ops by name (input shapes dropped), as torch's key_averages() */
    char *name;
    int64_t n, self_ns, total_ns; /* self: less the ops it called */
    double share;                 /* self of all ops' self */
} gt_op_row;

/* Out of memory: the first allocation that failed, from an NVTX mark (or
 * range) of a category named "oom" whose message gives key=value byte
 * figures (requested=, allocated=, reserved=, free=, limit=, device_free=)
 * and whose integer payload is the request, or from a mark whose message
 * starts "out of memory" (a snapshot's oom action, imported). oom.c. */
typedef struct gt_oom_block { /* a block live when it failed */
    char *name;      /* its NVTX region name ("" none) */
    char *origin;    /* NVTX range path and stack of its allocation */
    uint64_t address;
    int64_t bytes;
} gt_oom_block;

typedef struct gt_oom_growth { /* live bytes by name (else origin) at the previous step's end and at the failure */
    char *name;
    int64_t before_bytes, at_bytes;
} gt_oom_growth;

typedef struct gt_oom_fix {
    const char *fix;    /* "activation checkpointing"... */
    const char *option; /* the trainer's switch, or PyTorch's */
    int64_t saved_bytes; /* estimated from the trace */
    bool enough;        /* saved_bytes covers the shortfall */
    char *how;          /* how the estimate is made */
} gt_oom_fix;

typedef struct gt_oom {
    int64_t t_ns, pid, tid;
    int64_t n_ooms;            /* failures in the trace (the first is analysed) */
    char *message;             /* the mark's message */
    int64_t requested_bytes;
    int64_t allocated_bytes, reserved_bytes; /* the mark's, else the replayed allocator's; -1 unknown */
    int64_t free_bytes;        /* reserved but not allocated; -1 unknown */
    int64_t limit_bytes, device_free_bytes; /* -1 unknown */
    int64_t largest_gap_bytes; /* largest free gap in the reserved segments; -1 no segments */
    int64_t shortfall_bytes;   /* what was missing: allocated + requested - limit, or requested - what was free */
    bool fragmentation;        /* enough was free in total, but in no gap large enough */
    int64_t step;              /* the step it happened in; -1 none */
    char *phase;               /* forward, backward, optimizer, data; "" none */
    char *range_path;          /* the NVTX ranges open on its thread */
    gt_oom_block *blocks; size_t n_blocks;     /* largest first, top_n */
    int64_t prev_step;                          /* the step growth is measured from; -1 none */
    gt_oom_growth *growth; size_t n_growth;    /* most grown first, top_n */
    int64_t step_bytes;                         /* live bytes allocated in the step so far */
    gt_oom_fix *fixes; size_t n_fixes;
} gt_oom;

typedef struct gt_report {
    char *path;
    gt_trace_origin origin;
    int64_t start_ns, end_ns; /* the analysed window */
    int64_t wall_ns;
    bool cpu_timeline; /* no kernels: CPU ops play the device */
    int64_t n_refused; /* rows left out: a time past +-2^60 ns, an end before its start, a size outside 0..2^52 */
    int64_t n_events[GT_EV_N_KINDS];
    gt_step *steps; size_t n_steps;
    gt_dist step_time;
    gt_device_util *devices; size_t n_devices;
    gt_name_row *kernels; size_t n_kernels;  /* top by total time (CPU ops if cpu_timeline) */
    int64_t n_kernel_names;
    gt_name_row *apis; size_t n_apis;        /* top by total time; names without _vNNNN */
    gt_copy_row *copies; size_t n_copies;
    gt_gaps gaps;
    gt_memory memory;
    gt_advice *advice; size_t n_advice;      /* every rule, fired or not */
    gt_comm comm;                            /* n_ranks 0: no communication in the trace */
    gt_rank_steps rank_steps;                /* n_ranks 0: not a job of processes with steps */
    gt_phase_row *phases; size_t n_phases;   /* none: no step has a phase range */
    gt_module_row *modules; size_t n_modules; /* top_n by self time */
    int64_t n_module_names;
    int64_t *bwd_steps; size_t n_bwd_steps;  /* where only some steps have module backward ranges
                                              * (sampled): their numbers; the modules' backward
                                              * figures are theirs. None: every step's, or no steps */
    gt_op_row *ops; size_t n_ops;            /* top_n by self time: NVTX "compute" ranges, GTRACE_CPU_OPS */
    int64_t n_op_names;
    bool ops_nest;                           /* some op called another: self differs from total */
    char *steps_note;                        /* how the steps were taken when not as their ranges
                                              * (an import's short ProfilerStep#N ranges); "" */
    gt_oom *oom;                             /* the first out-of-memory failure; NULL none */
    int64_t cpu_run_ns, cpu_wait_ns;         /* the traced processes' threads on a CPU, and runnable but
                                              * waiting for one (sched.* of the run configuration, summed
                                              * over processes); -1: not recorded */
} gt_report;

/* ---- report ------------------------------------------------------------- */

/* Computes the whole report of `t` (gtrace report). opt may be NULL. A trace
 * without GPU data, or an empty one, gives a report with what there is. */
int gt_report_compute(gt_report **out, gt_trace *t, const gt_report_options *opt);
void gt_report_free(gt_report *r);
int gt_report_print_text(const gt_report *r, FILE *f);
int gt_report_print_json(const gt_report *r, FILE *f);

/* The default report kept in a finished trace (report_kept.c). This
 * build's stamp on it: the gtrace version and a digest of the analysis's
 * and the store's sources, so a build that would report otherwise never
 * prints another's. */
const char *gt_report_kept_version(void);
/* Computes the default report of the finished gtrace trace at `path` and
 * keeps it there as text and JSON (gt_trace_add_summary), with the
 * whole-trace facts gt_report_compute_window reads where they suffice. */
int gt_report_keep(const char *path);
/* gt_report_compute for opt's steps (--steps A:B), reading only their
 * window where t keeps this build's whole-trace facts (report_window.c):
 * *out_read true and the same report. *out_read false (and 0) when t has
 * none or opt selects no steps: the caller reads the whole model. */
int gt_report_compute_window(gt_report **out, bool *out_read, gt_trace *t, const gt_report_options *opt);
/* Prints t's kept report, text or JSON, byte for byte what gt_analysis_load
 * and gt_report_print_text/json print without options: 0; GT_ERR_NOTFOUND
 * or GT_ERR_VERSION (nothing printed) when none can be used. */
int gt_report_print_kept(gt_trace *t, bool json, FILE *f);
/* Whether t carries a kept report this build uses: 0, or why not (as
 * gt_trace_summary, its message set). */
int gt_report_kept_state(gt_trace *t);

/* Whether an NVTX range of this name is a training step as the report finds
 * them ("step 12", "iteration 3", "ProfilerStep#4", "train_step"). */
bool gt_is_step_name(const char *name);

/* ---- diff --------------------------------------------------------------- */

typedef struct gt_diff_row {
    char *metric;   /* "step time median", "kernel time: sgemm"... */
    const char *unit; /* "ns", "%", "bytes", "count" */
    int metric_id;    /* its gt_metric_id (gt_metrics.h), whose unit and direction it has */
    double before, after;
    double change;  /* (after - before) / before; 0 when before is 0 */
    int verdict;    /* +1 better, -1 worse, 0 same (or too few samples, or new or gone) */
    int presence;   /* per-name rows: +1 only after (new), -1 only before (gone), 0 in both */
    /* The evidence: before and after are the statistic (median, mean, p95)
     * of each side's steps (warm-up left out), or of its runs' figures; lo
     * and hi the 95% bootstrap interval of the change, relative like change
     * (NaN: none). A verdict needs the interval to leave out 0 and the
     * change to reach the noise floor. */
    double lo, hi;
    int64_t n_before, n_after; /* samples on each side: steps, or runs when by_runs */
    bool by_runs;              /* one figure per run (wall time, peaks), not per step */
    bool too_few;              /* too few samples on a side for a verdict (verdict 0) */
} gt_diff_row;

typedef struct gt_diff_run_info { /* one traced run of a side */
    char *path;
    bool after;
    int64_t n_steps, n_warmup;             /* warm-up: the first n_warmup steps, left out */
    int64_t warmup_first, warmup_last;     /* their step numbers; -1 none */
    double fast_slower; /* its 10th percentile of step time over its side's fastest run's, -1: 0.08
                         * is 8% slower; NaN when not judged (a side of one run, too few steps) */
    double cpu_wait_share;  /* of its threads' time on or waiting for a CPU, the waiting; NaN: not recorded */
    double fastest_wait_share; /* the same of its side's fastest run; NaN: not recorded or not judged */
    bool busy;          /* fast_slower over 5% and (when both shares are known) cpu_wait_share over
                         * fastest_wait_share by AN_BUSY_WAIT_MARGIN: a busier machine, left out of every row */
} gt_diff_run_info;

typedef struct gt_diff {
    char *before_path, *after_path; /* the first run of each side */
    gt_diff_row *rows; size_t n_rows;
    gt_diff_run_info *runs; size_t n_runs; /* before's runs, then after's */
    double noise_floor;
    bool keep_warmup;
    bool keep_busy;
    bool busy_kept[2];  /* before, after: most of the side's runs ran on a busier machine, so
                         * none was left out */
    /* How much runs of a side differ from each other: the standard deviation
     * of ln(step time p10) between them, pooled (NaN: unknown, no side has
     * two runs compared), over spread_runs[0] runs before, [1] after. */
    double runs_spread;
    size_t spread_runs[2];
} gt_diff;

typedef struct gt_diff_options {
    double noise_floor; /* a relative change under this is the same: 0.05 */
    bool keep_warmup;   /* compare the warm-up steps too */
    bool keep_busy;     /* compare the runs of a side that ran on a busier machine too */
    int n_boot;         /* bootstrap replicates: 2000 */
    uint64_t seed;      /* of the resampling: 0 the fixed default */
} gt_diff_options;
#define GT_DIFF_MIN_SAMPLES 5 /* steps (or runs) a side needs for a verdict */

void gt_diff_options_init(gt_diff_options *opt);

/* One run of a side: its report and, per step, every metric the diff
 * compares (one model in memory at a time: the model is not kept). */
typedef struct gt_diff_run gt_diff_run;
int gt_diff_run_load(gt_diff_run **out, gt_trace *t, const gt_report_options *opt);
const gt_report *gt_diff_run_report(const gt_diff_run *run);
int gt_diff_run_rename(gt_diff_run *run, const char *path); /* the path the diff names */
void gt_diff_run_free(gt_diff_run *run);

/* Compares runs of a command before a change with runs after it (gtrace
 * diff A... -- B...); opt may be NULL. */
int gt_diff_compute_runs(gt_diff **out, gt_diff_run *const *before, size_t n_before, gt_diff_run *const *after,
                         size_t n_after, const gt_diff_options *opt);
/* Compares two reports with the default options: the per-step samples are
 * those a report holds (step time, utilization, memory at step end,
 * communication); the other rows are judged on one figure each. */
int gt_diff_compute(gt_diff **out, const gt_report *before, const gt_report *after);
void gt_diff_free(gt_diff *d);
int gt_diff_print_text(const gt_diff *d, FILE *f);
int gt_diff_print_json(const gt_diff *d, FILE *f);

/* ---- memory state at a moment ------------------------------------------- */

typedef struct gt_mem_block {
    uint64_t address;
    int64_t bytes;
    int64_t alloc_ns;
    int64_t global_tid; /* 0 unknown */
    int64_t callchain_id;
    char *origin;  /* NVTX range path and stack of whoever allocated it */
} gt_mem_block;

typedef struct gt_mem_segment {
    uint64_t address;
    int64_t bytes;
    int64_t alloc_ns;
    int64_t allocated_bytes;  /* sum of its blocks */
    size_t first_block, n_blocks; /* into gt_mem_state.blocks */
    bool from_heap; /* an allocator heap; else a device allocation */
} gt_mem_segment;

typedef struct gt_mem_state { /* one process's allocator */
    int64_t pid;   /* 0: rows without a thread, or a trace without allocations */
    int32_t device_id; /* the device it is of; -1 unknown (or one allocator for the process's devices) */
    int64_t at_ns;
    int64_t step; /* the step asked for; -1 */
    int64_t allocated_bytes, reserved_bytes;
    gt_mem_segment *segments; size_t n_segments; /* by address */
    gt_mem_block *blocks; size_t n_blocks;       /* grouped by segment, by address */
    size_t n_unplaced; /* blocks in no known segment: the last n_unplaced blocks */
} gt_mem_state;

typedef struct gt_mem_states { /* one state per process, by pid */
    gt_mem_state **v; size_t n;
} gt_mem_states;

/* Processes with allocation events, ascending (malloc'd; none: NULL, 0). */
int gt_memory_pids(int64_t **out, size_t *out_n, gt_trace *t);
/* Each process's allocator at time at_ns (gtrace memory --at), or only
 * process pid's (pid >= 0; GT_ERR_NOTFOUND when it has no allocation
 * events). A trace without allocation events gives one empty state. */
int gt_memory_states_at(gt_mem_states **out, gt_trace *t, int64_t pid, int64_t at_ns);
/* Each process's allocator at the moment its step N's allocated bytes
 * peaked (gtrace memory --step N): its own step N, else the trace's. */
int gt_memory_states_at_step(gt_mem_states **out, gt_trace *t, int64_t pid, int64_t step);
/* The same for one process: pid's, or (-1) the trace's only one; with
 * several, GT_ERR_INVALID names them. */
int gt_memory_state_at(gt_mem_state **out, gt_trace *t, int64_t pid, int64_t at_ns);
int gt_memory_state_at_step(gt_mem_state **out, gt_trace *t, int64_t pid, int64_t step);
void gt_mem_state_free(gt_mem_state *s);
void gt_mem_states_free(gt_mem_states *s);
int gt_mem_state_print_text(const gt_mem_state *s, FILE *f);
int gt_mem_state_print_json(const gt_mem_state *s, FILE *f);
/* Every state, each headed by its process when there are several; JSON:
 * {"processes": [state...]}. */
int gt_mem_states_print_text(const gt_mem_states *s, FILE *f);
int gt_mem_states_print_json(const gt_mem_states *s, FILE *f);

/* ---- the loaded analysis ------------------------------------------------ */

/* One trace analysed once: the report and everything a viewer draws from
 * it (every idle gap with its cause, the compute ops of a CPU timeline,
 * each process's memory series), and the allocator's state at any moment,
 * all from one load. Read-only after gt_analysis_load: any number of
 * threads may query one handle at once. It borrows the trace, which must
 * stay open (and unused by other threads' iterators is not required: the
 * handle reads only the trace's string table) until gt_analysis_free. */
typedef struct gt_analysis gt_analysis;

int gt_analysis_load(gt_analysis **out, gt_trace *t, const gt_report_options *opt);
void gt_analysis_free(gt_analysis *a);
const gt_report *gt_analysis_report(const gt_analysis *a);
/* Hands the report over (the caller frees it; NULL for a NULL handle): what
 * a caller that keeps only figures, not the model, holds on to. */
gt_report *gt_analysis_take_report(gt_analysis *a);
/* One side of a diff from the analysis (gt_diff_run_load's samples from its
 * model and gaps; the report borrowed: free the run first): nothing is read
 * again. */
int gt_diff_run_of_analysis(gt_diff_run **out, const gt_analysis *a);

typedef struct gt_gap_span { /* one idle gap of a device (or of the CPU timeline, -1) */
    int32_t device_id;
    int64_t start_ns, end_ns;
    gt_gap_cause cause;
} gt_gap_span;
/* Every gap of the analysed window, by device (first seen first), then start. */
const gt_gap_span *gt_analysis_gaps(const gt_analysis *a, size_t *out_n);

typedef struct gt_compute_op { /* a span of the CPU timeline (a trace without kernels) */
    int64_t start_ns, end_ns;
    int64_t tid;          /* global thread id; 0 unknown */
    int32_t stream;       /* GTRACE_CPU_OPS: its stream; NVTX: an ordinal per thread */
    bool nvtx;            /* an outermost NVTX range of a "compute" category */
    const char *name;     /* borrowed from the trace */
} gt_compute_op;
/* The CPU timeline, by start (none on a trace with kernels). */
const gt_compute_op *gt_analysis_compute_ops(const gt_analysis *a, size_t *out_n);

typedef struct gt_mem_sample { int64_t t_ns, allocated_bytes, reserved_bytes; } gt_mem_sample;

enum { GT_MEM_ROLE_BLOCK = 1, GT_MEM_ROLE_SEGMENT = 2 };
/* One allocation at one size: from its allocation (or a resize) to its free
 * (or the next resize). A device allocation is a block when its process has
 * no allocator blocks and a segment when it has no heaps, or both. */
typedef struct gt_mem_life {
    int64_t from_ns, to_ns; /* to_ns INT64_MAX: never freed */
    int64_t alloc_ns;       /* when it was first allocated (a resize keeps it) */
    int64_t bytes;
    int64_t tid, callchain_id;
    uint64_t address;
    uint8_t roles;          /* GT_MEM_ROLE_* */
    bool from_heap;         /* a segment that is an allocator heap */
} gt_mem_life;

typedef struct gt_mem_series { /* one process's allocator over time */
    int64_t pid;
    const gt_mem_sample *samples; size_t n_samples; /* after each event, by time */
    const gt_mem_life *lives; size_t n_lives;       /* by from_ns */
    int32_t device_id; /* its device (a snapshot's allocator per device); -1: the process's whole */
} gt_mem_series;
/* Allocators with allocation events, by pid then device; a trace without
 * any has one empty process 0. */
size_t gt_analysis_n_memories(const gt_analysis *a);
int gt_analysis_memory(gt_mem_series *out, const gt_analysis *a, size_t i);
/* Process pid's allocator at at_ns (pid -1: the first process); reentrant. */
int gt_analysis_state_at(gt_mem_state **out, const gt_analysis *a, int64_t pid, int64_t at_ns);
/* Each selected process's state at the moment its step N peaked (pid -1: every process). */
int gt_analysis_states_at_step(gt_mem_states **out, const gt_analysis *a, int64_t pid, int64_t step);
int gt_analysis_states_at(gt_mem_states **out, const gt_analysis *a, int64_t pid, int64_t at_ns);
/* Who made the allocation of process pid at address first allocated at
 * alloc_ns: NVTX range path and stack (malloc'd; "" unknown). */
char *gt_analysis_block_origin(const gt_analysis *a, int64_t pid, uint64_t address, int64_t alloc_ns);

/* ---- exports ------------------------------------------------------------ */

/* Chrome trace JSON (Perfetto, chrome://tracing) with Kineto's categories:
 * every process of the trace in one file. */
int gt_export_chrome(gt_trace *t, FILE *f);
/* The ranks of a Chrome export, one per process with CUDA calls, NVTX
 * ranges, CPU ops or device work: the ranks the launcher gave them where
 * every one of them recorded a distinct one (GTRACE_RUN_CONFIG env.RANK,
 * OMPI_COMM_WORLD_RANK...), else their order by pid. Ascending by rank
 * (malloc'd; none: NULL, 0). */
typedef struct gt_chrome_rank { int64_t pid; int32_t rank; } gt_chrome_rank;
int gt_export_chrome_ranks(gt_chrome_rank **out, size_t *out_n, gt_trace *t);
/* One process's events as the file PyTorch's profiler writes for one rank
 * (Kineto's layout, "distributedInfo" with the rank and world size), for
 * Holistic Trace Analysis; pid -1: every process, as gt_export_chrome. */
int gt_export_chrome_process(gt_trace *t, int64_t pid, int32_t rank, int32_t world_size, FILE *f);
/* PyTorch memory snapshot pickle (torch.cuda._memory_viz, pytorch.org/memory_viz)
 * of one process's allocator, as torch.cuda.memory._snapshot() is: pid's,
 * or (-1) the trace's only process with allocation events (GT_ERR_INVALID
 * when several have: gt_memory_pids lists them). */
int gt_export_memviz(gt_trace *t, int64_t pid, FILE *f);
/* The same at a moment: the allocator's state at at_ns (INT64_MAX: the
 * trace's end) and the actions up to it. v113: the form PyTorch 1.13's
 * torch.cuda.memory_snapshot() returns and its _memory_viz reads, a list of
 * segments whose blocks carry their origin in "history" (no trace). */
int gt_export_memviz_at(gt_trace *t, int64_t pid, int64_t at_ns, bool v113, FILE *f);
/* One CSV per event kind, DIR/<kind>.csv (kernel.csv, memcpy.csv...), RFC 4180.
 * Kinds without events are skipped; `dir` must exist. */
int gt_export_csv(gt_trace *t, const char *dir);
/* One kind's CSV to a stream. */
int gt_export_csv_kind(gt_trace *t, gt_event_kind kind, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* GT_ANALYZE_H */
