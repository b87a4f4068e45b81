/* test_store_edges.c: time-range reads whose limits fall exactly on rows.
 * gt_iter_new(from, to) hands out the rows that overlap [from, to): a row
 * starting on `from` is in, one starting on `to` out, one ending on `from`
 * out, one ending a nanosecond after it in; for the kernels (found by a
 * binary search over rowids, the table being in start order) and for
 * runtime calls, two rows on each boundary as a busy stream has. And the
 * header checks at their limits: a page count past the end, believed or
 * not by the change counters; a page size under 512 or not a power of 2,
 * or 65536 (written 1); a file cut inside its last page. */
#include "gt_store.h"
#include "gt_store_spill.h"
#include "gt_test.h"
#include "schema.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PID 77
#define N 3000 /* kernels, 1 us apart, two of them on each microsecond */

static char *make_file(void)
{
    char *path = gt_test_path("edges.sqlite");
    gt_writer *w = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_writer_open(&w, path, GT_WRITE_OVERWRITE), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_add_process(w, PID, "edges"), 0);
    /* the launcher's variables: a rank from PMI, and a RANK that is no number */
    CU_ASSERT_EQUAL_FATAL(gt_writer_add_config(w, gt_global_pid(PID), "env.PMI_RANK", "3"), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_add_config(w, gt_global_pid(PID), "env.RANK", "7x"), 0);
    gt_string_id k = 0, call = 0;
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "k", &k), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "cudaLaunchKernel_v7000", &call), 0);
    for (int i = 0; i < N; i++) {
        int64_t t = 1000 + (int64_t)(i / 2) * 1000; /* two launches on each microsecond */
        gt_event ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = GT_EV_API;
        ev.u.api = (gt_api_call){t, t + 400, gt_global_tid(PID, PID), i + 1, call, GT_API_RUNTIME, 0, 0};
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
        memset(&ev, 0, sizeof ev);
        ev.kind = GT_EV_KERNEL;
        gt_kernel *kn = &ev.u.kernel;
        kn->start_ns = t + 500;
        kn->end_ns = t + 900;
        kn->global_pid = gt_global_pid(PID);
        kn->stream_id = 7;
        kn->correlation_id = i + 1;
        kn->demangled_name = kn->short_name = kn->mangled_name = k;
        kn->grid_x = kn->grid_y = kn->grid_z = kn->block_x = kn->block_y = kn->block_z = 1;
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
    }
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    return path;
}

static gt_trace *make_trace(void)
{
    char *path = make_file();
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, 0), 0);
    free(path);
    return t;
}

/* Kernels handed to the writer out of start order (streams completing out
 * of order), two pairs with equal starts: read back by start, and equal
 * starts in the order they were added. */
static void test_store_edges__writer_orders_rows(void)
{
    static const int64_t starts[] = {5000, 5000, 1000, 3000, 3000};
    static const int64_t want_corr[] = {3, 4, 5, 1, 2};
    char *path = gt_test_path("order.sqlite");
    gt_writer *w = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_writer_open(&w, path, GT_WRITE_OVERWRITE), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_add_process(w, PID, "order"), 0);
    gt_string_id k = 0;
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "k", &k), 0);
    for (int i = 0; i < 5; i++) {
        gt_event ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = GT_EV_KERNEL;
        gt_kernel *kn = &ev.u.kernel;
        kn->start_ns = starts[i];
        kn->end_ns = starts[i] + 100;
        kn->global_pid = gt_global_pid(PID);
        kn->stream_id = 7 + i;
        kn->correlation_id = i + 1;
        kn->demangled_name = kn->short_name = kn->mangled_name = k;
        kn->grid_x = kn->grid_y = kn->grid_z = kn->block_x = kn->block_y = kn->block_z = 1;
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
    }
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, 0), 0);
    gt_iter *it = NULL;
    gt_event ev;
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, GT_EV_KERNEL, INT64_MIN, INT64_MAX), 0);
    while (gt_iter_next(it, &ev) > 0 && n < 5) {
        CU_ASSERT_EQUAL(ev.u.kernel.correlation_id, want_corr[n]);
        n++;
    }
    gt_iter_free(it);
    CU_ASSERT_EQUAL(n, 5);
    /* a range read finds them too: the table is in start order */
    CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, GT_EV_KERNEL, 3000, 3001), 0);
    n = 0;
    while (gt_iter_next(it, &ev) > 0)
        CU_ASSERT_EQUAL(ev.u.kernel.correlation_id, want_corr[1 + n++]);
    gt_iter_free(it);
    CU_ASSERT_EQUAL(n, 2);
    gt_trace_free(t);
    free(path);
}

/* RANK is trusted before PMI_RANK, but "7x" is no rank: PMI_RANK's 3 is. */
static void test_store_edges__rank_from_launcher(void)
{
    gt_trace *t = make_trace();
    size_t n = 0;
    const gt_process *p = gt_trace_processes(t, &n);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(p[0].pid, PID);
    CU_ASSERT_EQUAL(p[0].rank, 3);
    gt_trace_free(t);
}

