/* gv-memory-view.c: drawing and input of the memory view (see the header).
 * Layout top down: an allocator chooser when the trace has several processes
 * (or a snapshot several devices) with allocations (each its own allocator:
 * their heaps and addresses are not comparable), time axis, the stacked chart with the allocated (black)
 * and reserved (red) lines, a marker row (spikes orange, leaks purple, the
 * peak), then the snapshot under the cursor: one bar per segment, its blocks
 * in colour and its free space grey. Wheel zooms, drag pans, a click picks a
 * block and puts the cursor there. */
#include "gv-memory-view.h"
#include "gt_base.h"

#include <math.h>
#include <pango/pangocairo.h>
#include <stdio.h>
#include <string.h>

enum { MARK_H = 16 };

void gv_mem_view_init(GvMemView *v, int width, int height)
{
    memset(v, 0, sizeof *v);
    gv_view_init(&v->x, width, height);
    v->selected_block = v->selected_snap = -1;
    v->pid = v->device = -1;
}

const GvMemory *gv_mem_view_memory(GvTraceModel *m, const GvMemView *v)
{
    const GvMemory *mem = v->pid >= 0 ? gv_trace_model_memory_of(m, v->pid, v->device) : NULL;
    return mem ? mem : gv_trace_model_memory(m);
}

/* The report's figures of the allocator drawn (gt_memory.procs: one per
 * process and device); NULL none. */
static const gt_memory *report_memory(const gt_report *r, const GvMemory *mem)
{
    if (!r || !mem)
        return NULL;
    for (size_t i = 0; i < r->memory.n_procs; i++) {
        const gt_memory *p = &r->memory.procs[i];
        if (p->pid == mem->pid && (mem->device_id < 0 || p->device_id == mem->device_id))
            return p;
    }
    return r->memory.n_procs == 0 ? &r->memory : NULL;
}

double gv_memory_chart_bottom(const GvMemView *v)
{
    return GV_AXIS_H + (v->x.height - GV_AXIS_H) * 0.58;
}

static double chart_top(void) { return GV_AXIS_H + 6; }

static double y_of(const GvMemView *v, int64_t bytes, int64_t max_bytes)
{
    double bottom = gv_memory_chart_bottom(v) - MARK_H;
    return bottom - (bottom - chart_top()) * (double)bytes / (double)(max_bytes > 0 ? max_bytes : 1);
}

static double clampx(const GvView *v, double x)
{
    return x < GV_LABEL_W ? GV_LABEL_W : x > v->width + 2 ? v->width + 2 : x;
}

static void block_rgb(const GvMemBlock *b, size_t i, double rgb[3])
{
    uint32_t h = (uint32_t)(b->address >> 9) * 2654435761u; /* by address: the snapshot's colours match */
    double hue = (h >> 8) / 16777216.0;
    double c[3] = {0.55 + 0.35 * sin(6.283 * hue), 0.55 + 0.35 * sin(6.283 * (hue + 0.33)),
                   0.55 + 0.35 * sin(6.283 * (hue + 0.66))};
    memcpy(rgb, c, sizeof c);
}

/* The band point in force at t: the last of p[0..n) at or before it (0 when none is). */
static size_t band_at(const GvMemPoint *p, size_t n, int64_t t)
{
    size_t lo = 0, hi = n; /* the first point after t, by bisection */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p[mid].t_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 ? lo - 1 : 0;
}

/* The blocks' bands, memory_viz's stacking, into an image of their own
 * painted once: a rectangle per band point, rounded out to whole pixels.
 * Not a cairo path: a fill per block costs microseconds, and a big trace's
 * chart has hundreds of thousands of blocks (seconds a frame). */
static void draw_bands(cairo_t *cr, const GvMemView *v, const GvMemory *mem, int64_t max, int64_t t_end)
{
    const GvView *x = &v->x;
    double left = GV_LABEL_W, top = chart_top();
    int w = (int)ceil(x->width - left), h = (int)ceil(gv_memory_chart_bottom(v) - top);
    if (w <= 0 || h <= 0)
        return;
    cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h); /* cleared: transparent */
    if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(img);
        return;
    }
    cairo_surface_flush(img);
    uint32_t *px = (uint32_t *)(void *)cairo_image_surface_get_data(img);
    int stride = cairo_image_surface_get_stride(img) / 4;
    for (size_t i = 0; i < mem->n_blocks; i++) {
        const GvMemBlock *b = &mem->blocks[i];
        if (b->n_pts == 0 || b->alloc_ns > t_end || b->free_ns < x->t0_ns)
            continue;
        double rgb[3];
        block_rgb(b, i, rgb);
        if ((gssize)i == v->selected_block)
            rgb[0] = rgb[1] = rgb[2] = 0.15;
        uint32_t c = 0xff000000u | (uint32_t)(rgb[0] * 255 + 0.5) << 16 | (uint32_t)(rgb[1] * 255 + 0.5) << 8 |
                     (uint32_t)(rgb[2] * 255 + 0.5);
        const GvMemPoint *p = &mem->pts[b->first_pt];
        int last_col = -1;
        for (size_t k = band_at(p, b->n_pts, x->t0_ns); k < b->n_pts && p[k].t_ns <= t_end; k++) {
            int64_t t1 = k + 1 < b->n_pts ? p[k + 1].t_ns : (b->free_ns == INT64_MAX ? t_end : b->free_ns);
            double x0 = clampx(x, gv_view_x(x, p[k].t_ns)) - left, x1 = clampx(x, gv_view_x(x, t1)) - left;
            if (x1 < 0 || x0 >= w)
                continue;
            /* Offsets that change within one pixel column: the first stands for them
             * (zoomed out, a big trace's block moves down hundreds of times a pixel). */
            int c0 = (int)floor(x0 < 0 ? 0 : x0), c1 = (int)ceil(x1);
            if (c0 == last_col && c1 <= c0 + 1)
                continue;
            last_col = c0;
            c1 = c1 > c0 ? (c1 < w ? c1 : w) : c0 + 1;
            double y0 = y_of(v, p[k].offset_bytes + b->bytes, max) - top, y1 = y_of(v, p[k].offset_bytes, max) - top;
            int r0 = (int)floor(y0 < 0 ? 0 : y0), r1 = (int)ceil(y1 < h ? y1 : h);
            if (r1 <= r0)
                r1 = r0 + 1;
            for (int r = r0; r < r1 && r < h; r++)
                for (int col = c0; col < c1; col++)
                    px[r * stride + col] = c;
        }
    }
    cairo_surface_mark_dirty(img);
    cairo_set_source_surface(cr, img, left, top);
    cairo_paint(cr);
    cairo_surface_destroy(img);
}

