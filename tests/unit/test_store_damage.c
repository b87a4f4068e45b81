/* test_store_damage.c: the reader against damaged and hostile traces. Each
 * test writes a small trace with the writer, damages it with SQL the way a
 * broken tool or a hostile file would, and checks that the reader refuses
 * the file with a message naming it, or reads it with the damaged rows
 * refused and counted (gt_trace_rejected), handing out only values within
 * the documented bounds. Damage a reader once took forever over (views that
 * never end) would hang these tests rather than fail them.
 * Nsys exports and ordinary bad input are test_store_reader.c. */
#include "gt_store.h"
#include "gt_test.h"
#include "reader_int.h"
#include "store_check.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------------- */

enum { N_EACH = 10 }; /* events of each kind in the base trace */

/* Kernels as a closed trace keeps them (one CUPTI_ACTIVITY_KIND_KERNEL
 * table, as in nsys exports), or as the capture writes them (GTRACE_KERNELS
 * and GTRACE_KERNEL_LAUNCHES behind a view of nsys's name: the layout of a
 * trace whose writer was killed): the tests that damage kernels run on both. */
enum { CLOSED = 0, CAPTURED = 1, N_LAYOUTS = 2 };

static bool kernels_in_table(const char *path)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    bool table = false;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT type = 'table' FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL'",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        table = sqlite3_column_int(st, 0) != 0;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return table;
}

static void damage(const char *path, const char *sql);

static gt_event zeroed(gt_event_kind kind)
{
    gt_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = kind;
    return ev;
}

/* Writes N_EACH events of every kind: event i starts at 1000 * (i + 1) and
 * lasts 100 ns; kernels of two launch configurations (even and odd i). */
static char *make_trace(const char *name, int layout)
{
    char file[256];
    snprintf(file, sizeof file, "%s%s", layout == CAPTURED ? "captured-" : "", name);
    char *path = gt_test_path(file);
    gt_writer *w = NULL;
    gt_string_id kname = 0, oname = 0, api = 0, heap = 0;
    unlink(path);
    CU_ASSERT_EQUAL_FATAL(gt_writer_open(&w, path, 0), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "kernel_a", &kname), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "matmul", &oname), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "cudaLaunchKernel_v7000", &api), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "pool", &heap), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), 0);
    for (int i = 0; i < N_EACH; i++) {
        int64_t s = 1000 * (int64_t)(i + 1), e = s + 100;
        gt_event ev = zeroed(GT_EV_KERNEL);
        ev.u.kernel = (gt_kernel){.start_ns = s, .end_ns = e, .global_pid = gt_global_pid(7), .stream_id = 1,
                                  .correlation_id = i + 1, .demangled_name = kname, .short_name = kname,
                                  .grid_x = 1 + i % 2, .grid_y = 1, .grid_z = 1, .block_x = 128, .block_y = 1,
                                  .block_z = 1, .local_total_bytes = 4096};
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
        ev = zeroed(GT_EV_MEMCPY);
        ev.u.memcpy = (gt_memcpy){.start_ns = s, .end_ns = e, .stream_id = 2, .bytes = 1 << 20,
                                  .copy_kind = GT_COPY_HTOD};
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
        ev = zeroed(GT_EV_MEMSET);
        ev.u.memset = (gt_memset){.start_ns = s, .end_ns = e, .stream_id = 2, .bytes = 4096};
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
        ev = zeroed(GT_EV_API);
        ev.u.api = (gt_api_call){.start_ns = s, .end_ns = e, .global_tid = gt_global_tid(7, 7),
                                 .correlation_id = i + 1, .name = api};
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
        ev = zeroed(GT_EV_SYNC);
        ev.u.sync = (gt_sync){.start_ns = s, .end_ns = e, .stream_id = 1, .sync_type = GT_SYNC_STREAM};
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
        ev = zeroed(GT_EV_NVTX);
        ev.u.nvtx = (gt_nvtx){.start_ns = s, .end_ns = i % 2 ? -1 : e,
                              .event_type = i % 2 ? GT_NVTX_MARK : GT_NVTX_PUSHPOP, .text = oname,
                              .global_tid = gt_global_tid(7, 7)};
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
        ev = zeroed(GT_EV_GPU_MEMORY);
        ev.u.gpu_memory = (gt_gpu_memory){.start_ns = s, .address = 0x10000 * (uint64_t)(i + 1), .bytes = 65536,
                                          .mem_kind = GT_MEM_DEVICE, .operation = GT_DEVMEM_ALLOC};
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
        ev = zeroed(GT_EV_HEAP);
        ev.u.heap = (gt_heap_event){.start_ns = s, .operation = GT_REGION_REGISTER, .heap_id = 1,
                                    .address = 0x100 * (uint64_t)(i + 1), .bytes = 256, .name = heap};
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
        ev = zeroed(GT_EV_CPU_OP);
        ev.u.cpu_op = (gt_cpu_op){.start_ns = s, .end_ns = e, .global_tid = gt_global_tid(7, 7), .name = oname,
                                  .flops = 1000, .bytes = 3000};
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
    }
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    if (layout == CAPTURED) {
        gt_writer_free(w); /* committed, never closed */
        CU_ASSERT_FATAL(!kernels_in_table(path));
    } else {
        CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    }
    return path;
}

