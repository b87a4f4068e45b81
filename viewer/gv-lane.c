/* gv-lane.c: binary searches and the merging walk over a lane (see gv-lane.h).
 * Nothing here locks: the caller holds the model's lock while it walks. */
#include "gv-lane.h"
#include "gt_base.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t gv_lane_lower_bound(const GvLane *l, size_t from, int64_t t_ns)
{
    return from >= l->n ? from : from + GT_LOWER_BOUND(l->items + from, l->n - from, start_ns, t_ns);
}

size_t gv_lane_first_visible(const GvLane *l, int64_t t_ns)
{
    size_t i = gv_lane_lower_bound(l, 0, t_ns);
    /* Items before i started earlier; a few may still run at t. Lanes barely
     * overlap, so a short look-back finds them; the cap keeps it O(1). */
    for (int k = 0; k < 64 && i > 0 && l->items[i - 1].end_ns > t_ns; k++)
        i--;
    return i;
}

/* Times from a damaged trace may be anything an int64 holds: sums and
 * differences saturate, bucket arithmetic is unsigned and bounded. */
static int64_t dur(const GvItem *it) { return gt_sat_sub(it->end_ns, it->start_ns); }

/* The bucket of width 2^s holding time t (0 before the origin). */
static uint64_t bucket_of(int64_t t, int64_t origin, int s)
{
    return t <= origin || s >= 64 ? 0 : ((uint64_t)t - (uint64_t)origin) >> s;
}

/* The start of bucket b of width 2^s; INT64_MAX past the range of times. */
static int64_t bucket_start(int64_t origin, size_t b, int s)
{
    if (b == 0)
        return origin;
    if (s >= 63 || (uint64_t)b > ((uint64_t)INT64_MAX >> s))
        return INT64_MAX;
    return gt_sat_add(origin, (int64_t)((uint64_t)b << s));
}

/* gv_lane_lower_bound when the answer is near `from`: steps of 1, 2, 4...
 * then a binary search in the last step. A run of merged items is a few
 * dozen items long; a search over the whole lane would touch ~20 cache lines
 * spread over hundreds of megabytes for each. */
