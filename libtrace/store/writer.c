/* writer.c: gt_writer_*, the one way events get into a trace.
 *
 * One thread writes. Events are buffered per table and inserted BULK_ROWS at
 * a time with multi-row prepared INSERTs (one sqlite3_step per 64 rows, not
 * per row); what is left in the buffers goes in at commit. Rows are buffered
 * SORT_ROWS at a time and put in start order (stable): kernels so that their
 * table fills its pages; the other tables so that their rows lie in about the
 * order their start index reads them (NVTX ranges and API calls are recorded
 * when they end), which made reading NVTX_EVENTS in time order a fifth faster.
 * Strings and kernel launch configurations are kept in hash tables here,
 * given their ids at once, and written to StringIds / GTRACE_KERNEL_LAUNCHES
 * in the transaction that commits them.
 *
 * The file is in WAL mode while written, so every committed batch survives a
 * kill -9; close turns the compact kernel tables into nsys's kernel table,
 * leaves out empty event tables, writes the TARGET_INFO_* rows gtrace knows
 * (gt_schema_finish), builds the time indexes, gives back the freed pages
 * (auto_vacuum = INCREMENTAL) and turns it back into one rollback-journal
 * file. NVTX messages go where nsys puts them: registered strings in textId,
 * any other message in text. Failures: a bad argument (GT_ERR_INVALID) rejects
 * that call and leaves the batch open; any other failure (memory, disk, I/O)
 * rolls the open batch back, so the file holds exactly the committed batches,
 * and the writer can begin a new batch. One exception: more than 256 kernels
 * starting in one nanosecond cannot all get an id; the others are committed,
 * the rest counted in GTRACE_DROPPED_EVENTS, and commit says so with
 * GT_ERR_INVALID.
 *
 * Every allocation here goes through sqlite3_malloc64(), so that a test that
 * fails SQLite's allocator fails ours too.
 *
 * This file does not define tables (schema.c) or read traces (reader.c). */
#include "config.h"

#include "gt_store.h"
#include "schema.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
    BULK_ROWS = 64,     /* rows per multi-row INSERT: measured, see bench/results */
    SORT_ROWS = 1024, /* rows are put in start order this many at a time */
    CHUNK_BYTES = 64 * 1024, /* string arena */
};

/* ---- tables written through row buffers ------------------------------------ */

typedef enum table_id {
    TB_KERNEL, TB_MEMCPY, TB_MEMSET, TB_API, TB_SYNC, TB_NVTX, TB_HEAP, TB_CPU_OP, N_TABLES
} table_id;

typedef struct table_def {
    const char *insert; /* up to VALUES; the placeholders are added */
    int n_cols;         /* at most 32: NULLs are a bit mask */
    uint32_t real_cols; /* bit c: column c is bound as a double */
    uint32_t text_cols; /* bit c: column c holds a string id, bound as that string */
} table_def;

static const table_def table_defs[N_TABLES] = {
    [TB_KERNEL] = {"INSERT INTO " GT_TABLE_KERNELS
                   " (id, end, streamId, correlationId, launchId, gridId, graphNodeId) VALUES ", 7, 0},
    [TB_MEMCPY] = {"INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId,"
                   " correlationId, globalPid, bytes, copyKind, srcKind, dstKind, srcDeviceId, dstDeviceId)"
                   " VALUES ", 13, 0},
    [TB_MEMSET] = {"INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId,"
                   " correlationId, globalPid, value, bytes, memKind) VALUES ", 10, 0},
    [TB_API] = {"INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId,"
                " nameId, returnValue, callchainId) VALUES ", 8, 0},
    [TB_SYNC] = {"INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId,"
                 " correlationId, globalPid, syncType, eventId) VALUES ", 9, 0},
    [TB_NVTX] = {"INSERT INTO NVTX_EVENTS (start, end, eventType, rangeId, category, color, globalTid,"
                 " endGlobalTid, text, textId, domainId, uint64Value, int64Value, doubleValue, uint32Value,"
                 " int32Value, floatValue) VALUES ", 17, (1u << 13) | (1u << 16), 1u << 8},
    [TB_HEAP] = {"INSERT INTO " GT_TABLE_MEMORY_EVENTS " (start, globalTid, operation, heapId, address, bytes,"
                 " heapUsage, memoryType, nameId, domainId, callchainId) VALUES ", 11, 0},
    [TB_CPU_OP] = {"INSERT INTO " GT_TABLE_CPU_OPS " (start, end, globalTid, nameId, streamId, flops, bytes)"
                   " VALUES ", 7, 0},
};

/* Rows waiting for multi-row INSERTs. */
typedef struct row_buffer {
    sqlite3_stmt *one, *bulk; /* 1 row, BULK_ROWS rows */
    int n_rows, cap_rows;     /* cap_rows: a multiple of BULK_ROWS */
    int n_cols;
    int64_t *cells;  /* (cap_rows, n_cols); doubles kept as their bits */
    uint32_t *nulls; /* (cap_rows) bit c: column c is NULL */
} row_buffer;

typedef struct row_key {
    int64_t id;
    int row;
} row_key;

/* ---- other statements ---------------------------------------------------- */

typedef enum stmt_id {
    ST_STRING, ST_LAUNCH, ST_GPU_MEMORY, ST_GPU_STACK, ST_PROCESS, ST_THREAD, ST_GPU,
    ST_CALLCHAIN_EXISTS, ST_CALLCHAIN, ST_CONFIG, ST_DROPPED, ST_SESSION_CLEAR, ST_SESSION,
    N_STMTS
} stmt_id;

static const char *const stmt_sql[N_STMTS] = {
    [ST_STRING] = "INSERT INTO StringIds (id, value) VALUES (?, ?)",
    [ST_LAUNCH] = "INSERT INTO " GT_TABLE_KERNEL_LAUNCHES " (id, globalPid, deviceId, contextId,"
                  " demangledName, shortName, mangledName, launchType, cacheConfig, registersPerThread,"
                  " gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory,"
                  " localMemoryPerThread, localMemoryTotal, sharedMemoryLimitConfig)"
                  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    [ST_GPU_MEMORY] = "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId,"
                      " address, pc, bytes, memKind, memoryOperationType, correlationId, streamId)"
                      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    [ST_GPU_STACK] = "INSERT INTO " GT_TABLE_GPU_MEMORY_STACKS " (eventId, callchainId) VALUES (?, ?)",
    [ST_PROCESS] = "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, ?)",
    [ST_THREAD] = "INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?, ?, ?)",
    [ST_GPU] = "INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, l2CacheSize, totalMemory,"
               " memoryBandwidth, clockRate, smCount, uuid, chipName, cuDevice, maxRegistersPerBlock,"
               " maxShmemPerBlock, maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm,"
               " threadsPerWarp, asyncEngines, maxThreadsPerBlock, computeMajor, computeMinor,"
               " smMajor, smMinor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
               " ?, ?, ?, ?, ?)",
    [ST_CALLCHAIN_EXISTS] = "SELECT 1 FROM CUDA_CALLCHAINS WHERE id = ? LIMIT 1",
    [ST_CALLCHAIN] = "INSERT INTO CUDA_CALLCHAINS (id, symbol, module, unresolved, originalIP, stackDepth)"
                     " VALUES (?, ?, ?, ?, ?, ?)",
    [ST_CONFIG] = "INSERT INTO " GT_TABLE_RUN_CONFIG " (globalPid, key, value) VALUES (?, ?, ?)",
    [ST_DROPPED] = "INSERT INTO " GT_TABLE_DROPPED_EVENTS " (globalPid, kind, count) VALUES (?, ?, ?)"
                   " ON CONFLICT (globalPid, kind) DO UPDATE SET count = count + excluded.count",
    [ST_SESSION_CLEAR] = "DELETE FROM TARGET_INFO_SESSION_START_TIME",
    [ST_SESSION] = "INSERT INTO TARGET_INFO_SESSION_START_TIME (utcEpochNs, utcTime, localTime)"
                   " VALUES (?, ?, ?)",
};

