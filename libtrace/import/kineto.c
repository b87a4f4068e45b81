/* kineto.c: a torch.profiler trace (Kineto's Chrome trace JSON) into gtrace
 * tables, in two streaming passes over the file (kineto_json.c walks it):
 * the first finds the time span, the profiled process and its rank; the
 * second writes, each event through the rule of its category (the table
 * `rules` below):
 *
 *   "cpu_op"            NVTX range in the category "compute" (the trainer's
 *                       CPU backend convention: outermost ones are the
 *                       device timeline of a trace without kernels)
 *   "user_annotation"   NVTX range; "ProfilerStep#N" is written "step N" so
 *                       every analysis finds the steps (short ones as the
 *                       span to the next: write_steps); a collective of a
 *                       process group ("gloo:", "nccl:"...) goes in the
 *                       category "communication", its bytes as the payload
 *   "python_function"   NVTX range, no category, on a thread of its own beside
 *                       the thread that ran it ("thread N (python calls)"):
 *                       Python frames and the annotations they open do not
 *                       nest (record_function's __enter__ returns while its
 *                       range goes on), and the analysis nests one thread's
 *                       ranges
 *   "kernel", "gpu_memcpy", "gpu_memset", "cuda_sync"
 *                       CUPTI_ACTIVITY_KIND_* rows (pid: the device, tid:
 *                       the stream), with their correlation ids
 *   "cuda_runtime", "cuda_driver"
 *                       CUPTI_ACTIVITY_KIND_RUNTIME rows (the launch side
 *                       of the "ac2g" flows, which need no rows of their own)
 *   "[memory]"          GTRACE_MEMORY_EVENTS: one heap per device whose size
 *                       follows the allocator's reserved bytes (allocated
 *                       bytes for the CPU allocator, which reserves nothing),
 *                       a region per block; memory allocated before the
 *                       profiler started is one region that frees of unknown
 *                       blocks shrink, so the replay's totals are Kineto's
 *   other instant events
 *                       NVTX marks
 * Profiler spans ("Trace"), "gpu_user_annotation" (projections the analysis
 * makes itself), flows, counters and metadata other than process and thread
 * names write no rows: they are counted as skipped.
 *
 * Times: microseconds with nanosecond decimals, relative to
 * baseTimeNanoseconds (absolute when it is absent), read exactly into
 * int64 nanoseconds.
 *
 * An event that cannot be read (a time out of range, NaN or Infinity; a
 * name with \u0000 or over 16 MiB) is skipped, not the file: the skipped
 * are counted by why, said in one line on stderr and kept in the trace's
 * run config ("import.skipped"). */
#include "gt_labels.h"
#include "kineto_int.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CAT_COMPUTE = 1, CAT_COMM = 2 }; /* NVTX categories, default domain */
/* Python calls of thread T are on thread T | PYTHON_TID (Linux thread ids
 * are below 2^22; gtrace keeps 24 bits) */
enum { PYTHON_TID = 1 << 23 };

/* ---- pass 1 --------------------------------------------------------------- */

typedef struct scan_ctx {
    im_scan *s;
    int64_t min_ns, max_ns;
    bool any;
    int64_t host_pid;
    bool host_pid_known;
} scan_ctx;

static bool is_device_memory(const kt_event *e)
{
    return kt_has(e, KT_DEVICE_TYPE) && e->arg[KT_DEVICE_TYPE] != 0;
}

static int scan_event(void *ctx, kt_event *e)
{
    scan_ctx *c = ctx;
    if (!kt_is_imported(e))
        return 0;
    int64_t end = e->ts_ns + (e->ph == 'X' && e->has_dur ? e->dur_ns : 0);
    if (!c->any || e->ts_ns < c->min_ns)
        c->min_ns = e->ts_ns;
    if (!c->any || end > c->max_ns)
        c->max_ns = end;
    c->any = true;
    if (kt_is_instant(e) && !strcmp(e->name, "[memory]") && is_device_memory(e))
        c->s->n_device_mem++;
    if (!c->host_pid_known && kt_cat_side(e->cat) == KT_SIDE_HOST && e->has_pid && e->pid_is_num) {
        c->host_pid = e->pid;
        c->host_pid_known = true;
    }
    return 0;
}

