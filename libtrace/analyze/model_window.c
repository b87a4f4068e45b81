/* model_window.c: the model a report of some steps (--steps A:B) needs,
 * loaded at the size of its window rather than of the trace. It decides
 * what to read; model.c reads it, steps.c finds the steps.
 *
 * The steps are NVTX ranges, so the host is read whole first: NVTX (the
 * steps, the ranges enclosing the window, the names of its ops) and the
 * memory events (peaks and the live set are replayed from the start). The
 * window is the selected steps' span, as the report takes it. The device's
 * kinds (kernels, copies, memsets, CPU ops) are then read over the window
 * alone: the store hands out the rows that overlap it, looking back from
 * its start by the table's longest event, so an activity that starts before
 * the window and ends in it is kept. API calls: those overlapping the
 * window and, read from further back until found, the launches of its
 * activities (model.c). Synchronization rows only give the trace's span,
 * which a report of steps does not use (its span is theirs), nor are they
 * read. Not read, so not counted: refused rows outside the window. */
#include "analyze_int.h"

#include <stdlib.h>

int an_model_load_for(an_model **out, gt_trace *t, const gt_report_options *opt)
{
    an_loading *l = NULL;
    gt_step *steps = NULL;
    size_t n_steps = 0;
    int rc;
    *out = NULL;
    if (!opt || (opt->step_first < 0 && opt->step_last < 0))
        return an_model_load(out, t);
    if ((rc = an_loading_host(&l, t)) < 0)
        return rc;
    /* No step selected: the report says so; the whole trace is read, as
     * without a window. */
    int64_t from = INT64_MIN, to = INT64_MAX;
    bool ordered = opt->step_first < 0 || opt->step_last < 0 || opt->step_first <= opt->step_last;
    if (ordered && (rc = an_steps_selected(&steps, &n_steps, an_loading_model(l), -1, opt)) < 0)
        goto cleanup;
    if (n_steps > 0) {
        from = steps[0].start_ns;
        to = steps[0].end_ns;
        for (size_t i = 1; i < n_steps; i++)
            if (steps[i].end_ns > to)
                to = steps[i].end_ns;
        /* one nanosecond either side: what ends at the window's start or
         * starts at its end is read too (a gap's edges) */
        from = from > INT64_MIN ? from - 1 : from;
        to = to < INT64_MAX ? to + 1 : to;
    }
    rc = an_loading_window(l, from, to, out);
cleanup:
    free(steps);
    an_loading_free(l);
    return rc;
}