static void text(cairo_t *cr, PangoLayout *lay, double x, double y, double w, const char *s, double gray)
{
    pango_layout_set_text(lay, s, -1);
    pango_layout_set_width(lay, w > 0 ? (int)(w * PANGO_SCALE) : -1);
    cairo_set_source_rgb(cr, gray, gray, gray);
    cairo_move_to(cr, x, y);
    pango_cairo_show_layout(cr, lay);
}

/* The snapshot's layout, drawn (cr) or hit-tested (cr NULL: the block
 * under (hx, hy), -1 none): one walk, so a click finds what was drawn. */
static gssize snapshot_walk(cairo_t *cr, PangoLayout *lay, const GvMemView *v, const gt_mem_state *st, double hx,
                            double hy)
{
    double top = gv_memory_chart_bottom(v) + 4, left = 10, w = v->x.width - 20;
    char a[32], b[32], c[32], line[256];
    if (!st) {
        if (cr)
            text(cr, lay, left, top, w, "click the chart to see the allocator's segments and blocks at that moment",
                 0.4);
        return -1;
    }
    if (cr) {
        snprintf(line, sizeof line, "at %s: allocated %s, reserved %s, %zu segments, %zu blocks (click one)",
                 gt_fmt_ns(a, sizeof a, gt_sat_sub(st->at_ns, v->x.origin_ns)),
                 gt_fmt_bytes(b, sizeof b, st->allocated_bytes), gt_fmt_bytes(c, sizeof c, st->reserved_bytes),
                 st->n_segments, st->n_blocks);
        text(cr, lay, left, top, w, line, 0.1);
    }
    top += 18;
    /* Segments as bars, wrapped over rows; widths by bytes so the whole reserved pool fits. */
    int64_t total = 0;
    for (size_t i = 0; i < st->n_segments; i++)
        total += st->segments[i].bytes;
    double rows = floor((v->x.height - top - 4) / 16);
    if (rows < 1 || total <= 0)
        return -1;
    double px_per_byte = rows * w / (double)total * 0.95;
    double x = left, y = top;
    for (size_t i = 0; i < st->n_segments; i++) {
        const gt_mem_segment *s = &st->segments[i];
        double sw = s->bytes * px_per_byte;
        if (sw < 2)
            sw = 2;
        if (x + sw > left + w && x > left) {
            x = left;
            y += 16;
        }
        if (y + 14 > v->x.height)
            break;
        if (cr) {
            cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
            cairo_rectangle(cr, x, y, MIN(sw, left + w - x), 14);
            cairo_fill(cr);
        }
        for (size_t k = s->first_block; k < s->first_block + s->n_blocks && k < st->n_blocks; k++) {
            const gt_mem_block *blk = &st->blocks[k];
            double bx = MIN(x + (double)(blk->address - s->address) * px_per_byte, left + w);
            double bw = MAX(blk->bytes * px_per_byte, 3); /* a small block stays visible and clickable */
            if (!cr) {
                if (hx >= bx && hx < bx + bw && hy >= y && hy < y + 14)
                    return (gssize)k;
                continue;
            }
            GvMemBlock fake = {.address = blk->address};
            double rgb[3];
            block_rgb(&fake, 0, rgb);
            if ((gssize)k == v->selected_snap)
                rgb[0] = rgb[1] = rgb[2] = 0.15;
            cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
            cairo_rectangle(cr, bx, y + 1, bw, 12);
            cairo_fill(cr);
        }
        if (cr) {
            cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
            cairo_set_line_width(cr, 1);
            cairo_rectangle(cr, x + 0.5, y + 0.5, MIN(sw, left + w - x) - 1, 13);
            cairo_stroke(cr);
        }
        x += sw + 3;
    }
    return -1;
}

gssize gv_memory_hit_snapshot(const GvMemView *v, const gt_mem_state *snapshot, double x, double y)
{
    return y > gv_memory_chart_bottom(v) ? snapshot_walk(NULL, NULL, v, snapshot, x, y) : -1;
}

