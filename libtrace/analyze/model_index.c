/* model_index.c: the model's indexes, built once its arrays are filled and
 * sorted (each range's parent, the correlation map, the longest activity
 * and the main thread), and the lookups the analyses share through them:
 * the launch of a correlation id, the range a thread was in at a time, a
 * range's path, an allocation's origin. model.c loads the arrays. */
#include "analyze_int.h"

#include <stdlib.h>
#include <string.h>

#define GROW(arr, n, cap) ((n) < (cap) ? 0 : an_grow((void **)&(arr), &(cap), sizeof *(arr)))


static size_t hash64(int64_t k)
{
    uint64_t x = (uint64_t)k;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

/* Parents: a stack per thread over ranges sorted by (tid, start, -end). */
int an_index_ranges(an_model *m)
{
    int64_t *stack = NULL;
    size_t depth = 0, cap = 0;
    int rc = 0;
    for (size_t i = 0; i < m->n_ranges; i++) {
        an_range *r = &m->ranges[i];
        if (i == 0 || m->ranges[i - 1].tid != r->tid)
            depth = 0;
        while (depth > 0 && m->ranges[stack[depth - 1]].end_ns <= r->start_ns)
            depth--;
        r->parent = depth > 0 ? (int32_t)stack[depth - 1] : -1;
        if ((rc = GROW(stack, depth, cap)) < 0)
            break;
        stack[depth++] = (int64_t)i;
    }
    free(stack);
    return rc;
}

int an_index_calls(an_model *m)
{
    int rc = 0;
    free(m->corr_keys);
    free(m->corr_vals);
    free(m->corr_dense);
    m->corr_keys = NULL;
    m->corr_vals = NULL;
    m->corr_dense = NULL;
    m->corr_cap = m->corr_dense_n = 0;
    /* Correlation map: a runtime call over the driver call it made, both
     * over a wrapper (an_call_replaces). */
#define CORR_WINS(old, cur) an_call_replaces((old)->driver, (old)->foreign, (cur)->foreign)
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < m->n_apis; i++) {
        int64_t k = m->apis[i].corr;
        if (k != 0 && k < lo)
            lo = k;
        if (k != 0 && k > hi)
            hi = k;
    }
    /* Dense ids (CUPTI counts up from 1): a direct table, looked up in
     * nearly increasing order by the analyses, so mostly from the cache. */
    if (lo <= hi && (uint64_t)hi - (uint64_t)lo < 4 * (uint64_t)m->n_apis + 1024 && m->n_apis < UINT32_MAX) {
        m->corr_dense_n = (size_t)((uint64_t)hi - (uint64_t)lo) + 1;
        m->corr_min = lo;
        m->corr_dense = calloc(m->corr_dense_n, sizeof *m->corr_dense);
        if (!m->corr_dense) {
            rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory indexing the trace");
            return rc;
        }
        for (size_t i = 0; i < m->n_apis; i++) {
            int64_t k = m->apis[i].corr;
            if (k == 0)
                continue;
            uint32_t *slot = &m->corr_dense[k - lo];
            if (*slot == 0 || CORR_WINS(&m->apis[*slot - 1], &m->apis[i]))
                *slot = (uint32_t)i + 1;
        }
    } else {
        /* open addressing, load under 1/2 */
        size_t ccap = 16;
        while (ccap < m->n_apis * 2 + 16)
            ccap *= 2;
        m->corr_keys = malloc(ccap * sizeof *m->corr_keys);
        m->corr_vals = malloc(ccap * sizeof *m->corr_vals);
        if (!m->corr_keys || !m->corr_vals) {
            rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory indexing the trace");
            return rc;
        }
        m->corr_cap = ccap;
        memset(m->corr_keys, 0, ccap * sizeof *m->corr_keys);
        for (size_t i = 0; i < m->n_apis; i++) {
            int64_t k = m->apis[i].corr;
            if (k == 0)
                continue;
            size_t h = hash64(k) & (ccap - 1);
            while (m->corr_keys[h] != 0 && m->corr_keys[h] != k)
                h = (h + 1) & (ccap - 1);
            if (!m->corr_keys[h] || CORR_WINS(&m->apis[m->corr_vals[h]], &m->apis[i])) {
                m->corr_keys[h] = k;
                m->corr_vals[h] = i;
            }
        }
    }
#undef CORR_WINS

    return rc;
}

