/* memory_history.c: the allocator's whole history off full replays
 * (memory.c's): its actions in time order, handed out one at a time or kept
 * (for the Chrome and memviz exports), and every allocation's lives with the
 * totals after each event (an_mem_hist, which memory_state.c reads). */
#include "memory_int.h"

#include <stdlib.h>
#include <string.h>

/* Every selected allocator replayed side by side: at each step the one whose
 * next row is earliest (the first of them at a tie: the split is by pid), so
 * that the actions come out in time order without being kept. */
int an_memory_each_action(const an_model *m, int64_t pid, an_mem_action_fn fn, void *ctx)
{
    mem_split sp;
    emitter em = {fn, ctx, 0, 0};
    replay *rps = NULL;
    size_t *next = NULL, n = 0;
    int rc;
    if ((rc = mem_split_procs(&sp, m)) < 0)
        return rc;
    if (sp.n > 0 && (!(rps = calloc(sp.n, sizeof *rps)) || !(next = calloc(sp.n, sizeof *next)))) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory replaying allocations");
        goto cleanup;
    }
    for (size_t k = 0; k < sp.n; k++) {
        if (pid >= 0 && sp.v[k].pid != pid)
            continue;
        mem_replay_init(&rps[n], m, &sp.v[k]);
        rps[n].reuse = true;
        rps[n++].out = &em;
    }
    while (rc == 0 && em.status == 0) {
        size_t best = n;
        for (size_t k = 0; k < n; k++)
            if (next[k] < rps[k].p->n &&
                (best == n || rps[k].p->ev[next[k]].t_ns < rps[best].p->ev[next[best]].t_ns))
                best = k;
        if (best == n)
            break;
        rc = mem_replay_event(&rps[best], &rps[best].p->ev[next[best]++]);
    }
cleanup:
    for (size_t k = 0; k < n; k++)
        mem_replay_free(&rps[k]);
    free(rps);
    free(next);
    mem_split_free(&sp);
    return rc < 0 ? rc : em.status < 0 ? em.status : 0;
}

typedef struct action_list { an_mem_action *v; size_t n, cap; } action_list;

static int keep_action(void *ctx, const an_mem_action *a)
{
    action_list *l = ctx;
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 1024;
        an_mem_action *nv = realloc(l->v, ncap * sizeof *nv);
        if (!nv)
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory logging allocations");
        l->v = nv;
        l->cap = ncap;
    }
    l->v[l->n++] = *a;
    return 0;
}

int an_memory_actions_pid(const an_model *m, int64_t pid, an_mem_action **out, size_t *out_n)
{
    action_list l = {0};
    int rc = an_memory_each_action(m, pid, keep_action, &l);
    if (rc < 0) {
        free(l.v);
        l = (action_list){0};
    }
    *out = l.v;
    *out_n = l.n;
    return rc;
}

int an_memory_actions(const an_model *m, an_mem_action **out, size_t *out_n)
{
    return an_memory_actions_pid(m, -1, out, out_n);
}

/* ---- history ------------------------------------------------------------ */

void an_mem_hists_free(an_mem_hist *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        free(v[i].samples);
        free(v[i].lives);
        free(v[i].span_at);
        free(v[i].span);
    }
    free(v);
}

/* One process's whole replay, every event's totals and every life kept. */
static int hist_of(an_mem_hist *h, const an_model *m, const proc_mem *p)
{
    replay rp;
    int rc = 0;
    h->pid = p->pid;
    h->device = p->device;
    mem_replay_init(&rp, m, p);
    rp.hist = h;
    if (p->n && !(h->samples = malloc(p->n * sizeof *h->samples)))
        goto nomem;
    for (size_t i = 0; i < p->n; i++) {
        if ((rc = mem_replay_event(&rp, &p->ev[i])) < 0)
            goto cleanup;
        h->samples[h->n_samples++] = (gt_mem_sample){p->ev[i].t_ns, rp.allocated, rp.reserved};
    }
    if (h->device < 0)
        h->device = rp.device >= 0 ? rp.device : -1;
    rc = an_mem_hist_index(h);
    goto cleanup;
nomem:
    rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory recording allocations");
cleanup:
    mem_replay_free(&rp);
    return rc;
}

int an_memory_hists(an_mem_hist **out, size_t *out_n, const an_model *m)
{
    mem_split sp;
    an_mem_hist *v = NULL;
    int rc;
    *out = NULL;
    *out_n = 0;
    if ((rc = mem_split_procs(&sp, m)) < 0)
        return rc;
    if (!(v = calloc(sp.n ? sp.n : 1, sizeof *v))) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        goto cleanup;
    }
    v[0].device = -1;
    for (size_t k = 0; k < sp.n && rc == 0; k++)
        rc = hist_of(&v[k], m, &sp.v[k]);
    if (rc == 0) {
        *out = v;
        *out_n = sp.n ? sp.n : 1; /* none: one empty process 0 */
        v = NULL;
    }
cleanup:
    an_mem_hists_free(v, sp.n);
    mem_split_free(&sp);
    return rc;
}

/* ---- the allocator at a moment, from replays --------------------------- */

static int replay_peak(void *ctx, const an_model *m, size_t k, const gt_step *step, int64_t *out_ns)
{
    const mem_split *sp = ctx;
    *out_ns = step->start_ns;
    return k < sp->n ? mem_replay_step_peak(m, &sp->v[k], step, out_ns) : 0;
}

static int replay_state(void *ctx, const an_model *m, size_t k, int64_t at_ns, gt_mem_state **out)
{
    const mem_split *sp = ctx;
    an_mem_hist *h = calloc(1, sizeof *h);
    int rc = h ? 0 : gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    if (rc == 0 && k < sp->n) {
        replay rp;
        size_t next;
        mem_replay_init(&rp, m, &sp->v[k]);
        rp.reuse = true;
        if ((rc = mem_replay_until(&rp, 0, at_ns, &next)) == 0)
            rc = mem_replay_moment(&rp, at_ns, h);
        mem_replay_free(&rp);
    } else if (rc == 0) {
        h->device = -1; /* no allocator: an empty one, as an_memory_hists has */
    }
    if (rc == 0)
        rc = an_mem_hist_state(out, m, h, at_ns);
    an_mem_hists_free(h, h ? 1 : 0);
    return rc;
}

int an_memory_states_at(gt_mem_states **out, const an_model *m, int64_t pid, int64_t at_ns, int64_t step)
{
    mem_split sp;
    int rc;
    *out = NULL;
    if ((rc = mem_split_procs(&sp, m)) < 0)
        return rc;
    /* the allocators as an_memory_hists lists them, without their histories */
    size_t n = sp.n ? sp.n : 1;
    an_mem_hist *v = calloc(n, sizeof *v);
    if (!v) {
        mem_split_free(&sp);
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    }
    v[0].device = -1;
    for (size_t k = 0; k < sp.n; k++)
        v[k] = (an_mem_hist){.pid = sp.v[k].pid, .device = sp.v[k].device, .n_samples = sp.v[k].n};
    an_mem_reader rd = {replay_peak, replay_state, &sp};
    rc = an_mem_states_read(out, m, v, n, pid, at_ns, step, &rd);
    free(v);
    mem_split_free(&sp);
    return rc;
}
