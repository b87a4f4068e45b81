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

typedef struct bulk_desc {
    const field *fields;
    size_t n_fields;
    const char *join_table; /* NULL: none */
    const char *join_on;    /* in terms of aliases m (table) and j (join_table) */
    size_t bytes;           /* of the kind's member of gt_event.u */
} bulk_desc;

struct gt_bulk {
    gt_trace *t;
    gt_event_kind kind;
    const bulk_desc *desc;
    sqlite3_stmt *stmt; /* NULL: no rows */
    int64_t ops;        /* the work of stmt so far (the budget) */
};

static const field kernel_cols[] = {
    FLD(gt_kernel, "start", start_ns, F_TIME),
    FLD(gt_kernel, "end", end_ns, F_TIME),
    FLD(gt_kernel, "globalPid", global_pid, F_I64),
    FLD(gt_kernel, "deviceId", device_id, F_I32),
    FLD(gt_kernel, "streamId", stream_id, F_I32),
    FLD(gt_kernel, "correlationId", correlation_id, F_I64),
    FLD(gt_kernel, "demangledName", demangled_name, F_I64),
    FLD(gt_kernel, "shortName", short_name, F_I64),
    FLD(gt_kernel, "mangledName", mangled_name, F_I64),
};

static const field memcpy_cols[] = {
    FLD(gt_memcpy, "start", start_ns, F_TIME),
    FLD(gt_memcpy, "end", end_ns, F_TIME),
    FLD(gt_memcpy, "globalPid", global_pid, F_I64),
    FLD(gt_memcpy, "deviceId", device_id, F_I32),
    FLD(gt_memcpy, "streamId", stream_id, F_I32),
    FLD(gt_memcpy, "correlationId", correlation_id, F_I64),
    FLD(gt_memcpy, "bytes", bytes, F_SIZE),
    FLD(gt_memcpy, "copyKind", copy_kind, F_I32),
    FLD(gt_memcpy, "srcKind", src_kind, F_I32),
    FLD(gt_memcpy, "dstKind", dst_kind, F_I32),
};

static const field memset_cols[] = {
    FLD(gt_memset, "start", start_ns, F_TIME),
    FLD(gt_memset, "end", end_ns, F_TIME),
    FLD(gt_memset, "globalPid", global_pid, F_I64),
    FLD(gt_memset, "deviceId", device_id, F_I32),
    FLD(gt_memset, "streamId", stream_id, F_I32),
    FLD(gt_memset, "correlationId", correlation_id, F_I64),
    FLD(gt_memset, "bytes", bytes, F_SIZE),
    FLD(gt_memset, "memKind", mem_kind, F_I32),
};

static const field api_cols[] = {
    FLD(gt_api_call, "start", start_ns, F_TIME),
    FLD(gt_api_call, "end", end_ns, F_TIME),
    FLD(gt_api_call, "globalTid", global_tid, F_I64),
    FLD(gt_api_call, "correlationId", correlation_id, F_I64),
    FLD(gt_api_call, "nameId", name, F_I64),
    FLD(gt_api_call, "eventClass", event_class, F_I32),
};

static const field sync_cols[] = {
    FLD(gt_sync, "start", start_ns, F_TIME),
    FLD(gt_sync, "end", end_ns, F_TIME),
};

/* NVTX columns read by position after gt_rd_fill_fields (nvtx_rest). */
enum { NB_TEXT_ID = 6, NB_TEXT, NB_U64, NB_I64, NB_F64, NB_U32, NB_I32, NB_F32, NB_N };
static const field nvtx_cols[] = {
    FLD(gt_nvtx, "start", start_ns, F_TIME),
    FLD(gt_nvtx, "end", end_ns, F_END_OR_NEG1),
    FLD(gt_nvtx, "eventType", event_type, F_I32),
    FLD(gt_nvtx, "category", category, F_I32),
    FLD(gt_nvtx, "globalTid", global_tid, F_I64),
    FLD(gt_nvtx, "domainId", domain_id, F_I64),
    [NB_TEXT_ID] = FLD(gt_nvtx, "textId", text, F_HOOK),
    [NB_TEXT] = FLD(gt_nvtx, "text", text, F_HOOK),
    [NB_U64] = FLD(gt_nvtx, "uint64Value", payload, F_HOOK),
    [NB_I64] = FLD(gt_nvtx, "int64Value", payload, F_HOOK),
    [NB_F64] = FLD(gt_nvtx, "doubleValue", payload, F_HOOK),
    [NB_U32] = FLD(gt_nvtx, "uint32Value", payload, F_HOOK),
    [NB_I32] = FLD(gt_nvtx, "int32Value", payload, F_HOOK),
    [NB_F32] = FLD(gt_nvtx, "floatValue", payload, F_HOOK),
};
_Static_assert(N_OF(nvtx_cols) == NB_N, "every NVTX column has a position");

