/* bench_viewer.c: how fast gtrace-view shows a big trace, headless.
 *
 * Writes (or reuses, -i) a trace of N events with bench_store_write's mix
 * (kernels on two streams, their launch calls, NVTX ranges, copies), then
 * loads it as gtrace-view does (a loader thread, chunks published while
 * loading) and measures: time from start to the first frame drawn with rows
 * (open + first chunk + one render), frames while rows come in (a frame every
 * 16 ms as a user panning and zooming during the load would ask for, and how
 * long each waited for the model's lock), time until every row is in, until
 * the analysis is in; then frame times (render of a 1600x900 view) for a
 * scripted sequence of pans and zooms from the whole trace down to single
 * kernels, -r times: p50, p99, max, and the slowest frames with their zoom;
 * and memory clicks: the allocator's state asked of the loaded analysis at
 * 41 times across the trace and at the peak (what a click on the memory
 * page waits for), against one gt_memory_state_at on the open trace (what
 * a click cost when it analysed the trace again); and the first useful
 * picture of each page (timeline, summary, memory chart), and when the
 * report kept in the trace (bench_report keeps one) was there to show.
 * When the analysis fails with every row in (a trace too big for the memory
 * it is given), the pans and zooms still run, as the window's timeline still
 * pans beside the error, and the exit status is 1.
 *
 *   bench_viewer [-r ROUNDS] -i TRACE | [-n EVENTS] -o TRACE
 * Not run by make check; figures in bench/results/. */
#include "gv-memory-view.h"
#include "gv-render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) { return (double)g_get_monotonic_time() / 1e6; }

/* This thread's CPU time: a frame's wall time minus it is time spent off
 * the CPU (other processes, a VM's stolen time), not drawing. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

enum { MAX_LOADING = 8192 };

typedef struct state {
    GvTraceModel *m;
    double t_start, t_first_frame, t_loaded, t_analysed;
    double t_kept; /* when the report kept in the trace was there (0: none) */
    gboolean kept_memory; /* and had a memory section */
    int64_t first_frame_items;
    size_t first_frame_boxes;
    double loading_ms[MAX_LOADING], wait_ms[MAX_LOADING], loading_cpu_ms[MAX_LOADING]; /* frames every 16 ms while rows come in */
    int n_loading;
    GvView loading_view;
    gboolean done;
    char *failed; /* the analysis failed with every row in: why (the window keeps the rows) */
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
        gv_view_init(&st->loading_view, 1600, 900);
        gv_view_fit(&st->loading_view, m);
    }
    if (st->t_kept == 0 && !gv_trace_model_is_analysed(m)) {
        char *kept = gv_trace_model_kept_report(m), *mem = gv_trace_model_kept_section(m, "memory");
        if (kept)
            st->t_kept = now_s();
        st->kept_memory = mem != NULL;
        g_free(kept);
        g_free(mem);
    }
    if (st->t_loaded == 0 && gv_trace_model_is_loaded(m))
        st->t_loaded = now_s();
}

/* While rows come in, a frame every 16 ms: zooming in and out around the
 * loaded part and panning, as someone looking while it loads would. The
 * wait for the model's lock is timed apart (the loader holds it to publish). */
static gboolean loading_frame(gpointer p)
{
    state *st = p;
    if (st->t_first_frame == 0)
        return G_SOURCE_CONTINUE;
    if (gv_trace_model_is_loaded(st->m) || st->n_loading >= MAX_LOADING)
        return G_SOURCE_REMOVE;
    GvView *v = &st->loading_view;
    int k = st->n_loading % 40;
    if (k == 0)
        gv_view_fit(v, st->m);
    else if (k < 20)
        gv_view_zoom(v, 1.3, 300 + 50 * k);
    else
        gv_view_pan(v, k % 2 ? -300 : 200), gv_view_zoom(v, 1 / 1.3, 900);
    double t0 = now_s(), c0 = cpu_s();
    gv_trace_model_lock(st->m);
    double t1 = now_s();
    gv_trace_model_unlock(st->m);
    render_once(st->m, v);
    st->wait_ms[st->n_loading] = (t1 - t0) * 1e3;
    st->loading_cpu_ms[st->n_loading] = (cpu_s() - c0) * 1e3;
    st->loading_ms[st->n_loading++] = (now_s() - t0) * 1e3;
    return G_SOURCE_CONTINUE;
}

