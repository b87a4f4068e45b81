/* test_viewer_fit.c: the first view of a `gtrace --pytorch` trace, whose
 * steps come after seconds of `import torch` ($GV_PYTORCH_TRACE, recorded by
 * tests/integration/viewer_pytorch.sh, which runs this under Xvfb with
 * openbox): the window opens on the steps, not on the whole trace with its
 * steps squeezed into the last tenth; f (Fit) shows the whole trace. A
 * screenshot of the first view goes to $GV_SHOT_DIR. */
#include "gt_test.h"
#include "test_viewer_input.h"

#include <stdlib.h>
#include <string.h>

#include "gv-window.h"

static void test_viewer_fit__pytorch_steps(void)
{
    const char *path = getenv("GV_PYTORCH_TRACE");
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    GvTraceModel *m = gv_trace_model_new();
    GvWindow *win = GV_WINDOW(gv_window_new(m, NULL));
    gtk_window_set_default_size(GTK_WINDOW(win), 1300, 800);
    gtk_widget_show(GTK_WIDGET(win));
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(gv_trace_model_load(m, path, &error));
    for (int k = 0; k < 200 && !gtk_widget_get_mapped(GTK_WIDGET(win)); k++)
        ti_settle();
    ti_settle();
    const gt_report *r = gv_trace_model_report(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_FATAL(r->n_steps >= 3);
    int64_t span_s, span_e;
    gv_trace_model_span(m, &span_s, &span_e);
    int64_t s0 = r->steps[0].start_ns, s1 = r->steps[r->n_steps - 1].end_ns, steps_ns = s1 - s0;
    /* the premise: a whole-trace view would begin well before step 0 */
    CU_ASSERT_FATAL(s0 - span_s > steps_ns / 5);
    GvTimeline *tl = gv_window_get_timeline(win);
    const GvView *v = gv_timeline_get_view(tl);
    int64_t t0 = gv_view_time(v, GV_LABEL_W), t1 = gv_view_end(v);
    fprintf(stderr, "trace %lld..%lld ns, steps %lld..%lld, first view %lld..%lld\n", (long long)span_s,
            (long long)span_e, (long long)s0, (long long)s1, (long long)t0, (long long)t1);
    /* the first view begins near step 0 and ends near the last step's end: a margin of a few percent */
    CU_ASSERT(t0 <= s0 && t0 >= s0 - steps_ns / 10);
    CU_ASSERT(t1 >= s1 && t1 <= s1 + steps_ns / 10);
    /* the time axis still counts from the trace's start */
    CU_ASSERT_EQUAL(v->origin_ns, span_s);
    GdkPixbuf *grab = ti_grab_screen();
    ti_save_grab(grab, "pytorch-first-view.png");
    g_object_unref(grab);
    /* f: the whole trace */
    gtk_widget_grab_focus(GTK_WIDGET(tl));
    GdkEvent *e = gdk_event_new(GDK_KEY_PRESS);
    e->key.keyval = GDK_KEY_f;
    ti_send(GTK_WIDGET(tl), e);
    ti_settle();
    v = gv_timeline_get_view(tl);
    CU_ASSERT(gv_view_time(v, GV_LABEL_W) <= span_s && gv_view_end(v) >= span_e);
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(m);
}

/* The main thread's NVTX lanes are named for what they hold: "steps" (step
 * N), "phases" (data, forward, backward, optimizer), "modules, depth N"
 * (the root module "Net", its children, their qualified names and backward
 * ranges), not "NVTX ranges, depth N". */
static void test_viewer_fit__lane_names(void)
{
    const char *path = getenv("GV_PYTORCH_TRACE");
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    GvTraceModel *m = gv_trace_model_new();
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(gv_trace_model_load(m, path, &error));
    int steps = 0, phases = 0, modules = 0, unnamed = 0;
    for (size_t i = 0; i < gv_trace_model_n_tracks(m); i++) {
        const GvTrack *tr = gv_trace_model_track(m, i);
        for (size_t j = 0; j < tr->n_lanes; j++) {
            const GvLane *l = tr->lanes[j];
            if (l->kind != GV_ITEM_NVTX || l->n == 0)
                continue;
            fprintf(stderr, "%s / %s (%zu ranges)\n", tr->title, l->label, l->n);
            steps += strcmp(l->label, "steps") == 0;
            phases += strcmp(l->label, "phases") == 0;
            modules += strncmp(l->label, "modules, depth ", 15) == 0;
            unnamed += strncmp(l->label, "NVTX ranges", 11) == 0;
        }
    }
    CU_ASSERT_EQUAL(steps, 1);
    CU_ASSERT_EQUAL(phases, 1);
    CU_ASSERT(modules >= 3);
    CU_ASSERT_EQUAL(unnamed, 0);
    g_object_unref(m);
}

int main(int argc, char **argv)
{
    if (!gtk_init_check(&argc, &argv)) {
        fprintf(stderr, "test_viewer_fit: no display (run it through tests/integration/viewer_pytorch.sh)\n");
        return 77;
    }
    static const gt_test_case cases[] = {
        {"test_viewer_fit__pytorch_steps", test_viewer_fit__pytorch_steps},
        {"test_viewer_fit__lane_names", test_viewer_fit__lane_names},
        {NULL, NULL},
    };
    static const gt_test_suite suites[] = {{"viewer_fit", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
