/* alloc.c: the caching allocator of alloc.h.
 *
 * A segment is one seg_alloc; it is cut into blocks kept in address order
 * (prev/next). Free blocks sit in their pool, an array sorted by (graph,
 * stream, size, address), so best fit is a binary search. Live blocks are
 * found by address in an open-addressing hash table (device memory cannot
 * carry a header). NVTX: a segment is a heap (usage SUB_ALLOCATOR: nothing in it may
 * be touched until a region is registered), a live block is a region of that
 * heap, registered with its rounded size and unregistered by pointer.
 * CUDA graphs: blocks handed out while a step is captured are the graph's
 * (block.graph); released, they go to the graph's private pool, a separate
 * key of the same sorted arrays that only captured allocations search, and
 * never merge with other blocks. Each free block of that pool is an NVTX
 * region named "cuda graph private pool" once the capture ended: the replays
 * use that memory without the allocator seeing them. */
#include "alloc.h"

#include "error.h"
#include "nvtx.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_NVTX
#include <nvtx3/nvToolsExtMem.h>
#endif

enum { POOL_SMALL, POOL_LARGE, N_POOLS };

typedef struct segment segment;
typedef struct block {
    char *ptr;
    size_t size;      /* rounded, what the block holds */
    size_t requested; /* what the caller asked for (live blocks) */
    int stream;
    bool allocated;
    bool graph;       /* a CUDA graph's: handed out during its capture */
    bool pool_region; /* free in the graph's pool and announced as its region */
    struct block *prev, *next; /* neighbours in the segment, by address */
    segment *seg;
} block;

struct segment {
    char *ptr;
    size_t size;
    int pool;
    void *heap; /* the NVTX heap handle the tool returned (NULL untraced) */
    block *first;
    segment *next_seg;
};

typedef struct pool {
    block **v; /* free blocks sorted by (graph, stream, size, ptr) */
    size_t n, cap;
} pool;

struct tr_alloc {
    pthread_mutex_t lock;
    tr_mem_ops ops;
    size_t limit_bytes;
    pool pools[N_POOLS];
    segment *segments;
    block **live; /* hash table by ptr, linear probing; NULL = empty */
    size_t live_cap;
    bool capturing;   /* a CUDA graph is being captured: no new segments, blocks become the graph's */
    bool has_graph;   /* a captured graph holds a private pool */
    tr_alloc_stats st;
};

size_t tr_alloc_round_size(size_t n)
{
    return n < TR_ALLOC_ROUND ? TR_ALLOC_ROUND : (n + TR_ALLOC_ROUND - 1) / TR_ALLOC_ROUND * TR_ALLOC_ROUND;
}

static size_t segment_size(size_t size)
{
    if (size <= TR_ALLOC_SMALL_MAX)
        return TR_ALLOC_SMALL_SEGMENT;
    if (size < TR_ALLOC_LARGE_SEGMENT / 2)
        return TR_ALLOC_LARGE_SEGMENT;
    return (size + TR_ALLOC_LARGE_ROUND - 1) / TR_ALLOC_LARGE_ROUND * TR_ALLOC_LARGE_ROUND;
}

/* A remainder is worth a block of its own in the small pool from 512 bytes,
 * in the large pool only above 1 MiB (smaller tails would fragment it). */
static bool should_split(const block *b, size_t size)
{
    size_t rest = b->size - size;
    return b->seg->pool == POOL_SMALL ? rest >= TR_ALLOC_ROUND : rest > TR_ALLOC_SMALL_MAX;
}

/* ---- NVTX announcements ---- */
static void announce_heap(segment *s)
{
#ifdef HAVE_NVTX
    nvtxMemVirtualRangeDesc_t range = {s->size, s->ptr};
    nvtxMemHeapDesc_t d;
    memset(&d, 0, sizeof d);
    d.extCompatID = NVTX_EXT_COMPATID_MEM;
    d.structSize = sizeof d;
    d.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    d.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    d.typeSpecificDescSize = sizeof range;
    d.typeSpecificDesc = &range;
    d.messageType = NVTX_MESSAGE_TYPE_ASCII;
    d.message.ascii = s->pool == POOL_SMALL ? "trainer small pool segment" : "trainer large pool segment";
    s->heap = nvtxMemHeapRegister(tr_nvtx_domain(), &d);
#else
    s->heap = NULL;
#endif
}

