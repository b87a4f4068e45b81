/* memory.c: device memory over time, by replaying allocation events in time
 * order: NVTX memory API heaps (an allocator's segments) and regions (its
 * blocks), and device allocations (cudaMalloc level). From the replay come
 * the peaks of allocated and reserved bytes, fragmentation, churn per step,
 * leaks, spikes, and the allocator's state at any moment.
 *
 * Allocated bytes are the live blocks; reserved bytes the live segments.
 * A trace without an allocator's events has only device allocations: then
 * they are both (each is a segment holding one block). */
#include "analyze_int.h"

#include <stdlib.h>
#include <string.h>

enum { REC_BLOCK, REC_SEGMENT, REC_DEVICE };

typedef struct rec { /* one allocation, from its birth to its free */
    int64_t start_ns, end_ns; /* end AN_ALIVE: never freed */
    uint64_t address, heap;
    int64_t bytes, tid, callchain;
    int32_t stream;
    int8_t kind;
} rec;

typedef struct live_map { /* address -> rec index of the live ones; open addressing */
    uint64_t *keys;
    int64_t *vals; /* -1 empty, -2 deleted */
    size_t cap, n_used;
} live_map;

typedef struct replay {
    const an_model *m;
    rec *recs; size_t n_recs, cap_recs;
    live_map live[3];
    live_map heap_blocks; /* heap id -> its live blocks, so a heap's end frees them */
    bool has_blocks, has_segments, has_device;
    int64_t allocated, reserved;
    int64_t peak_alloc, peak_alloc_ns, peak_res, peak_res_ns, res_at_peak_alloc;
    int64_t n_ops[7];
    an_mem_action *log; size_t n_log, cap_log; bool logging; /* for exports */
} replay;

static size_t hash_addr(uint64_t a)
{
    a ^= a >> 29;
    a *= 0xbf58476d1ce4e5b9ULL;
    a ^= a >> 32;
    return (size_t)a;
}

static int map_grow(live_map *mp)
{
    size_t ncap = mp->cap ? mp->cap * 2 : 256;
    uint64_t *nk = malloc(ncap * sizeof *nk);
    int64_t *nv = malloc(ncap * sizeof *nv);
    if (!nk || !nv) {
        free(nk);
        free(nv);
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory replaying allocations");
    }
    for (size_t i = 0; i < ncap; i++)
        nv[i] = -1;
    size_t used = 0;
    for (size_t i = 0; i < mp->cap; i++) {
        if (mp->vals[i] < 0)
            continue;
        size_t h = hash_addr(mp->keys[i]) & (ncap - 1);
        while (nv[h] != -1)
            h = (h + 1) & (ncap - 1);
        nk[h] = mp->keys[i];
        nv[h] = mp->vals[i];
        used++;
    }
    free(mp->keys);
    free(mp->vals);
    mp->keys = nk;
    mp->vals = nv;
    mp->cap = ncap;
    mp->n_used = used;
    return 0;
}

/* Slot of key, or -1. */
static int64_t map_find(const live_map *mp, uint64_t key)
{
    if (mp->cap == 0)
        return -1;
    size_t h = hash_addr(key) & (mp->cap - 1);
    while (mp->vals[h] != -1) {
        if (mp->vals[h] >= 0 && mp->keys[h] == key)
            return (int64_t)h;
        h = (h + 1) & (mp->cap - 1);
    }
    return -1;
}

static int map_put(live_map *mp, uint64_t key, int64_t val)
{
    int rc;
    if ((mp->n_used + 1) * 2 > mp->cap && (rc = map_grow(mp)) < 0)
        return rc;
    size_t h = hash_addr(key) & (mp->cap - 1);
    while (mp->vals[h] >= 0)
        h = (h + 1) & (mp->cap - 1);
    if (mp->vals[h] == -1)
        mp->n_used++;
    mp->keys[h] = key;
    mp->vals[h] = val;
    return 0;
}

static void map_clear(live_map *mp)
{
    free(mp->keys);
    free(mp->vals);
    memset(mp, 0, sizeof *mp);
}

static void replay_free(replay *rp)
{
    free(rp->log);
    free(rp->recs);
    for (int k = 0; k < 3; k++)
        map_clear(&rp->live[k]);
    map_clear(&rp->heap_blocks);
}

