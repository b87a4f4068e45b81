/* reader.c: the reading half of the store: gt_trace_* and gt_iter_*.
 *
 * Opens a gtrace trace or an Nsight Systems SQLite export (schema 3.x with
 * META_DATA_EXPORT and ENUM_* tables, 2.x with EXPORT_META_DATA), checks it
 * before trusting it (file header, PRAGMA quick_check, product and schema
 * version), loads the small description tables (strings, metadata,
 * processes, threads, GPUs) once, and serves typed, time-ordered iteration
 * over one kind of event at a time.
 *
 * It never changes a byte of the file it reads: rollback-journal files (nsys
 * exports, finished gtrace traces) are opened `immutable`, so SQLite takes no
 * locks and creates no side files. The one exception is GT_OPEN_ADD_INDEXES,
 * where the caller asks for time indexes to be written into the file.
 * It does not write traces (writer.c) nor define their tables (schema.c).
 */
#include "gt_store.h"
#include "schema.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the trace ----------------------------------------------------------- */

/* Strings handed out by the trace (names, metadata, interned NVTX texts) live
 * in blocks that never move, so borrowed pointers stay valid until free. */
typedef struct arena_block {
    struct arena_block *next;
    size_t used, size;
    char data[];
} arena_block;

typedef struct db_object { /* a table or view of the file (sqlite_master) */
    const char *name;
    bool is_view;
    bool without_rowid;
} db_object;

typedef struct meta_entry {
    const char *name, *value;
} meta_entry;

struct gt_trace {
    char *path;
    sqlite3 *db;
    bool live_wal; /* WAL file with a -wal beside it: read through SQLite's WAL protocol */
    int64_t file_bytes;
    gt_trace_origin origin;
    const char *schema_version;
    arena_block *arena;

    db_object *objects;
    size_t n_objects;
    meta_entry *meta; /* export metadata first, then GTRACE_RUN_CONFIG of pid 0 */
    size_t n_meta, cap_meta;

    /* StringIds, sorted by id; then the texts this reader interns itself
     * (NVTX messages stored inline), numbered from interned_base up. */
    int64_t *string_ids;
    const char **string_values;
    size_t n_strings;
    int64_t interned_base;
    const char **interned;
    size_t n_interned, cap_interned;
    uint32_t *intern_slots; /* open addressing: index into `interned` + 1; 0 is empty */
    size_t n_slots;

    gt_process *processes;
    size_t n_processes;
    gt_thread *threads;
    size_t n_threads;
    gt_gpu_info *gpus;
    size_t n_gpus;

    sqlite3_stmt *callchain_stmt;
    gt_frame *frames;
    size_t cap_frames;

    /* GTRACE_KERNEL_LAUNCHES, sorted by id, loaded on the first kernel read:
     * each a gt_kernel with only its launch_fields members set. */
    bool launches_loaded;
    int64_t *launch_ids;
    gt_kernel *launches;
    size_t n_launches;

    /* GT_OPEN_CHECK_LATER: the check on its own thread and connection */
    bool check_running;
    pthread_t check_thread;
    sqlite3 *check_db;
    int check_sqlite_rc; /* its outcome, read after the join */
    char *check_problem;
    bool check_failed;

    /* Longest event per kind, so a time-range query can bound start from
     * below; computed on the first range query of that kind. */
    bool max_dur_known[GT_EV_N_KINDS];
    int64_t max_dur_ns[GT_EV_N_KINDS];
};

/* ---- event layouts: which column goes to which struct member ------------- */

enum field_type {
    F_I64,         /* int64_t or uint64_t member (bits kept) */
    F_I32,         /* int32_t or uint32_t member */
    F_BOOL,        /* bool member */
    F_STR,         /* const char * member, copied into the arena; NULL -> "" */
    F_END_OR_NEG1, /* int64_t member; NULL -> -1 (the end of an instant NVTX event) */
    F_ID_START,    /* int64_t start from a GTRACE_KERNELS id */
    F_HOOK,        /* read by the kind's hook */
};

typedef struct field {
    const char *column;
    unsigned short offset; /* of the member in its struct */
    unsigned char type;    /* enum field_type */
    unsigned char joined;  /* 1: a column of the kind's joined table */
} field;

typedef struct gt_iter gt_iter;

typedef struct kind_desc {
    const char *table;
    const char *join_table; /* NULL: none */
    const char *join_on;    /* in terms of aliases m (table) and j (join_table) */
    const field *fields;
    size_t n_fields;
    bool instant;       /* one time only: no end column */
    bool start_from_id; /* GTRACE_KERNELS: rows are keyed by id = start << shift | k */
    int (*hook)(gt_iter *it, gt_event *ev);
} kind_desc;

struct gt_iter {
    gt_trace *t;
    sqlite3_stmt *stmt; /* NULL: nothing to iterate */
    const kind_desc *desc;
    gt_event_kind kind;
};

#define FLD(s, col, member, type) {col, offsetof(s, member), type, 0}
#define JFLD(s, col, member, type) {col, offsetof(s, member), type, 1}
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const field kernel_fields[] = {
    FLD(gt_kernel, "start", start_ns, F_I64),
    FLD(gt_kernel, "end", end_ns, F_I64),
    FLD(gt_kernel, "globalPid", global_pid, F_I64),
    FLD(gt_kernel, "deviceId", device_id, F_I32),
    FLD(gt_kernel, "contextId", context_id, F_I32),
    FLD(gt_kernel, "streamId", stream_id, F_I32),
    FLD(gt_kernel, "correlationId", correlation_id, F_I64),
    FLD(gt_kernel, "demangledName", demangled_name, F_I64),
    FLD(gt_kernel, "shortName", short_name, F_I64),
    FLD(gt_kernel, "mangledName", mangled_name, F_I64),
    FLD(gt_kernel, "gridX", grid_x, F_I32),
    FLD(gt_kernel, "gridY", grid_y, F_I32),
    FLD(gt_kernel, "gridZ", grid_z, F_I32),
    FLD(gt_kernel, "blockX", block_x, F_I32),
    FLD(gt_kernel, "blockY", block_y, F_I32),
    FLD(gt_kernel, "blockZ", block_z, F_I32),
    FLD(gt_kernel, "registersPerThread", registers_per_thread, F_I32),
    FLD(gt_kernel, "staticSharedMemory", static_shared_bytes, F_I32),
    FLD(gt_kernel, "dynamicSharedMemory", dynamic_shared_bytes, F_I32),
    FLD(gt_kernel, "localMemoryPerThread", local_per_thread_bytes, F_I32),
    FLD(gt_kernel, "localMemoryTotal", local_total_bytes, F_I64),
    FLD(gt_kernel, "gridId", grid_id, F_I64),
    FLD(gt_kernel, "launchType", launch_type, F_I32),
    FLD(gt_kernel, "cacheConfig", cache_config, F_I32),
    FLD(gt_kernel, "sharedMemoryLimitConfig", shared_limit_config, F_I32),
    FLD(gt_kernel, "graphNodeId", graph_node_id, F_I64),
};

/* gtrace traces: GTRACE_KERNELS (m), then the launch configuration from its
 * GTRACE_KERNEL_LAUNCHES row, which the reader keeps in memory (launch_hook):
 * a few hundred launch rows serve millions of kernels, and joining them row
 * by row in SQL took more time than reading the kernels. */
enum { GK_LAUNCH_ID = 6 }; /* position of launchId in gtrace_kernel_fields */
static const field gtrace_kernel_fields[] = {
    FLD(gt_kernel, "id", start_ns, F_ID_START),
    FLD(gt_kernel, "end", end_ns, F_I64),
    FLD(gt_kernel, "streamId", stream_id, F_I32),
    FLD(gt_kernel, "correlationId", correlation_id, F_I64),
    FLD(gt_kernel, "gridId", grid_id, F_I64),
    FLD(gt_kernel, "graphNodeId", graph_node_id, F_I64),
    [GK_LAUNCH_ID] = {"launchId", 0, F_HOOK, 0},
};

/* The columns of GTRACE_KERNEL_LAUNCHES, copied into each kernel of that launch. */
static const field launch_fields[] = {
    JFLD(gt_kernel, "globalPid", global_pid, F_I64),
    JFLD(gt_kernel, "deviceId", device_id, F_I32),
    JFLD(gt_kernel, "contextId", context_id, F_I32),
    JFLD(gt_kernel, "demangledName", demangled_name, F_I64),
    JFLD(gt_kernel, "shortName", short_name, F_I64),
    JFLD(gt_kernel, "mangledName", mangled_name, F_I64),
    JFLD(gt_kernel, "gridX", grid_x, F_I32),
    JFLD(gt_kernel, "gridY", grid_y, F_I32),
    JFLD(gt_kernel, "gridZ", grid_z, F_I32),
    JFLD(gt_kernel, "blockX", block_x, F_I32),
    JFLD(gt_kernel, "blockY", block_y, F_I32),
    JFLD(gt_kernel, "blockZ", block_z, F_I32),
    JFLD(gt_kernel, "registersPerThread", registers_per_thread, F_I32),
    JFLD(gt_kernel, "staticSharedMemory", static_shared_bytes, F_I32),
    JFLD(gt_kernel, "dynamicSharedMemory", dynamic_shared_bytes, F_I32),
    JFLD(gt_kernel, "localMemoryPerThread", local_per_thread_bytes, F_I32),
    JFLD(gt_kernel, "localMemoryTotal", local_total_bytes, F_I64),
    JFLD(gt_kernel, "launchType", launch_type, F_I32),
    JFLD(gt_kernel, "cacheConfig", cache_config, F_I32),
    JFLD(gt_kernel, "sharedMemoryLimitConfig", shared_limit_config, F_I32),
};

static const field memcpy_fields[] = {
    FLD(gt_memcpy, "start", start_ns, F_I64),
    FLD(gt_memcpy, "end", end_ns, F_I64),
    FLD(gt_memcpy, "globalPid", global_pid, F_I64),
    FLD(gt_memcpy, "deviceId", device_id, F_I32),
    FLD(gt_memcpy, "contextId", context_id, F_I32),
    FLD(gt_memcpy, "streamId", stream_id, F_I32),
    FLD(gt_memcpy, "correlationId", correlation_id, F_I64),
    FLD(gt_memcpy, "bytes", bytes, F_I64),
    FLD(gt_memcpy, "copyKind", copy_kind, F_I32),
    FLD(gt_memcpy, "srcKind", src_kind, F_I32),
    FLD(gt_memcpy, "dstKind", dst_kind, F_I32),
    FLD(gt_memcpy, "srcDeviceId", src_device_id, F_I32),
    FLD(gt_memcpy, "dstDeviceId", dst_device_id, F_I32),
};