/* Damages kernels: `compact` where they are in GTRACE_KERNELS and
 * GTRACE_KERNEL_LAUNCHES, `table` where CUPTI_ACTIVITY_KIND_KERNEL is a table. */
static void damage_kernels(const char *path, const char *compact, const char *table)
{
    damage(path, kernels_in_table(path) ? table : compact);
}

/* Runs `sql` on the trace as an ordinary SQLite client would. */
static void damage(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    char *err = NULL;
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK)
        fprintf(stderr, "\n  damage %s: %s\n", path, err ? err : sqlite3_errmsg(db));
    sqlite3_free(err);
    sqlite3_close(db);
    CU_ASSERT_EQUAL_FATAL(rc, SQLITE_OK);
}

/* Opening must fail with `status` and a message naming the file and `words`. */
static void expect_refused(const char *path, int status, const char *words)
{
    gt_trace *t = NULL;
    int rc = gt_trace_open(&t, path, 0);
    CU_ASSERT_EQUAL(rc, status);
    CU_ASSERT_PTR_NULL(t);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), path));
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), words));
    CU_ASSERT_PTR_NULL(strchr(gt_error_last(), '\n'));
    if (rc != status || !strstr(gt_error_last(), words))
        fprintf(stderr, "\n  %s: expected %s (\"%s\"), got %s: %s\n", path, gt_status_name(status), words,
                gt_status_name(rc), gt_error_last());
    gt_trace_free(t);
}

static int64_t rejected_of(gt_trace *t, gt_event_kind kind)
{
    int64_t n = -1;
    CU_ASSERT_EQUAL(gt_trace_rejected(t, kind, &n), 0);
    return n;
}

/* Every event handed out keeps the documented bounds. */
static void check_bounds(const gt_event *evs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int64_t s = gt_event_start(&evs[i]), e = gt_event_end(&evs[i]);
        CU_ASSERT(s >= -GT_TIME_LIMIT_NS && s <= GT_TIME_LIMIT_NS);
        CU_ASSERT(e >= s && e - s <= GT_TIME_LIMIT_NS);
        int64_t bytes = 0;
        switch (evs[i].kind) {
        case GT_EV_MEMCPY: bytes = evs[i].u.memcpy.bytes; break;
        case GT_EV_MEMSET: bytes = evs[i].u.memset.bytes; break;
        case GT_EV_GPU_MEMORY: bytes = evs[i].u.gpu_memory.bytes; break;
        case GT_EV_HEAP: bytes = evs[i].u.heap.bytes; break;
        case GT_EV_CPU_OP: bytes = evs[i].u.cpu_op.bytes; break;
        case GT_EV_KERNEL: bytes = evs[i].u.kernel.local_total_bytes; break;
        default: break;
        }
        CU_ASSERT(bytes >= 0 && bytes <= GT_SIZE_LIMIT);
    }
}

/* Reads every kind in full and checks what comes out: `n_bad[k]` rows of
 * kind k refused, the rest handed out within bounds, the time span too. */
