/* export_memviz.c: the trace's allocator history as a PyTorch memory
 * snapshot (what torch.cuda.memory._snapshot() returns, pickled), which
 * torch.cuda._memory_viz and pytorch.org/memory_viz open:
 *   {'segments': [{'device', 'address', 'total_size', 'allocated_size',
 *                  'active_size', 'requested_size', 'stream', 'segment_type',
 *                  'segment_pool_id', 'is_expandable', 'frames',
 *                  'blocks': [{'address', 'size', 'requested_size', 'state',
 *                              'frames'}]}],
 *    'device_traces': [[{'action', 'addr', 'size', 'stream', 'time_us',
 *                        'frames'}]]}
 * Segments and blocks are the state at a moment (the end of the trace, or
 * a time the caller picks); the trace entries are every allocation and free
 * up to it (alloc, free_requested, free_completed, segment_alloc,
 * segment_free). Frames are the NVTX ranges that were open when the block
 * was made, innermost first, then its call stack. PyTorch 1.13's form is
 * the segments alone, a list, each block's frames in its "history" (what
 * its torch.cuda.memory_snapshot() returns).
 *
 * One process per snapshot, as torch.cuda.memory._snapshot() is one
 * process's allocator (a DDP job dumps one per rank): heap handles and
 * addresses of two processes would collide in one. Its device is that of
 * the process's device allocations; 0 when they do not say (NVTX heaps
 * carry no device).
 *
 * A block in no segment of the trace (regions of a heap never registered, an
 * allocation never placed) gets a segment of its own, in the snapshot and in
 * the trace, since the viewer draws every block inside a segment.
 *
 * The pickle is protocol 2, written by hand: dicts, lists, a tuple, ints,
 * bools and strings are all a snapshot holds. Lists are appended 1,000 items
 * at a time, as Python's pickler does: memory_viz's own unpickler (the web
 * page) spreads each APPENDS onto the JavaScript stack, which one APPENDS of
 * a whole trace overflows. Checked against PyTorch 2.15's tools; see
 * bench/results/2026-11-21-memviz.md. */
#include "analyze_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- a small pickler ---------------------------------------------------- */

static void p_byte(FILE *f, int b) { fputc(b, f); }

static void p_int(FILE *f, int64_t v)
{
    if (v >= INT32_MIN && v <= INT32_MAX) {
        uint32_t u = (uint32_t)(int32_t)v;
        p_byte(f, 'J'); /* BININT: 4 bytes, little-endian, signed */
        for (int i = 0; i < 4; i++)
            p_byte(f, (u >> (8 * i)) & 0xff);
        return;
    }
    /* LONG1: n bytes of two's complement, little-endian; 8 always suffice
     * for int64, plus one for uint64 addresses with the top bit set. */
    p_byte(f, 0x8a);
    p_byte(f, 8);
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++)
        p_byte(f, (u >> (8 * i)) & 0xff);
}

static void p_uint(FILE *f, uint64_t v)
{
    if (v <= INT64_MAX) {
        p_int(f, (int64_t)v);
        return;
    }
    p_byte(f, 0x8a);
    p_byte(f, 9);
    for (int i = 0; i < 8; i++)
        p_byte(f, (v >> (8 * i)) & 0xff);
    p_byte(f, 0); /* a positive number: a zero sign byte */
}

static void p_str(FILE *f, const char *s)
{
    /* BINUNICODE must be UTF-8: a byte that is not becomes U+FFFD, the
     * replacement character (3 bytes), as Python's errors="replace" does. */
    static const unsigned char fffd[3] = {0xef, 0xbf, 0xbd};
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = 0;
    for (const unsigned char *q = p; *q;) {
        int k = gt_utf8_len(q);
        n += k ? (size_t)k : sizeof fffd;
        q += k ? k : 1;
    }
    if (n > UINT32_MAX) /* BINUNICODE's length is 4 bytes; no name from a trace is that long */
        n = 0, p = (const unsigned char *)"";
    p_byte(f, 'X');
    for (int i = 0; i < 4; i++)
        p_byte(f, (int)((n >> (8 * i)) & 0xff));
    while (*p) {
        int k = gt_utf8_len(p);
        if (k == 0) {
            fwrite(fffd, 1, sizeof fffd, f);
            p++;
        } else {
            fwrite(p, 1, (size_t)k, f);
            p += k;
        }
    }
}

static void p_bool(FILE *f, bool b) { p_byte(f, b ? 0x88 : 0x89); }
static void p_dict_begin(FILE *f) { p_byte(f, '}'); p_byte(f, '('); } /* EMPTY_DICT MARK */
static void p_dict_end(FILE *f) { p_byte(f, 'u'); }                   /* SETITEMS */

