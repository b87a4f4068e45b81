/* memory.c: device memory over time, by replaying allocation events in time
 * order: NVTX memory API heaps (an allocator's segments) and regions (its
 * blocks), and device allocations (cudaMalloc level). From the replay come
 * the peaks of allocated and reserved bytes, fragmentation, churn per step,
 * the allocator's actions (for exports) and its history (totals after each
 * event and every allocation's lives, an_mem_hist), which memory_history.c
 * hands out. Leaks and spikes are read off a finished replay in
 * memory_leaks.c; the state at a moment off the history in memory_state.c.
 *
 * Allocated bytes are the live blocks; reserved bytes the live segments.
 * A trace without an allocator's events has only device allocations: then
 * they are both (each is a segment holding one block).
 *
 * Each process is replayed on its own. Heap and region handles are numbered
 * per process (every rank of a job registers heap 1), and addresses belong
 * to a process too, so a row's process (the pid part of its thread's global
 * id, globalTid >> 24 as nsys packs it) is part of every key. Each device
 * has an allocator of its own too: a process whose every row names its
 * device (a device allocation its device id, an allocator's heap and region
 * rows a thread named "cuda:N allocator", as snapshot imports write) is
 * replayed once per device; one with rows that do not say is replayed
 * whole. The report's figures are per allocator; a total over them is their
 * sum at one moment, never a sum of peaks reached at different times.
 *
 * Rows no replay can use are skipped and counted, never computed with: what
 * the model refuses at load (times beyond +-AN_TIME_LIMIT_NS, sizes outside
 * 0..AN_BYTES_LIMIT), checked again here for models built by hand, and a
 * block whose end would pass the end of the address space. */
#include "memory_int.h"

#include <stdlib.h>
#include <string.h>

#define MEM_T_LIMIT AN_TIME_LIMIT_NS
#define MEM_MAX_BYTES AN_BYTES_LIMIT


/* The last nanosecond before t. */
static int64_t just_before(int64_t t) { return t > INT64_MIN ? t - 1 : INT64_MIN; }

static bool is_alloc_op(int8_t op) { return op == AN_BLOCK_ALLOC || op == AN_SEG_ALLOC || op == AN_DEV_ALLOC; }

/* Whether a row can be replayed (see the top of the file). */
static bool row_ok(const an_mem *e)
{
    if (e->t_ns < -MEM_T_LIMIT || e->t_ns > MEM_T_LIMIT || e->op < AN_SEG_ALLOC || e->op > AN_DEV_FREE)
        return false;
    if (!is_alloc_op(e->op))
        return true;
    if (e->bytes < 0 || e->bytes > MEM_MAX_BYTES)
        return false;
    uint64_t address = e->op == AN_SEG_ALLOC && e->address == 0 ? e->heap : e->address;
    return address <= UINT64_MAX - (uint64_t)e->bytes;
}

static int64_t row_pid(const an_mem *e) { return e->tid ? gt_pid_of(e->tid) : 0; }

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

/* ---- processes and devices ----------------------------------------------- */

typedef struct thread_dev { int64_t tid; int32_t device; } thread_dev;

typedef struct dev_of { /* threads that are a device's allocator, by tid */
    thread_dev *v; size_t n;
} dev_of;

