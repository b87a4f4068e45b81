/* analysis.c: gt_analysis, one trace analysed once. The model is loaded,
 * the report computed from it (with every idle gap kept, not only the
 * longest), each process's allocator history recorded, and the CPU timeline
 * listed; afterwards the handle only answers. It is what the CLI and the
 * viewer both read, so the two never disagree about a gap's cause, an op or
 * a peak. Queries that read the trace itself (call stacks of allocations)
 * go through the handle's lock; everything else reads immutable arrays.
 * The gt_memory_* calls on an open trace (tests, exports) build the same
 * history for one query. This file computes nothing of its own. */
#include "diff_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gt_analysis {
    an_model *m;
    gt_report *r;
    gt_gap_span *gaps; size_t n_gaps;
    gt_compute_op *ops; size_t n_ops;
    an_mem_hist *mem; size_t n_mem; /* by pid; none: one empty process 0 */
    pthread_mutex_t trace_lock;     /* the trace's statements (callchains) */
};

static int list_ops(gt_analysis *a)
{
    const an_model *m = a->m;
    size_t n = 0;
    for (size_t i = 0; i < m->n_acts; i++)
        n += m->acts[i].kind == GT_EV_CPU_OP;
    if (!m->cpu_timeline || n == 0)
        return 0;
    if (!(a->ops = malloc(n * sizeof *a->ops)))
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    for (size_t i = 0; i < m->n_acts; i++) {
        const an_act *x = &m->acts[i];
        if (x->kind == GT_EV_CPU_OP)
            a->ops[a->n_ops++] = (gt_compute_op){x->start_ns, x->end_ns, x->tid, x->stream, x->nvtx, an_str(m, x->name)};
    }
    return 0;
}

int gt_analysis_load(gt_analysis **out, gt_trace *t, const gt_report_options *opt)
{
    gt_analysis *a = NULL;
    int rc;
    *out = NULL;
    if (!t)
        return gt_error_set(GT_ERR_INVALID, "gt_analysis_load: no trace");
    if (!(a = calloc(1, sizeof *a)))
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    pthread_mutex_init(&a->trace_lock, NULL);
    if ((rc = an_model_load(&a->m, t)) < 0 || (rc = an_report_build(&a->r, a->m, opt, &a->gaps, &a->n_gaps)) < 0 ||
        (rc = an_memory_hists(&a->mem, &a->n_mem, a->m)) < 0 || (rc = list_ops(a)) < 0)
        goto cleanup;
    *out = a;
    a = NULL;
cleanup:
    gt_analysis_free(a);
    return rc;
}

void gt_analysis_free(gt_analysis *a)
{
    if (!a)
        return;
    gt_report_free(a->r);
    free(a->gaps);
    free(a->ops);
    an_mem_hists_free(a->mem, a->n_mem);
    an_model_free(a->m);
    pthread_mutex_destroy(&a->trace_lock);
    free(a);
}

const gt_report *gt_analysis_report(const gt_analysis *a) { return a->r; }

gt_report *gt_analysis_take_report(gt_analysis *a)
{
    if (!a)
        return NULL;
    gt_report *r = a->r;
    a->r = NULL;
    return r;
}

int gt_diff_run_of_analysis(gt_diff_run **out, const gt_analysis *a)
{
    *out = NULL;
    if (!a || !a->r)
        return gt_error_set(GT_ERR_INVALID, "gt_diff_run_of_analysis: no report");
    return an_diff_run_build(out, a->r, true, a->m, a->gaps, a->n_gaps);
}

const gt_gap_span *gt_analysis_gaps(const gt_analysis *a, size_t *out_n)
{
    *out_n = a->n_gaps;
    return a->gaps;
}

const gt_compute_op *gt_analysis_compute_ops(const gt_analysis *a, size_t *out_n)
{
    *out_n = a->n_ops;
    return a->ops;
}

size_t gt_analysis_n_memories(const gt_analysis *a) { return a->n_mem; }

int gt_analysis_memory(gt_mem_series *out, const gt_analysis *a, size_t i)
{
    memset(out, 0, sizeof *out);
    if (i >= a->n_mem)
        return gt_error_set(GT_ERR_NOTFOUND, "gt_analysis_memory: %zu processes, asked for %zu", a->n_mem, i);
    const an_mem_hist *h = &a->mem[i];
    *out = (gt_mem_series){h->pid, h->samples, h->n_samples, h->lives, h->n_lives, h->device};
    return 0;
}

/* The lock is the handle's own; a const handle still serializes on it. */
static pthread_mutex_t *lock_of(const gt_analysis *a) { return (pthread_mutex_t *)&a->trace_lock; }

int gt_analysis_state_at(gt_mem_state **out, const gt_analysis *a, int64_t pid, int64_t at_ns)
{
    size_t k;
    int rc;
    *out = NULL;
    if ((rc = an_mem_hist_find(&k, a->mem, a->n_mem, pid, gt_trace_path(a->m->t))) < 0)
        return rc;
    pthread_mutex_lock(lock_of(a));
    rc = an_mem_hist_state(out, a->m, &a->mem[k], at_ns);
    pthread_mutex_unlock(lock_of(a));
    return rc;
}

