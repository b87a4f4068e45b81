/* model.c: loads a trace through the reader into the compact, time-sorted
 * arrays every analysis works on, and answers the lookups they share: the
 * launch of a correlation id, the NVTX range a thread was in at a time, the
 * origin of an allocation. It computes no statistics.
 *
 * A trace without kernels gets a CPU timeline instead: GTRACE_CPU_OPS rows and
 * the NVTX ranges whose category is named "compute" in their domain
 * (nvtxDomainNameCategoryA), the convention by which an NVTX-annotated program
 * marks its compute ops; each thread is one stream, and a compute range nested
 * in another of its thread is not counted again. NVTX ranges of a category
 * named "communication" (the same convention for collectives) are kept apart
 * as the model's comms, for comm.c. */
#include "model_int.h"
#include "gt_store_bulk.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define GROW(arr, n, cap)                                                        \
    ((n) < (cap) ? 0 : an_grow((void **)&(arr), &(cap), sizeof *(arr)))

/* Room for `more` elements beyond n at once, where the store can count the
 * rows to come: one allocation of the array's size, instead of doubling to
 * up to twice it (address space, which `ulimit -v` holds, at 100 M events). */
static int reserve(void **arr, size_t *cap, size_t n, int64_t more, size_t elem)
{
    if (more <= 0 || n + (size_t)more <= *cap)
        return 0;
    size_t ncap = n + (size_t)more;
    void *p = realloc(*arr, ncap * elem);
    if (!p)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory loading the trace");
    *arr = p;
    *cap = ncap;
    return 0;
}
#define RESERVE(arr, n, cap, more) reserve((void **)&(arr), &(cap), (n), (more), sizeof *(arr))

static int cmp_act(const void *a, const void *b)
{
    const an_act *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->end_ns > y->end_ns) - (x->end_ns < y->end_ns);
}
static int cmp_copy(const void *a, const void *b)
{
    const an_copy *x = a, *y = b;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}
static int cmp_api(const void *a, const void *b)
{
    const an_api *x = a, *y = b;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}
/* By thread, then start, outer ranges (later end) first so parents precede children. */
static int cmp_range(const void *a, const void *b)
{
    const an_range *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->end_ns < y->end_ns) - (x->end_ns > y->end_ns);
}
/* By time; at equal times frees before allocations so an address reused in
 * the same nanosecond is not mistaken for a double allocation. */
static int cmp_mem(const void *a, const void *b)
{
    const an_mem *x = a, *y = b;
    if (x->t_ns != y->t_ns)
        return x->t_ns < y->t_ns ? -1 : 1;
    int fx = x->op == AN_BLOCK_FREE || x->op == AN_DEV_FREE || x->op == AN_SEG_FREE || x->op == AN_HEAP_RESET;
    int fy = y->op == AN_BLOCK_FREE || y->op == AN_DEV_FREE || y->op == AN_SEG_FREE || y->op == AN_HEAP_RESET;
    return fy - fx;
}

/* Ranges come by start over all threads: grouped by thread first (a stable
 * counting pass), they are nearly sorted. Skipped for many threads. */
