/* export_chrome.c: a trace as Chrome trace JSON (the Trace Event Format that
 * Perfetto and chrome://tracing open), laid out the way PyTorch's Kineto
 * writes it so that the same viewers and Holistic Trace Analysis read it:
 *   header: "distributedInfo" with the rank and world size (HTA finds a
 *         file's rank by it), "schemaVersion" 1;
 *   host: pid = process id, tid = thread id; categories "cuda_runtime",
 *         "cuda_driver" (plain API names, without nsys's _vNNNN),
 *         "user_annotation" (NVTX push/pop ranges; the step ranges the
 *         analysis finds are named "ProfilerStep#N" as PyTorch names its
 *         iterations, the NVTX text in args.nvtx; start/end ranges, which may
 *         cross the others, are async "b"/"e" pairs), "cpu_op";
 *   device: pid = device id, tid = stream; categories "kernel",
 *           "gpu_memcpy", "gpu_memset"; "cuda_sync" on a row beside its
 *           stream's (a host wait would cross the stream's kernels);
 *   flows "ac2g" from each launch call to its kernel, copy or memset, by
 *   correlation id within the process (one start and one end per id);
 *   "gpu_user_annotation": each NVTX range projected onto the streams its
 *   launches ran on (from the first to the last of that work, per stream),
 *   without a "stream" argument (HTA counts events with one as kernels);
 *   on a trace without kernels, the report's stand-in device timeline as
 *   kernels (standin());
 *   memory: a counter of allocated and reserved bytes ("ph":"C") and, per
 *   allocator block allocated or freed, Kineto's "[memory]" instant event;
 *   metadata: a name for every process, thread and stream that appears.
 * One file holds every process, or one process (a rank of a distributed
 * job, as PyTorch writes one file per rank). Times are microseconds with
 * nanosecond decimals. Events stream through the reader; the NVTX ranges
 * (projections, steps) and the allocator's actions come from the analysis
 * model, only its memory part where the close kept the whole-trace facts. */
#include "analyze_int.h"
#include "gt_labels.h"
#include "gt_store_spill.h"

#include <stdlib.h>
#include <string.h>

/* Syncs are host waits: a row beside their stream's (it would cross the
 * stream's kernels), and one for those that wait on no stream. */
#define SYNC_BASE 0x40000000
#define SYNC_LANE 0x7fffffff
/* On a trace without kernels, the device timeline the analysis uses (CPU
 * ops, "compute" ranges: one stream per thread) and the collectives, as
 * kernels on rows of the process: see standin(). */
#define STANDIN_BASE 0x20000000
/* gpu_user_annotation: a row beside each stream's (HTA's call stacks break on
 * an annotation that is also the kernel it holds, on one row) */
#define ANNOT_BASE 0x10000000
#define STANDIN_COMM 0x3fffffff

/* What a correlation key (flow_key) is known for: a call with it, work with
 * it, a plain (runtime or driver) call with it, its flow's start and end
 * written. One entry per launch: kept on disk (gt_flagmap), so that the
 * export's memory does not grow with the trace. */
enum { F_HOST = 1, F_DEV = 2, F_PLAIN = 4, F_STARTED = 8, F_ENDED = 16 };

/* A step range of a process, exported under PyTorch's name for an
 * iteration, "ProfilerStep#N", which HTA looks for. */
typedef struct step_range {
    int64_t pid, start_ns, end_ns, number;
} step_range;

typedef struct out {
    gt_json *j;      /* in the array of events */
    int64_t pid;     /* the process exported; -1: all */
    int64_t base_ns; /* the trace's first time: small numbers keep precision */
    an_rowset threads, streams; /* host threads (global tid), device streams ((device << 32) | stream) */
    gt_flagmap *corr; /* F_* by flow key; one "s" and one "f" per flow id */
    const an_model *m; /* the NVTX ranges (projections), steps and memory */
    /* the launch call (thread, start) of each correlation id, on disk where
     * the model holds no calls (a memory part); NULL: the model's */
    gt_pairmap *launches;
    gt_spanmap *proj; /* the NVTX ranges' spans on the device: annotations() */
    step_range *steps;
    size_t n_steps;
    int64_t n_async; /* ids of NVTX start/end ranges */
    bool cpu_timeline; /* CPU ops stand in for kernels: see standin() */
    int rc; /* the first failure to remember a row */
} out;

static bool keep(const out *o, int64_t pid)
{
    return o->pid < 0 || pid == o->pid;
}

/* A correlation id is a process's own (CUPTI numbers them per process):
 * flows and their ids pair a call and its work of the same process. */
static int64_t flow_key(int64_t pid, int64_t corr)
{
    if (corr == 0)
        return 0;
    return (int64_t)(((uint64_t)pid << 40) ^ (uint64_t)corr);
}

/* The correlation that ties a stand-in kernel to its host event (the CPU
 * op or NVTX range it is): from the thread and the times, which both sides
 * know; 47 bits, positive, apart from CUPTI's small numbers. */
static int64_t standin_corr(int64_t global_tid, int64_t start_ns, int64_t end_ns)
{
    uint64_t x = (uint64_t)global_tid * 0x9e3779b97f4a7c15ULL;
    x ^= (uint64_t)start_ns + 0x632be59bd9b4e019ULL + (x << 6) + (x >> 2);
    x ^= (uint64_t)end_ns * 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 31;
    return (int64_t)((x & 0x3fffffffffffULL) | 0x400000000000ULL);
}

