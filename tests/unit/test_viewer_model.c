/* test_viewer_model.c: the viewer's model and drawing without a display:
 * tracks and lanes of a known trace, idle gaps and their causes, launch <->
 * kernel, search, the level-of-detail walk, the memory stacking, pixels of a
 * headless render, the nsys fixtures, and errors for bad files. */
#include "gt_test.h"
#include "test_viewer_fixture.h"

#include <stdlib.h>
#include <string.h>

#include "gv-render.h"

static GvTraceModel *load_fixture(void)
{
    char *path = gt_test_path("fixture.sqlite");
    CU_ASSERT_EQUAL_FATAL(fx_write(path), 0);
    GvTraceModel *m = gv_trace_model_new();
    GError *error = NULL;
    gboolean ok = gv_trace_model_load(m, path, &error);
    if (!ok)
        fprintf(stderr, "load: %s\n", error->message);
    CU_ASSERT_TRUE_FATAL(ok);
    free(path);
    return m;
}

static const GvLane *lane_of(GvTraceModel *m, GvTrackKind kind, GvItemKind lk, size_t *ti, size_t *li)
{
    for (size_t t = 0; t < gv_trace_model_n_tracks(m); t++) {
        const GvTrack *tr = gv_trace_model_track(m, t);
        for (size_t l = 0; tr->kind == kind && l < tr->n_lanes; l++)
            if (tr->lanes[l]->kind == lk) {
                if (ti)
                    *ti = t;
                if (li)
                    *li = l;
                return tr->lanes[l];
            }
    }
    return NULL;
}

static void test_viewer_model__tracks(void)
{
    GvTraceModel *m = load_fixture();
    CU_ASSERT_TRUE(gv_trace_model_is_analysed(m));
    CU_ASSERT_EQUAL(gv_trace_model_n_tracks(m), 2); /* GPU 0 and the thread */
    const GvTrack *dev = gv_trace_model_track(m, 0), *th = gv_trace_model_track(m, 1);
    CU_ASSERT_EQUAL(dev->kind, GV_TRACK_DEVICE);
    CU_ASSERT_EQUAL(th->kind, GV_TRACK_THREAD);
    CU_ASSERT_EQUAL(dev->n_lanes, 2); /* idle, stream 7 */
    CU_ASSERT_STRING_EQUAL(dev->lanes[1]->label, "stream 7");
    CU_ASSERT_EQUAL(dev->lanes[1]->n, 3);
    CU_ASSERT_STRING_EQUAL(gv_trace_model_name(m, dev->lanes[1]->items[1].name), "kernB");
    CU_ASSERT_EQUAL(th->n_lanes, 3); /* NVTX 0, NVTX 1, CUDA API */
    CU_ASSERT_STRING_EQUAL(gv_trace_model_name(m, th->lanes[1]->items[0].name), "forward");
    CU_ASSERT_STRING_EQUAL(th->lanes[2]->label, "CUDA API");
    CU_ASSERT_STRING_EQUAL(gv_trace_model_name(m, th->lanes[2]->items[0].name), "cudaLaunchKernel");
    CU_ASSERT_EQUAL(gv_trace_model_report(m)->n_events[GT_EV_KERNEL], 3);
    g_object_unref(m);
}

