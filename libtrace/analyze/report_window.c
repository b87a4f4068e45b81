/* report_window.c: `gtrace report --steps A:B` at the size of its window.
 * When a trace is finished, the close analyses every event (report_kept.c);
 * what a window's rows cannot tell of the whole trace (an_whole: the span,
 * rows refused, the main thread, the devices, the longest activity and
 * call, how far launches lie from their activities) is kept then beside
 * the report, as text, so that a report of steps can read the window only
 * and give the whole model's bytes.
 *
 * The facts are kept only for traces where that holds: none where the
 * Communication section measures anything (each rank in its own steps,
 * which need not lie in the window) or nsys 2.x's wrapper calls were
 * dropped (a wrapper in the window whose call is outside it would stay).
 * Without them (those traces, small ones where no report is kept, nsys
 * exports, imports, traces kept by another build) the whole model is read. */
#include "analyze_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_WHOLE "report.whole"

/* The facts' fields, one "name value" line each (devices: a list). */
#define WHOLE_FIELDS(X)                                                                                                \
    X(span_start_ns) X(span_end_ns) X(n_refused) X(max_act_ns) X(main_tid) X(max_api_ns) X(launch_before_ns)           \
    X(launch_after_ns)

/* How far an activity's launch call lies before and after it. */
static void launch_lags(an_whole *w, const an_model *m)
{
    for (size_t i = 0; i < m->n_acts; i++) {
        const an_act *x = &m->acts[i];
        const an_api *a = x->corr ? an_model_launch(m, x->corr) : NULL;
        if (!a)
            continue;
        int64_t d = x->start_ns - a->start_ns; /* times within AN_TIME_LIMIT_NS: no overflow */
        if (d > w->launch_before_ns)
            w->launch_before_ns = d;
        if (-d > w->launch_after_ns)
            w->launch_after_ns = -d;
    }
}

bool an_whole_of(an_whole *w, const an_model *m, const gt_report *r)
{
    memset(w, 0, sizeof *w);
    if (r->comm.n_ranks > 0 || m->n_dropped > 0)
        return false;
    w->span_start_ns = m->span_start_ns;
    w->span_end_ns = m->span_end_ns;
    w->n_refused = m->n_refused;
    w->max_act_ns = m->max_act_ns;
    w->main_tid = m->main_tid;
    w->cpu_timeline = m->cpu_timeline;
    for (size_t i = 0; i < m->n_acts && !w->any_kernel; i++)
        w->any_kernel = m->acts[i].kind == GT_EV_KERNEL;
    for (size_t i = 0; i < m->n_apis; i++)
        if (m->apis[i].end_ns - m->apis[i].start_ns > w->max_api_ns)
            w->max_api_ns = m->apis[i].end_ns - m->apis[i].start_ns;
    launch_lags(w, m);
    w->n_devices = an_devices(w->devices, m);
    return true;
}

int an_whole_text(char **out, size_t *out_bytes, const an_whole *w)
{
    FILE *f = open_memstream(out, out_bytes);
    if (!f)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
#define PRINT(name) fprintf(f, #name " %" PRId64 "\n", w->name);
    WHOLE_FIELDS(PRINT)
#undef PRINT
    fprintf(f, "any_kernel %d\ncpu_timeline %d\ndevices", w->any_kernel, w->cpu_timeline);
    for (size_t i = 0; i < w->n_devices; i++)
        fprintf(f, " %" PRId32, w->devices[i]);
    fprintf(f, "\n");
    if (fclose(f) != 0) {
        free(*out);
        *out = NULL;
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    }
    return 0;
}

const char *an_whole_key(void)
{
    return KEY_WHOLE;
}
