/* writer_dict.c: the writer's dictionaries. Strings and kernel launch
 * configurations are kept in hash tables, given their ids at once (a
 * string's id is its StringIds id), and written to StringIds and
 * GTRACE_KERNEL_LAUNCHES in the transaction that commits them. What makes a
 * launch configuration is what the GTRACE_KERNEL_LAUNCHES description writes.
 *
 * This file does not write events (writer_rows.c). */
#include "config.h"

#include "writer_int.h"

#include <string.h>

/* Doubles the slots when more than half are taken. */
static bool dict_reserve(dict *d)
{
    if (d->n_slots && 2 * (d->n + 1) <= d->n_slots)
        return true;
    size_t n_slots = d->n_slots ? 2 * d->n_slots : 1024;
    uint32_t *slots = sqlite3_malloc64((sqlite3_uint64)n_slots * sizeof *slots);
    uint32_t *hashes = sqlite3_malloc64((sqlite3_uint64)n_slots * sizeof *hashes);
    if (!slots || !hashes) {
        sqlite3_free(slots);
        sqlite3_free(hashes);
        return false;
    }
    memset(slots, 0, n_slots * sizeof *slots);
    for (size_t i = 0; i < d->n_slots; i++) {
        if (!d->slots[i])
            continue;
        size_t j = d->hashes[i] & (n_slots - 1);
        while (slots[j])
            j = (j + 1) & (n_slots - 1);
        slots[j] = d->slots[i];
        hashes[j] = d->hashes[i];
    }
    sqlite3_free(d->slots);
    sqlite3_free(d->hashes);
    d->slots = slots;
    d->hashes = hashes;
    d->n_slots = n_slots;
    return true;
}

static void dict_free(dict *d)
{
    sqlite3_free(d->slots);
    sqlite3_free(d->hashes);
}

/* ---- strings ---------------------------------------------------------------- */

static const char *copy_string(gt_writer *w, const char *s, size_t n_bytes)
{
    chunk *c = w->chunks;
    if (!c || c->size_bytes - c->used_bytes < n_bytes + 1) {
        size_t size_bytes = n_bytes + 1 > CHUNK_BYTES ? n_bytes + 1 : CHUNK_BYTES;
        c = sqlite3_malloc64(sizeof *c + size_bytes);
        if (!c)
            return NULL;
        c->next = w->chunks;
        c->used_bytes = 0;
        c->size_bytes = size_bytes;
        w->chunks = c;
    }
    char *p = c->data + c->used_bytes;
    memcpy(p, s, n_bytes);
    p[n_bytes] = '\0';
    c->used_bytes += n_bytes + 1;
    return p;
}

int gt_wr_intern(gt_writer *w, const char *s, gt_string_id *out_id)
{
    size_t n_bytes = strlen(s);
    if (n_bytes > INT32_MAX)
        return gt_error_set(GT_ERR_INVALID, "%s: a string of %zu bytes is too long", w->path, n_bytes);
    uint32_t h = gt_wr_hash(s, n_bytes);
    dict *d = &w->strings;
    if (!dict_reserve(d))
        return gt_wr_nomem(w, "intern a string");
    size_t i = h & (d->n_slots - 1);
    for (; d->slots[i]; i = (i + 1) & (d->n_slots - 1)) {
        uint32_t id = d->slots[i];
        if (d->hashes[i] == h && w->string_of[id - 1].n_bytes == n_bytes &&
            memcmp(w->string_of[id - 1].s, s, n_bytes) == 0) {
            *out_id = id;
            return GT_OK;
        }
    }
    if (d->n >= UINT32_MAX - 1)
        return gt_error_set(GT_ERR_INVALID, "%s: too many distinct strings", w->path);
    string_ref *string_of = gt_wr_grow(w->string_of, &w->string_cap, d->n + 1, sizeof *string_of);
    if (!string_of)
        return gt_wr_nomem(w, "intern a string");
    w->string_of = string_of;
    const char *copy = copy_string(w, s, n_bytes);
    if (!copy)
        return gt_wr_nomem(w, "intern a string");
    w->string_of[d->n] = (string_ref){copy, n_bytes};
    d->n++;
    d->slots[i] = (uint32_t)d->n;
    d->hashes[i] = h;
    *out_id = (gt_string_id)d->n;
    return GT_OK;
}

