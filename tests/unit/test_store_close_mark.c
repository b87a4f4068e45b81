/* test_store_close_mark.c: the mark the writer leaves on a trace it closed
 * whole (close_mark.c), and what the reader makes of it: a file changed in
 * any way since loses it, a marked file that was damaged is still found
 * damaged by the check that runs beside the reading, and what is kept
 * after close (summary.c) is read back only while the mark holds. */
#include "close_mark.h"
#include "gt_store.h"
#include "gt_test.h"
#include "store_check.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A closed trace with a few kernels and NVTX ranges, and `n_big` run
 * configuration entries of 1 MiB each (to make a file of 64 MB and more,
 * whose check runs beside the reading). */
static void write_trace(const char *path, int n_big)
{
    gt_writer *w = NULL;
    gt_string_id name = 0;
    CU_ASSERT_EQUAL_FATAL(gt_writer_open(&w, path, GT_WRITE_OVERWRITE), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "gemm_kernel", &name), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), 0);
    for (int i = 0; i < 200; i++) {
        gt_event ev = {.kind = GT_EV_KERNEL};
        ev.u.kernel = (gt_kernel){.start_ns = 1000 * i, .end_ns = 1000 * i + 500, .global_pid = 7 << 24,
                                  .device_id = 0, .stream_id = 7, .correlation_id = i + 1, .short_name = name,
                                  .demangled_name = name, .grid_x = 1, .grid_y = 1, .grid_z = 1, .block_x = 32,
                                  .block_y = 1, .block_z = 1};
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
    }
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    char *big = n_big ? malloc(1 << 20) : NULL;
    for (int i = 0; i < n_big; i++) {
        char key[32];
        memset(big, 'a' + i % 26, (1 << 20) - 1);
        big[(1 << 20) - 1] = '\0';
        snprintf(key, sizeof key, "filler.%d", i);
        CU_ASSERT_EQUAL_FATAL(gt_writer_add_config(w, (int64_t)1 << 24, key, big), 0); /* not read at open */
    }
    free(big);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0)
        n = ftell(f);
    if (f)
        fclose(f);
    return n;
}

/* One byte of the file, changed in place. */
static void flip_byte(const char *path, long at)
{
    FILE *f = fopen(path, "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fseek(f, at, SEEK_SET), 0);
    int c = fgetc(f);
    CU_ASSERT_EQUAL(fseek(f, at, SEEK_SET), 0);
    fputc(c ^ 0x01, f);
    fclose(f);
}

static int exec_sql(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc;
}

/* A trace closed whole carries a mark that holds, and still reads. */
static void test_store_close_mark__written_at_close(void)
{
    char *path = gt_test_path("marked.sqlite");
    write_trace(path, 0);
    CU_ASSERT_TRUE(gt_close_mark_present(path));
    CU_ASSERT_TRUE(gt_close_mark_holds(path, NULL));
    gt_trace *t = open_ok(path, GT_OPEN_CHECK_LATER);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_KERNEL), 200);
    CU_ASSERT_EQUAL(gt_trace_check(t), 0);
    gt_trace_free(t);
    unlink(path);
    free(path);
}

/* Any change since close breaks the mark: a byte changed outside SQLite, a
 * page added, a write through SQLite (which keeps the file sound but is not
 * the file the writer closed). Files without a mark have none. */
static void test_store_close_mark__changes_break_it(void)
{
    char *path = gt_test_path("changed.sqlite");
    write_trace(path, 0);
    long size = file_size(path);
    CU_ASSERT_FATAL(size > 8192);
    flip_byte(path, size / 2);
    CU_ASSERT_TRUE(gt_close_mark_present(path)); /* the header is as it was */
    CU_ASSERT_FALSE(gt_close_mark_holds(path, NULL));
    flip_byte(path, size / 2);
    CU_ASSERT_TRUE(gt_close_mark_holds(path, NULL)); /* the same bytes again */

    CU_ASSERT_EQUAL(exec_sql(path, "INSERT INTO META_DATA_EXPORT (name, value) VALUES ('x', 'y')"), SQLITE_OK);
    CU_ASSERT_FALSE(gt_close_mark_holds(path, NULL));

    write_trace(path, 0);
    FILE *f = fopen(path, "ab"); /* a page more: the size is not the header's */
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (int i = 0; i < 8192; i++)
        fputc(0, f);
    fclose(f);
    CU_ASSERT_FALSE(gt_close_mark_present(path));
    CU_ASSERT_FALSE(gt_close_mark_holds(path, NULL));

    CU_ASSERT_EQUAL(make_db(path, "CREATE TABLE x(a); INSERT INTO x VALUES (1);"), SQLITE_OK);
    CU_ASSERT_FALSE(gt_close_mark_present(path));
    CU_ASSERT_FALSE(gt_close_mark_holds(path, NULL));
    unlink(path);
    free(path);
}

