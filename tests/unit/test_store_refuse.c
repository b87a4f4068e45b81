/* test_store_refuse.c: files the reader refuses, with a clear message and no
 * crash: odd and missing paths, not SQLite, foreign SQLite, too-new schemas,
 * truncated and corrupted files, and the checks of big files. */
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

/* Paths are given to SQLite as URIs: characters that mean something there
 * (?, #, %, spaces, a leading //) must still name the file. */
static void test_store_refuse__odd_paths(void)
{
    char *fix = gt_test_fixture(FIX_2022);
    char *odd = gt_test_path("a trace?mode=rw#1 100%.sqlite");
    CU_ASSERT_EQUAL_FATAL(gt_test_copy(fix, odd), 0);
    gt_trace *t = open_ok(odd, 0);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_KERNEL), 5);
    gt_trace_free(t);

    char slashed[4096];
    snprintf(slashed, sizeof slashed, "/%s", odd); /* "//tmp/...": not a URI authority */
    t = open_ok(slashed, 0);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_NVTX), 24);
    gt_trace_free(t);

    char cwd[4096];
    CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
    CU_ASSERT_EQUAL_FATAL(chdir(gt_test_tmpdir()), 0);
    t = open_ok("a trace?mode=rw#1 100%.sqlite", 0);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_MEMCPY), 15);
    gt_trace_free(t);
    expect_open_error("a trace?mode=rw#1 100%", GT_ERR_NOTFOUND, "does not exist");
    CU_ASSERT_EQUAL(chdir(cwd), 0);
    free(odd);
    free(fix);
}

/* ---- bad input ------------------------------------------------------------------------- */

static void test_store_refuse__missing_and_not_files(void)
{
    char *missing = gt_test_path("no-such-trace.sqlite");
    expect_open_error(missing, GT_ERR_NOTFOUND, "does not exist");
    char *in_missing_dir = gt_test_path("no-such-dir/trace.sqlite");
    expect_open_error(in_missing_dir, GT_ERR_NOTFOUND, NULL);
    expect_open_error(gt_test_tmpdir(), GT_ERR_IO, "directory");
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL(gt_trace_open(&t, NULL, 0), GT_ERR_INVALID);
    CU_ASSERT_EQUAL(gt_trace_open(NULL, missing, 0), GT_ERR_INVALID);
    char *fix = gt_test_fixture(FIX_2022);
    CU_ASSERT_EQUAL(gt_trace_open(&t, fix, 0x80), GT_ERR_INVALID);
    CU_ASSERT_PTR_NULL(t);
    if (geteuid() != 0) { /* root reads everything */
        char *locked = gt_test_path("locked.sqlite");
        CU_ASSERT_EQUAL(gt_test_copy(fix, locked), 0);
        chmod(locked, 0);
        expect_open_error(locked, GT_ERR_IO, "cannot be read");
        free(locked);
    }
    gt_trace_free(NULL);
    gt_iter_free(NULL);
    free(fix);
    free(in_missing_dir);
    free(missing);
}

static void test_store_refuse__not_sqlite(void)
{
    char *empty = gt_test_path("empty.sqlite");
    CU_ASSERT_EQUAL_FATAL(write_file(empty, "", 0), 0);
    expect_open_error(empty, GT_ERR_NOTTRACE, "not an SQLite database");
    CU_ASSERT_EQUAL(gt_test_file_size(empty), 0); /* SQLite would have made it a database */

    char *text = gt_test_path("notes.txt");
    const char *words = "This is a text file, not a trace.\nIt has several lines.\n";
    CU_ASSERT_EQUAL_FATAL(write_file(text, words, strlen(words)), 0);
    expect_open_error(text, GT_ERR_NOTTRACE, "is not an SQLite database");

    char *random = gt_test_path("random.bin");
    unsigned char buf[8192];
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    CU_ASSERT_EQUAL_FATAL(write_file(random, buf, sizeof buf), 0);
    expect_open_error(random, GT_ERR_NOTTRACE, "is not an SQLite database");
    /* random bytes behind a valid magic: damaged, not foreign */
    memcpy(buf, "SQLite format 3", 16);
    CU_ASSERT_EQUAL_FATAL(write_file(random, buf, sizeof buf), 0);
    expect_open_error(random, GT_ERR_CORRUPT, NULL);
    free(random);
    free(text);
    free(empty);
}

