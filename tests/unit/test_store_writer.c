/* test_store_writer.c: the trace writer, checked from the outside with plain
 * SQLite: the schema against real nsys exports, every event kind in its
 * table, interning and kernel deduplication, files a killed program leaves,
 * and failures injected into it: allocation failure (SQLite's allocator is
 * replaced in this process; the writer allocates through it) and a full
 * disk (a VFS shim that refuses writes past a budget). */
#include "config.h"

#include "gt_store.h"
#include "gt_test.h"
#include "schema.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- failing allocator ------------------------------------------------------ */

static sqlite3_mem_methods real_mem;
static long alloc_countdown = -1; /* allocations left before failing; -1: never fail */
static long n_allocs;             /* counted while alloc_countdown >= -1 */

static bool alloc_fails(void)
{
    n_allocs++;
    if (alloc_countdown < 0)
        return false;
    if (alloc_countdown == 0)
        return true; /* and every later one, until disarmed */
    alloc_countdown--;
    return false;
}
static void *failing_malloc(int n)
{
    return alloc_fails() ? NULL : real_mem.xMalloc(n);
}
static void *failing_realloc(void *p, int n)
{
    return alloc_fails() ? NULL : real_mem.xRealloc(p, n);
}

/* ---- a disk that fills up ---------------------------------------------------- */

static sqlite3_vfs *real_vfs;
static sqlite3_vfs full_vfs;
static sqlite3_int64 write_budget = -1; /* bytes that may still be written; -1: no limit */

typedef struct full_file {
    sqlite3_file base;
    sqlite3_file *real; /* just after this struct */
} full_file;

#define REAL(f) (((full_file *)(f))->real)
static int ff_close(sqlite3_file *f) { return REAL(f)->pMethods->xClose(REAL(f)); }
static int ff_read(sqlite3_file *f, void *p, int n, sqlite3_int64 off) { return REAL(f)->pMethods->xRead(REAL(f), p, n, off); }
static int ff_write(sqlite3_file *f, const void *p, int n, sqlite3_int64 off)
{
    if (write_budget >= 0) {
        if (n > write_budget) {
            write_budget = 0;
            return SQLITE_FULL;
        }
        write_budget -= n;
    }
    return REAL(f)->pMethods->xWrite(REAL(f), p, n, off);
}
static int ff_truncate(sqlite3_file *f, sqlite3_int64 size) { return REAL(f)->pMethods->xTruncate(REAL(f), size); }
static int ff_sync(sqlite3_file *f, int flags) { return REAL(f)->pMethods->xSync(REAL(f), flags); }
static int ff_file_size(sqlite3_file *f, sqlite3_int64 *size) { return REAL(f)->pMethods->xFileSize(REAL(f), size); }
static int ff_lock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xLock(REAL(f), l); }
static int ff_unlock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xUnlock(REAL(f), l); }
static int ff_check_lock(sqlite3_file *f, int *out) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out); }
static int ff_control(sqlite3_file *f, int op, void *arg) { return REAL(f)->pMethods->xFileControl(REAL(f), op, arg); }
static int ff_sector(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int ff_device(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int ff_shm_map(sqlite3_file *f, int i, int n, int ext, void volatile **p) { return REAL(f)->pMethods->xShmMap(REAL(f), i, n, ext, p); }
static int ff_shm_lock(sqlite3_file *f, int off, int n, int flags) { return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags); }
static void ff_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int ff_shm_unmap(sqlite3_file *f, int del) { return REAL(f)->pMethods->xShmUnmap(REAL(f), del); }
/* no memory-mapped I/O: every write goes through ff_write */
static int ff_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **p) { *p = NULL; return SQLITE_OK; }
static int ff_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p) { return SQLITE_OK; }

static const sqlite3_io_methods full_io = {
    3, ff_close, ff_read, ff_write, ff_truncate, ff_sync, ff_file_size, ff_lock, ff_unlock,
    ff_check_lock, ff_control, ff_sector, ff_device, ff_shm_map, ff_shm_lock, ff_shm_barrier,
    ff_shm_unmap, ff_fetch, ff_unfetch,
};

static int ff_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags)
{
    full_file *ff = (full_file *)f;
    ff->real = (sqlite3_file *)(ff + 1);
    int rc = real_vfs->xOpen(real_vfs, name, ff->real, flags, out_flags);
    ff->base.pMethods = rc == SQLITE_OK ? &full_io : NULL;
    return rc;
}

/* ---- helpers ------------------------------------------------------------------ */

static char *fresh_path(const char *name)
{
    char *path = gt_test_path(name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    const char *suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < 4; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s%s", path, suffixes[i]);
        unlink(p);
    }
    return path;
}

static sqlite3 *open_ro(const char *path)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
    CU_ASSERT_EQUAL(rc, SQLITE_OK);
    if (rc != SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

/* First column of the first row; -1 when the query fails. */
static int64_t query_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *stmt = NULL;
    int64_t v = -1;
    if (db && sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW)
        v = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return v;
}

