/* gv-timeline.h: the timeline widget: a GtkDrawingArea over a GvTraceModel
 * that draws through gv_render_timeline and turns wheel, pinch, drag, keys
 * and clicks into changes of its GvView. It never holds a widget per item. */
#ifndef GV_TIMELINE_H
#define GV_TIMELINE_H

#include <gtk/gtk.h>

#include "gv-render.h"

G_BEGIN_DECLS

#define GV_TYPE_TIMELINE (gv_timeline_get_type())
G_DECLARE_FINAL_TYPE(GvTimeline, gv_timeline, GV, TIMELINE, GtkDrawingArea)

GtkWidget *gv_timeline_new(void);
void gv_timeline_set_model(GvTimeline *self, GvTraceModel *model);
GvTraceModel *gv_timeline_get_model(GvTimeline *self);

/* The view, borrowed; after changing it call gv_timeline_view_changed. */
GvView *gv_timeline_get_view(GvTimeline *self);
void gv_timeline_view_changed(GvTimeline *self);
/* Until the user moves it, the view fits the loaded span as rows come in and
 * when resized; a view driven by another (compare) stops that. */
void gv_timeline_stop_following(GvTimeline *self);
void gv_timeline_fit(GvTimeline *self);
void gv_timeline_show_range(GvTimeline *self, int64_t from_ns, int64_t to_ns);
/* The selected time range, once a drag has marked one; FALSE: none.
 * "range-changed" fires when one is marked or dropped. */
gboolean gv_timeline_get_range(GvTimeline *self, int64_t *out_from_ns, int64_t *out_to_ns);
/* Zooms to the range being selected, else to the selected item. */
gboolean gv_timeline_zoom_to_selection(GvTimeline *self);

/* Selects an item (and finds its related one); NULL clears. Scrolls it into view. */
void gv_timeline_select(GvTimeline *self, const GvItemRef *ref);
gboolean gv_timeline_get_selection(GvTimeline *self, GvItemRef *out);
gboolean gv_timeline_get_related(GvTimeline *self, GvItemRef *out);
/* While an item of this name is selected, n/p select the name's next and
 * previous items in time, on any lane (G_MAXUINT: the lane's). */
void gv_timeline_walk_name(GvTimeline *self, guint name);
/* Selects the next (previous) item whose name contains text; FALSE: none. */
gboolean gv_timeline_search(GvTimeline *self, const char *text, gboolean backwards);
/* Outlines every item whose name contains text ("" or NULL: none); returns
 * how many there are and, in *out_rank, the selected item's place among them
 * (1-based; 0 when the selection is not one). */
size_t gv_timeline_set_search(GvTimeline *self, const char *text, size_t *out_rank);
/* The current view, as drawn, to a PNG. */
gboolean gv_timeline_export_png(GvTimeline *self, const char *path, GError **error);

G_END_DECLS

#endif /* GV_TIMELINE_H */