static int count_heap_block(replay *rp, uint64_t heap, int64_t delta)
{
    int64_t slot = map_find(&rp->heap_blocks, heap);
    if (slot >= 0) {
        rp->heap_blocks.vals[slot] += delta;
        return 0;
    }
    return map_put(&rp->heap_blocks, heap, delta > 0 ? delta : 0);
}

static int log_one(replay *rp, int8_t action, const rec *r, int64_t t_ns, int64_t bytes)
{
    if (rp->n_log == rp->cap_log) {
        size_t ncap = rp->cap_log ? rp->cap_log * 2 : 1024;
        an_mem_action *nl = realloc(rp->log, ncap * sizeof *nl);
        if (!nl)
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory logging allocations");
        rp->log = nl;
        rp->cap_log = ncap;
    }
    rp->log[rp->n_log++] = (an_mem_action){t_ns, r->address, bytes, r->stream, r->tid, r->callchain, r->start_ns, action};
    return 0;
}

/* What a trace reader of PyTorch's allocator would have seen: a device
 * allocation is a segment when the trace has no heaps, a block when it has
 * no regions, or both. */
static int log_rec(replay *rp, const rec *r, bool alloc, int64_t t_ns, int64_t bytes)
{
    if (!rp->logging)
        return 0;
    bool seg = r->kind == REC_SEGMENT || (r->kind == REC_DEVICE && !rp->has_segments);
    bool blk = r->kind == REC_BLOCK || (r->kind == REC_DEVICE && !rp->has_blocks);
    int rc = 0;
    if (alloc) {
        if (seg)
            rc = log_one(rp, AN_ACT_SEG_ALLOC, r, t_ns, bytes);
        if (rc == 0 && blk)
            rc = log_one(rp, AN_ACT_ALLOC, r, t_ns, bytes);
    } else {
        if (blk)
            rc = log_one(rp, AN_ACT_FREE, r, t_ns, bytes);
        if (rc == 0 && seg)
            rc = log_one(rp, AN_ACT_SEG_FREE, r, t_ns, bytes);
    }
    return rc;
}

/* Allocated and reserved bytes move with blocks and segments, or with device
 * allocations when the trace has no allocator events of that kind. */
static void account(replay *rp, int8_t kind, int64_t delta, int64_t t_ns)
{
    if (kind == REC_BLOCK || (kind == REC_DEVICE && !rp->has_blocks))
        rp->allocated += delta;
    if (kind == REC_SEGMENT || (kind == REC_DEVICE && !rp->has_segments))
        rp->reserved += delta;
    if (rp->allocated > rp->peak_alloc) {
        rp->peak_alloc = rp->allocated;
        rp->peak_alloc_ns = t_ns;
        rp->res_at_peak_alloc = rp->reserved;
    }
    if (rp->reserved > rp->peak_res) {
        rp->peak_res = rp->reserved;
        rp->peak_res_ns = t_ns;
    }
}

static int end_rec(replay *rp, int64_t idx, int64_t t_ns)
{
    rec *r = &rp->recs[idx];
    int rc;
    if (r->kind == REC_BLOCK && (rc = count_heap_block(rp, r->heap, -1)) < 0)
        return rc;
    r->end_ns = t_ns;
    account(rp, r->kind, -r->bytes, t_ns);
    return log_rec(rp, r, false, t_ns, r->bytes);
}