/* The launcher's entries added after close (gt_trace_add_config) keep the
 * mark of a file whose mark held, and do not give one to a file changed
 * since close. */
static void test_store_close_mark__amend(void)
{
    char *path = gt_test_path("amended.sqlite");
    const char *keys[] = {"launcher.clock"}, *values[] = {"1 2"};
    write_trace(path, 0);
    CU_ASSERT_EQUAL(gt_trace_add_config(path, 0, keys, values, 1), 0);
    CU_ASSERT_TRUE(gt_close_mark_holds(path, NULL));
    gt_trace *t = open_ok(path, 0);
    CU_ASSERT_STRING_EQUAL(gt_trace_meta(t, "launcher.clock") ? gt_trace_meta(t, "launcher.clock") : "", "1 2");
    gt_trace_free(t);

    long size = file_size(path);
    flip_byte(path, size - 100); /* in the last page */
    CU_ASSERT_FALSE(gt_close_mark_holds(path, NULL));
    gt_trace_add_config(path, 0, keys, values, 1); /* may fail on the damage: either way, no mark */
    CU_ASSERT_FALSE(gt_close_mark_holds(path, NULL));
    unlink(path);
    free(path);
}

/* A big marked file (its check runs beside the reading) is checked by its
 * mark; with a page of garbage the mark fails, quick_check runs, and the
 * damage is reported as before. Freed while the check runs, the check
 * stops. */
static void test_store_close_mark__big_file_damage_found(void)
{
    char *path = gt_test_path("big-marked.sqlite");
    write_trace(path, 70);
    long size = file_size(path);
    CU_ASSERT_FATAL(size >= (64L << 20));
    CU_ASSERT_TRUE(gt_close_mark_holds(path, NULL));
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, GT_OPEN_CHECK_LATER), 0);
    CU_ASSERT_TRUE(gt_trace_checked_by_mark(t)); /* waits for the check */
    CU_ASSERT_EQUAL(gt_trace_check(t), 0);
    gt_trace_free(t);
    t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, 0), 0); /* the full check at open */
    CU_ASSERT_FALSE(gt_trace_checked_by_mark(t));
    gt_trace_free(t);

    size_t n = 0;
    unsigned char *data = read_whole(path, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(data);
    memset(data + (n / 2 / 8192) * 8192, 0x5a, 8192); /* a page of a value's chain */
    CU_ASSERT_EQUAL_FATAL(write_file(path, data, n), 0);
    free(data);
    CU_ASSERT_TRUE(gt_close_mark_present(path));
    CU_ASSERT_FALSE(gt_close_mark_holds(path, NULL));
    t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, GT_OPEN_CHECK_LATER), 0);
    CU_ASSERT_FALSE(gt_trace_checked_by_mark(t));
    CU_ASSERT_EQUAL(gt_trace_check(t), GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "damaged"));
    gt_trace_free(t);
    t = NULL;
    if (gt_trace_open(&t, path, GT_OPEN_CHECK_LATER) == 0)
        gt_trace_free(t);
    /* the check at open is always the full one */
    t = NULL;
    CU_ASSERT_EQUAL(gt_trace_open(&t, path, 0), GT_ERR_CORRUPT);
    gt_trace_free(t);
    unlink(path);
    free(path);
}

/* The body under `key` made by `version`, as gt_trace_summary gives it
 * (NUL-terminated copy in buf), or its status. */
