/* util.c: small helpers of the analysis: arrays that grow, a model's
 * strings by id, distributions, busy-time unions, number formatting, and
 * the JSON of a distribution. The model's loaders and indexes share them
 * from here, so neither calls the other back. */
#include "analyze_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int an_grow(void **arr, size_t *cap, size_t elem)
{
    size_t ncap = *cap ? *cap * 2 : 1024;
    void *p = realloc(*arr, ncap * elem);
    if (!p)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory loading the trace");
    *arr = p;
    *cap = ncap;
    return 0;
}

/* A string of m's trace by id: "" for none (0) or a model without its trace. */
const char *an_str(const an_model *m, gt_string_id id)
{
    if (!m->t || id == 0)
        return "";
    const char *s = gt_trace_string(m->t, id);
    return s ? s : "";
}

/* LSD radix sort, a byte at a time, skipping bytes all values share:
 * durations of millions of kernels sort in a few linear passes where qsort
 * took a third of a second. Signed values: the top bit flipped. */
static void sort_i64(int64_t *v, size_t n)
{
    enum { SMALL = 256 };
    if (n < SMALL) {
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && v[j] < v[j - 1]; j--) {
                int64_t t = v[j];
                v[j] = v[j - 1];
                v[j - 1] = t;
            }
        return;
    }
    uint64_t *a = (uint64_t *)v, *b = malloc(n * sizeof *b);
    if (!b) { /* in place, slower */
        for (size_t gap = n / 2; gap > 0; gap /= 2)
            for (size_t i = gap; i < n; i++)
                for (size_t j = i; j >= gap && v[j] < v[j - gap]; j -= gap) {
                    int64_t t = v[j];
                    v[j] = v[j - gap];
                    v[j - gap] = t;
                }
        return;
    }
    const uint64_t flip = (uint64_t)1 << 63;
    uint64_t all_or = 0, all_and = ~(uint64_t)0;
    for (size_t i = 0; i < n; i++) {
        a[i] ^= flip;
        all_or |= a[i];
        all_and &= a[i];
    }
    uint64_t *src = a, *dst = b;
    for (int shift = 0; shift < 64; shift += 8) {
        if ((((all_or ^ all_and) >> shift) & 0xff) == 0)
            continue; /* every value has the same byte here */
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++)
            count[(src[i] >> shift) & 0xff]++;
        size_t pos = 0;
        for (int k = 0; k < 256; k++) {
            size_t c = count[k];
            count[k] = pos;
            pos += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i] >> shift) & 0xff]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    for (size_t i = 0; i < n; i++)
        a[i] = src[i] ^ flip;
    free(b);
}

/* Linear interpolation between closest ranks (numpy's default), so that the
 * median of an even count is the mean of the two middle values. */
static double percentile(const int64_t *sorted, size_t n, double p)
{
    double pos = p * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    double frac = pos - (double)lo;
    return (double)sorted[lo] + frac * (double)(sorted[hi] - sorted[lo]);
}

void an_dist(gt_dist *d, int64_t *durations, size_t n)
{
    memset(d, 0, sizeof *d);
    if (n == 0)
        return;
    sort_i64(durations, n);
    d->n = (int64_t)n;
    for (size_t i = 0; i < n; i++) /* saturates: a damaged trace's durations may add past INT64_MAX */
        d->total_ns = gt_sat_add(d->total_ns, durations[i]);
    d->min_ns = durations[0];
    d->max_ns = durations[n - 1];
    d->mean_ns = (double)d->total_ns / (double)n;
    d->median_ns = percentile(durations, n, 0.5);
    d->p95_ns = percentile(durations, n, 0.95);
}

size_t an_first_act(const an_model *m, int64_t from_ns)
{
    int64_t t = from_ns > INT64_MIN + m->max_act_ns ? from_ns - m->max_act_ns : INT64_MIN;
    return GT_LOWER_BOUND(m->acts, m->n_acts, start_ns, t);
}

int64_t an_busy(const an_model *m, int32_t device, bool kernels_only, int64_t from_ns, int64_t to_ns)
{
    int64_t busy = 0, cur_s = 0, cur_e = INT64_MIN;
    for (size_t i = an_first_act(m, from_ns); i < m->n_acts && m->acts[i].start_ns < to_ns; i++) {
        const an_act *a = &m->acts[i];
        if ((device != AN_ANY_DEVICE && a->device != device) ||
            (kernels_only && a->kind != GT_EV_KERNEL && a->kind != GT_EV_CPU_OP))
            continue;
        int64_t s = a->start_ns < from_ns ? from_ns : a->start_ns;
        int64_t e = a->end_ns > to_ns ? to_ns : a->end_ns;
        if (e <= s)
            continue;
        if (s > cur_e) {
            if (cur_e > cur_s)
                busy += cur_e - cur_s;
            cur_s = s;
            cur_e = e;
        } else if (e > cur_e) {
            cur_e = e;
        }
    }
    if (cur_e > cur_s)
        busy += cur_e - cur_s;
    return busy;
}

char *an_strdup(const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s ? s : "", n);
    return p;
}

char *an_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *p = malloc((size_t)n + 1);
    if (!p)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void an_json_dist(gt_json *j, const char *key, const gt_dist *d)
{
    gt_json_key(j, key);
    gt_json_object(j);
    gt_json_kv_int(j, "n", d->n);
    gt_json_kv_int(j, "total_ns", d->total_ns);
    gt_json_kv_int(j, "min_ns", d->min_ns);
    gt_json_kv_int(j, "max_ns", d->max_ns);
    gt_json_kv_num(j, "mean_ns", d->mean_ns);
    gt_json_kv_num(j, "median_ns", d->median_ns);
    gt_json_kv_num(j, "p95_ns", d->p95_ns);
    gt_json_end(j);
}

const char *an_rank_label(char *buf, size_t n, const gt_comm_rank *k)
{
    char dev[24] = "";
    if (k->device_id >= 0)
        snprintf(dev, sizeof dev, " dev %d", k->device_id);
    if (k->rank >= 0)
        snprintf(buf, n, "rank %d (pid %lld)%s", k->rank, (long long)k->pid, dev);
    else
        snprintf(buf, n, "pid %lld%s", (long long)k->pid, dev);
    return buf;
}