static const field memset_fields[] = {
    FLD(gt_memset, "start", start_ns, F_I64),
    FLD(gt_memset, "end", end_ns, F_I64),
    FLD(gt_memset, "globalPid", global_pid, F_I64),
    FLD(gt_memset, "deviceId", device_id, F_I32),
    FLD(gt_memset, "contextId", context_id, F_I32),
    FLD(gt_memset, "streamId", stream_id, F_I32),
    FLD(gt_memset, "correlationId", correlation_id, F_I64),
    FLD(gt_memset, "value", value, F_I32),
    FLD(gt_memset, "bytes", bytes, F_I64),
    FLD(gt_memset, "memKind", mem_kind, F_I32),
};

static const field api_fields[] = {
    FLD(gt_api_call, "start", start_ns, F_I64),
    FLD(gt_api_call, "end", end_ns, F_I64),
    FLD(gt_api_call, "globalTid", global_tid, F_I64),
    FLD(gt_api_call, "correlationId", correlation_id, F_I64),
    FLD(gt_api_call, "nameId", name, F_I64),
    FLD(gt_api_call, "eventClass", event_class, F_I32),
    FLD(gt_api_call, "returnValue", return_value, F_I32),
    FLD(gt_api_call, "callchainId", callchain_id, F_I64),
};

static const field sync_fields[] = {
    FLD(gt_sync, "start", start_ns, F_I64),
    FLD(gt_sync, "end", end_ns, F_I64),
    FLD(gt_sync, "globalPid", global_pid, F_I64),
    FLD(gt_sync, "deviceId", device_id, F_I32),
    FLD(gt_sync, "contextId", context_id, F_I32),
    FLD(gt_sync, "streamId", stream_id, F_I32),
    FLD(gt_sync, "correlationId", correlation_id, F_I64),
    FLD(gt_sync, "syncType", sync_type, F_I32),
    FLD(gt_sync, "eventId", event_id, F_I64),
};

/* NVTX columns that nvtx_hook reads by position. */
enum {
    NV_START, NV_END, NV_TYPE, NV_RANGE, NV_CATEGORY, NV_TID, NV_END_TID, NV_DOMAIN,
    NV_COLOR, NV_TEXT, NV_TEXT_ID, NV_U64, NV_I64, NV_F64, NV_U32, NV_I32, NV_F32,
    NV_N_COLUMNS
};

static const field nvtx_fields[] = {
    [NV_START] = FLD(gt_nvtx, "start", start_ns, F_I64),
    [NV_END] = FLD(gt_nvtx, "end", end_ns, F_END_OR_NEG1),
    [NV_TYPE] = FLD(gt_nvtx, "eventType", event_type, F_I32),
    [NV_RANGE] = FLD(gt_nvtx, "rangeId", range_id, F_I64),
    [NV_CATEGORY] = FLD(gt_nvtx, "category", category, F_I32),
    [NV_TID] = FLD(gt_nvtx, "globalTid", global_tid, F_I64),
    [NV_END_TID] = FLD(gt_nvtx, "endGlobalTid", end_global_tid, F_I64),
    [NV_DOMAIN] = FLD(gt_nvtx, "domainId", domain_id, F_I64),
    [NV_COLOR] = FLD(gt_nvtx, "color", color, F_HOOK),
    [NV_TEXT] = FLD(gt_nvtx, "text", text, F_HOOK),
    [NV_TEXT_ID] = FLD(gt_nvtx, "textId", text, F_HOOK),
    [NV_U64] = FLD(gt_nvtx, "uint64Value", payload, F_HOOK),
    [NV_I64] = FLD(gt_nvtx, "int64Value", payload, F_HOOK),
    [NV_F64] = FLD(gt_nvtx, "doubleValue", payload, F_HOOK),
    [NV_U32] = FLD(gt_nvtx, "uint32Value", payload, F_HOOK),
    [NV_I32] = FLD(gt_nvtx, "int32Value", payload, F_HOOK),
    [NV_F32] = FLD(gt_nvtx, "floatValue", payload, F_HOOK),
};
_Static_assert(N_OF(nvtx_fields) == NV_N_COLUMNS, "every NVTX column has a position");

static const field gpu_memory_fields[] = {
    FLD(gt_gpu_memory, "start", start_ns, F_I64),
    FLD(gt_gpu_memory, "globalPid", global_pid, F_I64),
    FLD(gt_gpu_memory, "deviceId", device_id, F_I32),
    FLD(gt_gpu_memory, "contextId", context_id, F_I32),
    FLD(gt_gpu_memory, "address", address, F_I64),
    FLD(gt_gpu_memory, "pc", pc, F_I64),
    FLD(gt_gpu_memory, "bytes", bytes, F_I64),
    FLD(gt_gpu_memory, "memKind", mem_kind, F_I32),
    FLD(gt_gpu_memory, "memoryOperationType", operation, F_I32),
    FLD(gt_gpu_memory, "correlationId", correlation_id, F_I64),
    FLD(gt_gpu_memory, "streamId", stream_id, F_I32),
    JFLD(gt_gpu_memory, "callchainId", callchain_id, F_I64),
};

static const field heap_fields[] = {
    FLD(gt_heap_event, "start", start_ns, F_I64),
    FLD(gt_heap_event, "globalTid", global_tid, F_I64),
    FLD(gt_heap_event, "operation", operation, F_I32),
    FLD(gt_heap_event, "heapId", heap_id, F_I64),
    FLD(gt_heap_event, "address", address, F_I64),
    FLD(gt_heap_event, "bytes", bytes, F_I64),
    FLD(gt_heap_event, "heapUsage", heap_usage, F_I32),
    FLD(gt_heap_event, "memoryType", memory_type, F_I32),
    FLD(gt_heap_event, "nameId", name, F_I64),
    FLD(gt_heap_event, "domainId", domain_id, F_I64),
    FLD(gt_heap_event, "callchainId", callchain_id, F_I64),
};

static const field cpu_op_fields[] = {
    FLD(gt_cpu_op, "start", start_ns, F_I64),
    FLD(gt_cpu_op, "end", end_ns, F_I64),
    FLD(gt_cpu_op, "globalTid", global_tid, F_I64),
    FLD(gt_cpu_op, "nameId", name, F_I64),
    FLD(gt_cpu_op, "streamId", stream_id, F_I32),
    FLD(gt_cpu_op, "flops", flops, F_I64),
    FLD(gt_cpu_op, "bytes", bytes, F_I64),
};

static int nvtx_hook(gt_iter *it, gt_event *ev);
static int launch_hook(gt_iter *it, gt_event *ev);
static int load_launches(gt_trace *t);

/* The tables are those of events.c (gt_event_kind_table); gtrace traces read
 * kernels from GTRACE_KERNELS rather than through the view of the same name. */
