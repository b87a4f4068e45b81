/* gv-render.h: the timeline's view state and its drawing onto any cairo
 * context, so the widget, the tests, --screenshot and the benchmark draw the
 * same pixels with or without a display. The view is plain data: a left
 * time, a scale, a vertical scroll, a selection. Drawing walks only the
 * visible lanes and, in each, only the visible boxes (gv-lane.h). */
#ifndef GV_RENDER_H
#define GV_RENDER_H

#include <cairo.h>

#include "gv-align.h"
#include "gv-trace-model.h"

G_BEGIN_DECLS

enum {
    GV_LABEL_W = 190,   /* track and lane titles on the left */
    GV_AXIS_H = 22,     /* time axis */
    GV_RULER_H = 18,    /* steps */
    GV_TITLE_H = 18,    /* a track's title row */
    GV_LANE_H = 18,
    GV_GAP_LANE_H = 12, /* a device's idle lane */
    GV_MARK_LANE_H = 14,
    GV_MIN_BOX_PX = 3,  /* narrower items merge into one box with a count */
    GV_MARK_PX = 7,     /* a mark's marker; marks closer than this merge */
};
/* The related item's outline and the flow arrow to it (0..1 RGB). */
#define GV_FLOW_RGB 0.10, 0.30, 0.95
/* The selected time range: its band (translucent) and its duration's label on the axis. */
#define GV_RANGE_RGB 0.20, 0.40, 0.90
/* The outline of the search's matches. */
#define GV_MATCH_RGB 1.00, 0.55, 0.00

typedef struct GvView {
    int width, height;
    int64_t t0_ns;    /* time at the left edge of the lanes */
    double ns_per_px; /* zoom */
    double scroll_y;  /* pixels scrolled down */
    gboolean has_selection, has_related;
    GvItemRef selection, related;
    gboolean has_range; /* a time range being selected (shift-drag) */
    const guint8 *match; size_t n_match; /* names the search matches, a byte per name id: outlined; NULL none */
    int64_t range_from_ns, range_to_ns;
    int64_t origin_ns; /* times on the axis are shown relative to it */
    /* Compare: t0_ns and ns_per_px are in side 0's time of `align`, and this
     * trace (its side) is drawn through the map, so both traces' steps line
     * up. NULL: the view's own time. */
    const GvAlign *align;
    int align_side;
} GvView;

void gv_view_init(GvView *v, int width, int height);
/* The whole loaded span in the width. */
void gv_view_fit(GvView *v, GvTraceModel *m);
/* The first view of a trace: its steps in the width once the analysis has
 * found some (a PyTorch program's steps come after seconds of imports), else
 * as gv_view_fit. The time axis still counts from the trace's start. */
void gv_view_fit_steps(GvView *v, GvTraceModel *m);
/* [from, to) in the width (with a small margin). */
void gv_view_show_range(GvView *v, int64_t from_ns, int64_t to_ns);
/* Zoom by `factor` (> 1: in) keeping the time under x where it is. */
void gv_view_zoom(GvView *v, double factor, double x);
void gv_view_pan(GvView *v, double dx_px);
/* x of a time of this view's trace, and the trace's time at x. */
double gv_view_x(const GvView *v, int64_t t_ns);
int64_t gv_view_time(const GvView *v, double x);
/* Time at the right edge. */
int64_t gv_view_end(const GvView *v);
/* A time of this view's trace on its axis (t0_ns's time: side 0's when aligned), and back. */
int64_t gv_view_axis(const GvView *v, int64_t t_ns);
int64_t gv_view_own(const GvView *v, int64_t axis_ns);

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