static void retire_heap(segment *s)
{
#ifdef HAVE_NVTX
    if (s->heap) /* NULL: no tool took the heap; never unregister PROCESS_WIDE (also 0) */
        nvtxMemHeapUnregister(tr_nvtx_domain(), (nvtxMemHeapHandle_t)s->heap);
#else
    (void)s;
#endif
}

static void announce_region(const block *b)
{
#ifdef HAVE_NVTX
    if (!b->seg->heap)
        return;
    nvtxMemVirtualRangeDesc_t range = {b->size, b->ptr};
    nvtxMemRegionsRegisterBatch_t d;
    memset(&d, 0, sizeof d);
    d.extCompatID = NVTX_EXT_COMPATID_MEM;
    d.structSize = sizeof d;
    d.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    d.heap = (nvtxMemHeapHandle_t)b->seg->heap;
    d.regionCount = 1;
    d.regionDescElementSize = sizeof range;
    d.regionDescElements = &range;
    d.regionHandleElementsOut = NULL; /* virtual-address regions are referred to by pointer */
    nvtxMemRegionsRegister(tr_nvtx_domain(), &d);
#else
    (void)b;
#endif
}

static void retire_region(const block *b)
{
#ifdef HAVE_NVTX
    if (!b->seg->heap)
        return;
    nvtxMemRegionRef_t ref;
    ref.pointer = b->ptr;
    nvtxMemRegionsUnregisterBatch_t d;
    memset(&d, 0, sizeof d);
    d.extCompatID = NVTX_EXT_COMPATID_MEM;
    d.structSize = sizeof d;
    d.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    d.refCount = 1;
    d.refElementSize = sizeof ref;
    d.refElements = &ref;
    nvtxMemRegionsUnregister(tr_nvtx_domain(), &d);
#else
    (void)b;
#endif
}

static void announce_resize(const block *b)
{
#ifdef HAVE_NVTX
    if (!b->seg->heap)
        return;
    nvtxMemVirtualRangeDesc_t range = {b->size, b->ptr};
    nvtxMemRegionsResizeBatch_t d;
    memset(&d, 0, sizeof d);
    d.extCompatID = NVTX_EXT_COMPATID_MEM;
    d.structSize = sizeof d;
    d.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    d.regionDescCount = 1;
    d.regionDescElementSize = sizeof range;
    d.regionDescElements = &range;
    nvtxMemRegionsResize(tr_nvtx_domain(), &d);
#else
    (void)b;
#endif
}

/* ---- pools: sorted arrays of free blocks ---- */
static int cmp_key(bool graph, int stream, size_t size, const char *ptr, const block *b)
{
    if (graph != b->graph)
        return graph ? 1 : -1;
    if (stream != b->stream)
        return stream < b->stream ? -1 : 1;
    if (size != b->size)
        return size < b->size ? -1 : 1;
    return ptr < b->ptr ? -1 : ptr > b->ptr ? 1 : 0;
}

static size_t lower_bound(const pool *p, bool graph, int stream, size_t size, const char *ptr)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cmp_key(graph, stream, size, ptr, p->v[mid]) > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Free neighbours merge only within one pool: a graph's blocks stay its own. */
static bool same_pool(const block *a, const block *b) { return a->graph == b->graph && a->stream == b->stream; }

static void name_region(const block *b, const char *name);

/* A free block of a captured graph's pool is announced as one of its regions. */
static void pool_region_on(tr_alloc *a, block *b)
{
    if (b->graph && a->has_graph && !a->capturing && !b->pool_region) {
        announce_region(b);
        name_region(b, "cuda graph private pool");
        b->pool_region = true;
    }
}

static void pool_region_off(block *b)
{
    if (b->pool_region) {
        retire_region(b);
        b->pool_region = false;
    }
}

static int pool_insert(tr_alloc *a, pool *p, block *b)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        block **v = realloc(p->v, cap * sizeof *v);
        if (!v)
            return TR_ENOMEM;
        p->v = v;
        p->cap = cap;
    }
    size_t i = lower_bound(p, b->graph, b->stream, b->size, b->ptr);
    memmove(p->v + i + 1, p->v + i, (p->n - i) * sizeof *p->v);
    p->v[i] = b;
    p->n++;
    if (b->graph)
        a->st.graph_pool_bytes += b->size;
    pool_region_on(a, b);
    return TR_OK;
}