static const field gpu_memory_cols[] = {
    FLD(gt_gpu_memory, "start", start_ns, F_TIME),
    FLD(gt_gpu_memory, "deviceId", device_id, F_I32),
    FLD(gt_gpu_memory, "address", address, F_I64),
    FLD(gt_gpu_memory, "bytes", bytes, F_SIZE),
    FLD(gt_gpu_memory, "memoryOperationType", operation, F_I32),
    FLD(gt_gpu_memory, "correlationId", correlation_id, F_I64),
    FLD(gt_gpu_memory, "streamId", stream_id, F_I32),
    JFLD(gt_gpu_memory, "callchainId", callchain_id, F_I64),
};

static const field heap_cols[] = {
    FLD(gt_heap_event, "start", start_ns, F_TIME),
    FLD(gt_heap_event, "globalTid", global_tid, F_I64),
    FLD(gt_heap_event, "operation", operation, F_I32),
    FLD(gt_heap_event, "heapId", heap_id, F_I64),
    FLD(gt_heap_event, "address", address, F_I64),
    FLD(gt_heap_event, "bytes", bytes, F_SIZE),
    FLD(gt_heap_event, "callchainId", callchain_id, F_I64),
};

static const field cpu_op_cols[] = {
    FLD(gt_cpu_op, "start", start_ns, F_TIME),
    FLD(gt_cpu_op, "end", end_ns, F_TIME),
    FLD(gt_cpu_op, "globalTid", global_tid, F_I64),
    FLD(gt_cpu_op, "nameId", name, F_I64),
    FLD(gt_cpu_op, "streamId", stream_id, F_I32),
    FLD(gt_cpu_op, "flops", flops, F_SIZE),
    FLD(gt_cpu_op, "bytes", bytes, F_SIZE),
};

#define DESC(cols, type) {cols, N_OF(cols), NULL, NULL, sizeof(type)}
static const bulk_desc bulk_descs[GT_EV_N_KINDS] = {
    [GT_EV_KERNEL] = DESC(kernel_cols, gt_kernel),
    [GT_EV_MEMCPY] = DESC(memcpy_cols, gt_memcpy),
    [GT_EV_MEMSET] = DESC(memset_cols, gt_memset),
    [GT_EV_API] = DESC(api_cols, gt_api_call),
    [GT_EV_SYNC] = DESC(sync_cols, gt_sync),
    [GT_EV_NVTX] = DESC(nvtx_cols, gt_nvtx),
    [GT_EV_GPU_MEMORY] = {gpu_memory_cols, N_OF(gpu_memory_cols), GT_TABLE_GPU_MEMORY_STACKS, "j.\"eventId\" = m.rowid",
                          sizeof(gt_gpu_memory)},
    [GT_EV_HEAP] = DESC(heap_cols, gt_heap_event),
    [GT_EV_CPU_OP] = DESC(cpu_op_cols, gt_cpu_op),
};
#undef DESC

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
    b->desc = &bulk_descs[kind];
    const char *table = gt_event_kind_table(kind);
    const db_object *o = gt_rd_find_table(t, table);
    if (!o) /* no table (a view is never read): no rows */
        goto done;
    const bulk_desc *d = b->desc;
    const char *join = d->join_table && gt_rd_find_table(t, d->join_table) ? d->join_table : NULL;
    gt_rd_sb_printf(&sql, "SELECT ");
    if ((rc = gt_rd_append_columns(t, &sql, d->fields, d->n_fields, table, join)) < 0)
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
        memset(&ev->u, 0, b->desc->bytes); /* the rest of the union is never read */
        int rc = gt_rd_fill_fields(t, b->stmt, b->desc->fields, b->desc->n_fields, &ev->u);
        if (rc == 0 && b->kind == GT_EV_NVTX)
            rc = nvtx_rest(b, &ev->u.nvtx);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return 1;
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
