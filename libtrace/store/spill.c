/* spill.c: gt_flagmap (key -> bits), gt_pairmap (key -> two integers and a
 * tag) and gt_spanmap (key -> span and count),
 * each in a private temporary SQLite database (the empty file name: SQLite
 * makes the file and deletes it at close). One table, one transaction for
 * the map's whole life (nothing in it needs to survive a crash), no
 * journal. Memory is the page cache, fixed here; the file grows instead.
 * The flag map is keyed by the integer itself (the rowid b-tree, no second
 * index); its keys come mostly in ascending order (CUPTI numbers
 * correlations so), which keeps its pages full and its probes in the cache.
 * The span map has a small write-back cache in front: the spans one
 * stretch of events widens are few. It knows nothing of traces. */
#include "gt_store_spill.h"
#include "gt_base.h"

#include <sqlite3.h>
#include <stdlib.h>

enum { CACHE_KIB = 8192 };

struct gt_flagmap {
    sqlite3 *db;
    sqlite3_stmt *put, *get;
};

static int fail_db(sqlite3 *db, int rc, const char *doing)
{
    const char *msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    if ((rc & 0xff) == SQLITE_NOMEM)
        return gt_error_set(GT_ERR_NOMEM, "temporary file: out of memory while %s", doing);
    if ((rc & 0xff) == SQLITE_FULL)
        return gt_error_set(GT_ERR_FULL, "temporary file: the disk is full (while %s)", doing);
    return gt_error_set(GT_ERR_IO, "temporary file: %s failed: %s", doing, msg);
}