/* A trace of the next schema version is refused as too new. */
static void test_store_edges__next_schema_version(void)
{
    char *path = make_file();
    sqlite3 *db = NULL;
    char sql[160];
    CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &db), SQLITE_OK);
    snprintf(sql, sizeof sql, "UPDATE META_DATA_EXPORT SET value = '%d' WHERE name = 'GTRACE_SCHEMA_VERSION'",
             GT_SCHEMA_VERSION + 1);
    CU_ASSERT_EQUAL(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    CU_ASSERT_EQUAL(sqlite3_changes(db), 1);
    sqlite3_close(db);
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL(gt_trace_open(&t, path, 0), GT_ERR_VERSION);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "update gtrace"));
    free(path);
}

/* Writes `n` bytes at `off` of the file. */
static void patch(const char *path, long off, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fseek(f, off, SEEK_SET), 0);
    CU_ASSERT_EQUAL(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

/* The header's page count is believed only while its two change counters
 * agree (SQLite's rule: a file last written by a version that kept no page
 * count has them differ, and its count is stale). A count past the end with
 * agreeing counters is a truncated file; with differing ones, a good one.
 * A page size below 512 is impossible, and said so. */
static void test_store_edges__header_checks(void)
{
    char *path = make_file();
    const unsigned char many[4] = {0x00, 0x10, 0x00, 0x00}; /* 1M pages */
    const unsigned char counter[4] = {0x7f, 0x00, 0x00, 0x01};
    unsigned char orig[4];
    FILE *f = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fseek(f, 92, SEEK_SET), 0);
    CU_ASSERT_EQUAL(fread(orig, 1, 4, f), 4);
    fclose(f);
    gt_trace *t = NULL;
    patch(path, 28, many, 4);
    CU_ASSERT_EQUAL(gt_trace_open(&t, path, 0), GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "truncated"));
    patch(path, 92, counter, 4); /* "version-valid-for" no longer the change counter */
    int rc = gt_trace_open(&t, path, 0);
    if (rc != 0)
        fprintf(stderr, "stale page count: %s\n", gt_error_last());
    CU_ASSERT_EQUAL(rc, 0);
    gt_trace_free(t);
    t = NULL;
    patch(path, 92, orig, 4);
    const unsigned char p256[2] = {0x01, 0x00};
    patch(path, 16, p256, 2);
    CU_ASSERT_EQUAL(gt_trace_open(&t, path, 0), GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "impossible page size (256)"));
    const unsigned char p3000[2] = {0x0b, 0xb8};
    patch(path, 16, p3000, 2);
    CU_ASSERT_EQUAL(gt_trace_open(&t, path, 0), GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "impossible page size (3000)"));
    free(path);
}

/* A copy cut short inside its last page is truncated, also with an empty
 * -wal beside it (a reader's leftover: no writer, no pages in it). */
static void test_store_edges__cut_inside_last_page(void)
{
    char *path = make_file();
    FILE *f = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(truncate(path, size - 100), 0);
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL(gt_trace_open(&t, path, 0), GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "truncated"));
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", path);
    f = fopen(wal, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fclose(f);
    CU_ASSERT_EQUAL(gt_trace_open(&t, path, 0), GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "truncated"));
    unlink(wal);
    free(path);
}

/* An SQLite file with 64 KiB pages (the header's page size field says 1)
 * is a good file: refused as not a trace, not as damaged. */
static void test_store_edges__page_size_65536(void)
{
    char *path = gt_test_path("big-pages.sqlite");
    sqlite3 *db = NULL;
    CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &db), SQLITE_OK);
    CU_ASSERT_EQUAL(sqlite3_exec(db, "PRAGMA page_size = 65536; CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);",
                                 NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    gt_trace *t = NULL;
    int rc = gt_trace_open(&t, path, 0);
    CU_ASSERT_NOT_EQUAL(rc, 0);
    CU_ASSERT_NOT_EQUAL(rc, GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NULL(strstr(gt_error_last(), "page size"));
    gt_trace_free(t);
    free(path);
}

/* The rows of `kind` overlapping [from, to): how many, the first's and the
 * last's start. */
static int64_t count(gt_trace *t, gt_event_kind kind, int64_t from, int64_t to, int64_t *first, int64_t *last)
{
    gt_iter *it = NULL;
    gt_event ev;
    int64_t n = 0;
    *first = *last = -1;
    CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, kind, from, to), 0);
    while (gt_iter_next(it, &ev) > 0) {
        int64_t s = kind == GT_EV_KERNEL ? ev.u.kernel.start_ns : ev.u.api.start_ns;
        int64_t e = kind == GT_EV_KERNEL ? ev.u.kernel.end_ns : ev.u.api.end_ns;
        CU_ASSERT_TRUE(s < to && e > from);
        if (n++ == 0)
            *first = s;
        *last = s;
    }
    gt_iter_free(it);
    return n;
}