/* First column of the first row, in buf; "" when absent or NULL. */
static const char *query_text(sqlite3 *db, const char *sql, char *buf, size_t n_bytes)
{
    sqlite3_stmt *stmt = NULL;
    buf[0] = '\0';
    if (db && sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW &&
        sqlite3_column_text(stmt, 0))
        snprintf(buf, n_bytes, "%s", (const char *)sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    return buf;
}

static bool integrity_ok(sqlite3 *db)
{
    char buf[256];
    return strcmp(query_text(db, "PRAGMA integrity_check", buf, sizeof buf), "ok") == 0;
}

static gt_writer *open_writer(const char *path)
{
    gt_writer *w = NULL;
    int st = gt_writer_open(&w, path, 0);
    CU_ASSERT_EQUAL(st, GT_OK);
    if (st != GT_OK)
        fprintf(stderr, "open: %s\n", gt_error_last());
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    return w;
}

static gt_string_id intern(gt_writer *w, const char *s)
{
    gt_string_id id = 0;
    CU_ASSERT_EQUAL(gt_writer_intern(w, s, &id), GT_OK);
    return id;
}

static gt_event kernel_event(int64_t start, gt_string_id name, int grid_x)
{
    gt_event ev = {.kind = GT_EV_KERNEL};
    gt_kernel *k = &ev.u.kernel;
    k->start_ns = start;
    k->end_ns = start + 1500;
    k->global_pid = gt_global_pid(4242);
    k->device_id = 0;
    k->context_id = 1;
    k->stream_id = 7;
    k->correlation_id = start / 10;
    k->demangled_name = k->short_name = name;
    k->grid_x = grid_x;
    k->grid_y = k->grid_z = 1;
    k->block_x = 256;
    k->block_y = k->block_z = 1;
    k->registers_per_thread = 32;
    k->grid_id = start / 10;
    k->launch_type = 1;
    return ev;
}

typedef struct mix {
    int64_t n_kernels, n_api, n_nvtx, n_memcpy, n_gpu_memory;
} mix;

/* A batch shaped like a training step: per launch an API call and a kernel,
 * an NVTX range per 8 launches, a copy per 32, an allocation with its stack
 * per 64. Names depend on `seed`, so each batch interns new strings and new
 * launch configurations. Stops at the first failure and returns it. */
static int write_batch(gt_writer *w, int n_launches, unsigned seed, int64_t *t_ns, mix *m)
{
    int st = gt_writer_begin(w);
    for (int i = 0; i < n_launches && st == GT_OK; i++) {
        char name[64];
        snprintf(name, sizeof name, "kernel_%u_%d", seed, i % 40);
        gt_string_id kname = 0, api = 0;
        st = gt_writer_intern(w, name, &kname);
        if (st == GT_OK)
            st = gt_writer_intern(w, "cudaLaunchKernel_v7000", &api);
        int64_t t = *t_ns += 2000;
        gt_event ev = {.kind = GT_EV_API};
        ev.u.api = (gt_api_call){.start_ns = t - 900, .end_ns = t - 100, .global_tid = gt_global_tid(4242, 4243),
                                 .correlation_id = t / 10, .name = api};
        if (st == GT_OK && (st = gt_writer_add(w, &ev)) == GT_OK)
            m->n_api++;
        ev = kernel_event(t, kname, 1 + i % 13);
        if (st == GT_OK && (st = gt_writer_add(w, &ev)) == GT_OK)
            m->n_kernels++;
        if (st == GT_OK && i % 8 == 0) {
            gt_string_id text = 0;
            snprintf(name, sizeof name, "step %u.%d", seed, i);
            st = gt_writer_intern(w, name, &text);
            ev = (gt_event){.kind = GT_EV_NVTX};
            ev.u.nvtx = (gt_nvtx){.start_ns = t - 1000, .end_ns = t + 1000, .event_type = GT_NVTX_PUSHPOP,
                                  .text = text, .global_tid = gt_global_tid(4242, 4243)};
            if (st == GT_OK && (st = gt_writer_add(w, &ev)) == GT_OK)
                m->n_nvtx++;
        }
        if (st == GT_OK && i % 32 == 0) {
            ev = (gt_event){.kind = GT_EV_MEMCPY};
            ev.u.memcpy = (gt_memcpy){.start_ns = t + 10, .end_ns = t + 500, .global_pid = gt_global_pid(4242),
                                      .bytes = 4096, .copy_kind = GT_COPY_HTOD, .dst_kind = GT_MEM_DEVICE};
            if ((st = gt_writer_add(w, &ev)) == GT_OK)
                m->n_memcpy++;
        }
        if (st == GT_OK && i % 64 == 0) {
            gt_string_id sym = 0;
            snprintf(name, sizeof name, "alloc_site_%u_%d", seed, i);
            st = gt_writer_intern(w, name, &sym);
            gt_frame frames[2] = {{.symbol = sym, .module = api}, {.symbol = api, .module = api}};
            int64_t chain = (int64_t)seed * 1000000 + i + 1;
            if (st == GT_OK)
                st = gt_writer_add_callchain(w, chain, frames, 2);
            ev = (gt_event){.kind = GT_EV_GPU_MEMORY};
            ev.u.gpu_memory = (gt_gpu_memory){.start_ns = t, .global_pid = gt_global_pid(4242), .address = 0x7f0000 + i,
                                              .bytes = 1 << 20, .mem_kind = GT_MEM_DEVICE, .callchain_id = chain};
            if (st == GT_OK && (st = gt_writer_add(w, &ev)) == GT_OK)
                m->n_gpu_memory++;
        }
    }
    if (st == GT_OK)
        st = gt_writer_commit(w);
    return st;
}

/* Rows of `table`; 0 for a table a closed trace leaves out (nothing went in). */
static int64_t count_rows(sqlite3 *db, const char *table, const char *where)
{
    char q[512];
    snprintf(q, sizeof q, "SELECT count(*) FROM sqlite_master WHERE name = '%s'", table);
    if (query_int(db, q) == 0)
        return 0;
    snprintf(q, sizeof q, "SELECT count(*) FROM %s%s%s", table, where ? " WHERE " : "", where ? where : "");
    return query_int(db, q);
}

/* The file holds exactly `m`, and is sound. */
static void check_counts(const char *path, const mix *m)
{
    sqlite3 *db = open_ro(path);
    CU_ASSERT_TRUE(integrity_ok(db));
    CU_ASSERT_EQUAL(count_rows(db, "CUPTI_ACTIVITY_KIND_KERNEL", NULL), m->n_kernels);
    CU_ASSERT_EQUAL(count_rows(db, "CUPTI_ACTIVITY_KIND_RUNTIME", NULL), m->n_api);
    CU_ASSERT_EQUAL(count_rows(db, "NVTX_EVENTS", NULL), m->n_nvtx);
    CU_ASSERT_EQUAL(count_rows(db, "CUPTI_ACTIVITY_KIND_MEMCPY", NULL), m->n_memcpy);
    CU_ASSERT_EQUAL(count_rows(db, "CUDA_GPU_MEMORY_USAGE_EVENTS", NULL), m->n_gpu_memory);
    CU_ASSERT_EQUAL(count_rows(db, GT_TABLE_GPU_MEMORY_STACKS, NULL), m->n_gpu_memory);
    /* every name an event refers to is there */
    CU_ASSERT_EQUAL(count_rows(db, "CUPTI_ACTIVITY_KIND_KERNEL", "shortName NOT IN (SELECT id FROM StringIds)"), 0);
    /* an NVTX message is in text or (registered) in textId, never both */
    CU_ASSERT_EQUAL(count_rows(db, "NVTX_EVENTS", "textId NOT IN (SELECT id FROM StringIds)"
                                                  " OR (text IS NULL) = (textId IS NULL)"), 0);
    CU_ASSERT_EQUAL(count_rows(db, "CUDA_CALLCHAINS", "symbol NOT IN (SELECT id FROM StringIds)"), 0);
    sqlite3_close(db);
}

static void add_mix(mix *a, const mix *b)
{
    a->n_kernels += b->n_kernels;
    a->n_api += b->n_api;
    a->n_nvtx += b->n_nvtx;
    a->n_memcpy += b->n_memcpy;
    a->n_gpu_memory += b->n_gpu_memory;
}

static bool names_file(const char *path)
{
    return strstr(gt_error_last(), path) != NULL;
}

/* ---- schema ---------------------------------------------------------------------- */

typedef struct column_list {
    int n;
    char name[64][48], type[64][16];
} column_list;

static void columns_of(sqlite3 *db, const char *table, column_list *out)
{
    char sql[256];
    snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", table);
    sqlite3_stmt *stmt = NULL;
    out->n = 0;
    CU_ASSERT_EQUAL_FATAL(sqlite3_prepare_v2(db, sql, -1, &stmt, NULL), SQLITE_OK);
    while (sqlite3_step(stmt) == SQLITE_ROW && out->n < 64) {
        snprintf(out->name[out->n], 48, "%s", (const char *)sqlite3_column_text(stmt, 1));
        snprintf(out->type[out->n], 16, "%s", (const char *)sqlite3_column_text(stmt, 2));
        out->n++;
    }
    sqlite3_finalize(stmt);
}

static bool same_columns(const column_list *a, const column_list *b, bool types, const char *table)
{
    bool same = a->n == b->n;
    for (int i = 0; same && i < a->n; i++)
        same = strcmp(a->name[i], b->name[i]) == 0 && (!types || strcmp(a->type[i], b->type[i]) == 0);
    if (!same)
        fprintf(stderr, "\n%s: columns differ from nsys's\n", table);
    return same;
}

/* 2.9.1's columns with those 3.x added after the column `after`. */
static void columns_3x(sqlite3 *old, const char *table, const char *after, const char *const *added,
                       column_list *out)
{
    column_list c;
    columns_of(old, table, &c);
    out->n = 0;
    for (int i = 0; i < c.n; i++) {
        snprintf(out->name[out->n], 48, "%s", c.name[i]);
        snprintf(out->type[out->n], 16, "%s", c.type[i]);
        out->n++;
        if (after && strcmp(c.name[i], after) == 0)
            for (const char *const *a = added; *a; a++, out->n++) {
                snprintf(out->name[out->n], 48, "%s", *a);
                snprintf(out->type[out->n], 16, "INTEGER");
            }
    }
}

/* One event of every nsys kind (and a GPU), so that a closed trace has every
 * nsys table: closing leaves out the tables nothing went into. */
static void write_one_of_each(gt_writer *w)
{
    gt_string_id name = intern(w, "k"), api = intern(w, "cudaLaunchKernel_v7000"), msg = intern(w, "step");
    int64_t pid = gt_global_pid(4242), tid = gt_global_tid(4242, 4243);
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), GT_OK);
    gt_event ev = kernel_event(1000, name, 2);
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    ev = (gt_event){.kind = GT_EV_MEMCPY};
    ev.u.memcpy = (gt_memcpy){.start_ns = 10, .end_ns = 20, .global_pid = pid, .context_id = 1, .stream_id = 8,
                              .bytes = 64, .copy_kind = GT_COPY_HTOD};
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    ev = (gt_event){.kind = GT_EV_MEMSET};
    ev.u.memset = (gt_memset){.start_ns = 30, .end_ns = 40, .global_pid = pid, .context_id = 1, .stream_id = 7,
                              .bytes = 64};
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    ev = (gt_event){.kind = GT_EV_API};
    ev.u.api = (gt_api_call){.start_ns = 5, .end_ns = 9, .global_tid = tid, .correlation_id = 100, .name = api};
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    ev = (gt_event){.kind = GT_EV_SYNC};
    ev.u.sync = (gt_sync){.start_ns = 50, .end_ns = 60, .global_pid = pid, .context_id = 1, .stream_id = 7,
                          .sync_type = GT_SYNC_STREAM};
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    ev = (gt_event){.kind = GT_EV_NVTX};
    ev.u.nvtx = (gt_nvtx){.start_ns = 1, .end_ns = 2000, .event_type = GT_NVTX_PUSHPOP, .text = msg,
                          .global_tid = tid};
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    gt_frame frames[1] = {{.symbol = api, .module = api}};
    CU_ASSERT_EQUAL(gt_writer_add_callchain(w, 1, frames, 1), GT_OK);
    ev = (gt_event){.kind = GT_EV_GPU_MEMORY};
    ev.u.gpu_memory = (gt_gpu_memory){.start_ns = 70, .global_pid = pid, .address = 4096, .bytes = 4096,
                                      .mem_kind = GT_MEM_DEVICE, .callchain_id = 1};
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);
    gt_gpu_info gpu = {.id = 0, .name = "NVIDIA H100", .sm_count = 132, .compute_major = 9};
    CU_ASSERT_EQUAL(gt_writer_add_gpu(w, &gpu), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_add_thread_name(w, tid, "main", 0), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_add_process(w, 4242, "python"), GT_OK);
}

