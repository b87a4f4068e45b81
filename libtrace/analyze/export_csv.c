/* export_csv.c: one CSV file per kind of event (kernel.csv, memcpy.csv...),
 * RFC 4180: a header row, CRLF line ends, fields with commas, quotes or line
 * breaks quoted with inner quotes doubled. Names are resolved to strings and
 * ids split into pid/tid; times stay integer nanoseconds. Enum columns keep
 * their nsys number and gain a `<column>_label` column, last in the row so
 * that the numbered columns keep their places, holding the label that
 * column's ENUM_* table (nsys's, which gtrace writes too) gives the number;
 * empty for a number the table lacks.
 *
 * Each kind's columns are described once, in its table below: a column's
 * name and where its value is in the event. The header row and every data
 * row are made from the same table, so they cannot disagree by position.
 * The store's column descriptions (libtrace/store/columns.c) are not reused:
 * they are private to the store and name nsys's columns, not these. */
#include "analyze_int.h"
#include "gt_labels.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* How a column's cell is got from its event and written. */
enum cell {
    C_I64,   /* int64_t member */
    C_I32,   /* int32_t member */
    C_U64,   /* uint64_t member: addresses and handles */
    C_PID,   /* the pid of an int64_t global pid or tid */
    C_TID,   /* the tid of an int64_t global tid */
    C_DUR,   /* end - start of two int64_t members; saturates on a damaged row */
    C_STR,   /* a gt_string_id member, resolved */
    C_LABEL, /* an int32_t enum member's label in a gt_labels set */
    C_TEXT,  /* a word the column's function makes from the event */
};

#define TEXT_BYTES 16

typedef struct csv_col {
    const char *name;
    unsigned char cell;  /* enum cell */
    unsigned char set;   /* C_LABEL: the gt_label_set */
    unsigned short off;  /* of the member in the kind's struct; C_DUR: of the start */
    unsigned short off2; /* C_DUR: of the end */
    const char *(*text)(gt_trace *t, const void *ev, char buf[TEXT_BYTES]); /* C_TEXT */
} csv_col;

/* offsetof(s, m), which does not compile unless m is `bytes` wide: a column
 * cannot read an int32_t member as an int64_t one. */
#define OFF(s, m, bytes) (offsetof(s, m) + 0 * sizeof(char[sizeof(((s *)0)->m) == (bytes) ? 1 : -1]))

#define I64(s, name, m) {name, C_I64, 0, OFF(s, m, 8), 0, NULL}
#define I32(s, name, m) {name, C_I32, 0, OFF(s, m, 4), 0, NULL}
#define U64(s, name, m) {name, C_U64, 0, OFF(s, m, 8), 0, NULL}
#define PID(s, m) {"pid", C_PID, 0, OFF(s, m, 8), 0, NULL}
#define TID(s, m) {"tid", C_TID, 0, OFF(s, m, 8), 0, NULL}
#define DUR(s) {"duration_ns", C_DUR, 0, OFF(s, start_ns, 8), OFF(s, end_ns, 8), NULL}
#define STR(s, name, m) {name, C_STR, 0, OFF(s, m, sizeof(gt_string_id)), 0, NULL}
#define LABEL(s, name, m, set) {name, C_LABEL, GT_LABELS_##set, OFF(s, m, 4), 0, NULL}
#define TEXT(name, fn) {name, C_TEXT, 0, 0, 0, fn}

/* ---- the words some columns make ------------------------------------------ */

static const char *kernel_name(gt_trace *t, const void *ev, char buf[TEXT_BYTES])
{
    const gt_kernel *k = ev;
    return gt_trace_string(t, k->demangled_name ? k->demangled_name : k->mangled_name);
}

static const char *api_class(gt_trace *t, const void *ev, char buf[TEXT_BYTES])
{
    return ((const gt_api_call *)ev)->event_class == GT_API_DRIVER ? "driver" : "runtime";
}