static void print_loading(state *st);

static void on_done(GObject *src, GAsyncResult *res, gpointer p)
{
    state *st = p;
    GError *error = NULL;
    if (!gv_trace_model_load_finish(GV_TRACE_MODEL(src), res, &error)) {
        fprintf(stderr, "bench_viewer: %s\n", error->message);
        if (!gv_trace_model_is_loaded(st->m)) {
            print_loading(st); /* what the timeline showed before the load failed */
            exit(1);
        }
        /* as gtrace-view's window: the error beside the rows, which still pan */
        st->failed = g_strdup(error->message);
        g_error_free(error);
    }
    st->t_analysed = now_s();
    st->done = TRUE;
}

static int cmp_double(const void *a, const void *b);

/* Memory clicks: the state at a time, from the loaded analysis. */
static void memory_clicks(GvTraceModel *m, const char *path)
{
    const GvMemory *mem = gv_trace_model_memory(m);
    if (!mem || gv_trace_model_n_memories(m) == 0) {
        printf("memory clicks    none: the trace has no allocation events\n");
        return;
    }
    int64_t start, end;
    gv_trace_model_span(m, &start, &end);
    enum { N_CLICKS = 42 };
    double ms[N_CLICKS], cpu_ms[N_CLICKS];
    size_t blocks_at_peak = 0, max_blocks = 0;
    for (int i = 0; i < N_CLICKS; i++) {
        int64_t t = i == N_CLICKS - 1 ? mem->peak_allocated_ns : start + (int64_t)((double)(end - start) * i / 40.0);
        double t0 = now_s(), c0 = cpu_s();
        gt_mem_state *st = gv_trace_model_memory_state_of(m, mem->pid, t, NULL);
        ms[i] = (now_s() - t0) * 1e3;
        cpu_ms[i] = (cpu_s() - c0) * 1e3;
        if (st && st->n_blocks > max_blocks)
            max_blocks = st->n_blocks;
        if (st && i == N_CLICKS - 1)
            blocks_at_peak = st->n_blocks;
        gt_mem_state_free(st);
    }
    double at_peak = ms[N_CLICKS - 1], at_peak_cpu = cpu_ms[N_CLICKS - 1];
    qsort(ms, N_CLICKS, sizeof ms[0], cmp_double);
    qsort(cpu_ms, N_CLICKS, sizeof cpu_ms[0], cmp_double);
    printf("memory clicks    %d states of pid %lld: p50 %.2f ms, p99 %.2f ms, max %.2f ms; at the peak %.2f ms "
           "(%zu blocks alive; at most %zu)\n",
           N_CLICKS, (long long)mem->pid, ms[N_CLICKS / 2], ms[N_CLICKS * 99 / 100], ms[N_CLICKS - 1], at_peak,
           blocks_at_peak, max_blocks);
    printf("  on the CPU     p50 %.2f ms, p99 %.2f ms, max %.2f ms; at the peak %.2f ms\n", cpu_ms[N_CLICKS / 2],
           cpu_ms[N_CLICKS * 99 / 100], cpu_ms[N_CLICKS - 1], at_peak_cpu);
    gt_trace *t = NULL;
    if (gt_trace_open(&t, path, 0) == 0) { /* a click that analyses the trace again */
        gt_mem_state *st = NULL;
        double t0 = now_s(), c0 = cpu_s();
        int rc = gt_memory_state_at(&st, t, mem->pid, mem->peak_allocated_ns);
        printf("  re-analysing   %.2f ms (%.2f ms on this thread's CPU) for the same state at the peak from the "
               "open trace%s\n",
               (now_s() - t0) * 1e3, (cpu_s() - c0) * 1e3, rc == 0 ? "" : " (failed)");
        gt_mem_state_free(st);
        gt_trace_free(t);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Pans and zooms: from the whole trace in, across, and out again; the
 * figures of 400 frames and the slowest of them. */
static void pans_and_zooms(GvTraceModel *m)
{
    enum { N_FRAMES = 400 };
    double ms[N_FRAMES], ms_sorted[N_FRAMES], npp[N_FRAMES], cpu_ms[N_FRAMES], cpu_sorted[N_FRAMES];
    size_t boxes[N_FRAMES], boxes_max = 0;
    GvView v;
    gv_view_init(&v, 1600, 900);
    gv_view_fit(&v, m);
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
        double t0 = now_s(), c0 = cpu_s();
        size_t b = render_once(m, &v);
        ms[f] = (now_s() - t0) * 1e3;
        cpu_ms[f] = (cpu_s() - c0) * 1e3;
        npp[f] = v.ns_per_px;
        boxes[f] = b;
        if (b > boxes_max)
            boxes_max = b;
    }
    memcpy(ms_sorted, ms, sizeof ms);
    qsort(ms_sorted, N_FRAMES, sizeof ms[0], cmp_double);
    printf("frames           %d renders of 1600x900: p50 %.2f ms, p99 %.2f ms, max %.2f ms (up to %zu boxes)\n",
           N_FRAMES, ms_sorted[N_FRAMES / 2], ms_sorted[N_FRAMES * 99 / 100], ms_sorted[N_FRAMES - 1], boxes_max);
    memcpy(cpu_sorted, cpu_ms, sizeof cpu_ms);
    qsort(cpu_sorted, N_FRAMES, sizeof cpu_ms[0], cmp_double);
    printf("  on the CPU     p50 %.2f ms, p99 %.2f ms, max %.2f ms (the rest of a frame: waiting for a CPU)\n",
           cpu_sorted[N_FRAMES / 2], cpu_sorted[N_FRAMES * 99 / 100], cpu_sorted[N_FRAMES - 1]);
    /* The slowest frames, to tell a slow zoom level from a busy machine. */
    for (int r = 0; r < 4; r++) {
        int worst = 0;
        for (int f = 1; f < N_FRAMES; f++)
            if (ms[f] > ms[worst])
                worst = f;
        printf("  slow frame %3d: %.2f ms (%.2f ms on the CPU) at %.0f ns/px, %zu boxes\n", worst, ms[worst],
               cpu_ms[worst], npp[worst], boxes[worst]);
        ms[worst] = -1;
    }
}

/* The first frame and the frames while rows came in (sorts st's samples). */
static void print_loading(state *st)
{
    printf("first frame      %.3f s after start (%lld items loaded, %zu boxes drawn)\n",
           st->t_first_frame - st->t_start, (long long)st->first_frame_items, st->first_frame_boxes);
    if (st->t_loaded > 0)
        printf("all rows         %.3f s\n", st->t_loaded - st->t_start);
    else
        printf("all rows         not in: %lld items so far\n", (long long)gv_trace_model_n_items(st->m));
    if (st->n_loading > 0) {
        int nl = st->n_loading;
        qsort(st->loading_ms, (size_t)nl, sizeof st->loading_ms[0], cmp_double);
        qsort(st->wait_ms, (size_t)nl, sizeof st->wait_ms[0], cmp_double);
        qsort(st->loading_cpu_ms, (size_t)nl, sizeof st->loading_cpu_ms[0], cmp_double);
        int over = 0;
        for (int i = 0; i < nl; i++)
            over += st->loading_ms[i] > 16.0;
        printf("frames loading   %d frames while rows come in: p50 %.2f ms, p99 %.2f ms, max %.2f ms, %d over 16 ms\n",
               nl, st->loading_ms[nl / 2], st->loading_ms[nl * 99 / 100], st->loading_ms[nl - 1], over);
        printf("  of which lock  p50 %.3f ms, p99 %.3f ms, max %.3f ms waiting for the loader\n", st->wait_ms[nl / 2],
               st->wait_ms[nl * 99 / 100], st->wait_ms[nl - 1]);
        printf("  on the CPU     p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", st->loading_cpu_ms[nl / 2],
               st->loading_cpu_ms[nl * 99 / 100], st->loading_cpu_ms[nl - 1]);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    long n_events = 10000000;
    int rounds = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-i") && i + 1 < argc)
            in = argv[++i];
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n_events = atol(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc && atoi(argv[i + 1]) > 0)
            rounds = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_viewer [-r ROUNDS] -i TRACE | [-n EVENTS] -o TRACE\n");
            return 2;
        }
    }
    if (!in && !out) {
        fprintf(stderr, "usage: bench_viewer [-r ROUNDS] -i TRACE | [-n EVENTS] -o TRACE\n");
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
    g_timeout_add(16, loading_frame, &st);
    st.t_start = now_s();
    gv_trace_model_load_async(st.m, in, NULL, on_done, &st);
    while (!st.done)
        g_main_context_iteration(NULL, TRUE);
    printf("trace            %s: %lld items in %zu tracks\n", in, (long long)gv_trace_model_n_items(st.m),
           gv_trace_model_n_tracks(st.m));
    print_loading(&st);
    if (st.failed) {
        printf("analysis         failed at %.3f s: %s; the timeline keeps its rows\n", st.t_analysed - st.t_start,
               st.failed);
        if (st.t_kept > 0)
            printf("kept report      shown at %.3f s on the summary page\n", st.t_kept - st.t_start);
        for (int r = 0; r < rounds; r++)
            pans_and_zooms(st.m);
        cairo_surface_destroy(surface);
        g_object_unref(st.m);
        g_free(st.failed);
        return 1;
    }
    printf("analysis         %.3f s (report and memory)\n", st.t_analysed - st.t_start);
    /* First useful picture of each page: the timeline's first frame with
     * rows (above); the summary fills when the analysis is in; the memory
     * page's chart needs the analysis's series, then one frame. */
    GvMemView mv;
    gv_mem_view_init(&mv, 1600, 900);
    gv_view_fit(&mv.x, st.m);
    const GvMemory *mem0 = gv_trace_model_memory(st.m);
    gt_mem_state *snap = mem0 ? gv_trace_model_memory_state_of(st.m, mem0->pid, mem0->peak_allocated_ns, NULL) : NULL;
    double m0 = now_s();
    cairo_surface_t *ms = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1600, 900);
    cairo_t *mcr = cairo_create(ms);
    gv_render_memory(mcr, st.m, &mv, snap);
    cairo_destroy(mcr);
    cairo_surface_destroy(ms);
    double mem_ms = (now_s() - m0) * 1e3;
    gt_mem_state_free(snap);
    printf("first picture    timeline %.3f s, summary %.3f s, memory %.3f s (its chart %.1f ms after the "
           "analysis; %zu blocks); progress shown from 0 s\n",
           st.t_first_frame - st.t_start, st.t_analysed - st.t_start, st.t_analysed - st.t_start + mem_ms / 1e3,
           mem_ms, mem0 ? mem0->n_blocks : 0);
    if (st.t_kept > 0) /* the summary and memory pages show the kept report until the analysis is in */
        printf("kept report      shown at %.3f s on the summary page%s (the analysed pages at %.3f s)\n",
               st.t_kept - st.t_start, st.kept_memory ? " and the memory page (its memory section)" : "",
               st.t_analysed - st.t_start);
    else
        printf("kept report      none in this trace: the summary and memory pages wait for the analysis\n");

    memory_clicks(st.m, in);
    for (int r = 0; r < rounds; r++)
        pans_and_zooms(st.m);
    cairo_surface_destroy(surface);
    g_object_unref(st.m);
    return 0;
}
