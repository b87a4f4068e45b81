/* store_check.c: the reader checks of store_check.h. */
#include "store_check.h"

#include <CUnit/CUnit.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

gt_trace *open_ok(const char *path, unsigned flags)
{
    gt_trace *t = NULL;
    int rc = gt_trace_open(&t, path, flags);
    if (rc != 0)
        fprintf(stderr, "\n  open %s: %s (%s)\n", path, gt_status_name(rc), gt_error_last());
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    return t;
}

gt_event *read_events(gt_trace *t, gt_event_kind kind, int64_t from, int64_t to, size_t *out_n)
{
    gt_iter *it = NULL;
    gt_event *evs = NULL, ev;
    size_t n = 0, cap = 0;
    int rc = gt_iter_new(&it, t, kind, from, to);
    if (rc != 0)
        fprintf(stderr, "\n  iter %s: %s\n", gt_event_kind_name(kind), gt_error_last());
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    while ((rc = gt_iter_next(it, &ev)) == 1) {
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            evs = realloc(evs, cap * sizeof *evs);
            CU_ASSERT_PTR_NOT_NULL_FATAL(evs);
        }
        evs[n++] = ev;
    }
    if (rc != 0)
        fprintf(stderr, "\n  next %s: %s\n", gt_event_kind_name(kind), gt_error_last());
    CU_ASSERT_EQUAL(rc, 0);
    gt_iter_free(it);
    *out_n = n;
    return evs;
}

bool overlaps(const gt_event *ev, int64_t from, int64_t to)
{
    int64_t s = gt_event_start(ev), e = gt_event_end(ev);
    if (s >= to && to != INT64_MAX)
        return false;
    return e > s ? e > from : s >= from;
}

void check_range(gt_trace *t, gt_event_kind kind, const gt_event *all, size_t n_all, int64_t from,
                        int64_t to)
{
    size_t n = 0, j = 0;
    gt_event *got = read_events(t, kind, from, to, &n);
    bool same = true;
    for (size_t i = 0; i < n_all; i++) {
        if (!overlaps(&all[i], from, to))
            continue;
        if (j >= n || memcmp(&got[j], &all[i], sizeof all[i]) != 0)
            same = false;
        j++;
    }
    if (!same || j != n)
        fprintf(stderr, "\n  %s in [%lld, %lld): %zu events, brute force says %zu\n", gt_event_kind_name(kind),
                (long long)from, (long long)to, n, j);
    CU_ASSERT(same && j == n);
    free(got);
}

int64_t count_of(gt_trace *t, gt_event_kind kind)
{
    int64_t n = -1;
    CU_ASSERT_EQUAL(gt_trace_count(t, kind, &n), 0);
    return n;
}

bool time_ordered(const gt_event *evs, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (gt_event_start(&evs[i]) < gt_event_start(&evs[i - 1]))
            return false;
    return true;
}

void check_ranges(gt_trace *t, gt_event_kind kind)
{
    size_t n_all = 0;
    gt_event *all = read_events(t, kind, INT64_MIN, INT64_MAX, &n_all);
    int64_t span_start, span_end;
    CU_ASSERT_EQUAL_FATAL(gt_trace_time_span(t, &span_start, &span_end), 0);
    int64_t len = span_end - span_start + 1;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 40; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t a = span_start - 10 + (int64_t)(x % (uint64_t)(len + 20));
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t b = a + (int64_t)(x % (uint64_t)(len / (1 + i % 7) + 1));
        check_range(t, kind, all, n_all, a, b);
    }
    for (size_t i = 0; i < n_all; i += n_all / 7 + 1) {
        int64_t s = gt_event_start(&all[i]), e = gt_event_end(&all[i]);
        check_range(t, kind, all, n_all, s, s + 1);
        check_range(t, kind, all, n_all, s - 1, s); /* ends just before it */
        check_range(t, kind, all, n_all, e, e + 1000); /* starts at its end */
        check_range(t, kind, all, n_all, e - 1, e);
        check_range(t, kind, all, n_all, INT64_MIN, s);
        check_range(t, kind, all, n_all, s, INT64_MAX);
    }
    check_range(t, kind, all, n_all, INT64_MIN, INT64_MAX);
    check_range(t, kind, all, n_all, span_end + 1, span_end + 100);
    free(all);
}

int make_db(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    char *err = NULL;
    unlink(path);
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK)
        fprintf(stderr, "\n  make_db %s: %s\n", path, err ? err : sqlite3_errmsg(db));
    sqlite3_free(err);
    sqlite3_close(db);
    return rc;
}

