/* test_viewer_render.c: headless drawing of the timeline (rows and gap
 * colours, marks, the flow arrow from a launch to its kernel, titles that
 * follow the scroll) and the step alignment of two traces (steps of
 * unequal length, none, pairing) that the aligned drawing uses. */
#include "test_viewer_model.h"

#include <math.h>
#include <string.h>

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

static cairo_surface_t *render(GvTraceModel *m, const GvView *v)
{
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, v->width, v->height);
    cairo_t *cr = cairo_create(s);
    gv_render_timeline(cr, m, v);
    cairo_destroy(cr);
    cairo_surface_flush(s);
    return s;
}

/* Marks are drawn as markers on their lane and hit within their marker; the
 * two marks 2.7 ms apart merge into one when zoomed out far enough. */
static void test_viewer_render__marks(void)
{
    GvTraceModel *m = load_fixture();
    size_t mt, ml;
    const GvLane *marks = lane_of(m, GV_TRACK_THREAD, GV_ITEM_MARK, &mt, &ml);
    CU_ASSERT_PTR_NOT_NULL_FATAL(marks);
    GvView v;
    gv_view_init(&v, 1200, 400);
    gv_view_fit(&v, m);
    cairo_surface_t *s = render(m, &v);
    double y = gv_view_lane_y(m, &v, mt, ml);
    int x = (int)gv_view_x(&v, 2 * FX_MS + FX_MS / 2);
    double rgb[3];
    gv_color_item(m, &marks->items[0], rgb);
    CU_ASSERT(near(pixel(s, x, (int)y + 4), rgb24(rgb))); /* the marker's wide top */
    CU_ASSERT_EQUAL(pixel(s, x + 10, (int)y + 4), 0xffffff);
    CU_ASSERT_EQUAL(pixel(s, (int)gv_view_x(&v, 4 * FX_MS), (int)y + 4), 0xffffff); /* between the marks */
    cairo_surface_destroy(s);
    /* A click 3 px off the instant still hits it (count 1); 12 px off does not. */
    GvItemRef r;
    size_t count = 0;
    CU_ASSERT_TRUE(gv_view_hit(m, &v, x + 3, y + 6, &r, &count));
    CU_ASSERT_EQUAL(r.track, mt);
    CU_ASSERT_EQUAL(r.lane, ml);
    CU_ASSERT_EQUAL(r.index, 0);
    CU_ASSERT_EQUAL(count, 1);
    CU_ASSERT_FALSE(gv_view_hit(m, &v, x + 12, y + 6, &r, &count));
    /* At 1 ms per pixel both marks fall within one marker: one box of two. */
    v.ns_per_px = 1e6;
    v.t0_ns = 0;
    CU_ASSERT_TRUE(gv_view_hit(m, &v, gv_view_x(&v, 4 * FX_MS), y + 6, &r, &count));
    CU_ASSERT_EQUAL(count, 2);
    g_object_unref(m);
}

static int has_flow_pixel(cairo_surface_t *s, double x, double y)
{
    const double flow[3] = {GV_FLOW_RGB};
    for (int dy = -2; dy <= 2; dy++)
        for (int dx = -2; dx <= 2; dx++) {
            uint32_t p = pixel(s, (int)x + dx, (int)y + dy);
            int ok = 1;
            for (int k = 0; k < 3; k++)
                ok &= fabs(((p >> (16 - 8 * k)) & 0xff) / 255.0 - flow[k]) < 0.15;
            if (ok)
                return 1;
        }
    return 0;
}

/* A selected kernel draws an arrow from its launch call to it, leaving the
 * call's lane at the top (the device is above) and entering the kernel's at
 * the bottom; the selected call draws the same arrow; none without a selection. */
