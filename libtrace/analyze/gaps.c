/* gaps.c: idle gaps on the device timeline and their causes, after HTA's
 * idle time breakdown (Holistic Trace Analysis, idle_time_breakdown):
 *   host-wait    the device ran dry: the work after the gap was not even
 *                launched when the gap began (the host was late);
 *   kernel-wait  work was queued and the gap is shorter than HTA's
 *                consecutive_kernel_delay (30 us): launch overhead;
 *   other        work was queued yet waited longer (events, other streams).
 * A gap is time between two activities of one device when none runs; time
 * before the first and after the last activity is not a gap. On a CPU-only
 * trace the compute ops are the device, nothing is queued, and every gap of
 * 30 us or more is host-wait. For each gap we also say what the host thread
 * that fed the device was doing: its innermost NVTX range and the CUDA call
 * that overlapped the gap most (if it covers a tenth of the gap). This file
 * classifies; advice.c judges. */
#define _GNU_SOURCE /* strcasestr */
#include "analyze_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *gt_gap_cause_name(gt_gap_cause c)
{
    switch (c) {
    case GT_GAP_HOST_WAIT: return "host-wait";
    case GT_GAP_KERNEL_WAIT: return "kernel-wait";
    case GT_GAP_OTHER: return "other";
    case GT_GAP_N_CAUSES: break;
    }
    return "unknown";
}

bool an_is_loader_name(const char *s)
{
    static const char *words[] = {"data", "load", "batch", "fetch", "input", "prefetch", "collate", "dataset", "next"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasestr(s, words[i]))
            return true;
    return false;
}

typedef struct cand {
    int64_t start_ns, end_ns, tid;
    int32_t device;
    gt_gap_cause cause;
} cand;

typedef struct act_key {
    gt_string_id nvtx, api;
    int64_t n, total_ns;
} act_key;

typedef struct ctx {
    const an_model *m;
    size_t *runtime; size_t n_runtime; /* api indices by (tid, start): runtime calls */
    size_t *driver; size_t n_driver;
    cand *top; size_t n_top, top_n;
    gt_gap_span *all; size_t n_all, cap_all; /* every gap, when asked for */
    bool keep_all;
    act_key *keys; size_t n_keys, cap_keys; /* open addressing, cap a power of 2 */
} ctx;

typedef struct api_key { int64_t tid, start_ns; size_t idx; } api_key;
static int cmp_api_key(const void *a, const void *b)
{
    const api_key *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Orders api indices by (thread, start). The calls are sorted by start
 * already, so grouping them by thread, keeping their order, is enough (and
 * linear); qsort for programs with very many threads. */
static void sort_by_thread(const an_model *m, size_t *idx, size_t n)
{
    enum { MAX_TIDS = 256 };
    int64_t tids[MAX_TIDS];
    size_t n_tids = 0, at[MAX_TIDS];
    size_t *out = NULL;
    for (size_t i = 0; i < n; i++) {
        int64_t tid = m->apis[idx[i]].tid;
        size_t k = 0;
        while (k < n_tids && tids[k] != tid)
            k++;
        if (k == n_tids) {
            if (n_tids == MAX_TIDS)
                goto fallback;
            tids[n_tids++] = tid;
        }
    }
    if (n_tids < 2)
        return;
    if (!(out = malloc(n * sizeof *out)))
        goto fallback;
    qsort(tids, n_tids, sizeof *tids, gt_cmp_i64);
    memset(at, 0, sizeof at);
    for (size_t i = 0; i < n; i++) {
        int64_t *k = bsearch(&m->apis[idx[i]].tid, tids, n_tids, sizeof *tids, gt_cmp_i64);
        if ((size_t)(k - tids) + 1 < n_tids)
            at[k - tids + 1]++;
    }
    for (size_t k = 1; k < n_tids; k++)
        at[k] += at[k - 1];
    for (size_t i = 0; i < n; i++) {
        int64_t *k = bsearch(&m->apis[idx[i]].tid, tids, n_tids, sizeof *tids, gt_cmp_i64);
        out[at[k - tids]++] = idx[i];
    }
    memcpy(idx, out, n * sizeof *idx);
    free(out);
    return;
fallback: {
    /* the keys beside the indices: no sort context outside the call */
    api_key *keys = malloc(n * sizeof *keys);
    if (!keys)
        return; /* left by start: calls are then found on fewer threads, never wrongly */
    for (size_t i = 0; i < n; i++)
        keys[i] = (api_key){m->apis[idx[i]].tid, m->apis[idx[i]].start_ns, idx[i]};
    qsort(keys, n, sizeof *keys, cmp_api_key);
    for (size_t i = 0; i < n; i++)
        idx[i] = keys[i].idx;
    free(keys);
}
}

/* The call of thread tid in idx[] that overlaps [s, e) the most; -1 none. */
static int64_t overlapping_call(const an_model *m, const size_t *idx, size_t n, int64_t tid, int64_t s, int64_t e,
                                int64_t *out_overlap)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const an_api *a = &m->apis[idx[mid]];
        if (a->tid < tid || (a->tid == tid && a->start_ns < e))
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t best = -1, best_ov = 0;
    /* Calls of one thread and class do not overlap, so ends fall as we go
     * back; a few steps suffice, the bound only guards odd traces. */
    for (size_t k = lo, steps = 0; k > 0 && steps < 64; k--, steps++) {
        const an_api *a = &m->apis[idx[k - 1]];
        if (a->tid != tid)
            break;
        int64_t os = a->start_ns > s ? a->start_ns : s, oe = a->end_ns < e ? a->end_ns : e;
        if (oe - os > best_ov) {
            best_ov = oe - os;
            best = (int64_t)idx[k - 1];
        }
        if (a->end_ns <= s)
            break;
    }
    *out_overlap = best_ov;
    return best;
}