/* ---- dictionaries: interned strings and launch configurations ------------- */

/* Everything in a gt_kernel that is the same for each launch of one
 * configuration. No padding: keys compare with memcmp. */
typedef struct launch_key {
    int64_t global_pid;
    int64_t demangled_name, short_name, mangled_name;
    int64_t local_total_bytes;
    int32_t device_id, context_id;
    int32_t grid_x, grid_y, grid_z, block_x, block_y, block_z;
    int32_t registers_per_thread, static_shared_bytes, dynamic_shared_bytes, local_per_thread_bytes;
    int32_t launch_type, cache_config, shared_limit_config;
    int32_t zero;
} launch_key;
_Static_assert(sizeof(launch_key) == 5 * 8 + 16 * 4, "launch_key has padding");

/* Open addressing over entry ids 1..n; ids 1..n_written have rows in the
 * file or the open transaction, 1..n_durable committed ones. */
typedef struct dict {
    uint32_t *slots;  /* an entry id, 0 for empty */
    uint32_t *hashes; /* the hash of the entry in that slot */
    size_t n_slots;   /* a power of two, at least 2n */
    size_t n, n_written, n_durable;
} dict;

typedef struct string_ref {
    const char *s;
    size_t n_bytes;
} string_ref;

typedef struct chunk {
    struct chunk *next;
    size_t used_bytes, size_bytes;
    char data[];
} chunk;

struct gt_writer {
    sqlite3 *db;
    char *path;
    bool in_batch;
    sqlite3_stmt *stmts[N_STMTS];
    row_buffer rows[N_TABLES];
    void *row_memory;              /* every buffer's cells and nulls */
    row_key order[SORT_ROWS];
    /* Whether each table's rows went in with non-decreasing starts: then a
     * reader can take rowid order for time order (GTRACE_TIME_ORDERED). */
    int64_t last_start[N_TABLES];
    bool has_rows[N_TABLES], unordered[N_TABLES];
    int64_t n_events[GT_EV_N_KINDS];         /* added, including the open batch */
    int64_t n_events_durable[GT_EV_N_KINDS]; /* committed */

    int64_t n_unplaced; /* kernels of the open batch that found no free id */

    dict strings;
    string_ref *string_of; /* (strings.n) by id - 1, pointing into the chunks */
    size_t string_cap;
    chunk *chunks;

    dict launches;
    launch_key *launch_of; /* (launches.n) by id - 1 */
    size_t launch_cap;
};

/* ---- errors ---------------------------------------------------------------- */

static int status_of(int rc, int sys_errno)
{
    if ((rc & 0xff) == SQLITE_IOERR && (sys_errno == ENOSPC || sys_errno == EDQUOT))
        return GT_ERR_FULL; /* a full disk met by an fsync or a truncate */
    if (rc == SQLITE_IOERR_NOMEM)
        return GT_ERR_NOMEM;
    switch (rc & 0xff) {
    case SQLITE_NOMEM: return GT_ERR_NOMEM;
    case SQLITE_FULL: return GT_ERR_FULL;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return GT_ERR_CORRUPT;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG: return GT_ERR_INVALID;
    default: return GT_ERR_IO;
    }
}

/* Sets this thread's message for a failed SQLite call, naming the file. */
static int sql_error(gt_writer *w, int rc, const char *what)
{
    int status = status_of(rc, sqlite3_system_errno(w->db));
    return gt_error_set(status, "%s: cannot %s: %s (%s)", w->path, what,
                        sqlite3_errmsg(w->db), gt_status_name(status));
}

static int nomem(gt_writer *w, const char *what)
{
    return gt_error_set(GT_ERR_NOMEM, "%s: cannot %s: out of memory", w->path, what);
}

/* Drops the open batch after a failure: the file keeps what was committed. */
static int abort_batch(gt_writer *w, int status)
{
    for (int i = 0; i < N_STMTS; i++)
        sqlite3_reset(w->stmts[i]);
    for (int t = 0; t < N_TABLES; t++) {
        sqlite3_reset(w->rows[t].one);
        sqlite3_reset(w->rows[t].bulk);
        w->rows[t].n_rows = 0;
    }
    /* SQLite may have rolled back already; if ROLLBACK fails, begin retries it. */
    if (!sqlite3_get_autocommit(w->db))
        sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
    memcpy(w->n_events, w->n_events_durable, sizeof w->n_events);
    w->n_unplaced = 0;
    w->strings.n_written = w->strings.n_durable;
    w->launches.n_written = w->launches.n_durable;
    w->in_batch = false;
    return status;
}

/* What a failure does to the batch: a bad argument leaves it alone. */
static int fail(gt_writer *w, int status)
{
    if (status == GT_OK || status == GT_ERR_INVALID || !w->in_batch)
        return status;
    return abort_batch(w, status);
}

/* ---- memory ------------------------------------------------------------- */

static void *grow(void *p, size_t *cap, size_t need, size_t elem_bytes)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = sqlite3_realloc64(p, (sqlite3_uint64)n * elem_bytes);
    if (q)
        *cap = n;
    return q;
}

static uint32_t hash_bytes(const void *p, size_t n_bytes)
{
    const unsigned char *s = p;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n_bytes;
    while (n_bytes >= 8) {
        uint64_t v;
        memcpy(&v, s, 8);
        h = (h ^ v) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
        s += 8;
        n_bytes -= 8;
    }
    while (n_bytes--)
        h = (h ^ *s++) * 0x100000001b3ull;
    h ^= h >> 29;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 32;
    return (uint32_t)h;
}

/* Doubles the slots when more than half are taken. */
static bool dict_reserve(dict *d)
{
    if (d->n_slots && 2 * (d->n + 1) <= d->n_slots)
        return true;
    size_t n_slots = d->n_slots ? 2 * d->n_slots : 1024;
    uint32_t *slots = sqlite3_malloc64((sqlite3_uint64)n_slots * sizeof *slots);
    uint32_t *hashes = sqlite3_malloc64((sqlite3_uint64)n_slots * sizeof *hashes);
    if (!slots || !hashes) {
        sqlite3_free(slots);
        sqlite3_free(hashes);
        return false;
    }
    memset(slots, 0, n_slots * sizeof *slots);
    for (size_t i = 0; i < d->n_slots; i++) {
        if (!d->slots[i])
            continue;
        size_t j = d->hashes[i] & (n_slots - 1);
        while (slots[j])
            j = (j + 1) & (n_slots - 1);
        slots[j] = d->slots[i];
        hashes[j] = d->hashes[i];
    }
    sqlite3_free(d->slots);
    sqlite3_free(d->hashes);
    d->slots = slots;
    d->hashes = hashes;
    d->n_slots = n_slots;
    return true;
}

static void dict_free(dict *d)
{
    sqlite3_free(d->slots);
    sqlite3_free(d->hashes);
}

/* ---- strings ---------------------------------------------------------------- */

static const char *copy_string(gt_writer *w, const char *s, size_t n_bytes)
{
    chunk *c = w->chunks;
    if (!c || c->size_bytes - c->used_bytes < n_bytes + 1) {
        size_t size_bytes = n_bytes + 1 > CHUNK_BYTES ? n_bytes + 1 : CHUNK_BYTES;
        c = sqlite3_malloc64(sizeof *c + size_bytes);
        if (!c)
            return NULL;
        c->next = w->chunks;
        c->used_bytes = 0;
        c->size_bytes = size_bytes;
        w->chunks = c;
    }
    char *p = c->data + c->used_bytes;
    memcpy(p, s, n_bytes);
    p[n_bytes] = '\0';
    c->used_bytes += n_bytes + 1;
    return p;
}