static void group_ranges_by_thread(an_model *m)
{
    enum { MAX_TIDS = 1024 };
    int64_t tids[MAX_TIDS];
    size_t n_tids = 0, first[MAX_TIDS];
    size_t k0 = 1;
    while (k0 < m->n_ranges && m->ranges[k0 - 1].tid <= m->ranges[k0].tid)
        k0++;
    if (k0 >= m->n_ranges)
        return; /* grouped already */
    for (size_t i = 0; i < m->n_ranges; i++) {
        int64_t tid = m->ranges[i].tid;
        size_t k = 0;
        if (n_tids > 0 && tids[n_tids - 1] == tid)
            continue;
        while (k < n_tids && tids[k] != tid)
            k++;
        if (k == n_tids) {
            if (n_tids == MAX_TIDS)
                return;
            tids[n_tids++] = tid;
        }
    }
    if (n_tids < 2)
        return;
    /* tids in order, then where each one's ranges begin */
    for (size_t a = 1; a < n_tids; a++)
        for (size_t b = a; b > 0 && tids[b] < tids[b - 1]; b--) {
            int64_t t = tids[b];
            tids[b] = tids[b - 1];
            tids[b - 1] = t;
        }
    /* each range's place, then the ranges moved there in place (a cycle at
     * a time): 4 bytes a range beside them, not a second array of them */
    uint32_t *dest = m->n_ranges < UINT32_MAX ? malloc(m->n_ranges * sizeof *dest) : NULL;
    if (!dest)
        return; /* an_sort() still gets it right, more slowly */
    memset(first, 0, sizeof first);
    for (size_t i = 0; i < m->n_ranges; i++) {
        size_t lo = 0, hi = n_tids;
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (tids[mid] <= m->ranges[i].tid)
                lo = mid;
            else
                hi = mid;
        }
        if (lo + 1 < n_tids)
            first[lo + 1]++;
    }
    for (size_t k = 1; k < n_tids; k++)
        first[k] += first[k - 1];
    for (size_t i = 0; i < m->n_ranges; i++) {
        size_t lo = 0, hi = n_tids;
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (tids[mid] <= m->ranges[i].tid)
                lo = mid;
            else
                hi = mid;
        }
        dest[i] = (uint32_t)first[lo]++;
    }
    for (size_t i = 0; i < m->n_ranges; i++) {
        while (dest[i] != i) { /* the range at i goes to dest[i]: swapped there, it is in place */
            uint32_t j = dest[i];
            an_range r = m->ranges[j];
            m->ranges[j] = m->ranges[i];
            m->ranges[i] = r;
            dest[i] = dest[j];
            dest[j] = j;
        }
    }
    free(dest);
}

/* The arrays each loader fills, sorted by that loader (on its thread). */
static void sort_device(an_model *m)
{
    an_sort(m->acts, m->n_acts, sizeof *m->acts, cmp_act);
    an_sort(m->copies, m->n_copies, sizeof *m->copies, cmp_copy);
    an_sort(m->apis, m->n_apis, sizeof *m->apis, cmp_api);
}

static void sort_host(an_model *m)
{
    group_ranges_by_thread(m);
    an_sort(m->ranges, m->n_ranges, sizeof *m->ranges, cmp_range);
    an_sort(m->mem, m->n_mem, sizeof *m->mem, cmp_mem);
}

void an_model_sort(an_model *m)
{
    /* Merged kinds (kernels with copies) and foreign files need sorting. */
    sort_device(m);
    sort_host(m);
}



static bool in_cats(const cat_list *c, int64_t tid, int64_t domain, int32_t category)
{
    int64_t pid = gt_pid_of(tid);
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i].domain == domain && c->v[i].category == category && (c->v[i].pid == 0 || c->v[i].pid == pid))
            return true;
    return false;
}

static bool is_compute(const load_state *ls, int64_t tid, int64_t domain, int32_t category)
{
    return in_cats(&ls->compute, tid, domain, category);
}

/* Remembers a category named `name` if it is one the analysis reads. */
static void note_category(load_state *ls, const char *name, int64_t tid, int64_t domain, int32_t category)
{
    cat_list *c = strcmp(name, "compute") == 0 ? &ls->compute : strcmp(name, "communication") == 0 ? &ls->comm : NULL;
    int64_t pid = tid ? gt_pid_of(tid) : 0;
    for (size_t i = 0; c && i < c->n; i++)
        if (c->v[i].pid == pid && c->v[i].domain == domain && c->v[i].category == category)
            return;
    if (c && c->n < N_COMPUTE_CATS) {
        c->v[c->n].pid = pid;
        c->v[c->n].domain = domain;
        c->v[c->n++].category = category;
    }
}

/* The bytes an integer payload gives a communication range; -1 none (or
 * more than AN_BYTES_LIMIT: not a size). */
static int64_t payload_bytes(const gt_nvtx *n)
{
    switch (n->payload_kind) {
    case GT_PAYLOAD_U64: return n->payload.u64 <= (uint64_t)AN_BYTES_LIMIT ? (int64_t)n->payload.u64 : -1;
    case GT_PAYLOAD_I64: return n->payload.i64 >= 0 && n->payload.i64 <= AN_BYTES_LIMIT ? n->payload.i64 : -1;
    case GT_PAYLOAD_U32: return n->payload.u32;
    case GT_PAYLOAD_I32: return n->payload.i32 >= 0 ? n->payload.i32 : -1;
    default: return -1;
    }
}

