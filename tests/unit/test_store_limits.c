/* test_store_limits.c: the store's checks at their limits, one step past
 * them, and on files as they are found, not as the writer leaves them.
 * The writer: a kernel start at -2^55 ns is kept, one nanosecond earlier
 * refused; an NVTX payload kind past the last, a negative dropped count,
 * refused; a session start a nanosecond before the epoch written as the
 * second before it; batches handed over out of start order, within a batch
 * (put in order) and across two (the table is then not listed as in start
 * order, and a range read still finds every row). The reader: a launcher's
 * rank that is no number, whichever variable holds it; a file whose header
 * says another SQLite format; one cut by exactly one page; a WAL-mode file
 * with an empty -wal (read as it is, nothing created beside it) and with
 * the -wal of a killed capture whose checkpoint had written page 1; a
 * table with a STORED generated column; a close mark on a header whose page
 * count SQLite would not believe; a context synchronization, which has no
 * stream, kept out of the streams table; a name of exactly 4096 bytes; a
 * bulk read's NVTX messages, registered and not. */
#include "close_mark.h"
#include "gt_store.h"
#include "gt_store_bulk.h"
#include "gt_test.h"
#include "schema.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PID 4242
#define N_KERNELS 400

static gt_writer *open_writer(const char *path)
{
    gt_writer *w = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_writer_open(&w, path, GT_WRITE_OVERWRITE), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_add_process(w, PID, "train.py"), 0);
    return w;
}

static gt_event kernel_at(int64_t start_ns, gt_string_id name, int64_t correlation)
{
    gt_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = GT_EV_KERNEL;
    gt_kernel *k = &ev.u.kernel;
    k->start_ns = start_ns;
    k->end_ns = start_ns + 700;
    k->global_pid = gt_global_pid(PID);
    k->stream_id = 7;
    k->correlation_id = correlation;
    k->demangled_name = k->short_name = k->mangled_name = name;
    k->grid_x = k->grid_y = k->grid_z = k->block_x = k->block_y = k->block_z = 1;
    return ev;
}

static gt_event api_at(int64_t start_ns, gt_string_id name, int64_t correlation)
{
    gt_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = GT_EV_API;
    ev.u.api = (gt_api_call){start_ns, start_ns + 300, gt_global_tid(PID, PID), correlation, name, GT_API_RUNTIME, 0, 0};
    return ev;
}

/* A closed trace of N_KERNELS kernels and their launches, 1 us apart. */
static char *make_file(const char *name)
{
    char *path = gt_test_path(name);
    gt_writer *w = open_writer(path);
    gt_string_id k = 0, call = 0;
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "ampere_sgemm_128x64_tn", &k), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "cudaLaunchKernel", &call), 0);
    for (int i = 0; i < N_KERNELS; i++) {
        gt_event ev = api_at(1000 + i * 1000, call, i + 1);
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
        ev = kernel_at(1200 + i * 1000, k, i + 1);
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
    }
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    return path;
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

/* The first column of the first row of `sql` as text ("" if none), in buf. */
static const char *query_text(const char *path, const char *sql, char *buf, size_t n)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    buf[0] = '\0';
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_text(st, 0))
        snprintf(buf, n, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return buf;
}

static long long count_rows(gt_trace *t, gt_event_kind kind, int64_t from, int64_t to)
{
    gt_iter *it = NULL;
    gt_event ev;
    long long n = 0;
    CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, kind, from, to), 0);
    while (gt_iter_next(it, &ev) > 0)
        n++;
    gt_iter_free(it);
    return n;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- the writer ------------------------------------------------------------ */

/* Kernel ids are start << 8 | k: starts need 55 bits and a sign. The first
 * start that fits is kept exactly; one nanosecond out is refused and leaves
 * the batch as it was. */
