/* gv-render.c: drawing the timeline (see gv-render.h). Layout, top down: the
 * time axis, the steps ruler (from the analysis), then each track: a title
 * row and its lanes. Coordinates are clamped before they reach cairo: a
 * kernel of a second at a nanosecond zoom is billions of pixels wide. */
#include "gv-render.h"

#include <math.h>
#include <pango/pangocairo.h>
#include <stdio.h>
#include <string.h>

void gv_view_init(GvView *v, int width, int height)
{
    memset(v, 0, sizeof *v);
    v->width = width;
    v->height = height;
    v->ns_per_px = 1e6;
}

static double lanes_w(const GvView *v)
{
    return v->width > GV_LABEL_W + 10 ? v->width - GV_LABEL_W : 10;
}

void gv_view_show_range(GvView *v, int64_t from_ns, int64_t to_ns)
{
    if (to_ns <= from_ns)
        to_ns = from_ns + 1;
    int64_t margin = (to_ns - from_ns) / 50;
    v->t0_ns = from_ns - margin;
    v->ns_per_px = (double)(to_ns - from_ns + 2 * margin) / lanes_w(v);
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

double gv_view_x(const GvView *v, int64_t t_ns)
{
    return GV_LABEL_W + (double)(t_ns - v->t0_ns) / v->ns_per_px;
}

int64_t gv_view_time(const GvView *v, double x)
{
    return v->t0_ns + (int64_t)llround((x - GV_LABEL_W) * v->ns_per_px);
}

int64_t gv_view_end(const GvView *v)
{
    return gv_view_time(v, v->width);
}

void gv_view_zoom(GvView *v, double factor, double x)
{
    if (factor <= 0)
        return;
    int64_t t = gv_view_time(v, x);
    double npp = v->ns_per_px / factor;
    if (npp < 1e-3) /* a thousandth of a nanosecond per pixel is enough */
        npp = 1e-3;
    if (npp > 1e12)
        npp = 1e12;
    v->ns_per_px = npp;
    v->t0_ns = t - (int64_t)llround((x - GV_LABEL_W) * npp);
}

void gv_view_pan(GvView *v, double dx_px)
{
    v->t0_ns -= (int64_t)llround(dx_px * v->ns_per_px);
}

/* ---- colours ------------------------------------------------------------------ */

static void hsv(double h, double s, double val, double rgb[3])
{
    double c = val * s, x = c * (1 - fabs(fmod(h * 6, 2) - 1)), m = val - c;
    double r = 0, g = 0, b = 0;
    int i = (int)(h * 6) % 6;
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
    if (it->kind == GV_ITEM_NVTX && it->color) {
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
    default: hsv(0.50 + 0.45 * hue, 0.55, 0.78, rgb); break;          /* kernels and ops: blue..magenta */
    }
}

/* ---- layout ----------------------------------------------------------------------- */

static double lane_h(const GvLane *l)
{
    return l->kind == GV_ITEM_GAP ? GV_GAP_LANE_H : GV_LANE_H;
}

static double content_top(void)
{
    return GV_AXIS_H + GV_RULER_H;
}

int gv_view_content_height(GvTraceModel *m, const GvView *v)
{
    double h = 0;
    gv_trace_model_lock(m);
    for (size_t ti = 0; ti < gv_trace_model_n_tracks(m); ti++) {
        const GvTrack *tr = gv_trace_model_track(m, ti);
        h += GV_TITLE_H;
        for (size_t li = 0; li < tr->n_lanes; li++)
            h += lane_h(tr->lanes[li]);
    }
    gv_trace_model_unlock(m);
    return (int)h + (int)content_top();
}

/* Calls back for each lane whose band of y is on screen (with its y); stops when it returns TRUE. */
typedef gboolean (*lane_func)(const GvTrack *tr, size_t ti, const GvLane *l, size_t li, double y, void *data);

static void each_visible_lane(GvTraceModel *m, const GvView *v, lane_func f, void *data)
{
    double y = content_top() - v->scroll_y;
    for (size_t ti = 0; ti < gv_trace_model_n_tracks(m) && y < v->height; ti++) {
        const GvTrack *tr = gv_trace_model_track(m, ti);
        y += GV_TITLE_H;
        for (size_t li = 0; li < tr->n_lanes; li++) {
            const GvLane *l = tr->lanes[li];
            double h = lane_h(l);
            if (y + h > content_top() && y < v->height && f(tr, ti, l, li, y, data))
                return;
            y += h;
        }
    }
}

typedef struct find_lane_ctx { size_t track, lane; double y; gboolean found; } find_lane_ctx;

double gv_view_lane_y(GvTraceModel *m, const GvView *v, size_t track, size_t lane)
{
    double y = content_top() - v->scroll_y;
    double out = -1;
    gv_trace_model_lock(m);
    for (size_t ti = 0; ti < gv_trace_model_n_tracks(m); ti++) {
        const GvTrack *tr = gv_trace_model_track(m, ti);
        y += GV_TITLE_H;
        for (size_t li = 0; li < tr->n_lanes; li++) {
            if (ti == track && li == lane)
                out = y;
            y += lane_h(tr->lanes[li]);
        }
    }
    gv_trace_model_unlock(m);
    return out;
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
    if (c->y < y || c->y >= y + lane_h(l))
        return FALSE;
    GvBox b;
    int64_t t = gv_view_time(c->v, c->x);
    if (gv_lane_hit(l, t, c->v->ns_per_px, GV_MIN_BOX_PX, (int64_t)(2 * c->v->ns_per_px), &b)) {
        c->ref = (GvItemRef){ti, li, b.first};
        c->count = b.count;
        c->found = TRUE;
    }
    return TRUE;
}

gboolean gv_view_hit(GvTraceModel *m, const GvView *v, double x, double y, GvItemRef *out, size_t *out_count)
{
    if (x < GV_LABEL_W || y < content_top())
        return FALSE;
    hit_ctx c = {.v = v, .x = x, .y = y};
    gv_trace_model_lock(m);
    each_visible_lane(m, v, hit_lane, &c);
    gv_trace_model_unlock(m);
    if (c.found) {
        *out = c.ref;
        if (out_count)
            *out_count = c.count;
    }
    return c.found;
}

/* ---- drawing ------------------------------------------------------------------------ */

typedef struct draw_ctx {
    cairo_t *cr;
    GvTraceModel *m;
    const GvView *v;
    double y, h;
    size_t n_boxes;
    /* Boxes of one colour in a row go into one path, filled once. */
    double path_rgba[4];
    gboolean path_open;
} draw_ctx;

static double clampx(const GvView *v, double x)
{
    return x < GV_LABEL_W - 2 ? GV_LABEL_W - 2 : x > v->width + 2 ? v->width + 2 : x;
}

/* ---- text: shaped once, drawn many times --------------------------------------------------
 * Shaping a string with pango costs tens of microseconds; a frame shows the
 * same lane titles, tick labels and names again and again. Layouts are kept by
 * (width, text) on one PangoContext for the main thread, where all drawing
 * runs, and dropped together when the font setup changes or there are many. */
enum { TEXT_CACHE_MAX = 1024 };
static PangoContext *text_ctx;
static GHashTable *text_cache; /* "width\x1ftext" -> PangoLayout */
static guint text_serial;

static void text_begin(cairo_t *cr)
{
    if (!text_ctx) {
        text_ctx = pango_font_map_create_context(pango_cairo_font_map_get_default());
        PangoFontDescription *font = pango_font_description_from_string("Sans 8");
        pango_context_set_font_description(text_ctx, font);
        pango_font_description_free(font);
        text_cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_object_unref);
    }
    pango_cairo_update_context(cr, text_ctx);
    if (pango_context_get_serial(text_ctx) != text_serial || g_hash_table_size(text_cache) > TEXT_CACHE_MAX) {
        g_hash_table_remove_all(text_cache);
        text_serial = pango_context_get_serial(text_ctx);
    }
}

