/* analyze_int.h: what the analysis files share and the public header does not
 * show: the trace loaded into compact, time-sorted arrays (the "model"), the
 * helpers on it, and the JSON of a distribution. Not installed; tests may include it
 * to build models by hand. */
#ifndef GT_ANALYZE_INT_H
#define GT_ANALYZE_INT_H

#include "gt_analyze.h"
#include "gt_json.h"
#include "gt_vocab.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define AN_KERNEL_DELAY_NS 30000 /* HTA's consecutive_kernel_delay: 30 us */
#define AN_LONG_GAP_NS 500000000 /* nsys analyze gpu_gaps: 500 ms */
#define AN_ALIVE INT64_MAX        /* end of an allocation never freed */

/* The rows the analysis computes with: times within +-AN_TIME_LIMIT_NS (36
 * years of nanoseconds), so that the difference of two times and the sum of
 * two such differences cannot overflow, an end not before its start, and
 * sizes from 0 to AN_BYTES_LIMIT (4 PiB). Rows outside these are refused at
 * load and counted (an_model.n_refused); sums over many rows saturate
 * (gt_sat_add). */
#define AN_TIME_LIMIT_NS ((int64_t)1 << 60)
#define AN_BYTES_LIMIT ((int64_t)1 << 52)

/* A span on the device timeline: a kernel, copy, memset or (CPU traces) a CPU op. */
typedef struct an_act {
    int64_t start_ns, end_ns;
    int64_t corr;      /* correlation id of the launch; 0 none */
    int64_t tid;       /* CPU op: its thread; 0 otherwise */
    gt_string_id name;
    int32_t device, stream;
    int32_t pid;       /* the process (a rank of a distributed job); 0 unknown */
    int8_t kind;       /* GT_EV_KERNEL, GT_EV_MEMCPY, GT_EV_MEMSET, GT_EV_CPU_OP */
    bool nvtx;         /* CPU op: an NVTX range of a "compute" category */
} an_act;
/* One per kernel: held for every event of a trace, so no padding hole */
_Static_assert(sizeof(an_act) == 56, "an_act: 56 bytes");

typedef struct an_copy {
    int64_t start_ns, end_ns, bytes, corr;
    int32_t device;
    int8_t copy_kind, src_kind, dst_kind; /* -1 copy_kind: memset; mem kind in src_kind */
} an_copy;

typedef struct an_api {
    int64_t start_ns, end_ns, tid, corr;
    gt_string_id name;
    int16_t driver; /* GT_API_DRIVER */
    int16_t foreign; /* another event class (nsys 2.x wraps calls in class 67 copies) */
} an_api;

/* Which call of a correlation id is its launch, met in start order (the
 * model's map, model_index.c, and the Chrome export's on disk): a later
 * call replaces the one kept when that one is a wrapper of another class,
 * or a driver call and the later one is not a wrapper. So the first
 * runtime call wins, else the last driver call, else the last wrapper. */
static inline bool an_call_replaces(bool kept_driver, bool kept_foreign, bool later_foreign)
{
    return kept_foreign || (kept_driver && !later_foreign);
}

typedef struct an_range { /* an NVTX range on one thread */
    int64_t start_ns, end_ns, tid;
    uint32_t text;  /* its gt_string_id (row_ok refuses one beyond 32 bits) */
    int32_t parent; /* index of the enclosing range of the same thread; -1 none */
} an_range;
/* One per range, millions of them: the loader holds at most INT32_MAX */
_Static_assert(sizeof(an_range) == 32, "an_range: 32 bytes");

/* A communication interval on a host thread: an NVTX range of a category
 * named "communication" (NCCL kernels stay on the device timeline, acts). */
typedef struct an_comm {
    int64_t start_ns, end_ns, tid;
    int64_t bytes;     /* an integer payload of the range; -1 unknown */
    gt_string_id name;
} an_comm;

typedef struct an_span { int64_t start_ns, end_ns, tid; } an_span; /* a host thread's interval */

typedef enum an_mem_op { /* memory events, normalised */
    AN_SEG_ALLOC, AN_SEG_FREE, AN_BLOCK_ALLOC, AN_BLOCK_FREE, AN_HEAP_RESET,
    AN_DEV_ALLOC, AN_DEV_FREE
} an_mem_op;

typedef struct an_mem {
    int64_t t_ns;
    int64_t tid;      /* allocating thread; 0 unknown */
    int64_t callchain;
    uint64_t heap, address;
    int64_t bytes;
    int32_t stream;
    int8_t op;        /* an_mem_op */
} an_mem;

/* What a window's rows cannot tell of the whole trace, kept beside the
 * report at close (report_window.c) for `--steps A:B` to read only its
 * window (model_window.c): each field is what an_model_load's model has. */
