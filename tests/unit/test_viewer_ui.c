/* test_viewer_ui.c: the window under a display (tests/integration/viewer_ui.sh
 * runs it under Xvfb): synthetic wheel, drag, click and key events on
 * the timeline and the memory view, the summary's links, search, the
 * compare page, PNG export, and a corrupt file's error in the window.
 * $GV_TRAINER_TRACE (a trace of the CPU trainer with --amp fp16, so it has
 * loss-scale marks) is opened too when set; $GV_SHOT_DIR receives the
 * screenshots. */
#include "gt_test.h"
#include "test_viewer_fixture.h"
#include "test_viewer_input.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gv-window.h"

static GvWindow *open_window(const char *path, const char *path2, GvTraceModel **out)
{
    GvTraceModel *m = gv_trace_model_new(), *m2 = path2 ? gv_trace_model_new() : NULL;
    GvWindow *w = GV_WINDOW(gv_window_new(m, m2));
    gtk_window_set_default_size(GTK_WINDOW(w), 1300, 800);
    gtk_widget_show(GTK_WIDGET(w));
    GError *error = NULL;
    CU_ASSERT_TRUE(gv_trace_model_load(m, path, &error));
    if (m2)
        CU_ASSERT_TRUE(gv_trace_model_load(m2, path2, &error));
    ti_settle();
    if (out)
        *out = m;
    else
        g_object_unref(m);
    if (m2)
        g_object_unref(m2);
    return w;
}

static void scroll(GtkWidget *w, double x, double y, GdkScrollDirection dir, GdkModifierType state)
{
    GdkEvent *e = gdk_event_new(GDK_SCROLL);
    e->scroll.x = x;
    e->scroll.y = y;
    e->scroll.direction = dir;
    e->scroll.state = state;
    ti_send(w, e);
}

static void key(GtkWidget *w, guint keyval)
{
    GdkEvent *e = gdk_event_new(GDK_KEY_PRESS);
    e->key.keyval = keyval;
    ti_send(w, e);
}

static void click(GtkWidget *w, double x, double y)
{
    ti_button(w, GDK_BUTTON_PRESS, x, y, 0);
    ti_button(w, GDK_BUTTON_RELEASE, x, y, 0);
}

static void shot(GvWindow *w, const char *name)
{
    const char *dir = getenv("GV_SHOT_DIR");
    char *path = dir && *dir ? g_build_filename(dir, name, NULL) : gt_test_path(name);
    GError *error = NULL;
    CU_ASSERT_TRUE(gv_window_export_png(w, path, &error));
    CU_ASSERT(gt_test_file_size(path) > 1000);
    g_free(path);
}

