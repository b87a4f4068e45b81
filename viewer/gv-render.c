/* gv-render.c: drawing the timeline (see gv-render.h). Layout, top down: the
 * time axis, the steps ruler (from the analysis), then each track: a title
 * row and its lanes. Coordinates are clamped before they reach cairo: a
 * kernel of a second at a nanosecond zoom is billions of pixels wide. */
#include "gv-render.h"
#include "gv-render-private.h"
#include "gt_base.h"

#include <errno.h>
#include <math.h>
#include <pango/pangocairo.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gt_outpath.h"

/* ---- colours ------------------------------------------------------------------ */

static void hsv(double h, double s, double val, double rgb[3])
{
    /* h in [0, 1]: fmod(6h, 2) is the sector's parity plus its fraction (a box's colour each: no fmod) */
    double h6 = h * 6;
    int sector = (int)h6;
    double c = val * s, x = c * (1 - fabs((sector & 1) + (h6 - sector) - 1)), m = val - c;
    double r = 0, g = 0, b = 0;
    int i = sector % 6;
    switch (i) {
    case 0: r = c; g = x; break;
    case 1: r = x; g = c; break;
    case 2: g = c; b = x; break;
    case 3: g = x; b = c; break;
    case 4: r = x; b = c; break;
    default: r = c; b = x; break;
    }
    rgb[0] = r + m;
    rgb[1] = g + m;
    rgb[2] = b + m;
}

void gv_color_gap(int cause, double rgb[3])
{
    static const double c[3][3] = {
        {0.86, 0.20, 0.22}, /* host-wait: red, the host was late */
        {0.95, 0.80, 0.20}, /* kernel-wait: yellow, launch overhead */
        {0.93, 0.52, 0.13}, /* other: orange */
    };
    int i = cause >= 0 && cause < 3 ? cause : 2;
    memcpy(rgb, c[i], sizeof c[i]);
}

void gv_color_item(GvTraceModel *m, const GvItem *it, double rgb[3])
{
    if (it->kind == GV_ITEM_GAP) {
        gv_color_gap(it->aux, rgb);
        return;
    }
    if ((it->kind == GV_ITEM_NVTX || it->kind == GV_ITEM_MARK) && it->color) {
        uint32_t argb = gv_trace_model_color(m, (uint16_t)(it->color - 1));
        rgb[0] = ((argb >> 16) & 0xff) / 255.0;
        rgb[1] = ((argb >> 8) & 0xff) / 255.0;
        rgb[2] = (argb & 0xff) / 255.0;
        return;
    }
    /* Hues by name so a kernel has one colour everywhere; kinds keep their own band. */
    uint32_t h = it->name * 2654435761u;
    double hue = (h >> 8) / 16777216.0;
    switch (it->kind) {
    case GV_ITEM_MEMCPY: hsv(0.08 + 0.05 * (it->aux % 3), 0.55, 0.95, rgb); break; /* copies: warm */
    case GV_ITEM_MEMSET: hsv(0.80, 0.35, 0.85, rgb); break;
    case GV_ITEM_API: hsv(0.30 + 0.15 * hue, 0.30, 0.80, rgb); break;  /* calls: muted green */
    case GV_ITEM_NVTX: hsv(0.55 + 0.12 * hue, 0.30, 0.92, rgb); break; /* ranges: pale blue */
    case GV_ITEM_MARK: hsv(0.78 + 0.12 * hue, 0.70, 0.75, rgb); break; /* marks: purple..magenta */
    case GV_ITEM_SYNC: hsv(0.0, 0.30 + 0.08 * (it->aux % 4), 0.72, rgb); break; /* waiting: greyish red */
    default: hsv(0.50 + 0.45 * hue, 0.55, 0.78, rgb); break;          /* kernels and ops: blue..magenta */
    }
}

/* ---- layout ----------------------------------------------------------------------- */


/* Items closer than this merge: what is drawn and what a click hits agree. */
static double lane_min_px(const GvLane *l)
{
    return l->kind == GV_ITEM_GAP ? 1.0 : l->kind == GV_ITEM_MARK ? GV_MARK_PX : GV_MIN_BOX_PX;
}

typedef struct skip_ctx { GvBoxFunc visit; void *data; int64_t from_ns; } skip_ctx;

