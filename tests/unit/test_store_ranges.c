/* test_store_ranges.c: time ranges and time order in the reader: ranges over
 * nsys exports and gtrace traces (compact kernels while written, tables in
 * start order without an index once closed), time indexes added on request,
 * and a trace read while its writer still writes (WAL); the rows starting
 * in a range (gt_iter_new_starting) on each. */
#include "gt_store.h"
#include "gt_test.h"
#include "store_check.h"
#include "schema.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- time ranges ------------------------------------------------------------------- */

/* gt_iter_new_starting over [from, to) against filtering every event by its
 * start, order included. */
static void check_starting_range(gt_trace *t, gt_event_kind kind, const gt_event *all, size_t n_all, int64_t from,
                                 int64_t to)
{
    gt_iter *it = NULL;
    gt_event ev;
    size_t j = 0, n = 0;
    bool same = true;
    CU_ASSERT_EQUAL_FATAL(gt_iter_new_starting(&it, t, kind, from, to), 0);
    while (gt_iter_next(it, &ev) == 1) {
        while (j < n_all && (gt_event_start(&all[j]) < from || gt_event_start(&all[j]) >= to))
            j++;
        if (j == n_all || memcmp(&ev, &all[j], sizeof ev) != 0)
            same = false;
        j++;
        n++;
    }
    gt_iter_free(it);
    while (j < n_all && (gt_event_start(&all[j]) < from || gt_event_start(&all[j]) >= to))
        j++;
    if (!same || j < n_all)
        fprintf(stderr, "\n  %s starting in [%lld, %lld): %zu events, not the filter's\n", gt_event_kind_name(kind),
                (long long)from, (long long)to, n);
    CU_ASSERT(same && j >= n_all);
}

/* Rows starting in ranges around some events' starts and ends, and a spread. */
static void check_starting(gt_trace *t, gt_event_kind kind)
{
    size_t n_all = 0;
    gt_event *all = read_events(t, kind, INT64_MIN, INT64_MAX, &n_all);
    for (size_t i = 0; i < n_all; i += n_all / 9 + 1) {
        int64_t s = gt_event_start(&all[i]), e = gt_event_end(&all[i]);
        check_starting_range(t, kind, all, n_all, s, s + 1);
        check_starting_range(t, kind, all, n_all, s - 1, s); /* ends before it starts */
        check_starting_range(t, kind, all, n_all, s - 100000, e);
        check_starting_range(t, kind, all, n_all, e, e + 1000000);
        check_starting_range(t, kind, all, n_all, INT64_MIN, s);
    }
    check_starting_range(t, kind, all, n_all, INT64_MIN, INT64_MAX);
    check_starting_range(t, kind, all, n_all, 5, 5);
    gt_iter *it = NULL;
    CU_ASSERT_EQUAL(gt_iter_new_starting(&it, t, kind, 10, 9), GT_ERR_INVALID);
    CU_ASSERT_PTR_NULL(it);
    free(all);
}

static void test_store_ranges__time_ranges_nsys(void)
{
    const char *fixtures[] = {FIX_2024, FIX_2022};
    for (size_t f = 0; f < 2; f++) {
        char *path = gt_test_fixture(fixtures[f]);
        gt_trace *t = open_ok(path, 0);
        for (int k = 0; k < GT_EV_N_KINDS; k++) {
            check_ranges(t, (gt_event_kind)k);
            check_starting(t, (gt_event_kind)k);
        }
        gt_iter *it = NULL;
        CU_ASSERT_EQUAL(gt_iter_new(&it, t, GT_EV_KERNEL, 10, 9), GT_ERR_INVALID);
        CU_ASSERT_PTR_NULL(it);
        CU_ASSERT_EQUAL(gt_iter_new(&it, t, GT_EV_N_KINDS, 0, 10), GT_ERR_INVALID);
        gt_trace_free(t);
        free(path);
    }
}

/* A hand-made gtrace trace: kernels in GTRACE_KERNELS keyed by start << 8 | k,
 * one far longer than the rest, several sharing a start nanosecond. */
