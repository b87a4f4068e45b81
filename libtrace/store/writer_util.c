/* writer_util.c: what the writer's files share at the bottom: SQLite
 * failures as statuses and one-line messages naming the file, binding a
 * struct as its table's description says, preparing a table's INSERT, and
 * growing arrays. Every allocation of the writer goes through
 * sqlite3_malloc64(), so that a test that fails SQLite's allocator fails
 * ours too.
 *
 * It calls nothing else of the writer. */
#include "config.h"

#include "writer_int.h"

#include <errno.h>
#include <string.h>

static int status_of(int rc, int sys_errno)
{
    if ((rc & 0xff) == SQLITE_IOERR && (sys_errno == ENOSPC || sys_errno == EDQUOT))
        return GT_ERR_FULL; /* a full disk met by an fsync or a truncate */
    if (rc == SQLITE_IOERR_NOMEM)
        return GT_ERR_NOMEM;
    switch (rc & 0xff) {
    case SQLITE_NOMEM: return GT_ERR_NOMEM;
    case SQLITE_FULL: return GT_ERR_FULL;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return GT_ERR_CORRUPT;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG: return GT_ERR_INVALID;
    default: return GT_ERR_IO;
    }
}

int gt_wr_sql_error(gt_writer *w, int rc, const char *what)
{
    int status = status_of(rc, sqlite3_system_errno(w->db));
    return gt_error_set(status, "%s: cannot %s: %s (%s)", w->path, what,
                        sqlite3_errmsg(w->db), gt_status_name(status));
}

int gt_wr_nomem(gt_writer *w, const char *what)
{
    return gt_error_set(GT_ERR_NOMEM, "%s: cannot %s: out of memory", w->path, what);
}

int gt_wr_step_reset(sqlite3_stmt *stmt)
{
    int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    return rc == SQLITE_ROW ? SQLITE_DONE : rc;
}

/* The caller's strings are bound, not copied (nothing to fail for want of
 * memory): the caller unbinds them before its call returns. */
void gt_wr_bind_struct(sqlite3_stmt *stmt, const gt_table_desc *t, const void *base)
{
    const char *b = base;
    int param = 0;
    for (size_t i = 0; i < t->n_cols; i++) {
        const gt_column *c = &t->cols[i];
        if (c->put == P_NONE)
            continue;
        param++;
        const char *m = b + c->offset;
        int64_t v64;
        int32_t v32;
        uint32_t u32;
        bool vb;
        const char *s;
        switch (c->put) {
        case P_I64:
        case P_I64_NZ:
        case P_END_NEG1:
            memcpy(&v64, m, sizeof v64);
            if ((c->put == P_I64_NZ && v64 == 0) || (c->put == P_END_NEG1 && v64 == -1))
                sqlite3_bind_null(stmt, param);
            else
                sqlite3_bind_int64(stmt, param, v64);
            break;
        case P_I32:
        case P_I32_NZ:
            memcpy(&v32, m, sizeof v32);
            if (c->put == P_I32_NZ && v32 == 0)
                sqlite3_bind_null(stmt, param);
            else
                sqlite3_bind_int(stmt, param, v32);
            break;
        case P_U32:
            memcpy(&u32, m, sizeof u32);
            sqlite3_bind_int64(stmt, param, u32);
            break;
        case P_BOOL:
            memcpy(&vb, m, sizeof vb);
            sqlite3_bind_int(stmt, param, vb);
            break;
        case P_TEXT:
            memcpy(&s, m, sizeof s);
            if (s)
                sqlite3_bind_text(stmt, param, s, -1, SQLITE_STATIC);
            else
                sqlite3_bind_null(stmt, param);
            break;
        default: /* P_HOOK: the caller's */
            break;
        }
    }
}

int gt_wr_prepare_insert(gt_writer *w, const gt_table_desc *t, int n_rows, const char *suffix, sqlite3_stmt **out)
{
    sqlite3_str *s = sqlite3_str_new(NULL);
    gt_table_insert(s, t, n_rows);
    if (suffix)
        sqlite3_str_appendall(s, suffix);
    char *sql = sqlite3_str_finish(s);
    if (!sql)
        return gt_wr_nomem(w, "prepare statements");
    int rc = sqlite3_prepare_v3(w->db, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);
    sqlite3_free(sql);
    return rc == SQLITE_OK ? GT_OK : gt_wr_sql_error(w, rc, "prepare statements");
}

void *gt_wr_grow(void *p, size_t *cap, size_t need, size_t elem_bytes)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = sqlite3_realloc64(p, (sqlite3_uint64)n * elem_bytes);
    if (q)
        *cap = n;
    return q;
}

uint32_t gt_wr_hash(const void *p, size_t n_bytes)
{
    const unsigned char *s = p;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n_bytes;
    while (n_bytes >= 8) {
        uint64_t v;
        memcpy(&v, s, 8);
        h = (h ^ v) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
        s += 8;
        n_bytes -= 8;
    }
    while (n_bytes--)
        h = (h ^ *s++) * 0x100000001b3ull;
    h ^= h >> 29;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 32;
    return (uint32_t)h;
}