static void draw_markers(cairo_t *cr, const GvMemView *v, const gt_memory *pm)
{
    double y = gv_memory_chart_bottom(v) - MARK_H + 2;
    const GvView *x = &v->x;
    for (size_t i = 0; pm && i < pm->n_spikes; i++) { /* spikes: orange spans */
        const gt_spike *s = &pm->spikes[i];
        double x0 = clampx(x, gv_view_x(x, s->start_ns)), x1 = clampx(x, gv_view_x(x, s->end_ns));
        cairo_set_source_rgb(cr, 0.95, 0.55, 0.10);
        cairo_rectangle(cr, x0, y, MAX(x1 - x0, 3), 5);
        cairo_fill(cr);
    }
    for (size_t i = 0; pm && i < pm->n_leaks; i++) { /* leaks: purple from first to last */
        const gt_leak *l = &pm->leaks[i];
        double x0 = clampx(x, gv_view_x(x, l->first_ns)), x1 = clampx(x, gv_view_x(x, l->last_ns));
        cairo_set_source_rgb(cr, 0.55, 0.15, 0.70);
        cairo_rectangle(cr, x0, y + 7, MAX(x1 - x0, 3), 5);
        cairo_fill(cr);
    }
    if (pm && pm->peak_allocated_bytes > 0) { /* the peak: a triangle */
        double px = gv_view_x(x, pm->peak_allocated_ns);
        if (px >= GV_LABEL_W && px <= x->width) {
            cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
            cairo_move_to(cr, px - 5, y);
            cairo_line_to(cr, px + 5, y);
            cairo_line_to(cr, px, y + 8);
            cairo_close_path(cr);
            cairo_fill(cr);
        }
    }
}