static void test_viewer_render__flow_arrow(void)
{
    GvTraceModel *m = load_fixture();
    size_t kt, kl, at, al;
    lane_of(m, GV_TRACK_DEVICE, GV_ITEM_KERNEL, &kt, &kl);
    lane_of(m, GV_TRACK_THREAD, GV_ITEM_API, &at, &al);
    GvView v;
    gv_view_init(&v, 1200, 400);
    gv_view_fit(&v, m);
    double p[4];
    CU_ASSERT_FALSE(gv_view_flow(m, &v, p));
    cairo_surface_t *plain = render(m, &v);
    v.has_selection = TRUE;
    v.selection = (GvItemRef){kt, kl, 1}; /* kernB */
    gv_trace_model_lock(m);
    v.has_related = gv_trace_model_find_related(m, &v.selection, &v.related);
    gv_trace_model_unlock(m);
    CU_ASSERT_TRUE_FATAL(v.has_related);
    CU_ASSERT_TRUE_FATAL(gv_view_flow(m, &v, p));
    CU_ASSERT_DOUBLE_EQUAL(p[0], gv_view_x(&v, 3 * FX_MS + FX_MS / 2), 0.01); /* launch B's start */
    CU_ASSERT_DOUBLE_EQUAL(p[1], gv_view_lane_y(m, &v, at, al), 0.01);       /* the call lane's top */
    CU_ASSERT_DOUBLE_EQUAL(p[2], gv_view_x(&v, 4 * FX_MS), 0.01);            /* kernB's start */
    CU_ASSERT_DOUBLE_EQUAL(p[3], gv_view_lane_y(m, &v, kt, kl) + GV_LANE_H, 0.01);
    cairo_surface_t *s = render(m, &v);
    double mx = (p[0] + p[2]) / 2, my = (p[1] + p[3]) / 2; /* the curve's middle */
    CU_ASSERT_TRUE(has_flow_pixel(s, mx, my));
    CU_ASSERT_FALSE(has_flow_pixel(plain, mx, my));
    CU_ASSERT_TRUE(has_flow_pixel(s, p[2], p[3] + 3)); /* the arrowhead */
    /* Selected from the call's side: the same arrow. */
    GvItemRef call = v.related;
    v.related = v.selection;
    v.selection = call;
    double q[4];
    CU_ASSERT_TRUE(gv_view_flow(m, &v, q));
    CU_ASSERT_EQUAL(memcmp(p, q, sizeof p), 0);
    /* A mark has no related item and so no arrow. */
    size_t mt, ml;
    lane_of(m, GV_TRACK_THREAD, GV_ITEM_MARK, &mt, &ml);
    v.selection = (GvItemRef){mt, ml, 0};
    gv_trace_model_lock(m);
    v.has_related = gv_trace_model_find_related(m, &v.selection, &v.related);
    gv_trace_model_unlock(m);
    CU_ASSERT_FALSE(gv_view_flow(m, &v, q));
    cairo_surface_destroy(s);
    cairo_surface_destroy(plain);
    g_object_unref(m);
}

/* ---- the step alignment (gv-align) --------------------------------------------------- */

static void make_steps(gt_step *out, const int64_t *dur_ns, int n, int64_t t0_ns, int first_number, int64_t pause_ns)
{
    for (int k = 0; k < n; k++) {
        out[k] = (gt_step){.number = first_number + k, .start_ns = t0_ns, .end_ns = t0_ns + dur_ns[k]};
        t0_ns += dur_ns[k] + pause_ns;
    }
}

/* The map never decreases over times sampled across [from, to). */
static int monotonic(const GvAlign *al, int side, int64_t from, int64_t to)
{
    int64_t prev = INT64_MIN;
    for (int64_t i = 0; i <= 20000; i++) {
        int64_t t = from + (to - from) / 20000 * i, y = gv_align_map(al, side, t);
        if (y < prev)
            return 0;
        prev = y;
    }
    return 1;
}

