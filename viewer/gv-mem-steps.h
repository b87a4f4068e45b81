/* gv-mem-steps.h: the memory page's table: each step's peak allocated bytes
 * and its growth over the step before ("no growth" when its end is not above
 * the last one's), the analysis's leaks ("no growth" when it found none) and
 * its spikes, those of one origin and size folded into one row with a count.
 * A row activated asks to show its time ("navigate"). */
#ifndef GV_MEM_STEPS_H
#define GV_MEM_STEPS_H

#include <gtk/gtk.h>

#include "gv-trace-model.h"

G_BEGIN_DECLS

enum { GV_MEM_STEPS_KIND, GV_MEM_STEPS_STEPS, GV_MEM_STEPS_BYTES, GV_MEM_STEPS_CHANGE, GV_MEM_STEPS_ORIGIN,
       GV_MEM_STEPS_BYTES_N, GV_MEM_STEPS_FROM, GV_MEM_STEPS_TO, GV_MEM_STEPS_N_COLS };

#define GV_TYPE_MEM_STEPS (gv_mem_steps_get_type())
G_DECLARE_FINAL_TYPE(GvMemSteps, gv_mem_steps, GV, MEM_STEPS, GtkScrolledWindow)

GtkWidget *gv_mem_steps_new(void);
/* Fills the table for one process's memory; pm: the report's figures of it
 * (NULL: none); steps from the report r. */
void gv_mem_steps_fill(GvMemSteps *self, const GvMemory *mem, const gt_report *r, const gt_memory *pm);
GtkTreeView *gv_mem_steps_get_tree(GvMemSteps *self);

G_END_DECLS

#endif /* GV_MEM_STEPS_H */
