/* snapshot.c: a PyTorch CUDA memory snapshot (torch.cuda.memory._snapshot(),
 * pickled by _dump_snapshot) into GTRACE_MEMORY_EVENTS, as the trainer's
 * caching allocator writes them through NVTX's memory API: each segment is a
 * heap (sub-allocator, virtual addresses), each allocated block a region of
 * the segment that holds it, with its frames as a callchain
 * (CUDA_CALLCHAINS: symbol = the function, module = "file:line").
 *
 * The snapshot holds the allocator's state at its end ("segments" with their
 * "blocks") and, when history was recorded, the last actions per device
 * ("device_traces": alloc, free_requested, free_completed, segment_alloc,
 * segment_free, segment_map, segment_unmap, snapshot, oom). The state before
 * the first action is found by undoing the actions from the end state
 * backwards (as PyTorch's memory_viz does); that state is registered at the
 * first action's time, then every action is replayed at its own time (a
 * nanosecond after the one before at least, so that actions within one
 * microsecond keep their order). A
 * block is allocated from "alloc" to "free_requested", as PyTorch counts
 * allocated bytes (memory_allocated(), segsum): a block whose free waits
 * for its streams ("active_pending_free" until "free_completed") is
 * reserved memory no tensor holds. segment_map/segment_unmap
 * (expandable segments) grow or shrink the segment they extend, else map or
 * unmap a segment of their own. An OOM is an NVTX mark with its figures.
 * Without history, the end state is registered at time 0.
 * Each device's actions are on a thread of their own, "cuda:N allocator". */
#include "import_int.h"
#include "addr_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- work, bounded by the file's size ------------------------------------- */

/* A pickle's memo lets a few bytes name a list again and again:
 * device_traces = [L] * K is K + M references for K x M actions. So every
 * value the importer looks at is charged, 1 for itself and 1 for each element
 * of a list or dict, against WORK_PER_BYTE per byte of the file (plus
 * WORK_FLOOR), and past that the file is refused. Every row an import writes
 * follows a charge of its own (a segment's, block's or action's dict, a
 * frame, a device's list), so it writes at most WORK_PER_BYTE rows per input
 * byte. An honest snapshot takes a few per byte: its lists are its own, and
 * the stacks PyTorch shares between blocks are walked once (callchain_of). */
enum { WORK_PER_BYTE = 16, WORK_FLOOR = 4096 };

typedef struct work { const char *path; uint64_t left, limit; } work;

static void work_init(work *w, const char *path, const pk_doc *d)
{
    w->path = path;
    w->limit = w->left = (uint64_t)pk_file_bytes(d) * WORK_PER_BYTE + WORK_FLOOR;
}

/* Charges a look at v, and at the fields or elements it holds; NULL: 1. */
static int charge(work *w, const pk_value *v)
{
    uint64_t n = 1;
    if (v && (v->type == PK_LIST || v->type == PK_TUPLE || v->type == PK_DICT))
        n += v->u.seq.n;
    if (n > w->left)
        return gt_error_set(GT_ERR_CORRUPT, "%s: lists repeated through the pickle's memo make more than %llu "
                            "values to replay (%d per byte of the file); refused", w->path,
                            (unsigned long long)w->limit, (int)WORK_PER_BYTE);
    w->left -= n;
    return 0;
}

/* ---- pass 1 --------------------------------------------------------------- */

static int root_of(const char *path, const pk_doc *d, const pk_value **out_segments, const pk_value **out_traces)
{
    const pk_value *root = pk_root(d);
    if (!root || root->type != PK_DICT)
        return gt_error_set(GT_ERR_CORRUPT, "%s: not a memory snapshot: the pickle holds no dict", path);
    *out_segments = pk_get_list(root, "segments");
    if (!*out_segments)
        return gt_error_set(GT_ERR_CORRUPT, "%s: not a memory snapshot: no 'segments' list", path);
    *out_traces = pk_get_list(root, "device_traces");
    if (pk_get(root, "device_traces") && !*out_traces)
        return gt_error_set(GT_ERR_CORRUPT, "%s: 'device_traces' is not a list", path);
    return 0;
}

