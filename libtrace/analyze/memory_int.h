/* memory_int.h: what memory.c (the replay) and memory_leaks.c (leaks and
 * spikes, read off a finished replay) share: the replay's records and
 * state. Not for the rest of the analysis, which reads gt_memory and the
 * history (an_mem_hist). */
#ifndef GT_MEMORY_INT_H
#define GT_MEMORY_INT_H

#include "analyze_int.h"

enum { REC_BLOCK, REC_SEGMENT, REC_DEVICE };

typedef struct rec { /* one allocation, from its birth to its free */
    int64_t start_ns, end_ns; /* end AN_ALIVE: never freed */
    uint64_t address, heap;
    int64_t bytes, tid, callchain;
    int32_t stream;
    int8_t kind;
    int64_t life; /* its open life in the history; -1 none (or not recording) */
    int64_t seq;  /* made the seq-th in its replay: the order of records reused */
} rec;

typedef struct live_map { /* address -> rec index of the live ones; open addressing */
    uint64_t *keys;
    int64_t *vals; /* -1 empty, -2 deleted */
    size_t cap, n_used;
} live_map;

/* The rows of one allocator, in time order (a copy of the model's, or the
 * model's own when they are all one allocator's): a process's on one
 * device, or all of a process's when some rows do not say their device
 * (device -1). */
typedef struct proc_mem {
    int64_t pid; /* 0: rows without a thread */
    int32_t device;
    an_mem *ev;
    size_t n;
    bool borrowed; /* ev is the model's */
} proc_mem;

typedef struct mem_split {
    proc_mem *v; size_t n; /* by (pid, device) */
    int64_t n_skipped;     /* rows no replay can use */
} mem_split;

/* The biggest blocks that lived a short time, noted as they end (a replay
 * that reuses records has no record of them at its end): the first
 * MEM_SPIKES by bytes, then by when they were made. */
enum { MEM_SPIKES = 10 };
typedef struct spike_watch {
    int8_t kind;      /* REC_BLOCK, or REC_DEVICE for a process without blocks */
    int64_t max_life; /* longer lives are not spikes */
    rec top[MEM_SPIKES];
    size_t n;
} spike_watch;

typedef struct emitter { /* the allocator's actions, for exports */
    an_mem_action_fn fn;
    void *ctx;
    int64_t n;  /* handed out so far: the next one's seq */
    int status; /* fn's first non-zero answer */
} emitter;

typedef struct replay {
    const an_model *m;
    const proc_mem *p;
    rec *recs; size_t n_recs, cap_recs;
    live_map live[3];
    live_map heap_blocks; /* heap id -> its live blocks, so a heap's end frees them */
    bool has_blocks, has_segments, has_device;
    int32_t device; /* of its device allocations: -1 none, -2 several */
    int64_t allocated, reserved;
    int64_t peak_alloc, peak_alloc_ns, peak_res, peak_res_ns, res_at_peak_alloc;
    int64_t n_ops[7];
    emitter *out; /* NULL: not handing out actions */
    /* reuse ended records (spare): where nothing reads a record after its
     * end (handing out actions, a state at one moment) */
    bool reuse;
    int64_t *spare; size_t n_spare, cap_spare;
    int64_t n_made;       /* records made: the next one's seq */
    spike_watch *spikes;  /* NULL: not watching */
    an_mem_hist *hist; /* NULL: not recording the history */
} replay;

/* memory.c's replay, for memory_history.c: the model's rows by allocator
 * (each one's in time order), and one allocator's replay, row by row. */
int mem_split_procs(mem_split *sp, const an_model *m);
void mem_split_free(mem_split *sp);
void mem_replay_init(replay *rp, const an_model *m, const proc_mem *p);
int mem_replay_event(replay *rp, const an_mem *e); /* a row of rp's allocator */
/* Rows from index from with time <= until_ns; *out_next: the next one's. */
int mem_replay_until(replay *rp, size_t from, int64_t until_ns, size_t *out_next);
void mem_replay_free(replay *rp);
/* rp's state now as the history of the moment t_ns: its totals the only
 * sample, its live records lives never ended (memory_state.c reads it as
 * any history); h's arrays are malloc'd. */
int mem_replay_moment(const replay *rp, int64_t t_ns, an_mem_hist *h);
/* When the allocator p peaked in step, as an_mem_hist_step_peak finds it
 * in p's history, from a replay that keeps none. */
int mem_replay_step_peak(const an_model *m, const proc_mem *p, const gt_step *step, int64_t *out_ns);

/* How long a spike lives at most: half a median step (a hundredth of the
 * trace without steps); -1: out of memory. And a record just ended, for w. */
int64_t mem_spike_max_life(const an_model *m, const gt_step *steps, size_t n_steps);
void mem_spike_note(spike_watch *w, const rec *r);
/* Leaks (never freed, growing step over step: the live records) and spikes
 * (short-lived blocks at a step's peak: rp->spikes) of a finished replay,
 * into mem. */
int mem_find_leaks(gt_memory *mem, const replay *rp, const gt_step *steps, size_t n_steps);
int mem_find_spikes(gt_memory *mem, const replay *rp, const gt_step *steps, size_t n_steps);

#endif /* GT_MEMORY_INT_H */