static void test_store_refuse__foreign_sqlite(void)
{
    char *path = gt_test_path("unrelated.sqlite");
    CU_ASSERT_EQUAL_FATAL(make_db(path, "CREATE TABLE recipes (name TEXT, minutes INTEGER);"
                                        "INSERT INTO recipes VALUES ('bread', 240);"),
                          SQLITE_OK);
    expect_open_error(path, GT_ERR_NOTTRACE, "neither a gtrace trace nor an Nsight Systems export");

    CU_ASSERT_EQUAL_FATAL(make_db(path, "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"
                                        "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'Other Profiler');"
                                        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"),
                          SQLITE_OK);
    expect_open_error(path, GT_ERR_NOTTRACE, "Other Profiler");

    CU_ASSERT_EQUAL_FATAL(make_db(path, "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"
                                        "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'),"
                                        " ('EXPORT_SCHEMA_VERSION', '3.13.2');"),
                          SQLITE_OK);
    expect_open_error(path, GT_ERR_NOTTRACE, "StringIds");

    /* an empty database is a valid SQLite file with nothing in it */
    CU_ASSERT_EQUAL_FATAL(make_db(path, "PRAGMA user_version = 3; CREATE TABLE x(a); DROP TABLE x;"), SQLITE_OK);
    expect_open_error(path, GT_ERR_NOTTRACE, NULL);
    free(path);
}

static void test_store_refuse__newer_schema(void)
{
    char *path = gt_test_path("future.sqlite");
    CU_ASSERT_EQUAL_FATAL(make_db(path, "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"
                                        "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'gtrace'),"
                                        " ('EXPORT_SCHEMA_VERSION', '3.13.2'), ('GTRACE_SCHEMA_VERSION', '999');"
                                        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"),
                          SQLITE_OK);
    expect_open_error(path, GT_ERR_VERSION, "999");

    CU_ASSERT_EQUAL_FATAL(make_db(path, "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"
                                        "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'gtrace'),"
                                        " ('GTRACE_SCHEMA_VERSION', 'two');"),
                          SQLITE_OK);
    expect_open_error(path, GT_ERR_VERSION, "GTRACE_SCHEMA_VERSION");

    CU_ASSERT_EQUAL_FATAL(make_db(path, "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"
                                        "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'),"
                                        " ('EXPORT_SCHEMA_VERSION', '5.0.0');"
                                        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"),
                          SQLITE_OK);
    expect_open_error(path, GT_ERR_VERSION, "5.0.0");

    /* this build's own version opens */
    char sql[512];
    snprintf(sql, sizeof sql,
             "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"
             "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'gtrace'), ('GTRACE_SCHEMA_VERSION', '%d');",
             GT_SCHEMA_VERSION);
    CU_ASSERT_EQUAL_FATAL(make_db(path, sql), SQLITE_OK);
    gt_trace *t = open_ok(path, 0);
    CU_ASSERT_EQUAL(gt_trace_origin_of(t), GT_ORIGIN_GTRACE);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_KERNEL), 0);
    gt_trace_free(t);
    free(path);
}

static void test_store_refuse__truncated(void)
{
    char *fix = gt_test_fixture(FIX_2024);
    char *path = gt_test_path("truncated.sqlite");
    size_t size = 0;
    unsigned char *data = read_whole(fix, &size);
    CU_ASSERT_FATAL(data != NULL && size > 65536);
    const size_t offsets[] = {1,        15,       16,       50,       99,          100,        101,
                              511,      512,      4095,     4096,     4097,        8192,       12295,
                              size / 8, size / 4, size / 3, size / 2, 2 * size / 3, 3 * size / 4, size - 4096,
                              size - 4095, size - 100, size - 1};
    for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
        CU_ASSERT_EQUAL_FATAL(write_file(path, data, offsets[i]), 0);
        int expected = offsets[i] < 16 ? GT_ERR_NOTTRACE : GT_ERR_CORRUPT;
        expect_open_error(path, expected, offsets[i] < 16 ? NULL : "truncated");
        CU_ASSERT_EQUAL(read_everything(path), expected);
    }
    free(data);
    free(path);
    free(fix);
}

/* Flips bytes all over a copy of each fixture: every open and read must fail
 * cleanly or give data; damage to the structure must be found. */
