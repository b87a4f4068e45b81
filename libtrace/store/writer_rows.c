/* writer_rows.c: events into their tables. Events are buffered per table,
 * one cell per column the table's description writes, and inserted
 * BULK_ROWS at a time with multi-row prepared INSERTs (one sqlite3_step per
 * 64 rows, not per row); what is left in the buffers goes in at commit. Rows
 * are buffered SORT_ROWS at a time and put in start order (stable): kernels
 * so that their table fills its pages; the other tables so that their rows
 * lie in about the order their start is read (NVTX ranges and API calls are
 * recorded when they end), which made reading NVTX_EVENTS in time order a
 * fifth faster, and so that closing finds most tables in start order and
 * needs no index on them.
 *
 * A row's cells come from the event's members as the description says
 * (gt_column.put); the kernel id and launch, and NVTX's color, message and
 * payload, from the code here. Kernels are stored compactly while written:
 * GTRACE_KERNELS.id = start << GT_KERNEL_ID_SHIFT | k, and launchId names a
 * launch configuration (writer_dict.c). More than 256 kernels starting in one
 * nanosecond cannot all get an id: the others are committed, the rest
 * counted in GTRACE_DROPPED_EVENTS.
 *
 * This file does not open, commit or close a trace (writer.c). */
#include "config.h"

#include "writer_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The table of each buffered kind. */
static const struct {
    gt_event_kind kind;
    const gt_table_desc *desc;
} row_tables[N_TABLES] = {
    [TB_KERNEL] = {GT_EV_KERNEL, &gt_tab_kernels},
    [TB_MEMCPY] = {GT_EV_MEMCPY, &gt_tab_memcpy},
    [TB_MEMSET] = {GT_EV_MEMSET, &gt_tab_memset},
    [TB_API] = {GT_EV_API, &gt_tab_runtime},
    [TB_SYNC] = {GT_EV_SYNC, &gt_tab_sync},
    [TB_NVTX] = {GT_EV_NVTX, &gt_tab_nvtx},
    [TB_HEAP] = {GT_EV_HEAP, &gt_tab_memory_events},
    [TB_CPU_OP] = {GT_EV_CPU_OP, &gt_tab_cpu_ops},
};

/* ---- writing rows ------------------------------------------------------------ */

static void bind_row(const gt_writer *w, sqlite3_stmt *stmt, int first, const row_buffer *b, int r)
{
    const int64_t *v = b->cells + (size_t)r * b->n_cols;
    for (int c = 0; c < b->n_cols; c++) {
        if (b->nulls[r] >> c & 1) {
            sqlite3_bind_null(stmt, first + c);
        } else if (b->text_cols >> c & 1) {
            const string_ref *str = &w->string_of[v[c] - 1]; /* checked when added */
            sqlite3_bind_text(stmt, first + c, str->s, (int)str->n_bytes, SQLITE_STATIC);
        } else if (b->real_cols >> c & 1) {
            double x;
            memcpy(&x, &v[c], sizeof x);
            sqlite3_bind_double(stmt, first + c, x);
        } else {
            sqlite3_bind_int64(stmt, first + c, v[c]);
        }
    }
}

/* Inserts row r alone. A kernel whose id is taken (another kernel started in
 * the same nanosecond) moves to the next free k of that nanosecond. */
static int insert_one(gt_writer *w, table_id t, int r)
{
    row_buffer *b = &w->rows[t];
    for (;;) {
        bind_row(w, b->one, 1, b, r);
        int rc = gt_wr_step_reset(b->one);
        if (rc == SQLITE_DONE)
            return GT_OK;
        if (t != TB_KERNEL || rc != SQLITE_CONSTRAINT_PRIMARYKEY)
            return gt_wr_sql_error(w, rc, "insert events");
        int64_t *id = &b->cells[(size_t)r * b->n_cols + w->kernel_id_col];
        if ((*id & GT_KERNEL_ID_MAX_K) == GT_KERNEL_ID_MAX_K)
            return gt_error_set(GT_ERR_INVALID, "%s: more than %d kernels start at %lld ns",
                                w->path, GT_KERNEL_ID_MAX_K + 1, (long long)(*id >> GT_KERNEL_ID_SHIFT));
        (*id)++;
    }
}

