/* reader_base.c: what the reader's files share, at the bottom: SQLite
 * failures as one-line messages naming the file, statements stepped within
 * the work budget, the arena strings live in, the tables and views of the
 * file, the reader's own ids for inline NVTX texts, and the metadata.
 *
 * It calls nothing else of the reader: checking a file (reader_check.c) and
 * iterating events (reader_iter.c) stand above it, opening and closing
 * (reader.c) on top. */
#include "reader_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers -------------------------------------------------------- */

int gt_rd_nomem(const gt_trace *t)
{
    return gt_error_set(GT_ERR_NOMEM, "%s: out of memory", t->path);
}

int gt_rd_sql_fail_msg(const gt_trace *t, int rc, const char *doing, const char *msg)
{
    switch (rc & 0xff) {
    case SQLITE_NOMEM:
        return gt_error_set(GT_ERR_NOMEM, "%s: out of memory while %s", t->path, doing);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: /* the header was checked already: this is damage */
    case SQLITE_FORMAT:
        return gt_error_set(GT_ERR_CORRUPT, "%s is damaged (found while %s): %s", t->path, doing, msg);
    case SQLITE_INTERRUPT:
        if (t->over_budget)
            return gt_error_set(GT_ERR_CORRUPT,
                                "%s is not a well-formed trace: %s took more work than a file of its size "
                                "can need (over %lld million SQLite steps)",
                                t->path, doing, (long long)(t->op_budget / 1000000));
        return gt_error_set(GT_ERR_IO, "%s: reading was interrupted (while %s)", t->path, doing);
    case SQLITE_IOERR:
        if (rc == SQLITE_IOERR_SHORT_READ)
            return gt_error_set(GT_ERR_CORRUPT, "%s is truncated (found while %s): %s", t->path, doing, msg);
        return gt_error_set(GT_ERR_IO, "%s could not be read (while %s): %s", t->path, doing, msg);
    case SQLITE_FULL:
        return gt_error_set(GT_ERR_FULL, "%s: the disk is full (while %s)", t->path, doing);
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_AUTH:
        return gt_error_set(GT_ERR_IO, "%s could not be accessed (while %s): %s", t->path, doing, msg);
    case SQLITE_MISUSE:
    case SQLITE_RANGE:
        return gt_error_set(GT_ERR_INVALID, "%s: bad use of the reader (while %s): %s", t->path, doing, msg);
    default:
        /* our SQL only names tables and columns the file was seen to have, so
         * the rest (a value too big, an integer overflow in a sum...) is the file's */
        return gt_error_set(GT_ERR_CORRUPT, "%s is not a well-formed trace (found while %s): %s",
                            t->path, doing, msg);
    }
}

int gt_rd_sql_fail(const gt_trace *t, int rc, const char *doing)
{
    return gt_rd_sql_fail_msg(t, rc, doing, t->db ? sqlite3_errmsg(t->db) : sqlite3_errstr(rc));
}

int gt_rd_prepare(gt_trace *t, const char *sql, sqlite3_stmt **out, const char *doing)
{
    int rc = sqlite3_prepare_v2(t->db, sql, -1, out, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(*out);
        *out = NULL;
        return gt_rd_sql_fail(t, rc, doing);
    }
    return 0;
}

int gt_rd_step(gt_trace *t, sqlite3_stmt *st, int64_t *ops)
{
    t->ops = ops;
    t->over_budget = false;
    int rc = sqlite3_step(st);
    t->ops = NULL;
    return rc;
}

static char *arena_strndup(arena_block **arena, const char *s, size_t n, const char *suffix)
{
    size_t n_suffix = strlen(suffix);
    arena_block *b = *arena;
    if (!b || b->size - b->used < n + n_suffix + 1) {
        size_t size = n + n_suffix + 1 > 65536 ? n + n_suffix + 1 : 65536;
        b = malloc(sizeof *b + size);
        if (!b)
            return NULL;
        b->next = *arena;
        b->used = 0;
        b->size = size;
        *arena = b;
    }
    char *p = b->data + b->used;
    memcpy(p, s, n);
    memcpy(p + n, suffix, n_suffix + 1);
    b->used += n + n_suffix + 1;
    return p;
}

