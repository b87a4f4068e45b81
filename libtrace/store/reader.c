/* reader.c: the reading half of the store: opening a trace (gt_trace_*),
 * its descriptions and strings.
 *
 * Opens a gtrace trace or an Nsight Systems SQLite export (schema 3.x with
 * META_DATA_EXPORT and ENUM_* tables, 2.x with EXPORT_META_DATA), has it
 * checked before trusting it (reader_check.c: file header, PRAGMA
 * quick_check, the shape of the tables it reads, a bound on the work of
 * every query), identifies it by product and schema version, and loads the
 * small description tables (strings, metadata, processes, threads, GPUs)
 * once. Counting and iterating events is reader_iter.c.
 *
 * It never changes a byte of the file it reads: rollback-journal files (nsys
 * exports, finished gtrace traces) are opened `immutable`, so SQLite takes no
 * locks and creates no side files, and nothing it runs writes, so no trigger
 * of the file can fire. The one exception is GT_OPEN_ADD_INDEXES, where the
 * caller asks for time indexes to be written into the file (CREATE INDEX
 * fires no trigger either). It does not write traces (writer.c) nor define
 * their tables (columns.c, schema.c). The helpers the reader's files share
 * are in reader_base.c, below everything else.
 */
#include "reader_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The field list of a description table (columns.c). */
enum { MAX_DESC_FIELDS = 48 };
static size_t fields_of(const gt_table_desc *table, field out[MAX_DESC_FIELDS])
{
    size_t n = 0;
    gt_table_fields(table, false, out, &n, MAX_DESC_FIELDS);
    return n;
}

/* ---- opening --------------------------------------------------------------- */

static int load_objects(gt_trace *t)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc = gt_rd_prepare(t,
                     "SELECT name, type = 'table' AND rootpage > 0 AND "
                     "coalesce(ltrim(substr(sql, 7), ' ' || char(9, 10, 13)) NOT LIKE 'VIRTUAL%', 1), "
                     "coalesce(sql LIKE '%WITHOUT%ROWID%', 0) FROM sqlite_master "
                     "WHERE type IN ('table', 'view') AND name IS NOT NULL",
                     &st, "reading its list of tables");
    if (rc < 0)
        return rc;
    free(t->objects);
    t->objects = NULL;
    t->n_objects = 0;
    int step;
    int64_t ops = 0;
    while ((step = gt_rd_step(t, st, &ops)) == SQLITE_ROW) {
        const unsigned char *name = sqlite3_column_text(st, 0);
        db_object *objects = gt_rd_grow(t->objects, &cap, t->n_objects + 1, sizeof *t->objects);
        if (!name || !objects) {
            rc = gt_rd_nomem(t);
            goto cleanup;
        }
        t->objects = objects;
        db_object *o = &t->objects[t->n_objects];
        o->name = gt_rd_arena_text(t, (const char *)name, (size_t)sqlite3_column_bytes(st, 0), VALUE_MAX_BYTES);
        if (!o->name) {
            rc = gt_rd_nomem(t);
            goto cleanup;
        }
        o->is_table = sqlite3_column_int(st, 1) != 0;
        o->without_rowid = sqlite3_column_int(st, 2) != 0;
        t->n_objects++;
    }
    if (step != SQLITE_DONE)
        rc = gt_rd_sql_fail(t, step, "reading its list of tables");
cleanup:
    sqlite3_finalize(st);
    return rc;
}