static void test_viewer_align__steps_of_unequal_length(void)
{
    const int64_t da[5] = {10 * FX_MS, 10 * FX_MS, 10 * FX_MS, 10 * FX_MS, 10 * FX_MS};
    const int64_t db[6] = {12 * FX_MS, 7 * FX_MS, 15 * FX_MS, 10 * FX_MS, 9 * FX_MS, 11 * FX_MS};
    gt_step a[5], b[6];
    make_steps(a, da, 5, 1 * FX_MS, 0, 0);
    make_steps(b, db, 6, 4 * FX_MS, 0, 0);
    GvAlign al;
    CU_ASSERT_EQUAL_FATAL(gv_align_init(&al, a, 5, b, 6, 0, 2 * FX_MS), 0);
    CU_ASSERT_EQUAL(al.n_pairs, 5); /* B's step 5 has no partner */
    CU_ASSERT_EQUAL(al.n_knots, 6); /* back-to-back steps share their boundaries */
    for (int k = 0; k < 5; k++) { /* exact at every boundary, both ways */
        CU_ASSERT_EQUAL(gv_align_map(&al, 0, a[k].start_ns), b[k].start_ns);
        CU_ASSERT_EQUAL(gv_align_map(&al, 0, a[k].end_ns), b[k].end_ns);
        CU_ASSERT_EQUAL(gv_align_map(&al, 1, b[k].start_ns), a[k].start_ns);
        CU_ASSERT_EQUAL(gv_align_map(&al, 1, b[k].end_ns), a[k].end_ns);
        CU_ASSERT_EQUAL(al.pairs[k].number, k);
    }
    /* Inside a step: the same fraction of the partner (half of 10 ms -> half of 15 ms). */
    CU_ASSERT_EQUAL(gv_align_map(&al, 0, a[2].start_ns + 5 * FX_MS), b[2].start_ns + 15 * FX_MS / 2);
    /* Outside the common steps: shifted by the nearest boundary's offset. */
    CU_ASSERT_EQUAL(gv_align_map(&al, 0, 0), b[0].start_ns - a[0].start_ns);
    CU_ASSERT_EQUAL(gv_align_map(&al, 0, a[4].end_ns + 3 * FX_MS), b[4].end_ns + 3 * FX_MS);
    CU_ASSERT_EQUAL(gv_align_map(&al, 1, b[5].end_ns), a[4].end_ns + db[5]);
    CU_ASSERT_TRUE(monotonic(&al, 0, -20 * FX_MS, 120 * FX_MS));
    CU_ASSERT_TRUE(monotonic(&al, 1, -20 * FX_MS, 120 * FX_MS));
    /* There and back comes home within the rounding of two divisions. */
    int64_t worst = 0;
    for (int64_t t = 0; t < 60 * FX_MS; t += 7919) {
        int64_t d = llabs(gv_align_map(&al, 1, gv_align_map(&al, 0, t)) - t);
        worst = d > worst ? d : worst;
    }
    CU_ASSERT(worst <= 2);
    /* Pieces: step 2's own rate, and slope 1 outside. */
    int64_t p0, p1;
    CU_ASSERT_DOUBLE_EQUAL(gv_align_piece(&al, 0, a[2].start_ns + 1, &p0, &p1), 1.5, 1e-12);
    CU_ASSERT_EQUAL(p0, a[2].start_ns);
    CU_ASSERT_EQUAL(p1, a[2].end_ns);
    CU_ASSERT_DOUBLE_EQUAL(gv_align_piece(&al, 1, b[5].start_ns + 1, &p0, &p1), 1.0, 1e-12);
    CU_ASSERT_EQUAL(p1, INT64_MAX);
    /* The pair of a time on either side. */
    const GvStepPair *pr = gv_align_pair_at(&al, 1, b[3].start_ns + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pr);
    CU_ASSERT_EQUAL(pr->number, 3);
    CU_ASSERT_PTR_NULL(gv_align_pair_at(&al, 1, b[5].start_ns + 1));
    CU_ASSERT_PTR_NULL(gv_align_pair_at(&al, 0, 0));
    gv_align_clear(&al);
}

static void test_viewer_align__without_steps(void)
{
    gt_step a[2];
    const int64_t d[2] = {FX_MS, FX_MS};
    make_steps(a, d, 2, 0, 0, 0);
    GvAlign al;
    /* Neither trace has steps, or only one has: shifted by the traces' starts. */
    CU_ASSERT_EQUAL_FATAL(gv_align_init(&al, NULL, 0, NULL, 0, 100, 350), 0);
    CU_ASSERT_EQUAL(al.n_knots, 0);
    CU_ASSERT_EQUAL(gv_align_map(&al, 0, 1000), 1250);
    CU_ASSERT_EQUAL(gv_align_map(&al, 1, 1250), 1000);
    int64_t p0, p1;
    CU_ASSERT_DOUBLE_EQUAL(gv_align_piece(&al, 0, 5, &p0, &p1), 1.0, 0);
    CU_ASSERT(p0 == INT64_MIN && p1 == INT64_MAX);
    gv_align_clear(&al);
    CU_ASSERT_EQUAL_FATAL(gv_align_init(&al, a, 2, NULL, 0, 0, -40), 0);
    CU_ASSERT_EQUAL(al.n_pairs, 0);
    CU_ASSERT_EQUAL(gv_align_map(&al, 0, a[1].start_ns), a[1].start_ns - 40);
    /* Far times saturate instead of wrapping. */
    CU_ASSERT_EQUAL(gv_align_map(&al, 0, INT64_MIN + 10), INT64_MIN);
    gv_align_clear(&al);
}