/* A list being written: its items so far, for batches of APPENDS. */
typedef struct plist {
    FILE *f;
    size_t n;
} plist;

enum { APPENDS_BATCH = 1000 };

static plist p_list_begin(FILE *f)
{
    p_byte(f, ']'); /* EMPTY_LIST */
    p_byte(f, '('); /* MARK */
    return (plist){f, 0};
}

/* Before each item. */
static void p_list_item(plist *l)
{
    if (l->n > 0 && l->n % APPENDS_BATCH == 0) {
        p_byte(l->f, 'e'); /* APPENDS */
        p_byte(l->f, '('); /* MARK */
    }
    l->n++;
}

static void p_list_end(plist *l) { p_byte(l->f, 'e'); } /* APPENDS */
static void p_key_int(FILE *f, const char *k, int64_t v) { p_str(f, k); p_int(f, v); }
static void p_key_str(FILE *f, const char *k, const char *v) { p_str(f, k); p_str(f, v); }

/* ---- the snapshot ------------------------------------------------------- */

/* Frames of an allocation: its NVTX ranges innermost first, then its stack. */
static void p_frames(FILE *f, const an_model *m, int64_t tid, int64_t t_ns, int64_t callchain)
{
    p_str(f, "frames");
    plist l = p_list_begin(f);
    for (int64_t r = tid ? an_model_range_at(m, tid, t_ns) : -1; r >= 0; r = m->ranges[r].parent) {
        p_list_item(&l);
        p_dict_begin(f);
        p_key_str(f, "filename", "nvtx");
        p_key_int(f, "line", 0);
        p_key_str(f, "name", an_str(m, m->ranges[r].text));
        p_dict_end(f);
    }
    const gt_frame *fr = NULL;
    size_t n = 0;
    if (callchain && m->t && gt_trace_callchain(m->t, callchain, &fr, &n) == 0) {
        for (size_t i = 0; i < n; i++) {
            p_list_item(&l);
            p_dict_begin(f);
            p_key_str(f, "filename", an_str(m, fr[i].module));
            p_key_int(f, "line", 0);
            p_key_str(f, "name", *an_str(m, fr[i].symbol) ? an_str(m, fr[i].symbol) : "??");
            p_dict_end(f);
        }
    }
    p_list_end(&l);
}

static void p_no_frames(FILE *f)
{
    p_str(f, "frames");
    plist l = p_list_begin(f);
    p_list_end(&l);
}

static void p_block(FILE *f, plist *l, uint64_t address, int64_t size, int64_t requested, const char *state)
{
    p_list_item(l);
    p_dict_begin(f);
    p_str(f, "address");
    p_uint(f, address);
    p_key_int(f, "size", size);
    p_key_int(f, "requested_size", requested);
    p_key_str(f, "state", state);
}

/* One segment of the snapshot: its blocks in address order, the space
 * between them as inactive blocks, as the allocator's own snapshot tiles a
 * segment (the viewer places blocks by adding up sizes from the segment's
 * address). Blocks are clipped to the segment and to each other, so the
 * sizes always add up to the segment's. */
static void p_segment(FILE *f, plist *segs, const an_model *m, int32_t device, uint64_t address, int64_t bytes,
                      const gt_mem_block *blocks, size_t n_blocks, bool v113)
{
    uint64_t end = address + (uint64_t)bytes;
    int64_t active = 0;
    uint64_t at = address;
    for (size_t b = 0; b < n_blocks; b++) {
        uint64_t s = blocks[b].address > at ? blocks[b].address : at;
        uint64_t e = blocks[b].address + (uint64_t)blocks[b].bytes;
        if (e > end)
            e = end;
        if (e > s) {
            active += (int64_t)(e - s);
            at = e;
        }
    }
    p_list_item(segs);
    p_dict_begin(f);
    p_key_int(f, "device", device);
    p_str(f, "address");
    p_uint(f, address);
    p_key_int(f, "total_size", bytes);
    p_key_int(f, "allocated_size", active);
    p_key_int(f, "active_size", active);
    p_key_int(f, "requested_size", active);
    p_key_int(f, "stream", 0);
    /* PyTorch's small pool holds segments of 2 MiB */
    p_key_str(f, "segment_type", bytes <= 2 * 1024 * 1024 ? "small" : "large");
    p_str(f, "segment_pool_id");
    p_int(f, 0);
    p_int(f, 0);
    p_byte(f, 0x86); /* TUPLE2 */
    p_str(f, "is_expandable");
    p_bool(f, false);
    p_no_frames(f);
    p_str(f, "blocks");
    plist l = p_list_begin(f);
    at = address;
    for (size_t b = 0; b < n_blocks; b++) {
        const gt_mem_block *k = &blocks[b];
        uint64_t s = k->address > at ? k->address : at;
        uint64_t e = k->address + (uint64_t)k->bytes;
        if (e > end)
            e = end;
        if (e <= s)
            continue; /* inside the one before: already drawn */
        if (s > at) {
            p_block(f, &l, at, (int64_t)(s - at), 0, "inactive");
            p_no_frames(f);
            p_dict_end(f);
        }
        p_block(f, &l, s, (int64_t)(e - s), (int64_t)(e - s), "active_allocated");
        p_frames(f, m, k->global_tid, k->alloc_ns, k->callchain_id);
        if (v113) { /* 1.13 reads a block's origin from its history */
            p_str(f, "history");
            plist h = p_list_begin(f);
            p_list_item(&h);
            p_dict_begin(f);
            p_str(f, "addr");
            p_uint(f, s);
            p_key_int(f, "real_size", (int64_t)(e - s));
            p_frames(f, m, k->global_tid, k->alloc_ns, k->callchain_id);
            p_dict_end(f);
            p_list_end(&h);
        }
        p_dict_end(f);
        at = e;
    }
    if (end > at) {
        p_block(f, &l, at, (int64_t)(end - at), 0, "inactive");
        p_no_frames(f);
        p_dict_end(f);
    }
    p_list_end(&l);
    p_dict_end(f);
}

