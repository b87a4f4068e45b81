/* test_viewer_model.c: the viewer's model without a display: tracks and
 * lanes of a known trace, idle gaps and their causes, launch <-> kernel,
 * search, the memory stacking, one memory per process (with the analysis's
 * peaks), the nsys fixtures, errors for bad files, and a damage the
 * integrity check finds after the rows are in. The level of detail is
 * test_viewer_lane.c's, drawing test_viewer_render.c's. */
#include "test_viewer_model.h"

#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

#include "gv-memory-view.h"

static void test_viewer_model__tracks(void)
{
    GvTraceModel *m = load_fixture();
    CU_ASSERT_TRUE(gv_trace_model_is_analysed(m));
    CU_ASSERT_EQUAL(gv_trace_model_n_tracks(m), 2); /* GPU 0 and the thread */
    const GvTrack *dev = gv_trace_model_track(m, 0), *th = gv_trace_model_track(m, 1);
    CU_ASSERT_EQUAL(dev->kind, GV_TRACK_DEVICE);
    CU_ASSERT_EQUAL(th->kind, GV_TRACK_THREAD);
    CU_ASSERT_EQUAL_FATAL(dev->n_lanes, 3); /* idle, stream 7, sync */
    CU_ASSERT_STRING_EQUAL(dev->lanes[1]->label, "stream 7");
    CU_ASSERT_EQUAL(dev->lanes[1]->n, 3);
    CU_ASSERT_STRING_EQUAL(gv_trace_model_name(m, dev->lanes[1]->items[1].name), "kernB");
    CU_ASSERT_STRING_EQUAL(dev->lanes[2]->label, "sync");
    CU_ASSERT_EQUAL_FATAL(th->n_lanes, 4); /* marks, NVTX 0, NVTX 1, CUDA API */
    CU_ASSERT_STRING_EQUAL(th->lanes[0]->label, "NVTX marks");
    CU_ASSERT_STRING_EQUAL(gv_trace_model_name(m, th->lanes[2]->items[0].name), "forward");
    CU_ASSERT_STRING_EQUAL(th->lanes[3]->label, "CUDA API");
    CU_ASSERT_STRING_EQUAL(gv_trace_model_name(m, th->lanes[3]->items[0].name), "cudaLaunchKernel");
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

/* NVTX marks: instants on their thread's marks lane, with their payload in
 * the details; a CUDA synchronization on its device's sync lane, joined to
 * the call that waited. */
static void test_viewer_model__marks_and_sync(void)
{
    GvTraceModel *m = load_fixture();
    size_t mt, ml, st, sl, at, al;
    const GvLane *marks = lane_of(m, GV_TRACK_THREAD, GV_ITEM_MARK, &mt, &ml);
    const GvLane *sync = lane_of(m, GV_TRACK_DEVICE, GV_ITEM_SYNC, &st, &sl);
    lane_of(m, GV_TRACK_THREAD, GV_ITEM_API, &at, &al);
    CU_ASSERT_PTR_NOT_NULL_FATAL(marks);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sync);
    CU_ASSERT_EQUAL_FATAL(marks->n, 2);
    CU_ASSERT_EQUAL(marks->items[0].start_ns, 2 * FX_MS + FX_MS / 2);
    CU_ASSERT_EQUAL(marks->items[0].end_ns, marks->items[0].start_ns);
    CU_ASSERT_STRING_EQUAL(gv_trace_model_name(m, marks->items[1].name), "skipped step");
    GvItemRef r0 = {mt, ml, 0}, r1 = {mt, ml, 1};
    char *d = gv_trace_model_describe(m, &r0);
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "loss scale  NVTX mark"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "payload 65536"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "at 2.500 ms"));
    g_free(d);
    d = gv_trace_model_describe(m, &r1);
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "payload -3"));
    g_free(d);
    /* A mark's payload is no correlation id: it finds no "related" item. */
    GvItemRef rel;
    gv_trace_model_lock(m);
    CU_ASSERT_FALSE(gv_trace_model_find_related(m, &r0, &rel));
    gv_trace_model_unlock(m);

    CU_ASSERT_EQUAL_FATAL(sync->n, 1);
    CU_ASSERT_STRING_EQUAL(gv_trace_model_name(m, sync->items[0].name), "stream sync (stream 7)");
    GvItemRef sr = {st, sl, 0}, back;
    gv_trace_model_lock(m);
    CU_ASSERT_TRUE(gv_trace_model_find_related(m, &sr, &rel));
    CU_ASSERT_EQUAL(rel.track, at);
    CU_ASSERT_EQUAL(rel.lane, al);
    CU_ASSERT_STRING_EQUAL(gv_trace_model_name(m, gv_trace_model_track(m, at)->lanes[al]->items[rel.index].name),
                           "cudaStreamSynchronize");
    CU_ASSERT_TRUE(gv_trace_model_find_related(m, &rel, &back)); /* and from the call, its sync */
    CU_ASSERT_EQUAL(back.track, st);
    CU_ASSERT_EQUAL(back.lane, sl);
    gv_trace_model_unlock(m);
    d = gv_trace_model_describe(m, &sr);
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "CUDA synchronization"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "waited in cudaStreamSynchronize"));
    g_free(d);
    /* The marks do not count as device work: the gaps are as before. */
    CU_ASSERT_EQUAL(lane_of(m, GV_TRACK_DEVICE, GV_ITEM_GAP, NULL, NULL)->n, 2);
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
    /* Drawn: at 2.5 ms a band of A's colour under one of B's; at 4 ms, A freed,
     * B's colour alone, on the bottom. Colour runs of 4 pixels, bottom up. */
    GvMemView v;
    gv_mem_view_init(&v, 800, 500);
    gv_view_fit(&v.x, m);
    cairo_surface_t *surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 800, 500);
    cairo_t *cr = cairo_create(surf);
    gv_render_memory(cr, m, &v, NULL);
    cairo_destroy(cr);
    uint32_t runs[2][4];
    size_t n_runs[2] = {0, 0};
    const int64_t at[2] = {2 * FX_MS + FX_MS / 2, 4 * FX_MS};
    for (int k = 0; k < 2; k++) {
        int x = (int)gv_view_x(&v.x, at[k]);
        uint32_t prev = 0xffffff;
        int len = 0;
        for (int y = (int)gv_memory_chart_bottom(&v) - 1; y > GV_AXIS_H; y--) { /* bottom up: colour runs */
            uint32_t c = pixel(surf, x, y);
            len = c == prev ? len + 1 : 1;
            prev = c;
            int cr_ = (int)(c >> 16), cg = (int)((c >> 8) & 0xff), cb = (int)(c & 0xff);
            gboolean grey = abs(cr_ - cg) < 8 && abs(cg - cb) < 8; /* white, lines, the background */
            if (len == 4 && !grey && n_runs[k] < 4 && (n_runs[k] == 0 || runs[k][n_runs[k] - 1] != c))
                runs[k][n_runs[k]++] = c;
        }
    }
    /* (under the bands, the markers' strip: A's lifetime is a spike) */
    CU_ASSERT_FATAL(n_runs[0] >= 2 && n_runs[1] >= 1);
    uint32_t a_rgb = runs[0][n_runs[0] - 2], b_rgb = runs[0][n_runs[0] - 1];
    CU_ASSERT_NOT_EQUAL(a_rgb, b_rgb);                 /* A under B, each its colour */
    CU_ASSERT_EQUAL(runs[1][n_runs[1] - 1], b_rgb);    /* then B alone */
    for (size_t i = 0; i < n_runs[1]; i++)
        CU_ASSERT_NOT_EQUAL(runs[1][i], a_rgb);
    cairo_surface_destroy(surf);
    g_object_unref(m);
}

