/* amend.c: rows added to a finished gtrace trace (amend.h), and entries
 * added to its run configuration (GTRACE_RUN_CONFIG) for what its writer
 * could not know: the launcher's end-of-run clock pair reaches a trace that
 * was renamed into place whole. It writes nothing else (but the close mark
 * of a file that had one that held, close_mark.c) and never touches an
 * nsys export. */
#include "gt_store.h"

#include <errno.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>

#include "amend.h"
#include "close_mark.h"
#include "schema.h"

int gt_amend_begin(const char *path, const char *who, sqlite3 **out_db, bool *out_marked)
{
    struct stat st;
    *out_db = NULL;
    *out_marked = false;
    if (!path)
        return gt_error_set(GT_ERR_INVALID, "%s: no path", who);
    if (stat(path, &st) != 0)
        return gt_error_set(errno == ENOENT ? GT_ERR_NOTFOUND : GT_ERR_IO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return gt_error_set(GT_ERR_NOTTRACE, "%s: not a regular file", path);
    sqlite3 *db = NULL;
    bool is_trace = false;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_busy_timeout(db, 2000);
    if (rc == SQLITE_OK)
        rc = gt_schema_is_table(db, GT_TABLE_RUN_CONFIG, &is_trace);
    if (rc == SQLITE_OK && !is_trace) {
        sqlite3_close(db);
        return gt_error_set(GT_ERR_NOTTRACE, "%s: not a gtrace trace (no " GT_TABLE_RUN_CONFIG " table)", path);
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        int status = gt_error_set(GT_ERR_IO, "%s: cannot open it to add to it: %s", path,
                                  db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return status;
    }
    /* a file as its writer closed it stays marked (close_mark.c); one
     * changed since keeps no mark, and gets the full check when read */
    *out_marked = gt_close_mark_present(path) && gt_close_mark_holds(path, NULL);
    *out_db = db;
    return GT_OK;
}

int gt_amend_end(sqlite3 *db, const char *path, int rc, bool remark, bool mark_needed, const char *what)
{
    int status = GT_OK;
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        status = gt_error_set(rc == SQLITE_FULL ? GT_ERR_FULL : rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB
                              ? GT_ERR_CORRUPT : GT_ERR_IO, "%s: cannot add %s: %s", path, what, sqlite3_errmsg(db));
    else if (remark && gt_close_mark_write(db, path) != 0 && mark_needed)
        status = gt_error_set(GT_ERR_IO, "%s: %s was written but the file could not be marked again: "
                              "it will not be read", path, what);
    sqlite3_close(db); /* an open transaction is rolled back */
    return status;
}

int gt_trace_add_config(const char *path, int64_t global_pid, const char *const keys[], const char *const values[],
                        size_t n)
{
    if (n && (!keys || !values))
        return gt_error_set(GT_ERR_INVALID, "gt_trace_add_config: no keys");
    sqlite3 *db;
    sqlite3_stmt *stmt = NULL;
    bool marked;
    int status = gt_amend_begin(path, "gt_trace_add_config", &db, &marked);
    if (status < 0)
        return status;
    int rc = sqlite3_prepare_v2(db, "INSERT INTO " GT_TABLE_RUN_CONFIG " (globalPid, key, value) VALUES (?, ?, ?)",
                                -1, &stmt, NULL);
    for (size_t i = 0; i < n && rc == SQLITE_OK; i++) {
        sqlite3_bind_int64(stmt, 1, global_pid);
        sqlite3_bind_text(stmt, 2, keys[i], -1, SQLITE_STATIC);
        sqlite3_bind_text(stmt, 3, values[i], -1, SQLITE_STATIC);
        rc = sqlite3_step(stmt) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
        sqlite3_reset(stmt);
    }
    sqlite3_finalize(stmt);
    return gt_amend_end(db, path, rc, marked, false, "to the run configuration");
}