static int replay_event(replay *rp, const an_mem *e)
{
    int8_t kind = e->op == AN_BLOCK_ALLOC || e->op == AN_BLOCK_FREE ? REC_BLOCK
                : e->op == AN_SEG_ALLOC || e->op == AN_SEG_FREE ? REC_SEGMENT
                : e->op == AN_HEAP_RESET ? REC_BLOCK : REC_DEVICE;
    live_map *mp = &rp->live[kind];
    int rc;
    rp->n_ops[e->op]++;
    int64_t hb = e->op == AN_HEAP_RESET || e->op == AN_SEG_FREE ? map_find(&rp->heap_blocks, e->heap) : -1;
    if (hb >= 0 && rp->heap_blocks.vals[hb] > 0) {
        /* every live block of this heap goes back: on a reset, and when the
         * heap itself is destroyed (nvtxMemHeapUnregister) */
        live_map *bm = &rp->live[REC_BLOCK];
        for (size_t h = 0; h < bm->cap; h++) {
            if (bm->vals[h] >= 0 && rp->recs[bm->vals[h]].heap == e->heap) {
                if ((rc = end_rec(rp, bm->vals[h], e->t_ns)) < 0)
                    return rc;
                bm->vals[h] = -2;
            }
        }
    }
    if (e->op == AN_HEAP_RESET)
        return 0;
    bool alloc = e->op == AN_BLOCK_ALLOC || e->op == AN_SEG_ALLOC || e->op == AN_DEV_ALLOC;
    /* A heap is known by its handle: nvtxMemHeapUnregister gives no address.
     * Its record keeps the address it was registered with. */
    uint64_t key = kind == REC_SEGMENT ? (e->heap ? e->heap : e->address) : e->address;
    uint64_t address = kind == REC_SEGMENT && e->address == 0 ? e->heap : e->address;
    int64_t slot = map_find(mp, key);
    if (!alloc) {
        if (slot >= 0) {
            int64_t idx = mp->vals[slot];
            mp->vals[slot] = -2;
            return end_rec(rp, idx, e->t_ns);
        }
        return 0; /* a free of something never seen: allocated before the trace */
    }
    if (slot >= 0) {
        /* registered again (RESIZE): the same block with a new size */
        rec *r = &rp->recs[mp->vals[slot]];
        account(rp, kind, e->bytes - r->bytes, e->t_ns);
        if ((rc = log_rec(rp, r, false, e->t_ns, r->bytes)) < 0)
            return rc;
        r->bytes = e->bytes;
        return log_rec(rp, r, true, e->t_ns, r->bytes);
    }
    if (rp->n_recs == rp->cap_recs) {
        size_t ncap = rp->cap_recs ? rp->cap_recs * 2 : 1024;
        rec *nr = realloc(rp->recs, ncap * sizeof *nr);
        if (!nr)
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory replaying allocations");
        rp->recs = nr;
        rp->cap_recs = ncap;
    }
    rp->recs[rp->n_recs] = (rec){e->t_ns, AN_ALIVE, address, e->heap, e->bytes, e->tid, e->callchain, e->stream, kind};
    if ((rc = map_put(mp, key, (int64_t)rp->n_recs)) < 0 ||
        (kind == REC_BLOCK && (rc = count_heap_block(rp, e->heap, 1)) < 0))
        return rc;
    rp->n_recs++;
    account(rp, kind, e->bytes, e->t_ns);
    return log_rec(rp, &rp->recs[rp->n_recs - 1], true, e->t_ns, e->bytes);
}

static void replay_init(replay *rp, const an_model *m)
{
    memset(rp, 0, sizeof *rp);
    rp->m = m;
    for (size_t i = 0; i < m->n_mem; i++) {
        int8_t op = m->mem[i].op;
        rp->has_blocks |= op == AN_BLOCK_ALLOC;
        rp->has_segments |= op == AN_SEG_ALLOC;
        rp->has_device |= op == AN_DEV_ALLOC;
    }
}

/* Replays events with time <= until_ns; returns the index of the next one. */
static int replay_until(replay *rp, size_t from, int64_t until_ns, size_t *out_next)
{
    size_t i = from;
    int rc;
    for (; i < rp->m->n_mem && rp->m->mem[i].t_ns <= until_ns; i++)
        if ((rc = replay_event(rp, &rp->m->mem[i])) < 0)
            return rc;
    *out_next = i;
    return 0;
}

/* ---- leaks and spikes --------------------------------------------------- */

static int step_of(const gt_step *steps, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (steps[mid].start_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || t >= steps[lo - 1].end_ns)
        return -1;
    return (int)(lo - 1);
}

typedef struct leak_group {
    gt_string_id range; int64_t callchain;
    int64_t n, bytes, bytes_in_steps, n_steps_grew, last_step;
    int64_t first_ns, last_ns, first_tid;
} leak_group;