static int cmp_comm(const void *a, const void *b)
{
    const an_comm *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->end_ns > y->end_ns) - (x->end_ns < y->end_ns);
}

/* The ranges of a "communication" category: every one is a collective (or
 * a transfer); start/end ranges of one thread may overlap. */
static int add_nvtx_comms(an_model *m, load_state *ls)
{
    int rc;
    if (ls->comm.n == 0)
        return 0;
    for (size_t i = 0; i < ls->n_ops; i++) {
        const struct cand_op *o = &ls->ops[i];
        if (!in_cats(&ls->comm, o->tid, o->domain, o->category))
            continue;
        if ((rc = GROW(m->comms, m->n_comms, ls->caps[5])) < 0)
            return rc;
        m->comms[m->n_comms++] = (an_comm){o->start_ns, o->end_ns, o->tid, o->bytes, o->text};
    }
    an_sort(m->comms, m->n_comms, sizeof *m->comms, cmp_comm);
    return 0;
}

static int cmp_op(const void *a, const void *b)
{
    const struct cand_op *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->end_ns < y->end_ns) - (x->end_ns > y->end_ns);
}

/* The ranges of a "compute" category become CPU ops: one stream per thread,
 * outermost ranges only (an op calling an op is one op's time). */
static int add_nvtx_ops(an_model *m, load_state *ls)
{
    int rc = 0;
    if (ls->compute.n == 0 || ls->n_ops == 0)
        return 0;
    an_sort(ls->ops, ls->n_ops, sizeof *ls->ops, cmp_op);
    int32_t stream = -1;
    int64_t tid = 0, outer_end = INT64_MIN;
    for (size_t i = 0; i < ls->n_ops; i++) {
        const struct cand_op *o = &ls->ops[i];
        if (!is_compute(ls, o->tid, o->domain, o->category))
            continue;
        if (stream < 0 || o->tid != tid) {
            stream++;
            tid = o->tid;
            outer_end = INT64_MIN;
        } else if (o->end_ns <= outer_end) {
            continue;
        }
        if ((rc = GROW(m->acts, m->n_acts, ls->caps[0])) < 0)
            return rc;
        m->acts[m->n_acts++] = (an_act){.start_ns = o->start_ns, .end_ns = o->end_ns, .tid = o->tid, .name = o->text,
                                        .device = -1, .stream = stream, .kind = GT_EV_CPU_OP,
                                        .pid = (int32_t)gt_pid_of(o->tid), .nvtx = true};
        outer_end = o->end_ns;
    }
    return 0;
}

/* A trace with kernels keeps its "compute" push/pop ranges apart (they are
 * no device there), for the PyTorch tables' ops: by (tid, start). */
static int keep_compute_ranges(an_model *m, load_state *ls)
{
    size_t n = 0;
    if (ls->compute.n == 0)
        return 0;
    for (size_t i = 0; i < ls->n_ops; i++)
        n += ls->ops[i].pushpop && is_compute(ls, ls->ops[i].tid, ls->ops[i].domain, ls->ops[i].category);
    if (n == 0)
        return 0;
    if (!(m->compute_ranges = malloc(n * sizeof *m->compute_ranges)))
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory loading the trace");
    for (size_t i = 0; i < ls->n_ops; i++) {
        const struct cand_op *o = &ls->ops[i];
        if (o->pushpop && is_compute(ls, o->tid, o->domain, o->category))
            m->compute_ranges[m->n_compute_ranges++] = (an_span){o->start_ns, o->end_ns, o->tid};
    }
    return 0;
}


static bool time_ok(int64_t t)
{
    return t >= -AN_TIME_LIMIT_NS && t <= AN_TIME_LIMIT_NS;
}

static bool bytes_ok(int64_t b)
{
    return b >= 0 && b <= AN_BYTES_LIMIT;
}

/* A row the analysis can compute with (see AN_TIME_LIMIT_NS): the reader
 * of a damaged or hand-made file may hand over anything an INTEGER holds. */
