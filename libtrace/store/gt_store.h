/* gt_store.h: the one API that knows the trace format.
 *
 * A trace is an SQLite file. Every kind of event that Nsight Systems' SQLite
 * export has a table for is written to that table with nsys 2024.5's names,
 * columns, types and enum values (export schema 3.13); the rest goes to
 * GTRACE_* tables (see schema.c). The writer is used from one thread; the
 * reader opens gtrace traces and real nsys exports (schemas 2.9 to 3.13).
 *
 * This header does not know CUPTI or NVTX: the capture library translates
 * their records into the structs below.
 *
 * Conventions: functions return 0 or a negative gt_status; the message of the
 * last failure on this thread is gt_error_last(). `T **out` hands ownership to
 * the caller, who frees it with T's _free function (which accepts NULL).
 */
#ifndef GT_STORE_H
#define GT_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gt_base.h" /* gt_status, gt_error_*: the conventions below */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- identifiers -------------------------------------------------------- */

/* nsys serializes process and thread ids as (vmId << 48) | (pid << 24) | tid. */
#define GT_VM_ID 1
static inline int64_t gt_global_pid(int64_t pid)
{
    return ((int64_t)GT_VM_ID << 48) | ((pid & 0xffffff) << 24);
}
static inline int64_t gt_global_tid(int64_t pid, int64_t tid)
{
    return gt_global_pid(pid) | (tid & 0xffffff);
}
static inline int64_t gt_pid_of(int64_t global_id) { return (global_id >> 24) & 0xffffff; }
static inline int64_t gt_tid_of(int64_t global_tid) { return global_tid & 0xffffff; }

/* An id into the trace's StringIds table; 0 means "no string". */
typedef int64_t gt_string_id;

/* ---- enum values, as nsys numbers them ---------------------------------- */

enum { /* ENUM_CUDA_MEMCPY_OPER */
    GT_COPY_UNKNOWN = 0, GT_COPY_HTOD = 1, GT_COPY_DTOH = 2, GT_COPY_HTOA = 3,
    GT_COPY_ATOH = 4, GT_COPY_ATOA = 5, GT_COPY_ATOD = 6, GT_COPY_DTOA = 7,
    GT_COPY_DTOD = 8, GT_COPY_HTOH = 9, GT_COPY_PTOP = 10,
};
enum { /* ENUM_CUDA_MEM_KIND: nsys's numbering, not CUPTI's */
    GT_MEM_PAGEABLE = 0, GT_MEM_PINNED = 1, GT_MEM_DEVICE = 2, GT_MEM_ARRAY = 3,
    GT_MEM_MANAGED = 4, GT_MEM_DEVICE_STATIC = 5, GT_MEM_MANAGED_STATIC = 6,
    GT_MEM_UNKNOWN = 7,
};
enum { /* ENUM_CUPTI_SYNC_TYPE */
    GT_SYNC_UNKNOWN = 0, GT_SYNC_EVENT = 1, GT_SYNC_STREAM_WAIT_EVENT = 2,
    GT_SYNC_STREAM = 3, GT_SYNC_CONTEXT = 4,
};
enum { /* ENUM_NSYS_EVENT_CLASS, for CUPTI_ACTIVITY_KIND_RUNTIME.eventClass */
    GT_API_RUNTIME = 0, GT_API_DRIVER = 1,
};
enum { /* ENUM_NSYS_EVENT_TYPE, for NVTX_EVENTS.eventType */
    GT_NVTX_CATEGORY = 33, /* a category named: id in category, domain in domainId */
    GT_NVTX_MARK = 34, GT_NVTX_THREAD_NAME = 39, GT_NVTX_PUSHPOP = 59,
    GT_NVTX_STARTEND = 60, GT_NVTX_DOMAIN_CREATE = 75,
};
enum { /* ENUM_CUDA_DEV_MEM_EVENT_OPER */
    GT_DEVMEM_ALLOC = 0, GT_DEVMEM_FREE = 1,
};

