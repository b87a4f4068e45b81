/* test_viewer_model.c: the viewer's model and drawing without a display:
 * tracks and lanes of a known trace, idle gaps and their causes, launch <->
 * kernel, search, the level-of-detail walk and its pyramid, the memory
 * stacking, pixels of a headless render, the nsys fixtures, errors for bad
 * files, and a damage the integrity check finds after the rows are in. */
#include "gt_test.h"
#include "test_viewer_fixture.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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


/* A lane of bursts, idle stretches and a few wide items, published in chunks
 * as the loader does. */
static void make_irregular_lane(GvLane *l, size_t n)
{
    l->items = calloc(n, sizeof *l->items);
    l->cap = n;
    uint64_t x = 88172645463325252ull;
    int64_t t = 1000;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t d = 50 + (int64_t)(x % 400);
        if (i % 5000 == 4999)
            d = 3000000; /* a wide one */
        l->items[i] = (GvItem){.start_ns = t, .end_ns = t + d, .name = (uint32_t)(x % 7) + 1};
        t += d + (i % 20000 < 15000 ? (int64_t)(x >> 40) % 100 : 2000 + (int64_t)(x >> 40) % 50000);
    }
    for (size_t done = 0; done < n;) {
        size_t chunk = done == 0 ? 3000 : 37000;
        done = done + chunk < n ? done + chunk : n;
        l->n = done;
        CU_ASSERT_EQUAL(gv_lane_lod_update(l), 0);
    }
}

/* Every bucket of every level: its count, busy time and latest end are those
 * of the raw items starting in its time range; its longest is one of them. */
static void test_viewer_lane__lod_pyramid_sums(void)
{
    enum { N = 150000 };
    GvLane l = {0};
    make_irregular_lane(&l, N);
    const GvLod *d = &l.lod;
    CU_ASSERT_FATAL(d->n_levels >= 5);
    CU_ASSERT_EQUAL(d->n_items, N);
    CU_ASSERT_EQUAL(d->n[d->n_levels - 1], 1); /* the top: the whole lane */
    for (int k = 0; k < d->n_levels; k++) {
        int s = d->shift + k;
        size_t i = 0, bad = 0, items = 0;
        for (size_t b = 0; b < d->n[k]; b++) {
            int64_t from = d->origin_ns + ((int64_t)b << s), to = from + ((int64_t)1 << s);
            int64_t busy = 0, end = INT64_MIN;
            size_t first = i;
            for (; i < N && l.items[i].start_ns < to; i++) {
                busy += l.items[i].end_ns - l.items[i].start_ns;
                if (l.items[i].end_ns > end)
                    end = l.items[i].end_ns;
            }
            const GvBucket *q = &d->lv[k][b];
            size_t count = (b + 1 < d->n[k] ? d->lv[k][b + 1].first : N) - q->first;
            bad += q->first != first || count != i - first || q->busy_ns != busy || q->end_ns != end ||
                   (count && (q->longest < first || q->longest >= i)) || (count && l.items[first].start_ns < from);
            items += count;
        }
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT_EQUAL(items, N);
    }
    gv_lane_lod_free(&l);
    free(l.items);
}

typedef struct box_list { GvBox b[20000]; size_t n; } box_list;
static void keep_box(const GvLane *l, const GvBox *b, void *p)
{
    box_list *bl = p;
    if (bl->n < 20000)
        bl->b[bl->n++] = *b;
}

/* At zoom levels read from the pyramid and item by item: boxes follow each
 * other, a merged box's count, busy time and end are the sums over its raw
 * items, and every item that overlaps the window is in a box. */