/* An item the previous stretch drew whole is not drawn again. */
static void skip_drawn(const GvLane *l, const GvBox *b, void *p)
{
    const skip_ctx *c = p;
    if (b->count == 1 && b->start_ns < c->from_ns)
        return;
    c->visit(l, b, c->data);
}

/* An aligned view's own time runs at another rate in each step: it is drawn
 * in stretches of whole pieces of the map at least 64 px wide (or to t1),
 * each at its own ns per pixel. The stretch from s: its end and rate. */
static int64_t next_stretch(const GvView *v, int64_t s, int64_t t1_ns, double *out_npp)
{
    int64_t e = s, p0, p1;
    do {
        gv_align_piece(v->align, 1, e, &p0, &p1);
        e = p1;
    } while (e < t1_ns && gv_view_x(v, e) - gv_view_x(v, s) < 64);
    if (e > t1_ns)
        e = t1_ns;
    double px = gv_view_x(v, e) - gv_view_x(v, s);
    *out_npp = px > 1e-9 ? gv_ns_diff(e, s) / px : v->ns_per_px;
    return e;
}

/* The boxes of a lane in view, stretch by stretch in an aligned view. */
static size_t walk_view(const GvLane *l, const GvView *v, int64_t t0_ns, int64_t t1_ns, GvBoxFunc visit, void *data)
{
    double min_px = lane_min_px(l), npp;
    if (!gv_view_warped(v))
        return gv_lane_walk(l, t0_ns, t1_ns, v->ns_per_px, min_px, visit, data);
    size_t n = 0;
    for (int64_t s = t0_ns, e; s < t1_ns; s = e) {
        e = next_stretch(v, s, t1_ns, &npp);
        skip_ctx c = {visit, data, s};
        n += s == t0_ns ? gv_lane_walk(l, s, e, npp, min_px, visit, data)
                        : gv_lane_walk(l, s, e, npp, min_px, skip_drawn, &c);
    }
    return n;
}

/* Own ns per pixel at t, as drawn (a hit merges what drawing merged). */
static double npp_at(const GvView *v, int64_t t_ns)
{
    if (!gv_view_warped(v))
        return v->ns_per_px;
    int64_t s = gv_view_time(v, GV_LABEL_W), t1 = gv_view_end(v), e;
    double npp = v->ns_per_px;
    for (; s < t1; s = e)
        if ((e = next_stretch(v, s, t1, &npp)) > t_ns)
            break;
    return npp;
}


typedef struct hit_ctx {
    const GvView *v;
    double x, y;
    GvItemRef ref;
    size_t count;
    gboolean found;
} hit_ctx;

static gboolean hit_lane(const GvTrack *tr, size_t ti, const GvLane *l, size_t li, double y, void *data)
{
    hit_ctx *c = data;
    if (c->y < y || c->y >= y + gv_render_lane_h(l))
        return FALSE;
    GvBox b;
    int64_t t = gv_view_time(c->v, c->x);
    double npp = npp_at(c->v, t);
    double slop_px = l->kind == GV_ITEM_MARK ? GV_MARK_PX / 2.0 + 1 : 2; /* a marker is wider than its instant */
    if (gv_lane_hit(l, t, npp, lane_min_px(l), gv_ns_from_double(slop_px * npp), &b)) {
        c->ref = (GvItemRef){ti, li, b.first};
        c->count = b.count;
        c->found = TRUE;
    }
    return TRUE;
}

gboolean gv_view_hit(GvTraceModel *m, const GvView *v, double x, double y, GvItemRef *out, size_t *out_count)
{
    if (x < GV_LABEL_W || y < gv_render_content_top())
        return FALSE;
    hit_ctx c = {.v = v, .x = x, .y = y};
    gv_trace_model_lock(m);
    gv_render_each_lane(m, v, hit_lane, &c);
    gv_trace_model_unlock(m);
    if (c.found) {
        *out = c.ref;
        if (out_count)
            *out_count = c.count;
    }
    return c.found;
}

int gv_view_content_height(GvTraceModel *m, const GvView *v)
{
    double h = 0;
    gv_trace_model_lock(m);
    for (size_t ti = 0; ti < gv_trace_model_n_tracks(m); ti++) {
        const GvTrack *tr = gv_trace_model_track(m, ti);
        h += GV_TITLE_H;
        for (size_t li = 0; li < tr->n_lanes; li++)
            h += gv_render_lane_h(tr->lanes[li]);
    }
    gv_trace_model_unlock(m);
    return (int)h + (int)gv_render_content_top();
}