/* ---- events ------------------------------------------------------------- */
/* Times are int64 nanoseconds on the trace's one clock.
 *
 * What the reader hands out is within these bounds, whatever the file holds
 * (rows outside them are refused: see gt_trace_rejected): every time within
 * +-GT_TIME_LIMIT_NS (about 104 days either side of the trace's zero), every
 * end at or after its start and at most GT_TIME_LIMIT_NS after it, every
 * size and count (bytes, flops) within [0, GT_SIZE_LIMIT]. So a difference
 * of two times, or a time plus a duration, cannot overflow, and neither can
 * a sum of up to 1023 durations or sizes; longer sums need a wider type or
 * a saturating add. */
#define GT_TIME_LIMIT_NS ((int64_t)1 << 53)
#define GT_SIZE_LIMIT ((int64_t)1 << 53)

typedef struct gt_kernel { /* CUPTI_ACTIVITY_KIND_KERNEL */
    int64_t start_ns, end_ns;
    int64_t global_pid;
    int32_t device_id, context_id, stream_id;
    int64_t correlation_id;
    gt_string_id demangled_name, short_name, mangled_name;
    int32_t grid_x, grid_y, grid_z;
    int32_t block_x, block_y, block_z;
    int32_t registers_per_thread;
    int32_t static_shared_bytes, dynamic_shared_bytes;
    int32_t local_per_thread_bytes;
    int64_t local_total_bytes;
    int64_t grid_id;
    int32_t launch_type, cache_config, shared_limit_config; /* nsys enums */
    int64_t graph_node_id; /* 0: not launched from a graph */
} gt_kernel;

typedef struct gt_memcpy { /* CUPTI_ACTIVITY_KIND_MEMCPY */
    int64_t start_ns, end_ns;
    int64_t global_pid;
    int32_t device_id, context_id, stream_id;
    int64_t correlation_id;
    int64_t bytes;
    int32_t copy_kind;          /* GT_COPY_* */
    int32_t src_kind, dst_kind; /* GT_MEM_* */
    int32_t src_device_id, dst_device_id;
} gt_memcpy;

typedef struct gt_memset { /* CUPTI_ACTIVITY_KIND_MEMSET */
    int64_t start_ns, end_ns;
    int64_t global_pid;
    int32_t device_id, context_id, stream_id;
    int64_t correlation_id;
    int32_t value;
    int64_t bytes;
    int32_t mem_kind; /* GT_MEM_* */
} gt_memset;

typedef struct gt_api_call { /* CUPTI_ACTIVITY_KIND_RUNTIME: runtime and driver calls */
    int64_t start_ns, end_ns;
    int64_t global_tid;
    int64_t correlation_id;
    gt_string_id name; /* with nsys's version suffix: "cudaLaunchKernel_v7000" */
    int32_t event_class; /* GT_API_RUNTIME or GT_API_DRIVER */
    int32_t return_value;
    int64_t callchain_id; /* 0: none; else CUDA_CALLCHAINS.id */
} gt_api_call;

typedef struct gt_sync { /* CUPTI_ACTIVITY_KIND_SYNCHRONIZATION */
    int64_t start_ns, end_ns;
    int64_t global_pid;
    int32_t device_id, context_id, stream_id;
    int64_t correlation_id;
    int32_t sync_type; /* GT_SYNC_* */
    int64_t event_id;
} gt_sync;

typedef enum gt_payload_kind {
    GT_PAYLOAD_NONE = 0, GT_PAYLOAD_U64, GT_PAYLOAD_I64, GT_PAYLOAD_DOUBLE,
    GT_PAYLOAD_U32, GT_PAYLOAD_I32, GT_PAYLOAD_FLOAT,
} gt_payload_kind;

typedef struct gt_nvtx { /* NVTX_EVENTS */
    int64_t start_ns;
    int64_t end_ns;           /* -1 for marks and other instant events */
    int32_t event_type;       /* GT_NVTX_* */
    int64_t range_id;         /* start/end ranges; 0 otherwise */
    int32_t category;         /* 0: none */
    bool has_color;
    uint32_t color;           /* ARGB */
    gt_string_id text;        /* the message (registered or not) */
    bool text_registered;     /* a registered string (nvtxDomainRegisterString): NVTX_EVENTS.textId;
                                 otherwise the message is stored in NVTX_EVENTS.text, as nsys does */
    int64_t global_tid;
    int64_t end_global_tid;   /* start/end ranges ended on another thread; 0 otherwise */
    int64_t domain_id;        /* 0: the default domain */
    gt_payload_kind payload_kind;
    union { uint64_t u64; int64_t i64; double f64; uint32_t u32; int32_t i32; float f32; } payload;
} gt_nvtx;