static void test_viewer_lane__lod_walk_sums(void)
{
    enum { N = 150000 };
    GvLane l = {0};
    make_irregular_lane(&l, N);
    int64_t span = l.items[N - 1].end_ns - l.items[0].start_ns;
    const double npps[] = {span / 1000.0, span / 5000.0, span / 25000.0, span / 300000.0, 20.0, 1.0};
    int from_lod = 0;
    box_list *bl = malloc(sizeof *bl);
    for (size_t z = 0; z < sizeof npps / sizeof npps[0]; z++) {
        for (int w = 0; w < 2; w++) { /* the whole lane, then a window in its middle */
            int64_t t0 = w ? l.items[N / 2].start_ns + 20 : l.items[0].start_ns - 10;
            int64_t t1 = t0 + (int64_t)(npps[z] * 1400);
            bl->n = 0;
            from_lod += gv_lane_lod_level(&l, npps[z]) >= 0;
            size_t nb = gv_lane_walk(&l, t0, t1, npps[z], 3, keep_box, bl);
            CU_ASSERT_EQUAL(nb, bl->n);
            if (!(bl->n > 0 && bl->n < 20000))
                fprintf(stderr, "\n  %zu boxes at %.1f ns/px (window %d)\n", bl->n, npps[z], w);
            CU_ASSERT_FATAL(bl->n > 0 && bl->n < 20000);
            size_t bad = 0;
            for (size_t k = 0; k < bl->n; k++) {
                const GvBox *b = &bl->b[k];
                int64_t busy = 0, end = INT64_MIN;
                for (size_t i = b->first; i < b->first + b->count; i++) {
                    busy += l.items[i].end_ns - l.items[i].start_ns;
                    end = l.items[i].end_ns > end ? l.items[i].end_ns : end;
                }
                bad += b->count == 0 || b->busy_ns != busy || b->end_ns != end ||
                       b->start_ns != l.items[b->first].start_ns || b->dominant < b->first ||
                       b->dominant >= b->first + b->count || b->end_ns <= t0 || b->start_ns >= t1 + (int64_t)npps[z]; /* a bucket: at most a pixel */
                if (k > 0) /* in order, no item twice; between boxes only items out of the window */
                    for (size_t i = bl->b[k - 1].first + bl->b[k - 1].count; i < b->first; i++)
                        bad += l.items[i].end_ns > t0 && l.items[i].start_ns < t1;
                if (k > 0)
                    bad += b->first < bl->b[k - 1].first + bl->b[k - 1].count;
            }
            for (size_t i = 0; i < bl->b[0].first; i++) /* nothing visible before the first box */
                bad += l.items[i].end_ns > t0;
            const GvBox *last = &bl->b[bl->n - 1];
            for (size_t i = last->first + last->count; i < N; i++) /* nor after the last */
                bad += l.items[i].start_ns < t1 && l.items[i].end_ns > t0;
            CU_ASSERT_EQUAL(bad, 0);
            if (bad)
                fprintf(stderr, "\n  %zu bad boxes at %.1f ns/px (window %d)\n", bad, npps[z], w);
            /* Zoomed out, a frame is about one box per 3 px whatever the lane holds. */
            CU_ASSERT(bl->n <= 1400 / 3 + 1400 / 3 + 8);
        }
    }
    CU_ASSERT(from_lod >= 6); /* the first three zoom levels come from the pyramid */
    free(bl);
    gv_lane_lod_free(&l);
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

/* The trace opens without its integrity check (GT_OPEN_CHECK_LATER); a damage
 * the check finds after the rows are in fails the load with the reader's
 * message, and the rows stay, drawn with the error over them. The damage is
 * in a 70 MB table the viewer never reads (the check runs late only on files
 * of 64 MB and more), so only the late check can find it. */
static void test_viewer_model__late_integrity_failure(void)
{
    char *path = gt_test_path("damaged.sqlite");
    CU_ASSERT_EQUAL_FATAL(fx_write(path), 0);
    GvTraceModel *good = gv_trace_model_new();
    CU_ASSERT_TRUE_FATAL(gv_trace_model_load(good, path, NULL));
    sqlite3 *db = NULL;
    CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &db), SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db,
                                       "CREATE TABLE filler (id INTEGER PRIMARY KEY, x BLOB);"
                                       "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 70)"
                                       " INSERT INTO filler SELECT i, zeroblob(1048576) FROM n;",
                                       NULL, NULL, NULL),
                          SQLITE_OK);
    int page = 4096;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        page = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    FILE *f = fopen(path, "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    CU_ASSERT_FATAL(size >= (64L << 20));
    char *junk = malloc((size_t)page);
    memset(junk, 0x5a, (size_t)page);
    CU_ASSERT_EQUAL(fseek(f, (size / 2 / page) * page, SEEK_SET), 0); /* a page of a blob's chain */
    CU_ASSERT_EQUAL(fwrite(junk, 1, (size_t)page, f), (size_t)page);
    fclose(f);
    free(junk);

    GvTraceModel *m = gv_trace_model_new();
    GError *error = NULL;
    CU_ASSERT_FALSE(gv_trace_model_load(m, path, &error));
    CU_ASSERT_PTR_NOT_NULL_FATAL(error);
    CU_ASSERT_PTR_NOT_NULL(strstr(error->message, "damaged"));
    CU_ASSERT_PTR_NOT_NULL(strstr(error->message, path));
    char *problem = gv_trace_model_get_problem(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(problem);
    CU_ASSERT_STRING_EQUAL(problem, error->message);
    /* The view stays: every row, in the same tracks. */
    CU_ASSERT_TRUE(gv_trace_model_is_loaded(m));
    CU_ASSERT_EQUAL(gv_trace_model_n_items(m), gv_trace_model_n_items(good));
    CU_ASSERT_EQUAL(gv_trace_model_n_tracks(m), gv_trace_model_n_tracks(good));
    CU_ASSERT_PTR_NULL(gv_trace_model_get_problem(good));
    GvView v;
    gv_view_init(&v, 400, 300);
    gv_view_fit(&v, m);
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 400, 300);
    cairo_t *cr = cairo_create(s);
    CU_ASSERT(gv_render_timeline(cr, m, &v) > 0);
    cairo_destroy(cr);
    cairo_surface_flush(s);
    /* The message's strip: red at the bottom left. */
    const uint32_t *px = (const uint32_t *)(const void *)cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s) / 4;
    uint32_t c = px[(300 - 3) * stride + 2];
    CU_ASSERT(((c >> 16) & 0xff) > 180 && ((c >> 8) & 0xff) < 80 && (c & 0xff) < 80);
    cairo_surface_destroy(s);
    g_free(problem);
    g_error_free(error);
    g_object_unref(m);
    g_object_unref(good);
    unlink(path);
    free(path);
}