static bool row_ok(const gt_event *ev, int64_t start_ns, int64_t end_ns)
{
    if (!time_ok(start_ns) || !time_ok(end_ns))
        return false;
    switch (ev->kind) {
    /* ranges ending before they start are not ranges (below); names are
     * string ids, which a range holds in 32 bits */
    case GT_EV_NVTX: return ev->u.nvtx.text >= 0 && ev->u.nvtx.text <= UINT32_MAX;
    case GT_EV_MEMCPY: return end_ns >= start_ns && bytes_ok(ev->u.memcpy.bytes);
    case GT_EV_MEMSET: return end_ns >= start_ns && bytes_ok(ev->u.memset.bytes);
    case GT_EV_GPU_MEMORY: return bytes_ok(ev->u.gpu_memory.bytes);
    case GT_EV_HEAP: return bytes_ok(ev->u.heap.bytes);
    case GT_EV_CPU_OP:
        return end_ns >= start_ns && bytes_ok(ev->u.cpu_op.bytes) && ev->u.cpu_op.flops >= 0;
    default: return end_ns >= start_ns;
    }
}

bool an_row_ok(const gt_event *ev)
{
    return row_ok(ev, gt_event_start(ev), gt_event_end(ev));
}

/* Device timeline and everything else from the reader, one kind at a time;
 * span_only: rows only count for the time span. Rows out of range are
 * refused (counted) and count for nothing. */