/* The call that overlapped the gap most, if it covers a tenth of it or
 * more: a launch that merely touches the end of a long gap explains nothing. */
static int64_t gap_call(const ctx *c, int64_t tid, int64_t s, int64_t e, int64_t *ov)
{
    int64_t i = overlapping_call(c->m, c->runtime, c->n_runtime, tid, s, e, ov);
    if (i < 0)
        i = overlapping_call(c->m, c->driver, c->n_driver, tid, s, e, ov);
    if (i >= 0 && *ov < (e - s) / 10) {
        *ov = 0;
        i = -1;
    }
    return i;
}

/* Unsigned: string ids of a damaged trace may be anything. */
static size_t key_hash(gt_string_id nvtx, gt_string_id api)
{
    return (size_t)(((uint64_t)nvtx * 31 + (uint64_t)api) * 0x9e3779b97f4a7c15ULL >> 20);
}

static int add_activity(ctx *c, gt_string_id nvtx, gt_string_id api, int64_t d)
{
    if (c->n_keys + 1 > c->cap_keys / 2) {
        size_t ncap = c->cap_keys ? c->cap_keys * 2 : 64;
        act_key *nk = calloc(ncap, sizeof *nk);
        if (!nk)
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory classifying gaps");
        for (size_t i = 0; i < c->cap_keys; i++) {
            if (c->keys[i].n == 0)
                continue;
            size_t h = key_hash(c->keys[i].nvtx, c->keys[i].api) & (ncap - 1);
            while (nk[h].n)
                h = (h + 1) & (ncap - 1);
            nk[h] = c->keys[i];
        }
        free(c->keys);
        c->keys = nk;
        c->cap_keys = ncap;
    }
    size_t h = key_hash(nvtx, api) & (c->cap_keys - 1);
    while (c->keys[h].n && (c->keys[h].nvtx != nvtx || c->keys[h].api != api))
        h = (h + 1) & (c->cap_keys - 1);
    if (!c->keys[h].n) {
        c->keys[h].nvtx = nvtx;
        c->keys[h].api = api;
        c->n_keys++;
    }
    c->keys[h].n++;
    c->keys[h].total_ns = gt_sat_add(c->keys[h].total_ns, d);
    return 0;
}

static void keep_longest(ctx *c, const cand *g)
{
    int64_t len = g->end_ns - g->start_ns;
    if (c->n_top < c->top_n) {
        c->top[c->n_top++] = *g;
    } else {
        size_t min = 0;
        for (size_t i = 1; i < c->n_top; i++)
            if (c->top[i].end_ns - c->top[i].start_ns < c->top[min].end_ns - c->top[min].start_ns)
                min = i;
        if (c->n_top == 0 || len <= c->top[min].end_ns - c->top[min].start_ns)
            return;
        c->top[min] = *g;
    }
}

