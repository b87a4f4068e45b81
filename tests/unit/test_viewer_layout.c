/* test_viewer_layout.c: names and layout in the window as a window manager
 * shows it (tests/integration/viewer_ui.sh runs it under Xvfb with
 * openbox): short kernel names on the nsys fixture with the full one on
 * hover and one colour per short name, a side panel that a long name
 * cannot widen and whose divider gives the timeline room back, a pixel
 * between back-to-back calls, lanes and tracks named for what they hold.
 * Screenshots are grabs of the screen, written to $GV_SHOT_DIR. */
#include "gt_test.h"
#include "test_viewer_fixture.h"
#include "test_viewer_input.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gv-names.h"
#include "gv-window.h"

static GvWindow *open_window(const char *path, GvTraceModel **out)
{
    GvTraceModel *m = gv_trace_model_new();
    GvWindow *w = GV_WINDOW(gv_window_new(m, NULL));
    gtk_window_set_default_size(GTK_WINDOW(w), 1300, 800);
    gtk_widget_show(GTK_WIDGET(w));
    GError *error = NULL;
    CU_ASSERT_TRUE(gv_trace_model_load(m, path, &error));
    for (int k = 0; k < 200 && !gtk_widget_get_mapped(GTK_WIDGET(w)); k++)
        ti_settle();
    for (int k = 0; k < 10; k++)
        ti_settle();
    *out = m;
    return w;
}

static char *fixture(const char *name)
{
    const char *dir = getenv("GT_FIXTURES");
    return g_build_filename(dir && *dir ? dir : "tests/fixtures", name, NULL);
}

/* A long name without a space, as a kernel whose name the trace kept only mangled. */
#define LONG_NAME                                                                                                  \
    "_ZN6clover19par_ranged2d_kernelIZ10PdV_kernelbiiiidRNS_8Buffer2DIdEES3_S3_S3_S3_S3_S3_S3_S3_S3_S3_S3_S3_S3_" \
    "EUliiE0_EEvNS_7Range2dET_ZN6clover19par_ranged2d_kernelIZ17accelerate_kerneliiiidRNS_8Buffer2DIdEES3_S3_S3_" \
    "S3_S3_S3_S3_S3_S3_EUliiE_EEvNS_7Range2dET_"

/* Threads "main" (NVTX ranges two deep, ten CUDA calls back to back from
 * 1 ms, 0.2 ms each) and "thread 7 (python calls)" (one range); a kernel
 * with LONG_NAME on stream 7. */
static int write_layout(const char *path)
{
    gt_writer *w = NULL;
    int rc = gt_writer_open(&w, path, GT_WRITE_OVERWRITE);
    if (rc < 0)
        return rc;
    int64_t pid = gt_global_pid(FX_PID), tid = gt_global_tid(FX_PID, FX_PID), py = gt_global_tid(FX_PID, 7);
    gt_string_id copy, outer, inner, call, longk;
    gt_writer_intern(w, "cudaMemcpyAsync_v3020", &copy);
    gt_writer_intern(w, "iteration", &outer);
    gt_writer_intern(w, "load", &inner);
    gt_writer_intern(w, "model.forward", &call);
    gt_writer_intern(w, LONG_NAME, &longk);
    gt_writer_add_process(w, FX_PID, "layout");
    gt_writer_add_thread_name(w, tid, "main", 0);
    gt_writer_add_thread_name(w, py, "thread 7 (python calls)", 0);
    gt_writer_begin(w);
    for (int i = 0; i < 10; i++) {
        gt_event e = {.kind = GT_EV_API};
        e.u.api = (gt_api_call){.start_ns = FX_MS + i * FX_MS / 5, .end_ns = FX_MS + (i + 1) * FX_MS / 5,
                                .global_tid = tid, .correlation_id = 100 + i, .name = copy,
                                .event_class = GT_API_RUNTIME};
        gt_writer_add(w, &e);
    }
    gt_event k = {.kind = GT_EV_KERNEL};
    k.u.kernel = (gt_kernel){.start_ns = 4 * FX_MS, .end_ns = 5 * FX_MS, .global_pid = pid, .device_id = 0,
                             .context_id = 1, .stream_id = 7, .correlation_id = 1, .mangled_name = longk,
                             .grid_x = 1, .grid_y = 1, .grid_z = 1, .block_x = 32, .block_y = 1, .block_z = 1};
    gt_writer_add(w, &k);
    gt_event n = {.kind = GT_EV_NVTX};
    n.u.nvtx = (gt_nvtx){.start_ns = 0, .end_ns = 6 * FX_MS, .event_type = GT_NVTX_PUSHPOP, .text = outer,
                         .global_tid = tid};
    gt_writer_add(w, &n);
    n.u.nvtx = (gt_nvtx){.start_ns = FX_MS, .end_ns = 3 * FX_MS, .event_type = GT_NVTX_PUSHPOP, .text = inner,
                         .global_tid = tid};
    gt_writer_add(w, &n);
    n.u.nvtx = (gt_nvtx){.start_ns = FX_MS, .end_ns = 2 * FX_MS, .event_type = GT_NVTX_PUSHPOP, .text = call,
                         .global_tid = py};
    gt_writer_add(w, &n);
    if ((rc = gt_writer_commit(w)) < 0) {
        gt_writer_free(w);
        return rc;
    }
    return gt_writer_close(w);
}

