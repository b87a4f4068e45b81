/* kineto_int.h: what the parts of the Kineto importer share, from the bottom
 * up: an event as read from the file and the walk over the file
 * (kineto_json.c), the replay of "[memory]" events (kineto_memory.c), and
 * the scan and the rows (kineto.c). Private to libtrace/import. */
#ifndef GT_KINETO_INT_H
#define GT_KINETO_INT_H

#include "import_int.h"

/* ---- an event as read (kineto_json.c) --------------------------------------- */

/* Kineto's "cat", the categories the importer knows. */
typedef enum kt_cat {
    KT_OTHER = 0, KT_CPU_OP, KT_USER_ANN, KT_GPU_USER_ANN, KT_PYTHON, KT_KERNEL, KT_MEMCPY, KT_MEMSET,
    KT_RUNTIME, KT_DRIVER, KT_SYNC, KT_INSTANT, KT_TRACE,
} kt_cat;

/* Where events of a category happened. */
typedef enum kt_side { KT_SIDE_NONE = 0, KT_SIDE_HOST, KT_SIDE_DEVICE } kt_side;

/* Integer args the importer reads. */
typedef enum kt_arg {
    KT_CORRELATION, KT_DEVICE, KT_STREAM, KT_CONTEXT, KT_BYTES, KT_REGISTERS, KT_SHARED, KT_ADDR,
    KT_MEM_BYTES, KT_TOTAL_ALLOC, KT_TOTAL_RES, KT_DEVICE_ID, KT_DEVICE_TYPE, KT_N_ARGS
} kt_arg;

/* Why an event cannot be read though the file can: the walk skips it and
 * counts it (kt_frame.n_bad), as the trace reader refuses a bad row. */
typedef enum kt_bad {
    KT_BAD_NONE = 0,
    KT_BAD_TIME,      /* ts or ts + dur beyond +-KT_TIME_LIMIT_NS (baseTimeNanoseconds added) */
    KT_BAD_NONFINITE, /* ts or dur NaN or Infinity (Python's json.dump writes them) */
    KT_BAD_NUL,       /* \u0000 in a string the importer reads */
    KT_BAD_LONG,      /* such a string over 16 MiB */
    KT_N_BAD
} kt_bad;
const char *kt_bad_name(kt_bad b);

/* Times, absolute and relative, are kept within +-(2^62 - 1) ns (146
 * years): the difference of any two then fits an int64. */
#define KT_TIME_LIMIT_NS (((int64_t)1 << 62) - 1)

typedef struct kt_event { /* one trace event, as much as the importer reads */
    kt_bad bad;
    char ph;
    kt_cat cat;
    char *name; size_t name_cap;
    char *meta; size_t meta_cap;  /* args.name (metadata events) */
    bool has_pid, has_tid, has_ts, has_dur;
    bool pid_is_num;
    int64_t pid, tid, ts_ns, dur_ns;
    unsigned has_arg;             /* 1 << kt_arg */
    int64_t arg[KT_N_ARGS];
    int32_t grid[3], block[3];
    int64_t in_elems;             /* elements of the first input (Input Dims); -1 unknown */
    int in_elem_bytes;            /* its element size (Input type); 0 unknown */
} kt_event;

kt_side kt_cat_side(kt_cat cat);
static inline bool kt_has(const kt_event *e, kt_arg a) { return e->has_arg & (1u << a); }
/* An int arg that fits 32 bits, else `dflt`. */
int32_t kt_arg32(const kt_event *e, kt_arg a, int32_t dflt);
/* An instant event ("i", "I"). */
static inline bool kt_is_instant(const kt_event *e) { return e->ph == 'i' || e->ph == 'I'; }
/* Events that become rows (and so count for the time span). */
bool kt_is_imported(const kt_event *e);

/* What the file says around its events. */
typedef struct kt_frame {
    int64_t check_base_ns;  /* in: added to each time for the range check */
    bool has_base;
    int64_t base_ns;   /* baseTimeNanoseconds */
    int32_t rank;      /* distributedInfo.rank; -1 unknown */
    int64_t n_bad[KT_N_BAD]; /* events skipped, by why */
} kt_frame;

typedef int (*kt_event_fn)(void *ctx, kt_event *e);
/* A device of deviceProperties: its "id" (-1 when absent) and figures. */
typedef int (*kt_gpu_fn)(void *ctx, int64_t id, const gt_gpu_info *g);

/* Walks the file: the top-level keys, every event of traceEvents that can
 * be read (the others counted in fi->n_bad) through `event`, every device of deviceProperties through `gpu` (may be NULL). A
 * bare array of events (Chrome's other form) is read too. */
int kt_walk(const char *path, kt_frame *fi, kt_event_fn event, kt_gpu_fn gpu, void *ctx);

/* ---- "[memory]" events (kineto_memory.c) ------------------------------------ */

typedef struct kt_mem_ev { /* a "[memory]" event, kept to be replayed in time order */
    int64_t t_ns, tid;     /* on the trace's clock; the global tid */
    uint64_t addr;
    int64_t bytes, total_alloc, total_res;
    int32_t device;        /* -1: the CPU */
    size_t seq;            /* order in the file */
} kt_mem_ev;

typedef struct kt_memory {
    kt_mem_ev *v; size_t n, cap;
} kt_memory;

/* Keeps an event (its seq is set here). */
int kt_memory_add(kt_memory *m, kt_mem_ev ev);
/* Replays the events, a device at a time in time order, into one heap per
 * device and a region per block (GTRACE_MEMORY_EVENTS). */
int kt_memory_write(kt_memory *m, im_out *o, gt_import_stats *st);
void kt_memory_free(kt_memory *m);

#endif