static void pool_remove(tr_alloc *a, pool *p, block *b)
{
    size_t i = lower_bound(p, b->graph, b->stream, b->size, b->ptr);
    if (i < p->n && p->v[i] == b) {
        memmove(p->v + i, p->v + i + 1, (p->n - i - 1) * sizeof *p->v);
        p->n--;
        if (b->graph)
            a->st.graph_pool_bytes -= b->size;
        pool_region_off(b);
    }
}

/* ---- live blocks: hash table by address ---- */
static size_t slot_of(const tr_alloc *a, const void *ptr)
{
    uint64_t h = (uint64_t)(uintptr_t)ptr * 0x9E3779B97F4A7C15ULL;
    return (size_t)(h >> 20) & (a->live_cap - 1);
}

static int live_insert(tr_alloc *a, block *b);

static int live_grow(tr_alloc *a)
{
    block **old = a->live;
    size_t old_cap = a->live_cap, cap = old_cap ? 2 * old_cap : 256;
    block **v = calloc(cap, sizeof *v);
    if (!v)
        return TR_ENOMEM;
    a->live = v;
    a->live_cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i])
            live_insert(a, old[i]);
    free(old);
    return TR_OK;
}

static int live_insert(tr_alloc *a, block *b)
{
    if (2 * (a->st.n_live_blocks + 1) > a->live_cap && live_grow(a) < 0)
        return TR_ENOMEM;
    size_t i = slot_of(a, b->ptr);
    while (a->live[i])
        i = (i + 1) & (a->live_cap - 1);
    a->live[i] = b;
    return TR_OK;
}

static size_t live_find(const tr_alloc *a, const void *ptr)
{
    if (!a->live_cap)
        return SIZE_MAX;
    for (size_t i = slot_of(a, ptr); a->live[i]; i = (i + 1) & (a->live_cap - 1))
        if (a->live[i]->ptr == ptr)
            return i;
    return SIZE_MAX;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void live_remove(tr_alloc *a, size_t i)
{
    size_t mask = a->live_cap - 1, j = i;
    a->live[i] = NULL;
    for (;;) {
        j = (j + 1) & mask;
        if (!a->live[j])
            break;
        size_t k = slot_of(a, a->live[j]->ptr);
        /* move j back to i unless its home k lies cyclically in (i, j] */
        if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
            a->live[i] = a->live[j];
            a->live[j] = NULL;
            i = j;
        }
    }
}

/* ---- segments ---- */
static size_t release_cached(tr_alloc *a)
{
    size_t released = 0;
    if (a->capturing) /* the capture is refused growth before this; nothing is freed under it */
        return 0;
    for (segment **sp = &a->segments; *sp;) {
        segment *s = *sp;
        block *b = s->first;
        if (!b->allocated && !b->next && !b->graph) { /* one free block spans the segment, no graph's */
            pool_remove(a, &a->pools[s->pool], b);
            retire_heap(s);
            a->ops.seg_free(s->ptr, s->size, a->ops.ctx);
            released += s->size;
            a->st.reserved_bytes -= s->size;
            a->st.n_segments--;
            a->st.n_free_blocks--;
            a->st.n_segment_frees++;
            *sp = s->next_seg;
            free(b);
            free(s);
        } else {
            sp = &s->next_seg;
        }
    }
    return released;
}

static void format_bytes(char *buf, size_t n, size_t bytes)
{
    if (bytes >= (1u << 20))
        snprintf(buf, n, "%.2f MiB", bytes / 1048576.0);
    else if (bytes >= 1024)
        snprintf(buf, n, "%.2f KiB", bytes / 1024.0);
    else
        snprintf(buf, n, "%zu bytes", bytes);
}

/* The OOM mark: an NVTX mark of a category named "oom" whose message names
 * the figures in bytes as key=value words and whose payload is the request
 * (ARCHITECTURE.md, conventions), so a profiler finds the failure and what
 * the allocator held without reading stderr. */
