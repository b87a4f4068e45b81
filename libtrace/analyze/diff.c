/* diff.c: compares runs before a change with runs after it (gtrace diff):
 * step time, utilization, idle time by cause, kernel time by name, copies,
 * communication (mean over ranks) and memory, each with its change, a 95%
 * interval for it and a verdict: better, worse or the same. Each step is a
 * sample (diff_samples.c measures them); warm-up steps are left out; the
 * interval is stats.c's bootstrap over runs and steps, so noise between
 * steps and between runs widens it instead of making a verdict. Rows that
 * are one figure per run (wall time, peaks) are judged over runs. It
 * computes no report itself. */
#include "diff_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void gt_diff_options_init(gt_diff_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->noise_floor = 0.05;
    opt->n_boot = 2000;
}

typedef struct rows {
    gt_diff_row *v;
    size_t n, cap;
} rows;

typedef struct side {
    gt_diff_run *const *runs;
    size_t n;
    size_t *warm; /* (n) warm-up steps left out of each run */
} side;

/* The runs a side was given, and which of them ran on a busier machine. */
typedef struct given {
    side all;
    bool *busy;         /* (n) left out of every row */
    bool busy_kept;     /* runs were busy, but too many to leave out: all kept */
    double *slower;     /* (n) an_busy_runs' */
    double *wait;       /* (n) the share of its CPU time spent waiting for one; NaN unknown */
    size_t fastest;     /* an_busy_runs' fastest run; n: none */
    gt_diff_run **kept; /* (n) the runs compared, then their warm-up counts: */
    size_t *kept_warm;
} given;

typedef struct ctx {
    rows R;
    side a, b;
    const gt_diff_options *opt;
    double *buf; /* room for every kept sample of one side's runs */
    an_series *ser;
    double min_ns; /* a time per step changed by less is the same: AN_STEP_SHARE of the step time */
} ctx;

/* Of a step's time: a change smaller than this share of it (a few hundred ns
 * of launch gaps in a 4 ms step) does not matter, whatever its percentage. */
#define AN_STEP_SHARE 0.005

/* How a row's figures are judged when the sides' samples are one figure per run. */
enum { TIMED = 0, EXACT = 1 }; /* EXACT: counts and bytes, not noisy: the floor alone judges */

static gt_diff_row *new_row(rows *R, const char *metric, gt_metric_id id)
{
    if (R->n == R->cap) {
        size_t ncap = R->cap ? R->cap * 2 : 32;
        gt_diff_row *nv = realloc(R->v, ncap * sizeof *nv);
        if (!nv)
            return NULL;
        R->v = nv;
        R->cap = ncap;
    }
    gt_diff_row *r = &R->v[R->n];
    memset(r, 0, sizeof *r);
    if (!(r->metric = an_strdup(metric)))
        return NULL;
    r->unit = gt_metric_get(id)->unit;
    r->metric_id = (int)id;
    r->lo = r->hi = NAN;
    R->n++;
    return r;
}

/* lower_better: +1 when a smaller value is an improvement, -1 when a larger one is.
 * ch: the bootstrap's, or NULL for one figure a side. */
static void judge(gt_diff_row *r, double floor, const an_change *ch, int lower_better)
{
    double d = r->after - r->before, lo_abs = ch ? ch->lo : NAN, hi_abs = ch ? ch->hi : NAN;
    double scale = fabs(r->before) > fabs(r->after) ? fabs(r->before) : fabs(r->after);
    r->change = r->before != 0 ? d / fabs(r->before) : 0;
    if (ch && !isnan(ch->rlo)) { /* each replicate against its own before: never under -100% for times */
        r->lo = ch->rlo;
        r->hi = ch->rhi;
    } else if (ch && r->before != 0) {
        r->lo = lo_abs / fabs(r->before);
        r->hi = hi_abs / fabs(r->before);
    }
    bool includes_zero = !isnan(lo_abs) && lo_abs <= 0 && hi_abs >= 0;
    if (scale == 0 || fabs(d) < floor * scale || includes_zero)
        r->verdict = 0;
    else
        r->verdict = (d < 0) == (lower_better > 0) ? 1 : -1;
}

/* The kept samples of key of one side's runs into c->ser (NaN left out);
 * absent_zero: a run without the metric had none of it in each step. */
static size_t gather(ctx *c, const side *s, const char *key, bool absent_zero, size_t *n_series, size_t *n_runs_with)
{
    size_t k = 0, ns = 0;
    *n_runs_with = 0;
    for (size_t i = 0; i < s->n; i++) {
        const gt_diff_run *run = s->runs[i];
        const double *v = an_run_samples(run, key);
        if (!v && !absent_zero)
            continue;
        *n_runs_with += v != NULL;
        size_t from = k;
        for (size_t j = s->warm[i]; j < run->n_steps; j++)
            if (!v || !isnan(v[j]))
                c->buf[k++] = v ? v[j] : 0;
        if (k > from)
            c->ser[ns++] = (an_series){c->buf + from, k - from};
    }
    *n_series = ns;
    return k;
}

/* A row of metric id from per-step samples of key (stat over each side's
 * kept steps), its unit and direction the registry's; fa, fb: the report
 * figures when a side has no steps. */