typedef struct gt_gpu_memory { /* CUDA_GPU_MEMORY_USAGE_EVENTS */
    int64_t start_ns;
    int64_t global_pid;
    int32_t device_id, context_id;
    uint64_t address;
    uint64_t pc;
    int64_t bytes;
    int32_t mem_kind;  /* GT_MEM_* */
    int32_t operation; /* GT_DEVMEM_ALLOC or GT_DEVMEM_FREE */
    int64_t correlation_id;
    int32_t stream_id;
    int64_t callchain_id; /* GTRACE extension (GTRACE_GPU_MEMORY_STACKS); 0: none */
} gt_gpu_memory;

typedef enum gt_heap_op { /* GTRACE_MEMORY_EVENTS.operation */
    GT_HEAP_REGISTER = 0,     /* a heap (an allocator's pool) was registered */
    GT_HEAP_UNREGISTER = 1,
    GT_HEAP_RESET = 2,        /* all regions of a heap were released */
    GT_REGION_REGISTER = 3,   /* a block was handed out */
    GT_REGION_RESIZE = 4,
    GT_REGION_UNREGISTER = 5, /* a block was given back */
    GT_REGION_NAME = 6,
} gt_heap_op;

/* NVTX memory API events (nvtxMemHeapRegister, nvtxMemRegionsRegister...):
 * how caching allocators announce their pools and blocks. GTRACE_MEMORY_EVENTS. */
typedef struct gt_heap_event {
    int64_t start_ns;
    int64_t global_tid;
    int32_t operation;    /* gt_heap_op */
    uint64_t heap_id;     /* the nvtxMemHeapHandle_t value */
    uint64_t address;     /* region (or heap) address */
    int64_t bytes;        /* region (or heap) size; new size for RESIZE */
    int32_t heap_usage;   /* NVTX_MEM_HEAP_USAGE_TYPE_*: 0 unknown, 1 sub-allocator, 2 layout */
    int32_t memory_type;  /* NVTX_MEM_TYPE_*: 1 virtual address */
    gt_string_id name;    /* heap or region name; 0: none */
    int64_t domain_id;
    int64_t callchain_id; /* 0: none */
} gt_heap_event;

/* A host compute op (the trainer's CPU backend, anything not a CUDA kernel). GTRACE_CPU_OPS. */
typedef struct gt_cpu_op {
    int64_t start_ns, end_ns;
    int64_t global_tid;
    gt_string_id name;
    int32_t stream_id; /* the backend's logical stream */
    int64_t flops;     /* 0 when unknown */
    int64_t bytes;     /* bytes read and written; 0 when unknown */
} gt_cpu_op;

typedef enum gt_event_kind {
    GT_EV_KERNEL = 0, GT_EV_MEMCPY, GT_EV_MEMSET, GT_EV_API, GT_EV_SYNC,
    GT_EV_NVTX, GT_EV_GPU_MEMORY, GT_EV_HEAP, GT_EV_CPU_OP,
    GT_EV_N_KINDS
} gt_event_kind;

typedef struct gt_event {
    gt_event_kind kind;
    union {
        gt_kernel kernel;
        gt_memcpy memcpy;
        gt_memset memset;
        gt_api_call api;
        gt_sync sync;
        gt_nvtx nvtx;
        gt_gpu_memory gpu_memory;
        gt_heap_event heap;
        gt_cpu_op cpu_op;
    } u;
} gt_event;

/* "kernel", "memcpy"...; the nsys or GTRACE table behind each kind. */
const char *gt_event_kind_name(gt_event_kind kind);
const char *gt_event_kind_table(gt_event_kind kind);

/* Start of an event of any kind (instant events: their only time). */
int64_t gt_event_start(const gt_event *ev);
/* End of an event; equals start for instant events. */
int64_t gt_event_end(const gt_event *ev);