static int intern(gt_writer *w, const char *s, gt_string_id *out_id)
{
    size_t n_bytes = strlen(s);
    if (n_bytes > INT32_MAX)
        return gt_error_set(GT_ERR_INVALID, "%s: a string of %zu bytes is too long", w->path, n_bytes);
    uint32_t h = hash_bytes(s, n_bytes);
    dict *d = &w->strings;
    if (!dict_reserve(d))
        return nomem(w, "intern a string");
    size_t i = h & (d->n_slots - 1);
    for (; d->slots[i]; i = (i + 1) & (d->n_slots - 1)) {
        uint32_t id = d->slots[i];
        if (d->hashes[i] == h && w->string_of[id - 1].n_bytes == n_bytes &&
            memcmp(w->string_of[id - 1].s, s, n_bytes) == 0) {
            *out_id = id;
            return GT_OK;
        }
    }
    if (d->n >= UINT32_MAX - 1)
        return gt_error_set(GT_ERR_INVALID, "%s: too many distinct strings", w->path);
    string_ref *string_of = grow(w->string_of, &w->string_cap, d->n + 1, sizeof *string_of);
    if (!string_of)
        return nomem(w, "intern a string");
    w->string_of = string_of;
    const char *copy = copy_string(w, s, n_bytes);
    if (!copy)
        return nomem(w, "intern a string");
    w->string_of[d->n] = (string_ref){copy, n_bytes};
    d->n++;
    d->slots[i] = (uint32_t)d->n;
    d->hashes[i] = h;
    *out_id = (gt_string_id)d->n;
    return GT_OK;
}

/* ---- launch configurations ------------------------------------------------ */

static int launch_id(gt_writer *w, const gt_kernel *k, int64_t *out_id)
{
    launch_key key = {
        .global_pid = k->global_pid,
        .demangled_name = k->demangled_name, .short_name = k->short_name,
        .mangled_name = k->mangled_name,
        .local_total_bytes = k->local_total_bytes,
        .device_id = k->device_id, .context_id = k->context_id,
        .grid_x = k->grid_x, .grid_y = k->grid_y, .grid_z = k->grid_z,
        .block_x = k->block_x, .block_y = k->block_y, .block_z = k->block_z,
        .registers_per_thread = k->registers_per_thread,
        .static_shared_bytes = k->static_shared_bytes, .dynamic_shared_bytes = k->dynamic_shared_bytes,
        .local_per_thread_bytes = k->local_per_thread_bytes,
        .launch_type = k->launch_type, .cache_config = k->cache_config,
        .shared_limit_config = k->shared_limit_config,
    };
    uint32_t h = hash_bytes(&key, sizeof key);
    dict *d = &w->launches;
    if (!dict_reserve(d))
        return nomem(w, "add a kernel");
    size_t i = h & (d->n_slots - 1);
    for (; d->slots[i]; i = (i + 1) & (d->n_slots - 1)) {
        uint32_t id = d->slots[i];
        if (d->hashes[i] == h && memcmp(&w->launch_of[id - 1], &key, sizeof key) == 0) {
            *out_id = id;
            return GT_OK;
        }
    }
    if (d->n >= UINT32_MAX - 1)
        return gt_error_set(GT_ERR_INVALID, "%s: too many distinct kernel launches", w->path);
    launch_key *launch_of = grow(w->launch_of, &w->launch_cap, d->n + 1, sizeof *launch_of);
    if (!launch_of)
        return nomem(w, "add a kernel");
    w->launch_of = launch_of;
    w->launch_of[d->n] = key;
    d->n++;
    d->slots[i] = (uint32_t)d->n;
    d->hashes[i] = h;
    *out_id = (int64_t)d->n;
    return GT_OK;
}

/* ---- writing rows ------------------------------------------------------------ */

static int step_reset(sqlite3_stmt *stmt)
{
    int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    return rc == SQLITE_ROW ? SQLITE_DONE : rc;
}

static void bind_row(const gt_writer *w, sqlite3_stmt *stmt, int first, const table_def *def, const row_buffer *b,
                     int r)
{
    const int64_t *v = b->cells + (size_t)r * b->n_cols;
    for (int c = 0; c < b->n_cols; c++) {
        if (b->nulls[r] >> c & 1) {
            sqlite3_bind_null(stmt, first + c);
        } else if (def->text_cols >> c & 1) {
            const string_ref *str = &w->string_of[v[c] - 1]; /* checked when added */
            sqlite3_bind_text(stmt, first + c, str->s, (int)str->n_bytes, SQLITE_STATIC);
        } else if (def->real_cols >> c & 1) {
            double x;
            memcpy(&x, &v[c], sizeof x);
            sqlite3_bind_double(stmt, first + c, x);
        } else {
            sqlite3_bind_int64(stmt, first + c, v[c]);
        }
    }
}

/* Inserts row r alone. A kernel whose id is taken (another kernel started in
 * the same nanosecond) moves to the next free k of that nanosecond. */
static int insert_one(gt_writer *w, table_id t, int r)
{
    row_buffer *b = &w->rows[t];
    for (;;) {
        bind_row(w, b->one, 1, &table_defs[t], b, r);
        int rc = step_reset(b->one);
        if (rc == SQLITE_DONE)
            return GT_OK;
        if (t != TB_KERNEL || rc != SQLITE_CONSTRAINT_PRIMARYKEY)
            return sql_error(w, rc, "insert events");
        int64_t *id = &b->cells[(size_t)r * b->n_cols];
        if ((*id & GT_KERNEL_ID_MAX_K) == GT_KERNEL_ID_MAX_K)
            return gt_error_set(GT_ERR_INVALID, "%s: more than %d kernels start at %lld ns",
                                w->path, GT_KERNEL_ID_MAX_K + 1, (long long)(*id >> GT_KERNEL_ID_SHIFT));
        (*id)++;
    }
}

/* A kernel that found no free id is left out, and counted where a reader
 * sees it: GTRACE_DROPPED_EVENTS. Commit reports it. */
static int unplaced_kernel(gt_writer *w, int64_t launch)
{
    sqlite3_stmt *stmt = w->stmts[ST_DROPPED];
    sqlite3_bind_int64(stmt, 1, w->launch_of[launch - 1].global_pid);
    sqlite3_bind_text(stmt, 2, gt_event_kind_name(GT_EV_KERNEL), -1, SQLITE_STATIC);
    sqlite3_bind_int64(stmt, 3, 1);
    int rc = step_reset(stmt);
    if (rc != SQLITE_DONE)
        return sql_error(w, rc, "count dropped events");
    w->n_unplaced++;
    w->n_events[GT_EV_KERNEL]--;
    return GT_OK;
}

static int compare_keys(const void *a, const void *b)
{
    const row_key *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row); /* equal starts: in the order added */
}

/* Rows in start order (column 0: start, or a kernel's id made of it). For
 * kernels, B-tree inserts then land past the last row and leave full pages,
 * where kernels of several streams, interleaved, would split pages in the
 * middle; for the rest, rowid order follows time order. */
static void sort_rows(const row_buffer *b, row_key *keys)
{
    bool sorted = true;
    for (int r = 0; r < b->n_rows; r++) {
        keys[r] = (row_key){b->cells[(size_t)r * b->n_cols], r};
        sorted = sorted && (r == 0 || keys[r - 1].id <= keys[r].id);
    }
    if (!sorted)
        qsort(keys, (size_t)b->n_rows, sizeof *keys, compare_keys);
}

/* Rows rows[0..n) of table t (rows NULL: 0..n), BULK_ROWS per statement;
 * the rest, and a statement that hit a taken kernel id, one by one. */
