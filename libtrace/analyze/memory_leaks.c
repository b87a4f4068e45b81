/* memory_leaks.c: leaks and spikes, read off a process's finished replay
 * (memory.c): allocations never freed grouped by who made them, kept when
 * their total grew step over step; and the big short-lived blocks that made
 * a step's peak. It judges nothing (advice.c does) and replays nothing. */
#include "memory_int.h"

#include <stdlib.h>
#include <string.h>

static int step_of(const gt_step *steps, size_t n, int64_t t)
{
    size_t lo = GT_UPPER_BOUND(steps, n, start_ns, t);
    if (lo == 0 || t >= steps[lo - 1].end_ns)
        return -1;
    return (int)(lo - 1);
}

typedef struct leak_group {
    gt_string_id range; int64_t callchain;
    int64_t n, bytes, bytes_in_steps, n_steps_grew, last_step;
    int64_t first_ns, last_ns, first_tid;
} leak_group;

typedef struct made { int64_t seq, idx; } made; /* a live record, by when it was made */

static int cmp_made(const void *a, const void *b)
{
    const made *x = a, *y = b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

int mem_find_leaks(gt_memory *mem, const replay *rp, const gt_step *steps, size_t n_steps)
{
    const an_model *m = rp->m;
    int8_t kind = rp->has_blocks ? REC_BLOCK : REC_DEVICE;
    leak_group *gs = NULL;
    size_t n_g = 0, cap_g = 0, n_leaks = 0, n_live = 0;
    int rc = 0;
    /* "Grew step over step" needs steps to compare. */
    if (n_steps < 3)
        return 0;
    /* the live records of the kind, in the order they were made */
    const live_map *lm = &rp->live[kind];
    made *live = malloc((lm->cap ? lm->cap : 1) * sizeof *live);
    if (!live)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory finding leaks");
    for (size_t h = 0; h < lm->cap; h++)
        if (lm->vals[h] >= 0)
            live[n_live++] = (made){rp->recs[lm->vals[h]].seq, lm->vals[h]};
    if (n_live > 1)
        qsort(live, n_live, sizeof *live, cmp_made);
    for (size_t i = 0; i < n_live; i++) {
        const rec *r = &rp->recs[live[i].idx];
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
        lg->bytes = gt_sat_add(lg->bytes, r->bytes);
        lg->last_ns = r->start_ns;
        if (s >= 0) {
            lg->bytes_in_steps = gt_sat_add(lg->bytes_in_steps, r->bytes);
            if (s != lg->last_step)
                lg->n_steps_grew++;
            lg->last_step = s;
        }
    }
    /* A leak grew in at least three steps and in half of them: weights and
     * optimizer state, made once, never qualify. */
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
        l->pid = rp->p->pid;
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
    free(live);
    return rc;
}

int64_t mem_spike_max_life(const an_model *m, const gt_step *steps, size_t n_steps)
{
    if (n_steps == 0)
        return gt_sat_sub(m->span_end_ns, m->span_start_ns) / 100;
    int64_t *d = malloc(n_steps * sizeof *d);
    if (!d)
        return -1;
    for (size_t i = 0; i < n_steps; i++)
        d[i] = gt_sat_sub(steps[i].end_ns, steps[i].start_ns);
    qsort(d, n_steps, sizeof *d, gt_cmp_i64);
    int64_t max_life = d[n_steps / 2] / 2;
    free(d);
    return max_life;
}

/* a before b: more bytes, then made earlier */
static bool spike_before(const rec *a, const rec *b)
{
    return a->bytes > b->bytes || (a->bytes == b->bytes && a->seq < b->seq);
}

void mem_spike_note(spike_watch *w, const rec *r)
{
    if (r->kind != w->kind || r->end_ns - r->start_ns > w->max_life)
        return;
    size_t at;
    if (w->n < MEM_SPIKES)
        at = w->n++;
    else if (spike_before(r, &w->top[MEM_SPIKES - 1]))
        at = MEM_SPIKES - 1; /* the last one leaves */
    else
        return;
    w->top[at] = *r;
    for (; at > 0 && spike_before(&w->top[at], &w->top[at - 1]); at--) { /* kept in order */
        rec t = w->top[at];
        w->top[at] = w->top[at - 1];
        w->top[at - 1] = t;
    }
}

/* Spikes: blocks of at least a tenth of the peak that lived less than half a
 * median step (mem_spike_max_life), biggest first. */
int mem_find_spikes(gt_memory *mem, const replay *rp, const gt_step *steps, size_t n_steps)
{
    const an_model *m = rp->m;
    const spike_watch *w = rp->spikes;
    int64_t min_bytes = rp->peak_alloc / 10;
    size_t n_top = 0;
    if (!w || min_bytes <= 0)
        return 0;
    while (n_top < w->n && w->top[n_top].bytes >= min_bytes)
        n_top++;
    if (n_top == 0)
        return 0;
    mem->spikes = calloc(n_top, sizeof *mem->spikes);
    if (!mem->spikes)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    for (size_t k = 0; k < n_top; k++) {
        const rec *r = &w->top[k];
        gt_spike *s = &mem->spikes[mem->n_spikes++];
        s->pid = rp->p->pid;
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
    return 0;
}