static int find_leaks(gt_memory *mem, const replay *rp, const gt_step *steps, size_t n_steps)
{
    const an_model *m = rp->m;
    int8_t kind = rp->has_blocks ? REC_BLOCK : REC_DEVICE;
    leak_group *gs = NULL;
    size_t n_g = 0, cap_g = 0;
    int rc = 0;
    /* "Grew step over step" needs steps to compare. */
    if (n_steps < 3)
        return 0;
    for (size_t i = 0; i < rp->n_recs; i++) {
        const rec *r = &rp->recs[i];
        if (r->kind != kind || r->end_ns != AN_ALIVE)
            continue;
        int64_t ri = r->tid ? an_model_range_at(m, r->tid, r->start_ns) : -1;
        gt_string_id range = ri >= 0 ? m->ranges[ri].text : 0;
        size_t g = 0;
        while (g < n_g && (gs[g].range != range || gs[g].callchain != r->callchain))
            g++;
        if (g == n_g) {
            if (n_g == 4096)
                continue; /* origins beyond this are noise for a report */
            if (n_g == cap_g) {
                size_t ncap = cap_g ? cap_g * 2 : 16;
                leak_group *ng = realloc(gs, ncap * sizeof *ng);
                if (!ng) {
                    rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory finding leaks");
                    goto cleanup;
                }
                gs = ng;
                cap_g = ncap;
            }
            gs[n_g++] = (leak_group){range, r->callchain, 0, 0, 0, 0, -1, r->start_ns, r->start_ns, r->tid};
        }
        leak_group *lg = &gs[g];
        int s = step_of(steps, n_steps, r->start_ns);
        lg->n++;
        lg->bytes += r->bytes;
        lg->last_ns = r->start_ns;
        if (s >= 0) {
            lg->bytes_in_steps += r->bytes;
            if (s != lg->last_step)
                lg->n_steps_grew++;
            lg->last_step = s;
        }
    }
    /* A leak grew in at least three steps and in half of them: weights and
     * optimizer state, made once, never qualify. */
    size_t n_leaks = 0;
    for (size_t g = 0; g < n_g; g++)
        n_leaks += gs[g].n_steps_grew >= 3 && (size_t)gs[g].n_steps_grew * 2 >= n_steps;
    if (n_leaks == 0)
        goto cleanup;
    mem->leaks = calloc(n_leaks, sizeof *mem->leaks);
    if (!mem->leaks) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory finding leaks");
        goto cleanup;
    }
    for (size_t g = 0; g < n_g; g++) {
        leak_group *lg = &gs[g];
        if (!(lg->n_steps_grew >= 3 && (size_t)lg->n_steps_grew * 2 >= n_steps))
            continue;
        gt_leak *l = &mem->leaks[mem->n_leaks++];
        l->origin = an_model_origin(m, lg->first_tid, lg->first_ns, lg->callchain);
        l->n_alive = lg->n;
        l->alive_bytes = lg->bytes;
        l->n_steps_grew = lg->n_steps_grew;
        l->bytes_per_step = (double)lg->bytes_in_steps / (double)n_steps;
        l->first_ns = lg->first_ns;
        l->last_ns = lg->last_ns;
        if (!l->origin) {
            rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory finding leaks");
            goto cleanup;
        }
    }
    /* biggest first */
    for (size_t a = 1; a < mem->n_leaks; a++)
        for (size_t b = a; b > 0 && mem->leaks[b].alive_bytes > mem->leaks[b - 1].alive_bytes; b--) {
            gt_leak t = mem->leaks[b];
            mem->leaks[b] = mem->leaks[b - 1];
            mem->leaks[b - 1] = t;
        }
cleanup:
    free(gs);
    return rc;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Spikes: blocks of at least a tenth of the peak that lived less than half a
 * median step (a hundredth of the trace without steps). */