static int insert_rows(gt_writer *w, table_id t, const row_key *rows, int n)
{
    row_buffer *b = &w->rows[t];
    const table_def *def = &table_defs[t];
    int status = GT_OK;
    for (int i = 0; i < n && status == GT_OK;) {
        int end = n;
        if (i + BULK_ROWS <= n) {
            for (int r = 0; r < BULK_ROWS; r++)
                bind_row(w, b->bulk, 1 + r * b->n_cols, def, b, rows ? rows[i + r].row : i + r);
            int rc = step_reset(b->bulk);
            if (rc == SQLITE_DONE) {
                i += BULK_ROWS;
                continue;
            }
            if (t != TB_KERNEL || rc != SQLITE_CONSTRAINT_PRIMARYKEY)
                return sql_error(w, rc, "insert events");
            end = i + BULK_ROWS; /* the statement was undone */
        }
        for (; i < end && status == GT_OK; i++) {
            int r = rows ? rows[i].row : i;
            status = insert_one(w, t, r);
            if (status == GT_ERR_INVALID)
                status = unplaced_kernel(w, b->cells[(size_t)r * b->n_cols + 4]);
        }
    }
    return status;
}

/* Writes the buffered rows of table t. */
static int flush_rows(gt_writer *w, table_id t)
{
    row_buffer *b = &w->rows[t];
    sort_rows(b, w->order);
    int status = insert_rows(w, t, w->order, b->n_rows);
    for (int i = 0; i < b->n_rows && status == GT_OK; i++) {
        int64_t start = b->cells[(size_t)w->order[i].row * b->n_cols];
        if (w->has_rows[t] && start < w->last_start[t])
            w->unordered[t] = true; /* a rolled-back batch can only make this pessimistic */
        w->last_start[t] = start;
        w->has_rows[t] = true;
    }
    b->n_rows = 0;
    return status;
}

/* The next free row of table t's buffer, all columns NULL until set. */
static int64_t *next_row(gt_writer *w, table_id t, uint32_t **nulls)
{
    row_buffer *b = &w->rows[t];
    *nulls = &b->nulls[b->n_rows];
    **nulls = 0;
    return b->cells + (size_t)b->n_rows * b->n_cols;
}

static int row_done(gt_writer *w, table_id t)
{
    row_buffer *b = &w->rows[t];
    if (++b->n_rows < b->cap_rows)
        return GT_OK;
    return flush_rows(w, t);
}

/* One allocation for every buffer. */
static int alloc_buffers(gt_writer *w)
{
    size_t n_bytes = 0;
    for (int t = 0; t < N_TABLES; t++) {
        row_buffer *b = &w->rows[t];
        b->cap_rows = SORT_ROWS;
        b->n_cols = table_defs[t].n_cols;
        n_bytes += (size_t)b->cap_rows * (b->n_cols * sizeof *b->cells + sizeof *b->nulls);
    }
    char *p = w->row_memory = sqlite3_malloc64(n_bytes);
    if (!p)
        return nomem(w, "allocate buffers");
    for (int t = 0; t < N_TABLES; t++) {
        row_buffer *b = &w->rows[t];
        b->cells = (int64_t *)p;
        p += (size_t)b->cap_rows * b->n_cols * sizeof *b->cells;
    }
    for (int t = 0; t < N_TABLES; t++) {
        row_buffer *b = &w->rows[t];
        b->nulls = (uint32_t *)p;
        p += (size_t)b->cap_rows * sizeof *b->nulls;
    }
    return GT_OK;
}

static int write_strings(gt_writer *w)
{
    sqlite3_stmt *stmt = w->stmts[ST_STRING];
    for (size_t id = w->strings.n_written + 1; id <= w->strings.n; id++) {
        sqlite3_bind_int64(stmt, 1, (sqlite3_int64)id);
        sqlite3_bind_text(stmt, 2, w->string_of[id - 1].s, (int)w->string_of[id - 1].n_bytes, SQLITE_STATIC);
        int rc = step_reset(stmt);
        if (rc != SQLITE_DONE)
            return sql_error(w, rc, "insert strings");
        w->strings.n_written = id;
    }
    return GT_OK;
}

static int write_launches(gt_writer *w)
{
    sqlite3_stmt *stmt = w->stmts[ST_LAUNCH];
    for (size_t id = w->launches.n_written + 1; id <= w->launches.n; id++) {
        const launch_key *k = &w->launch_of[id - 1];
        const int64_t v[] = {
            (int64_t)id, k->global_pid, k->device_id, k->context_id,
            k->demangled_name, k->short_name, k->mangled_name, k->launch_type, k->cache_config,
            k->registers_per_thread, k->grid_x, k->grid_y, k->grid_z, k->block_x, k->block_y, k->block_z,
            k->static_shared_bytes, k->dynamic_shared_bytes, k->local_per_thread_bytes,
            k->local_total_bytes, k->shared_limit_config,
        };
        for (int c = 0; c < (int)(sizeof v / sizeof v[0]); c++)
            sqlite3_bind_int64(stmt, c + 1, v[c]);
        if (!k->mangled_name)
            sqlite3_bind_null(stmt, 7);
        int rc = step_reset(stmt);
        if (rc != SQLITE_DONE)
            return sql_error(w, rc, "insert kernel launches");
        w->launches.n_written = id;
    }
    return GT_OK;
}

/* Everything held in memory goes into the open transaction. */
static int write_pending(gt_writer *w)
{
    int status = GT_OK;
    for (int t = 0; t < N_TABLES && status == GT_OK; t++)
        status = flush_rows(w, (table_id)t);
    if (status == GT_OK)
        status = write_strings(w);
    if (status == GT_OK)
        status = write_launches(w);
    return status;
}

static int exec(gt_writer *w, const char *sql, const char *what)
{
    int rc = sqlite3_exec(w->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? GT_OK : sql_error(w, rc, what);
}

static int begin_txn(gt_writer *w)
{
    /* a ROLLBACK that failed after an earlier failure */
    if (!sqlite3_get_autocommit(w->db) && sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK)
        return sql_error(w, sqlite3_extended_errcode(w->db), "roll back a failed batch");
    return exec(w, "BEGIN", "begin a batch");
}

static int commit_txn(gt_writer *w)
{
    int status = write_pending(w);
    if (status == GT_OK)
        status = exec(w, "COMMIT", "commit");
    if (status != GT_OK)
        return abort_batch(w, status);
    memcpy(w->n_events_durable, w->n_events, sizeof w->n_events);
    w->strings.n_durable = w->strings.n_written;
    w->launches.n_durable = w->launches.n_written;
    w->in_batch = false;
    if (w->n_unplaced) {
        int64_t n = w->n_unplaced;
        w->n_unplaced = 0;
        return gt_error_set(GT_ERR_INVALID, "%s: committed without %lld kernels: more than %d kernels "
                            "started in one nanosecond (see GTRACE_DROPPED_EVENTS)", w->path, (long long)n,
                            GT_KERNEL_ID_MAX_K + 1);
    }
    return GT_OK;
}

/* Descriptions may come outside a batch: they get a transaction of their own. */
static int desc_begin(gt_writer *w, bool *own)
{
    *own = !w->in_batch;
    if (!*own)
        return GT_OK;
    int status = begin_txn(w);
    if (status == GT_OK)
        w->in_batch = true;
    return status;
}

static int desc_end(gt_writer *w, bool own, int status)
{
    if (status != GT_OK) {
        /* a rejected argument leaves the caller's batch; ours goes */
        if (own && status == GT_ERR_INVALID)
            return abort_batch(w, status);
        return fail(w, status);
    }
    return own ? commit_txn(w) : GT_OK;
}

/* ---- opening ------------------------------------------------------------------- */

/* Removes what SQLite left beside a file it could not finish; allocates
 * nothing, as it runs after failures. */
static void remove_sidecars(const char *path)
{
    static const char *const suffixes[] = {"-wal", "-shm", "-journal"};
    char p[PATH_MAX + 16];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
        if (snprintf(p, sizeof p, "%s%s", path, suffixes[i]) < (int)sizeof p)
            unlink(p);
}

static int create_file(const char *path, unsigned flags)
{
    if ((flags & GT_WRITE_OVERWRITE) && unlink(path) != 0 && errno != ENOENT)
        return gt_error_set(GT_ERR_IO, "%s: cannot replace it: %s", path, strerror(errno));
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        int err = errno;
        if (err == EEXIST)
            return gt_error_set(GT_ERR_EXISTS, "%s: the file exists (overwriting was not asked for)", path);
        int status = err == ENOSPC || err == EDQUOT ? GT_ERR_FULL : err == ENOENT ? GT_ERR_NOTFOUND : GT_ERR_IO;
        return gt_error_set(status, "%s: cannot create: %s", path, strerror(err));
    }
    close(fd);
    return GT_OK;
}