static void remember(out *o, int rc)
{
    if (rc < 0 && o->rc == 0)
        o->rc = rc;
}

static void seen_thread(out *o, int64_t global_tid)
{
    int rc = an_rowset_add(&o->threads, global_tid);
    if (rc < 0 && o->rc == 0)
        o->rc = rc;
}

static void seen_stream(out *o, int32_t device, int32_t stream)
{
    int rc = an_rowset_add(&o->streams, (int64_t)((uint64_t)(uint32_t)device << 32 | (uint32_t)stream));
    if (rc < 0 && o->rc == 0)
        o->rc = rc;
}

/* An event: one a line, an object left open for its fields. */
static gt_json *event(out *o, const char *ph)
{
    gt_json_ws(o->j, "\n");
    gt_json_object(o->j);
    gt_json_kv_str(o->j, "ph", ph);
    return o->j;
}

/* A time in microseconds from the base, with nanosecond decimals. */
static void ts(out *o, int64_t ns)
{
    gt_json_key(o->j, "ts");
    gt_json_milli(o->j, ns - o->base_ns);
}

static void pid_tid(gt_json *j, int64_t pid, int64_t tid) { gt_json_kv_int(j, "pid", pid); gt_json_kv_int(j, "tid", tid); }

/* A complete event ("X"), left open: its "args" follow. */
static gt_json *span(out *o, const char *cat, const char *name, int64_t pid, int64_t tid, int64_t s, int64_t e)
{
    gt_json *j = event(o, "X");
    gt_json_kv_str(j, "cat", cat);
    gt_json_kv_str(j, "name", name);
    pid_tid(j, pid, tid);
    ts(o, s);
    gt_json_key(j, "dur");
    gt_json_milli(j, e > s ? e - s : 0);
    return j;
}

/* The open event's "args", left open; end_args closes them and the event. */
static void args(gt_json *j) { gt_json_key(j, "args"); gt_json_object(j); }
static void end_args(gt_json *j) { gt_json_end(j); gt_json_end(j); }

static void dims(gt_json *j, const char *key, int64_t x, int64_t y, int64_t z)
{
    gt_json_key(j, key);
    gt_json_array(j);
    gt_json_int(j, x), gt_json_int(j, y), gt_json_int(j, z);
    gt_json_end(j);
}

/* key's F_* bits (0 for key 0: no correlation); a failure is remembered */
static unsigned corr_bits(out *o, int64_t key)
{
    unsigned bits = 0;
    if (key != 0)
        remember(o, gt_flagmap_get(o->corr, key, &bits));
    return bits;
}

/* The flow's start or end, once per key; bits: the key's corr_bits. */
static void flow(out *o, bool start, int64_t key, unsigned bits, int64_t pid, int64_t tid, int64_t t)
{
    unsigned done = start ? F_STARTED : F_ENDED;
    if (bits & done)
        return; /* a call seen twice (nsys's wrapped copies), or one launch's second kernel */
    remember(o, gt_flagmap_or(o->corr, key, done));
    gt_json *j = event(o, start ? "s" : "f");
    gt_json_kv_int(j, "id", key);
    pid_tid(j, pid, tid);
    ts(o, t);
    gt_json_kv_str(j, "cat", "ac2g");
    gt_json_kv_str(j, "name", "ac2g");
    if (!start)
        gt_json_kv_str(j, "bp", "e");
    gt_json_end(j);
}

/* As Kineto names a copy's memory: the trace's ENUM_CUDA_MEM_KIND words. */
static const char *mem_kind_name(int k)
{
    const char *w = gt_label(GT_LABELS_MEM_KIND, k);
    return *w ? w : gt_label(GT_LABELS_MEM_KIND, GT_MEM_UNKNOWN);
}

static bool is_plain_call(const gt_api_call *a)
{
    return a->event_class == GT_API_RUNTIME || a->event_class == GT_API_DRIVER;
}

/* The launch of a call's correlation id, kept as an_model_launch picks it
 * (an_call_replaces); tag: 1 a driver call, 2 a wrapper. */
static int note_launch(gt_pairmap *launches, const gt_api_call *a)
{
    int64_t tid, start;
    int tag;
    if (a->correlation_id == 0)
        return 0;
    bool driver = a->event_class == GT_API_DRIVER, foreign = !is_plain_call(a);
    int rc = gt_pairmap_get(launches, a->correlation_id, &tid, &start, &tag);
    if (rc != 0 && (rc < 0 || !an_call_replaces(tag & 1, tag & 2, foreign)))
        return rc < 0 ? rc : 0;
    return gt_pairmap_put(launches, a->correlation_id, a->global_tid, a->start_ns, (driver ? 1 : 0) | (foreign ? 2 : 0));
}

/* Pass 1: correlation ids on each side (F_HOST, F_DEV; F_PLAIN: those of
 * runtime and driver calls), and the devices seen. */