static int summary_of(const char *path, const char *key, const char *version, char *buf, size_t cap)
{
    gt_trace *t = open_ok(path, 0);
    void *body = NULL;
    size_t n = 0;
    int rc = gt_trace_summary(t, key, version, &body, &n);
    if (rc == 0 && n < cap) {
        memcpy(buf, body, n);
        buf[n] = '\0';
    }
    free(body);
    gt_trace_free(t);
    return rc;
}

/* Summaries kept after close (gt_trace_add_summary): the file stays marked,
 * an entry is given back only to its version and only while the mark holds,
 * a file changed since gets none, and an nsys export is not written to. */
static void test_store_close_mark__summary(void)
{
    char *path = gt_test_path("summary.sqlite");
    const char *keys[] = {"report.text", "other"};
    const void *bodies[] = {"first\n", "x"};
    const size_t sizes[] = {6, 1};
    char buf[64];
    write_trace(path, 0);
    CU_ASSERT_EQUAL(summary_of(path, "report.text", "v1", buf, sizeof buf), GT_ERR_NOTFOUND); /* none yet */
    CU_ASSERT_EQUAL(gt_trace_add_summary(path, "v1", keys, bodies, sizes, 2), 0);
    CU_ASSERT_TRUE(gt_close_mark_holds(path, NULL));
    CU_ASSERT_EQUAL(summary_of(path, "report.text", "v1", buf, sizeof buf), 0);
    CU_ASSERT_STRING_EQUAL(buf, "first\n");
    CU_ASSERT_EQUAL(summary_of(path, "report.text", "v2", buf, sizeof buf), GT_ERR_VERSION);
    CU_ASSERT_EQUAL(summary_of(path, "missing", "v1", buf, sizeof buf), GT_ERR_NOTFOUND);
    const void *again[] = {"second\n"};
    const size_t again_sizes[] = {7};
    CU_ASSERT_EQUAL(gt_trace_add_summary(path, "v1", keys, again, again_sizes, 1), 0); /* replaces */
    CU_ASSERT_EQUAL(summary_of(path, "report.text", "v1", buf, sizeof buf), 0);
    CU_ASSERT_STRING_EQUAL(buf, "second\n");

    CU_ASSERT_EQUAL(exec_sql(path, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET \"end\" = \"end\" + 1 WHERE rowid = 1"),
                    SQLITE_OK);
    CU_ASSERT_EQUAL(summary_of(path, "report.text", "v1", buf, sizeof buf), GT_ERR_NOTFOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "changed since"));
    CU_ASSERT_EQUAL(gt_trace_add_summary(path, "v1", keys, bodies, sizes, 2), GT_ERR_INVALID);
    CU_ASSERT_FALSE(gt_close_mark_holds(path, NULL));
    CU_ASSERT_EQUAL(summary_of(path, "report.text", "v1", buf, sizeof buf), GT_ERR_NOTFOUND);

    char *fixture = gt_test_fixture("nsys/saxpy-mpi-cuda-nsys2022.2.sqlite");
    char *copy = gt_test_path("nsys-copy.sqlite");
    if (fixture) {
        CU_ASSERT_EQUAL_FATAL(gt_test_copy(fixture, copy), 0);
        size_t n0 = 0, n1 = 0;
        unsigned char *before = read_whole(copy, &n0);
        CU_ASSERT_EQUAL(gt_trace_add_summary(copy, "v1", keys, bodies, sizes, 2), GT_ERR_NOTTRACE);
        unsigned char *after = read_whole(copy, &n1);
        CU_ASSERT_FATAL(before && after);
        CU_ASSERT_TRUE(n0 == n1 && memcmp(before, after, n0) == 0);
        free(before);
        free(after);
        unlink(copy);
    }
    free(fixture);
    free(copy);
    unlink(path);
    free(path);
}

static const gt_test_case cases[] = {
    {"test_store_close_mark__summary", test_store_close_mark__summary},
    {"test_store_close_mark__written_at_close", test_store_close_mark__written_at_close},
    {"test_store_close_mark__changes_break_it", test_store_close_mark__changes_break_it},
    {"test_store_close_mark__amend", test_store_close_mark__amend},
    {"test_store_close_mark__big_file_damage_found", test_store_close_mark__big_file_damage_found},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"store_close_mark", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
