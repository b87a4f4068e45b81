/* gv-mem-stack.h: one process's memory series from the analysis, laid out
 * for drawing: its blocks stacked as PyTorch's memory_viz stacks them (a
 * block freed lets every block above it down by its size). Plain C; it
 * computes no figure the analysis has (totals and peaks are its). */
#ifndef GV_MEM_STACK_H
#define GV_MEM_STACK_H

#include "gv-trace-model.h"

/* The drawable memory of a series (NULL: out of memory); free with gv_memory_free. */
GvMemory *gv_memory_from_series(const gt_mem_series *s);
void gv_memory_free(GvMemory *m);

#endif /* GV_MEM_STACK_H */