static void p_segments(FILE *f, const an_model *m, int32_t device, const gt_mem_state *st, bool v113)
{
    if (!v113)
        p_str(f, "segments");
    plist segs = p_list_begin(f);
    for (size_t i = 0; i < st->n_segments; i++) {
        const gt_mem_segment *g = &st->segments[i];
        p_segment(f, &segs, m, device, g->address, g->bytes, st->blocks + g->first_block, g->n_blocks, v113);
    }
    /* blocks in no segment: each in a segment of its own, as in the trace */
    for (size_t b = st->n_blocks - st->n_unplaced; b < st->n_blocks; b++)
        p_segment(f, &segs, m, device, st->blocks[b].address, st->blocks[b].bytes, &st->blocks[b], 1, v113);
    p_list_end(&segs);
}

static void p_entry(FILE *f, plist *l, const an_model *m, const an_mem_action *a, const char *action)
{
    p_list_item(l);
    p_dict_begin(f);
    p_key_str(f, "action", action);
    p_str(f, "addr");
    p_uint(f, a->address);
    p_key_int(f, "size", a->bytes);
    p_key_int(f, "stream", a->stream);
    p_key_int(f, "time_us", a->t_ns / 1000);
    if (strncmp(action, "segment", 7) == 0 && a->action != AN_ACT_SEG_ALLOC && a->action != AN_ACT_SEG_FREE)
        p_no_frames(f); /* a block's own segment */
    else
        p_frames(f, m, a->tid, a->alloc_ns, a->callchain);
    p_dict_end(f);
}

/* The segments alive while the trace is written, by address: a block that
 * lies in none gets one of its own. */
typedef struct seglist {
    struct seg { uint64_t address; int64_t bytes; bool own; } *v; /* own: a block's own segment */
    size_t n, cap;
} seglist;