static int load_kind(loader *L, gt_event_kind kind, bool span_only)
{
    an_model *m = L->m;
    load_state *ls = L->ls;
    size_t *caps = ls->caps;
    gt_bulk *bulk = NULL;
    gt_iter *it = NULL;
    gt_event ev;
    /* the columns computed with, front to back; gt_iter where the store
     * cannot read a table so (rows in stored order: the loaders sort) */
    int64_t rows = 0; /* at most what the arrays get of this kind; 0: not known */
    if (span_only || L->ranged || (kind == GT_EV_API && L->only_corr) || gt_trace_count(L->t, kind, &rows) < 0)
        rows = 0;
    int rc = 0;
    switch (kind) {
    case GT_EV_KERNEL: case GT_EV_CPU_OP: rc = RESERVE(m->acts, m->n_acts, caps[0], rows); break;
    case GT_EV_MEMCPY: case GT_EV_MEMSET:
        if ((rc = RESERVE(m->acts, m->n_acts, caps[0], rows)) == 0)
            rc = RESERVE(m->copies, m->n_copies, caps[1], rows);
        break;
    case GT_EV_API: rc = RESERVE(m->apis, m->n_apis, caps[2], rows); break;
    case GT_EV_NVTX: rc = RESERVE(m->ranges, m->n_ranges, caps[3], rows); break;
    case GT_EV_GPU_MEMORY: case GT_EV_HEAP: rc = RESERVE(m->mem, m->n_mem, caps[4], rows); break;
    default: break;
    }
    if (rc == 0 && L->ranged) /* a window: the store's time range, rows by start */
        rc = gt_iter_new_starting(&it, L->t, kind, L->from_ns, L->to_ns);
    else if (rc == 0)
        rc = gt_bulk_new(&bulk, L->t, kind);
    if (rc == 0 && !bulk && !it)
        rc = gt_iter_new(&it, L->t, kind, INT64_MIN, INT64_MAX);
    if (rc < 0)
        return rc;
    while ((rc = bulk ? gt_bulk_next(bulk, &ev) : gt_iter_next(it, &ev)) == 1) {
        /* the span as gt_trace_time_span gives it, without reading it all again */
        int64_t ev_s = gt_event_start(&ev), ev_e = gt_event_end(&ev);
        if (!row_ok(&ev, ev_s, ev_e)) {
            L->n_refused++;
            continue;
        }
        if (ev_e < ev_s)
            ev_e = ev_s;
        if (!L->any || ev_s < L->first_ns)
            L->first_ns = ev_s;
        if (!L->any || ev_e > L->last_ns)
            L->last_ns = ev_e;
        L->any = true;
        if (span_only)
            continue;
        switch (kind) {
        case GT_EV_KERNEL: {
            const gt_kernel *k = &ev.u.kernel;
            if ((rc = GROW(m->acts, m->n_acts, caps[0])) < 0)
                goto cleanup;
            gt_string_id name = k->demangled_name ? k->demangled_name : k->short_name ? k->short_name : k->mangled_name;
            m->acts[m->n_acts++] = (an_act){.start_ns = k->start_ns, .end_ns = k->end_ns, .corr = k->correlation_id,
                                            .name = name, .device = k->device_id, .stream = k->stream_id,
                                            .kind = GT_EV_KERNEL, .pid = (int32_t)gt_pid_of(k->global_pid)};
            break;
        }
        case GT_EV_MEMCPY: {
            const gt_memcpy *c = &ev.u.memcpy;
            if ((rc = GROW(m->acts, m->n_acts, caps[0])) < 0 || (rc = GROW(m->copies, m->n_copies, caps[1])) < 0)
                goto cleanup;
            m->acts[m->n_acts++] = (an_act){.start_ns = c->start_ns, .end_ns = c->end_ns, .corr = c->correlation_id,
                                            .device = c->device_id, .stream = c->stream_id,
                                            .kind = GT_EV_MEMCPY, .pid = (int32_t)gt_pid_of(c->global_pid)};
            m->copies[m->n_copies++] = (an_copy){c->start_ns, c->end_ns, c->bytes, c->correlation_id, c->device_id,
                                                 (int8_t)c->copy_kind, (int8_t)c->src_kind, (int8_t)c->dst_kind};
            break;
        }
        case GT_EV_MEMSET: {
            const gt_memset *s = &ev.u.memset;
            if ((rc = GROW(m->acts, m->n_acts, caps[0])) < 0 || (rc = GROW(m->copies, m->n_copies, caps[1])) < 0)
                goto cleanup;
            m->acts[m->n_acts++] = (an_act){.start_ns = s->start_ns, .end_ns = s->end_ns, .corr = s->correlation_id,
                                            .device = s->device_id, .stream = s->stream_id,
                                            .kind = GT_EV_MEMSET, .pid = (int32_t)gt_pid_of(s->global_pid)};
            m->copies[m->n_copies++] = (an_copy){s->start_ns, s->end_ns, s->bytes, s->correlation_id, s->device_id,
                                                 -1, (int8_t)s->mem_kind, (int8_t)s->mem_kind};
            break;
        }
        case GT_EV_CPU_OP: {
            const gt_cpu_op *o = &ev.u.cpu_op;
            if ((rc = GROW(m->acts, m->n_acts, caps[0])) < 0)
                goto cleanup;
            m->acts[m->n_acts++] = (an_act){.start_ns = o->start_ns, .end_ns = o->end_ns, .tid = o->global_tid,
                                            .name = o->name, .device = -1, .stream = o->stream_id,
                                            .kind = GT_EV_CPU_OP, .pid = (int32_t)gt_pid_of(o->global_tid)};
            break;
        }
        case GT_EV_API: {
            const gt_api_call *a = &ev.u.api;
            if (L->only_corr && !bsearch(&a->correlation_id, L->only_corr, L->n_only_corr, sizeof *L->only_corr,
                                         gt_cmp_i64))
                break;
            if ((rc = GROW(m->apis, m->n_apis, caps[2])) < 0)
                goto cleanup;
            m->apis[m->n_apis++] = (an_api){a->start_ns, a->end_ns, a->global_tid, a->correlation_id, a->name,
                                            a->event_class == GT_API_DRIVER,
                                            a->event_class != GT_API_DRIVER && a->event_class != GT_API_RUNTIME};
            break;
        }
        case GT_EV_NVTX: {
            const gt_nvtx *n = &ev.u.nvtx;
            if (n->event_type == GT_NVTX_CATEGORY && n->category != 0)
                note_category(ls, an_str(m, n->text), n->global_tid, n->domain_id, n->category);
            if ((n->event_type != GT_NVTX_PUSHPOP && n->event_type != GT_NVTX_STARTEND) || n->end_ns < n->start_ns)
                break;
            if (m->n_ranges == INT32_MAX) { /* a parent is an int32_t */
                rc = gt_error_set(GT_ERR_NOMEM, "analyze: more NVTX ranges than the analysis holds (%d)", INT32_MAX);
                goto cleanup;
            }
            if ((rc = GROW(m->ranges, m->n_ranges, caps[3])) < 0)
                goto cleanup;
            m->ranges[m->n_ranges++] = (an_range){n->start_ns, n->end_ns, n->global_tid, (uint32_t)n->text, -1};
            if (n->category != 0) {
                if ((rc = GROW(ls->ops, ls->n_ops, ls->cap_ops)) < 0)
                    goto cleanup;
                ls->ops[ls->n_ops++] = (struct cand_op){n->start_ns, n->end_ns, n->global_tid, n->domain_id,
                                                        payload_bytes(n), n->category,
                                                        n->event_type == GT_NVTX_PUSHPOP, n->text};
            }
            break;
        }
        case GT_EV_GPU_MEMORY: {
            const gt_gpu_memory *g = &ev.u.gpu_memory;
            if ((rc = GROW(m->mem, m->n_mem, caps[4])) < 0)
                goto cleanup;
            /* the allocating thread is the API call's; resolved in an_model_load */
            m->mem[m->n_mem++] = (an_mem){g->start_ns, g->correlation_id, g->callchain_id, (uint64_t)g->device_id,
                                          g->address, g->bytes, g->stream_id,
                                          g->operation == GT_DEVMEM_FREE ? AN_DEV_FREE : AN_DEV_ALLOC};
            break;
        }
        case GT_EV_HEAP: {
            const gt_heap_event *h = &ev.u.heap;
            int8_t op;
            switch (h->operation) {
            case GT_HEAP_REGISTER: op = AN_SEG_ALLOC; break;
            case GT_HEAP_UNREGISTER: op = AN_SEG_FREE; break;
            case GT_HEAP_RESET: op = AN_HEAP_RESET; break;
            case GT_REGION_REGISTER: op = AN_BLOCK_ALLOC; break;
            case GT_REGION_RESIZE: op = AN_BLOCK_ALLOC; break; /* re-registers the new size */
            case GT_REGION_UNREGISTER: op = AN_BLOCK_FREE; break;
            default: op = -1; break;
            }
            if (op < 0)
                break;
            if ((rc = GROW(m->mem, m->n_mem, caps[4])) < 0)
                goto cleanup;
            m->mem[m->n_mem++] = (an_mem){h->start_ns, h->global_tid, h->callchain_id, h->heap_id, h->address,
                                          h->bytes, 0, op};
            break;
        }
        default:
            break;
        }
    }
cleanup:
    gt_bulk_free(bulk);
    gt_iter_free(it);
    return rc < 0 ? rc : 0;
}