int im_kineto_scan(const char *path, im_scan *out)
{
    scan_ctx c;
    kt_frame fi;
    memset(&c, 0, sizeof c);
    memset(out, 0, sizeof *out);
    out->format = GT_IMPORT_KINETO;
    c.s = out;
    memset(&fi, 0, sizeof fi);
    int rc = kt_walk(path, &fi, scan_event, NULL, &c);
    if (rc < 0)
        return rc;
    int64_t base = fi.has_base ? fi.base_ns : 0, lo, hi;
    if (c.any && (__builtin_add_overflow(base, c.min_ns, &lo) || __builtin_add_overflow(base, c.max_ns, &hi) ||
                  lo < -KT_TIME_LIMIT_NS || hi > KT_TIME_LIMIT_NS)) {
        /* baseTimeNanoseconds (read after the events) puts some out of
         * range: again, without them, as the second pass will */
        memset(&c, 0, sizeof c);
        memset(out, 0, sizeof *out);
        out->format = GT_IMPORT_KINETO;
        c.s = out;
        fi.check_base_ns = base;
        if ((rc = kt_walk(path, &fi, scan_event, NULL, &c)) < 0)
            return rc;
    }
    out->rank = fi.rank;
    out->base_ns = base;
    out->os_pid = c.host_pid_known ? c.host_pid : 0;
    if (c.any) {
        out->has_time = true;
        out->min_abs_ns = base + c.min_ns;
        out->max_abs_ns = base + c.max_ns;
        /* on the wall clock: after 2001 in nanoseconds since the epoch */
        out->wall_clock = out->min_abs_ns > 1000000000LL * 1000000000LL;
    }
    return 0;
}

/* ---- pass 2: what a row is made of ------------------------------------------ */

typedef struct write_ctx {
    im_out *o;
    gt_import_stats *st;
    int64_t base_ns;     /* added to every ts */
    int64_t os_pid;      /* the file's process, as Kineto numbered it */
    bool mem_device;     /* import the accelerator's [memory] events, not the CPU's */
    kt_memory mem;       /* the [memory] events, replayed at the end */
    int64_t *threads; size_t n_threads, cap_threads; /* named already */
    struct pstep { int64_t tid, start_ns, end_ns, number; } *steps; /* ProfilerStep#N, written at the end */
    size_t n_steps, cap_steps;
    struct tid_end { int64_t tid, end_ns; } *ends; /* each thread's last range end */
    size_t n_ends, cap_ends;
} write_ctx;

static int64_t rel(const write_ctx *c, int64_t ts_ns) { return c->base_ns + ts_ns - c->o->t0_abs_ns; }

static int64_t host_tid(const write_ctx *c, const kt_event *e)
{
    return gt_global_tid(c->o->pid, e->has_tid ? e->tid : c->o->pid);
}

/* Grows *v of elements of `size` to hold one more. */
static int grow_one(void **v, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? 2 * *cap : 16;
    void *p = realloc(*v, ncap * size);
    if (!p)
        return gt_error_set(GT_ERR_NOMEM, "import: out of memory");
    *v = p;
    *cap = ncap;
    return 0;
}

/* The latest end of a range of thread tid: where its last step's work ends. */
static int note_end(write_ctx *c, int64_t tid, int64_t end_ns)
{
    for (size_t i = 0; i < c->n_ends; i++)
        if (c->ends[i].tid == tid) {
            if (end_ns > c->ends[i].end_ns)
                c->ends[i].end_ns = end_ns;
            return 0;
        }
    int rc = grow_one((void **)&c->ends, c->n_ends, &c->cap_ends, sizeof *c->ends);
    if (rc == 0)
        c->ends[c->n_ends++] = (struct tid_end){tid, end_ns};
    return rc;
}

/* An NVTX range (or a mark: no end) of the event's thread. */
static int add_nvtx(write_ctx *c, const kt_event *e, int32_t event_type, const char *text, int32_t category,
                    int64_t payload_bytes)
{
    gt_event ev;
    int rc;
    memset(&ev, 0, sizeof ev);
    ev.kind = GT_EV_NVTX;
    gt_nvtx *n = &ev.u.nvtx;
    n->start_ns = rel(c, e->ts_ns);
    n->end_ns = event_type == GT_NVTX_MARK ? -1 : n->start_ns + (e->has_dur ? e->dur_ns : 0);
    n->event_type = event_type;
    n->category = category;
    n->global_tid = host_tid(c, e);
    if (payload_bytes >= 0) {
        n->payload_kind = GT_PAYLOAD_U64;
        n->payload.u64 = (uint64_t)payload_bytes;
    }
    if ((rc = im_intern(c->o, text, &n->text)) < 0)
        return rc;
    if (event_type == GT_NVTX_PUSHPOP && (rc = note_end(c, n->global_tid, n->end_ns)) < 0)
        return rc;
    return im_add(c->o, &ev);
}

