/* summary.c: what is computed once from a finished gtrace trace and kept in
 * it (GTRACE_SUMMARY: key, the gtrace version that made it, body), and the
 * reading of it back. An entry is handed out only from a file whose close
 * mark holds (close_mark.c), so a trace changed after close never gets one
 * made from what it was; and only to the version that made it, so a build
 * whose analysis differs computes its own. What a body holds is the
 * caller's (libtrace/analyze): this file knows keys and bytes. */
#include "gt_store.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "amend.h"
#include "close_mark.h"
#include "reader_int.h"
#include "schema.h"

/* Not among columns.c's descriptions: no writer row goes into it, and the
 * body is a BLOB, a type no described column has. */
#define CREATE_SUMMARY                                                                                                 \
    "CREATE TABLE IF NOT EXISTS " GT_TABLE_SUMMARY " (key TEXT PRIMARY KEY, gtrace_version TEXT NOT NULL, body BLOB)"

int gt_trace_add_summary(const char *path, const char *gtrace_version, const char *const keys[],
                         const void *const bodies[], const size_t body_bytes[], size_t n)
{
    if (!gtrace_version || (n && (!keys || !bodies || !body_bytes)))
        return gt_error_set(GT_ERR_INVALID, "gt_trace_add_summary: no version or entries");
    sqlite3 *db;
    sqlite3_stmt *stmt = NULL;
    bool marked;
    int status = gt_amend_begin(path, "gt_trace_add_summary", &db, &marked);
    if (status < 0)
        return status;
    /* the entries describe the file as it is now: only a file the reader
     * will trust (its mark holds, and holds again after) is worth them */
    if (!marked) {
        sqlite3_close(db);
        return gt_error_set(GT_ERR_INVALID, "%s: changed since its writer closed it (no close mark that holds): "
                            "no summary is kept", path);
    }
    int rc = sqlite3_exec(db, CREATE_SUMMARY, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO " GT_TABLE_SUMMARY " (key, gtrace_version, body) "
                                "VALUES (?, ?, ?)", -1, &stmt, NULL);
    for (size_t i = 0; i < n && rc == SQLITE_OK; i++) {
        sqlite3_bind_text(stmt, 1, keys[i], -1, SQLITE_STATIC);
        sqlite3_bind_text(stmt, 2, gtrace_version, -1, SQLITE_STATIC);
        sqlite3_bind_blob64(stmt, 3, bodies[i], body_bytes[i], SQLITE_STATIC);
        rc = sqlite3_step(stmt) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
        sqlite3_reset(stmt);
    }
    sqlite3_finalize(stmt);
    return gt_amend_end(db, path, rc, true, true, "the summary");
}

/* Whether t's file is, byte for byte, what a gtrace writer (or
 * gt_trace_add_summary) left: the verdict of a check GT_OPEN_CHECK_LATER
 * started, else the mark tested now (once per handle). */
static bool mark_holds(gt_trace *t)
{
    if (t->origin != GT_ORIGIN_GTRACE || t->live_wal)
        return false;
    if (t->check_running)
        gt_trace_check(t);
    if (t->check_by_mark)
        return true;
    if (!t->mark_tested) {
        t->mark_held = gt_close_mark_present(t->path) && gt_close_mark_holds(t->path, NULL);
        t->mark_tested = true;
    }
    return t->mark_held;
}

bool gt_trace_checked_by_mark(gt_trace *t)
{
    if (!t || t->origin != GT_ORIGIN_GTRACE || t->live_wal)
        return false;
    if (t->check_running)
        gt_trace_check(t);
    return t->check_by_mark;
}

int gt_trace_summary(gt_trace *t, const char *key, const char *gtrace_version, void **out, size_t *out_bytes)
{
    if (!out || !out_bytes)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_summary: no output");
    *out = NULL;
    *out_bytes = 0;
    if (!t || !key || !gtrace_version)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_summary: no trace, key or version");
    if (!gt_rd_find_table(t, GT_TABLE_SUMMARY))
        return gt_error_set(GT_ERR_NOTFOUND, "%s: no summary", t->path);
    sqlite3_stmt *st;
    int rc = gt_rd_prepare(t, "SELECT gtrace_version, body FROM " GT_TABLE_SUMMARY " WHERE key = ?", &st,
                           "reading the summary");
    if (rc < 0)
        return rc;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    int64_t ops = 0;
    int step = gt_rd_step(t, st, &ops);
    if (step == SQLITE_ROW) {
        const char *version = (const char *)sqlite3_column_text(st, 0);
        if (!version || strcmp(version, gtrace_version) != 0)
            rc = gt_error_set(GT_ERR_VERSION, "%s: its summary was made by gtrace %s", t->path, version ? version : "?");
        else if (!mark_holds(t))
            rc = gt_error_set(GT_ERR_NOTFOUND, "%s: changed since it was closed: its summary is not used", t->path);
        else {
            const void *body = sqlite3_column_blob(st, 1);
            size_t n = (size_t)sqlite3_column_bytes(st, 1);
            if (!(*out = malloc(n ? n : 1)))
                rc = gt_rd_nomem(t);
            else {
                if (n)
                    memcpy(*out, body, n);
                *out_bytes = n;
            }
        }
    } else if (step == SQLITE_DONE)
        rc = gt_error_set(GT_ERR_NOTFOUND, "%s: no summary entry %s", t->path, key);
    else
        rc = gt_rd_sql_fail(t, step, "reading the summary");
    sqlite3_finalize(st);
    return rc;
}

bool gt_trace_has_summary(gt_trace *t)
{
    return t && gt_rd_find_table(t, GT_TABLE_SUMMARY);
}