static const kind_desc kind_descs[GT_EV_N_KINDS] = {
    [GT_EV_KERNEL] = {"CUPTI_ACTIVITY_KIND_KERNEL", NULL, NULL, kernel_fields, N_OF(kernel_fields), false, false, NULL},
    [GT_EV_MEMCPY] = {"CUPTI_ACTIVITY_KIND_MEMCPY", NULL, NULL, memcpy_fields, N_OF(memcpy_fields), false, false, NULL},
    [GT_EV_MEMSET] = {"CUPTI_ACTIVITY_KIND_MEMSET", NULL, NULL, memset_fields, N_OF(memset_fields), false, false, NULL},
    [GT_EV_API] = {"CUPTI_ACTIVITY_KIND_RUNTIME", NULL, NULL, api_fields, N_OF(api_fields), false, false, NULL},
    [GT_EV_SYNC] = {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", NULL, NULL, sync_fields, N_OF(sync_fields), false, false, NULL},
    [GT_EV_NVTX] = {"NVTX_EVENTS", NULL, NULL, nvtx_fields, N_OF(nvtx_fields), false, false, nvtx_hook},
    [GT_EV_GPU_MEMORY] = {"CUDA_GPU_MEMORY_USAGE_EVENTS", GT_TABLE_GPU_MEMORY_STACKS, "j.\"eventId\" = m.rowid",
                          gpu_memory_fields, N_OF(gpu_memory_fields), true, false, NULL},
    [GT_EV_HEAP] = {GT_TABLE_MEMORY_EVENTS, NULL, NULL, heap_fields, N_OF(heap_fields), true, false, NULL},
    [GT_EV_CPU_OP] = {GT_TABLE_CPU_OPS, NULL, NULL, cpu_op_fields, N_OF(cpu_op_fields), false, false, NULL},
};

static const kind_desc gtrace_kernel_desc = {
    GT_TABLE_KERNELS, NULL, NULL, gtrace_kernel_fields, N_OF(gtrace_kernel_fields), false, true, launch_hook,
};

static const field process_fields[] = {
    FLD(gt_process, "globalPid", global_pid, F_I64),
    FLD(gt_process, "pid", pid, F_I64),
    FLD(gt_process, "name", name, F_STR),
};

static const field gpu_fields[] = {
    FLD(gt_gpu_info, "id", id, F_I32),
    FLD(gt_gpu_info, "name", name, F_STR),
    FLD(gt_gpu_info, "busLocation", bus_location, F_STR),
    FLD(gt_gpu_info, "uuid", uuid, F_STR),
    FLD(gt_gpu_info, "chipName", chip_name, F_STR),
    FLD(gt_gpu_info, "totalMemory", total_memory_bytes, F_I64),
    FLD(gt_gpu_info, "l2CacheSize", l2_cache_bytes, F_I64),
    FLD(gt_gpu_info, "memoryBandwidth", memory_bandwidth_bytes_per_s, F_I64),
    FLD(gt_gpu_info, "clockRate", clock_rate_hz, F_I64),
    FLD(gt_gpu_info, "smCount", sm_count, F_I32),
    FLD(gt_gpu_info, "computeMajor", compute_major, F_I32),
    FLD(gt_gpu_info, "computeMinor", compute_minor, F_I32),
    FLD(gt_gpu_info, "maxThreadsPerBlock", max_threads_per_block, F_I32),
    FLD(gt_gpu_info, "threadsPerWarp", threads_per_warp, F_I32),
    FLD(gt_gpu_info, "maxShmemPerBlock", max_shmem_per_block, F_I64),
    FLD(gt_gpu_info, "maxShmemPerBlockOptin", max_shmem_per_block_optin, F_I64),
    FLD(gt_gpu_info, "maxShmemPerSm", max_shmem_per_sm, F_I64),
    FLD(gt_gpu_info, "maxRegistersPerBlock", max_registers_per_block, F_I32),
    FLD(gt_gpu_info, "maxRegistersPerSm", max_registers_per_sm, F_I32),
    FLD(gt_gpu_info, "asyncEngines", async_engines, F_I32),
};

static const field frame_fields[] = {
    FLD(gt_frame, "symbol", symbol, F_I64),
    FLD(gt_frame, "module", module, F_I64),
    FLD(gt_frame, "unresolved", unresolved, F_BOOL),
    FLD(gt_frame, "originalIP", original_ip, F_I64),
};

/* ---- small helpers -------------------------------------------------------- */

static int nomem(const gt_trace *t)
{
    return gt_error_set(GT_ERR_NOMEM, "%s: out of memory", t->path);
}

/* Turns an SQLite failure into a status and a message that names the file. */
static int sql_fail_msg(const gt_trace *t, int rc, const char *doing, const char *msg)
{
    switch (rc & 0xff) {
    case SQLITE_NOMEM:
        return gt_error_set(GT_ERR_NOMEM, "%s: out of memory while %s", t->path, doing);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: /* the header was checked already: this is damage */
    case SQLITE_FORMAT:
        return gt_error_set(GT_ERR_CORRUPT, "%s is damaged (found while %s): %s", t->path, doing, msg);
    case SQLITE_IOERR:
        if (rc == SQLITE_IOERR_SHORT_READ)
            return gt_error_set(GT_ERR_CORRUPT, "%s is truncated (found while %s): %s", t->path, doing, msg);
        return gt_error_set(GT_ERR_IO, "%s could not be read (while %s): %s", t->path, doing, msg);
    case SQLITE_FULL:
        return gt_error_set(GT_ERR_FULL, "%s: the disk is full (while %s)", t->path, doing);
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_AUTH:
        return gt_error_set(GT_ERR_IO, "%s could not be accessed (while %s): %s", t->path, doing, msg);
    case SQLITE_MISUSE:
    case SQLITE_RANGE:
        return gt_error_set(GT_ERR_INVALID, "%s: bad use of the reader (while %s): %s", t->path, doing, msg);
    default:
        /* our SQL only names tables and columns the file was seen to have, so
         * the rest (no such column in a view, a value too big...) is the file's */
        return gt_error_set(GT_ERR_CORRUPT, "%s is not a well-formed trace (found while %s): %s",
                            t->path, doing, msg);
    }
}

static int sql_fail(const gt_trace *t, int rc, const char *doing)
{
    return sql_fail_msg(t, rc, doing, t->db ? sqlite3_errmsg(t->db) : sqlite3_errstr(rc));
}

static int prepare(gt_trace *t, const char *sql, sqlite3_stmt **out, const char *doing)
{
    int rc = sqlite3_prepare_v2(t->db, sql, -1, out, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(*out);
        *out = NULL;
        return sql_fail(t, rc, doing);
    }
    return 0;
}

static char *arena_strndup(arena_block **arena, const char *s, size_t n)
{
    arena_block *b = *arena;
    if (!b || b->size - b->used < n + 1) {
        size_t size = n + 1 > 65536 ? n + 1 : 65536;
        b = malloc(sizeof *b + size);
        if (!b)
            return NULL;
        b->next = *arena;
        b->used = 0;
        b->size = size;
        *arena = b;
    }
    char *p = b->data + b->used;
    memcpy(p, s, n);
    p[n] = '\0';
    b->used += n + 1;
    return p;
}

/* Returns `arr` grown to hold at least `need` elements of `elem_bytes`
 * (perhaps moved), or NULL when out of memory (`arr` is then untouched). */
static void *grow(void *arr, size_t *cap, size_t need, size_t elem_bytes)
{
    if (need <= *cap)
        return arr;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(arr, n * elem_bytes);
    if (q)
        *cap = n;
    return q;
}

/* A growable SQL string; `failed` sticks after the first allocation failure. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
    bool failed;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        char *q = grow(b->s, &b->cap, b->len + (size_t)n + 1, 1);
        if (!q) {
            b->failed = true;
            return;
        }
        b->s = q;
    }
}

static int64_t sat_sub(int64_t a, int64_t b) /* b >= 0 */
{
    return a < INT64_MIN + b ? INT64_MIN : a - b;
}

static const db_object *find_object(const gt_trace *t, const char *name)
{
    for (size_t i = 0; i < t->n_objects; i++)
        if (sqlite3_stricmp(t->objects[i].name, name) == 0)
            return &t->objects[i];
    return NULL;
}

/* Copies one row's columns into the struct at `base` as `fields` say. */
static int fill_fields(gt_trace *t, sqlite3_stmt *st, const field *fields, size_t n_fields, void *base)
{
    char *b = base;
    for (size_t i = 0; i < n_fields; i++) {
        int col = (int)i;
        int64_t v64;
        int32_t v32;
        bool vb;
        switch (fields[i].type) {
        case F_I64:
            v64 = sqlite3_column_int64(st, col);
            memcpy(b + fields[i].offset, &v64, sizeof v64);
            break;
        case F_I32:
            v32 = (int32_t)sqlite3_column_int64(st, col);
            memcpy(b + fields[i].offset, &v32, sizeof v32);
            break;
        case F_BOOL:
            vb = sqlite3_column_int64(st, col) != 0;
            memcpy(b + fields[i].offset, &vb, sizeof vb);
            break;
        case F_END_OR_NEG1:
            v64 = sqlite3_column_type(st, col) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, col);
            memcpy(b + fields[i].offset, &v64, sizeof v64);
            break;
        case F_ID_START:
            v64 = sqlite3_column_int64(st, col) >> GT_KERNEL_ID_SHIFT;
            memcpy(b + fields[i].offset, &v64, sizeof v64);
            break;
        case F_STR: {
            const char *s = "";
            if (sqlite3_column_type(st, col) != SQLITE_NULL) {
                const unsigned char *text = sqlite3_column_text(st, col);
                if (!text)
                    return nomem(t);
                s = arena_strndup(&t->arena, (const char *)text, (size_t)sqlite3_column_bytes(st, col));
                if (!s)
                    return nomem(t);
            }
            memcpy(b + fields[i].offset, &s, sizeof s);
            break;
        }
        case F_HOOK:
            break;
        }
    }
    return 0;
}

/* Appends the select list for `fields`: alias."column" where the table has
 * that column, NULL where it does not (nsys versions differ in columns). */
static int append_columns(gt_trace *t, sbuf *sql, const field *fields, size_t n_fields,
                          const char *table, const char *join_table)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(t, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2 COLLATE NOCASE", &st,
                     "reading the columns of a table");
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n_fields; i++) {
        const char *tab = fields[i].joined ? join_table : table;
        bool has = false;
        if (tab) {
            sqlite3_bind_text(st, 1, tab, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 2, fields[i].column, -1, SQLITE_STATIC);
            int step = sqlite3_step(st);
            if (step != SQLITE_ROW && step != SQLITE_DONE) {
                rc = sql_fail(t, step, "reading the columns of a table");
                goto cleanup;
            }
            has = step == SQLITE_ROW;
            sqlite3_reset(st);
        }
        if (has)
            sb_printf(sql, "%s%s.\"%s\"", i ? ", " : "", fields[i].joined ? "j" : "m", fields[i].column);
        else
            sb_printf(sql, "%sNULL", i ? ", " : "");
    }
cleanup:
    sqlite3_finalize(st);
    return rc;
}

/* Runs a query whose first row's first column is an integer. */
static int query_int64(gt_trace *t, const char *sql, int64_t *out, bool *out_null, const char *doing)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(t, sql, &st, doing);
    if (rc < 0)
        return rc;
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        *out_null = sqlite3_column_type(st, 0) == SQLITE_NULL;
        *out = sqlite3_column_int64(st, 0);
    } else if (step == SQLITE_DONE) {
        *out_null = true;
        *out = 0;
    } else {
        rc = sql_fail(t, step, doing);
    }
    sqlite3_finalize(st);
    return rc;
}

/* ---- opening --------------------------------------------------------------- */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Checks what can be checked before SQLite sees the file, for the messages:
 * missing, unreadable, empty, not SQLite, truncated. Also tells whether the
 * file is in WAL mode with a write-ahead log beside it (a live or killed
 * gtrace capture), which must be read through SQLite's WAL protocol. */
static int probe_file(const char *path, bool *out_live_wal, int64_t *out_bytes)
{
    struct stat st;
    unsigned char h[100];
    ssize_t n = 0;
    int fd = -1, rc = 0;

    *out_live_wal = false;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return gt_error_set(GT_ERR_NOTFOUND, "%s does not exist", path);
        return gt_error_set(GT_ERR_IO, "%s cannot be read: %s", path, strerror(errno));
    }
    if (S_ISDIR(st.st_mode))
        return gt_error_set(GT_ERR_IO, "%s is a directory, not a trace file", path);
    if (!S_ISREG(st.st_mode)) /* a FIFO would block the open */
        return gt_error_set(GT_ERR_IO, "%s is not a regular file", path);
    if (st.st_size == 0)
        return gt_error_set(GT_ERR_NOTTRACE, "%s is empty (0 bytes): it is not an SQLite database", path);
    *out_bytes = (int64_t)st.st_size;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return gt_error_set(GT_ERR_IO, "%s cannot be read: %s", path, strerror(errno));
    while ((size_t)n < sizeof h) {
        ssize_t r = read(fd, h + n, sizeof h - (size_t)n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = gt_error_set(GT_ERR_IO, "%s cannot be read: %s", path, strerror(errno));
            goto cleanup;
        }
        if (r == 0)
            break;
        n += r;
    }
    if (n < 16 || memcmp(h, "SQLite format 3", 16) != 0) {
        rc = gt_error_set(GT_ERR_NOTTRACE, "%s is not an SQLite database (it does not start with the SQLite header)", path);
        goto cleanup;
    }
    if (n < (ssize_t)sizeof h) {
        rc = gt_error_set(GT_ERR_CORRUPT, "%s is truncated: %zd bytes, shorter than the 100-byte SQLite header", path, n);
        goto cleanup;
    }
    uint32_t page_bytes = (uint32_t)h[16] << 8 | h[17];
    if (page_bytes == 1)
        page_bytes = 65536;
    if (page_bytes < 512 || (page_bytes & (page_bytes - 1)) != 0) {
        rc = gt_error_set(GT_ERR_CORRUPT, "%s is damaged: its header gives an impossible page size (%u)", path, page_bytes);
        goto cleanup;
    }
    /* the page count is trustworthy when the two change counters agree */
    uint32_t n_pages = be32(h + 28);
    if (n_pages != 0 && be32(h + 24) == be32(h + 92) && (long long)n_pages * page_bytes > (long long)st.st_size) {
        rc = gt_error_set(GT_ERR_CORRUPT, "%s is truncated: its header says %lld bytes, the file has %lld", path,
                          (long long)n_pages * page_bytes, (long long)st.st_size);
        goto cleanup;
    }
    /* SQLite reads a short last page as zeros, which quick_check accepts */
    if (st.st_size % page_bytes != 0) {
        rc = gt_error_set(GT_ERR_CORRUPT, "%s is truncated: %lld bytes is not a whole number of %u-byte pages", path,
                          (long long)st.st_size, page_bytes);
        goto cleanup;
    }
    if (h[18] == 2 || h[19] == 2) {
        size_t len = strlen(path);
        char *wal = malloc(len + 5);
        if (!wal) {
            rc = gt_error_set(GT_ERR_NOMEM, "%s: out of memory", path);
            goto cleanup;
        }
        memcpy(wal, path, len);
        memcpy(wal + len, "-wal", 5);
        struct stat wst;
        *out_live_wal = stat(wal, &wst) == 0 && wst.st_size > 0;
        free(wal);
    }