/* A private temporary database holding the table `create`, in a transaction. */
static int open_db(sqlite3 **db, const char *create)
{
    static const char *setup[] = {
        "PRAGMA journal_mode = OFF",
        "PRAGMA synchronous = OFF",
        "PRAGMA temp_store = FILE", /* the sorter of gt_spanmap_each too */
        "PRAGMA cache_size = -8192", /* KiB: CACHE_KIB */
    };
    _Static_assert(CACHE_KIB == 8192, "the pragma above says 8192");
    int rc = sqlite3_open_v2("", db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof setup / sizeof setup[0]; i++)
        rc = sqlite3_exec(*db, setup[i], NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(*db, create, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(*db, "BEGIN", NULL, NULL, NULL);
    return rc;
}

/* A database holding `create`, and its two statements. */
static int open_map(sqlite3 **db, const char *create, const char *put_sql, sqlite3_stmt **put, const char *get_sql,
                    sqlite3_stmt **get)
{
    int rc = open_db(db, create);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(*db, put_sql, -1, put, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(*db, get_sql, -1, get, NULL);
    return rc == SQLITE_OK ? 0 : fail_db(*db, rc, "opening it");
}

int gt_flagmap_new(gt_flagmap **out)
{
    if (!out)
        return gt_error_set(GT_ERR_INVALID, "gt_flagmap_new: no output");
    *out = NULL;
    gt_flagmap *m = calloc(1, sizeof *m);
    if (!m)
        return gt_error_set(GT_ERR_NOMEM, "temporary file: out of memory");
    int rc = open_map(&m->db, "CREATE TABLE f (k INTEGER PRIMARY KEY, bits INTEGER NOT NULL)",
                      "INSERT INTO f (k, bits) VALUES (?1, ?2) ON CONFLICT (k) DO UPDATE SET bits = bits | ?2",
                      &m->put, "SELECT bits FROM f WHERE k = ?1", &m->get);
    if (rc < 0) {
        gt_flagmap_free(m);
        return rc;
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
    return rc == SQLITE_DONE ? 0 : fail_db(m->db, rc, "writing");
}

int gt_flagmap_get(gt_flagmap *m, int64_t key, unsigned *out_bits)
{
    if (!m || !out_bits)
        return gt_error_set(GT_ERR_INVALID, "gt_flagmap_get: bad argument");
    sqlite3_bind_int64(m->get, 1, key);
    int rc = sqlite3_step(m->get);
    *out_bits = rc == SQLITE_ROW ? (unsigned)sqlite3_column_int64(m->get, 0) : 0;
    sqlite3_reset(m->get);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : fail_db(m->db, rc, "reading");
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

/* ---- gt_pairmap ------------------------------------------------------------ */

struct gt_pairmap {
    sqlite3 *db;
    sqlite3_stmt *put, *get;
};

int gt_pairmap_new(gt_pairmap **out)
{
    if (!out)
        return gt_error_set(GT_ERR_INVALID, "gt_pairmap_new: no output");
    *out = NULL;
    gt_pairmap *m = calloc(1, sizeof *m);
    if (!m)
        return gt_error_set(GT_ERR_NOMEM, "temporary file: out of memory");
    int rc = open_map(&m->db, "CREATE TABLE p (k INTEGER PRIMARY KEY, x INTEGER NOT NULL, y INTEGER NOT NULL, "
                              "tag INTEGER NOT NULL)",
                      "INSERT OR REPLACE INTO p (k, x, y, tag) VALUES (?1, ?2, ?3, ?4)", &m->put,
                      "SELECT x, y, tag FROM p WHERE k = ?1", &m->get);
    if (rc < 0) {
        gt_pairmap_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

int gt_pairmap_put(gt_pairmap *m, int64_t key, int64_t x, int64_t y, int tag)
{
    if (!m)
        return gt_error_set(GT_ERR_INVALID, "gt_pairmap_put: no map");
    sqlite3_bind_int64(m->put, 1, key);
    sqlite3_bind_int64(m->put, 2, x);
    sqlite3_bind_int64(m->put, 3, y);
    sqlite3_bind_int64(m->put, 4, tag);
    int rc = sqlite3_step(m->put);
    sqlite3_reset(m->put);
    return rc == SQLITE_DONE ? 0 : fail_db(m->db, rc, "writing");
}

int gt_pairmap_get(gt_pairmap *m, int64_t key, int64_t *x, int64_t *y, int *tag)
{
    if (!m || !x || !y || !tag)
        return gt_error_set(GT_ERR_INVALID, "gt_pairmap_get: bad argument");
    sqlite3_bind_int64(m->get, 1, key);
    int rc = sqlite3_step(m->get);
    if (rc == SQLITE_ROW) {
        *x = sqlite3_column_int64(m->get, 0);
        *y = sqlite3_column_int64(m->get, 1);
        *tag = (int)sqlite3_column_int64(m->get, 2);
    }
    sqlite3_reset(m->get);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : fail_db(m->db, rc, "reading");
}

void gt_pairmap_free(gt_pairmap *m)
{
    if (!m)
        return;
    sqlite3_finalize(m->put);
    sqlite3_finalize(m->get);
    sqlite3_close(m->db);
    free(m);
}

/* ---- gt_spanmap ------------------------------------------------------------ */

enum { N_SLOTS = 4096 }; /* the write-back cache: a power of two */

struct gt_spanmap {
    sqlite3 *db;
    sqlite3_stmt *put;
    gt_span_row *slots; /* n 0: empty */
};

static size_t slot_of(int64_t a, int64_t b, int64_t c)
{
    uint64_t x = (uint64_t)a * 0x9e3779b97f4a7c15ULL ^ (uint64_t)b * 0xbf58476d1ce4e5b9ULL ^ (uint64_t)c;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebULL;
    return (size_t)(x >> 40) & (N_SLOTS - 1);
}

static int write_back(gt_spanmap *m, gt_span_row *r)
{
    if (r->n == 0)
        return 0;
    sqlite3_bind_int64(m->put, 1, r->a);
    sqlite3_bind_int64(m->put, 2, r->b);
    sqlite3_bind_int64(m->put, 3, r->c);
    sqlite3_bind_int64(m->put, 4, r->start_ns);
    sqlite3_bind_int64(m->put, 5, r->end_ns);
    sqlite3_bind_int64(m->put, 6, r->n);
    int rc = sqlite3_step(m->put);
    sqlite3_reset(m->put);
    r->n = 0;
    return rc == SQLITE_DONE ? 0 : fail_db(m->db, rc, "writing");
}

int gt_spanmap_new(gt_spanmap **out)
{
    if (!out)
        return gt_error_set(GT_ERR_INVALID, "gt_spanmap_new: no output");
    *out = NULL;
    gt_spanmap *m = calloc(1, sizeof *m);
    if (!m || !(m->slots = calloc(N_SLOTS, sizeof *m->slots))) {
        free(m);
        return gt_error_set(GT_ERR_NOMEM, "temporary file: out of memory");
    }
    int rc = open_db(&m->db, "CREATE TABLE s (a INTEGER, b INTEGER, c INTEGER, s INTEGER NOT NULL, "
                             "e INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (a, b, c)) WITHOUT ROWID");
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(m->db, "INSERT INTO s VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (a, b, c) "
                                       "DO UPDATE SET s = min(s, excluded.s), e = max(e, excluded.e), "
                                       "n = n + excluded.n", -1, &m->put, NULL);
    if (rc != SQLITE_OK) {
        int err = fail_db(m->db, rc, "opening it");
        gt_spanmap_free(m);
        return err;
    }
    *out = m;
    return 0;
}

int gt_spanmap_add(gt_spanmap *m, int64_t a, int64_t b, int64_t c, int64_t start_ns, int64_t end_ns)
{
    if (!m)
        return gt_error_set(GT_ERR_INVALID, "gt_spanmap_add: no map");
    gt_span_row *r = &m->slots[slot_of(a, b, c)];
    if (r->n > 0 && (r->a != a || r->b != b || r->c != c)) {
        int rc = write_back(m, r);
        if (rc < 0)
            return rc;
    }
    if (r->n == 0) {
        *r = (gt_span_row){a, b, c, start_ns, end_ns, 0};
    } else {
        if (start_ns < r->start_ns)
            r->start_ns = start_ns;
        if (end_ns > r->end_ns)
            r->end_ns = end_ns;
    }
    r->n++;
    return 0;
}

int gt_spanmap_each(gt_spanmap *m, gt_span_fn fn, void *ctx)
{
    sqlite3_stmt *st = NULL;
    if (!m || !fn)
        return gt_error_set(GT_ERR_INVALID, "gt_spanmap_each: bad argument");
    int rc = 0;
    for (size_t i = 0; i < N_SLOTS && rc == 0; i++)
        rc = write_back(m, &m->slots[i]);
    if (rc < 0)
        return rc;
    int src = sqlite3_prepare_v2(m->db, "SELECT a, b, c, s, e, n FROM s ORDER BY s, a, b, c", -1, &st, NULL);
    while (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
        gt_span_row row;
        row.a = sqlite3_column_int64(st, 0);
        row.b = sqlite3_column_int64(st, 1);
        row.c = sqlite3_column_int64(st, 2);
        row.start_ns = sqlite3_column_int64(st, 3);
        row.end_ns = sqlite3_column_int64(st, 4);
        row.n = sqlite3_column_int64(st, 5);
        if ((rc = fn(ctx, &row)) < 0)
            break;
        src = SQLITE_OK;
    }
    if (rc == 0 && src != SQLITE_DONE)
        rc = fail_db(m->db, src, "reading");
    sqlite3_finalize(st);
    return rc;
}

void gt_spanmap_free(gt_spanmap *m)
{
    if (!m)
        return;
    sqlite3_finalize(m->put);
    sqlite3_close(m->db);
    free(m->slots);
    free(m);
}