static int find_spikes(gt_memory *mem, const replay *rp, const gt_step *steps, size_t n_steps)
{
    const an_model *m = rp->m;
    int8_t kind = rp->has_blocks ? REC_BLOCK : REC_DEVICE;
    int64_t max_life;
    if (n_steps > 0) {
        int64_t *d = malloc(n_steps * sizeof *d);
        if (!d)
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        for (size_t i = 0; i < n_steps; i++)
            d[i] = steps[i].end_ns - steps[i].start_ns;
        qsort(d, n_steps, sizeof *d, cmp_i64);
        max_life = d[n_steps / 2] / 2;
        free(d);
    } else {
        max_life = (m->span_end_ns - m->span_start_ns) / 100;
    }
    int64_t min_bytes = rp->peak_alloc / 10;
    if (min_bytes <= 0)
        return 0;
    enum { MAX_SPIKES = 10 };
    size_t top[MAX_SPIKES], n_top = 0;
    for (size_t i = 0; i < rp->n_recs; i++) {
        const rec *r = &rp->recs[i];
        if (r->kind != kind || r->end_ns == AN_ALIVE || r->bytes < min_bytes || r->end_ns - r->start_ns > max_life)
            continue;
        if (n_top < MAX_SPIKES) {
            top[n_top++] = i;
        } else {
            size_t mn = 0;
            for (size_t k = 1; k < n_top; k++)
                if (rp->recs[top[k]].bytes < rp->recs[top[mn]].bytes)
                    mn = k;
            if (r->bytes > rp->recs[top[mn]].bytes)
                top[mn] = i;
        }
    }
    if (n_top == 0)
        return 0;
    mem->spikes = calloc(n_top, sizeof *mem->spikes);
    if (!mem->spikes)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    for (size_t k = 0; k < n_top; k++) {
        const rec *r = &rp->recs[top[k]];
        gt_spike *s = &mem->spikes[mem->n_spikes++];
        s->origin = an_model_origin(m, r->tid, r->start_ns, r->callchain);
        if (!s->origin)
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        s->address = r->address;
        s->bytes = r->bytes;
        s->start_ns = r->start_ns;
        s->end_ns = r->end_ns;
        int st = step_of(steps, n_steps, r->start_ns);
        s->step = st >= 0 ? steps[st].number : -1;
    }
    for (size_t a = 1; a < mem->n_spikes; a++)
        for (size_t b = a; b > 0 && mem->spikes[b].bytes > mem->spikes[b - 1].bytes; b--) {
            gt_spike t = mem->spikes[b];
            mem->spikes[b] = mem->spikes[b - 1];
            mem->spikes[b - 1] = t;
        }
    return 0;
}

int an_memory(gt_memory *mem, const an_model *m, gt_step *steps, size_t n_steps)
{
    replay rp;
    int rc = 0;
    size_t next = 0;
    memset(mem, 0, sizeof *mem);
    replay_init(&rp, m);
    mem->has_blocks = rp.has_blocks;
    mem->has_segments = rp.has_segments;
    mem->has_device = rp.has_device;
    /* Step by step, so each step gets its counts and its end state. */
    for (size_t s = 0; s < n_steps; s++) {
        int64_t before[7];
        if ((rc = replay_until(&rp, next, steps[s].start_ns - 1, &next)) < 0)
            goto cleanup;
        memcpy(before, rp.n_ops, sizeof before);
        if ((rc = replay_until(&rp, next, steps[s].end_ns - 1, &next)) < 0)
            goto cleanup;
        steps[s].n_dev_allocs = rp.n_ops[AN_DEV_ALLOC] - before[AN_DEV_ALLOC];
        steps[s].n_dev_frees = rp.n_ops[AN_DEV_FREE] - before[AN_DEV_FREE];
        steps[s].n_block_allocs = rp.n_ops[AN_BLOCK_ALLOC] - before[AN_BLOCK_ALLOC];
        steps[s].n_block_frees = rp.n_ops[AN_BLOCK_FREE] - before[AN_BLOCK_FREE];
        steps[s].allocated_end_bytes = rp.allocated;
    }
    if ((rc = replay_until(&rp, next, INT64_MAX, &next)) < 0)
        goto cleanup;
    mem->peak_allocated_bytes = rp.peak_alloc;
    mem->peak_allocated_ns = rp.peak_alloc_ns;
    mem->peak_reserved_bytes = rp.peak_res;
    mem->peak_reserved_ns = rp.peak_res_ns;
    mem->end_allocated_bytes = rp.allocated;
    mem->end_reserved_bytes = rp.reserved;
    /* At the allocated peak, what the allocator held but could not hand out
     * is what fragmentation cost; a fresh pool early on says nothing. */
    mem->fragmentation = rp.res_at_peak_alloc > rp.peak_alloc
                             ? (double)(rp.res_at_peak_alloc - rp.peak_alloc) / (double)rp.res_at_peak_alloc : 0;
    mem->n_dev_allocs = rp.n_ops[AN_DEV_ALLOC];
    mem->n_dev_frees = rp.n_ops[AN_DEV_FREE];
    mem->n_block_allocs = rp.n_ops[AN_BLOCK_ALLOC];
    mem->n_block_frees = rp.n_ops[AN_BLOCK_FREE];
    /* Churn in the steady state: the first step warms the allocator up. */
    if (n_steps > 0) {
        size_t first = n_steps > 1 ? 1 : 0;
        int64_t dev = 0, blk = 0;
        for (size_t s = first; s < n_steps; s++) {
            dev += steps[s].n_dev_allocs + steps[s].n_dev_frees;
            blk += steps[s].n_block_allocs + steps[s].n_block_frees;
        }
        mem->dev_churn_per_step = (double)dev / (double)(n_steps - first);
        mem->block_churn_per_step = (double)blk / (double)(n_steps - first);
    }
    if (m->t) {
        size_t n_gpus = 0;
        const gt_gpu_info *gpus = gt_trace_gpus(m->t, &n_gpus);
        for (size_t i = 0; i < n_gpus; i++)
            if (gpus[i].total_memory_bytes > mem->total_device_bytes)
                mem->total_device_bytes = gpus[i].total_memory_bytes;
    }
    if ((rc = find_leaks(mem, &rp, steps, n_steps)) < 0 || (rc = find_spikes(mem, &rp, steps, n_steps)) < 0)
        goto cleanup;
cleanup:
    replay_free(&rp);
    return rc;
}

