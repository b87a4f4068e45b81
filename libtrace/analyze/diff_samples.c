/* diff_samples.c: one side of gtrace diff: a trace's report and, for each
 * of its steps, the metrics the diff compares (step time, utilization, idle
 * time by cause, each listed kernel's or CPU op's time, copies, memory at
 * the step's end), so that each step is a sample. It loads the model once
 * and keeps only the report and the samples; the statistics are stats.c's,
 * the rows diff.c's. */
#include "diff_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const double *an_run_samples(const gt_diff_run *run, const char *key)
{
    for (size_t i = 0; i < run->n_m; i++)
        if (strcmp(run->m[i].key, key) == 0)
            return run->m[i].v;
    return NULL;
}

double *an_run_metric(gt_diff_run *run, const char *key)
{
    for (size_t i = 0; i < run->n_m; i++)
        if (strcmp(run->m[i].key, key) == 0)
            return run->m[i].v;
    if (run->n_m == run->cap_m) {
        size_t cap = run->cap_m ? 2 * run->cap_m : 32;
        an_samples *nm = realloc(run->m, cap * sizeof *nm);
        if (!nm)
            return NULL;
        run->m = nm;
        run->cap_m = cap;
    }
    an_samples *s = &run->m[run->n_m];
    s->key = an_strdup(key);
    s->v = calloc(run->n_steps ? run->n_steps : 1, sizeof *s->v);
    if (!s->key || !s->v) {
        free(s->key);
        free(s->v);
        return NULL;
    }
    run->n_m++;
    return s->v;
}

/* The samples of metric id (member arg: a copy kind, a gap cause) into v. */
#define METRIC(v, run, id, arg)                                                                                    \
    do {                                                                                                           \
        char key_[96];                                                                                             \
        gt_metric_name(key_, sizeof key_, (id), (arg), "");                                                        \
        if (!((v) = an_run_metric((run), key_)))                                                                   \
            return gt_error_set(GT_ERR_NOMEM, "diff: out of memory");                                              \
    } while (0)

/* Communication per step: the mean over the ranks that ran step i (by
 * ordinal), as the report's means over ranks per step. */
static int comm_samples(gt_diff_run *run)
{
    const gt_comm *c = &run->r->comm;
    double *cm, *ex, *hid, *col;
    if (c->n_ranks == 0 || !c->per_step)
        return 0;
    METRIC(cm, run, GT_M_COMM, NULL);
    METRIC(ex, run, GT_M_EXPOSED, NULL);
    METRIC(hid, run, GT_M_HIDDEN, NULL);
    METRIC(col, run, GT_M_COLLECTIVES, NULL);
    for (size_t i = 0; i < run->n_steps; i++) {
        double n = 0, comm = 0, exposed = 0, overlap = 0, coll = 0;
        for (size_t k = 0; k < c->n_ranks; k++) {
            const gt_comm_rank *rk = &c->ranks[k];
            if (i >= rk->n_steps)
                continue;
            n++;
            comm += (double)rk->steps[i].comm_ns;
            exposed += (double)rk->steps[i].exposed_ns;
            overlap += (double)rk->steps[i].overlap_ns;
            coll += (double)rk->steps[i].n_collectives;
        }
        cm[i] = n ? comm / n : NAN;
        ex[i] = n ? exposed / n : NAN;
        col[i] = n ? coll / n : NAN;
        hid[i] = comm > 0 ? 100 * overlap / comm : NAN;
    }
    return 0;
}

int an_run_report_samples(gt_diff_run *run)
{
    const gt_report *r = run->r;
    double *st, *ut, *alloc;
    if (run->n_steps == 0)
        return 0;
    METRIC(st, run, GT_M_STEP_TIME, NULL);
    METRIC(ut, run, GT_M_UTILIZATION, NULL);
    METRIC(alloc, run, GT_M_ALLOC_END, NULL);
    for (size_t i = 0; i < run->n_steps; i++) {
        const gt_step *s = &r->steps[i];
        double d = (double)(s->end_ns - s->start_ns);
        st[i] = d;
        ut[i] = d > 0 ? 100 * (double)s->busy_ns / d : NAN;
        alloc[i] = (double)s->allocated_end_bytes;
    }
    return comm_samples(run);
}

