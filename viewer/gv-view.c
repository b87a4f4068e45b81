/* gv-view.c: the view's arithmetic (see gv-view.h). Times saturate and
 * doubles go back to int64 clamped, so no trace's times overflow it. */
#include "gv-view.h"
#include "gt_base.h"

#include <math.h>
#include <string.h>

void gv_view_init(GvView *v, int width, int height)
{
    memset(v, 0, sizeof *v);
    v->width = width;
    v->height = height;
    v->ns_per_px = 1e6;
}

double gv_view_lanes_w(const GvView *v)
{
    return v->width > GV_LABEL_W + 10 ? v->width - GV_LABEL_W : 10;
}

double gv_ns_diff(int64_t a, int64_t b)
{
    int64_t d;
    return __builtin_sub_overflow(a, b, &d) ? (double)a - (double)b : (double)d;
}

int64_t gv_ns_from_double(double x)
{
    if (x != x)
        return 0;
    if (x >= 9.2e18)
        return INT64_MAX;
    if (x <= -9.2e18)
        return INT64_MIN;
    return (int64_t)x;
}

gboolean gv_view_warped(const GvView *v)
{
    return v->align && v->align_side == 1;
}

int64_t gv_view_axis(const GvView *v, int64_t t_ns)
{
    return gv_view_warped(v) ? gv_align_map(v->align, 1, t_ns) : t_ns;
}

int64_t gv_view_own(const GvView *v, int64_t axis_ns)
{
    return gv_view_warped(v) ? gv_align_map(v->align, 0, axis_ns) : axis_ns;
}

void gv_view_show_range(GvView *v, int64_t from_ns, int64_t to_ns)
{
    from_ns = gv_view_axis(v, from_ns);
    to_ns = gv_view_axis(v, to_ns);
    if (to_ns <= from_ns)
        to_ns = gt_sat_add(from_ns, 1);
    if (to_ns <= from_ns) /* from INT64_MAX */
        from_ns = to_ns - 1;
    double len = gv_ns_diff(to_ns, from_ns);
    int64_t margin = gv_ns_from_double(len / 50);
    v->t0_ns = gt_sat_sub(from_ns, margin);
    v->ns_per_px = (len + 2 * (double)margin) / gv_view_lanes_w(v);
    if (v->ns_per_px < 1e-3)
        v->ns_per_px = 1e-3;
}

void gv_view_fit(GvView *v, GvTraceModel *m)
{
    int64_t s, e;
    gv_trace_model_span(m, &s, &e);
    v->origin_ns = s;
    gv_view_show_range(v, s, e);
}

void gv_view_fit_steps(GvView *v, GvTraceModel *m)
{
    const gt_report *r = gv_trace_model_report(m);
    gv_view_fit(v, m);
    if (r && r->n_steps > 0 && r->steps[r->n_steps - 1].end_ns > r->steps[0].start_ns)
        gv_view_show_range(v, r->steps[0].start_ns, r->steps[r->n_steps - 1].end_ns);
}

double gv_view_x(const GvView *v, int64_t t_ns)
{
    return GV_LABEL_W + gv_ns_diff(gv_view_axis(v, t_ns), v->t0_ns) / v->ns_per_px;
}

static int64_t axis_time(const GvView *v, double x)
{
    return gt_sat_add(v->t0_ns, gv_ns_from_double(round((x - GV_LABEL_W) * v->ns_per_px)));
}

int64_t gv_view_time(const GvView *v, double x)
{
    return gv_view_own(v, axis_time(v, x));
}

int64_t gv_view_end(const GvView *v)
{
    return gv_view_time(v, v->width);
}

void gv_view_zoom(GvView *v, double factor, double x)
{
    if (factor <= 0)
        return;
    int64_t t = axis_time(v, x);
    double npp = v->ns_per_px / factor;
    if (npp < 1e-3) /* a thousandth of a nanosecond per pixel is enough */
        npp = 1e-3;
    if (npp > 1e12)
        npp = 1e12;
    v->ns_per_px = npp;
    v->t0_ns = gt_sat_sub(t, gv_ns_from_double(round((x - GV_LABEL_W) * npp)));
}

void gv_view_pan(GvView *v, double dx_px)
{
    v->t0_ns = gt_sat_sub(v->t0_ns, gv_ns_from_double(round(dx_px * v->ns_per_px)));
}