static PangoLayout *text_layout(const char *s, double max_w)
{
    int w = max_w > 0 ? (int)max_w : -1;
    char key[320];
    int n = snprintf(key, sizeof key, "%d\x1f%s", w, s);
    if (n < 0 || (size_t)n >= sizeof key) /* a long name: not kept */
        return NULL;
    PangoLayout *l = g_hash_table_lookup(text_cache, key);
    if (!l) {
        l = pango_layout_new(text_ctx);
        pango_layout_set_ellipsize(l, PANGO_ELLIPSIZE_END);
        pango_layout_set_height(l, -1); /* one line */
        pango_layout_set_width(l, w > 0 ? w * PANGO_SCALE : -1);
        pango_layout_set_text(l, s, -1);
        g_hash_table_insert(text_cache, g_strdup(key), l);
    }
    return l;
}

static void text_at(draw_ctx *c, double x, double y, double max_w, const char *s, double gray)
{
    PangoLayout *l = text_layout(s, max_w), *own = NULL;
    if (!l) {
        l = own = pango_layout_new(text_ctx);
        pango_layout_set_ellipsize(l, PANGO_ELLIPSIZE_END);
        pango_layout_set_width(l, max_w > 0 ? (int)(max_w * PANGO_SCALE) : -1);
        pango_layout_set_text(l, s, -1);
    }
    cairo_set_source_rgb(c->cr, gray, gray, gray);
    cairo_move_to(c->cr, floor(x), floor(y));
    pango_cairo_show_layout(c->cr, l);
    if (own)
        g_object_unref(own);
}

