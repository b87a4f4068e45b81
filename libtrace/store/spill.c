/* spill.c: gt_flagmap, a key -> bits map in a private temporary SQLite
 * database (the empty file name: SQLite makes the file and deletes it at
 * close). One table keyed by the integer itself (the rowid b-tree, no second
 * index), one transaction for the map's whole life (nothing in it needs to
 * survive a crash), no journal. Memory is the page cache, fixed here; the
 * file grows instead. Keys come mostly in ascending order (CUPTI numbers
 * correlations so), which keeps the b-tree's pages full and its probes in
 * the cache. It knows nothing of traces. */
#include "gt_store_spill.h"
#include "gt_base.h"

#include <sqlite3.h>
#include <stdlib.h>

enum { CACHE_KIB = 8192 };

struct gt_flagmap {
    sqlite3 *db;
    sqlite3_stmt *put, *get;
};

static int fail(gt_flagmap *m, int rc, const char *doing)
{
    const char *msg = m && m->db ? sqlite3_errmsg(m->db) : sqlite3_errstr(rc);
    if ((rc & 0xff) == SQLITE_NOMEM)
        return gt_error_set(GT_ERR_NOMEM, "temporary file: out of memory while %s", doing);
    if ((rc & 0xff) == SQLITE_FULL)
        return gt_error_set(GT_ERR_FULL, "temporary file: the disk is full (while %s)", doing);
    return gt_error_set(GT_ERR_IO, "temporary file: %s failed: %s", doing, msg);
}

int gt_flagmap_new(gt_flagmap **out)
{
    static const char *setup[] = {
        "PRAGMA journal_mode = OFF",
        "PRAGMA synchronous = OFF",
        "PRAGMA temp_store = FILE",
        "PRAGMA cache_size = -8192", /* KiB: CACHE_KIB */
        "CREATE TABLE f (k INTEGER PRIMARY KEY, bits INTEGER NOT NULL)",
        "BEGIN",
    };
    _Static_assert(CACHE_KIB == 8192, "the pragma above says 8192");
    if (!out)
        return gt_error_set(GT_ERR_INVALID, "gt_flagmap_new: no output");
    *out = NULL;
    gt_flagmap *m = calloc(1, sizeof *m);
    if (!m)
        return gt_error_set(GT_ERR_NOMEM, "temporary file: out of memory");
    int rc = sqlite3_open_v2("", &m->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof setup / sizeof setup[0]; i++)
        rc = sqlite3_exec(m->db, setup[i], NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(m->db, "INSERT INTO f (k, bits) VALUES (?1, ?2) "
                                       "ON CONFLICT (k) DO UPDATE SET bits = bits | ?2", -1, &m->put, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(m->db, "SELECT bits FROM f WHERE k = ?1", -1, &m->get, NULL);
    if (rc != SQLITE_OK) {
        int err = fail(m, rc, "opening it");
        gt_flagmap_free(m);
        return err;
    }
    *out = m;
    return 0;
}

int gt_flagmap_or(gt_flagmap *m, int64_t key, unsigned bits)
{
    if (!m)
        return gt_error_set(GT_ERR_INVALID, "gt_flagmap_or: no map");
    sqlite3_bind_int64(m->put, 1, key);
    sqlite3_bind_int64(m->put, 2, (sqlite3_int64)bits);
    int rc = sqlite3_step(m->put);
    sqlite3_reset(m->put);
    return rc == SQLITE_DONE ? 0 : fail(m, rc, "writing");
}

int gt_flagmap_get(gt_flagmap *m, int64_t key, unsigned *out_bits)
{
    if (!m || !out_bits)
        return gt_error_set(GT_ERR_INVALID, "gt_flagmap_get: bad argument");
    sqlite3_bind_int64(m->get, 1, key);
    int rc = sqlite3_step(m->get);
    *out_bits = rc == SQLITE_ROW ? (unsigned)sqlite3_column_int64(m->get, 0) : 0;
    sqlite3_reset(m->get);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : fail(m, rc, "reading");
}

void gt_flagmap_free(gt_flagmap *m)
{
    if (!m)
        return;
    sqlite3_finalize(m->put);
    sqlite3_finalize(m->get);
    sqlite3_close(m->db); /* the open transaction is rolled back: nothing to keep */
    free(m);
}