#define AN_MAX_DEVICES 64 /* the summary's devices (summary.c) */
typedef struct an_whole {
    int64_t span_start_ns, span_end_ns, n_refused;
    int64_t max_act_ns, main_tid;
    int64_t max_api_ns;       /* the longest API call */
    int64_t launch_before_ns; /* how long before an activity its launch call started, at most (>= 0) */
    int64_t launch_after_ns;  /* how long after, at most (>= 0): clocks of odd traces */
    int64_t alloc_before_ns, alloc_after_ns; /* the same of device allocations' calls */
    int64_t n_ooms;           /* allocation failures (oom.c): none, no need to look */
    int64_t n_events[GT_EV_N_KINDS]; /* the tables' rows (gt_trace_count) */
    bool any_kernel, cpu_timeline;
    int32_t devices[AN_MAX_DEVICES]; /* the device timeline's, in the order it meets them */
    size_t n_devices;
} an_whole;

typedef struct an_model {
    gt_trace *t;
    an_act *acts; size_t n_acts;        /* device timeline, by start */
    bool cpu_timeline;
    an_copy *copies; size_t n_copies;   /* memcpy and memset, by start */
    an_api *apis; size_t n_apis;        /* by start */
    an_range *ranges; size_t n_ranges;  /* by (tid, start) */
    an_mem *mem; size_t n_mem;          /* by time */
    an_comm *comms; size_t n_comms;     /* by start */
    /* a trace with kernels: its "compute" push/pop ranges, which acts do
     * not hold (NULL otherwise); in load order */
    an_span *compute_ranges; size_t n_compute_ranges;
    int64_t span_start_ns, span_end_ns;
    int64_t max_act_ns;                 /* longest activity: bounds look-backs */
    int64_t main_tid;                   /* thread with most CUDA calls (or ranges) */
    int64_t n_refused;                  /* rows refused at load: times or sizes out of range */
    int64_t n_dropped;                  /* nsys 2.x wrapper calls dropped (drop_wrappers) */
    /* how long before and after a device allocation event its call
     * started, at most (an_model_load; >= 0) */
    int64_t alloc_before_ns, alloc_after_ns;
    /* a window read (an_model_load_window): the arrays hold the window's
     * device timeline and calls only; whole says the rest */
    bool windowed;
    an_whole whole;
    /* correlation id -> index into apis: a direct table when the ids are
     * dense (as CUPTI numbers them), else open addressing */
    int64_t *corr_keys; size_t *corr_vals; size_t corr_cap;
    uint32_t *corr_dense; int64_t corr_min; size_t corr_dense_n; /* index + 1; 0 none */
} an_model;

int an_model_load(an_model **out, gt_trace *t);
/* The part of the model the allocator's history and states read (model.c
 * says which); the same arrays for those, so the same answers. */
int an_model_load_memory(an_model **out, gt_trace *t);
/* The model `--steps` (opt) reads on a trace whose whole-trace facts were
 * kept (w): the NVTX ranges and memory events whole, as an_model_load_memory
 * loads them, and the device timeline and API calls of the window's steps
 * only, so that the report from it is the whole model's (model_window.c). */
int an_model_load_window(an_model **out, gt_trace *t, const an_whole *w, const gt_report_options *opt);
/* Whether a row from the reader is one to compute with (AN_TIME_LIMIT_NS);
 * what an_model_load refuses, for code that reads rows itself (exports). */
bool an_row_ok(const gt_event *ev);
void an_model_free(an_model *m);
/* Builds parents, the correlation map and main_tid after arrays are filled and sorted
 * (model_index.c); its parts, for loaders that fill some arrays only: */
int an_model_index(an_model *m);
int an_index_ranges(an_model *m); /* each range's parent */
int an_index_calls(an_model *m);  /* the correlation map */
void an_index_rest(an_model *m);  /* the longest activity, the main thread */
/* Doubles *cap (from 1024) and reallocates *arr of elem-byte elements. */
int an_grow(void **arr, size_t *cap, size_t elem);
void an_model_sort(an_model *m);
/* Sorts n elements of `size` bytes, stably (equal elements keep their
 * order), in about one pass when they are nearly sorted (model_sort.c). */
void an_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
/* The API call with this correlation id, or NULL. */
const an_api *an_model_launch(const an_model *m, int64_t corr);
/* Innermost range of thread tid containing t_ns; -1 none. */
int64_t an_model_range_at(const an_model *m, int64_t tid, int64_t t_ns);
/* "outer > inner" path of range i (malloc'd; "" for -1). */
char *an_model_range_path(const an_model *m, int64_t i);
/* Origin of an allocation: range path, plus the first frames of its callchain. */
char *an_model_origin(const an_model *m, int64_t tid, int64_t t_ns, int64_t callchain);
/* A name from the trace (borrowed; "" when the model has no trace). */
const char *an_str(const an_model *m, gt_string_id id);

