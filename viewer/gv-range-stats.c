/* gv-range-stats.c: the rows of a range's statistics (see gv-range-stats.h). */
#include "gv-range-stats.h"
#include "gt_base.h"

#include <stdlib.h>
#include <string.h>

/* The part of [s, e) inside [from, to); 0 when outside. */
static int64_t clipped(int64_t s, int64_t e, int64_t from, int64_t to)
{
    int64_t a = MAX(s, from), b = MIN(e, to);
    if (b <= a)
        return 0;
    return gt_sat_sub(b, a); /* a trace may hold any int64 */
}

static gboolean overlaps(const GvItem *it, int64_t from, int64_t to)
{
    if (it->end_ns <= it->start_ns) /* an instant (a mark) */
        return it->start_ns >= from && it->start_ns < to;
    return it->end_ns > from && it->start_ns < to;
}

static GvRangeRow *row_for(GHashTable *rows, char *key, const char *lane, const char *name)
{
    GvRangeRow *r = g_hash_table_lookup(rows, key);
    if (r) {
        g_free(key);
        return r;
    }
    r = g_new0(GvRangeRow, 1);
    r->lane = g_strdup(lane);
    r->name = g_strdup(name);
    g_hash_table_insert(rows, key, r);
    return r;
}

/* The lane of NVTX ranges one depth below `l` on the same thread, or NULL. */
static const GvLane *child_lane(const GvTrack *tr, const GvLane *l)
{
    if (l->kind != GV_ITEM_NVTX)
        return NULL;
    for (size_t i = 0; i < tr->n_lanes; i++)
        if (tr->lanes[i]->kind == GV_ITEM_NVTX && tr->lanes[i]->key == l->key + 1)
            return tr->lanes[i];
    return NULL;
}

/* Time of `child`'s items inside the parent item and the range. */
static int64_t children_ns(const GvLane *child, const GvItem *p, int64_t from, int64_t to)
{
    int64_t sum = 0;
    int64_t a = MAX(p->start_ns, from), b = MIN(p->end_ns, to);
    for (size_t j = gv_lane_first_visible(child, a); j < child->n && child->items[j].start_ns < b; j++)
        sum += clipped(child->items[j].start_ns, child->items[j].end_ns, a, b);
    return sum;
}

static gboolean is_work(const GvItem *it)
{
    return it->kind == GV_ITEM_KERNEL || it->kind == GV_ITEM_MEMCPY || it->kind == GV_ITEM_MEMSET ||
           it->kind == GV_ITEM_CPU_OP;
}