enum { TR_NVTX_OOM = 3 };
static void announce_oom(const tr_alloc *a, size_t n_bytes, size_t size)
{
#ifdef HAVE_NVTX
    char msg[320];
    int at = snprintf(msg, sizeof msg,
                      "out of memory on %s: requested=%zu segment=%zu allocated=%zu reserved=%zu free=%zu",
                      a->ops.device, n_bytes, segment_size(size), a->st.allocated_bytes, a->st.reserved_bytes,
                      a->st.reserved_bytes - a->st.allocated_bytes);
    if (a->limit_bytes && at > 0 && (size_t)at < sizeof msg)
        snprintf(msg + at, sizeof msg - (size_t)at, " limit=%zu device_free=%zu", a->limit_bytes,
                 a->limit_bytes > a->st.reserved_bytes ? a->limit_bytes - a->st.reserved_bytes : 0);
    nvtxDomainNameCategoryA(tr_nvtx_domain(), TR_NVTX_OOM, "oom");
    nvtxEventAttributes_t ev;
    memset(&ev, 0, sizeof ev);
    ev.version = NVTX_VERSION;
    ev.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    ev.category = TR_NVTX_OOM;
    ev.messageType = NVTX_MESSAGE_TYPE_ASCII;
    ev.message.ascii = msg;
    ev.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    ev.payload.ullValue = n_bytes;
    nvtxDomainMarkEx(tr_nvtx_domain(), &ev);
#else
    (void)a; (void)n_bytes; (void)size;
#endif
}

static int out_of_memory(tr_alloc *a, size_t n_bytes, size_t size, const char *why)
{
    char req[32], alloc[32], res[32], lim[32];
    a->st.n_ooms++;
    announce_oom(a, n_bytes, size);
    format_bytes(req, sizeof req, n_bytes);
    format_bytes(alloc, sizeof alloc, a->st.allocated_bytes);
    format_bytes(res, sizeof res, a->st.reserved_bytes);
    if (a->limit_bytes)
        format_bytes(lim, sizeof lim, a->limit_bytes);
    else
        snprintf(lim, sizeof lim, "none");
    return tr_error_set(TR_ENOMEM,
                        "out of memory on %s: tried to allocate %s (a %zu-byte segment): %s; "
                        "allocated %s, reserved %s, limit %s (--mem-limit)",
                        a->ops.device, req, segment_size(size), why, alloc, res, lim);
}

static int new_segment(tr_alloc *a, block **out, size_t n_bytes, size_t size, int stream)
{
    size_t seg_bytes = segment_size(size);
    if (a->capturing) {
        char req[32], alloc[32], res[32];
        a->st.n_ooms++;
        format_bytes(req, sizeof req, n_bytes);
        format_bytes(alloc, sizeof alloc, a->st.allocated_bytes);
        format_bytes(res, sizeof res, a->st.reserved_bytes);
        return tr_error_set(TR_ENOMEM,
                            "--cuda-graph: the captured step asked %s for %s that no cached block holds, and no "
                            "memory may be allocated while a CUDA graph is captured (allocated %s, reserved %s): "
                            "its memory use did not settle in the warm-up steps; train without --cuda-graph",
                            a->ops.device, req, alloc, res);
    }
    bool over = a->limit_bytes && a->st.reserved_bytes + seg_bytes > a->limit_bytes;
    if (over) { /* free the cache and retry before giving up */
        release_cached(a);
        if (a->st.reserved_bytes + seg_bytes > a->limit_bytes)
            return out_of_memory(a, n_bytes, size, "over the limit even with the cache released");
    }
    void *p = a->ops.seg_alloc(seg_bytes, a->ops.ctx);
    if (!p) {
        release_cached(a);
        p = a->ops.seg_alloc(seg_bytes, a->ops.ctx);
        if (!p)
            return out_of_memory(a, n_bytes, size, "the device has no more memory");
    }
    segment *s = calloc(1, sizeof *s);
    block *b = calloc(1, sizeof *b);
    if (!s || !b) {
        free(s);
        free(b);
        a->ops.seg_free(p, seg_bytes, a->ops.ctx);
        return tr_error_set(TR_ENOMEM, "out of host memory for allocator bookkeeping");
    }
    s->ptr = p;
    s->size = seg_bytes;
    s->pool = size <= TR_ALLOC_SMALL_MAX ? POOL_SMALL : POOL_LARGE;
    s->first = b;
    s->next_seg = a->segments;
    a->segments = s;
    b->ptr = p;
    b->size = seg_bytes;
    b->stream = stream;
    b->seg = s;
    announce_heap(s);
    a->st.reserved_bytes += seg_bytes;
    if (a->st.reserved_bytes > a->st.peak_reserved_bytes)
        a->st.peak_reserved_bytes = a->st.reserved_bytes;
    a->st.n_segments++;
    a->st.n_segment_allocs++;
    *out = b;
    return TR_OK;
}