static void test_store_limits__kernel_start_range(void)
{
    const int64_t lowest = -((int64_t)1 << 55);
    char *path = gt_test_path("kernel-range.sqlite");
    gt_writer *w = open_writer(path);
    gt_string_id k = 0;
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "k", &k), 0);
    gt_event ev = kernel_at(lowest, k, 1);
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), 0);
    ev = kernel_at(lowest - 1, k, 2);
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "kernel start -36028797018963969 ns is out of range"));
    ev = kernel_at(-lowest, k, 3);
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_ERR_INVALID);
    ev = kernel_at(-lowest - 1000, k, 4);
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    /* (the reader refuses times past 2^53 ns: the file itself says what was kept) */
    char buf[128];
    CU_ASSERT_STRING_EQUAL(query_text(path, "SELECT group_concat(start || ':' || correlationId, ' ') FROM"
                                            " (SELECT start, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start)",
                                      buf, sizeof buf), "-36028797018963968:1 36028797018962968:4");
    free(path);
}

/* What the writer cannot store is refused with a message, not written as
 * something else: a payload kind past the last one, a negative count of
 * dropped events. */
static void test_store_limits__refused_values(void)
{
    char *path = gt_test_path("refused.sqlite");
    gt_writer *w = open_writer(path);
    gt_string_id text = 0;
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "forward", &text), 0);
    gt_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = GT_EV_NVTX;
    ev.u.nvtx = (gt_nvtx){.start_ns = 100, .end_ns = 900, .event_type = GT_NVTX_PUSHPOP, .text = text,
                          .text_registered = true, .global_tid = gt_global_tid(PID, PID),
                          .payload_kind = (gt_payload_kind)(GT_PAYLOAD_FLOAT + 1)};
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "unknown NVTX payload kind 7"));
    ev.u.nvtx.payload_kind = GT_PAYLOAD_FLOAT;
    ev.u.nvtx.payload.f32 = 0.5f;
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), 0);
    CU_ASSERT_EQUAL(gt_writer_add_dropped(w, gt_global_pid(PID), GT_EV_KERNEL, -1), GT_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "negative count"));
    CU_ASSERT_EQUAL(gt_writer_add_dropped(w, gt_global_pid(PID), GT_EV_KERNEL, 0), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    char buf[64];
    CU_ASSERT_STRING_EQUAL(query_text(path, "SELECT count(*) || ' ' || total(count) FROM GTRACE_DROPPED_EVENTS",
                                      buf, sizeof buf), "1 0.0");
    CU_ASSERT_STRING_EQUAL(query_text(path, "SELECT floatValue FROM NVTX_EVENTS", buf, sizeof buf), "0.5");
    free(path);
}

/* A session that started a nanosecond before the epoch started in the
 * second before it (C's division rounds toward zero; the time is floored). */
static void test_store_limits__session_start_before_epoch(void)
{
    char *path = gt_test_path("session.sqlite");
    gt_writer *w = open_writer(path);
    CU_ASSERT_EQUAL(gt_writer_set_session_start(w, -1), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    char buf[64];
    CU_ASSERT_STRING_EQUAL(query_text(path, "SELECT utcTime FROM TARGET_INFO_SESSION_START_TIME", buf, sizeof buf),
                           "1969-12-31T23:59:59");
    CU_ASSERT_STRING_EQUAL(query_text(path, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME", buf, sizeof buf),
                           "-1");
    w = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_writer_open(&w, path, GT_WRITE_OVERWRITE), 0);
    CU_ASSERT_EQUAL(gt_writer_set_session_start(w, -1000000000), 0); /* exactly a second before */
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    CU_ASSERT_STRING_EQUAL(query_text(path, "SELECT utcTime FROM TARGET_INFO_SESSION_START_TIME", buf, sizeof buf),
                           "1969-12-31T23:59:59");
    free(path);
}

/* Runtime calls handed over latest first (a thread's calls recorded as
 * they end, in reverse) are put in start order within the batch: the table
 * is in start order, listed so, and needs no index. A second batch that
 * starts half a microsecond before the first one's last call makes the
 * table out of order: not listed, and a range read around that call
 * finds both. */
static void test_store_limits__batches_out_of_order(void)
{
    char *path = gt_test_path("batches.sqlite");
    gt_writer *w = open_writer(path);
    gt_string_id call = 0;
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "cudaMemcpyAsync", &call), 0);
    for (int i = 9; i >= 0; i--) {
        gt_event ev = api_at(1000 + i * 1000, call, i + 1);
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
    }
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    char buf[512];
    CU_ASSERT_PTR_NOT_NULL(strstr(query_text(path, "SELECT value FROM META_DATA_EXPORT WHERE name = 'GTRACE_TIME_ORDERED'",
                                             buf, sizeof buf), "CUPTI_ACTIVITY_KIND_RUNTIME"));
    CU_ASSERT_STRING_EQUAL(query_text(path, "SELECT group_concat(correlationId, ',') FROM"
                                            " (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY rowid)",
                                      buf, sizeof buf), "1,2,3,4,5,6,7,8,9,10");

    w = open_writer(path);
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "cudaMemcpyAsync", &call), 0);
    for (int i = 0; i < 10; i++) {
        gt_event ev = api_at(1000 + i * 1000, call, i + 1);
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
    }
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), 0);
    gt_event late = api_at(9500, call, 11); /* 500 ns before the last call of the first batch */
    CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &late), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    query_text(path, "SELECT value FROM META_DATA_EXPORT WHERE name = 'GTRACE_TIME_ORDERED'", buf, sizeof buf);
    CU_ASSERT_PTR_NULL(strstr(buf, "CUPTI_ACTIVITY_KIND_RUNTIME"));
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, 0), 0);
    CU_ASSERT_EQUAL(count_rows(t, GT_EV_API, 9500, 9501), 1);
    CU_ASSERT_EQUAL(count_rows(t, GT_EV_API, 9700, 10001), 2); /* the late call ends at 9800 */
    gt_iter *it = NULL;
    gt_event ev;
    int64_t last = INT64_MIN;
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, GT_EV_API, INT64_MIN, INT64_MAX), 0);
    while (gt_iter_next(it, &ev) > 0) {
        CU_ASSERT_TRUE(ev.u.api.start_ns >= last);
        last = ev.u.api.start_ns;
        n++;
    }
    gt_iter_free(it);
    CU_ASSERT_EQUAL(n, 11);
    gt_trace_free(t);
    free(path);
}

