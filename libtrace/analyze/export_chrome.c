/* export_chrome.c: a trace as Chrome trace JSON (the Trace Event Format that
 * Perfetto and chrome://tracing open), laid out the way PyTorch's Kineto
 * writes it so the same viewers and scripts read it:
 *   host: pid = process id, tid = thread id; categories "cuda_runtime",
 *         "cuda_driver", "user_annotation" (NVTX ranges), "cpu_op";
 *   device: pid = device id, tid = stream; categories "kernel",
 *           "gpu_memcpy", "gpu_memset", "cuda_sync";
 *   flows "ac2g" from each launch call to its kernel, copy or memset, by
 *   correlation id (a flow only where both ends exist).
 * Times are microseconds with nanosecond decimals. It streams the trace
 * through the reader; it does not project NVTX ranges onto the device
 * ("gpu_user_annotation") nor draw memory counters. */
#include "analyze_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct idset { /* a set of correlation ids */
    int64_t *keys;
    size_t cap, n;
} idset;

static size_t hash_id(int64_t k)
{
    uint64_t x = (uint64_t)k * 0x9e3779b97f4a7c15ULL;
    return (size_t)(x ^ (x >> 31));
}

static int idset_add(idset *s, int64_t k)
{
    if (k == 0)
        return 0;
    if ((s->n + 1) * 2 > s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 1024;
        int64_t *nk = calloc(ncap, sizeof *nk);
        if (!nk)
            return gt_error_set(GT_ERR_NOMEM, "chrome export: out of memory");
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->keys[i])
                continue;
            size_t h = hash_id(s->keys[i]) & (ncap - 1);
            while (nk[h])
                h = (h + 1) & (ncap - 1);
            nk[h] = s->keys[i];
        }
        free(s->keys);
        s->keys = nk;
        s->cap = ncap;
    }
    size_t h = hash_id(k) & (s->cap - 1);
    while (s->keys[h] && s->keys[h] != k)
        h = (h + 1) & (s->cap - 1);
    if (!s->keys[h]) {
        s->keys[h] = k;
        s->n++;
    }
    return 0;
}

static bool idset_has(const idset *s, int64_t k)
{
    if (k == 0 || s->cap == 0)
        return false;
    size_t h = hash_id(k) & (s->cap - 1);
    while (s->keys[h]) {
        if (s->keys[h] == k)
            return true;
        h = (h + 1) & (s->cap - 1);
    }
    return false;
}

typedef struct out {
    FILE *f;
    bool first;
    int64_t base_ns; /* the trace's first time: small numbers keep precision */
} out;

static void sep(out *o)
{
    fputs(o->first ? "\n" : ",\n", o->f);
    o->first = false;
}

static void ts(out *o, const char *key, int64_t ns)
{
    int64_t v = ns - o->base_ns;
    const char *sign = v < 0 ? "-" : "";
    if (v < 0)
        v = -v;
    fprintf(o->f, ",\"%s\":%s%lld.%03lld", key, sign, (long long)(v / 1000), (long long)(v % 1000));
}

