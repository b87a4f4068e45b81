/* gv-range-view.h: the statistics of a selected time range under the
 * timeline: a line with the range and its duration, and a table by lane and
 * name (count, total, self, average, share of the range; each device's
 * busy time and idle time by cause), sorted by any column from its header. */
#ifndef GV_RANGE_VIEW_H
#define GV_RANGE_VIEW_H

#include <gtk/gtk.h>

#include "gv-range-stats.h"

G_BEGIN_DECLS

#define GV_TYPE_RANGE_VIEW (gv_range_view_get_type())
G_DECLARE_FINAL_TYPE(GvRangeView, gv_range_view, GV, RANGE_VIEW, GtkBox)

/* The table's columns (the store's too). */
enum {
    GV_RANGE_COL_LANE, GV_RANGE_COL_NAME, GV_RANGE_COL_COUNT, GV_RANGE_COL_TOTAL, GV_RANGE_COL_SELF,
    GV_RANGE_COL_AVG, GV_RANGE_COL_SHARE, GV_RANGE_N_COLS
};

GtkWidget *gv_range_view_new(void);
/* Fills the table from the model's items in [from, to). */
void gv_range_view_show(GvRangeView *self, GvTraceModel *m, int64_t from_ns, int64_t to_ns);
void gv_range_view_clear(GvRangeView *self);
/* The sorted model the table shows (borrowed); rows hold the figures:
 * strings, count and times as gint64 (ns), average and share as doubles. */
GtkTreeModel *gv_range_view_get_model(GvRangeView *self);
GtkTreeView *gv_range_view_get_tree(GvRangeView *self);
const char *gv_range_view_get_summary(GvRangeView *self);

G_END_DECLS

#endif /* GV_RANGE_VIEW_H */