/* Appends name/value rows of `sql` to t->meta. */
static int load_meta_rows(gt_trace *t, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int rc = gt_rd_prepare(t, sql, &st, "reading its metadata");
    if (rc < 0)
        return rc;
    int step;
    int64_t ops = 0;
    while ((step = gt_rd_step(t, st, &ops)) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 0) == SQLITE_NULL)
            continue;
        meta_entry *meta = gt_rd_grow(t->meta, &t->cap_meta, t->n_meta + 1, sizeof *t->meta);
        if (!meta) {
            rc = gt_rd_nomem(t);
            goto cleanup;
        }
        t->meta = meta;
        const unsigned char *name = sqlite3_column_text(st, 0);
        const unsigned char *value = sqlite3_column_text(st, 1);
        meta_entry *e = &t->meta[t->n_meta];
        e->name = name ? gt_rd_arena_text(t, (const char *)name, (size_t)sqlite3_column_bytes(st, 0), VALUE_MAX_BYTES)
                       : NULL;
        e->value = gt_rd_arena_text(t, value ? (const char *)value : "", value ? (size_t)sqlite3_column_bytes(st, 1) : 0,
                                    VALUE_MAX_BYTES);
        if (!e->name || !e->value) {
            rc = gt_rd_nomem(t);
            goto cleanup;
        }
        t->n_meta++;
    }
    if (step != SQLITE_DONE)
        rc = gt_rd_sql_fail(t, step, "reading its metadata");
cleanup:
    sqlite3_finalize(st);
    return rc;
}

static int load_meta(gt_trace *t)
{
    int rc = 0;
    if (gt_rd_find_table(t, "META_DATA_EXPORT"))
        rc = load_meta_rows(t, "SELECT name, value FROM META_DATA_EXPORT");
    if (rc == 0 && gt_rd_find_table(t, "EXPORT_META_DATA"))
        rc = load_meta_rows(t, "SELECT name, value FROM EXPORT_META_DATA");
    return rc;
}

/* gtrace's run configuration of the whole trace (pid 0) answers gt_trace_meta
 * after the export metadata. */
static int load_run_config(gt_trace *t)
{
    if (!gt_rd_find_table(t, GT_TABLE_RUN_CONFIG))
        return 0;
    return load_meta_rows(t, "SELECT \"key\", \"value\" FROM " GT_TABLE_RUN_CONFIG " WHERE \"globalPid\" = 0");
}

/* Each process's rank in a distributed job, from the launcher variables the
 * capture recorded (env.* rows of GTRACE_RUN_CONFIG). Launchers set several:
 * rows come least trusted first, so the most trusted one a process has is
 * written last. */
static int load_process_ranks(gt_trace *t)
{
    for (size_t i = 0; i < t->n_processes; i++)
        t->processes[i].rank = -1;
    if (!gt_rd_find_table(t, GT_TABLE_RUN_CONFIG) || t->n_processes == 0)
        return 0;
    sqlite3_stmt *st;
    int rc = gt_rd_prepare(t, "SELECT \"globalPid\", \"value\" FROM " GT_TABLE_RUN_CONFIG " WHERE \"key\" IN "
                        "('env.OMPI_COMM_WORLD_RANK', 'env.PMIX_RANK', 'env.PMI_RANK', 'env.SLURM_PROCID', 'env.RANK') "
                        "ORDER BY CASE \"key\" WHEN 'env.RANK' THEN 0 WHEN 'env.SLURM_PROCID' THEN 1 "
                        "WHEN 'env.PMI_RANK' THEN 2 WHEN 'env.PMIX_RANK' THEN 3 ELSE 4 END",
                     &st, "reading process ranks");
    if (rc < 0)
        return rc;
    int step;
    int64_t ops = 0;
    while ((step = gt_rd_step(t, st, &ops)) == SQLITE_ROW) {
        int64_t gpid = sqlite3_column_int64(st, 0);
        const char *value = (const char *)sqlite3_column_text(st, 1);
        char *end;
        long v = value ? strtol(value, &end, 10) : -1;
        if (!value || !*value || *end || v < 0 || v > INT32_MAX)
            continue; /* not a rank: leave it unknown */
        for (size_t i = 0; i < t->n_processes; i++)
            if (t->processes[i].global_pid == gpid)
                t->processes[i].rank = (int32_t)v;
    }
    rc = step == SQLITE_DONE ? 0 : gt_rd_sql_fail(t, step, "reading process ranks");
    sqlite3_finalize(st);
    return rc;
}