double gv_view_lane_y(GvTraceModel *m, const GvView *v, size_t track, size_t lane)
{
    double y = -1;
    gv_trace_model_lock(m);
    gv_render_lane_y(m, v, track, lane, &y);
    gv_trace_model_unlock(m);
    return y;
}

gboolean gv_view_flow(GvTraceModel *m, const GvView *v, double out[4])
{
    gv_trace_model_lock(m);
    gboolean ok = gv_render_flow_points(m, v, out);
    gv_trace_model_unlock(m);
    return ok;
}

/* ---- drawing ------------------------------------------------------------------------ */

/* ---- boxes ------------------------------------------------------------------------------ */

static void flush_boxes(GvDrawCtx *c)
{
    if (!c->path_open)
        return;
    cairo_set_source_rgba(c->cr, c->path_rgba[0], c->path_rgba[1], c->path_rgba[2], c->path_rgba[3]);
    cairo_fill(c->cr);
    c->path_open = FALSE;
}

static void path_color(GvDrawCtx *c, const double rgb[3], double alpha)
{
    if (c->path_open && (c->path_rgba[0] != rgb[0] || c->path_rgba[1] != rgb[1] || c->path_rgba[2] != rgb[2] ||
                         c->path_rgba[3] != alpha))
        flush_boxes(c);
    c->path_rgba[0] = rgb[0];
    c->path_rgba[1] = rgb[1];
    c->path_rgba[2] = rgb[2];
    c->path_rgba[3] = alpha;
    c->path_open = TRUE;
}

/* Whole pixels: cairo fills pixel-aligned rectangles without antialiasing
 * work, several times faster than ones at fractional x. */
static void add_box(GvDrawCtx *c, double x0, double x1, double y, double h, const double rgb[3], double alpha)
{
    path_color(c, rgb, alpha);
    double a = floor(x0), b = floor(x1 + 0.5);
    if (b < a + 1)
        b = a + 1;
    cairo_rectangle(c->cr, a, floor(y), b - a, h);
}

/* An item's box ends a pixel short of its end, so boxes back to back (a
 * thread's CUDA calls, a stream's kernels) show where one ends and the next
 * begins; boxes under 4 px keep every pixel. */
static void add_item_box(GvDrawCtx *c, double x0, double x1, double y, double h, const double rgb[3], double alpha)
{
    double a = floor(x0), b = floor(x1) - 1;
    if (b - a < 3)
        add_box(c, x0, x1, y, h, rgb, alpha);
    else
        add_box(c, a, b, y, h, rgb, alpha);
}

/* A mark: a small triangle pointing down at its instant; marks merged at
 * this zoom: a trapezoid from the first to the last. */
static void add_marker(GvDrawCtx *c, double x0, double x1, double y, double h, const double rgb[3])
{
    path_color(c, rgb, 1.0);
    const double r = GV_MARK_PX / 2.0;
    x0 = floor(x0) + 0.5;
    x1 = floor(x1) + 0.5;
    cairo_move_to(c->cr, x0 - r, y + 2);
    cairo_line_to(c->cr, x1 + r, y + 2);
    cairo_line_to(c->cr, x1, y + h - 2);
    if (x1 > x0)
        cairo_line_to(c->cr, x0, y + h - 2);
    cairo_close_path(c->cr);
}