/* Cuts b to size; the tail becomes a free block, merged with a free next. */
static int split(tr_alloc *a, block *b, size_t size)
{
    block *rest = calloc(1, sizeof *rest);
    if (!rest)
        return tr_error_set(TR_ENOMEM, "out of host memory for allocator bookkeeping");
    rest->ptr = b->ptr + size;
    rest->size = b->size - size;
    rest->stream = b->stream;
    rest->graph = b->graph;
    rest->seg = b->seg;
    rest->prev = b;
    rest->next = b->next;
    if (b->next)
        b->next->prev = rest;
    b->next = rest;
    b->size = size;
    a->st.n_splits++;
    block *n = rest->next;
    if (n && !n->allocated && same_pool(n, rest)) { /* keep the invariant: no two free neighbours of a pool */
        pool_remove(a, &a->pools[b->seg->pool], n);
        rest->size += n->size;
        rest->next = n->next;
        if (n->next)
            n->next->prev = rest;
        free(n);
        a->st.n_free_blocks--;
        a->st.n_merges++;
    }
    a->st.n_free_blocks++;
    return pool_insert(a, &a->pools[b->seg->pool], rest);
}

int tr_alloc_new(tr_alloc **out, const tr_mem_ops *ops, size_t limit_bytes)
{
    *out = NULL;
    if (!ops || !ops->seg_alloc || !ops->seg_free)
        return tr_error_set(TR_EINVAL, "tr_alloc_new: memory operations are missing");
    tr_alloc *a = calloc(1, sizeof *a);
    if (!a)
        return tr_error_set(TR_ENOMEM, "out of host memory");
    pthread_mutex_init(&a->lock, NULL);
    a->ops = *ops;
    if (!a->ops.device)
        a->ops.device = "device";
    a->limit_bytes = limit_bytes;
    *out = a;
    return TR_OK;
}

void tr_alloc_free(tr_alloc *a)
{
    if (!a)
        return;
    while (a->segments) {
        segment *s = a->segments;
        for (block *b = s->first; b;) {
            block *n = b->next;
            if (b->allocated || b->pool_region)
                retire_region(b);
            free(b);
            b = n;
        }
        retire_heap(s);
        a->ops.seg_free(s->ptr, s->size, a->ops.ctx);
        a->segments = s->next_seg;
        free(s);
    }
    for (int i = 0; i < N_POOLS; i++)
        free(a->pools[i].v);
    free(a->live);
    pthread_mutex_destroy(&a->lock);
    free(a);
}

/* Takes the best-fitting free block of the pool (the graph's or the cache) on stream. */
static block *best_fit(tr_alloc *a, pool *p, bool graph, int stream, size_t size)
{
    size_t i = lower_bound(p, graph, stream, size, NULL);
    if (i == p->n || p->v[i]->graph != graph || p->v[i]->stream != stream)
        return NULL;
    block *b = p->v[i];
    pool_remove(a, p, b);
    a->st.n_free_blocks--;
    a->st.n_cache_hits++;
    return b;
}

int tr_alloc_malloc(tr_alloc *a, void **out, size_t n_bytes, int stream)
{
    *out = NULL;
    if (n_bytes == 0 || n_bytes > SIZE_MAX / 2)
        return tr_error_set(TR_EINVAL, "tr_alloc_malloc: cannot allocate %zu bytes", n_bytes);
    size_t size = tr_alloc_round_size(n_bytes);
    int rc = TR_OK;
    pthread_mutex_lock(&a->lock);
    pool *p = &a->pools[size <= TR_ALLOC_SMALL_MAX ? POOL_SMALL : POOL_LARGE];
    /* during a capture the graph's own pool first, then the cache */
    block *b = a->capturing ? best_fit(a, p, true, stream, size) : NULL;
    if (!b && !(b = best_fit(a, p, false, stream, size)) && (rc = new_segment(a, &b, n_bytes, size, stream)) < 0)
        goto cleanup;
    if (should_split(b, size) && (rc = split(a, b, size)) < 0)
        goto cleanup;
    if (a->capturing)
        b->graph = true; /* after the split: the tail stays in the cache */
    b->allocated = true;
    b->requested = n_bytes;
    if ((rc = live_insert(a, b)) < 0) {
        rc = tr_error_set(TR_ENOMEM, "out of host memory for allocator bookkeeping");
        goto cleanup;
    }
    a->st.n_allocs++;
    a->st.n_live_blocks++;
    a->st.allocated_bytes += b->size;
    a->st.requested_bytes += n_bytes;
    if (a->st.allocated_bytes > a->st.peak_allocated_bytes)
        a->st.peak_allocated_bytes = a->st.allocated_bytes;
    announce_region(b);
    *out = b->ptr;
cleanup:
    pthread_mutex_unlock(&a->lock);
    return rc;
}