/* Copies s[0..n), clipped to VALUE_MAX_BYTES, into `out` (VALUE_MAX_BYTES + 1 bytes). */
static void clip_into(char *out, const char *s, size_t n)
{
    char suffix[48];
    n = gt_rd_clip(s, n, VALUE_MAX_BYTES, suffix);
    memcpy(out, s, n);
    memcpy(out + n, suffix, strlen(suffix) + 1);
}

int gt_trace_each_config(gt_trace *t, gt_config_fn fn, void *ctx)
{
    if (!t || !fn)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_each_config: no trace or no function");
    if (!gt_rd_find_table(t, GT_TABLE_RUN_CONFIG))
        return 0;
    sqlite3_stmt *st;
    int rc = gt_rd_prepare(t, "SELECT \"globalPid\", \"key\", \"value\" FROM " GT_TABLE_RUN_CONFIG " ORDER BY \"globalPid\"",
                     &st, "reading the run configuration");
    if (rc < 0)
        return rc;
    int step;
    int64_t ops = 0;
    while ((step = gt_rd_step(t, st, &ops)) == SQLITE_ROW) {
        /* clipped copies: a value as long as the file is no configuration */
        const char *key = (const char *)sqlite3_column_text(st, 1), *value = (const char *)sqlite3_column_text(st, 2);
        char *k = malloc(VALUE_MAX_BYTES + 1), *v = malloc(VALUE_MAX_BYTES + 1);
        if (!k || !v) {
            free(k);
            free(v);
            rc = gt_rd_nomem(t);
            break;
        }
        clip_into(k, key ? key : "", key ? (size_t)sqlite3_column_bytes(st, 1) : 0);
        clip_into(v, value ? value : "", value ? (size_t)sqlite3_column_bytes(st, 2) : 0);
        rc = fn(ctx, sqlite3_column_int64(st, 0), k, v);
        free(k);
        free(v);
        if (rc != 0)
            break;
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = gt_rd_sql_fail(t, step, "reading the run configuration");
    sqlite3_finalize(st);
    return rc;
}

/* Decides what the file is: a gtrace trace this build can read, an nsys
 * export, or neither. */
static int identify(gt_trace *t)
{
    const char *product = gt_trace_meta(t, "EXPORT_PRODUCT_NAME");
    bool has_meta = gt_rd_find_table(t, "META_DATA_EXPORT") || gt_rd_find_table(t, "EXPORT_META_DATA");

    if (product && strcmp(product, "gtrace") == 0) {
        const char *v = gt_trace_meta(t, "GTRACE_SCHEMA_VERSION");
        char *end = NULL;
        errno = 0;
        long long version = v ? strtoll(v, &end, 10) : 0;
        if (!v || !*v || *end || errno || version < 1)
            return gt_error_set(GT_ERR_VERSION, "%s is a gtrace trace without a valid GTRACE_SCHEMA_VERSION (%s%s%s)",
                                t->path, v ? "'" : "none", v ? v : "", v ? "'" : "");
        if (version > GT_SCHEMA_VERSION)
            return gt_error_set(GT_ERR_VERSION,
                                "%s was written with gtrace schema version %lld; this build reads versions up to %d "
                                "(update gtrace)",
                                t->path, version, GT_SCHEMA_VERSION);
        t->origin = GT_ORIGIN_GTRACE;
        t->schema_version = v;
        return 0;
    }
    if (!has_meta)
        return gt_error_set(GT_ERR_NOTTRACE,
                            "%s is an SQLite database but neither a gtrace trace nor an Nsight Systems export "
                            "(it has no META_DATA_EXPORT or EXPORT_META_DATA table)",
                            t->path);
    if (!product || !strstr(product, "Nsight Systems"))
        return gt_error_set(GT_ERR_NOTTRACE,
                            "%s is an SQLite database but neither a gtrace trace nor an Nsight Systems export "
                            "(its export metadata names the product '%s')",
                            t->path, product ? product : "");
    if (!gt_rd_find_table(t, "StringIds"))
        return gt_error_set(GT_ERR_NOTTRACE, "%s claims to be an Nsight Systems export but has no StringIds table",
                            t->path);
    const char *v = gt_trace_meta(t, "EXPORT_SCHEMA_VERSION");
    long major = v ? strtol(v, NULL, 10) : 0;
    if (major != 2 && major != 3)
        return gt_error_set(GT_ERR_VERSION,
                            "%s is an Nsight Systems export with schema version '%s'; this build reads schemas 2.x "
                            "and 3.x",
                            t->path, v ? v : "");
    t->origin = GT_ORIGIN_NSYS;
    t->schema_version = v;
    return 0;
}

static int load_strings(gt_trace *t)
{
    sqlite3_stmt *st = NULL;
    int64_t n_rows = 0;
    bool is_null;
    int rc = 0;

    t->interned_base = 1;
    if (!gt_rd_find_table(t, "StringIds"))
        return 0;
    rc = gt_rd_query_int64(t, "SELECT count(*) FROM StringIds", &n_rows, &is_null, "reading its strings");
    if (rc < 0)
        return rc;
    if (n_rows > 0) {
        /* one allocation: ids, then the pointers */
        void *block = malloc((size_t)n_rows * (sizeof(int64_t) + sizeof(char *)));
        if (!block)
            return gt_rd_nomem(t);
        t->string_ids = block;
        t->string_values = (const char **)(t->string_ids + n_rows);
    }
    rc = gt_rd_prepare(t, "SELECT id, value FROM StringIds ORDER BY id", &st, "reading its strings");
    if (rc < 0)
        return rc;
    int step;
    int64_t ops = 0;
    while ((step = gt_rd_step(t, st, &ops)) == SQLITE_ROW && (int64_t)t->n_strings < n_rows) {
        const char *s = "";
        size_t len = 0;
        if (sqlite3_column_type(st, 0) != SQLITE_INTEGER)
            continue; /* an id that is no integer names nothing; the rest stay sorted */
        if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
            s = (const char *)sqlite3_column_text(st, 1);
            if (!s) {
                rc = gt_rd_nomem(t);
                goto cleanup;
            }
            len = (size_t)sqlite3_column_bytes(st, 1);
        }
        t->string_ids[t->n_strings] = sqlite3_column_int64(st, 0);
        t->string_values[t->n_strings] = gt_rd_arena_text(t, s, len, NAME_MAX_BYTES);
        if (!t->string_values[t->n_strings]) {
            rc = gt_rd_nomem(t);
            goto cleanup;
        }
        t->n_strings++;
    }
    if (step != SQLITE_DONE && step != SQLITE_ROW) {
        rc = gt_rd_sql_fail(t, step, "reading its strings");
        goto cleanup;
    }
    if (t->n_strings > 0) {
        int64_t max_id = t->string_ids[t->n_strings - 1];
        if (max_id > INT64_MAX / 2) {
            rc = gt_error_set(GT_ERR_CORRUPT, "%s is damaged: StringIds has an impossible id (%lld)", t->path,
                              (long long)max_id);
            goto cleanup;
        }
        if (max_id >= t->interned_base)
            t->interned_base = max_id + 1;
    }
cleanup:
    sqlite3_finalize(st);
    return rc;
}