/* nsys 2.x exports hold each runtime call twice: the call (class 0, with its
 * version suffix) and a wrapper of another class with the same correlation
 * id. Counting both would double every API figure: wrappers go. */
int an_drop_wrappers(an_model *m)
{
    size_t n = 0;
    bool dropped = false;
    for (size_t i = 0; i < m->n_apis; i++) {
        const an_api *a = &m->apis[i];
        const an_api *owner = a->foreign ? an_model_launch(m, a->corr) : NULL;
        if (owner && !owner->foreign) {
            dropped = true;
            m->n_dropped++;
            continue;
        }
        m->apis[n++] = *a;
    }
    m->n_apis = n;
    if (!dropped)
        return 0;
    return an_model_index(m);
}

int an_load_run(loader *L)
{
    for (size_t i = 0; i < L->n_kinds && L->rc == 0; i++)
        if ((L->rc = load_kind(L, L->kinds[i], false)) < 0)
            snprintf(L->msg, sizeof L->msg, "%s", gt_error_last());
    if (L->rc == 0 && (L->rc = L->finish(L->m)) < 0)
        snprintf(L->msg, sizeof L->msg, "%s", gt_error_last());
    return L->rc;
}

int an_load_finish_device(an_model *m)
{
    sort_device(m);
    return an_index_calls(m);
}

int an_load_finish_host(an_model *m)
{
    sort_host(m);
    return an_index_ranges(m);
}

