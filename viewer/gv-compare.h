/* gv-compare.h: two traces side by side: a timeline each, their time axes
 * locked together and aligned on every step both have (gv-align: time maps
 * piecewise linearly between the steps' boundaries, so step k starts at the
 * same x in both; the after trace's ruler says how much longer or shorter
 * each step took), and the analysis's diff table (gt_diff_compute) below. */
#ifndef GV_COMPARE_H
#define GV_COMPARE_H

#include <gtk/gtk.h>

#include "gv-timeline.h"

G_BEGIN_DECLS

#define GV_TYPE_COMPARE (gv_compare_get_type())
G_DECLARE_FINAL_TYPE(GvCompare, gv_compare, GV, COMPARE, GtkPaned)

GtkWidget *gv_compare_new(GvTraceModel *before, GvTraceModel *after);
GvTimeline *gv_compare_get_timeline(GvCompare *self, int which); /* 0 before, 1 after */
/* The title over a side: "before: PATH", "after: PATH". */
const char *gv_compare_get_title(GvCompare *self, int which);
/* The map from the before trace's time to the after trace's (borrowed);
 * NULL until both are analysed. */
const GvAlign *gv_compare_get_align(GvCompare *self);
/* Rows of the diff table (0 until both are analysed and the diff, computed
 * on a thread of its own, is in); is_diffing: that diff is being computed. */
gboolean gv_compare_is_diffing(GvCompare *self);
guint gv_compare_n_diff_rows(GvCompare *self);
/* The diff table: metric, before, after (headed by their file names), the
 * change absolute and relative (both sort by value; "new" and "gone" for a
 * name in one run only), gtrace diff's verdict and its 95% interval (sorted
 * by its low end), per op and kernel from their per-step samples. */
GtkTreeView *gv_compare_get_table(GvCompare *self);
/* What double-clicking a row does: its op or kernel outlined in both
 * timelines, which show the aligned step whose time changed most. */
void gv_compare_activate_row(GvCompare *self, GtkTreePath *path);
gssize gv_compare_get_shown_step(GvCompare *self); /* that step's pair in the alignment; -1 none */

G_END_DECLS

#endif /* GV_COMPARE_H */