void an_memory_clear(gt_memory *mem)
{
    for (size_t i = 0; i < mem->n_leaks; i++)
        free(mem->leaks[i].origin);
    free(mem->leaks);
    for (size_t i = 0; i < mem->n_spikes; i++)
        free(mem->spikes[i].origin);
    free(mem->spikes);
    memset(mem, 0, sizeof *mem);
}

/* ---- state at a moment -------------------------------------------------- */

static int cmp_seg_addr(const void *a, const void *b)
{
    const gt_mem_segment *x = a, *y = b;
    return (x->address > y->address) - (x->address < y->address);
}

static const gt_mem_segment *sort_segs;
static size_t sort_n_segs;
static size_t seg_of(uint64_t addr)
{
    size_t lo = 0, hi = sort_n_segs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (sort_segs[mid].address <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && addr < sort_segs[lo - 1].address + (uint64_t)sort_segs[lo - 1].bytes)
        return lo - 1;
    return sort_n_segs; /* unplaced: after every segment */
}
static int cmp_block(const void *a, const void *b)
{
    const gt_mem_block *x = a, *y = b;
    size_t sx = seg_of(x->address), sy = seg_of(y->address);
    if (sx != sy)
        return sx < sy ? -1 : 1;
    return (x->address > y->address) - (x->address < y->address);
}

int an_memory_state(gt_mem_state **out, const an_model *m, int64_t at_ns)
{
    replay rp;
    gt_mem_state *st = NULL;
    size_t next;
    int rc;
    *out = NULL;
    replay_init(&rp, m);
    if ((rc = replay_until(&rp, 0, at_ns, &next)) < 0)
        goto cleanup;
    st = calloc(1, sizeof *st);
    if (!st)
        goto nomem;
    st->at_ns = at_ns;
    st->step = -1;
    st->allocated_bytes = rp.allocated;
    st->reserved_bytes = rp.reserved;
    int8_t seg_kind = rp.has_segments ? REC_SEGMENT : REC_DEVICE;
    int8_t blk_kind = rp.has_blocks ? REC_BLOCK : REC_DEVICE;
    size_t n_seg = 0, n_blk = 0;
    for (size_t i = 0; i < rp.n_recs; i++) {
        const rec *r = &rp.recs[i];
        if (r->end_ns != AN_ALIVE)
            continue;
        n_seg += r->kind == seg_kind;
        n_blk += r->kind == blk_kind;
    }
    st->segments = calloc(n_seg ? n_seg : 1, sizeof *st->segments);
    st->blocks = calloc(n_blk ? n_blk : 1, sizeof *st->blocks);
    if (!st->segments || !st->blocks)
        goto nomem;
    for (size_t i = 0; i < rp.n_recs; i++) {
        const rec *r = &rp.recs[i];
        if (r->end_ns != AN_ALIVE)
            continue;
        if (r->kind == seg_kind)
            st->segments[st->n_segments++] = (gt_mem_segment){r->address, r->bytes, r->start_ns, 0, 0, 0,
                                                              r->kind == REC_SEGMENT};
        if (r->kind == blk_kind) {
            gt_mem_block *b = &st->blocks[st->n_blocks++];
            *b = (gt_mem_block){r->address, r->bytes, r->start_ns, r->tid, r->callchain, NULL};
            if (!(b->origin = an_model_origin(m, r->tid, r->start_ns, r->callchain)))
                goto nomem;
        }
    }
    if (st->n_segments > 1)
        qsort(st->segments, st->n_segments, sizeof *st->segments, cmp_seg_addr);
    sort_segs = st->segments;
    sort_n_segs = st->n_segments;
    if (st->n_blocks > 1)
        qsort(st->blocks, st->n_blocks, sizeof *st->blocks, cmp_block);
    for (size_t b = 0; b < st->n_blocks; b++) {
        size_t s = seg_of(st->blocks[b].address);
        if (s == st->n_segments) {
            st->n_unplaced++;
            continue;
        }
        gt_mem_segment *sg = &st->segments[s];
        if (sg->n_blocks == 0)
            sg->first_block = b;
        sg->n_blocks++;
        sg->allocated_bytes += st->blocks[b].bytes;
    }
    *out = st;
    st = NULL;
    goto cleanup;
nomem:
    rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory building the allocator state");
cleanup:
    gt_mem_state_free(st);
    replay_free(&rp);
    return rc;
}