static void test_viewer_align__pairing(void)
{
    const int64_t d[4] = {5 * FX_MS, 6 * FX_MS, 7 * FX_MS, 8 * FX_MS};
    gt_step a[4], b[4];
    GvAlign al;
    /* No number in common (a resumed run): paired by position. */
    make_steps(a, d, 3, 0, 0, FX_MS);
    make_steps(b, d, 3, 50 * FX_MS, 100, 2 * FX_MS);
    CU_ASSERT_EQUAL_FATAL(gv_align_init(&al, a, 3, b, 3, 0, 50 * FX_MS), 0);
    CU_ASSERT_EQUAL(al.n_pairs, 3);
    CU_ASSERT_EQUAL(al.n_knots, 6); /* pauses between steps: starts and ends are knots */
    CU_ASSERT_EQUAL(gv_align_map(&al, 0, a[2].start_ns), b[2].start_ns);
    /* Between steps: the pause of A (1 ms) maps onto the pause of B (2 ms). */
    CU_ASSERT_EQUAL(gv_align_map(&al, 0, a[0].end_ns + FX_MS / 2), b[0].end_ns + FX_MS);
    CU_ASSERT_TRUE(monotonic(&al, 0, -FX_MS, 80 * FX_MS));
    gv_align_clear(&al);
    /* B lacks step 2: steps 0, 1 and 3 pair by number, and step 2 of A maps
     * into the stretch between B's steps 1 and 3. */
    make_steps(a, d, 4, 0, 0, 0);
    make_steps(b, d, 4, 10 * FX_MS, 0, 0);
    b[2] = b[3];
    b[2].number = 3;
    CU_ASSERT_EQUAL_FATAL(gv_align_init(&al, a, 4, b, 3, 0, 10 * FX_MS), 0);
    CU_ASSERT_EQUAL(al.n_pairs, 3);
    CU_ASSERT_EQUAL(al.pairs[2].number, 3);
    CU_ASSERT_EQUAL(gv_align_map(&al, 0, a[3].start_ns), b[2].start_ns);
    CU_ASSERT_TRUE(monotonic(&al, 0, 0, 40 * FX_MS));
    gv_align_clear(&al);
    /* An empty step and steps out of order in the list: still monotonic, no repeated knot. */
    make_steps(a, d, 4, 0, 0, 0);
    make_steps(b, d, 4, 0, 0, 0);
    b[1].end_ns = b[1].start_ns; /* empty */
    gt_step t = b[0];
    b[0] = b[3];
    b[3] = t;
    CU_ASSERT_EQUAL_FATAL(gv_align_init(&al, a, 4, b, 4, 0, 0), 0);
    for (size_t k = 1; k < al.n_knots; k++)
        CU_ASSERT(al.knots[0][k] > al.knots[0][k - 1] && al.knots[1][k] > al.knots[1][k - 1]);
    CU_ASSERT_TRUE(monotonic(&al, 0, -FX_MS, 30 * FX_MS));
    CU_ASSERT_TRUE(monotonic(&al, 1, -FX_MS, 30 * FX_MS));
    gv_align_clear(&al);
}

static GvTraceModel *load_steps(const char *name, const int64_t *dur, int n, int64_t t0)
{
    char *path = gt_test_path(name);
    CU_ASSERT_EQUAL_FATAL(fx_write_steps(path, dur, n, t0, 0), 0);
    GvTraceModel *m = gv_trace_model_new();
    CU_ASSERT_TRUE_FATAL(gv_trace_model_load(m, path, NULL));
    free(path);
    return m;
}

