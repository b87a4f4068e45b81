/* stats.c: the statistics gtrace diff (and the utilization advice) decide
 * with: a statistic of samples (median, mean, p95), the warm-up steps at the
 * start of a run, and a bootstrap interval for the change of a statistic
 * between two groups of runs. Pure functions of arrays; it knows nothing of
 * traces. The bootstrap draws from its own seeded generator, so a diff is
 * the same every time it is run. */
#include "diff_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void swap(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* Puts the k-th smallest at v[k], smaller ones before, larger after (Hoare's select). */
static void select_k(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                swap(&v[i], &v[j]);
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

/* The q-quantile, interpolated between the two order statistics around it. */
static double quantile(double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t k = (size_t)pos;
    select_k(v, n, k);
    double x = v[k];
    if (k + 1 >= n || pos == (double)k)
        return x;
    double y = v[k + 1]; /* the next order statistic: the smallest above k */
    for (size_t i = k + 2; i < n; i++)
        if (v[i] < y)
            y = v[i];
    return x + (pos - (double)k) * (y - x);
}

double an_stat_of(an_stat s, double *v, size_t n)
{
    if (n == 0)
        return NAN;
    if (s == AN_STAT_MEAN) {
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += v[i];
        return sum / (double)n;
    }
    return quantile(v, n, s == AN_STAT_P95 ? 0.95 : s == AN_STAT_P10 ? 0.10 : 0.5);
}

size_t an_warmup_n(const double *v, size_t n, double k)
{
    if (n < 2)
        return 0;
    double *w = malloc(n * sizeof *w);
    if (!w)
        return 1;
    memcpy(w, v, n * sizeof *w);
    double med = quantile(w, n, 0.5);
    for (size_t i = 0; i < n; i++)
        w[i] = fabs(v[i] - med);
    double mad = 1.4826 * quantile(w, n, 0.5);
    free(w);
    if (mad < 0.01 * fabs(med))
        mad = 0.01 * fabs(med);
    size_t nw = 1;
    while (nw < n / 2 && v[nw] > med + k * mad)
        nw++;
    return nw;
}

static uint64_t next_rand(uint64_t *s) /* xorshift64* */
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

static size_t draw(uint64_t *s, size_t n)
{
    return (size_t)((next_rand(s) >> 11) % n);
}

/* One bootstrap replicate of a side: runs drawn with replacement (when
 * there are several), each drawn run's steps in circular blocks. */
static size_t resample(double *out, const an_series *x, size_t nx, uint64_t *s)
{
    size_t k = 0;
    for (size_t r = 0; r < nx; r++) {
        const an_series *run = nx > 1 ? &x[draw(s, nx)] : &x[0];
        size_t n = run->n, block = (size_t)lround(cbrt((double)n));
        if (block < 1)
            block = 1;
        for (size_t got = 0; got < n;) {
            size_t start = draw(s, n);
            for (size_t j = 0; j < block && got < n; j++, got++)
                out[k++] = run->v[(start + j) % n];
        }
    }
    return k;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int an_boot_change(an_change *out, an_stat st, const an_series *a, size_t na, const an_series *b, size_t nb,
                   int n_boot, uint64_t seed)
{
    /* replicates draw runs with replacement: room for the longest runs, times the run count */
    size_t max_a = 0, max_b = 0, sum_a = 0, sum_b = 0;
    for (size_t i = 0; i < na; i++) {
        max_a = a[i].n > max_a ? a[i].n : max_a;
        sum_a += a[i].n;
    }
    for (size_t i = 0; i < nb; i++) {
        max_b = b[i].n > max_b ? b[i].n : max_b;
        sum_b += b[i].n;
    }
    size_t cap = max_a * na > max_b * nb ? max_a * na : max_b * nb;
    if (sum_a > cap)
        cap = sum_a;
    if (sum_b > cap)
        cap = sum_b;
    double *buf = malloc((cap ? cap : 1) * sizeof *buf);
    double *reps = malloc((size_t)(n_boot > 0 ? n_boot : 1) * 2 * sizeof *reps);
    if (!buf || !reps) {
        free(buf);
        free(reps);
        return gt_error_set(GT_ERR_NOMEM, "diff: out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < a[i].n; j++)
            buf[k++] = a[i].v[j];
    out->before = an_stat_of(st, buf, k);
    k = 0;
    for (size_t i = 0; i < nb; i++)
        for (size_t j = 0; j < b[i].n; j++)
            buf[k++] = b[i].v[j];
    out->after = an_stat_of(st, buf, k);
    uint64_t s = seed ? seed : 0x9E3779B97F4A7C15ULL;
    double *rel = reps + (n_boot > 0 ? n_boot : 1); /* the change relative to the replicate's own before */
    bool rel_ok = true;
    for (int r = 0; r < n_boot; r++) {
        size_t n = resample(buf, a, na, &s);
        double x = an_stat_of(st, buf, n);
        n = resample(buf, b, nb, &s);
        reps[r] = an_stat_of(st, buf, n) - x;
        rel_ok &= x != 0;
        rel[r] = x != 0 ? reps[r] / fabs(x) : 0;
    }
    out->rlo = out->rhi = NAN;
    if (n_boot > 0) {
        qsort(reps, (size_t)n_boot, sizeof *reps, cmp_double);
        out->lo = quantile(reps, (size_t)n_boot, 0.025);
        out->hi = quantile(reps, (size_t)n_boot, 0.975);
        if (rel_ok) {
            qsort(rel, (size_t)n_boot, sizeof *rel, cmp_double);
            out->rlo = quantile(rel, (size_t)n_boot, 0.025);
            out->rhi = quantile(rel, (size_t)n_boot, 0.975);
        }
    } else {
        out->lo = out->hi = out->after - out->before;
    }
    free(buf);
    free(reps);
    return 0;
}

size_t an_busy_runs(bool *busy, double *slower, size_t *fastest_run, const an_series *runs, const double *wait,
                    size_t n, double share)
{
    size_t longest = 0, n_busy = 0, f = n;
    for (size_t i = 0; i < n; i++)
        longest = runs[i].n > longest ? runs[i].n : longest;
    double *w = malloc((longest ? longest : 1) * sizeof *w), fastest = INFINITY;
    for (size_t i = 0; i < n; i++) {
        busy[i] = false;
        slower[i] = NAN;
        if (!w || runs[i].n < GT_DIFF_MIN_SAMPLES)
            continue; /* out of memory: every run kept, as with one run */
        memcpy(w, runs[i].v, runs[i].n * sizeof *w);
        slower[i] = quantile(w, runs[i].n, 0.10);
        if (slower[i] < fastest) {
            fastest = slower[i];
            f = i;
        }
    }
    free(w);
    *fastest_run = f;
    for (size_t i = 0; i < n; i++) {
        if (isnan(slower[i]))
            continue;
        slower[i] = fastest > 0 ? slower[i] / fastest - 1 : 0;
        /* without the scheduler's account on both, the slowdown alone decides */
        bool waited = !wait || isnan(wait[i]) || isnan(wait[f]) || wait[i] - wait[f] > AN_BUSY_WAIT_MARGIN;
        busy[i] = i != f && slower[i] > share && waited;
        n_busy += busy[i];
    }
    return n_busy;
}

double an_runs_spread(const an_series *const *sides, const size_t *n_runs, size_t n_sides, size_t *used)
{
    double ss = 0;
    size_t dof = 0, longest = 0;
    for (size_t k = 0; k < n_sides; k++) {
        used[k] = 0;
        for (size_t i = 0; i < n_runs[k]; i++)
            longest = sides[k][i].n > longest ? sides[k][i].n : longest;
    }
    double *w = malloc((longest ? longest : 1) * sizeof *w);
    double *p = malloc((longest ? longest : 1) * sizeof *p);
    for (size_t k = 0; w && p && k < n_sides; k++) {
        size_t m = 0;
        for (size_t i = 0; i < n_runs[k]; i++) {
            const an_series *x = &sides[k][i];
            if (x->n < GT_DIFF_MIN_SAMPLES)
                continue;
            memcpy(w, x->v, x->n * sizeof *w);
            double q = quantile(w, x->n, 0.10);
            if (q > 0)
                p[m++] = log(q);
        }
        used[k] = m;
        if (m < 2)
            continue;
        double mean = 0;
        for (size_t i = 0; i < m; i++)
            mean += p[i];
        mean /= (double)m;
        for (size_t i = 0; i < m; i++)
            ss += (p[i] - mean) * (p[i] - mean);
        dof += m - 1;
    }
    free(w);
    free(p);
    return dof ? sqrt(ss / (double)dof) : NAN;
}

double an_smallest_change(double spread, size_t na, size_t nb)
{
    if (isnan(spread) || na == 0 || nb == 0)
        return NAN;
    return exp(AN_FOUND_Z * spread * sqrt(1.0 / (double)na + 1.0 / (double)nb)) - 1;
}

double an_runs_for_change(double spread, double change)
{
    if (isnan(spread) || !(change > 0))
        return NAN;
    double n = 2 * pow(AN_FOUND_Z * spread / log1p(change), 2);
    return n < 2 ? 2 : ceil(n);
}