/* "ProfilerStep#12" -> 12; -1 when not a step. */
static int64_t profiler_step(const char *name)
{
    static const char prefix[] = "ProfilerStep#";
    int64_t v;
    if (strncmp(name, prefix, sizeof prefix - 1) || !json_int(name + sizeof prefix - 1, &v) || v < 0)
        return -1;
    return v;
}

static bool is_collective(const char *name)
{
    static const char *const backends[] = {"gloo:", "nccl:", "mpi:", "ucc:", "xccl:"};
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (!strncmp(name, backends[i], strlen(backends[i])))
            return true;
    return false;
}

/* A word of an activity's name and what it says ("Memcpy HtoD", "Memset
 * (Pinned)", "Stream Wait Event"...). */
typedef struct name_word { const char *word; int32_t value; } name_word;

/* The value of the first word of `w` found in `s` before `end` (NULL: the
 * whole string), else `dflt`. */
static int32_t by_word(const char *s, const char *end, const name_word *w, size_t n_w, int32_t dflt)
{
    for (size_t i = 0; s && i < n_w; i++) {
        const char *p = strstr(s, w[i].word);
        if (p && (!end || p < end))
            return w[i].value;
    }
    return dflt;
}
#define BY_WORD(s, end, table, dflt) by_word((s), (end), (table), sizeof(table) / sizeof(table)[0], (dflt))

/* The first of `values` whose word in `set` (the trace's own spelling,
 * gt_labels.h) is found in `s` before `end`, else `dflt`. */