static int cmp_span(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The union of a device's work inside the range: streams overlap each other. */
static int64_t busy_ns(const GvTrack *tr, int64_t from, int64_t to, int64_t *out_count)
{
    GArray *spans = g_array_new(FALSE, FALSE, 2 * sizeof(int64_t));
    for (size_t li = 0; li < tr->n_lanes; li++) {
        const GvLane *l = tr->lanes[li];
        for (size_t i = gv_lane_first_visible(l, from); i < l->n && l->items[i].start_ns < to; i++) {
            const GvItem *it = &l->items[i];
            if (is_work(it) && clipped(it->start_ns, it->end_ns, from, to) > 0) {
                int64_t s[2] = {MAX(it->start_ns, from), MIN(it->end_ns, to)};
                g_array_append_val(spans, s);
            }
        }
    }
    if (spans->len > 1)
        qsort(spans->data, spans->len, 2 * sizeof(int64_t), cmp_span);
    int64_t sum = 0, cur_s = 0, cur_e = INT64_MIN;
    for (guint i = 0; i < spans->len; i++) {
        const int64_t *s = (const int64_t *)(void *)spans->data + 2 * i;
        if (s[0] > cur_e) {
            if (cur_e > cur_s)
                sum += cur_e - cur_s;
            cur_s = s[0];
            cur_e = s[1];
        } else if (s[1] > cur_e) {
            cur_e = s[1];
        }
    }
    if (cur_e > cur_s)
        sum += cur_e - cur_s;
    *out_count = spans->len;
    g_array_unref(spans);
    return sum;
}

static int cmp_rows(const void *a, const void *b)
{
    const GvRangeRow *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    int c = strcmp(x->lane, y->lane);
    return c ? c : strcmp(x->name, y->name);
}

static void add_track(GHashTable *rows, GvTraceModel *m, size_t ti, const GvTrack *tr, int64_t from, int64_t to)
{
    for (size_t li = 0; li < tr->n_lanes; li++) {
        const GvLane *l = tr->lanes[li], *child = child_lane(tr, l);
        g_autofree char *lane = g_strdup_printf("%s / %s", tr->title, l->label);
        for (size_t i = gv_lane_first_visible(l, from); i < l->n && l->items[i].start_ns < to; i++) {
            const GvItem *it = &l->items[i];
            if (!overlaps(it, from, to))
                continue;
            int64_t in = it->end_ns > it->start_ns ? clipped(it->start_ns, it->end_ns, from, to) : 0;
            GvRangeRow *r;
            if (it->kind == GV_ITEM_GAP) { /* by cause, under the device's own title */
                g_autofree char *name = g_strdup_printf("idle: %s", gt_gap_cause_name((gt_gap_cause)it->aux));
                r = row_for(rows, g_strdup_printf("%zu/gap/%u", ti, it->aux), tr->title, name);
            } else {
                r = row_for(rows, g_strdup_printf("%zu/%zu/%u", ti, li, it->name), lane,
                            gv_trace_model_name(m, it->name));
            }
            r->count++;
            r->total_ns += in;
            r->self_ns += in - (child && in > 0 ? children_ns(child, it, from, to) : 0);
        }
    }
    if (tr->kind == GV_TRACK_DEVICE) {
        int64_t n = 0, busy = busy_ns(tr, from, to, &n);
        if (n > 0) {
            GvRangeRow *r = row_for(rows, g_strdup_printf("%zu/busy", ti), tr->title, "busy");
            r->count = n;
            r->total_ns = r->self_ns = busy;
        }
    }
}

GvRangeStats *gv_range_stats_compute(GvTraceModel *m, int64_t from_ns, int64_t to_ns)
{
    g_return_val_if_fail(GV_IS_TRACE_MODEL(m), NULL);
    GvRangeStats *s = g_new0(GvRangeStats, 1);
    s->from_ns = MIN(from_ns, to_ns);
    s->to_ns = MAX(from_ns, to_ns);
    GHashTable *rows = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    gv_trace_model_lock(m);
    for (size_t ti = 0; ti < gv_trace_model_n_tracks(m); ti++)
        add_track(rows, m, ti, gv_trace_model_track(m, ti), s->from_ns, s->to_ns);
    gv_trace_model_unlock(m);
    s->n_rows = g_hash_table_size(rows);
    s->rows = g_new0(GvRangeRow, s->n_rows ? s->n_rows : 1);
    GHashTableIter hi;
    gpointer key, value;
    size_t k = 0;
    g_hash_table_iter_init(&hi, rows);
    while (g_hash_table_iter_next(&hi, &key, &value)) {
        GvRangeRow *r = value;
        s->rows[k++] = *r; /* the strings move into the array */
        g_free(r);
    }
    g_hash_table_unref(rows);
    double len = (double)s->to_ns - (double)s->from_ns;
    for (size_t i = 0; i < s->n_rows; i++)
        s->rows[i].share = len > 0 ? s->rows[i].total_ns / len : 0;
    if (s->n_rows > 1)
        qsort(s->rows, s->n_rows, sizeof *s->rows, cmp_rows);
    return s;
}

void gv_range_stats_free(GvRangeStats *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_rows; i++) {
        g_free(s->rows[i].lane);
        g_free(s->rows[i].name);
    }
    g_free(s->rows);
    g_free(s);
}