int im_snapshot_scan(const char *path, im_scan *out)
{
    pk_doc *d = NULL;
    const pk_value *segs, *traces;
    work w;
    int rc;
    memset(out, 0, sizeof *out);
    out->format = GT_IMPORT_SNAPSHOT;
    out->rank = -1;
    if ((rc = pk_load(&d, path)) < 0)
        return rc;
    work_init(&w, path, d);
    if ((rc = root_of(path, d, &segs, &traces)) < 0 || (traces && (rc = charge(&w, traces)) < 0))
        goto cleanup;
    for (size_t dev = 0; traces && dev < traces->u.seq.n; dev++) {
        const pk_value *l = traces->u.seq.v[dev];
        if (l->type != PK_LIST && l->type != PK_TUPLE)
            continue;
        if ((rc = charge(&w, l)) < 0)
            goto cleanup;
        for (size_t i = 0; i < l->u.seq.n; i++) {
            int64_t us;
            if ((rc = charge(&w, l->u.seq.v[i])) < 0)
                goto cleanup;
            if (!pk_get_int(l->u.seq.v[i], "time_us", &us) || us <= 0 || us > INT64_MAX / 1000)
                continue;
            if (!out->has_time || us * 1000 < out->min_abs_ns)
                out->min_abs_ns = us * 1000;
            if (!out->has_time || us * 1000 > out->max_abs_ns)
                out->max_abs_ns = us * 1000;
            out->has_time = true;
        }
    }
    out->wall_clock = out->has_time && out->min_abs_ns > 1000000000LL * 1000000000LL;
cleanup:
    pk_free(d);
    return rc;
}

/* ---- the allocator's state while replaying ---------------------------------- */

/* Segments and blocks by address (addr_map: O(log n) whatever the order). */
typedef struct state { addr_map segs, blks; } state;

static void state_init(state *s)
{
    am_init(&s->segs);
    am_init(&s->blks);
}

static void state_free(state *s)
{
    am_free(&s->segs);
    am_free(&s->blks);
}

/* The segment holding addr (addr inside it), or NULL. */
static am_item *seg_holding(const state *s, uint64_t addr)
{
    am_item *g = am_floor(&s->segs, addr);
    return g && addr - g->addr < (uint64_t)g->bytes ? g : NULL;
}

/* The segment that ends exactly at addr, or NULL. */
static am_item *seg_ending_at(const state *s, uint64_t addr)
{
    am_item *g = addr ? am_floor(&s->segs, addr - 1) : NULL;
    return g && g->addr + (uint64_t)g->bytes == addr ? g : NULL;
}

/* ---- actions ------------------------------------------------------------- */

enum act { A_ALLOC, A_FREE_REQ, A_FREE_DONE, A_SEG_ALLOC, A_SEG_FREE, A_SEG_MAP, A_SEG_UNMAP, A_SNAPSHOT, A_OOM, A_UNKNOWN };

static enum act act_of(const char *s)
{
    static const char *const names[] = {"alloc", "free_requested", "free_completed", "segment_alloc",
                                        "segment_free", "segment_map", "segment_unmap", "snapshot", "oom"};
    for (int i = 0; s && i < A_UNKNOWN; i++)
        if (!strcmp(s, names[i]))
            return (enum act)i;
    return A_UNKNOWN;
}

/* An entry's fields, checked. */
typedef struct entry {
    enum act act;
    uint64_t addr;
    int64_t bytes, time_us;
    const pk_value *frames;
} entry;

