/* gv-top-view.h: the top kernels and ops, as Nsight Systems' statistics: a
 * table by name of the device work (kernels, copies, memsets) and CPU ops
 * with their count, total, average, longest and share, sorted by any column
 * from its header. Activating a row (a click) says "show-item" with the
 * name's longest instance, which the window selects on the timeline. */
#ifndef GV_TOP_VIEW_H
#define GV_TOP_VIEW_H

#include <gtk/gtk.h>

#include "gv-trace-model.h"

G_BEGIN_DECLS

#define GV_TYPE_TOP_VIEW (gv_top_view_get_type())
G_DECLARE_FINAL_TYPE(GvTopView, gv_top_view, GV, TOP_VIEW, GtkBox)

/* The table's columns (the store's too): strings, count and times as gint64
 * (ns), share as a double; the name id and the longest instance's place as guint64. */
enum {
    GV_TOP_COL_NAME, GV_TOP_COL_KIND, GV_TOP_COL_COUNT, GV_TOP_COL_TOTAL, GV_TOP_COL_AVG, GV_TOP_COL_MAX,
    GV_TOP_COL_SHARE, GV_TOP_COL_NAME_ID, GV_TOP_COL_TRACK, GV_TOP_COL_LANE, GV_TOP_COL_INDEX, GV_TOP_N_COLS
};

GtkWidget *gv_top_view_new(void);
/* Fills the table when the model has loaded ("analysed"), counted on a thread. */
void gv_top_view_set_model(GvTopView *self, GvTraceModel *model);
GtkTreeModel *gv_top_view_get_model(GvTopView *self);
GtkTreeView *gv_top_view_get_tree(GvTopView *self);

G_END_DECLS

#endif /* GV_TOP_VIEW_H */