static int cmp_thread_dev(const void *a, const void *b)
{
    const thread_dev *x = a, *y = b;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

/* "cuda:3 allocator" -> 3; -1: not a device's allocator thread. */
static int32_t allocator_device(const char *name)
{
    if (!name || strncmp(name, "cuda:", 5) != 0 || name[5] < '0' || name[5] > '9')
        return -1;
    char *end;
    long d = strtol(name + 5, &end, 10);
    return d <= 0xffffff && strcmp(end, " allocator") == 0 ? (int32_t)d : -1;
}

static int dev_of_load(dev_of *dv, const an_model *m)
{
    size_t n = 0;
    const gt_thread *th = m->t ? gt_trace_threads(m->t, &n) : NULL;
    memset(dv, 0, sizeof *dv);
    for (size_t i = 0; i < n; i++) {
        int32_t d = allocator_device(th[i].name);
        if (d < 0)
            continue;
        if (!dv->v && !(dv->v = malloc(n * sizeof *dv->v)))
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        dv->v[dv->n++] = (thread_dev){th[i].global_tid, d};
    }
    if (dv->n > 1)
        qsort(dv->v, dv->n, sizeof *dv->v, cmp_thread_dev);
    return 0;
}

/* The device a row is on; -1: it does not say. */
static int32_t row_device(const dev_of *dv, const an_mem *e)
{
    if (e->op == AN_DEV_ALLOC || e->op == AN_DEV_FREE)
        return e->heap <= 0xffffff ? (int32_t)e->heap : -1;
    size_t lo = GT_LOWER_BOUND(dv->v, dv->n, tid, e->tid);
    return lo < dv->n && dv->v[lo].tid == e->tid ? dv->v[lo].device : -1;
}

void mem_split_free(mem_split *sp)
{
    for (size_t i = 0; i < sp->n; i++)
        if (!sp->v[i].borrowed)
            free(sp->v[i].ev);
    free(sp->v);
    memset(sp, 0, sizeof *sp);
}

/* Index of the first allocator not before (pid, device) in the sorted split. */
static size_t split_lower(const mem_split *sp, int64_t pid, int32_t dev)
{
    size_t lo = 0, hi = sp->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (sp->v[mid].pid < pid || (sp->v[mid].pid == pid && sp->v[mid].device < dev))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Index of (pid, device), else of (pid, -1) (a process replayed whole), else sp->n. */
static size_t split_find_dev(const mem_split *sp, int64_t pid, int32_t dev)
{
    size_t k = split_lower(sp, pid, dev);
    if (k < sp->n && sp->v[k].pid == pid && sp->v[k].device == dev)
        return k;
    k = split_lower(sp, pid, -1);
    return k < sp->n && sp->v[k].pid == pid && sp->v[k].device == -1 ? k : sp->n;
}

/* The first allocator of pid, or sp->n. */
static size_t split_find(const mem_split *sp, int64_t pid)
{
    size_t k = split_lower(sp, pid, INT32_MIN);
    return k < sp->n && sp->v[k].pid == pid ? k : sp->n;
}

/* The model's rows by process and device, each allocator's in time order. */
int mem_split_procs(mem_split *sp, const an_model *m)
{
    dev_of dv;
    int rc = 0;
    memset(sp, 0, sizeof *sp);
    if ((rc = dev_of_load(&dv, m)) < 0)
        return rc;
    size_t cap = 0, last = SIZE_MAX;
    /* pass 1: the allocators (sorted) and their row counts, kept in .n */
    for (size_t i = 0; i < m->n_mem; i++) {
        const an_mem *e = &m->mem[i];
        if (!row_ok(e)) {
            sp->n_skipped++;
            continue;
        }
        int64_t pid = row_pid(e);
        int32_t dev = row_device(&dv, e);
        if (last < sp->n && sp->v[last].pid == pid && sp->v[last].device == dev) {
            sp->v[last].n++;
            continue;
        }
        size_t k = split_lower(sp, pid, dev);
        if (k == sp->n || sp->v[k].pid != pid || sp->v[k].device != dev) {
            if (sp->n == cap) {
                size_t ncap = cap ? cap * 2 : 8;
                proc_mem *nv = realloc(sp->v, ncap * sizeof *nv);
                if (!nv)
                    goto nomem;
                sp->v = nv;
                cap = ncap;
            }
            memmove(&sp->v[k + 1], &sp->v[k], (sp->n - k) * sizeof *sp->v);
            sp->v[k] = (proc_mem){pid, dev, NULL, 0, false};
            sp->n++;
        }
        sp->v[k].n++;
        last = k;
    }
    /* a process with rows that do not say their device is one allocator:
     * its devices' rows go back into its (pid, -1) */
    size_t w = 0;
    for (size_t k = 0; k < sp->n; k++) {
        if (w > 0 && sp->v[w - 1].pid == sp->v[k].pid && sp->v[w - 1].device == -1) {
            sp->v[w - 1].n += sp->v[k].n;
            continue;
        }
        sp->v[w++] = sp->v[k];
    }
    sp->n = w;
    if (sp->n == 1 && sp->v[0].n == m->n_mem) { /* one allocator's every row: the model's own */
        sp->v[0].ev = m->mem;
        sp->v[0].borrowed = true;
        goto cleanup;
    }
    for (size_t k = 0; k < sp->n; k++) {
        if (!(sp->v[k].ev = malloc(sp->v[k].n * sizeof *sp->v[k].ev)))
            goto nomem;
        sp->v[k].n = 0;
    }
    /* pass 2: the rows */
    last = SIZE_MAX;
    for (size_t i = 0; i < m->n_mem; i++) {
        const an_mem *e = &m->mem[i];
        if (!row_ok(e))
            continue;
        int64_t pid = row_pid(e);
        int32_t dev = row_device(&dv, e);
        size_t k = last < sp->n && sp->v[last].pid == pid && (sp->v[last].device == dev || sp->v[last].device == -1)
                       ? last : split_find_dev(sp, pid, dev);
        sp->v[k].ev[sp->v[k].n++] = *e;
        last = k;
    }
    goto cleanup;
nomem:
    rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory sorting allocations by process");
    mem_split_free(sp);
cleanup:
    free(dv.v);
    return rc;
}

/* ---- replay ------------------------------------------------------------- */

void mem_replay_free(replay *rp)
{
    free(rp->recs);
    free(rp->spare);
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
    emitter *em = rp->out;
    an_mem_action a = {.t_ns = t_ns, .address = r->address, .bytes = bytes, .stream = r->stream, .tid = r->tid,
                       .callchain = r->callchain, .alloc_ns = r->start_ns, .action = action, .pid = rp->p->pid,
                       .seq = em->n++};
    if (em->status == 0)
        em->status = em->fn(em->ctx, &a);
    return em->status < 0 ? em->status : 0;
}

/* What a trace reader of PyTorch's allocator would have seen: a device
 * allocation is a segment when the process has no heaps, a block when it has
 * no regions, or both. */
static int log_rec(replay *rp, const rec *r, bool alloc, int64_t t_ns, int64_t bytes)
{
    if (!rp->out)
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
 * allocations when the process has no allocator events of that kind. */
static void account(replay *rp, int8_t kind, int64_t delta, int64_t t_ns)
{
    if (kind == REC_BLOCK || (kind == REC_DEVICE && !rp->has_blocks))
        rp->allocated = gt_sat_add(rp->allocated, delta);
    if (kind == REC_SEGMENT || (kind == REC_DEVICE && !rp->has_segments))
        rp->reserved = gt_sat_add(rp->reserved, delta);
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

/* The roles a record plays in the state (gt_mem_life.roles). */
static uint8_t rec_roles(const replay *rp, const rec *r)
{
    uint8_t roles = 0;
    if (r->kind == REC_BLOCK || (r->kind == REC_DEVICE && !rp->has_blocks))
        roles |= GT_MEM_ROLE_BLOCK;
    if (r->kind == REC_SEGMENT || (r->kind == REC_DEVICE && !rp->has_segments))
        roles |= GT_MEM_ROLE_SEGMENT;
    return roles;
}

/* History: a life opens when a record is made or resized, and closes when it
 * is freed or resized. */
static int life_open(replay *rp, rec *r, int64_t t_ns)
{
    an_mem_hist *h = rp->hist;
    uint8_t roles = rec_roles(rp, r);
    r->life = -1;
    if (!h || !roles)
        return 0;
    if (h->n_lives == h->cap_lives) {
        size_t ncap = h->cap_lives ? h->cap_lives * 2 : 1024;
        gt_mem_life *nl = realloc(h->lives, ncap * sizeof *nl);
        if (!nl)
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory recording allocations");
        h->lives = nl;
        h->cap_lives = ncap;
    }
    h->lives[h->n_lives] = (gt_mem_life){t_ns, AN_ALIVE, r->start_ns, r->bytes, r->tid, r->callchain, r->address,
                                         roles, r->kind == REC_SEGMENT};
    r->life = (int64_t)h->n_lives++;
    return 0;
}

static void life_close(replay *rp, rec *r, int64_t t_ns)
{
    if (rp->hist && r->life >= 0)
        rp->hist->lives[r->life].to_ns = t_ns;
    r->life = -1;
}

static int end_rec(replay *rp, int64_t idx, int64_t t_ns)
{
    rec *r = &rp->recs[idx];
    int rc;
    life_close(rp, r, t_ns);
    if (r->kind == REC_BLOCK && (rc = count_heap_block(rp, r->heap, -1)) < 0)
        return rc;
    r->end_ns = t_ns;
    if (rp->spikes)
        mem_spike_note(rp->spikes, r);
    account(rp, r->kind, -r->bytes, t_ns);
    if ((rc = log_rec(rp, r, false, t_ns, r->bytes)) < 0 || !rp->reuse)
        return rc;
    if (rp->n_spare == rp->cap_spare) {
        size_t ncap = rp->cap_spare ? rp->cap_spare * 2 : 1024;
        int64_t *ns = realloc(rp->spare, ncap * sizeof *ns);
        if (!ns)
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory replaying allocations");
        rp->spare = ns;
        rp->cap_spare = ncap;
    }
    rp->spare[rp->n_spare++] = idx;
    return 0;
}

/* One row of the replay's process (row_ok holds). */
int mem_replay_event(replay *rp, const an_mem *e)
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
    bool alloc = is_alloc_op(e->op);
    if (e->op == AN_DEV_ALLOC) {
        int32_t dev = (int32_t)e->heap; /* the device id */
        rp->device = rp->device == -1 || rp->device == dev ? dev : -2;
    }
    /* A heap is known by its handle: nvtxMemHeapUnregister gives no address.
     * Its record keeps the address it was registered with. Handles are the
     * process's own: this replay sees one process. */
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
        life_close(rp, r, e->t_ns);
        r->bytes = e->bytes;
        if ((rc = life_open(rp, r, e->t_ns)) < 0)
            return rc;
        return log_rec(rp, r, true, e->t_ns, r->bytes);
    }
    if (rp->n_spare == 0 && rp->n_recs == rp->cap_recs) {
        size_t ncap = rp->cap_recs ? rp->cap_recs * 2 : 1024;
        rec *nr = realloc(rp->recs, ncap * sizeof *nr);
        if (!nr)
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory replaying allocations");
        rp->recs = nr;
        rp->cap_recs = ncap;
    }
    int64_t idx = rp->n_spare > 0 ? rp->spare[--rp->n_spare] : (int64_t)rp->n_recs++;
    rec *r = &rp->recs[idx];
    *r = (rec){e->t_ns, AN_ALIVE, address, e->heap, e->bytes, e->tid, e->callchain, e->stream, kind, -1, rp->n_made++};
    if ((rc = life_open(rp, r, e->t_ns)) < 0 || (rc = map_put(mp, key, idx)) < 0 ||
        (kind == REC_BLOCK && (rc = count_heap_block(rp, e->heap, 1)) < 0))
        return rc;
    account(rp, kind, e->bytes, e->t_ns);
    return log_rec(rp, r, true, e->t_ns, e->bytes);
}

void mem_replay_init(replay *rp, const an_model *m, const proc_mem *p)
{
    memset(rp, 0, sizeof *rp);
    rp->m = m;
    rp->p = p;
    rp->device = -1;
    for (size_t i = 0; i < p->n; i++) {
        int8_t op = p->ev[i].op;
        rp->has_blocks |= op == AN_BLOCK_ALLOC;
        rp->has_segments |= op == AN_SEG_ALLOC;
        rp->has_device |= op == AN_DEV_ALLOC;
    }
}

/* Replays rows with time <= until_ns; returns the index of the next one. */
int mem_replay_until(replay *rp, size_t from, int64_t until_ns, size_t *out_next)
{
    size_t i = from;
    int rc;
    for (; i < rp->p->n && rp->p->ev[i].t_ns <= until_ns; i++)
        if ((rc = mem_replay_event(rp, &rp->p->ev[i])) < 0)
            return rc;
    *out_next = i;
    return 0;
}

/* The device of p's device allocations as a whole replay of p finds it: -1
 * none, -2 several. */
static int32_t rows_device(const proc_mem *p)
{
    int32_t device = -1;
    for (size_t i = 0; i < p->n; i++)
        if (p->ev[i].op == AN_DEV_ALLOC)
            device = device == -1 || device == (int32_t)p->ev[i].heap ? (int32_t)p->ev[i].heap : -2;
    return device;
}

static int cmp_life_from(const void *a, const void *b)
{
    const gt_mem_life *x = a, *y = b;
    if (x->from_ns != y->from_ns)
        return x->from_ns < y->from_ns ? -1 : 1;
    return (x->address > y->address) - (x->address < y->address);
}

int mem_replay_moment(const replay *rp, int64_t t_ns, an_mem_hist *h)
{
    memset(h, 0, sizeof *h);
    h->pid = rp->p->pid;
    int32_t whole = rp->p->device < 0 ? rows_device(rp->p) : rp->p->device;
    h->device = whole >= 0 ? whole : -1;
    size_t n = 0;
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < rp->live[k].cap; i++)
            n += rp->live[k].vals[i] >= 0;
    if (!(h->samples = malloc(sizeof *h->samples)) || !(h->lives = malloc((n ? n : 1) * sizeof *h->lives)))
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory building the allocator state");
    h->samples[h->n_samples++] = (gt_mem_sample){t_ns, rp->allocated, rp->reserved};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < rp->live[k].cap; i++) {
            if (rp->live[k].vals[i] < 0)
                continue;
            const rec *r = &rp->recs[rp->live[k].vals[i]];
            uint8_t roles = rec_roles(rp, r);
            if (roles)
                h->lives[h->n_lives++] = (gt_mem_life){r->start_ns, AN_ALIVE, r->start_ns, r->bytes, r->tid,
                                                       r->callchain, r->address, roles, r->kind == REC_SEGMENT};
        }
    h->cap_lives = n;
    if (h->n_lives > 1)
        qsort(h->lives, h->n_lives, sizeof *h->lives, cmp_life_from);
    return an_mem_hist_index(h);
}