static void test_store_writer__schema_matches_nsys(void)
{
    char *path = fresh_path("schema.sqlite");
    gt_writer *w = open_writer(path);
    write_one_of_each(w);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);

    char *f3 = gt_test_fixture("nsys/cloverleaf-cuda-nsys2024.5.sqlite");
    char *f2 = gt_test_fixture("nsys/saxpy-mpi-cuda-nsys2022.2.sqlite");
    sqlite3 *ours = open_ro(path), *nsys3 = open_ro(f3), *nsys2 = open_ro(f2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ours);
    CU_ASSERT_PTR_NOT_NULL_FATAL(nsys3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(nsys2);

    static const char *const same_as_3x[] = {
        "StringIds", "ThreadNames", "PROCESSES", "TARGET_INFO_GPU", "TARGET_INFO_SESSION_START_TIME",
        "META_DATA_EXPORT", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_RUNTIME",
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_KERNEL", "TARGET_INFO_CUDA_CONTEXT_INFO",
        "TARGET_INFO_CUDA_STREAM", "TARGET_INFO_SYSTEM_ENV", "META_DATA_CAPTURE",
    };
    column_list a, b;
    for (size_t i = 0; i < sizeof same_as_3x / sizeof same_as_3x[0]; i++) {
        columns_of(ours, same_as_3x[i], &a);
        columns_of(nsys3, same_as_3x[i], &b);
        CU_ASSERT_TRUE(b.n > 0);
        CU_ASSERT_TRUE(same_columns(&a, &b, true, same_as_3x[i]));
    }
    /* every nsys-named object is a real table: readers list tables with
     * type = 'table', and a view is missed */
    CU_ASSERT_EQUAL(query_int(ours, "SELECT count(*) FROM sqlite_master WHERE type = 'view'"), 0);
    CU_ASSERT_EQUAL(query_int(ours, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                                    " AND name = 'CUPTI_ACTIVITY_KIND_KERNEL'"), 1);
    /* the view of the capture layout has nsys's 28 names in nsys's order too */
    columns_of(nsys3, "CUPTI_ACTIVITY_KIND_KERNEL", &b);
    CU_ASSERT_EQUAL(b.n, 28);

    /* tables the 3.13.2 export lacks: 2.9.1's, with what 3.x added */
    static const char *const memset_added[] = {"greenContextId", NULL};
    static const char *const gpu_memory_added[] = {
        "streamId", "localMemoryPoolAddress", "localMemoryPoolReleaseThreshold", "localMemoryPoolSize",
        "localMemoryPoolUtilizedSize", "importedMemoryPoolAddress", "importedMemoryPoolProcessId", NULL,
    };
    static const struct { const char *table, *after; const char *const *added; } derived[] = {
        {"CUPTI_ACTIVITY_KIND_MEMSET", "contextId", memset_added},
        {"CUDA_GPU_MEMORY_USAGE_EVENTS", "correlationId", gpu_memory_added},
        {"NVTX_EVENTS", NULL, NULL},
        {"CUDA_CALLCHAINS", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof derived / sizeof derived[0]; i++) {
        columns_of(ours, derived[i].table, &a);
        columns_3x(nsys2, derived[i].table, derived[i].after, derived[i].added, &b);
        CU_ASSERT_TRUE(b.n > 0);
        CU_ASSERT_TRUE(same_columns(&a, &b, true, derived[i].table));
    }
    sqlite3_close(ours);
    sqlite3_close(nsys3);
    sqlite3_close(nsys2);
    free(f3);
    free(f2);
    free(path);
}

/* Closing writes what nsys's export has and gtrace knows, and leaves out
 * the event tables nothing went into (as nsys does). */
static void test_store_writer__nsys_tables_when_closed(void)
{
    char *path = fresh_path("closed.sqlite");
    gt_writer *w = open_writer(path);
    write_one_of_each(w);
    gt_string_id reg = intern(w, "registered"), plain = intern(w, "plain");
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), GT_OK);
    gt_event ev = {.kind = GT_EV_NVTX};
    ev.u.nvtx = (gt_nvtx){.start_ns = 3, .end_ns = -1, .event_type = GT_NVTX_MARK, .text = reg,
                          .text_registered = true, .global_tid = gt_global_tid(4242, 4243)};
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    ev.u.nvtx.text = plain;
    ev.u.nvtx.text_registered = false;
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    ev.u.nvtx.text = reg + 1000; /* no such string */
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_ERR_INVALID);
    CU_ASSERT_TRUE(names_file(path));
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);

    sqlite3 *db = open_ro(path);
    char buf[256], host[256] = "";
    /* NVTX: a registered string by textId, any other message in text */
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId"
                                  " WHERE s.value = 'registered' AND n.text IS NULL"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'plain' AND textId IS NULL"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'step' AND textId IS NULL"), 1);
    /* contexts and streams of the GPU activity */
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM TARGET_INFO_CUDA_CONTEXT_INFO WHERE processId = 4242"
                                  " AND deviceId = 0 AND contextId = 1 AND vmId = 1"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM TARGET_INFO_CUDA_CONTEXT_INFO"), 1); /* one, however many events */
    CU_ASSERT_STRING_EQUAL(query_text(db, "SELECT group_concat(streamId) FROM (SELECT DISTINCT streamId FROM"
                                          " TARGET_INFO_CUDA_STREAM WHERE processId = 4242 ORDER BY streamId)",
                                      buf, sizeof buf), "7,8");
    /* the machine, and what was collected */
    gethostname(host, sizeof host - 1);
    CU_ASSERT_STRING_EQUAL(query_text(db, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'"
                                          " AND nameEnum = 619", buf, sizeof buf), host);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM META_DATA_CAPTURE WHERE name = 'CAPTURE_EVENT_TYPE'"
                                  " AND value IN ('Cuda', 'NvtxEvents')"), 2);
    CU_ASSERT_EQUAL(query_int(db, "PRAGMA freelist_count"), 0);
    sqlite3_close(db);

    /* nothing collected: no event tables, no GPU description tables; the
     * string, process and enum tables stay */
    unlink(path);
    w = open_writer(path);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
    db = open_ro(path);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'CUPTI_%' OR name LIKE 'NVTX%'"
                                  " OR name LIKE 'CUDA_%' OR name LIKE 'GTRACE_KERNEL%' OR name LIKE 'TARGET_INFO_CUDA%'"
                                  " OR name = 'META_DATA_CAPTURE' OR type = 'view'"), 0);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('StringIds',"
                                  " 'PROCESSES', 'ThreadNames', 'META_DATA_EXPORT', 'ENUM_CUDA_MEMCPY_OPER')"), 5);
    /* gtrace's own tables stay: an empty GTRACE_DROPPED_EVENTS says nothing was lost */
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM " GT_TABLE_DROPPED_EVENTS), 0);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM " GT_TABLE_CPU_OPS), 0);
    CU_ASSERT_TRUE(integrity_ok(db));
    sqlite3_close(db);
    free(path);
}