static int collect(gt_trace *t, int64_t pid, gt_flagmap *map, gt_pairmap *launches, int32_t *devs, size_t *n_devs)
{
    static const gt_event_kind dk[] = {GT_EV_KERNEL, GT_EV_MEMCPY, GT_EV_MEMSET, GT_EV_API};
    gt_iter *it = NULL;
    gt_event ev;
    int rc = 0;
    for (size_t k = 0; k < 4; k++) {
        if ((rc = gt_iter_new(&it, t, dk[k], INT64_MIN, INT64_MAX)) < 0)
            return rc;
        while ((rc = gt_iter_next(it, &ev)) == 1) {
            if (!an_row_ok(&ev))
                continue; /* out of range: left out, as the analysis leaves it out */
            int64_t corr, p;
            int32_t d = -1;
            switch (ev.kind) {
            case GT_EV_KERNEL: corr = ev.u.kernel.correlation_id; d = ev.u.kernel.device_id; p = ev.u.kernel.global_pid; break;
            case GT_EV_MEMCPY: corr = ev.u.memcpy.correlation_id; d = ev.u.memcpy.device_id; p = ev.u.memcpy.global_pid; break;
            case GT_EV_MEMSET: corr = ev.u.memset.correlation_id; d = ev.u.memset.device_id; p = ev.u.memset.global_pid; break;
            default: corr = ev.u.api.correlation_id; p = ev.u.api.global_tid; break;
            }
            p = gt_pid_of(p);
            /* every process's: the model's map is of them all */
            if (ev.kind == GT_EV_API && launches && (rc = note_launch(launches, &ev.u.api)) < 0)
                break;
            if (pid >= 0 && p != pid)
                continue;
            unsigned bits = ev.kind != GT_EV_API ? F_DEV : is_plain_call(&ev.u.api) ? F_HOST | F_PLAIN : F_HOST;
            if (corr != 0 && (rc = gt_flagmap_or(map, flow_key(p, corr), bits)) < 0)
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

/* The step a step-named range is (its number), or -1 when the analysis did
 * not take it for a step (a nested one, one of another thread). */
static int64_t step_number(const out *o, int64_t pid, int64_t start_ns, int64_t end_ns)
{
    for (size_t i = 0; i < o->n_steps; i++)
        if (o->steps[i].pid == pid && o->steps[i].start_ns == start_ns && o->steps[i].end_ns == end_ns)
            return o->steps[i].number;
    return -1;
}

/* Each kernel, copy and memset counts for the ranges its launch call was in
 * (the innermost and every enclosing one), on its own stream, as Kineto
 * projects record_function ranges: it widens their spans in o->proj (on
 * disk, about one per range and stream), which annotations() writes. */
static void project(out *o, const gt_event *ev)
{
    int64_t corr, start, end, tid, at;
    int32_t device, stream;
    int tag;
    switch (ev->kind) {
    case GT_EV_KERNEL: {
        const gt_kernel *k = &ev->u.kernel;
        corr = k->correlation_id, start = k->start_ns, end = k->end_ns, device = k->device_id, stream = k->stream_id;
        break;
    }
    case GT_EV_MEMCPY: {
        const gt_memcpy *c = &ev->u.memcpy;
        corr = c->correlation_id, start = c->start_ns, end = c->end_ns, device = c->device_id, stream = c->stream_id;
        break;
    }
    case GT_EV_MEMSET: {
        const gt_memset *c = &ev->u.memset;
        corr = c->correlation_id, start = c->start_ns, end = c->end_ns, device = c->device_id, stream = c->stream_id;
        break;
    }
    default:
        return;
    }
    const an_model *m = o->m;
    if (o->launches) {
        int rc = corr ? gt_pairmap_get(o->launches, corr, &tid, &at, &tag) : 0;
        remember(o, rc);
        if (rc != 1)
            return;
    } else {
        const an_api *l = an_model_launch(m, corr);
        if (!l)
            return;
        tid = l->tid, at = l->start_ns;
    }
    if (!keep(o, gt_pid_of(tid)))
        return;
    for (int64_t r = an_model_range_at(m, tid, at); r >= 0 && o->rc == 0; r = m->ranges[r].parent)
        remember(o, gt_spanmap_add(o->proj, r, device, stream, start, end));
}

static int emit_kind(gt_trace *t, out *o, gt_event_kind kind)
{
    gt_iter *it = NULL;
    gt_event ev;
    int rc = gt_iter_new(&it, t, kind, INT64_MIN, INT64_MAX);
    if (rc < 0)
        return rc;
    char name[256];
    while ((rc = gt_iter_next(it, &ev)) == 1) {
        if (!an_row_ok(&ev))
            continue; /* times or sizes out of range: left out, as the analysis leaves them out */
        project(o, &ev);
        switch (kind) {
        case GT_EV_KERNEL: {
            const gt_kernel *k = &ev.u.kernel;
            gt_string_id nid = k->demangled_name ? k->demangled_name : k->short_name ? k->short_name : k->mangled_name;
            int64_t key = flow_key(gt_pid_of(k->global_pid), k->correlation_id);
            if (!keep(o, gt_pid_of(k->global_pid)))
                break;
            seen_stream(o, k->device_id, k->stream_id);
            gt_json *j = span(o, "kernel", gt_trace_string(t, nid), k->device_id, k->stream_id, k->start_ns, k->end_ns);
            args(j);
            gt_json_kv_int(j, "device", k->device_id);
            gt_json_kv_int(j, "stream", k->stream_id);
            gt_json_kv_int(j, "correlation", k->correlation_id);
            gt_json_kv_int(j, "registers per thread", k->registers_per_thread);
            gt_json_kv_int(j, "shared memory", (long long)k->static_shared_bytes + k->dynamic_shared_bytes);
            dims(j, "grid", k->grid_x, k->grid_y, k->grid_z);
            dims(j, "block", k->block_x, k->block_y, k->block_z);
            end_args(j);
            unsigned bits = corr_bits(o, key);
            if (bits & F_HOST)
                flow(o, false, key, bits, k->device_id, k->stream_id, k->start_ns);
            break;
        }
        case GT_EV_MEMCPY: {
            const gt_memcpy *c = &ev.u.memcpy;
            int64_t key = flow_key(gt_pid_of(c->global_pid), c->correlation_id);
            if (!keep(o, gt_pid_of(c->global_pid)))
                break;
            snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", gt_copy_kind_name(c->copy_kind), mem_kind_name(c->src_kind),
                     mem_kind_name(c->dst_kind));
            seen_stream(o, c->device_id, c->stream_id);
            gt_json *j = span(o, "gpu_memcpy", name, c->device_id, c->stream_id, c->start_ns, c->end_ns);
            double gbps = c->end_ns > c->start_ns ? (double)c->bytes / (double)(c->end_ns - c->start_ns) : 0;
            args(j);
            gt_json_kv_int(j, "device", c->device_id);
            gt_json_kv_int(j, "stream", c->stream_id);
            gt_json_kv_int(j, "correlation", c->correlation_id);
            gt_json_kv_int(j, "bytes", c->bytes);
            gt_json_kv_num(j, "memory bandwidth (GB/s)", gbps);
            end_args(j);
            unsigned bits = corr_bits(o, key);
            if (bits & F_HOST)
                flow(o, false, key, bits, c->device_id, c->stream_id, c->start_ns);
            break;
        }
        case GT_EV_MEMSET: {
            const gt_memset *s = &ev.u.memset;
            int64_t key = flow_key(gt_pid_of(s->global_pid), s->correlation_id);
            if (!keep(o, gt_pid_of(s->global_pid)))
                break;
            snprintf(name, sizeof name, "Memset (%s)", mem_kind_name(s->mem_kind));
            seen_stream(o, s->device_id, s->stream_id);
            gt_json *j = span(o, "gpu_memset", name, s->device_id, s->stream_id, s->start_ns, s->end_ns);
            args(j);
            gt_json_kv_int(j, "device", s->device_id);
            gt_json_kv_int(j, "stream", s->stream_id);
            gt_json_kv_int(j, "correlation", s->correlation_id);
            gt_json_kv_int(j, "bytes", s->bytes);
            end_args(j);
            unsigned bits = corr_bits(o, key);
            if (bits & F_HOST)
                flow(o, false, key, bits, s->device_id, s->stream_id, s->start_ns);
            break;
        }
        case GT_EV_SYNC: {
            const gt_sync *s = &ev.u.sync;
            static const char *names[] = {"Unknown Sync", "Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync"};
            if (!keep(o, gt_pid_of(s->global_pid)))
                break;
            int32_t lane = s->stream_id >= 0 && s->stream_id < SYNC_LANE - SYNC_BASE ? SYNC_BASE + s->stream_id : SYNC_LANE;
            seen_stream(o, s->device_id, lane);
            gt_json *j = span(o, "cuda_sync", s->sync_type >= 0 && s->sync_type <= 4 ? names[s->sync_type] : names[0],
                              s->device_id, lane, s->start_ns, s->end_ns);
            args(j);
            gt_json_kv_int(j, "correlation", s->correlation_id);
            end_args(j);
            break;
        }
        case GT_EV_API: {
            const gt_api_call *a = &ev.u.api;
            int64_t pid = gt_pid_of(a->global_tid), tid = gt_tid_of(a->global_tid);
            int64_t key = flow_key(pid, a->correlation_id);
            if (!keep(o, pid))
                break;
            /* nsys 2.x holds each runtime call twice, the second a wrapper of
             * another class with the same correlation id: left out, as the
             * analysis leaves it out (HTA would pair both with the kernel) */
            unsigned bits = corr_bits(o, key);
            if (!is_plain_call(a) && (bits & F_PLAIN))
                break;
            seen_thread(o, a->global_tid);
            /* the plain name (cudaLaunchKernel, not nsys's cudaLaunchKernel_v7000): HTA matches on it */
            gt_json *j = span(o, a->event_class == GT_API_DRIVER ? "cuda_driver" : "cuda_runtime",
                              gt_api_base_name(gt_trace_string(t, a->name), name, sizeof name), pid, tid, a->start_ns,
                              a->end_ns);
            args(j);
            gt_json_kv_int(j, "correlation", a->correlation_id);
            gt_json_kv_int(j, "cbid", 0);
            end_args(j);
            if (bits & F_DEV)
                flow(o, true, key, bits, pid, tid, a->start_ns);
            break;
        }
        case GT_EV_NVTX: {
            const gt_nvtx *n = &ev.u.nvtx;
            int64_t pid = gt_pid_of(n->global_tid), tid = gt_tid_of(n->global_tid);
            if (!keep(o, pid))
                break;
            if (n->event_type == GT_NVTX_MARK || n->event_type == GT_NVTX_PUSHPOP || n->event_type == GT_NVTX_STARTEND)
                seen_thread(o, n->global_tid);
            if (n->event_type == GT_NVTX_MARK) {
                gt_json *j = event(o, "i");
                gt_json_kv_str(j, "s", "t");
                gt_json_kv_str(j, "cat", "user_annotation");
                gt_json_kv_str(j, "name", gt_trace_string(t, n->text));
                pid_tid(j, pid, tid);
                ts(o, n->start_ns);
                gt_json_end(j);
            } else if (n->event_type == GT_NVTX_PUSHPOP && n->end_ns >= n->start_ns) {
                const char *text = gt_trace_string(t, n->text);
                int64_t number;
                if (an_is_step_name(text, &number) && (number = step_number(o, pid, n->start_ns, n->end_ns)) >= 0) {
                    snprintf(name, sizeof name, "ProfilerStep#%lld", (long long)number);
                    gt_json *j = span(o, "user_annotation", name, pid, tid, n->start_ns, n->end_ns);
                    args(j);
                    gt_json_kv_str(j, "nvtx", text);
                    end_args(j);
                } else {
                    gt_json *j = span(o, "user_annotation", text, pid, tid, n->start_ns, n->end_ns);
                    if (o->cpu_timeline) {
                        args(j);
                        gt_json_kv_int(j, "correlation", standin_corr(n->global_tid, n->start_ns, n->end_ns));
                        gt_json_end(j);
                    }
                    gt_json_end(j);
                }
            } else if (n->event_type == GT_NVTX_STARTEND && n->end_ns >= n->start_ns) {
                /* start/end ranges may cross the thread's push/pop ranges and
                 * each other: async events ("b"/"e"), a track of their own */
                int64_t id = ++o->n_async;
                for (int end = 0; end < 2; end++) {
                    gt_json *j = event(o, end ? "e" : "b");
                    gt_json_kv_str(j, "cat", "user_annotation");
                    gt_json_kv_int(j, "id", id);
                    gt_json_kv_str(j, "name", gt_trace_string(t, n->text));
                    pid_tid(j, pid, tid);
                    ts(o, end ? n->end_ns : n->start_ns);
                    gt_json_end(j);
                }
            }
            break;
        }
        case GT_EV_CPU_OP: {
            const gt_cpu_op *c = &ev.u.cpu_op;
            if (!keep(o, gt_pid_of(c->global_tid)))
                break;
            seen_thread(o, c->global_tid);
            gt_json *j = span(o, "cpu_op", gt_trace_string(t, c->name), gt_pid_of(c->global_tid),
                              gt_tid_of(c->global_tid), c->start_ns, c->end_ns);
            /* "compute stream", not "stream": HTA takes an event with a stream for a kernel */
            args(j);
            gt_json_kv_int(j, "compute stream", c->stream_id);
            gt_json_kv_int(j, "flops", c->flops);
            gt_json_kv_int(j, "bytes", c->bytes);
            if (o->cpu_timeline)
                gt_json_kv_int(j, "correlation", standin_corr(c->global_tid, c->start_ns, c->end_ns));
            end_args(j);
            break;
        }
        default:
            break;
        }
    }
    gt_iter_free(it);
    return rc < 0 ? rc : 0;
}

/* ---- NVTX ranges on the device ("gpu_user_annotation") -------------------- */

typedef struct annot_ctx { const an_model *m; out *o; } annot_ctx;

/* One range's work on one stream (gt_spanmap_each's row: a the range's
 * index in the model, b the device, c the stream), as an event. */
static int annotation(void *ctx, const gt_span_row *p)
{
    const annot_ctx *c = ctx;
    const an_model *m = c->m;
    out *o = c->o;
    int32_t device = (int32_t)p->b, stream = (int32_t)p->c;
    int32_t lane = stream >= 0 && stream < STANDIN_BASE - ANNOT_BASE ? ANNOT_BASE + stream : stream;
    seen_stream(o, device, lane);
    gt_json *j = span(o, "gpu_user_annotation", an_str(m, m->ranges[p->a].text), device, lane, p->start_ns,
                      p->end_ns);
    /* no "stream" argument, as Kineto writes them: HTA takes every
     * event with a stream for a kernel */
    args(j);
    gt_json_kv_int(j, "activities", p->n);
    end_args(j);
    return 0;
}

/* The spans project() gathered, by start. */
static int annotations(const an_model *m, out *o)
{
    annot_ctx ctx = {m, o};
    return gt_spanmap_each(o->proj, annotation, &ctx);
}

/* ---- a CPU trace's device timeline ------------------------------------------ */

/* On a trace without kernels the report takes CPU ops and "compute" ranges
 * for the device (one stream per thread) and "communication" ranges for the
 * collectives. HTA reads kernels only: the same work goes out as kernels,
 * each stream a row of its process beside its threads, the collectives on a
 * row of their own named "ncclKernel <range>" (HTA takes a kernel for
 * communication by that prefix), so that its breakdowns, idle time and
 * overlap measure what the report measures. */
/* A stand-in kernel's args: no device, its lane, its correlation. */
static void standin_args(gt_json *j, int32_t lane, int64_t corr)
{
    args(j);
    gt_json_kv_int(j, "device", -1);
    gt_json_kv_int(j, "stream", lane);
    gt_json_kv_int(j, "correlation", corr);
    end_args(j);
}

static void standin(const an_model *m, out *o)
{
    if (!m->cpu_timeline)
        return;
    char name[512];
    for (size_t i = 0; i < m->n_acts; i++) {
        const an_act *a = &m->acts[i];
        int64_t pid = a->tid ? gt_pid_of(a->tid) : a->pid;
        if (!keep(o, pid) || a->stream < 0 || a->stream >= STANDIN_COMM - STANDIN_BASE)
            continue;
        int32_t lane = STANDIN_BASE + a->stream;
        seen_stream(o, (int32_t)pid, lane);
        gt_json *j = span(o, "kernel", an_str(m, a->name), pid, lane, a->start_ns, a->end_ns);
        standin_args(j, lane, standin_corr(a->tid, a->start_ns, a->end_ns));
    }
    for (size_t i = 0; i < m->n_comms; i++) {
        const an_comm *c = &m->comms[i];
        if (!keep(o, gt_pid_of(c->tid)))
            continue;
        seen_stream(o, (int32_t)gt_pid_of(c->tid), STANDIN_COMM);
        snprintf(name, sizeof name, "ncclKernel %s", an_str(m, c->name));
        int64_t corr = standin_corr(c->tid, c->start_ns, c->end_ns);
        gt_json *j = span(o, "kernel", name, gt_pid_of(c->tid), STANDIN_COMM, c->start_ns, c->end_ns);
        standin_args(j, STANDIN_COMM, corr);
        /* its start on the host, as PyTorch marks a collective's call
         * ("record_param_comms"): the range may be a start/end one, which
         * HTA does not read */
        seen_thread(o, c->tid);
        j = span(o, "cpu_op", "record_param_comms", gt_pid_of(c->tid), gt_tid_of(c->tid), c->start_ns, c->start_ns);
        args(j);
        gt_json_kv_str(j, "Collective name", an_str(m, c->name));
        gt_json_kv_int(j, "correlation", corr);
        end_args(j);
    }
}

/* ---- memory ----------------------------------------------------------------- */

/* The allocator's history: a counter of allocated and reserved bytes on the
 * device's row (the process's when the trace has no device), one sample per
 * time at which they changed; and Kineto's "[memory]" instant event on the
 * allocating thread for each block allocated (bytes > 0) or freed (< 0).
 * The actions come one at a time (an_memory_each_action), each written once
 * the next one is known. */
typedef struct mem_out {
    out *o;
    const an_model *m;
    bool on_device, any, pending;
    int32_t device;
    int64_t counter_pid, counter_tid, allocated, reserved;
    an_mem_action prev; /* the action waiting for the next one */
} mem_out;

/* One action; next: the one after it, NULL at the end. */
static void mem_action(mem_out *s, const an_mem_action *a, const an_mem_action *next)
{
    out *o = s->o;
    if (!keep(o, a->pid))
        return;
    if (!s->on_device && !s->any && gt_pid_of(s->counter_tid) == s->counter_pid)
        seen_thread(o, s->counter_tid); /* so that the counter's process gets a name */
    s->any = true;
    switch (a->action) { /* sizes are checked at load; their sums saturate */
    case AN_ACT_ALLOC: s->allocated = gt_sat_add(s->allocated, a->bytes); break;
    case AN_ACT_FREE: s->allocated = gt_sat_add(s->allocated, -a->bytes); break;
    case AN_ACT_SEG_ALLOC: s->reserved = gt_sat_add(s->reserved, a->bytes); break;
    case AN_ACT_SEG_FREE: s->reserved = gt_sat_add(s->reserved, -a->bytes); break;
    }
    if (a->action == AN_ACT_ALLOC || a->action == AN_ACT_FREE) {
        int64_t tid = a->tid ? a->tid : s->m->main_tid;
        seen_thread(o, tid);
        gt_json *j = event(o, "i");
        gt_json_kv_str(j, "s", "t");
        gt_json_kv_str(j, "cat", "cpu_instant_event");
        gt_json_kv_str(j, "name", "[memory]");
        pid_tid(j, gt_pid_of(tid), gt_tid_of(tid));
        ts(o, a->t_ns);
        args(j);
        gt_json_kv_int(j, "Device Type", s->on_device ? 1 : 0);
        gt_json_kv_int(j, "Device Id", s->device);
        gt_json_key(j, "Addr");
        gt_json_uint(j, a->address);
        gt_json_kv_int(j, "Bytes", a->action == AN_ACT_ALLOC ? a->bytes : -a->bytes);
        gt_json_kv_int(j, "Total Allocated", s->allocated);
        gt_json_kv_int(j, "Total Reserved", s->reserved);
        end_args(j);
    }
    if (next && next->t_ns == a->t_ns && keep(o, next->pid))
        return; /* one sample per time, once it settled */
    gt_json *j = event(o, "C");
    gt_json_kv_str(j, "name", s->on_device ? "GPU memory" : "memory");
    pid_tid(j, s->counter_pid, 0);
    ts(o, a->t_ns);
    args(j);
    gt_json_kv_int(j, "allocated", s->allocated);
    gt_json_kv_int(j, "reserved", s->reserved);
    end_args(j);
}

static int mem_next(void *ctx, const an_mem_action *a)
{
    mem_out *s = ctx;
    if (s->pending)
        mem_action(s, &s->prev, a);
    s->prev = *a;
    s->pending = true;
    return s->o->rc;
}

/* The process's first allocating thread names the counter's row. */
static int mem_first_thread(void *ctx, const an_mem_action *a)
{
    mem_out *s = ctx;
    if (!a->tid || gt_pid_of(a->tid) != s->counter_pid)
        return 0;
    s->counter_tid = a->tid;
    return 1;
}

static int memory(const an_model *m, out *o, const int32_t *devs, size_t n_devs)
{
    mem_out s = {.o = o, .m = m, .on_device = n_devs > 0, .device = n_devs > 0 ? devs[0] : -1,
                 .counter_pid = n_devs > 0 ? devs[0] : gt_pid_of(m->main_tid), .counter_tid = m->main_tid};
    int rc = 0;
    if (!s.on_device && o->pid >= 0 && gt_pid_of(m->main_tid) != o->pid) {
        s.counter_pid = o->pid;
        rc = an_memory_each_action(m, -1, mem_first_thread, &s);
    }
    if (rc == 0)
        rc = an_memory_each_action(m, -1, mem_next, &s);
    if (rc == 0 && s.pending)
        mem_action(&s, &s.prev, NULL);
    return rc;
}

/* ---- names of the rows ----------------------------------------------------- */

static void sort_i64(int64_t *v, size_t n)
{
    if (n > 1) /* v is NULL for an empty set */
        qsort(v, n, sizeof *v, gt_cmp_i64);
}

/* A metadata event: `what` with its name (name non-NULL) or its sort index. */
static void meta(out *o, const char *what, int64_t pid, int64_t tid, const char *name, int64_t index)
{
    gt_json *j = event(o, "M");
    gt_json_kv_str(j, "name", what);
    pid_tid(j, pid, tid);
    args(j);
    if (name)
        gt_json_kv_str(j, "name", name);
    else
        gt_json_kv_int(j, "sort_index", index);
    end_args(j);
}

/* Every process, thread and stream that appeared gets a name, and only
 * those (nsys lists every process of the machine): the trace's (PROCESSES,
 * ThreadNames), else "process N" / "thread N"; devices are "GPU N" and sort
 * after the host, their streams "stream N" (Kineto's). */
static int metadata(gt_trace *t, out *o, const int32_t *devs, size_t n_devs)
{
    size_t n_ps, n_ts;
    char name[64];
    const gt_process *ps = gt_trace_processes(t, &n_ps);
    const gt_thread *ths = gt_trace_threads(t, &n_ts);
    an_rowset pids = {0};
    int rc = 0;
    for (size_t i = 0; i < o->threads.n && rc == 0; i++)
        rc = an_rowset_add(&pids, gt_pid_of(o->threads.v[i]));
    if (rc < 0)
        goto cleanup;
    sort_i64(pids.v, pids.n);
    for (size_t i = 0; i < pids.n; i++) {
        const char *pname = NULL;
        for (size_t k = 0; k < n_ps && !pname; k++)
            if (gt_pid_of(ps[k].global_pid) == pids.v[i] && ps[k].name && *ps[k].name)
                pname = ps[k].name;
        snprintf(name, sizeof name, "process %lld", (long long)pids.v[i]);
        meta(o, "process_name", pids.v[i], 0, pname ? pname : name, 0);
    }
    sort_i64(o->threads.v, o->threads.n);
    for (size_t i = 0; i < o->threads.n; i++) {
        const char *tname = NULL;
        for (size_t k = 0; k < n_ts && !tname; k++)
            if (ths[k].global_tid == o->threads.v[i] && ths[k].name && *ths[k].name)
                tname = ths[k].name;
        snprintf(name, sizeof name, "thread %lld", (long long)gt_tid_of(o->threads.v[i]));
        meta(o, "thread_name", gt_pid_of(o->threads.v[i]), gt_tid_of(o->threads.v[i]), tname ? tname : name, 0);
    }
    for (size_t i = 0; i < n_devs; i++) {
        snprintf(name, sizeof name, "GPU %d", devs[i]);
        meta(o, "process_name", devs[i], 0, name, 0);
        meta(o, "process_sort_index", devs[i], 0, NULL, (int64_t)0x1000000 + devs[i]); /* after the host; any int32 id */
    }
    sort_i64(o->streams.v, o->streams.n);
    for (size_t i = 0; i < o->streams.n; i++) {
        int32_t dev = (int32_t)(uint32_t)((uint64_t)o->streams.v[i] >> 32), stream = (int32_t)(uint32_t)o->streams.v[i];
        if (stream == SYNC_LANE)
            snprintf(name, sizeof name, "sync");
        else if (stream == STANDIN_COMM)
            snprintf(name, sizeof name, "collectives (communication ranges)");
        else if (stream >= ANNOT_BASE && stream < STANDIN_BASE)
            snprintf(name, sizeof name, "annotations stream %d", stream - ANNOT_BASE);
        else if (stream >= STANDIN_BASE && stream < SYNC_BASE)
            snprintf(name, sizeof name, "compute stream %d (CPU ops)", stream - STANDIN_BASE);
        else if (stream >= SYNC_BASE)
            snprintf(name, sizeof name, "sync stream %d", stream - SYNC_BASE);
        else
            snprintf(name, sizeof name, "stream %d", stream);
        meta(o, "thread_name", dev, stream, name, 0);
        meta(o, "thread_sort_index", dev, stream, NULL, stream);
    }
cleanup:
    free(pids.v);
    return rc;
}

/* The step ranges of the processes exported, for their PyTorch names. */
static int find_steps(out *o, const an_model *m)
{
    int64_t *pids = NULL;
    size_t n = 0;
    int rc = an_export_pids(m, NULL, &pids, &n);
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (!keep(o, pids[i]))
            continue;
        an_steps st = {0};
        if ((rc = an_steps_find_pid(&st, m, pids[i])) < 0)
            break;
        step_range *nv = st.n ? realloc(o->steps, (o->n_steps + st.n) * sizeof *nv) : o->steps;
        if (st.n && !nv) {
            free(st.v);
            rc = gt_error_set(GT_ERR_NOMEM, "chrome export: out of memory");
            break;
        }
        o->steps = nv;
        for (size_t k = 0; k < st.n; k++)
            o->steps[o->n_steps++] = (step_range){pids[i], st.v[k].start_ns, st.v[k].end_ns, st.v[k].number};
        free(st.v);
    }
    free(pids);
    return rc;
}

int gt_export_chrome(gt_trace *t, FILE *f)
{
    return gt_export_chrome_process(t, -1, 0, 1, f);
}

int gt_export_chrome_process(gt_trace *t, int64_t pid, int32_t rank, int32_t world_size, FILE *f)
{
    int32_t devs[64];
    size_t n_devs = 0;
    gt_json j;
    out o = {.j = &j, .pid = pid};
    an_model *m = NULL;
    int rc;
    if (!t || !f || rank < 0 || world_size <= rank)
        return gt_error_set(GT_ERR_INVALID, "gt_export_chrome: missing argument");
    /* Where the close kept the whole-trace facts, the model's memory part is
     * enough (the ranges, the allocator's events and their calls): the facts
     * give the time base and the main thread, the launches come from disk.
     * A CPU trace's stand-in device timeline needs the whole model. */
    an_whole w;
    bool part = an_whole_read(&w, t) && !w.cpu_timeline;
    if ((rc = gt_flagmap_new(&o.corr)) < 0 || (rc = gt_spanmap_new(&o.proj)) < 0 ||
        (part && (rc = gt_pairmap_new(&o.launches)) < 0) || (rc = collect(t, pid, o.corr, o.launches, devs, &n_devs)) < 0 ||
        (rc = part ? an_model_load_memory(&m, t) : an_model_load(&m, t)) < 0)
        goto cleanup;
    if (part) {
        m->main_tid = w.main_tid;
        m->span_start_ns = w.span_start_ns;
        m->span_end_ns = w.span_end_ns;
        m->cpu_timeline = false;
    }
    o.m = m;
    if ((rc = find_steps(&o, m)) < 0)
        goto cleanup;
    /* the base is the analysis's first time: that of the rows in range */
    o.base_ns = m->span_start_ns;
    o.cpu_timeline = m->cpu_timeline;
    /* "rank": with a space, as json.dump writes it: HTA finds the rank with
     * a regular expression that wants one */
    gt_json_init(&j, f);
    gt_json_object(&j);
    gt_json_spaced(&j, true);
    gt_json_kv_int(&j, "schemaVersion", 1);
    gt_json_key(&j, "distributedInfo");
    gt_json_object(&j);
    gt_json_kv_str(&j, "backend", n_devs > 0 ? "nccl" : "gloo");
    gt_json_kv_int(&j, "rank", rank);
    gt_json_kv_int(&j, "world_size", world_size);
    gt_json_end(&j);
    gt_json_spaced(&j, false);
    gt_json_ws(&j, "\n");
    gt_json_kv_str(&j, "displayTimeUnit", "ns");
    gt_json_kv_str(&j, "traceName", gt_trace_path(t));
    gt_json_kv_int(&j, "baseTimeNanoseconds", o.base_ns);
    gt_json_key(&j, "traceEvents");
    gt_json_array(&j);
    static const gt_event_kind kinds[] = {GT_EV_API, GT_EV_NVTX, GT_EV_CPU_OP, GT_EV_KERNEL,
                                          GT_EV_MEMCPY, GT_EV_MEMSET, GT_EV_SYNC};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if ((rc = emit_kind(t, &o, kinds[k])) < 0)
            goto cleanup;
    standin(m, &o);
    if ((rc = annotations(m, &o)) < 0 || (rc = memory(m, &o, devs, n_devs)) < 0 || (rc = o.rc) < 0 ||
        (rc = metadata(t, &o, devs, n_devs)) < 0)
        goto cleanup;
    gt_json_ws(&j, "\n");
    gt_json_end(&j);
    gt_json_end(&j);
    gt_json_ws(&j, "\n");
    if ((rc = gt_json_finish(&j)) < 0)
        rc = gt_error_set(rc, "chrome export: cannot write the output");
cleanup:
    an_model_free(m);
    free(o.threads.v);
    free(o.streams.v);
    gt_flagmap_free(o.corr);
    gt_pairmap_free(o.launches);
    gt_spanmap_free(o.proj);
    free(o.steps);
    return rc;
}
