/* gv-lane.c: binary searches and the merging walk over a lane (see gv-lane.h).
 * Nothing here locks: the caller holds the model's lock while it walks. */
#include "gv-lane.h"

#include <stdlib.h>

size_t gv_lane_lower_bound(const GvLane *l, size_t from, int64_t t_ns)
{
    size_t lo = from, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->items[mid].start_ns < t_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
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

size_t gv_lane_walk(const GvLane *l, int64_t t0_ns, int64_t t1_ns, double ns_per_px, double min_px,
                    GvBoxFunc visit, void *data)
{
    size_t n_boxes = 0;
    if (l->n == 0 || ns_per_px <= 0)
        return 0;
    const int64_t min_ns = (int64_t)(ns_per_px * min_px) + 1;
    size_t i = gv_lane_first_visible(l, t0_ns);
    while (i < l->n && l->items[i].start_ns < t1_ns) {
        const GvItem *it = &l->items[i];
        GvBox b = {it->start_ns, it->end_ns, i, 1};
        if (it->end_ns - it->start_ns < min_ns) {
            /* Everything that starts within min_px of this item joins it. */
            size_t j = gv_lane_lower_bound(l, i + 1, it->start_ns + min_ns);
            /* In a lane without overlaps only the run's last item can be wide (the
             * next ones start after it ends): it is drawn on its own, not hidden. */
            if (j > i + 1 && l->items[j - 1].end_ns - l->items[j - 1].start_ns >= min_ns)
                j--;
            for (size_t k = j; k-- > i + 1 && k + 4 > j;) /* the last few may end later */
                if (l->items[k].end_ns > b.end_ns)
                    b.end_ns = l->items[k].end_ns;
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

typedef struct hit_ctx { int64_t t, slop; GvBox best; int64_t best_dist; int found; } hit_ctx;

static void hit_visit(const GvLane *l, const GvBox *b, void *data)
{
    hit_ctx *c = data;
    int64_t d = c->t < b->start_ns ? b->start_ns - c->t : c->t > b->end_ns ? c->t - b->end_ns : 0;
    if (d <= c->slop && (!c->found || d < c->best_dist ||
                         (d == c->best_dist && b->end_ns - b->start_ns < c->best.end_ns - c->best.start_ns))) {
        c->best = *b;
        c->best_dist = d;
        c->found = 1;
    }
}

int gv_lane_hit(const GvLane *l, int64_t t_ns, double ns_per_px, double min_px, int64_t slop_ns, GvBox *out)
{
    hit_ctx c = {.t = t_ns, .slop = slop_ns};
    /* Walk a small window around t exactly as drawing does, so what is hit is what is seen. */
    int64_t reach = slop_ns + (int64_t)(ns_per_px * min_px) + 1;
    gv_lane_walk(l, t_ns - reach, t_ns + reach, ns_per_px, min_px, hit_visit, &c);
    if (c.found)
        *out = c.best;
    return c.found;
}

int gv_lane_grow(GvLane *l)
{
    size_t cap = l->cap ? l->cap * 2 : 256;
    GvItem *p = realloc(l->items, cap * sizeof *p);
    if (!p)
        return -1;
    l->items = p;
    l->cap = cap;
    return 0;
}