static void test_store_writer__enums_match_nsys(void)
{
    char *path = fresh_path("enums.sqlite");
    gt_writer *w = open_writer(path);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
    char *f3 = gt_test_fixture("nsys/cloverleaf-cuda-nsys2024.5.sqlite");
    sqlite3 *db = open_ro(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(db);
    char *sql = sqlite3_mprintf("ATTACH %Q AS nsys", f3);
    CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_free(sql);

    /* every ENUM_* table our tables reference, each row as nsys has it */
    static const char *const enums[] = {
        "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND", "ENUM_CUPTI_SYNC_TYPE", "ENUM_CUDA_DEV_MEM_EVENT_OPER",
        "ENUM_CUDA_KERNEL_LAUNCH_TYPE", "ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG", "ENUM_CUDA_FUNC_CACHE_CONFIG",
        "ENUM_CUPTI_STREAM_TYPE", "ENUM_STACK_UNWIND_METHOD", "ENUM_CUDA_MEMPOOL_TYPE", "ENUM_CUDA_MEMPOOL_OPER",
        "ENUM_CUDA_UNIF_MEM_MIGRATION", "ENUM_NSYS_EVENT_CLASS", "ENUM_NSYS_EVENT_TYPE",
    };
    for (size_t i = 0; i < sizeof enums / sizeof enums[0]; i++) {
        char q[512];
        snprintf(q, sizeof q, "SELECT count(*) FROM main.%s", enums[i]);
        int64_t n = query_int(db, q);
        snprintf(q, sizeof q, "SELECT count(*) FROM nsys.%s", enums[i]);
        CU_ASSERT_TRUE(n > 0);
        CU_ASSERT_EQUAL(n, query_int(db, q));
        /* rows in one and not the other */
        snprintf(q, sizeof q, "SELECT count(*) FROM (SELECT id, name, label FROM main.%s EXCEPT"
                              " SELECT id, name, label FROM nsys.%s)", enums[i], enums[i]);
        CU_ASSERT_EQUAL(query_int(db, q), 0);
    }
    /* the values gt_store.h names are nsys's */
    CU_ASSERT_EQUAL(query_int(db, "SELECT id FROM ENUM_CUDA_MEM_KIND WHERE name = 'CUDA_MEMOPR_MEMORY_KIND_PINNED'"), GT_MEM_PINNED);
    CU_ASSERT_EQUAL(query_int(db, "SELECT id FROM ENUM_NSYS_EVENT_TYPE WHERE name = 'NvtxPushPopRange'"), GT_NVTX_PUSHPOP);
    CU_ASSERT_EQUAL(query_int(db, "SELECT id FROM ENUM_NSYS_EVENT_CLASS WHERE label = 'CUDA driver'"), GT_API_DRIVER);
    CU_ASSERT_EQUAL(query_int(db, "SELECT id FROM ENUM_CUPTI_SYNC_TYPE WHERE label = 'Stream sync'"), GT_SYNC_STREAM);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM GTRACE_ENUM_MEMORY_OPER"), GT_REGION_NAME + 1);
    sqlite3_close(db);
    free(f3);
    free(path);
}

static void test_store_writer__metadata_and_indexes(void)
{
    char *path = fresh_path("meta.sqlite");
    gt_writer *w = open_writer(path);
    int64_t t = 1000;
    mix m = {0};
    CU_ASSERT_EQUAL(write_batch(w, 100, 1, &t, &m), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);

    sqlite3 *db = open_ro(path);
    char buf[64];
#define META(name) query_text(db, "SELECT value FROM META_DATA_EXPORT WHERE name = '" name "'", buf, sizeof buf)
    CU_ASSERT_STRING_EQUAL(META("EXPORT_PRODUCT_NAME"), "gtrace");
    CU_ASSERT_STRING_EQUAL(META("EXPORT_PRODUCT_VERSION"), PACKAGE_VERSION);
    CU_ASSERT_STRING_EQUAL(META("EXPORT_SCHEMA_VERSION"), "3.13.2");
    CU_ASSERT_STRING_EQUAL(META("EXPORT_SCHEMA_VERSION_MAJOR"), "3");
    CU_ASSERT_STRING_EQUAL(META("EXPORT_SCHEMA_VERSION_MINOR"), "13");
    CU_ASSERT_STRING_EQUAL(META("EXPORT_SCHEMA_VERSION_MICRO"), "2");
    CU_ASSERT_EQUAL(atoi(META("GTRACE_SCHEMA_VERSION")), GT_SCHEMA_VERSION);
#undef META
    /* one rollback-journal file, like an nsys export */
    CU_ASSERT_STRING_EQUAL(query_text(db, "PRAGMA journal_mode", buf, sizeof buf), "delete");
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", path);
    CU_ASSERT_NOT_EQUAL(access(wal, F_OK), 0);
    /* time indexes on the tables not in start order; the others (kernels
     * always) are listed as time ordered, and a time range is a rowid range */
    char obuf[512], list[520];
    const char *ordered = query_text(db, "SELECT value FROM META_DATA_EXPORT WHERE name = 'GTRACE_TIME_ORDERED'", obuf,
                                     sizeof obuf);
    CU_ASSERT_PTR_NOT_NULL(strstr(ordered, "CUPTI_ACTIVITY_KIND_KERNEL"));
    snprintf(list, sizeof list, " %s ", ordered);
    for (size_t i = 0; i < gt_schema_n_indexes; i++) {
        char *q = sqlite3_mprintf("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = %Q",
                                  gt_schema_indexes[i].table);
        char *tq = sqlite3_mprintf("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = %Q",
                                  gt_schema_indexes[i].table);
        char *name = sqlite3_mprintf(" %s ", gt_schema_indexes[i].table);
        bool in_order = strstr(list, name) != NULL;
        CU_ASSERT_EQUAL(query_int(db, q), gt_schema_indexes[i].nsys_only || in_order ? 0 : query_int(db, tq));
        sqlite3_free(name);
        sqlite3_free(q);
        sqlite3_free(tq);
    }
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
                                  " AND tbl_name = 'CUPTI_ACTIVITY_KIND_KERNEL'"), 0);
    sqlite3_close(db);
    free(path);
}