/* ---- boxes ------------------------------------------------------------------------------ */

static void flush_boxes(draw_ctx *c)
{
    if (!c->path_open)
        return;
    cairo_set_source_rgba(c->cr, c->path_rgba[0], c->path_rgba[1], c->path_rgba[2], c->path_rgba[3]);
    cairo_fill(c->cr);
    c->path_open = FALSE;
}

/* Whole pixels: cairo fills pixel-aligned rectangles without antialiasing
 * work, several times faster than ones at fractional x. */
static void add_box(draw_ctx *c, double x0, double x1, double y, double h, const double rgb[3], double alpha)
{
    if (c->path_open && (c->path_rgba[0] != rgb[0] || c->path_rgba[1] != rgb[1] || c->path_rgba[2] != rgb[2] ||
                         c->path_rgba[3] != alpha))
        flush_boxes(c);
    double a = floor(x0), b = floor(x1 + 0.5);
    if (b < a + 1)
        b = a + 1;
    cairo_rectangle(c->cr, a, floor(y), b - a, h);
    c->path_rgba[0] = rgb[0];
    c->path_rgba[1] = rgb[1];
    c->path_rgba[2] = rgb[2];
    c->path_rgba[3] = alpha;
    c->path_open = TRUE;
}

static void draw_box(const GvLane *l, const GvBox *b, void *data)
{
    draw_ctx *c = data;
    const GvView *v = c->v;
    double x0 = clampx(v, gv_view_x(v, b->start_ns)), x1 = clampx(v, gv_view_x(v, b->end_ns));
    if (x1 - x0 < 1)
        x1 = x0 + 1;
    double rgb[3];
    const GvItem *it = &l->items[b->count > 1 ? b->dominant : b->first];
    gv_color_item(c->m, it, rgb);
    if (b->count > 1 && l->kind != GV_ITEM_GAP) { /* a merged run: a shade darker */
        for (int k = 0; k < 3; k++)
            rgb[k] *= 0.80;
    }
    /* gaps under a pixel each: a pale hint, not solid idle */
    add_box(c, x0, x1, c->y + 1, c->h - 2, rgb, b->count > 1 && l->kind == GV_ITEM_GAP ? 0.35 : 1.0);
    c->n_boxes++;
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
            text_at(c, tx + 2, c->y + 2, tw, label, 0.08);
        }
    }
}

static gboolean draw_lane(const GvTrack *tr, size_t ti, const GvLane *l, size_t li, double y, void *data)
{
    draw_ctx *c = data;
    const GvView *v = c->v;
    c->y = y;
    c->h = lane_h(l);
    if (l->kind == GV_ITEM_GAP) { /* the device's lane: busy in grey, gaps in their colour on top */
        static const double busy[3] = {0.80, 0.82, 0.85};
        add_box(c, GV_LABEL_W, v->width, y + 1, c->h - 2, busy, 1.0);
    }
    gv_lane_walk(l, v->t0_ns, gv_view_end(v), v->ns_per_px, l->kind == GV_ITEM_GAP ? 1.0 : GV_MIN_BOX_PX, draw_box,
                 c);
    flush_boxes(c);
    cairo_save(c->cr);
    cairo_reset_clip(c->cr);
    cairo_set_source_rgb(c->cr, 0.97, 0.97, 0.97);
    cairo_rectangle(c->cr, 0, floor(y), GV_LABEL_W, c->h);
    cairo_fill(c->cr);
    text_at(c, 16, y + 1, GV_LABEL_W - 20, l->label, 0.35);
    cairo_restore(c->cr);
    return FALSE;
}

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