static void draw_box(const GvLane *l, const GvBox *b, void *data)
{
    GvDrawCtx *c = data;
    const GvView *v = c->v;
    double x0 = gv_render_clampx(v, gv_view_x(v, b->start_ns)), x1 = gv_render_clampx(v, gv_view_x(v, b->end_ns));
    double rgb[3];
    const GvItem *it = &l->items[b->count > 1 ? b->dominant : b->first];
    gv_color_item(c->m, it, rgb);
    c->n_boxes++;
    if (l->kind == GV_ITEM_MARK) {
        add_marker(c, x0, x1, c->y, c->h, rgb);
        return;
    }
    if (x1 - x0 < 1)
        x1 = x0 + 1;
    if (b->count > 1 && l->kind != GV_ITEM_GAP) { /* a merged run: a shade darker */
        for (int k = 0; k < 3; k++)
            rgb[k] *= 0.80;
    }
    /* gaps under a pixel each: a pale hint, not solid idle */
    if (l->kind == GV_ITEM_GAP)
        add_box(c, x0, x1, c->y + 1, c->h - 2, rgb, b->count > 1 ? 0.35 : 1.0);
    else
        add_item_box(c, x0, x1, c->y + 1, c->h - 2, rgb, 1.0);
    if (v->match && it->name < v->n_match && v->match[it->name]) { /* a search match: outlined */
        flush_boxes(c);
        cairo_set_source_rgb(c->cr, GV_MATCH_RGB);
        cairo_set_line_width(c->cr, 2);
        cairo_rectangle(c->cr, floor(x0) + 1, c->y + 1, MAX(floor(x1 - x0) - 2, 1), c->h - 2);
        cairo_stroke(c->cr);
    }
    double w = x1 - x0;
    if (w >= 40 && l->kind != GV_ITEM_GAP) {
        char buf[48];
        const char *label;
        if (b->count > 1) {
            snprintf(buf, sizeof buf, "%zu items", b->count);
            label = buf;
        } else {
            label = gv_trace_model_name(c->m, it->name);
        }
        double tx = x0 < GV_LABEL_W ? GV_LABEL_W : x0;
        double tw = x1 - tx - 4;
        if (tw >= 30) {
            flush_boxes(c); /* the text goes over the box */
            gv_render_text_at(c, tx + 2, c->y + 2, tw, label, 0.08);
        }
    }
}

static gboolean draw_lane(const GvTrack *tr, size_t ti, const GvLane *l, size_t li, double y, void *data)
{
    GvDrawCtx *c = data;
    c->y = y;
    c->h = gv_render_lane_h(l);
    if (l->kind == GV_ITEM_GAP) { /* the device's lane: busy in grey, gaps in their colour on top */
        static const double busy[3] = {0.80, 0.82, 0.85};
        add_box(c, GV_LABEL_W, c->v->width, y + 1, c->h - 2, busy, 1.0);
    }
    walk_view(l, c->v, c->t_left_ns, c->t_right_ns, draw_box, c);
    flush_boxes(c);
    return FALSE;
}

/* Lane titles, in a pass of their own after the boxes: one clip for all. */
static gboolean label_background(const GvTrack *tr, size_t ti, const GvLane *l, size_t li, double y, void *data)
{
    GvDrawCtx *c = data;
    cairo_rectangle(c->cr, 0, floor(y), GV_LABEL_W, gv_render_lane_h(l));
    return FALSE;
}

static gboolean label_text(const GvTrack *tr, size_t ti, const GvLane *l, size_t li, double y, void *data)
{
    gv_render_text_at(data, 16, y + 1, GV_LABEL_W - 20, l->label, 0.35);
    return FALSE;
}

/* Lane titles straight onto the target. */
static void draw_labels(GvDrawCtx *c)
{
    cairo_t *cr = c->cr;
    cairo_save(cr);
    cairo_rectangle(cr, 0, gv_render_content_top(), GV_LABEL_W, c->v->height - gv_render_content_top());
    cairo_clip(cr);
    gv_render_each_lane(c->m, c->v, label_background, c);
    cairo_set_source_rgb(cr, 0.97, 0.97, 0.97);
    cairo_fill(cr);
    gv_render_each_lane(c->m, c->v, label_text, c);
    cairo_restore(cr);
}

/* The titles change only when lanes come or the font changes, while every
 * pan and zoom redraws: the whole column is drawn once into an image kept by
 * those keys and copied in at the scroll (a fraction of a millisecond, where
 * showing some forty layouts took a millisecond or more). A column taller
 * than LABEL_IMAGE_MAX_PX is kept for one scroll position at a time. Two
 * images: the compare page draws two timelines. Main thread only, like the
 * text cache. */
enum { LABEL_IMAGE_MAX_PX = 8192 };
typedef struct label_image {
    cairo_surface_t *s;
    guint64 layout_serial;
    guint text_serial;
    double scroll_y; /* -1: the whole column */
    double scale_x, scale_y;
    int height;
} label_image;
static label_image label_images[2];
static unsigned label_next;

