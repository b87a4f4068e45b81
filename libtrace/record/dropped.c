/* dropped.c: the events a trace says its producers dropped, per kind, for
 * the summaries of `gtrace PROGRAM`, `gtrace info` and the assembly. */
#include "config.h"

#include <string.h>

#include "gt_record.h"

int gt_record_dropped(gt_trace *t, int64_t out[GT_EV_N_KINDS])
{
    memset(out, 0, sizeof(int64_t) * GT_EV_N_KINDS);
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        int rc = gt_trace_dropped(t, (gt_event_kind)k, &out[k]);
        if (rc != 0)
            return rc;
    }
    return 0;
}
