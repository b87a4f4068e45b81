/* gv-align.c: pairing two traces' steps and mapping time between them (see
 * gv-align.h). The arithmetic is integer (a 128-bit product), so a boundary
 * maps exactly onto its partner and the map never goes backwards. */
#include "gv-align.h"
#include "gt_base.h"

#include <stdlib.h>
#include <string.h>

typedef struct keyed { int64_t number, start_ns, end_ns; } keyed;

static int cmp_start(const void *p, const void *q)
{
    const keyed *x = p, *y = q;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static int cmp_number_start(const void *p, const void *q)
{
    const keyed *x = p, *y = q;
    if (x->number != y->number)
        return (x->number > y->number) - (x->number < y->number);
    return cmp_start(p, q);
}

static keyed *copy_steps(const gt_step *s, size_t n, int (*cmp)(const void *, const void *))
{
    keyed *k = malloc((n ? n : 1) * sizeof *k);
    if (!k)
        return NULL;
    for (size_t i = 0; i < n; i++)
        k[i] = (keyed){s[i].number, s[i].start_ns, s[i].end_ns};
    qsort(k, n, sizeof *k, cmp);
    return k;
}

/* The first of b (sorted by number, then start) numbered `number` that starts at or after `from`. */
static const keyed *find_number(const keyed *b, size_t n, int64_t number, int64_t from)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b[mid].number < number)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < n && b[lo].number == number; lo++)
        if (b[lo].start_ns >= from)
            return &b[lo];
    return NULL;
}

static void add_pair(GvAlign *al, const keyed *a, const keyed *b)
{
    GvStepPair *p = &al->pairs[al->n_pairs++];
    *p = (GvStepPair){a->number, {a->start_ns, b->start_ns}, {a->end_ns, b->end_ns}};
}

/* A knot only when it moves forward on both sides: touching or empty steps add none. */
static void add_knot(GvAlign *al, int64_t a_ns, int64_t b_ns)
{
    size_t n = al->n_knots;
    if (n > 0 && (a_ns <= al->knots[0][n - 1] || b_ns <= al->knots[1][n - 1]))
        return;
    al->knots[0][n] = a_ns;
    al->knots[1][n] = b_ns;
    al->n_knots++;
}

int gv_align_init(GvAlign *al, const gt_step *a, size_t n_a, const gt_step *b, size_t n_b, int64_t a_start_ns,
                  int64_t b_start_ns)
{
    memset(al, 0, sizeof *al);
    al->shift_ns = b_start_ns - a_start_ns;
    size_t cap = n_a < n_b ? n_a : n_b;
    if (cap == 0)
        return 0;
    keyed *ka = copy_steps(a, n_a, cmp_start), *kb = copy_steps(b, n_b, cmp_number_start);
    al->pairs = malloc(cap * sizeof *al->pairs);
    al->knots[0] = malloc(2 * cap * sizeof(int64_t));
    al->knots[1] = malloc(2 * cap * sizeof(int64_t));
    if (!ka || !kb || !al->pairs || !al->knots[0] || !al->knots[1]) {
        free(ka);
        free(kb);
        gv_align_clear(al);
        return -1;
    }
    /* By number, in A's time order; a pair must come after the previous one
     * on both sides, so the map stays monotonic. */
    int64_t a_until = INT64_MIN, b_until = INT64_MIN;
    for (size_t i = 0; i < n_a && al->n_pairs < cap; i++) {
        if (ka[i].start_ns < a_until)
            continue;
        const keyed *m = find_number(kb, n_b, ka[i].number, b_until);
        if (!m)
            continue;
        add_pair(al, &ka[i], m);
        a_until = ka[i].end_ns;
        b_until = m->end_ns;
    }
    if (al->n_pairs == 0) { /* no number in common (a resumed run): by position */
        qsort(kb, n_b, sizeof *kb, cmp_start);
        for (size_t i = 0, j = 0; i < n_a && j < n_b; i++, j++) {
            if (ka[i].start_ns < a_until || kb[j].start_ns < b_until)
                continue;
            add_pair(al, &ka[i], &kb[j]);
            a_until = ka[i].end_ns;
            b_until = kb[j].end_ns;
        }
    }
    for (size_t i = 0; i < al->n_pairs; i++) {
        const GvStepPair *p = &al->pairs[i];
        add_knot(al, p->start_ns[0], p->start_ns[1]);
        add_knot(al, p->end_ns[0], p->end_ns[1]);
    }
    free(ka);
    free(kb);
    return 0;
}

void gv_align_clear(GvAlign *al)
{
    free(al->knots[0]);
    free(al->knots[1]);
    free(al->pairs);
    memset(al, 0, sizeof *al);
}

/* Index i of the last knot <= t on side `from`; needs knots[from][0] <= t. */
static size_t knot_before(const GvAlign *al, int from, int64_t t)
{
    const int64_t *x = al->knots[from];
    size_t lo = 0, hi = al->n_knots;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (x[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int64_t gv_align_map(const GvAlign *al, int from, int64_t t_ns)
{
    from = from ? 1 : 0;
    size_t n = al->n_knots;
    if (n == 0)
        return gt_sat_add(t_ns, from == 0 ? al->shift_ns : -al->shift_ns);
    const int64_t *x = al->knots[from], *y = al->knots[1 - from];
    if (t_ns <= x[0])
        return gt_sat_add(t_ns, y[0] - x[0]);
    if (t_ns >= x[n - 1])
        return gt_sat_add(t_ns, y[n - 1] - x[n - 1]);
    size_t i = knot_before(al, from, t_ns);
    __int128 num = (__int128)(t_ns - x[i]) * (y[i + 1] - y[i]);
    return y[i] + (int64_t)(num / (x[i + 1] - x[i]));
}

double gv_align_piece(const GvAlign *al, int from, int64_t t_ns, int64_t *out_p0, int64_t *out_p1)
{
    from = from ? 1 : 0;
    size_t n = al->n_knots;
    const int64_t *x = al->knots[from], *y = al->knots[1 - from];
    if (n == 0) {
        *out_p0 = INT64_MIN;
        *out_p1 = INT64_MAX;
        return 1.0;
    }
    if (t_ns < x[0]) {
        *out_p0 = INT64_MIN;
        *out_p1 = x[0];
        return 1.0;
    }
    if (t_ns >= x[n - 1]) {
        *out_p0 = x[n - 1];
        *out_p1 = INT64_MAX;
        return 1.0;
    }
    size_t i = knot_before(al, from, t_ns);
    *out_p0 = x[i];
    *out_p1 = x[i + 1];
    return (double)(y[i + 1] - y[i]) / (double)(x[i + 1] - x[i]);
}

const GvStepPair *gv_align_pair_at(const GvAlign *al, int side, int64_t t_ns)
{
    side = side ? 1 : 0;
    size_t lo = 0, hi = al->n_pairs; /* the first pair starting after t */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (al->pairs[mid].start_ns[side] <= t_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || t_ns >= al->pairs[lo - 1].end_ns[side])
        return NULL;
    return &al->pairs[lo - 1];
}