static void span(out *o, const char *cat, const char *name, int64_t pid, int64_t tid, int64_t s, int64_t e)
{
    sep(o);
    fprintf(o->f, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", cat);
    an_json_str(o->f, name);
    fprintf(o->f, ",\"pid\":%lld,\"tid\":%lld", (long long)pid, (long long)tid);
    ts(o, "ts", s);
    int64_t d = e > s ? e - s : 0;
    fprintf(o->f, ",\"dur\":%lld.%03lld", (long long)(d / 1000), (long long)(d % 1000));
}

static void flow(out *o, bool start, int64_t corr, int64_t pid, int64_t tid, int64_t t)
{
    sep(o);
    fprintf(o->f, "{\"ph\":\"%s\",\"id\":%lld,\"pid\":%lld,\"tid\":%lld", start ? "s" : "f", (long long)corr,
            (long long)pid, (long long)tid);
    ts(o, "ts", t);
    fputs(",\"cat\":\"ac2g\",\"name\":\"ac2g\"", o->f);
    if (!start)
        fputs(",\"bp\":\"e\"", o->f);
    fputc('}', o->f);
}

static const char *mem_kind_name(int k)
{
    static const char *names[] = {"Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static", "Unknown"};
    return k >= 0 && k <= GT_MEM_UNKNOWN ? names[k] : "Unknown";
}

static const char *copy_name(int k)
{
    static const char *names[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
    return k >= 0 && k <= GT_COPY_PTOP ? names[k] : "Unknown";
}

/* Pass 1: correlation ids on each side, and the devices seen. */
static int collect(gt_trace *t, idset *host, idset *dev, int32_t *devs, size_t *n_devs)
{
    static const gt_event_kind dk[] = {GT_EV_KERNEL, GT_EV_MEMCPY, GT_EV_MEMSET, GT_EV_API};
    gt_iter *it = NULL;
    gt_event ev;
    int rc = 0;
    for (size_t k = 0; k < 4; k++) {
        if ((rc = gt_iter_new(&it, t, dk[k], INT64_MIN, INT64_MAX)) < 0)
            return rc;
        while ((rc = gt_iter_next(it, &ev)) == 1) {
            int64_t corr;
            int32_t d = -1;
            switch (ev.kind) {
            case GT_EV_KERNEL: corr = ev.u.kernel.correlation_id; d = ev.u.kernel.device_id; break;
            case GT_EV_MEMCPY: corr = ev.u.memcpy.correlation_id; d = ev.u.memcpy.device_id; break;
            case GT_EV_MEMSET: corr = ev.u.memset.correlation_id; d = ev.u.memset.device_id; break;
            default: corr = ev.u.api.correlation_id; break;
            }
            if ((rc = idset_add(ev.kind == GT_EV_API ? host : dev, corr)) < 0)
                break;
            if (d >= 0) {
                size_t i = 0;
                while (i < *n_devs && devs[i] != d)
                    i++;
                if (i == *n_devs && *n_devs < 64)
                    devs[(*n_devs)++] = d;
            }
        }
        gt_iter_free(it);
        it = NULL;
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int emit_kind(gt_trace *t, out *o, gt_event_kind kind, const idset *host, const idset *dev)
{
    gt_iter *it = NULL;
    gt_event ev;
    int rc = gt_iter_new(&it, t, kind, INT64_MIN, INT64_MAX);
    if (rc < 0)
        return rc;
    char name[256];
    while ((rc = gt_iter_next(it, &ev)) == 1) {
        switch (kind) {
        case GT_EV_KERNEL: {
            const gt_kernel *k = &ev.u.kernel;
            gt_string_id nid = k->demangled_name ? k->demangled_name : k->short_name ? k->short_name : k->mangled_name;
            span(o, "kernel", gt_trace_string(t, nid), k->device_id, k->stream_id, k->start_ns, k->end_ns);
            fprintf(o->f, ",\"args\":{\"device\":%d,\"stream\":%d,\"correlation\":%lld,\"registers per thread\":%d,"
                          "\"shared memory\":%d,\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d]}}",
                    k->device_id, k->stream_id, (long long)k->correlation_id, k->registers_per_thread,
                    k->static_shared_bytes + k->dynamic_shared_bytes, k->grid_x, k->grid_y, k->grid_z, k->block_x,
                    k->block_y, k->block_z);
            if (idset_has(host, k->correlation_id))
                flow(o, false, k->correlation_id, k->device_id, k->stream_id, k->start_ns);
            break;
        }
        case GT_EV_MEMCPY: {
            const gt_memcpy *c = &ev.u.memcpy;
            snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", copy_name(c->copy_kind), mem_kind_name(c->src_kind),
                     mem_kind_name(c->dst_kind));
            span(o, "gpu_memcpy", name, c->device_id, c->stream_id, c->start_ns, c->end_ns);
            double gbps = c->end_ns > c->start_ns ? (double)c->bytes / (double)(c->end_ns - c->start_ns) : 0;
            fprintf(o->f, ",\"args\":{\"device\":%d,\"stream\":%d,\"correlation\":%lld,\"bytes\":%lld,"
                          "\"memory bandwidth (GB/s)\":",
                    c->device_id, c->stream_id, (long long)c->correlation_id, (long long)c->bytes);
            an_json_num(o->f, gbps);
            fputs("}}", o->f);
            if (idset_has(host, c->correlation_id))
                flow(o, false, c->correlation_id, c->device_id, c->stream_id, c->start_ns);
            break;
        }
        case GT_EV_MEMSET: {
            const gt_memset *s = &ev.u.memset;
            snprintf(name, sizeof name, "Memset (%s)", mem_kind_name(s->mem_kind));
            span(o, "gpu_memset", name, s->device_id, s->stream_id, s->start_ns, s->end_ns);
            fprintf(o->f, ",\"args\":{\"device\":%d,\"stream\":%d,\"correlation\":%lld,\"bytes\":%lld}}", s->device_id,
                    s->stream_id, (long long)s->correlation_id, (long long)s->bytes);
            if (idset_has(host, s->correlation_id))
                flow(o, false, s->correlation_id, s->device_id, s->stream_id, s->start_ns);
            break;
        }
        case GT_EV_SYNC: {
            const gt_sync *s = &ev.u.sync;
            static const char *names[] = {"Unknown Sync", "Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync"};
            span(o, "cuda_sync", s->sync_type >= 0 && s->sync_type <= 4 ? names[s->sync_type] : names[0], s->device_id,
                 s->stream_id, s->start_ns, s->end_ns);
            fprintf(o->f, ",\"args\":{\"correlation\":%lld}}", (long long)s->correlation_id);
            break;
        }
        case GT_EV_API: {
            const gt_api_call *a = &ev.u.api;
            int64_t pid = gt_pid_of(a->global_tid), tid = gt_tid_of(a->global_tid);
            span(o, a->event_class == GT_API_DRIVER ? "cuda_driver" : "cuda_runtime", gt_trace_string(t, a->name), pid,
                 tid, a->start_ns, a->end_ns);
            fprintf(o->f, ",\"args\":{\"correlation\":%lld,\"cbid\":0}}", (long long)a->correlation_id);
            if (idset_has(dev, a->correlation_id))
                flow(o, true, a->correlation_id, pid, tid, a->start_ns);
            break;
        }
        case GT_EV_NVTX: {
            const gt_nvtx *n = &ev.u.nvtx;
            int64_t pid = gt_pid_of(n->global_tid), tid = gt_tid_of(n->global_tid);
            if (n->event_type == GT_NVTX_MARK) {
                sep(o);
                fputs("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"user_annotation\",\"name\":", o->f);
                an_json_str(o->f, gt_trace_string(t, n->text));
                fprintf(o->f, ",\"pid\":%lld,\"tid\":%lld", (long long)pid, (long long)tid);
                ts(o, "ts", n->start_ns);
                fputc('}', o->f);
            } else if ((n->event_type == GT_NVTX_PUSHPOP || n->event_type == GT_NVTX_STARTEND) && n->end_ns >= n->start_ns) {
                span(o, "user_annotation", gt_trace_string(t, n->text), pid, tid, n->start_ns, n->end_ns);
                fputc('}', o->f);
            }
            break;
        }
        case GT_EV_CPU_OP: {
            const gt_cpu_op *c = &ev.u.cpu_op;
            span(o, "cpu_op", gt_trace_string(t, c->name), gt_pid_of(c->global_tid), gt_tid_of(c->global_tid),
                 c->start_ns, c->end_ns);
            fprintf(o->f, ",\"args\":{\"stream\":%d,\"flops\":%lld,\"bytes\":%lld}}", c->stream_id, (long long)c->flops,
                    (long long)c->bytes);
            break;
        }
        default:
            break;
        }
    }
    gt_iter_free(it);
    return rc < 0 ? rc : 0;
}

static void metadata(gt_trace *t, out *o, const int32_t *devs, size_t n_devs)
{
    size_t n;
    const gt_process *ps = gt_trace_processes(t, &n);
    for (size_t i = 0; i < n; i++) {
        sep(o);
        fprintf(o->f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%lld,\"tid\":0,\"args\":{\"name\":",
                (long long)gt_pid_of(ps[i].global_pid));
        an_json_str(o->f, ps[i].name && *ps[i].name ? ps[i].name : "process");
        fputs("}}", o->f);
    }
    const gt_thread *ts_ = gt_trace_threads(t, &n);
    for (size_t i = 0; i < n; i++) {
        sep(o);
        fprintf(o->f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%lld,\"tid\":%lld,\"args\":{\"name\":",
                (long long)gt_pid_of(ts_[i].global_tid), (long long)gt_tid_of(ts_[i].global_tid));
        an_json_str(o->f, ts_[i].name ? ts_[i].name : "");
        fputs("}}", o->f);
    }
    for (size_t i = 0; i < n_devs; i++) {
        sep(o);
        fprintf(o->f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"GPU %d\"}}",
                devs[i], devs[i]);
        sep(o);
        fprintf(o->f, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"tid\":0,\"args\":{\"sort_index\":%d}}",
                devs[i], 0x1000000 + devs[i]);
    }
}

int gt_export_chrome(gt_trace *t, FILE *f)
{
    idset host = {0}, dev = {0};
    int32_t devs[64];
    size_t n_devs = 0;
    int64_t end;
    out o = {f, true, 0};
    int rc;
    if (!t || !f)
        return gt_error_set(GT_ERR_INVALID, "gt_export_chrome: missing argument");
    if ((rc = gt_trace_time_span(t, &o.base_ns, &end)) < 0 || (rc = collect(t, &host, &dev, devs, &n_devs)) < 0)
        goto cleanup;
    fputs("{\"displayTimeUnit\":\"ns\",\"traceName\":", f);
    an_json_str(f, gt_trace_path(t));
    fprintf(f, ",\"baseTimeNanoseconds\":%lld,\"traceEvents\":[", (long long)o.base_ns);
    metadata(t, &o, devs, n_devs);
    static const gt_event_kind kinds[] = {GT_EV_API, GT_EV_NVTX, GT_EV_CPU_OP, GT_EV_KERNEL,
                                          GT_EV_MEMCPY, GT_EV_MEMSET, GT_EV_SYNC};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if ((rc = emit_kind(t, &o, kinds[k], &host, &dev)) < 0)
            goto cleanup;
    fputs("\n]}\n", f);
    if (ferror(f))
        rc = gt_error_set(GT_ERR_IO, "chrome export: cannot write the output");
cleanup:
    free(host.keys);
    free(dev.keys);
    return rc;
}