static void test_store_refuse__flipped_bytes(void)
{
    const char *fixtures[] = {FIX_2024, FIX_2022};
    for (size_t f = 0; f < 2; f++) {
        char *fix = gt_test_fixture(fixtures[f]);
        char *path = gt_test_path("flipped.sqlite");
        size_t size = 0, n_offsets = 0, n_failed = 0;
        unsigned char *data = read_whole(fix, &size);
        CU_ASSERT_FATAL(data != NULL && size > 65536);
        size_t offsets[400];
        for (size_t o = 0; o < 100; o += 3) /* the header */
            offsets[n_offsets++] = o;
        for (size_t page = 1; page * 4096 < size; page += 9) /* b-tree page headers and cell pointers */
            for (size_t o = 0; o < 12; o += 3)
                offsets[n_offsets++] = page * 4096 + o;
        uint64_t x = 0x2545F4914F6CDD1Dull + f;
        while (n_offsets < sizeof offsets / sizeof offsets[0] - 8) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            offsets[n_offsets++] = (size_t)(x % size);
        }
        for (size_t o = 1; o <= 8; o++) /* the last page */
            offsets[n_offsets++] = size - o * 500;
        for (size_t i = 0; i < n_offsets; i++) {
            static const unsigned char masks[] = {0xff, 0x01, 0x80, 0x10};
            unsigned char saved = data[offsets[i]];
            data[offsets[i]] ^= masks[i % 4];
            CU_ASSERT_EQUAL_FATAL(write_file(path, data, size), 0);
            data[offsets[i]] = saved;
            n_failed += read_everything(path) != 0;
        }
        /* a page of garbage in the middle: quick_check finds it */
        memset(data + (size / 2 / 4096) * 4096, 0x5a, 4096);
        CU_ASSERT_EQUAL_FATAL(write_file(path, data, size), 0);
        expect_open_error(path, GT_ERR_CORRUPT, "damaged");
        CU_ASSERT(n_failed > 0);
        fprintf(stderr, "(%zu of %zu flips refused) ", n_failed, n_offsets);
        free(data);
        free(path);
        free(fix);
    }
}

/* Files of 64 MB and more are checked table by table on two connections, or
 * beside the reading (GT_OPEN_CHECK_LATER): a damaged page is found either
 * way; gt_trace_reopen gives a second handle without a second check. */
static void test_store_refuse__big_file_checks(void)
{
    char *path = gt_test_path("big.sqlite");
    char sql[1024];
    snprintf(sql, sizeof sql,
             "PRAGMA page_size = 4096;"
             "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"
             "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'gtrace'), ('GTRACE_SCHEMA_VERSION', '%d');"
             "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
             "INSERT INTO StringIds VALUES (1, 'kept');"
             "CREATE TABLE filler (id INTEGER PRIMARY KEY, x BLOB);"
             "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 70)"
             " INSERT INTO filler SELECT i, zeroblob(1048576) FROM n;",
             GT_SCHEMA_VERSION);
    CU_ASSERT_EQUAL_FATAL(make_db(path, sql), SQLITE_OK);
    size_t size = 0;
    unsigned char *data = read_whole(path, &size);
    CU_ASSERT_FATAL(data != NULL && size >= (64u << 20));

    gt_trace *t = open_ok(path, 0), *t2 = NULL;
    CU_ASSERT_EQUAL(gt_trace_reopen(&t2, t), 0);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t2, 1), "kept");
    CU_ASSERT_EQUAL(gt_trace_origin_of(t2), GT_ORIGIN_GTRACE);
    gt_trace_free(t2);
    CU_ASSERT_EQUAL(gt_trace_check(t), 0);
    gt_trace_free(t);
    t = NULL;
    CU_ASSERT_EQUAL(gt_trace_open(&t, path, GT_OPEN_CHECK_LATER), 0);
    CU_ASSERT_EQUAL(gt_trace_check(t), 0);
    CU_ASSERT_EQUAL(gt_trace_check(t), 0); /* the verdict stays */
    gt_trace_free(t);

    /* a page of garbage in the middle (the chain of a blob) */
    memset(data + (size / 2 / 4096) * 4096, 0x5a, 4096);
    CU_ASSERT_EQUAL_FATAL(write_file(path, data, size), 0);
    expect_open_error(path, GT_ERR_CORRUPT, "damaged");
    t = NULL;
    CU_ASSERT_EQUAL(gt_trace_open(&t, path, GT_OPEN_CHECK_LATER), 0);
    CU_ASSERT_EQUAL(gt_trace_check(t), GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "damaged"));
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), path));
    CU_ASSERT_EQUAL(gt_trace_check(t), GT_ERR_CORRUPT);
    gt_trace_free(t);
    /* freed while its check runs: the check stops */
    t = NULL;
    CU_ASSERT_EQUAL(gt_trace_open(&t, path, GT_OPEN_CHECK_LATER), 0);
    gt_trace_free(t);
    free(data);
    unlink(path);
    free(path);
}

static const gt_test_case cases[] = {
    {"test_store_refuse__odd_paths", test_store_refuse__odd_paths},
    {"test_store_refuse__missing_and_not_files", test_store_refuse__missing_and_not_files},
    {"test_store_refuse__not_sqlite", test_store_refuse__not_sqlite},
    {"test_store_refuse__foreign_sqlite", test_store_refuse__foreign_sqlite},
    {"test_store_refuse__newer_schema", test_store_refuse__newer_schema},
    {"test_store_refuse__truncated", test_store_refuse__truncated},
    {"test_store_refuse__flipped_bytes", test_store_refuse__flipped_bytes},
    {"test_store_refuse__big_file_checks", test_store_refuse__big_file_checks},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"store_refuse", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