/* ---- events -------------------------------------------------------------------------- */

static void test_store_writer__every_kind_in_its_table(void)
{
    char *path = fresh_path("kinds.sqlite");
    gt_writer *w = open_writer(path);
    gt_string_id name = intern(w, "cudaMemcpyAsync_v3020"), op = intern(w, "matmul"), msg = intern(w, "forward");
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), GT_OK);
    int64_t pid = gt_global_pid(77), tid = gt_global_tid(77, 78);
    gt_event evs[12];
    memset(evs, 0, sizeof evs);
    evs[0].kind = GT_EV_MEMCPY;
    evs[0].u.memcpy = (gt_memcpy){10, 20, pid, 1, 2, 3, 44, 4096, GT_COPY_DTOH, GT_MEM_DEVICE, GT_MEM_PINNED, 1, 5};
    evs[1].kind = GT_EV_MEMSET;
    evs[1].u.memset = (gt_memset){30, 40, pid, 1, 2, 3, 45, 0xab, 512, GT_MEM_DEVICE};
    evs[2].kind = GT_EV_API;
    evs[2].u.api = (gt_api_call){5, 9, tid, 44, name, GT_API_RUNTIME, 2, 0};
    evs[3].kind = GT_EV_SYNC;
    evs[3].u.sync = (gt_sync){50, 60, pid, 1, 2, 3, 46, GT_SYNC_STREAM, 4294967295};
    evs[4].kind = GT_EV_NVTX; /* a range with a double payload and a color */
    evs[4].u.nvtx = (gt_nvtx){.start_ns = 1, .end_ns = 100, .event_type = GT_NVTX_PUSHPOP, .has_color = true,
                              .color = 0xff00ff00u, .text = msg, .global_tid = tid, .domain_id = 0,
                              .payload_kind = GT_PAYLOAD_DOUBLE, .payload.f64 = 2.5};
    evs[5].kind = GT_EV_NVTX; /* a mark: no end, no color, no payload */
    evs[5].u.nvtx = (gt_nvtx){.start_ns = 7, .end_ns = -1, .event_type = GT_NVTX_MARK, .text = msg, .global_tid = tid,
                              .domain_id = 3};
    evs[6].kind = GT_EV_GPU_MEMORY;
    evs[6].u.gpu_memory = (gt_gpu_memory){70, pid, 1, 2, 0xdead0000u, 0x400123u, 1 << 20, GT_MEM_DEVICE,
                                          GT_DEVMEM_ALLOC, 47, 3, 900};
    evs[7].kind = GT_EV_GPU_MEMORY; /* no stack */
    evs[7].u.gpu_memory = (gt_gpu_memory){80, pid, 1, 2, 0xdead0000u, 0, 1 << 20, GT_MEM_DEVICE, GT_DEVMEM_FREE, 48, 3, 0};
    evs[8].kind = GT_EV_HEAP;
    evs[8].u.heap = (gt_heap_event){90, tid, GT_REGION_REGISTER, 0x5000, 0xbeef000, 256, 0, 2, 0, 9, 0};
    evs[9].kind = GT_EV_CPU_OP;
    evs[9].u.cpu_op = (gt_cpu_op){100, 200, tid, op, 1, 1000000, 4096};
    evs[10] = kernel_event(300, op, 4);
    evs[10].u.kernel.mangled_name = msg;
    evs[10].u.kernel.graph_node_id = 12;
    evs[11].kind = GT_EV_NVTX; /* a float payload */
    evs[11].u.nvtx = (gt_nvtx){.start_ns = 8, .end_ns = 9, .event_type = GT_NVTX_STARTEND, .range_id = 5,
                               .text = msg, .global_tid = tid, .payload_kind = GT_PAYLOAD_FLOAT, .payload.f32 = 0.5f};
    for (int i = 0; i < 12; i++)
        CU_ASSERT_EQUAL(gt_writer_add(w, &evs[i]), GT_OK);
    gt_frame frames[] = {{name, op, false, 0x400123}, {op, op, true, 0x400200}};
    CU_ASSERT_EQUAL(gt_writer_add_callchain(w, 900, frames, 2), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_add_callchain(w, 900, frames, 2), GT_ERR_INVALID); /* ids are unique */
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);                                /* and the batch survived that */
    CU_ASSERT_EQUAL(gt_writer_count(w, GT_EV_NVTX), 3);
    CU_ASSERT_EQUAL(gt_writer_count(w, GT_EV_GPU_MEMORY), 2);

    /* descriptions, outside a batch */
    CU_ASSERT_EQUAL(gt_writer_add_process(w, 77, "python"), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_add_thread_name(w, tid, "dataloader", 5), GT_OK);
    gt_gpu_info gpu = {.id = 0, .name = "NVIDIA H100", .bus_location = "0000:c1:00.0", .uuid = "u-1",
                       .chip_name = "GH100", .total_memory_bytes = 80LL << 30, .sm_count = 132,
                       .compute_major = 9, .compute_minor = 0, .threads_per_warp = 32};
    CU_ASSERT_EQUAL(gt_writer_add_gpu(w, &gpu), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_add_config(w, 0, "argv", "train --steps 10"), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_add_dropped(w, pid, GT_EV_NVTX, 5), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_add_dropped(w, pid, GT_EV_NVTX, 2), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_set_session_start(w, 1696392839587175550LL), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_set_session_start(w, 1687813257637297504LL), GT_OK); /* the last one counts */
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);

    sqlite3 *db = open_ro(path);
    char buf[128];
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE start = 10 AND end = 20"
                                  " AND deviceId = 1 AND contextId = 2 AND streamId = 3 AND correlationId = 44"
                                  " AND globalPid = (77 << 24) | (1 << 48) AND bytes = 4096 AND copyKind = 2 AND srcKind = 2"
                                  " AND dstKind = 1 AND srcDeviceId = 1 AND dstDeviceId = 5 AND greenContextId IS NULL"),
                    1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE start = 30 AND value = 171"
                                  " AND bytes = 512 AND memKind = 2 AND correlationId = 45"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId"
                                  " WHERE s.value = 'cudaMemcpyAsync_v3020' AND r.returnValue = 2 AND r.eventClass = 0"
                                  " AND r.callchainId IS NULL AND r.globalTid = ((77 << 24) | 78 | (1 << 48))"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType = 3"
                                  " AND eventId = 4294967295"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE start = 1 AND end = 100 AND eventType = 59"
                                  " AND color = 4278255360 AND doubleValue = 2.5 AND uint64Value IS NULL"
                                  " AND rangeId IS NULL AND endGlobalTid IS NULL"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE start = 7 AND end IS NULL AND color IS NULL"
                                  " AND domainId = 3 AND doubleValue IS NULL AND floatValue IS NULL"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE rangeId = 5 AND floatValue = 0.5"
                                  " AND typeof(floatValue) = 'real'"), 1);
    /* a message that is no registered string is in text, as nsys stores it */
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'forward' AND textId IS NULL"), 3);
    /* the stack of the allocation, through its rowid */
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS e JOIN " GT_TABLE_GPU_MEMORY_STACKS
                                  " s ON s.eventId = e.rowid WHERE e.start = 70 AND s.callchainId = 900"
                                  " AND e.address = 3735879680 AND e.pc = 4194595 AND e.memoryOperationType = 0"
                                  " AND e.streamId = 3 AND e.correlationId = 47"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM " GT_TABLE_GPU_MEMORY_STACKS), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUDA_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol"
                                  " WHERE c.id = 900 AND c.stackDepth = 0 AND s.value = 'cudaMemcpyAsync_v3020'"
                                  " AND c.originalIP = 4194595 AND c.unresolved = 0"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUDA_CALLCHAINS WHERE id = 900"), 2);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM " GT_TABLE_MEMORY_EVENTS " WHERE operation = 3 AND heapId = 20480"
                                  " AND address = 200208384 AND bytes = 256 AND memoryType = 2 AND nameId IS NULL"
                                  " AND domainId = 9"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM " GT_TABLE_CPU_OPS " WHERE start = 100 AND end = 200"
                                  " AND flops = 1000000 AND bytes = 4096 AND streamId = 1"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start = 300 AND end = 1800"
                                  " AND gridX = 4 AND blockX = 256 AND graphNodeId = 12 AND launchType = 1"
                                  " AND greenContextId IS NULL AND mangledName IS NOT NULL"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM PROCESSES WHERE pid = 77 AND name = 'python'"
                                  " AND globalPid = (77 << 24) | (1 << 48)"), 1);
    CU_ASSERT_STRING_EQUAL(query_text(db, "SELECT s.value FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId",
                                      buf, sizeof buf), "dataloader");
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM TARGET_INFO_GPU WHERE name = 'NVIDIA H100' AND smCount = 132"
                                  " AND computeMajor = 9 AND vmId = 1 << 48 AND cuDevice = 0"), 1);
    CU_ASSERT_STRING_EQUAL(query_text(db, "SELECT value FROM " GT_TABLE_RUN_CONFIG " WHERE globalPid = 0 AND key = 'argv'",
                                      buf, sizeof buf), "train --steps 10");
    CU_ASSERT_EQUAL(query_int(db, "SELECT count FROM " GT_TABLE_DROPPED_EVENTS " WHERE kind = 'nvtx'"), 7);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM TARGET_INFO_SESSION_START_TIME"), 1);
    CU_ASSERT_STRING_EQUAL(query_text(db, "SELECT utcTime FROM TARGET_INFO_SESSION_START_TIME", buf, sizeof buf),
                           "2023-06-26T21:00:57"); /* as nsys wrote it in the 2022.2 fixture */
    sqlite3_close(db);
    free(path);
}

