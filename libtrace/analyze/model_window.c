/* model_window.c: the model `gtrace report --steps A:B` reads on a trace
 * whose whole-trace facts were kept at close (an_whole, report_window.c).
 * The NVTX ranges and memory events are read whole, as
 * an_model_load_memory reads them: the steps, the range a gap or an
 * allocation falls in, the Memory section's whole history. Of the device
 * timeline and the API calls, only the rows the window's analyses reach,
 * through the store's time ranges, [A, B) being the selected steps' span:
 *
 *   activities starting in [A - max_act, B): an_first_act looks back no
 *       further, so every loop over the window starts among them;
 *   calls starting in [A - back, B + launch_after): back is the longer of
 *       the longest call (one overlapping a gap in the window) and max_act
 *       plus launch_before (the launch of an activity running into it).
 *
 * The thread of a device allocation is its call's, read by correlation id
 * among the calls starting near it (as near as the whole model found them).
 * A correlation id resolves to the call it does in the whole model: that
 * call is among those read, and model_index.c's rule picks it from any set
 * of the id's calls that holds it (the first runtime call, else the last
 * driver call, else the last wrapper). What the rows read cannot say (the
 * span, rows refused, row counts, the main thread, the devices, the longest
 * activity, whether there are kernels or failed allocations) is the facts'.
 * Which traces get facts, and so this read, is report_window.c's choice. */
#include "model_int.h"

#include <stdlib.h>
#include <string.h>

/* [*from, *to): the span of the steps opt selects, as report.c's
 * select_steps makes the report's window; *any false when it selects none
 * (the report then says so, from the ranges read whole). */
static int window_of(const an_model *m, const gt_report_options *opt, int64_t *from, int64_t *to, bool *any)
{
    an_steps all = {0};
    int rc = an_steps_find(&all, m);
    *any = false;
    *from = *to = 0;
    for (size_t i = 0; rc == 0 && i < all.n; i++) {
        const gt_step *s = &all.v[i];
        if ((opt->step_first >= 0 && s->number < opt->step_first) ||
            (opt->step_last >= 0 && s->number > opt->step_last))
            continue;
        if (!*any)
            *from = *to = s->start_ns;
        if (s->end_ns > *to)
            *to = s->end_ns;
        *any = true;
    }
    free(all.v);
    return rc;
}

static int no_finish(an_model *m)
{
    (void)m;
    return 0;
}

/* Calls of these correlation ids starting in [from, to) into calls. */
static int read_calls(an_model *calls, gt_trace *t, load_state *ls, const int64_t *corrs, size_t n, int64_t from,
                      int64_t to, bool ranged)
{
    static const gt_event_kind api_kind[] = {GT_EV_API};
    loader L = {.m = calls, .t = t, .ls = ls, .kinds = api_kind, .n_kinds = 1, .finish = no_finish,
                .only_corr = corrs, .n_only_corr = n, .ranged = ranged, .from_ns = from, .to_ns = to};
    int rc = an_load_run(&L);
    return rc < 0 ? gt_error_set(rc, "%s", L.msg) : 0;
}

/* The calls of m's device allocations: those starting near each (the facts
 * say how near the whole model found them; any call of the id there is
 * the one it resolves to, and none elsewhere can be), each stretch once;
 * for very many stretches, one read of the whole table. */
static int read_alloc_calls(an_model *calls, gt_trace *t, const an_model *m, const an_whole *w, const int64_t *corrs,
                            size_t n_corrs)
{
    enum { MAX_STRETCHES = 256 };
    int64_t from[MAX_STRETCHES], to[MAX_STRETCHES];
    size_t n = 0;
    load_state ls;
    int rc = 0;
    memset(&ls, 0, sizeof ls);
    for (size_t i = 0; i < m->n_mem && n <= MAX_STRETCHES; i++) { /* by time */
        const an_mem *e = &m->mem[i];
        if (e->op != AN_DEV_ALLOC && e->op != AN_DEV_FREE)
            continue;
        int64_t a = gt_sat_sub(e->t_ns, w->alloc_before_ns), b = gt_sat_add(gt_sat_add(e->t_ns, w->alloc_after_ns), 1);
        if (n > 0 && a <= to[n - 1])
            to[n - 1] = b > to[n - 1] ? b : to[n - 1];
        else if (n < MAX_STRETCHES)
            from[n] = a, to[n++] = b;
        else
            n++; /* too many: the whole table */
    }
    for (size_t k = 0; k < n && n <= MAX_STRETCHES && rc == 0; k++)
        rc = read_calls(calls, t, &ls, corrs, n_corrs, from[k], to[k], true);
    if (n > MAX_STRETCHES)
        rc = read_calls(calls, t, &ls, corrs, n_corrs, 0, 0, false);
    if (rc == 0)
        rc = an_load_finish_device(calls);
    free(ls.ops);
    return rc;
}

