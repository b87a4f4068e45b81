/* test_trainer_alloc.c: the caching allocator: rounding, pools, splitting,
 * merging, reuse per stream, resize, the out-of-memory path and statistics.
 * Segments come from malloc through a counting device whose capacity the
 * tests set, so the "device is full" path is real. */
#include "alloc.h"
#include "error.h"
#include "gt_test.h"

#include <stdlib.h>
#include <string.h>

typedef struct device { size_t used, capacity; int n_live; } device;

static void *dev_alloc(size_t n, void *ctx)
{
    device *d = ctx;
    if (d->capacity && d->used + n > d->capacity)
        return NULL;
    d->used += n;
    d->n_live++;
    return malloc(n);
}
static void dev_free(void *p, size_t n, void *ctx)
{
    device *d = ctx;
    d->used -= n;
    d->n_live--;
    free(p);
}

static tr_alloc *make(device *d, size_t limit)
{
    tr_mem_ops ops = {dev_alloc, dev_free, d, "test"};
    tr_alloc *a = NULL;
    CU_ASSERT_EQUAL_FATAL(tr_alloc_new(&a, &ops, limit), TR_OK);
    return a;
}

static void test_trainer_alloc__rounding(void)
{
    CU_ASSERT_EQUAL(tr_alloc_round_size(1), 512);
    CU_ASSERT_EQUAL(tr_alloc_round_size(512), 512);
    CU_ASSERT_EQUAL(tr_alloc_round_size(513), 1024);
    device d = {0};
    tr_alloc *a = make(&d, 0);
    void *p;
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &p, 700, 0), TR_OK);
    CU_ASSERT_EQUAL(tr_alloc_block_size(a, p), 1024);
    tr_alloc_stats s;
    tr_alloc_get_stats(a, &s);
    CU_ASSERT_EQUAL(s.allocated_bytes, 1024);
    CU_ASSERT_EQUAL(s.requested_bytes, 700);
    CU_ASSERT_EQUAL(s.reserved_bytes, TR_ALLOC_SMALL_SEGMENT); /* small requests share a 2 MiB segment */
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &p, 0, 0), TR_EINVAL);
    tr_alloc_free(a);
    CU_ASSERT_EQUAL(d.n_live, 0);
}

static void test_trainer_alloc__pools(void)
{
    device d = {0};
    tr_alloc *a = make(&d, 0);
    void *small, *mid, *big;
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &small, 1 << 20, 0), TR_OK);       /* <= 1 MiB: small pool */
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &mid, (1 << 20) + 1, 0), TR_OK);   /* large pool, 20 MiB segment */
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &big, 11u << 20, 0), TR_OK);       /* fits the 20 MiB segment's tail */
    CU_ASSERT_PTR_EQUAL(big, (char *)mid + (1 << 20) + 512);
    tr_alloc_stats s;
    tr_alloc_get_stats(a, &s);
    CU_ASSERT_EQUAL(s.n_segments, 2);
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &big, 25u << 20, 0), TR_OK);       /* its own segment, 2 MiB rounded */
    tr_alloc_get_stats(a, &s);
    CU_ASSERT_EQUAL(s.n_segments, 3);
    CU_ASSERT_EQUAL(s.reserved_bytes, TR_ALLOC_SMALL_SEGMENT + TR_ALLOC_LARGE_SEGMENT + (26u << 20));
    tr_alloc_free(a);
}

static void test_trainer_alloc__split_merge_reuse(void)
{
    device d = {0};
    tr_alloc *a = make(&d, 0);
    void *p[4];
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(tr_alloc_malloc(a, &p[i], 4096, 0), TR_OK);
    /* one segment, carved in address order */
    for (int i = 1; i < 4; i++)
        CU_ASSERT_EQUAL((char *)p[i] - (char *)p[i - 1], 4096);
    tr_alloc_stats s;
    tr_alloc_get_stats(a, &s);
    CU_ASSERT_EQUAL(s.n_segments, 1);
    CU_ASSERT_EQUAL(s.n_splits, 4);
    CU_ASSERT_EQUAL(s.n_cache_hits, 3);
    /* free the two middle blocks: they merge into one 8 KiB block */
    CU_ASSERT_EQUAL(tr_alloc_release(a, p[1]), TR_OK);
    CU_ASSERT_EQUAL(tr_alloc_release(a, p[2]), TR_OK);
    tr_alloc_get_stats(a, &s);
    CU_ASSERT_EQUAL(s.n_merges, 1);
    CU_ASSERT_EQUAL(s.n_free_blocks, 2); /* the hole and the segment's tail */
    /* best fit: 8 KiB comes back exactly at the hole, not from the tail */
    void *q;
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &q, 8192, 0), TR_OK);
    CU_ASSERT_PTR_EQUAL(q, p[1]);
    /* release everything: one free block spans the segment, and empty_cache returns it */
    tr_alloc_release(a, q);
    tr_alloc_release(a, p[0]);
    tr_alloc_release(a, p[3]);
    tr_alloc_get_stats(a, &s);
    CU_ASSERT_EQUAL(s.n_free_blocks, 1);
    CU_ASSERT_EQUAL(s.allocated_bytes, 0);
    CU_ASSERT_EQUAL(tr_alloc_empty_cache(a), TR_ALLOC_SMALL_SEGMENT);
    CU_ASSERT_EQUAL(d.n_live, 0);
    CU_ASSERT_EQUAL(tr_alloc_release(a, p[0]), TR_EINVAL); /* a double free is an error, not a crash */
    tr_alloc_free(a);
}

