/* kineto.c: a torch.profiler trace (Kineto's Chrome trace JSON) into gtrace
 * tables, in two streaming passes over the file: the first finds the time
 * span, the profiled process and its rank; the second writes.
 *
 *   "cpu_op"            NVTX range in the category "compute" (the trainer's
 *                       CPU backend convention: outermost ones are the
 *                       device timeline of a trace without kernels)
 *   "user_annotation"   NVTX range; "ProfilerStep#N" is written "step N" so
 *                       every analysis finds the steps; a collective of a
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
 * int64 nanoseconds. */
#include "import_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum cat {
    C_OTHER = 0, C_CPU_OP, C_USER_ANN, C_GPU_USER_ANN, C_PYTHON, C_KERNEL, C_MEMCPY, C_MEMSET,
    C_RUNTIME, C_DRIVER, C_SYNC, C_INSTANT, C_TRACE,
};

static const struct { const char *name; enum cat cat; } cat_names[] = {
    {"cpu_op", C_CPU_OP}, {"user_annotation", C_USER_ANN}, {"gpu_user_annotation", C_GPU_USER_ANN},
    {"python_function", C_PYTHON}, {"kernel", C_KERNEL}, {"gpu_memcpy", C_MEMCPY},
    {"gpu_memset", C_MEMSET}, {"cuda_runtime", C_RUNTIME}, {"cuda_driver", C_DRIVER},
    {"cuda_sync", C_SYNC}, {"cpu_instant_event", C_INSTANT}, {"Trace", C_TRACE},
};

/* Integer args the importer reads. */
enum arg {
    A_CORRELATION, A_DEVICE, A_STREAM, A_CONTEXT, A_BYTES, A_REGISTERS, A_SHARED, A_ADDR,
    A_MEM_BYTES, A_TOTAL_ALLOC, A_TOTAL_RES, A_DEVICE_ID, A_DEVICE_TYPE, N_ARGS
};
static const char *const arg_keys[N_ARGS] = {
    "correlation", "device", "stream", "context", "bytes", "registers per thread", "shared memory",
    "Addr", "Bytes", "Total Allocated", "Total Reserved", "Device Id", "Device Type",
};

enum { CAT_COMPUTE = 1, CAT_COMM = 2 }; /* NVTX categories, default domain */
/* Python calls of thread T are on thread T | PYTHON_TID (Linux thread ids
 * are below 2^22; gtrace keeps 24 bits) */
enum { PYTHON_TID = 1 << 23 };

typedef struct kev { /* one trace event, as much as the importer reads */
    char ph;
    enum cat cat;
    char *name; size_t name_cap;
    char *meta; size_t meta_cap;  /* args.name (metadata events) */
    bool has_pid, has_tid, has_ts, has_dur;
    bool pid_is_num;
    int64_t pid, tid, ts_ns, dur_ns;
    unsigned has_arg;             /* 1 << enum arg */
    int64_t arg[N_ARGS];
    int32_t grid[3], block[3];
    int64_t in_elems;             /* elements of the first input (Input Dims); -1 unknown */
    int in_elem_bytes;            /* its element size (Input type); 0 unknown */
} kev;

static int set_str(char **dst, size_t *cap, const char *s, size_t n)
{
    if (n + 1 > *cap) {
        size_t c = *cap ? *cap : 64;
        while (c < n + 1)
            c *= 2;
        char *p = realloc(*dst, c);
        if (!p)
            return gt_error_set(GT_ERR_NOMEM, "import: out of memory");
        *dst = p;
        *cap = c;
    }
    memcpy(*dst, s, n);
    (*dst)[n] = '\0';
    return 0;
}

/* A pid or tid: a number, or a string ("Spans", "stream 7"): its number, or
 * none (has = false) when it holds no digits. */
static int read_id(json_reader *r, json_tok t, bool *has, bool *is_num, int64_t *out)
{
    *has = false;
    *is_num = false;
    if (t == JT_NUM) {
        int64_t v;
        if (json_int(json_text(r, NULL), &v)) {
            *has = *is_num = true;
            *out = v;
        }
        return 0;
    }
    if (t == JT_STR) {
        const char *s = json_text(r, NULL);
        while (*s && (*s < '0' || *s > '9'))
            s++;
        int64_t v;
        char num[24];
        size_t n = 0;
        while (s[n] >= '0' && s[n] <= '9' && n < sizeof num - 1) {
            num[n] = s[n];
            n++;
        }
        num[n] = '\0';
        if (n && json_int(num, &v)) {
            *has = true;
            *out = v;
        }
        return 0;
    }
    return json_skip(r, t);
}

