/* writer.c: gt_writer_*, the one way events get into a trace: opening,
 * batches, descriptions (processes, threads, GPUs, callchains, the run's
 * configuration, dropped events, the session start) and closing.
 *
 * One thread writes. Events wait in row buffers (writer_rows.c); strings and
 * kernel launch configurations in dictionaries (writer_dict.c); all of it
 * goes in at commit, one transaction per batch. Every statement is made from
 * the tables' descriptions (columns.c).
 *
 * The file is in WAL mode while written, so every committed batch survives a
 * kill -9; close turns the compact kernel tables into nsys's kernel table,
 * leaves out empty event tables, writes the TARGET_INFO_* rows gtrace knows
 * (gt_schema_finish), builds time indexes on the tables not written in start
 * order, gives back the freed pages (auto_vacuum = INCREMENTAL) and turns it
 * back into one rollback-journal file. NVTX messages go where nsys puts them:
 * registered strings in textId, any other message in text. Failures: a bad
 * argument (GT_ERR_INVALID) rejects that call and leaves the batch open; any
 * other failure (memory, disk, I/O) rolls the open batch back, so the file
 * holds exactly the committed batches, and the writer can begin a new batch.
 * One exception: more than 256 kernels starting in one nanosecond cannot all
 * get an id; the others are committed, the rest counted in
 * GTRACE_DROPPED_EVENTS, and commit says so with GT_ERR_INVALID.
 *
 * This file does not define tables (schema.c, columns.c) or read traces
 * (reader.c). */
#include "config.h"

#include "close_mark.h"
#include "writer_int.h"

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

/* ---- errors ---------------------------------------------------------------- */

/* Drops the open batch after a failure: the file keeps what was committed. */
static int abort_batch(gt_writer *w, int status)
{
    for (int i = 0; i < N_STMTS; i++)
        sqlite3_reset(w->stmts[i]);
    gt_wr_drop_rows(w);
    GT_ASSERT(w->strings.n_durable <= w->strings.n_written && w->launches.n_durable <= w->launches.n_written);
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

/* Everything held in memory goes into the open transaction. */
static int write_pending(gt_writer *w)
{
    int status = gt_wr_flush_rows(w);
    return status == GT_OK ? gt_wr_write_dicts(w) : status;
}

static int exec(gt_writer *w, const char *sql, const char *what)
{
    int rc = sqlite3_exec(w->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? GT_OK : gt_wr_sql_error(w, rc, what);
}

static int begin_txn(gt_writer *w)
{
    /* a ROLLBACK that failed after an earlier failure */
    if (!sqlite3_get_autocommit(w->db) && sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL) != SQLITE_OK)
        return gt_wr_sql_error(w, sqlite3_extended_errcode(w->db), "roll back a failed batch");
    return exec(w, "BEGIN", "begin a batch");
}

static int commit_txn(gt_writer *w)
{
    GT_ASSERT(w->in_batch && !sqlite3_get_autocommit(w->db)); /* a batch is a transaction */
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
    return rc == SQLITE_OK ? GT_OK : gt_wr_sql_error(w, rc, "prepare statements");
}

/* The statements of the descriptions, strings, launches and device memory:
 * INSERTs made from the tables' descriptions. */
static int prepare_all(gt_writer *w)
{
    static const struct {
        stmt_id id;
        const gt_table_desc *table;
        const char *suffix;
    } inserts[] = {
        {ST_STRING, &gt_tab_string_ids, NULL},
        {ST_LAUNCH, &gt_tab_kernel_launches, NULL},
        {ST_GPU_MEMORY, &gt_tab_gpu_memory, NULL},
        {ST_GPU_STACK, &gt_tab_gpu_memory_stacks, NULL},
        {ST_PROCESS, &gt_tab_processes, NULL},
        {ST_THREAD, &gt_tab_thread_names, NULL},
        {ST_GPU, &gt_tab_target_info_gpu, NULL},
        {ST_CALLCHAIN, &gt_tab_callchains, NULL},
        {ST_CONFIG, &gt_tab_run_config, NULL},
        {ST_DROPPED, &gt_tab_dropped_events, " ON CONFLICT (globalPid, kind) DO UPDATE SET count = count + excluded.count"},
        {ST_SESSION, &gt_tab_session_start, NULL},
    };
    int status = GT_OK;
    for (size_t i = 0; i < sizeof inserts / sizeof inserts[0] && status == GT_OK; i++)
        status = gt_wr_prepare_insert(w, inserts[i].table, 1, inserts[i].suffix, &w->stmts[inserts[i].id]);
    if (status == GT_OK)
        status = prepare(w, "SELECT 1 FROM CUDA_CALLCHAINS WHERE id = ? LIMIT 1", &w->stmts[ST_CALLCHAIN_EXISTS]);
    if (status == GT_OK)
        status = prepare(w, "DELETE FROM TARGET_INFO_SESSION_START_TIME", &w->stmts[ST_SESSION_CLEAR]);
    return status == GT_OK ? gt_wr_open_rows(w) : status;
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
        status = w->db ? gt_wr_sql_error(w, rc, "open") : gt_error_set(GT_ERR_NOMEM, "%s: cannot open: out of memory", path);
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
        status = gt_wr_sql_error(w, rc, "create the schema");
        goto cleanup;
    }
    status = exec(w, "COMMIT", "create the schema");
    if (status != GT_OK)
        goto cleanup;
    status = prepare_all(w);
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
    return fail(w, gt_wr_intern(w, s, out_id));
}

