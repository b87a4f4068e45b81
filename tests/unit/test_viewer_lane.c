/* test_viewer_lane.c: a timeline lane's level of detail: the walk merges
 * items narrower than a pixel into counted boxes, and the pyramid of
 * merged levels (and a walk through it) keeps every item's count and
 * time. */
#include "gt_test.h"

#include <stdlib.h>
#include <string.h>

#include "gv-render.h"

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

int main(int argc, char **argv)
{
    static const gt_test_case cases[] = {
        {"test_viewer_lane__walk_merges_narrow_items", test_viewer_lane__walk_merges_narrow_items},
        {"test_viewer_lane__lod_pyramid_sums", test_viewer_lane__lod_pyramid_sums},
        {"test_viewer_lane__lod_walk_sums", test_viewer_lane__lod_walk_sums},
        {NULL, NULL},
    };
    static const gt_test_suite suites[] = {{"viewer_lane", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