static void *loader_thread(void *arg)
{
    an_load_run(arg);
    return NULL;
}

int an_load_cpu(an_model *m, load_state *ls, loader *cpu, bool any_kernel, bool *out_cpu_ops)
{
    size_t n_before = m->n_acts;
    int rc;
    /* communication first: add_nvtx_ops reorders the candidates */
    if ((rc = add_nvtx_comms(m, ls)) < 0 || (rc = load_kind(cpu, GT_EV_CPU_OP, any_kernel)) < 0 ||
        (!any_kernel && (rc = add_nvtx_ops(m, ls)) < 0) || (any_kernel && (rc = keep_compute_ranges(m, ls)) < 0))
        return rc;
    *out_cpu_ops = !any_kernel && m->n_acts > n_before;
    /* CPU ops join the device timeline; ranges and calls, sorted and indexed
     * by their loaders, stay as they are */
    an_sort(m->acts, m->n_acts, sizeof *m->acts, cmp_act);
    return 0;
}

int an_model_load(an_model **out, gt_trace *t)
{
    *out = NULL;
    an_model *m = calloc(1, sizeof *m);
    load_state ls;
    gt_trace *t2 = NULL;
    pthread_t th;
    bool threaded = false;
    int rc;
    memset(&ls, 0, sizeof ls);
    if (!m)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    m->t = t;
    /* Two loaders, on two threads when a second handle and a thread can be
     * had: the device and its API calls; the host's NVTX and memory. NVTX
     * stays on `t`, whose ids for inline texts the model keeps. */
    static const gt_event_kind dev_kinds[] = {GT_EV_KERNEL, GT_EV_MEMCPY, GT_EV_MEMSET, GT_EV_API};
    static const gt_event_kind host_kinds[] = {GT_EV_NVTX, GT_EV_GPU_MEMORY, GT_EV_HEAP, GT_EV_SYNC};
    loader dev = {.m = m, .t = t, .ls = &ls, .kinds = dev_kinds, .n_kinds = 4, .finish = an_load_finish_device};
    loader host = {.m = m, .t = t, .ls = &ls, .kinds = host_kinds, .n_kinds = 4, .finish = an_load_finish_host};
    if (gt_trace_reopen(&t2, t) == 0) {
        dev.t = t2;
        threaded = pthread_create(&th, NULL, loader_thread, &dev) == 0;
    }
    if (!threaded)
        dev.t = t;
    /* SYNC: only its time span (loader's switch keeps nothing of it) */
    an_load_run(&host);
    if (threaded)
        pthread_join(th, NULL);
    else
        an_load_run(&dev);
    gt_trace_free(t2);
    if ((rc = dev.rc < 0 ? dev.rc : host.rc) < 0) {
        gt_error_set(rc, "%s", dev.rc < 0 ? dev.msg : host.msg);
        goto cleanup;
    }
    /* CPU ops are the device only when there is no kernel at all. */
    bool any_kernel = false;
    for (size_t i = 0; i < m->n_acts && !any_kernel; i++)
        any_kernel = m->acts[i].kind == GT_EV_KERNEL;
    if ((rc = an_load_cpu(m, &ls, &host, any_kernel, &m->cpu_timeline)) < 0)
        goto cleanup;
    an_index_rest(m);
    if ((rc = an_drop_wrappers(m)) < 0)
        goto cleanup;
    /* Device allocations carry a correlation id in `tid` until here: the
     * thread is that of the API call that made them. */
    for (size_t i = 0; i < m->n_mem; i++) {
        an_mem *e = &m->mem[i];
        if (e->op != AN_DEV_ALLOC && e->op != AN_DEV_FREE)
            continue;
        const an_api *a = an_model_launch(m, e->tid);
        if (a && e->t_ns - a->start_ns > m->alloc_before_ns)
            m->alloc_before_ns = e->t_ns - a->start_ns;
        if (a && a->start_ns - e->t_ns > m->alloc_after_ns)
            m->alloc_after_ns = a->start_ns - e->t_ns;
        e->tid = a ? a->tid : m->main_tid;
    }
    m->n_refused = dev.n_refused + host.n_refused;
    if (dev.any || host.any) {
        m->span_start_ns = !host.any || (dev.any && dev.first_ns < host.first_ns) ? dev.first_ns : host.first_ns;
        m->span_end_ns = !host.any || (dev.any && dev.last_ns > host.last_ns) ? dev.last_ns : host.last_ns;
    }
    *out = m;
    m = NULL;
cleanup:
    free(ls.ops);
    an_model_free(m);
    return rc;
}