static int prepare(gt_writer *w, const char *sql, sqlite3_stmt **out)
{
    int rc = sqlite3_prepare_v3(w->db, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);
    return rc == SQLITE_OK ? GT_OK : sql_error(w, rc, "prepare statements");
}

/* "INSERT INTO T (...) VALUES (?, ...), (?, ...)": n_rows rows. */
static char *insert_sql(const table_def *def, int n_rows)
{
    sqlite3_str *s = sqlite3_str_new(NULL);
    sqlite3_str_appendall(s, def->insert);
    for (int r = 0; r < n_rows; r++) {
        sqlite3_str_appendall(s, r ? ", (?" : "(?");
        for (int c = 1; c < def->n_cols; c++)
            sqlite3_str_appendall(s, ", ?");
        sqlite3_str_appendchar(s, 1, ')');
    }
    return sqlite3_str_finish(s);
}

static int prepare_all(gt_writer *w)
{
    int status = GT_OK;
    for (int i = 0; i < N_STMTS && status == GT_OK; i++)
        status = prepare(w, stmt_sql[i], &w->stmts[i]);
    for (int t = 0; t < N_TABLES && status == GT_OK; t++) {
        char *one = insert_sql(&table_defs[t], 1), *bulk = insert_sql(&table_defs[t], BULK_ROWS);
        if (!one || !bulk)
            status = nomem(w, "prepare statements");
        if (status == GT_OK)
            status = prepare(w, one, &w->rows[t].one);
        if (status == GT_OK)
            status = prepare(w, bulk, &w->rows[t].bulk);
        sqlite3_free(one);
        sqlite3_free(bulk);
    }
    return status;
}

/* WAL while written: a commit is one append, and a kill -9 after it loses
 * nothing committed. NORMAL: WAL commits are not fsynced (a power cut may
 * lose the last batches, a killed program does not). */
static int configure_db(gt_writer *w)
{
    static const char *const pragmas[] = {
        "PRAGMA page_size = 8192", /* measured: a little faster than 4096, as compact */
        "PRAGMA auto_vacuum = INCREMENTAL", /* closing gives back the compact kernel tables' pages */
        "PRAGMA journal_mode = WAL",
        "PRAGMA synchronous = NORMAL",
        "PRAGMA cache_size = -16384", /* KiB */
    };
    for (size_t i = 0; i < sizeof pragmas / sizeof pragmas[0]; i++) {
        int status = exec(w, pragmas[i], "configure the file");
        if (status != GT_OK)
            return status;
    }
    return GT_OK;
}

int gt_writer_open(gt_writer **out, const char *path, unsigned flags)
{
    gt_writer *w = NULL;
    bool created = false;
    int status;

    if (!out || !path || !*path || (flags & ~(unsigned)GT_WRITE_OVERWRITE))
        return gt_error_set(GT_ERR_INVALID, "gt_writer_open: %s", !out ? "no output pointer"
                            : !path || !*path ? "no path" : "unknown flags");
    *out = NULL;
    status = create_file(path, flags);
    if (status != GT_OK)
        goto cleanup;
    created = true;
    w = sqlite3_malloc64(sizeof *w);
    if (!w) {
        status = gt_error_set(GT_ERR_NOMEM, "%s: cannot create: out of memory", path);
        goto cleanup;
    }
    memset(w, 0, sizeof *w);
    w->path = sqlite3_mprintf("%s", path);
    if (!w->path) {
        status = gt_error_set(GT_ERR_NOMEM, "%s: cannot create: out of memory", path);
        goto cleanup;
    }
    int rc = sqlite3_open_v2(path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        status = w->db ? sql_error(w, rc, "open") : gt_error_set(GT_ERR_NOMEM, "%s: cannot open: out of memory", path);
        goto cleanup;
    }
    sqlite3_extended_result_codes(w->db, 1);
    status = configure_db(w);
    if (status != GT_OK)
        goto cleanup;
    status = exec(w, "BEGIN", "create the schema");
    if (status != GT_OK)
        goto cleanup;
    rc = gt_schema_create(w->db);
    if (rc != SQLITE_OK) {
        status = sql_error(w, rc, "create the schema");
        goto cleanup;
    }
    status = exec(w, "COMMIT", "create the schema");
    if (status != GT_OK)
        goto cleanup;
    status = prepare_all(w);
    if (status != GT_OK)
        goto cleanup;
    status = alloc_buffers(w);
    if (status != GT_OK)
        goto cleanup;
    *out = w;
    w = NULL;
cleanup:
    gt_writer_free(w);
    if (status != GT_OK && created) {
        /* no half-made trace is left behind (nor a file that blocks a retry) */
        unlink(path);
        remove_sidecars(path);
    }
    return status;
}

/* ---- batches ---------------------------------------------------------------- */

int gt_writer_begin(gt_writer *w)
{
    if (!w)
        return gt_error_set(GT_ERR_INVALID, "gt_writer_begin: no writer");
    if (w->in_batch)
        return gt_error_set(GT_ERR_INVALID, "%s: a batch is already open", w->path);
    int status = begin_txn(w);
    if (status == GT_OK)
        w->in_batch = true;
    return status;
}

int gt_writer_commit(gt_writer *w)
{
    if (!w)
        return gt_error_set(GT_ERR_INVALID, "gt_writer_commit: no writer");
    if (!w->in_batch)
        return gt_error_set(GT_ERR_INVALID, "%s: no batch is open", w->path);
    return commit_txn(w);
}

int gt_writer_intern(gt_writer *w, const char *s, gt_string_id *out_id)
{
    if (!w || !s || !out_id)
        return gt_error_set(GT_ERR_INVALID, "gt_writer_intern: %s", !w ? "no writer" : !s ? "no string"
                            : "no output pointer");
    return fail(w, intern(w, s, out_id));
}

/* Kernel ids are start * 256 + k; start must leave room for the shift. */
#define KERNEL_START_LIMIT ((int64_t)1 << (63 - GT_KERNEL_ID_SHIFT))

static int add_kernel(gt_writer *w, const gt_kernel *k)
{
    if (k->start_ns < -KERNEL_START_LIMIT || k->start_ns >= KERNEL_START_LIMIT)
        return gt_error_set(GT_ERR_INVALID, "%s: kernel start %lld ns is out of range", w->path,
                            (long long)k->start_ns);
    int64_t launch = 0;
    int status = launch_id(w, k, &launch);
    if (status != GT_OK)
        return status;
    uint32_t *nulls;
    int64_t *v = next_row(w, TB_KERNEL, &nulls);
    v[0] = (int64_t)((uint64_t)k->start_ns << GT_KERNEL_ID_SHIFT);
    v[1] = k->end_ns;
    v[2] = k->stream_id;
    v[3] = k->correlation_id;
    v[4] = launch;
    v[5] = k->grid_id;
    v[6] = k->graph_node_id;
    if (!k->graph_node_id)
        *nulls |= 1u << 6;
    return row_done(w, TB_KERNEL);
}