static void expect_rows(const char *path, const int64_t n_bad[GT_EV_N_KINDS])
{
    gt_trace *t = open_ok(path, 0);
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        size_t n = 0;
        int64_t rows = 0;
        gt_event *evs = read_events(t, (gt_event_kind)k, INT64_MIN, INT64_MAX, &n);
        CU_ASSERT_EQUAL(gt_trace_count(t, (gt_event_kind)k, &rows), 0);
        CU_ASSERT_EQUAL((int64_t)n, rows - n_bad[k]);
        CU_ASSERT_EQUAL(rejected_of(t, (gt_event_kind)k), n_bad[k]);
        if ((int64_t)n != rows - n_bad[k] || rejected_of(t, (gt_event_kind)k) != n_bad[k])
            fprintf(stderr, "\n  %s: %zu of %lld %s rows read, %lld refused (expected %lld)\n", path, n,
                    (long long)rows, gt_event_kind_name((gt_event_kind)k),
                    (long long)rejected_of(t, (gt_event_kind)k), (long long)n_bad[k]);
        check_bounds(evs, n);
        free(evs);
        /* a range query sees the same rows, and its count does not change the total */
        evs = read_events(t, (gt_event_kind)k, 500, 20000, &n);
        check_bounds(evs, n);
        free(evs);
        CU_ASSERT_EQUAL(rejected_of(t, (gt_event_kind)k), n_bad[k]);
    }
    int64_t s = 0, e = 0;
    CU_ASSERT_EQUAL(gt_trace_time_span(t, &s, &e), 0);
    CU_ASSERT(s >= -GT_TIME_LIMIT_NS && e <= GT_TIME_LIMIT_NS && s <= e);
    gt_trace_free(t);

    /* without a full read first, gt_trace_rejected reads the table itself */
    t = open_ok(path, 0);
    for (int k = 0; k < GT_EV_N_KINDS; k++)
        CU_ASSERT_EQUAL(rejected_of(t, (gt_event_kind)k), n_bad[k]);
    gt_trace_free(t);
}

/* ---- schema: views, virtual tables, generated columns, triggers ------------------ */

/* A view in place of an event table that would never finish: refused at
 * open, before any query could run it. */
static void test_store_damage__view_cross_join(void)
{
    char *path = make_trace("view-cross-join.sqlite", CLOSED);
    damage(path, "ALTER TABLE NVTX_EVENTS RENAME TO nvtx_real;"
                 "CREATE VIEW NVTX_EVENTS AS SELECT a.* FROM nvtx_real a, nvtx_real b, nvtx_real c, nvtx_real d,"
                 " nvtx_real e, nvtx_real f, nvtx_real g, nvtx_real h, nvtx_real i, nvtx_real j;");
    expect_refused(path, GT_ERR_CORRUPT, "NVTX_EVENTS is a view");
    free(path);
}

static void test_store_damage__view_recursive(void)
{
    char *path = make_trace("view-recursive.sqlite", CLOSED);
    damage(path, "DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME;"
                 "CREATE VIEW CUPTI_ACTIVITY_KIND_RUNTIME AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL"
                 " SELECT x + 1 FROM c) SELECT x AS start, x + 1 AS end, 0 AS globalTid, x AS correlationId,"
                 " 0 AS nameId FROM c;");
    expect_refused(path, GT_ERR_CORRUPT, "CUPTI_ACTIVITY_KIND_RUNTIME is a view");
    /* a description table too */
    damage(path, "DROP VIEW CUPTI_ACTIVITY_KIND_RUNTIME; ALTER TABLE StringIds RENAME TO s;"
                 "CREATE VIEW StringIds AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)"
                 " SELECT x AS id, 'x' AS value FROM c;");
    expect_refused(path, GT_ERR_CORRUPT, "StringIds is a view");
    free(path);
}

/* gtrace's own kernel view is never read: kernels come from GTRACE_KERNELS,
 * whatever the view says; without GTRACE_KERNELS, the view is refused, as is
 * a view in place of a kernel table. */