static int step_judged(ctx *c, gt_metric_id id, const char *metric, const char *key, an_stat st, bool absent_zero,
                    double fa, double fb)
{
    const char *unit = gt_metric_get(id)->unit;
    int lower_better = gt_metric_get(id)->lower_better;
    size_t na, nb, wa, wb;
    size_t ka = gather(c, &c->a, key, absent_zero, &na, &wa);
    an_series *sa = c->ser, *sb = c->ser + na;
    double *mark = c->buf + ka;
    /* b's samples go after a's in the same buffers */
    double *save_buf = c->buf;
    an_series *save_ser = c->ser;
    c->buf = mark;
    c->ser = sb;
    size_t kb = gather(c, &c->b, key, absent_zero, &nb, &wb);
    c->buf = save_buf;
    c->ser = save_ser;
    gt_diff_row *r = new_row(&c->R, metric, id);
    if (!r)
        return gt_error_set(GT_ERR_NOMEM, "diff: out of memory");
    if (wa + wb == 0 || ka == 0 || kb == 0) { /* no steps (or none with it): one figure each */
        r->before = fa;
        r->after = fb;
        judge(r, c->opt->noise_floor, NULL, lower_better);
        if (r->verdict && !(c->a.n > 0 && c->a.runs[0]->n_steps > 0 && c->b.runs[0]->n_steps > 0)) {
            r->verdict = 0; /* beyond the floor, but one figure cannot tell a change from noise */
            r->too_few = true;
        }
        return 0;
    }
    r->n_before = (int64_t)ka;
    r->n_after = (int64_t)kb;
    an_change ch;
    if (ka < GT_DIFF_MIN_SAMPLES || kb < GT_DIFF_MIN_SAMPLES) {
        int rc = an_boot_change(&ch, st, sa, na, sb, nb, 0, c->opt->seed);
        if (rc < 0)
            return rc;
        r->before = ch.before;
        r->after = ch.after;
        judge(r, c->opt->noise_floor, NULL, lower_better);
        r->too_few = r->verdict != 0 || r->before != r->after;
        r->verdict = 0;
        return 0;
    }
    int rc = an_boot_change(&ch, st, sa, na, sb, nb, c->opt->n_boot, c->opt->seed);
    if (rc < 0)
        return rc;
    r->before = ch.before;
    r->after = ch.after;
    judge(r, c->opt->noise_floor, &ch, lower_better);
    if (strcmp(unit, "ns") == 0 && fabs(r->after - r->before) < c->min_ns)
        r->verdict = 0;
    if (r->verdict && strcmp(unit, "ns") == 0) {
        /* Load from other programs only adds time, and comes and goes: it
         * moves the median but leaves the fastest steps. A change of the
         * code moves them too, so a time verdict needs the 10th percentile
         * to say the same. */
        gt_diff_row low = *r;
        if ((rc = an_boot_change(&ch, AN_STAT_P10, sa, na, sb, nb, c->opt->n_boot, c->opt->seed)) < 0)
            return rc;
        low.before = ch.before;
        low.after = ch.after;
        judge(&low, c->opt->noise_floor, &ch, lower_better);
        if (low.verdict != r->verdict)
            r->verdict = 0;
    }
    return 0;
}

static int step_row(ctx *c, gt_metric_id id, const char *metric, const char *key, an_stat st, bool absent_zero,
                    double fa, double fb)
{
    int rc = step_judged(c, id, metric, key, st, absent_zero, fa, fb);
    if (rc == 0 && gt_metric_get(id)->lower_better == 0) {
        c->R.v[c->R.n - 1].verdict = 0; /* a metric neither way better (gt_metrics.h) */
        c->R.v[c->R.n - 1].too_few = false;
    }
    return rc;
}

/* The row of id (member arg, or NULL) named as the registry names it. */
static int named_row(ctx *c, gt_metric_id id, const char *arg, const char *per, bool absent_zero, double fa, double fb)
{
    char metric[600], key[600];
    gt_metric_name(metric, sizeof metric, id, arg, gt_metric_get(id)->per_step ? per : "");
    gt_metric_name(key, sizeof key, id, arg, "");
    return step_row(c, id, metric, key, AN_STAT_MEDIAN, absent_zero, fa, fb);
}

/* A row of one figure per run: the median over each side's runs; with
 * GT_DIFF_MIN_SAMPLES runs a side, the bootstrap over runs judges; with
 * fewer, the noise floor alone for exact figures, none for timed ones. */
static int run_row(ctx *c, gt_metric_id id, const double *va, const double *vb, int exact)
{
    const gt_metric *m = gt_metric_get(id);
    int lower_better = m->lower_better;
    gt_diff_row *r = new_row(&c->R, m->label, id);
    if (!r)
        return gt_error_set(GT_ERR_NOMEM, "diff: out of memory");
    an_series *sa = c->ser, *sb = c->ser + c->a.n;
    for (size_t i = 0; i < c->a.n; i++)
        sa[i] = (an_series){&va[i], 1};
    for (size_t i = 0; i < c->b.n; i++)
        sb[i] = (an_series){&vb[i], 1};
    bool enough = c->a.n >= GT_DIFF_MIN_SAMPLES && c->b.n >= GT_DIFF_MIN_SAMPLES;
    an_change ch;
    int rc = an_boot_change(&ch, AN_STAT_MEDIAN, sa, c->a.n, sb, c->b.n, enough ? c->opt->n_boot : 0, c->opt->seed);
    if (rc < 0)
        return rc;
    r->before = ch.before;
    r->after = ch.after;
    r->by_runs = true;
    r->n_before = (int64_t)c->a.n;
    r->n_after = (int64_t)c->b.n;
    judge(r, c->opt->noise_floor, enough ? &ch : NULL, lower_better);
    if (!enough && exact != EXACT && r->verdict) {
        r->verdict = 0;
        r->too_few = true;
    }
    return 0;
}