int gt_writer_add(gt_writer *w, const gt_event *ev)
{
    if (!w || !ev)
        return gt_error_set(GT_ERR_INVALID, "gt_writer_add: %s", !w ? "no writer" : "no event");
    if (!w->in_batch)
        return gt_error_set(GT_ERR_INVALID, "%s: events are added inside a batch (gt_writer_begin)", w->path);
    /* open since its BEGIN: every failure that ends it early also ends the batch (fail) */
    GT_ASSERT(!sqlite3_get_autocommit(w->db));
    if ((unsigned)ev->kind >= GT_EV_N_KINDS)
        return gt_error_set(GT_ERR_INVALID, "%s: unknown event kind %d", w->path, (int)ev->kind);
    int status = gt_wr_add_event(w, ev);
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
    int rc = gt_wr_step_reset(stmt);
    sqlite3_clear_bindings(stmt);
    if (rc != SQLITE_DONE)
        status = gt_wr_sql_error(w, rc, what);
    return desc_end(w, own, status);
}

int gt_writer_add_process(gt_writer *w, int64_t pid, const char *name)
{
    if (!w)
        return gt_error_set(GT_ERR_INVALID, "gt_writer_add_process: no writer");
    sqlite3_stmt *stmt = w->stmts[ST_PROCESS];
    const gt_process p = {.global_pid = gt_global_pid(pid), .pid = pid, .name = name};
    gt_wr_bind_struct(stmt, &gt_tab_processes, &p);
    return run_desc(w, stmt, "insert a process");
}

int gt_writer_add_thread_name(gt_writer *w, int64_t global_tid, const char *name, int32_t priority)
{
    if (!w || !name)
        return gt_error_set(GT_ERR_INVALID, "gt_writer_add_thread_name: %s", !w ? "no writer" : "no name");
    gt_string_id id;
    int status = gt_wr_intern(w, name, &id);
    if (status != GT_OK)
        return fail(w, status);
    sqlite3_stmt *stmt = w->stmts[ST_THREAD];
    sqlite3_bind_int64(stmt, gt_table_param(&gt_tab_thread_names, "nameId"), id);
    sqlite3_bind_int(stmt, gt_table_param(&gt_tab_thread_names, "priority"), priority);
    sqlite3_bind_int64(stmt, gt_table_param(&gt_tab_thread_names, "globalTid"), global_tid);
    return run_desc(w, stmt, "insert a thread name");
}