/* Device allocations carry the correlation id of their call in `tid`: the
 * thread is that call's, else the main thread, as an_model_load does. */
static int alloc_threads(an_model *m, gt_trace *t, const an_whole *w)
{
    an_model *calls = NULL;
    int64_t *corrs = NULL;
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; i < m->n_mem; i++)
        n += m->mem[i].op == AN_DEV_ALLOC || m->mem[i].op == AN_DEV_FREE;
    if (n == 0)
        return 0;
    if (!(corrs = malloc(n * sizeof *corrs)) || !(calls = calloc(1, sizeof *calls))) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory loading the trace");
        goto cleanup;
    }
    n = 0;
    for (size_t i = 0; i < m->n_mem; i++)
        if (m->mem[i].op == AN_DEV_ALLOC || m->mem[i].op == AN_DEV_FREE)
            corrs[n++] = m->mem[i].tid;
    qsort(corrs, n, sizeof *corrs, gt_cmp_i64);
    calls->t = t;
    if ((rc = read_alloc_calls(calls, t, m, w, corrs, n)) < 0)
        goto cleanup;
    for (size_t i = 0; i < m->n_mem; i++) {
        an_mem *e = &m->mem[i];
        if (e->op != AN_DEV_ALLOC && e->op != AN_DEV_FREE)
            continue;
        const an_api *a = an_model_launch(calls, e->tid);
        e->tid = a ? a->tid : w->main_tid;
    }
cleanup:
    an_model_free(calls);
    free(corrs);
    return rc;
}

/* The device timeline and calls of [from, to) (see the head comment);
 * none when no step is selected. A window of one empty step still looks
 * back from its instant. */
static int load_device(an_model *m, gt_trace *t, load_state *ls, const an_whole *w, int64_t from, int64_t to,
                       bool any)
{
    static const gt_event_kind act_kinds[] = {GT_EV_KERNEL, GT_EV_MEMCPY, GT_EV_MEMSET};
    static const gt_event_kind api_kind[] = {GT_EV_API};
    int64_t act_from = gt_sat_sub(from, w->max_act_ns);
    int64_t back = gt_sat_add(w->max_act_ns, w->launch_before_ns);
    if (w->max_api_ns > back)
        back = w->max_api_ns;
    loader acts = {.m = m, .t = t, .ls = ls, .kinds = act_kinds, .n_kinds = 3, .finish = no_finish,
                   .ranged = true, .from_ns = any ? act_from : 0, .to_ns = any ? to : 0};
    loader apis = {.m = m, .t = t, .ls = ls, .kinds = api_kind, .n_kinds = 1, .finish = an_load_finish_device,
                   .ranged = true, .from_ns = any ? gt_sat_sub(from, back) : 0,
                   .to_ns = any ? gt_sat_add(to, w->launch_after_ns) : 0};
    int rc;
    if ((rc = an_load_run(&acts)) < 0 || (rc = an_load_run(&apis)) < 0)
        return gt_error_set(rc, "%s", acts.rc < 0 ? acts.msg : apis.msg);
    bool cpu_ops; /* of the window: whether the trace has a CPU timeline is the facts' */
    loader cpu = acts;
    if ((rc = an_load_cpu(m, ls, &cpu, w->any_kernel, &cpu_ops)) < 0)
        return rc;
    an_index_rest(m);
    /* drops nothing: facts are kept only for traces where the whole model
     * dropped no wrapper, and a window's calls are some of its calls */
    return an_drop_wrappers(m);
}

int an_model_load_window(an_model **out, gt_trace *t, const an_whole *w, const gt_report_options *opt)
{
    an_model *m = NULL;
    load_state ls;
    int64_t from = 0, to = 0, host_refused;
    bool any;
    int rc;
    memset(&ls, 0, sizeof ls);
    *out = NULL;
    if ((rc = an_load_host_only(&m, t, &ls, &host_refused)) < 0)
        goto cleanup;
    if ((rc = window_of(m, opt, &from, &to, &any)) < 0 || (rc = load_device(m, t, &ls, w, from, to, any)) < 0 ||
        (rc = alloc_threads(m, t, w)) < 0)
        goto cleanup;
    /* what the window's rows cannot say */
    m->windowed = true;
    m->whole = *w;
    m->max_act_ns = w->max_act_ns;
    m->main_tid = w->main_tid;
    m->cpu_timeline = w->cpu_timeline;
    m->n_refused = w->n_refused;
    m->span_start_ns = w->span_start_ns;
    m->span_end_ns = w->span_end_ns;
    *out = m;
    m = NULL;
cleanup:
    free(ls.ops);
    an_model_free(m);
    return rc;
}