/* Two traces whose steps differ in length, drawn aligned: every common step
 * starts at the same x in both views at any zoom and pan, the ruler draws the
 * boundaries there, and the after trace's ruler tints a slower step red and
 * a faster one green. */
static void test_viewer_render__aligned_steps(void)
{
    const int64_t da[5] = {10 * FX_MS, 10 * FX_MS, 10 * FX_MS, 10 * FX_MS, 10 * FX_MS};
    const int64_t db[6] = {12 * FX_MS, 7 * FX_MS, 15 * FX_MS, 10 * FX_MS, 9 * FX_MS, 11 * FX_MS};
    GvTraceModel *ma = load_steps("steps_a.sqlite", da, 5, 1 * FX_MS);
    GvTraceModel *mb = load_steps("steps_b.sqlite", db, 6, 4 * FX_MS);
    const gt_report *ra = gv_trace_model_report(ma), *rb = gv_trace_model_report(mb);
    CU_ASSERT_EQUAL_FATAL(ra->n_steps, 5);
    CU_ASSERT_EQUAL_FATAL(rb->n_steps, 6);
    GvAlign al;
    CU_ASSERT_EQUAL_FATAL(gv_align_init(&al, ra->steps, ra->n_steps, rb->steps, rb->n_steps, ra->start_ns, rb->start_ns), 0);
    GvView va, vb;
    gv_view_init(&va, 1200, 300);
    gv_view_init(&vb, 1200, 300);
    gv_view_fit(&va, ma);
    va.align = vb.align = &al;
    va.align_side = 0;
    vb.align_side = 1;
    const struct { double zoom, pan; } moves[] = {{1, 0}, {3, -200}, {1.0 / 5, 0}, {40, 150}};
    for (size_t z = 0; z < sizeof moves / sizeof moves[0]; z++) {
        gv_view_zoom(&va, moves[z].zoom, 600);
        gv_view_pan(&va, moves[z].pan);
        vb.t0_ns = va.t0_ns; /* what the compare page copies */
        vb.ns_per_px = va.ns_per_px;
        for (int k = 0; k < 5; k++) {
            CU_ASSERT_DOUBLE_EQUAL(gv_view_x(&va, ra->steps[k].start_ns), gv_view_x(&vb, rb->steps[k].start_ns), 1e-6);
            CU_ASSERT_DOUBLE_EQUAL(gv_view_x(&va, ra->steps[k].end_ns), gv_view_x(&vb, rb->steps[k].end_ns), 1e-6);
        }
        /* The time under a pixel in B is B's time for A's time there. */
        CU_ASSERT_EQUAL(gv_view_time(&vb, 700), gv_align_map(&al, 0, gv_view_time(&va, 700)));
    }
    /* The whole of both, and the boundaries on the rulers. */
    gv_view_fit(&va, ma);
    vb.t0_ns = va.t0_ns;
    vb.ns_per_px = va.ns_per_px;
    cairo_surface_t *sa = render(ma, &va), *sb = render(mb, &vb);
    int ry = GV_AXIS_H + GV_RULER_H - 3, bad = 0;
    for (int k = 1; k < 5; k++) { /* back-to-back steps: a shade changes at each boundary */
        int x = (int)floor(gv_view_x(&va, ra->steps[k].start_ns));
        bad += pixel(sa, x - 2, ry) == pixel(sa, x + 2, ry);
        bad += pixel(sb, x - 2, ry) == pixel(sb, x + 2, ry);
    }
    CU_ASSERT_EQUAL(bad, 0);
    /* Step 2 took 15 ms against 10: red; step 1 7 ms against 10: green. */
    uint32_t slow = pixel(sb, (int)gv_view_x(&vb, rb->steps[2].end_ns) - 3, ry);
    uint32_t fast = pixel(sb, (int)gv_view_x(&vb, rb->steps[1].end_ns) - 3, ry);
    uint32_t plain = pixel(sa, (int)gv_view_x(&va, ra->steps[2].end_ns) - 3, ry);
    CU_ASSERT(((slow >> 16) & 0xff) > ((slow >> 8) & 0xff) + 40);
    CU_ASSERT(((fast >> 8) & 0xff) > ((fast >> 16) & 0xff) + 40);
    CU_ASSERT((plain & 0xff) > ((plain >> 16) & 0xff)); /* before's ruler: the plain blue shades */
    /* B's kernel of step 2 starts a fifth into the step in both traces: same fraction, same x. */
    CU_ASSERT_DOUBLE_EQUAL(gv_view_x(&vb, rb->steps[2].start_ns + db[2] / 5),
                           gv_view_x(&va, ra->steps[2].start_ns + da[2] / 5), 1e-6);
    /* A click on B's kernel of step 2, where it is drawn, hits it. */
    size_t kt, kl;
    lane_of(mb, GV_TRACK_DEVICE, GV_ITEM_KERNEL, &kt, &kl);
    int64_t k0 = rb->steps[2].start_ns + db[2] / 5, k1 = rb->steps[2].start_ns + db[2] / 2;
    GvItemRef hit;
    size_t count = 0;
    CU_ASSERT_TRUE(gv_view_hit(mb, &vb, gv_view_x(&vb, k0 + (k1 - k0) / 2), gv_view_lane_y(mb, &vb, kt, kl) + 5, &hit,
                               &count));
    CU_ASSERT_EQUAL(hit.index, 2);
    CU_ASSERT_EQUAL(count, 1);
    char *png = gt_test_path("aligned_after.png");
    CU_ASSERT_TRUE(gv_write_png(sb, png, NULL));
    free(png);
    cairo_surface_destroy(sa);
    cairo_surface_destroy(sb);
    gv_align_clear(&al);
    g_object_unref(ma);
    g_object_unref(mb);
}

