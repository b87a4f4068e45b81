/* gt_metrics.h: the report's metrics, one row each in metrics.c: the label a
 * text line and a diff row go by, the key the JSON report writes, the unit,
 * which way is better and what the figure means. The JSON report, gtrace
 * diff and the viewer's summary spell a metric only through this table
 * (tests/integration/metrics_once.py); the figures themselves are the
 * report's (gt_analyze.h). */
#ifndef GT_METRICS_H
#define GT_METRICS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gt_metric_id {
    GT_M_WALL,           /* wall time */
    GT_M_STEP_TIME,      /* step time */
    GT_M_UTILIZATION,    /* device utilization */
    GT_M_IDLE,           /* idle time */
    GT_M_IDLE_CAUSE,     /* idle <cause> */
    GT_M_OP_TIME,        /* op: <kernel or CPU op> */
    GT_M_COPIES,         /* <kind> copies */
    GT_M_COPY_TIME,      /* <kind> copy time */
    GT_M_BANDWIDTH,      /* <kind> bandwidth */
    GT_M_PAGEABLE,       /* <kind> pageable copies */
    GT_M_COMM,           /* communication */
    GT_M_EXPOSED,        /* exposed communication */
    GT_M_HIDDEN,         /* communication hidden by compute */
    GT_M_COLLECTIVES,    /* collectives */
    GT_M_ALLOC_END,      /* allocated at step end */
    GT_M_PEAK_ALLOCATED, /* peak allocated */
    GT_M_PEAK_RESERVED,  /* peak reserved */
    GT_M_ADVICE_FIRED,   /* advice rules fired */
    GT_M_N
} gt_metric_id;

/* Where a family's name (a copy kind, a gap cause, an op) goes. */
typedef enum gt_metric_arg { GT_MARG_NONE, GT_MARG_BEFORE, GT_MARG_AFTER } gt_metric_arg;

typedef struct gt_metric {
    const char *label;   /* "step time": the text report's and the diff's word, the samples' key */
    const char *key;     /* the JSON report's key; NULL where it writes a generic one ("n") */
    const char *unit;    /* "ns", "bytes", "%", "GB/s", "count": how gt_diff_cell writes it */
    int lower_better;    /* +1 smaller is better, -1 larger is, 0 neither (no verdict) */
    int per_step;        /* a diff row says " per step" when both sides have steps */
    gt_metric_arg arg;   /* a family: its member's name before or after the label */
    const char *meaning; /* one line: what the figure is and where the report has it */
} gt_metric;

/* The row of id (id < GT_M_N). */
const gt_metric *gt_metric_get(gt_metric_id id);
/* id's label, shortcut. */
const char *gt_metric_label(gt_metric_id id);
/* id's JSON key (a row with one). */
const char *gt_metric_key(gt_metric_id id);
/* The samples' key of id for member arg ("idle host-wait", "HtoD copies";
 * arg ignored for a row without members), then per ("" or " per step"),
 * into buf, which is returned. */
const char *gt_metric_name(char *buf, size_t n, gt_metric_id id, const char *arg, const char *per);

#ifdef __cplusplus
}
#endif
#endif /* GT_METRICS_H */