/* A step line through the samples: allocated or reserved. */
static void draw_series(cairo_t *cr, const GvMemView *v, const GvMemory *mem, int64_t max, gboolean reserved)
{
    const GvView *x = &v->x;
    size_t lo = 0, hi = mem->n_samples;
    while (lo < hi) { /* the first sample on screen, minus one */
        size_t mid = lo + (hi - lo) / 2;
        if (mem->samples[mid].t_ns < x->t0_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* A step line, one pixel column at a time: the samples that fall in a
     * column are one vertical stroke from their lowest to their highest
     * (a big trace has thousands a column, each a segment to stroke), then
     * the last of them carries on to the next column. */
    gboolean started = FALSE;
    double col_x = 0, ymin = 0, ymax = 0, ylast = 0;
    for (size_t i = lo > 0 ? lo - 1 : 0; i < mem->n_samples; i++) {
        const GvMemSample *s = &mem->samples[i];
        double px = clampx(x, gv_view_x(x, s->t_ns));
        double py = y_of(v, reserved ? s->reserved_bytes : s->allocated_bytes, max);
        if (!started) {
            cairo_move_to(cr, px, py);
            started = TRUE;
        } else if (px - col_x < 1) {
            ymin = MIN(ymin, py);
            ymax = MAX(ymax, py);
            ylast = py;
            continue;
        } else {
            if (ymax - ymin >= 0.5) {
                cairo_line_to(cr, col_x, ymin);
                cairo_line_to(cr, col_x, ymax);
            }
            cairo_line_to(cr, col_x, ylast);
            cairo_line_to(cr, px, ylast);
            cairo_line_to(cr, px, py);
        }
        col_x = px;
        ymin = ymax = ylast = py;
        if (px > x->width)
            break;
    }
    if (started) {
        if (ymax - ymin >= 0.5) {
            cairo_line_to(cr, col_x, ymin);
            cairo_line_to(cr, col_x, ymax);
        }
        cairo_line_to(cr, col_x, ylast);
        cairo_line_to(cr, x->width, ylast);
        cairo_stroke(cr);
    }
}

void gv_render_memory(cairo_t *cr, GvTraceModel *m, const GvMemView *v, const gt_mem_state *snapshot)
{
    const GvView *x = &v->x;
    char a[32], line[160];
    cairo_save(cr);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    PangoLayout *lay = pango_cairo_create_layout(cr);
    PangoFontDescription *font = pango_font_description_from_string("Sans 8");
    pango_layout_set_font_description(lay, font);
    pango_layout_set_ellipsize(lay, PANGO_ELLIPSIZE_END);

    const GvMemory *mem = gv_mem_view_memory(m, v);
    const gt_report *r = gv_trace_model_report(m);
    const gt_memory *pm = report_memory(r, mem);
    int64_t max, t_end;
    if (!mem) {
        const char *wait = gv_trace_model_is_loaded(m) ? "analysing memory..." : "loading...";
        char *kept = gv_trace_model_kept_section(m, "memory");
        if (kept) { /* a big trace: the figures kept at its close, until the chart can be drawn */
            char *s = g_strdup_printf("%s (the chart comes with the analysis); from the report kept in the trace:\n\n%s",
                                      wait, kept);
            PangoFontDescription *mono = pango_font_description_from_string("Monospace 8");
            pango_layout_set_font_description(lay, mono);
            text(cr, lay, 10, 10, x->width - 20, s, 0.2);
            pango_layout_set_font_description(lay, font);
            pango_font_description_free(mono);
            g_free(s);
            g_free(kept);
        } else {
            text(cr, lay, 10, 10, x->width - 20, wait, 0.3);
        }
        goto done;
    }
    if (mem->n_samples == 0) {
        text(cr, lay, 10, 10, x->width - 20,
             "no memory events in this trace (no device allocations, no NVTX memory regions)", 0.3);
        goto done;
    }
    max = MAX(mem->max_reserved_bytes, mem->max_stack_bytes);
    max += max < INT64_MAX / 2 ? max / 20 : 0;

    /* Axis: time on top, bytes on the left. */
    cairo_set_source_rgb(cr, 0.93, 0.93, 0.93);
    cairo_rectangle(cr, 0, 0, x->width, GV_AXIS_H);
    cairo_fill(cr);
    gv_render_time_axis(cr, x, 0, GV_AXIS_H); /* from the trace's start, as the timeline's */
    for (int k = 0; k <= 4; k++) {
        int64_t bytes = max * k / 4;
        double y = y_of(v, bytes, max);
        cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
        cairo_set_line_width(cr, 1);
        cairo_move_to(cr, GV_LABEL_W, floor(y) + 0.5);
        cairo_line_to(cr, x->width, floor(y) + 0.5);
        cairo_stroke(cr);
        text(cr, lay, GV_LABEL_W - 80, y - 7, 76, gt_fmt_bytes(a, sizeof a, bytes), 0.35);
    }
    text(cr, lay, 6, GV_AXIS_H + 4, GV_LABEL_W - 90, "allocated (black)\nreserved (red)\nblocks stacked", 0.3);
    if (pm) { /* the process's figures, the report's, under the legend (the axis bar has the ticks) */
        char b1[32], b2[32];
        char dev[24] = "";
        if (mem->device_id >= 0)
            snprintf(dev, sizeof dev, "cuda:%d\n", (int)mem->device_id);
        snprintf(line, sizeof line, "%spid %lld\npeak allocated\n  %s\npeak reserved\n  %s", dev, (long long)mem->pid,
                 gt_fmt_bytes(b1, sizeof b1, pm->peak_allocated_bytes),
                 gt_fmt_bytes(b2, sizeof b2, pm->peak_reserved_bytes));
        text(cr, lay, 6, GV_AXIS_H + 56, GV_LABEL_W - 90, line, 0.15);
    }

    /* Bands: each block from its points; only blocks alive in the window are walked. */
    cairo_save(cr);
    cairo_rectangle(cr, GV_LABEL_W, chart_top(), x->width - GV_LABEL_W, gv_memory_chart_bottom(v) - chart_top());
    cairo_clip(cr);
    t_end = gv_view_end(x);
    draw_bands(cr, v, mem, max, t_end);
    cairo_set_line_width(cr, 1.5);
    cairo_set_source_rgb(cr, 0.85, 0.1, 0.1);
    draw_series(cr, v, mem, max, TRUE);
    cairo_set_source_rgb(cr, 0, 0, 0);
    draw_series(cr, v, mem, max, FALSE);
    cairo_restore(cr);
    draw_markers(cr, v, pm);
    if (mem->n_blocks_dropped > 0) {
        snprintf(line, sizeof line, "%zu blocks not stacked (layout cap)", mem->n_blocks_dropped);
        text(cr, lay, 6, gv_memory_chart_bottom(v) - 40, GV_LABEL_W - 10, line, 0.5);
    }
    if (v->has_cursor) {
        double cx = floor(gv_view_x(x, v->cursor_ns)) + 0.5;
        cairo_set_source_rgb(cr, 0.1, 0.4, 0.9);
        cairo_set_line_width(cr, 1);
        cairo_move_to(cr, cx, GV_AXIS_H);
        cairo_line_to(cr, cx, gv_memory_chart_bottom(v));
        cairo_stroke(cr);
    }
    cairo_set_source_rgb(cr, 0.7, 0.7, 0.7);
    cairo_move_to(cr, 0, floor(gv_memory_chart_bottom(v)) + 0.5);
    cairo_line_to(cr, x->width, floor(gv_memory_chart_bottom(v)) + 0.5);
    cairo_stroke(cr);
    snapshot_walk(cr, lay, v, snapshot, 0, 0);
done:
    pango_font_description_free(font);
    g_object_unref(lay);
    cairo_restore(cr);
}

gssize gv_memory_hit_block(GvTraceModel *m, const GvMemView *v, double px, double py)
{
    const GvMemory *mem = gv_mem_view_memory(m, v);
    if (!mem || px < GV_LABEL_W || py < chart_top() || py > gv_memory_chart_bottom(v))
        return -1;
    int64_t max = MAX(mem->max_reserved_bytes, mem->max_stack_bytes);
    max += max < INT64_MAX / 2 ? max / 20 : 0;
    int64_t t = gv_view_time(&v->x, px);
    for (size_t i = 0; i < mem->n_blocks; i++) {
        const GvMemBlock *b = &mem->blocks[i];
        if (b->n_pts == 0 || t < b->alloc_ns || t >= b->free_ns)
            continue;
        const GvMemPoint *p = &mem->pts[b->first_pt];
        size_t k = band_at(p, b->n_pts, t);
        double y0 = y_of(v, p[k].offset_bytes + b->bytes, max), y1 = y_of(v, p[k].offset_bytes, max);
        if (py >= y0 - 0.5 && py <= y1 + 0.5)
            return (gssize)i;
    }
    return -1;
}

/* ---- the widget ---------------------------------------------------------------- */

struct _GvMemoryView {
    GtkBox parent_instance;
    GtkWidget *chooser; /* GtkComboBoxText: one entry per allocator, id "P" or "P:D" */
    GtkWidget *area;    /* GtkDrawingArea */
    GtkWidget *about;   /* GtkLabel: the clicked block's size, lifetime and stack */
    GvMemSteps *steps;  /* per-step peaks, leaks, spikes */
    GvTraceModel *model;
    gulong analysed_id;
    GvMemView state;
    gt_mem_state *snapshot;
    char *details;
    gboolean dragging, moved;
    double drag_x;
};

G_DEFINE_TYPE(GvMemoryView, gv_memory_view, GTK_TYPE_BOX)

enum { SIG_DETAILS_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void redraw(GvMemoryView *self)
{
    if (self->area)
        gtk_widget_queue_draw(self->area);
}

/* Events reach the drawing, or the view itself (sent to it, as tests do):
 * positions into the drawing's coordinates. */
static void area_xy(GvMemoryView *self, GtkWidget *w, double *x, double *y)
{
    int ax, ay;
    if (w != self->area && self->area &&
        gtk_widget_translate_coordinates(w, self->area, (int)floor(*x), (int)floor(*y), &ax, &ay)) {
        *x += ax - floor(*x);
        *y += ay - floor(*y);
    }
}

/* An allocator's id in the chooser: "P" for a process's whole, "P:D" for its device D. */
static void allocator_id(char *buf, size_t n, int64_t pid, int32_t device)
{
    if (device >= 0)
        snprintf(buf, n, "%lld:%d", (long long)pid, (int)device);
    else
        snprintf(buf, n, "%lld", (long long)pid);
}

/* The chooser lists the allocators with allocations, "pid P" or "rank R
 * (pid P)", then "cuda:D" for a snapshot's device, each with its peak
 * allocated bytes; hidden when there are fewer than two. */
static void fill_chooser(GvMemoryView *self)
{
    if (!self->chooser)
        return;
    GtkComboBoxText *c = GTK_COMBO_BOX_TEXT(self->chooser);
    gtk_combo_box_text_remove_all(c);
    size_t n = self->model ? gv_trace_model_n_memories(self->model) : 0;
    const gt_report *r = self->model ? gv_trace_model_report(self->model) : NULL;
    gboolean one_pid = TRUE;
    for (size_t i = 1; i < n; i++)
        one_pid &= gv_trace_model_memory_nth(self->model, i)->pid == gv_trace_model_memory_nth(self->model, 0)->pid;
    for (size_t i = 0; i < n; i++) {
        const GvMemory *mem = gv_trace_model_memory_nth(self->model, i);
        char id[48], who[64] = "", dev[24] = "", peak[32], label[160];
        int rank = -1;
        for (size_t k = 0; r && k < r->comm.n_ranks; k++)
            if (r->comm.ranks[k].pid == mem->pid && r->comm.ranks[k].rank >= 0)
                rank = r->comm.ranks[k].rank;
        allocator_id(id, sizeof id, mem->pid, mem->device_id);
        if (rank >= 0)
            snprintf(who, sizeof who, "rank %d (pid %lld)", rank, (long long)mem->pid);
        else if (!one_pid || mem->device_id < 0)
            snprintf(who, sizeof who, "pid %lld", (long long)mem->pid);
        if (mem->device_id >= 0)
            snprintf(dev, sizeof dev, "%scuda:%d", who[0] ? " " : "", (int)mem->device_id);
        snprintf(label, sizeof label, "%s%s, peak %s", who, dev,
                 gt_fmt_bytes(peak, sizeof peak, mem->peak_allocated_bytes));
        gtk_combo_box_text_append(c, id, label);
    }
    if (n > 1) {
        const GvMemory *cur = gv_mem_view_memory(self->model, &self->state);
        char id[48];
        allocator_id(id, sizeof id, cur->pid, cur->device_id);
        gtk_combo_box_set_active_id(GTK_COMBO_BOX(c), id);
        gtk_widget_show(self->chooser);
    } else {
        gtk_widget_hide(self->chooser);
    }
}

static void on_chosen(GtkComboBox *c, gpointer p)
{
    GvMemoryView *self = p;
    const char *id = gtk_combo_box_get_active_id(c);
    if (!id)
        return;
    char *end = NULL;
    int64_t pid = g_ascii_strtoll(id, &end, 10);
    gv_memory_view_set_allocator(self, pid, end && *end == ':' ? (int32_t)g_ascii_strtoll(end + 1, NULL, 10) : -1);
}

static void fill_steps(GvMemoryView *self)
{
    if (!self->steps)
        return;
    const GvMemory *mem = self->model ? gv_mem_view_memory(self->model, &self->state) : NULL;
    const gt_report *r = self->model ? gv_trace_model_report(self->model) : NULL;
    gv_mem_steps_fill(self->steps, mem, r, report_memory(r, mem));
}

static void on_analysed(GvTraceModel *m, gpointer p)
{
    GvMemoryView *self = p;
    gv_view_fit(&self->state.x, m);
    fill_chooser(self);
    fill_steps(self);
    redraw(self);
}

void gv_memory_view_set_model(GvMemoryView *self, GvTraceModel *model)
{
    g_return_if_fail(GV_IS_MEMORY_VIEW(self));
    if (self->model) {
        g_signal_handler_disconnect(self->model, self->analysed_id);
        g_clear_object(&self->model);
    }
    g_clear_pointer(&self->snapshot, gt_mem_state_free);
    self->state.pid = self->state.device = -1;
    self->state.selected_block = self->state.selected_snap = -1;
    if (model) {
        self->model = g_object_ref(model);
        self->analysed_id = g_signal_connect(model, "analysed", G_CALLBACK(on_analysed), self);
        gv_view_fit(&self->state.x, model);
    }
    fill_chooser(self);
    fill_steps(self);
    redraw(self);
}

GvMemView *gv_memory_view_get_state(GvMemoryView *self) { return &self->state; }
const char *gv_memory_view_get_details(GvMemoryView *self) { return self->details ? self->details : ""; }
const gt_mem_state *gv_memory_view_get_snapshot(GvMemoryView *self) { return self->snapshot; }
GtkComboBoxText *gv_memory_view_get_chooser(GvMemoryView *self) { return GTK_COMBO_BOX_TEXT(self->chooser); }

int64_t gv_memory_view_get_pid(GvMemoryView *self)
{
    const GvMemory *mem = self->model ? gv_mem_view_memory(self->model, &self->state) : NULL;
    return mem ? mem->pid : -1;
}

int32_t gv_memory_view_get_device(GvMemoryView *self)
{
    const GvMemory *mem = self->model ? gv_mem_view_memory(self->model, &self->state) : NULL;
    return mem ? mem->device_id : -1;
}

void gv_memory_view_set_pid(GvMemoryView *self, int64_t pid) { gv_memory_view_set_allocator(self, pid, -1); }

void gv_memory_view_set_allocator(GvMemoryView *self, int64_t pid, int32_t device)
{
    g_return_if_fail(GV_IS_MEMORY_VIEW(self));
    if (pid == self->state.pid && device == self->state.device)
        return;
    self->state.pid = pid;
    self->state.device = device;
    self->state.selected_block = self->state.selected_snap = -1; /* indices into the other allocator's */
    fill_steps(self);
    const GvMemory *mem = self->model ? gv_mem_view_memory(self->model, &self->state) : NULL;
    char id[48];
    allocator_id(id, sizeof id, pid, mem && mem->pid == pid ? mem->device_id : device);
    const char *active = self->chooser ? gtk_combo_box_get_active_id(GTK_COMBO_BOX(self->chooser)) : NULL;
    if (self->chooser && (!active || strcmp(active, id) != 0))
        gtk_combo_box_set_active_id(GTK_COMBO_BOX(self->chooser), id);
    if (self->state.has_cursor)
        gv_memory_view_set_cursor(self, self->state.cursor_ns); /* the snapshot of this allocator */
    redraw(self);
}

void gv_memory_view_set_cursor(GvMemoryView *self, int64_t t_ns)
{
    g_return_if_fail(GV_IS_MEMORY_VIEW(self));
    self->state.has_cursor = TRUE;
    self->state.cursor_ns = t_ns;
    self->state.selected_snap = -1;
    g_clear_pointer(&self->snapshot, gt_mem_state_free);
    if (self->model) {
        g_autoptr(GError) error = NULL;
        self->snapshot = gv_trace_model_memory_state_of_device(self->model, gv_memory_view_get_pid(self),
                                                               gv_memory_view_get_device(self), t_ns, &error);
        if (error) {
            g_free(self->details);
            self->details = g_strdup(error->message);
            g_signal_emit(self, signals[SIG_DETAILS_CHANGED], 0);
        }
    }
    redraw(self);
}

/* Lifetime text of a block from its alloc and free times. */
static void fmt_life(char *buf, size_t n, int64_t from, int64_t to)
{
    if (to == INT64_MAX)
        snprintf(buf, n, "never freed");
    else
        gt_fmt_ns(buf, n, gt_sat_sub(to, from));
}

/* What a band says: size, address, when, lifetime, who (NVTX path) and the full stack. */
static char *band_text(GvMemoryView *self, const GvMemory *mem, const GvMemBlock *b)
{
    char s[32], t0[32], life[32];
    g_autofree char *origin = gv_trace_model_block_origin(self->model, mem->pid, b->address, b->made_ns);
    fmt_life(life, sizeof life, b->alloc_ns, b->free_ns);
    GString *out = g_string_new(NULL);
    g_string_printf(out, "block %s at 0x%llx, allocated at %s, lifetime %s\nallocated in: %s",
                    gt_fmt_bytes(s, sizeof s, b->bytes), (unsigned long long)b->address,
                    gt_fmt_ns(t0, sizeof t0, gt_sat_sub(b->alloc_ns, self->state.x.origin_ns)), life,
                    origin && *origin ? origin : "(unknown)");
    if (b->callchain_id)
        g_string_append(out, "\nstack (innermost first):");
    if (b->callchain_id && !gv_trace_model_append_callchain(self->model, b->callchain_id, out))
        g_string_append(out, " (busy)");
    return g_string_free(out, FALSE);
}

/* A snapshot block: the band it is on gives its lifetime. */
static char *snap_text(GvMemoryView *self, const GvMemory *mem, const gt_mem_block *blk)
{
    char s[32], t0[32], life[32] = "?";
    for (size_t i = 0; mem && i < mem->n_blocks; i++) {
        const GvMemBlock *b = &mem->blocks[i];
        if (b->address == blk->address && b->alloc_ns <= self->snapshot->at_ns && b->free_ns > self->snapshot->at_ns) {
            fmt_life(life, sizeof life, b->made_ns, b->free_ns);
            break;
        }
    }
    GString *out = g_string_new(NULL);
    g_string_printf(out, "block %s at 0x%llx (snapshot), allocated at %s, lifetime %s\nallocated in: %s",
                    gt_fmt_bytes(s, sizeof s, blk->bytes), (unsigned long long)blk->address,
                    gt_fmt_ns(t0, sizeof t0, gt_sat_sub(blk->alloc_ns, self->state.x.origin_ns)), life,
                    blk->origin && *blk->origin ? blk->origin : "(unknown)");
    if (blk->callchain_id)
        g_string_append(out, "\nstack (innermost first):");
    if (blk->callchain_id && !gv_trace_model_append_callchain(self->model, blk->callchain_id, out))
        g_string_append(out, " (busy)");
    return g_string_free(out, FALSE);
}

/* What is under (x, y): a band or a snapshot block's text, or NULL. */
static char *text_under(GvMemoryView *self, double x, double y, gssize *band, gssize *snap)
{
    const GvMemory *mem = gv_mem_view_memory(self->model, &self->state);
    *band = *snap = -1;
    if (!mem)
        return NULL;
    if (y > gv_memory_chart_bottom(&self->state)) {
        *snap = gv_memory_hit_snapshot(&self->state, self->snapshot, x, y);
        return *snap >= 0 ? snap_text(self, mem, &self->snapshot->blocks[*snap]) : NULL;
    }
    *band = x >= GV_LABEL_W ? gv_memory_hit_block(self->model, &self->state, x, y) : -1;
    return *band >= 0 ? band_text(self, mem, &mem->blocks[*band]) : NULL;
}

static void set_details(GvMemoryView *self, char *text)
{
    g_free(self->details);
    self->details = text;
    if (self->about)
        gtk_label_set_text(GTK_LABEL(self->about), text ? text : "click a band or a snapshot block to see it here");
    g_signal_emit(self, signals[SIG_DETAILS_CHANGED], 0);
}

void gv_memory_view_click(GvMemoryView *self, double x, double y)
{
    g_return_if_fail(GV_IS_MEMORY_VIEW(self));
    if (!self->model || x < 0)
        return;
    gssize band, snap;
    char *t = text_under(self, x, y, &band, &snap);
    if (y > gv_memory_chart_bottom(&self->state)) { /* the snapshot: the cursor stays */
        self->state.selected_snap = snap;
        if (t)
            set_details(self, t);
        redraw(self);
        return;
    }
    if (x < GV_LABEL_W)
        return;
    self->state.selected_block = band;
    set_details(self, t);
    gv_memory_view_set_cursor(self, gv_view_time(&self->state.x, x));
}

char *gv_memory_view_dup_hover(GvMemoryView *self)
{
    return self->area ? gtk_widget_get_tooltip_text(self->area) : NULL;
}

GvMemSteps *gv_memory_view_get_steps(GvMemoryView *self) { return self->steps; }
GtkLabel *gv_memory_view_get_about(GvMemoryView *self) { return self->about ? GTK_LABEL(self->about) : NULL; }

static void on_steps_navigate(GvMemSteps *t, gint64 from, gint64 to, gpointer p)
{
    GvMemoryView *self = p;
    gv_view_show_range(&self->state.x, from, to);
    redraw(self);
}

static gboolean mv_draw(GtkWidget *w, cairo_t *cr, gpointer p)
{
    GvMemoryView *self = p;
    self->state.x.width = gtk_widget_get_allocated_width(w);
    self->state.x.height = gtk_widget_get_allocated_height(w);
    if (self->model)
        gv_render_memory(cr, self->model, &self->state, self->snapshot);
    return TRUE;
}

static void mv_size_allocate(GtkWidget *w, GtkAllocation *a, gpointer p)
{
    GvMemoryView *self = p;
    gboolean first = self->state.x.width != a->width;
    self->state.x.width = a->width;
    self->state.x.height = a->height;
    if (first && self->model)
        gv_view_fit(&self->state.x, self->model);
}

static gboolean mv_scroll(GtkWidget *w, GdkEventScroll *e, gpointer p)
{
    GvMemoryView *self = p;
    double dx = 0, dy = 0;
    if (e->direction == GDK_SCROLL_SMOOTH)
        gdk_event_get_scroll_deltas((GdkEvent *)e, &dx, &dy);
    else
        dy = e->direction == GDK_SCROLL_UP ? -1 : e->direction == GDK_SCROLL_DOWN ? 1 : 0;
    double x = e->x, y = e->y;
    area_xy(self, w, &x, &y);
    gv_view_zoom(&self->state.x, pow(1.25, -dy), x);
    redraw(self);
    return TRUE;
}

static gboolean mv_press(GtkWidget *w, GdkEventButton *e, gpointer p)
{
    GvMemoryView *self = p;
    if (e->button != 1)
        return FALSE;
    double x = e->x, y = e->y;
    area_xy(self, w, &x, &y);
    self->dragging = TRUE;
    self->moved = FALSE;
    self->drag_x = x;
    return TRUE;
}

static gboolean mv_motion(GtkWidget *w, GdkEventMotion *e, gpointer p)
{
    GvMemoryView *self = p;
    double x = e->x, y = e->y;
    area_xy(self, w, &x, &y);
    if (!self->dragging && self->model && self->area) { /* hover: the tooltip says what is there */
        gssize band, snap;
        g_autofree char *t = text_under(self, x, y, &band, &snap);
        gtk_widget_set_tooltip_text(self->area, t);
        return FALSE;
    }
    if (!self->dragging || (!self->moved && fabs(x - self->drag_x) < 3))
        return FALSE;
    self->moved = TRUE;
    gv_view_pan(&self->state.x, x - self->drag_x);
    self->drag_x = x;
    redraw(self);
    return TRUE;
}

static gboolean mv_release(GtkWidget *w, GdkEventButton *e, gpointer p)
{
    GvMemoryView *self = p;
    if (e->button != 1 || !self->dragging)
        return FALSE;
    self->dragging = FALSE;
    double x = e->x, y = e->y;
    area_xy(self, w, &x, &y);
    if (!self->moved)
        gv_memory_view_click(self, x, y);
    return TRUE;
}

static void mv_dispose(GObject *obj)
{
    GvMemoryView *self = GV_MEMORY_VIEW(obj);
    if (self->model) { /* the children may be gone already: only the model is let go */
        g_signal_handler_disconnect(self->model, self->analysed_id);
        g_clear_object(&self->model);
    }
    g_clear_pointer(&self->snapshot, gt_mem_state_free);
    if (self->chooser) /* children that outlive the view must not write into it */
        g_object_remove_weak_pointer(G_OBJECT(self->chooser), (gpointer *)&self->chooser);
    if (self->area)
        g_object_remove_weak_pointer(G_OBJECT(self->area), (gpointer *)&self->area);
    if (self->about)
        g_object_remove_weak_pointer(G_OBJECT(self->about), (gpointer *)&self->about);
    if (self->steps)
        g_object_remove_weak_pointer(G_OBJECT(self->steps), (gpointer *)&self->steps);
    self->chooser = self->area = self->about = NULL;
    self->steps = NULL;
    g_clear_pointer(&self->details, g_free);
    G_OBJECT_CLASS(gv_memory_view_parent_class)->dispose(obj);
}

static void gv_memory_view_class_init(GvMemoryViewClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = mv_dispose;
    signals[SIG_DETAILS_CHANGED] = g_signal_new("details-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                                NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void gv_memory_view_init(GvMemoryView *self)
{
    gv_mem_view_init(&self->state, 800, 500);
    gtk_orientable_set_orientation(GTK_ORIENTABLE(self), GTK_ORIENTATION_VERTICAL);
    self->chooser = gtk_combo_box_text_new();
    gtk_widget_set_tooltip_text(self->chooser, "the allocator shown: each process, and each device of a snapshot, has its own heaps");
    gtk_widget_set_halign(self->chooser, GTK_ALIGN_START);
    gtk_widget_set_no_show_all(self->chooser, TRUE); /* shown when the trace has several processes */
    g_signal_connect(self->chooser, "changed", G_CALLBACK(on_chosen), self);
    g_object_add_weak_pointer(G_OBJECT(self->chooser), (gpointer *)&self->chooser);
    gtk_box_pack_start(GTK_BOX(self), self->chooser, FALSE, FALSE, 2);
    self->area = gtk_drawing_area_new();
    gtk_widget_add_events(self->area, GDK_SCROLL_MASK | GDK_SMOOTH_SCROLL_MASK | GDK_BUTTON_PRESS_MASK |
                                          GDK_BUTTON_RELEASE_MASK | GDK_POINTER_MOTION_MASK);
    gtk_widget_set_size_request(self->area, 400, 300);
    g_signal_connect(self->area, "draw", G_CALLBACK(mv_draw), self);
    g_signal_connect(self->area, "size-allocate", G_CALLBACK(mv_size_allocate), self);
    g_signal_connect(self->area, "scroll-event", G_CALLBACK(mv_scroll), self);
    g_signal_connect(self->area, "button-press-event", G_CALLBACK(mv_press), self);
    g_signal_connect(self->area, "button-release-event", G_CALLBACK(mv_release), self);
    g_signal_connect(self->area, "motion-notify-event", G_CALLBACK(mv_motion), self);
    g_object_add_weak_pointer(G_OBJECT(self->area), (gpointer *)&self->area);
    /* events given to the view itself go to the drawing too */
    g_signal_connect(self, "scroll-event", G_CALLBACK(mv_scroll), self);
    g_signal_connect(self, "button-press-event", G_CALLBACK(mv_press), self);
    g_signal_connect(self, "button-release-event", G_CALLBACK(mv_release), self);
    g_signal_connect(self, "motion-notify-event", G_CALLBACK(mv_motion), self);
    /* below the drawing: the clicked block (left), the per-step table (right) */
    self->about = gtk_label_new("click a band or a snapshot block to see it here");
    gtk_label_set_xalign(GTK_LABEL(self->about), 0);
    gtk_label_set_yalign(GTK_LABEL(self->about), 0);
    gtk_label_set_selectable(GTK_LABEL(self->about), TRUE);
    gtk_label_set_line_wrap(GTK_LABEL(self->about), TRUE);
    gtk_label_set_line_wrap_mode(GTK_LABEL(self->about), PANGO_WRAP_WORD_CHAR);
    g_object_add_weak_pointer(G_OBJECT(self->about), (gpointer *)&self->about);
    GtkWidget *about_sw = gtk_scrolled_window_new(NULL, NULL);
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(about_sw), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_container_add(GTK_CONTAINER(about_sw), self->about);
    self->steps = GV_MEM_STEPS(gv_mem_steps_new());
    g_object_add_weak_pointer(G_OBJECT(self->steps), (gpointer *)&self->steps);
    g_signal_connect(self->steps, "navigate", G_CALLBACK(on_steps_navigate), self);
    GtkWidget *bottom = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL);
    gtk_paned_pack1(GTK_PANED(bottom), about_sw, TRUE, FALSE);
    gtk_paned_pack2(GTK_PANED(bottom), GTK_WIDGET(self->steps), TRUE, FALSE);
    gtk_paned_set_position(GTK_PANED(bottom), 420);
    gtk_widget_set_size_request(bottom, -1, 170);
    GtkWidget *split = gtk_paned_new(GTK_ORIENTATION_VERTICAL);
    gtk_paned_pack1(GTK_PANED(split), self->area, TRUE, FALSE);
    gtk_paned_pack2(GTK_PANED(split), bottom, FALSE, FALSE);
    gtk_box_pack_start(GTK_BOX(self), split, TRUE, TRUE, 0);
    gtk_widget_show_all(split);
}

GtkWidget *gv_memory_view_new(void)
{
    return g_object_new(GV_TYPE_MEMORY_VIEW, NULL);
}