int mem_replay_step_peak(const an_model *m, const proc_mem *p, const gt_step *step, int64_t *out_ns)
{
    replay rp;
    size_t i;
    mem_replay_init(&rp, m, p);
    rp.reuse = true;
    int rc = mem_replay_until(&rp, 0, step->start_ns, &i);
    int64_t best = rp.allocated;
    *out_ns = step->start_ns;
    for (; rc == 0 && i < p->n && p->ev[i].t_ns < step->end_ns; i++) {
        if ((rc = mem_replay_event(&rp, &p->ev[i])) < 0)
            break;
        if (i + 1 < p->n && p->ev[i + 1].t_ns == p->ev[i].t_ns)
            continue; /* events of one nanosecond settle before we look */
        if (rp.allocated > best) {
            best = rp.allocated;
            *out_ns = p->ev[i].t_ns;
        }
    }
    mem_replay_free(&rp);
    return rc;
}

/* One process's figures: its replay, step by step, so each step gets its
 * counts and its end state. */
static int memory_of(gt_memory *mem, const an_model *m, const proc_mem *p, gt_step *steps, size_t n_steps)
{
    replay rp;
    int rc = 0;
    size_t next = 0;
    memset(mem, 0, sizeof *mem);
    mem_replay_init(&rp, m, p);
    /* leaks are the live records at the end, spikes noted as they end:
     * records of freed blocks can be reused */
    spike_watch sw = {.kind = rp.has_blocks ? REC_BLOCK : REC_DEVICE, .max_life = mem_spike_max_life(m, steps, n_steps)};
    rp.spikes = &sw;
    rp.reuse = true;
    if (sw.max_life < 0) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        goto cleanup;
    }
    mem->pid = p->pid;
    mem->has_blocks = rp.has_blocks;
    mem->has_segments = rp.has_segments;
    mem->has_device = rp.has_device;
    for (size_t s = 0; s < n_steps; s++) {
        int64_t before[7];
        if ((rc = mem_replay_until(&rp, next, just_before(steps[s].start_ns), &next)) < 0)
            goto cleanup;
        memcpy(before, rp.n_ops, sizeof before);
        if ((rc = mem_replay_until(&rp, next, just_before(steps[s].end_ns), &next)) < 0)
            goto cleanup;
        steps[s].n_dev_allocs = rp.n_ops[AN_DEV_ALLOC] - before[AN_DEV_ALLOC];
        steps[s].n_dev_frees = rp.n_ops[AN_DEV_FREE] - before[AN_DEV_FREE];
        steps[s].n_block_allocs = rp.n_ops[AN_BLOCK_ALLOC] - before[AN_BLOCK_ALLOC];
        steps[s].n_block_frees = rp.n_ops[AN_BLOCK_FREE] - before[AN_BLOCK_FREE];
        steps[s].allocated_end_bytes = rp.allocated;
    }
    if ((rc = mem_replay_until(&rp, next, INT64_MAX, &next)) < 0)
        goto cleanup;
    mem->device_id = p->device >= 0 ? p->device : rp.device == -2 ? -1 : rp.device;
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
    if ((rc = mem_find_leaks(mem, &rp, steps, n_steps)) < 0 || (rc = mem_find_spikes(mem, &rp, steps, n_steps)) < 0)
        goto cleanup;