static char *make_gtrace_kernels(void)
{
    char *path = gt_test_path("kernels.gtrace.sqlite");
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    CU_ASSERT_FATAL(path != NULL);
    unlink(path);
    CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &db), SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(gt_schema_create(db), SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db,
                                       "INSERT INTO StringIds VALUES (1, 'gemm'), (2, 'gemm_kernel'), (3, '_Z4gemmv');"
                                       "INSERT INTO GTRACE_KERNEL_LAUNCHES (id, globalPid, deviceId, contextId,"
                                       " demangledName, shortName, mangledName, launchType, cacheConfig,"
                                       " registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,"
                                       " staticSharedMemory, dynamicSharedMemory, localMemoryPerThread,"
                                       " localMemoryTotal, sharedMemoryLimitConfig)"
                                       " VALUES (1, 281474976710656 + (42 << 24), 3, 7, 1, 2, 3, 1, 2, 64, 8, 4, 2,"
                                       " 128, 2, 1, 1024, 2048, 16, 65536, 1);",
                                       NULL, NULL, NULL),
                          SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlite3_prepare_v2(db,
                                             "INSERT INTO GTRACE_KERNELS (id, end, streamId, correlationId, launchId,"
                                             " gridId, graphNodeId) VALUES (?1, ?2, ?3, ?4, 1, ?5, NULL)",
                                             -1, &st, NULL),
                          SQLITE_OK);
    uint64_t x = 12345;
    int64_t start = -5000; /* times may precede the session start */
    for (int i = 0; i < 3000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int same = (i % 50 == 0) ? 3 : 1; /* kernels starting in the same nanosecond */
        for (int k = 0; k < same; k++) {
            int64_t dur = i == 1500 ? 2000000 : (int64_t)(x % 5000);
            sqlite3_bind_int64(st, 1, start * 256 + k);
            sqlite3_bind_int64(st, 2, start + dur);
            sqlite3_bind_int64(st, 3, k + 1);
            sqlite3_bind_int64(st, 4, i * 4 + k);
            sqlite3_bind_int64(st, 5, i * 4 + k + 1);
            CU_ASSERT_EQUAL(sqlite3_step(st), SQLITE_DONE);
            sqlite3_reset(st);
        }
        start += 1 + (int64_t)(x % 3000);
    }
    sqlite3_finalize(st);
    CU_ASSERT_EQUAL(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    return path;
}

static void test_store_ranges__time_ranges_gtrace_kernels(void)
{
    char *path = make_gtrace_kernels();
    gt_trace *t = open_ok(path, 0);
    CU_ASSERT_EQUAL(gt_trace_origin_of(t), GT_ORIGIN_GTRACE);
    CU_ASSERT_STRING_EQUAL(gt_trace_schema_version(t), "1");
    CU_ASSERT_EQUAL(count_of(t, GT_EV_KERNEL), 3000 + 2 * 60);
    size_t n;
    gt_event *evs = read_events(t, GT_EV_KERNEL, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL_FATAL(n, 3120);
    CU_ASSERT(time_ordered(evs, n));
    /* the first three share start -5000 and come out by k */
    const gt_kernel *k = &evs[0].u.kernel;
    CU_ASSERT_EQUAL(k->start_ns, -5000);
    CU_ASSERT_EQUAL(evs[1].u.kernel.start_ns, -5000);
    CU_ASSERT_EQUAL(evs[2].u.kernel.start_ns, -5000);
    CU_ASSERT_EQUAL(k->stream_id, 1);
    CU_ASSERT_EQUAL(evs[1].u.kernel.stream_id, 2);
    CU_ASSERT_EQUAL(evs[2].u.kernel.stream_id, 3);
    CU_ASSERT_EQUAL(evs[2].u.kernel.correlation_id, 2);
    CU_ASSERT_EQUAL(evs[2].u.kernel.grid_id, 3);
    /* the launch configuration comes from GTRACE_KERNEL_LAUNCHES */
    CU_ASSERT_EQUAL(k->global_pid, gt_global_pid(42));
    CU_ASSERT_EQUAL(k->device_id, 3);
    CU_ASSERT_EQUAL(k->context_id, 7);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, k->demangled_name), "gemm");
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, k->short_name), "gemm_kernel");
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, k->mangled_name), "_Z4gemmv");
    CU_ASSERT_EQUAL(k->launch_type, 1);
    CU_ASSERT_EQUAL(k->cache_config, 2);
    CU_ASSERT_EQUAL(k->registers_per_thread, 64);
    CU_ASSERT(k->grid_x == 8 && k->grid_y == 4 && k->grid_z == 2);
    CU_ASSERT(k->block_x == 128 && k->block_y == 2 && k->block_z == 1);
    CU_ASSERT_EQUAL(k->static_shared_bytes, 1024);
    CU_ASSERT_EQUAL(k->dynamic_shared_bytes, 2048);
    CU_ASSERT_EQUAL(k->local_per_thread_bytes, 16);
    CU_ASSERT_EQUAL(k->local_total_bytes, 65536);
    CU_ASSERT_EQUAL(k->shared_limit_config, 1);
    CU_ASSERT_EQUAL(k->graph_node_id, 0);
    /* the long kernel must be found by ranges that start long after it did */
    const gt_event *longest = NULL;
    for (size_t i = 0; i < n; i++)
        if (!longest || evs[i].u.kernel.end_ns - evs[i].u.kernel.start_ns >
                            longest->u.kernel.end_ns - longest->u.kernel.start_ns)
            longest = &evs[i];
    int64_t mid = longest->u.kernel.start_ns + 1000000;
    size_t n_mid;
    gt_event *at_mid = read_events(t, GT_EV_KERNEL, mid, mid + 1, &n_mid);
    bool found = false;
    for (size_t i = 0; i < n_mid; i++)
        found |= memcmp(&at_mid[i], longest, sizeof *longest) == 0;
    CU_ASSERT(found);
    free(at_mid);
    free(evs);
    check_ranges(t, GT_EV_KERNEL);
    check_starting(t, GT_EV_KERNEL); /* keyed by start, not by a start column */
    int64_t s, e;
    CU_ASSERT_EQUAL(gt_trace_time_span(t, &s, &e), 0);
    CU_ASSERT_EQUAL(s, -5000);
    gt_trace_free(t);
    free(path);
}