cleanup:
    close(fd);
    return rc;
}

/* "file:" URI for `path` (percent-encoded) with a query string. An absolute
 * path gets an empty authority, so "//x/y" is not read as host "x". */
static char *file_uri(const char *path, const char *query)
{
    sbuf b = {0};
    sb_printf(&b, path[0] == '/' ? "file://" : "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("/._-~", *p))
            sb_printf(&b, "%c", *p);
        else
            sb_printf(&b, "%%%02X", *p);
    }
    sb_printf(&b, "%s%s", *query ? "?" : "", query);
    if (b.failed) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* A connection to t's file: read-only (immutable unless a live WAL must be
 * followed), or read-write for adding indexes. Returns an SQLite code; *out
 * may be set (for its message) even when it fails. */
static int open_db(const gt_trace *t, bool rw, sqlite3 **out)
{
    const char *query = rw ? "" : t->live_wal ? "mode=ro" : "mode=ro&immutable=1";
    char *uri = file_uri(t->path, query);
    *out = NULL;
    if (!uri)
        return SQLITE_NOMEM;
    /* NOMUTEX: a gt_trace is used by one thread at a time (its strings and
     * statements are not shared either), and the connection's mutex, taken
     * for every column read, was a tenth of the time of reading events. */
    int flags = SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX | (rw ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY);
    int orc = sqlite3_open_v2(uri, out, flags, NULL);
    free(uri);
    if (orc != SQLITE_OK)
        return orc;
    sqlite3_extended_result_codes(*out, 1);
    /* the file is input: its schema may not run functions or change us */
    sqlite3_db_config(*out, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
#ifdef SQLITE_DBCONFIG_TRUSTED_SCHEMA
    sqlite3_db_config(*out, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
#endif
    if (t->live_wal || rw)
        sqlite3_busy_timeout(*out, 2000); /* a capture may be writing it */
    /* catches damaged b-tree cells as they are read, for a small cost */
    return sqlite3_exec(*out, "PRAGMA cell_size_check = ON", NULL, NULL, NULL);
}

/* Opens t->db (see open_db). */
static int connect_db(gt_trace *t, bool rw)
{
    int orc = open_db(t, rw, &t->db);
    if (orc == SQLITE_OK)
        return 0;
    int rc = t->db ? sql_fail(t, orc, "opening it") : nomem(t);
    if (rw && t->db && (orc & 0xff) == SQLITE_CANTOPEN)
        rc = gt_error_set(GT_ERR_IO, "%s cannot be opened for writing, to add time indexes: %s", t->path,
                          sqlite3_errmsg(t->db));
    sqlite3_close(t->db);
    t->db = NULL;
    return rc;
}

/* ---- the integrity check -------------------------------------------------- */

/* Files this big are checked table by table on two connections at once:
 * PRAGMA quick_check alone took over a second for 500 MB. A table's check
 * covers its indexes; what it skips (free pages, pages used by no table) is
 * never read. Smaller files get the whole-file check. */
enum { CHECK_SPLIT_BYTES = 64 << 20 };

typedef struct check_work {
    char **tables;
    size_t n_tables, next; /* next: under mu */
    bool stop;             /* under mu: a problem was found */
    pthread_mutex_t mu;
} check_work;

typedef struct check_result {
    sqlite3 *db;
    check_work *work;
    int sqlite_rc;  /* an SQLite failure, or SQLITE_OK */
    char *problem;  /* what quick_check found, or SQLite's message; malloc'd (NULL: no memory) */
    bool failed;
} check_result;

/* Runs a quick_check; on a problem, its first line ("*** in database main
 * ***" only introduces the others) or SQLite's message goes to *out_problem. */
static int quick_check(sqlite3 *db, const char *sql, int *out_sqlite_rc, char **out_problem)
{
    sqlite3_stmt *st = NULL;
    bool failed = false;
    int step = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    while (step == SQLITE_OK || step == SQLITE_ROW) {
        step = sqlite3_step(st);
        if (step != SQLITE_ROW)
            break;
        const char *res = (const char *)sqlite3_column_text(st, 0);
        if (res && strcmp(res, "ok") == 0)
            continue;
        const char *p = res ? res : "integrity check failed";
        if (strncmp(p, "*** in database", 15) == 0 && strchr(p, '\n'))
            p = strchr(p, '\n') + 1;
        *out_problem = strndup(p, strcspn(p, "\n")); /* the first problem is enough */
        failed = true;
        break;
    }
    if (!failed && step != SQLITE_DONE) {
        *out_sqlite_rc = step;
        *out_problem = strdup(sqlite3_errmsg(db));
        failed = true;
    }
    sqlite3_finalize(st);
    return failed ? -1 : 0;
}

static void *check_tables(void *arg)
{
    check_result *res = arg;
    check_work *w = res->work;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        size_t i = w->stop || w->next == w->n_tables ? SIZE_MAX : w->next++;
        pthread_mutex_unlock(&w->mu);
        if (i == SIZE_MAX)
            return NULL;
        char *sql = sqlite3_mprintf("PRAGMA quick_check(%Q)", w->tables[i]);
        int failed = sql ? quick_check(res->db, sql, &res->sqlite_rc, &res->problem) : -1;
        if (!sql)
            res->sqlite_rc = SQLITE_NOMEM;
        sqlite3_free(sql);
        if (failed) {
            res->failed = true;
            pthread_mutex_lock(&w->mu);
            w->stop = true;
            pthread_mutex_unlock(&w->mu);
            return NULL;
        }
    }
}

/* Big tables first, so the two connections end at about the same time. */
static int table_rank(const char *name)
{
    static const char *const big[] = {GT_TABLE_KERNELS, "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME",
                                      "NVTX_EVENTS", GT_TABLE_MEMORY_EVENTS, GT_TABLE_CPU_OPS,
                                      "CUDA_GPU_MEMORY_USAGE_EVENTS"};
    for (int i = 0; i < (int)N_OF(big); i++)
        if (sqlite3_stricmp(name, big[i]) == 0)
            return i;
    return (int)N_OF(big);
}

static int cmp_table_rank(const void *a, const void *b)
{
    return table_rank(*(char *const *)a) - table_rank(*(char *const *)b);
}

static int check_split(gt_trace *t)
{
    check_work w = {0};
    check_result mine = {0}, other = {0};
    pthread_t th;
    bool started = false;
    size_t cap = 0;
    sqlite3_stmt *st = NULL;
    int rc = prepare(t, "SELECT name FROM sqlite_master WHERE type = 'table' AND name IS NOT NULL", &st,
                     "checking its integrity");
    if (rc < 0)
        return rc;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        char **tables = grow(w.tables, &cap, w.n_tables + 1, sizeof *w.tables);
        if (tables)
            w.tables = tables;
        if (!name || !tables || !(w.tables[w.n_tables] = strdup(name))) {
            rc = nomem(t);
            goto cleanup;
        }
        w.n_tables++;
    }
    if (step != SQLITE_DONE) {
        rc = sql_fail(t, step, "checking its integrity");
        goto cleanup;
    }
    qsort(w.tables, w.n_tables, sizeof *w.tables, cmp_table_rank);
    pthread_mutex_init(&w.mu, NULL);
    mine = (check_result){t->db, &w, SQLITE_OK, NULL, false};
    other = (check_result){NULL, &w, SQLITE_OK, NULL, false};
    /* without a second connection or thread, one does it all */
    if (w.n_tables > 1 && open_db(t, false, &other.db) == SQLITE_OK)
        started = pthread_create(&th, NULL, check_tables, &other) == 0;
    check_tables(&mine);
    if (started)
        pthread_join(th, NULL);
    pthread_mutex_destroy(&w.mu);
    const check_result *bad = mine.failed ? &mine : other.failed ? &other : NULL;
    if (bad && bad->sqlite_rc != SQLITE_OK)
        rc = sql_fail_msg(t, bad->sqlite_rc, "checking its integrity", bad->problem ? bad->problem : "out of memory");
    else if (bad)
        rc = gt_error_set(GT_ERR_CORRUPT, "%s is damaged: %s", t->path, bad->problem ? bad->problem : "integrity check failed");
cleanup:
    sqlite3_finalize(st);
    sqlite3_close(other.db);
    free(mine.problem);
    free(other.problem);
    for (size_t i = 0; i < w.n_tables; i++)
        free(w.tables[i]);
    free(w.tables);
    return rc;
}

static int check_integrity(gt_trace *t)
{
    if (t->file_bytes >= CHECK_SPLIT_BYTES && !t->live_wal)
        return check_split(t);
    int sqlite_rc = SQLITE_OK;
    char *problem = NULL;
    int rc = 0;
    if (quick_check(t->db, "PRAGMA quick_check", &sqlite_rc, &problem) < 0) {
        if (sqlite_rc != SQLITE_OK)
            rc = sql_fail_msg(t, sqlite_rc, "checking its integrity", problem ? problem : "out of memory");
        else
            rc = gt_error_set(GT_ERR_CORRUPT, "%s is damaged: %s", t->path, problem ? problem : "integrity check failed");
    }
    free(problem);
    return rc;
}

static void *check_later(void *arg)
{
    gt_trace *t = arg;
    t->check_failed = quick_check(t->check_db, "PRAGMA quick_check", &t->check_sqlite_rc, &t->check_problem) < 0;
    return NULL;
}