/* ---- descriptions ------------------------------------------------------- */

typedef struct gt_gpu_info { /* TARGET_INFO_GPU (the columns gtrace fills) */
    int32_t id;               /* CUDA device ordinal */
    const char *name;
    const char *bus_location; /* "0000:c1:00.0" */
    const char *uuid;
    const char *chip_name;
    int64_t total_memory_bytes;
    int64_t l2_cache_bytes;
    int64_t memory_bandwidth_bytes_per_s;
    int64_t clock_rate_hz;
    int32_t sm_count;
    int32_t compute_major, compute_minor;
    int32_t max_threads_per_block, threads_per_warp;
    int64_t max_shmem_per_block, max_shmem_per_block_optin, max_shmem_per_sm;
    int32_t max_registers_per_block, max_registers_per_sm;
    int32_t async_engines;
} gt_gpu_info;

typedef struct gt_frame { /* one row of CUDA_CALLCHAINS */
    gt_string_id symbol, module;
    bool unresolved;
    uint64_t original_ip;
} gt_frame;

/* ---- writer ------------------------------------------------------------- */

typedef struct gt_writer gt_writer;

enum {
    GT_WRITE_OVERWRITE = 1u << 0, /* replace an existing file (else GT_ERR_EXISTS) */
};

/* Creates `path` and writes the schema and its metadata in one committed
 * transaction, so the file is a valid (empty) trace from here on. */
int gt_writer_open(gt_writer **out, const char *path, unsigned flags);

/* Interns `s` once; the same string gives the same id for the writer's life. */
int gt_writer_intern(gt_writer *w, const char *s, gt_string_id *out_id);

/* Events are added inside a batch. A commit makes everything before it
 * durable: a program killed after it leaves a readable trace with that data. */
int gt_writer_begin(gt_writer *w);
int gt_writer_add(gt_writer *w, const gt_event *ev);
int gt_writer_commit(gt_writer *w);

/* Descriptions (inside or outside a batch). */
int gt_writer_add_process(gt_writer *w, int64_t pid, const char *name);
int gt_writer_add_thread_name(gt_writer *w, int64_t global_tid, const char *name, int32_t priority);
int gt_writer_add_gpu(gt_writer *w, const gt_gpu_info *gpu);
int gt_writer_add_callchain(gt_writer *w, int64_t callchain_id, const gt_frame *frames, size_t n_frames);
/* The traced program's command line, environment and options (GTRACE_RUN_CONFIG). */
int gt_writer_add_config(gt_writer *w, int64_t global_pid, const char *key, const char *value);
/* Per process (its global pid), written by the launcher as the process
 * ends: its threads' time on a CPU and runnable on a runqueue waiting for
 * one, in ns, and how many reads of /proc they come from; none where the
 * kernel keeps no schedstat. */
#define GT_CONFIG_SCHED_RUN "sched.run_ns"
#define GT_CONFIG_SCHED_WAIT "sched.wait_ns"
#define GT_CONFIG_SCHED_SAMPLES "sched.samples"
/* Events a producer had to drop, counted per kind (GTRACE_DROPPED_EVENTS). */
int gt_writer_add_dropped(gt_writer *w, int64_t global_pid, gt_event_kind kind, int64_t n_dropped);
/* Wall-clock time at the trace's zero (TARGET_INFO_SESSION_START_TIME). */
int gt_writer_set_session_start(gt_writer *w, int64_t utc_epoch_ns);

/* Adds entries to the run configuration of a finished gtrace trace at
 * `path` (GTRACE_RUN_CONFIG), in one transaction: for what is known only
 * once its writer has closed. GT_ERR_NOTTRACE for any other file. */
int gt_trace_add_config(const char *path, int64_t global_pid, const char *const keys[], const char *const values[],
                        size_t n);

/* Keeps what was computed from the finished gtrace trace at `path`
 * (GTRACE_SUMMARY: entry i is keys[i] -> bodies[i], body_bytes[i] bytes,
 * made by `gtrace_version`), replacing entries of the same keys, in one
 * transaction, and marks the file closed again (summary.c). Only a file
 * whose close mark holds gets them (GT_ERR_INVALID otherwise: a reader
 * would not trust them); GT_ERR_NOTTRACE for an nsys export or any other
 * file. */