/* ---- the reader -------------------------------------------------------------- */

/* Launchers set several rank variables; one that is no number ("7x", "2 ")
 * is no rank, whichever it is: the next one trusted is used, and a process
 * with no other has no rank. */
static void test_store_limits__rank_not_a_number(void)
{
    char *path = gt_test_path("ranks.sqlite");
    gt_writer *w = open_writer(path);
    CU_ASSERT_EQUAL_FATAL(gt_writer_add_process(w, PID + 1, "train.py"), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_add_process(w, PID + 2, "train.py"), 0);
    /* torchrun's RANK alone, junk */
    CU_ASSERT_EQUAL_FATAL(gt_writer_add_config(w, gt_global_pid(PID), "env.RANK", "7x"), 0);
    /* Open MPI's most trusted variable, junk, beside a good PMI_RANK */
    CU_ASSERT_EQUAL_FATAL(gt_writer_add_config(w, gt_global_pid(PID + 1), "env.OMPI_COMM_WORLD_RANK", "2 "), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_add_config(w, gt_global_pid(PID + 1), "env.PMI_RANK", "5"), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_add_config(w, gt_global_pid(PID + 2), "env.SLURM_PROCID", "6"), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, 0), 0);
    size_t n = 0;
    const gt_process *p = gt_trace_processes(t, &n);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    for (size_t i = 0; i < n; i++) {
        int32_t want = p[i].pid == PID ? -1 : p[i].pid == PID + 1 ? 5 : 6;
        CU_ASSERT_EQUAL(p[i].rank, want);
    }
    gt_trace_free(t);
    free(path);
}

/* SQLite 2 files start "** This file contains an SQLite 2.1 database **";
 * a file that starts "SQLite format 2" is no SQLite 3 database either. */
static void test_store_limits__other_sqlite_format(void)
{
    char *path = make_file("format2.sqlite");
    gt_trace *t = NULL;
    FILE *f = fopen(path, "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fwrite("SQLite format 2", 1, 16, f), 16);
    fclose(f);
    CU_ASSERT_EQUAL(gt_trace_open(&t, path, 0), GT_ERR_NOTTRACE);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "does not start with the SQLite header"));
    free(path);
}

/* A copy cut at a page boundary, one page short of what its header says:
 * truncated, and the message gives both sizes. */