static int32_t by_label(const char *s, const char *end, gt_label_set set, const int32_t *values, size_t n,
                        int32_t dflt)
{
    for (size_t i = 0; s && i < n; i++) {
        const char *p = strstr(s, gt_label(set, values[i]));
        if (p && (!end || p < end))
            return values[i];
    }
    return dflt;
}
#define BY_LABEL(s, end, set, values, dflt) \
    by_label((s), (end), GT_LABELS_##set, (values), sizeof(values) / sizeof(values)[0], (dflt))

/* The columns every device activity row (kernel, copy, memset, sync)
 * starts with. */
typedef struct dev_head {
    int64_t start_ns, end_ns, global_pid;
    int32_t device_id, context_id, stream_id;
    int64_t correlation_id;
} dev_head;
#define PUT_HEAD(row, h)                                                                                     \
    ((row)->start_ns = (h)->start_ns, (row)->end_ns = (h)->end_ns, (row)->global_pid = (h)->global_pid,      \
     (row)->device_id = (h)->device_id, (row)->context_id = (h)->context_id, (row)->stream_id = (h)->stream_id, \
     (row)->correlation_id = (h)->correlation_id)

static int fill_kernel(write_ctx *c, const kt_event *e, const dev_head *h, gt_event *ev)
{
    gt_kernel *k = &ev->u.kernel;
    int rc;
    ev->kind = GT_EV_KERNEL;
    PUT_HEAD(k, h);
    if ((rc = im_intern(c->o, e->name, &k->demangled_name)) < 0)
        return rc;
    k->short_name = k->mangled_name = k->demangled_name;
    for (int i = 0; i < 3; i++) {
        (&k->grid_x)[i] = e->grid[i];
        (&k->block_x)[i] = e->block[i];
    }
    k->registers_per_thread = kt_arg32(e, KT_REGISTERS, 0);
    k->static_shared_bytes = kt_arg32(e, KT_SHARED, 0);
    k->launch_type = 1; /* regular, as nsys numbers it */
    return 0;
}

/* "Memcpy HtoD (Pageable -> Device)": the copy's direction and memory kinds
 * (the last of the table's words that the name holds). */
static int fill_memcpy(write_ctx *c, const kt_event *e, const dev_head *h, gt_event *ev)
{
    static const int32_t dirs[] = {GT_COPY_DTOA, GT_COPY_ATOD, GT_COPY_ATOA, GT_COPY_ATOH, GT_COPY_HTOA,
                                   GT_COPY_PTOP, GT_COPY_HTOH, GT_COPY_DTOD, GT_COPY_DTOH, GT_COPY_HTOD};
    static const int32_t kinds[] = {GT_MEM_MANAGED, GT_MEM_ARRAY, GT_MEM_DEVICE, GT_MEM_PINNED, GT_MEM_PAGEABLE};
    gt_memcpy *m = &ev->u.memcpy;
    const char *open = strchr(e->name, '('), *arrow = strstr(e->name, "->");
    (void)c;
    ev->kind = GT_EV_MEMCPY;
    PUT_HEAD(m, h);
    m->src_device_id = m->dst_device_id = h->device_id;
    m->bytes = kt_has(e, KT_BYTES) ? e->arg[KT_BYTES] : 0;
    m->copy_kind = BY_LABEL(e->name, NULL, COPY_DIRECTION, dirs, GT_COPY_UNKNOWN);
    m->src_kind = m->dst_kind = GT_MEM_UNKNOWN;
    if (open && arrow) {
        m->src_kind = BY_LABEL(open, arrow, MEM_KIND, kinds, GT_MEM_UNKNOWN);
        m->dst_kind = BY_LABEL(arrow, NULL, MEM_KIND, kinds, GT_MEM_UNKNOWN);
    }
    return 0;
}

static int fill_memset(write_ctx *c, const kt_event *e, const dev_head *h, gt_event *ev)
{
    static const int32_t kinds[] = {GT_MEM_PINNED, GT_MEM_MANAGED, GT_MEM_PAGEABLE};
    gt_memset *m = &ev->u.memset;
    (void)c;
    ev->kind = GT_EV_MEMSET;
    PUT_HEAD(m, h);
    m->bytes = kt_has(e, KT_BYTES) ? e->arg[KT_BYTES] : 0;
    m->mem_kind = BY_LABEL(e->name, NULL, MEM_KIND, kinds, GT_MEM_DEVICE);
    return 0;
}

static int fill_sync(write_ctx *c, const kt_event *e, const dev_head *h, gt_event *ev)
{
    static const name_word types[] = {
        {"Wait", GT_SYNC_STREAM_WAIT_EVENT}, {"Event", GT_SYNC_EVENT}, {"Stream", GT_SYNC_STREAM},
        {"Context", GT_SYNC_CONTEXT},
    };
    gt_sync *s = &ev->u.sync;
    (void)c;
    ev->kind = GT_EV_SYNC;
    PUT_HEAD(s, h);
    s->sync_type = BY_WORD(e->name, NULL, types, GT_SYNC_UNKNOWN);
    return 0;
}

static int name_thread(write_ctx *c, int64_t tid, const char *name)
{
    for (size_t i = 0; i < c->n_threads; i++)
        if (c->threads[i] == tid)
            return 0;
    int rc = im_grow((void **)&c->threads, &c->cap_threads, c->n_threads, sizeof *c->threads);
    if (rc < 0)
        return rc;
    c->threads[c->n_threads++] = tid;
    return gt_writer_add_thread_name(c->o->w, gt_global_tid(c->o->pid, tid), name, 0);
}

/* ---- pass 2: each category's rule ------------------------------------------- */

typedef struct rule rule;
typedef int (*rule_fn)(write_ctx *c, const kt_event *e, const rule *r);
typedef int (*fill_fn)(write_ctx *c, const kt_event *e, const dev_head *h, gt_event *ev);

/* What a complete event ("X") of a category becomes. */
struct rule {
    kt_cat cat;
    size_t count;      /* its counter in gt_import_stats (offsetof) */
    rule_fn write;
    int32_t value;     /* ranges: the NVTX category; API calls: the event class */
    fill_fn fill;      /* device activities: the row's own columns */
};

static int write_range(write_ctx *c, const kt_event *e, const rule *r)
{
    return add_nvtx(c, e, GT_NVTX_PUSHPOP, e->name, r->value, -1);
}

/* "ProfilerStep#N" is written "step N" so every analysis finds the steps; a
 * collective carries the bytes of its first input. */
static int write_annotation(write_ctx *c, const kt_event *e, const rule *r)
{
    int64_t step = profiler_step(e->name);
    if (step >= 0) { /* written by write_steps, once all are known */
        int rc = grow_one((void **)&c->steps, c->n_steps, &c->cap_steps, sizeof *c->steps);
        if (rc < 0)
            return rc;
        int64_t start = rel(c, e->ts_ns);
        c->steps[c->n_steps++] = (struct pstep){host_tid(c, e), start, start + (e->has_dur ? e->dur_ns : 0), step};
        c->st->n_steps++;
        return 0;
    }
    if (is_collective(e->name)) {
        c->st->n_comms++;
        int64_t bytes = e->in_elems >= 0 && e->in_elem_bytes > 0 && e->in_elems <= INT64_MAX / e->in_elem_bytes
                      ? e->in_elems * e->in_elem_bytes : -1;
        return add_nvtx(c, e, GT_NVTX_PUSHPOP, e->name, CAT_COMM, bytes);
    }
    return add_nvtx(c, e, GT_NVTX_PUSHPOP, e->name, r->value, -1);
}

/* On a thread of their own beside the op's: Python calls and the ops and
 * annotations they start do not nest (a record_function opened in
 * __enter__ outlives it; ProfilerStep#N ends inside prof.step()), and the
 * analysis nests the ranges of one thread. */
static int write_python(write_ctx *c, const kt_event *e, const rule *r)
{
    kt_event py = *e;
    int rc;
    py.tid = (e->has_tid ? e->tid : c->o->pid) | PYTHON_TID;
    py.has_tid = true;
    char name[64];
    snprintf(name, sizeof name, "thread %lld (python calls)", (long long)(py.tid & ~(int64_t)PYTHON_TID));
    if ((rc = name_thread(c, py.tid, name)) < 0)
        return rc;
    return write_range(c, &py, r);
}

static int write_api(write_ctx *c, const kt_event *e, const rule *r)
{
    gt_event ev;
    int rc;
    memset(&ev, 0, sizeof ev);
    ev.kind = GT_EV_API;
    ev.u.api.start_ns = rel(c, e->ts_ns);
    ev.u.api.end_ns = ev.u.api.start_ns + (e->has_dur ? e->dur_ns : 0);
    ev.u.api.global_tid = host_tid(c, e);
    ev.u.api.correlation_id = kt_has(e, KT_CORRELATION) ? e->arg[KT_CORRELATION] : 0;
    ev.u.api.event_class = r->value;
    if ((rc = im_intern(c->o, e->name, &ev.u.api.name)) < 0)
        return rc;
    return im_add(c->o, &ev);
}

/* A device activity: on the device (pid) and stream (tid) its args name. */
static int write_device(write_ctx *c, const kt_event *e, const rule *r)
{
    gt_event ev;
    int rc;
    int64_t start = rel(c, e->ts_ns);
    dev_head h = {
        start, start + (e->has_dur ? e->dur_ns : 0), gt_global_pid(c->o->pid),
        kt_arg32(e, KT_DEVICE, e->has_pid && e->pid >= 0 && e->pid <= INT32_MAX ? (int32_t)e->pid : 0),
        kt_arg32(e, KT_CONTEXT, 0),
        kt_arg32(e, KT_STREAM, e->has_tid && e->tid >= 0 && e->tid <= INT32_MAX ? (int32_t)e->tid : 0),
        kt_has(e, KT_CORRELATION) ? e->arg[KT_CORRELATION] : 0,
    };
    memset(&ev, 0, sizeof ev);
    if ((rc = r->fill(c, e, &h, &ev)) < 0)
        return rc;
    return im_add(c->o, &ev);
}

#define COUNT(field) offsetof(gt_import_stats, field)
static const rule rules[] = {
    {KT_CPU_OP, COUNT(n_cpu_ops), write_range, CAT_COMPUTE, NULL},
    {KT_USER_ANN, COUNT(n_annotations), write_annotation, 0, NULL},
    {KT_PYTHON, COUNT(n_python), write_python, 0, NULL},
    {KT_RUNTIME, COUNT(n_runtime), write_api, GT_API_RUNTIME, NULL},
    {KT_DRIVER, COUNT(n_driver), write_api, GT_API_DRIVER, NULL},
    {KT_KERNEL, COUNT(n_kernels), write_device, 0, fill_kernel},
    {KT_MEMCPY, COUNT(n_memcpy), write_device, 0, fill_memcpy},
    {KT_MEMSET, COUNT(n_memset), write_device, 0, fill_memset},
    {KT_SYNC, COUNT(n_sync), write_device, 0, fill_sync},
};
#undef COUNT

/* A "[memory]" event of the allocator this import follows, kept for the
 * replay; the others are counted aside. */
static int keep_memory(write_ctx *c, const kt_event *e)
{
    bool device = is_device_memory(e);
    if (device != c->mem_device || !kt_has(e, KT_ADDR) || !kt_has(e, KT_MEM_BYTES) || !kt_has(e, KT_TOTAL_ALLOC)) {
        c->st->n_memory_other++;
        return 0;
    }
    kt_mem_ev m = {rel(c, e->ts_ns), host_tid(c, e), (uint64_t)e->arg[KT_ADDR], e->arg[KT_MEM_BYTES],
                   e->arg[KT_TOTAL_ALLOC], kt_has(e, KT_TOTAL_RES) ? e->arg[KT_TOTAL_RES] : 0,
                   device ? kt_arg32(e, KT_DEVICE_ID, 0) : -1, 0};
    return kt_memory_add(&c->mem, m);
}

static int write_event(void *ctx, kt_event *e)
{
    write_ctx *c = ctx;
    if (e->ph == 'M') {
        bool mine = e->has_pid && e->pid_is_num && e->pid == c->os_pid;
        if (mine && !strcmp(e->name, "process_name") && e->meta[0])
            return im_name_process(c->o, e->meta);
        if (mine && !strcmp(e->name, "thread_name") && e->meta[0] && e->has_tid)
            return name_thread(c, e->tid, e->meta);
        c->st->n_skipped++;
        return 0;
    }
    if (!kt_is_imported(e)) {
        c->st->n_skipped++;
        return 0;
    }
    if (kt_is_instant(e)) {
        if (!strcmp(e->name, "[memory]"))
            return keep_memory(c, e);
        c->st->n_marks++;
        return add_nvtx(c, e, GT_NVTX_MARK, e->name, 0, -1);
    }
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        if (rules[i].cat != e->cat)
            continue;
        int64_t *n = (int64_t *)(void *)((char *)c->st + rules[i].count);
        (*n)++;
        return rules[i].write(c, e, &rules[i]);
    }
    c->st->n_skipped++; /* cannot happen: every imported category has a rule */
    return 0;
}