static void test_store_ranges__add_indexes(void)
{
    const char *fixtures[] = {FIX_2024, FIX_2022};
    for (size_t f = 0; f < 2; f++) {
        char *path = gt_test_fixture(fixtures[f]);
        char *copy = gt_test_path("indexed.sqlite");
        CU_ASSERT_EQUAL_FATAL(gt_test_copy(path, copy), 0);
        CU_ASSERT_FALSE(has_index(copy, "GTRACE_IDX_CUPTI_ACTIVITY_KIND_KERNEL_start"));
        gt_trace *plain = open_ok(path, 0);
        gt_trace *indexed = open_ok(copy, GT_OPEN_ADD_INDEXES);
        CU_ASSERT(has_index(copy, "GTRACE_IDX_CUPTI_ACTIVITY_KIND_KERNEL_start"));
        CU_ASSERT(has_index(copy, "GTRACE_IDX_CUPTI_ACTIVITY_KIND_RUNTIME_start"));
        CU_ASSERT(has_index(copy, "GTRACE_IDX_CUPTI_ACTIVITY_KIND_MEMCPY_start"));
        CU_ASSERT_EQUAL(has_index(copy, "GTRACE_IDX_NVTX_EVENTS_start"), f == 1);
        CU_ASSERT_FALSE(has_index(copy, "GTRACE_IDX_GTRACE_CPU_OPS_start")); /* no such table there */
        CU_ASSERT_FALSE(side_file_exists(copy, "-journal"));
        /* the same answers, served by the indexes */
        for (int k = 0; k < GT_EV_N_KINDS; k++) {
            int64_t s, e;
            CU_ASSERT_EQUAL(gt_trace_time_span(plain, &s, &e), 0);
            int64_t bounds[][2] = {{INT64_MIN, INT64_MAX}, {s + (e - s) / 4, s + (e - s) / 2}, {s, s + 1000000}};
            for (size_t b = 0; b < 3; b++) {
                size_t n1, n2;
                gt_event *a = read_events(plain, (gt_event_kind)k, bounds[b][0], bounds[b][1], &n1);
                gt_event *c = read_events(indexed, (gt_event_kind)k, bounds[b][0], bounds[b][1], &n2);
                CU_ASSERT(n1 == n2 && (n1 == 0 || memcmp(a, c, n1 * sizeof *a) == 0));
                free(a);
                free(c);
            }
        }
        gt_trace_free(indexed);
        gt_trace_free(plain);
        /* a second open finds them there and changes nothing */
        file_id before = identify_file(copy);
        gt_trace_free(open_ok(copy, GT_OPEN_ADD_INDEXES));
        file_id after = identify_file(copy);
        CU_ASSERT_EQUAL(after.hash, before.hash);
        unlink(copy);
        free(copy);
        free(path);
    }
}