/* The step (index) that holds t, or -1: steps are by start and do not overlap. */
static ptrdiff_t step_at(const gt_report *r, int64_t t)
{
    size_t lo = GT_UPPER_BOUND(r->steps, r->n_steps, end_ns, t);
    return lo < r->n_steps && r->steps[lo].start_ns <= t ? (ptrdiff_t)lo : -1;
}

static int idle_samples(gt_diff_run *run, const gt_gap_span *gaps, size_t n_gaps)
{
    const gt_report *r = run->r;
    double *idle, *cause[GT_GAP_N_CAUSES];
    METRIC(idle, run, GT_M_IDLE, NULL);
    for (int c = 0; c < GT_GAP_N_CAUSES; c++)
        METRIC(cause[c], run, GT_M_IDLE_CAUSE, gt_gap_cause_name((gt_gap_cause)c));
    for (size_t g = 0; g < n_gaps; g++) {
        const gt_gap_span *x = &gaps[g];
        size_t lo = GT_UPPER_BOUND(r->steps, r->n_steps, end_ns, x->start_ns); /* the first step that ends after the gap starts */
        for (size_t i = lo; i < r->n_steps && r->steps[i].start_ns < x->end_ns; i++) {
            int64_t s = x->start_ns > r->steps[i].start_ns ? x->start_ns : r->steps[i].start_ns;
            int64_t e = x->end_ns < r->steps[i].end_ns ? x->end_ns : r->steps[i].end_ns;
            if (e > s) {
                idle[i] += (double)(e - s);
                cause[x->cause][i] += (double)(e - s);
            }
        }
    }
    return 0;
}

/* Each listed kernel's (or CPU op's) time in each step, by start: the same
 * attribution as the report's per-name totals. */
static int op_samples(gt_diff_run *run, const an_model *m)
{
    const gt_report *r = run->r;
    char key[600];
    double **by_row = calloc(r->n_kernels ? r->n_kernels : 1, sizeof *by_row);
    if (!by_row)
        return gt_error_set(GT_ERR_NOMEM, "diff: out of memory");
    for (size_t k = 0; k < r->n_kernels; k++) {
        gt_metric_name(key, sizeof key, GT_M_OP_TIME, r->kernels[k].name, "");
        if (!(by_row[k] = an_run_metric(run, key))) {
            free(by_row);
            return gt_error_set(GT_ERR_NOMEM, "diff: out of memory");
        }
    }
    /* names by string id, remembered: a few hundred names, millions of kernels */
    enum { CAP = 4096 };
    gt_string_id ids[CAP] = {0};
    int rows[CAP];
    for (size_t i = an_first_act(m, r->start_ns); i < m->n_acts && m->acts[i].start_ns < r->end_ns; i++) {
        const an_act *a = &m->acts[i];
        if (a->kind != GT_EV_KERNEL && a->kind != GT_EV_CPU_OP)
            continue;
        ptrdiff_t st = step_at(r, a->start_ns);
        if (st < 0)
            continue;
        size_t h = ((uint64_t)a->name * 0x9e3779b97f4a7c15ULL >> 40) % CAP, probes = 0;
        while (ids[h] != 0 && ids[h] != a->name && probes++ < CAP)
            h = (h + 1) % CAP;
        int row = -1;
        if (a->name != 0 && ids[h] == a->name) {
            row = rows[h];
        } else {
            const char *name = an_str(m, a->name);
            for (size_t k = 0; k < r->n_kernels && row < 0; k++)
                if (strcmp(r->kernels[k].name, name) == 0)
                    row = (int)k;
            if (a->name != 0 && ids[h] == 0) {
                ids[h] = a->name;
                rows[h] = row;
            }
        }
        if (row >= 0)
            by_row[row][st] += (double)(a->end_ns - a->start_ns);
    }
    free(by_row);
    return 0;
}