/* Reads every row of `table` into an array of `elem_bytes` structs. */
static int load_rows(gt_trace *t, const char *table, const field *fields, size_t n_fields, const char *order,
                     void **out_rows, size_t *out_n, size_t elem_bytes)
{
    sbuf sql = {0};
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int64_t ops = 0;
    int rc = 0;
    char doing[128];

    snprintf(doing, sizeof doing, "reading %s", table);
    if (!gt_rd_find_table(t, table))
        return 0;
    gt_rd_sb_printf(&sql, "SELECT ");
    rc = gt_rd_append_columns(t, &sql, fields, n_fields, table, NULL);
    if (rc < 0)
        goto cleanup;
    gt_rd_sb_printf(&sql, " FROM \"%s\" AS m %s", table, order);
    if (sql.failed) {
        rc = gt_rd_nomem(t);
        goto cleanup;
    }
    rc = gt_rd_prepare(t, sql.s, &st, doing);
    if (rc < 0)
        goto cleanup;
    int step;
    while ((step = gt_rd_step(t, st, &ops)) == SQLITE_ROW) {
        void *rows = gt_rd_grow(*out_rows, &cap, *out_n + 1, elem_bytes);
        if (!rows) {
            rc = gt_rd_nomem(t);
            goto cleanup;
        }
        *out_rows = rows;
        void *row = (char *)*out_rows + *out_n * elem_bytes;
        memset(row, 0, elem_bytes);
        rc = gt_rd_fill_fields(t, st, fields, n_fields, row);
        if (rc < 0)
            goto cleanup;
        rc = 0; /* a description keeps its row; a value it refused reads as zero */
        (*out_n)++;
    }
    if (step != SQLITE_DONE)
        rc = gt_rd_sql_fail(t, step, doing);
cleanup:
    sqlite3_finalize(st);
    free(sql.s);
    return rc;
}