int gt_writer_add_gpu(gt_writer *w, const gt_gpu_info *g)
{
    if (!w || !g)
        return gt_error_set(GT_ERR_INVALID, "gt_writer_add_gpu: %s", !w ? "no writer" : "no GPU");
    sqlite3_stmt *stmt = w->stmts[ST_GPU];
    gt_wr_bind_struct(stmt, &gt_tab_target_info_gpu, g);
    /* a serialized GlobalId, as nsys writes it */
    sqlite3_bind_int64(stmt, gt_table_param(&gt_tab_target_info_gpu, "vmId"), (int64_t)GT_VM_ID << 48);
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
        status = gt_wr_sql_error(w, rc, "insert a callchain");
        goto cleanup;
    }
    stmt = w->stmts[ST_CALLCHAIN];
    for (size_t i = 0; i < n_frames; i++) {
        gt_wr_bind_struct(stmt, &gt_tab_callchains, &frames[i]);
        sqlite3_bind_int64(stmt, gt_table_param(&gt_tab_callchains, "id"), callchain_id);
        sqlite3_bind_int64(stmt, gt_table_param(&gt_tab_callchains, "stackDepth"), (int64_t)i);
        rc = gt_wr_step_reset(stmt);
        if (rc != SQLITE_DONE) {
            status = gt_wr_sql_error(w, rc, "insert a callchain");
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
    sqlite3_bind_int64(stmt, gt_table_param(&gt_tab_run_config, "globalPid"), global_pid);
    sqlite3_bind_text(stmt, gt_table_param(&gt_tab_run_config, "key"), key, -1, SQLITE_STATIC);
    bind_text_or_null(stmt, gt_table_param(&gt_tab_run_config, "value"), value);
    return run_desc(w, stmt, "insert the run configuration");
}

int gt_writer_add_dropped(gt_writer *w, int64_t global_pid, gt_event_kind kind, int64_t n_dropped)
{
    if (!w || (unsigned)kind >= GT_EV_N_KINDS || n_dropped < 0)
        return gt_error_set(GT_ERR_INVALID, "gt_writer_add_dropped: %s", !w ? "no writer"
                            : n_dropped < 0 ? "negative count" : "unknown event kind");
    sqlite3_stmt *stmt = w->stmts[ST_DROPPED];
    sqlite3_bind_int64(stmt, gt_table_param(&gt_tab_dropped_events, "globalPid"), global_pid);
    sqlite3_bind_text(stmt, gt_table_param(&gt_tab_dropped_events, "kind"), gt_event_kind_name(kind), -1,
                      SQLITE_STATIC);
    sqlite3_bind_int64(stmt, gt_table_param(&gt_tab_dropped_events, "count"), n_dropped);
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
    int rc = gt_wr_step_reset(w->stmts[ST_SESSION_CLEAR]); /* one row: the last one set */
    if (rc == SQLITE_DONE) {
        sqlite3_stmt *stmt = w->stmts[ST_SESSION];
        sqlite3_bind_int64(stmt, gt_table_param(&gt_tab_session_start, "utcEpochNs"), utc_epoch_ns);
        sqlite3_bind_text(stmt, gt_table_param(&gt_tab_session_start, "utcTime"), utc, -1, SQLITE_STATIC);
        sqlite3_bind_text(stmt, gt_table_param(&gt_tab_session_start, "localTime"), local, -1, SQLITE_STATIC);
        rc = gt_wr_step_reset(stmt);
        sqlite3_clear_bindings(stmt);
    }
    if (rc != SQLITE_DONE)
        status = gt_wr_sql_error(w, rc, "set the session start");
    return desc_end(w, own, status);
}

/* ---- closing --------------------------------------------------------------------- */

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
    gt_wr_ordered_tables(w, ordered, sizeof ordered);
    int rc = gt_schema_finish(w->db);
    if (rc != SQLITE_OK)
        status = gt_wr_sql_error(w, rc, "write nsys's tables");
    for (size_t i = 0; i < gt_schema_n_indexes && status == GT_OK; i++) {
        bool there = false;
        if (gt_schema_indexes[i].nsys_only || in_list(ordered, gt_schema_indexes[i].table))
            continue;
        rc = gt_schema_is_table(w->db, gt_schema_indexes[i].table, &there);
        if (rc != SQLITE_OK)
            status = gt_wr_sql_error(w, rc, "build the time indexes");
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
            status = gt_wr_sql_error(w, rc, "record the tables in time order");
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
                     : gt_wr_sql_error(w, rc, "leave WAL mode");
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
    /* a trace closed whole is marked so (close_mark.c): a reader may then
     * test the mark in place of the full integrity check */
    if (status == GT_OK)
        gt_close_mark_write(w->db, w->path);
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
    gt_wr_free_rows(w);
    if (w->db) {
        if (!sqlite3_get_autocommit(w->db))
            sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(w->db);
    }
    gt_wr_free_dicts(w);
    sqlite3_free(w->path);
    sqlite3_free(w);
}
