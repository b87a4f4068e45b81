/* reader_bulk.c: gt_bulk_*, every row of one kind of event with only the
 * columns an analysis computes with, in the order the file stores them
 * (gt_store_bulk.h).
 *
 * One SELECT of those columns over the whole table, front to back: no time
 * index, no sort, no columns nobody reads. Values go through the reader's
 * own row checks (gt_rd_fill_fields), so what is refused is what gt_iter
 * refuses, for the columns read. It does not order rows by time (the caller
 * does) nor read time ranges (gt_iter does).
 */
#include "gt_store_bulk.h"
#include "reader_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The columns read of each kind's table, by name; their members and how
 * each is checked come from the table's description (columns.c). */
enum { MAX_BULK_COLS = 16 };
typedef struct bulk_desc {
    const gt_table_desc *main, *join; /* join: NULL none */
    const char *join_on;              /* in terms of aliases m (main) and j (join) */
    const char *cols[MAX_BULK_COLS];  /* of main; then, after a NULL, of join */
    size_t bytes;                     /* of the kind's member of gt_event.u */
} bulk_desc;

struct gt_bulk {
    gt_trace *t;
    gt_event_kind kind;
    field fields[MAX_BULK_COLS];
    size_t n_fields;
    sqlite3_stmt *stmt; /* NULL: no rows */
    int64_t ops;        /* the work of stmt so far (the budget) */
};

/* NVTX columns read by position after gt_rd_fill_fields (nvtx_rest). */
enum { NB_TEXT_ID = 6, NB_TEXT, NB_U64, NB_I64, NB_F64, NB_U32, NB_I32, NB_F32, NB_N };

static const bulk_desc bulk_descs[GT_EV_N_KINDS] = {
    [GT_EV_KERNEL] = {&gt_tab_kernel, NULL, NULL,
                      {"start", "end", "globalPid", "deviceId", "streamId", "correlationId", "demangledName",
                       "shortName", "mangledName"},
                      sizeof(gt_kernel)},
    [GT_EV_MEMCPY] = {&gt_tab_memcpy, NULL, NULL,
                      {"start", "end", "globalPid", "deviceId", "streamId", "correlationId", "bytes", "copyKind",
                       "srcKind", "dstKind"},
                      sizeof(gt_memcpy)},
    [GT_EV_MEMSET] = {&gt_tab_memset, NULL, NULL,
                      {"start", "end", "globalPid", "deviceId", "streamId", "correlationId", "bytes", "memKind"},
                      sizeof(gt_memset)},
    [GT_EV_API] = {&gt_tab_runtime, NULL, NULL, {"start", "end", "globalTid", "correlationId", "nameId", "eventClass"},
                   sizeof(gt_api_call)},
    [GT_EV_SYNC] = {&gt_tab_sync, NULL, NULL, {"start", "end"}, sizeof(gt_sync)},
    [GT_EV_NVTX] = {&gt_tab_nvtx, NULL, NULL,
                    {"start", "end", "eventType", "category", "globalTid", "domainId", [NB_TEXT_ID] = "textId",
                     [NB_TEXT] = "text", [NB_U64] = "uint64Value", [NB_I64] = "int64Value", [NB_F64] = "doubleValue",
                     [NB_U32] = "uint32Value", [NB_I32] = "int32Value", [NB_F32] = "floatValue"},
                    sizeof(gt_nvtx)},
    [GT_EV_GPU_MEMORY] = {&gt_tab_gpu_memory, &gt_tab_gpu_memory_stacks, "j.\"eventId\" = m.rowid",
                          {"start", "deviceId", "address", "bytes", "memoryOperationType", "correlationId", "streamId",
                           NULL, "callchainId"},
                          sizeof(gt_gpu_memory)},
    [GT_EV_HEAP] = {&gt_tab_memory_events, NULL, NULL,
                    {"start", "globalTid", "operation", "heapId", "address", "bytes", "callchainId"},
                    sizeof(gt_heap_event)},
    [GT_EV_CPU_OP] = {&gt_tab_cpu_ops, NULL, NULL,
                      {"start", "end", "globalTid", "nameId", "streamId", "flops", "bytes"}, sizeof(gt_cpu_op)},
};

/* b->fields from the names in d and the tables' descriptions. */
static int make_fields(gt_bulk *b, const bulk_desc *d)
{
    const gt_table_desc *tab = d->main;
    bool joined = false;
    for (size_t i = 0; i < MAX_BULK_COLS; i++) {
        const char *name = d->cols[i];
        if (!name && !joined && d->join && i + 1 < MAX_BULK_COLS && d->cols[i + 1]) {
            tab = d->join; /* the joined table's columns follow */
            joined = true;
            continue;
        }
        if (!name)
            break;
        const gt_column *c = gt_column_named(tab, name);
        if (!c || c->get == F_NONE)
            return gt_error_set(GT_ERR_INVALID, "gt_bulk_new: %s has no column %s to read", tab->name, name);
        b->fields[b->n_fields++] = (field){c->name, c->offset, c->get, joined};
    }
    return 0;
}

