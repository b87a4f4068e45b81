/* reader_check.c: whether a file may be read at all, and how much work
 * reading it may take.
 *
 * Before SQLite sees the file: missing, unreadable, empty, not SQLite,
 * truncated (probe_file). Then its integrity (PRAGMA quick_check, split
 * over two connections for big files, or on a thread of its own with
 * GT_OPEN_CHECK_LATER, where the writer's close mark, when it holds, stands
 * in for it: close_mark.c), and the shape of every table the reader reads: a
 * real table (a view or a virtual table in its place could run any query,
 * one that never ends included), without generated columns, with the
 * columns the reader needs. Last, a budget of SQLite steps per query that
 * grows with the file's size, so that no file, however built, stalls a
 * reader. It does not read events (reader_iter.c).
 */
#include "close_mark.h"
#include "reader_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the file --------------------------------------------------------------- */

/* The work budget of one query, in SQLite virtual-machine steps: a base for
 * small files, and so many steps per byte of the file (and of its log). An
 * honest query reads each row once or twice, and every row takes bytes: the
 * most any query of the reader took was 0.17 steps per byte on bench_report's
 * 3M-event trace and 2.3 on a table of the smallest rows SQLite can store
 * (two one-byte integers). A query that needs 14 times that was built to be
 * slow. */
enum { BUDGET_BASE_OPS = 20 * 1000 * 1000, BUDGET_OPS_PER_BYTE = 32, PROGRESS_PERIOD_OPS = 1000 };

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Checks what can be checked before SQLite sees the file, for the messages:
 * missing, unreadable, empty, not SQLite, truncated. Also tells whether the
 * file is in WAL mode with a write-ahead log beside it (a live or killed
 * gtrace capture), which must be read through SQLite's WAL protocol. */
int gt_rd_probe_file(gt_trace *t)
{
    const char *path = t->path;
    bool *out_live_wal = &t->live_wal;
    int64_t *out_bytes = &t->file_bytes, wal_bytes = 0; /* then the file's and its log's */
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
        if (*out_live_wal)
            wal_bytes = (int64_t)wst.st_size;
        free(wal);
    }
    /* The page count is trustworthy when the two change counters agree, and
     * when no write-ahead log holds pages beyond the file: a checkpoint cut
     * short (a killed capture) has written page 1, which counts the pages
     * still in the log, before the pages after it. */
    uint32_t n_pages = be32(h + 28);
    if (n_pages != 0 && !*out_live_wal && be32(h + 24) == be32(h + 92) &&
        (long long)n_pages * page_bytes > (long long)st.st_size) {
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
    wal_bytes += t->file_bytes;
    t->op_budget = wal_bytes > (INT64_MAX - BUDGET_BASE_OPS) / BUDGET_OPS_PER_BYTE
                       ? INT64_MAX
                       : BUDGET_BASE_OPS + BUDGET_OPS_PER_BYTE * wal_bytes;
cleanup:
    close(fd);
    return rc;
}

/* "file:" URI for `path` (percent-encoded) with a query string. An absolute
 * path gets an empty authority, so "//x/y" is not read as host "x". */
static char *file_uri(const char *path, const char *query)
{
    sbuf b = {0};
    gt_rd_sb_printf(&b, path[0] == '/' ? "file://" : "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("/._-~", *p))
            gt_rd_sb_printf(&b, "%c", *p);
        else
            gt_rd_sb_printf(&b, "%%%02X", *p);
    }
    gt_rd_sb_printf(&b, "%s%s", *query ? "?" : "", query);
    if (b.failed) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* A connection to t's file: read-only (immutable unless a live WAL must be
 * followed), or read-write for adding indexes. Returns an SQLite code; *out
 * may be set (for its message) even when it fails. */
int gt_rd_open_db(const gt_trace *t, bool rw, sqlite3 **out)
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
#ifdef SQLITE_DBCONFIG_DQS_DML
    /* "start" names a column or nothing: never the string 'start' */
    sqlite3_db_config(*out, SQLITE_DBCONFIG_DQS_DML, 0, (int *)NULL);
#endif
    if (t->live_wal || rw)
        sqlite3_busy_timeout(*out, 2000); /* a capture may be writing it */
    /* catches damaged b-tree cells as they are read, for a small cost */
    return sqlite3_exec(*out, "PRAGMA cell_size_check = ON", NULL, NULL, NULL);
}

