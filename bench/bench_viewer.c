/* bench_viewer.c: how fast gtrace-view shows a big trace, headless.
 *
 * Writes (or reuses, -i) a trace of N events with bench_store_write's mix
 * (kernels on two streams, their launch calls, NVTX ranges, copies), then
 * loads it as gtrace-view does (GTask, chunks published while loading) and
 * measures: time from start to the first frame drawn with rows (open + first
 * chunk + one render), time until every row is in, until the analysis is in;
 * then frame times (render of a 1600x900 view) for a scripted sequence of
 * pans and zooms from the whole trace down to single kernels: p50, p99, max.
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
    gboolean done;
} state;

static size_t render_once(GvTraceModel *m, GvView *v)
{
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, v->width, v->height);
    cairo_t *cr = cairo_create(s);
    size_t n = gv_render_timeline(cr, m, v);
    cairo_destroy(cr);
    cairo_surface_destroy(s);
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
    printf("analysis         %.3f s (report and memory)\n", st.t_analysed - st.t_start);

    /* Pans and zooms: from the whole trace in, across, and out again. */
    enum { N_FRAMES = 400 };
    double ms[N_FRAMES];
    size_t boxes_max = 0;
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
        if (b > boxes_max)
            boxes_max = b;
    }
    qsort(ms, N_FRAMES, sizeof ms[0], cmp_double);
    printf("frames           %d renders of 1600x900: p50 %.2f ms, p99 %.2f ms, max %.2f ms (up to %zu boxes)\n",
           N_FRAMES, ms[N_FRAMES / 2], ms[N_FRAMES * 99 / 100], ms[N_FRAMES - 1], boxes_max);
    g_object_unref(st.m);
    return 0;
}