int main(int argc, char **argv)
{
    static const gt_test_case model[] = {
        {"test_viewer_model__tracks", test_viewer_model__tracks},
        {"test_viewer_model__gaps", test_viewer_model__gaps},
        {"test_viewer_model__related_and_describe", test_viewer_model__related_and_describe},
        {"test_viewer_model__search", test_viewer_model__search},
        {"test_viewer_lane__walk_merges_narrow_items", test_viewer_lane__walk_merges_narrow_items},
        {"test_viewer_lane__lod_pyramid_sums", test_viewer_lane__lod_pyramid_sums},
        {"test_viewer_lane__lod_walk_sums", test_viewer_lane__lod_walk_sums},
        {"test_viewer_model__memory_stacking", test_viewer_model__memory_stacking},
        {"test_viewer_render__rows_and_gap_colours", test_viewer_render__rows_and_gap_colours},
        {"test_viewer_model__nsys_fixtures", test_viewer_model__nsys_fixtures},
        {"test_viewer_model__bad_files", test_viewer_model__bad_files},
        {"test_viewer_model__late_integrity_failure", test_viewer_model__late_integrity_failure},
        {NULL, NULL},
    };
    static const gt_test_suite suites[] = {{"viewer_model", model}};
    return gt_test_main(argc, argv, suites, 1);
}