/* GT_OPEN_CHECK_LATER: starts the whole-file check on a connection and a
 * thread of its own; without them, checks now. */
static int start_check(gt_trace *t)
{
    if (t->file_bytes < CHECK_SPLIT_BYTES || t->live_wal)
        return check_integrity(t);
    if (open_db(t, false, &t->check_db) == SQLITE_OK &&
        pthread_create(&t->check_thread, NULL, check_later, t) == 0) {
        t->check_running = true;
        return 0;
    }
    sqlite3_close(t->check_db);
    t->check_db = NULL;
    return check_integrity(t);
}

int gt_trace_check(gt_trace *t)
{
    if (!t)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_check: no trace");
    if (t->check_running) {
        pthread_join(t->check_thread, NULL);
        t->check_running = false;
        sqlite3_close(t->check_db);
        t->check_db = NULL;
    }
    if (!t->check_failed)
        return 0;
    if (t->check_sqlite_rc != SQLITE_OK)
        return sql_fail_msg(t, t->check_sqlite_rc, "checking its integrity",
                            t->check_problem ? t->check_problem : "out of memory");
    return gt_error_set(GT_ERR_CORRUPT, "%s is damaged: %s", t->path,
                        t->check_problem ? t->check_problem : "integrity check failed");
}

static int load_objects(gt_trace *t)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc = prepare(t,
                     "SELECT name, type = 'view', coalesce(sql LIKE '%WITHOUT%ROWID%', 0) FROM sqlite_master "
                     "WHERE type IN ('table', 'view') AND name IS NOT NULL",
                     &st, "reading its list of tables");
    if (rc < 0)
        return rc;
    free(t->objects);
    t->objects = NULL;
    t->n_objects = 0;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *name = sqlite3_column_text(st, 0);
        db_object *objects = grow(t->objects, &cap, t->n_objects + 1, sizeof *t->objects);
        if (!name || !objects) {
            rc = nomem(t);
            goto cleanup;
        }
        t->objects = objects;
        db_object *o = &t->objects[t->n_objects];
        o->name = arena_strndup(&t->arena, (const char *)name, (size_t)sqlite3_column_bytes(st, 0));
        if (!o->name) {
            rc = nomem(t);
            goto cleanup;
        }
        o->is_view = sqlite3_column_int(st, 1) != 0;
        o->without_rowid = sqlite3_column_int(st, 2) != 0;
        t->n_objects++;
    }
    if (step != SQLITE_DONE)
        rc = sql_fail(t, step, "reading its list of tables");
cleanup:
    sqlite3_finalize(st);
    return rc;
}

/* Appends name/value rows of `sql` to t->meta. */
static int load_meta_rows(gt_trace *t, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(t, sql, &st, "reading its metadata");
    if (rc < 0)
        return rc;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 0) == SQLITE_NULL)
            continue;
        meta_entry *meta = grow(t->meta, &t->cap_meta, t->n_meta + 1, sizeof *t->meta);
        if (!meta) {
            rc = nomem(t);
            goto cleanup;
        }
        t->meta = meta;
        const unsigned char *name = sqlite3_column_text(st, 0);
        const unsigned char *value = sqlite3_column_text(st, 1);
        meta_entry *e = &t->meta[t->n_meta];
        e->name = name ? arena_strndup(&t->arena, (const char *)name, (size_t)sqlite3_column_bytes(st, 0)) : NULL;
        e->value = arena_strndup(&t->arena, value ? (const char *)value : "",
                                 value ? (size_t)sqlite3_column_bytes(st, 1) : 0);
        if (!e->name || !e->value) {
            rc = nomem(t);
            goto cleanup;
        }
        t->n_meta++;
    }
    if (step != SQLITE_DONE)
        rc = sql_fail(t, step, "reading its metadata");
cleanup:
    sqlite3_finalize(st);
    return rc;
}

static int load_meta(gt_trace *t)
{
    int rc = 0;
    if (find_object(t, "META_DATA_EXPORT"))
        rc = load_meta_rows(t, "SELECT name, value FROM META_DATA_EXPORT");
    if (rc == 0 && find_object(t, "EXPORT_META_DATA"))
        rc = load_meta_rows(t, "SELECT name, value FROM EXPORT_META_DATA");
    return rc;
}

/* gtrace's run configuration of the whole trace (pid 0) answers gt_trace_meta
 * after the export metadata. */
static int load_run_config(gt_trace *t)
{
    if (!find_object(t, GT_TABLE_RUN_CONFIG))
        return 0;
    return load_meta_rows(t, "SELECT \"key\", \"value\" FROM " GT_TABLE_RUN_CONFIG " WHERE \"globalPid\" = 0");
}

/* Each process's rank in a distributed job, from the launcher variables the
 * capture recorded (env.* rows of GTRACE_RUN_CONFIG). Launchers set several:
 * rows come least trusted first, so the most trusted one a process has is
 * written last. */
static int load_process_ranks(gt_trace *t)
{
    for (size_t i = 0; i < t->n_processes; i++)
        t->processes[i].rank = -1;
    if (!find_object(t, GT_TABLE_RUN_CONFIG) || t->n_processes == 0)
        return 0;
    sqlite3_stmt *st;
    int rc = prepare(t, "SELECT \"globalPid\", \"value\" FROM " GT_TABLE_RUN_CONFIG " WHERE \"key\" IN "
                        "('env.OMPI_COMM_WORLD_RANK', 'env.PMIX_RANK', 'env.PMI_RANK', 'env.SLURM_PROCID', 'env.RANK') "
                        "ORDER BY CASE \"key\" WHEN 'env.RANK' THEN 0 WHEN 'env.SLURM_PROCID' THEN 1 "
                        "WHEN 'env.PMI_RANK' THEN 2 WHEN 'env.PMIX_RANK' THEN 3 ELSE 4 END",
                     &st, "reading process ranks");
    if (rc < 0)
        return rc;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t gpid = sqlite3_column_int64(st, 0);
        const char *value = (const char *)sqlite3_column_text(st, 1);
        char *end;
        long v = value ? strtol(value, &end, 10) : -1;
        if (!value || !*value || *end || v < 0 || v > INT32_MAX)
            continue; /* not a rank: leave it unknown */
        for (size_t i = 0; i < t->n_processes; i++)
            if (t->processes[i].global_pid == gpid)
                t->processes[i].rank = (int32_t)v;
    }
    rc = step == SQLITE_DONE ? 0 : sql_fail(t, step, "reading process ranks");
    sqlite3_finalize(st);
    return rc;
}

int gt_trace_each_config(gt_trace *t, gt_config_fn fn, void *ctx)
{
    if (!t || !fn)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_each_config: no trace or no function");
    if (!find_object(t, GT_TABLE_RUN_CONFIG))
        return 0;
    sqlite3_stmt *st;
    int rc = prepare(t, "SELECT \"globalPid\", \"key\", \"value\" FROM " GT_TABLE_RUN_CONFIG " ORDER BY \"globalPid\"",
                     &st, "reading the run configuration");
    if (rc < 0)
        return rc;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *key = (const char *)sqlite3_column_text(st, 1), *value = (const char *)sqlite3_column_text(st, 2);
        if ((rc = fn(ctx, sqlite3_column_int64(st, 0), key ? key : "", value ? value : "")) != 0)
            break;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = sql_fail(t, step, "reading the run configuration");
    sqlite3_finalize(st);
    return rc;
}

/* Decides what the file is: a gtrace trace this build can read, an nsys
 * export, or neither. */
static int identify(gt_trace *t)
{
    const char *product = gt_trace_meta(t, "EXPORT_PRODUCT_NAME");
    bool has_meta = find_object(t, "META_DATA_EXPORT") || find_object(t, "EXPORT_META_DATA");

    if (product && strcmp(product, "gtrace") == 0) {
        const char *v = gt_trace_meta(t, "GTRACE_SCHEMA_VERSION");
        char *end = NULL;
        errno = 0;
        long long version = v ? strtoll(v, &end, 10) : 0;
        if (!v || !*v || *end || errno || version < 1)
            return gt_error_set(GT_ERR_VERSION, "%s is a gtrace trace without a valid GTRACE_SCHEMA_VERSION (%s%s%s)",
                                t->path, v ? "'" : "none", v ? v : "", v ? "'" : "");
        if (version > GT_SCHEMA_VERSION)
            return gt_error_set(GT_ERR_VERSION,
                                "%s was written with gtrace schema version %lld; this build reads versions up to %d "
                                "(update gtrace)",
                                t->path, version, GT_SCHEMA_VERSION);
        t->origin = GT_ORIGIN_GTRACE;
        t->schema_version = v;
        return 0;
    }
    if (!has_meta)
        return gt_error_set(GT_ERR_NOTTRACE,
                            "%s is an SQLite database but neither a gtrace trace nor an Nsight Systems export "
                            "(it has no META_DATA_EXPORT or EXPORT_META_DATA table)",
                            t->path);
    if (!product || !strstr(product, "Nsight Systems"))
        return gt_error_set(GT_ERR_NOTTRACE,
                            "%s is an SQLite database but neither a gtrace trace nor an Nsight Systems export "
                            "(its export metadata names the product '%s')",
                            t->path, product ? product : "");
    if (!find_object(t, "StringIds"))
        return gt_error_set(GT_ERR_NOTTRACE, "%s claims to be an Nsight Systems export but has no StringIds table",
                            t->path);
    const char *v = gt_trace_meta(t, "EXPORT_SCHEMA_VERSION");
    long major = v ? strtol(v, NULL, 10) : 0;
    if (major != 2 && major != 3)
        return gt_error_set(GT_ERR_VERSION,
                            "%s is an Nsight Systems export with schema version '%s'; this build reads schemas 2.x "
                            "and 3.x",
                            t->path, v ? v : "");
    t->origin = GT_ORIGIN_NSYS;
    t->schema_version = v;
    return 0;
}

