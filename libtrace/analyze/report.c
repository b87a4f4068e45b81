/* report.c: gt_report_compute puts the pieces together: load the trace once,
 * find the steps and the window to analyse (--steps A:B), then summary, gaps,
 * memory, the PyTorch tables, communication and advice in that order (advice
 * reads the others).
 * Rendering is in render.c. */
#include "oom.h"
#include "pytorch_int.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gt_report_options_init(gt_report_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->step_first = -1;
    opt->step_last = -1;
    opt->top_n = 10;
}

static int select_steps(gt_report *r, const an_steps *all, const gt_report_options *opt, const char *path)
{
    bool filtered = opt && (opt->step_first >= 0 || opt->step_last >= 0);
    if (opt && opt->step_first >= 0 && opt->step_last >= 0 && opt->step_first > opt->step_last)
        return gt_error_set(GT_ERR_INVALID, "steps %lld:%lld: the first step is after the last",
                            (long long)opt->step_first, (long long)opt->step_last);
    r->steps = calloc(all->n ? all->n : 1, sizeof *r->steps);
    if (!r->steps)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    for (size_t i = 0; i < all->n; i++) {
        const gt_step *s = &all->v[i];
        if (filtered && ((opt->step_first >= 0 && s->number < opt->step_first) ||
                         (opt->step_last >= 0 && s->number > opt->step_last)))
            continue;
        r->steps[r->n_steps++] = *s;
    }
    if (filtered && r->n_steps == 0)
        return gt_error_set(GT_ERR_NOTFOUND, "%s: no step in %lld:%lld (the trace has %zu steps%s)", path,
                            (long long)opt->step_first, (long long)opt->step_last, all->n,
                            all->n ? "" : ": no NVTX range named \"step N\"");
    if (filtered) {
        r->start_ns = r->steps[0].start_ns;
        r->end_ns = r->steps[0].end_ns;
        for (size_t i = 1; i < r->n_steps; i++)
            if (r->steps[i].end_ns > r->end_ns)
                r->end_ns = r->steps[i].end_ns;
    }
    return 0;
}

/* Adds a per-process count of ns to *sum (-1: none yet); a value that is
 * not one is left out. */
static void add_ns(int64_t *sum, const char *value)
{
    char *end;
    long long v = strtoll(value, &end, 10);
    if (end == value || *end || v < 0)
        return;
    int64_t base = *sum < 0 ? 0 : *sum;
    *sum = v <= INT64_MAX - base ? base + v : INT64_MAX;
}

/* From the run configuration: an import that took its steps as spans, not
 * as their ranges, says so (import.steps), and the report repeats it; the
 * scheduler's account of each process, summed. */
static int run_config(void *ctx, int64_t global_pid, const char *key, const char *value)
{
    gt_report *r = ctx;
    if (global_pid != 0 && strcmp(key, GT_CONFIG_SCHED_RUN) == 0)
        add_ns(&r->cpu_run_ns, value);
    else if (global_pid != 0 && strcmp(key, GT_CONFIG_SCHED_WAIT) == 0)
        add_ns(&r->cpu_wait_ns, value);
    if (strcmp(key, "import.steps") != 0 || *r->steps_note)
        return 0;
    free(r->steps_note);
    r->steps_note = an_strdup(value);
    return r->steps_note ? 0 : GT_ERR_NOMEM;
}

/* The summary, on a thread beside gaps and memory: the three read the model
 * and write different parts of the report (of the steps: busy_ns for the
 * summary, the allocation counts for memory). */
typedef struct summary_job {
    gt_report *r;
    const an_model *m;
    const gt_report_options *opt;
    int rc;
    char msg[512];
} summary_job;

static void *summary_thread(void *arg)
{
    summary_job *j = arg;
    if ((j->rc = an_summary(j->r, j->m, j->opt)) < 0)
        snprintf(j->msg, sizeof j->msg, "%s", gt_error_last());
    return NULL;
}