cleanup:
    mem_replay_free(&rp);
    return rc;
}

/* The process whose thread the report's steps are ranges of; -1 unknown. */
static int64_t steps_owner(const an_model *m, const gt_step *steps, size_t n_steps)
{
    if (n_steps == 0)
        return -1;
    for (size_t i = 0; i < m->n_ranges; i++) {
        const an_range *g = &m->ranges[i];
        if (g->start_ns == steps[0].start_ns && g->end_ns == steps[0].end_ns)
            return gt_pid_of(g->tid);
    }
    return -1;
}

/* The steps a process's leaks and churn are measured over: its own step
 * ranges numbered like the report's (a rank of a job has its own), else a
 * copy of the report's. Into *out (malloc'd). */
static int steps_for(gt_step **out, size_t *out_n, const an_model *m, int64_t pid, const gt_step *steps,
                     size_t n_steps)
{
    an_steps own = {0};
    int rc;
    *out = NULL;
    *out_n = 0;
    if (n_steps == 0)
        return 0;
    if ((rc = an_steps_find_pid(&own, m, pid)) < 0)
        return rc;
    int64_t lo = steps[0].number, hi = steps[0].number;
    for (size_t i = 1; i < n_steps; i++) {
        lo = steps[i].number < lo ? steps[i].number : lo;
        hi = steps[i].number > hi ? steps[i].number : hi;
    }
    size_t n = 0;
    for (size_t i = 0; i < own.n; i++)
        if (own.v[i].number >= lo && own.v[i].number <= hi)
            own.v[n++] = own.v[i];
    if (n > 0) {
        *out = own.v;
        *out_n = n;
        return 0;
    }
    free(own.v);
    if (!(*out = malloc(n_steps * sizeof **out)))
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    memcpy(*out, steps, n_steps * sizeof **out);
    *out_n = n_steps;
    return 0;
}