static int copy_samples(gt_diff_run *run, const an_model *m)
{
    const gt_report *r = run->r;
    static const int kinds[] = {GT_COPY_HTOD, GT_COPY_DTOH, GT_COPY_DTOD, -1};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        double *n, *ns, *pg, *bw;
        size_t n_seen = 0;
        for (size_t i = 0; i < m->n_copies; i++)
            n_seen += m->copies[i].copy_kind == kinds[k];
        if (n_seen == 0)
            continue;
        const char *kind = gt_copy_kind_name(kinds[k]);
        METRIC(n, run, GT_M_COPIES, kind);
        METRIC(ns, run, GT_M_COPY_TIME, kind);
        METRIC(pg, run, GT_M_PAGEABLE, kind);
        METRIC(bw, run, GT_M_BANDWIDTH, kind);
        for (size_t i = 0; i < m->n_copies; i++) {
            const an_copy *c = &m->copies[i];
            ptrdiff_t st = c->copy_kind == kinds[k] ? step_at(r, c->start_ns) : -1;
            if (st < 0)
                continue;
            n[st] += 1;
            ns[st] += (double)(c->end_ns - c->start_ns);
            pg[st] += c->src_kind == GT_MEM_PAGEABLE || c->dst_kind == GT_MEM_PAGEABLE;
            bw[st] += (double)c->bytes; /* bytes until divided below */
        }
        for (size_t i = 0; i < run->n_steps; i++)
            bw[i] = ns[i] > 0 ? bw[i] / ns[i] : NAN; /* bytes per ns: GB/s */
    }
    return 0;
}

int an_diff_run_build(gt_diff_run **out, gt_report *r, bool borrowed, const an_model *m, const gt_gap_span *gaps,
                      size_t n_gaps)
{
    gt_diff_run *run = calloc(1, sizeof *run);
    int rc = 0;
    *out = NULL;
    if (!run) {
        if (!borrowed)
            gt_report_free(r);
        return gt_error_set(GT_ERR_NOMEM, "diff: out of memory");
    }
    run->r = r;
    run->borrowed = borrowed;
    run->n_steps = r->n_steps;
    if (run->n_steps > 0 && ((rc = an_run_report_samples(run)) < 0 || (rc = idle_samples(run, gaps, n_gaps)) < 0 ||
                             (rc = op_samples(run, m)) < 0 || (rc = copy_samples(run, m)) < 0)) {
        gt_diff_run_free(run);
        return rc;
    }
    *out = run;
    return 0;
}

int gt_diff_run_load(gt_diff_run **out, gt_trace *t, const gt_report_options *opt)
{
    an_model *m = NULL;
    gt_gap_span *gaps = NULL;
    size_t n_gaps = 0;
    gt_report *r = NULL;
    int rc;
    *out = NULL;
    if (!t)
        return gt_error_set(GT_ERR_INVALID, "gt_diff_run_load: no trace");
    if ((rc = an_model_load(&m, t)) == 0 && (rc = an_report_build(&r, m, opt, &gaps, &n_gaps)) == 0)
        rc = an_diff_run_build(out, r, false, m, gaps, n_gaps);
    free(gaps);
    an_model_free(m);
    return rc;
}

const gt_report *gt_diff_run_report(const gt_diff_run *run)
{
    return run ? run->r : NULL;
}

int gt_diff_run_rename(gt_diff_run *run, const char *path)
{
    char *p = an_strdup(path);
    if (!p)
        return gt_error_set(GT_ERR_NOMEM, "diff: out of memory");
    free(run->r->path);
    run->r->path = p;
    return 0;
}

void gt_diff_run_free(gt_diff_run *run)
{
    if (!run)
        return;
    for (size_t i = 0; i < run->n_m; i++) {
        free(run->m[i].key);
        free(run->m[i].v);
    }
    free(run->m);
    if (!run->borrowed)
        gt_report_free(run->r);
    free(run);
}