int gt_bulk_new(gt_bulk **out, gt_trace *t, gt_event_kind kind)
{
    gt_bulk *b = NULL;
    sbuf sql = {0};
    int rc = 0;
    char doing[96];
    if (!out || !t || (unsigned)kind >= GT_EV_N_KINDS)
        return gt_error_set(GT_ERR_INVALID, "gt_bulk_new: bad argument");
    *out = NULL;
    /* gtrace's own kernel table, keyed by start and joined to its launches,
     * is gt_iter's to read */
    if (kind == GT_EV_KERNEL && t->origin == GT_ORIGIN_GTRACE && gt_rd_find_table(t, GT_TABLE_KERNELS))
        return 0;
    if (!(b = calloc(1, sizeof *b)))
        return gt_rd_nomem(t);
    b->t = t;
    b->kind = kind;
    const bulk_desc *d = &bulk_descs[kind];
    if ((rc = make_fields(b, d)) < 0)
        goto cleanup;
    const char *table = gt_event_kind_table(kind);
    const db_object *o = gt_rd_find_table(t, table);
    if (!o) /* no table (a view is never read): no rows */
        goto done;
    const char *join = d->join && gt_rd_find_table(t, d->join->name) ? d->join->name : NULL;
    gt_rd_sb_printf(&sql, "SELECT ");
    if ((rc = gt_rd_append_columns(t, &sql, b->fields, b->n_fields, table, join)) < 0)
        goto cleanup;
    gt_rd_sb_printf(&sql, " FROM \"%s\" AS m", table);
    if (join)
        gt_rd_sb_printf(&sql, " LEFT JOIN \"%s\" AS j ON %s", join, d->join_on);
    if (!o->without_rowid)
        gt_rd_sb_printf(&sql, " ORDER BY m.rowid"); /* the table's own order, made explicit */
    if (sql.failed) {
        rc = gt_rd_nomem(t);
        goto cleanup;
    }
    snprintf(doing, sizeof doing, "reading %s events", gt_event_kind_name(kind));
    if ((rc = gt_rd_prepare(t, sql.s, &b->stmt, doing)) < 0)
        goto cleanup;
done:
    *out = b;
    b = NULL;
cleanup:
    gt_bulk_free(b);
    free(sql.s);
    return rc;
}

/* NVTX: the message (registered, or inline and interned) and the first
 * payload member set, as gt_iter reads them; 1 refuses the row (no integer
 * where one belongs). */
static int nvtx_rest(gt_bulk *b, gt_nvtx *n)
{
    sqlite3_stmt *st = b->stmt;
    int type[NB_N];
    for (int col = NB_TEXT_ID; col < NB_N; col++) {
        type[col] = sqlite3_column_type(st, col);
        bool real = col == NB_F64 || col == NB_F32, text = col == NB_TEXT;
        if (!text && type[col] != SQLITE_NULL && type[col] != SQLITE_INTEGER && !(real && type[col] == SQLITE_FLOAT))
            return 1;
    }
    if (type[NB_TEXT_ID] != SQLITE_NULL && sqlite3_column_int64(st, NB_TEXT_ID) != 0) {
        n->text = sqlite3_column_int64(st, NB_TEXT_ID);
        n->text_registered = true;
    } else if (type[NB_TEXT] != SQLITE_NULL) {
        const char *s = (const char *)sqlite3_column_text(st, NB_TEXT);
        int rc;
        if (!s)
            return gt_rd_nomem(b->t);
        if ((rc = gt_rd_intern(b->t, s, &n->text)) < 0)
            return rc;
    }
    for (int col = NB_U64; col <= NB_F32; col++) {
        if (type[col] == SQLITE_NULL)
            continue;
        n->payload_kind = (gt_payload_kind)(GT_PAYLOAD_U64 + (col - NB_U64));
        switch (col) {
        case NB_U64: n->payload.u64 = (uint64_t)sqlite3_column_int64(st, col); break;
        case NB_I64: n->payload.i64 = sqlite3_column_int64(st, col); break;
        case NB_F64: n->payload.f64 = sqlite3_column_double(st, col); break;
        case NB_U32: n->payload.u32 = (uint32_t)sqlite3_column_int64(st, col); break;
        case NB_I32: n->payload.i32 = (int32_t)sqlite3_column_int64(st, col); break;
        case NB_F32: n->payload.f32 = (float)sqlite3_column_double(st, col); break;
        }
        break;
    }
    return 0;
}

int gt_bulk_next(gt_bulk *b, gt_event *ev)
{
    if (!b || !ev)
        return gt_error_set(GT_ERR_INVALID, "gt_bulk_next: no bulk read or no event");
    gt_trace *t = b->t;
    while (b->stmt) {
        int step = gt_rd_step(t, b->stmt, &b->ops);
        if (step != SQLITE_ROW) {
            int rc = 0;
            if (step != SQLITE_DONE) {
                char doing[96];
                snprintf(doing, sizeof doing, "reading %s events", gt_event_kind_name(b->kind));
                rc = gt_rd_sql_fail(t, step, doing);
            }
            sqlite3_finalize(b->stmt); /* releases its read of the file early */
            b->stmt = NULL;
            return rc;
        }
        ev->kind = b->kind;
        memset(&ev->u, 0, bulk_descs[b->kind].bytes); /* the rest of the union is never read */
        int rc = gt_rd_fill_fields(t, b->stmt, b->fields, b->n_fields, &ev->u);
        if (rc == 0 && b->kind == GT_EV_NVTX)
            rc = nvtx_rest(b, &ev->u.nvtx);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            GT_ASSERT(gt_rd_row_in_limits(ev));
            return 1;
        }
        /* a refused row: on to the next */
    }
    return 0;
}

void gt_bulk_free(gt_bulk *b)
{
    if (!b)
        return;
    sqlite3_finalize(b->stmt);
    free(b);
}