static void test_store_limits__one_page_short(void)
{
    char *path = make_file("page-short.sqlite");
    long long size = gt_test_file_size(path);
    char page[16];
    long long page_bytes = atoll(query_text(path, "PRAGMA page_size", page, sizeof page));
    CU_ASSERT_FATAL(page_bytes >= 512 && size > 2 * page_bytes);
    CU_ASSERT_EQUAL_FATAL(truncate(path, size - page_bytes), 0);
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL(gt_trace_open(&t, path, 0), GT_ERR_CORRUPT);
    char want[160];
    snprintf(want, sizeof want, "is truncated: its header says %lld bytes, the file has %lld", size, size - page_bytes);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), want));
    free(path);
}

/* A trace switched to WAL mode and closed, with an empty -wal beside it (a
 * reader's leftover): no log to follow, so the file is read as it is, and
 * nothing is created beside it (a trace on a read-only share, a
 * colleague's folder). */
static void test_store_limits__empty_wal_beside(void)
{
    char *path = make_file("empty-wal.sqlite");
    char wal[4200], shm[4200], mode[16];
    CU_ASSERT_EQUAL_FATAL(exec_sql(path, "PRAGMA journal_mode = WAL"), SQLITE_OK);
    CU_ASSERT_STRING_EQUAL(query_text(path, "PRAGMA journal_mode", mode, sizeof mode), "wal");
    snprintf(wal, sizeof wal, "%s-wal", path);
    snprintf(shm, sizeof shm, "%s-shm", path);
    unlink(shm);
    FILE *f = fopen(wal, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fclose(f);
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, 0), 0);
    CU_ASSERT_EQUAL(count_rows(t, GT_EV_KERNEL, INT64_MIN, INT64_MAX), N_KERNELS);
    gt_trace_free(t);
    CU_ASSERT_FALSE(exists(shm));
    CU_ASSERT_EQUAL(gt_test_file_size(wal), 0);
    unlink(wal);
    free(path);
}

/* A capture killed while checkpointing: page 1, written first, counts the
 * pages still in the -wal, which the file does not have yet. The log is
 * live: the file is read through it, not refused as truncated. */
static void test_store_limits__killed_checkpoint(void)
{
    char *path = make_file("live.sqlite");
    char *copy = gt_test_path("killed.sqlite");
    char from_wal[4200], to_wal[4200];
    snprintf(from_wal, sizeof from_wal, "%s-wal", path);
    snprintf(to_wal, sizeof to_wal, "%s-wal", copy);
    sqlite3 *db = NULL;
    CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &db), SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;"
                                           "CREATE TABLE pad (x BLOB);"
                                           "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 64)"
                                           " INSERT INTO pad SELECT zeroblob(3000) FROM c;",
                                       NULL, NULL, NULL), SQLITE_OK);
    /* the file and its log as a kill leaves them: the writer still has them open */
    CU_ASSERT_EQUAL_FATAL(gt_test_copy(path, copy), 0);
    CU_ASSERT_EQUAL_FATAL(gt_test_copy(from_wal, to_wal), 0);
    sqlite3_close(db);
    long long size = gt_test_file_size(copy);
    char page[16];
    long long page_bytes = atoll(query_text(copy, "PRAGMA page_size", page, sizeof page));
    CU_ASSERT_FATAL(page_bytes >= 512 && size > 0 && size % page_bytes == 0 && gt_test_file_size(to_wal) > 64 * 3000);
    uint32_t n_pages = (uint32_t)(size / page_bytes) + 64;
    unsigned char count[4] = {n_pages >> 24, n_pages >> 16 & 0xff, n_pages >> 8 & 0xff, n_pages & 0xff};
    FILE *f = fopen(copy, "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fseek(f, 28, SEEK_SET), 0);
    CU_ASSERT_EQUAL(fwrite(count, 1, 4, f), 4);
    fclose(f);
    gt_trace *t = NULL;
    int rc = gt_trace_open(&t, copy, 0);
    if (rc != 0)
        fprintf(stderr, "killed checkpoint: %s\n", gt_error_last());
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL(count_rows(t, GT_EV_KERNEL, INT64_MIN, INT64_MAX), N_KERNELS);
    CU_ASSERT_EQUAL(count_rows(t, GT_EV_API, 1000, 2000), 1);
    gt_trace_free(t);
    free(copy);
    free(path);
}