/* A kernel that found no free id is left out, and counted where a reader
 * sees it: GTRACE_DROPPED_EVENTS. Commit reports it. */
static int unplaced_kernel(gt_writer *w, int64_t launch)
{
    sqlite3_stmt *stmt = w->stmts[ST_DROPPED];
    sqlite3_bind_int64(stmt, gt_table_param(&gt_tab_dropped_events, "globalPid"), w->launch_of[launch - 1].global_pid);
    sqlite3_bind_text(stmt, gt_table_param(&gt_tab_dropped_events, "kind"), gt_event_kind_name(GT_EV_KERNEL), -1,
                      SQLITE_STATIC);
    sqlite3_bind_int64(stmt, gt_table_param(&gt_tab_dropped_events, "count"), 1);
    int rc = gt_wr_step_reset(stmt);
    if (rc != SQLITE_DONE)
        return gt_wr_sql_error(w, rc, "count dropped events");
    w->n_unplaced++;
    w->n_events[GT_EV_KERNEL]--;
    return GT_OK;
}

static int compare_keys(const void *a, const void *b)
{
    const row_key *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row); /* equal starts: in the order added */
}

/* Rows in start order (by start, or by a kernel's id made of it). For
 * kernels, B-tree inserts then land past the last row and leave full pages,
 * where kernels of several streams, interleaved, would split pages in the
 * middle; for the rest, rowid order follows time order. */
static void sort_rows(const row_buffer *b, row_key *keys)
{
    bool sorted = true;
    for (int r = 0; r < b->n_rows; r++) {
        keys[r] = (row_key){b->cells[(size_t)r * b->n_cols + b->start_col], r};
        sorted = sorted && (r == 0 || keys[r - 1].id <= keys[r].id);
    }
    if (!sorted)
        qsort(keys, (size_t)b->n_rows, sizeof *keys, compare_keys);
}

/* Rows rows[0..n) of table t (rows NULL: 0..n), BULK_ROWS per statement;
 * the rest, and a statement that hit a taken kernel id, one by one. */
static int insert_rows(gt_writer *w, table_id t, const row_key *rows, int n)
{
    row_buffer *b = &w->rows[t];
    int status = GT_OK;
    for (int i = 0; i < n && status == GT_OK;) {
        int end = n;
        if (i + BULK_ROWS <= n) {
            for (int r = 0; r < BULK_ROWS; r++)
                bind_row(w, b->bulk, 1 + r * b->n_cols, b, rows ? rows[i + r].row : i + r);
            int rc = gt_wr_step_reset(b->bulk);
            if (rc == SQLITE_DONE) {
                i += BULK_ROWS;
                continue;
            }
            if (t != TB_KERNEL || rc != SQLITE_CONSTRAINT_PRIMARYKEY)
                return gt_wr_sql_error(w, rc, "insert events");
            end = i + BULK_ROWS; /* the statement was undone */
        }
        for (; i < end && status == GT_OK; i++) {
            int r = rows ? rows[i].row : i;
            status = insert_one(w, t, r);
            if (status == GT_ERR_INVALID)
                status = unplaced_kernel(w, b->cells[(size_t)r * b->n_cols + w->kernel_launch_col]);
        }
    }
    return status;
}

/* Writes the buffered rows of table t. */
static int flush_rows(gt_writer *w, table_id t)
{
    row_buffer *b = &w->rows[t];
    /* rows reach the file inside a batch, which is one transaction */
    GT_ASSERT(w->in_batch && !sqlite3_get_autocommit(w->db));
    sort_rows(b, w->order);
    int status = insert_rows(w, t, w->order, b->n_rows);
    for (int i = 0; i < b->n_rows && status == GT_OK; i++) {
        int64_t start = b->cells[(size_t)w->order[i].row * b->n_cols + b->start_col];
        if (w->has_rows[t] && start < w->last_start[t])
            w->unordered[t] = true; /* a rolled-back batch can only make this pessimistic */
        w->last_start[t] = start;
        w->has_rows[t] = true;
    }
    b->n_rows = 0;
    return status;
}