static const char *nvtx_color(gt_trace *t, const void *ev, char buf[TEXT_BYTES])
{
    const gt_nvtx *n = ev;
    if (!n->has_color)
        return "";
    snprintf(buf, TEXT_BYTES, "#%08x", n->color);
    return buf;
}

static const char *devmem_operation(gt_trace *t, const void *ev, char buf[TEXT_BYTES])
{
    return ((const gt_gpu_memory *)ev)->operation == GT_DEVMEM_FREE ? "free" : "alloc";
}

static const char *heap_operation(gt_trace *t, const void *ev, char buf[TEXT_BYTES])
{
    static const char *const ops[] = {
        [GT_HEAP_REGISTER] = "heap_register",
        [GT_HEAP_UNREGISTER] = "heap_unregister",
        [GT_HEAP_RESET] = "heap_reset",
        [GT_REGION_REGISTER] = "region_register",
        [GT_REGION_RESIZE] = "region_resize",
        [GT_REGION_UNREGISTER] = "region_unregister",
        [GT_REGION_NAME] = "region_name",
    };
    int32_t op = ((const gt_heap_event *)ev)->operation;
    return op >= 0 && (size_t)op < sizeof ops / sizeof ops[0] ? ops[op] : "unknown";
}

/* ---- the columns of each kind, in their order ----------------------------- */

/* The first eight columns of the GPU activities (kernels, copies, memsets,
 * synchronizations), from the members of the same names of struct s. */
#define GPU_ACTIVITY_COLUMNS(s) \
    I64(s, "start_ns", start_ns), I64(s, "end_ns", end_ns), DUR(s), PID(s, global_pid), \
    I32(s, "device", device_id), I32(s, "context", context_id), I32(s, "stream", stream_id), \
    I64(s, "correlation_id", correlation_id)

static const csv_col kernel_cols[] = {
    GPU_ACTIVITY_COLUMNS(gt_kernel),
    TEXT("name", kernel_name), /* demangled, else mangled */
    STR(gt_kernel, "short_name", short_name),
    I32(gt_kernel, "grid_x", grid_x),
    I32(gt_kernel, "grid_y", grid_y),
    I32(gt_kernel, "grid_z", grid_z),
    I32(gt_kernel, "block_x", block_x),
    I32(gt_kernel, "block_y", block_y),
    I32(gt_kernel, "block_z", block_z),
    I32(gt_kernel, "registers_per_thread", registers_per_thread),
    I32(gt_kernel, "static_shared_bytes", static_shared_bytes),
    I32(gt_kernel, "dynamic_shared_bytes", dynamic_shared_bytes),
    I64(gt_kernel, "graph_node_id", graph_node_id),
};

static const csv_col memcpy_cols[] = {
    GPU_ACTIVITY_COLUMNS(gt_memcpy),
    I64(gt_memcpy, "bytes", bytes),
    I32(gt_memcpy, "copy_kind", copy_kind),
    I32(gt_memcpy, "src_kind", src_kind),
    I32(gt_memcpy, "dst_kind", dst_kind),
    LABEL(gt_memcpy, "copy_kind_label", copy_kind, COPY_KIND),
    LABEL(gt_memcpy, "src_kind_label", src_kind, MEM_KIND),
    LABEL(gt_memcpy, "dst_kind_label", dst_kind, MEM_KIND),
};

static const csv_col memset_cols[] = {
    GPU_ACTIVITY_COLUMNS(gt_memset),
    I64(gt_memset, "bytes", bytes),
    I32(gt_memset, "value", value),
    I32(gt_memset, "mem_kind", mem_kind),
    LABEL(gt_memset, "mem_kind_label", mem_kind, MEM_KIND),
};

static const csv_col api_cols[] = {
    I64(gt_api_call, "start_ns", start_ns),
    I64(gt_api_call, "end_ns", end_ns),
    DUR(gt_api_call),
    PID(gt_api_call, global_tid),
    TID(gt_api_call, global_tid),
    I64(gt_api_call, "correlation_id", correlation_id),
    STR(gt_api_call, "name", name),
    TEXT("class", api_class),
    I32(gt_api_call, "return_value", return_value),
    I64(gt_api_call, "callchain_id", callchain_id),
};