static void test_store_writer__interning(void)
{
    char *path = fresh_path("strings.sqlite");
    gt_writer *w = open_writer(path);
    /* outside a batch; ids from 1 */
    gt_string_id a = intern(w, "ampere_sgemm_128x64_tn"), b = intern(w, ""), a2 = intern(w, "ampere_sgemm_128x64_tn");
    CU_ASSERT_EQUAL(a, 1);
    CU_ASSERT_EQUAL(b, 2);
    CU_ASSERT_EQUAL(a2, a);
    /* enough strings to grow the table many times; each keeps its id */
    enum { N = 20000 };
    gt_string_id *ids = malloc(N * sizeof *ids);
    char s[64];
    for (int i = 0; i < N; i++) {
        snprintf(s, sizeof s, "void kernel<%d>(float*)", i);
        ids[i] = intern(w, s);
        CU_ASSERT_EQUAL(ids[i], 3 + i);
    }
    CU_ASSERT_EQUAL(gt_writer_begin(w), GT_OK);
    for (int i = 0; i < N; i += 7) {
        snprintf(s, sizeof s, "void kernel<%d>(float*)", i);
        CU_ASSERT_EQUAL(intern(w, s), ids[i]);
    }
    gt_string_id c = intern(w, "in a batch");
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);
    gt_string_id d = intern(w, "after the last commit"); /* written by close */
    CU_ASSERT_EQUAL(gt_writer_intern(w, NULL, &c), GT_ERR_INVALID);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);

    sqlite3 *db = open_ro(path);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM StringIds"), N + 4);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(DISTINCT value) FROM StringIds"), N + 4);
    CU_ASSERT_EQUAL(query_int(db, "SELECT id FROM StringIds WHERE value = 'void kernel<12345>(float*)'"), ids[12345]);
    CU_ASSERT_EQUAL(query_int(db, "SELECT id FROM StringIds WHERE value = ''"), b);
    CU_ASSERT_EQUAL(query_int(db, "SELECT id FROM StringIds WHERE value = 'in a batch'"), c);
    CU_ASSERT_EQUAL(query_int(db, "SELECT id FROM StringIds WHERE value = 'after the last commit'"), d);
    sqlite3_close(db);
    free(ids);
    free(path);
}

static void test_store_writer__kernel_launches_deduplicated(void)
{
    char *path = fresh_path("dedupe.sqlite");
    gt_writer *w = open_writer(path);
    gt_string_id names[3] = {intern(w, "gemm"), intern(w, "softmax"), intern(w, "layernorm")};
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), GT_OK);
    enum { N = 3000 };
    for (int i = 0; i < N; i++) {
        /* four configurations: gemm at two grid sizes, softmax, layernorm */
        gt_event ev = kernel_event(1000 + 10 * (int64_t)i, names[i % 3], i % 3 == 0 ? 1 + (i / 3) % 2 : 8);
        CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
        if (i == N / 2) { /* and across batches */
            CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);
            CU_ASSERT_EQUAL(gt_writer_begin(w), GT_OK);
        }
    }
    gt_event other_pid = kernel_event(50, names[1], 8);
    other_pid.u.kernel.global_pid = gt_global_pid(999);
    CU_ASSERT_EQUAL(gt_writer_add(w, &other_pid), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_count(w, GT_EV_KERNEL), N + 1);
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);
    /* while written: each configuration once, kernels stored on start (a range of ids is a range of starts) */
    sqlite3 *db = open_ro(path);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM " GT_TABLE_KERNEL_LAUNCHES), 5);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM " GT_TABLE_KERNELS " WHERE id >= 2000 << 8 AND id < 3000 << 8"), 100);
    sqlite3_close(db);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);

    /* closed: nsys's kernel table alone, its rows in start order */
    db = open_ro(path);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'GTRACE_KERNEL%'"), 0);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL a JOIN CUPTI_ACTIVITY_KIND_KERNEL b"
                                  " ON b.rowid = a.rowid + 1 WHERE b.start < a.start"), 0);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM META_DATA_EXPORT WHERE name = 'GTRACE_TIME_ORDERED'"
                                  " AND ' ' || value || ' ' LIKE '% CUPTI_ACTIVITY_KIND_KERNEL %'"), 1);
    CU_ASSERT_EQUAL(query_int(db, "PRAGMA freelist_count"), 0); /* the compact tables' pages were given back */
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), N + 1);
    /* every kernel comes back from the view with what was added */
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName"
                                  " WHERE (start - 1000) % 10 = 0 AND end = start + 1500 AND correlationId = start / 10"
                                  " AND gridId = start / 10 AND streamId = 7 AND blockX = 256 AND registersPerThread = 32"
                                  " AND globalPid = (4242 << 24) | (1 << 48) AND graphNodeId IS NULL AND mangledName IS NULL"
                                  " AND s.value = CASE ((start - 1000) / 10) % 3 WHEN 0 THEN 'gemm' WHEN 1 THEN 'softmax'"
                                  " ELSE 'layernorm' END"), N);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid = (999 << 24) | (1 << 48)"), 1);
    sqlite3_close(db);
    free(path);
}

