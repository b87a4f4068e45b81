/* diff.c: compares two reports, BEFORE and AFTER (gtrace diff): step time,
 * utilization, idle time by cause, kernel time by name, copies, communication
 * (mean over ranks) and memory peaks, each with its relative change and
 * whether that is better or worse.
 * When both traces have steps, time totals are per step, so runs of
 * different lengths compare. It computes no report itself. */
#include "analyze_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct rows {
    gt_diff_row *v;
    size_t n, cap;
} rows;

/* lower_better: +1 when a smaller value is an improvement, -1 when a larger one is. */
static int add_row(rows *R, const char *metric, const char *unit, double before, double after, int lower_better)
{
    if (R->n == R->cap) {
        size_t ncap = R->cap ? R->cap * 2 : 32;
        gt_diff_row *nv = realloc(R->v, ncap * sizeof *nv);
        if (!nv)
            return gt_error_set(GT_ERR_NOMEM, "diff: out of memory");
        R->v = nv;
        R->cap = ncap;
    }
    gt_diff_row *r = &R->v[R->n];
    r->metric = an_strdup(metric);
    if (!r->metric)
        return gt_error_set(GT_ERR_NOMEM, "diff: out of memory");
    r->unit = unit;
    r->presence = 0;
    r->before = before;
    r->after = after;
    r->change = before != 0 ? (after - before) / fabs(before) : 0;
    double scale = fabs(before) > fabs(after) ? fabs(before) : fabs(after);
    if (scale == 0 || fabs(after - before) <= 0.01 * scale)
        r->verdict = 0;
    else
        r->verdict = (after < before) == (lower_better > 0) ? 1 : -1;
    R->n++;
    return 0;
}

static double busiest_util(const gt_report *r)
{
    double u = 0;
    for (size_t i = 0; i < r->n_devices; i++)
        if (r->devices[i].utilization > u)
            u = r->devices[i].utilization;
    return u;
}

static const gt_name_row *find_kernel(const gt_report *r, const char *name)
{
    for (size_t i = 0; i < r->n_kernels; i++)
        if (strcmp(r->kernels[i].name, name) == 0)
            return &r->kernels[i];
    return NULL;
}

/* The kernel time of a name in r: 0 when r lists every name and not this
 * one, -1 when r's list was cut and the name may be below it. */
static double kernel_time(const gt_report *r, const char *name)
{
    const gt_name_row *k = find_kernel(r, name);
    if (k)
        return (double)k->d.total_ns;
    return (int64_t)r->n_kernels == r->n_kernel_names ? 0 : -1;
}

static int kernel_rows(rows *R, const gt_report *a, const gt_report *b, double pa, double pb, const char *per)
{
    int rc;
    char metric[600];
    for (int side = 0; side < 2; side++) {
        const gt_report *x = side ? b : a;
        for (size_t i = 0; i < x->n_kernels; i++) {
            const char *name = x->kernels[i].name;
            if (side == 1 && find_kernel(a, name))
                continue; /* done from a's side */
            double tb = kernel_time(a, name), ta = kernel_time(b, name);
            if (tb < 0 || ta < 0)
                continue;
            snprintf(metric, sizeof metric, "%s time%s: %s", a->cpu_timeline ? "CPU op" : "kernel", per, name);
            if ((rc = add_row(R, metric, "ns", tb / pa, ta / pb, 1)) < 0)
                return rc;
            /* a kernel that appears or disappears (a fusion, another algorithm) is not by itself
             * better or worse: the step time says that */
            gt_diff_row *r = &R->v[R->n - 1];
            if ((tb == 0) != (ta == 0)) {
                r->presence = tb == 0 ? 1 : -1;
                r->verdict = 0;
            }
        }
    }
    return 0;
}

static void copy_totals(const gt_report *r, int kind, double *n, double *bytes, double *ns, double *pageable)
{
    *n = *bytes = *ns = *pageable = 0;
    for (size_t i = 0; i < r->n_copies; i++) {
        const gt_copy_row *c = &r->copies[i];
        if (kind < 0 ? c->copy_kind < 0 : c->copy_kind != kind)
            continue;
        *n += (double)c->n;
        *bytes += (double)c->bytes;
        *ns += (double)c->total_ns;
        *pageable += (double)c->n_pageable;
    }
}

/* Communication, as means over ranks per step: when either run has some and
 * both are measured alike (both per step, or both over their window). */