/* The first lane of a track whose title contains `title` with items of `kind`. */
static const GvLane *find_lane(GvTraceModel *m, const char *title, GvItemKind kind, size_t *ti, size_t *li)
{
    for (size_t t = 0; t < gv_trace_model_n_tracks(m); t++) {
        const GvTrack *tr = gv_trace_model_track(m, t);
        for (size_t l = 0; title && strstr(tr->title, title) && l < tr->n_lanes; l++)
            if (tr->lanes[l]->kind == kind) {
                *ti = t;
                *li = l;
                return tr->lanes[l];
            }
    }
    return NULL;
}

static gboolean label_has(GtkWidget *w, gconstpointer text)
{
    return GTK_IS_LABEL(w) && strstr(gtk_label_get_text(GTK_LABEL(w)), text);
}

/* The shortener on names from real traces. */
static void test_viewer_layout__short_name_rules(void)
{
    static const char *const cases[][2] = {
        {"void clover::par_ranged2d_kernel<PdV_kernel(bool, int, clover::Buffer2D<double> &)::[lambda(int, int) "
         "(instance 2)]>(clover::Range2d, T1)", "par_ranged2d_kernel<PdV_kernel>"},
        {"void par_ranged2d_kernel<PdV_kernel, 2>(int, float *)", "par_ranged2d_kernel<PdV_kernel>"},
        {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> "
         ">(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
         "vectorized_elementwise_kernel<FillFunctor>"},
        {"void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false>(float*, int)",
         "softmax_warp_forward<float>"},
        {"ampere_sgemm_128x64_nn", "ampere_sgemm_128x64_nn"},
        {"Memcpy HtoD", "Memcpy HtoD"},
        {"", ""},
    };
    char buf[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CU_ASSERT_STRING_EQUAL(gv_short_kernel_name(buf, sizeof buf, cases[i][0]), cases[i][1]);
    CU_ASSERT_STRING_EQUAL(gv_short_kernel_name(buf, 6, "void kernel_long_name<Op>(int)"), "kerne");
}

/* The nsys fixture's kernels by their short names: a colour each, the full
 * name on hover, and the lane draws a kernel in its name's colour. */
static void test_viewer_layout__short_names(void)
{
    char *path = fixture("nsys/cloverleaf-cuda-nsys2024.5.sqlite");
    GvTraceModel *m;
    GvWindow *win = open_window(path, &m);
    GvTimeline *tl = gv_window_get_timeline(win);
    GvView *v = gv_timeline_get_view(tl);
    size_t ti = 0, li = 0;
    gv_trace_model_lock(m);
    const GvLane *l = find_lane(m, "GPU 0", GV_ITEM_KERNEL, &ti, &li);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
    size_t pdv = SIZE_MAX, other = SIZE_MAX;
    for (size_t i = 0; i < l->n; i++) {
        if (l->items[i].kind != GV_ITEM_KERNEL)
            continue;
        const char *n = gv_trace_model_name(m, l->items[i].name);
        g_hash_table_add(names, (gpointer)n);
        CU_ASSERT_PTR_NULL(strchr(n, '('));
        CU_ASSERT_PTR_NULL(strstr(n, "clover::"));
        if (strcmp(n, "par_ranged2d_kernel<PdV_kernel>") == 0 &&
            (pdv == SIZE_MAX || l->items[i].end_ns - l->items[i].start_ns > l->items[pdv].end_ns - l->items[pdv].start_ns))
            pdv = i;
        if (other == SIZE_MAX && strcmp(n, "par_reduce_kernel<calc_dt_kernel>") == 0)
            other = i;
    }
    guint n_names = g_hash_table_size(names);
    fprintf(stderr, "%u kernel names on the stream\n", n_names);
    CU_ASSERT(n_names >= 10); /* nsys's short names: three */
    g_hash_table_unref(names);
    CU_ASSERT_FATAL(pdv != SIZE_MAX && other != SIZE_MAX);
    GvItem a = l->items[pdv], b = l->items[other];
    double ca[3], cb[3];
    gv_color_item(m, &a, ca);
    gv_color_item(m, &b, cb);
    gv_trace_model_unlock(m);
    CU_ASSERT(fabs(ca[0] - cb[0]) + fabs(ca[1] - cb[1]) + fabs(ca[2] - cb[2]) > 0.05);

    /* The summary's top kernels by the same names. */
    GtkWidget *panel = GTK_WIDGET(gv_window_get_summary(win));
    CU_ASSERT_PTR_NOT_NULL(ti_find_widget(panel, label_has, "  par_ranged2d_kernel<advec_mom_kernel>"));
    CU_ASSERT_PTR_NULL(ti_find_widget(panel, label_has, "void clover::"));

    /* Hover: the full name, as the trace has it. */
    GvItemRef ref = {ti, li, pdv};
    g_autofree char *d = gv_trace_model_describe(m, &ref);
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "par_ranged2d_kernel<PdV_kernel>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "void clover::par_ranged2d_kernel<PdV_kernel(bool, int"));

    /* Drawn: the longest PdV kernel zoomed to, in its name's colour, its name on it. */
    gv_timeline_show_range(tl, a.start_ns, a.end_ns);
    for (int k = 0; k < 20; k++)
        ti_settle();
    GdkPixbuf *screen = ti_grab_screen();
    ti_save_grab(screen, "viewer-layout-names.png");
    int wx, wy, ww, wh;
    ti_screen_rect(GTK_WIDGET(tl), &wx, &wy, &ww, &wh);
    int y = wy + (int)gv_view_lane_y(m, v, ti, li) + GV_LANE_H / 2;
    int x0 = wx + (int)gv_view_x(v, a.start_ns), x1 = wx + (int)gv_view_x(v, a.end_ns);
    int same = 0, dark = ti_count_dark(screen, x0 + 2, y - GV_LANE_H / 2 + 2, 200, GV_LANE_H - 4, 80);
    for (int x = x0 + 2; x < x1 - 2; x++) {
        int rgb[3];
        ti_pixel(screen, x, y - GV_LANE_H / 2 + 2, rgb);
        same += abs(rgb[0] - (int)lround(ca[0] * 255)) <= 2 && abs(rgb[1] - (int)lround(ca[1] * 255)) <= 2 &&
                abs(rgb[2] - (int)lround(ca[2] * 255)) <= 2;
    }
    fprintf(stderr, "kernel box %d..%d: %d px of its colour, %d px of text\n", x0, x1, same, dark);
    CU_ASSERT(same > (x1 - x0) * 8 / 10);
    CU_ASSERT(dark > 30);
    g_object_unref(screen);

    /* The real pointer resting on it: the tooltip on screen has the full name. */
    /* From off the window: a pointer already there would send no motion. */
    g_autofree char *move = g_strdup_printf("mousemove 1 1 mousemove %d %d", (x0 + x1) / 2, y);
    CU_ASSERT_EQUAL(ti_xdotool(move), 0);
    GtkWidget *tip = NULL;
    for (int k = 0; k < 300 && !tip; k++) {
        ti_settle();
        GList *tops = gtk_window_list_toplevels();
        for (GList *t = tops; t && !tip; t = t->next)
            if (gtk_widget_get_mapped(t->data))
                tip = ti_find_widget(t->data, label_has, "void clover::par_ranged2d_kernel<PdV_kernel(bool");
        g_list_free(tops);
    }
    CU_ASSERT_PTR_NOT_NULL(tip);
    if (tip) {
        screen = ti_grab_screen();
        ti_save_grab(screen, "viewer-layout-hover.png");
        int hx, hy, hw, hh;
        ti_screen_rect(tip, &hx, &hy, &hw, &hh);
        fprintf(stderr, "tooltip label at %d,%d %dx%d\n", hx, hy, hw, hh);
        CU_ASSERT(hw > 100 && hh > 40);
        g_object_unref(screen);
    }
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(m);
    g_free(path);
}

/* Drags a paned's divider by dx with the real pointer; the panel's width after. */
static int drag_divider(GtkWidget *paned, GtkWidget *panel, int dx)
{
    GdkWindow *handle = gtk_paned_get_handle_window(GTK_PANED(paned));
    int hx, hy, x, y, w, h;
    gdk_window_get_origin(handle, &hx, &hy);
    int gx = hx + gdk_window_get_width(handle) / 2, gy = hy + gdk_window_get_height(handle) / 2;
    CU_ASSERT_EQUAL(ti_xdrag(gx, gy, gx + dx, gy), 0);
    for (int k = 0; k < 10; k++)
        ti_settle();
    ti_screen_rect(panel, &x, &y, &w, &h);
    return w;
}

/* A long unbroken name leaves the timeline most of the window, and dragging
 * the divider with the real pointer narrows the panel further. */
static void test_viewer_layout__panel_width(void)
{
    char *path = gt_test_path("layout.sqlite");
    CU_ASSERT_EQUAL_FATAL(write_layout(path), 0);
    GvTraceModel *m;
    GvWindow *win = open_window(path, &m);
    GtkWidget *panel = GTK_WIDGET(gv_window_get_summary(win)), *tl = GTK_WIDGET(gv_window_get_timeline(win));
    GtkWidget *paned = gtk_widget_get_parent(panel);
    CU_ASSERT_FATAL(GTK_IS_PANED(paned));
    int px, py, pw, ph, tx, ty, tw, th;
    ti_screen_rect(panel, &px, &py, &pw, &ph);
    ti_screen_rect(tl, &tx, &ty, &tw, &th);
    int win_w = gtk_widget_get_allocated_width(GTK_WIDGET(win));
    fprintf(stderr, "window %d: timeline %d px, panel %d px\n", win_w, tw, pw);
    CU_ASSERT(pw <= 420);
    CU_ASSERT(tw >= win_w - 440);
    GdkPixbuf *screen = ti_grab_screen();
    ti_save_grab(screen, "viewer-layout-panel.png");
    g_object_unref(screen);

    /* The divider, dragged with the real pointer: 150 px left widens the
     * panel by as much, then 300 px right narrows it to its minimum. */
    int pw2 = drag_divider(paned, panel, -150), pw3 = drag_divider(paned, panel, 300);
    ti_screen_rect(tl, &tx, &ty, &tw, &th);
    fprintf(stderr, "after the drags: panel %d px, then %d px (timeline %d px)\n", pw2, pw3, tw);
    CU_ASSERT(abs(pw2 - (pw + 150)) <= 4);
    CU_ASSERT(pw3 <= 220);
    CU_ASSERT(tw >= win_w - 240);
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(m);
    free(path);
}

/* Ten calls back to back: ten boxes with a background pixel between each two. */
static void test_viewer_layout__borders(void)
{
    char *path = gt_test_path("layout.sqlite");
    CU_ASSERT_EQUAL_FATAL(write_layout(path), 0);
    GvTraceModel *m;
    GvWindow *win = open_window(path, &m);
    GvTimeline *tl = gv_window_get_timeline(win);
    GvView *v = gv_timeline_get_view(tl);
    size_t ti = 0, li = 0;
    gv_trace_model_lock(m);
    const GvLane *l = find_lane(m, "main", GV_ITEM_API, &ti, &li);
    CU_ASSERT_FATAL(l && l->n == 10);
    GvItem first = l->items[0];
    double rgb[3];
    gv_color_item(m, &first, rgb);
    gv_trace_model_unlock(m);
    gv_timeline_show_range(tl, FX_MS, 3 * FX_MS);
    for (int k = 0; k < 20; k++)
        ti_settle();
    GdkPixbuf *screen = ti_grab_screen();
    ti_save_grab(screen, "viewer-layout-borders.png");
    int wx, wy, ww, wh;
    ti_screen_rect(GTK_WIDGET(tl), &wx, &wy, &ww, &wh);
    int y = wy + (int)gv_view_lane_y(m, v, ti, li) + GV_LANE_H - 3; /* under the names */
    int x0 = wx + (int)gv_view_x(v, FX_MS), x1 = wx + (int)gv_view_x(v, 3 * FX_MS);
    int runs = 0, breaks = 0;
    gboolean in = FALSE;
    for (int x = x0; x <= x1 + 1; x++) {
        int p[3];
        ti_pixel(screen, x, y, p);
        gboolean box = abs(p[0] - (int)lround(rgb[0] * 255)) <= 2 && abs(p[1] - (int)lround(rgb[1] * 255)) <= 2 &&
                       abs(p[2] - (int)lround(rgb[2] * 255)) <= 2;
        if (box && !in)
            runs++;
        if (!box && in && x < x1 - 2)
            breaks++;
        in = box;
    }
    fprintf(stderr, "calls %d..%d: %d boxes, %d breaks\n", x0, x1, runs, breaks);
    CU_ASSERT_EQUAL(runs, 10);
    CU_ASSERT_EQUAL(breaks, 9);
    g_object_unref(screen);
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(m);
    free(path);
}

/* Tracks by thread name, lanes by what they hold: never "NVTX 0". */
static void test_viewer_layout__lane_names(void)
{
    char *path = gt_test_path("layout.sqlite");
    CU_ASSERT_EQUAL_FATAL(write_layout(path), 0);
    GvTraceModel *m;
    GvWindow *win = open_window(path, &m);
    gv_trace_model_lock(m);
    int main_ranges = 0, python = 0;
    for (size_t t = 0; t < gv_trace_model_n_tracks(m); t++) {
        const GvTrack *tr = gv_trace_model_track(m, t);
        fprintf(stderr, "track \"%s\":", tr->title);
        for (size_t i = 0; i < tr->n_lanes; i++) {
            const char *label = tr->lanes[i]->label;
            fprintf(stderr, " \"%s\"", label);
            int depth;
            CU_ASSERT_FALSE(sscanf(label, "NVTX %d", &depth) == 1);
            if (tr->lanes[i]->kind != GV_ITEM_NVTX)
                continue;
            if (g_str_has_prefix(tr->title, "main")) {
                /* "iteration" is a step as the report finds them; "load" is not a phase */
                CU_ASSERT_STRING_EQUAL(label, tr->lanes[i]->key == 0 ? "steps" : "NVTX ranges, depth 1");
                main_ranges++;
            } else if (g_str_has_prefix(tr->title, "thread 7 (python calls)")) {
                CU_ASSERT_STRING_EQUAL(label, "python calls");
                python++;
            }
        }
        fprintf(stderr, "\n");
    }
    gv_trace_model_unlock(m);
    CU_ASSERT_EQUAL(main_ranges, 2);
    CU_ASSERT_EQUAL(python, 1);
    GdkPixbuf *screen = ti_grab_screen();
    ti_save_grab(screen, "viewer-layout-lanes.png");
    g_object_unref(screen);
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(m);
    free(path);
}

/* Tick labels: the decimals the step needs, no trailing zeros. */
static void test_viewer_layout__tick_labels(void)
{
    char b[48];
    CU_ASSERT_STRING_EQUAL(gv_fmt_tick(b, sizeof b, 0, 100e6), "0");
    CU_ASSERT_STRING_EQUAL(gv_fmt_tick(b, sizeof b, 300e6, 100e6), "300 ms");
    CU_ASSERT_STRING_EQUAL(gv_fmt_tick(b, sizeof b, 356.5e6, 0.5e6), "356.5 ms");
    CU_ASSERT_STRING_EQUAL(gv_fmt_tick(b, sizeof b, 357e6, 0.5e6), "357 ms");
    CU_ASSERT_STRING_EQUAL(gv_fmt_tick(b, sizeof b, 1.5e9, 0.5e9), "1.5 s");
    CU_ASSERT_STRING_EQUAL(gv_fmt_tick(b, sizeof b, 1.02e6, 20e3), "1.02 ms");
    CU_ASSERT_STRING_EQUAL(gv_fmt_tick(b, sizeof b, 40, 20), "40 ns");
}

static gboolean is_gap_row(GtkWidget *w, gconstpointer unused)
{
    return GTK_IS_LABEL(w) && g_str_has_prefix(gtk_label_get_text(GTK_LABEL(w)), "gap ");
}

/* The nsys fixture's calls start 264 ms after its first event: a real click
 * on the call under the axis's 275 ms says when it ran from the trace's
 * start, as the axis does; the summary counts the same way; the axis's
 * last label is whole. */
static void test_viewer_layout__time_base(void)
{
    char *path = fixture("nsys/cloverleaf-cuda-nsys2024.5.sqlite");
    GvTraceModel *m;
    GvWindow *win = open_window(path, &m);
    GvTimeline *tl = gv_window_get_timeline(win);
    GvView *v = gv_timeline_get_view(tl);
    int64_t start, end;
    gv_trace_model_span(m, &start, &end);
    CU_ASSERT_EQUAL(v->origin_ns, start);
    int wx, wy, ww, wh;
    ti_screen_rect(GTK_WIDGET(tl), &wx, &wy, &ww, &wh);
    GdkPixbuf *screen = ti_grab_screen();
    ti_save_grab(screen, "viewer-layout-axis.png");
    int cut = ti_count_dark(screen, wx + ww - 3, wy + 2, 3, GV_AXIS_H - 4, 140);
    CU_ASSERT_EQUAL(cut, 0); /* no label runs off the right edge */
    g_object_unref(screen);

    size_t ti = 0, li = 0;
    gv_trace_model_lock(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(find_lane(m, "cuda-cloverleaf", GV_ITEM_API, &ti, &li));
    gv_trace_model_unlock(m);
    int64_t at = start + 275 * FX_MS;
    gv_timeline_show_range(tl, at - FX_MS, at + FX_MS);
    for (int k = 0; k < 10; k++)
        ti_settle();
    int x = wx + (int)gv_view_x(v, at), y = wy + (int)gv_view_lane_y(m, v, ti, li) + GV_LANE_H / 2;
    CU_ASSERT_EQUAL(ti_xclick(x, y), 0);
    for (int k = 0; k < 10; k++)
        ti_settle();
    GvItemRef sel;
    CU_ASSERT_TRUE_FATAL(gv_timeline_get_selection(tl, &sel));
    gv_trace_model_lock(m);
    GvItem it = gv_trace_model_track(m, sel.track)->lanes[sel.lane]->items[sel.index];
    gv_trace_model_unlock(m);
    CU_ASSERT(it.start_ns <= at + FX_MS && it.end_ns >= at - FX_MS);
    char rel[32], abs_[32];
    g_autofree char *want = g_strdup_printf("at %s", gt_fmt_ns(rel, sizeof rel, (double)(it.start_ns - start)));
    g_autofree char *was = g_strdup_printf("at %s", gt_fmt_ns(abs_, sizeof abs_, (double)it.start_ns));
    fprintf(stderr, "status: %s\n", gv_window_get_status(win));
    CU_ASSERT_PTR_NOT_NULL(strstr(gv_window_get_status(win), want));
    CU_ASSERT_PTR_NULL(strstr(gv_window_get_status(win), was));

    /* The summary's gaps: "at +t" from the same start. */
    const gt_report *r = gv_trace_model_report(m);
    CU_ASSERT_FATAL(r && r->gaps.n_longest > 0);
    GtkWidget *row = ti_find_widget(GTK_WIDGET(gv_window_get_summary(win)), is_gap_row, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    char when[32];
    double gap_ns = (double)(r->gaps.longest[0].start_ns - start);
    g_autofree char *gap_at = g_strdup_printf("at +%s", gt_fmt_ns(when, sizeof when, gap_ns));
    CU_ASSERT_PTR_NOT_NULL(strstr(gtk_label_get_text(GTK_LABEL(row)), gap_at));
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(m);
    g_free(path);
}

/* Tick marks in the grey of the timeline's, in a band of the axis bar. */
static int tick_marks(const GdkPixbuf *p, int x0, int x1, int y)
{
    int n = 0;
    for (int x = x0; x < x1; x++) {
        int rgb[3];
        ti_pixel(p, x, y, rgb);
        n += abs(rgb[0] - 153) <= 2 && abs(rgb[1] - 153) <= 2 && abs(rgb[2] - 153) <= 2;
    }
    return n;
}

/* The memory chart's axis: ticks from the trace's start, no label before it. */
static void test_viewer_layout__memory_axis(void)
{
    char *path = gt_test_path("fixture.sqlite");
    CU_ASSERT_EQUAL_FATAL(fx_write(path), 0);
    GvTraceModel *m;
    GvWindow *win = open_window(path, &m);
    gv_window_show_page(win, 1);
    for (int k = 0; k < 20; k++)
        ti_settle();
    GtkWidget *mw = GTK_WIDGET(gv_window_get_memory_view(win));
    GvMemView *mv = gv_memory_view_get_state(gv_window_get_memory_view(win));
    int wx, wy, ww, wh;
    ti_screen_rect(mw, &wx, &wy, &ww, &wh);
    GdkPixbuf *screen = ti_grab_screen();
    ti_save_grab(screen, "viewer-layout-memory-axis.png");
    int x0 = wx + (int)gv_view_x(&mv->x, mv->x.origin_ns);
    int ticks = tick_marks(screen, wx + GV_LABEL_W, wx + ww, wy + GV_AXIS_H - 3);
    int before = ti_count_dark(screen, wx + GV_LABEL_W, wy + 2, x0 - (wx + GV_LABEL_W) - 1, GV_AXIS_H - 4, 140);
    int labels = ti_count_dark(screen, x0, wy + 2, wx + ww - x0, GV_AXIS_H - 4, 140);
    fprintf(stderr, "memory axis: origin at %d, %d ticks, %d dark px before it, %d after\n", x0 - wx, ticks, before,
            labels);
    CU_ASSERT(x0 > wx + GV_LABEL_W + 4);
    CU_ASSERT(ticks >= 5);
    CU_ASSERT_EQUAL(before, 0);
    CU_ASSERT(labels > 100);
    g_object_unref(screen);
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(m);
    free(path);
}

int main(int argc, char **argv)
{
    if (!gtk_init_check(&argc, &argv)) {
        fprintf(stderr, "test_viewer_layout: no display (run it through tests/integration/viewer_ui.sh)\n");
        return 77;
    }
    static const gt_test_case cases[] = {
        {"test_viewer_layout__short_name_rules", test_viewer_layout__short_name_rules},
        {"test_viewer_layout__short_names", test_viewer_layout__short_names},
        {"test_viewer_layout__panel_width", test_viewer_layout__panel_width},
        {"test_viewer_layout__borders", test_viewer_layout__borders},
        {"test_viewer_layout__lane_names", test_viewer_layout__lane_names},
        {"test_viewer_layout__tick_labels", test_viewer_layout__tick_labels},
        {"test_viewer_layout__time_base", test_viewer_layout__time_base},
        {"test_viewer_layout__memory_axis", test_viewer_layout__memory_axis},
        {NULL, NULL},
    };
    static const gt_test_suite suites[] = {{"viewer_layout", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