int gt_analysis_states_at(gt_mem_states **out, const gt_analysis *a, int64_t pid, int64_t at_ns)
{
    pthread_mutex_lock(lock_of(a));
    int rc = an_mem_states(out, a->m, a->mem, a->n_mem, pid, at_ns, -1);
    pthread_mutex_unlock(lock_of(a));
    return rc;
}

int gt_analysis_states_at_step(gt_mem_states **out, const gt_analysis *a, int64_t pid, int64_t step)
{
    *out = NULL;
    if (step < 0)
        return gt_error_set(GT_ERR_INVALID, "gt_analysis_states_at_step: step %lld", (long long)step);
    pthread_mutex_lock(lock_of(a));
    int rc = an_mem_states(out, a->m, a->mem, a->n_mem, pid, 0, step);
    pthread_mutex_unlock(lock_of(a));
    return rc;
}

char *gt_analysis_block_origin(const gt_analysis *a, int64_t pid, uint64_t address, int64_t alloc_ns)
{
    size_t k;
    if (an_mem_hist_find(&k, a->mem, a->n_mem, pid, gt_trace_path(a->m->t)) < 0)
        return an_strdup("");
    /* the process's histories, one per device, follow each other */
    for (; k < a->n_mem && a->mem[k].pid == pid; k++) {
        const an_mem_hist *h = &a->mem[k];
        /* its first life began when it was allocated: lives are by start */
        size_t lo = GT_LOWER_BOUND(h->lives, h->n_lives, from_ns, alloc_ns);
        for (size_t i = lo; i < h->n_lives && h->lives[i].from_ns == alloc_ns; i++) {
            const gt_mem_life *l = &h->lives[i];
            if (l->address != address || l->alloc_ns != alloc_ns)
                continue;
            pthread_mutex_lock(lock_of(a));
            char *o = an_model_origin(a->m, l->tid, l->alloc_ns, l->callchain_id);
            pthread_mutex_unlock(lock_of(a));
            return o;
        }
    }
    return an_strdup("");
}

/* ---- on an open trace: the memory part of an analysis, per call ---------- */

/* These load only the model's memory part (an_model_load_memory): the
 * device timeline of a big trace is most of it, and none of it is read;
 * the allocator's state is replayed up to the moment, keeping no history. */

static int states(gt_mem_states **out, gt_trace *t, int64_t pid, int64_t at_ns, int64_t step)
{
    an_model *m = NULL;
    int rc;
    *out = NULL;
    if (!t)
        return gt_error_set(GT_ERR_INVALID, "gt_memory_states: no trace");
    if ((rc = an_model_load_memory(&m, t)) == 0)
        rc = an_memory_states_at(out, m, pid, at_ns, step);
    an_model_free(m);
    return rc;
}

int gt_memory_states_at(gt_mem_states **out, gt_trace *t, int64_t pid, int64_t at_ns)
{
    return states(out, t, pid, at_ns, -1);
}

int gt_memory_states_at_step(gt_mem_states **out, gt_trace *t, int64_t pid, int64_t step)
{
    if (step < 0) {
        *out = NULL;
        return gt_error_set(GT_ERR_INVALID, "gt_memory_states_at_step: step %lld", (long long)step);
    }
    return states(out, t, pid, 0, step);
}

/* One state: pid's, or the only process's (-1). */
static int one_state(gt_mem_state **out, gt_trace *t, int64_t pid, int64_t at_ns, int64_t step)
{
    gt_mem_states *ss = NULL;
    int rc;
    *out = NULL;
    if ((rc = states(&ss, t, pid, at_ns, step)) < 0)
        return rc;
    if (ss->n != 1) {
        char list[256] = "";
        size_t at = 0;
        for (size_t i = 0; i < ss->n && at + 24 < sizeof list; i++)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%lld", i ? ", " : "", (long long)ss->v[i]->pid);
        rc = gt_error_set(GT_ERR_INVALID, "%s: %zu processes have allocation events (%s): choose one",
                          gt_trace_path(t), ss->n, list);
    } else {
        *out = ss->v[0];
        ss->v[0] = NULL;
        ss->n = 0;
    }
    gt_mem_states_free(ss);
    return rc;
}

int gt_memory_state_at(gt_mem_state **out, gt_trace *t, int64_t pid, int64_t at_ns)
{
    return one_state(out, t, pid, at_ns, -1);
}

int gt_memory_state_at_step(gt_mem_state **out, gt_trace *t, int64_t pid, int64_t step)
{
    if (step < 0) {
        *out = NULL;
        return gt_error_set(GT_ERR_INVALID, "gt_memory_state_at_step: step %lld", (long long)step);
    }
    return one_state(out, t, pid, 0, step);
}

int gt_memory_pids(int64_t **out, size_t *out_n, gt_trace *t)
{
    an_model *m = NULL;
    int rc;
    *out = NULL;
    *out_n = 0;
    if (!t)
        return gt_error_set(GT_ERR_INVALID, "gt_memory_pids: no trace");
    if ((rc = an_model_load_memory(&m, t)) < 0)
        return rc;
    rc = an_memory_pids(m, out, out_n);
    an_model_free(m);
    return rc;
}