/* All processes at once: each process's replay advanced in time order, the
 * sums of their allocated and reserved bytes after each row. */
static int total_of(gt_memory *mem, const an_model *m, const mem_split *sp)
{
    replay *rps = calloc(sp->n, sizeof *rps);
    size_t *next = calloc(sp->n, sizeof *next);
    int64_t allocated = 0, reserved = 0;
    int rc = 0;
    if (!rps || !next) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        goto cleanup;
    }
    for (size_t k = 0; k < sp->n; k++) {
        mem_replay_init(&rps[k], m, &sp->v[k]);
        rps[k].reuse = true; /* only the totals are read */
    }
    for (;;) {
        size_t best = sp->n;
        for (size_t k = 0; k < sp->n; k++)
            if (next[k] < sp->v[k].n && (best == sp->n || sp->v[k].ev[next[k]].t_ns < sp->v[best].ev[next[best]].t_ns))
                best = k;
        if (best == sp->n)
            break;
        replay *rp = &rps[best];
        const an_mem *e = &sp->v[best].ev[next[best]++];
        int64_t a0 = rp->allocated, r0 = rp->reserved;
        if ((rc = mem_replay_event(rp, e)) < 0)
            goto cleanup;
        allocated = gt_sat_add(allocated, gt_sat_sub(rp->allocated, a0));
        reserved = gt_sat_add(reserved, gt_sat_sub(rp->reserved, r0));
        if (allocated > mem->total_peak_allocated_bytes) {
            mem->total_peak_allocated_bytes = allocated;
            mem->total_peak_allocated_ns = e->t_ns;
        }
        if (reserved > mem->total_peak_reserved_bytes) {
            mem->total_peak_reserved_bytes = reserved;
            mem->total_peak_reserved_ns = e->t_ns;
        }
    }