static int add_memcpy(gt_writer *w, const gt_memcpy *m)
{
    uint32_t *nulls;
    int64_t *v = next_row(w, TB_MEMCPY, &nulls);
    v[0] = m->start_ns;
    v[1] = m->end_ns;
    v[2] = m->device_id;
    v[3] = m->context_id;
    v[4] = m->stream_id;
    v[5] = m->correlation_id;
    v[6] = m->global_pid;
    v[7] = m->bytes;
    v[8] = m->copy_kind;
    v[9] = m->src_kind;
    v[10] = m->dst_kind;
    v[11] = m->src_device_id;
    v[12] = m->dst_device_id;
    return row_done(w, TB_MEMCPY);
}

static int add_memset(gt_writer *w, const gt_memset *m)
{
    uint32_t *nulls;
    int64_t *v = next_row(w, TB_MEMSET, &nulls);
    v[0] = m->start_ns;
    v[1] = m->end_ns;
    v[2] = m->device_id;
    v[3] = m->context_id;
    v[4] = m->stream_id;
    v[5] = m->correlation_id;
    v[6] = m->global_pid;
    v[7] = m->value;
    v[8] = m->bytes;
    v[9] = m->mem_kind;
    return row_done(w, TB_MEMSET);
}

static int add_api(gt_writer *w, const gt_api_call *a)
{
    uint32_t *nulls;
    int64_t *v = next_row(w, TB_API, &nulls);
    v[0] = a->start_ns;
    v[1] = a->end_ns;
    v[2] = a->event_class;
    v[3] = a->global_tid;
    v[4] = a->correlation_id;
    v[5] = a->name;
    v[6] = a->return_value;
    v[7] = a->callchain_id;
    if (!a->callchain_id)
        *nulls |= 1u << 7;
    return row_done(w, TB_API);
}

static int add_sync(gt_writer *w, const gt_sync *s)
{
    uint32_t *nulls;
    int64_t *v = next_row(w, TB_SYNC, &nulls);
    v[0] = s->start_ns;
    v[1] = s->end_ns;
    v[2] = s->device_id;
    v[3] = s->context_id;
    v[4] = s->stream_id;
    v[5] = s->correlation_id;
    v[6] = s->global_pid;
    v[7] = s->sync_type;
    v[8] = s->event_id;
    return row_done(w, TB_SYNC);
}

static int add_nvtx(gt_writer *w, const gt_nvtx *n)
{
    if ((unsigned)n->payload_kind > GT_PAYLOAD_FLOAT)
        return gt_error_set(GT_ERR_INVALID, "%s: unknown NVTX payload kind %d", w->path, (int)n->payload_kind);
    if (n->text && (n->text < 0 || (uint64_t)n->text > w->strings.n))
        return gt_error_set(GT_ERR_INVALID, "%s: NVTX text %lld is no interned string", w->path, (long long)n->text);
    uint32_t *nulls;
    int64_t *v = next_row(w, TB_NVTX, &nulls);
    /* absent values are NULL, as nsys writes them; the payload fills one column */
    uint32_t null_mask = 0x3fu << 11;
    v[0] = n->start_ns;
    v[1] = n->end_ns;
    if (n->end_ns == -1)
        null_mask |= 1u << 1;
    v[2] = n->event_type;
    v[3] = n->range_id;
    if (!n->range_id)
        null_mask |= 1u << 3;
    v[4] = n->category;
    if (!n->category)
        null_mask |= 1u << 4;
    v[5] = (int64_t)n->color;
    if (!n->has_color)
        null_mask |= 1u << 5;
    v[6] = n->global_tid;
    v[7] = n->end_global_tid;
    if (!n->end_global_tid)
        null_mask |= 1u << 7;
    /* nsys: a registered string by its id (textId), any other message as text */
    v[8] = v[9] = n->text;
    if (!n->text || n->text_registered)
        null_mask |= 1u << 8;
    if (!n->text || !n->text_registered)
        null_mask |= 1u << 9;
    v[10] = n->domain_id;
    int col = -1;
    double x = 0;
    switch (n->payload_kind) {
    case GT_PAYLOAD_NONE: break;
    case GT_PAYLOAD_U64: col = 11; v[col] = (int64_t)n->payload.u64; break;
    case GT_PAYLOAD_I64: col = 12; v[col] = n->payload.i64; break;
    case GT_PAYLOAD_DOUBLE: col = 13; x = n->payload.f64; memcpy(&v[col], &x, sizeof x); break;
    case GT_PAYLOAD_U32: col = 14; v[col] = n->payload.u32; break;
    case GT_PAYLOAD_I32: col = 15; v[col] = n->payload.i32; break;
    case GT_PAYLOAD_FLOAT: col = 16; x = n->payload.f32; memcpy(&v[col], &x, sizeof x); break;
    }
    if (col >= 0)
        null_mask &= ~(1u << col);
    *nulls = null_mask;
    return row_done(w, TB_NVTX);
}

static int add_heap(gt_writer *w, const gt_heap_event *h)
{
    uint32_t *nulls;
    int64_t *v = next_row(w, TB_HEAP, &nulls);
    v[0] = h->start_ns;
    v[1] = h->global_tid;
    v[2] = h->operation;
    v[3] = (int64_t)h->heap_id;
    v[4] = (int64_t)h->address;
    v[5] = h->bytes;
    v[6] = h->heap_usage;
    v[7] = h->memory_type;
    v[8] = h->name;
    if (!h->name)
        *nulls |= 1u << 8;
    v[9] = h->domain_id;
    v[10] = h->callchain_id;
    if (!h->callchain_id)
        *nulls |= 1u << 10;
    return row_done(w, TB_HEAP);
}

static int add_cpu_op(gt_writer *w, const gt_cpu_op *o)
{
    uint32_t *nulls;
    int64_t *v = next_row(w, TB_CPU_OP, &nulls);
    v[0] = o->start_ns;
    v[1] = o->end_ns;
    v[2] = o->global_tid;
    v[3] = o->name;
    v[4] = o->stream_id;
    v[5] = o->flops;
    v[6] = o->bytes;
    return row_done(w, TB_CPU_OP);
}

/* Rare (allocations, not launches) and needs its rowid: inserted at once. */
static int add_gpu_memory(gt_writer *w, const gt_gpu_memory *m)
{
    sqlite3_stmt *stmt = w->stmts[ST_GPU_MEMORY];
    const int64_t v[] = {
        m->start_ns, m->global_pid, m->device_id, m->context_id, (int64_t)m->address, (int64_t)m->pc,
        m->bytes, m->mem_kind, m->operation, m->correlation_id, m->stream_id,
    };
    for (int c = 0; c < (int)(sizeof v / sizeof v[0]); c++)
        sqlite3_bind_int64(stmt, c + 1, v[c]);
    int rc = step_reset(stmt);
    if (rc != SQLITE_DONE)
        return sql_error(w, rc, "insert GPU memory events");
    if (!m->callchain_id)
        return GT_OK;
    stmt = w->stmts[ST_GPU_STACK];
    sqlite3_bind_int64(stmt, 1, sqlite3_last_insert_rowid(w->db));
    sqlite3_bind_int64(stmt, 2, m->callchain_id);
    rc = step_reset(stmt);
    return rc == SQLITE_DONE ? GT_OK : sql_error(w, rc, "insert GPU memory stacks");
}

