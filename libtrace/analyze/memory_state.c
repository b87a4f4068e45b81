/* memory_state.c: the allocator at a moment (gtrace memory --at / --step,
 * the viewer's memory click), read from a process's history (memory.c's
 * an_mem_hist): the totals from the samples, the live segments and blocks
 * from the lives: those of the chunk begun last by then and the chunk's
 * span (the older lives still alive as it began; see an_mem_hist).
 * The viewer's histories are whole: no replay runs per query and nothing
 * here is static, so a loaded analysis answers any number of queries, from
 * any threads. gtrace memory asks through a reader (an_mem_states_read)
 * whose history is of the one moment, made by a replay up to it
 * (memory_history.c). This file does not replay events, nor judge them
 * (leaks and spikes are memory.c's). */
#include "analyze_int.h"

#include <stdlib.h>
#include <string.h>

static int cmp_seg_addr(const void *a, const void *b)
{
    const gt_mem_segment *x = a, *y = b;
    return (x->address > y->address) - (x->address < y->address);
}

/* The segment (by address, sorted) holding addr, or n: none. */
static size_t seg_of(const gt_mem_segment *segs, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (segs[mid].address <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && addr - segs[lo - 1].address < (uint64_t)segs[lo - 1].bytes)
        return lo - 1;
    return n; /* unplaced: after every segment */
}

typedef struct placed { size_t seg; gt_mem_block b; } placed;

static int cmp_placed(const void *a, const void *b)
{
    const placed *x = a, *y = b;
    if (x->seg != y->seg)
        return x->seg < y->seg ? -1 : 1;
    return (x->b.address > y->b.address) - (x->b.address < y->b.address);
}

/* The last sample at or before t; NULL: none yet. */
static const gt_mem_sample *sample_at(const an_mem_hist *h, int64_t t)
{
    size_t lo = GT_UPPER_BOUND(h->samples, h->n_samples, t_ns, t);
    return lo > 0 ? &h->samples[lo - 1] : NULL;
}

/* Alive at t: begun by then and not ended (never freed is alive even at INT64_MAX). */
static bool alive_at(int64_t to_ns, int64_t t) { return to_ns > t || to_ns == AN_ALIVE; }

/* Chunks of at least 4096 lives, larger while the spans would hold more
 * than four entries per life (very many blocks alive at once). */
int an_mem_hist_index(an_mem_hist *h)
{
    size_t chunk = 4096;
    if (h->n_lives > UINT32_MAX)
        chunk = h->n_lives; /* one chunk: no spans */
    for (;;) {
        size_t n_chunks = h->n_lives ? (h->n_lives + chunk - 1) / chunk : 0, n_span = 0, cap = 0;
        size_t *at = calloc(n_chunks + 1, sizeof *at);
        uint32_t *span = NULL, *cur = NULL, *next = NULL;
        size_t n_cur = 0;
        bool too_big = false;
        if (!at)
            goto nomem;
        /* span(c + 1): what of span(c) and chunk c is alive at chunk c + 1's start */
        for (size_t c = 0; c < n_chunks && !too_big; c++) {
            at[c] = n_span;
            if (n_span + n_cur > cap) {
                size_t ncap = (n_span + n_cur) * 2 + 1024;
                uint32_t *ns = realloc(span, ncap * sizeof *ns);
                if (!ns)
                    goto nomem_c;
                span = ns;
                cap = ncap;
            }
            if (n_cur)
                memcpy(span + n_span, cur, n_cur * sizeof *cur);
            n_span += n_cur;
            too_big = n_span > 4 * h->n_lives + 4096;
            if (c + 1 == n_chunks)
                break;
            int64_t t_next = h->lives[(c + 1) * chunk].from_ns;
            uint32_t *nn = realloc(next, (n_cur + chunk) * sizeof *nn);
            if (!nn)
                goto nomem_c;
            next = nn;
            size_t n_next = 0;
            for (size_t k = 0; k < n_cur; k++)
                if (alive_at(h->lives[cur[k]].to_ns, t_next))
                    next[n_next++] = cur[k];
            for (size_t i = c * chunk; i < (c + 1) * chunk; i++)
                if (alive_at(h->lives[i].to_ns, t_next))
                    next[n_next++] = (uint32_t)i;
            uint32_t *swap = cur;
            cur = next;
            next = swap;
            n_cur = n_next;
        }
        at[n_chunks] = n_span;
        free(cur);
        free(next);
        if (too_big) {
            free(at);
            free(span);
            chunk *= 4;
            continue;
        }
        h->chunk = chunk;
        h->n_chunks = n_chunks;
        h->span_at = at;
        h->span = span;
        return 0;
    nomem_c:
        free(cur);
        free(next);
        free(at);
        free(span);
        goto nomem;
    }
nomem:
    return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory indexing allocations");
}

/* Walks the lives alive at t: the span of the last chunk begun by t, then
 * that chunk's lives on while they began by t. */