/* The next free row of table t's buffer, filled from the event's members
 * as the description says; P_HOOK cells are NULL until set. */
static int64_t *next_row(gt_writer *w, table_id t, const void *ev, uint32_t **nulls)
{
    row_buffer *b = &w->rows[t];
    int64_t *v = b->cells + (size_t)b->n_rows * b->n_cols;
    uint32_t null_mask = 0;
    const char *base = ev;
    int c = 0;
    for (size_t i = 0; i < b->desc->n_cols; i++) {
        const gt_column *col = &b->desc->cols[i];
        if (col->put == P_NONE)
            continue;
        const char *m = base + col->offset;
        int32_t v32;
        uint32_t u32;
        bool vb;
        switch (col->put) {
        case P_I64:
        case P_I64_NZ:
        case P_END_NEG1:
            memcpy(&v[c], m, sizeof v[c]);
            if ((col->put == P_I64_NZ && v[c] == 0) || (col->put == P_END_NEG1 && v[c] == -1))
                null_mask |= 1u << c;
            break;
        case P_I32:
        case P_I32_NZ:
            memcpy(&v32, m, sizeof v32);
            v[c] = v32;
            if (col->put == P_I32_NZ && v32 == 0)
                null_mask |= 1u << c;
            break;
        case P_U32:
            memcpy(&u32, m, sizeof u32);
            v[c] = u32;
            break;
        case P_BOOL:
            memcpy(&vb, m, sizeof vb);
            v[c] = vb;
            break;
        default: /* P_HOOK (a P_TEXT pointer cannot wait in a buffer) */
            null_mask |= 1u << c;
            break;
        }
        c++;
    }
    b->nulls[b->n_rows] = null_mask;
    *nulls = &b->nulls[b->n_rows];
    return v;
}

static int row_done(gt_writer *w, table_id t)
{
    row_buffer *b = &w->rows[t];
    if (++b->n_rows < b->cap_rows)
        return GT_OK;
    return flush_rows(w, t);
}

static void set_cell(int64_t *v, uint32_t *nulls, int c, int64_t x)
{
    v[c] = x;
    *nulls &= ~(1u << c);
}

/* ---- events ------------------------------------------------------------------- */

/* Kernel ids are start * 256 + k; start must leave room for the shift. */
#define KERNEL_START_LIMIT ((int64_t)1 << (63 - GT_KERNEL_ID_SHIFT))

static int add_kernel(gt_writer *w, const gt_kernel *k)
{
    if (k->start_ns < -KERNEL_START_LIMIT || k->start_ns >= KERNEL_START_LIMIT)
        return gt_error_set(GT_ERR_INVALID, "%s: kernel start %lld ns is out of range", w->path,
                            (long long)k->start_ns);
    int64_t launch = 0;
    int status = gt_wr_launch_id(w, k, &launch);
    if (status != GT_OK)
        return status;
    uint32_t *nulls;
    int64_t *v = next_row(w, TB_KERNEL, k, &nulls);
    set_cell(v, nulls, w->kernel_id_col, (int64_t)((uint64_t)k->start_ns << GT_KERNEL_ID_SHIFT));
    set_cell(v, nulls, w->kernel_launch_col, launch);
    return row_done(w, TB_KERNEL);
}

