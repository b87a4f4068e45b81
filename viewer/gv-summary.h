/* gv-summary.h: the summary and advice panel: the analysis's headline
 * figures, the advice rules that fired, the longest idle gaps, memory peaks,
 * leaks and spikes; activating an item that has a time range emits
 * "navigate" (from_ns, to_ns) so the timeline can show it. */
#ifndef GV_SUMMARY_H
#define GV_SUMMARY_H

#include <gtk/gtk.h>

#include "gv-trace-model.h"

G_BEGIN_DECLS

#define GV_TYPE_SUMMARY (gv_summary_get_type())
G_DECLARE_FINAL_TYPE(GvSummary, gv_summary, GV, SUMMARY, GtkBox)

GtkWidget *gv_summary_new(void);
void gv_summary_set_model(GvSummary *self, GvTraceModel *model);
/* Items listed, and how many have a time range (for tests). */
guint gv_summary_n_items(GvSummary *self, guint *out_n_linked);
/* Item i's text without markup (for tests); NULL past the end. The caller frees. */
char *gv_summary_item_text(GvSummary *self, guint i);
/* Activates item i as a click would; FALSE when it has no time range. */
gboolean gv_summary_activate(GvSummary *self, guint i);

G_END_DECLS

#endif /* GV_SUMMARY_H */