static void kernel_view_in(int layout)
{
    char *path = make_trace("kernel-view.sqlite", layout);
    if (kernels_in_table(path)) {
        damage(path, "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO k;"
                     "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL"
                     " SELECT x + 1 FROM c) SELECT x AS start, x + 1 AS end FROM c;");
        expect_refused(path, GT_ERR_CORRUPT, "CUPTI_ACTIVITY_KIND_KERNEL is a view");
        free(path);
        return;
    }
    damage(path, "DROP VIEW CUPTI_ACTIVITY_KIND_KERNEL;"
                 "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL"
                 " SELECT x + 1 FROM c) SELECT x AS start, x + 1 AS end FROM c;");
    gt_trace *t = open_ok(path, 0);
    size_t n = 0;
    gt_event *evs = read_events(t, GT_EV_KERNEL, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL(n, N_EACH);
    CU_ASSERT(n > 0 && evs[0].u.kernel.start_ns == 1000 && evs[0].u.kernel.block_x == 128);
    free(evs);
    evs = read_events(t, GT_EV_KERNEL, 1500, 2500, &n);
    CU_ASSERT_EQUAL(n, 1);
    free(evs);
    int64_t c = 0, s = 0, e = 0;
    CU_ASSERT_EQUAL(gt_trace_count(t, GT_EV_KERNEL, &c), 0);
    CU_ASSERT_EQUAL(c, N_EACH);
    CU_ASSERT_EQUAL(gt_trace_time_span(t, &s, &e), 0);
    CU_ASSERT(s == 1000 && e == 1000 * N_EACH + 100);
    gt_trace_free(t);
    damage(path, "DROP TABLE GTRACE_KERNELS;");
    expect_refused(path, GT_ERR_CORRUPT, "CUPTI_ACTIVITY_KIND_KERNEL is a view");
    free(path);
}

static void test_store_damage__kernel_view(void)
{
    for (int layout = 0; layout < N_LAYOUTS; layout++)
        kernel_view_in(layout);
}

/* Tables of the wrong shape: a generated column (computed by the file's own
 * expression on every read), a missing column the reader needs, a virtual
 * table. */
static void test_store_damage__table_shapes(void)
{
    char *path = make_trace("shapes.sqlite", CLOSED);
    damage(path, "ALTER TABLE CUPTI_ACTIVITY_KIND_MEMSET RENAME TO m;"
                 "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (s INTEGER, end INTEGER,"
                 " start INTEGER GENERATED ALWAYS AS (s * 2) VIRTUAL);");
    expect_refused(path, GT_ERR_CORRUPT, "CUPTI_ACTIVITY_KIND_MEMSET has a generated column");
    damage(path, "DROP TABLE CUPTI_ACTIVITY_KIND_MEMSET;"
                 "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (begin INTEGER, end INTEGER);");
    expect_refused(path, GT_ERR_CORRUPT, "CUPTI_ACTIVITY_KIND_MEMSET has no column start");
    damage(path, "DROP TABLE CUPTI_ACTIVITY_KIND_MEMSET;"
                 "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, \"end\" INTEGER);"
                 "ALTER TABLE GTRACE_RUN_CONFIG RENAME TO r;"
                 "CREATE TABLE GTRACE_RUN_CONFIG (globalPid INTEGER, \"key\" TEXT);");
    expect_refused(path, GT_ERR_CORRUPT, "GTRACE_RUN_CONFIG has no column value");
    damage(path, "DROP TABLE GTRACE_RUN_CONFIG; ALTER TABLE r RENAME TO GTRACE_RUN_CONFIG;"
                 "ALTER TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION RENAME TO y;"
                 "CREATE VIRTUAL TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION USING fts4(start, end);");
    expect_refused(path, GT_ERR_CORRUPT, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION is a view or a virtual table");
    free(path);
}

/* Triggers in the file never fire: the reader writes nothing, and adding
 * time indexes (the one write it may do) fires none either. */
static void triggers_in(int layout)
{
    char *path = make_trace("triggers.sqlite", layout);
    const char *tables[] = {"NVTX_EVENTS", kernels_in_table(path) ? "CUPTI_ACTIVITY_KIND_KERNEL" : "GTRACE_KERNELS",
                            "StringIds", "CUPTI_ACTIVITY_KIND_RUNTIME", "META_DATA_EXPORT"};
    damage(path, "CREATE TABLE fired (what TEXT);");
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
        char sql[1024];
        snprintf(sql, sizeof sql,
                 "CREATE TRIGGER i%zu AFTER INSERT ON %s BEGIN INSERT INTO fired VALUES ('insert'); END;"
                 "CREATE TRIGGER u%zu AFTER UPDATE ON %s BEGIN INSERT INTO fired VALUES ('update'); END;"
                 "CREATE TRIGGER d%zu AFTER DELETE ON %s BEGIN INSERT INTO fired VALUES ('delete'); END;",
                 i, tables[i], i, tables[i], i, tables[i]);
        damage(path, sql);
    }
    int64_t none[GT_EV_N_KINDS] = {0};
    expect_rows(path, none);
    gt_trace *t = open_ok(path, GT_OPEN_ADD_INDEXES);
    size_t n = 0;
    gt_event *evs = read_events(t, GT_EV_NVTX, 0, 5000, &n);
    CU_ASSERT_EQUAL(n, 4);
    free(evs);
    gt_trace_free(t);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    CU_ASSERT_EQUAL_FATAL(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlite3_prepare_v2(db, "SELECT count(*) FROM fired", -1, &st, NULL), SQLITE_OK);
    CU_ASSERT_EQUAL(sqlite3_step(st), SQLITE_ROW);
    CU_ASSERT_EQUAL(sqlite3_column_int(st, 0), 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    free(path);
}

static void test_store_damage__triggers(void)
{
    for (int layout = 0; layout < N_LAYOUTS; layout++)
        triggers_in(layout);
}

/* ---- rows: types, extremes, order, NULLs, strings ------------------------------- */

/* REALs, BLOBs and TEXT where integers belong: those rows are refused and
 * counted, the others read as written. */
static void wrong_types_in(int layout)
{
    char *path = make_trace("types.sqlite", layout);
    damage(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = 1500.5 WHERE rowid = 1;"
                 "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET \"end\" = x'00ff00ff' WHERE rowid = 2;"
                 "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = 'twelve' WHERE rowid = 3;"
                 "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = 1e300 WHERE rowid = 1;"
                 "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET streamId = zeroblob(1000) WHERE rowid = 2;"
                 "UPDATE NVTX_EVENTS SET color = 'red' WHERE rowid = 1;"
                 "UPDATE NVTX_EVENTS SET uint64Value = 2.5 WHERE rowid = 2;"
                 "UPDATE NVTX_EVENTS SET textId = x'01' WHERE rowid = 3;"
                 "UPDATE GTRACE_MEMORY_EVENTS SET heapId = 1.5 WHERE rowid = 4;"
                 "UPDATE CUDA_GPU_MEMORY_USAGE_EVENTS SET address = 'a' WHERE rowid = 5;"
                 /* (an INTEGER column keeps a REAL only when it is no whole number) */
                 "UPDATE GTRACE_CPU_OPS SET flops = 1000.5 WHERE rowid = 6;");
    /* the even kernels (a launch row of the wrong type refuses its kernels), and the last */
    damage_kernels(path,
                   "UPDATE GTRACE_KERNEL_LAUNCHES SET gridX = 1.25 WHERE gridX = 1;"
                   "UPDATE GTRACE_KERNELS SET streamId = 'one' WHERE rowid = (SELECT max(rowid) FROM GTRACE_KERNELS);",
                   "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 1.25 WHERE gridX = 1;"
                   "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = 'one'"
                   " WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);");
    int64_t n_bad[GT_EV_N_KINDS] = {[GT_EV_API] = 3, [GT_EV_MEMCPY] = 2, [GT_EV_NVTX] = 3, [GT_EV_HEAP] = 1,
                                    [GT_EV_GPU_MEMORY] = 1, [GT_EV_CPU_OP] = 1, [GT_EV_KERNEL] = N_EACH / 2 + 1};
    expect_rows(path, n_bad);
    free(path);
}

static void test_store_damage__wrong_types(void)
{
    for (int layout = 0; layout < N_LAYOUTS; layout++)
        wrong_types_in(layout);
}

/* The extremes of int64 and values past the bounds: refused; the bounds
 * themselves: read. */
static void extreme_times_in(int layout)
{
    char *path = make_trace("extremes.sqlite", layout);
    damage(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = 9223372036854775807, \"end\" = 9223372036854775807"
                 " WHERE rowid = 1;"
                 "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = -9223372036854775808 WHERE rowid = 2;"
                 "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET \"end\" = 9223372036854775807 WHERE rowid = 3;"
                 "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = -9007199254740993 WHERE rowid = 4;"
                 /* exactly at the bounds: kept */
                 "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = -9007199254740992, \"end\" = 0 WHERE rowid = 5;"
                 "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = 9223372036854775807 WHERE rowid = 1;"
                 "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = -1 WHERE rowid = 2;"
                 "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = 9007199254740992 WHERE rowid = 3;"
                 "UPDATE CUDA_GPU_MEMORY_USAGE_EVENTS SET start = -9223372036854775808 WHERE rowid = 1;"
                 "UPDATE GTRACE_MEMORY_EVENTS SET bytes = -9223372036854775808 WHERE rowid = 1;"
                 "UPDATE GTRACE_CPU_OPS SET flops = 9223372036854775807 WHERE rowid = 1;"
                 "UPDATE NVTX_EVENTS SET \"end\" = 9223372036854775807 WHERE rowid = 1;");
    /* the odd kernels, and two more at the extremes */
    damage_kernels(path,
                   "UPDATE GTRACE_KERNEL_LAUNCHES SET localMemoryTotal = -5 WHERE gridX = 2;"
                   "INSERT INTO GTRACE_KERNELS (id, end, streamId, launchId, gridId)"
                   " VALUES (9223372036854775807, 9223372036854775807, 1, 1, 0),"
                   " (-9223372036854775808, 0, 1, 1, 0);",
                   "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET localMemoryTotal = -5 WHERE gridX = 2;"
                   "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE gridX = 1 LIMIT 2;"
                   "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 9223372036854775807, \"end\" = 9223372036854775807"
                   " WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);"
                   "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -9223372036854775808, \"end\" = 0"
                   " WHERE rowid = (SELECT max(rowid) - 1 FROM CUPTI_ACTIVITY_KIND_KERNEL);");
    int64_t n_bad[GT_EV_N_KINDS] = {[GT_EV_API] = 4, [GT_EV_MEMCPY] = 2, [GT_EV_GPU_MEMORY] = 1, [GT_EV_HEAP] = 1,
                                    [GT_EV_CPU_OP] = 1, [GT_EV_NVTX] = 1, [GT_EV_KERNEL] = N_EACH / 2 + 2};
    expect_rows(path, n_bad);
    gt_trace *t = open_ok(path, 0);
    int64_t s = 0, e = 0;
    CU_ASSERT_EQUAL(gt_trace_time_span(t, &s, &e), 0);
    CU_ASSERT_EQUAL(s, -GT_TIME_LIMIT_NS);
    CU_ASSERT_EQUAL(e, 1000 * N_EACH + 100);
    size_t n = 0;
    gt_event *evs = read_events(t, GT_EV_API, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT(n > 0 && evs[0].u.api.start_ns == -GT_TIME_LIMIT_NS && evs[0].u.api.end_ns == 0);
    free(evs);
    /* the longest accepted event bounds range queries: the one at the bound is found */
    evs = read_events(t, GT_EV_API, -10, -5, &n);
    CU_ASSERT_EQUAL(n, 1);
    free(evs);
    evs = read_events(t, GT_EV_MEMCPY, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT(n == N_EACH - 2 && evs[0].u.memcpy.bytes == GT_SIZE_LIMIT);
    free(evs);
    gt_trace_free(t);
    free(path);
}

static void test_store_damage__extreme_times(void)
{
    for (int layout = 0; layout < N_LAYOUTS; layout++)
        extreme_times_in(layout);
}

/* Ends before starts, and durations longer than the bound. */
static void end_before_start_in(int layout)
{
    char *path = make_trace("order.sqlite", layout);
    damage(path, "UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET \"end\" = start - 1 WHERE rowid IN (1, 2);"
                 "UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET start = -9007199254740992,"
                 " \"end\" = 9007199254740992 WHERE rowid = 1;"
                 "UPDATE NVTX_EVENTS SET \"end\" = start - 1 WHERE rowid = 1;"
                 "UPDATE GTRACE_CPU_OPS SET \"end\" = -1 WHERE rowid = 1;");
    damage_kernels(path,
                   "UPDATE GTRACE_KERNELS SET \"end\" = (id >> 8) - 10 WHERE rowid = (SELECT min(rowid) FROM GTRACE_KERNELS);",
                   "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET \"end\" = start - 10"
                   " WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);");
    int64_t n_bad[GT_EV_N_KINDS] = {[GT_EV_MEMSET] = 2, [GT_EV_SYNC] = 1, [GT_EV_NVTX] = 1, [GT_EV_CPU_OP] = 1,
                                    [GT_EV_KERNEL] = 1};
    expect_rows(path, n_bad);
    free(path);
}

static void test_store_damage__end_before_start(void)
{
    for (int layout = 0; layout < N_LAYOUTS; layout++)
        end_before_start_in(layout);
}

/* NULL times are refused (an NVTX end excepted: a mark); NULL elsewhere reads as 0. */
static void test_store_damage__nulls(void)
{
    char *path = make_trace("nulls.sqlite", CLOSED);
    /* the tables say NOT NULL: make them say nothing, as a hand-made file would */
    damage(path, "PRAGMA writable_schema = ON;"
                 "UPDATE sqlite_master SET sql = replace(sql, 'NOT NULL', '') WHERE name IN"
                 " ('CUPTI_ACTIVITY_KIND_MEMCPY', 'GTRACE_MEMORY_EVENTS', 'NVTX_EVENTS');");
    damage(path, "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET start = NULL WHERE rowid = 1;"
                 "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET \"end\" = NULL WHERE rowid = 2;"
                 "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET correlationId = NULL, bytes = NULL WHERE rowid = 3;"
                 "UPDATE GTRACE_MEMORY_EVENTS SET start = NULL WHERE rowid = 1;"
                 "UPDATE NVTX_EVENTS SET \"end\" = NULL WHERE rowid = 1;"
                 "UPDATE NVTX_EVENTS SET start = NULL WHERE rowid = 3;");
    int64_t n_bad[GT_EV_N_KINDS] = {[GT_EV_MEMCPY] = 2, [GT_EV_HEAP] = 1, [GT_EV_NVTX] = 1};
    expect_rows(path, n_bad);
    gt_trace *t = open_ok(path, 0);
    size_t n = 0;
    gt_event *evs = read_events(t, GT_EV_MEMCPY, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT(n > 0 && evs[0].u.memcpy.start_ns == 3000 && evs[0].u.memcpy.correlation_id == 0 &&
              evs[0].u.memcpy.bytes == 0);
    free(evs);
    evs = read_events(t, GT_EV_NVTX, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT(n > 0 && evs[0].u.nvtx.start_ns == 1000 && evs[0].u.nvtx.end_ns == -1); /* now a mark */
    free(evs);
    gt_trace_free(t);
    free(path);
}

/* Ids that name no string give "", never a crash. */
static void dangling_string_ids_in(int layout)
{
    char *path = make_trace("dangling.sqlite", layout);
    damage(path, "UPDATE NVTX_EVENTS SET textId = 9223372036854775807, text = NULL WHERE rowid = 1;"
                 "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = -9223372036854775808;"
                 "INSERT INTO ThreadNames (globalTid, nameId, priority) VALUES (1, 31337, 0);");
    /* names that point nowhere; the first kernel without its launch (or its values) */
    damage_kernels(path,
                   "UPDATE GTRACE_KERNEL_LAUNCHES SET shortName = 987654321, demangledName = -5;"
                   "UPDATE GTRACE_KERNELS SET launchId = 424242 WHERE rowid = (SELECT min(rowid) FROM GTRACE_KERNELS);",
                   "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET shortName = 987654321, demangledName = -5;"
                   "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET shortName = 0, blockX = 0"
                   " WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);");
    int64_t none[GT_EV_N_KINDS] = {0};
    expect_rows(path, none);
    gt_trace *t = open_ok(path, 0);
    size_t n = 0;
    gt_event *evs = read_events(t, GT_EV_KERNEL, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL_FATAL(n, N_EACH);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, evs[0].u.kernel.short_name), ""); /* no launch: zeros */
    CU_ASSERT_EQUAL(evs[0].u.kernel.block_x, 0);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, evs[1].u.kernel.short_name), "");
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, evs[1].u.kernel.demangled_name), "");
    free(evs);
    evs = read_events(t, GT_EV_NVTX, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL_FATAL(n, N_EACH);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, evs[0].u.nvtx.text), "");
    free(evs);
    evs = read_events(t, GT_EV_API, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL_FATAL(n, N_EACH);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, evs[0].u.api.name), "");
    free(evs);
    const gt_thread *threads = gt_trace_threads(t, &n);
    CU_ASSERT(n >= 1);
    for (size_t i = 0; i < n; i++)
        if (threads[i].global_tid == 1)
            CU_ASSERT_STRING_EQUAL(threads[i].name, "");
    gt_trace_free(t);
    free(path);
}