static void test_store_writer__same_nanosecond_kernels(void)
{
    char *path = fresh_path("samens.sqlite");
    gt_writer *w = open_writer(path);
    gt_string_id name = intern(w, "k");
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), GT_OK);
    /* 40 at t=500 in one batch: inside one multi-row insert and across two */
    for (int i = 0; i < 40; i++) {
        gt_event ev = kernel_event(500, name, 1 + i);
        CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    }
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);
    /* 3 more at t=500 in a later batch, and one at a negative time */
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), GT_OK);
    for (int i = 0; i < 3; i++) {
        gt_event ev = kernel_event(500, name, 100 + i);
        CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    }
    gt_event early = kernel_event(-3, name, 1);
    CU_ASSERT_EQUAL(gt_writer_add(w, &early), GT_OK);
    gt_event bad = kernel_event(INT64_MAX / 2, name, 1);
    CU_ASSERT_EQUAL(gt_writer_add(w, &bad), GT_ERR_INVALID); /* no room for the shift */
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);

    /* more than 256 in one nanosecond: the rest of the batch is committed,
     * the one left over is counted as dropped and commit says so */
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), GT_OK);
    for (int i = 0; i < 257; i++) {
        gt_event ev = kernel_event(9000, name, 1);
        CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    }
    gt_event after = kernel_event(9001, name, 1);
    CU_ASSERT_EQUAL(gt_writer_add(w, &after), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_ERR_INVALID);
    CU_ASSERT_TRUE(names_file(path));
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "256"));
    CU_ASSERT_EQUAL(gt_writer_count(w, GT_EV_KERNEL), 40 + 3 + 1 + 256 + 1);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);

    sqlite3 *db = open_ro(path);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start = 500"), 43);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(DISTINCT gridX) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start = 500"), 43);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start = -3 AND end = 1497"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start = 9000"), 256);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start = 9001"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count FROM " GT_TABLE_DROPPED_EVENTS " WHERE kind = 'kernel'"
                                  " AND globalPid = (4242 << 24) | (1 << 48)"), 1);
    sqlite3_close(db);
    free(path);
}

static void test_store_writer__batch_rules(void)
{
    char *path = fresh_path("rules.sqlite");
    gt_writer *w = open_writer(path);
    gt_event ev = kernel_event(1, 0, 1);
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_ERR_INVALID); /* outside a batch */
    CU_ASSERT_TRUE(names_file(path));
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_ERR_INVALID);
    CU_ASSERT_EQUAL(gt_writer_begin(w), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_begin(w), GT_ERR_INVALID);
    ev.kind = GT_EV_N_KINDS;
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_ERR_INVALID);
    ev = kernel_event(1, 0, 1);
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK); /* the batch is still open */
    CU_ASSERT_EQUAL(gt_writer_add_dropped(w, 0, GT_EV_N_KINDS, 1), GT_ERR_INVALID);
    CU_ASSERT_EQUAL(gt_writer_add_callchain(w, 1, NULL, 0), GT_ERR_INVALID);
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_count(w, GT_EV_KERNEL), 1);
    CU_ASSERT_EQUAL(gt_writer_count(w, GT_EV_N_KINDS), 0);
    CU_ASSERT_EQUAL(gt_writer_open(NULL, path, 0), GT_ERR_INVALID);
    gt_writer *w2 = NULL;
    CU_ASSERT_EQUAL(gt_writer_open(&w2, path, 1u << 7), GT_ERR_INVALID);
    CU_ASSERT_EQUAL(gt_writer_close(NULL), GT_ERR_INVALID);
    gt_writer_free(NULL);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
    free(path);
}

/* ---- files ---------------------------------------------------------------------------- */

static void test_store_writer__existing_file_refused(void)
{
    char *path = fresh_path("exists.sqlite");
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("my thesis, not a trace\n", f);
    fclose(f);
    gt_writer *w = NULL;
    CU_ASSERT_EQUAL(gt_writer_open(&w, path, 0), GT_ERR_EXISTS);
    CU_ASSERT_PTR_NULL(w);
    CU_ASSERT_TRUE(names_file(path));
    char buf[64] = "";
    f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_PTR_NOT_NULL(fgets(buf, sizeof buf, f));
    fclose(f);
    CU_ASSERT_STRING_EQUAL(buf, "my thesis, not a trace\n");

    /* overwriting was asked for */
    CU_ASSERT_EQUAL(gt_writer_open(&w, path, GT_WRITE_OVERWRITE), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
    sqlite3 *db = open_ro(path);
    CU_ASSERT_TRUE(integrity_ok(db));
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM META_DATA_EXPORT WHERE value = 'gtrace'"), 1);
    sqlite3_close(db);

    /* a stale WAL by that name (a killed program's, its trace since deleted)
     * is not replayed into the new file */
    unlink(path);
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_TRUE_FATAL(pid >= 0);
    if (pid == 0) {
        sqlite3 *old = NULL;
        if (sqlite3_open(path, &old) != SQLITE_OK ||
            sqlite3_exec(old, "PRAGMA journal_mode = WAL; CREATE TABLE old_stuff (x);"
                              " INSERT INTO old_stuff VALUES (1)", NULL, NULL, NULL) != SQLITE_OK)
            _exit(3);
        raise(SIGKILL);
        _exit(4);
    }
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT_TRUE(WIFSIGNALED(status));
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", path);
    CU_ASSERT_TRUE(gt_test_file_size(wal) > 0);
    unlink(path);
    CU_ASSERT_EQUAL(gt_writer_open(&w, path, 0), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
    db = open_ro(path);
    CU_ASSERT_TRUE(integrity_ok(db));
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'old_stuff'"), 0);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM META_DATA_EXPORT WHERE value = 'gtrace'"), 1);
    sqlite3_close(db);

    /* a folder that is not there */
    char *bad = gt_test_path("no/such/dir/t.sqlite");
    CU_ASSERT_NOT_EQUAL(gt_writer_open(&w, bad, 0), GT_OK);
    CU_ASSERT_TRUE(names_file(bad));
    free(bad);
    free(path);
}

static void test_store_writer__readable_after_kill(void)
{
    char *path = fresh_path("killed.sqlite");
    mix committed = {0};
    int64_t t = 0;
    /* what the child commits, computed the same way here */
    {
        mix m1 = {0}, m2 = {0};
        gt_writer *w = open_writer(path);
        CU_ASSERT_EQUAL(write_batch(w, 700, 1, &t, &m1), GT_OK);
        CU_ASSERT_EQUAL(write_batch(w, 300, 2, &t, &m2), GT_OK);
        gt_writer_free(w);
        add_mix(&committed, &m1);
        add_mix(&committed, &m2);
        unlink(path);
    }
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_TRUE_FATAL(pid >= 0);
    if (pid == 0) {
        gt_writer *w = NULL;
        mix m = {0};
        int64_t tc = 0;
        if (gt_writer_open(&w, path, GT_WRITE_OVERWRITE) != GT_OK || write_batch(w, 700, 1, &tc, &m) != GT_OK ||
            write_batch(w, 300, 2, &tc, &m) != GT_OK || gt_writer_begin(w) != GT_OK)
            _exit(3);
        /* a batch in flight when the program dies */
        for (int i = 0; i < 5000; i++) {
            gt_event ev = kernel_event(tc += 1000, 1, 1);
            if (gt_writer_add(w, &ev) != GT_OK)
                _exit(4);
        }
        raise(SIGKILL);
        _exit(5);
    }
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    check_counts(path, &committed);
    sqlite3 *db = open_ro(path);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM META_DATA_EXPORT WHERE name = 'GTRACE_SCHEMA_VERSION'"), 1);
    sqlite3_close(db);
    free(path);
}

/* ---- failures -------------------------------------------------------------------------- */

/* Allocations a batch makes, to aim failures at all of them. */
static long allocs_of_batch(const char *path)
{
    gt_writer *w = open_writer(path);
    int64_t t = 0;
    mix m = {0};
    write_batch(w, 400, 1, &t, &m);
    n_allocs = 0;
    write_batch(w, 1500, 2, &t, &m);
    long n = n_allocs;
    gt_writer_free(w);
    return n;
}