/* Two ranks with the same heap handle and addresses (each process numbers
 * its own): rank A keeps 768 KiB in a 1 MiB heap; rank B peaks at 512 KiB
 * in a 2 MiB one, while A is at its peak. */
static int write_two_ranks(const char *path)
{
    gt_writer *w = NULL;
    int rc = gt_writer_open(&w, path, GT_WRITE_OVERWRITE);
    if (rc < 0)
        return rc;
    gt_writer_add_process(w, 6001, "rank a");
    gt_writer_add_process(w, 6002, "rank b");
    gt_writer_begin(w);
    const struct { int64_t pid, t; int op; uint64_t addr; int64_t bytes; } mem[] = {
        {6001, FX_MS / 10, GT_HEAP_REGISTER, 0x1000, 1 << 20},
        {6002, FX_MS / 10 + 1, GT_HEAP_REGISTER, 0x1000, 2 << 20},
        {6001, 1 * FX_MS, GT_REGION_REGISTER, 0x1000, 512 << 10},
        {6002, 1 * FX_MS + 1, GT_REGION_REGISTER, 0x1000, 512 << 10},
        {6001, 2 * FX_MS, GT_REGION_REGISTER, 0x81000, 256 << 10},
        {6002, 3 * FX_MS, GT_REGION_UNREGISTER, 0x1000, 0},
        {6002, 4 * FX_MS, GT_REGION_REGISTER, 0x1000, 128 << 10},
    };
    for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++) {
        gt_event h = {.kind = GT_EV_HEAP};
        h.u.heap = (gt_heap_event){.start_ns = mem[i].t, .global_tid = gt_global_tid(mem[i].pid, mem[i].pid),
                                   .operation = mem[i].op, .heap_id = 1, .address = mem[i].addr,
                                   .bytes = mem[i].bytes, .heap_usage = 1, .memory_type = 1};
        gt_writer_add(w, &h);
    }
    if ((rc = gt_writer_commit(w)) < 0) {
        gt_writer_free(w);
        return rc;
    }
    return gt_writer_close(w);
}

