/* oom.h: the report's Out of memory section (oom.c computes it, render_oom.c
 * writes it), for report.c and render.c. Not installed. */
#ifndef GT_OOM_H
#define GT_OOM_H

#include "analyze_int.h"

/* r->oom from the trace's first out-of-memory mark (NULL when there is
 * none); r's steps and window must be set. */
int an_oom(gt_report *r, const an_model *m, const gt_report_options *opt);
void an_oom_free(gt_oom *o);
/* The parsed figure `key=N` of an OOM message; -1 when absent. */
int64_t an_oom_figure(const char *msg, const char *key);

/* Rendering (render_oom.c): nothing without an OOM; JSON: "oom":{...} or null. */
void an_oom_print_text(const gt_report *r, FILE *f);
void an_oom_print_json(const gt_report *r, gt_json *j);

#endif
