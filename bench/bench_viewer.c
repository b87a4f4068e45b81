/* bench_viewer.c: how fast gtrace-view shows a big trace, headless.
 *
 * Writes (or reuses, -i) a trace of N events with bench_store_write's mix
 * (kernels on two streams, their launch calls, NVTX ranges, copies), then
 * loads it as gtrace-view does (GTask, chunks published while loading) and
 * measures: time from start to the first frame drawn with rows (open + first
 * chunk + one render), frame times while rows come in (one render of the
 * loaded span after each chunk), time until every row is in, until the
 * analysis is in; then frame times (render of a 1600x900 view) for a scripted
 * sequence of pans and zooms from the whole trace down to single kernels:
 * p50, p99, max, and the slowest frames with their zoom.
 *
 *   bench_viewer -i TRACE | -n EVENTS -o TRACE
 * Not run by make check; figures in bench/results/. */
#include "gv-render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double now_s(void) { return (double)g_get_monotonic_time() / 1e6; }

typedef struct state {
    GvTraceModel *m;
    double t_start, t_first_frame, t_loaded, t_analysed;
    int64_t first_frame_items;
    size_t first_frame_boxes;
    double loading_ms[512]; /* a frame after each chunk while rows come in */
    int n_loading;
    gboolean done;
} state;

/* One surface for every frame, as a window's back buffer is: the frame time
 * is the drawing, not 5.8 MB of fresh pages. */
static cairo_surface_t *surface;

static size_t render_once(GvTraceModel *m, GvView *v)
{
    if (!surface)
        surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, v->width, v->height);
    cairo_t *cr = cairo_create(surface);
    size_t n = gv_render_timeline(cr, m, v);
    cairo_destroy(cr);
    return n;
}

static void on_updated(GvTraceModel *m, gpointer p)
{
    state *st = p;
    if (st->t_first_frame == 0 && gv_trace_model_n_items(m) > 0) {
        GvView v;
        gv_view_init(&v, 1600, 900);
        gv_view_fit(&v, m);
        st->first_frame_boxes = render_once(m, &v);
        st->t_first_frame = now_s();
        st->first_frame_items = gv_trace_model_n_items(m);
    } else if (!gv_trace_model_is_loaded(m) && st->n_loading < 512) {
        GvView v;
        gv_view_init(&v, 1600, 900);
        gv_view_fit(&v, m);
        double t0 = now_s();
        render_once(m, &v);
        st->loading_ms[st->n_loading++] = (now_s() - t0) * 1e3;
    }
    if (st->t_loaded == 0 && gv_trace_model_is_loaded(m))
        st->t_loaded = now_s();
}

static void on_done(GObject *src, GAsyncResult *res, gpointer p)
{
    state *st = p;
    GError *error = NULL;
    if (!gv_trace_model_load_finish(GV_TRACE_MODEL(src), res, &error)) {
        fprintf(stderr, "bench_viewer: %s\n", error->message);
        exit(1);
    }
    st->t_analysed = now_s();
    st->done = TRUE;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    long n_events = 10000000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-i") && i + 1 < argc)
            in = argv[++i];
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n_events = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_viewer -i TRACE | [-n EVENTS] -o TRACE\n");
            return 2;
        }
    }
    if (!in && !out) {
        fprintf(stderr, "usage: bench_viewer -i TRACE | [-n EVENTS] -o TRACE\n");
        return 2;
    }
    if (!in) { /* the store benchmark writes the same mix; it sits beside this program */
        char *dir = g_path_get_dirname(argv[0]);
        char *cmd = g_strdup_printf("'%s/bench_store_write' -n %ld -o '%s' >/dev/null", dir, n_events, out);
        if (system(cmd) != 0) {
            fprintf(stderr, "bench_viewer: writing the trace failed: %s\n", cmd);
            return 1;
        }
        g_free(cmd);
        g_free(dir);
        in = out;
    }
    state st = {0};
    st.m = gv_trace_model_new();
    g_signal_connect(st.m, "updated", G_CALLBACK(on_updated), &st);
    st.t_start = now_s();
    gv_trace_model_load_async(st.m, in, NULL, on_done, &st);
    while (!st.done)
        g_main_context_iteration(NULL, TRUE);
    int64_t n = gv_trace_model_n_items(st.m);
    printf("trace            %s: %lld items in %zu tracks\n", in, (long long)n, gv_trace_model_n_tracks(st.m));
    printf("first frame      %.3f s after start (%lld items loaded, %zu boxes drawn)\n",
           st.t_first_frame - st.t_start, (long long)st.first_frame_items, st.first_frame_boxes);
    printf("all rows         %.3f s\n", st.t_loaded - st.t_start);
    if (st.n_loading > 0) {
        qsort(st.loading_ms, (size_t)st.n_loading, sizeof st.loading_ms[0], cmp_double);
        printf("frames loading   %d renders of the loaded span while rows come in: p50 %.2f ms, max %.2f ms\n",
               st.n_loading, st.loading_ms[st.n_loading / 2], st.loading_ms[st.n_loading - 1]);
    }
    printf("analysis         %.3f s (report and memory)\n", st.t_analysed - st.t_start);

    /* Pans and zooms: from the whole trace in, across, and out again. */
    enum { N_FRAMES = 400 };
    double ms[N_FRAMES], ms_sorted[N_FRAMES], npp[N_FRAMES];
    size_t boxes[N_FRAMES], boxes_max = 0;
    GvView v;
    gv_view_init(&v, 1600, 900);
    gv_view_fit(&v, st.m);
    for (int f = 0; f < N_FRAMES; f++) {
        int phase = f / 100;
        if (phase == 0)
            gv_view_zoom(&v, 1.12, 400 + f * 7 % 1000);  /* zoom in ~ 80000x */
        else if (phase == 1)
            gv_view_pan(&v, -350);                       /* pan at a kernel's scale */
        else if (phase == 2)
            gv_view_zoom(&v, 1 / 1.12, 900);             /* back out */
        else
            gv_view_pan(&v, f % 2 ? -800 : 700), v.scroll_y = (f % 3) * 20; /* the whole trace, panned */
        double t0 = now_s();
        size_t b = render_once(st.m, &v);
        ms[f] = (now_s() - t0) * 1e3;
        npp[f] = v.ns_per_px;
        boxes[f] = b;
        if (b > boxes_max)
            boxes_max = b;
    }
    memcpy(ms_sorted, ms, sizeof ms);
    qsort(ms_sorted, N_FRAMES, sizeof ms[0], cmp_double);
    printf("frames           %d renders of 1600x900: p50 %.2f ms, p99 %.2f ms, max %.2f ms (up to %zu boxes)\n",
           N_FRAMES, ms_sorted[N_FRAMES / 2], ms_sorted[N_FRAMES * 99 / 100], ms_sorted[N_FRAMES - 1], boxes_max);
    /* The slowest frames, to tell a slow zoom level from a busy machine. */
    for (int r = 0; r < 4; r++) {
        int worst = 0;
        for (int f = 1; f < N_FRAMES; f++)
            if (ms[f] > ms[worst])
                worst = f;
        printf("  slow frame %3d: %.2f ms at %.0f ns/px, %zu boxes\n", worst, ms[worst], npp[worst], boxes[worst]);
        ms[worst] = -1;
    }
    cairo_surface_destroy(surface);
    g_object_unref(st.m);
    return 0;
}