/* Counts the work of the statement being stepped (gt_rd_step) against the
 * budget; a nonzero return interrupts it (SQLITE_INTERRUPT). */
static int on_progress(void *arg)
{
    gt_trace *t = arg;
    if (!t->ops)
        return 0;
    *t->ops += PROGRESS_PERIOD_OPS;
    if (*t->ops <= t->op_budget)
        return 0;
    t->over_budget = true;
    return 1;
}

int gt_rd_connect_db(gt_trace *t, bool rw)
{
    int orc = gt_rd_open_db(t, rw, &t->db);
    if (orc == SQLITE_OK) {
        sqlite3_progress_handler(t->db, PROGRESS_PERIOD_OPS, on_progress, t);
        return 0;
    }
    int rc = t->db ? gt_rd_sql_fail(t, orc, "opening it") : gt_rd_nomem(t);
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
    int rc = gt_rd_prepare(t, "SELECT name FROM sqlite_master WHERE type = 'table' AND name IS NOT NULL", &st,
                     "checking its integrity");
    if (rc < 0)
        return rc;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        char **tables = gt_rd_grow(w.tables, &cap, w.n_tables + 1, sizeof *w.tables);
        if (tables)
            w.tables = tables;
        if (!name || !tables || !(w.tables[w.n_tables] = strdup(name))) {
            rc = gt_rd_nomem(t);
            goto cleanup;
        }
        w.n_tables++;
    }
    if (step != SQLITE_DONE) {
        rc = gt_rd_sql_fail(t, step, "checking its integrity");
        goto cleanup;
    }
    qsort(w.tables, w.n_tables, sizeof *w.tables, cmp_table_rank);
    pthread_mutex_init(&w.mu, NULL);
    mine = (check_result){t->db, &w, SQLITE_OK, NULL, false};
    other = (check_result){NULL, &w, SQLITE_OK, NULL, false};
    /* without a second connection or thread, one does it all */
    if (w.n_tables > 1 && gt_rd_open_db(t, false, &other.db) == SQLITE_OK)
        started = pthread_create(&th, NULL, check_tables, &other) == 0;
    check_tables(&mine);
    if (started)
        pthread_join(th, NULL);
    pthread_mutex_destroy(&w.mu);
    const check_result *bad = mine.failed ? &mine : other.failed ? &other : NULL;
    if (bad && bad->sqlite_rc != SQLITE_OK)
        rc = gt_rd_sql_fail_msg(t, bad->sqlite_rc, "checking its integrity", bad->problem ? bad->problem : "out of memory");
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

int gt_rd_check_integrity(gt_trace *t)
{
    if (t->file_bytes >= CHECK_SPLIT_BYTES && !t->live_wal)
        return check_split(t);
    int sqlite_rc = SQLITE_OK;
    char *problem = NULL;
    int rc = 0;
    if (quick_check(t->db, "PRAGMA quick_check", &sqlite_rc, &problem) < 0) {
        if (sqlite_rc != SQLITE_OK)
            rc = gt_rd_sql_fail_msg(t, sqlite_rc, "checking its integrity", problem ? problem : "out of memory");
        else
            rc = gt_error_set(GT_ERR_CORRUPT, "%s is damaged: %s", t->path, problem ? problem : "integrity check failed");
    }
    free(problem);
    return rc;
}

/* A file whose close mark holds (close_mark.c) is byte for byte the one
 * gtrace's writer closed whole: hashing it costs a tenth of quick_check.
 * Any other file, a marked one that changed since included, gets
 * quick_check. */
static void *check_later(void *arg)
{
    gt_trace *t = arg;
    if (gt_close_mark_present(t->path) && gt_close_mark_holds(t->path, &t->check_stop)) {
        t->check_by_mark = true;
        return NULL;
    }
    if (atomic_load(&t->check_stop))
        return NULL; /* freed: nobody waits for a verdict */
    t->check_failed = quick_check(t->check_db, "PRAGMA quick_check", &t->check_sqlite_rc, &t->check_problem) < 0;
    return NULL;
}

/* GT_OPEN_CHECK_LATER: starts the whole-file check on a connection and a
 * thread of its own; without them, checks now. The check at open
 * (gt_rd_check_integrity, `gtrace info`) is always quick_check. */