static void test_viewer_model__memory_per_process(void)
{
    char *path = gt_test_path("two_ranks.sqlite");
    CU_ASSERT_EQUAL_FATAL(write_two_ranks(path), 0);
    GvTraceModel *m = gv_trace_model_new();
    CU_ASSERT_TRUE_FATAL(gv_trace_model_load(m, path, NULL));
    const gt_report *r = gv_trace_model_report(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL_FATAL(r->memory.n_procs, 2);
    CU_ASSERT_EQUAL_FATAL(gv_trace_model_n_memories(m), 2);
    const int64_t want_alloc[2] = {768 << 10, 512 << 10}, want_res[2] = {1 << 20, 2 << 20};
    for (size_t i = 0; i < 2; i++) {
        const GvMemory *mem = gv_trace_model_memory_nth(m, i);
        const gt_memory *pm = &r->memory.procs[i];
        CU_ASSERT_EQUAL(mem->pid, pm->pid);
        CU_ASSERT_EQUAL(mem->peak_allocated_bytes, pm->peak_allocated_bytes);
        CU_ASSERT_EQUAL(mem->peak_allocated_ns, pm->peak_allocated_ns);
        CU_ASSERT_EQUAL(mem->peak_reserved_bytes, pm->peak_reserved_bytes);
        CU_ASSERT_EQUAL(mem->peak_allocated_bytes, want_alloc[i]);
        CU_ASSERT_EQUAL(mem->peak_reserved_bytes, want_res[i]);
        CU_ASSERT_EQUAL(mem->max_reserved_bytes, want_res[i]);
        for (size_t k = 0; k < mem->n_samples; k++) /* never allocated above reserved */
            CU_ASSERT_TRUE(mem->samples[k].allocated_bytes <= mem->samples[k].reserved_bytes);
    }
    CU_ASSERT_EQUAL(gv_trace_model_memory_nth(m, 0)->n_blocks, 2);
    CU_ASSERT_EQUAL(gv_trace_model_memory_nth(m, 1)->n_blocks, 2);
    /* the view draws the process it was given, and its snapshot is that process's */
    GvMemView v;
    gv_mem_view_init(&v, 800, 500);
    CU_ASSERT_EQUAL(gv_mem_view_memory(m, &v)->pid, 6001);
    v.pid = 6002;
    CU_ASSERT_EQUAL(gv_mem_view_memory(m, &v)->pid, 6002);
    gt_mem_state *st = gv_trace_model_memory_state_of(m, 6002, 2 * FX_MS, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_EQUAL(st->pid, 6002);
    CU_ASSERT_EQUAL(st->reserved_bytes, 2 << 20);
    CU_ASSERT_EQUAL(st->allocated_bytes, 512 << 10);
    CU_ASSERT_EQUAL(st->n_unplaced, 0);
    gt_mem_state_free(st);
    cairo_surface_t *surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 800, 500);
    cairo_t *cr = cairo_create(surf);
    gv_render_memory(cr, m, &v, NULL); /* draws without a display */
    CU_ASSERT_EQUAL(cairo_status(cr), CAIRO_STATUS_SUCCESS);
    cairo_destroy(cr);
    cairo_surface_destroy(surf);
    g_object_unref(m);
    free(path);
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
        if (i == 0) { /* cloverleaf: 1,312 synchronizations, each joined to its cudaDeviceSynchronize */
            size_t st, sl;
            const GvLane *sync = lane_of(m, GV_TRACK_DEVICE, GV_ITEM_SYNC, &st, &sl);
            CU_ASSERT_PTR_NOT_NULL_FATAL(sync);
            CU_ASSERT_EQUAL(sync->n, 1312);
            GvItemRef sr = {st, sl, sync->n / 2}, rel;
            gv_trace_model_lock(m);
            CU_ASSERT_TRUE(gv_trace_model_find_related(m, &sr, &rel));
            CU_ASSERT_STRING_EQUAL(
                gv_trace_model_name(m, gv_trace_model_track(m, rel.track)->lanes[rel.lane]->items[rel.index].name),
                "cudaDeviceSynchronize");
            /* The search reads a kernel's full name too: its namespace and its
             * arguments are not in the short name the lanes show. */
            GvItemRef fr;
            CU_ASSERT_TRUE_FATAL(gv_trace_model_search(m, "clover::Range1d", INT64_MIN, FALSE, &fr));
            const GvItem *fit = &gv_trace_model_track(m, fr.track)->lanes[fr.lane]->items[fr.index];
            CU_ASSERT_EQUAL(fit->kind, GV_ITEM_KERNEL);
            CU_ASSERT_PTR_NULL(strstr(gv_trace_model_name(m, fit->name), "Range1d"));
            CU_ASSERT_STRING_EQUAL(gv_trace_model_name(m, fit->name), "par_ranged1d_kernel<build_field>");
            CU_ASSERT_FALSE(gv_trace_model_search(m, "clover::NoSuchType", INT64_MIN, FALSE, &fr));
            gv_trace_model_unlock(m);
        }
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
/* A trace that keeps its report: the model has it (as `gtrace report`
 * prints it) from its first rows on, for the pages to show until the
 * analysis is in; one that keeps none, nothing. */
static void test_viewer_model__kept_report(void)
{
    char *path = gt_test_path("kept.sqlite");
    CU_ASSERT_EQUAL_FATAL(fx_write(path), 0);
    GvTraceModel *bare = gv_trace_model_new();
    CU_ASSERT_TRUE_FATAL(gv_trace_model_load(bare, path, NULL));
    CU_ASSERT_PTR_NULL(gv_trace_model_kept_report(bare));
    CU_ASSERT_PTR_NULL(gv_trace_model_kept_section(bare, "memory"));
    g_object_unref(bare);

    CU_ASSERT_EQUAL_FATAL(gt_report_keep(path), 0);
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, 0), 0);
    char *want = NULL;
    size_t n_want = 0;
    FILE *f = open_memstream(&want, &n_want);
    CU_ASSERT_EQUAL(gt_report_print_kept(t, false, f), 0);
    fclose(f);
    gt_trace_free(t);

    GvTraceModel *m = gv_trace_model_new();
    CU_ASSERT_TRUE_FATAL(gv_trace_model_load(m, path, NULL));
    char *kept = gv_trace_model_kept_report(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kept);
    CU_ASSERT_STRING_EQUAL(kept, want);
    char head[512];
    snprintf(head, sizeof head, "gtrace report: %s", path);
    CU_ASSERT_EQUAL(strncmp(kept, head, strlen(head)), 0);
    char *mem = gv_trace_model_kept_section(m, "memory");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mem);
    CU_ASSERT_EQUAL(strncmp(mem, "memory ", 7), 0);
    CU_ASSERT_PTR_NULL(strstr(mem, "\n\n"));          /* to its blank line, */
    CU_ASSERT_PTR_NOT_NULL(strstr(kept, mem));          /* as the report has it */
    CU_ASSERT_PTR_NULL(strstr(mem, "advice"));
    CU_ASSERT_PTR_NULL(gv_trace_model_kept_section(m, "memo")); /* a heading is a whole word */
    CU_ASSERT_PTR_NULL(gv_trace_model_kept_section(m, "no such section"));
    g_free(mem);
    g_free(kept);
    free(want);
    g_object_unref(m);
    unlink(path);
    free(path);
}

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
    static const gt_test_case cases[] = {
        {"test_viewer_model__tracks", test_viewer_model__tracks},
        {"test_viewer_model__gaps", test_viewer_model__gaps},
        {"test_viewer_model__related_and_describe", test_viewer_model__related_and_describe},
        {"test_viewer_model__marks_and_sync", test_viewer_model__marks_and_sync},
        {"test_viewer_model__search", test_viewer_model__search},
        {"test_viewer_model__memory_stacking", test_viewer_model__memory_stacking},
        {"test_viewer_model__memory_per_process", test_viewer_model__memory_per_process},
        {"test_viewer_model__nsys_fixtures", test_viewer_model__nsys_fixtures},
        {"test_viewer_model__bad_files", test_viewer_model__bad_files},
        {"test_viewer_model__late_integrity_failure", test_viewer_model__late_integrity_failure},
        {"test_viewer_model__kept_report", test_viewer_model__kept_report},
        {NULL, NULL},
    };
    static const gt_test_suite suites[] = {{"viewer_model", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