int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, n, f);
    return (fclose(f) == 0 && w == n) ? 0 : -1;
}

unsigned char *read_whole(const char *path, size_t *out_n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        *out_n = (size_t)n;
    }
    fclose(f);
    return buf;
}

file_id identify_file(const char *path)
{
    file_id id = {-1, {0, 0}, 0};
    struct stat st;
    size_t n = 0;
    unsigned char *buf = read_whole(path, &n);
    if (stat(path, &st) == 0 && buf) {
        id.size = (long long)st.st_size;
        id.mtime = st.st_mtim;
        id.hash = 1469598103934665603ull;
        for (size_t i = 0; i < n; i++)
            id.hash = (id.hash ^ buf[i]) * 1099511628211ull;
    }
    free(buf);
    return id;
}

bool side_file_exists(const char *path, const char *suffix)
{
    char p[4096];
    snprintf(p, sizeof p, "%s%s", path, suffix);
    return access(p, F_OK) == 0;
}

void check_failure(int rc, const char *path)
{
    bool known = rc == GT_ERR_NOMEM || rc == GT_ERR_IO || rc == GT_ERR_CORRUPT || rc == GT_ERR_NOTTRACE ||
                 rc == GT_ERR_VERSION || rc == GT_ERR_NOTFOUND;
    CU_ASSERT(known);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), path));
    if (!known || !strstr(gt_error_last(), path))
        fprintf(stderr, "\n  bad failure %d: %s\n", rc, gt_error_last());
}

void expect_open_error(const char *path, int status, const char *words)
{
    gt_trace *t = (gt_trace *)(uintptr_t)1;
    int rc = gt_trace_open(&t, path, 0);
    CU_ASSERT_EQUAL(rc, status);
    CU_ASSERT_PTR_NULL(t);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), path));
    if (words)
        CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), words));
    if (rc != status || !strstr(gt_error_last(), path) || (words && !strstr(gt_error_last(), words)))
        fprintf(stderr, "\n  %s: expected %s (\"%s\"), got %s: %s\n", path, gt_status_name(status),
                words ? words : "", gt_status_name(rc), gt_error_last());
    if (rc == 0)
        gt_trace_free(t);
}

int read_everything(const char *path)
{
    gt_trace *t = NULL;
    int first = 0;
    int rc = gt_trace_open(&t, path, 0);
    if (rc < 0) {
        check_failure(rc, path);
        return rc;
    }
    size_t n = 0;
    const gt_process *procs = gt_trace_processes(t, &n);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT_PTR_NOT_NULL(procs[i].name);
    const gt_gpu_info *gpus = gt_trace_gpus(t, &n);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT(strlen(gpus[i].name) + strlen(gpus[i].uuid) < 1u << 30);
    const gt_thread *threads = gt_trace_threads(t, &n);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT_PTR_NOT_NULL(threads[i].name);
    int64_t s = 0, e = 0;
    rc = gt_trace_time_span(t, &s, &e);
    if (rc < 0) {
        check_failure(rc, path);
        first = first ? first : rc;
    }
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        int64_t c;
        rc = gt_trace_count(t, (gt_event_kind)k, &c);
        if (rc < 0) {
            check_failure(rc, path);
            first = first ? first : rc;
        }
        for (int pass = 0; pass < 2; pass++) {
            gt_iter *it = NULL;
            gt_event ev;
            rc = pass ? gt_iter_new(&it, t, (gt_event_kind)k, s + (e - s) / 3, e - (e - s) / 3)
                      : gt_iter_new(&it, t, (gt_event_kind)k, INT64_MIN, INT64_MAX);
            while (rc == 0 && (rc = gt_iter_next(it, &ev)) == 1) {
                if (k == GT_EV_NVTX)
                    CU_ASSERT_PTR_NOT_NULL(gt_trace_string(t, ev.u.nvtx.text));
                if (k == GT_EV_KERNEL)
                    CU_ASSERT_PTR_NOT_NULL(gt_trace_string(t, ev.u.kernel.short_name));
                rc = 0;
            }
            if (rc < 0) {
                check_failure(rc, path);
                first = first ? first : rc;
            }
            gt_iter_free(it);
        }
    }
    const gt_frame *frames;
    rc = gt_trace_callchain(t, 1, &frames, &n);
    if (rc < 0 && rc != GT_ERR_NOTFOUND) {
        check_failure(rc, path);
        first = first ? first : rc;
    }
    gt_trace_free(t);
    return first;
}

bool has_index(const char *path, const char *name)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    bool found = false;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?1", -1, &st, NULL) ==
            SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return found;
}