int tr_alloc_release(tr_alloc *a, void *ptr)
{
    if (!ptr)
        return TR_OK;
    int rc = TR_OK;
    pthread_mutex_lock(&a->lock);
    size_t i = live_find(a, ptr);
    if (i == SIZE_MAX) {
        rc = tr_error_set(TR_EINVAL, "tr_alloc_release: %p is not a live block of this allocator", ptr);
        goto cleanup;
    }
    block *b = a->live[i];
    live_remove(a, i);
    retire_region(b);
    a->st.n_releases++;
    a->st.n_live_blocks--;
    a->st.allocated_bytes -= b->size;
    a->st.requested_bytes -= b->requested;
    b->allocated = false;
    b->requested = 0;
    pool *p = &a->pools[b->seg->pool];
    block *n = b->next, *pr = b->prev;
    if (n && !n->allocated && same_pool(n, b)) {
        pool_remove(a, p, n);
        b->size += n->size;
        b->next = n->next;
        if (n->next)
            n->next->prev = b;
        free(n);
        a->st.n_free_blocks--;
        a->st.n_merges++;
    }
    if (pr && !pr->allocated && same_pool(pr, b)) {
        pool_remove(a, p, pr);
        pr->size += b->size;
        pr->next = b->next;
        if (b->next)
            b->next->prev = pr;
        free(b);
        b = pr;
        a->st.n_free_blocks--;
        a->st.n_merges++;
    }
    a->st.n_free_blocks++;
    rc = pool_insert(a, p, b);
cleanup:
    pthread_mutex_unlock(&a->lock);
    return rc;
}

int tr_alloc_resize(tr_alloc *a, void *ptr, size_t n_bytes)
{
    if (n_bytes == 0)
        return tr_error_set(TR_EINVAL, "tr_alloc_resize: size 0; release the block instead");
    int rc = TR_OK;
    pthread_mutex_lock(&a->lock);
    size_t i = live_find(a, ptr);
    if (i == SIZE_MAX) {
        rc = tr_error_set(TR_EINVAL, "tr_alloc_resize: %p is not a live block of this allocator", ptr);
        goto cleanup;
    }
    block *b = a->live[i];
    size_t size = tr_alloc_round_size(n_bytes), old = b->size;
    if (size > b->size) {
        block *n = b->next;
        if (!n || n->allocated || !same_pool(n, b) || b->size + n->size < size) {
            rc = tr_error_set(TR_ENOSPC, "tr_alloc_resize: no room after %p to grow to %zu bytes", ptr, n_bytes);
            goto cleanup;
        }
        pool_remove(a, &a->pools[b->seg->pool], n); /* swallow the free neighbour, give back its tail */
        b->size += n->size;
        b->next = n->next;
        if (n->next)
            n->next->prev = b;
        free(n);
        a->st.n_free_blocks--;
        a->st.n_merges++;
    }
    if (should_split(b, size) && (rc = split(a, b, size)) < 0)
        goto cleanup;
    a->st.allocated_bytes = a->st.allocated_bytes - old + b->size;
    a->st.requested_bytes = a->st.requested_bytes - b->requested + n_bytes;
    b->requested = n_bytes;
    if (a->st.allocated_bytes > a->st.peak_allocated_bytes)
        a->st.peak_allocated_bytes = a->st.allocated_bytes;
    if (b->size != old)
        announce_resize(b);
cleanup:
    pthread_mutex_unlock(&a->lock);
    return rc;
}

