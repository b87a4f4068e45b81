/* export_csv.c: one CSV file per kind of event (kernel.csv, memcpy.csv...),
 * RFC 4180: a header row, CRLF line ends, fields with commas, quotes or line
 * breaks quoted with inner quotes doubled. Names are resolved to strings and
 * ids split into pid/tid; times stay integer nanoseconds. Enum columns keep
 * their nsys number and gain a `<column>_label` column, last in the row so
 * that the numbered columns keep their places, holding the label that
 * column's ENUM_* table (nsys's, which gtrace writes too) gives the number;
 * empty for a number the table lacks. */
#include "analyze_int.h"
#include "gt_labels.h"

#include <stdlib.h>
#include <string.h>

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

/* The label columns: the words of the trace's own ENUM_* tables. */
#define LABEL(set, v) gt_label(GT_LABELS_##set, (v))

static const char *headers[GT_EV_N_KINDS] = {
    [GT_EV_KERNEL] = "start_ns,end_ns,duration_ns,pid,device,context,stream,correlation_id,name,short_name,"
                     "grid_x,grid_y,grid_z,block_x,block_y,block_z,registers_per_thread,static_shared_bytes,"
                     "dynamic_shared_bytes,graph_node_id",
    [GT_EV_MEMCPY] = "start_ns,end_ns,duration_ns,pid,device,context,stream,correlation_id,bytes,copy_kind,src_kind,dst_kind,"
                     "copy_kind_label,src_kind_label,dst_kind_label",
    [GT_EV_MEMSET] = "start_ns,end_ns,duration_ns,pid,device,context,stream,correlation_id,bytes,value,mem_kind,mem_kind_label",
    [GT_EV_API] = "start_ns,end_ns,duration_ns,pid,tid,correlation_id,name,class,return_value,callchain_id",
    [GT_EV_SYNC] = "start_ns,end_ns,duration_ns,pid,device,context,stream,correlation_id,sync_type,event_id,sync_type_label",
    [GT_EV_NVTX] = "start_ns,end_ns,pid,tid,event_type,range_id,domain_id,category,color,text",
    [GT_EV_GPU_MEMORY] = "start_ns,pid,device,context,stream,operation,address,bytes,mem_kind,correlation_id,callchain_id,"
                         "mem_kind_label",
    [GT_EV_HEAP] = "start_ns,pid,tid,operation,heap_id,address,bytes,heap_usage,memory_type,name,domain_id,callchain_id",
    [GT_EV_CPU_OP] = "start_ns,end_ns,duration_ns,pid,tid,stream,name,flops,bytes",
};

#define LL(x) ((long long)(x))

/* end - start; a damaged row's may not fit in 64 bits: it saturates. */
static long long dur(int64_t start_ns, int64_t end_ns)
{
    return gt_sat_sub(end_ns, start_ns);
}