static int load_strings(gt_trace *t)
{
    sqlite3_stmt *st = NULL;
    int64_t n_rows = 0;
    bool is_null;
    int rc = 0;

    t->interned_base = 1;
    if (!find_object(t, "StringIds"))
        return 0;
    rc = query_int64(t, "SELECT count(*) FROM StringIds", &n_rows, &is_null, "reading its strings");
    if (rc < 0)
        return rc;
    if (n_rows > 0) {
        /* one allocation: ids, then the pointers */
        void *block = malloc((size_t)n_rows * (sizeof(int64_t) + sizeof(char *)));
        if (!block)
            return nomem(t);
        t->string_ids = block;
        t->string_values = (const char **)(t->string_ids + n_rows);
    }
    rc = prepare(t, "SELECT id, value FROM StringIds ORDER BY id", &st, "reading its strings");
    if (rc < 0)
        return rc;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW && (int64_t)t->n_strings < n_rows) {
        const char *s = "";
        size_t len = 0;
        if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
            s = (const char *)sqlite3_column_text(st, 1);
            if (!s) {
                rc = nomem(t);
                goto cleanup;
            }
            len = (size_t)sqlite3_column_bytes(st, 1);
        }
        t->string_ids[t->n_strings] = sqlite3_column_int64(st, 0);
        t->string_values[t->n_strings] = arena_strndup(&t->arena, s, len);
        if (!t->string_values[t->n_strings]) {
            rc = nomem(t);
            goto cleanup;
        }
        t->n_strings++;
    }
    if (step != SQLITE_DONE && step != SQLITE_ROW) {
        rc = sql_fail(t, step, "reading its strings");
        goto cleanup;
    }
    if (t->n_strings > 0) {
        int64_t max_id = t->string_ids[t->n_strings - 1];
        if (max_id > INT64_MAX / 2) {
            rc = gt_error_set(GT_ERR_CORRUPT, "%s is damaged: StringIds has an impossible id (%lld)", t->path,
                              (long long)max_id);
            goto cleanup;
        }
        if (max_id >= t->interned_base)
            t->interned_base = max_id + 1;
    }
cleanup:
    sqlite3_finalize(st);
    return rc;
}

static uint64_t hash_text(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* Gives an inline NVTX text an id of the reader's own, above StringIds, so
 * that gt_nvtx.text is always an id; the same text gets the same id. */
static int intern(gt_trace *t, const char *s, gt_string_id *out_id)
{
    size_t n = strlen(s);
    if (t->n_interned + 1 >= t->n_slots / 2) {
        size_t n_slots = t->n_slots ? t->n_slots * 2 : 64;
        uint32_t *slots = calloc(n_slots, sizeof *slots);
        if (!slots || t->n_interned >= UINT32_MAX - 1) {
            free(slots);
            return nomem(t);
        }
        for (size_t i = 0; i < t->n_interned; i++) {
            size_t j = hash_text(t->interned[i], strlen(t->interned[i])) & (n_slots - 1);
            while (slots[j])
                j = (j + 1) & (n_slots - 1);
            slots[j] = (uint32_t)i + 1;
        }
        free(t->intern_slots);
        t->intern_slots = slots;
        t->n_slots = n_slots;
    }
    size_t j = hash_text(s, n) & (t->n_slots - 1);
    while (t->intern_slots[j]) {
        size_t k = t->intern_slots[j] - 1;
        if (strcmp(t->interned[k], s) == 0) {
            *out_id = t->interned_base + (int64_t)k;
            return 0;
        }
        j = (j + 1) & (t->n_slots - 1);
    }
    const char **interned = grow(t->interned, &t->cap_interned, t->n_interned + 1, sizeof *t->interned);
    if (!interned)
        return nomem(t);
    t->interned = interned;
    const char *copy = arena_strndup(&t->arena, s, n);
    if (!copy)
        return nomem(t);
    t->interned[t->n_interned] = copy;
    t->intern_slots[j] = (uint32_t)t->n_interned + 1;
    *out_id = t->interned_base + (int64_t)t->n_interned;
    t->n_interned++;
    return 0;
}

/* Reads every row of `table` into an array of `elem_bytes` structs. */
static int load_rows(gt_trace *t, const char *table, const field *fields, size_t n_fields, const char *order,
                     void **out_rows, size_t *out_n, size_t elem_bytes)
{
    sbuf sql = {0};
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc = 0;
    char doing[128];

    snprintf(doing, sizeof doing, "reading %s", table);
    if (!find_object(t, table))
        return 0;
    sb_printf(&sql, "SELECT ");
    rc = append_columns(t, &sql, fields, n_fields, table, NULL);
    if (rc < 0)
        goto cleanup;
    sb_printf(&sql, " FROM \"%s\" AS m %s", table, order);
    if (sql.failed) {
        rc = nomem(t);
        goto cleanup;
    }
    rc = prepare(t, sql.s, &st, doing);
    if (rc < 0)
        goto cleanup;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        void *rows = grow(*out_rows, &cap, *out_n + 1, elem_bytes);
        if (!rows) {
            rc = nomem(t);
            goto cleanup;
        }
        *out_rows = rows;
        void *row = (char *)*out_rows + *out_n * elem_bytes;
        memset(row, 0, elem_bytes);
        rc = fill_fields(t, st, fields, n_fields, row);
        if (rc < 0)
            goto cleanup;
        (*out_n)++;
    }
    if (step != SQLITE_DONE)
        rc = sql_fail(t, step, doing);
cleanup:
    sqlite3_finalize(st);
    free(sql.s);
    return rc;
}

static int load_threads(gt_trace *t)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc = 0;
    if (!find_object(t, "ThreadNames"))
        return 0;
    rc = prepare(t, "SELECT globalTid, nameId FROM ThreadNames ORDER BY globalTid", &st, "reading ThreadNames");
    if (rc < 0)
        return rc;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        gt_thread *threads = grow(t->threads, &cap, t->n_threads + 1, sizeof *t->threads);
        if (!threads) {
            rc = nomem(t);
            goto cleanup;
        }
        t->threads = threads;
        t->threads[t->n_threads].global_tid = sqlite3_column_int64(st, 0);
        t->threads[t->n_threads].name = gt_trace_string(t, sqlite3_column_int64(st, 1));
        t->n_threads++;
    }
    if (step != SQLITE_DONE)
        rc = sql_fail(t, step, "reading ThreadNames");
cleanup:
    sqlite3_finalize(st);
    return rc;
}

/* Writes the time indexes into the file (GT_OPEN_ADD_INDEXES), through a
 * read-write connection of its own, in one transaction. */
static int add_indexes(gt_trace *t)
{
    int rc = connect_db(t, true);
    if (rc < 0)
        return rc;
    int erc = sqlite3_exec(t->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    for (size_t i = 0; erc == SQLITE_OK && i < gt_schema_n_indexes; i++) {
        const gt_schema_index *ix = &gt_schema_indexes[i];
        const db_object *o = find_object(t, ix->table);
        if (!o || o->is_view || (ix->nsys_only && t->origin != GT_ORIGIN_NSYS))
            continue;
        erc = sqlite3_exec(t->db, ix->sql, NULL, NULL, NULL);
    }
    if (erc == SQLITE_OK)
        erc = sqlite3_exec(t->db, "COMMIT", NULL, NULL, NULL);
    if (erc != SQLITE_OK) {
        rc = sql_fail(t, erc, "adding time indexes");
        if ((erc & 0xff) == SQLITE_READONLY)
            rc = gt_error_set(GT_ERR_IO, "%s cannot be written, to add time indexes: %s", t->path,
                              sqlite3_errmsg(t->db));
        sqlite3_exec(t->db, "ROLLBACK", NULL, NULL, NULL);
    }
    sqlite3_close(t->db);
    t->db = NULL;
    return rc;
}

static int open_trace(gt_trace **out, const char *path, unsigned flags, bool check)
{
    gt_trace *t = NULL;
    void *rows = NULL;
    int rc = 0;

    t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(path))) {
        free(t);
        return gt_error_set(GT_ERR_NOMEM, "%s: out of memory", path);
    }
    rc = probe_file(path, &t->live_wal, &t->file_bytes);
    if (rc < 0)
        goto cleanup;
    rc = connect_db(t, false);
    if (rc < 0)
        goto cleanup;
    if (check && (flags & GT_OPEN_CHECK_LATER) && !(flags & GT_OPEN_ADD_INDEXES))
        rc = start_check(t);
    else if (check)
        rc = check_integrity(t);
    if (rc < 0)
        goto cleanup;
    rc = load_objects(t);
    if (rc < 0)
        goto cleanup;
    rc = load_meta(t);
    if (rc < 0)
        goto cleanup;
    rc = identify(t);
    if (rc < 0)
        goto cleanup;
    if (flags & GT_OPEN_ADD_INDEXES) {
        /* the immutable connection would not see the new indexes: reopen */
        sqlite3_close(t->db);
        t->db = NULL;
        rc = add_indexes(t);
        if (rc < 0)
            goto cleanup;
        rc = probe_file(path, &t->live_wal, &t->file_bytes); /* writing may have folded the log in */
        if (rc < 0)
            goto cleanup;
        rc = connect_db(t, false);
        if (rc < 0)
            goto cleanup;
        rc = load_objects(t);
        if (rc < 0)
            goto cleanup;
    }
    if ((rc = load_run_config(t)) < 0 || (rc = load_strings(t)) < 0)
        goto cleanup;
    rc = load_rows(t, "PROCESSES", process_fields, N_OF(process_fields), "", &rows, &t->n_processes,
                   sizeof *t->processes);
    t->processes = rows;
    if (rc < 0 || (rc = load_process_ranks(t)) < 0)
        goto cleanup;
    rows = NULL;
    rc = load_rows(t, "TARGET_INFO_GPU", gpu_fields, N_OF(gpu_fields), "ORDER BY m.\"id\"", &rows, &t->n_gpus,
                   sizeof *t->gpus);
    t->gpus = rows;
    if (rc < 0)
        goto cleanup;
    rc = load_threads(t);
    if (rc < 0)
        goto cleanup;
    *out = t;
    t = NULL;
cleanup:
    gt_trace_free(t);
    return rc;
}

int gt_trace_open(gt_trace **out, const char *path, unsigned flags)
{
    if (!out || !path)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_open: no output or no path");
    *out = NULL;
    if (flags & ~(unsigned)(GT_OPEN_ADD_INDEXES | GT_OPEN_CHECK_LATER))
        return gt_error_set(GT_ERR_INVALID, "%s: unknown open flags 0x%x", path, flags);
    return open_trace(out, path, flags, true);
}

int gt_trace_reopen(gt_trace **out, const gt_trace *t)
{
    if (!out || !t)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_reopen: no output or no trace");
    *out = NULL;
    return open_trace(out, t->path, 0, false);
}