int an_report_build(gt_report **out, const an_model *m, const gt_report_options *opt, gt_gap_span **gaps,
                    size_t *n_gaps)
{
    gt_report_options defaults;
    an_steps all = {0};
    gt_report *r = NULL;
    gt_trace *t = m->t;
    int rc;
    *out = NULL;
    if (gaps) {
        *gaps = NULL;
        *n_gaps = 0;
    }
    if (!opt) {
        gt_report_options_init(&defaults);
        opt = &defaults;
    }
    r = calloc(1, sizeof *r);
    if (!r)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    r->path = an_strdup(t ? gt_trace_path(t) : "");
    r->origin = t ? gt_trace_origin_of(t) : 0;
    r->steps_note = an_strdup("");
    r->cpu_run_ns = r->cpu_wait_ns = -1;
    if (r->steps_note && t && gt_trace_each_config(t, run_config, r) != 0 && !r->steps_note) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        goto cleanup;
    }
    if (!r->path || !r->steps_note) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        goto cleanup;
    }
    for (int k = 0; t && k < GT_EV_N_KINDS; k++)
        if (m->windowed) /* kept: counting reads every table */
            r->n_events[k] = m->whole.n_events[k];
        else if ((rc = gt_trace_count(t, (gt_event_kind)k, &r->n_events[k])) < 0)
            goto cleanup;
    r->n_refused = m->n_refused;
    r->start_ns = m->span_start_ns;
    r->end_ns = m->span_end_ns > m->span_start_ns ? m->span_end_ns : m->span_start_ns;
    if ((rc = an_steps_find(&all, m)) < 0 || (rc = select_steps(r, &all, opt, r->path)) < 0)
        goto cleanup;
    r->wall_ns = r->end_ns - r->start_ns;
    summary_job sj = {r, m, opt, 0, ""};
    pthread_t th;
    bool threaded = pthread_create(&th, NULL, summary_thread, &sj) == 0;
    if (!threaded)
        summary_thread(&sj);
    rc = an_gaps_list(&r->gaps, m, r->start_ns, r->end_ns, opt->top_n, gaps, n_gaps);
    if (rc == 0)
        rc = an_memory(&r->memory, m, r->steps, r->n_steps);
    if (threaded)
        pthread_join(th, NULL);
    if (rc == 0 && sj.rc < 0)
        rc = gt_error_set(sj.rc, "%s", sj.msg);
    if (rc == 0)
        rc = an_pytorch_tables(r, m, opt);
    if (rc == 0)
        rc = an_oom(r, m, opt);
    if (rc < 0 || (rc = an_comm_measure(&r->comm, m, r, opt)) < 0 ||
        (rc = an_rank_steps_measure(&r->rank_steps, m, r, opt)) < 0 || (rc = an_advice(r, m)) < 0)
        goto cleanup;
    /* a check the open left running (GT_OPEN_CHECK_LATER) has the last word */
    if (t && (rc = gt_trace_check(t)) < 0)
        goto cleanup;
    *out = r;
    r = NULL;
cleanup:
    if (r && gaps) {
        free(*gaps);
        *gaps = NULL;
        *n_gaps = 0;
    }
    free(all.v);
    gt_report_free(r);
    return rc;
}

int gt_report_compute(gt_report **out, gt_trace *t, const gt_report_options *opt)
{
    an_model *m = NULL;
    int rc;
    *out = NULL;
    if (!t)
        return gt_error_set(GT_ERR_INVALID, "gt_report_compute: no trace");
    if ((rc = an_model_load(&m, t)) < 0)
        return rc;
    rc = an_report_build(out, m, opt, NULL, NULL);
    an_model_free(m);
    return rc;
}

void gt_report_free(gt_report *r)
{
    if (!r)
        return;
    free(r->path);
    free(r->steps_note);
    free(r->steps);
    free(r->devices);
    for (size_t i = 0; i < r->n_kernels; i++)
        free(r->kernels[i].name);
    free(r->kernels);
    for (size_t i = 0; i < r->n_apis; i++)
        free(r->apis[i].name);
    free(r->apis);
    free(r->copies);
    an_gaps_clear(&r->gaps);
    an_memory_clear(&r->memory);
    an_comm_clear(&r->comm);
    an_rank_steps_clear(&r->rank_steps);
    an_pytorch_clear(r);
    an_oom_free(r->oom);
    for (size_t i = 0; i < r->n_advice; i++) {
        free(r->advice[i].threshold);
        free(r->advice[i].evidence);
        free(r->advice[i].suggestion);
        free(r->advice[i].gain);
    }
    free(r->advice);
    free(r);
}