typedef struct live_walk { size_t c, k, i; bool in_span; } live_walk;

static live_walk live_begin(const an_mem_hist *h, int64_t t)
{
    /* the first chunk begun after t: its first life's start, h->chunk lives apart */
    size_t lo = gt_upper_bound_i64(h->lives, h->n_chunks, h->chunk * sizeof *h->lives, offsetof(gt_mem_life, from_ns), t);
    if (lo == 0) /* before every life */
        return (live_walk){0, 0, h->n_lives, false};
    size_t c = lo - 1;
    return (live_walk){c, h->span_at[c], c * h->chunk, true};
}

static const gt_mem_life *next_live(const an_mem_hist *h, int64_t t, live_walk *w)
{
    if (w->in_span) {
        while (w->k < h->span_at[w->c + 1]) {
            const gt_mem_life *l = &h->lives[h->span[w->k++]];
            if (alive_at(l->to_ns, t))
                return l;
        }
        w->in_span = false;
    }
    while (w->i < h->n_lives && h->lives[w->i].from_ns <= t) {
        const gt_mem_life *l = &h->lives[w->i++];
        if (alive_at(l->to_ns, t))
            return l;
    }
    return NULL;
}

int an_mem_hist_state(gt_mem_state **out, const an_model *m, const an_mem_hist *h, int64_t at_ns)
{
    gt_mem_state *st = NULL;
    placed *pl = NULL;
    size_t n_seg = 0, n_blk = 0, n_pl = 0;
    int rc = 0;
    *out = NULL;
    st = calloc(1, sizeof *st);
    if (!st)
        goto nomem;
    const gt_mem_sample *smp = sample_at(h, at_ns);
    st->pid = h->pid;
    st->device_id = h->device;
    st->at_ns = at_ns;
    st->step = -1;
    st->allocated_bytes = smp ? smp->allocated_bytes : 0;
    st->reserved_bytes = smp ? smp->reserved_bytes : 0;
    const gt_mem_life *L;
    for (live_walk w = live_begin(h, at_ns); (L = next_live(h, at_ns, &w));) {
        n_seg += (L->roles & GT_MEM_ROLE_SEGMENT) != 0;
        n_blk += (L->roles & GT_MEM_ROLE_BLOCK) != 0;
    }
    st->segments = calloc(n_seg ? n_seg : 1, sizeof *st->segments);
    st->blocks = calloc(n_blk ? n_blk : 1, sizeof *st->blocks);
    pl = calloc(n_blk ? n_blk : 1, sizeof *pl);
    if (!st->segments || !st->blocks || !pl)
        goto nomem;
    for (live_walk w = live_begin(h, at_ns); (L = next_live(h, at_ns, &w));)
        if (L->roles & GT_MEM_ROLE_SEGMENT)
            st->segments[st->n_segments++] = (gt_mem_segment){L->address, L->bytes, L->alloc_ns, 0, 0, 0,
                                                              L->from_heap};
    if (st->n_segments > 1)
        qsort(st->segments, st->n_segments, sizeof *st->segments, cmp_seg_addr);
    for (live_walk w = live_begin(h, at_ns); (L = next_live(h, at_ns, &w));) {
        if (L->roles & GT_MEM_ROLE_BLOCK) {
            placed *q = &pl[n_pl++];
            q->b = (gt_mem_block){L->address, L->bytes, L->alloc_ns, L->tid, L->callchain_id, NULL};
            q->seg = seg_of(st->segments, st->n_segments, L->address);
            if (!(q->b.origin = an_model_origin(m, L->tid, L->alloc_ns, L->callchain_id)))
                goto nomem;
        }
    }
    if (n_pl > 1)
        qsort(pl, n_pl, sizeof *pl, cmp_placed);
    for (size_t b = 0; b < n_pl; b++) {
        st->blocks[st->n_blocks++] = pl[b].b;
        pl[b].b.origin = NULL;
        if (pl[b].seg == st->n_segments) {
            st->n_unplaced++;
            continue;
        }
        gt_mem_segment *sg = &st->segments[pl[b].seg];
        if (sg->n_blocks == 0)
            sg->first_block = b;
        sg->n_blocks++;
        sg->allocated_bytes = gt_sat_add(sg->allocated_bytes, pl[b].b.bytes);
    }
    *out = st;
    st = NULL;
    goto cleanup;
nomem:
    rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory building the allocator state");
cleanup:
    for (size_t b = 0; pl && b < n_pl; b++)
        free(pl[b].b.origin);
    free(pl);
    gt_mem_state_free(st);
    return rc;
}