static void blit_labels(GvDrawCtx *c)
{
    const GvView *v = c->v;
    double sx = 1, sy = 1, column_h = gv_render_content_top();
    cairo_surface_get_device_scale(cairo_get_target(c->cr), &sx, &sy);
    for (size_t ti = 0; ti < gv_trace_model_n_tracks(c->m); ti++) {
        const GvTrack *tr = gv_trace_model_track(c->m, ti);
        column_h += GV_TITLE_H;
        for (size_t li = 0; li < tr->n_lanes; li++)
            column_h += gv_render_lane_h(tr->lanes[li]);
    }
    gboolean whole = column_h * sy <= LABEL_IMAGE_MAX_PX;
    label_image want = {NULL, gv_trace_model_layout_serial(c->m), gv_render_text_serial(),
                        whole ? -1 : v->scroll_y, sx, sy, whole ? (int)ceil(column_h) : v->height};
    label_image *li = NULL;
    for (int i = 0; i < 2 && !li; i++) {
        label_image *x = &label_images[i];
        if (x->s && x->layout_serial == want.layout_serial && x->text_serial == want.text_serial &&
            x->scroll_y == want.scroll_y && x->height == want.height && x->scale_x == sx && x->scale_y == sy)
            li = x;
    }
    if (!li) {
        li = &label_images[label_next++ % 2];
        if (li->s)
            cairo_surface_destroy(li->s);
        want.s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)ceil(GV_LABEL_W * sx), (int)ceil(want.height * sy));
        *li = want;
        if (cairo_surface_status(li->s) != CAIRO_STATUS_SUCCESS) {
            cairo_surface_destroy(li->s);
            li->s = NULL;
            draw_labels(c);
            return;
        }
        cairo_surface_set_device_scale(li->s, sx, sy);
        GvView lv = *v;
        if (whole) { /* the column as if unscrolled and tall enough for all of it */
            lv.scroll_y = 0;
            lv.height = want.height;
        }
        GvDrawCtx lc = *c;
        lc.v = &lv;
        lc.cr = cairo_create(li->s);
        draw_labels(&lc);
        cairo_destroy(lc.cr);
    }
    cairo_save(c->cr);
    cairo_rectangle(c->cr, 0, gv_render_content_top(), GV_LABEL_W, v->height - gv_render_content_top());
    cairo_clip(c->cr);
    cairo_set_source_surface(c->cr, li->s, 0, whole ? -v->scroll_y : 0);
    cairo_paint(c->cr);
    cairo_restore(c->cr);
}

/* ---- axis and steps ------------------------------------------------------------------------ */

static void nice_tick(double ns_per_px, double *out_step)
{
    double want = ns_per_px * 110; /* ticks about 110 px apart */
    double p = pow(10, floor(log10(want > 1 ? want : 1)));
    double step = p;
    if (want > 5 * p)
        step = 10 * p;
    else if (want > 2 * p)
        step = 5 * p;
    else if (want > p)
        step = 2 * p;
    *out_step = step;
}

/* "step 3  +1.200 ms (+8.1%)": how long this step took next to its partner. */
static void step_diff_label(char *buf, size_t n, const gt_step *s, const GvStepPair *p)
{
    int64_t da = gt_sat_sub(p->end_ns[0], p->start_ns[0]), db = gt_sat_sub(p->end_ns[1], p->start_ns[1]);
    char d[32];
    gt_fmt_ns(d, sizeof d, gv_ns_from_double(fabs(gv_ns_diff(db, da))));
    if (da > 0)
        snprintf(buf, n, "step %lld  %s%s (%+.1f%%)", (long long)s->number, db < da ? "-" : "+", d,
                 100.0 * gv_ns_diff(db, da) / (double)da);
    else
        snprintf(buf, n, "step %lld  %s%s", (long long)s->number, db < da ? "-" : "+", d);
}

const char *gv_fmt_tick(char *buf, size_t n, double t_ns, double step_ns)
{
    double a = fabs(t_ns) > step_ns ? fabs(t_ns) : step_ns;
    double unit = a >= 1e9 ? 1e9 : a >= 1e6 ? 1e6 : a >= 1e3 ? 1e3 : 1;
    const char *name = unit == 1e9 ? "s" : unit == 1e6 ? "ms" : unit == 1e3 ? "us" : "ns";
    if (t_ns == 0) {
        snprintf(buf, n, "0");
        return buf;
    }
    /* As many decimals as the step needs, then none that are zeros. */
    int decimals = step_ns / unit >= 1 ? 0 : (int)ceil(-log10(step_ns / unit) - 1e-9);
    decimals = decimals > 9 ? 9 : decimals;
    char num[48];
    snprintf(num, sizeof num, "%.*f", decimals, t_ns / unit);
    if (strchr(num, '.')) {
        size_t k = strlen(num);
        while (k > 0 && num[k - 1] == '0')
            num[--k] = 0;
        if (k > 0 && num[k - 1] == '.')
            num[--k] = 0;
    }
    snprintf(buf, n, "%s %s", num, name);
    return buf;
}