static void test_store_damage__dangling_string_ids(void)
{
    for (int layout = 0; layout < N_LAYOUTS; layout++)
        dangling_string_ids_in(layout);
}

/* A megabyte string is cut to 4 KiB with its length and a hash: two that
 * differ only at the end stay apart, and the same one reads the same from
 * two traces. */
static void huge_strings_in(int layout)
{
    char *path = make_trace("huge-strings.sqlite", layout);
    char *other = make_trace("huge-strings-2.sqlite", layout);
    const char *sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1048576)"
                      " SELECT group_concat('\xc3\xa9', '') FROM c"; /* 1 MB of 2-byte characters */
    char buf[4096];
    snprintf(buf, sizeof buf,
             "UPDATE StringIds SET value = (%s) || 'A' WHERE value = 'kernel_a';"
             "UPDATE StringIds SET value = (%s) || 'B' WHERE value = 'matmul';"
             "UPDATE NVTX_EVENTS SET text = (%s) || 'A', textId = NULL WHERE rowid = 2;"
             "UPDATE NVTX_EVENTS SET text = (%s) || 'C', textId = NULL WHERE rowid = 4;"
             "UPDATE GTRACE_RUN_CONFIG SET value = (%s) WHERE rowid = 1;",
             sql, sql, sql, sql, sql);
    damage(path, buf);
    damage(other, buf);
    gt_trace *t = open_ok(path, 0), *u = open_ok(other, 0);
    size_t n = 0, m = 0;
    gt_event *k = read_events(t, GT_EV_KERNEL, INT64_MIN, INT64_MAX, &n);
    gt_event *v = read_events(t, GT_EV_NVTX, INT64_MIN, INT64_MAX, &m);
    CU_ASSERT_FATAL(n == N_EACH && m == N_EACH);
    const char *kname = gt_trace_string(t, k[0].u.kernel.short_name);
    const char *oname = gt_trace_string(t, v[0].u.nvtx.text);
    const char *inline_a = gt_trace_string(t, v[1].u.nvtx.text), *inline_c = gt_trace_string(t, v[3].u.nvtx.text);
    CU_ASSERT(strlen(kname) <= 4096 && strlen(oname) <= 4096 && strlen(inline_a) <= 4096);
    CU_ASSERT(strlen(kname) > 4000);
    CU_ASSERT_PTR_NOT_NULL(strstr(kname, "... [2097153 bytes, "));
    CU_ASSERT_STRING_NOT_EQUAL(kname, oname);        /* differ only in their last byte */
    CU_ASSERT_STRING_EQUAL(kname, inline_a);         /* registered or inline, the same text */
    CU_ASSERT_STRING_NOT_EQUAL(inline_a, inline_c);
    CU_ASSERT(strncmp(kname, "\xc3\xa9\xc3\xa9", 4) == 0);
    CU_ASSERT((unsigned char)kname[strstr(kname, "... [") - kname - 1] == 0xa9); /* whole characters */
    gt_event *k2 = read_events(u, GT_EV_KERNEL, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_FATAL(n == N_EACH);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(u, k2[0].u.kernel.short_name), kname);
    free(k);
    free(k2);
    free(v);
    gt_trace_free(u);
    gt_trace_free(t);
    free(other);
    free(path);
}