static int load_threads(gt_trace *t)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc = 0;
    if (!gt_rd_find_table(t, "ThreadNames"))
        return 0;
    rc = gt_rd_prepare(t, "SELECT globalTid, nameId FROM ThreadNames ORDER BY globalTid", &st, "reading ThreadNames");
    if (rc < 0)
        return rc;
    int step;
    int64_t ops = 0;
    while ((step = gt_rd_step(t, st, &ops)) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 0) != SQLITE_INTEGER)
            continue; /* no thread id */
        gt_thread *threads = gt_rd_grow(t->threads, &cap, t->n_threads + 1, sizeof *t->threads);
        if (!threads) {
            rc = gt_rd_nomem(t);
            goto cleanup;
        }
        t->threads = threads;
        t->threads[t->n_threads].global_tid = sqlite3_column_int64(st, 0);
        t->threads[t->n_threads].name = gt_trace_string(t, sqlite3_column_int64(st, 1));
        t->n_threads++;
    }
    if (step != SQLITE_DONE)
        rc = gt_rd_sql_fail(t, step, "reading ThreadNames");
cleanup:
    sqlite3_finalize(st);
    return rc;
}

/* Writes the time indexes into the file (GT_OPEN_ADD_INDEXES), through a
 * read-write connection of its own, in one transaction. */
