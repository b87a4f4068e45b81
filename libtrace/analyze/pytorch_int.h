/* pytorch_int.h: the report's PyTorch tables (pytorch_tables.c), for
 * report.c and render.c. Not installed. */
#ifndef GT_PYTORCH_INT_H
#define GT_PYTORCH_INT_H

#include "analyze_int.h"

/* The phases of r's steps, the modules and the ops by self time, from the
 * NVTX ranges `gtrace --pytorch` writes (and, where they are there, those
 * of an imported torch.profiler trace). r's steps and window must be set. */
int an_pytorch_tables(gt_report *r, const an_model *m, const gt_report_options *opt);
void an_pytorch_clear(gt_report *r);
/* The phase a range's name is (0 data .. 3 optimizer), -1 none. */
int an_phase_of(const char *name);

/* Rendering (render_pytorch.c). */
void an_pytorch_print_phases(const gt_report *r, FILE *f);
void an_pytorch_print_tables(const gt_report *r, FILE *f); /* ops by self time, modules */
void an_pytorch_print_json(const gt_report *r, gt_json *j); /* "phases":...,"modules":...,"ops":... */

#endif