static uint64_t hash_text(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

size_t gt_rd_clip(const char *s, size_t n, size_t limit, char suffix[48])
{
    suffix[0] = '\0';
    if (n <= limit)
        return n;
    int len = snprintf(suffix, 48, "... [%zu bytes, %016llx]", n, (unsigned long long)hash_text(s, n));
    size_t keep = limit - (size_t)len;
    while (keep > 0 && ((unsigned char)s[keep] & 0xc0) == 0x80) /* not inside a UTF-8 character */
        keep--;
    return keep;
}

char *gt_rd_arena_text(gt_trace *t, const char *s, size_t n, size_t limit)
{
    char suffix[48];
    n = gt_rd_clip(s, n, limit, suffix);
    return arena_strndup(&t->arena, s, n, suffix);
}

void *gt_rd_grow(void *arr, size_t *cap, size_t need, size_t elem_bytes)
{
    if (need <= *cap)
        return arr;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(arr, n * elem_bytes);
    if (q)
        *cap = n;
    return q;
}

void gt_rd_sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        char *q = gt_rd_grow(b->s, &b->cap, b->len + (size_t)n + 1, 1);
        if (!q) {
            b->failed = true;
            return;
        }
        b->s = q;
    }
}

const db_object *gt_rd_find_object(const gt_trace *t, const char *name)
{
    for (size_t i = 0; i < t->n_objects; i++)
        if (sqlite3_stricmp(t->objects[i].name, name) == 0)
            return &t->objects[i];
    return NULL;
}

const db_object *gt_rd_find_table(const gt_trace *t, const char *name)
{
    const db_object *o = gt_rd_find_object(t, name);
    return o && o->is_table ? o : NULL;
}

int gt_rd_query_int64(gt_trace *t, const char *sql, int64_t *out, bool *out_null, const char *doing)
{
    sqlite3_stmt *st = NULL;
    int64_t ops = 0;
    int rc = gt_rd_prepare(t, sql, &st, doing);
    if (rc < 0)
        return rc;
    int step = gt_rd_step(t, st, &ops);
    if (step == SQLITE_ROW) {
        *out_null = sqlite3_column_type(st, 0) == SQLITE_NULL;
        *out = sqlite3_column_int64(st, 0);
    } else if (step == SQLITE_DONE) {
        *out_null = true;
        *out = 0;
    } else {
        rc = gt_rd_sql_fail(t, step, doing);
    }
    sqlite3_finalize(st);
    return rc;
}

/* Gives an inline NVTX text an id of the reader's own, above StringIds, so
 * that gt_nvtx.text is always an id; the same text gets the same id. A text
 * longer than NAME_MAX_BYTES is interned clipped (gt_rd_clip). */
int gt_rd_intern(gt_trace *t, const char *text, gt_string_id *out_id)
{
    char clipped[NAME_MAX_BYTES + 1], suffix[48];
    const char *s = text;
    size_t n = strlen(text);
    if (n > NAME_MAX_BYTES) {
        n = gt_rd_clip(text, n, NAME_MAX_BYTES, suffix);
        memcpy(clipped, text, n);
        memcpy(clipped + n, suffix, strlen(suffix) + 1);
        n += strlen(suffix);
        s = clipped;
    }
    if (t->n_interned + 1 >= t->n_slots / 2) {
        size_t n_slots = t->n_slots ? t->n_slots * 2 : 64;
        uint32_t *slots = calloc(n_slots, sizeof *slots);
        if (!slots || t->n_interned >= UINT32_MAX - 1) {
            free(slots);
            return gt_rd_nomem(t);
        }
        for (size_t i = 0; i < t->n_interned; i++) {
            size_t j = hash_text(t->interned[i], strlen(t->interned[i])) & (n_slots - 1);
            while (slots[j])
                j = (j + 1) & (n_slots - 1);
            slots[j] = (uint32_t)i + 1;
        }
        free(t->intern_slots);
        t->intern_slots = slots;
        t->n_slots = n_slots;
    }
    size_t j = hash_text(s, n) & (t->n_slots - 1);
    while (t->intern_slots[j]) {
        size_t k = t->intern_slots[j] - 1;
        if (strcmp(t->interned[k], s) == 0) {
            *out_id = t->interned_base + (int64_t)k;
            return 0;
        }
        j = (j + 1) & (t->n_slots - 1);
    }
    const char **interned = gt_rd_grow(t->interned, &t->cap_interned, t->n_interned + 1, sizeof *t->interned);
    if (!interned)
        return gt_rd_nomem(t);
    t->interned = interned;
    const char *copy = arena_strndup(&t->arena, s, n, "");
    if (!copy)
        return gt_rd_nomem(t);
    t->interned[t->n_interned] = copy;
    t->intern_slots[j] = (uint32_t)t->n_interned + 1;
    *out_id = t->interned_base + (int64_t)t->n_interned;
    t->n_interned++;
    return 0;
}

/* ---- metadata ------------------------------------------------------------------ */

const char *gt_trace_meta(const gt_trace *t, const char *name)
{
    if (!t || !name)
        return NULL;
    for (size_t i = 0; i < t->n_meta; i++)
        if (strcmp(t->meta[i].name, name) == 0)
            return t->meta[i].value;
    return NULL;
}