/* A capture that is still writing (or was killed): WAL mode with a live -wal. */
static void test_store_ranges__live_wal(void)
{
    char *path = gt_test_path("live.sqlite");
    sqlite3 *w = NULL;
    unlink(path);
    CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &w), SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(
        sqlite3_exec(w,
                     "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;"
                     "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"
                     "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'gtrace'),"
                     " ('GTRACE_SCHEMA_VERSION', '1');"
                     "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
                     "INSERT INTO StringIds VALUES (1, 'cudaMalloc_v3020');"
                     "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,"
                     " eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,"
                     " nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);"
                     "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (10, 20, 0, 5, 1, 1, 0, NULL);",
                     NULL, NULL, NULL),
        SQLITE_OK);
    CU_ASSERT(side_file_exists(path, "-wal"));
    gt_trace *t = open_ok(path, 0);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_API), 1); /* committed, still only in the -wal */
    gt_trace_free(t);
    CU_ASSERT_EQUAL(sqlite3_exec(w, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (30, 40, 0, 5, 2, 1, 0, NULL)",
                                 NULL, NULL, NULL),
                    SQLITE_OK);
    t = open_ok(path, 0);
    size_t n;
    gt_event *evs = read_events(t, GT_EV_API, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL(n, 2);
    if (n == 2)
        CU_ASSERT_STRING_EQUAL(gt_trace_string(t, evs[1].u.api.name), "cudaMalloc_v3020");
    free(evs);
    gt_trace_free(t);
    sqlite3_close(w);
    free(path);
}

/* The writer puts each batch of rows in start order and records the tables
 * whose rows all went in with non-decreasing starts; the reader reads those
 * in rowid order. Either way events come by start, equal starts in the order
 * they were added. */
static void test_store_ranges__time_ordered_tables(void)
{
    char *path = gt_test_path("ordered.sqlite");
    gt_writer *w = NULL;
    gt_string_id name = 0;
    CU_ASSERT_EQUAL_FATAL(gt_writer_open(&w, path, GT_WRITE_OVERWRITE), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "x", &name), 0);
    for (int batch = 0; batch < 3; batch++) {
        CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), 0);
        for (int i = 0; i < 3000; i++) {
            int64_t k = batch * 3000 + i;
            gt_event ev = {.kind = GT_EV_API};
            /* pairs with equal starts, told apart by correlation id */
            ev.u.api = (gt_api_call){1000 + k / 2 * 10, 1000 + k / 2 * 10 + 5, 7, k + 1, name, GT_API_RUNTIME, 0, 0};
            CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
            gt_event nv = {.kind = GT_EV_NVTX};
            /* recorded when they end: the last of a batch started first */
            int64_t s = i == 2999 ? batch * 100000 : batch * 100000 + 10 + i;
            nv.u.nvtx = (gt_nvtx){.start_ns = s, .end_ns = batch * 100000 + 50000, .event_type = GT_NVTX_PUSHPOP,
                                  .text = name, .global_tid = 7, .range_id = k + 1};
            CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &nv), 0);
        }
        CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    }
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    gt_trace *t = open_ok(path, 0);
    const char *ordered = gt_trace_meta(t, "GTRACE_TIME_ORDERED");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ordered);
    CU_ASSERT_PTR_NOT_NULL(strstr(ordered, "CUPTI_ACTIVITY_KIND_RUNTIME"));
    CU_ASSERT_PTR_NULL(strstr(ordered, "NVTX_EVENTS")); /* each batch's last range started first */
    gt_iter *it = NULL;
    gt_event ev;
    int64_t n = 0, last_start = INT64_MIN, last_corr = 0;
    CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, GT_EV_API, INT64_MIN, INT64_MAX), 0);
    while (gt_iter_next(it, &ev) == 1) {
        CU_ASSERT(ev.u.api.start_ns > last_start || (ev.u.api.start_ns == last_start && ev.u.api.correlation_id > last_corr));
        last_start = ev.u.api.start_ns;
        last_corr = ev.u.api.correlation_id;
        n++;
    }
    gt_iter_free(it);
    CU_ASSERT_EQUAL(n, 9000);
    n = 0;
    last_start = INT64_MIN;
    CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, GT_EV_NVTX, INT64_MIN, INT64_MAX), 0);
    while (gt_iter_next(it, &ev) == 1) {
        CU_ASSERT(ev.u.nvtx.start_ns >= last_start);
        last_start = ev.u.nvtx.start_ns;
        n++;
    }
    gt_iter_free(it);
    CU_ASSERT_EQUAL(n, 9000);
    gt_trace_free(t);
    unlink(path);
    free(path);
}

