/* metrics.c: the report's metrics (see gt_metrics.h), one row each. Nothing
 * here computes or reads a figure; the order is diff's row order. */
#include "gt_metrics.h"

#include <stdio.h>

static const gt_metric metrics[GT_M_N] = {
    [GT_M_WALL] = {"wall time", "wall_ns", "ns", 1, 0, GT_MARG_NONE,
                   "the trace's first to last event, each run one figure (wall_ns)"},
    [GT_M_STEP_TIME] = {"step time", "step_time", "ns", 1, 0, GT_MARG_NONE,
                        "an NVTX \"step N\" range's duration, each step a sample (step_time: their spread)"},
    [GT_M_UTILIZATION] = {"device utilization", "utilization", "%", -1, 0, GT_MARG_NONE,
                          "the share of a step (devices[]: of the span) a device ran kernels, copies or CPU ops"},
    [GT_M_IDLE] = {"idle time", "idle_ns", "ns", 1, 1, GT_MARG_NONE,
                   "time a device sat idle between work (gaps.idle_ns)"},
    [GT_M_IDLE_CAUSE] = {"idle", "idle_ns", "ns", 1, 1, GT_MARG_AFTER,
                         "idle time of gaps of one cause: host-wait, sync, loader... (gaps.by_cause)"},
    [GT_M_OP_TIME] = {"op:", NULL, "ns", 1, 1, GT_MARG_AFTER,
                      "the time of one kernel (or CPU op) name (kernels[].time)"},
    [GT_M_COPIES] = {"copies", NULL, "count", 1, 1, GT_MARG_BEFORE,
                     "memory copies of one direction (copies[].n)"},
    [GT_M_COPY_TIME] = {"copy time", NULL, "ns", 1, 1, GT_MARG_BEFORE,
                        "the time copies of one direction took (copies[].total_ns)"},
    [GT_M_BANDWIDTH] = {"bandwidth", "gb_per_s", "GB/s", -1, 0, GT_MARG_BEFORE,
                        "bytes over time of the copies of one direction"},
    [GT_M_PAGEABLE] = {"pageable copies", "n_pageable", "count", 1, 1, GT_MARG_BEFORE,
                       "copies from or to pageable host memory, which the driver stages"},
    [GT_M_COMM] = {"communication", "comm_ns", "ns", 1, 1, GT_MARG_NONE,
                   "collectives' time, mean over ranks (communication.comm_ns)"},
    [GT_M_EXPOSED] = {"exposed communication", "exposed_ns", "ns", 1, 1, GT_MARG_NONE,
                      "communication while no compute ran: what the step waits for"},
    [GT_M_HIDDEN] = {"communication hidden by compute", "hidden", "%", -1, 0, GT_MARG_NONE,
                     "overlap over communication time"},
    [GT_M_COLLECTIVES] = {"collectives", "collectives", "count", 0, 1, GT_MARG_NONE,
                          "collectives run; fewer, bigger ones are not better by themselves"},
    [GT_M_ALLOC_END] = {"allocated at step end", "allocated_end_bytes", "bytes", 1, 0, GT_MARG_NONE,
                        "the caching allocator's allocated bytes when a step ends (steps[])"},
    [GT_M_PEAK_ALLOCATED] = {"peak allocated", "peak_allocated_bytes", "bytes", 1, 0, GT_MARG_NONE,
                             "the most bytes allocated at once (memory)"},
    [GT_M_PEAK_RESERVED] = {"peak reserved", "peak_reserved_bytes", "bytes", 1, 0, GT_MARG_NONE,
                            "the most bytes the allocator held from the device at once (memory)"},
    [GT_M_ADVICE_FIRED] = {"advice rules fired", "fired", "count", 1, 0, GT_MARG_NONE,
                           "rules whose threshold the trace crossed (advice[].fired)"},
};

const gt_metric *gt_metric_get(gt_metric_id id)
{
    return &metrics[id];
}

const char *gt_metric_label(gt_metric_id id)
{
    return metrics[id].label;
}

const char *gt_metric_key(gt_metric_id id)
{
    return metrics[id].key;
}

const char *gt_metric_name(char *buf, size_t n, gt_metric_id id, const char *arg, const char *per)
{
    const gt_metric *m = &metrics[id];
    if (m->arg == GT_MARG_BEFORE)
        snprintf(buf, n, "%s %s%s", arg, m->label, per);
    else if (m->arg == GT_MARG_AFTER)
        snprintf(buf, n, "%s %s%s", m->label, arg, per);
    else
        snprintf(buf, n, "%s%s", m->label, per);
    return buf;
}