/* deviceProperties: one TARGET_INFO_GPU row per device, once per trace. */
static int write_gpu(void *ctx, int64_t id, const gt_gpu_info *g)
{
    write_ctx *c = ctx;
    int rc;
    if (id < 0 || id > 63 || (*c->o->gpus_added & (1ull << id)))
        return 0;
    gt_gpu_info row = *g;
    row.id = (int32_t)id;
    if ((rc = gt_writer_add_gpu(c->o->w, &row)) < 0)
        return rc;
    *c->o->gpus_added |= 1ull << id;
    return 0;
}

static int write_categories(write_ctx *c)
{
    static const struct { int32_t id; const char *name; } cats[] = {
        {CAT_COMPUTE, "compute"}, {CAT_COMM, "communication"},
    };
    for (size_t i = 0; i < 2; i++) {
        gt_event ev;
        int rc;
        memset(&ev, 0, sizeof ev);
        ev.kind = GT_EV_NVTX;
        ev.u.nvtx.start_ns = 0;
        ev.u.nvtx.end_ns = -1;
        ev.u.nvtx.event_type = GT_NVTX_CATEGORY;
        ev.u.nvtx.category = cats[i].id;
        ev.u.nvtx.global_tid = gt_global_tid(c->o->pid, c->os_pid ? c->os_pid : c->o->pid);
        if ((rc = im_intern(c->o, cats[i].name, &ev.u.nvtx.text)) < 0 || (rc = im_add(c->o, &ev)) < 0)
            return rc;
    }
    return 0;
}