static void test_viewer_ui__timeline_input(void)
{
    char *path = gt_test_path("fixture.sqlite");
    CU_ASSERT_EQUAL_FATAL(fx_write(path), 0);
    GvTraceModel *m;
    GvWindow *win = open_window(path, NULL, &m);
    GvTimeline *tl = gv_window_get_timeline(win);
    GtkWidget *w = GTK_WIDGET(tl);
    GvView *v = gv_timeline_get_view(tl);
    CU_ASSERT(v->width > 500);

    /* Wheel up zooms in around the pointer: the time under it stays. */
    double x = GV_LABEL_W + 300;
    int64_t t_under = gv_view_time(v, x);
    double npp = v->ns_per_px;
    scroll(w, x, 100, GDK_SCROLL_UP, 0);
    CU_ASSERT(v->ns_per_px < npp);
    CU_ASSERT(llabs(gv_view_time(v, x) - t_under) <= (int64_t)v->ns_per_px + 1);
    /* Wheel down zooms back out. */
    scroll(w, x, 100, GDK_SCROLL_DOWN, 0);
    CU_ASSERT(fabs(v->ns_per_px - npp) / npp < 1e-6);
    /* A drag to the left moves later times into view. */
    int64_t t0 = v->t0_ns;
    ti_button(w, GDK_BUTTON_PRESS, x, 100, 0);
    ti_motion(w, x - 100, 100, 0);
    ti_button(w, GDK_BUTTON_RELEASE, x - 100, 100, 0);
    CU_ASSERT(v->t0_ns > t0);
    key(w, GDK_KEY_f); /* fit again */
    CU_ASSERT_EQUAL(v->t0_ns, t0);

    /* A click on kernel B selects it and finds its launch. */
    double ky = gv_view_lane_y(m, v, 0, 1) + GV_LANE_H / 2.0;
    click(w, gv_view_x(v, 4 * FX_MS + FX_MS / 2), ky);
    GvItemRef sel, rel;
    CU_ASSERT_TRUE_FATAL(gv_timeline_get_selection(tl, &sel));
    CU_ASSERT_EQUAL(sel.track, 0);
    CU_ASSERT_EQUAL(sel.index, 1);
    CU_ASSERT_TRUE(gv_timeline_get_related(tl, &rel));
    CU_ASSERT_EQUAL(rel.track, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(gv_window_get_status(win), "kernB"));
    /* ... and joins them with an arrow from the launch call to the kernel. */
    double flow[4];
    CU_ASSERT_TRUE(gv_view_flow(m, v, flow));
    CU_ASSERT_DOUBLE_EQUAL(flow[0], gv_view_x(v, 3 * FX_MS + FX_MS / 2), 0.01);
    CU_ASSERT_DOUBLE_EQUAL(flow[2], gv_view_x(v, 4 * FX_MS), 0.01);
    /* A click on the "loss scale" mark shows its name and payload. */
    double my_mark = gv_view_lane_y(m, v, 1, 0) + GV_MARK_LANE_H / 2.0;
    click(w, gv_view_x(v, 2 * FX_MS + FX_MS / 2) + 2, my_mark);
    CU_ASSERT_TRUE(gv_timeline_get_selection(tl, &sel));
    CU_ASSERT_PTR_NOT_NULL(strstr(gv_window_get_status(win), "loss scale  NVTX mark"));
    g_autofree char *mark_text = gv_trace_model_describe(m, &sel);
    CU_ASSERT_PTR_NOT_NULL(strstr(mark_text, "payload 65536"));
    CU_ASSERT_FALSE(gv_view_flow(m, v, flow));
    /* Back to kernel B for what follows. */
    click(w, gv_view_x(v, 4 * FX_MS + FX_MS / 2), ky);
    shot(win, "viewer-fixture-timeline.png");
    /* n selects the next kernel of the lane, z zooms to it. */
    key(w, GDK_KEY_n);
    CU_ASSERT_TRUE(gv_timeline_get_selection(tl, &sel));
    CU_ASSERT_EQUAL(sel.index, 2);
    key(w, GDK_KEY_z);
    CU_ASSERT(v->t0_ns <= 5 * FX_MS + 10000 && gv_view_end(v) >= 5 * FX_MS + FX_MS / 2);
    CU_ASSERT(gv_view_end(v) - v->t0_ns < FX_MS);
    /* Shift-drag marks a range; z zooms to it. */
    key(w, GDK_KEY_f);
    double x1 = gv_view_x(v, 2 * FX_MS), x2 = gv_view_x(v, 4 * FX_MS);
    ti_button(w, GDK_BUTTON_PRESS, x1, 100, GDK_SHIFT_MASK);
    ti_motion(w, x2, 100, 0);
    ti_button(w, GDK_BUTTON_RELEASE, x2, 100, GDK_SHIFT_MASK);
    key(w, GDK_KEY_z);
    CU_ASSERT(llabs(v->t0_ns - 2 * FX_MS) < FX_MS / 10);
    CU_ASSERT(llabs(gv_view_end(v) - 4 * FX_MS) < FX_MS / 10);
    /* Keys pan and zoom. */
    int64_t before = v->t0_ns;
    key(w, GDK_KEY_Right);
    CU_ASSERT(v->t0_ns > before);
    npp = v->ns_per_px;
    key(w, GDK_KEY_plus);
    CU_ASSERT(v->ns_per_px < npp);
    /* Search selects by name. */
    CU_ASSERT_TRUE(gv_timeline_search(tl, "kernA", FALSE) || gv_timeline_search(tl, "kernA", TRUE));
    CU_ASSERT_TRUE(gv_timeline_get_selection(tl, &sel));
    CU_ASSERT_EQUAL(sel.index, 0);
    key(w, GDK_KEY_Escape);
    CU_ASSERT_FALSE(gv_timeline_get_selection(tl, &sel));

    /* The summary links a gap to its time range on the timeline. */
    guint linked = 0;
    guint n = gv_summary_n_items(gv_window_get_summary(win), &linked);
    CU_ASSERT(n > 3);
    CU_ASSERT(linked >= 1);
    key(w, GDK_KEY_f);
    gboolean navigated = FALSE; /* the last linked rows are gaps and the memory peak: short ranges */
    for (guint i = n; i-- > 0 && !navigated;)
        navigated = gv_summary_activate(gv_window_get_summary(win), i);
    CU_ASSERT_TRUE(navigated);
    CU_ASSERT(gv_view_end(v) - v->t0_ns < 6 * FX_MS); /* zoomed in from the fit */

    /* Memory: a click in the lower band at 2.5 ms hits block A (256 KiB, 1..3 ms) and shows the snapshot. */
    gv_window_show_page(win, 1);
    ti_settle();
    GvMemoryView *mv = gv_window_get_memory_view(win);
    GvMemView *ms = gv_memory_view_get_state(mv);
    CU_ASSERT(ms->x.width > 500);
    gv_view_fit(&ms->x, m);
    double mx = gv_view_x(&ms->x, 2 * FX_MS + FX_MS / 2);
    double my = -1;
    for (double y = gv_memory_chart_bottom(ms) - 1; y > 0; y -= 1)
        if (gv_memory_hit_block(m, ms, mx, y) == 0) {
            my = y;
            break;
        }
    CU_ASSERT_FATAL(my > 0);
    click(GTK_WIDGET(mv), mx, my);
    CU_ASSERT_PTR_NOT_NULL(strstr(gv_memory_view_get_details(mv), "256.00 KiB"));
    CU_ASSERT_PTR_NOT_NULL(strstr(gv_memory_view_get_details(mv), "lifetime 2.000 ms"));
    CU_ASSERT_PTR_NOT_NULL(strstr(gv_window_get_status(win), "256.00 KiB"));
    const gt_mem_state *snap = gv_memory_view_get_snapshot(mv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(snap);
    CU_ASSERT_EQUAL(snap->n_blocks, 2);
    shot(win, "viewer-fixture-memory.png");
    gv_window_show_page(win, 0);
    ti_settle();
    char *png = gt_test_path("export.png");
    CU_ASSERT_TRUE(gv_window_export_png(win, png, NULL));
    CU_ASSERT(gt_test_file_size(png) > 1000);
    free(png);
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(m);
    free(path);
}

/* Every common step starts at the same x in both views. */
static int misaligned_steps(GvCompare *c)
{
    GvTimeline *t[2] = {gv_compare_get_timeline(c, 0), gv_compare_get_timeline(c, 1)};
    const gt_report *r[2];
    for (int i = 0; i < 2; i++)
        r[i] = gv_trace_model_report(gv_timeline_get_model(t[i]));
    size_t n = MIN(r[0]->n_steps, r[1]->n_steps), bad = 0;
    for (size_t k = 0; k < n; k++) {
        double x0 = gv_view_x(gv_timeline_get_view(t[0]), r[0]->steps[k].start_ns);
        double x1 = gv_view_x(gv_timeline_get_view(t[1]), r[1]->steps[k].start_ns);
        bad += fabs(x0 - x1) > 1e-6;
    }
    return (int)bad;
}

/* Two traces whose steps differ in length: aligned on every step boundary,
 * and kept aligned as either side is zoomed, dragged, fitted or panned. */
static void test_viewer_ui__compare(void)
{
    const int64_t da[5] = {10 * FX_MS, 10 * FX_MS, 10 * FX_MS, 10 * FX_MS, 10 * FX_MS};
    const int64_t db[6] = {12 * FX_MS, 7 * FX_MS, 15 * FX_MS, 10 * FX_MS, 9 * FX_MS, 11 * FX_MS};
    char *a = gt_test_path("steps_a.sqlite"), *b = gt_test_path("steps_b.sqlite");
    CU_ASSERT_EQUAL_FATAL(fx_write_steps(a, da, 5, 1 * FX_MS, 0), 0);
    CU_ASSERT_EQUAL_FATAL(fx_write_steps(b, db, 6, 4 * FX_MS, 0), 0);
    GvWindow *win = open_window(a, b, NULL);
    GvCompare *c = gv_window_get_compare(win);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_TRUE(gtk_widget_get_mapped(GTK_WIDGET(c))); /* two runs open on their compare */
    for (int k = 0; k < 3000 && gv_compare_is_diffing(c); k++) /* the diff: a thread of its own */
        ti_settle();
    CU_ASSERT(gv_compare_n_diff_rows(c) > 3);
    const GvAlign *al = gv_compare_get_align(c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(al);
    CU_ASSERT_EQUAL(al->n_pairs, 5);
    GvTimeline *t0 = gv_compare_get_timeline(c, 0), *t1 = gv_compare_get_timeline(c, 1);
    GvView *v0 = gv_timeline_get_view(t0), *v1 = gv_timeline_get_view(t1);
    CU_ASSERT_EQUAL(misaligned_steps(c), 0);
    /* Zooming the after side zooms the before side: same scale, same left edge, steps aligned. */
    double npp = v0->ns_per_px;
    scroll(GTK_WIDGET(t1), GV_LABEL_W + 200, 80, GDK_SCROLL_UP, 0);
    CU_ASSERT(v0->ns_per_px < npp);
    CU_ASSERT_DOUBLE_EQUAL(v0->ns_per_px, v1->ns_per_px, 1e-9);
    CU_ASSERT_EQUAL(v0->t0_ns, v1->t0_ns);
    CU_ASSERT_EQUAL(misaligned_steps(c), 0);
    /* Dragging the before side pans both. */
    int64_t left = v1->t0_ns;
    ti_button(GTK_WIDGET(t0), GDK_BUTTON_PRESS, 600, 60, 0);
    ti_motion(GTK_WIDGET(t0), 450, 60, 0);
    ti_button(GTK_WIDGET(t0), GDK_BUTTON_RELEASE, 450, 60, 0);
    CU_ASSERT(v1->t0_ns > left);
    CU_ASSERT_EQUAL(misaligned_steps(c), 0);
    key(GTK_WIDGET(t1), GDK_KEY_f); /* the after trace's whole span */
    CU_ASSERT_EQUAL(misaligned_steps(c), 0);
    key(GTK_WIDGET(t0), GDK_KEY_Right);
    key(GTK_WIDGET(t0), GDK_KEY_plus);
    CU_ASSERT_EQUAL(misaligned_steps(c), 0);
    /* Drawn: the ruler's boundary between steps 2 and 3 at one x in both. */
    ti_settle();
    const gt_report *rb = gv_trace_model_report(gv_timeline_get_model(t1));
    gv_timeline_show_range(t1, rb->steps[1].start_ns, rb->steps[4].end_ns);
    int x = (int)floor(gv_view_x(v1, rb->steps[3].start_ns)), y = GV_AXIS_H + GV_RULER_H - 3;
    cairo_surface_t *s[2];
    for (int i = 0; i < 2; i++) {
        GvView *v = i ? v1 : v0;
        s[i] = cairo_image_surface_create(CAIRO_FORMAT_RGB24, v->width, v->height);
        cairo_t *cr = cairo_create(s[i]);
        gv_render_timeline(cr, gv_timeline_get_model(i ? t1 : t0), v);
        cairo_destroy(cr);
        cairo_surface_flush(s[i]);
        const unsigned char *d = cairo_image_surface_get_data(s[i]);
        int stride = cairo_image_surface_get_stride(s[i]);
        uint32_t before = *(const uint32_t *)(d + y * stride + 4 * (x - 2));
        uint32_t after = *(const uint32_t *)(d + y * stride + 4 * (x + 2));
        CU_ASSERT_NOT_EQUAL(before, after);
        cairo_surface_destroy(s[i]);
    }
    shot(win, "viewer-fixture-compare.png");
    gtk_widget_destroy(GTK_WIDGET(win));
    free(a);
    free(b);
}

static void test_viewer_ui__trainer_trace(void)
{
    const char *trainer = getenv("GV_TRAINER_TRACE");
    if (!trainer || !*trainer) {
        fprintf(stderr, "(no GV_TRAINER_TRACE: the trainer part is not run)\n");
        return;
    }
    GvTraceModel *m;
    GvWindow *win = open_window(trainer, NULL, &m);
    /* CPU ops play the device: a track with an idle lane, and NVTX steps on the thread. */
    const GvTrack *dev = gv_trace_model_track(m, 0);
    CU_ASSERT_EQUAL_FATAL(dev->kind, GV_TRACK_DEVICE);
    CU_ASSERT_EQUAL(dev->key, -1);
    CU_ASSERT(dev->lanes[0]->n > 10); /* gaps */
    CU_ASSERT(gv_trace_model_report(m)->n_steps >= 10);
    /* The trace is of an fp16 run: a "loss scale" mark per step on the thread's marks lane. */
    size_t n_scale = 0;
    for (size_t t = 0; t < gv_trace_model_n_tracks(m); t++) {
        const GvTrack *tr = gv_trace_model_track(m, t);
        for (size_t l = 0; l < tr->n_lanes; l++)
            for (size_t i = 0; tr->lanes[l]->kind == GV_ITEM_MARK && i < tr->lanes[l]->n; i++)
                n_scale += strcmp(gv_trace_model_name(m, tr->lanes[l]->items[i].name), "loss scale") == 0;
    }
    CU_ASSERT(n_scale >= gv_trace_model_report(m)->n_steps);
    const GvMemory *mem = gv_trace_model_memory(m);
    CU_ASSERT(mem && mem->n_blocks > 10);
    /* Rendered: the idle lane shows host-wait red where the model found a host-wait gap. Zoomed onto
     * the longest one (the run's timing decides how many there are and how they merge when the whole
     * run fits the window, so the view is chosen from the model, not fixed). */
    const GvItem *hw = NULL;
    for (size_t i = 0; i < dev->lanes[0]->n; i++) {
        const GvItem *it = &dev->lanes[0]->items[i];
        if (it->kind == GV_ITEM_GAP && it->aux == GT_GAP_HOST_WAIT &&
            (!hw || it->end_ns - it->start_ns > hw->end_ns - hw->start_ns))
            hw = it;
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(hw); /* the CPU waits at least before its first op */
    GvTimeline *tl = gv_window_get_timeline(win);
    GvView v = *gv_timeline_get_view(tl);
    int64_t gap_ns = hw->end_ns - hw->start_ns;
    v.ns_per_px = (double)gap_ns / ((v.width - GV_LABEL_W) / 2.0); /* the gap spans half the lanes' width */
    v.t0_ns = hw->start_ns - gap_ns / 2;
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, v.width, v.height);
    cairo_t *cr = cairo_create(s);
    gv_render_timeline(cr, m, &v);
    cairo_destroy(cr);
    cairo_surface_flush(s);
    double host[3];
    gv_color_gap(GT_GAP_HOST_WAIT, host);
    uint32_t want = ((uint32_t)(host[0] * 255 + 0.5) << 16) | ((uint32_t)(host[1] * 255 + 0.5) << 8) |
                    (uint32_t)(host[2] * 255 + 0.5);
    int y = (int)(gv_view_lane_y(m, &v, 0, 0) + GV_GAP_LANE_H / 2.0), red = 0;
    const unsigned char *d = cairo_image_surface_get_data(s);
    for (int x = GV_LABEL_W; x < v.width; x++) { /* within 2 per channel: cairo rounds its own way */
        uint32_t px = *(const uint32_t *)(d + y * cairo_image_surface_get_stride(s) + 4 * x);
        int ok = 1;
        for (int sh = 0; sh < 24; sh += 8)
            ok &= abs((int)((px >> sh) & 0xff) - (int)((want >> sh) & 0xff)) <= 2;
        red += ok;
    }
    if (red == 0) {
        fprintf(stderr, "no host-wait pixel at y %d of %dx%d\n", y, v.width, v.height);
        cairo_surface_write_to_png(s, "/tmp/gv-debug.png");
    }
    CU_ASSERT(red > 0);
    cairo_surface_destroy(s);
    shot(win, "viewer-trainer-timeline.png");
    /* Memory page at the peak, with its snapshot. */
    gv_window_show_page(win, 1);
    ti_settle();
    GvMemoryView *mv = gv_window_get_memory_view(win);
    gv_memory_view_set_cursor(mv, gv_trace_model_report(m)->memory.peak_allocated_ns);
    CU_ASSERT_PTR_NOT_NULL(gv_memory_view_get_snapshot(mv));
    ti_settle();
    shot(win, "viewer-trainer-memory.png");
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(m);
}

/* What the summary showed when the first rows came in. */
typedef struct first_rows {
    gboolean seen, analysed;
    guint n, linked;
    char *first, *rest; /* the first item's text, the others' */
} first_rows;

static void on_first_rows(GvTraceModel *m, gpointer p)
{
    first_rows *fr = p;
    GvSummary *sum = g_object_get_data(G_OBJECT(m), "test-summary");
    if (fr->seen)
        return;
    fr->seen = TRUE;
    fr->analysed = gv_trace_model_is_analysed(m);
    fr->n = gv_summary_n_items(sum, &fr->linked);
    fr->first = gv_summary_item_text(sum, 0);
    GString *rest = g_string_new(NULL);
    for (guint i = 1; i < fr->n; i++) {
        char *t = gv_summary_item_text(sum, i);
        g_string_append_printf(rest, "%s\n", t ? t : "");
        g_free(t);
    }
    fr->rest = g_string_free(rest, FALSE);
}

/* A trace that keeps its report: the summary shows that report from the
 * first rows on (a big trace's analysis takes seconds), then the analysed
 * rows with their links. */
static void test_viewer_ui__kept_report_first(void)
{
    const char *trainer = getenv("GV_TRAINER_TRACE");
    if (!trainer || !*trainer) {
        fprintf(stderr, "(no GV_TRAINER_TRACE: the kept report part is not run)\n");
        return;
    }
    char *path = gt_test_path("kept.sqlite"), *cmd = g_strdup_printf("cp '%s' '%s'", trainer, path);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    CU_ASSERT_EQUAL_FATAL(gt_report_keep(path), 0);
    GvTraceModel *m = gv_trace_model_new();
    GvWindow *w = GV_WINDOW(gv_window_new(m, NULL));
    gtk_window_set_default_size(GTK_WINDOW(w), 1300, 800);
    gtk_widget_show(GTK_WIDGET(w));
    first_rows fr = {0};
    g_object_set_data(G_OBJECT(m), "test-summary", gv_window_get_summary(w));
    g_signal_connect(m, "updated", G_CALLBACK(on_first_rows), &fr); /* after the summary's own handler */
    CU_ASSERT_TRUE_FATAL(gv_trace_model_load(m, path, NULL));
    ti_settle();
    CU_ASSERT_TRUE_FATAL(fr.seen);
    if (fr.analysed) { /* the analysis won the race to the main loop: nothing to see */
        fprintf(stderr, "(the analysis came before the first rows were shown)\n");
    } else {
        CU_ASSERT(fr.n > 4); /* the note, then a row per section */
        CU_ASSERT_EQUAL(fr.linked, 0);
        CU_ASSERT_PTR_NOT_NULL(fr.first && strstr(fr.first, "the report kept in the trace"));
        CU_ASSERT_PTR_NOT_NULL(strstr(fr.rest, "step time  mean ")); /* column gaps cut to two spaces */
        CU_ASSERT_PTR_NOT_NULL(strstr(fr.rest, "\nadvice  "));
        CU_ASSERT_PTR_NULL(strstr(fr.rest, "   "));
    }
    guint linked = 0, n = gv_summary_n_items(gv_window_get_summary(w), &linked);
    CU_ASSERT(n > 2 && linked > 0); /* then the analysed rows */
    char *first = gv_summary_item_text(gv_window_get_summary(w), 0);
    CU_ASSERT_PTR_NULL(first && strstr(first, "the report kept in the trace"));
    g_free(first);
    g_free(fr.first);
    g_free(fr.rest);
    gtk_widget_destroy(GTK_WIDGET(w));
    g_object_unref(m);
    unlink(path);
    g_free(cmd);
    free(path);
}

static void test_viewer_ui__corrupt_file(void)
{
    char *bad = gt_test_path("bad.sqlite");
    FILE *f = fopen(bad, "w");
    fputs("SQLite format 3", f); /* a header and nothing else */
    fclose(f);
    GvTraceModel *m = gv_trace_model_new();
    GvWindow *w = GV_WINDOW(gv_window_new(m, NULL));
    gtk_widget_show(GTK_WIDGET(w));
    GError *error = NULL;
    CU_ASSERT_FALSE(gv_trace_model_load(m, bad, &error));
    CU_ASSERT_PTR_NOT_NULL_FATAL(error);
    gv_window_set_error(w, error->message);
    CU_ASSERT_PTR_NOT_NULL(strstr(gv_window_get_status(w), bad));
    /* Input on an empty model is harmless. */
    GtkWidget *tl = GTK_WIDGET(gv_window_get_timeline(w));
    scroll(tl, 400, 100, GDK_SCROLL_UP, 0);
    click(tl, 400, 100);
    key(tl, GDK_KEY_f);
    ti_settle();
    g_error_free(error);
    gtk_widget_destroy(GTK_WIDGET(w));
    g_object_unref(m);
    free(bad);
}

int main(int argc, char **argv)
{
    if (!gtk_init_check(&argc, &argv)) {
        fprintf(stderr, "test_viewer_ui: no display (run it through tests/integration/viewer_ui.sh)\n");
        return 77;
    }
    static const gt_test_case ui[] = {
        {"test_viewer_ui__timeline_input", test_viewer_ui__timeline_input},
        {"test_viewer_ui__compare", test_viewer_ui__compare},
        {"test_viewer_ui__trainer_trace", test_viewer_ui__trainer_trace},
        {"test_viewer_ui__kept_report_first", test_viewer_ui__kept_report_first},
        {"test_viewer_ui__corrupt_file", test_viewer_ui__corrupt_file},
        {NULL, NULL},
    };
    static const gt_test_suite suites[] = {{"viewer_ui", ui}};
    return gt_test_main(argc, argv, suites, 1);
}