/* ---- launch configurations ------------------------------------------------ */

/* k's launch configuration: the members the launch table writes, the rest
 * (and the padding) zero, so that two launches compare with memcmp. */
static void launch_key_of(const gt_kernel *k, gt_kernel *key)
{
    memset(key, 0, sizeof *key);
    for (size_t i = 0; i < gt_tab_kernel_launches.n_cols; i++) {
        const gt_column *c = &gt_tab_kernel_launches.cols[i];
        size_t n_bytes = c->put == P_I64 || c->put == P_I64_NZ ? 8 : c->put == P_I32 || c->put == P_I32_NZ ? 4 : 0;
        memcpy((char *)key + c->offset, (const char *)k + c->offset, n_bytes);
    }
}

int gt_wr_launch_id(gt_writer *w, const gt_kernel *k, int64_t *out_id)
{
    gt_kernel key;
    launch_key_of(k, &key);
    uint32_t h = gt_wr_hash(&key, sizeof key);
    dict *d = &w->launches;
    if (!dict_reserve(d))
        return gt_wr_nomem(w, "add a kernel");
    size_t i = h & (d->n_slots - 1);
    for (; d->slots[i]; i = (i + 1) & (d->n_slots - 1)) {
        uint32_t id = d->slots[i];
        if (d->hashes[i] == h && memcmp(&w->launch_of[id - 1], &key, sizeof key) == 0) {
            *out_id = id;
            return GT_OK;
        }
    }
    if (d->n >= UINT32_MAX - 1)
        return gt_error_set(GT_ERR_INVALID, "%s: too many distinct kernel launches", w->path);
    gt_kernel *launch_of = gt_wr_grow(w->launch_of, &w->launch_cap, d->n + 1, sizeof *launch_of);
    if (!launch_of)
        return gt_wr_nomem(w, "add a kernel");
    w->launch_of = launch_of;
    w->launch_of[d->n] = key;
    d->n++;
    d->slots[i] = (uint32_t)d->n;
    d->hashes[i] = h;
    *out_id = (int64_t)d->n;
    return GT_OK;
}

static int write_strings(gt_writer *w)
{
    sqlite3_stmt *stmt = w->stmts[ST_STRING];
    for (size_t id = w->strings.n_written + 1; id <= w->strings.n; id++) {
        sqlite3_bind_int64(stmt, 1, (sqlite3_int64)id);
        sqlite3_bind_text(stmt, 2, w->string_of[id - 1].s, (int)w->string_of[id - 1].n_bytes, SQLITE_STATIC);
        int rc = gt_wr_step_reset(stmt);
        if (rc != SQLITE_DONE)
            return gt_wr_sql_error(w, rc, "insert strings");
        w->strings.n_written = id;
    }
    return GT_OK;
}

static int write_launches(gt_writer *w)
{
    sqlite3_stmt *stmt = w->stmts[ST_LAUNCH];
    const int id_param = gt_table_param(&gt_tab_kernel_launches, "id");
    for (size_t id = w->launches.n_written + 1; id <= w->launches.n; id++) {
        gt_wr_bind_struct(stmt, &gt_tab_kernel_launches, &w->launch_of[id - 1]);
        sqlite3_bind_int64(stmt, id_param, (sqlite3_int64)id);
        int rc = gt_wr_step_reset(stmt);
        if (rc != SQLITE_DONE)
            return gt_wr_sql_error(w, rc, "insert kernel launches");
        w->launches.n_written = id;
    }
    return GT_OK;
}

int gt_wr_write_dicts(gt_writer *w)
{
    int status = write_strings(w);
    return status == GT_OK ? write_launches(w) : status;
}

void gt_wr_free_dicts(gt_writer *w)
{
    while (w->chunks) {
        chunk *next = w->chunks->next;
        sqlite3_free(w->chunks);
        w->chunks = next;
    }
    dict_free(&w->strings);
    dict_free(&w->launches);
    sqlite3_free(w->string_of);
    sqlite3_free(w->launch_of);
}