/* The moment step `number` held the most allocated bytes; -1 if no such step. */
int64_t an_memory_step_peak(const an_model *m, const gt_step *step)
{
    replay rp;
    size_t next = 0;
    int64_t best_ns = step->start_ns, best = -1;
    replay_init(&rp, m);
    if (replay_until(&rp, 0, step->start_ns - 1, &next) == 0) {
        best = rp.allocated;
        for (; next < m->n_mem && m->mem[next].t_ns < step->end_ns; next++) {
            if (replay_event(&rp, &m->mem[next]) < 0)
                break;
            /* events of one nanosecond settle before we look */
            if (next + 1 < m->n_mem && m->mem[next + 1].t_ns == m->mem[next].t_ns)
                continue;
            if (rp.allocated > best) {
                best = rp.allocated;
                best_ns = m->mem[next].t_ns;
            }
        }
    }
    replay_free(&rp);
    return best_ns;
}

int an_memory_actions(const an_model *m, an_mem_action **out, size_t *out_n)
{
    replay rp;
    size_t next;
    int rc;
    *out = NULL;
    *out_n = 0;
    replay_init(&rp, m);
    rp.logging = true;
    if ((rc = replay_until(&rp, 0, INT64_MAX, &next)) == 0) {
        *out = rp.log;
        *out_n = rp.n_log;
        rp.log = NULL;
    }
    replay_free(&rp);
    return rc;
}

void gt_mem_state_free(gt_mem_state *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_blocks; i++)
        free(s->blocks[i].origin);
    free(s->blocks);
    free(s->segments);
    free(s);
}

int gt_memory_state_at(gt_mem_state **out, gt_trace *t, int64_t at_ns)
{
    an_model *m = NULL;
    int rc;
    *out = NULL;
    if (!t)
        return gt_error_set(GT_ERR_INVALID, "gt_memory_state_at: no trace");
    if ((rc = an_model_load(&m, t)) < 0)
        return rc;
    rc = an_memory_state(out, m, at_ns);
    an_model_free(m);
    return rc;
}

int gt_memory_state_at_step(gt_mem_state **out, gt_trace *t, int64_t step)
{
    an_model *m = NULL;
    an_steps steps = {0};
    int rc;
    *out = NULL;
    if (!t)
        return gt_error_set(GT_ERR_INVALID, "gt_memory_state_at_step: no trace");
    if ((rc = an_model_load(&m, t)) < 0)
        return rc;
    if ((rc = an_steps_find(&steps, m)) < 0)
        goto cleanup;
    size_t i = 0;
    while (i < steps.n && steps.v[i].number != step)
        i++;
    if (i == steps.n) {
        rc = gt_error_set(GT_ERR_NOTFOUND, "%s: no step %lld (the trace has %zu steps%s)", gt_trace_path(t),
                          (long long)step, steps.n, steps.n ? "" : ": no NVTX range named \"step N\"");
        goto cleanup;
    }
    if ((rc = an_memory_state(out, m, an_memory_step_peak(m, &steps.v[i]))) == 0)
        (*out)->step = step;
cleanup:
    free(steps.v);
    an_model_free(m);
    return rc;
}