cleanup:
    for (size_t k = 0; rps && k < sp->n; k++)
        mem_replay_free(&rps[k]);
    free(rps);
    free(next);
    return rc;
}

static int cmp_leak(const void *a, const void *b)
{
    const gt_leak *x = a, *y = b;
    return (x->alive_bytes < y->alive_bytes) - (x->alive_bytes > y->alive_bytes);
}

static int cmp_spike(const void *a, const void *b)
{
    const gt_spike *x = a, *y = b;
    return (x->bytes < y->bytes) - (x->bytes > y->bytes);
}

/* The whole memory's figures: those of the process that reserved most (what
 * a device's limit is compared with), with every process's leaks and spikes
 * (copies), biggest first. */
static int summarize(gt_memory *mem)
{
    size_t w = 0, n_leaks = 0, n_spikes = 0;
    for (size_t i = 0; i < mem->n_procs; i++) {
        const gt_memory *p = &mem->procs[i], *b = &mem->procs[w];
        if (p->peak_reserved_bytes > b->peak_reserved_bytes ||
            (p->peak_reserved_bytes == b->peak_reserved_bytes && p->peak_allocated_bytes > b->peak_allocated_bytes))
            w = i;
        mem->has_blocks |= p->has_blocks;
        mem->has_segments |= p->has_segments;
        mem->has_device |= p->has_device;
        n_leaks += p->n_leaks;
        n_spikes += p->n_spikes;
    }
    const gt_memory *b = &mem->procs[w];
    mem->pid = b->pid;
    mem->device_id = b->device_id;
    mem->peak_allocated_bytes = b->peak_allocated_bytes;
    mem->peak_allocated_ns = b->peak_allocated_ns;
    mem->peak_reserved_bytes = b->peak_reserved_bytes;
    mem->peak_reserved_ns = b->peak_reserved_ns;
    mem->end_allocated_bytes = b->end_allocated_bytes;
    mem->end_reserved_bytes = b->end_reserved_bytes;
    mem->fragmentation = b->fragmentation;
    mem->n_dev_allocs = b->n_dev_allocs;
    mem->n_dev_frees = b->n_dev_frees;
    mem->n_block_allocs = b->n_block_allocs;
    mem->n_block_frees = b->n_block_frees;
    mem->dev_churn_per_step = b->dev_churn_per_step;
    mem->block_churn_per_step = b->block_churn_per_step;
    if ((n_leaks && !(mem->leaks = calloc(n_leaks, sizeof *mem->leaks))) ||
        (n_spikes && !(mem->spikes = calloc(n_spikes, sizeof *mem->spikes))))
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    for (size_t i = 0; i < mem->n_procs; i++) {
        const gt_memory *p = &mem->procs[i];
        for (size_t k = 0; k < p->n_leaks; k++) {
            gt_leak *l = &mem->leaks[mem->n_leaks++];
            *l = p->leaks[k];
            if (!(l->origin = an_strdup(p->leaks[k].origin)))
                return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        }
        for (size_t k = 0; k < p->n_spikes; k++) {
            gt_spike *s = &mem->spikes[mem->n_spikes++];
            *s = p->spikes[k];
            if (!(s->origin = an_strdup(p->spikes[k].origin)))
                return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        }
    }
    if (mem->n_leaks > 1)
        qsort(mem->leaks, mem->n_leaks, sizeof *mem->leaks, cmp_leak);
    if (mem->n_spikes > 1)
        qsort(mem->spikes, mem->n_spikes, sizeof *mem->spikes, cmp_spike);
    /* One pool holds them all when no two are on different known devices. */
    mem->total_one_pool = true;
    for (size_t i = 1; i < mem->n_procs; i++)
        if (mem->procs[i].device_id != mem->procs[0].device_id &&
            (mem->procs[i].device_id >= 0 || mem->procs[0].device_id >= 0))
            mem->total_one_pool = false;
    return 0;
}