static int comm_rows(rows *R, const gt_comm *a, const gt_comm *b)
{
    int rc;
    if (a->n_ranks == 0 && b->n_ranks == 0)
        return 0;
    bool per_step = (a->n_ranks == 0 || a->per_step) && (b->n_ranks == 0 || b->per_step);
    bool window = (a->n_ranks == 0 || !a->per_step) && (b->n_ranks == 0 || !b->per_step);
    if (!per_step && !window)
        return 0; /* one per step, the other over its whole run: not comparable */
    const char *per = per_step ? " per step" : "";
    char metric[128];
    snprintf(metric, sizeof metric, "communication%s", per);
    if ((rc = add_row(R, metric, "ns", a->comm_ns, b->comm_ns, 1)) < 0)
        return rc;
    snprintf(metric, sizeof metric, "exposed communication%s", per);
    if ((rc = add_row(R, metric, "ns", a->exposed_ns, b->exposed_ns, 1)) < 0)
        return rc;
    if ((rc = add_row(R, "communication hidden by compute", "%", 100 * a->hidden, 100 * b->hidden, -1)) < 0)
        return rc;
    snprintf(metric, sizeof metric, "collectives%s", per);
    if ((rc = add_row(R, metric, "count", a->collectives, b->collectives, 1)) < 0)
        return rc;
    R->v[R->n - 1].verdict = 0; /* fewer, bigger collectives are not better by themselves */
    return 0;
}

int gt_diff_compute(gt_diff **out, const gt_report *a, const gt_report *b)
{
    rows R = {0};
    gt_diff *d = NULL;
    int rc;
    *out = NULL;
    if (!a || !b)
        return gt_error_set(GT_ERR_INVALID, "gt_diff_compute: missing report");
    bool per_step = a->n_steps > 0 && b->n_steps > 0;
    double pa = per_step ? (double)a->n_steps : 1, pb = per_step ? (double)b->n_steps : 1;
    const char *per = per_step ? " per step" : "";
    char metric[128];

    if ((rc = add_row(&R, "wall time", "ns", (double)a->wall_ns, (double)b->wall_ns, 1)) < 0)
        goto cleanup;
    if (per_step) {
        if ((rc = add_row(&R, "step time mean", "ns", a->step_time.mean_ns, b->step_time.mean_ns, 1)) < 0 ||
            (rc = add_row(&R, "step time median", "ns", a->step_time.median_ns, b->step_time.median_ns, 1)) < 0 ||
            (rc = add_row(&R, "step time p95", "ns", a->step_time.p95_ns, b->step_time.p95_ns, 1)) < 0)
            goto cleanup;
    }
    if ((rc = add_row(&R, "device utilization", "%", 100 * busiest_util(a), 100 * busiest_util(b), -1)) < 0)
        goto cleanup;
    snprintf(metric, sizeof metric, "idle time%s", per);
    if ((rc = add_row(&R, metric, "ns", (double)a->gaps.idle_ns / pa, (double)b->gaps.idle_ns / pb, 1)) < 0)
        goto cleanup;
    for (int c = 0; c < GT_GAP_N_CAUSES; c++) {
        snprintf(metric, sizeof metric, "idle %s%s", gt_gap_cause_name((gt_gap_cause)c), per);
        if ((rc = add_row(&R, metric, "ns", (double)a->gaps.idle_by_cause_ns[c] / pa,
                          (double)b->gaps.idle_by_cause_ns[c] / pb, 1)) < 0)
            goto cleanup;
    }
    if ((rc = kernel_rows(&R, a, b, pa, pb, per)) < 0)
        goto cleanup;
    static const int kinds[] = {GT_COPY_HTOD, GT_COPY_DTOH, GT_COPY_DTOD, -1};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        double na, ba, ta, qa, nb, bb, tb, qb;
        copy_totals(a, kinds[k], &na, &ba, &ta, &qa);
        copy_totals(b, kinds[k], &nb, &bb, &tb, &qb);
        if (na == 0 && nb == 0)
            continue;
        snprintf(metric, sizeof metric, "%s copies%s", gt_copy_kind_name(kinds[k]), per);
        if ((rc = add_row(&R, metric, "count", na / pa, nb / pb, 1)) < 0)
            goto cleanup;
        snprintf(metric, sizeof metric, "%s copy time%s", gt_copy_kind_name(kinds[k]), per);
        if ((rc = add_row(&R, metric, "ns", ta / pa, tb / pb, 1)) < 0)
            goto cleanup;
        if (kinds[k] >= 0) {
            snprintf(metric, sizeof metric, "%s bandwidth", gt_copy_kind_name(kinds[k]));
            if ((rc = add_row(&R, metric, "GB/s", ta > 0 ? ba / ta : 0, tb > 0 ? bb / tb : 0, -1)) < 0)
                goto cleanup;
            snprintf(metric, sizeof metric, "%s pageable copies%s", gt_copy_kind_name(kinds[k]), per);
            if ((rc = add_row(&R, metric, "count", qa / pa, qb / pb, 1)) < 0)
                goto cleanup;
        }
    }
    if ((rc = comm_rows(&R, &a->comm, &b->comm)) < 0)
        goto cleanup;
    if ((rc = add_row(&R, "peak allocated", "bytes", (double)a->memory.peak_allocated_bytes,
                      (double)b->memory.peak_allocated_bytes, 1)) < 0 ||
        (rc = add_row(&R, "peak reserved", "bytes", (double)a->memory.peak_reserved_bytes,
                      (double)b->memory.peak_reserved_bytes, 1)) < 0)
        goto cleanup;
    size_t fa = 0, fb = 0;
    for (size_t i = 0; i < a->n_advice; i++)
        fa += a->advice[i].fired;
    for (size_t i = 0; i < b->n_advice; i++)
        fb += b->advice[i].fired;
    if ((rc = add_row(&R, "advice rules fired", "count", (double)fa, (double)fb, 1)) < 0)
        goto cleanup;

    d = calloc(1, sizeof *d);
    if (!d || !(d->before_path = an_strdup(a->path)) || !(d->after_path = an_strdup(b->path))) {
        rc = gt_error_set(GT_ERR_NOMEM, "diff: out of memory");
        goto cleanup;
    }
    d->rows = R.v;
    d->n_rows = R.n;
    R.v = NULL;
    R.n = 0;
    *out = d;
    d = NULL;