void gt_trace_free(gt_trace *t)
{
    if (!t)
        return;
    if (t->check_running) { /* nobody waits for the verdict: stop the check */
        sqlite3_interrupt(t->check_db);
        pthread_join(t->check_thread, NULL);
    }
    sqlite3_close(t->check_db);
    free(t->check_problem);
    sqlite3_finalize(t->callchain_stmt);
    sqlite3_close_v2(t->db); /* v2: iterators still open keep it alive until freed */
    while (t->arena) {
        arena_block *next = t->arena->next;
        free(t->arena);
        t->arena = next;
    }
    free(t->objects);
    free(t->meta);
    free(t->string_ids); /* also holds string_values */
    free(t->interned);
    free(t->intern_slots);
    free(t->processes);
    free(t->threads);
    free(t->gpus);
    free(t->frames);
    free(t->launch_ids);
    free(t->launches);
    free(t->path);
    free(t);
}

/* ---- descriptions ------------------------------------------------------------ */

gt_trace_origin gt_trace_origin_of(const gt_trace *t)
{
    return t ? t->origin : GT_ORIGIN_GTRACE;
}

const char *gt_trace_path(const gt_trace *t)
{
    return t ? t->path : "";
}

const char *gt_trace_schema_version(const gt_trace *t)
{
    return t && t->schema_version ? t->schema_version : "";
}

const char *gt_trace_meta(const gt_trace *t, const char *name)
{
    if (!t || !name)
        return NULL;
    for (size_t i = 0; i < t->n_meta; i++)
        if (strcmp(t->meta[i].name, name) == 0)
            return t->meta[i].value;
    return NULL;
}

const char *gt_trace_string(const gt_trace *t, gt_string_id id)
{
    if (!t || id == 0)
        return "";
    if (id >= t->interned_base && id - t->interned_base < (int64_t)t->n_interned)
        return t->interned[id - t->interned_base];
    size_t lo = 0, hi = t->n_strings;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->string_ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n_strings && t->string_ids[lo] == id ? t->string_values[lo] : "";
}

const gt_process *gt_trace_processes(const gt_trace *t, size_t *out_n)
{
    *out_n = t ? t->n_processes : 0;
    return t ? t->processes : NULL;
}

const gt_thread *gt_trace_threads(const gt_trace *t, size_t *out_n)
{
    *out_n = t ? t->n_threads : 0;
    return t ? t->threads : NULL;
}

const gt_gpu_info *gt_trace_gpus(const gt_trace *t, size_t *out_n)
{
    *out_n = t ? t->n_gpus : 0;
    return t ? t->gpus : NULL;
}

int gt_trace_callchain(gt_trace *t, int64_t callchain_id, const gt_frame **out_frames, size_t *out_n)
{
    int rc = 0;
    size_t n = 0;

    if (!t || !out_frames || !out_n)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_callchain: missing argument");
    *out_frames = NULL;
    *out_n = 0;
    if (!find_object(t, "CUDA_CALLCHAINS"))
        return gt_error_set(GT_ERR_NOTFOUND, "%s has no callchains (no CUDA_CALLCHAINS table)", t->path);
    if (!t->callchain_stmt) {
        sbuf sql = {0};
        sb_printf(&sql, "SELECT ");
        rc = append_columns(t, &sql, frame_fields, N_OF(frame_fields), "CUDA_CALLCHAINS", NULL);
        sb_printf(&sql, " FROM CUDA_CALLCHAINS AS m WHERE m.\"id\" = ?1 ORDER BY m.\"stackDepth\"");
        if (rc == 0 && sql.failed)
            rc = nomem(t);
        if (rc == 0)
            rc = prepare(t, sql.s, &t->callchain_stmt, "reading callchains");
        free(sql.s);
        if (rc < 0)
            return rc;
    }
    sqlite3_stmt *st = t->callchain_stmt;
    sqlite3_bind_int64(st, 1, callchain_id);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        gt_frame *frames = grow(t->frames, &t->cap_frames, n + 1, sizeof *t->frames);
        if (!frames) {
            rc = nomem(t);
            goto cleanup;
        }
        t->frames = frames;
        memset(&t->frames[n], 0, sizeof t->frames[n]);
        rc = fill_fields(t, st, frame_fields, N_OF(frame_fields), &t->frames[n]);
        if (rc < 0)
            goto cleanup;
        n++;
    }
    if (step != SQLITE_DONE) {
        rc = sql_fail(t, step, "reading callchains");
        goto cleanup;
    }
    if (n == 0) {
        rc = gt_error_set(GT_ERR_NOTFOUND, "%s has no callchain %lld", t->path, (long long)callchain_id);
        goto cleanup;
    }
    *out_frames = t->frames;
    *out_n = n;
cleanup:
    sqlite3_reset(st);
    return rc;
}

/* ---- counts and spans -------------------------------------------------------- */

/* The layout to read `kind` with in this trace; NULL when its table is absent. */
static const kind_desc *desc_of(const gt_trace *t, gt_event_kind kind)
{
    if (t->origin == GT_ORIGIN_GTRACE && kind == GT_EV_KERNEL && find_object(t, GT_TABLE_KERNELS))
        return &gtrace_kernel_desc;
    const kind_desc *d = &kind_descs[kind];
    return find_object(t, d->table) ? d : NULL;
}

int gt_trace_count(gt_trace *t, gt_event_kind kind, int64_t *out_n)
{
    char sql[160];
    bool is_null;
    if (!t || !out_n || (unsigned)kind >= GT_EV_N_KINDS)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_count: bad argument");
    *out_n = 0;
    const kind_desc *d = desc_of(t, kind);
    if (!d)
        return 0;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM \"%s\"", d->table);
    return query_int64(t, sql, out_n, &is_null, "counting events");
}

int gt_trace_dropped(gt_trace *t, gt_event_kind kind, int64_t *out_n)
{
    char sql[160];
    bool is_null;
    if (!t || !out_n || (unsigned)kind >= GT_EV_N_KINDS)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_dropped: bad argument");
    *out_n = 0;
    if (!find_object(t, GT_TABLE_DROPPED_EVENTS))
        return 0; /* an nsys export, or nothing was ever dropped */
    snprintf(sql, sizeof sql, "SELECT sum(count) FROM " GT_TABLE_DROPPED_EVENTS " WHERE kind = '%s'",
             gt_event_kind_name(kind));
    return query_int64(t, sql, out_n, &is_null, "reading dropped-event counts");
}

int gt_trace_session_start(gt_trace *t, int64_t *out_utc_epoch_ns)
{
    bool is_null;
    if (!t || !out_utc_epoch_ns)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_session_start: bad argument");
    *out_utc_epoch_ns = 0;
    if (!find_object(t, "TARGET_INFO_SESSION_START_TIME"))
        return gt_error_set(GT_ERR_NOTFOUND, "%s: no session start time", t->path);
    int rc = query_int64(t, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1", out_utc_epoch_ns,
                         &is_null, "reading the session start time");
    if (rc == 0 && is_null)
        return gt_error_set(GT_ERR_NOTFOUND, "%s: no session start time", t->path);
    return rc;
}

int gt_trace_time_span(gt_trace *t, int64_t *out_start_ns, int64_t *out_end_ns)
{
    bool any = false;
    int rc = 0;
    sqlite3_stmt *st = NULL;

    if (!t || !out_start_ns || !out_end_ns)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_time_span: bad argument");
    *out_start_ns = 0;
    *out_end_ns = 0;
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        const kind_desc *d = desc_of(t, (gt_event_kind)k);
        char sql[256];
        if (!d)
            continue;
        if (d->start_from_id)
            snprintf(sql, sizeof sql, "SELECT min(\"id\") >> %d, max(max(\"end\", \"id\" >> %d)) FROM \"%s\"",
                     GT_KERNEL_ID_SHIFT, GT_KERNEL_ID_SHIFT, d->table);
        else if (d->instant)
            snprintf(sql, sizeof sql, "SELECT min(\"start\"), max(\"start\") FROM \"%s\"", d->table);
        else /* NVTX marks have no end */
            snprintf(sql, sizeof sql, "SELECT min(\"start\"), max(max(coalesce(\"end\", \"start\"), \"start\")) FROM \"%s\"",
                     d->table);
        rc = prepare(t, sql, &st, "finding its time span");
        if (rc < 0)
            return rc;
        int step = sqlite3_step(st);
        if (step == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
            int64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);
            if (!any || s < *out_start_ns)
                *out_start_ns = s;
            if (!any || e > *out_end_ns)
                *out_end_ns = e;
            any = true;
        } else if (step != SQLITE_ROW && step != SQLITE_DONE) {
            rc = sql_fail(t, step, "finding its time span");
        }
        sqlite3_finalize(st);
        st = NULL;
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ---- iteration ---------------------------------------------------------------- */

/* Whether the writer recorded that `table`'s rows went in with non-decreasing
 * starts (GTRACE_TIME_ORDERED, written when a gtrace trace is closed): then
 * rowid order is (start, rowid) order. */
static bool time_ordered(const gt_trace *t, const char *table)
{
    const char *list = t->origin == GT_ORIGIN_GTRACE ? gt_trace_meta(t, "GTRACE_TIME_ORDERED") : NULL;
    size_t n = strlen(table);
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, " ");
        if (len == n && strncmp(p, table, n) == 0)
            return true;
        p += len;
        p += strspn(p, " ");
    }
    return false;
}

static int max_duration(gt_trace *t, gt_event_kind kind, const kind_desc *d, int64_t *out)
{
    char sql[200];
    bool is_null;
    if (!t->max_dur_known[kind]) {
        if (d->start_from_id)
            snprintf(sql, sizeof sql, "SELECT max(\"end\" - (\"id\" >> %d)) FROM \"%s\"", GT_KERNEL_ID_SHIFT, d->table);
        else
            snprintf(sql, sizeof sql, "SELECT max(\"end\" - \"start\") FROM \"%s\"", d->table);
        int rc = query_int64(t, sql, &t->max_dur_ns[kind], &is_null, "finding its longest event");
        if (rc < 0)
            return rc;
        if (is_null || t->max_dur_ns[kind] < 0)
            t->max_dur_ns[kind] = 0;
        t->max_dur_known[kind] = true;
    }
    *out = t->max_dur_ns[kind];
    return 0;
}