static int read_entry(const char *path, work *w, const pk_value *v, size_t dev, size_t i, entry *e)
{
    int64_t a = 0;
    int rc;
    if ((rc = charge(w, v)) < 0)
        return rc;
    if (v->type != PK_DICT)
        return gt_error_set(GT_ERR_CORRUPT, "%s: device_traces[%zu][%zu] is not a dict", path, dev, i);
    e->act = act_of(pk_get_str(v, "action"));
    if (e->act == A_UNKNOWN)
        return gt_error_set(GT_ERR_CORRUPT, "%s: device_traces[%zu][%zu] has an unknown action '%s'", path, dev, i,
                            pk_get_str(v, "action") ? pk_get_str(v, "action") : "(none)");
    bool need = e->act != A_SNAPSHOT && e->act != A_OOM;
    if ((!pk_get_int(v, "addr", &a) && need) || !pk_get_int(v, "size", &e->bytes) || e->bytes < 0)
        return gt_error_set(GT_ERR_CORRUPT, "%s: device_traces[%zu][%zu] (%s) lacks a valid addr or size", path,
                            dev, i, pk_get_str(v, "action"));
    e->addr = (uint64_t)a;
    if (!pk_get_int(v, "time_us", &e->time_us) || e->time_us > INT64_MAX / 1000)
        e->time_us = 0;
    e->frames = pk_get_list(v, "frames");
    return 0;
}

/* Undoes one action on the state (walking backwards from the end state). */
static int undo(state *s, const entry *e)
{
    am_item *g;
    if (e->bytes == 0 && e->act != A_FREE_REQ)
        return 0; /* a segment of nothing holds nothing (and an alloc of nothing is no block) */
    switch (e->act) {
    case A_ALLOC:
        am_remove(&s->blks, e->addr);
        return 0;
    case A_FREE_REQ: /* allocated until the free was asked for */
        return am_put(&s->blks, &(am_item){e->addr, e->bytes, 0, e->frames});
    case A_SEG_ALLOC:
    case A_SEG_MAP:
        if (!(g = seg_holding(s, e->addr)))
            return 0;
        if (g->addr == e->addr && g->bytes <= e->bytes)
            am_remove(&s->segs, g->addr);
        else if (g->addr + (uint64_t)g->bytes == e->addr + (uint64_t)e->bytes)
            g->bytes -= e->bytes; /* mapped at its end */
        return 0;
    case A_SEG_FREE:
    case A_SEG_UNMAP:
        if (e->act == A_SEG_UNMAP && (g = seg_ending_at(s, e->addr))) {
            g->bytes += e->bytes;
            return 0;
        }
        if (seg_holding(s, e->addr) || seg_holding(s, e->addr + (uint64_t)e->bytes - 1))
            return 0; /* overlaps what is there: an inconsistent history, kept out */
        return am_put(&s->segs, &(am_item){e->addr, e->bytes, 0, NULL});
    default:
        return 0;
    }
}

/* ---- writing ---------------------------------------------------------------- */

typedef struct chain { uint64_t hash; const pk_value *frames; int64_t id; } chain;

typedef struct wctx {
    im_out *o;
    gt_import_stats *st;
    const char *path;
    work w;
    chain *chains; size_t n_chains, cap_chains; /* open addressing on the frames' hash */
    chain *seen; size_t n_seen, cap_seen;       /* the same on the list's pointer */
    int64_t next_chain;
    uint64_t next_heap;
    int64_t tid;
    int32_t dev;
} wctx;

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return (h ^ 0xff) * 0x100000001b3ULL;
}

static bool same_frames(const pk_value *a, const pk_value *b)
{
    if (a == b)
        return true;
    if (a->u.seq.n != b->u.seq.n)
        return false;
    for (size_t i = 0; i < a->u.seq.n; i++) {
        const pk_value *x = a->u.seq.v[i], *y = b->u.seq.v[i];
        int64_t lx = 0, ly = 0;
        const char *fx = pk_get_str(x, "filename"), *fy = pk_get_str(y, "filename");
        const char *nx = pk_get_str(x, "name"), *ny = pk_get_str(y, "name");
        pk_get_int(x, "line", &lx);
        pk_get_int(y, "line", &ly);
        if (lx != ly || strcmp(fx ? fx : "", fy ? fy : "") || strcmp(nx ? nx : "", ny ? ny : ""))
            return false;
    }
    return true;
}

/* Charges a frames list and each of its frames. */
static int charge_frames(work *w, const pk_value *frames)
{
    int rc = charge(w, frames);
    for (size_t i = 0; rc == 0 && i < frames->u.seq.n; i++)
        rc = charge(w, frames->u.seq.v[i]);
    return rc;
}