int an_memory(gt_memory *mem, const an_model *m, gt_step *steps, size_t n_steps)
{
    mem_split sp;
    int64_t owner;
    int rc;
    memset(mem, 0, sizeof *mem);
    mem->device_id = -1;
    for (size_t s = 0; s < n_steps; s++) {
        steps[s].n_dev_allocs = steps[s].n_dev_frees = steps[s].n_block_allocs = steps[s].n_block_frees = 0;
        steps[s].allocated_end_bytes = 0;
    }
    if ((rc = mem_split_procs(&sp, m)) < 0)
        return rc;
    mem->n_skipped_rows = sp.n_skipped;
    if (m->t) {
        size_t n_gpus = 0;
        const gt_gpu_info *gpus = gt_trace_gpus(m->t, &n_gpus);
        for (size_t i = 0; i < n_gpus; i++)
            if (gpus[i].total_memory_bytes > mem->total_device_bytes)
                mem->total_device_bytes = gpus[i].total_memory_bytes;
    }
    if (sp.n == 0)
        goto cleanup;
    if (!(mem->procs = calloc(sp.n, sizeof *mem->procs))) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        goto cleanup;
    }
    /* The report's steps are one process's: that process writes their counts. */
    owner = sp.n == 1 ? sp.v[0].pid : steps_owner(m, steps, n_steps);
    if (split_find(&sp, owner) == sp.n)
        owner = sp.v[0].pid; /* steps of a process without allocations: the first process counts */
    for (size_t i = 0; i < sp.n; i++) {
        gt_step *ps = steps;
        size_t pn = n_steps;
        /* of a process on several devices, its first device's allocator */
        bool own = sp.v[i].pid == owner && (i == 0 || sp.v[i - 1].pid != owner);
        if (!own && (rc = steps_for(&ps, &pn, m, sp.v[i].pid, steps, n_steps)) < 0)
            goto cleanup;
        rc = memory_of(&mem->procs[i], m, &sp.v[i], ps, pn);
        mem->procs[i].total_device_bytes = mem->total_device_bytes;
        mem->n_procs++;
        if (!own)
            free(ps);
        if (rc < 0)
            goto cleanup;
    }
    if ((rc = total_of(mem, m, &sp)) < 0 || (rc = summarize(mem)) < 0)
        goto cleanup;