static int cmp_pstep(const void *a, const void *b)
{
    const struct pstep *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* The steps, "step N". torch 2.5 with with_stack writes ProfilerStep#N
 * ranges of 18-40 us while its steps are 15-38 ms apart: when most ranges
 * cover under half the time to the next one's start, each step is the span
 * from its start to the next one's (the last: to the end of its thread's
 * ranges), or its range where that is longer; the run config says so
 * (import.steps). Otherwise the ranges are the steps, as they are. */
static int write_steps(write_ctx *c)
{
    size_t n_short = 0, n_next = 0, n_longer = 0;
    int rc = 0;
    if (c->n_steps > 1)
        qsort(c->steps, c->n_steps, sizeof *c->steps, cmp_pstep);
    for (size_t i = 0; i + 1 < c->n_steps; i++)
        if (c->steps[i + 1].tid == c->steps[i].tid) {
            n_next++;
            n_short += c->steps[i].end_ns - c->steps[i].start_ns < (c->steps[i + 1].start_ns - c->steps[i].start_ns) / 2;
        }
    bool span = n_next > 0 && 2 * n_short > n_next;
    for (size_t i = 0; i < c->n_steps && rc == 0; i++) {
        struct pstep *p = &c->steps[i];
        int64_t end = p->end_ns;
        if (span && i + 1 < c->n_steps && c->steps[i + 1].tid == p->tid)
            end = c->steps[i + 1].start_ns;
        else if (span)
            for (size_t k = 0; k < c->n_ends; k++)
                if (c->ends[k].tid == p->tid)
                    end = c->ends[k].end_ns;
        if (end > p->end_ns) {
            p->end_ns = end;
            n_longer++;
        }
        gt_event ev;
        char text[32];
        memset(&ev, 0, sizeof ev);
        ev.kind = GT_EV_NVTX;
        ev.u.nvtx.start_ns = p->start_ns;
        ev.u.nvtx.end_ns = p->end_ns;
        ev.u.nvtx.event_type = GT_NVTX_PUSHPOP;
        ev.u.nvtx.global_tid = p->tid;
        snprintf(text, sizeof text, "step %lld", (long long)p->number);
        if ((rc = im_intern(c->o, text, &ev.u.nvtx.text)) == 0)
            rc = im_add(c->o, &ev);
    }
    if (rc == 0 && span) {
        char value[256];
        snprintf(value, sizeof value,
                 "ProfilerStep#N spans: each step from its start to the next one's, the last to the end of its "
                 "thread's ranges (%zu of %zu ranges were shorter)", n_longer, c->n_steps);
        rc = gt_writer_add_config(c->o->w, gt_global_pid(c->o->pid), "import.steps", value);
    }
    return rc;
}

