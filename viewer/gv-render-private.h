/* gv-render-private.h: what the timeline's drawing files share (gv-render.c
 * draws the lanes, the axis and the titles; gv-render-overlay.c what goes
 * over them: the selection, the flow arrow, the selected range; both use
 * gv-render-layout.c's lane places and text). Not for the widgets: they use
 * gv-render.h, which only gv-render.c implements. */
#ifndef GV_RENDER_PRIVATE_H
#define GV_RENDER_PRIVATE_H

#include <pango/pangocairo.h>

#include "gv-colors.h"
#include "gv-view.h"

typedef struct GvDrawCtx {
    cairo_t *cr;
    GvTraceModel *m;
    const GvView *v;
    int64_t t_left_ns, t_right_ns; /* the trace's times at the lanes' edges */
    double y, h;
    size_t n_boxes;
    /* Boxes of one colour in a row go into one path, filled once. */
    double path_rgba[4];
    gboolean path_open;
} GvDrawCtx;

/* x kept a little outside the lanes: cairo gets no huge coordinates. */
static inline double gv_render_clampx(const GvView *v, double x)
{
    return x < GV_LABEL_W - 2 ? GV_LABEL_W - 2 : x > v->width + 2 ? v->width + 2 : x;
}

static inline double gv_render_content_top(void)
{
    return GV_AXIS_H + GV_RULER_H;
}

static inline double gv_render_lane_h(const GvLane *l)
{
    return l->kind == GV_ITEM_GAP ? GV_GAP_LANE_H : l->kind == GV_ITEM_MARK ? GV_MARK_LANE_H : GV_LANE_H;
}

/* gv-render-layout.c: where the lanes are, and text. */
/* Calls back for each lane whose band of y is on screen (with its y); stops
 * when it returns TRUE. The caller holds the lock. */
typedef gboolean (*GvLaneFunc)(const GvTrack *tr, size_t ti, const GvLane *l, size_t li, double y, void *data);
void gv_render_each_lane(GvTraceModel *m, const GvView *v, GvLaneFunc f, void *data);
/* The top of a lane; FALSE: no such lane. The caller holds the lock. */
gboolean gv_render_lane_y(GvTraceModel *m, const GvView *v, size_t track, size_t lane, double *out_y);
/* Before a frame's text: the shared context follows cr's font setup. */
void gv_render_text_begin(cairo_t *cr);
guint gv_render_text_serial(void); /* changes when cached layouts were dropped */
/* A cached layout of s, ellipsized to max_w (<= 0: whole); NULL for a very long s. */
PangoLayout *gv_render_text_layout(const char *s, double max_w);
void gv_render_text_at(GvDrawCtx *c, double x, double y, double max_w, const char *s, double gray);

/* Over the lanes (clipped to them): the selection's outlines, its flow
 * arrow, the selected range's band. The caller holds the lock. */
void gv_render_overlay(GvDrawCtx *c);
/* The selected range's duration on the axis. */
void gv_render_range_label(GvDrawCtx *c);
/* gv_view_flow's arrow (gv-render.h); the caller holds the lock. */
gboolean gv_render_flow_points(GvTraceModel *m, const GvView *v, double out[4]);

#endif /* GV_RENDER_PRIVATE_H */