static void test_store_edges__range_limits_on_rows(void)
{
    gt_trace *t = make_trace();
    int64_t first, last;
    /* kernels [t + 500, t + 900) for t = 1000, 2000, ...: two on each */
    CU_ASSERT_EQUAL(count(t, GT_EV_KERNEL, 501500, 601500, &first, &last), 2 * 100);
    CU_ASSERT_EQUAL(first, 501500);
    CU_ASSERT_EQUAL(last, 600500);
    CU_ASSERT_EQUAL(count(t, GT_EV_KERNEL, 501500, 601501, &first, &last), 2 * 101);
    CU_ASSERT_EQUAL(last, 601500);
    /* from on the end of the rows before: they are out; a nanosecond
     * earlier: in */
    CU_ASSERT_EQUAL(count(t, GT_EV_KERNEL, 500900, 601500, &first, &last), 2 * 100);
    CU_ASSERT_EQUAL(first, 501500);
    CU_ASSERT_EQUAL(count(t, GT_EV_KERNEL, 500899, 601500, &first, &last), 2 * 101);
    CU_ASSERT_EQUAL(first, 500500);
    /* one nanosecond: the two rows on it; the gap between rows: none */
    CU_ASSERT_EQUAL(count(t, GT_EV_KERNEL, 1500, 1501, &first, &last), 2);
    CU_ASSERT_EQUAL(count(t, GT_EV_KERNEL, 1900, 2500, &first, &last), 0);
    /* the last rows of the table, and nothing past them */
    int64_t end = 1000 + (N / 2 - 1) * 1000 + 500;
    CU_ASSERT_EQUAL(count(t, GT_EV_KERNEL, end, INT64_MAX, &first, &last), 2);
    CU_ASSERT_EQUAL(count(t, GT_EV_KERNEL, end + 400, INT64_MAX, &first, &last), 0);
    /* runtime calls [t, t + 400): the same limits */
    CU_ASSERT_EQUAL(count(t, GT_EV_API, 501000, 601000, &first, &last), 2 * 100);
    CU_ASSERT_EQUAL(first, 501000);
    CU_ASSERT_EQUAL(last, 600000);
    CU_ASSERT_EQUAL(count(t, GT_EV_API, 500400, 601001, &first, &last), 2 * 101);
    CU_ASSERT_EQUAL(first, 501000);
    gt_trace_free(t);
}

/* gt_pairmap keeps the last put of each key, and says 0 for a key never
 * put; many keys, out of order, go through its page cache to its file. */
static void test_store_edges__pairmap(void)
{
    gt_pairmap *m = NULL;
    int64_t x, y;
    int tag;
    CU_ASSERT_EQUAL_FATAL(gt_pairmap_new(&m), 0);
    CU_ASSERT_EQUAL(gt_pairmap_get(m, 7, &x, &y, &tag), 0);
    for (int64_t k = 0; k < 200000; k++) {
        int64_t key = (k * 7919) % 200000 - 100000; /* negative keys too */
        CU_ASSERT_EQUAL_FATAL(gt_pairmap_put(m, key, key * 3, -key, (int)(k & 3)), 0);
    }
    CU_ASSERT_EQUAL_FATAL(gt_pairmap_put(m, 5, 50, 500, 2), 0); /* put again: replaced */
    CU_ASSERT_EQUAL(gt_pairmap_get(m, 5, &x, &y, &tag), 1);
    CU_ASSERT(x == 50 && y == 500 && tag == 2);
    CU_ASSERT_EQUAL(gt_pairmap_get(m, -99999, &x, &y, &tag), 1);
    CU_ASSERT(x == -299997 && y == 99999);
    CU_ASSERT_EQUAL(gt_pairmap_get(m, 100000, &x, &y, &tag), 0);
    CU_ASSERT(gt_pairmap_get(m, 5, &x, NULL, &tag) < 0);
    CU_ASSERT(gt_pairmap_put(NULL, 1, 1, 1, 0) < 0);
    gt_pairmap_free(m);
    gt_pairmap_free(NULL);
}

static const gt_test_case cases[] = {
    {"test_store_edges__range_limits_on_rows", test_store_edges__range_limits_on_rows},
    {"test_store_edges__header_checks", test_store_edges__header_checks},
    {"test_store_edges__cut_inside_last_page", test_store_edges__cut_inside_last_page},
    {"test_store_edges__page_size_65536", test_store_edges__page_size_65536},
    {"test_store_edges__rank_from_launcher", test_store_edges__rank_from_launcher},
    {"test_store_edges__next_schema_version", test_store_edges__next_schema_version},
    {"test_store_edges__writer_orders_rows", test_store_edges__writer_orders_rows},
    {"test_store_edges__pairmap", test_store_edges__pairmap},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"store_edges", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
