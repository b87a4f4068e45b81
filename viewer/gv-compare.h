/* gv-compare.h: two traces side by side: a timeline each, their time axes
 * locked together and aligned on the first step both have (else on their
 * starts), and the analysis's diff table (gt_diff_compute) below. */
#ifndef GV_COMPARE_H
#define GV_COMPARE_H

#include <gtk/gtk.h>

#include "gv-timeline.h"

G_BEGIN_DECLS

#define GV_TYPE_COMPARE (gv_compare_get_type())
G_DECLARE_FINAL_TYPE(GvCompare, gv_compare, GV, COMPARE, GtkPaned)

GtkWidget *gv_compare_new(GvTraceModel *before, GvTraceModel *after);
GvTimeline *gv_compare_get_timeline(GvCompare *self, int which); /* 0 before, 1 after */
/* after's time minus before's at the aligned step. */
int64_t gv_compare_offset(GvCompare *self);
/* Rows of the diff table (0 until both are analysed). */
guint gv_compare_n_diff_rows(GvCompare *self);

G_END_DECLS

#endif /* GV_COMPARE_H */