/* The slot of a frames list in c->seen: its own, or the empty one it goes in. */
static chain *seen_slot(const wctx *c, const pk_value *frames)
{
    uint64_t h = (uint64_t)(uintptr_t)frames;
    h = (h ^ h >> 33) * 0xff51afd7ed558ccdULL;
    size_t j = (h ^ h >> 33) & (c->cap_seen - 1);
    while (c->seen[j].frames && c->seen[j].frames != frames)
        j = (j + 1) & (c->cap_seen - 1);
    return &c->seen[j];
}

/* Remembers that the list at `frames` is callchain id. */
static int seen_add(wctx *c, const pk_value *frames, int64_t id)
{
    if ((c->n_seen + 1) * 2 > c->cap_seen) {
        chain *old = c->seen;
        size_t old_cap = c->cap_seen, cap = old_cap ? old_cap * 2 : 256;
        if (!(c->seen = calloc(cap, sizeof *c->seen))) {
            c->seen = old;
            return gt_error_set(GT_ERR_NOMEM, "import: out of memory");
        }
        c->cap_seen = cap;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].frames)
                *seen_slot(c, old[i].frames) = old[i];
        free(old);
    }
    *seen_slot(c, frames) = (chain){0, frames, id};
    c->n_seen++;
    return 0;
}

/* The callchain of a frames list, written once per distinct list; 0: none.
 * PyTorch shares a list between the blocks of one stack: a list seen before
 * is looked up by its pointer, not walked again. */
static int callchain_of(wctx *c, const pk_value *frames, int64_t *out)
{
    int rc;
    *out = 0;
    if ((rc = charge(&c->w, NULL)) < 0 || !frames || frames->u.seq.n == 0)
        return rc;
    if (c->n_seen && seen_slot(c, frames)->frames) {
        *out = seen_slot(c, frames)->id;
        return 0;
    }
    if ((rc = charge_frames(&c->w, frames)) < 0)
        return rc;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < frames->u.seq.n; i++) {
        const pk_value *f = frames->u.seq.v[i];
        int64_t line = 0;
        char num[24];
        const char *fn = pk_get_str(f, "filename"), *name = pk_get_str(f, "name");
        pk_get_int(f, "line", &line);
        snprintf(num, sizeof num, "%lld", (long long)line);
        h = fnv(fnv(fnv(h, fn ? fn : ""), name ? name : ""), num);
    }
    if ((c->n_chains + 1) * 2 > c->cap_chains) {
        size_t cap = c->cap_chains ? c->cap_chains * 2 : 256;
        chain *n = calloc(cap, sizeof *n);
        if (!n)
            return gt_error_set(GT_ERR_NOMEM, "import: out of memory");
        for (size_t i = 0; i < c->cap_chains; i++) {
            if (!c->chains[i].id)
                continue;
            size_t j = c->chains[i].hash & (cap - 1);
            while (n[j].id)
                j = (j + 1) & (cap - 1);
            n[j] = c->chains[i];
        }
        free(c->chains);
        c->chains = n;
        c->cap_chains = cap;
    }
    size_t j = h & (c->cap_chains - 1);
    for (; c->chains[j].id; j = (j + 1) & (c->cap_chains - 1)) {
        if (c->chains[j].hash != h)
            continue;
        if ((rc = charge_frames(&c->w, c->chains[j].frames)) < 0)
            return rc;
        if (same_frames(c->chains[j].frames, frames)) {
            *out = c->chains[j].id;
            return seen_add(c, frames, *out);
        }
    }
    size_t n = frames->u.seq.n;
    gt_frame *fr = calloc(n, sizeof *fr);
    if (!fr)
        return gt_error_set(GT_ERR_NOMEM, "import: out of memory");
    for (size_t i = 0; i < n; i++) {
        const pk_value *f = frames->u.seq.v[i];
        int64_t line = 0;
        char module[4096];
        const char *fn = pk_get_str(f, "filename"), *name = pk_get_str(f, "name");
        if (pk_get_int(f, "line", &line) && line > 0)
            snprintf(module, sizeof module, "%s:%lld", fn ? fn : "??", (long long)line);
        else
            snprintf(module, sizeof module, "%s", fn ? fn : "??");
        if ((rc = im_intern(c->o, name && *name ? name : "??", &fr[i].symbol)) < 0 ||
            (rc = im_intern(c->o, module, &fr[i].module)) < 0) {
            free(fr);
            return rc;
        }
    }
    int64_t id = ++c->next_chain;
    rc = gt_writer_add_callchain(c->o->w, id, fr, n);
    free(fr);
    if (rc < 0)
        return rc;
    c->chains[j] = (chain){h, frames, id};
    c->n_chains++;
    *out = id;
    return seen_add(c, frames, id);
}

