/* gv-memory-view.h: the memory view: allocated and reserved bytes over
 * time, every allocation as a band stacked the way memory_viz's Active
 * Memory Timeline stacks them (a freed block lets the ones above it fall),
 * leak and spike markers from the analysis, and a time cursor under which
 * the allocator's segments and blocks at that moment are drawn (the snapshot,
 * gt_memory_state_at). Drawing works headless, like the timeline's. */
#ifndef GV_MEMORY_VIEW_H
#define GV_MEMORY_VIEW_H

#include <gtk/gtk.h>

#include "gv-mem-steps.h"
#include "gv-render.h"

G_BEGIN_DECLS

/* State of the memory view; x maps time like the timeline (GvView). */
typedef struct GvMemView {
    GvView x;              /* width, height, t0_ns, ns_per_px, origin_ns */
    gboolean has_cursor;
    int64_t cursor_ns;
    gssize selected_block; /* into GvMemory.blocks; -1 none */
    gssize selected_snap;  /* into the snapshot's blocks; -1 none */
    int64_t pid;           /* the process drawn; -1: the first with allocations */
    int32_t device;        /* its device drawn (a snapshot's allocator per device); -1: its first */
} GvMemView;

void gv_mem_view_init(GvMemView *v, int width, int height);
/* The memory of the process the view draws (the first when pid is -1 or unknown). */
const GvMemory *gv_mem_view_memory(GvTraceModel *m, const GvMemView *v);
/* Draws the view; snapshot is the state at the cursor (NULL: none). */
void gv_render_memory(cairo_t *cr, GvTraceModel *m, const GvMemView *v, const gt_mem_state *snapshot);
/* The block whose band is under (x, y); -1 none. */
gssize gv_memory_hit_block(GvTraceModel *m, const GvMemView *v, double x, double y);
/* The snapshot block (into snapshot->blocks) drawn under (x, y); -1 none. */
gssize gv_memory_hit_snapshot(const GvMemView *v, const gt_mem_state *snapshot, double x, double y);
/* Height of the chart part (the snapshot is drawn below it). */
double gv_memory_chart_bottom(const GvMemView *v);

#define GV_TYPE_MEMORY_VIEW (gv_memory_view_get_type())
/* A box: the allocator chooser (shown when several processes, or one
 * process's several devices, have allocations; each entry with its peak),
 * then the drawing. */
G_DECLARE_FINAL_TYPE(GvMemoryView, gv_memory_view, GV, MEMORY_VIEW, GtkBox)

GtkWidget *gv_memory_view_new(void);
void gv_memory_view_set_model(GvMemoryView *self, GvTraceModel *model);
GvMemView *gv_memory_view_get_state(GvMemoryView *self);
/* Puts the cursor at t and computes the snapshot there. */
void gv_memory_view_set_cursor(GvMemoryView *self, int64_t t_ns);
/* What the last click found (block size, lifetime, origin), or "". Borrowed. */
const char *gv_memory_view_get_details(GvMemoryView *self);
const gt_mem_state *gv_memory_view_get_snapshot(GvMemoryView *self);
/* Simulates what a click at (x, y) does: selects a block and moves the cursor. */
void gv_memory_view_click(GvMemoryView *self, double x, double y);
/* The process shown, and choosing another (what the chooser does). */
int64_t gv_memory_view_get_pid(GvMemoryView *self);
void gv_memory_view_set_pid(GvMemoryView *self, int64_t pid);
/* The device shown (-1: the process's allocations are one allocator), and
 * choosing one of process pid's devices (what the chooser does). */
int32_t gv_memory_view_get_device(GvMemoryView *self);
void gv_memory_view_set_allocator(GvMemoryView *self, int64_t pid, int32_t device);
GtkComboBoxText *gv_memory_view_get_chooser(GvMemoryView *self);
/* What the pointer is over (the drawing's tooltip: size, lifetime, stack);
 * NULL nothing. The caller frees. */
char *gv_memory_view_dup_hover(GvMemoryView *self);
/* The label under the drawing that shows the clicked block, and the step table. */
GtkLabel *gv_memory_view_get_about(GvMemoryView *self);
GvMemSteps *gv_memory_view_get_steps(GvMemoryView *self);

G_END_DECLS

#endif /* GV_MEMORY_VIEW_H */