/* A closed trace keeps no index on the start of a table it wrote in start
 * order (kernels always): time ranges are found as rowid ranges, and give
 * what filtering every event gives, equal starts and long kernels included. */
static void test_store_ranges__time_ranges_without_index(void)
{
    char *path = gt_test_path("rowid-ranges.sqlite");
    gt_writer *w = NULL;
    gt_string_id name = 0;
    CU_ASSERT_EQUAL_FATAL(gt_writer_open(&w, path, GT_WRITE_OVERWRITE), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "k", &name), 0);
    int64_t corr = 0;
    for (int batch = 0; batch < 4; batch++) {
        CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), 0);
        for (int i = 0; i < 2500; i++) {
            int64_t base = 100000 + (int64_t)(batch * 2500 + i) * 1000;
            for (int s = 0; s < 2; s++) { /* two streams: starts out of order, some equal */
                gt_event ev = {.kind = GT_EV_KERNEL};
                gt_kernel *k = &ev.u.kernel;
                k->start_ns = s ? base - (i % 3) * 700 : base;
                k->end_ns = k->start_ns + (i % 97 == 0 ? 3000000 : 400 + i % 500);
                k->stream_id = 7 + s;
                k->correlation_id = ++corr;
                k->demangled_name = k->short_name = name;
                k->grid_x = k->grid_y = k->grid_z = k->block_x = k->block_y = k->block_z = 1;
                CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
                gt_event api = {.kind = GT_EV_API};
                api.u.api = (gt_api_call){base - 50 + s, base - 10 + s, 7, corr, name, GT_API_RUNTIME, 0, 0};
                CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &api), 0);
            }
        }
        CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    }
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    CU_ASSERT_FALSE(has_index(path, "GTRACE_IDX_CUPTI_ACTIVITY_KIND_KERNEL_start"));
    CU_ASSERT_FALSE(has_index(path, "GTRACE_IDX_CUPTI_ACTIVITY_KIND_RUNTIME_start"));
    gt_trace *t = open_ok(path, 0);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_KERNEL), 20000);
    check_ranges(t, GT_EV_KERNEL);
    check_ranges(t, GT_EV_API);
    check_starting(t, GT_EV_KERNEL); /* one rowid range, by binary search */
    check_starting(t, GT_EV_API);
    /* a range in the middle holds the kernels of that stretch, in start order */
    size_t n = 0;
    gt_event *evs = read_events(t, GT_EV_KERNEL, 100000 + 5000 * 1000, 100000 + 5010 * 1000, &n);
    CU_ASSERT(n >= 20 && time_ordered(evs, n));
    free(evs);
    gt_trace_free(t);
    unlink(path);
    free(path);
}

static const gt_test_case cases[] = {
    {"test_store_ranges__time_ranges_nsys", test_store_ranges__time_ranges_nsys},
    {"test_store_ranges__time_ranges_gtrace_kernels", test_store_ranges__time_ranges_gtrace_kernels},
    {"test_store_ranges__add_indexes", test_store_ranges__add_indexes},
    {"test_store_ranges__live_wal", test_store_ranges__live_wal},
    {"test_store_ranges__time_ordered_tables", test_store_ranges__time_ordered_tables},
    {"test_store_ranges__time_ranges_without_index", test_store_ranges__time_ranges_without_index},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"store_ranges", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