static void test_trainer_alloc__streams(void)
{
    device d = {0};
    tr_alloc *a = make(&d, 0);
    void *p, *q, *r;
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &p, 2048, 1), TR_OK);
    tr_alloc_release(a, p);
    /* a block freed on stream 1 is not handed to stream 2 */
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &q, 2048, 2), TR_OK);
    tr_alloc_stats s;
    tr_alloc_get_stats(a, &s);
    CU_ASSERT_EQUAL(s.n_segments, 2);
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &r, 2048, 1), TR_OK);
    CU_ASSERT_PTR_EQUAL(r, p);
    tr_alloc_free(a);
}

static void test_trainer_alloc__resize(void)
{
    device d = {0};
    tr_alloc *a = make(&d, 0);
    void *p, *q;
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &p, 4096, 0), TR_OK);
    CU_ASSERT_EQUAL(tr_alloc_resize(a, p, 16384), TR_OK); /* grows into the free tail */
    CU_ASSERT_EQUAL(tr_alloc_block_size(a, p), 16384);
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &q, 512, 0), TR_OK);
    CU_ASSERT_PTR_EQUAL(q, (char *)p + 16384);
    CU_ASSERT_EQUAL(tr_alloc_resize(a, p, 20000), TR_ENOSPC); /* q is in the way */
    CU_ASSERT_EQUAL(tr_alloc_resize(a, p, 1000), TR_OK);      /* the tail goes back to the pool */
    CU_ASSERT_EQUAL(tr_alloc_block_size(a, p), 1024);
    tr_alloc_stats s;
    tr_alloc_get_stats(a, &s);
    CU_ASSERT_EQUAL(s.allocated_bytes, 1024 + 512);
    void *r;
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &r, 15360, 0), TR_OK);
    CU_ASSERT_PTR_EQUAL(r, (char *)p + 1024); /* the freed tail is reused */
    tr_alloc_free(a);
}

static void test_trainer_alloc__out_of_memory(void)
{
    device d = {0};
    tr_alloc *a = make(&d, 24u << 20); /* room for one large segment and two small ones */
    void *big, *small, *p;
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &small, 4096, 0), TR_OK);
    CU_ASSERT_EQUAL(tr_alloc_release(a, small), TR_OK); /* cached: 2 MiB reserved, nothing allocated */
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &big, 5u << 20, 0), TR_OK);
    tr_alloc_stats s;
    tr_alloc_get_stats(a, &s);
    CU_ASSERT_EQUAL(s.reserved_bytes, 22u << 20);
    /* another large segment does not fit even with the cache released */
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &p, 16u << 20, 0), TR_ENOMEM);
    CU_ASSERT_PTR_NULL(p);
    const char *msg = tr_error_last();
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "tried to allocate 16.00 MiB"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "allocated 5.00 MiB"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "reserved 20.00 MiB")); /* the cached segment was released first */
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "limit 24.00 MiB"));
    tr_alloc_get_stats(a, &s);
    CU_ASSERT_EQUAL(s.n_ooms, 1);
    CU_ASSERT_EQUAL(s.n_segment_frees, 1);
    /* the device itself full (no limit): free cache and retry succeeds */
    tr_alloc_free(a);
    device d2 = {0, 4u << 20, 0};
    a = make(&d2, 0);
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &small, 4096, 0), TR_OK);
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &p, 4096, 7), TR_OK); /* another stream: a second segment */
    tr_alloc_release(a, small);
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &small, 4096, 3), TR_OK); /* device full: the stream-0 segment is released */
    tr_alloc_get_stats(a, &s);
    CU_ASSERT_EQUAL(s.n_segment_frees, 1);
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &big, 4096, 4), TR_ENOMEM);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), "the device has no more memory"));
    tr_alloc_free(a);
    CU_ASSERT_EQUAL(d2.n_live, 0);
}

static void test_trainer_alloc__peaks_and_many(void)
{
    device d = {0};
    tr_alloc *a = make(&d, 0);
    enum { N = 2000 };
    void **p = calloc(N, sizeof *p);
    size_t total = 0;
    for (int i = 0; i < N; i++) { /* enough live blocks to grow the table several times */
        size_t n = 512 * (1 + i % 7);
        CU_ASSERT_EQUAL(tr_alloc_malloc(a, &p[i], n, 0), TR_OK);
        total += n;
    }
    for (int i = 0; i < N; i += 2)
        CU_ASSERT_EQUAL(tr_alloc_release(a, p[i]), TR_OK);
    for (int i = 1; i < N; i += 2)
        CU_ASSERT_EQUAL(tr_alloc_release(a, p[i]), TR_OK);
    tr_alloc_stats s;
    tr_alloc_get_stats(a, &s);
    CU_ASSERT_EQUAL(s.peak_allocated_bytes, total);
    CU_ASSERT_EQUAL(s.allocated_bytes, 0);
    CU_ASSERT_EQUAL(s.n_live_blocks, 0);
    CU_ASSERT_EQUAL(s.n_free_blocks, s.n_segments); /* everything merged back: one block per segment */
    free(p);
    tr_alloc_free(a);
}