/* A per-run figure of every run: f(report) into va and vb. */
#define PER_RUN(expr)                                                                                              \
    do {                                                                                                           \
        for (size_t i_ = 0; i_ < c->a.n; i_++) {                                                                   \
            const gt_report *R_ = c->a.runs[i_]->r;                                                                \
            va[i_] = (expr);                                                                                       \
            (void)R_;                                                                                              \
        }                                                                                                          \
        for (size_t i_ = 0; i_ < c->b.n; i_++) {                                                                   \
            const gt_report *R_ = c->b.runs[i_]->r;                                                                \
            vb[i_] = (expr);                                                                                       \
            (void)R_;                                                                                              \
        }                                                                                                          \
    } while (0)

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

/* Whether every run of s has the name, or lists every name (so lacks it). */
static bool all_known(const side *s, const char *name, double *total, double *steps)
{
    *total = *steps = 0;
    for (size_t i = 0; i < s->n; i++) {
        double t = kernel_time(s->runs[i]->r, name);
        if (t < 0)
            return false;
        *total += t;
        *steps += s->runs[i]->r->n_steps ? (double)s->runs[i]->r->n_steps : 1;
    }
    return true;
}

static int kernel_rows(ctx *c, const char *per)
{
    int rc;
    char metric[600], key[600];
    const gt_report *a0 = c->a.runs[0]->r;
    for (int sd = 0; sd < 2; sd++) {
        const side *s = sd ? &c->b : &c->a;
        for (size_t ri = 0; ri < s->n; ri++) {
            const gt_report *x = s->runs[ri]->r;
            for (size_t i = 0; i < x->n_kernels; i++) {
                const char *name = x->kernels[i].name;
                bool seen = false; /* done already, from an earlier run or side */
                for (int sd2 = 0; sd2 <= sd && !seen; sd2++) {
                    const side *s2 = sd2 ? &c->b : &c->a;
                    for (size_t r2 = 0; r2 < (sd2 == sd ? ri : s2->n) && !seen; r2++)
                        seen = find_kernel(s2->runs[r2]->r, name) != NULL;
                }
                if (seen)
                    continue;
                double ta, na, tb, nb;
                if (!all_known(&c->a, name, &ta, &na) || !all_known(&c->b, name, &tb, &nb))
                    continue;
                snprintf(metric, sizeof metric, "%s time%s: %s", a0->cpu_timeline ? "CPU op" : "kernel", per, name);
                gt_metric_name(key, sizeof key, GT_M_OP_TIME, name, "");
                if ((rc = step_row(c, GT_M_OP_TIME, metric, key, AN_STAT_MEDIAN, true, ta / na, tb / nb)) < 0)
                    return rc;
                /* a kernel that appears or disappears (a fusion, another algorithm) is not by itself
                 * better or worse: the step time says that */
                gt_diff_row *r = &c->R.v[c->R.n - 1];
                if ((ta == 0) != (tb == 0)) {
                    r->presence = ta == 0 ? 1 : -1;
                    r->verdict = 0;
                    r->too_few = false;
                }
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

static double per_step(const gt_report *r, double v)
{
    return r->n_steps ? v / (double)r->n_steps : v;
}

static int copy_rows(ctx *c, const char *per)
{
    static const int kinds[] = {GT_COPY_HTOD, GT_COPY_DTOH, GT_COPY_DTOD, -1};
    int rc;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        double n, bytes, ns, pg, fa[4] = {0}, fb[4] = {0};
        for (size_t i = 0; i < c->a.n + c->b.n; i++) {
            const gt_report *r = i < c->a.n ? c->a.runs[i]->r : c->b.runs[i - c->a.n]->r;
            double *f = i < c->a.n ? fa : fb;
            copy_totals(r, kinds[k], &n, &bytes, &ns, &pg);
            f[0] += per_step(r, n) / (double)(i < c->a.n ? c->a.n : c->b.n);
            f[1] += per_step(r, ns) / (double)(i < c->a.n ? c->a.n : c->b.n);
            f[2] += ns > 0 ? bytes / ns / (double)(i < c->a.n ? c->a.n : c->b.n) : 0;
            f[3] += per_step(r, pg) / (double)(i < c->a.n ? c->a.n : c->b.n);
        }
        if (fa[0] == 0 && fb[0] == 0)
            continue;
        const char *kind = gt_copy_kind_name(kinds[k]);
        if ((rc = named_row(c, GT_M_COPIES, kind, per, true, fa[0], fb[0])) < 0 ||
            (rc = named_row(c, GT_M_COPY_TIME, kind, per, true, fa[1], fb[1])) < 0)
            return rc;
        if (kinds[k] >= 0) {
            if ((rc = named_row(c, GT_M_BANDWIDTH, kind, per, false, fa[2], fb[2])) < 0 ||
                (rc = named_row(c, GT_M_PAGEABLE, kind, per, true, fa[3], fb[3])) < 0)
                return rc;
            /* counts are exact: one figure each still judges them */
            gt_diff_row *r = &c->R.v[c->R.n - 1];
            if (r->too_few && r->n_before == 0) {
                r->too_few = false;
                judge(r, c->opt->noise_floor, NULL, gt_metric_get(GT_M_PAGEABLE)->lower_better);
            }
        }
    }
    return 0;
}

/* Communication, as means over ranks per step: when either run has some and
 * both are measured alike (both per step, or both over their window). */
static int comm_rows(ctx *c, double *va, double *vb)
{
    int rc;
    bool any = false, per_step_ok = true, window_ok = true;
    for (size_t i = 0; i < c->a.n + c->b.n; i++) {
        const gt_comm *m = &(i < c->a.n ? c->a.runs[i] : c->b.runs[i - c->a.n])->r->comm;
        any |= m->n_ranks > 0;
        per_step_ok &= m->n_ranks == 0 || m->per_step;
        window_ok &= m->n_ranks == 0 || !m->per_step;
    }
    if (!any || (!per_step_ok && !window_ok))
        return 0; /* none, or one per step and the other over its whole run: not comparable */
    const char *per = per_step_ok ? " per step" : "";
    PER_RUN(R_->comm.comm_ns);
    if ((rc = named_row(c, GT_M_COMM, NULL, per, true, va[0], vb[0])) < 0)
        return rc;
    PER_RUN(R_->comm.exposed_ns);
    if ((rc = named_row(c, GT_M_EXPOSED, NULL, per, true, va[0], vb[0])) < 0)
        return rc;
    PER_RUN(100 * R_->comm.hidden);
    if ((rc = named_row(c, GT_M_HIDDEN, NULL, per, false, va[0], vb[0])) < 0)
        return rc;
    PER_RUN(R_->comm.collectives);
    return named_row(c, GT_M_COLLECTIVES, NULL, per, true, va[0], vb[0]);
}

static size_t side_samples(const side *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n += s->runs[i]->n_steps + 1;
    return n;
}

static int find_warmup(side *s, const gt_diff_options *opt)
{
    if (!(s->warm = calloc(s->n ? s->n : 1, sizeof *s->warm)))
        return gt_error_set(GT_ERR_NOMEM, "diff: out of memory");
    for (size_t i = 0; i < s->n && !opt->keep_warmup; i++) {
        const double *st = an_run_samples(s->runs[i], gt_metric_label(GT_M_STEP_TIME));
        s->warm[i] = st ? an_warmup_n(st, s->runs[i]->n_steps, AN_WARMUP_MADS) : 0;
    }
    return 0;
}

/* Of a run's threads' time on a CPU or waiting for one, the waiting; NaN
 * where the trace has no scheduler's account (an import, a kernel without
 * schedstat). */
static double wait_share(const gt_report *r)
{
    if (r->cpu_run_ns < 0 || r->cpu_wait_ns < 0 || r->cpu_run_ns + r->cpu_wait_ns <= 0)
        return NAN;
    return (double)r->cpu_wait_ns / ((double)r->cpu_run_ns + (double)r->cpu_wait_ns);
}

/* A run's step times after its warm-up steps. */
static an_series step_series(const gt_diff_run *run, size_t warm)
{
    const double *st = an_run_samples(run, gt_metric_label(GT_M_STEP_TIME));
    return st && run->n_steps > warm ? (an_series){st + warm, run->n_steps - warm} : (an_series){NULL, 0};
}

/* Leaves out the runs of g that ran on a busier machine (an_busy_runs),
 * unless the side has one run or keep_busy: the others are g->kept. They
 * are left out only while half the side's runs at least stay: where most
 * runs were busy, so was the machine, its fastest run was slowed too, and
 * the few runs left cannot say how runs differ (an interval over one run's
 * steps is narrow: a sure verdict on noise); then every run is kept and
 * g->busy_kept says so. */
static int find_busy(given *g, const gt_diff_options *opt)
{
    size_t n = g->all.n;
    g->busy = calloc(n, sizeof *g->busy);
    g->slower = malloc(n * sizeof *g->slower);
    g->wait = malloc(n * sizeof *g->wait);
    g->kept = malloc(n * sizeof *g->kept);
    g->kept_warm = malloc(n * sizeof *g->kept_warm);
    an_series *ser = malloc(n * sizeof *ser);
    g->fastest = n;
    if (!g->busy || !g->slower || !g->wait || !g->kept || !g->kept_warm || !ser) {
        free(ser);
        return gt_error_set(GT_ERR_NOMEM, "diff: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        ser[i] = step_series(g->all.runs[i], g->all.warm[i]);
        g->wait[i] = wait_share(g->all.runs[i]->r);
    }
    if (n > 1)
        an_busy_runs(g->busy, g->slower, &g->fastest, ser, g->wait, n, AN_BUSY_SHARE);
    else
        g->slower[0] = NAN;
    free(ser);
    size_t n_busy = 0;
    for (size_t i = 0; i < n; i++)
        n_busy += g->busy[i];
    g->busy_kept = !opt->keep_busy && n_busy > 0 && 2 * (n - n_busy) < n;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (opt->keep_busy || g->busy_kept)
            g->busy[i] = false;
        if (g->busy[i])
            continue;
        g->kept[k] = g->all.runs[i];
        g->kept_warm[k++] = g->all.warm[i];
    }
    return 0;
}

static void given_free(given *g)
{
    free(g->all.warm);
    free(g->busy);
    free(g->slower);
    free(g->wait);
    free(g->kept);
    free(g->kept_warm);
}

/* How much the compared runs of each side differ (an_runs_spread). */
static void runs_spread(gt_diff *d, const ctx *c)
{
    const side *sides[2] = {&c->a, &c->b};
    an_series *ser[2] = {NULL, NULL};
    size_t n[2] = {c->a.n, c->b.n};
    d->runs_spread = NAN;
    for (int k = 0; k < 2; k++) {
        if (!(ser[k] = malloc((n[k] ? n[k] : 1) * sizeof *ser[k])))
            goto done; /* out of memory: the spread is unknown */
        for (size_t i = 0; i < n[k]; i++)
            ser[k][i] = step_series(sides[k]->runs[i], sides[k]->warm[i]);
    }
    d->runs_spread = an_runs_spread((const an_series *const *)ser, n, 2, d->spread_runs);
done:
    free(ser[0]);
    free(ser[1]);
}

static int run_infos(gt_diff *d, const given *ga, const given *gb)
{
    const side *a = &ga->all, *b = &gb->all;
    d->n_runs = a->n + b->n;
    if (!(d->runs = calloc(d->n_runs, sizeof *d->runs)))
        return gt_error_set(GT_ERR_NOMEM, "diff: out of memory");
    for (size_t i = 0; i < d->n_runs; i++) {
        const side *s = i < a->n ? a : b;
        const given *g = i < a->n ? ga : gb;
        size_t k = i < a->n ? i : i - a->n;
        const gt_report *r = s->runs[k]->r;
        gt_diff_run_info *x = &d->runs[i];
        x->after = s == b;
        x->n_steps = (int64_t)r->n_steps;
        x->n_warmup = (int64_t)s->warm[k];
        x->warmup_first = x->n_warmup ? r->steps[0].number : -1;
        x->warmup_last = x->n_warmup ? r->steps[s->warm[k] - 1].number : -1;
        x->fast_slower = g->slower[k];
        x->cpu_wait_share = g->wait[k];
        x->fastest_wait_share = g->fastest < s->n ? g->wait[g->fastest] : NAN;
        x->busy = g->busy[k];
        if (!(x->path = an_strdup(r->path)))
            return gt_error_set(GT_ERR_NOMEM, "diff: out of memory");
    }
    return 0;
}

int gt_diff_compute_runs(gt_diff **out, gt_diff_run *const *before, size_t n_before, gt_diff_run *const *after,
                         size_t n_after, const gt_diff_options *opt_in)
{
    gt_diff_options defaults;
    gt_diff_options_init(&defaults);
    const gt_diff_options *opt = opt_in ? opt_in : &defaults;
    ctx cx = {.opt = opt};
    ctx *c = &cx;
    given ga = {.all = {before, n_before, NULL}}, gb = {.all = {after, n_after, NULL}};
    gt_diff *d = NULL;
    double *va = NULL, *vb = NULL;
    int rc;
    *out = NULL;
    if (!before || !after || n_before == 0 || n_after == 0)
        return gt_error_set(GT_ERR_INVALID, "gt_diff_compute: a side without runs");
    size_t nbuf = side_samples(&ga.all) + side_samples(&gb.all) + n_before + n_after;
    c->buf = malloc(nbuf * sizeof *c->buf);
    c->ser = malloc((n_before + n_after) * sizeof *c->ser);
    va = malloc(n_before * sizeof *va);
    vb = malloc(n_after * sizeof *vb);
    if (!c->buf || !c->ser || !va || !vb) {
        rc = gt_error_set(GT_ERR_NOMEM, "diff: out of memory");
        goto cleanup;
    }
    if ((rc = find_warmup(&ga.all, opt)) < 0 || (rc = find_warmup(&gb.all, opt)) < 0 ||
        (rc = find_busy(&ga, opt)) < 0 || (rc = find_busy(&gb, opt)) < 0)
        goto cleanup;
    c->a = (side){ga.kept, 0, ga.kept_warm};
    c->b = (side){gb.kept, 0, gb.kept_warm};
    for (size_t i = 0; i < n_before; i++)
        c->a.n += !ga.busy[i];
    for (size_t i = 0; i < n_after; i++)
        c->b.n += !gb.busy[i];
    before = ga.kept;
    after = gb.kept;
    n_before = c->a.n;
    n_after = c->b.n;
    bool steps = true;
    for (size_t i = 0; i < n_before + n_after; i++)
        steps &= (i < n_before ? before[i] : after[i - n_before])->n_steps > 0;
    const char *per = steps ? " per step" : "";
    if (steps) {
        const char *st = gt_metric_label(GT_M_STEP_TIME);
        size_t na, nb, wa, wb, ka = gather(c, &c->a, st, false, &na, &wa);
        double ma = an_stat_of(AN_STAT_MEDIAN, c->buf, ka);
        size_t kb = gather(c, &c->b, st, false, &nb, &wb);
        double mb = an_stat_of(AN_STAT_MEDIAN, c->buf, kb);
        if (ka && kb)
            c->min_ns = AN_STEP_SHARE * (ma < mb ? ma : mb);
    }
    const gt_report *a0 = before[0]->r, *b0 = after[0]->r;
    PER_RUN((double)R_->wall_ns);
    if ((rc = run_row(c, GT_M_WALL, va, vb, TIMED)) < 0)
        goto cleanup;
    if (steps) {
        static const struct { an_stat st; const char *word; } stats[] = {
            {AN_STAT_P10, " p10"}, {AN_STAT_MEAN, " mean"}, {AN_STAT_MEDIAN, " median"}, {AN_STAT_P95, " p95"},
        };
        for (size_t k = 0; k < sizeof stats / sizeof stats[0]; k++) {
            char metric[64];
            gt_metric_name(metric, sizeof metric, GT_M_STEP_TIME, NULL, stats[k].word);
            if ((rc = step_row(c, GT_M_STEP_TIME, metric, gt_metric_label(GT_M_STEP_TIME), stats[k].st, false, 0,
                               0)) < 0)
                goto cleanup;
        }
    }
    if ((rc = named_row(c, GT_M_UTILIZATION, NULL, per, false, 100 * busiest_util(a0), 100 * busiest_util(b0))) < 0 ||
        (rc = named_row(c, GT_M_IDLE, NULL, per, true, (double)a0->gaps.idle_ns, (double)b0->gaps.idle_ns)) < 0)
        goto cleanup;
    for (int k = 0; k < GT_GAP_N_CAUSES; k++)
        if ((rc = named_row(c, GT_M_IDLE_CAUSE, gt_gap_cause_name((gt_gap_cause)k), per, true,
                            (double)a0->gaps.idle_by_cause_ns[k], (double)b0->gaps.idle_by_cause_ns[k])) < 0)
            goto cleanup;
    if ((rc = kernel_rows(c, per)) < 0 || (rc = copy_rows(c, per)) < 0 || (rc = comm_rows(c, va, vb)) < 0)
        goto cleanup;
    if (steps && (rc = named_row(c, GT_M_ALLOC_END, NULL, per, false, 0, 0)) < 0)
        goto cleanup;
    PER_RUN((double)R_->memory.peak_allocated_bytes);
    if ((rc = run_row(c, GT_M_PEAK_ALLOCATED, va, vb, EXACT)) < 0)
        goto cleanup;
    PER_RUN((double)R_->memory.peak_reserved_bytes);
    if ((rc = run_row(c, GT_M_PEAK_RESERVED, va, vb, EXACT)) < 0)
        goto cleanup;
    PER_RUN(0);
    for (size_t i = 0; i < n_before + n_after; i++) {
        const gt_report *r = (i < n_before ? before[i] : after[i - n_before])->r;
        double *v = i < n_before ? &va[i] : &vb[i - n_before];
        for (size_t k = 0; k < r->n_advice; k++)
            *v += r->advice[k].fired;
    }
    if ((rc = run_row(c, GT_M_ADVICE_FIRED, va, vb, EXACT)) < 0)
        goto cleanup;

    d = calloc(1, sizeof *d);
    if (!d || !(d->before_path = an_strdup(ga.all.runs[0]->r->path)) ||
        !(d->after_path = an_strdup(gb.all.runs[0]->r->path))) {
        rc = gt_error_set(GT_ERR_NOMEM, "diff: out of memory");
        goto cleanup;
    }
    d->noise_floor = opt->noise_floor;
    d->keep_warmup = opt->keep_warmup;
    d->keep_busy = opt->keep_busy;
    d->busy_kept[0] = ga.busy_kept;
    d->busy_kept[1] = gb.busy_kept;
    d->runs_spread = NAN;
    if (steps)
        runs_spread(d, c);
    if ((rc = run_infos(d, &ga, &gb)) < 0)
        goto cleanup;
    d->rows = c->R.v;
    d->n_rows = c->R.n;
    c->R.v = NULL;
    c->R.n = 0;
    *out = d;
    d = NULL;
cleanup:
    for (size_t i = 0; i < c->R.n; i++)
        free(c->R.v[i].metric);
    free(c->R.v);
    free(c->buf);
    free(c->ser);
    given_free(&ga);
    given_free(&gb);
    free(va);
    free(vb);
    gt_diff_free(d);
    return rc;
}

int gt_diff_compute(gt_diff **out, const gt_report *before, const gt_report *after)
{
    gt_diff_run ra = {0}, rb = {0};
    int rc;
    *out = NULL;
    if (!before || !after)
        return gt_error_set(GT_ERR_INVALID, "gt_diff_compute: missing report");
    ra = (gt_diff_run){.r = (gt_report *)before, .borrowed = true, .n_steps = before->n_steps};
    rb = (gt_diff_run){.r = (gt_report *)after, .borrowed = true, .n_steps = after->n_steps};
    gt_diff_run *pa = &ra, *pb = &rb;
    if ((rc = an_run_report_samples(&ra)) == 0 && (rc = an_run_report_samples(&rb)) == 0)
        rc = gt_diff_compute_runs(out, &pa, 1, &pb, 1, NULL);
    for (size_t i = 0; i < ra.n_m; i++) {
        free(ra.m[i].key);
        free(ra.m[i].v);
    }
    for (size_t i = 0; i < rb.n_m; i++) {
        free(rb.m[i].key);
        free(rb.m[i].v);
    }
    free(ra.m);
    free(rb.m);
    return rc;
}

void gt_diff_free(gt_diff *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_rows; i++)
        free(d->rows[i].metric);
    free(d->rows);
    for (size_t i = 0; i < d->n_runs; i++)
        free(d->runs[i].path);
    free(d->runs);
    free(d->before_path);
    free(d->after_path);
    free(d);
}

/* The one word (or two) a row's verdict is, in text and JSON alike. */
static const char *verdict_word(const gt_diff_row *r)
{
    if (r->presence)
        return r->presence > 0 ? "new" : "gone";
    if (r->too_few)
        return r->by_runs ? "too few runs" : "too few steps";
    return r->verdict > 0 ? "better" : r->verdict < 0 ? "worse" : "same";
}

static const char *interval(char *buf, size_t n, const gt_diff_row *r)
{
    char lo[40], hi[40];
    if (isnan(r->lo) || r->presence)
        return "";
    snprintf(buf, n, "[%s, %s]", gt_diff_change(lo, sizeof lo, r->lo), gt_diff_change(hi, sizeof hi, r->hi));
    return buf;
}

/* The metric column: as wide as the longest metric, from 48 to
 * METRIC_COLS characters; a longer one is cut in the middle, both ends kept
 * ("CPU op time per step: autograd::engine::…: AddmmBackward0"), its tail
 * moved until no other row reads the same. Text only: JSON keeps names whole. */
#define METRIC_COLS 64

static bool shown_twice(char *const *shown, size_t n, size_t i)
{
    for (size_t k = 0; k < n; k++)
        if (k != i && shown[k] && strcmp(shown[k], shown[i]) == 0)
            return true;
    return false;
}

/* Each row's metric as shown (malloc'd strings; NULL on no memory: names then print cut at the column). */
static char **metric_cells(const gt_diff *d, size_t *out_cols)
{
    size_t cols = 48;
    for (size_t i = 0; i < d->n_rows; i++) {
        size_t w = gt_text_width(d->rows[i].metric);
        cols = w > cols ? (w < METRIC_COLS ? w : METRIC_COLS) : cols;
    }
    *out_cols = cols;
    char **shown = calloc(d->n_rows ? d->n_rows : 1, sizeof *shown);
    char buf[4 * METRIC_COLS + 8];
    for (size_t i = 0; shown && i < d->n_rows; i++)
        if (!(shown[i] = an_strdup(gt_cut_middle(buf, sizeof buf, d->rows[i].metric, cols, cols / 2))))
            goto nomem;
    for (size_t i = 0; shown && i < d->n_rows; i++) {
        const char *name = d->rows[i].metric;
        /* another tail: longer first (names differ at their ends most), then shorter */
        size_t mid = cols / 2, n_longer = cols - 2 - mid;
        for (size_t k = 1; k < cols - 2 && gt_text_width(name) > cols && shown_twice(shown, d->n_rows, i); k++) {
            size_t tail = k <= n_longer ? mid + k : mid - (k - n_longer);
            free(shown[i]);
            if (!(shown[i] = an_strdup(gt_cut_middle(buf, sizeof buf, name, cols, tail))))
                goto nomem;
        }
    }
    return shown;
nomem:
    for (size_t i = 0; i < d->n_rows; i++)
        free(shown[i]);
    free(shown);
    return NULL;
}

static void print_run(FILE *f, const gt_diff_run_info *x)
{
    fprintf(f, "%s", x->path);
    if (x->n_steps == 0) {
        fputs(" (no steps)\n", f);
        return;
    }
    fprintf(f, " (%lld steps", (long long)x->n_steps);
    if (x->n_warmup == 1)
        fprintf(f, "; warm-up left out: step %lld", (long long)x->warmup_first);
    else if (x->n_warmup > 1)
        fprintf(f, "; warm-up left out: steps %lld-%lld", (long long)x->warmup_first, (long long)x->warmup_last);
    if (x->busy)
        fprintf(f, "; left out: a busier machine, its fastest steps %.1f%% slower than the side's fastest run's",
                100 * x->fast_slower);
    if (x->busy && !isnan(x->cpu_wait_share) && !isnan(x->fastest_wait_share))
        fprintf(f, ", waited for a CPU %.1f%% of its time, against %.1f%% for the side's fastest run",
                100 * x->cpu_wait_share, 100 * x->fastest_wait_share);
    fputs(")\n", f);
}

/* What the runs can tell: how much they differ between themselves, the
 * smallest change they find, and the runs a change of the noise floor needs. */
static void print_spread(FILE *f, const gt_diff *d)
{
    if (isnan(d->runs_spread))
        return;
    char metric[64];
    gt_metric_name(metric, sizeof metric, GT_M_STEP_TIME, NULL, " p10");
    size_t na = d->spread_runs[0], nb = d->spread_runs[1];
    double least = an_smallest_change(d->runs_spread, na, nb);
    fprintf(f, "between runs: %s differs by %.1f%% (sd) from one run of a side to another", metric,
            100 * (exp(d->runs_spread) - 1));
    if (least <= d->noise_floor) {
        fprintf(f, ": these runs tell a change of the noise floor (%.1f%%)\n", 100 * d->noise_floor);
        return;
    }
    double need = an_runs_for_change(d->runs_spread, d->noise_floor);
    fprintf(f, ": with %zu and %zu runs a change under about %.0f%% can read same; a change of %.1f%% needs about ",
            na, nb, 100 * least, 100 * d->noise_floor);
    if (need > 999)
        fputs("over 999 runs a side\n", f);
    else
        fprintf(f, "%.0f runs a side\n", need);
}

int gt_diff_print_text(const gt_diff *d, FILE *f)
{
    size_t better = 0, worse = 0, same = 0, few = 0, n_new = 0, n_gone = 0;
    fputs("gtrace diff\n", f);
    for (int after = 0; after < 2; after++) {
        bool first = true;
        for (size_t i = 0; i < d->n_runs; i++) {
            if (d->runs[i].after != after)
                continue;
            fprintf(f, "  %s", first ? (after ? "after:  " : "before: ") : "        ");
            print_run(f, &d->runs[i]);
            first = false;
        }
    }
    fprintf(f, "  each step a sample; medians (mean, p10, p95 where named); 95%% bootstrap interval over runs and "
               "steps; noise floor %.1f%%%s%s\n",
            100 * d->noise_floor, d->keep_warmup ? "; warm-up kept" : "", d->keep_busy ? "; busy runs kept" : "");
    for (int k = 0; k < 2; k++)
        if (d->busy_kept[k])
            fprintf(f, "  %s: most runs ran on a busier machine: all kept (the few left cannot say how runs "
                       "differ)\n", k ? "after" : "before");
    fputc('\n', f);
    size_t cols;
    char **shown = metric_cells(d, &cols);
    fprintf(f, "%-*s %14s %14s %9s %-20s %s\n", (int)cols, "metric", "before", "after", "change", "95% interval",
            "verdict");
    for (size_t i = 0; i < d->n_rows; i++) {
        const gt_diff_row *r = &d->rows[i];
        char b[40], a[40], c[40], ci[96];
        gt_diff_cell(b, sizeof b, r->unit, r->before);
        gt_diff_cell(a, sizeof a, r->unit, r->after);
        n_new += r->presence > 0;
        n_gone += r->presence < 0;
        if (!r->presence) {
            better += !r->too_few && r->verdict > 0;
            worse += !r->too_few && r->verdict < 0;
            same += !r->too_few && r->verdict == 0;
            few += r->too_few;
        }
        const char *name = shown ? shown[i] : r->metric;
        size_t w = gt_text_width(name);
        if (shown)
            fprintf(f, "%s%*s", name, (int)(cols - (w < cols ? w : cols)), "");
        else
            fprintf(f, "%-*.*s", (int)cols, (int)cols, name);
        fprintf(f, " %14s %14s %9s %-20s %s\n", b, a, r->presence ? "" : gt_diff_change(c, sizeof c, r->change),
                interval(ci, sizeof ci, r), verdict_word(r));
    }
    for (size_t i = 0; shown && i < d->n_rows; i++)
        free(shown[i]);
    free(shown);
    fprintf(f, "\n%zu better, %zu worse, %zu same", better, worse, same);
    if (few)
        fprintf(f, ", %zu with too few samples", few);
    if (n_new || n_gone)
        fprintf(f, "; by name: %zu new, %zu gone", n_new, n_gone);
    fputc('\n', f);
    print_spread(f, d);
    return ferror(f) ? gt_error_set(GT_ERR_IO, "cannot write the diff") : 0;
}

int gt_diff_print_json(const gt_diff *d, FILE *f)
{
    gt_json jw, *j = &jw;
    gt_json_init(j, f);
    gt_json_object(j);
    gt_json_kv_str(j, "before", d->before_path);
    gt_json_kv_str(j, "after", d->after_path);
    gt_json_kv_str(j, "method", "median per step, 95% bootstrap interval over runs and steps");
    gt_json_kv_num(j, "noise_floor", d->noise_floor);
    gt_json_kv_bool(j, "keep_warmup", d->keep_warmup);
    gt_json_kv_bool(j, "keep_busy", d->keep_busy);
    gt_json_key(j, "busy_runs_kept"); /* per side: too many were busy to leave out */
    gt_json_object(j);
    gt_json_kv_bool(j, "before", d->busy_kept[0]);
    gt_json_kv_bool(j, "after", d->busy_kept[1]);
    gt_json_end(j);
    gt_json_key(j, "runs");
    gt_json_array(j);
    for (size_t i = 0; i < d->n_runs; i++) {
        const gt_diff_run_info *x = &d->runs[i];
        gt_json_object(j);
        gt_json_kv_str(j, "path", x->path);
        gt_json_kv_str(j, "side", x->after ? "after" : "before");
        gt_json_kv_int(j, "steps", x->n_steps);
        gt_json_key(j, "warmup_steps");
        gt_json_array(j);
        if (x->n_warmup) {
            gt_json_int(j, x->warmup_first);
            gt_json_int(j, x->warmup_last);
        }
        gt_json_end(j);
        gt_json_kv_num(j, "fast_steps_slower", x->fast_slower);
        gt_json_kv_num(j, "cpu_wait_share", x->cpu_wait_share);
        gt_json_kv_num(j, "fastest_cpu_wait_share", x->fastest_wait_share);
        gt_json_kv_bool(j, "busy", x->busy);
        gt_json_end(j);
    }
    gt_json_end(j);
    gt_json_key(j, "between_runs");
    if (isnan(d->runs_spread)) {
        gt_json_null(j);
    } else {
        gt_json_object(j);
        gt_json_kv_num(j, "step_time_p10_sd", exp(d->runs_spread) - 1);
        gt_json_key(j, "runs");
        gt_json_array(j);
        gt_json_int(j, (int64_t)d->spread_runs[0]);
        gt_json_int(j, (int64_t)d->spread_runs[1]);
        gt_json_end(j);
        gt_json_kv_num(j, "smallest_change", an_smallest_change(d->runs_spread, d->spread_runs[0], d->spread_runs[1]));
        gt_json_kv_num(j, "runs_for_noise_floor", an_runs_for_change(d->runs_spread, d->noise_floor));
        gt_json_end(j);
    }
    gt_json_key(j, "rows");
    gt_json_array(j);
    for (size_t i = 0; i < d->n_rows; i++) {
        const gt_diff_row *r = &d->rows[i];
        gt_json_object(j);
        gt_json_kv_str(j, "metric", r->metric);
        gt_json_kv_str(j, "unit", r->unit);
        gt_json_kv_num(j, "before", r->before);
        gt_json_kv_num(j, "after", r->after);
        gt_json_kv_num(j, "change", r->change);
        gt_json_key(j, "interval");
        if (isnan(r->lo) || r->presence) {
            gt_json_null(j);
        } else {
            gt_json_array(j);
            gt_json_num(j, r->lo);
            gt_json_num(j, r->hi);
            gt_json_end(j);
        }
        gt_json_key(j, "samples");
        gt_json_array(j);
        gt_json_int(j, r->n_before);
        gt_json_int(j, r->n_after);
        gt_json_end(j);
        gt_json_kv_str(j, "samples_are", r->by_runs ? "runs" : "steps");
        gt_json_kv_str(j, "verdict", verdict_word(r));
        gt_json_end(j);
    }
    gt_json_end(j);
    gt_json_end(j);
    gt_json_ws(j, "\n");
    int rc = gt_json_finish(j);
    return rc ? gt_error_set(rc, "cannot write the diff") : 0;
}