static const csv_col sync_cols[] = {
    GPU_ACTIVITY_COLUMNS(gt_sync),
    I32(gt_sync, "sync_type", sync_type),
    I64(gt_sync, "event_id", event_id),
    LABEL(gt_sync, "sync_type_label", sync_type, SYNC_TYPE),
};

static const csv_col nvtx_cols[] = {
    I64(gt_nvtx, "start_ns", start_ns),
    I64(gt_nvtx, "end_ns", end_ns), /* -1 for instant events: no duration column */
    PID(gt_nvtx, global_tid),
    TID(gt_nvtx, global_tid),
    I32(gt_nvtx, "event_type", event_type),
    I64(gt_nvtx, "range_id", range_id),
    I64(gt_nvtx, "domain_id", domain_id),
    I32(gt_nvtx, "category", category),
    TEXT("color", nvtx_color),
    STR(gt_nvtx, "text", text),
};

static const csv_col gpu_memory_cols[] = {
    I64(gt_gpu_memory, "start_ns", start_ns),
    PID(gt_gpu_memory, global_pid),
    I32(gt_gpu_memory, "device", device_id),
    I32(gt_gpu_memory, "context", context_id),
    I32(gt_gpu_memory, "stream", stream_id),
    TEXT("operation", devmem_operation),
    U64(gt_gpu_memory, "address", address),
    I64(gt_gpu_memory, "bytes", bytes),
    I32(gt_gpu_memory, "mem_kind", mem_kind),
    I64(gt_gpu_memory, "correlation_id", correlation_id),
    I64(gt_gpu_memory, "callchain_id", callchain_id),
    LABEL(gt_gpu_memory, "mem_kind_label", mem_kind, MEM_KIND),
};

static const csv_col heap_cols[] = {
    I64(gt_heap_event, "start_ns", start_ns),
    PID(gt_heap_event, global_tid),
    TID(gt_heap_event, global_tid),
    TEXT("operation", heap_operation),
    U64(gt_heap_event, "heap_id", heap_id),
    U64(gt_heap_event, "address", address),
    I64(gt_heap_event, "bytes", bytes),
    I32(gt_heap_event, "heap_usage", heap_usage),
    I32(gt_heap_event, "memory_type", memory_type),
    STR(gt_heap_event, "name", name),
    I64(gt_heap_event, "domain_id", domain_id),
    I64(gt_heap_event, "callchain_id", callchain_id),
};

static const csv_col cpu_op_cols[] = {
    I64(gt_cpu_op, "start_ns", start_ns),
    I64(gt_cpu_op, "end_ns", end_ns),
    DUR(gt_cpu_op),
    PID(gt_cpu_op, global_tid),
    TID(gt_cpu_op, global_tid),
    I32(gt_cpu_op, "stream", stream_id),
    STR(gt_cpu_op, "name", name),
    I64(gt_cpu_op, "flops", flops),
    I64(gt_cpu_op, "bytes", bytes),
};

#define KIND(cols) {cols, sizeof cols / sizeof cols[0]}

static const struct {
    const csv_col *cols;
    size_t n_cols;
} kinds[GT_EV_N_KINDS] = {
    [GT_EV_KERNEL] = KIND(kernel_cols),
    [GT_EV_MEMCPY] = KIND(memcpy_cols),
    [GT_EV_MEMSET] = KIND(memset_cols),
    [GT_EV_API] = KIND(api_cols),
    [GT_EV_SYNC] = KIND(sync_cols),
    [GT_EV_NVTX] = KIND(nvtx_cols),
    [GT_EV_GPU_MEMORY] = KIND(gpu_memory_cols),
    [GT_EV_HEAP] = KIND(heap_cols),
    [GT_EV_CPU_OP] = KIND(cpu_op_cols),
};

/* ---- writing ----------------------------------------------------------------- */