/* A column STORED by the file's own expression is as much the file's code
 * as a VIRTUAL one: refused. */
static void test_store_limits__stored_generated_column(void)
{
    char *path = make_file("stored.sqlite");
    CU_ASSERT_EQUAL_FATAL(exec_sql(path, "ALTER TABLE ThreadNames RENAME TO tn;"
                                         "CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, g INTEGER,"
                                         " globalTid INTEGER GENERATED ALWAYS AS (g + 1) STORED);"),
                          SQLITE_OK);
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL(gt_trace_open(&t, path, 0), GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "ThreadNames has a generated column (globalTid)"));
    free(path);
}

/* The close mark vouches for a file whose header SQLite's own rule
 * believes: once "version-valid-for" (offset 92) differs from the change
 * counter, as an SQLite too old to keep the page count leaves it, the
 * header's page count is stale and the mark is not there, even though no
 * byte the digest covers changed. The file is still read, after the full
 * check. */
static void test_store_limits__mark_needs_believed_header(void)
{
    char *path = make_file("old-writer.sqlite");
    CU_ASSERT_TRUE_FATAL(gt_close_mark_holds(path, NULL));
    const unsigned char other[4] = {0x00, 0x00, 0x00, 0x01};
    FILE *f = fopen(path, "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fseek(f, 92, SEEK_SET), 0);
    CU_ASSERT_EQUAL(fwrite(other, 1, 4, f), 4);
    fclose(f);
    CU_ASSERT_FALSE(gt_close_mark_present(path));
    CU_ASSERT_FALSE(gt_close_mark_holds(path, NULL));
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, 0), 0);
    CU_ASSERT_EQUAL(count_rows(t, GT_EV_KERNEL, INT64_MIN, INT64_MAX), N_KERNELS);
    gt_trace_free(t);
    free(path);
}

/* cudaDeviceSynchronize is a context synchronization: CUPTI gives it no
 * stream (-1). TARGET_INFO_CUDA_STREAM lists the streams the GPU ran work
 * on, as nsys does: not -1. */
static void test_store_limits__context_sync_no_stream(void)
{
    char *path = gt_test_path("context-sync.sqlite");
    gt_writer *w = open_writer(path);
    gt_string_id k = 0;
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "k", &k), 0);
    gt_event ev = kernel_at(1000, k, 1);
    ev.u.kernel.context_id = 1;
    CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
    memset(&ev, 0, sizeof ev);
    ev.kind = GT_EV_SYNC;
    ev.u.sync = (gt_sync){.start_ns = 2000, .end_ns = 3000, .global_pid = gt_global_pid(PID), .device_id = 0,
                          .context_id = 1, .stream_id = -1, .correlation_id = 2, .sync_type = GT_SYNC_CONTEXT};
    CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    char buf[64];
    CU_ASSERT_STRING_EQUAL(query_text(path, "SELECT group_concat(streamId, ',') FROM TARGET_INFO_CUDA_STREAM", buf,
                                      sizeof buf), "7");
    CU_ASSERT_STRING_EQUAL(query_text(path, "SELECT count(*) FROM TARGET_INFO_CUDA_CONTEXT_INFO", buf, sizeof buf), "1");
    free(path);
}

/* Names are kept up to 4096 bytes (a CUTLASS kernel's demangled name runs
 * to thousands): one of exactly 4096 comes back whole; one byte more is
 * clipped, and says how long it was. */
static void test_store_limits__name_at_limit(void)
{
    char *path = gt_test_path("long-names.sqlite");
    char *name = malloc(4098);
    CU_ASSERT_PTR_NOT_NULL_FATAL(name);
    memset(name, 'x', 4097);
    memcpy(name, "cutlass::Kernel<", 16);
    name[4096] = '\0';
    gt_writer *w = open_writer(path);
    gt_string_id whole = 0, over = 0;
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, name, &whole), 0);
    name[4096] = 'x';
    name[4097] = '\0';
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, name, &over), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, 0), 0);
    const char *a = gt_trace_string(t, whole), *b = gt_trace_string(t, over);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(strlen(a), 4096);
    CU_ASSERT_EQUAL(strncmp(a, name, 4096), 0);
    CU_ASSERT_TRUE(strlen(b) <= 4096);
    CU_ASSERT_PTR_NOT_NULL(strstr(b, "... [4097 bytes, "));
    gt_trace_free(t);
    free(name);
    free(path);
}