static void test_store_damage__huge_strings(void)
{
    for (int layout = 0; layout < N_LAYOUTS; layout++)
        huge_strings_in(layout);
}

/* ---- messages ------------------------------------------------------------------- */

/* A damaged schema is quoted by SQLite, newlines and all: the message stays
 * one line that names the file. */
static void test_store_damage__one_line_messages(void)
{
    char *path = make_trace("schema-text.sqlite", CLOSED);
    damage(path, "PRAGMA writable_schema = ON;"
                 "UPDATE sqlite_master SET sql = 'CREATE TABLE StringIds (id INTEGER,\n    \"value\n    TEXT)'"
                 " WHERE name = 'StringIds';");
    expect_refused(path, GT_ERR_CORRUPT, "malformed database schema (StringIds)");
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "unrecognized token: \"\"value TEXT)\""));
    CU_ASSERT_EQUAL(gt_error_set(GT_ERR_CORRUPT, "%s:\n\t  two\r\nlines \n", "x"), GT_ERR_CORRUPT);
    CU_ASSERT_STRING_EQUAL(gt_error_last(), "x: two lines");
    free(path);
}

/* ---- the work budget -------------------------------------------------------------- */

/* A query that would never end runs out of its budget, which grows with the
 * file's size, and fails with a one-line message naming the file; the trace
 * stays usable. (The reader runs no such query on any file: views are
 * refused at open. This drives the budget itself.) */
