/* gv-window.h: the main window: a header bar with search, fit and PNG
 * export; the timeline, memory and (with two traces) compare pages; the
 * summary and advice panel on the right; under the timeline the selected
 * item's details, the top kernels and ops, a selected range's statistics; a status line with what is
 * selected, or the error that stopped a load. */
#ifndef GV_WINDOW_H
#define GV_WINDOW_H

#include <gtk/gtk.h>

#include "gv-compare.h"
#include "gv-memory-view.h"
#include "gv-range-view.h"
#include "gv-summary.h"
#include "gv-timeline.h"
#include "gv-top-view.h"

G_BEGIN_DECLS

#define GV_TYPE_WINDOW (gv_window_get_type())
G_DECLARE_FINAL_TYPE(GvWindow, gv_window, GV, WINDOW, GtkWindow)

/* `after` may be NULL; with it the window opens on the compare page. */
GtkWidget *gv_window_new(GvTraceModel *model, GvTraceModel *after);
GvTimeline *gv_window_get_timeline(GvWindow *self);
GvMemoryView *gv_window_get_memory_view(GvWindow *self);
GvRangeView *gv_window_get_range_view(GvWindow *self); /* shown while a range is selected */
GvSummary *gv_window_get_summary(GvWindow *self);
/* Under the timeline: the selected item's details, and the top kernels and ops. */
GvTopView *gv_window_get_top_view(GvWindow *self);
const char *gv_window_get_details(GvWindow *self);
GtkWidget *gv_window_get_details_label(GvWindow *self);
GvCompare *gv_window_get_compare(GvWindow *self); /* NULL with one trace */
/* Pages: 0 timeline, 1 memory, 2 compare. */
void gv_window_show_page(GvWindow *self, int page);
const char *gv_window_get_status(GvWindow *self);
/* The header bar's search entry (Ctrl+F), and "k of N" beside it. */
GtkWidget *gv_window_get_search_entry(GvWindow *self);
const char *gv_window_get_matches(GvWindow *self);
/* Beside the status line while the traces load (the events' share) and are
 * analysed (a pulse): hidden once every trace is analysed or one failed. */
GtkProgressBar *gv_window_get_progress(GvWindow *self);
void gv_window_set_error(GvWindow *self, const char *message);
/* The current page as drawn, to a PNG (what Ctrl+S does without the dialog). */
gboolean gv_window_export_png(GvWindow *self, const char *path, GError **error);

G_END_DECLS

#endif /* GV_WINDOW_H */