cleanup:
    for (size_t i = 0; i < R.n; i++)
        free(R.v[i].metric);
    free(R.v);
    gt_diff_free(d);
    return rc;
}

void gt_diff_free(gt_diff *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_rows; i++)
        free(d->rows[i].metric);
    free(d->rows);
    free(d->before_path);
    free(d->after_path);
    free(d);
}

int gt_diff_print_text(const gt_diff *d, FILE *f)
{
    int better = 0, worse = 0;
    fprintf(f, "gtrace diff\n  before: %s\n  after:  %s\n\n", d->before_path, d->after_path);
    fprintf(f, "%-48s %14s %14s %9s\n", "metric", "before", "after", "change");
    for (size_t i = 0; i < d->n_rows; i++) {
        const gt_diff_row *r = &d->rows[i];
        char b[40], a[40], c[40];
        gt_diff_cell(b, sizeof b, r->unit, r->before);
        gt_diff_cell(a, sizeof a, r->unit, r->after);
        better += r->verdict > 0;
        worse += r->verdict < 0;
        if (r->presence)
            fprintf(f, "%-48.48s %14s %14s %9s\n", r->metric, b, a, r->presence > 0 ? "new" : "gone");
        else
            fprintf(f, "%-48.48s %14s %14s %9s %s\n", r->metric, b, a, gt_diff_change(c, sizeof c, r->change),
                    r->verdict > 0 ? "better" : r->verdict < 0 ? "WORSE" : "");
    }
    size_t n_new = 0, n_gone = 0;
    for (size_t i = 0; i < d->n_rows; i++) {
        n_new += d->rows[i].presence > 0;
        n_gone += d->rows[i].presence < 0;
    }
    fprintf(f, "\n%d better, %d worse, %zu unchanged", better, worse,
            d->n_rows - (size_t)better - (size_t)worse - n_new - n_gone);
    if (n_new || n_gone)
        fprintf(f, "; by name: %zu new, %zu gone", n_new, n_gone);
    fputc('\n', f);
    return ferror(f) ? gt_error_set(GT_ERR_IO, "cannot write the diff") : 0;
}

int gt_diff_print_json(const gt_diff *d, FILE *f)
{
    fputs("{\"before\":", f);
    an_json_str(f, d->before_path);
    fputs(",\"after\":", f);
    an_json_str(f, d->after_path);
    fputs(",\"rows\":[", f);
    for (size_t i = 0; i < d->n_rows; i++) {
        const gt_diff_row *r = &d->rows[i];
        fputs(i ? ",{\"metric\":" : "{\"metric\":", f);
        an_json_str(f, r->metric);
        fputs(",\"unit\":", f);
        an_json_str(f, r->unit);
        fputs(",\"before\":", f);
        an_json_num(f, r->before);
        fputs(",\"after\":", f);
        an_json_num(f, r->after);
        fputs(",\"change\":", f);
        an_json_num(f, r->change);
        fprintf(f, ",\"verdict\":\"%s\"}",
                r->presence > 0   ? "new"
                : r->presence < 0 ? "gone"
                : r->verdict > 0  ? "better"
                : r->verdict < 0  ? "worse"
                                  : "same");
    }
    fputs("]}\n", f);
    return ferror(f) ? gt_error_set(GT_ERR_IO, "cannot write the diff") : 0;
}