static int heap_ev(wctx *c, int64_t t, int32_t op, uint64_t heap, uint64_t addr, int64_t bytes,
                   const char *name, int64_t chain_id)
{
    c->st->n_heap_events++;
    return im_add_heap(c->o, t, c->tid, op, heap, addr, bytes, name, chain_id);
}

static int new_segment(wctx *c, state *s, int64_t t, uint64_t addr, int64_t bytes, const char *type)
{
    char name[64];
    am_item g = {addr, bytes, ++c->next_heap, NULL};
    int rc;
    snprintf(name, sizeof name, "cuda:%d segment%s%s%s", (int)c->dev, type ? " (" : "", type ? type : "",
             type ? " pool)" : "");
    if ((rc = am_put(&s->segs, &g)) < 0)
        return rc;
    return heap_ev(c, t, GT_HEAP_REGISTER, g.heap, addr, bytes, name, 0);
}

static int new_block(wctx *c, state *s, int64_t t, uint64_t addr, int64_t bytes, const pk_value *frames)
{
    int64_t chain_id;
    int rc;
    am_item *g = seg_holding(s, addr);
    if (!g) { /* a block outside every segment: a segment of its own */
        if ((rc = new_segment(c, s, t, addr, bytes, NULL)) < 0)
            return rc;
        if (!(g = seg_holding(s, addr)))
            return gt_error_set(GT_ERR_CORRUPT, "%s: a block of size 0", c->path);
    }
    uint64_t heap = g->heap;
    if ((rc = callchain_of(c, frames, &chain_id)) < 0 ||
        (rc = am_put(&s->blks, &(am_item){addr, bytes, 0, frames})) < 0)
        return rc;
    return heap_ev(c, t, GT_REGION_REGISTER, heap, addr, bytes, NULL, chain_id);
}