int gt_writer_add(gt_writer *w, const gt_event *ev)
{
    if (!w || !ev)
        return gt_error_set(GT_ERR_INVALID, "gt_writer_add: %s", !w ? "no writer" : "no event");
    if (!w->in_batch)
        return gt_error_set(GT_ERR_INVALID, "%s: events are added inside a batch (gt_writer_begin)", w->path);
    int status;
    switch (ev->kind) {
    case GT_EV_KERNEL: status = add_kernel(w, &ev->u.kernel); break;
    case GT_EV_MEMCPY: status = add_memcpy(w, &ev->u.memcpy); break;
    case GT_EV_MEMSET: status = add_memset(w, &ev->u.memset); break;
    case GT_EV_API: status = add_api(w, &ev->u.api); break;
    case GT_EV_SYNC: status = add_sync(w, &ev->u.sync); break;
    case GT_EV_NVTX: status = add_nvtx(w, &ev->u.nvtx); break;
    case GT_EV_GPU_MEMORY: status = add_gpu_memory(w, &ev->u.gpu_memory); break;
    case GT_EV_HEAP: status = add_heap(w, &ev->u.heap); break;
    case GT_EV_CPU_OP: status = add_cpu_op(w, &ev->u.cpu_op); break;
    default:
        return gt_error_set(GT_ERR_INVALID, "%s: unknown event kind %d", w->path, (int)ev->kind);
    }
    if (status != GT_OK)
        return fail(w, status);
    w->n_events[ev->kind]++;
    return GT_OK;
}

int64_t gt_writer_count(const gt_writer *w, gt_event_kind kind)
{
    return w && (unsigned)kind < GT_EV_N_KINDS ? w->n_events[kind] : 0;
}

/* ---- descriptions ------------------------------------------------------------- */

/* The caller's string is bound, not copied (nothing to fail for want of
 * memory): run_desc unbinds it before the call returns. */
static void bind_text_or_null(sqlite3_stmt *stmt, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(stmt, i, s, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(stmt, i);
}

/* Runs a description statement whose values are bound, and unbinds them. */
static int run_desc(gt_writer *w, sqlite3_stmt *stmt, const char *what)
{
    bool own;
    int status = desc_begin(w, &own);
    if (status != GT_OK) {
        sqlite3_clear_bindings(stmt);
        return status;
    }
    int rc = step_reset(stmt);
    sqlite3_clear_bindings(stmt);
    if (rc != SQLITE_DONE)
        status = sql_error(w, rc, what);
    return desc_end(w, own, status);
}

int gt_writer_add_process(gt_writer *w, int64_t pid, const char *name)
{
    if (!w)
        return gt_error_set(GT_ERR_INVALID, "gt_writer_add_process: no writer");
    sqlite3_stmt *stmt = w->stmts[ST_PROCESS];
    sqlite3_bind_int64(stmt, 1, gt_global_pid(pid));
    sqlite3_bind_int64(stmt, 2, pid);
    bind_text_or_null(stmt, 3, name);
    return run_desc(w, stmt, "insert a process");
}

int gt_writer_add_thread_name(gt_writer *w, int64_t global_tid, const char *name, int32_t priority)
{
    if (!w || !name)
        return gt_error_set(GT_ERR_INVALID, "gt_writer_add_thread_name: %s", !w ? "no writer" : "no name");
    gt_string_id id;
    int status = intern(w, name, &id);
    if (status != GT_OK)
        return fail(w, status);
    sqlite3_stmt *stmt = w->stmts[ST_THREAD];
    sqlite3_bind_int64(stmt, 1, id);
    sqlite3_bind_int(stmt, 2, priority);
    sqlite3_bind_int64(stmt, 3, global_tid);
    return run_desc(w, stmt, "insert a thread name");
}

int gt_writer_add_gpu(gt_writer *w, const gt_gpu_info *g)
{
    if (!w || !g)
        return gt_error_set(GT_ERR_INVALID, "gt_writer_add_gpu: %s", !w ? "no writer" : "no GPU");
    sqlite3_stmt *stmt = w->stmts[ST_GPU];
    sqlite3_bind_int64(stmt, 1, (int64_t)GT_VM_ID << 48); /* a serialized GlobalId, as nsys writes it */
    sqlite3_bind_int(stmt, 2, g->id);
    bind_text_or_null(stmt, 3, g->name);
    bind_text_or_null(stmt, 4, g->bus_location);
    sqlite3_bind_int64(stmt, 5, g->l2_cache_bytes);
    sqlite3_bind_int64(stmt, 6, g->total_memory_bytes);
    sqlite3_bind_int64(stmt, 7, g->memory_bandwidth_bytes_per_s);
    sqlite3_bind_int64(stmt, 8, g->clock_rate_hz);
    sqlite3_bind_int(stmt, 9, g->sm_count);
    bind_text_or_null(stmt, 10, g->uuid);
    bind_text_or_null(stmt, 11, g->chip_name);
    sqlite3_bind_int(stmt, 12, g->id);
    sqlite3_bind_int(stmt, 13, g->max_registers_per_block);
    sqlite3_bind_int64(stmt, 14, g->max_shmem_per_block);
    sqlite3_bind_int64(stmt, 15, g->max_shmem_per_block_optin);
    sqlite3_bind_int64(stmt, 16, g->max_shmem_per_sm);
    sqlite3_bind_int(stmt, 17, g->max_registers_per_sm);
    sqlite3_bind_int(stmt, 18, g->threads_per_warp);
    sqlite3_bind_int(stmt, 19, g->async_engines);
    sqlite3_bind_int(stmt, 20, g->max_threads_per_block);
    sqlite3_bind_int(stmt, 21, g->compute_major);
    sqlite3_bind_int(stmt, 22, g->compute_minor);
    sqlite3_bind_int(stmt, 23, g->compute_major);
    sqlite3_bind_int(stmt, 24, g->compute_minor);
    return run_desc(w, stmt, "insert a GPU");
}

int gt_writer_add_callchain(gt_writer *w, int64_t callchain_id, const gt_frame *frames, size_t n_frames)
{
    if (!w || !frames || !n_frames)
        return gt_error_set(GT_ERR_INVALID, "gt_writer_add_callchain: %s", !w ? "no writer" : "no frames");
    bool own;
    int status = desc_begin(w, &own);
    if (status != GT_OK)
        return status;
    sqlite3_stmt *stmt = w->stmts[ST_CALLCHAIN_EXISTS];
    sqlite3_bind_int64(stmt, 1, callchain_id);
    int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    if (rc == SQLITE_ROW) {
        status = gt_error_set(GT_ERR_INVALID, "%s: callchain %lld was added before", w->path,
                              (long long)callchain_id);
        goto cleanup;
    }
    if (rc != SQLITE_DONE) {
        status = sql_error(w, rc, "insert a callchain");
        goto cleanup;
    }
    stmt = w->stmts[ST_CALLCHAIN];
    for (size_t i = 0; i < n_frames; i++) {
        sqlite3_bind_int64(stmt, 1, callchain_id);
        sqlite3_bind_int64(stmt, 2, frames[i].symbol);
        sqlite3_bind_int64(stmt, 3, frames[i].module);
        sqlite3_bind_int(stmt, 4, frames[i].unresolved);
        sqlite3_bind_int64(stmt, 5, (int64_t)frames[i].original_ip);
        sqlite3_bind_int64(stmt, 6, (int64_t)i);
        rc = step_reset(stmt);
        if (rc != SQLITE_DONE) {
            status = sql_error(w, rc, "insert a callchain");
            goto cleanup;
        }
    }
cleanup:
    return desc_end(w, own, status);
}

int gt_writer_add_config(gt_writer *w, int64_t global_pid, const char *key, const char *value)
{
    if (!w || !key)
        return gt_error_set(GT_ERR_INVALID, "gt_writer_add_config: %s", !w ? "no writer" : "no key");
    sqlite3_stmt *stmt = w->stmts[ST_CONFIG];
    sqlite3_bind_int64(stmt, 1, global_pid);
    sqlite3_bind_text(stmt, 2, key, -1, SQLITE_STATIC);
    bind_text_or_null(stmt, 3, value);
    return run_desc(w, stmt, "insert the run configuration");
}

int gt_writer_add_dropped(gt_writer *w, int64_t global_pid, gt_event_kind kind, int64_t n_dropped)
{
    if (!w || (unsigned)kind >= GT_EV_N_KINDS || n_dropped < 0)
        return gt_error_set(GT_ERR_INVALID, "gt_writer_add_dropped: %s", !w ? "no writer"
                            : n_dropped < 0 ? "negative count" : "unknown event kind");
    sqlite3_stmt *stmt = w->stmts[ST_DROPPED];
    sqlite3_bind_int64(stmt, 1, global_pid);
    sqlite3_bind_text(stmt, 2, gt_event_kind_name(kind), -1, SQLITE_STATIC);
    sqlite3_bind_int64(stmt, 3, n_dropped);
    return run_desc(w, stmt, "count dropped events");
}

static void format_time(char *buf, size_t n_bytes, time_t t, bool utc)
{
    struct tm tm;
    if (!(utc ? gmtime_r(&t, &tm) : localtime_r(&t, &tm)) || !strftime(buf, n_bytes, "%Y-%m-%dT%H:%M:%S", &tm))
        buf[0] = '\0';
}

int gt_writer_set_session_start(gt_writer *w, int64_t utc_epoch_ns)
{
    if (!w)
        return gt_error_set(GT_ERR_INVALID, "gt_writer_set_session_start: no writer");
    int64_t s = utc_epoch_ns / 1000000000;
    if (utc_epoch_ns % 1000000000 < 0)
        s--;
    char utc[64], local[64];
    format_time(utc, sizeof utc, (time_t)s, true);
    format_time(local, sizeof local, (time_t)s, false);

    bool own;
    int status = desc_begin(w, &own);
    if (status != GT_OK)
        return status;
    int rc = step_reset(w->stmts[ST_SESSION_CLEAR]); /* one row: the last one set */
    if (rc == SQLITE_DONE) {
        sqlite3_stmt *stmt = w->stmts[ST_SESSION];
        sqlite3_bind_int64(stmt, 1, utc_epoch_ns);
        sqlite3_bind_text(stmt, 2, utc, -1, SQLITE_STATIC);
        sqlite3_bind_text(stmt, 3, local, -1, SQLITE_STATIC);
        rc = step_reset(stmt);
        sqlite3_clear_bindings(stmt);
    }
    if (rc != SQLITE_DONE)
        status = sql_error(w, rc, "set the session start");
    return desc_end(w, own, status);
}

/* ---- closing --------------------------------------------------------------------- */

/* The tables whose rowid order is their time order: kernels always are, as
 * closing copies them in start order. A space-separated list in `out`. */
static void ordered_tables(const gt_writer *w, char *out, size_t n_bytes)
{
    out[0] = '\0';
    for (int t = 0; t < N_TABLES; t++) {
        if (!w->has_rows[t] || (t != TB_KERNEL && w->unordered[t]))
            continue;
        const char *ins = t == TB_KERNEL ? "CUPTI_ACTIVITY_KIND_KERNEL " : table_defs[t].insert + strlen("INSERT INTO ");
        const char *sp = strchr(ins, ' ');
        size_t len = strlen(out);
        snprintf(out + len, n_bytes - len, "%s%.*s", len ? " " : "", (int)(sp - ins), ins);
    }
}

static bool in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, " ");
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p += len;
        p += strspn(p, " ");
    }
    return false;
}