/* Ticks about 110 px apart in the band [y, y + h), counted from the view's
 * origin (the trace's start): none before it, and no label that would be cut
 * at the right edge. An aligned view's ticks are not evenly spaced. */
static void draw_ticks(GvDrawCtx *c, double y, double h)
{
    const GvView *v = c->v;
    cairo_t *cr = c->cr;
    double step;
    nice_tick(gv_ns_diff(c->t_right_ns, c->t_left_ns) / gv_view_lanes_w(v), &step);
    double first = ceil(gv_ns_diff(c->t_left_ns, v->origin_ns) / step) * step, last_label = -1e9;
    if (first < 0)
        first = 0;
    cairo_set_line_width(cr, 1);
    /* Counted, not stepped: near INT64_MAX a double plus a step may be the
     * same double. About 110 px apart: a tick per pixel is already too many. */
    int max_ticks = (int)v->width + 2;
    for (int k = 0; k < max_ticks; k++) {
        double t = first + k * step;
        if (t + (double)v->origin_ns >= (double)c->t_right_ns)
            break;
        double x = floor(gv_view_x(v, gt_sat_add(v->origin_ns, gv_ns_from_double(t)))) + 0.5;
        cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
        cairo_move_to(cr, x, y + h - 6);
        cairo_line_to(cr, x, y + h);
        cairo_stroke(cr);
        if (x - last_label < 60)
            continue;
        char buf[48];
        gv_fmt_tick(buf, sizeof buf, t, step);
        PangoLayout *l = gv_render_text_layout(buf, 0);
        int w = 0;
        if (l)
            pango_layout_get_pixel_size(l, &w, NULL);
        if (x + 3 + w > v->width - 2)
            break;
        gv_render_text_at(c, x + 3, y + 2, -1, buf, 0.25);
        last_label = x;
    }
}

void gv_render_time_axis(cairo_t *cr, const GvView *v, double y, double h)
{
    GvDrawCtx c = {.cr = cr, .v = v};
    c.t_left_ns = gv_view_time(v, GV_LABEL_W);
    c.t_right_ns = gv_view_end(v);
    gv_render_text_begin(cr);
    draw_ticks(&c, y, h);
}

/* The steps ruler's shades: steps alternate between two; an aligned
 * trace's steps are tinted by how they compare with their partners: red
 * slower, green faster. */
enum { RULER_SHADES = 6 };
static const double ruler_rgb[RULER_SHADES][3] = {
    {0.70, 0.78, 0.90}, {0.78, 0.84, 0.90}, /* plain */
    {0.94, 0.62, 0.60}, {0.97, 0.72, 0.70}, /* slower than its partner */
    {0.62, 0.86, 0.66}, {0.72, 0.92, 0.74}, /* faster */
};

/* Step i's shade, and its partner in the other trace (NULL: none). */
static int ruler_shade(const GvView *v, const gt_step *s, size_t i, const GvStepPair **out_pair)
{
    const GvStepPair *p = gv_view_warped(v) ? gv_align_pair_at(v->align, 1, s->start_ns) : NULL;
    if (p && p->start_ns[1] != s->start_ns)
        p = NULL;
    if (out_pair)
        *out_pair = p;
    int tint = 0;
    if (p) {
        int64_t da = p->end_ns[0] - p->start_ns[0], db = p->end_ns[1] - p->start_ns[1];
        double rel = da > 0 ? (double)(db - da) / (double)da : 0;
        tint = rel > 0.01 ? 1 : rel < -0.01 ? 2 : 0;
    }
    return tint * 2 + (int)(i % 2);
}

/* Shade k's runs ([a, b) pairs) as one path, filled once. */
static void fill_runs(GvDrawCtx *c, int k, const double *runs, size_t n)
{
    for (size_t j = 0; j < n; j++)
        cairo_rectangle(c->cr, runs[2 * j], GV_AXIS_H + 1, runs[2 * j + 1] - runs[2 * j], GV_RULER_H - 2);
    cairo_set_source_rgb(c->cr, ruler_rgb[k][0], ruler_rgb[k][1], ruler_rgb[k][2]);
    cairo_fill(c->cr);
}

