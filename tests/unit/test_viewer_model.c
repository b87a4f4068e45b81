/* test_viewer_model.c: the viewer's model and drawing without a display:
 * tracks and lanes of a known trace, idle gaps and their causes, launch <->
 * kernel, search, the level-of-detail walk and its pyramid, the memory
 * stacking, one memory per process (with the analysis's peaks), pixels of a headless render, the nsys fixtures, errors for bad
 * files, and a damage the integrity check finds after the rows are in. */
#include "gt_test.h"
#include "test_viewer_fixture.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gv-memory-view.h"
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
 * as the loader does: with the spare pyramid swapped in at each publish, or
 * (in_place) one pyramid updated in place. */
static void make_lane(GvLane *l, size_t n, int in_place)
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
        if (in_place) {
            l->n = done;
            CU_ASSERT_EQUAL(gv_lane_lod_update(l), 0);
        } else {
            CU_ASSERT_EQUAL(gv_lane_lod_prepare(l, done), 0);
            gv_lane_publish(l, done);
            CU_ASSERT_EQUAL(l->lod.n_items, done);
        }
    }
}

static void make_irregular_lane(GvLane *l, size_t n)
{
    make_lane(l, n, 0);
}

/* Every bucket of every level: its count, busy time and latest end are those
 * of the raw items starting in its time range; its longest is one of them. */
static void test_viewer_lane__lod_pyramid_sums(void)
{
    enum { N = 150000 };
    for (int in_place = 0; in_place < 2; in_place++) {
        GvLane l = {0};
        make_lane(&l, N, in_place);
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
        {"test_viewer_model__marks_and_sync", test_viewer_model__marks_and_sync},
        {"test_viewer_model__search", test_viewer_model__search},
        {"test_viewer_lane__walk_merges_narrow_items", test_viewer_lane__walk_merges_narrow_items},
        {"test_viewer_lane__lod_pyramid_sums", test_viewer_lane__lod_pyramid_sums},
        {"test_viewer_lane__lod_walk_sums", test_viewer_lane__lod_walk_sums},
        {"test_viewer_model__memory_stacking", test_viewer_model__memory_stacking},
        {"test_viewer_model__memory_per_process", test_viewer_model__memory_per_process},
        {"test_viewer_render__rows_and_gap_colours", test_viewer_render__rows_and_gap_colours},
        {"test_viewer_render__marks", test_viewer_render__marks},
        {"test_viewer_render__flow_arrow", test_viewer_render__flow_arrow},
        {"test_viewer_align__steps_of_unequal_length", test_viewer_align__steps_of_unequal_length},
        {"test_viewer_align__without_steps", test_viewer_align__without_steps},
        {"test_viewer_align__pairing", test_viewer_align__pairing},
        {"test_viewer_render__aligned_steps", test_viewer_render__aligned_steps},
        {"test_viewer_render__titles_follow_scroll", test_viewer_render__titles_follow_scroll},
        {"test_viewer_model__nsys_fixtures", test_viewer_model__nsys_fixtures},
        {"test_viewer_model__bad_files", test_viewer_model__bad_files},
        {"test_viewer_model__late_integrity_failure", test_viewer_model__late_integrity_failure},
        {NULL, NULL},
    };
    static const gt_test_suite suites[] = {{"viewer_model", model}};
    return gt_test_main(argc, argv, suites, 1);
}
