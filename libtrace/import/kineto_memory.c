/* kineto_memory.c: the "[memory]" events of a Kineto trace into
 * GTRACE_MEMORY_EVENTS. Kineto writes one event per allocation and free
 * with the allocator's totals after it; they are kept as read and replayed
 * a device at a time in time order: one heap per device whose size follows
 * the allocator's reserved bytes (allocated bytes for the CPU allocator,
 * which reserves nothing), a region per block. Memory allocated before the
 * profiler started is one region that frees of unknown blocks shrink, so
 * the replay's totals are Kineto's. Which events are kept is kineto.c's. */
#include "kineto_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_mem(const void *a, const void *b)
{
    const kt_mem_ev *x = a, *y = b; /* by device, then time, then order in the file */
    int c = (x->device > y->device) - (x->device < y->device);
    if (c == 0)
        c = (x->t_ns > y->t_ns) - (x->t_ns < y->t_ns);
    return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
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

/* A row of a device's heap at the event's time, on its thread. */
static int heap_row(im_out *o, const kt_mem_ev *m, uint64_t heap, int32_t op, uint64_t addr, int64_t bytes,
                    const char *name)
{
    return im_add_heap(o, m->t_ns, m->tid, op, heap, addr, bytes, name, 0);
}

/* Replays one device's [memory] events (sorted) into a heap and regions. */
static int write_device(im_out *o, gt_import_stats *st, const kt_mem_ev *v, size_t n)
{
    live l = {NULL, NULL, 0, 0};
    int rc = 0;
    int32_t dev = v[0].device;
    uint64_t heap = ((uint64_t)o->pid << 16) | (((uint64_t)(int64_t)dev + 2) & 0xffff);
    /* memory allocated before the profiler started: one region */
    uint64_t pre_addr = 0xfff0000000000000ull | ((uint64_t)o->pid << 16) | (((uint64_t)(int64_t)dev + 2) & 0xffff);
    /* sums saturate: a damaged file's Bytes may be INT64_MIN or add past INT64_MAX */
    int64_t pre = gt_sat_sub(v[0].total_alloc, v[0].bytes);
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
        kt_mem_ev ev = v[i];
        const kt_mem_ev *m = &ev;
        int64_t res = m->total_res > m->total_alloc ? m->total_res : m->total_alloc;
        /* a nanosecond after the event before at least: readers order equal
         * times by kind (frees first), not by row */
        if (i > 0 && ev.t_ns <= last_ns)
            ev.t_ns = gt_sat_add(last_ns, 1);
        last_ns = ev.t_ns;
        if (i == 0) {
            /* the heap, as big as it was before the first event (as far as
             * that event says), and what was allocated before it */
            int64_t res_before = pre > m->total_res ? pre : m->total_res;
            if (res_before > 0) {
                if ((rc = heap_row(o, m, heap, GT_HEAP_REGISTER, 0, res_before, name)) < 0)
                    goto cleanup;
                reserved = res_before;
                registered = true;
            }
            if (pre > 0 && (rc = heap_row(o, m, heap, GT_REGION_REGISTER, pre_addr, pre,
                                          "allocated before the profiler started")) < 0)
                goto cleanup;
        }
        if (res > reserved) { /* grows before the block comes */
            if ((rc = heap_row(o, m, heap, GT_HEAP_REGISTER, 0, res, registered ? NULL : name)) < 0)
                goto cleanup;
            reserved = res;
            registered = true;
        }
        if (m->bytes >= 0) {
            int64_t *b = live_find(&l, m->addr);
            if (b) {
                /* allocated again without a free: the same block, resized */
                *b = m->bytes;
                rc = heap_row(o, m, heap, GT_REGION_RESIZE, m->addr, m->bytes, NULL);
            } else {
                if ((rc = live_put(&l, m->addr, m->bytes)) < 0)
                    goto cleanup;
                rc = heap_row(o, m, heap, GT_REGION_REGISTER, m->addr, m->bytes, NULL);
            }
        } else {
            int64_t *b = live_find(&l, m->addr);
            if (b) {
                *b = -2; /* a tombstone: still counted in used until a rehash */
                rc = heap_row(o, m, heap, GT_REGION_UNREGISTER, m->addr, 0, NULL);
            } else if (pre > 0) {
                /* a block from before the profiler: it shrinks that region */
                pre = gt_sat_add(pre, m->bytes) > 0 ? gt_sat_add(pre, m->bytes) : 0;
                rc = heap_row(o, m, heap, pre > 0 ? GT_REGION_RESIZE : GT_REGION_UNREGISTER, pre_addr, pre, NULL);
            }
        }
        if (rc < 0)
            goto cleanup;
        if (res < reserved) { /* shrinks after the block went */
            if ((rc = heap_row(o, m, heap, GT_HEAP_REGISTER, 0, res, NULL)) < 0)
                goto cleanup;
            reserved = res;
        }
        st->n_memory++;
        st->last_allocated = m->total_alloc;
        st->last_reserved = m->total_res;
    }
cleanup:
    free(l.keys);
    free(l.bytes);
    return rc;
}

int kt_memory_add(kt_memory *m, kt_mem_ev ev)
{
    int rc = im_grow((void **)&m->v, &m->cap, m->n, sizeof *m->v);
    if (rc < 0)
        return rc;
    ev.seq = m->n;
    m->v[m->n++] = ev;
    return 0;
}

int kt_memory_write(kt_memory *m, im_out *o, gt_import_stats *st)
{
    int rc;
    if (m->n == 0)
        return 0;
    qsort(m->v, m->n, sizeof *m->v, cmp_mem);
    size_t from = 0;
    for (size_t i = 1; i <= m->n; i++) {
        if (i == m->n || m->v[i].device != m->v[from].device) {
            if ((rc = write_device(o, st, m->v + from, i - from)) < 0)
                return rc;
            from = i;
        }
    }
    return 0;
}

void kt_memory_free(kt_memory *m)
{
    free(m->v);
    m->v = NULL;
    m->n = m->cap = 0;
}
