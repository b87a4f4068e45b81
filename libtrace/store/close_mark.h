/* close_mark.h: private to libtrace/store. The mark gtrace's writer leaves
 * in the SQLite header of a trace it closed cleanly (application_id and
 * user_version), and the reader's test of it: the file is, byte for byte,
 * what the writer closed (close_mark.c). */
#ifndef GT_CLOSE_MARK_H
#define GT_CLOSE_MARK_H

#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Marks the file at `path`, which `db` (in rollback-journal mode, no
 * transaction open) has open: hashes the file, then writes the mark in one
 * transaction. 0 when the file carries a mark that holds; -1 when it
 * carries none (it could not be read, or SQLite did not write as
 * foreseen), which only costs a later reader the full check. */
int gt_close_mark_write(sqlite3 *db, const char *path);
/* Whether the header has a mark at all (cheap: reads 100 bytes). */
bool gt_close_mark_present(const char *path);
/* Whether the file has a mark and the mark holds: reads the whole file.
 * Gives false, soon, when *stop (may be NULL) becomes true. */
bool gt_close_mark_holds(const char *path, const atomic_bool *stop);

#endif /* GT_CLOSE_MARK_H */