/* The steps' boxes: one path a shade (a zoomed-out view of a long run holds
 * tens of thousands of steps, and a fill each took hundreds of ms a frame),
 * each shade's steps merged where they touch at whole pixels: steps in time
 * order make at most a run a pixel column; a shade whose runs fill the
 * buffer (steps of several processes out of order) is filled there. */
static void draw_ruler(GvDrawCtx *c, const gt_report *r)
{
    const GvView *v = c->v;
    size_t cap = (size_t)(v->width > 0 ? v->width : 1) + 2, n[RULER_SHADES] = {0};
    double *runs = g_new(double, RULER_SHADES * cap * 2);
    for (size_t i = 0; i < r->n_steps; i++) {
        const gt_step *s = &r->steps[i];
        if (s->end_ns < c->t_left_ns || s->start_ns > c->t_right_ns)
            continue;
        int k = ruler_shade(v, s, i, NULL);
        double x0 = floor(gv_render_clampx(v, gv_view_x(v, s->start_ns)));
        double x1 = floor(gv_render_clampx(v, gv_view_x(v, s->end_ns)) + 0.5);
        if (x1 < x0 + 1)
            x1 = x0 + 1;
        double *mine = runs + k * cap * 2, *last = mine + (n[k] ? n[k] - 1 : 0) * 2;
        if (n[k] && x0 <= last[1] && x1 >= last[0]) { /* touches the run before: one */
            last[0] = x0 < last[0] ? x0 : last[0];
            last[1] = x1 > last[1] ? x1 : last[1];
            continue;
        }
        if (n[k] == cap) {
            fill_runs(c, k, mine, n[k]);
            n[k] = 0;
        }
        mine[2 * n[k]] = x0, mine[2 * n[k] + 1] = x1;
        n[k]++;
    }
    for (int k = 0; k < RULER_SHADES; k++)
        if (n[k])
            fill_runs(c, k, runs + k * cap * 2, n[k]);
    g_free(runs);
}

static void draw_axis(GvDrawCtx *c)
{
    const GvView *v = c->v;
    cairo_t *cr = c->cr;
    cairo_set_source_rgb(cr, 0.93, 0.93, 0.93);
    cairo_rectangle(cr, 0, 0, v->width, GV_AXIS_H);
    cairo_fill(cr);
    draw_ticks(c, 0, GV_AXIS_H);
    /* Steps from the analysis (ruler_shade) */
    const gt_report *r = gv_trace_model_report(c->m);
    cairo_set_source_rgb(cr, 0.97, 0.97, 0.97);
    cairo_rectangle(cr, 0, GV_AXIS_H, v->width, GV_RULER_H);
    cairo_fill(cr);
    if (r)
        draw_ruler(c, r);
    for (size_t i = 0; r && i < r->n_steps; i++) { /* the names of steps wide enough for one */
        const gt_step *s = &r->steps[i];
        if (s->end_ns < c->t_left_ns || s->start_ns > c->t_right_ns)
            continue;
        double x0 = gv_render_clampx(v, gv_view_x(v, s->start_ns)), x1 = gv_render_clampx(v, gv_view_x(v, s->end_ns));
        if (x1 - x0 <= 40)
            continue;
        const GvStepPair *p = NULL;
        ruler_shade(v, s, i, &p);
        char buf[96];
        if (p)
            step_diff_label(buf, sizeof buf, s, p);
        else
            snprintf(buf, sizeof buf, "step %lld", (long long)s->number);
        gv_render_text_at(c, (x0 > GV_LABEL_W ? x0 : GV_LABEL_W) + 2, GV_AXIS_H + 1, x1 - x0 - 4, buf, 0.1);
    }
    gv_render_text_at(c, 6, 2, GV_LABEL_W - 10, "time", 0.35);
    gv_render_text_at(c, 6, GV_AXIS_H + 1, GV_LABEL_W - 10,
            !r ? "steps (after analysis)" : gv_view_warped(v) ? "steps (vs. before)" : "steps", 0.35);
}