static int add_indexes(gt_trace *t)
{
    int rc = gt_rd_connect_db(t, true);
    if (rc < 0)
        return rc;
    int erc = sqlite3_exec(t->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    for (size_t i = 0; erc == SQLITE_OK && i < gt_schema_n_indexes; i++) {
        const gt_schema_index *ix = &gt_schema_indexes[i];
        const db_object *o = gt_rd_find_table(t, ix->table);
        if (!o || (ix->nsys_only && t->origin != GT_ORIGIN_NSYS))
            continue;
        erc = sqlite3_exec(t->db, ix->sql, NULL, NULL, NULL);
    }
    if (erc == SQLITE_OK)
        erc = sqlite3_exec(t->db, "COMMIT", NULL, NULL, NULL);
    if (erc != SQLITE_OK) {
        rc = gt_rd_sql_fail(t, erc, "adding time indexes");
        if ((erc & 0xff) == SQLITE_READONLY)
            rc = gt_error_set(GT_ERR_IO, "%s cannot be written, to add time indexes: %s", t->path,
                              sqlite3_errmsg(t->db));
        sqlite3_exec(t->db, "ROLLBACK", NULL, NULL, NULL);
    }
    sqlite3_close(t->db);
    t->db = NULL;
    return rc;
}

static int open_trace(gt_trace **out, const char *path, unsigned flags, bool check)
{
    gt_trace *t = NULL;
    void *rows = NULL;
    int rc = 0;

    t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(path))) {
        free(t);
        return gt_error_set(GT_ERR_NOMEM, "%s: out of memory", path);
    }
    rc = gt_rd_probe_file(t);
    if (rc < 0)
        goto cleanup;
    rc = gt_rd_connect_db(t, false);
    if (rc < 0)
        goto cleanup;
    if (check && (flags & GT_OPEN_CHECK_LATER) && !(flags & GT_OPEN_ADD_INDEXES))
        rc = gt_rd_start_check(t);
    else if (check)
        rc = gt_rd_check_integrity(t);
    if (rc < 0)
        goto cleanup;
    rc = load_objects(t);
    if (rc < 0)
        goto cleanup;
    /* what is read is a real table of the expected shape: the description
     * tables first, then, the origin known, the event tables of that origin */
    rc = gt_rd_check_shapes(t, false);
    if (rc < 0)
        goto cleanup;
    rc = load_meta(t);
    if (rc < 0)
        goto cleanup;
    rc = identify(t);
    if (rc < 0)
        goto cleanup;
    rc = gt_rd_check_shapes(t, true);
    if (rc < 0)
        goto cleanup;
    if (flags & GT_OPEN_ADD_INDEXES) {
        /* the immutable connection would not see the new indexes: reopen */
        sqlite3_close(t->db);
        t->db = NULL;
        rc = add_indexes(t);
        if (rc < 0)
            goto cleanup;
        rc = gt_rd_probe_file(t); /* writing may have folded the log in */
        if (rc < 0)
            goto cleanup;
        rc = gt_rd_connect_db(t, false);
        if (rc < 0)
            goto cleanup;
        rc = load_objects(t);
        if (rc < 0)
            goto cleanup;
    }
    if ((rc = load_run_config(t)) < 0 || (rc = load_strings(t)) < 0)
        goto cleanup;
    field fields[MAX_DESC_FIELDS];
    rc = load_rows(t, gt_tab_processes.name, fields, fields_of(&gt_tab_processes, fields), "", &rows, &t->n_processes,
                   sizeof *t->processes);
    t->processes = rows;
    if (rc < 0 || (rc = load_process_ranks(t)) < 0)
        goto cleanup;
    rows = NULL;
    rc = load_rows(t, gt_tab_target_info_gpu.name, fields, fields_of(&gt_tab_target_info_gpu, fields),
                   "ORDER BY m.\"id\"", &rows, &t->n_gpus,
                   sizeof *t->gpus);
    t->gpus = rows;
    if (rc < 0)
        goto cleanup;
    rc = load_threads(t);
    if (rc < 0)
        goto cleanup;
    *out = t;
    t = NULL;
cleanup:
    gt_trace_free(t);
    return rc;
}

int gt_trace_open(gt_trace **out, const char *path, unsigned flags)
{
    if (!out || !path)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_open: no output or no path");
    *out = NULL;
    if (flags & ~(unsigned)(GT_OPEN_ADD_INDEXES | GT_OPEN_CHECK_LATER))
        return gt_error_set(GT_ERR_INVALID, "%s: unknown open flags 0x%x", path, flags);
    return open_trace(out, path, flags, true);
}

int gt_trace_reopen(gt_trace **out, const gt_trace *t)
{
    if (!out || !t)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_reopen: no output or no trace");
    *out = NULL;
    return open_trace(out, t->path, 0, false);
}

void gt_trace_free(gt_trace *t)
{
    if (!t)
        return;
    if (t->check_running) { /* nobody waits for the verdict: stop the check */
        atomic_store(&t->check_stop, true);
        sqlite3_interrupt(t->check_db);
        pthread_join(t->check_thread, NULL);
    }
    sqlite3_close(t->check_db);
    free(t->check_problem);
    sqlite3_finalize(t->callchain_stmt);
    for (int k = 0; k < GT_EV_N_KINDS; k++)
        sqlite3_finalize(t->rowid_probe[k]);
    sqlite3_close_v2(t->db); /* v2: iterators still open keep it alive until freed */
    while (t->arena) {
        arena_block *next = t->arena->next;
        free(t->arena);
        t->arena = next;
    }
    free(t->objects);
    free(t->meta);
    free(t->string_ids); /* also holds string_values */
    free(t->interned);
    free(t->intern_slots);
    free(t->processes);
    free(t->threads);
    free(t->gpus);
    free(t->frames);
    free(t->launch_ids);
    free(t->launches);
    free(t->launch_bad);
    free(t->path);
    free(t);
}

/* ---- descriptions ------------------------------------------------------------ */