static void draw_axis(draw_ctx *c)
{
    const GvView *v = c->v;
    cairo_t *cr = c->cr;
    cairo_set_source_rgb(cr, 0.93, 0.93, 0.93);
    cairo_rectangle(cr, 0, 0, v->width, GV_AXIS_H);
    cairo_fill(cr);
    double step;
    nice_tick(v->ns_per_px, &step);
    double first = ceil((double)(v->t0_ns - v->origin_ns) / step) * step;
    cairo_set_line_width(cr, 1);
    for (double t = first; t + v->origin_ns < (double)gv_view_end(v); t += step) {
        double x = floor(gv_view_x(v, v->origin_ns + (int64_t)t)) + 0.5;
        cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
        cairo_move_to(cr, x, GV_AXIS_H - 6);
        cairo_line_to(cr, x, GV_AXIS_H);
        cairo_stroke(cr);
        char buf[32];
        gv_format_ns(buf, sizeof buf, (int64_t)t);
        text_at(c, x + 3, 2, -1, buf, 0.25);
    }
    /* Steps from the analysis, alternating shades. */
    const gt_report *r = gv_trace_model_report(c->m);
    cairo_set_source_rgb(cr, 0.97, 0.97, 0.97);
    cairo_rectangle(cr, 0, GV_AXIS_H, v->width, GV_RULER_H);
    cairo_fill(cr);
    for (size_t i = 0; r && i < r->n_steps; i++) {
        const gt_step *s = &r->steps[i];
        if (s->end_ns < v->t0_ns || s->start_ns > gv_view_end(v))
            continue;
        double x0 = clampx(v, gv_view_x(v, s->start_ns)), x1 = clampx(v, gv_view_x(v, s->end_ns));
        cairo_set_source_rgb(cr, i % 2 ? 0.78 : 0.70, i % 2 ? 0.84 : 0.78, 0.90);
        cairo_rectangle(cr, x0, GV_AXIS_H + 1, x1 - x0 > 1 ? x1 - x0 : 1, GV_RULER_H - 2);
        cairo_fill(cr);
        if (x1 - x0 > 40) {
            char buf[32];
            snprintf(buf, sizeof buf, "step %lld", (long long)s->number);
            text_at(c, (x0 > GV_LABEL_W ? x0 : GV_LABEL_W) + 2, GV_AXIS_H + 1, x1 - x0 - 4, buf, 0.1);
        }
    }
    text_at(c, 6, 2, GV_LABEL_W - 10, "time", 0.35);
    text_at(c, 6, GV_AXIS_H + 1, GV_LABEL_W - 10, r ? "steps" : "steps (after analysis)", 0.35);
}

static void outline_item(draw_ctx *c, const GvItemRef *ref, double r, double g, double b)
{
    GvTraceModel *m = c->m;
    const GvTrack *tr = gv_trace_model_track(m, ref->track);
    if (!tr || ref->lane >= tr->n_lanes || ref->index >= tr->lanes[ref->lane]->n)
        return;
    const GvItem *it = &tr->lanes[ref->lane]->items[ref->index];
    double y = content_top() - c->v->scroll_y;
    for (size_t ti = 0; ti <= ref->track; ti++) {
        const GvTrack *t2 = gv_trace_model_track(m, ti);
        y += GV_TITLE_H;
        for (size_t li = 0; li < t2->n_lanes && !(ti == ref->track && li == ref->lane); li++)
            y += lane_h(t2->lanes[li]);
    }
    double x0 = clampx(c->v, gv_view_x(c->v, it->start_ns)), x1 = clampx(c->v, gv_view_x(c->v, it->end_ns));
    if (x1 - x0 < 3) {
        x0 -= 1.5;
        x1 = x0 + 3;
    }
    cairo_set_source_rgb(c->cr, r, g, b);
    cairo_set_line_width(c->cr, 2);
    cairo_rectangle(c->cr, x0, y, x1 - x0, lane_h(tr->lanes[ref->lane]));
    cairo_stroke(c->cr);
}