/* A bulk read hands out an NVTX message as gt_iter does: a registered
 * string (nvtxDomainRegisterString, nsys's textId) says so; an inline one
 * gets an id of the reader's own. The payload is the first one set. */
static void test_store_limits__bulk_nvtx_messages(void)
{
    char *path = gt_test_path("bulk-nvtx.sqlite");
    gt_writer *w = open_writer(path);
    gt_string_id reg = 0, inl = 0;
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "forward", &reg), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "step 3", &inl), 0);
    gt_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = GT_EV_NVTX;
    ev.u.nvtx = (gt_nvtx){.start_ns = 100, .end_ns = 900, .event_type = GT_NVTX_PUSHPOP, .text = reg,
                          .text_registered = true, .global_tid = gt_global_tid(PID, PID),
                          .payload_kind = GT_PAYLOAD_I64, .payload.i64 = -5};
    CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
    ev.u.nvtx.start_ns = 1000;
    ev.u.nvtx.end_ns = 2000;
    ev.u.nvtx.text = inl;
    ev.u.nvtx.text_registered = false;
    ev.u.nvtx.payload_kind = GT_PAYLOAD_NONE;
    CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    /* a second value column set (a foreign file): the first one counts, as for gt_iter */
    CU_ASSERT_EQUAL_FATAL(exec_sql(path, "UPDATE NVTX_EVENTS SET doubleValue = 2.5 WHERE start = 100"), SQLITE_OK);
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, 0), 0);
    gt_iter *it = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, GT_EV_NVTX, 0, 1000), 0);
    CU_ASSERT_EQUAL_FATAL(gt_iter_next(it, &ev), 1);
    CU_ASSERT_EQUAL(ev.u.nvtx.payload_kind, GT_PAYLOAD_I64);
    gt_iter_free(it);
    gt_bulk *b = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_bulk_new(&b, t, GT_EV_NVTX), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    int n = 0;
    while (gt_bulk_next(b, &ev) > 0) {
        const gt_nvtx *x = &ev.u.nvtx;
        const char *text = gt_trace_string(t, x->text);
        CU_ASSERT_STRING_EQUAL(text ? text : "", x->start_ns == 100 ? "forward" : "step 3");
        CU_ASSERT_EQUAL(x->text_registered, x->start_ns == 100);
        CU_ASSERT_EQUAL(x->payload_kind, x->start_ns == 100 ? GT_PAYLOAD_I64 : GT_PAYLOAD_NONE);
        if (x->start_ns == 100)
            CU_ASSERT_EQUAL(x->payload.i64, -5);
        n++;
    }
    gt_bulk_free(b);
    CU_ASSERT_EQUAL(n, 2);
    gt_trace_free(t);
    free(path);
}

static const gt_test_case cases[] = {
    {"test_store_limits__kernel_start_range", test_store_limits__kernel_start_range},
    {"test_store_limits__refused_values", test_store_limits__refused_values},
    {"test_store_limits__session_start_before_epoch", test_store_limits__session_start_before_epoch},
    {"test_store_limits__batches_out_of_order", test_store_limits__batches_out_of_order},
    {"test_store_limits__rank_not_a_number", test_store_limits__rank_not_a_number},
    {"test_store_limits__other_sqlite_format", test_store_limits__other_sqlite_format},
    {"test_store_limits__one_page_short", test_store_limits__one_page_short},
    {"test_store_limits__empty_wal_beside", test_store_limits__empty_wal_beside},
    {"test_store_limits__killed_checkpoint", test_store_limits__killed_checkpoint},
    {"test_store_limits__stored_generated_column", test_store_limits__stored_generated_column},
    {"test_store_limits__mark_needs_believed_header", test_store_limits__mark_needs_believed_header},
    {"test_store_limits__context_sync_no_stream", test_store_limits__context_sync_no_stream},
    {"test_store_limits__name_at_limit", test_store_limits__name_at_limit},
    {"test_store_limits__bulk_nvtx_messages", test_store_limits__bulk_nvtx_messages},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"store_limits", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
