/* export_ranks.c: the processes a Chrome export holds and the rank each is
 * given, for the one-file-per-rank export (DIR/) and --pid. Where the close
 * kept the whole-trace facts, the model's memory part and a pass over the
 * calls and device work find them, as the export itself reads that part:
 * the trace is never held whole. */
#include "analyze_int.h"

#include <stdlib.h>

int an_rowset_add(an_rowset *s, int64_t k)
{
    if (s->n > 0 && s->v[s->n - 1] == k)
        return 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == k)
            return 0;
    if (s->n == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 32;
        int64_t *nv = realloc(s->v, ncap * sizeof *nv);
        if (!nv)
            return gt_error_set(GT_ERR_NOMEM, "chrome export: out of memory");
        s->v = nv;
        s->cap = ncap;
    }
    s->v[s->n++] = k;
    return 0;
}

/* The processes of t's calls and of the work the whole model holds as
 * activities (kernels, copies, memsets, CPU ops), read from disk: a model's
 * memory part holds none of them. */
static int row_pids(an_rowset *ps, gt_trace *t)
{
    static const gt_event_kind kinds[] = {GT_EV_API, GT_EV_KERNEL, GT_EV_MEMCPY, GT_EV_MEMSET, GT_EV_CPU_OP};
    int rc = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0] && rc == 0; k++) {
        gt_iter *it = NULL;
        gt_event ev;
        rc = gt_iter_new(&it, t, kinds[k], INT64_MIN, INT64_MAX);
        while (rc == 0 && (rc = gt_iter_next(it, &ev)) == 1) {
            if (!an_row_ok(&ev)) {
                rc = 0;
                continue;
            }
            int64_t id = ev.kind == GT_EV_API      ? ev.u.api.global_tid
                         : ev.kind == GT_EV_KERNEL ? ev.u.kernel.global_pid
                         : ev.kind == GT_EV_MEMCPY ? ev.u.memcpy.global_pid
                         : ev.kind == GT_EV_MEMSET ? ev.u.memset.global_pid
                                                   : ev.u.cpu_op.global_tid;
            rc = an_rowset_add(ps, gt_pid_of(id));
        }
        gt_iter_free(it);
    }
    return rc < 0 ? rc : 0;
}

int an_export_pids(const an_model *m, gt_trace *rows_from, int64_t **pids_out, size_t *out_n)
{
    an_rowset ps = {0};
    int rc = rows_from ? row_pids(&ps, rows_from) : 0;
    for (size_t i = 0; i < m->n_apis && rc == 0; i++)
        rc = an_rowset_add(&ps, gt_pid_of(m->apis[i].tid));
    for (size_t i = 0; i < m->n_ranges && rc == 0; i++)
        rc = an_rowset_add(&ps, gt_pid_of(m->ranges[i].tid));
    for (size_t i = 0; i < m->n_acts && rc == 0; i++)
        if (m->acts[i].pid > 0 || m->acts[i].tid)
            rc = an_rowset_add(&ps, m->acts[i].tid ? gt_pid_of(m->acts[i].tid) : m->acts[i].pid);
    if (rc < 0) {
        free(ps.v);
        return rc;
    }
    if (ps.n > 1)
        qsort(ps.v, ps.n, sizeof *ps.v, gt_cmp_i64);
    *pids_out = ps.v;
    *out_n = ps.n;
    return 0;
}

static int cmp_rank(const void *a, const void *b)
{
    const gt_chrome_rank *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The recorded ranks where every process has a distinct one below n, else
 * 0 to n - 1 by pid (as the report lists ranks); sorted by rank. */
static int ranks_of(gt_chrome_rank **ranks_out, size_t *out_n, gt_trace *t, int64_t *pids, size_t n)
{
    *ranks_out = NULL;
    *out_n = 0;
    if (n == 0)
        return 0;
    gt_chrome_rank *r = malloc(n * sizeof *r);
    if (!r)
        return gt_error_set(GT_ERR_NOMEM, "chrome export: out of memory");
    size_t n_ps;
    const gt_process *ps = gt_trace_processes(t, &n_ps);
    bool recorded = true;
    for (size_t i = 0; i < n; i++) {
        r[i] = (gt_chrome_rank){pids[i], -1};
        for (size_t k = 0; k < n_ps; k++)
            if (gt_pid_of(ps[k].global_pid) == pids[i] && ps[k].rank >= 0)
                r[i].rank = ps[k].rank;
        recorded = recorded && r[i].rank >= 0 && r[i].rank < (int64_t)n;
        for (size_t k = 0; k < i && recorded; k++)
            recorded = r[k].rank != r[i].rank;
    }
    for (size_t i = 0; i < n && !recorded; i++)
        r[i].rank = (int32_t)i;
    if (n > 1)
        qsort(r, n, sizeof *r, cmp_rank);
    *ranks_out = r;
    *out_n = n;
    return 0;
}

int gt_export_chrome_ranks(gt_chrome_rank **ranks_out, size_t *out_n, gt_trace *t)
{
    if (!ranks_out || !out_n || !t)
        return gt_error_set(GT_ERR_INVALID, "gt_export_chrome_ranks: missing argument");
    an_whole w;
    bool part = an_whole_read(&w, t) && !w.cpu_timeline; /* as gt_export_chrome_process reads it */
    an_model *m = NULL;
    int64_t *pids = NULL;
    size_t n = 0;
    int rc = part ? an_model_load_memory(&m, t) : an_model_load(&m, t);
    if (rc == 0)
        rc = an_export_pids(m, part ? t : NULL, &pids, &n);
    if (rc == 0)
        rc = ranks_of(ranks_out, out_n, t, pids, n);
    free(pids);
    an_model_free(m);
    return rc;
}
