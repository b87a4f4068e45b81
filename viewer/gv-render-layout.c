/* gv-render-layout.c: what gv-render.c (the lanes, the axis, the titles)
 * and gv-render-overlay.c (what goes over them) both need: where each lane
 * is, and text shaped once and drawn many times. It draws nothing of its
 * own and knows neither of the two files. */
#include "gv-render-private.h"

#include <math.h>
#include <stdio.h>

/* ---- where the lanes are ------------------------------------------------------------------ */

void gv_render_each_lane(GvTraceModel *m, const GvView *v, GvLaneFunc f, void *data)
{
    double y = gv_render_content_top() - v->scroll_y;
    for (size_t ti = 0; ti < gv_trace_model_n_tracks(m) && y < v->height; ti++) {
        const GvTrack *tr = gv_trace_model_track(m, ti);
        y += GV_TITLE_H;
        for (size_t li = 0; li < tr->n_lanes; li++) {
            const GvLane *l = tr->lanes[li];
            double h = gv_render_lane_h(l);
            if (y + h > gv_render_content_top() && y < v->height && f(tr, ti, l, li, y, data))
                return;
            y += h;
        }
    }
}

gboolean gv_render_lane_y(GvTraceModel *m, const GvView *v, size_t track, size_t lane, double *out_y)
{
    double y = gv_render_content_top() - v->scroll_y;
    for (size_t ti = 0; ti < gv_trace_model_n_tracks(m) && ti <= track; ti++) {
        const GvTrack *tr = gv_trace_model_track(m, ti);
        y += GV_TITLE_H;
        for (size_t li = 0; li < tr->n_lanes; li++) {
            if (ti == track && li == lane) {
                *out_y = y;
                return TRUE;
            }
            y += gv_render_lane_h(tr->lanes[li]);
        }
    }
    return FALSE;
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
static gboolean text_ctx_set;
static unsigned long text_fo_hash;
static cairo_matrix_t text_matrix;

void gv_render_text_begin(cairo_t *cr)
{
    if (!text_ctx) {
        text_ctx = pango_font_map_create_context(pango_cairo_font_map_get_default());
        PangoFontDescription *font = pango_font_description_from_string("Sans 8");
        pango_context_set_font_description(text_ctx, font);
        pango_font_description_free(font);
        text_cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_object_unref);
    }
    /* pango_cairo_update_context marks the context changed at every call
     * (pango 1.50), and a changed context drops every layout: it is called
     * only when what it takes from cr differs (font options, scale). */
    cairo_font_options_t *fo = cairo_font_options_create(), *cr_fo = cairo_font_options_create();
    cairo_surface_get_font_options(cairo_get_target(cr), fo);
    cairo_get_font_options(cr, cr_fo);
    cairo_font_options_merge(fo, cr_fo);
    cairo_matrix_t mt;
    cairo_get_matrix(cr, &mt);
    unsigned long fo_hash = cairo_font_options_hash(fo);
    if (!text_ctx_set || fo_hash != text_fo_hash || mt.xx != text_matrix.xx || mt.yx != text_matrix.yx ||
        mt.xy != text_matrix.xy || mt.yy != text_matrix.yy) {
        pango_cairo_update_context(cr, text_ctx);
        text_ctx_set = TRUE;
        text_fo_hash = fo_hash;
        text_matrix = mt;
    }
    cairo_font_options_destroy(fo);
    cairo_font_options_destroy(cr_fo);
    if (pango_context_get_serial(text_ctx) != text_serial || g_hash_table_size(text_cache) > TEXT_CACHE_MAX) {
        g_hash_table_remove_all(text_cache);
        text_serial = pango_context_get_serial(text_ctx);
    }
}

guint gv_render_text_serial(void) { return text_ctx ? pango_context_get_serial(text_ctx) : 0; }

static PangoLayout *cached_layout(const char *s, int w)
{
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

/* A name that fits is drawn from its one unbounded layout whatever the
 * room; one that does not is ellipsized at the room rounded down to 16 px:
 * a box's room changes at every zoom step, and shaping its name again each
 * time was most of the text's cost. */
PangoLayout *gv_render_text_layout(const char *s, double max_w)
{
    PangoLayout *whole = cached_layout(s, -1);
    if (!whole || max_w <= 0)
        return whole;
    int w;
    pango_layout_get_pixel_size(whole, &w, NULL);
    if (w <= max_w)
        return whole;
    return cached_layout(s, max_w >= 16 ? (int)max_w / 16 * 16 : (int)max_w);
}

void gv_render_text_at(GvDrawCtx *c, double x, double y, double max_w, const char *s, double gray)
{
    PangoLayout *l = gv_render_text_layout(s, max_w), *own = NULL;
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
