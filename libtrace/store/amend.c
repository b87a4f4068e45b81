/* amend.c: entries added to the run configuration (GTRACE_RUN_CONFIG) of a
 * finished gtrace trace, for what its writer could not know: the launcher's
 * end-of-run clock pair reaches a trace that was renamed into place whole.
 * It writes nothing else (but the close mark of a file that had one that
 * held, close_mark.c) and never touches an nsys export. */
#include "gt_store.h"

#include <errno.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>

#include "close_mark.h"
#include "schema.h"

int gt_trace_add_config(const char *path, int64_t global_pid, const char *const keys[], const char *const values[],
                        size_t n)
{
    struct stat st;
    if (!path || (n && (!keys || !values)))
        return gt_error_set(GT_ERR_INVALID, "gt_trace_add_config: %s", !path ? "no path" : "no keys");
    if (stat(path, &st) != 0)
        return gt_error_set(errno == ENOENT ? GT_ERR_NOTFOUND : GT_ERR_IO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return gt_error_set(GT_ERR_NOTTRACE, "%s: not a regular file", path);
    sqlite3 *db = NULL;
    sqlite3_stmt *stmt = NULL;
    bool is_trace = false, marked = false;
    int status = GT_OK;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_busy_timeout(db, 2000);
    if (rc == SQLITE_OK)
        rc = gt_schema_is_table(db, GT_TABLE_RUN_CONFIG, &is_trace);
    if (rc == SQLITE_OK && !is_trace) {
        status = gt_error_set(GT_ERR_NOTTRACE, "%s: not a gtrace trace (no " GT_TABLE_RUN_CONFIG " table)", path);
        goto cleanup;
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    /* a file as its writer closed it stays marked (close_mark.c); one
     * changed since keeps no mark, and gets the full check when read */
    if (rc == SQLITE_OK)
        marked = gt_close_mark_present(path) && gt_close_mark_holds(path, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT INTO " GT_TABLE_RUN_CONFIG " (globalPid, key, value) VALUES (?, ?, ?)", -1,
                                &stmt, NULL);
    for (size_t i = 0; i < n && rc == SQLITE_OK; i++) {
        sqlite3_bind_int64(stmt, 1, global_pid);
        sqlite3_bind_text(stmt, 2, keys[i], -1, SQLITE_STATIC);
        sqlite3_bind_text(stmt, 3, values[i], -1, SQLITE_STATIC);
        rc = sqlite3_step(stmt) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
        sqlite3_reset(stmt);
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_finalize(stmt);
    stmt = NULL;
    if (rc == SQLITE_OK && marked)
        gt_close_mark_write(db, path);
    if (rc != SQLITE_OK)
        status = gt_error_set(rc == SQLITE_FULL ? GT_ERR_FULL : rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB
                              ? GT_ERR_CORRUPT : GT_ERR_IO, "%s: cannot add to the run configuration: %s", path,
                              db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
cleanup:
    sqlite3_finalize(stmt);
    sqlite3_close(db); /* an open transaction is rolled back */
    return status;
}