int gt_iter_new(gt_iter **out, gt_trace *t, gt_event_kind kind, int64_t from_ns, int64_t to_ns)
{
    gt_iter *it = NULL;
    sbuf sql = {0};
    int rc = 0;
    char doing[96];

    if (!out || !t || (unsigned)kind >= GT_EV_N_KINDS)
        return gt_error_set(GT_ERR_INVALID, "gt_iter_new: bad argument");
    *out = NULL;
    if (from_ns > to_ns)
        return gt_error_set(GT_ERR_INVALID, "%s: time range [%lld, %lld) ends before it starts", t->path,
                            (long long)from_ns, (long long)to_ns);
    snprintf(doing, sizeof doing, "reading %s events", gt_event_kind_name(kind));
    it = calloc(1, sizeof *it);
    if (!it)
        return nomem(t);
    it->t = t;
    it->kind = kind;
    it->desc = desc_of(t, kind);
    const kind_desc *d = it->desc;
    if (!d || from_ns == to_ns) /* no table, or an empty range: nothing */
        goto done;

    bool everything = from_ns == INT64_MIN && to_ns == INT64_MAX;
    const db_object *o = find_object(t, d->table);
    const char *join = d->join_table && find_object(t, d->join_table) ? d->join_table : NULL;
    int64_t max_dur = 0;
    if (d->hook == launch_hook && (rc = load_launches(t)) < 0)
        goto cleanup;
    if (!everything && !d->instant) {
        rc = max_duration(t, kind, d, &max_dur);
        if (rc < 0)
            goto cleanup;
    }

    sb_printf(&sql, "SELECT ");
    rc = append_columns(t, &sql, d->fields, d->n_fields, d->table, join);
    if (rc < 0)
        goto cleanup;
    sb_printf(&sql, " FROM \"%s\" AS m", d->table);
    if (join)
        sb_printf(&sql, " LEFT JOIN \"%s\" AS j ON %s", join, d->join_on);
    /* [from, to) overlaps [start, end) when start < to and end > from; an
     * instant (end <= start) overlaps when from <= start < to. The lower
     * bound on start, from - longest, lets an index (or, for GTRACE_KERNELS,
     * the rowid) serve the range. */
    const char *start_col = d->start_from_id ? "id" : "start";
    if (!everything && d->start_from_id)
        sb_printf(&sql, " WHERE m.\"id\" BETWEEN ?1 AND ?2 AND (m.\"end\" > ?3 OR (m.\"id\" >> %d) >= ?3)",
                  GT_KERNEL_ID_SHIFT);
    else if (!everything && d->instant)
        sb_printf(&sql, " WHERE m.\"start\" BETWEEN ?1 AND ?2");
    else if (!everything)
        sb_printf(&sql, " WHERE m.\"start\" BETWEEN ?1 AND ?2 AND (m.\"end\" > ?3 OR m.\"start\" >= ?3)");
    bool rowid = o && !o->is_view && !o->without_rowid;
    if (everything && !d->start_from_id && rowid && time_ordered(t, d->table))
        sb_printf(&sql, " ORDER BY m.rowid"); /* the same order, without the index and its lookups */
    else
        sb_printf(&sql, " ORDER BY m.\"%s\"", start_col);
    if (!d->start_from_id && rowid && !(everything && time_ordered(t, d->table)))
        sb_printf(&sql, ", m.rowid"); /* equal starts come out in the order written */
    if (sql.failed) {
        rc = nomem(t);
        goto cleanup;
    }
    rc = prepare(t, sql.s, &it->stmt, doing);
    if (rc < 0)
        goto cleanup;
    if (!everything) {
        int64_t lo = sat_sub(from_ns, max_dur);
        int64_t hi = to_ns == INT64_MAX ? INT64_MAX : to_ns - 1;
        if (d->start_from_id) {
            const int64_t unit = (int64_t)1 << GT_KERNEL_ID_SHIFT;
            lo = lo < INT64_MIN / unit ? INT64_MIN : lo * unit;
            hi = hi > INT64_MAX / unit - 1 ? INT64_MAX : hi * unit + (unit - 1);
        }
        sqlite3_bind_int64(it->stmt, 1, lo);
        sqlite3_bind_int64(it->stmt, 2, hi);
        if (!d->instant)
            sqlite3_bind_int64(it->stmt, 3, from_ns);
    }
done:
    *out = it;
    it = NULL;
cleanup:
    gt_iter_free(it);
    free(sql.s);
    return rc;
}

/* Reads GTRACE_KERNEL_LAUNCHES into t->launches, once. */
static int load_launches(gt_trace *t)
{
    sbuf sql = {0};
    sqlite3_stmt *st = NULL;
    size_t cap_ids = 0, cap_launches = 0;
    int rc = 0;
    if (t->launches_loaded)
        return 0;
    if (!find_object(t, GT_TABLE_KERNEL_LAUNCHES)) {
        t->launches_loaded = true; /* kernels without their launch: zeros, as a LEFT JOIN gives */
        return 0;
    }
    sb_printf(&sql, "SELECT ");
    rc = append_columns(t, &sql, launch_fields, N_OF(launch_fields), NULL, GT_TABLE_KERNEL_LAUNCHES);
    if (rc < 0)
        goto cleanup;
    sb_printf(&sql, ", j.\"id\" FROM \"%s\" AS j ORDER BY j.\"id\"", GT_TABLE_KERNEL_LAUNCHES);
    if (sql.failed) {
        rc = nomem(t);
        goto cleanup;
    }
    if ((rc = prepare(t, sql.s, &st, "reading kernel launches")) < 0)
        goto cleanup;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t *ids = grow(t->launch_ids, &cap_ids, t->n_launches + 1, sizeof *ids);
        if (ids)
            t->launch_ids = ids;
        gt_kernel *launches = ids ? grow(t->launches, &cap_launches, t->n_launches + 1, sizeof *launches) : NULL;
        if (!launches) {
            rc = nomem(t);
            goto cleanup;
        }
        t->launches = launches;
        gt_kernel *k = &t->launches[t->n_launches];
        memset(k, 0, sizeof *k);
        if ((rc = fill_fields(t, st, launch_fields, N_OF(launch_fields), k)) < 0)
            goto cleanup;
        t->launch_ids[t->n_launches++] = sqlite3_column_int64(st, (int)N_OF(launch_fields));
    }
    if (step != SQLITE_DONE) {
        rc = sql_fail(t, step, "reading kernel launches");
        goto cleanup;
    }
    t->launches_loaded = true;
cleanup:
    if (rc < 0)
        t->n_launches = 0;
    sqlite3_finalize(st);
    free(sql.s);
    return rc;
}

/* A gtrace kernel's launch configuration, from the launches read at first use. */
static int launch_hook(gt_iter *it, gt_event *ev)
{
    const gt_trace *t = it->t;
    if (sqlite3_column_type(it->stmt, GK_LAUNCH_ID) == SQLITE_NULL)
        return 0;
    int64_t id = sqlite3_column_int64(it->stmt, GK_LAUNCH_ID);
    size_t n = t->n_launches, i;
    if (n > 0 && t->launch_ids[n - 1] - t->launch_ids[0] == (int64_t)n - 1) { /* ids 1..n, as written */
        if (id < t->launch_ids[0] || id > t->launch_ids[n - 1])
            return 0; /* no such launch: zeros, as a LEFT JOIN gives */
        i = (size_t)(id - t->launch_ids[0]);
    } else {
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (t->launch_ids[mid] < id)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == n || t->launch_ids[lo] != id)
            return 0;
        i = lo;
    }
    /* the launch's members from its row, this kernel's own from its own */
    gt_kernel *k = &ev->u.kernel, own = *k;
    *k = t->launches[i];
    k->start_ns = own.start_ns;
    k->end_ns = own.end_ns;
    k->stream_id = own.stream_id;
    k->correlation_id = own.correlation_id;
    k->grid_id = own.grid_id;
    k->graph_node_id = own.graph_node_id;
    return 0;
}

/* NVTX: the color, the message (registered, or inline and interned here) and
 * the one payload member that is set. */
static int nvtx_hook(gt_iter *it, gt_event *ev)
{
    sqlite3_stmt *st = it->stmt;
    gt_nvtx *n = &ev->u.nvtx;

    if (sqlite3_column_type(st, NV_COLOR) != SQLITE_NULL) {
        n->has_color = true;
        n->color = (uint32_t)sqlite3_column_int64(st, NV_COLOR);
    }
    if (sqlite3_column_type(st, NV_TEXT_ID) != SQLITE_NULL && sqlite3_column_int64(st, NV_TEXT_ID) != 0) {
        n->text = sqlite3_column_int64(st, NV_TEXT_ID);
    } else if (sqlite3_column_type(st, NV_TEXT) != SQLITE_NULL) {
        const char *s = (const char *)sqlite3_column_text(st, NV_TEXT);
        if (!s)
            return nomem(it->t);
        int rc = intern(it->t, s, &n->text);
        if (rc < 0)
            return rc;
    }
    for (int col = NV_U64; col <= NV_F32; col++) {
        if (sqlite3_column_type(st, col) == SQLITE_NULL)
            continue;
        n->payload_kind = (gt_payload_kind)(GT_PAYLOAD_U64 + (col - NV_U64));
        switch (col) {
        case NV_U64: n->payload.u64 = (uint64_t)sqlite3_column_int64(st, col); break;
        case NV_I64: n->payload.i64 = sqlite3_column_int64(st, col); break;
        case NV_F64: n->payload.f64 = sqlite3_column_double(st, col); break;
        case NV_U32: n->payload.u32 = (uint32_t)sqlite3_column_int64(st, col); break;
        case NV_I32: n->payload.i32 = (int32_t)sqlite3_column_int64(st, col); break;
        case NV_F32: n->payload.f32 = (float)sqlite3_column_double(st, col); break;
        }
        break;
    }
    return 0;
}

int gt_iter_next(gt_iter *it, gt_event *ev)
{
    char doing[96];
    if (!it || !ev)
        return gt_error_set(GT_ERR_INVALID, "gt_iter_next: no iterator or no event");
    if (!it->stmt)
        return 0;
    int step = sqlite3_step(it->stmt);
    if (step == SQLITE_DONE) {
        sqlite3_finalize(it->stmt); /* releases its read of the file early */
        it->stmt = NULL;
        return 0;
    }
    if (step != SQLITE_ROW) {
        snprintf(doing, sizeof doing, "reading %s events", gt_event_kind_name(it->kind));
        int rc = sql_fail(it->t, step, doing);
        sqlite3_finalize(it->stmt);
        it->stmt = NULL;
        return rc;
    }
    memset(ev, 0, sizeof *ev);
    ev->kind = it->kind;
    int rc = fill_fields(it->t, it->stmt, it->desc->fields, it->desc->n_fields, &ev->u);
    if (rc == 0 && it->desc->hook)
        rc = it->desc->hook(it, ev);
    return rc < 0 ? rc : 1;
}

void gt_iter_free(gt_iter *it)
{
    if (!it)
        return;
    sqlite3_finalize(it->stmt);
    free(it);
}