static void row(gt_trace *t, FILE *f, const gt_event *ev)
{
    switch (ev->kind) {
    case GT_EV_KERNEL: {
        const gt_kernel *k = &ev->u.kernel;
        gt_string_id n = k->demangled_name ? k->demangled_name : k->mangled_name;
        fprintf(f, "%lld,%lld,%lld,%lld,%d,%d,%d,%lld,", LL(k->start_ns), LL(k->end_ns), dur(k->start_ns, k->end_ns),
                LL(gt_pid_of(k->global_pid)), k->device_id, k->context_id, k->stream_id, LL(k->correlation_id));
        field(f, gt_trace_string(t, n));
        fputc(',', f);
        field(f, gt_trace_string(t, k->short_name));
        fprintf(f, ",%d,%d,%d,%d,%d,%d,%d,%d,%d,%lld", k->grid_x, k->grid_y, k->grid_z, k->block_x, k->block_y,
                k->block_z, k->registers_per_thread, k->static_shared_bytes, k->dynamic_shared_bytes,
                LL(k->graph_node_id));
        break;
    }
    case GT_EV_MEMCPY: {
        const gt_memcpy *c = &ev->u.memcpy;
        fprintf(f, "%lld,%lld,%lld,%lld,%d,%d,%d,%lld,%lld,%d,%d,%d", LL(c->start_ns), LL(c->end_ns),
                dur(c->start_ns, c->end_ns), LL(gt_pid_of(c->global_pid)), c->device_id, c->context_id, c->stream_id,
                LL(c->correlation_id), LL(c->bytes), c->copy_kind, c->src_kind, c->dst_kind);
        fprintf(f, ",%s,%s,%s", LABEL(COPY_KIND, c->copy_kind), LABEL(MEM_KIND, c->src_kind),
                LABEL(MEM_KIND, c->dst_kind));
        break;
    }
    case GT_EV_MEMSET: {
        const gt_memset *s = &ev->u.memset;
        fprintf(f, "%lld,%lld,%lld,%lld,%d,%d,%d,%lld,%lld,%d,%d", LL(s->start_ns), LL(s->end_ns),
                dur(s->start_ns, s->end_ns), LL(gt_pid_of(s->global_pid)), s->device_id, s->context_id, s->stream_id,
                LL(s->correlation_id), LL(s->bytes), s->value, s->mem_kind);
        fprintf(f, ",%s", LABEL(MEM_KIND, s->mem_kind));
        break;
    }
    case GT_EV_API: {
        const gt_api_call *a = &ev->u.api;
        fprintf(f, "%lld,%lld,%lld,%lld,%lld,%lld,", LL(a->start_ns), LL(a->end_ns), dur(a->start_ns, a->end_ns),
                LL(gt_pid_of(a->global_tid)), LL(gt_tid_of(a->global_tid)), LL(a->correlation_id));
        field(f, gt_trace_string(t, a->name));
        fprintf(f, ",%s,%d,%lld", a->event_class == GT_API_DRIVER ? "driver" : "runtime", a->return_value,
                LL(a->callchain_id));
        break;
    }
    case GT_EV_SYNC: {
        const gt_sync *s = &ev->u.sync;
        fprintf(f, "%lld,%lld,%lld,%lld,%d,%d,%d,%lld,%d,%lld", LL(s->start_ns), LL(s->end_ns),
                dur(s->start_ns, s->end_ns), LL(gt_pid_of(s->global_pid)), s->device_id, s->context_id, s->stream_id,
                LL(s->correlation_id), s->sync_type, LL(s->event_id));
        fprintf(f, ",%s", LABEL(SYNC_TYPE, s->sync_type));
        break;
    }
    case GT_EV_NVTX: {
        const gt_nvtx *n = &ev->u.nvtx;
        fprintf(f, "%lld,%lld,%lld,%lld,%d,%lld,%lld,%d,", LL(n->start_ns), LL(n->end_ns), LL(gt_pid_of(n->global_tid)),
                LL(gt_tid_of(n->global_tid)), n->event_type, LL(n->range_id), LL(n->domain_id), n->category);
        if (n->has_color)
            fprintf(f, "#%08x", n->color);
        fputc(',', f);
        field(f, gt_trace_string(t, n->text));
        break;
    }
    case GT_EV_GPU_MEMORY: {
        const gt_gpu_memory *g = &ev->u.gpu_memory;
        fprintf(f, "%lld,%lld,%d,%d,%d,%s,%llu,%lld,%d,%lld,%lld", LL(g->start_ns), LL(gt_pid_of(g->global_pid)),
                g->device_id, g->context_id, g->stream_id, g->operation == GT_DEVMEM_FREE ? "free" : "alloc",
                (unsigned long long)g->address, LL(g->bytes), g->mem_kind, LL(g->correlation_id), LL(g->callchain_id));
        fprintf(f, ",%s", LABEL(MEM_KIND, g->mem_kind));
        break;
    }
    case GT_EV_HEAP: {
        const gt_heap_event *h = &ev->u.heap;
        static const char *ops[] = {"heap_register", "heap_unregister", "heap_reset", "region_register",
                                    "region_resize", "region_unregister", "region_name"};
        fprintf(f, "%lld,%lld,%lld,%s,%llu,%llu,%lld,%d,%d,", LL(h->start_ns), LL(gt_pid_of(h->global_tid)),
                LL(gt_tid_of(h->global_tid)), h->operation >= 0 && h->operation <= 6 ? ops[h->operation] : "unknown",
                (unsigned long long)h->heap_id, (unsigned long long)h->address, LL(h->bytes), h->heap_usage,
                h->memory_type);
        field(f, gt_trace_string(t, h->name));
        fprintf(f, ",%lld,%lld", LL(h->domain_id), LL(h->callchain_id));
        break;
    }
    case GT_EV_CPU_OP: {
        const gt_cpu_op *c = &ev->u.cpu_op;
        fprintf(f, "%lld,%lld,%lld,%lld,%lld,%d,", LL(c->start_ns), LL(c->end_ns), dur(c->start_ns, c->end_ns),
                LL(gt_pid_of(c->global_tid)), LL(gt_tid_of(c->global_tid)), c->stream_id);
        field(f, gt_trace_string(t, c->name));
        fprintf(f, ",%lld,%lld", LL(c->flops), LL(c->bytes));
        break;
    }
    case GT_EV_N_KINDS:
        break;
    }
    fputs("\r\n", f);
}

int gt_export_csv_kind(gt_trace *t, gt_event_kind kind, FILE *f)
{
    gt_iter *it = NULL;
    gt_event ev;
    int rc;
    if (!t || !f || (unsigned)kind >= GT_EV_N_KINDS)
        return gt_error_set(GT_ERR_INVALID, "gt_export_csv_kind: bad argument");
    fputs(headers[kind], f);
    fputs("\r\n", f);
    if ((rc = gt_iter_new(&it, t, kind, INT64_MIN, INT64_MAX)) < 0)
        return rc;
    while ((rc = gt_iter_next(it, &ev)) == 1)
        row(t, f, &ev);
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