static int elem_bytes(const char *type)
{
    static const struct { const char *t; int n; } sizes[] = {
        {"float", 4}, {"double", 8}, {"c10::Half", 2}, {"c10::BFloat16", 2}, {"int", 4},
        {"long int", 8}, {"long", 8}, {"int64_t", 8}, {"short int", 2}, {"short", 2},
        {"signed char", 1}, {"unsigned char", 1}, {"bool", 1}, {"c10::Float8_e4m3fn", 1},
        {"c10::Float8_e5m2", 1}, {"c10::complex<float>", 8}, {"c10::complex<double>", 16},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (!strcmp(type, sizes[i].t))
            return sizes[i].n;
    return 0;
}

/* "Input Dims": the elements of the first input: [[a, b], ...] is a*b; a
 * tensor list [[[a], [b]], ...] is a+b. -1 when it says nothing. */
static int read_input_dims(json_reader *r, json_tok t, int64_t *out)
{
    *out = -1;
    if (t != JT_ARR)
        return json_skip(r, t);
    int rc, base = json_depth(r); /* inside the outer array */
    int64_t total = -1, prod = 1;
    bool first = true, any = false;
    for (;;) {
        if ((rc = json_next(r, &t)) < 0)
            return rc;
        int d = json_depth(r);
        if (d < base)
            break;
        if (!first) {
            if ((rc = json_skip(r, t)) < 0)
                return rc;
            continue;
        }
        if (t == JT_ARR && d == base + 1) {
            continue; /* the first input's dims open */
        } else if (t == JT_ARR && d == base + 2) {
            prod = 1; /* a tensor of a list */
            any = false;
        } else if (t == JT_NUM) {
            int64_t v;
            if (json_int(json_text(r, NULL), &v) && v >= 0 && (v == 0 || prod <= INT64_MAX / v))
                prod *= v;
            any = true;
        } else if (t == JT_ARR_END && d == base + 1) {
            if (any)
                total = (total < 0 ? 0 : total) + prod; /* one tensor of a list closed */
            any = false;
        } else if (t == JT_ARR_END && d == base) {
            if (any)
                total = prod; /* the first input's dims closed */
            first = false;
        } else if ((rc = json_skip(r, t)) < 0) {
            return rc;
        }
    }
    *out = total;
    return 0;
}

/* The "args" object of an event. */
static int read_args(json_reader *r, kev *e)
{
    json_tok t;
    int rc;
    for (;;) {
        if ((rc = json_next(r, &t)) < 0)
            return rc;
        if (t == JT_OBJ_END)
            return 0;
        char key[64];
        size_t klen;
        const char *k = json_text(r, &klen);
        snprintf(key, sizeof key, "%s", k);
        if ((rc = json_next(r, &t)) < 0)
            return rc;
        int a = -1;
        for (int i = 0; i < N_ARGS; i++)
            if (!strcmp(key, arg_keys[i]))
                a = i;
        if (a >= 0 && t == JT_NUM) {
            int64_t v;
            if (json_int(json_text(r, NULL), &v)) {
                e->arg[a] = v;
                e->has_arg |= 1u << a;
            }
        } else if ((!strcmp(key, "grid") || !strcmp(key, "block")) && t == JT_ARR) {
            int32_t *dst = key[0] == 'g' ? e->grid : e->block;
            for (int i = 0;; i++) {
                if ((rc = json_next(r, &t)) < 0)
                    return rc;
                if (t == JT_ARR_END)
                    break;
                int64_t v;
                if (t == JT_NUM && i < 3 && json_int(json_text(r, NULL), &v) && v >= 0 && v <= INT32_MAX)
                    dst[i] = (int32_t)v;
                else if ((rc = json_skip(r, t)) < 0)
                    return rc;
            }
        } else if (!strcmp(key, "name") && t == JT_STR) {
            size_t n;
            const char *s = json_text(r, &n);
            if ((rc = set_str(&e->meta, &e->meta_cap, s, n)) < 0)
                return rc;
        } else if (!strcmp(key, "Input Dims")) {
            if ((rc = read_input_dims(r, t, &e->in_elems)) < 0)
                return rc;
        } else if (!strcmp(key, "Input type") && t == JT_ARR) {
            for (int i = 0;; i++) {
                if ((rc = json_next(r, &t)) < 0)
                    return rc;
                if (t == JT_ARR_END)
                    break;
                if (i == 0 && t == JT_STR)
                    e->in_elem_bytes = elem_bytes(json_text(r, NULL));
                else if ((rc = json_skip(r, t)) < 0)
                    return rc;
            }
        } else if ((rc = json_skip(r, t)) < 0) {
            return rc;
        }
    }
}

/* One event object (its '{' read). */
static int read_event(json_reader *r, kev *e)
{
    json_tok t;
    int rc;
    e->ph = 0;
    e->cat = C_OTHER;
    e->name[0] = e->meta[0] = '\0';
    e->has_pid = e->has_tid = e->has_ts = e->has_dur = e->pid_is_num = false;
    e->has_arg = 0;
    e->in_elems = -1;
    e->in_elem_bytes = 0;
    memset(e->grid, 0, sizeof e->grid);
    memset(e->block, 0, sizeof e->block);
    for (;;) {
        if ((rc = json_next(r, &t)) < 0)
            return rc;
        if (t == JT_OBJ_END)
            return 0;
        char key[16];
        snprintf(key, sizeof key, "%s", json_text(r, NULL));
        if ((rc = json_next(r, &t)) < 0)
            return rc;
        size_t n;
        const char *s = json_text(r, &n);
        if (!strcmp(key, "ph") && t == JT_STR) {
            e->ph = s[0];
        } else if (!strcmp(key, "cat") && t == JT_STR) {
            for (size_t i = 0; i < sizeof cat_names / sizeof cat_names[0]; i++)
                if (!strcmp(s, cat_names[i].name))
                    e->cat = cat_names[i].cat;
        } else if (!strcmp(key, "name") && t == JT_STR) {
            if ((rc = set_str(&e->name, &e->name_cap, s, n)) < 0)
                return rc;
        } else if (!strcmp(key, "pid")) {
            if ((rc = read_id(r, t, &e->has_pid, &e->pid_is_num, &e->pid)) < 0)
                return rc;
        } else if (!strcmp(key, "tid")) {
            bool num;
            if ((rc = read_id(r, t, &e->has_tid, &num, &e->tid)) < 0)
                return rc;
        } else if ((!strcmp(key, "ts") || !strcmp(key, "dur")) && t == JT_NUM) {
            int64_t v;
            if (!json_us_to_ns(s, &v))
                return json_fail(r, "a time '%s' out of range", s);
            if (key[0] == 't') {
                e->ts_ns = v;
                e->has_ts = true;
            } else {
                e->dur_ns = v < 0 ? 0 : v;
                e->has_dur = true;
            }
        } else if (!strcmp(key, "args") && t == JT_OBJ) {
            if ((rc = read_args(r, e)) < 0)
                return rc;
        } else if ((rc = json_skip(r, t)) < 0) {
            return rc;
        }
    }
}

static bool has(const kev *e, enum arg a) { return e->has_arg & (1u << a); }

static bool is_device_cat(enum cat c)
{
    return c == C_KERNEL || c == C_MEMCPY || c == C_MEMSET || c == C_SYNC || c == C_GPU_USER_ANN;
}

static bool is_host_cat(enum cat c)
{
    return c == C_CPU_OP || c == C_USER_ANN || c == C_PYTHON || c == C_RUNTIME || c == C_DRIVER;
}

/* Events that become rows (and so count for the time span). */
static bool is_imported(const kev *e)
{
    if (!e->has_ts)
        return false;
    if (e->ph == 'X')
        return is_host_cat(e->cat) || (is_device_cat(e->cat) && e->cat != C_GPU_USER_ANN);
    if (e->ph == 'i' || e->ph == 'I') /* Kineto's, and annotations' (gtrace's export of NVTX marks) */
        return (e->cat == C_INSTANT || e->cat == C_USER_ANN) && e->has_pid && e->pid_is_num;
    return false;
}

/* ---- the file's frame: the top-level object around traceEvents ---------- */

typedef int (*event_fn)(void *ctx, json_reader *r, kev *e);

typedef struct frame_info {
    bool has_base;
    int64_t base_ns;
    int32_t rank;
} frame_info;

static int read_distributed(json_reader *r, json_tok t, frame_info *fi)
{
    int rc;
    if (t != JT_OBJ)
        return json_skip(r, t);
    for (;;) {
        if ((rc = json_next(r, &t)) < 0)
            return rc;
        if (t == JT_OBJ_END)
            return 0;
        bool is_rank = !strcmp(json_text(r, NULL), "rank");
        if ((rc = json_next(r, &t)) < 0)
            return rc;
        int64_t v;
        if (is_rank && t == JT_NUM && json_int(json_text(r, NULL), &v) && v >= 0 && v <= INT32_MAX)
            fi->rank = (int32_t)v;
        else if ((rc = json_skip(r, t)) < 0)
            return rc;
    }
}

typedef int (*props_fn)(void *ctx, json_reader *r);

/* The elements of the traceEvents array (its '[' read), each through fn. */
static int read_events(json_reader *r, kev *e, event_fn fn, void *ctx)
{
    json_tok t;
    int rc;
    for (;;) {
        if ((rc = json_next(r, &t)) < 0)
            return rc;
        if (t == JT_ARR_END)
            return 0;
        if (t != JT_OBJ)
            return json_fail(r, "an element of traceEvents is not an object");
        if ((rc = read_event(r, e)) < 0 || (rc = fn(ctx, r, e)) < 0)
            return rc;
    }
}

/* Walks the file: the top-level keys, and every event of traceEvents through
 * `fn`. A bare array of events (Chrome's other form) is read too. */
static int walk(const char *path, frame_info *fi, event_fn fn, props_fn props, void *ctx)
{
    json_reader *r = NULL;
    kev e;
    json_tok t;
    int rc;
    bool saw_events = false;
    memset(&e, 0, sizeof e);
    fi->has_base = false;
    fi->base_ns = 0;
    fi->rank = -1;
    if ((rc = json_open(&r, path)) < 0)
        return rc;
    if ((rc = set_str(&e.name, &e.name_cap, "", 0)) < 0 || (rc = set_str(&e.meta, &e.meta_cap, "", 0)) < 0 ||
        (rc = json_next(r, &t)) < 0)
        goto cleanup;
    if (t == JT_ARR) {
        saw_events = true;
        if ((rc = read_events(r, &e, fn, ctx)) < 0)
            goto cleanup;
    } else if (t != JT_OBJ) {
        rc = json_fail(r, "not a Chrome trace: the file is not a JSON object");
        goto cleanup;
    }
    while (t == JT_OBJ) {
        if ((rc = json_next(r, &t)) < 0)
            goto cleanup;
        if (t == JT_OBJ_END)
            break;
        char key[32];
        snprintf(key, sizeof key, "%s", json_text(r, NULL));
        if ((rc = json_next(r, &t)) < 0)
            goto cleanup;
        if (!strcmp(key, "traceEvents")) {
            if (t != JT_ARR) {
                rc = json_fail(r, "traceEvents is not an array");
                goto cleanup;
            }
            saw_events = true;
            if ((rc = read_events(r, &e, fn, ctx)) < 0)
                goto cleanup;
        } else if (!strcmp(key, "baseTimeNanoseconds") && t == JT_NUM) {
            if (!json_int(json_text(r, NULL), &fi->base_ns)) {
                rc = json_fail(r, "baseTimeNanoseconds is not an integer");
                goto cleanup;
            }
            fi->has_base = true;
        } else if (!strcmp(key, "distributedInfo")) {
            if ((rc = read_distributed(r, t, fi)) < 0)
                goto cleanup;
        } else if (!strcmp(key, "deviceProperties") && t == JT_ARR && props) {
            if ((rc = props(ctx, r)) < 0)
                goto cleanup;
        } else if ((rc = json_skip(r, t)) < 0) {
            goto cleanup;
        }
        t = JT_OBJ; /* the next key */
    }
    if ((rc = json_next(r, &t)) < 0) /* nothing after the top-level value */
        goto cleanup;
    if (!saw_events)
        rc = gt_error_set(GT_ERR_CORRUPT, "%s: not a Chrome trace: no traceEvents", path);
cleanup:
    free(e.name);
    free(e.meta);
    json_free(r);
    return rc < 0 ? rc : 0;
}

/* ---- pass 1 --------------------------------------------------------------- */

typedef struct scan_ctx {
    im_scan *s;
    int64_t min_ns, max_ns;
    bool any;
    int64_t host_pid;
    bool host_pid_known;
} scan_ctx;

static int scan_event(void *ctx, json_reader *r, kev *e)
{
    scan_ctx *c = ctx;
    (void)r;
    if (!is_imported(e))
        return 0;
    int64_t end = e->ts_ns + (e->ph == 'X' && e->has_dur ? e->dur_ns : 0);
    if (!c->any || e->ts_ns < c->min_ns)
        c->min_ns = e->ts_ns;
    if (!c->any || end > c->max_ns)
        c->max_ns = end;
    c->any = true;
    if ((e->ph == 'i' || e->ph == 'I') && !strcmp(e->name, "[memory]") && has(e, A_DEVICE_TYPE)
        && e->arg[A_DEVICE_TYPE] != 0)
        c->s->n_device_mem++;
    if (!c->host_pid_known && is_host_cat(e->cat) && e->has_pid && e->pid_is_num) {
        c->host_pid = e->pid;
        c->host_pid_known = true;
    }
    return 0;
}

int im_kineto_scan(const char *path, im_scan *out)
{
    scan_ctx c;
    frame_info fi;
    memset(&c, 0, sizeof c);
    memset(out, 0, sizeof *out);
    out->format = GT_IMPORT_KINETO;
    c.s = out;
    int rc = walk(path, &fi, scan_event, NULL, &c);
    if (rc < 0)
        return rc;
    int64_t base = fi.has_base ? fi.base_ns : 0;
    out->rank = fi.rank;
    out->base_ns = base;
    out->os_pid = c.host_pid_known ? c.host_pid : 0;
    if (c.any) {
        if ((c.min_ns > 0 && base > INT64_MAX - c.max_ns) || (c.min_ns < 0 && base < INT64_MIN - c.min_ns))
            return gt_error_set(GT_ERR_CORRUPT, "%s: times out of range (baseTimeNanoseconds + ts)", path);
        out->has_time = true;
        out->min_abs_ns = base + c.min_ns;
        out->max_abs_ns = base + c.max_ns;
        /* on the wall clock: after 2001 in nanoseconds since the epoch */
        out->wall_clock = out->min_abs_ns > 1000000000LL * 1000000000LL;
    }
    return 0;
}

/* ---- pass 2 --------------------------------------------------------------- */

typedef struct mem_ev { /* a "[memory]" event, kept to be replayed in time order */
    int64_t t_ns, tid;
    uint64_t addr;
    int64_t bytes, total_alloc, total_res;
    int32_t device;
    size_t seq;
} mem_ev;

typedef struct write_ctx {
    im_out *o;
    gt_import_stats *st;
    int64_t base_ns;     /* added to every ts */
    int64_t os_pid;      /* the file's process, as Kineto numbered it */
    bool mem_device;     /* import the accelerator's [memory] events, not the CPU's */
    mem_ev *mem; size_t n_mem, cap_mem;
    int64_t *threads; size_t n_threads, cap_threads; /* named already */
} write_ctx;

static int64_t rel(const write_ctx *c, int64_t ts_ns) { return c->base_ns + ts_ns - c->o->t0_abs_ns; }

static int64_t host_tid(const write_ctx *c, const kev *e)
{
    return gt_global_tid(c->o->pid, e->has_tid ? e->tid : c->o->pid);
}

static int add_range(write_ctx *c, const kev *e, const char *text, int32_t category, int64_t payload_bytes)
{
    gt_event ev;
    int rc;
    memset(&ev, 0, sizeof ev);
    ev.kind = GT_EV_NVTX;
    gt_nvtx *n = &ev.u.nvtx;
    n->start_ns = rel(c, e->ts_ns);
    n->end_ns = n->start_ns + (e->has_dur ? e->dur_ns : 0);
    n->event_type = GT_NVTX_PUSHPOP;
    n->category = category;
    n->global_tid = host_tid(c, e);
    if (payload_bytes >= 0) {
        n->payload_kind = GT_PAYLOAD_U64;
        n->payload.u64 = (uint64_t)payload_bytes;
    }
    if ((rc = im_intern(c->o, text, &n->text)) < 0)
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

/* "Memcpy HtoD (Pageable -> Device)": the copy's direction and memory kinds. */
static void memcpy_kinds(const char *name, gt_memcpy *m)
{
    static const struct { const char *s; int k; } dirs[] = {
        {"HtoD", GT_COPY_HTOD}, {"DtoH", GT_COPY_DTOH}, {"DtoD", GT_COPY_DTOD}, {"HtoH", GT_COPY_HTOH},
        {"PtoP", GT_COPY_PTOP}, {"HtoA", GT_COPY_HTOA}, {"AtoH", GT_COPY_ATOH}, {"AtoA", GT_COPY_ATOA},
        {"AtoD", GT_COPY_ATOD}, {"DtoA", GT_COPY_DTOA},
    };
    static const struct { const char *s; int k; } kinds[] = {
        {"Pageable", GT_MEM_PAGEABLE}, {"Pinned", GT_MEM_PINNED}, {"Device", GT_MEM_DEVICE},
        {"Array", GT_MEM_ARRAY}, {"Managed", GT_MEM_MANAGED},
    };
    m->copy_kind = GT_COPY_UNKNOWN;
    m->src_kind = m->dst_kind = GT_MEM_UNKNOWN;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (strstr(name, dirs[i].s))
            m->copy_kind = dirs[i].k;
    const char *open = strchr(name, '('), *arrow = strstr(name, "->");
    for (size_t i = 0; open && arrow && i < sizeof kinds / sizeof kinds[0]; i++) {
        const char *p = strstr(open, kinds[i].s);
        if (p && p < arrow)
            m->src_kind = kinds[i].k;
        if (strstr(arrow, kinds[i].s))
            m->dst_kind = kinds[i].k;
    }
}

static int32_t arg32(const kev *e, enum arg a, int32_t dflt)
{
    return has(e, a) && e->arg[a] >= INT32_MIN && e->arg[a] <= INT32_MAX ? (int32_t)e->arg[a] : dflt;
}

static int write_device(write_ctx *c, const kev *e)
{
    gt_event ev;
    int rc;
    memset(&ev, 0, sizeof ev);
    int64_t start = rel(c, e->ts_ns), end = start + (e->has_dur ? e->dur_ns : 0);
    int32_t device = arg32(e, A_DEVICE, e->has_pid && e->pid >= 0 && e->pid <= INT32_MAX ? (int32_t)e->pid : 0);
    int32_t stream = arg32(e, A_STREAM, e->has_tid && e->tid >= 0 && e->tid <= INT32_MAX ? (int32_t)e->tid : 0);
    int32_t context = arg32(e, A_CONTEXT, 0);
    int64_t corr = has(e, A_CORRELATION) ? e->arg[A_CORRELATION] : 0;
    int64_t gpid = gt_global_pid(c->o->pid);
    switch (e->cat) {
    case C_KERNEL: {
        gt_kernel *k = &ev.u.kernel;
        ev.kind = GT_EV_KERNEL;
        k->start_ns = start;
        k->end_ns = end;
        k->global_pid = gpid;
        k->device_id = device;
        k->context_id = context;
        k->stream_id = stream;
        k->correlation_id = corr;
        if ((rc = im_intern(c->o, e->name, &k->demangled_name)) < 0)
            return rc;
        k->short_name = k->mangled_name = k->demangled_name;
        for (int i = 0; i < 3; i++) {
            (&k->grid_x)[i] = e->grid[i];
            (&k->block_x)[i] = e->block[i];
        }
        k->registers_per_thread = arg32(e, A_REGISTERS, 0);
        k->static_shared_bytes = arg32(e, A_SHARED, 0);
        k->launch_type = 1; /* regular, as nsys numbers it */
        c->st->n_kernels++;
        break;
    }
    case C_MEMCPY: {
        gt_memcpy *m = &ev.u.memcpy;
        ev.kind = GT_EV_MEMCPY;
        m->start_ns = start;
        m->end_ns = end;
        m->global_pid = gpid;
        m->device_id = m->src_device_id = m->dst_device_id = device;
        m->context_id = context;
        m->stream_id = stream;
        m->correlation_id = corr;
        m->bytes = has(e, A_BYTES) ? e->arg[A_BYTES] : 0;
        memcpy_kinds(e->name, m);
        c->st->n_memcpy++;
        break;
    }
    case C_MEMSET: {
        gt_memset *m = &ev.u.memset;
        ev.kind = GT_EV_MEMSET;
        m->start_ns = start;
        m->end_ns = end;
        m->global_pid = gpid;
        m->device_id = device;
        m->context_id = context;
        m->stream_id = stream;
        m->correlation_id = corr;
        m->bytes = has(e, A_BYTES) ? e->arg[A_BYTES] : 0;
        m->mem_kind = strstr(e->name, "Pinned") ? GT_MEM_PINNED : strstr(e->name, "Managed") ? GT_MEM_MANAGED
                    : strstr(e->name, "Pageable") ? GT_MEM_PAGEABLE : GT_MEM_DEVICE;
        c->st->n_memset++;
        break;
    }
    default: { /* C_SYNC */
        gt_sync *s = &ev.u.sync;
        ev.kind = GT_EV_SYNC;
        s->start_ns = start;
        s->end_ns = end;
        s->global_pid = gpid;
        s->device_id = device;
        s->context_id = context;
        s->stream_id = stream;
        s->correlation_id = corr;
        s->sync_type = strstr(e->name, "Wait") ? GT_SYNC_STREAM_WAIT_EVENT : strstr(e->name, "Event") ? GT_SYNC_EVENT
                     : strstr(e->name, "Stream") ? GT_SYNC_STREAM : strstr(e->name, "Context") ? GT_SYNC_CONTEXT
                     : GT_SYNC_UNKNOWN;
        c->st->n_sync++;
        break;
    }
    }
    return im_add(c->o, &ev);
}

static int name_thread(write_ctx *c, int64_t tid, const char *name)
{
    for (size_t i = 0; i < c->n_threads; i++)
        if (c->threads[i] == tid)
            return 0;
    if (c->n_threads == c->cap_threads) {
        size_t cap = c->cap_threads ? c->cap_threads * 2 : 16;
        int64_t *p = realloc(c->threads, cap * sizeof *p);
        if (!p)
            return gt_error_set(GT_ERR_NOMEM, "import: out of memory");
        c->threads = p;
        c->cap_threads = cap;
    }
    c->threads[c->n_threads++] = tid;
    return gt_writer_add_thread_name(c->o->w, gt_global_tid(c->o->pid, tid), name, 0);
}

/* A thread's Python calls: "<its name> python". */
static int name_python_thread(write_ctx *c, const kev *e)
{
    int64_t tid = (e->has_tid ? e->tid : c->o->pid) | PYTHON_TID;
    char name[64];
    for (size_t i = 0; i < c->n_threads; i++)
        if (c->threads[i] == tid)
            return 0;
    snprintf(name, sizeof name, "thread %lld (python calls)", (long long)(tid & ~(int64_t)PYTHON_TID));
    return name_thread(c, tid, name);
}

static int write_event(void *ctx, json_reader *r, kev *e)
{
    write_ctx *c = ctx;
    int rc;
    (void)r;
    if (e->ph == 'M') {
        bool mine = e->has_pid && e->pid_is_num && e->pid == c->os_pid;
        if (mine && !strcmp(e->name, "process_name") && e->meta[0])
            return im_name_process(c->o, e->meta);
        if (mine && !strcmp(e->name, "thread_name") && e->meta[0] && e->has_tid)
            return name_thread(c, e->tid, e->meta);
        c->st->n_skipped++;
        return 0;
    }
    if (!is_imported(e)) {
        c->st->n_skipped++;
        return 0;
    }
    if (e->ph == 'i' || e->ph == 'I') {
        if (!strcmp(e->name, "[memory]")) {
            bool device = has(e, A_DEVICE_TYPE) && e->arg[A_DEVICE_TYPE] != 0;
            if (device != c->mem_device || !has(e, A_ADDR) || !has(e, A_MEM_BYTES) || !has(e, A_TOTAL_ALLOC)) {
                c->st->n_memory_other++;
                return 0;
            }
            if (c->n_mem == c->cap_mem) {
                size_t cap = c->cap_mem ? c->cap_mem * 2 : 1024;
                mem_ev *p = realloc(c->mem, cap * sizeof *p);
                if (!p)
                    return gt_error_set(GT_ERR_NOMEM, "import: out of memory");
                c->mem = p;
                c->cap_mem = cap;
            }
            c->mem[c->n_mem] = (mem_ev){rel(c, e->ts_ns), host_tid(c, e), (uint64_t)e->arg[A_ADDR],
                                        e->arg[A_MEM_BYTES], e->arg[A_TOTAL_ALLOC],
                                        has(e, A_TOTAL_RES) ? e->arg[A_TOTAL_RES] : 0,
                                        device ? arg32(e, A_DEVICE_ID, 0) : -1, c->n_mem};
            c->n_mem++;
            return 0;
        }
        gt_event ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = GT_EV_NVTX;
        ev.u.nvtx.start_ns = rel(c, e->ts_ns);
        ev.u.nvtx.end_ns = -1;
        ev.u.nvtx.event_type = GT_NVTX_MARK;
        ev.u.nvtx.global_tid = host_tid(c, e);
        if ((rc = im_intern(c->o, e->name, &ev.u.nvtx.text)) < 0)
            return rc;
        c->st->n_marks++;
        return im_add(c->o, &ev);
    }
    switch (e->cat) {
    case C_CPU_OP:
        c->st->n_cpu_ops++;
        return add_range(c, e, e->name, CAT_COMPUTE, -1);
    case C_PYTHON: {
        /* on a thread of their own beside the op's: Python calls and the ops
         * and annotations they start do not nest (a record_function opened
         * in __enter__ outlives it; ProfilerStep#N ends inside prof.step()),
         * and the analysis nests the ranges of one thread */
        kev py = *e;
        py.tid = (e->has_tid ? e->tid : c->o->pid) | PYTHON_TID;
        py.has_tid = true;
        if ((rc = name_python_thread(c, e)) < 0)
            return rc;
        c->st->n_python++;
        return add_range(c, &py, e->name, 0, -1);
    }
    case C_USER_ANN: {
        c->st->n_annotations++;
        int64_t step = profiler_step(e->name);
        if (step >= 0) {
            char text[32];
            snprintf(text, sizeof text, "step %lld", (long long)step);
            c->st->n_steps++;
            return add_range(c, e, text, 0, -1);
        }
        if (is_collective(e->name)) {
            c->st->n_comms++;
            int64_t bytes = e->in_elems >= 0 && e->in_elem_bytes > 0 && e->in_elems <= INT64_MAX / e->in_elem_bytes
                          ? e->in_elems * e->in_elem_bytes : -1;
            return add_range(c, e, e->name, CAT_COMM, bytes);
        }
        return add_range(c, e, e->name, 0, -1);
    }
    case C_RUNTIME:
    case C_DRIVER: {
        gt_event ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = GT_EV_API;
        ev.u.api.start_ns = rel(c, e->ts_ns);
        ev.u.api.end_ns = ev.u.api.start_ns + (e->has_dur ? e->dur_ns : 0);
        ev.u.api.global_tid = host_tid(c, e);
        ev.u.api.correlation_id = has(e, A_CORRELATION) ? e->arg[A_CORRELATION] : 0;
        ev.u.api.event_class = e->cat == C_RUNTIME ? GT_API_RUNTIME : GT_API_DRIVER;
        if ((rc = im_intern(c->o, e->name, &ev.u.api.name)) < 0)
            return rc;
        if (e->cat == C_RUNTIME)
            c->st->n_runtime++;
        else
            c->st->n_driver++;
        return im_add(c->o, &ev);
    }
    default:
        return write_device(c, e);
    }
}

/* deviceProperties: one TARGET_INFO_GPU row per device, once per trace. */
static int write_props(void *ctx, json_reader *r)
{
    write_ctx *c = ctx;
    json_tok t;
    int rc;
    for (;;) {
        if ((rc = json_next(r, &t)) < 0)
            return rc;
        if (t == JT_ARR_END)
            return 0;
        if (t != JT_OBJ) {
            if ((rc = json_skip(r, t)) < 0)
                return rc;
            continue;
        }
        gt_gpu_info g;
        char name[256] = "";
        int64_t id = -1;
        memset(&g, 0, sizeof g);
        for (;;) {
            if ((rc = json_next(r, &t)) < 0)
                return rc;
            if (t == JT_OBJ_END)
                break;
            char key[64];
            snprintf(key, sizeof key, "%s", json_text(r, NULL));
            if ((rc = json_next(r, &t)) < 0)
                return rc;
            int64_t v = 0;
            bool num = t == JT_NUM && json_int(json_text(r, NULL), &v);
            int32_t v32 = v >= INT32_MIN && v <= INT32_MAX ? (int32_t)v : 0;
            if (!strcmp(key, "name") && t == JT_STR)
                snprintf(name, sizeof name, "%s", json_text(r, NULL));
            else if (!num)
                rc = json_skip(r, t);
            else if (!strcmp(key, "id"))
                id = v;
            else if (!strcmp(key, "totalGlobalMem"))
                g.total_memory_bytes = v;
            else if (!strcmp(key, "computeMajor"))
                g.compute_major = v32;
            else if (!strcmp(key, "computeMinor"))
                g.compute_minor = v32;
            else if (!strcmp(key, "maxThreadsPerBlock"))
                g.max_threads_per_block = v32;
            else if (!strcmp(key, "regsPerBlock"))
                g.max_registers_per_block = v32;
            else if (!strcmp(key, "regsPerMultiprocessor"))
                g.max_registers_per_sm = v32;
            else if (!strcmp(key, "warpSize"))
                g.threads_per_warp = v32;
            else if (!strcmp(key, "sharedMemPerBlock"))
                g.max_shmem_per_block = v;
            else if (!strcmp(key, "sharedMemPerMultiprocessor"))
                g.max_shmem_per_sm = v;
            else if (!strcmp(key, "sharedMemPerBlockOptin"))
                g.max_shmem_per_block_optin = v;
            else if (!strcmp(key, "numSms"))
                g.sm_count = v32;
            if (rc < 0)
                return rc;
        }
        if (id < 0 || id > 63 || (*c->o->gpus_added & (1ull << id)))
            continue;
        g.id = (int32_t)id;
        g.name = name;
        if ((rc = gt_writer_add_gpu(c->o->w, &g)) < 0)
            return rc;
        *c->o->gpus_added |= 1ull << id;
    }
}

static int cmp_mem(const void *a, const void *b)
{
    const mem_ev *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->t_ns != y->t_ns)
        return x->t_ns < y->t_ns ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Live blocks of one device: address -> bytes, open addressing. */
typedef struct live {
    uint64_t *keys; int64_t *bytes; /* bytes -1: empty, -2: deleted */
    size_t cap, used;
} live;

static size_t hash64(uint64_t a)
{
    a ^= a >> 31;
    a *= 0x9e3779b97f4a7c15ULL;
    return (size_t)(a ^ (a >> 29));
}

static int64_t *live_find(live *l, uint64_t addr)
{
    if (!l->cap)
        return NULL;
    for (size_t h = hash64(addr) & (l->cap - 1);; h = (h + 1) & (l->cap - 1)) {
        if (l->bytes[h] == -1)
            return NULL;
        if (l->bytes[h] >= 0 && l->keys[h] == addr)
            return &l->bytes[h];
    }
}

static int live_put(live *l, uint64_t addr, int64_t bytes)
{
    if ((l->used + 1) * 2 > l->cap) {
        size_t n_live = 0;
        for (size_t i = 0; i < l->cap; i++)
            n_live += l->bytes[i] >= 0;
        live n = {NULL, NULL, l->cap == 0 ? 256 : (n_live + 1) * 4 > l->cap ? l->cap * 2 : l->cap, 0};
        n.keys = malloc(n.cap * sizeof *n.keys);
        n.bytes = malloc(n.cap * sizeof *n.bytes);
        if (!n.keys || !n.bytes) {
            free(n.keys);
            free(n.bytes);
            return gt_error_set(GT_ERR_NOMEM, "import: out of memory");
        }
        for (size_t i = 0; i < n.cap; i++)
            n.bytes[i] = -1;
        for (size_t i = 0; i < l->cap; i++)
            if (l->bytes[i] >= 0 && live_put(&n, l->keys[i], l->bytes[i]) < 0)
                return GT_ERR_NOMEM; /* cannot happen: n has room */
        free(l->keys);
        free(l->bytes);
        *l = n;
    }
    size_t h = hash64(addr) & (l->cap - 1);
    while (l->bytes[h] >= 0)
        h = (h + 1) & (l->cap - 1);
    l->keys[h] = addr;
    l->bytes[h] = bytes;
    l->used++;
    return 0;
}

static int heap_event(write_ctx *c, int64_t t, int64_t tid, int32_t op, uint64_t heap, uint64_t addr,
                      int64_t bytes, const char *name)
{
    gt_event ev;
    int rc;
    memset(&ev, 0, sizeof ev);
    ev.kind = GT_EV_HEAP;
    gt_heap_event *h = &ev.u.heap;
    h->start_ns = t;
    h->global_tid = tid;
    h->operation = op;
    h->heap_id = heap;
    h->address = addr;
    h->bytes = bytes;
    h->heap_usage = 1;  /* NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR */
    h->memory_type = 1; /* NVTX_MEM_TYPE_VIRTUAL_ADDRESS */
    if (name && (rc = im_intern(c->o, name, &h->name)) < 0)
        return rc;
    return im_add(c->o, &ev);
}

/* Replays one device's [memory] events (sorted) into a heap and regions. */
static int write_memory_device(write_ctx *c, const mem_ev *v, size_t n)
{
    live l = {NULL, NULL, 0, 0};
    int rc = 0;
    int32_t dev = v[0].device;
    uint64_t heap = ((uint64_t)c->o->pid << 16) | (uint64_t)(dev + 2);
    /* memory allocated before the profiler started: one region */
    uint64_t pre_addr = 0xfff0000000000000ull | ((uint64_t)c->o->pid << 16) | (uint64_t)(dev + 2);
    int64_t pre = v[0].total_alloc - v[0].bytes;
    int64_t reserved = 0, last_ns = 0;
    bool registered = false; /* the heap: once it has bytes */
    char name[64];
    if (dev < 0)
        snprintf(name, sizeof name, "CPU allocator");
    else
        snprintf(name, sizeof name, "cuda:%d caching allocator", dev);
    if (pre < 0)
        pre = 0;
    for (size_t i = 0; i < n; i++) {
        mem_ev ev = v[i];
        const mem_ev *m = &ev;
        int64_t res = m->total_res > m->total_alloc ? m->total_res : m->total_alloc;
        /* a nanosecond after the event before at least: readers order equal
         * times by kind (frees first), not by row */
        if (i > 0 && ev.t_ns <= last_ns)
            ev.t_ns = last_ns + 1;
        last_ns = ev.t_ns;
        if (i == 0) {
            /* the heap, as big as it was before the first event (as far as
             * that event says), and what was allocated before it */
            int64_t res_before = pre > m->total_res ? pre : m->total_res;
            if (res_before > 0) {
                if ((rc = heap_event(c, m->t_ns, m->tid, GT_HEAP_REGISTER, heap, 0, res_before, name)) < 0)
                    goto cleanup;
                reserved = res_before;
                registered = true;
            }
            if (pre > 0 && (rc = heap_event(c, m->t_ns, m->tid, GT_REGION_REGISTER, heap, pre_addr, pre,
                                            "allocated before the profiler started")) < 0)
                goto cleanup;
        }
        if (res > reserved) { /* grows before the block comes */
            if ((rc = heap_event(c, m->t_ns, m->tid, GT_HEAP_REGISTER, heap, 0, res, registered ? NULL : name)) < 0)
                goto cleanup;
            reserved = res;
            registered = true;
        }
        if (m->bytes >= 0) {
            int64_t *b = live_find(&l, m->addr);
            if (b) {
                /* allocated again without a free: the same block, resized */
                *b = m->bytes;
                rc = heap_event(c, m->t_ns, m->tid, GT_REGION_RESIZE, heap, m->addr, m->bytes, NULL);
            } else {
                if ((rc = live_put(&l, m->addr, m->bytes)) < 0)
                    goto cleanup;
                rc = heap_event(c, m->t_ns, m->tid, GT_REGION_REGISTER, heap, m->addr, m->bytes, NULL);
            }
        } else {
            int64_t *b = live_find(&l, m->addr);
            if (b) {
                *b = -2; /* a tombstone: still counted in used until a rehash */
                rc = heap_event(c, m->t_ns, m->tid, GT_REGION_UNREGISTER, heap, m->addr, 0, NULL);
            } else if (pre > 0) {
                /* a block from before the profiler: it shrinks that region */
                pre = pre + m->bytes > 0 ? pre + m->bytes : 0;
                rc = heap_event(c, m->t_ns, m->tid, pre > 0 ? GT_REGION_RESIZE : GT_REGION_UNREGISTER, heap,
                                pre_addr, pre, NULL);
            }
        }
        if (rc < 0)
            goto cleanup;
        if (res < reserved) { /* shrinks after the block went */
            if ((rc = heap_event(c, m->t_ns, m->tid, GT_HEAP_REGISTER, heap, 0, res, NULL)) < 0)
                goto cleanup;
            reserved = res;
        }
        c->st->n_memory++;
        c->st->last_allocated = m->total_alloc;
        c->st->last_reserved = m->total_res;
    }
cleanup:
    free(l.keys);
    free(l.bytes);
    return rc;
}

static int write_memory(write_ctx *c)
{
    int rc;
    if (c->n_mem == 0)
        return 0;
    qsort(c->mem, c->n_mem, sizeof *c->mem, cmp_mem);
    size_t from = 0;
    for (size_t i = 1; i <= c->n_mem; i++) {
        if (i == c->n_mem || c->mem[i].device != c->mem[from].device) {
            if ((rc = write_memory_device(c, c->mem + from, i - from)) < 0)
                return rc;
            from = i;
        }
    }
    return 0;
}

static int write_categories(write_ctx *c)
{
    static const struct { int32_t id; const char *name; } cats[] = {{CAT_COMPUTE, "compute"}, {CAT_COMM, "communication"}};
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

int im_kineto_write(const char *path, const im_scan *scan, im_out *o, gt_import_stats *st)
{
    write_ctx c;
    frame_info fi;
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
    if ((rc = walk(path, &fi, write_event, write_props, &c)) < 0)
        goto cleanup;
    rc = write_memory(&c);
cleanup:
    free(c.mem);
    free(c.threads);
    return rc;
}