static size_t seg_find(const seglist *sl, uint64_t address)
{
    size_t lo = 0, hi = sl->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (sl->v[mid].address < address)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int seg_add(seglist *sl, uint64_t address, int64_t bytes, bool own)
{
    if (sl->n == sl->cap) {
        size_t ncap = sl->cap ? sl->cap * 2 : 64;
        struct seg *nv = realloc(sl->v, ncap * sizeof *nv);
        if (!nv)
            return gt_error_set(GT_ERR_NOMEM, "memviz export: out of memory");
        sl->v = nv;
        sl->cap = ncap;
    }
    size_t i = seg_find(sl, address);
    memmove(&sl->v[i + 1], &sl->v[i], (sl->n - i) * sizeof *sl->v);
    sl->v[i] = (struct seg){address, bytes, own};
    sl->n++;
    return 0;
}

/* Removes the segment at `address` (an own one only if `own`); true if found. */
static bool seg_remove(seglist *sl, uint64_t address, bool own)
{
    for (size_t i = seg_find(sl, address); i < sl->n && sl->v[i].address == address; i++) {
        if (sl->v[i].own != own)
            continue;
        memmove(&sl->v[i], &sl->v[i + 1], (sl->n - i - 1) * sizeof *sl->v);
        sl->n--;
        return true;
    }
    return false;
}

/* Whether [address, address + bytes) lies in an allocator segment: the
 * nearest one starting at or before it decides (they do not overlap). */
static bool seg_holds(const seglist *sl, uint64_t address, int64_t bytes)
{
    for (size_t k = seg_find(sl, address + 1); k > 0; k--) {
        const struct seg *g = &sl->v[k - 1];
        if (!g->own)
            return address + (uint64_t)bytes <= g->address + (uint64_t)g->bytes;
    }
    return false;
}

/* The device of a process's device allocations: the snapshot's device (and
 * its index in device_traces); 0 when none or several say, or an id no list
 * should be that long for. */
static int32_t device_of(const an_model *m, int64_t pid)
{
    enum { MAX_DEVICE = 1024 };
    int32_t dev = -1;
    for (size_t i = 0; i < m->n_mem; i++) {
        const an_mem *e = &m->mem[i];
        if (e->op != AN_DEV_ALLOC || (e->tid ? gt_pid_of(e->tid) : 0) != pid)
            continue;
        int32_t d = (int32_t)e->heap; /* the device id */
        if (d < 0 || d >= MAX_DEVICE || (dev >= 0 && d != dev))
            return 0;
        dev = d;
    }
    return dev >= 0 ? dev : 0;
}

int gt_export_memviz(gt_trace *t, int64_t pid, FILE *f)
{
    return gt_export_memviz_at(t, pid, INT64_MAX, false, f);
}

int gt_export_memviz_at(gt_trace *t, int64_t pid, int64_t at_ns, bool v113, FILE *f)
{
    an_model *m = NULL;
    gt_mem_state *st = NULL;
    an_mem_action *acts = NULL;
    int64_t *pids = NULL;
    seglist live = {0};
    size_t n_acts = 0, n_pids = 0;
    int32_t device = 0;
    plist devices, l;
    int rc;
    if (!t || !f)
        return gt_error_set(GT_ERR_INVALID, "gt_export_memviz: missing argument");
    if ((rc = an_model_load(&m, t)) < 0 || (rc = an_memory_pids(m, &pids, &n_pids)) < 0)
        goto cleanup;
    if (pid < 0 && n_pids > 1) {
        rc = gt_error_set(GT_ERR_INVALID, "%s: %zu processes have allocation events; a snapshot holds one",
                          gt_trace_path(t), n_pids);
        goto cleanup;
    }
    if (pid < 0)
        pid = n_pids ? pids[0] : 0;
    if ((rc = an_memory_state(&st, m, n_pids ? pid : -1, at_ns)) < 0 ||
        (rc = an_memory_actions_pid(m, pid, &acts, &n_acts)) < 0)
        goto cleanup;
    device = device_of(m, pid);
    p_byte(f, 0x80); /* PROTO 2 */
    p_byte(f, 2);
    if (v113) { /* torch.cuda.memory_snapshot() of 1.13: the segments alone */
        p_segments(f, m, device, st, true);
        goto stop;
    }
    p_dict_begin(f);
    p_segments(f, m, device, st, false);
    p_str(f, "device_traces");
    devices = p_list_begin(f);
    for (int32_t d = 0; d < device; d++) { /* devices before the process's: no trace */
        p_list_item(&devices);
        plist none = p_list_begin(f);
        p_list_end(&none);
    }
    p_list_item(&devices);
    l = p_list_begin(f);
    for (size_t i = 0; i < n_acts && rc == 0 && acts[i].t_ns <= at_ns; i++) {
        const an_mem_action *a = &acts[i]; /* the actions up to the snapshot's moment */
        switch (a->action) {
        case AN_ACT_ALLOC:
            if (!seg_holds(&live, a->address, a->bytes)) {
                if ((rc = seg_add(&live, a->address, a->bytes, true)) < 0)
                    break;
                p_entry(f, &l, m, a, "segment_alloc");
            }
            p_entry(f, &l, m, a, "alloc");
            break;
        case AN_ACT_FREE:
            /* one stream, nothing to wait for: the free completes at once */
            p_entry(f, &l, m, a, "free_requested");
            p_entry(f, &l, m, a, "free_completed");
            if (seg_remove(&live, a->address, true))
                p_entry(f, &l, m, a, "segment_free");
            break;
        case AN_ACT_SEG_ALLOC:
            if ((rc = seg_add(&live, a->address, a->bytes, false)) < 0)
                break;
            p_entry(f, &l, m, a, "segment_alloc");
            break;
        case AN_ACT_SEG_FREE:
            seg_remove(&live, a->address, false);
            p_entry(f, &l, m, a, "segment_free");
            break;
        }
    }
    if (rc < 0)
        goto cleanup;
    p_list_end(&l);
    p_list_end(&devices);
    p_dict_end(f);
stop:
    p_byte(f, '.'); /* STOP */
    if (ferror(f))
        rc = gt_error_set(GT_ERR_IO, "memviz export: cannot write the output");
cleanup:
    free(pids);
    free(live.v);
    free(acts);
    gt_mem_state_free(st);
    an_model_free(m);
    return rc;
}
