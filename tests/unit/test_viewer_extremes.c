/* test_viewer_extremes.c: the viewer's lanes and axis on times a damaged
 * trace can hold: a lane out of time order (one row whose start was not a
 * number), items at the ends of int64, an axis near INT64_MAX. Each of these
 * once ran out of memory, overflowed, or never ended. */
#include "gt_test.h"

#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gv-lane.h"
#include "gv-render.h"
#include "gv-trace-model.h"

typedef struct count_ctx { size_t boxes, items; } count_ctx;

static void count_box(const GvLane *l, const GvBox *b, void *p)
{
    count_ctx *c = p;
    c->boxes++;
    c->items += b->count;
}

/* 4,000 items 100 ns apart from 5 ms on, and a last one at 0: the pyramid's
 * buckets follow the span from the earliest start to the latest, not the
 * first item to the last (which made buckets 1 ns wide: millions of them,
 * 16 GB on cloverleaf's sync lane). */
static void test_viewer_lane__lod_out_of_order(void)
{
    enum { N = 4000 };
    GvLane l = {0};
    l.items = calloc(N, sizeof *l.items);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l.items);
    l.n = l.cap = N;
    for (size_t i = 0; i + 1 < N; i++)
        l.items[i] = (GvItem){.start_ns = 5000000 + (int64_t)i * 100, .end_ns = 5000000 + (int64_t)i * 100 + 50};
    l.items[N - 1] = (GvItem){.start_ns = 0, .end_ns = 10};
    CU_ASSERT_EQUAL_FATAL(gv_lane_lod_update(&l), 0);
    CU_ASSERT_TRUE(l.lod.n_levels > 0);
    CU_ASSERT_TRUE(l.lod.n[0] <= N / 4 + 1024);
    count_ctx c = {0};
    gv_lane_walk(&l, 0, 6000000, 6000000 / 1000.0, 3, count_box, &c);
    CU_ASSERT_TRUE(c.items >= N - 1);
    gv_lane_lod_free(&l);
    free(l.items);
}

/* Items from INT64_MIN to INT64_MAX: the pyramid, the walk and the hit test
 * saturate instead of overflowing, and every item is still counted. */
static void test_viewer_lane__extreme_times(void)
{
    enum { N = 3000 };
    GvLane l = {0};
    l.items = calloc(N, sizeof *l.items);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l.items);
    l.n = l.cap = N;
    l.items[0] = (GvItem){.start_ns = INT64_MIN, .end_ns = INT64_MAX}; /* the widest there is */
    l.items[1] = (GvItem){.start_ns = INT64_MIN + 5, .end_ns = INT64_MIN + 10};
    for (size_t i = 2; i + 1 < N; i++)
        l.items[i] = (GvItem){.start_ns = (int64_t)i * 1000, .end_ns = (int64_t)i * 1000 + 500};
    l.items[N - 1] = (GvItem){.start_ns = INT64_MAX - 10, .end_ns = INT64_MAX};
    CU_ASSERT_EQUAL_FATAL(gv_lane_lod_update(&l), 0);
    for (double npp = 1; npp < 1e19; npp *= 1000) {
        count_ctx c = {0};
        gv_lane_walk(&l, INT64_MIN, INT64_MAX, npp, 3, count_box, &c);
        CU_ASSERT_TRUE(c.boxes > 0);
    }
    count_ctx c = {0};
    gv_lane_walk(&l, INT64_MIN, INT64_MAX, 1e16, 3, count_box, &c);
    CU_ASSERT_TRUE(c.items >= N - 1);
    GvBox b;
    CU_ASSERT_TRUE(gv_lane_hit(&l, INT64_MAX - 5, 1.0, 3, 10, &b));
    CU_ASSERT_TRUE(gv_lane_hit(&l, INT64_MIN + 7, 1e18, 3, INT64_MAX, &b));
    gv_lane_lod_free(&l);
    free(l.items);
}

/* An axis 1 us wide just under INT64_MAX: a double plus a tick step there is
 * the same double; the ticks are counted, so drawing ends (SIGALRM if not). */
static void test_viewer_render__axis_near_int64_max(void)
{
    GvTraceModel *m = gv_trace_model_new();
    GvView v;
    gv_view_init(&v, 800, 300);
    v.origin_ns = 0;
    gv_view_show_range(&v, INT64_MAX - 1000, INT64_MAX);
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 800, 300);
    cairo_t *cr = cairo_create(s);
    alarm(60);
    gv_render_timeline(cr, m, &v);
    gv_view_zoom(&v, 1e6, 400);
    gv_view_pan(&v, -1e9);
    gv_render_timeline(cr, m, &v);
    gv_view_show_range(&v, INT64_MIN, INT64_MAX);
    gv_render_timeline(cr, m, &v);
    alarm(0);
    CU_ASSERT_TRUE(v.ns_per_px > 0);
    CU_ASSERT_EQUAL(cairo_status(cr), CAIRO_STATUS_SUCCESS);
    cairo_destroy(cr);
    cairo_surface_destroy(s);
    g_object_unref(m);
}

static const gt_test_case cases[] = {
    {"test_viewer_lane__lod_out_of_order", test_viewer_lane__lod_out_of_order},
    {"test_viewer_lane__extreme_times", test_viewer_lane__extreme_times},
    {"test_viewer_render__axis_near_int64_max", test_viewer_render__axis_near_int64_max},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"viewer_extremes", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
