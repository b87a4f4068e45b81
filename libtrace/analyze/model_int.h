/* model_int.h: what the model's loaders share between model.c (the whole
 * trace, the memory part) and model_window.c (a window of steps): the
 * loading state and one loader's description. Not for the analyses, which
 * read the loaded model only. */
#ifndef GT_MODEL_INT_H
#define GT_MODEL_INT_H

#include "analyze_int.h"

/* What loading needs besides the model: array capacities, and the ranges
 * with a category, kept aside until the categories' names are known (and,
 * for compute ops, whether the trace has kernels). */
enum { N_COMPUTE_CATS = 256 }; /* per list: a few categories in each of up to 256 processes */
/* Categories of one name, by (process, domain, id): NVTX domains and their
 * categories belong to a process, and the processes of one trace (the ranks
 * of a job, a launcher and its tools) may number theirs alike. pid 0: a
 * category named on an unknown thread, taken to hold in every process. */
typedef struct cat_list {
    struct { int64_t pid, domain; int32_t category; } v[N_COMPUTE_CATS];
    size_t n;
} cat_list;
typedef struct load_state {
    size_t caps[6]; /* acts, copies, apis, ranges, mem, comms */
    cat_list compute, comm; /* categories named "compute", "communication" */
    struct cand_op {
        int64_t start_ns, end_ns, tid, domain, bytes;
        int32_t category;
        bool pushpop; /* a push/pop range (not start/end) */
        gt_string_id text;
    } *ops;
    size_t n_ops, cap_ops; /* ranges with a category, by start */
} load_state;

/* One thread's share of the loading: some kinds, read through one handle.
 * The two loaders fill different arrays of the model. */
typedef struct loader {
    an_model *m;
    gt_trace *t;
    load_state *ls;
    const gt_event_kind *kinds;
    size_t n_kinds;
    int (*finish)(an_model *m); /* sorts and indexes what it loaded */
    const int64_t *only_corr;   /* API calls: only these correlation ids (sorted); NULL all */
    size_t n_only_corr;
    bool ranged;              /* only the rows starting in [from_ns, to_ns) (a window read) */
    int64_t from_ns, to_ns;
    bool any;                 /* a row was read */
    int64_t n_refused;        /* rows out of range (row_ok) */
    int64_t first_ns, last_ns; /* over every row read: the trace's time span */
    int rc;
    char msg[512];            /* a failure's message, for the thread that reports it */
} loader;

/* Reads L's kinds into L->m, then L->finish; a failure's message in L->msg. */
int an_load_run(loader *L);
/* The finishers of the two loaders: device (sorts acts, copies, calls;
 * indexes the calls) and host (sorts ranges and memory; the ranges' parents). */
int an_load_finish_device(an_model *m);
int an_load_finish_host(an_model *m);
/* A new model of t's host rows alone (NVTX, device memory, the heap): what a
 * partial load (memory, a window of steps) starts from; *n_refused its rows
 * left out. *out NULL on failure (the message set). */
int an_load_host_only(an_model **out, gt_trace *t, load_state *ls, int64_t *n_refused);
/* After the loaders: communication ranges, the CPU ops (read through cpu,
 * whose range applies; only for their span when any_kernel) or the compute
 * ranges, and the device timeline sorted. *out_cpu_ops: CPU ops joined it. */
int an_load_cpu(an_model *m, load_state *ls, loader *cpu, bool any_kernel, bool *out_cpu_ops);
/* nsys 2.x's wrapper calls dropped (an_model.n_dropped counts them). */
int an_drop_wrappers(an_model *m);

#endif