static int add_nvtx(gt_writer *w, const gt_nvtx *n)
{
    if ((unsigned)n->payload_kind > GT_PAYLOAD_FLOAT)
        return gt_error_set(GT_ERR_INVALID, "%s: unknown NVTX payload kind %d", w->path, (int)n->payload_kind);
    if (n->text && (n->text < 0 || (uint64_t)n->text > w->strings.n))
        return gt_error_set(GT_ERR_INVALID, "%s: NVTX text %lld is no interned string", w->path, (long long)n->text);
    uint32_t *nulls;
    int64_t *v = next_row(w, TB_NVTX, n, &nulls);
    if (n->has_color)
        set_cell(v, nulls, w->nvtx_color_col, (int64_t)n->color);
    /* nsys: a registered string by its id (textId), any other message as text */
    if (n->text)
        set_cell(v, nulls, n->text_registered ? w->nvtx_text_id_col : w->nvtx_text_col, n->text);
    int64_t x = 0;
    double d;
    switch (n->payload_kind) {
    case GT_PAYLOAD_NONE: break;
    case GT_PAYLOAD_U64: x = (int64_t)n->payload.u64; break;
    case GT_PAYLOAD_I64: x = n->payload.i64; break;
    case GT_PAYLOAD_DOUBLE: d = n->payload.f64; memcpy(&x, &d, sizeof x); break;
    case GT_PAYLOAD_U32: x = n->payload.u32; break;
    case GT_PAYLOAD_I32: x = n->payload.i32; break;
    case GT_PAYLOAD_FLOAT: d = n->payload.f32; memcpy(&x, &d, sizeof x); break;
    }
    if (n->payload_kind != GT_PAYLOAD_NONE)
        set_cell(v, nulls, w->nvtx_payload_col[n->payload_kind], x);
    return row_done(w, TB_NVTX);
}

/* Rare (allocations, not launches) and needs its rowid: inserted at once. */
static int add_gpu_memory(gt_writer *w, const gt_gpu_memory *m)
{
    sqlite3_stmt *stmt = w->stmts[ST_GPU_MEMORY];
    gt_wr_bind_struct(stmt, &gt_tab_gpu_memory, m);
    int rc = gt_wr_step_reset(stmt);
    if (rc != SQLITE_DONE)
        return gt_wr_sql_error(w, rc, "insert GPU memory events");
    if (!m->callchain_id)
        return GT_OK;
    stmt = w->stmts[ST_GPU_STACK];
    gt_wr_bind_struct(stmt, &gt_tab_gpu_memory_stacks, m);
    sqlite3_bind_int64(stmt, gt_table_param(&gt_tab_gpu_memory_stacks, "eventId"), sqlite3_last_insert_rowid(w->db));
    rc = gt_wr_step_reset(stmt);
    return rc == SQLITE_DONE ? GT_OK : gt_wr_sql_error(w, rc, "insert GPU memory stacks");
}

int gt_wr_add_event(gt_writer *w, const gt_event *ev)
{
    switch (ev->kind) {
    case GT_EV_KERNEL: return add_kernel(w, &ev->u.kernel);
    case GT_EV_NVTX: return add_nvtx(w, &ev->u.nvtx);
    case GT_EV_GPU_MEMORY: return add_gpu_memory(w, &ev->u.gpu_memory);
    default:
        for (int t = 0; t < N_TABLES; t++) {
            if (row_tables[t].kind != ev->kind)
                continue;
            uint32_t *nulls;
            next_row(w, (table_id)t, &ev->u, &nulls);
            return row_done(w, (table_id)t);
        }
        return gt_error_set(GT_ERR_INVALID, "%s: unknown event kind %d", w->path, (int)ev->kind);
    }
}

int gt_wr_flush_rows(gt_writer *w)
{
    int status = GT_OK;
    for (int t = 0; t < N_TABLES && status == GT_OK; t++)
        status = flush_rows(w, (table_id)t);
    return status;
}

void gt_wr_drop_rows(gt_writer *w)
{
    for (int t = 0; t < N_TABLES; t++) {
        sqlite3_reset(w->rows[t].one);
        sqlite3_reset(w->rows[t].bulk);
        w->rows[t].n_rows = 0;
    }
}