/* Replays one action forwards, writing its rows. */
static int apply(wctx *c, state *s, const entry *e, int64_t t, const pk_value *raw)
{
    am_item *g;
    int rc;
    switch (e->act) {
    case A_ALLOC:
        if (e->bytes == 0)
            return 0;
        return new_block(c, s, t, e->addr, e->bytes, e->frames);
    case A_FREE_REQ:
    case A_FREE_DONE: /* the block's free was asked for before the history began */
        if (!am_find(&s->blks, e->addr))
            return 0;
        am_remove(&s->blks, e->addr);
        g = seg_holding(s, e->addr);
        return heap_ev(c, t, GT_REGION_UNREGISTER, g ? g->heap : 0, e->addr, 0, NULL, 0);
    case A_SEG_MAP:
        if ((g = seg_ending_at(s, e->addr))) { /* an expandable segment grows */
            g->bytes += e->bytes;
            return heap_ev(c, t, GT_HEAP_REGISTER, g->heap, g->addr, g->bytes, NULL, 0);
        }
        /* else a segment of its own */
        __attribute__((fallthrough));
    case A_SEG_ALLOC:
        if (e->bytes == 0 || seg_holding(s, e->addr) || seg_holding(s, e->addr + (uint64_t)e->bytes - 1))
            return 0;
        return new_segment(c, s, t, e->addr, e->bytes, NULL);
    case A_SEG_UNMAP:
    case A_SEG_FREE:
        if (!(g = seg_holding(s, e->addr)))
            return 0;
        if (g->addr == e->addr && (e->act == A_SEG_FREE || e->bytes >= g->bytes)) {
            /* the heap's end frees what is still in it, in the replay as here */
            uint64_t heap = g->heap, lo = g->addr, hi = lo + (uint64_t)g->bytes;
            for (am_item *b = am_ceil(&s->blks, lo); b && b->addr < hi; b = am_ceil(&s->blks, lo))
                am_remove(&s->blks, b->addr);
            am_remove(&s->segs, lo);
            return heap_ev(c, t, GT_HEAP_UNREGISTER, heap, 0, 0, NULL, 0);
        }
        /* part of an expandable segment goes back */
        g->bytes = g->bytes > e->bytes ? g->bytes - e->bytes : 0;
        return heap_ev(c, t, GT_HEAP_REGISTER, g->heap, g->addr, g->bytes, NULL, 0);
    case A_OOM:
    case A_SNAPSHOT: {
        gt_event ev;
        char text[160];
        int64_t free_bytes = -1;
        memset(&ev, 0, sizeof ev);
        ev.kind = GT_EV_NVTX;
        ev.u.nvtx.start_ns = t;
        ev.u.nvtx.end_ns = -1;
        ev.u.nvtx.event_type = GT_NVTX_MARK;
        ev.u.nvtx.global_tid = c->tid;
        if (e->act == A_OOM) {
            pk_get_int(raw, "device_free", &free_bytes);
            if (free_bytes >= 0)
                snprintf(text, sizeof text, "out of memory on cuda:%d: %lld bytes requested, %lld free", (int)c->dev,
                         (long long)e->bytes, (long long)free_bytes);
            else
                snprintf(text, sizeof text, "out of memory on cuda:%d: %lld bytes requested", (int)c->dev,
                         (long long)e->bytes);
            c->st->n_ooms++;
        } else {
            snprintf(text, sizeof text, "memory snapshot taken");
        }
        if ((rc = im_intern(c->o, text, &ev.u.nvtx.text)) < 0)
            return rc;
        return im_add(c->o, &ev);
    }
    default:
        return 0;
    }
}

/* Each device's segments: indices into the snapshot's list, by device then
 * index, so that a device reads its own without walking everyone's. */
typedef struct dev_seg { int64_t dev; size_t i; } dev_seg;