/* What an allocator's history and its states read: the memory events, the
 * NVTX ranges (an allocation's origin, the steps) and, of the API calls,
 * only those that made device allocations (their thread). Not the device
 * timeline, CPU ops, comms, the time span or refused rows of other kinds.
 * A device allocation whose call is not in the trace takes main_tid, which
 * counts every call: then the whole model is loaded, as an_model_load. */
int an_load_host_only(an_model **out, gt_trace *t, load_state *ls, int64_t *n_refused)
{
    static const gt_event_kind host_kinds[] = {GT_EV_NVTX, GT_EV_GPU_MEMORY, GT_EV_HEAP};
    an_model *m = calloc(1, sizeof *m);
    *out = NULL;
    if (!m)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    m->t = t;
    loader host = {.m = m, .t = t, .ls = ls, .kinds = host_kinds, .n_kinds = 3, .finish = an_load_finish_host};
    int rc = an_load_run(&host);
    if (rc < 0) {
        gt_error_set(rc, "%s", host.msg);
        an_model_free(m);
        return rc;
    }
    *n_refused = host.n_refused;
    *out = m;
    return 0;
}

int an_model_load_memory(an_model **out, gt_trace *t)
{
    static const gt_event_kind api_kind[] = {GT_EV_API};
    an_model *m = NULL;
    int64_t *corrs = NULL, host_refused = 0;
    size_t n_corrs = 0;
    load_state ls;
    bool whole = false;
    int rc;
    memset(&ls, 0, sizeof ls);
    *out = NULL;
    if ((rc = an_load_host_only(&m, t, &ls, &host_refused)) < 0)
        goto cleanup;
    loader dev = {.m = m, .t = t, .ls = &ls, .kinds = api_kind, .n_kinds = 1, .finish = an_load_finish_device};
    for (size_t i = 0; i < m->n_mem; i++)
        n_corrs += m->mem[i].op == AN_DEV_ALLOC || m->mem[i].op == AN_DEV_FREE;
    if (n_corrs > 0) {
        if (!(corrs = malloc(n_corrs * sizeof *corrs))) {
            rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory loading the trace");
            goto cleanup;
        }
        n_corrs = 0;
        for (size_t i = 0; i < m->n_mem; i++)
            if (m->mem[i].op == AN_DEV_ALLOC || m->mem[i].op == AN_DEV_FREE)
                corrs[n_corrs++] = m->mem[i].tid; /* the correlation id until resolved */
        qsort(corrs, n_corrs, sizeof *corrs, gt_cmp_i64);
        dev.only_corr = corrs;
        dev.n_only_corr = n_corrs;
        if ((rc = an_load_run(&dev)) < 0) {
            gt_error_set(rc, "%s", dev.msg);
            goto cleanup;
        }
    }
    an_index_rest(m);
    for (size_t i = 0; i < m->n_mem && !whole; i++) {
        an_mem *e = &m->mem[i];
        if (e->op != AN_DEV_ALLOC && e->op != AN_DEV_FREE)
            continue;
        const an_api *a = an_model_launch(m, e->tid);
        whole = !a;
        e->tid = a ? a->tid : 0;
    }
    m->n_refused = dev.n_refused + host_refused;
    if (!whole) {
        *out = m;
        m = NULL;
    }
cleanup:
    free(corrs);
    free(ls.ops);
    an_model_free(m);
    return rc == 0 && whole ? an_model_load(out, t) : rc;
}

void an_model_free(an_model *m)
{
    if (!m)
        return;
    free(m->acts);
    free(m->copies);
    free(m->apis);
    free(m->ranges);
    free(m->mem);
    free(m->comms);
    free(m->compute_ranges);
    free(m->corr_keys);
    free(m->corr_vals);
    free(m->corr_dense);
    free(m);
}