/* Closing: nsys's tables made from the compact ones (gt_schema_finish), the
 * list of tables whose rowid order is their time order, and time indexes on
 * the others: for a table in start order a reader finds a time range as a
 * rowid range (a binary search over rowids), so an index on start would only
 * cost bytes (15 B per kernel). */
static int finish_trace(gt_writer *w)
{
    int status = begin_txn(w);
    if (status != GT_OK)
        return status;
    w->in_batch = true;
    char ordered[512];
    ordered_tables(w, ordered, sizeof ordered);
    int rc = gt_schema_finish(w->db);
    if (rc != SQLITE_OK)
        status = sql_error(w, rc, "write nsys's tables");
    for (size_t i = 0; i < gt_schema_n_indexes && status == GT_OK; i++) {
        bool there = false;
        if (gt_schema_indexes[i].nsys_only || in_list(ordered, gt_schema_indexes[i].table))
            continue;
        rc = gt_schema_is_table(w->db, gt_schema_indexes[i].table, &there);
        if (rc != SQLITE_OK)
            status = sql_error(w, rc, "build the time indexes");
        else if (there)
            status = exec(w, gt_schema_indexes[i].sql, "build the time indexes");
    }
    if (status == GT_OK && *ordered) {
        sqlite3_stmt *stmt = NULL;
        rc = sqlite3_prepare_v2(w->db, "INSERT INTO META_DATA_EXPORT (name, value) VALUES ('GTRACE_TIME_ORDERED', ?)",
                                -1, &stmt, NULL);
        if (rc == SQLITE_OK) {
            sqlite3_bind_text(stmt, 1, ordered, -1, SQLITE_STATIC);
            rc = sqlite3_step(stmt);
        }
        sqlite3_finalize(stmt);
        if (rc != SQLITE_DONE)
            status = sql_error(w, rc, "record the tables in time order");
    }
    status = status == GT_OK ? commit_txn(w) : abort_batch(w, status);
    /* The pages of the compact kernel tables and of the dropped tables go
     * back. The trace is whole without it: a failure (a full disk) leaves
     * free pages in the file, and the checkpoint that follows reports a
     * lasting I/O error. */
    if (status == GT_OK)
        sqlite3_exec(w->db, "PRAGMA incremental_vacuum", NULL, NULL, NULL);
    return status;
}

/* Checkpoints the WAL into the file and leaves one rollback-journal file. */
static int to_single_file(gt_writer *w)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(w->db, "PRAGMA journal_mode = DELETE", -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    bool done = rc == SQLITE_ROW && sqlite3_stricmp((const char *)sqlite3_column_text(stmt, 0), "delete") == 0;
    int status = GT_OK;
    if (!done)
        status = rc == SQLITE_ROW || rc == SQLITE_DONE
                     ? gt_error_set(GT_ERR_IO, "%s: cannot leave WAL mode (the trace is complete, in two files)", w->path)
                     : sql_error(w, rc, "leave WAL mode");
    sqlite3_finalize(stmt);
    return status;
}

int gt_writer_close(gt_writer *w)
{
    if (!w)
        return gt_error_set(GT_ERR_INVALID, "gt_writer_close: no writer");
    int status;
    if (w->in_batch) {
        status = commit_txn(w);
    } else {
        /* strings interned since the last commit */
        bool own;
        status = desc_begin(w, &own);
        status = desc_end(w, own, status);
    }
    /* GT_ERR_INVALID: committed without some kernels; the rest is whole */
    if (status == GT_OK || status == GT_ERR_INVALID) {
        int indexed = finish_trace(w);
        if (status == GT_OK)
            status = indexed;
    }
    char first[1024];
    snprintf(first, sizeof first, "%s", gt_error_last());
    /* also after a failure: what was committed moves into the one file */
    int single = to_single_file(w);
    if (status == GT_OK)
        status = single;
    else
        gt_error_set(status, "%s", first);
    gt_writer_free(w);
    return status;
}

void gt_writer_free(gt_writer *w)
{
    if (!w)
        return;
    for (int i = 0; i < N_STMTS; i++)
        sqlite3_finalize(w->stmts[i]);
    for (int t = 0; t < N_TABLES; t++) {
        sqlite3_finalize(w->rows[t].one);
        sqlite3_finalize(w->rows[t].bulk);
    }
    if (w->db) {
        if (!sqlite3_get_autocommit(w->db))
            sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(w->db);
    }
    while (w->chunks) {
        chunk *next = w->chunks->next;
        sqlite3_free(w->chunks);
        w->chunks = next;
    }
    dict_free(&w->strings);
    dict_free(&w->launches);
    sqlite3_free(w->string_of);
    sqlite3_free(w->row_memory);
    sqlite3_free(w->launch_of);
    sqlite3_free(w->path);
    sqlite3_free(w);
}