static int cmp_dev_seg(const void *pa, const void *pb)
{
    const dev_seg *a = pa, *b = pb;
    if (a->dev != b->dev)
        return a->dev < b->dev ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* The devices the snapshot names (its segments' and device_traces'
 * indices) and each one's segments. */
static int index_devices(wctx *c, const pk_value *segs, const pk_value *traces, int64_t *out_n, dev_seg **out,
                         size_t *out_len)
{
    int64_t n = traces ? (int64_t)traces->u.seq.n : 0;
    dev_seg *v = NULL;
    size_t len = 0, cap = 0;
    int rc;
    *out = NULL;
    if ((rc = charge(&c->w, segs)) < 0)
        return rc;
    for (size_t i = 0; i < segs->u.seq.n; i++) {
        int64_t d = 0;
        if ((rc = charge(&c->w, segs->u.seq.v[i])) < 0)
            return rc;
        if (segs->u.seq.v[i]->type != PK_DICT)
            return gt_error_set(GT_ERR_CORRUPT, "%s: segments[%zu] is not a dict", c->path, i);
        pk_get_int(segs->u.seq.v[i], "device", &d);
        if (d >= n && d < 4096)
            n = d + 1;
    }
    if (n >= 0xffffff) /* a device is a thread: its id has 24 bits */
        return gt_error_set(GT_ERR_CORRUPT, "%s: device_traces lists %lld devices, more than a trace holds",
                            c->path, (long long)n);
    for (size_t i = 0; i < segs->u.seq.n; i++) {
        int64_t d = 0;
        pk_get_int(segs->u.seq.v[i], "device", &d);
        if (d < 0 || d >= n)
            continue;
        if ((rc = im_grow((void **)&v, &cap, len, sizeof *v)) < 0) {
            free(v);
            return rc;
        }
        v[len++] = (dev_seg){d, i};
    }
    if (len)
        qsort(v, len, sizeof *v, cmp_dev_seg);
    *out_n = n;
    *out = v;
    *out_len = len;
    return 0;
}

/* The end state of one device, from its segments in the snapshot. */
static int end_state(wctx *c, state *s, const pk_value *segs, const dev_seg *mine, size_t n_mine, bool write,
                     int64_t t)
{
    int rc;
    for (size_t k = 0; k < n_mine; k++) {
        size_t i = mine[k].i;
        const pk_value *g = segs->u.seq.v[i];
        int64_t addr, size;
        if ((rc = charge(&c->w, g)) < 0)
            return rc;
        if (!pk_get_int(g, "address", &addr) || !pk_get_int(g, "total_size", &size) || size <= 0)
            return gt_error_set(GT_ERR_CORRUPT, "%s: segments[%zu] lacks a valid address or total_size", c->path, i);
        if (seg_holding(s, (uint64_t)addr) || seg_holding(s, (uint64_t)addr + (uint64_t)size - 1))
            return gt_error_set(GT_ERR_CORRUPT, "%s: segments[%zu] overlaps another segment", c->path, i);
        if (write) {
            if ((rc = new_segment(c, s, t, (uint64_t)addr, size, pk_get_str(g, "segment_type"))) < 0)
                return rc;
        } else if ((rc = am_put(&s->segs, &(am_item){(uint64_t)addr, size, 0, NULL})) < 0) {
            return rc;
        }
        c->st->n_segments += write;
        const pk_value *blocks = pk_get_list(g, "blocks");
        if (blocks && (rc = charge(&c->w, blocks)) < 0)
            return rc;
        for (size_t j = 0; blocks && j < blocks->u.seq.n; j++) {
            const pk_value *b = blocks->u.seq.v[j];
            int64_t baddr, bsize;
            if ((rc = charge(&c->w, b)) < 0)
                return rc;
            const char *st = pk_get_str(b, "state");
            if (!pk_get_int(b, "address", &baddr) || !pk_get_int(b, "size", &bsize) || bsize < 0)
                return gt_error_set(GT_ERR_CORRUPT, "%s: segments[%zu].blocks[%zu] lacks a valid address or size",
                                    c->path, i, j);
            if (!st || strcmp(st, "active_allocated") || bsize == 0)
                continue; /* inactive (cached), or freed and waiting for its streams */
            if ((uint64_t)baddr < (uint64_t)addr || (uint64_t)baddr - (uint64_t)addr + (uint64_t)bsize > (uint64_t)size)
                return gt_error_set(GT_ERR_CORRUPT, "%s: segments[%zu].blocks[%zu] lies outside its segment", c->path,
                                    i, j);
            if (write) {
                if ((rc = new_block(c, s, t, (uint64_t)baddr, bsize, pk_get_list(b, "frames"))) < 0)
                    return rc;
            } else if ((rc = am_put(&s->blks, &(am_item){(uint64_t)baddr, bsize, 0, pk_get_list(b, "frames")})) < 0) {
                return rc;
            }
            c->st->n_blocks += write;
        }
    }
    return 0;
}

static int write_device(wctx *c, const pk_value *segs, const dev_seg *mine, size_t n_mine, const pk_value *trace)
{
    state s, init;
    char name[64];
    int rc;
    size_t n = trace ? trace->u.seq.n : 0;
    int64_t t = 0, last_us = 0;
    entry e;
    state_init(&s);
    state_init(&init);
    snprintf(name, sizeof name, "cuda:%d allocator", (int)c->dev);
    if ((rc = charge(&c->w, trace)) < 0 || (rc = gt_writer_add_thread_name(c->o->w, c->tid, name, 0)) < 0)
        return rc;
    if (n == 0) { /* no history: the end state, at the trace's start */
        rc = end_state(c, &s, segs, mine, n_mine, true, 0);
        state_free(&s);
        return rc;
    }
    /* backwards from the end state to the state before the first action */
    if ((rc = end_state(c, &init, segs, mine, n_mine, false, 0)) < 0)
        goto cleanup;
    for (size_t i = n; i-- > 0;) {
        if ((rc = read_entry(c->path, &c->w, trace->u.seq.v[i], (size_t)c->dev, i, &e)) < 0 ||
            (rc = undo(&init, &e)) < 0)
            goto cleanup;
    }
    for (size_t i = 0; i < n && !last_us; i++) {
        if ((rc = read_entry(c->path, &c->w, trace->u.seq.v[i], (size_t)c->dev, i, &e)) < 0)
            goto cleanup;
        last_us = e.time_us > 0 ? e.time_us : 0;
    }
    t = last_us ? last_us * 1000 - c->o->t0_abs_ns : 0;
    for (am_item *g = am_ceil(&init.segs, 0); g; g = am_next(&init.segs, g))
        if ((rc = new_segment(c, &s, t, g->addr, g->bytes, NULL)) < 0)
            goto cleanup;
    for (am_item *b = am_ceil(&init.blks, 0); b; b = am_next(&init.blks, b))
        if ((rc = new_block(c, &s, t, b->addr, b->bytes, b->frames)) < 0)
            goto cleanup;
    if ((rc = charge(&c->w, trace)) < 0)
        goto cleanup;
    for (size_t i = 0; i < n; i++) {
        if ((rc = read_entry(c->path, &c->w, trace->u.seq.v[i], (size_t)c->dev, i, &e)) < 0)
            goto cleanup;
        /* Times never go back, and each action is a nanosecond after the
         * one before at least: time_us is coarse, many actions share a
         * microsecond, and readers order equal times by kind, not by row
         * (an alloc and its free in one microsecond would be read reversed). */
        if (e.time_us > 0 && e.time_us >= last_us) {
            last_us = e.time_us;
            t = last_us * 1000 - c->o->t0_abs_ns > t + 1 ? last_us * 1000 - c->o->t0_abs_ns : t + 1;
        } else {
            t++;
        }
        if ((rc = apply(c, &s, &e, t, trace->u.seq.v[i])) < 0)
            goto cleanup;
        c->st->n_actions++;
    }
    /* the end state the snapshot gives */
    for (size_t k = 0; k < n_mine; k++) {
        const pk_value *blocks = pk_get_list(segs->u.seq.v[mine[k].i], "blocks");
        c->st->n_segments++;
        for (size_t j = 0; blocks && j < blocks->u.seq.n; j++) {
            const char *st = pk_get_str(blocks->u.seq.v[j], "state");
            c->st->n_blocks += st && !strcmp(st, "active_allocated");
        }
    }
cleanup:
    state_free(&s);
    state_free(&init);
    return rc;
}

int im_snapshot_write(const char *path, const im_scan *scan, im_out *o, gt_import_stats *st)
{
    pk_doc *d = NULL;
    const pk_value *segs, *traces;
    dev_seg *by_dev = NULL;
    size_t n_by_dev = 0, k = 0;
    wctx c;
    int64_t nd = 0;
    int rc;
    (void)scan;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.st = st;
    c.path = path;
    /* heap ids unique in the trace: the process in the high bits */
    c.next_heap = (uint64_t)o->pid << 32;
    c.next_chain = (int64_t)o->pid << 32;
    if ((rc = pk_load(&d, path)) < 0)
        return rc;
    work_init(&c.w, path, d);
    if ((rc = root_of(path, d, &segs, &traces)) < 0 ||
        (rc = index_devices(&c, segs, traces, &nd, &by_dev, &n_by_dev)) < 0)
        goto cleanup;
    for (int64_t dev = 0; dev < nd; dev++) {
        const pk_value *tr = traces && (size_t)dev < traces->u.seq.n ? traces->u.seq.v[dev] : NULL;
        size_t first = k;
        if (tr && tr->type != PK_LIST && tr->type != PK_TUPLE) {
            rc = gt_error_set(GT_ERR_CORRUPT, "%s: device_traces[%lld] is not a list", path, (long long)dev);
            goto cleanup;
        }
        while (k < n_by_dev && by_dev[k].dev == dev)
            k++;
        c.dev = (int32_t)dev;
        c.tid = gt_global_tid(o->pid, dev + 1);
        if ((rc = write_device(&c, segs, by_dev + first, k - first, tr)) < 0)
            goto cleanup;
    }
cleanup:
    free(by_dev);
    free(c.chains);
    free(c.seen);
    pk_free(d);
    return rc;
}