size_t gv_render_timeline(cairo_t *cr, GvTraceModel *m, const GvView *v)
{
    GvDrawCtx c = {.cr = cr, .m = m, .v = v};
    c.t_left_ns = gv_view_time(v, GV_LABEL_W);
    c.t_right_ns = gv_view_end(v);
    cairo_save(cr);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    gv_render_text_begin(cr);

    gv_trace_model_lock(m);
    /* Track titles: a pass of their own so lanes can clip to their area. */
    double y = gv_render_content_top() - v->scroll_y;
    for (size_t ti = 0; ti < gv_trace_model_n_tracks(m) && y < v->height; ti++) {
        const GvTrack *tr = gv_trace_model_track(m, ti);
        if (y + GV_TITLE_H > gv_render_content_top()) {
            cairo_set_source_rgb(cr, tr->kind == GV_TRACK_DEVICE ? 0.86 : 0.90, 0.89,
                                 tr->kind == GV_TRACK_DEVICE ? 0.95 : 0.90);
            cairo_rectangle(cr, 0, y, v->width, GV_TITLE_H);
            cairo_fill(cr);
            gv_render_text_at(&c, 4, y + 2, v->width - 8, tr->title, 0.05);
        }
        y += GV_TITLE_H;
        for (size_t li = 0; li < tr->n_lanes; li++)
            y += gv_render_lane_h(tr->lanes[li]);
    }
    cairo_save(cr);
    cairo_rectangle(cr, GV_LABEL_W, gv_render_content_top(), v->width - GV_LABEL_W, v->height - gv_render_content_top());
    cairo_clip(cr);
    gv_render_each_lane(m, v, draw_lane, &c);
    gv_render_overlay(&c);
    cairo_restore(cr);
    blit_labels(&c);
    draw_axis(&c);
    if (v->has_range)
        gv_render_range_label(&c);
    gboolean loaded = gv_trace_model_is_loaded(m);
    gv_trace_model_unlock(m);
    g_autofree char *problem = gv_trace_model_get_problem(m);

    if (!loaded && !problem) {
        char buf[64];
        snprintf(buf, sizeof buf, "loading %.0f%%", 100 * gv_trace_model_progress(m));
        cairo_set_source_rgba(cr, 1, 1, 0.8, 0.9);
        cairo_rectangle(cr, v->width - 130, v->height - 24, 126, 20);
        cairo_fill(cr);
        gv_render_text_at(&c, v->width - 124, v->height - 22, 120, buf, 0.1);
    }
    if (problem) { /* a late integrity-check failure: said over the view, which stays */
        cairo_set_source_rgba(cr, 0.85, 0.15, 0.15, 0.92);
        cairo_rectangle(cr, 0, v->height - 24, v->width, 24);
        cairo_fill(cr);
        gv_render_text_at(&c, 6, v->height - 21, v->width - 12, problem, 1.0);
    }
    cairo_restore(cr);
    return c.n_boxes;
}

static cairo_status_t write_fd(void *closure, const unsigned char *data, unsigned int length)
{
    int fd = *(const int *)closure;
    while (length > 0) {
        ssize_t k = write(fd, data, length);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return CAIRO_STATUS_WRITE_ERROR;
        data += k;
        length -= (unsigned int)k;
    }
    return CAIRO_STATUS_SUCCESS;
}

/* By gt_outpath's rule (a regular file is replaced, never anything else),
 * through a temporary beside it renamed into place when whole. */
gboolean gv_write_png(cairo_surface_t *s, const char *path, GError **error)
{
    gt_outpath out;
    if (gt_outpath_check(&out, path, GT_OUTPATH_FORCE, NULL, 0) != 0) {
        g_set_error(error, GV_ERROR, 1, "%s", out.why);
        return FALSE;
    }
    g_autofree char *tmp = g_strdup_printf("%s.tmp.XXXXXX", out.target);
    int fd = g_mkstemp(tmp);
    if (fd < 0) {
        g_set_error(error, GV_ERROR, 1, "%s: cannot write the PNG: cannot create a file beside it: %s", path,
                    g_strerror(errno));
        return FALSE;
    }
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask); /* as a file created in place would be */
    cairo_status_t st = cairo_surface_write_to_png_stream(s, write_fd, &fd);
    int err = st == CAIRO_STATUS_SUCCESS && fsync(fd) != 0 ? errno : 0;
    if (close(fd) != 0 && !err)
        err = errno;
    if (st == CAIRO_STATUS_SUCCESS && !err && rename(tmp, out.target) != 0)
        err = errno;
    if (st != CAIRO_STATUS_SUCCESS || err) {
        unlink(tmp);
        g_set_error(error, GV_ERROR, 1, "%s: cannot write the PNG: %s", path,
                    err ? g_strerror(err) : cairo_status_to_string(st));
        return FALSE;
    }
    return TRUE;
}