static void test_store_damage__work_budget(void)
{
    char *path = make_trace("budget.sqlite", CLOSED);
    gt_trace *t = open_ok(path, 0);
    int64_t v = 0;
    bool is_null = false;
    int rc = gt_rd_query_int64(t, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)"
                                  " SELECT count(*) FROM c",
                               &v, &is_null, "counting forever");
    CU_ASSERT_EQUAL(rc, GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), path));
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "counting forever took more work than a file of its size"));
    /* each query has a budget of its own */
    rc = gt_rd_query_int64(t, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100000)"
                              " SELECT count(*) FROM c",
                           &v, &is_null, "counting");
    CU_ASSERT(rc == 0 && v == 100000);
    size_t n = 0;
    gt_event *evs = read_events(t, GT_EV_NVTX, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL(n, N_EACH);
    free(evs);
    gt_trace_free(t);
    free(path);
}

static const gt_test_case cases[] = {
    {"test_store_damage__view_cross_join", test_store_damage__view_cross_join},
    {"test_store_damage__view_recursive", test_store_damage__view_recursive},
    {"test_store_damage__kernel_view", test_store_damage__kernel_view},
    {"test_store_damage__table_shapes", test_store_damage__table_shapes},
    {"test_store_damage__triggers", test_store_damage__triggers},
    {"test_store_damage__wrong_types", test_store_damage__wrong_types},
    {"test_store_damage__extreme_times", test_store_damage__extreme_times},
    {"test_store_damage__end_before_start", test_store_damage__end_before_start},
    {"test_store_damage__nulls", test_store_damage__nulls},
    {"test_store_damage__dangling_string_ids", test_store_damage__dangling_string_ids},
    {"test_store_damage__huge_strings", test_store_damage__huge_strings},
    {"test_store_damage__one_line_messages", test_store_damage__one_line_messages},
    {"test_store_damage__work_budget", test_store_damage__work_budget},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"store_damage", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