int gt_rd_start_check(gt_trace *t)
{
    if (t->file_bytes < CHECK_SPLIT_BYTES || t->live_wal)
        return gt_rd_check_integrity(t);
    if (gt_rd_open_db(t, false, &t->check_db) == SQLITE_OK &&
        pthread_create(&t->check_thread, NULL, check_later, t) == 0) {
        t->check_running = true;
        return 0;
    }
    sqlite3_close(t->check_db);
    t->check_db = NULL;
    return gt_rd_check_integrity(t);
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
        return gt_rd_sql_fail_msg(t, t->check_sqlite_rc, "checking its integrity",
                            t->check_problem ? t->check_problem : "out of memory");
    return gt_error_set(GT_ERR_CORRUPT, "%s is damaged: %s", t->path,
                        t->check_problem ? t->check_problem : "integrity check failed");
}

/* ---- the shape of the tables read ---------------------------------------- */

/* The description tables and the columns each query of reader.c needs. The
 * event tables come from reader_iter.c's layouts (gt_rd_each_event_table). */
static const struct {
    const char *table;
    const char *columns[4]; /* NULL-terminated */
} description_tables[] = {
    {"META_DATA_EXPORT", {"name", "value"}},
    {"EXPORT_META_DATA", {"name", "value"}},
    {"StringIds", {"id", "value"}},
    {"ThreadNames", {"globalTid", "nameId"}},
    {"PROCESSES", {NULL}},
    {"TARGET_INFO_GPU", {"id"}},
    {"TARGET_INFO_SESSION_START_TIME", {"utcEpochNs"}},
    {"CUDA_CALLCHAINS", {"id", "stackDepth"}},
    {GT_TABLE_RUN_CONFIG, {"globalPid", "key", "value"}},
    {GT_TABLE_DROPPED_EVENTS, {"kind", "count"}},
    {GT_TABLE_SUMMARY, {"key", "gtrace_version", "body"}},
    {GT_TABLE_KERNEL_LAUNCHES, {"id"}},
    {GT_TABLE_GPU_MEMORY_STACKS, {"eventId"}},
};

/* Refuses `table` (when the file has an object of that name) unless it is a
 * real table without generated columns that has every column of `columns`. */
static int check_table(gt_trace *t, const char *table, const char *const *columns)
{
    const db_object *o = gt_rd_find_object(t, table);
    sqlite3_stmt *st = NULL;
    int64_t ops = 0;
    unsigned found = 0; /* bit i: columns[i] is there */
    int rc = 0, step;

    if (!o)
        return 0;
    if (!o->is_table)
        return gt_error_set(GT_ERR_CORRUPT,
                            "%s is not a well-formed trace: %s is a view or a virtual table, not a table "
                            "(gtrace reads only tables)",
                            t->path, o->name);
    rc = gt_rd_prepare(t, "SELECT name, hidden FROM pragma_table_xinfo(?1)", &st, "reading the columns of a table");
    if (rc < 0)
        return rc;
    sqlite3_bind_text(st, 1, o->name, -1, SQLITE_STATIC);
    while ((step = gt_rd_step(t, st, &ops)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        int hidden = sqlite3_column_int(st, 1);
        if (hidden == 2 || hidden == 3) { /* computed on every read, by the file's own expression */
            rc = gt_error_set(GT_ERR_CORRUPT, "%s is not a well-formed trace: %s has a generated column (%s)",
                              t->path, o->name, name ? name : "");
            goto cleanup;
        }
        for (unsigned i = 0; name && columns[i]; i++)
            if (sqlite3_stricmp(name, columns[i]) == 0)
                found |= 1u << i;
    }
    if (step != SQLITE_DONE) {
        rc = gt_rd_sql_fail(t, step, "reading the columns of a table");
        goto cleanup;
    }
    for (unsigned i = 0; columns[i]; i++)
        if (!(found & (1u << i))) {
            rc = gt_error_set(GT_ERR_CORRUPT, "%s is not a well-formed trace: table %s has no column %s", t->path,
                              o->name, columns[i]);
            goto cleanup;
        }
cleanup:
    sqlite3_finalize(st);
    return rc;
}

int gt_rd_check_shapes(gt_trace *t, bool events)
{
    if (events)
        return gt_rd_each_event_table(t, check_table);
    for (size_t i = 0; i < N_OF(description_tables); i++) {
        int rc = check_table(t, description_tables[i].table, description_tables[i].columns);
        if (rc < 0)
            return rc;
    }
    return 0;
}