static void test_store_writer__allocation_failure(void)
{
    char *path = fresh_path("nomem.sqlite");
    long n_batch = allocs_of_batch(path);
    CU_ASSERT_TRUE(n_batch > 10);
    int n_failed = 0;
    long step = n_batch / 60 + 1;
    for (long i = 0; i <= n_batch; i += step) {
        unlink(path);
        gt_writer *w = open_writer(path);
        int64_t t = 0;
        mix before = {0}, failed = {0}, after = {0};
        CU_ASSERT_EQUAL_FATAL(write_batch(w, 400, 1, &t, &before), GT_OK);
        alloc_countdown = i;
        int st = write_batch(w, 1500, 2, &t, &failed);
        alloc_countdown = -1;
        if (st != GT_OK) {
            n_failed++;
            CU_ASSERT_EQUAL(st, GT_ERR_NOMEM);
            CU_ASSERT_TRUE(names_file(path));
            CU_ASSERT_EQUAL(gt_writer_count(w, GT_EV_KERNEL), before.n_kernels);
            check_counts(path, &before); /* while the writer is still open */
        } else {
            add_mix(&before, &failed);
        }
        /* the writer goes on, with the strings, launches and callchain ids
         * the failed batch had made */
        CU_ASSERT_EQUAL(write_batch(w, 200, st == GT_OK ? 3 : 2, &t, &after), GT_OK);
        add_mix(&before, &after);
        CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
        check_counts(path, &before);
    }
    CU_ASSERT_TRUE(n_failed > 10);

    /* in open: a failed open leaves no file behind */
    n_allocs = 0;
    gt_writer *w = open_writer(path = (free(path), fresh_path("nomem-open.sqlite")));
    long n_open = n_allocs;
    gt_writer_free(w);
    for (long i = 0; i < n_open; i += n_open / 40 + 1) {
        unlink(path);
        w = NULL;
        alloc_countdown = i;
        int st = gt_writer_open(&w, path, 0);
        alloc_countdown = -1;
        if (st != GT_OK) {
            CU_ASSERT_EQUAL(st, GT_ERR_NOMEM);
            CU_ASSERT_PTR_NULL(w);
            CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
        } else {
            CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
        }
    }

    /* the writer's own tables: strings, then launch configurations */
    unlink(path);
    w = open_writer(path);
    gt_string_id id = 0;
    alloc_countdown = 0;
    CU_ASSERT_EQUAL(gt_writer_intern(w, "first", &id), GT_ERR_NOMEM);
    alloc_countdown = -1;
    CU_ASSERT_TRUE(names_file(path));
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "intern"));
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), GT_OK);
    gt_event ev = kernel_event(10, intern(w, "first"), 1);
    alloc_countdown = 0;
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_ERR_NOMEM);
    alloc_countdown = -1;
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_ERR_INVALID); /* the batch went with the failure */
    CU_ASSERT_EQUAL(gt_writer_begin(w), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
    check_counts(path, &(mix){.n_kernels = 1});

    /* in close: what was committed stays readable */
    long n_close = 0;
    for (long i = 0; i <= n_close; i += n_close / 40 + 1) {
        unlink(path);
        w = open_writer(path);
        int64_t t = 0;
        mix m = {0};
        CU_ASSERT_EQUAL(write_batch(w, 300, 1, &t, &m), GT_OK);
        if (!n_close) { /* first, count what close allocates */
            n_allocs = 0;
            CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
            n_close = n_allocs;
            CU_ASSERT_TRUE(n_close > 0);
            continue;
        }
        alloc_countdown = i;
        int st = gt_writer_close(w);
        alloc_countdown = -1;
        CU_ASSERT_TRUE(st == GT_OK || st == GT_ERR_NOMEM);
        check_counts(path, &m);
    }
    free(path);
}

static void test_store_writer__disk_full(void)
{
    char *path = fresh_path("full.sqlite");
    static const sqlite3_int64 budgets[] = {0, 1, 4096, 30000, 100000, 250000, 500000, 800000};
    int n_failed = 0;
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
        unlink(path);
        gt_writer *w = open_writer(path);
        int64_t t = 0;
        mix before = {0}, failed = {0}, after = {0};
        CU_ASSERT_EQUAL_FATAL(write_batch(w, 400, 1, &t, &before), GT_OK);
        write_budget = budgets[i];
        int st = write_batch(w, 20000, 2, &t, &failed); /* about 1 MB */
        write_budget = -1;
        if (st != GT_OK) {
            n_failed++;
            CU_ASSERT_EQUAL(st, GT_ERR_FULL);
            CU_ASSERT_TRUE(names_file(path));
            CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "full"));
            check_counts(path, &before); /* while the writer is still open */
        } else {
            add_mix(&before, &failed);
        }
        CU_ASSERT_EQUAL(write_batch(w, 200, st == GT_OK ? 3 : 2, &t, &after), GT_OK);
        add_mix(&before, &after);
        CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
        check_counts(path, &before);
    }
    CU_ASSERT_EQUAL(n_failed, 8);

    /* the disk fills while closing: the committed batches stay readable */
    for (sqlite3_int64 budget = 0; budget < 3000000; budget = budget * 2 + 50000) {
        unlink(path);
        gt_writer *w = open_writer(path);
        int64_t t = 0;
        mix m = {0};
        CU_ASSERT_EQUAL(write_batch(w, 20000, 1, &t, &m), GT_OK);
        write_budget = budget;
        int st = gt_writer_close(w);
        write_budget = -1;
        CU_ASSERT_TRUE(st == GT_OK || st == GT_ERR_FULL);
        if (st != GT_OK)
            CU_ASSERT_TRUE(names_file(path));
        check_counts(path, &m);
    }
    free(path);
}

static const gt_test_case cases[] = {
    {"test_store_writer__schema_matches_nsys", test_store_writer__schema_matches_nsys},
    {"test_store_writer__nsys_tables_when_closed", test_store_writer__nsys_tables_when_closed},
    {"test_store_writer__enums_match_nsys", test_store_writer__enums_match_nsys},
    {"test_store_writer__metadata_and_indexes", test_store_writer__metadata_and_indexes},
    {"test_store_writer__every_kind_in_its_table", test_store_writer__every_kind_in_its_table},
    {"test_store_writer__interning", test_store_writer__interning},
    {"test_store_writer__kernel_launches_deduplicated", test_store_writer__kernel_launches_deduplicated},
    {"test_store_writer__same_nanosecond_kernels", test_store_writer__same_nanosecond_kernels},
    {"test_store_writer__batch_rules", test_store_writer__batch_rules},
    {"test_store_writer__existing_file_refused", test_store_writer__existing_file_refused},
    {"test_store_writer__readable_after_kill", test_store_writer__readable_after_kill},
    {"test_store_writer__allocation_failure", test_store_writer__allocation_failure},
    {"test_store_writer__disk_full", test_store_writer__disk_full},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    /* SQLite's allocator, and with it the writer's, can be made to fail;
     * files go through a VFS whose disk can be made full. */
    static sqlite3_mem_methods failing;
    if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &real_mem) != SQLITE_OK)
        return 99;
    failing = real_mem;
    failing.xMalloc = failing_malloc;
    failing.xRealloc = failing_realloc;
    if (sqlite3_config(SQLITE_CONFIG_MALLOC, &failing) != SQLITE_OK || sqlite3_initialize() != SQLITE_OK)
        return 99;
    real_vfs = sqlite3_vfs_find(NULL);
    if (!real_vfs)
        return 99;
    full_vfs = *real_vfs;
    full_vfs.zName = "gt-test-full";
    full_vfs.szOsFile = (int)sizeof(full_file) + real_vfs->szOsFile;
    full_vfs.xOpen = ff_open;
    full_vfs.pNext = NULL;
    if (sqlite3_vfs_register(&full_vfs, 1) != SQLITE_OK)
        return 99;

    const gt_test_suite suites[] = {{"store_writer", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