/* The longest activity and the main thread. */
void an_index_rest(an_model *m)
{
    m->max_act_ns = 0;
    for (size_t i = 0; i < m->n_acts; i++)
        if (m->acts[i].end_ns - m->acts[i].start_ns > m->max_act_ns)
            m->max_act_ns = m->acts[i].end_ns - m->acts[i].start_ns;
    /* The main thread: most CUDA calls, else most ranges, else first CPU op.
     * Programs have few threads: a small table of counts is enough. */
    m->main_tid = 0;
    int64_t best = 0;
    {
        int64_t tids[256], counts[256];
        size_t nt = 0;
        for (size_t i = 0; i < m->n_apis; i++) {
            size_t k = 0;
            while (k < nt && tids[k] != m->apis[i].tid)
                k++;
            if (k == nt) {
                if (nt == 256)
                    continue;
                tids[nt] = m->apis[i].tid;
                counts[nt++] = 0;
            }
            if (++counts[k] > best) {
                best = counts[k];
                m->main_tid = tids[k];
            }
        }
    }
    if (m->main_tid == 0) {
        for (size_t i = 0; i < m->n_ranges;) {
            size_t j = i;
            while (j < m->n_ranges && m->ranges[j].tid == m->ranges[i].tid)
                j++;
            if ((int64_t)(j - i) > best) {
                best = (int64_t)(j - i);
                m->main_tid = m->ranges[i].tid;
            }
            i = j;
        }
    }
    if (m->main_tid == 0 && m->n_acts > 0)
        m->main_tid = m->acts[0].tid;
}

int an_model_index(an_model *m)
{
    int rc = an_index_ranges(m);
    if (rc == 0)
        rc = an_index_calls(m);
    if (rc == 0)
        an_index_rest(m);
    return rc;
}

const an_api *an_model_launch(const an_model *m, int64_t corr)
{
    if (corr == 0)
        return NULL;
    if (m->corr_dense) {
        if (corr < m->corr_min || (uint64_t)corr - (uint64_t)m->corr_min >= m->corr_dense_n)
            return NULL;
        uint32_t v = m->corr_dense[corr - m->corr_min];
        return v ? &m->apis[v - 1] : NULL;
    }
    if (m->corr_cap == 0)
        return NULL;
    size_t h = hash64(corr) & (m->corr_cap - 1);
    while (m->corr_keys[h] != 0) {
        if (m->corr_keys[h] == corr)
            return &m->apis[m->corr_vals[h]];
        h = (h + 1) & (m->corr_cap - 1);
    }
    return NULL;
}

int64_t an_model_range_at(const an_model *m, int64_t tid, int64_t t_ns)
{
    /* The last range of the thread starting at or before t; the innermost
     * range containing t is it or one of its ancestors (ranges nest). */
    size_t lo = 0, hi = m->n_ranges;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const an_range *r = &m->ranges[mid];
        if (r->tid < tid || (r->tid == tid && r->start_ns <= t_ns))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || m->ranges[lo - 1].tid != tid)
        return -1;
    int64_t i = (int64_t)lo - 1;
    while (i >= 0 && m->ranges[i].end_ns <= t_ns)
        i = m->ranges[i].parent;
    return i;
}

char *an_model_range_path(const an_model *m, int64_t i)
{
    const char *names[64];
    int n = 0;
    size_t len = 1;
    for (int64_t k = i; k >= 0 && n < 64; k = m->ranges[k].parent) {
        names[n] = an_str(m, m->ranges[k].text);
        len += strlen(names[n]) + 3;
        n++;
    }
    char *p = malloc(len);
    if (!p)
        return NULL;
    p[0] = '\0';
    for (int k = n - 1; k >= 0; k--) {
        strcat(p, names[k]);
        if (k > 0)
            strcat(p, " > ");
    }
    return p;
}

char *an_model_origin(const an_model *m, int64_t tid, int64_t t_ns, int64_t callchain)
{
    char *path = an_model_range_path(m, tid ? an_model_range_at(m, tid, t_ns) : -1);
    if (!path || callchain == 0 || !m->t)
        return path;
    const gt_frame *frames = NULL;
    size_t n = 0;
    if (gt_trace_callchain(m->t, callchain, &frames, &n) < 0 || n == 0)
        return path;
    /* The first frames name the caller best; three keep a line readable. */
    char stack[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && i < 3; i++) {
        const char *sym = an_str(m, frames[i].symbol);
        int w = snprintf(stack + used, sizeof stack - used, "%s%s", i ? " < " : "", *sym ? sym : "?");
        if (w < 0 || (size_t)w >= sizeof stack - used)
            break;
        used += (size_t)w;
    }
    char *o = an_printf("%s%s[%s]", path, *path ? " " : "", stack);
    free(path);
    return o;
}