/* Steps: ranges whose name marks a training step. */
typedef struct an_steps { gt_step *v; size_t n; } an_steps;
int an_steps_find(an_steps *out, const an_model *m);
/* The steps of one process (pid -1: any, as an_steps_find). */
int an_steps_find_pid(an_steps *out, const an_model *m, int64_t pid);
/* The steps of one process that opt's --steps selects (opt may be NULL):
 * NULL and 0 when none; the caller frees *out. */
int an_steps_selected(gt_step **out, size_t *out_n, const an_model *m, int64_t pid, const gt_report_options *opt);
bool an_is_step_name(const char *s, int64_t *out_number);

/* A range name that says the host is loading data ("data", "load", "batch"...). */
bool an_is_loader_name(const char *s);

/* Statistics. */
void an_dist(gt_dist *d, int64_t *durations, size_t n); /* sorts durations */

/* The whole report from a loaded model (gt_report_compute without the
 * load); gaps: every gap too (NULL: not wanted). */
int an_report_build(gt_report **out, const an_model *m, const gt_report_options *opt, gt_gap_span **gaps,
                    size_t *n_gaps);

/* The whole-trace facts of m and its default report r, for a window read
 * later (report_window.c); false: this trace is not one to read so. */
bool an_whole_of(an_whole *w, const an_model *m, const gt_report *r);
/* w as the text kept in the trace (malloc'd), and the key it is kept under. */
int an_whole_text(char **out, size_t *out_bytes, const an_whole *w);
const char *an_whole_key(void);
/* The facts of a kept body; false: not all of them, or not as written here. */
bool an_whole_parse(an_whole *w, const char *body, size_t n);
/* The facts kept in t at close; false: none, another build's, or the file
 * changed since (report_kept.c). */
bool an_whole_read(an_whole *w, gt_trace *t);

/* The Chrome export's processes (export_ranks.c). A set of a few hundred
 * keys at most (threads, streams, processes), in the order added. */
typedef struct an_rowset {
    int64_t *v;
    size_t n, cap;
} an_rowset;
int an_rowset_add(an_rowset *s, int64_t k);
/* The processes with events to export, ascending (malloc'd): those of m's
 * calls, ranges, activities and allocator actions, and with rows_from (a
 * model without calls and activities: its memory part) those of the trace's
 * calls and activities, read from disk. */
int an_export_pids(const an_model *m, gt_trace *rows_from, int64_t **pids_out, size_t *out_n);

/* Pieces of the report, each in its own file. */
int an_summary(gt_report *r, const an_model *m, const gt_report_options *opt);
/* The devices of m's device timeline, in the order it meets them (at most AN_MAX_DEVICES). */
size_t an_devices(int32_t ids[AN_MAX_DEVICES], const an_model *m);
int an_gaps(gt_gaps *g, const an_model *m, int64_t from_ns, int64_t to_ns, int top_n);
/* The same, with every gap into *all (malloc'd; by device, then start). */
int an_gaps_list(gt_gaps *g, const an_model *m, int64_t from_ns, int64_t to_ns, int top_n, gt_gap_span **all,
                 size_t *n_all);
int an_memory(gt_memory *mem, const an_model *m, gt_step *steps, size_t n_steps);
/* The allocator state of process pid (-1: the first with allocation events) at at_ns. */
int an_memory_state(gt_mem_state **out, const an_model *m, int64_t pid, int64_t at_ns);
/* The processes with allocation events, ascending (malloc'd; none: NULL, 0). */
int an_memory_pids(const an_model *m, int64_t **out, size_t *out_n);
/* One process's allocator history, from one replay: its totals after each
 * event and every life (gt_mem_life), by start. The lives are cut into
 * chunks of `chunk`; span[span_at[c] .. span_at[c + 1]) are the lives
 * before chunk c still alive when its first life began, so the lives alive
 * at t are among those of the last chunk begun by t and its span. */
typedef struct an_mem_hist {
    int64_t pid;
    int32_t device; /* -1: the process's whole, its devices not told apart */
    gt_mem_sample *samples; size_t n_samples;
    gt_mem_life *lives; size_t n_lives, cap_lives;
    size_t chunk, n_chunks;
    size_t *span_at; uint32_t *span;
} an_mem_hist;
/* Builds the chunks' spans of h (after its lives are complete). */
int an_mem_hist_index(an_mem_hist *h);
/* Every allocator's history, by (pid, device); none: one empty process 0. */
int an_memory_hists(an_mem_hist **out, size_t *out_n, const an_model *m);
void an_mem_hists_free(an_mem_hist *v, size_t n);
/* The allocator of h at at_ns (events at at_ns included). */
int an_mem_hist_state(gt_mem_state **out, const an_model *m, const an_mem_hist *h, int64_t at_ns);
/* The moment step's allocated bytes peaked in h. */
int64_t an_mem_hist_step_peak(const an_mem_hist *h, const gt_step *step);
/* The index of process pid in hists (-1: the first); GT_ERR_NOTFOUND. */
int an_mem_hist_find(size_t *out, const an_mem_hist *v, size_t n, int64_t pid, const char *path);
/* The states of hists (pid -1: every one) at at_ns, or (step >= 0) each at
 * the moment its own step `step` (else the trace's) peaked. */