void gt_wr_ordered_tables(const gt_writer *w, char *out, size_t n_bytes)
{
    out[0] = '\0';
    for (int t = 0; t < N_TABLES; t++) {
        /* kernels always are: closing copies them in start order */
        if (!w->has_rows[t] || (t != TB_KERNEL && w->unordered[t]))
            continue;
        const char *name = t == TB_KERNEL ? gt_tab_kernel.name : row_tables[t].desc->name;
        size_t len = strlen(out);
        snprintf(out + len, n_bytes - len, "%s%s", len ? " " : "", name);
    }
}

/* ---- opening and freeing ---------------------------------------------------------- */

/* The cell of column `name` of table t (it must be written). */
static int cell_of(table_id t, const char *name)
{
    return gt_table_param(row_tables[t].desc, name) - 1;
}

/* One allocation for every buffer. */
static int alloc_buffers(gt_writer *w)
{
    size_t n_bytes = 0;
    for (int t = 0; t < N_TABLES; t++) {
        row_buffer *b = &w->rows[t];
        n_bytes += (size_t)b->cap_rows * (b->n_cols * sizeof *b->cells + sizeof *b->nulls);
    }
    char *p = w->row_memory = sqlite3_malloc64(n_bytes);
    if (!p)
        return gt_wr_nomem(w, "allocate buffers");
    for (int t = 0; t < N_TABLES; t++) {
        row_buffer *b = &w->rows[t];
        b->cells = (int64_t *)p;
        p += (size_t)b->cap_rows * b->n_cols * sizeof *b->cells;
    }
    for (int t = 0; t < N_TABLES; t++) {
        row_buffer *b = &w->rows[t];
        b->nulls = (uint32_t *)p;
        p += (size_t)b->cap_rows * sizeof *b->nulls;
    }
    return GT_OK;
}

int gt_wr_open_rows(gt_writer *w)
{
    int status = GT_OK;
    for (int t = 0; t < N_TABLES && status == GT_OK; t++) {
        row_buffer *b = &w->rows[t];
        const gt_table_desc *d = row_tables[t].desc;
        b->desc = d;
        b->cap_rows = SORT_ROWS;
        b->n_cols = gt_table_n_put(d);
        b->start_col = cell_of((table_id)t, t == TB_KERNEL ? "id" : "start");
        int c = 0;
        for (size_t i = 0; i < d->n_cols; i++) {
            if (d->cols[i].put == P_NONE)
                continue;
            if (d->cols[i].sql == SQL_REAL)
                b->real_cols |= 1u << c;
            else if (d->cols[i].sql == SQL_TEXT)
                b->text_cols |= 1u << c;
            c++;
        }
        status = gt_wr_prepare_insert(w, d, 1, NULL, &b->one);
        if (status == GT_OK)
            status = gt_wr_prepare_insert(w, d, BULK_ROWS, NULL, &b->bulk);
    }
    w->kernel_id_col = cell_of(TB_KERNEL, "id");
    w->kernel_launch_col = cell_of(TB_KERNEL, "launchId");
    w->nvtx_color_col = cell_of(TB_NVTX, "color");
    w->nvtx_text_col = cell_of(TB_NVTX, "text");
    w->nvtx_text_id_col = cell_of(TB_NVTX, "textId");
    static const char *const payload_columns[] = {
        [GT_PAYLOAD_U64] = "uint64Value", [GT_PAYLOAD_I64] = "int64Value", [GT_PAYLOAD_DOUBLE] = "doubleValue",
        [GT_PAYLOAD_U32] = "uint32Value", [GT_PAYLOAD_I32] = "int32Value", [GT_PAYLOAD_FLOAT] = "floatValue",
    };
    for (int k = GT_PAYLOAD_U64; k <= GT_PAYLOAD_FLOAT; k++)
        w->nvtx_payload_col[k] = cell_of(TB_NVTX, payload_columns[k]);
    return status == GT_OK ? alloc_buffers(w) : status;
}

void gt_wr_free_rows(gt_writer *w)
{
    for (int t = 0; t < N_TABLES; t++) {
        sqlite3_finalize(w->rows[t].one);
        sqlite3_finalize(w->rows[t].bulk);
    }
    sqlite3_free(w->row_memory);
}
