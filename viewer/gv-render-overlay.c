/* gv-render-overlay.c: what is drawn over the lanes (see gv-render-private.h):
 * the selected item's outline and its related item's, the arrow from a
 * launch or synchronization call to its device work, and the selected time
 * range (its band, and its duration on the axis). It draws no lanes. */
#include "gv-render-private.h"

#include <math.h>

/* The selected range's duration on the axis, over the band (Perfetto's area selection). */
void gv_render_range_label(GvDrawCtx *c)
{
    const GvView *v = c->v;
    double x0 = gv_render_clampx(v, gv_view_x(v, MIN(v->range_from_ns, v->range_to_ns)));
    double x1 = gv_render_clampx(v, gv_view_x(v, MAX(v->range_from_ns, v->range_to_ns)));
    x0 = MAX(x0, GV_LABEL_W);
    x1 = MIN(x1, v->width);
    if (x1 - x0 < 1)
        return;
    char buf[40];
    gt_fmt_ns(buf, sizeof buf, fabs((double)v->range_to_ns - (double)v->range_from_ns));
    cairo_set_source_rgb(c->cr, GV_RANGE_RGB);
    cairo_rectangle(c->cr, floor(x0), 2, ceil(x1 - x0), GV_AXIS_H - 4);
    cairo_fill(c->cr);
    PangoLayout *l = gv_render_text_layout(buf, 0);
    int w = 0;
    if (l)
        pango_layout_get_pixel_size(l, &w, NULL);
    if (x1 - x0 >= w + 4)
        gv_render_text_at(c, (x0 + x1 - w) / 2, 3, x1 - x0, buf, 1.0);
}

/* An item as drawn: its x span (clamped, at least as wide as its marker)
 * and its lane's band. The caller holds the lock. */
typedef struct item_box { const GvItem *it; double x0, x1, y, h; } item_box;

static gboolean item_rect(GvTraceModel *m, const GvView *v, const GvItemRef *ref, item_box *out)
{
    const GvTrack *tr = gv_trace_model_track(m, ref->track);
    if (!tr || ref->lane >= tr->n_lanes || ref->index >= tr->lanes[ref->lane]->n ||
        !gv_render_lane_y(m, v, ref->track, ref->lane, &out->y))
        return FALSE;
    const GvLane *l = tr->lanes[ref->lane];
    out->it = &l->items[ref->index];
    out->x0 = gv_render_clampx(v, gv_view_x(v, out->it->start_ns));
    out->x1 = gv_render_clampx(v, gv_view_x(v, out->it->end_ns));
    out->h = gv_render_lane_h(l);
    double min_w = l->kind == GV_ITEM_MARK ? GV_MARK_PX + 2 : 3;
    if (out->x1 - out->x0 < min_w) {
        out->x0 -= min_w / 2;
        out->x1 = out->x0 + min_w;
    }
    return TRUE;
}

static void outline_item(GvDrawCtx *c, const GvItemRef *ref, double r, double g, double b)
{
    item_box ib;
    if (!item_rect(c->m, c->v, ref, &ib))
        return;
    cairo_set_source_rgb(c->cr, r, g, b);
    cairo_set_line_width(c->cr, 2);
    cairo_rectangle(c->cr, ib.x0, ib.y, ib.x1 - ib.x0, ib.h);
    cairo_stroke(c->cr);
}

/* From the call (launch or synchronize) at its start to the device work at
 * its start, leaving and entering the lanes on the sides that face each
 * other. The caller holds the lock. */
gboolean gv_render_flow_points(GvTraceModel *m, const GvView *v, double out[4])
{
    item_box a, b;
    if (!v->has_selection || !v->has_related || !item_rect(m, v, &v->selection, &a) ||
        !item_rect(m, v, &v->related, &b))
        return FALSE;
    if (a.it->kind != GV_ITEM_API) { /* the call is where the arrow starts */
        item_box t = a;
        a = b;
        b = t;
    }
    if (a.it->kind != GV_ITEM_API || b.it->kind == GV_ITEM_API)
        return FALSE;
    double ys = b.y < a.y ? a.y : a.y + a.h, yd = b.y < a.y ? b.y + b.h : b.y;
    double top = gv_render_content_top(), bottom = v->height;
    out[0] = a.x0 < GV_LABEL_W ? GV_LABEL_W : a.x0;
    out[1] = ys < top ? top : ys > bottom ? bottom : ys;
    out[2] = b.x0 < GV_LABEL_W ? GV_LABEL_W : b.x0;
    out[3] = yd < top ? top : yd > bottom ? bottom : yd;
    return TRUE;
}

static void draw_flow(GvDrawCtx *c)
{
    double p[4];
    if (!gv_render_flow_points(c->m, c->v, p))
        return;
    cairo_t *cr = c->cr;
    double ym = (p[1] + p[3]) / 2, dir = p[3] < p[1] ? -1 : 1; /* -1: the arrow points up */
    cairo_set_source_rgb(cr, GV_FLOW_RGB);
    cairo_set_line_width(cr, 2);
    cairo_arc(cr, p[0], p[1], 3, 0, 2 * G_PI);
    cairo_fill(cr);
    cairo_move_to(cr, p[0], p[1]);
    cairo_curve_to(cr, p[0], ym, p[2], ym, p[2], p[3] - dir * 6);
    cairo_stroke(cr);
    cairo_move_to(cr, p[2], p[3]);
    cairo_line_to(cr, p[2] - 5, p[3] - dir * 9);
    cairo_line_to(cr, p[2] + 5, p[3] - dir * 9);
    cairo_close_path(cr);
    cairo_fill(cr);
}

void gv_render_overlay(GvDrawCtx *c)
{
    const GvView *v = c->v;
    if (v->has_selection) {
        outline_item(c, &v->selection, 0, 0, 0);
        if (v->has_related)
            outline_item(c, &v->related, GV_FLOW_RGB);
        draw_flow(c);
    }
    if (v->has_range) {
        double x0 = gv_render_clampx(v, gv_view_x(v, MIN(v->range_from_ns, v->range_to_ns)));
        double x1 = gv_render_clampx(v, gv_view_x(v, MAX(v->range_from_ns, v->range_to_ns)));
        cairo_set_source_rgba(c->cr, GV_RANGE_RGB, 0.18);
        cairo_rectangle(c->cr, x0, gv_render_content_top(), x1 - x0, v->height);
        cairo_fill(c->cr);
    }
}