static void test_viewer_model__gaps(void)
{
    GvTraceModel *m = load_fixture();
    const GvLane *g = lane_of(m, GV_TRACK_DEVICE, GV_ITEM_GAP, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL_FATAL(g->n, 2);
    CU_ASSERT_EQUAL(g->items[0].start_ns, 2 * FX_MS);
    CU_ASSERT_EQUAL(g->items[0].end_ns, 4 * FX_MS);
    CU_ASSERT_EQUAL(g->items[0].aux, GT_GAP_HOST_WAIT);
    CU_ASSERT_EQUAL(g->items[1].end_ns - g->items[1].start_ns, 10000);
    CU_ASSERT_EQUAL(g->items[1].aux, GT_GAP_KERNEL_WAIT);
    g_object_unref(m);
}

static void test_viewer_model__related_and_describe(void)
{
    GvTraceModel *m = load_fixture();
    size_t ti, li, ai, al;
    lane_of(m, GV_TRACK_DEVICE, GV_ITEM_KERNEL, &ti, &li);
    lane_of(m, GV_TRACK_THREAD, GV_ITEM_API, &ai, &al);
    GvItemRef kb = {ti, li, 1}, rel;
    gv_trace_model_lock(m);
    CU_ASSERT_TRUE(gv_trace_model_find_related(m, &kb, &rel));
    CU_ASSERT_EQUAL(rel.track, ai);
    CU_ASSERT_EQUAL(rel.lane, al);
    CU_ASSERT_EQUAL(rel.index, 1); /* launch B */
    GvItemRef back;
    CU_ASSERT_TRUE(gv_trace_model_find_related(m, &rel, &back));
    CU_ASSERT_EQUAL(back.index, 1);
    gv_trace_model_unlock(m);
    char *d = gv_trace_model_describe(m, &kb);
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "kernB"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "1.000 ms"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "grid (64, 1, 1)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "launched by cudaLaunchKernel"));
    g_free(d);
    g_object_unref(m);
}

static void test_viewer_model__search(void)
{
    GvTraceModel *m = load_fixture();
    GvItemRef r;
    gv_trace_model_lock(m);
    CU_ASSERT_TRUE(gv_trace_model_search(m, "KERNB", INT64_MIN, FALSE, &r));
    CU_ASSERT_STRING_EQUAL(gv_trace_model_name(m, gv_trace_model_track(m, r.track)->lanes[r.lane]->items[r.index].name),
                           "kernB");
    CU_ASSERT_TRUE(gv_trace_model_search(m, "kern", 4 * FX_MS, FALSE, &r)); /* after B: C */
    CU_ASSERT_EQUAL(r.index, 2);
    /* Backwards from B: the nearest match is B's launch, cudaLaunchKernel (any case). */
    CU_ASSERT_TRUE(gv_trace_model_search(m, "kern", 4 * FX_MS, TRUE, &r));
    CU_ASSERT_EQUAL(gv_trace_model_track(m, r.track)->lanes[r.lane]->items[r.index].start_ns, 3 * FX_MS + FX_MS / 2);
    CU_ASSERT_FALSE(gv_trace_model_search(m, "no such name", INT64_MIN, FALSE, &r));
    gv_trace_model_unlock(m);
    g_object_unref(m);
}

typedef struct count_ctx { size_t boxes, items; } count_ctx;
static void count_box(const GvLane *l, const GvBox *b, void *p)
{
    count_ctx *c = p;
    c->boxes++;
    c->items += b->count;
}

static void test_viewer_lane__walk_merges_narrow_items(void)
{
    enum { N = 100000 };
    GvLane l = {0};
    l.items = calloc(N, sizeof *l.items);
    l.n = l.cap = N;
    for (size_t i = 0; i < N; i++)
        l.items[i] = (GvItem){.start_ns = (int64_t)i * 20, .end_ns = (int64_t)i * 20 + 10};
    /* Zoomed out: 2 ms over 1000 px; 100,000 items become at most ~1000/3 boxes that count them all. */
    count_ctx c = {0};
    gv_lane_walk(&l, 0, N * 20, 2000.0, 3, count_box, &c);
    CU_ASSERT(c.boxes <= 1000 / 3 + 2);
    CU_ASSERT(c.boxes >= 300);
    CU_ASSERT_EQUAL(c.items, N);
    /* Zoomed in at 1 ns per pixel: each item (10 px) is its own box; only the visible ones. */
    c = (count_ctx){0};
    gv_lane_walk(&l, 1000, 2000, 1.0, 3, count_box, &c);
    CU_ASSERT_EQUAL(c.boxes, 50);
    CU_ASSERT_EQUAL(c.items, 50);
    /* The hit under a merged box reports the run. */
    GvBox b;
    CU_ASSERT_TRUE(gv_lane_hit(&l, 500000, 2000.0, 3, 4000, &b));
    CU_ASSERT(b.count > 1);
    CU_ASSERT_FALSE(gv_lane_hit(&l, -100000, 1.0, 3, 2, &b));
    free(l.items);
}

static void test_viewer_model__memory_stacking(void)
{
    GvTraceModel *m = load_fixture();
    const GvMemory *mem = gv_trace_model_memory(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mem);
    CU_ASSERT_EQUAL_FATAL(mem->n_blocks, 2);
    const GvMemBlock *a = &mem->blocks[0], *b = &mem->blocks[1];
    CU_ASSERT_EQUAL(a->bytes, 256 << 10);
    CU_ASSERT_EQUAL(a->free_ns, 3 * FX_MS);
    CU_ASSERT_EQUAL(b->free_ns, INT64_MAX);
    /* B sat on A, and fell to the bottom when A was freed (memory_viz's stacking). */
    CU_ASSERT_EQUAL_FATAL(b->n_pts, 2);
    CU_ASSERT_EQUAL(mem->pts[b->first_pt].offset_bytes, 256 << 10);
    CU_ASSERT_EQUAL(mem->pts[b->first_pt + 1].t_ns, 3 * FX_MS);
    CU_ASSERT_EQUAL(mem->pts[b->first_pt + 1].offset_bytes, 0);
    CU_ASSERT_EQUAL(mem->max_reserved_bytes, 1 << 20);
    CU_ASSERT_EQUAL(mem->samples[mem->n_samples - 1].allocated_bytes, 128 << 10);
    /* The snapshot at 2.5 ms: one segment, both blocks. */
    gt_mem_state *st = gv_trace_model_memory_state_at(m, 2 * FX_MS + FX_MS / 2, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_EQUAL(st->n_segments, 1);
    CU_ASSERT_EQUAL(st->n_blocks, 2);
    CU_ASSERT_EQUAL(st->allocated_bytes, (256 + 128) << 10);
    gt_mem_state_free(st);
    g_object_unref(m);
}

static uint32_t pixel(cairo_surface_t *s, int x, int y)
{
    cairo_surface_flush(s);
    const unsigned char *d = cairo_image_surface_get_data(s);
    return *(const uint32_t *)(d + y * cairo_image_surface_get_stride(s) + 4 * x) & 0xffffff;
}

static uint32_t rgb24(const double c[3])
{
    return ((uint32_t)(c[0] * 255 + 0.5) << 16) | ((uint32_t)(c[1] * 255 + 0.5) << 8) | (uint32_t)(c[2] * 255 + 0.5);
}

static int near(uint32_t a, uint32_t b)
{
    for (int s = 0; s < 24; s += 8) {
        int d = (int)((a >> s) & 0xff) - (int)((b >> s) & 0xff);
        if (d < -2 || d > 2)
            return 0;
    }
    return 1;
}

static void test_viewer_render__rows_and_gap_colours(void)
{
    GvTraceModel *m = load_fixture();
    GvView v;
    gv_view_init(&v, 1200, 400);
    gv_view_fit(&v, m);
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, v.width, v.height);
    cairo_t *cr = cairo_create(s);
    size_t boxes = gv_render_timeline(cr, m, &v);
    cairo_destroy(cr);
    CU_ASSERT(boxes >= 3 + 2 + 2 + 3); /* kernels, gaps, ranges, calls */
    double y_gap = gv_view_lane_y(m, &v, 0, 0) + GV_GAP_LANE_H / 2.0;
    double y_k = gv_view_lane_y(m, &v, 0, 1) + GV_LANE_H / 2.0;
    double host[3];
    gv_color_gap(GT_GAP_HOST_WAIT, host);
    CU_ASSERT(near(pixel(s, (int)gv_view_x(&v, 3 * FX_MS), (int)y_gap), rgb24(host)));
    /* Inside kernel A (left of its label): the kernel's colour, not the background. */
    uint32_t k = pixel(s, (int)gv_view_x(&v, 1 * FX_MS + FX_MS / 50), (int)y_k);
    CU_ASSERT(k != 0xffffff);
    CU_ASSERT(!near(k, rgb24(host)));
    /* Between kernels on the stream lane: background. */
    CU_ASSERT_EQUAL(pixel(s, (int)gv_view_x(&v, 3 * FX_MS), (int)y_k), 0xffffff);
    char *png = gt_test_path("timeline.png");
    CU_ASSERT_TRUE(gv_write_png(s, png, NULL));
    CU_ASSERT(gt_test_file_size(png) > 1000);
    free(png);
    cairo_surface_destroy(s);
    g_object_unref(m);
}

static void test_viewer_model__nsys_fixtures(void)
{
    const char *names[] = {"nsys/cloverleaf-cuda-nsys2024.5.sqlite", "nsys/saxpy-mpi-cuda-nsys2022.2.sqlite"};
    for (size_t i = 0; i < 2; i++) {
        char *path = gt_test_fixture(names[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(path);
        GvTraceModel *m = gv_trace_model_new();
        GError *error = NULL;
        CU_ASSERT_TRUE_FATAL(gv_trace_model_load(m, path, &error));
        size_t ti, li;
        const GvLane *k = lane_of(m, GV_TRACK_DEVICE, GV_ITEM_KERNEL, &ti, &li);
        CU_ASSERT_PTR_NOT_NULL_FATAL(k);
        CU_ASSERT(k->n > 0);
        CU_ASSERT_PTR_NOT_NULL(lane_of(m, GV_TRACK_THREAD, GV_ITEM_API, NULL, NULL));
        /* Lanes are sorted by start: what the binary searches rely on. */
        for (size_t t = 0; t < gv_trace_model_n_tracks(m); t++) {
            const GvTrack *tr = gv_trace_model_track(m, t);
            for (size_t l = 0; l < tr->n_lanes; l++)
                for (size_t j = 1; j < tr->lanes[l]->n; j++)
                    CU_ASSERT_FATAL(tr->lanes[l]->items[j - 1].start_ns <= tr->lanes[l]->items[j].start_ns);
        }
        /* Rendered: the kernel lane has non-background pixels. */
        GvView v;
        gv_view_init(&v, 1000, 600);
        gv_view_fit(&v, m);
        cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, v.width, v.height);
        cairo_t *cr = cairo_create(s);
        gv_render_timeline(cr, m, &v);
        cairo_destroy(cr);
        double y = gv_view_lane_y(m, &v, ti, li) + GV_LANE_H / 2.0;
        int coloured = 0;
        for (int x = GV_LABEL_W; x < v.width && y < v.height; x++)
            coloured += pixel(s, x, (int)y) != 0xffffff;
        CU_ASSERT(coloured > 10);
        cairo_surface_destroy(s);
        CU_ASSERT_PTR_NOT_NULL(gv_trace_model_report(m));
        g_object_unref(m);
        free(path);
    }
}

static void test_viewer_model__bad_files(void)
{
    char *garbage = gt_test_path("garbage.sqlite"), *trunc = gt_test_path("truncated.sqlite");
    char *good = gt_test_path("good.sqlite");
    FILE *f = fopen(garbage, "w");
    fputs("this is not a trace\n", f);
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(fx_write(good), 0);
    f = fopen(good, "rb");
    char buf[6000];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    f = fopen(trunc, "wb");
    fwrite(buf, 1, n, f);
    fclose(f);
    const char *paths[] = {garbage, trunc, "/nonexistent/trace.sqlite"};
    for (size_t i = 0; i < 3; i++) {
        GvTraceModel *m = gv_trace_model_new();
        GError *error = NULL;
        CU_ASSERT_FALSE(gv_trace_model_load(m, paths[i], &error));
        CU_ASSERT_PTR_NOT_NULL_FATAL(error);
        CU_ASSERT_PTR_NOT_NULL(strstr(error->message, paths[i])); /* names the file */
        g_error_free(error);
        /* Drawing a failed model shows nothing and does not crash. */
        GvView v;
        gv_view_init(&v, 300, 200);
        cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 300, 200);
        cairo_t *cr = cairo_create(s);
        gv_render_timeline(cr, m, &v);
        cairo_destroy(cr);
        cairo_surface_destroy(s);
        g_object_unref(m);
    }
    free(garbage);
    free(trunc);
    free(good);
}

int main(int argc, char **argv)
{
    static const gt_test_case model[] = {
        {"test_viewer_model__tracks", test_viewer_model__tracks},
        {"test_viewer_model__gaps", test_viewer_model__gaps},
        {"test_viewer_model__related_and_describe", test_viewer_model__related_and_describe},
        {"test_viewer_model__search", test_viewer_model__search},
        {"test_viewer_lane__walk_merges_narrow_items", test_viewer_lane__walk_merges_narrow_items},
        {"test_viewer_model__memory_stacking", test_viewer_model__memory_stacking},
        {"test_viewer_render__rows_and_gap_colours", test_viewer_render__rows_and_gap_colours},
        {"test_viewer_model__nsys_fixtures", test_viewer_model__nsys_fixtures},
        {"test_viewer_model__bad_files", test_viewer_model__bad_files},
        {NULL, NULL},
    };
    static const gt_test_suite suites[] = {{"viewer_model", model}};
    return gt_test_main(argc, argv, suites, 1);
}