int an_mem_states(gt_mem_states **out, const an_model *m, const an_mem_hist *v, size_t n, int64_t pid,
                  int64_t at_ns, int64_t step);
/* How an_mem_states_read asks an allocator (v[k]) when its step peaked and
 * what it held at a moment: from its history (an_mem_states), or from a
 * replay up to then (an_memory_states_at, which keeps no history). */
typedef struct an_mem_reader {
    int (*peak)(void *ctx, const an_model *m, size_t k, const gt_step *step, int64_t *out_ns);
    int (*state)(void *ctx, const an_model *m, size_t k, int64_t at_ns, gt_mem_state **out);
    void *ctx;
} an_mem_reader;
/* an_mem_states with v telling the allocators only (pid, device, n_samples
 * 0 for none), and rd answering for them. */
int an_mem_states_read(gt_mem_states **out, const an_model *m, const an_mem_hist *v, size_t n, int64_t pid,
                       int64_t at_ns, int64_t step, const an_mem_reader *rd);
/* an_mem_states from replays of the model: memory for one allocator's live
 * blocks at a time, not every event's history (memory_history.c). */
int an_memory_states_at(gt_mem_states **out, const an_model *m, int64_t pid, int64_t at_ns, int64_t step);

/* The allocator's history as PyTorch's trace actions (for memviz). */
enum { AN_ACT_ALLOC, AN_ACT_FREE, AN_ACT_SEG_ALLOC, AN_ACT_SEG_FREE };
typedef struct an_mem_action {
    int64_t t_ns;
    uint64_t address;
    int64_t bytes;
    int32_t stream;
    int64_t tid, callchain, alloc_ns; /* who made it, and when (for frames) */
    int8_t action;
    int64_t pid;  /* the process whose allocator did it */
    int64_t seq;  /* its place in the order handed out */
} an_mem_action;
/* Every process's actions, each replayed on its own, in time order (at one
 * time by pid, each allocator's in the order it made them). */
int an_memory_actions(const an_model *m, an_mem_action **out, size_t *out_n);
/* One process's actions (pid -1: every process's). */
int an_memory_actions_pid(const an_model *m, int64_t pid, an_mem_action **out, size_t *out_n);
/* The same actions, in the same order, handed to fn one at a time and not
 * kept: memory for the live allocations only. fn returns 0 to go on, 1 to
 * stop (then this returns 0), or a negative status, which this returns. */
typedef int (*an_mem_action_fn)(void *ctx, const an_mem_action *a);
int an_memory_each_action(const an_model *m, int64_t pid, an_mem_action_fn fn, void *ctx);
/* Communication per rank and step (r's steps and window must be set). */
int an_comm_measure(gt_comm *cm, const an_model *m, const gt_report *r, const gt_report_options *opt);
void an_comm_clear(gt_comm *cm);
/* Steps per rank (rank_steps.c; r's comm measured first). */
int an_rank_steps_measure(gt_rank_steps *rs, const an_model *m, const gt_report *r, const gt_report_options *opt);
void an_rank_steps_clear(gt_rank_steps *rs);
/* The Steps by rank section as text and as JSON ("rank_steps":{...}). */
void an_rank_steps_print_text(const gt_report *r, FILE *f);
void an_rank_steps_print_json(const gt_report *r, gt_json *j);
int an_advice(gt_report *r, const an_model *m);
void an_gaps_clear(gt_gaps *g);
void an_memory_clear(gt_memory *mem);

/* Union of busy time on the device timeline clipped to [from, to); device
 * AN_ANY_DEVICE counts all devices as one. kernels_only skips copies/memsets. */
#define AN_ANY_DEVICE INT32_MIN
int64_t an_busy(const an_model *m, int32_t device, bool kernels_only, int64_t from_ns, int64_t to_ns);
/* Index of the first activity that may overlap a time (uses max_act_ns). */
size_t an_first_act(const an_model *m, int64_t from_ns);

/* Strings. */
char *an_strdup(const char *s);
char *an_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A rank of the Communication section: "rank 1 (pid 4993)", "pid 4993" when
 * the trace does not say the rank; NCCL adds " dev 0". */
const char *an_rank_label(char *buf, size_t n, const gt_comm_rank *k);

/* JSON: a distribution as "key":{"n":..,"total_ns":..,...,"p95_ns":..}. */
void an_json_dist(gt_json *j, const char *key, const gt_dist *d);

#endif