cleanup:
    mem_split_free(&sp);
    return rc;
}

static void memory_clear_one(gt_memory *mem)
{
    for (size_t i = 0; i < mem->n_leaks; i++)
        free(mem->leaks[i].origin);
    free(mem->leaks);
    for (size_t i = 0; i < mem->n_spikes; i++)
        free(mem->spikes[i].origin);
    free(mem->spikes);
}

void an_memory_clear(gt_memory *mem)
{
    for (size_t i = 0; i < mem->n_procs; i++)
        memory_clear_one(&mem->procs[i]);
    free(mem->procs);
    memory_clear_one(mem);
    memset(mem, 0, sizeof *mem);
}

int an_memory_pids(const an_model *m, int64_t **out, size_t *out_n)
{
    mem_split sp;
    int rc;
    *out = NULL;
    *out_n = 0;
    if ((rc = mem_split_procs(&sp, m)) < 0)
        return rc;
    if (sp.n > 0) {
        if (!(*out = malloc(sp.n * sizeof **out)))
            rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        for (size_t i = 0; *out && i < sp.n; i++) /* a process on several devices once */
            if (*out_n == 0 || (*out)[*out_n - 1] != sp.v[i].pid)
                (*out)[(*out_n)++] = sp.v[i].pid;
    }
    mem_split_free(&sp);
    return rc;
}