void tr_alloc_name(tr_alloc *a, void *ptr, const char *name)
{
    pthread_mutex_lock(&a->lock);
    size_t i = live_find(a, ptr);
    block *b = i != SIZE_MAX ? a->live[i] : NULL;
    pthread_mutex_unlock(&a->lock);
    if (b)
        name_region(b, name);
}

static void name_region(const block *b, const char *name)
{
#ifdef HAVE_NVTX
    if (!b->seg->heap)
        return;
    nvtxMemRegionNameDesc_t nd;
    memset(&nd, 0, sizeof nd);
    nd.regionRefType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    nd.nameType = NVTX_MESSAGE_TYPE_ASCII;
    nd.region.pointer = b->ptr;
    nd.name.ascii = name;
    nvtxMemRegionsNameBatch_t d;
    memset(&d, 0, sizeof d);
    d.extCompatID = NVTX_EXT_COMPATID_MEM;
    d.structSize = sizeof d;
    d.regionCount = 1;
    d.regionElementSize = sizeof nd;
    d.regionElements = &nd;
    nvtxMemRegionsName(tr_nvtx_domain(), &d);
#else
    (void)b; (void)name;
#endif
}

size_t tr_alloc_empty_cache(tr_alloc *a)
{
    pthread_mutex_lock(&a->lock);
    size_t n = release_cached(a);
    pthread_mutex_unlock(&a->lock);
    return n;
}

void tr_alloc_get_stats(tr_alloc *a, tr_alloc_stats *out)
{
    pthread_mutex_lock(&a->lock);
    *out = a->st;
    pthread_mutex_unlock(&a->lock);
}

size_t tr_alloc_block_size(tr_alloc *a, void *ptr)
{
    pthread_mutex_lock(&a->lock);
    size_t i = live_find(a, ptr), n = i == SIZE_MAX ? 0 : a->live[i]->size;
    pthread_mutex_unlock(&a->lock);
    return n;
}

int tr_alloc_capture_begin(tr_alloc *a)
{
    int rc = TR_OK;
    pthread_mutex_lock(&a->lock);
    if (a->capturing || a->has_graph)
        rc = tr_error_set(TR_EINVAL, "--cuda-graph: the allocator holds a graph's pool already (one capture at a time)");
    else
        a->capturing = true;
    pthread_mutex_unlock(&a->lock);
    return rc;
}

void tr_alloc_capture_end(tr_alloc *a)
{
    pthread_mutex_lock(&a->lock);
    if (a->capturing) {
        a->capturing = false;
        a->has_graph = true;
        for (int k = 0; k < N_POOLS; k++) /* the pool as the replays hold it, for tools */
            for (size_t i = 0; i < a->pools[k].n; i++)
                pool_region_on(a, a->pools[k].v[i]);
    }
    pthread_mutex_unlock(&a->lock);
}

/* Joins free neighbours of one pool in s (after blocks changed pools). */
static int merge_segment(tr_alloc *a, segment *s)
{
    pool *p = &a->pools[s->pool];
    for (block *b = s->first; b && b->next;) {
        block *n = b->next;
        if (b->allocated || n->allocated || !same_pool(b, n)) {
            b = n;
            continue;
        }
        pool_remove(a, p, b);
        pool_remove(a, p, n);
        b->size += n->size;
        b->next = n->next;
        if (n->next)
            n->next->prev = b;
        free(n);
        a->st.n_free_blocks--;
        a->st.n_merges++;
        int rc = pool_insert(a, p, b);
        if (rc < 0)
            return rc;
    }
    return TR_OK;
}

int tr_alloc_graph_release(tr_alloc *a)
{
    int rc = TR_OK;
    pthread_mutex_lock(&a->lock);
    a->capturing = false;
    a->has_graph = false;
    for (segment *s = a->segments; s && rc >= 0; s = s->next_seg) {
        pool *p = &a->pools[s->pool];
        for (block *b = s->first; b && rc >= 0; b = b->next) {
            if (!b->graph)
                continue;
            if (b->allocated) { /* released later, into the cache */
                b->graph = false;
                continue;
            }
            pool_remove(a, p, b);
            b->graph = false;
            rc = pool_insert(a, p, b);
        }
        if (rc >= 0)
            rc = merge_segment(a, s);
    }
    pthread_mutex_unlock(&a->lock);
    return rc < 0 ? tr_error_set(TR_ENOMEM, "out of host memory for allocator bookkeeping") : TR_OK;
}