size_t gv_render_timeline(cairo_t *cr, GvTraceModel *m, const GvView *v)
{
    draw_ctx c = {.cr = cr, .m = m, .v = v};
    cairo_save(cr);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    text_begin(cr);

    gv_trace_model_lock(m);
    /* Track titles: a pass of its own so lanes can clip to their area. */
    double y = content_top() - v->scroll_y;
    for (size_t ti = 0; ti < gv_trace_model_n_tracks(m) && y < v->height; ti++) {
        const GvTrack *tr = gv_trace_model_track(m, ti);
        if (y + GV_TITLE_H > content_top()) {
            cairo_set_source_rgb(cr, tr->kind == GV_TRACK_DEVICE ? 0.86 : 0.90, 0.89,
                                 tr->kind == GV_TRACK_DEVICE ? 0.95 : 0.90);
            cairo_rectangle(cr, 0, y, v->width, GV_TITLE_H);
            cairo_fill(cr);
            text_at(&c, 4, y + 2, v->width - 8, tr->title, 0.05);
        }
        y += GV_TITLE_H;
        for (size_t li = 0; li < tr->n_lanes; li++)
            y += lane_h(tr->lanes[li]);
    }
    cairo_save(cr);
    cairo_rectangle(cr, 0, content_top(), v->width, v->height - content_top());
    cairo_clip(cr);
    cairo_rectangle(cr, GV_LABEL_W, content_top(), v->width - GV_LABEL_W, v->height - content_top());
    cairo_clip(cr);
    each_visible_lane(m, v, draw_lane, &c);
    if (v->has_selection) {
        outline_item(&c, &v->selection, 0, 0, 0);
        if (v->has_related)
            outline_item(&c, &v->related, 0.1, 0.3, 0.95);
    }
    if (v->has_range) {
        double x0 = clampx(v, gv_view_x(v, MIN(v->range_from_ns, v->range_to_ns)));
        double x1 = clampx(v, gv_view_x(v, MAX(v->range_from_ns, v->range_to_ns)));
        cairo_set_source_rgba(cr, 0.2, 0.4, 0.9, 0.18);
        cairo_rectangle(cr, x0, content_top(), x1 - x0, v->height);
        cairo_fill(cr);
    }
    cairo_restore(cr);
    draw_axis(&c);
    gboolean loaded = gv_trace_model_is_loaded(m);
    gv_trace_model_unlock(m);
    g_autofree char *problem = gv_trace_model_get_problem(m);

    if (!loaded && !problem) {
        char buf[64];
        snprintf(buf, sizeof buf, "loading %.0f%%", 100 * gv_trace_model_progress(m));
        cairo_set_source_rgba(cr, 1, 1, 0.8, 0.9);
        cairo_rectangle(cr, v->width - 130, v->height - 24, 126, 20);
        cairo_fill(cr);
        text_at(&c, v->width - 124, v->height - 22, 120, buf, 0.1);
    }
    if (problem) { /* a late integrity-check failure: said over the view, which stays */
        cairo_set_source_rgba(cr, 0.85, 0.15, 0.15, 0.92);
        cairo_rectangle(cr, 0, v->height - 24, v->width, 24);
        cairo_fill(cr);
        text_at(&c, 6, v->height - 21, v->width - 12, problem, 1.0);
    }
    cairo_restore(cr);
    return c.n_boxes;
}

gboolean gv_write_png(cairo_surface_t *s, const char *path, GError **error)
{
    cairo_status_t st = cairo_surface_write_to_png(s, path);
    if (st != CAIRO_STATUS_SUCCESS) {
        g_set_error(error, GV_ERROR, 1, "%s: cannot write the PNG: %s", path, cairo_status_to_string(st));
        return FALSE;
    }
    return TRUE;
}