gt_trace_origin gt_trace_origin_of(const gt_trace *t)
{
    return t ? t->origin : GT_ORIGIN_GTRACE;
}

const char *gt_trace_path(const gt_trace *t)
{
    return t ? t->path : "";
}

const char *gt_trace_schema_version(const gt_trace *t)
{
    return t && t->schema_version ? t->schema_version : "";
}

const char *gt_trace_string(const gt_trace *t, gt_string_id id)
{
    if (!t || id == 0)
        return "";
    if (id >= t->interned_base && id - t->interned_base < (int64_t)t->n_interned)
        return t->interned[id - t->interned_base];
    size_t lo = 0, hi = t->n_strings;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->string_ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n_strings && t->string_ids[lo] == id ? t->string_values[lo] : "";
}

const gt_process *gt_trace_processes(const gt_trace *t, size_t *out_n)
{
    *out_n = t ? t->n_processes : 0;
    return t ? t->processes : NULL;
}

const gt_thread *gt_trace_threads(const gt_trace *t, size_t *out_n)
{
    *out_n = t ? t->n_threads : 0;
    return t ? t->threads : NULL;
}

const gt_gpu_info *gt_trace_gpus(const gt_trace *t, size_t *out_n)
{
    *out_n = t ? t->n_gpus : 0;
    return t ? t->gpus : NULL;
}

int gt_trace_callchain(gt_trace *t, int64_t callchain_id, const gt_frame **out_frames, size_t *out_n)
{
    int rc = 0;
    size_t n = 0;

    if (!t || !out_frames || !out_n)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_callchain: missing argument");
    *out_frames = NULL;
    *out_n = 0;
    if (!gt_rd_find_table(t, "CUDA_CALLCHAINS"))
        return gt_error_set(GT_ERR_NOTFOUND, "%s has no callchains (no CUDA_CALLCHAINS table)", t->path);
    field frame_fields[MAX_DESC_FIELDS];
    size_t n_frame_fields = fields_of(&gt_tab_callchains, frame_fields);
    if (!t->callchain_stmt) {
        sbuf sql = {0};
        gt_rd_sb_printf(&sql, "SELECT ");
        rc = gt_rd_append_columns(t, &sql, frame_fields, n_frame_fields, "CUDA_CALLCHAINS", NULL);
        gt_rd_sb_printf(&sql, " FROM CUDA_CALLCHAINS AS m WHERE m.\"id\" = ?1 ORDER BY m.\"stackDepth\"");
        if (rc == 0 && sql.failed)
            rc = gt_rd_nomem(t);
        if (rc == 0)
            rc = gt_rd_prepare(t, sql.s, &t->callchain_stmt, "reading callchains");
        free(sql.s);
        if (rc < 0)
            return rc;
    }
    sqlite3_stmt *st = t->callchain_stmt;
    sqlite3_bind_int64(st, 1, callchain_id);
    int step;
    int64_t ops = 0;
    while ((step = gt_rd_step(t, st, &ops)) == SQLITE_ROW) {
        gt_frame *frames = gt_rd_grow(t->frames, &t->cap_frames, n + 1, sizeof *t->frames);
        if (!frames) {
            rc = gt_rd_nomem(t);
            goto cleanup;
        }
        t->frames = frames;
        memset(&t->frames[n], 0, sizeof t->frames[n]);
        rc = gt_rd_fill_fields(t, st, frame_fields, n_frame_fields, &t->frames[n]);
        if (rc < 0)
            goto cleanup;
        rc = 0; /* a frame keeps its row; a value it refused reads as zero */
        n++;
    }
    if (step != SQLITE_DONE) {
        rc = gt_rd_sql_fail(t, step, "reading callchains");
        goto cleanup;
    }
    if (n == 0) {
        rc = gt_error_set(GT_ERR_NOTFOUND, "%s has no callchain %lld", t->path, (long long)callchain_id);
        goto cleanup;
    }
    *out_frames = t->frames;
    *out_n = n;
cleanup:
    sqlite3_reset(st);
    return rc;
}