static size_t gallop_lower_bound(const GvLane *l, size_t from, int64_t t_ns)
{
    size_t lo = from, step = 1;
    while (lo + step < l->n && l->items[lo + step - 1].start_ns < t_ns) {
        lo += step;
        step *= 2;
    }
    size_t hi = lo + step < l->n ? lo + step : l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->items[mid].start_ns < t_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Item by item: an item narrower than min_ns starts a run, one more binary
 * search jumps to the first item starting min_ns later; the run's items are
 * then summed (zoomed in, a run holds a few pixels' worth of items). */
static size_t walk_items(const GvLane *l, int64_t t0_ns, int64_t t1_ns, int64_t min_ns, GvBoxFunc visit,
                         void *data)
{
    size_t n_boxes = 0;
    size_t i = gv_lane_first_visible(l, t0_ns);
    while (i < l->n && l->items[i].start_ns < t1_ns) {
        const GvItem *it = &l->items[i];
        GvBox b = {it->start_ns, it->end_ns, i, 1, dur(it), i};
        if (dur(it) < min_ns) {
            /* Everything that starts within min_ns of this item joins it. */
            size_t j = gallop_lower_bound(l, i + 1, gt_sat_add(it->start_ns, min_ns));
            /* In a lane without overlaps only the run's last item can be wide (the
             * next ones start after it ends): it is drawn on its own, not hidden. */
            if (j > i + 1 && dur(&l->items[j - 1]) >= min_ns)
                j--;
            for (size_t k = i + 1; k < j; k++) {
                const GvItem *x = &l->items[k];
                b.busy_ns = gt_sat_add(b.busy_ns, dur(x));
                if (x->end_ns > b.end_ns)
                    b.end_ns = x->end_ns;
                if (dur(x) > dur(&l->items[b.dominant]))
                    b.dominant = k;
            }
            b.count = j - i;
            i = j;
        } else {
            i++;
        }
        if (b.end_ns > t0_ns) {
            visit(l, &b, data);
            n_boxes++;
        }
    }
    return n_boxes;
}

int gv_lane_lod_level(const GvLane *l, double ns_per_px)
{
    const GvLod *d = &l->lod;
    if (d->n_levels == 0 || d->n_items != l->n || ns_per_px < 1)
        return -1;
    int s = ilogb(ns_per_px); /* buckets at most a pixel wide */
    if (s < d->shift)
        return -1;
    return s - d->shift < d->n_levels ? s - d->shift : d->n_levels - 1;
}

/* A merged box being built from buckets (and, around a wide item, from items). */
typedef struct run {
    GvBox b;
    int64_t limit_ns, dom_weight; /* buckets starting before limit_ns join */
    int active;
} run;

static void run_add_items(const GvLane *l, run *r, size_t from, size_t to, int64_t min_ns)
{
    for (size_t k = from; k < to; k++) {
        const GvItem *x = &l->items[k];
        if (!r->active) {
            r->b = (GvBox){x->start_ns, x->end_ns, k, 0, 0, k};
            r->limit_ns = gt_sat_add(x->start_ns, min_ns);
            r->dom_weight = -1;
            r->active = 1;
        }
        r->b.count++;
        r->b.busy_ns = gt_sat_add(r->b.busy_ns, dur(x));
        if (x->end_ns > r->b.end_ns)
            r->b.end_ns = x->end_ns;
        if (dur(x) > r->dom_weight) {
            r->dom_weight = dur(x);
            r->b.dominant = k;
        }
    }
}

static size_t run_flush(const GvLane *l, run *r, int64_t t0_ns, GvBoxFunc visit, void *data)
{
    if (!r->active)
        return 0;
    r->active = 0;
    r->b.start_ns = l->items[r->b.first].start_ns;
    if (r->b.end_ns <= t0_ns)
        return 0;
    visit(l, &r->b, data);
    return 1;
}

/* From the pyramid's level k (buckets at most a pixel wide): consecutive
 * buckets within min_ns of a run's start join it; a bucket whose longest
 * item is wide splits: that item is a box of its own. */
static size_t walk_lod(const GvLane *l, int k, int64_t t0_ns, int64_t t1_ns, int64_t min_ns, GvBoxFunc visit,
                       void *data)
{
    const GvLod *d = &l->lod;
    const GvBucket *bk = d->lv[k];
    const size_t nb = d->n[k];
    const int s = d->shift + k;
    size_t n_boxes = 0;
    uint64_t b0 = bucket_of(t0_ns, d->origin_ns, s);
    if (b0 >= nb) /* everything starts before t0: only long items can show */
        return walk_items(l, t0_ns, t1_ns, min_ns, visit, data);
    size_t b = (size_t)b0;
    /* Items starting before this bucket and still running at t0 (a long range): boxes of their own. */
    for (size_t i = gv_lane_first_visible(l, t0_ns); i < bk[b].first; i++) {
        GvBox one = {l->items[i].start_ns, l->items[i].end_ns, i, 1, dur(&l->items[i]), i};
        visit(l, &one, data);
        n_boxes++;
    }
    run r = {.active = 0};
    for (; b < nb; b++) {
        int64_t bs = bucket_start(d->origin_ns, b, s);
        if (bs >= t1_ns)
            break;
        size_t f = bk[b].first, e = b + 1 < nb ? bk[b + 1].first : d->n_items;
        if (f == e)
            continue;
        if (r.active && bs >= r.limit_ns)
            n_boxes += run_flush(l, &r, t0_ns, visit, data);
        size_t w = bk[b].longest;
        if (gt_sat_sub(bk[b].end_ns, bs) >= min_ns && dur(&l->items[w]) >= min_ns) {
            run_add_items(l, &r, f, w, min_ns);
            n_boxes += run_flush(l, &r, t0_ns, visit, data);
            GvBox one = {l->items[w].start_ns, l->items[w].end_ns, w, 1, dur(&l->items[w]), w};
            if (one.end_ns > t0_ns) {
                visit(l, &one, data);
                n_boxes++;
            }
            run_add_items(l, &r, w + 1, e, min_ns);
            continue;
        }
        if (!r.active) {
            r.b = (GvBox){0, INT64_MIN, f, 0, 0, w};
            r.limit_ns = gt_sat_add(bs, min_ns);
            r.dom_weight = -1;
            r.active = 1;
        }
        r.b.count += e - f;
        r.b.busy_ns = gt_sat_add(r.b.busy_ns, bk[b].busy_ns);
        if (bk[b].end_ns > r.b.end_ns)
            r.b.end_ns = bk[b].end_ns;
        if (bk[b].busy_ns > r.dom_weight) {
            r.dom_weight = bk[b].busy_ns;
            r.b.dominant = w;
        }
    }
    n_boxes += run_flush(l, &r, t0_ns, visit, data);
    return n_boxes;
}

size_t gv_lane_walk(const GvLane *l, int64_t t0_ns, int64_t t1_ns, double ns_per_px, double min_px,
                    GvBoxFunc visit, void *data)
{
    if (l->n == 0 || ns_per_px <= 0)
        return 0;
    const double min_px_ns = ns_per_px * min_px; /* a double past INT64_MAX does not convert */
    const int64_t min_ns = min_px_ns < 9.2e18 ? (int64_t)min_px_ns + 1 : INT64_MAX;
    int k = gv_lane_lod_level(l, ns_per_px);
    return k < 0 ? walk_items(l, t0_ns, t1_ns, min_ns, visit, data)
                 : walk_lod(l, k, t0_ns, t1_ns, min_ns, visit, data);
}

/* ---- the pyramid ------------------------------------------------------------------------ */

static GvBucket *level_push(GvLod *d, int k)
{
    if (d->n[k] == d->cap[k]) {
        size_t cap = d->cap[k] ? d->cap[k] * 2 : 64;
        GvBucket *p = realloc(d->lv[k], cap * sizeof *p);
        if (!p)
            return NULL;
        d->lv[k] = p;
        d->cap[k] = cap;
    }
    return &d->lv[k][d->n[k]++];
}

static void lod_free(GvLod *d)
{
    for (int k = 0; k < GV_LOD_MAX_LEVELS; k++)
        free(d->lv[k]);
    memset(d, 0, sizeof *d);
}

void gv_lane_lod_free(GvLane *l)
{
    lod_free(&l->lod);
    lod_free(&l->lod_spare);
}

/* Level k+1 from level k, from the parent of bucket `from` on (the parents
 * before it are final); *out_from: the first parent redone. */
static int lod_parents(const GvItem *items, GvLod *d, int k, size_t from, size_t *out_from)
{
    const GvBucket *c = d->lv[k];
    size_t np = (d->n[k] + 1) / 2;
    size_t p = from / 2 < d->n[k + 1] ? from / 2 : d->n[k + 1];
    *out_from = p;
    d->n[k + 1] = p;
    for (; p < np; p++) {
        GvBucket *q = level_push(d, k + 1);
        if (!q)
            return -1;
        *q = c[2 * p];
        if (2 * p + 1 < d->n[k]) {
            const GvBucket *r = &c[2 * p + 1];
            size_t r_end = 2 * p + 2 < d->n[k] ? c[2 * p + 2].first : d->n_items;
            q->busy_ns = gt_sat_add(q->busy_ns, r->busy_ns);
            if (r->end_ns > q->end_ns)
                q->end_ns = r->end_ns;
            /* r holds items, and q none yet or a shorter longest */
            if (r->first != r_end && (q->first == r->first || dur(&items[r->longest]) > dur(&items[q->longest])))
                q->longest = r->longest;
        }
    }
    return 0;
}

/* Brings pyramid d over items[0 .. d->n_items) up to items[0 .. n). */
static int lod_update(GvLod *d, const GvItem *items, size_t n)
{
    if (n > UINT32_MAX) {
        lod_free(d);
        return 0;
    }
    if (d->n_levels == 0) {
        if (n < GV_LOD_MIN_ITEMS)
            return 0;
        /* About 16 items per bucket at the density seen so far, from the
         * earliest start to the latest: a lane out of order (a damaged row)
         * must not make buckets a nanosecond wide over the whole trace. */
        int64_t lo = items[0].start_ns, hi = lo;
        for (size_t i = 1; i < n; i++) {
            if (items[i].start_ns < lo)
                lo = items[i].start_ns;
            if (items[i].start_ns > hi)
                hi = items[i].start_ns;
        }
        double w = ((double)hi - (double)lo) * GV_LOD_ITEMS_PER_BUCKET / (double)n;
        d->shift = w <= 1 ? 0 : ilogb(w) + 1;
        d->origin_ns = lo;
        d->n_items = 0;
        d->n_levels = 1;
    }
    /* The density fell (long idle stretches): level 0 goes, level 1 becomes it. */
    int64_t last = items[n - 1].start_ns;
    for (size_t i = d->n_items; i < n; i++)
        if (items[i].start_ns > last)
            last = items[i].start_ns;
    while (bucket_of(last, d->origin_ns, d->shift) > n / 4 + 1024) {
        if (d->n_levels < 2) { /* nothing above: build again at the new density */
            lod_free(d);
            return lod_update(d, items, n);
        }
        free(d->lv[0]);
        memmove(d->lv, d->lv + 1, (size_t)(d->n_levels - 1) * sizeof d->lv[0]);
        memmove(d->n, d->n + 1, (size_t)(d->n_levels - 1) * sizeof d->n[0]);
        memmove(d->cap, d->cap + 1, (size_t)(d->n_levels - 1) * sizeof d->cap[0]);
        d->n_levels--;
        d->lv[d->n_levels] = NULL;
        d->n[d->n_levels] = d->cap[d->n_levels] = 0;
        d->shift++;
    }
    size_t changed[GV_LOD_MAX_LEVELS]; /* first bucket of each level that changed */
    changed[0] = d->n[0] ? d->n[0] - 1 : 0;
    for (size_t i = d->n_items; i < n; i++) {
        const GvItem *it = &items[i];
        size_t b = (size_t)bucket_of(it->start_ns, d->origin_ns, d->shift);
        if (d->n[0] && b < d->n[0] - 1) /* out of order: into the latest bucket */
            b = d->n[0] - 1;
        while (d->n[0] <= b) {
            GvBucket *q = level_push(d, 0);
            if (!q) {
                lod_free(d);
                return -1;
            }
            *q = (GvBucket){0, INT64_MIN, (uint32_t)i, (uint32_t)i};
        }
        GvBucket *q = &d->lv[0][b];
        q->busy_ns = gt_sat_add(q->busy_ns, dur(it));
        if (it->end_ns > q->end_ns)
            q->end_ns = it->end_ns;
        if (dur(it) > dur(&items[q->longest]))
            q->longest = (uint32_t)i;
    }
    d->n_items = n;
    for (int k = 0; k + 1 < GV_LOD_MAX_LEVELS && d->n[k] > 1; k++) {
        if (k + 1 == d->n_levels)
            d->n_levels++;
        if (lod_parents(items, d, k, changed[k], &changed[k + 1]) < 0) {
            lod_free(d);
            return -1;
        }
    }
    return 0;
}

int gv_lane_lod_update(GvLane *l)
{
    return lod_update(&l->lod, l->items, l->n);
}

int gv_lane_lod_prepare(GvLane *l, size_t n)
{
    return lod_update(&l->lod_spare, l->items, n);
}

void gv_lane_publish(GvLane *l, size_t n)
{
    GvLod t = l->lod;
    l->lod = l->lod_spare;
    l->lod_spare = t;
    l->n = n;
}

typedef struct hit_ctx { int64_t t, slop; GvBox best; int64_t best_dist; int found; } hit_ctx;

static void hit_visit(const GvLane *l, const GvBox *b, void *data)
{
    hit_ctx *c = data;
    int64_t d = c->t < b->start_ns ? gt_sat_sub(b->start_ns, c->t) : c->t > b->end_ns ? gt_sat_sub(c->t, b->end_ns) : 0;
    if (d <= c->slop && (!c->found || d < c->best_dist ||
                         (d == c->best_dist &&
                          gt_sat_sub(b->end_ns, b->start_ns) < gt_sat_sub(c->best.end_ns, c->best.start_ns)))) {
        c->best = *b;
        c->best_dist = d;
        c->found = 1;
    }
}

int gv_lane_hit(const GvLane *l, int64_t t_ns, double ns_per_px, double min_px, int64_t slop_ns, GvBox *out)
{
    hit_ctx c = {.t = t_ns, .slop = slop_ns};
    /* Walk a small window around t exactly as drawing does, so what is hit is what is seen. */
    double px_ns = ns_per_px * min_px;
    int64_t reach = gt_sat_add(slop_ns, px_ns < 9.2e18 ? (int64_t)px_ns + 1 : INT64_MAX);
    gv_lane_walk(l, gt_sat_sub(t_ns, reach), gt_sat_add(t_ns, reach), ns_per_px, min_px, hit_visit, &c);
    if (c.found)
        *out = c.best;
    return c.found;
}

GvItem *gv_lane_grown_copy(const GvLane *l, size_t *out_cap)
{
    size_t cap = l->cap ? l->cap * 2 : 256;
    GvItem *p = malloc(cap * sizeof *p);
    if (!p)
        return NULL;
    if (l->n_loaded)
        memcpy(p, l->items, l->n_loaded * sizeof *p);
    *out_cap = cap;
    return p;
}