static void field(FILE *f, const char *s)
{
    if (!s)
        s = "";
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* Members are copied out: the event's union holds the kind's struct. */
static int64_t i64_at(const char *e, size_t off)
{
    int64_t v;
    memcpy(&v, e + off, sizeof v);
    return v;
}

static int32_t i32_at(const char *e, size_t off)
{
    int32_t v;
    memcpy(&v, e + off, sizeof v);
    return v;
}

/* One cell: exactly one field, so a row has as many as its header. */
static void cell(gt_trace *t, FILE *f, const csv_col *c, const char *e)
{
    char buf[TEXT_BYTES];
    gt_string_id id;
    switch ((enum cell)c->cell) {
    case C_I64:
        fprintf(f, "%lld", (long long)i64_at(e, c->off));
        break;
    case C_I32:
        fprintf(f, "%d", i32_at(e, c->off));
        break;
    case C_U64:
        fprintf(f, "%llu", (unsigned long long)(uint64_t)i64_at(e, c->off));
        break;
    case C_PID:
        fprintf(f, "%lld", (long long)gt_pid_of(i64_at(e, c->off)));
        break;
    case C_TID:
        fprintf(f, "%lld", (long long)gt_tid_of(i64_at(e, c->off)));
        break;
    case C_DUR:
        fprintf(f, "%lld", (long long)gt_sat_sub(i64_at(e, c->off2), i64_at(e, c->off)));
        break;
    case C_STR:
        memcpy(&id, e + c->off, sizeof id);
        field(f, gt_trace_string(t, id));
        break;
    case C_LABEL:
        field(f, gt_label((gt_label_set)c->set, i32_at(e, c->off)));
        break;
    case C_TEXT:
        field(f, c->text(t, e, buf));
        break;
    }
}

int gt_export_csv_kind(gt_trace *t, gt_event_kind kind, FILE *f)
{
    gt_iter *it = NULL;
    gt_event ev;
    int rc;
    if (!t || !f || (unsigned)kind >= GT_EV_N_KINDS)
        return gt_error_set(GT_ERR_INVALID, "gt_export_csv_kind: bad argument");
    const csv_col *cols = kinds[kind].cols;
    size_t n_cols = kinds[kind].n_cols;
    for (size_t i = 0; i < n_cols; i++) {
        if (i > 0)
            fputc(',', f);
        field(f, cols[i].name);
    }
    fputs("\r\n", f);
    if ((rc = gt_iter_new(&it, t, kind, INT64_MIN, INT64_MAX)) < 0)
        return rc;
    while ((rc = gt_iter_next(it, &ev)) == 1) {
        for (size_t i = 0; i < n_cols; i++) {
            if (i > 0)
                fputc(',', f);
            cell(t, f, &cols[i], (const char *)&ev.u);
        }
        fputs("\r\n", f);
    }
    gt_iter_free(it);
    if (rc < 0)
        return rc;
    return ferror(f) ? gt_error_set(GT_ERR_IO, "csv export: cannot write the output") : 0;
}

int gt_export_csv(gt_trace *t, const char *dir)
{
    int rc = 0;
    if (!t || !dir)
        return gt_error_set(GT_ERR_INVALID, "gt_export_csv: missing argument");
    for (int k = 0; k < GT_EV_N_KINDS && rc == 0; k++) {
        int64_t n = 0;
        if ((rc = gt_trace_count(t, (gt_event_kind)k, &n)) < 0)
            break;
        if (n == 0)
            continue;
        char *path = an_printf("%s/%s.csv", dir, gt_event_kind_name((gt_event_kind)k));
        if (!path)
            return gt_error_set(GT_ERR_NOMEM, "csv export: out of memory");
        FILE *f = fopen(path, "wb");
        if (!f) {
            rc = gt_error_set(GT_ERR_IO, "%s: cannot create the file", path);
            free(path);
            break;
        }
        rc = gt_export_csv_kind(t, (gt_event_kind)k, f);
        if (fclose(f) != 0 && rc == 0)
            rc = gt_error_set(GT_ERR_IO, "%s: cannot write the file", path);
        free(path);
    }
    return rc;
}