/* The events the walk skipped: "N events (K with WHY, ...)" on stderr and
 * in the run config, as `gtrace info` lists rows the reader refuses. */
static int report_bad(im_out *o, const kt_frame *fi)
{
    char why[256] = "";
    size_t n = 0;
    int64_t total = 0;
    for (int b = KT_BAD_NONE + 1; b < KT_N_BAD; b++) {
        if (!fi->n_bad[b])
            continue;
        total += fi->n_bad[b];
        n += (size_t)snprintf(why + n, sizeof why - n, "%s%lld with %s", n ? ", " : "", (long long)fi->n_bad[b],
                              kt_bad_name((kt_bad)b));
        if (n >= sizeof why)
            n = sizeof why - 1;
    }
    if (!total)
        return 0;
    char value[320];
    snprintf(value, sizeof value, "%lld events (%s)", (long long)total, why);
    fprintf(stderr, "gtrace: %s: skipped %s\n", o->path, value);
    return gt_writer_add_config(o->w, gt_global_pid(o->pid), "import.skipped", value);
}

int im_kineto_write(const char *path, const im_scan *scan, im_out *o, gt_import_stats *st)
{
    write_ctx c;
    kt_frame fi;
    int rc;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.st = st;
    c.os_pid = scan->os_pid;
    /* [memory] events of the accelerator when there are any, else the CPU's:
     * the memory analysis follows one allocator per device */
    c.mem_device = scan->n_device_mem > 0;
    /* baseTimeNanoseconds may follow traceEvents: the scan read it */
    c.base_ns = scan->base_ns;
    if ((rc = write_categories(&c)) < 0)
        goto cleanup;
    memset(&fi, 0, sizeof fi);
    fi.check_base_ns = scan->base_ns;
    if ((rc = kt_walk(path, &fi, write_event, write_gpu, &c)) < 0 || (rc = write_steps(&c)) < 0 ||
        (rc = kt_memory_write(&c.mem, o, st)) < 0 || (rc = report_bad(o, &fi)) < 0)
        goto cleanup;
cleanup:
    kt_memory_free(&c.mem);
    free(c.threads);
    free(c.steps);
    free(c.ends);
    return rc;
}