static int one_gap(ctx *c, gt_gaps *g, const an_act *next, int64_t s, int64_t e)
{
    const an_model *m = c->m;
    int64_t d = e - s;
    cand k = {s, e, 0, next->device, GT_GAP_OTHER};
    if (next->kind == GT_EV_CPU_OP) {
        k.tid = next->tid;
        k.cause = d < AN_KERNEL_DELAY_NS ? GT_GAP_KERNEL_WAIT : GT_GAP_HOST_WAIT;
    } else {
        const an_api *launch = an_model_launch(m, next->corr);
        k.tid = launch ? launch->tid : m->main_tid;
        if (launch && launch->start_ns >= s)
            k.cause = GT_GAP_HOST_WAIT;
        else if (d < AN_KERNEL_DELAY_NS)
            k.cause = GT_GAP_KERNEL_WAIT;
    }
    g->n_gaps++;
    g->n_by_cause[k.cause]++;
    /* sums over devices saturate (damaged traces: gaps of up to 2^61 ns) */
    g->idle_by_cause_ns[k.cause] = gt_sat_add(g->idle_by_cause_ns[k.cause], d);
    g->idle_ns = gt_sat_add(g->idle_ns, d);
    if (d >= AN_LONG_GAP_NS) {
        g->n_long++;
        g->long_ns = gt_sat_add(g->long_ns, d);
    }
    keep_longest(c, &k);
    if (c->keep_all) {
        if (c->n_all == c->cap_all) {
            size_t ncap = c->cap_all ? c->cap_all * 2 : 256;
            gt_gap_span *nv = realloc(c->all, ncap * sizeof *nv);
            if (!nv)
                return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory finding gaps");
            c->all = nv;
            c->cap_all = ncap;
        }
        c->all[c->n_all++] = (gt_gap_span){k.device, s, e, k.cause};
    }
    if (k.cause == GT_GAP_KERNEL_WAIT)
        return 0;
    int64_t r = k.tid ? an_model_range_at(m, k.tid, s + d / 2) : -1;
    if (k.cause == GT_GAP_HOST_WAIT) {
        bool loader = false;
        for (int64_t p = r; p >= 0 && !loader; p = m->ranges[p].parent)
            loader = an_is_loader_name(an_str(m, m->ranges[p].text));
        if (loader)
            g->loader_idle_ns = gt_sat_add(g->loader_idle_ns, d);
    }
    int64_t ov;
    int64_t call = k.tid ? gap_call(c, k.tid, s, e, &ov) : -1;
    return add_activity(c, r >= 0 ? m->ranges[r].text : 0, call >= 0 ? m->apis[call].name : 0, d);
}