/* CUDA graphs (--cuda-graph): a capture gets no new segment; the blocks it
 * used stay the graph's after it (nothing else is handed them, empty_cache
 * keeps their segment) until the graph is released. */
static void test_trainer_alloc__graph_pool(void)
{
    device d = {0};
    tr_alloc *a = make(&d, 0);
    void *keep, *w, *g1, *g2, *g3, *x, *y;
    /* the warm-up: a block that stays (the weights) and a step's block, freed: one small segment cached */
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &keep, 4096, 0), TR_OK);
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &w, 65536, 0), TR_OK);
    CU_ASSERT_EQUAL(tr_alloc_release(a, w), TR_OK);
    CU_ASSERT_EQUAL(tr_alloc_capture_begin(a), TR_OK);
    CU_ASSERT_EQUAL(tr_alloc_capture_begin(a), TR_EINVAL); /* one capture at a time */
    /* the captured step: from the cache, and its own freed blocks first */
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &g1, 65536, 0), TR_OK);
    CU_ASSERT_PTR_EQUAL(g1, w);
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &g2, 4096, 0), TR_OK);
    CU_ASSERT_PTR_EQUAL(g2, (char *)g1 + 65536);
    CU_ASSERT_EQUAL(tr_alloc_release(a, g1), TR_OK);
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &g3, 65536, 0), TR_OK);
    CU_ASSERT_PTR_EQUAL(g3, g1);
    CU_ASSERT_EQUAL(tr_alloc_release(a, g3), TR_OK);
    CU_ASSERT_EQUAL(tr_alloc_release(a, g2), TR_OK);
    /* more than the cache holds: refused, naming the switch, and no segment taken */
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &x, 4u << 20, 0), TR_ENOMEM);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), "--cuda-graph"));
    CU_ASSERT_EQUAL(d.n_live, 1);
    tr_alloc_capture_end(a);
    tr_alloc_stats s;
    tr_alloc_get_stats(a, &s);
    CU_ASSERT_EQUAL(s.graph_pool_bytes, 65536 + 4096);
    CU_ASSERT_EQUAL(s.allocated_bytes, 4096);
    /* between replays nothing else gets the graph's memory */
    char *lo = g1, *hi = (char *)g1 + 65536 + 4096;
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &x, 65536, 0), TR_OK);
    CU_ASSERT_EQUAL(tr_alloc_malloc(a, &y, 4096, 0), TR_OK);
    CU_ASSERT((char *)x >= hi || (char *)x + 65536 <= lo);
    CU_ASSERT((char *)y >= hi || (char *)y + 4096 <= lo);
    CU_ASSERT_EQUAL(tr_alloc_release(a, x), TR_OK);
    CU_ASSERT_EQUAL(tr_alloc_release(a, y), TR_OK);
    CU_ASSERT_EQUAL(tr_alloc_release(a, keep), TR_OK);
    CU_ASSERT_EQUAL(tr_alloc_empty_cache(a), 0); /* its segment holds the graph's pool */
    CU_ASSERT_EQUAL(d.n_live, 1);
    /* the graph released: its pool joins the cache, everything merges back */
    CU_ASSERT_EQUAL(tr_alloc_graph_release(a), TR_OK);
    tr_alloc_get_stats(a, &s);
    CU_ASSERT_EQUAL(s.graph_pool_bytes, 0);
    CU_ASSERT_EQUAL(s.n_free_blocks, 1);
    CU_ASSERT_EQUAL(tr_alloc_empty_cache(a), TR_ALLOC_SMALL_SEGMENT);
    CU_ASSERT_EQUAL(d.n_live, 0);
    CU_ASSERT_EQUAL(tr_alloc_capture_begin(a), TR_OK); /* and a new capture may start */
    tr_alloc_capture_end(a);
    tr_alloc_free(a);
}

static const gt_test_case cases[] = {
    {"test_trainer_alloc__rounding", test_trainer_alloc__rounding},
    {"test_trainer_alloc__pools", test_trainer_alloc__pools},
    {"test_trainer_alloc__split_merge_reuse", test_trainer_alloc__split_merge_reuse},
    {"test_trainer_alloc__streams", test_trainer_alloc__streams},
    {"test_trainer_alloc__resize", test_trainer_alloc__resize},
    {"test_trainer_alloc__out_of_memory", test_trainer_alloc__out_of_memory},
    {"test_trainer_alloc__peaks_and_many", test_trainer_alloc__peaks_and_many},
    {"test_trainer_alloc__graph_pool", test_trainer_alloc__graph_pool},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"trainer_alloc", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
