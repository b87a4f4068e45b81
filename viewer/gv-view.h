/* gv-view.h: the timeline's view as plain data (a left time, a scale, a
 * vertical scroll, a selection) and its arithmetic: fitting, zooming,
 * panning, and times to x and back, through a compare's time map when
 * aligned. No drawing and no lanes: gv-render.h draws a view and finds
 * what is under a point. */
#ifndef GV_VIEW_H
#define GV_VIEW_H

#include "gv-align.h"
#include "gv-trace-model.h"

G_BEGIN_DECLS

/* The timeline's geometry in pixels: the lanes start at GV_LABEL_W (x of
 * the view's t0_ns), below the axis and the steps ruler. */
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

/* For the drawing. TRUE: this trace is drawn through the compare's map. */
gboolean gv_view_warped(const GvView *v);
/* The lanes' width in pixels (at least 10). */
double gv_view_lanes_w(const GvView *v);
/* Times of a damaged trace may be anything an int64 holds: a - b exactly
 * where it fits, else in doubles; and a double back to int64, clamped (NaN: 0). */
double gv_ns_diff(int64_t a, int64_t b);
int64_t gv_ns_from_double(double x);

G_END_DECLS

#endif /* GV_VIEW_H */