int64_t an_mem_hist_step_peak(const an_mem_hist *h, const gt_step *step)
{
    /* from the state after the step's first instant: what it held before it
     * began is the step before's, and a free on its first nanosecond is its own */
    const gt_mem_sample *s0 = sample_at(h, step->start_ns);
    int64_t best = s0 ? s0->allocated_bytes : 0, best_ns = step->start_ns;
    for (size_t i = s0 ? (size_t)(s0 - h->samples) + 1 : 0; i < h->n_samples && h->samples[i].t_ns < step->end_ns;
         i++) {
        /* events of one nanosecond settle before we look */
        if (i + 1 < h->n_samples && h->samples[i + 1].t_ns == h->samples[i].t_ns)
            continue;
        if (h->samples[i].allocated_bytes > best) {
            best = h->samples[i].allocated_bytes;
            best_ns = h->samples[i].t_ns;
        }
    }
    return best_ns;
}

/* "1, 2 and 3": the processes, for messages. */
static void pid_list(char *buf, size_t n, const an_mem_hist *v, size_t nv)
{
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < nv && at + 24 < n; i++)
        if (i == 0 || v[i].pid != v[i - 1].pid) /* a process on several devices once */
            at += (size_t)snprintf(buf + at, n - at, "%s%lld", i == 0 ? "" : v[nv - 1].pid == v[i].pid ? " and " : ", ",
                                   (long long)v[i].pid);
}

int an_mem_hist_find(size_t *out, const an_mem_hist *v, size_t n, int64_t pid, const char *path)
{
    *out = 0;
    if (pid < 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (v[i].pid == pid && (v[i].n_samples > 0 || n > 1)) {
            *out = i;
            return 0;
        }
    char list[256];
    bool none = n == 1 && v[0].n_samples == 0;
    pid_list(list, sizeof list, v, none ? 0 : n);
    return gt_error_set(GT_ERR_NOTFOUND, "%s: process %lld has no allocation events (processes that have: %s)", path,
                        (long long)pid, none ? "none" : list);
}

/* The history's own answers (an_mem_states). */
static int hist_peak(void *ctx, const an_model *m, size_t k, const gt_step *step, int64_t *out_ns)
{
    *out_ns = an_mem_hist_step_peak(&((const an_mem_hist *)ctx)[k], step);
    return 0;
}

static int hist_state(void *ctx, const an_model *m, size_t k, int64_t at_ns, gt_mem_state **out)
{
    const an_mem_hist *v = ctx;
    return an_mem_hist_state(out, m, &v[k], at_ns);
}

int an_mem_states(gt_mem_states **out, const an_model *m, const an_mem_hist *v, size_t n, int64_t pid,
                  int64_t at_ns, int64_t step)
{
    an_mem_reader rd = {hist_peak, hist_state, (void *)v};
    return an_mem_states_read(out, m, v, n, pid, at_ns, step, &rd);
}

int an_mem_states_read(gt_mem_states **out, const an_model *m, const an_mem_hist *v, size_t n, int64_t pid,
                       int64_t at_ns, int64_t step, const an_mem_reader *rd)
{
    an_steps all = {0}, own = {0};
    gt_mem_states *ss = NULL;
    const char *path = m->t ? gt_trace_path(m->t) : "trace";
    size_t first = 0, count = n;
    int rc;
    *out = NULL;
    if (pid >= 0) {
        if ((rc = an_mem_hist_find(&first, v, n, pid, path)) < 0)
            return rc;
        for (count = 1; first + count < n && v[first + count].pid == pid;) /* each of its devices */
            count++;
    }
    if (step >= 0 && (rc = an_steps_find(&all, m)) < 0)
        goto cleanup;
    if (!(ss = calloc(1, sizeof *ss)) || !(ss->v = calloc(count, sizeof *ss->v))) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        goto cleanup;
    }
    for (size_t k = first; k < first + count; k++) {
        int64_t when = at_ns;
        if (step >= 0) {
            /* the process's own step N, else the trace's */
            const gt_step *st = NULL;
            free(own.v);
            own = (an_steps){0};
            if (v[k].n_samples > 0 && (rc = an_steps_find_pid(&own, m, v[k].pid)) < 0)
                goto cleanup;
            for (size_t i = 0; i < own.n && !st; i++)
                st = own.v[i].number == step ? &own.v[i] : NULL;
            for (size_t i = 0; i < all.n && !st; i++)
                st = all.v[i].number == step ? &all.v[i] : NULL;
            if (!st) {
                rc = gt_error_set(GT_ERR_NOTFOUND, "%s: no step %lld (the trace has %zu steps%s)", path,
                                  (long long)step, all.n, all.n ? "" : ": no NVTX range named \"step N\"");
                goto cleanup;
            }
            if ((rc = rd->peak(rd->ctx, m, k, st, &when)) < 0)
                goto cleanup;
        }
        if ((rc = rd->state(rd->ctx, m, k, when, &ss->v[ss->n])) < 0)
            goto cleanup;
        ss->v[ss->n++]->step = step;
    }
    *out = ss;
    ss = NULL;
    rc = 0;
cleanup:
    gt_mem_states_free(ss);
    free(all.v);
    free(own.v);
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

void gt_mem_states_free(gt_mem_states *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        gt_mem_state_free(s->v[i]);
    free(s->v);
    free(s);
}