static int cmp_cand_len(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    int64_t lx = x->end_ns - x->start_ns, ly = y->end_ns - y->start_ns;
    if (lx != ly)
        return lx < ly ? 1 : -1;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static int cmp_activity(const void *a, const void *b)
{
    const act_key *x = a, *y = b;
    return (x->total_ns < y->total_ns) - (x->total_ns > y->total_ns);
}

int an_gaps(gt_gaps *g, const an_model *m, int64_t from_ns, int64_t to_ns, int top_n)
{
    return an_gaps_list(g, m, from_ns, to_ns, top_n, NULL, NULL);
}

int an_gaps_list(gt_gaps *g, const an_model *m, int64_t from_ns, int64_t to_ns, int top_n, gt_gap_span **all,
                 size_t *n_all)
{
    ctx c = {.m = m, .top_n = top_n > 0 ? (size_t)top_n : 10, .keep_all = all != NULL};
    int rc = 0;
    memset(g, 0, sizeof *g);
    c.runtime = malloc((m->n_apis + 1) * sizeof *c.runtime);
    c.driver = malloc((m->n_apis + 1) * sizeof *c.driver);
    c.top = calloc(c.top_n, sizeof *c.top);
    if (!c.runtime || !c.driver || !c.top)
        goto nomem;
    for (size_t i = 0; i < m->n_apis; i++) {
        if (m->apis[i].driver)
            c.driver[c.n_driver++] = i;
        else
            c.runtime[c.n_runtime++] = i;
    }
    sort_by_thread(m, c.runtime, c.n_runtime);
    sort_by_thread(m, c.driver, c.n_driver);

    /* Devices one by one: few devices, one pass each over the window. */
    int32_t done[64];
    size_t n_done = 0;
    size_t first = an_first_act(m, from_ns);
    for (size_t i = first; i < m->n_acts && m->acts[i].start_ns < to_ns; i++) {
        int32_t dev = m->acts[i].device;
        bool seen = false;
        for (size_t k = 0; k < n_done && !seen; k++)
            seen = done[k] == dev;
        if (seen || n_done == 64)
            continue;
        done[n_done++] = dev;
        int64_t cur_e = INT64_MIN;
        for (size_t j = i; j < m->n_acts && m->acts[j].start_ns < to_ns; j++) {
            const an_act *a = &m->acts[j];
            if (a->device != dev || a->end_ns <= from_ns)
                continue;
            if (cur_e != INT64_MIN && a->start_ns > cur_e && (rc = one_gap(&c, g, a, cur_e < from_ns ? from_ns : cur_e, a->start_ns)) < 0)
                goto cleanup;
            if (a->end_ns > cur_e)
                cur_e = a->end_ns;
        }
    }

    /* The longest gaps, with what the host did. */
    if (c.n_top > 1)
        qsort(c.top, c.n_top, sizeof *c.top, cmp_cand_len);
    g->longest = calloc(c.n_top ? c.n_top : 1, sizeof *g->longest);
    if (!g->longest)
        goto nomem;
    for (size_t k = 0; k < c.n_top; k++) {
        const cand *x = &c.top[k];
        gt_gap *out = &g->longest[g->n_longest++];
        out->device_id = x->device;
        out->start_ns = x->start_ns;
        out->end_ns = x->end_ns;
        out->cause = x->cause;
        int64_t r = x->tid ? an_model_range_at(m, x->tid, x->start_ns + (x->end_ns - x->start_ns) / 2) : -1;
        int64_t call = x->tid ? gap_call(&c, x->tid, x->start_ns, x->end_ns, &out->api_overlap_ns) : -1;
        char base[512];
        out->nvtx = an_strdup(r >= 0 ? an_str(m, m->ranges[r].text) : "");
        out->nvtx_path = an_model_range_path(m, r);
        out->api = an_strdup(call >= 0 ? gt_api_base_name(an_str(m, m->apis[call].name), base, sizeof base) : "");
        if (!out->nvtx || !out->nvtx_path || !out->api)
            goto nomem;
    }

    /* What the host did, by total idle time. */
    size_t n_act = 0;
    for (size_t i = 0; i < c.cap_keys; i++)
        if (c.keys[i].n)
            c.keys[n_act++] = c.keys[i];
    if (n_act > 1)
        qsort(c.keys, n_act, sizeof *c.keys, cmp_activity);
    if (n_act > c.top_n)
        n_act = c.top_n;
    g->activity = calloc(n_act ? n_act : 1, sizeof *g->activity);
    if (!g->activity)
        goto nomem;
    for (size_t k = 0; k < n_act; k++) {
        gt_gap_activity *a = &g->activity[g->n_activity++];
        char base[512];
        a->nvtx = an_strdup(an_str(m, c.keys[k].nvtx));
        a->api = an_strdup(gt_api_base_name(an_str(m, c.keys[k].api), base, sizeof base));
        a->n_gaps = c.keys[k].n;
        a->total_ns = c.keys[k].total_ns;
        if (!a->nvtx || !a->api)
            goto nomem;
    }
    if (all) {
        *all = c.all;
        *n_all = c.n_all;
        c.all = NULL;
    }
    goto cleanup;
nomem:
    rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory finding gaps");
cleanup:
    free(c.all);
    free(c.runtime);
    free(c.driver);
    free(c.top);
    free(c.keys);
    return rc;
}

void an_gaps_clear(gt_gaps *g)
{
    for (size_t i = 0; i < g->n_longest; i++) {
        free(g->longest[i].nvtx);
        free(g->longest[i].nvtx_path);
        free(g->longest[i].api);
    }
    free(g->longest);
    for (size_t i = 0; i < g->n_activity; i++) {
        free(g->activity[i].nvtx);
        free(g->activity[i].api);
    }
    free(g->activity);
    memset(g, 0, sizeof *g);
}