int gt_trace_add_summary(const char *path, const char *gtrace_version, const char *const keys[],
                         const void *const bodies[], const size_t body_bytes[], size_t n);

/* Commits an open batch, adds the time indexes, and closes. Always frees `w`;
 * returns the first error met while finishing. */
int gt_writer_close(gt_writer *w);
/* Closes without finishing (indexes are not built): for a failed writer. */
void gt_writer_free(gt_writer *w);

/* Rows added per kind since open (what was written, for summaries). */
int64_t gt_writer_count(const gt_writer *w, gt_event_kind kind);

/* ---- reader ------------------------------------------------------------- */

typedef struct gt_trace gt_trace;

typedef enum gt_trace_origin { GT_ORIGIN_GTRACE = 0, GT_ORIGIN_NSYS = 1 } gt_trace_origin;

enum {
    GT_OPEN_ADD_INDEXES = 1u << 0, /* may write time indexes into a foreign file */
    /* Big files only (64 MB and more): the integrity check runs on a thread
     * of its own while the caller reads, and gt_trace_check gives its verdict.
     * For a caller that reads the whole file anyway and then asks. A file
     * gtrace's writer closed whole, unchanged since (its close mark holds),
     * is only hashed; any other gets PRAGMA quick_check. */
    GT_OPEN_CHECK_LATER = 1u << 1,
};

/* Opens a gtrace trace or an nsys export, read-only unless asked otherwise.
 * Missing, unreadable, non-SQLite, damaged, foreign and too-new files each
 * fail with their own status and a message that names the file. So does a
 * file where a table the reader reads is a view or a virtual table (which
 * could run any query, one that never ends included), has generated
 * columns, or lacks a column the reader needs (GT_ERR_CORRUPT). No query of
 * the reader may do more work than a budget that grows with the file's size:
 * one that would fails with GT_ERR_CORRUPT. */
int gt_trace_open(gt_trace **out, const char *path, unsigned flags);
/* A second handle on the file `t` was opened from, with a connection of its
 * own: a gt_trace serves one thread at a time, so a program that reads one
 * trace on two threads opens it once and reopens it for the other thread.
 * The file is not checked again. String ids from the file's StringIds are the
 * same in both handles; the ids a handle gives inline NVTX texts are its own. */
int gt_trace_reopen(gt_trace **out, const gt_trace *t);
/* The integrity check's verdict: 0, or the status and message gt_trace_open
 * would have failed with. Waits for a check GT_OPEN_CHECK_LATER started;
 * without one, 0 at once. */
int gt_trace_check(gt_trace *t);
void gt_trace_free(gt_trace *t);
/* The summary entry `key` of a gtrace trace, made by `gtrace_version`, in
 * *out (malloc'd, the caller frees it; *out_bytes bytes), only when the
 * file is as it was when the entry was kept: its close mark holds (waits
 * for a GT_OPEN_CHECK_LATER check, else tests the mark now). GT_ERR_NOTFOUND
 * when there is no entry or the file changed since; GT_ERR_VERSION when
 * another version made it. */
int gt_trace_summary(gt_trace *t, const char *key, const char *gtrace_version, void **out, size_t *out_bytes);
/* Whether the trace has kept summaries at all (usable or not). */
bool gt_trace_has_summary(gt_trace *t);
/* Whether the integrity check was the close mark's: the file, 64 MB or
 * more and opened with GT_OPEN_CHECK_LATER, is byte for byte what gtrace's
 * writer closed, so its rows are the ones the writer took (waits for the
 * check). False for every other file: those got PRAGMA quick_check. */
bool gt_trace_checked_by_mark(gt_trace *t);

gt_trace_origin gt_trace_origin_of(const gt_trace *t);
const char *gt_trace_path(const gt_trace *t);
/* "3.13.2" for nsys exports; gtrace's own schema version for gtrace traces. */
const char *gt_trace_schema_version(const gt_trace *t);
/* A value from META_DATA_EXPORT / EXPORT_META_DATA or GTRACE_RUN_CONFIG (pid 0); NULL if absent. */
const char *gt_trace_meta(const gt_trace *t, const char *name);

