/* gv-render.h: drawing a timeline's view (gv-view.h) onto any cairo
 * context, so the widget, the tests, --screenshot and the benchmark draw the
 * same pixels with or without a display, and what is under a point as
 * drawn. Drawing walks only the visible lanes and, in each, only the
 * visible boxes (gv-lane.h). */
#ifndef GV_RENDER_H
#define GV_RENDER_H

#include <cairo.h>

#include "gv-colors.h"
#include "gv-view.h"

G_BEGIN_DECLS

/* Total height of the tracks (for scrolling). Takes the model's lock. */
int gv_view_content_height(GvTraceModel *m, const GvView *v);

/* What is under (x, y): a single item (count 1) or a merged box; FALSE: nothing. */
gboolean gv_view_hit(GvTraceModel *m, const GvView *v, double x, double y, GvItemRef *out, size_t *out_count);
/* The y (top) of a lane, or -1 when the model has no such lane. */
double gv_view_lane_y(GvTraceModel *m, const GvView *v, size_t track, size_t lane);

/* The arrow from the selected item's launch (or sync) call to its device
 * work: from (out[0], out[1]) to (out[2], out[3]); FALSE: none shown. */
gboolean gv_view_flow(GvTraceModel *m, const GvView *v, double out[4]);

/* Draws the timeline; returns the number of boxes drawn. Takes the model's lock. */
size_t gv_render_timeline(cairo_t *cr, GvTraceModel *m, const GvView *v);

/* A tick's label: t (from the origin) with the decimals step needs and no
 * trailing zeros ("0", "275 ms", "356.5 ms"). */
const char *gv_fmt_tick(char *buf, size_t n, double t_ns, double step_ns);
/* The time ticks alone, in the band [y, y + h) (the memory chart's axis). */
void gv_render_time_axis(cairo_t *cr, const GvView *v, double y, double h);

/* Colours everything uses, as 0..1 RGB. */
void gv_color_gap(int cause, double rgb[3]);
void gv_color_item(GvTraceModel *m, const GvItem *it, double rgb[3]);

/* Writes a surface to a PNG with a clear error: only where nothing is or a
 * regular file is (gt_outpath.h), through a temporary renamed into place. */
gboolean gv_write_png(cairo_surface_t *s, const char *path, GError **error);

G_END_DECLS

#endif /* GV_RENDER_H */