/* Lane titles come from an image of the whole column, copied at the scroll:
 * at any scroll each lane's title cell sits on its lane and each track's
 * title row between them. */
static void test_viewer_render__titles_follow_scroll(void)
{
    GvTraceModel *m = load_fixture();
    GvView v;
    gv_view_init(&v, 800, 200);
    gv_view_fit(&v, m);
    const double scrolls[] = {0, 13, 47, 13, 0};
    for (size_t k = 0; k < sizeof scrolls / sizeof scrolls[0]; k++) {
        v.scroll_y = scrolls[k];
        cairo_surface_t *s = render(m, &v);
        size_t bad = 0, seen = 0;
        for (size_t t = 0; t < gv_trace_model_n_tracks(m); t++) {
            const GvTrack *tr = gv_trace_model_track(m, t);
            for (size_t l = 0; l < tr->n_lanes; l++) {
                double y = gv_view_lane_y(m, &v, t, l);
                if (y >= GV_AXIS_H + GV_RULER_H + 1 && y + 3 < v.height) { /* the cell's grey, left of its text */
                    bad += !near(pixel(s, 5, (int)y + 2), 0xf7f7f7);
                    seen++;
                }
                if (l == 0 && y - GV_TITLE_H / 2 >= GV_AXIS_H + GV_RULER_H && y < v.height) /* the title row */
                    bad += near(pixel(s, 2, (int)(y - GV_TITLE_H / 2)), 0xf7f7f7);
            }
        }
        CU_ASSERT(seen >= 4);
        CU_ASSERT_EQUAL(bad, 0);
        cairo_surface_destroy(s);
    }
    g_object_unref(m);
}

int main(int argc, char **argv)
{
    static const gt_test_case cases[] = {
        {"test_viewer_render__rows_and_gap_colours", test_viewer_render__rows_and_gap_colours},
        {"test_viewer_render__marks", test_viewer_render__marks},
        {"test_viewer_render__flow_arrow", test_viewer_render__flow_arrow},
        {"test_viewer_align__steps_of_unequal_length", test_viewer_align__steps_of_unequal_length},
        {"test_viewer_align__without_steps", test_viewer_align__without_steps},
        {"test_viewer_align__pairing", test_viewer_align__pairing},
        {"test_viewer_render__aligned_steps", test_viewer_render__aligned_steps},
        {"test_viewer_render__titles_follow_scroll", test_viewer_render__titles_follow_scroll},
        {NULL, NULL},
    };
    static const gt_test_suite suites[] = {{"viewer_render", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
