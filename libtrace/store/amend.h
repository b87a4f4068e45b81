/* amend.h: private to libtrace/store. Rows added to a finished gtrace
 * trace (amend.c: the run configuration; summary.c: kept summaries), in
 * one transaction, the close mark written again after. */
#ifndef GT_AMEND_H
#define GT_AMEND_H

#include <sqlite3.h>
#include <stdbool.h>

/* Opens the gtrace trace at `path` read-write and begins an immediate
 * transaction; *out_marked: whether its close mark held then. `who` names
 * the caller in a message. 0, or a status with its message (an nsys
 * export, a missing or odd file: GT_ERR_NOTTRACE, _NOTFOUND, _IO). */
int gt_amend_begin(const char *path, const char *who, sqlite3 **out_db, bool *out_marked);
/* Commits when `rc` (the caller's last SQLite result) is SQLITE_OK, else
 * rolls back; marks the file again when `remark`; closes db. `what` names
 * the addition in a message. A mark that cannot be written again fails
 * only when `mark_needed` (a reader would not trust the addition). */
int gt_amend_end(sqlite3 *db, const char *path, int rc, bool remark, bool mark_needed, const char *what);

#endif /* GT_AMEND_H */