/* Calls fn on every row of GTRACE_RUN_CONFIG (none in an nsys export): the
 * run's own entries under global pid 0, then each process's (command line,
 * recorded environment, options). fn returns nonzero to stop; that value is
 * returned. The strings live until fn returns. */
typedef int (*gt_config_fn)(void *ctx, int64_t global_pid, const char *key, const char *value);
int gt_trace_each_config(gt_trace *t, gt_config_fn fn, void *ctx);

/* The string behind an id ("" for 0 or an unknown id). Borrowed from `t`.
 * Names and NVTX texts longer than 4 KiB are cut, at a character boundary,
 * and end in "... [N bytes, HASH]" (the whole length and a 64-bit FNV-1a of
 * the whole text), so that two long names stay apart and one name matches
 * across traces; metadata and configuration values, at 64 KiB. */
const char *gt_trace_string(const gt_trace *t, gt_string_id id);

/* Number of rows of a kind's table (0 when the table is absent), refused
 * rows included: the iterators hand out this many less gt_trace_rejected. */
int gt_trace_count(gt_trace *t, gt_event_kind kind, int64_t *out_n);
/* First start and last end over all event kinds, of the rows whose times the
 * reader accepts. */
int gt_trace_time_span(gt_trace *t, int64_t *out_start_ns, int64_t *out_end_ns);
/* Rows of a kind's table the reader refuses, and never hands out: a time or
 * a size outside the bounds above (see "events"), an end before its start,
 * a start or end that is NULL, a REAL, TEXT or BLOB where an integer
 * belongs, a kernel whose launch row is refused. A whole-table iteration
 * run to its end counts them; without one, the first call per kind reads
 * the table once. */
int gt_trace_rejected(gt_trace *t, gt_event_kind kind, int64_t *out_n);

typedef struct gt_process {
    int64_t global_pid, pid;
    const char *name;
    /* its rank in a distributed job, from the launcher's variables gtrace recorded
     * (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID, torchrun's RANK); -1 unknown */
    int32_t rank;
} gt_process;
typedef struct gt_thread { int64_t global_tid; const char *name; } gt_thread;
/* Descriptions, loaded at open; borrowed arrays. */
const gt_process *gt_trace_processes(const gt_trace *t, size_t *out_n);
const gt_thread *gt_trace_threads(const gt_trace *t, size_t *out_n);
const gt_gpu_info *gt_trace_gpus(const gt_trace *t, size_t *out_n);
/* The frames of a callchain, innermost first (borrowed, valid until the next call). */
int gt_trace_callchain(gt_trace *t, int64_t callchain_id, const gt_frame **out_frames, size_t *out_n);

/* Events the producers dropped (full buffers) of one kind, summed over the
 * processes of the trace (GTRACE_DROPPED_EVENTS; 0 for an nsys export). */
int gt_trace_dropped(gt_trace *t, gt_event_kind kind, int64_t *out_n);
/* Wall-clock time (UTC, ns since the epoch) at the trace's zero; GT_ERR_NOTFOUND if absent. */
int gt_trace_session_start(gt_trace *t, int64_t *out_utc_epoch_ns);

/* Time-ordered iteration over one kind of event, restricted to events that
 * overlap [from_ns, to_ns) (instant events: that lie in it). Pass INT64_MIN
 * and INT64_MAX for everything. Served by time indexes where the file has them. */
typedef struct gt_iter gt_iter;
int gt_iter_new(gt_iter **out, gt_trace *t, gt_event_kind kind, int64_t from_ns, int64_t to_ns);
/* The same order over the events whose start lies in [from_ns, to_ns),
 * however long: for a reader that knows how far back to look. */
int gt_iter_new_starting(gt_iter **out, gt_trace *t, gt_event_kind kind, int64_t from_ns, int64_t to_ns);
/* 1: *ev holds the next event; 0: no more; negative: an error. */
int gt_iter_next(gt_iter *it, gt_event *ev);
void gt_iter_free(gt_iter *it);

#ifdef __cplusplus
}
#endif
#endif /* GT_STORE_H */
