/* rank_steps.c: the steps of each rank of a distributed job (an MPI job, a
 * torchrun job: each process with its own step ranges), and per step the
 * rank the others waited for. A rank's work in a step is the step's time
 * less the communication it waited for there (its exposed time, as comm.c
 * measured it; the whole step where the trace has no communication): the
 * slowest rank has the most work. Steps are matched by number (by order
 * where a rank's numbers repeat). It judges nothing: render_ranks.c shows
 * it, advice.c may use it. */
#include "analyze_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct rank_in { /* a process with steps, while measuring */
    gt_rank_steps_rank out;
    gt_step *steps; size_t n_steps;
    const gt_comm_rank *comm; /* its figures in the Communication section; NULL none */
} rank_in;

typedef struct cell { int64_t key; size_t rank; int64_t work_ns; } cell; /* a rank in a step */

static int cmp_rank_in(const void *a, const void *b)
{
    const rank_in *x = a, *y = b;
    if ((x->out.rank < 0) != (y->out.rank < 0))
        return x->out.rank < 0 ? 1 : -1;
    if (x->out.rank != y->out.rank)
        return x->out.rank < y->out.rank ? -1 : 1;
    return (x->out.pid > y->out.pid) - (x->out.pid < y->out.pid);
}

static int cmp_cell(const void *a, const void *b)
{
    const cell *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The Communication section's figures of pid on its own steps; NULL none.
 * An NCCL process with several devices: the device that waited most. */
static const gt_comm_rank *comm_of(const gt_comm *cm, int64_t pid)
{
    const gt_comm_rank *best = NULL;
    for (size_t i = 0; i < cm->n_ranks; i++) {
        const gt_comm_rank *k = &cm->ranks[i];
        if (k->pid == pid && k->own_steps && (!best || k->exposed_ns > best->exposed_ns))
            best = k;
    }
    return best;
}

/* The exposed communication of step s in k (the same steps, so index i is
 * the likely one). */
static int64_t exposed_in(const gt_comm_rank *k, size_t i, const gt_step *s)
{
    if (!k)
        return 0;
    if (i < k->n_steps && k->steps[i].start_ns == s->start_ns)
        return k->steps[i].exposed_ns;
    for (size_t j = 0; j < k->n_steps; j++)
        if (k->steps[j].start_ns == s->start_ns)
            return k->steps[j].exposed_ns;
    return 0;
}

/* Each rank's step times and work; the cells of every (step, rank). */
static int measure_ranks(rank_in *v, size_t n, cell *cells, bool by_number)
{
    size_t n_cells = 0;
    for (size_t k = 0; k < n; k++) {
        rank_in *ri = &v[k];
        int64_t *dur = malloc(2 * ri->n_steps * sizeof *dur);
        if (!dur)
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory measuring the steps per rank");
        int64_t *work = dur + ri->n_steps;
        for (size_t i = 0; i < ri->n_steps; i++) {
            const gt_step *s = &ri->steps[i];
            int64_t wait = exposed_in(ri->comm, i, s);
            dur[i] = s->end_ns - s->start_ns;
            work[i] = dur[i] > wait ? dur[i] - wait : 0;
            ri->out.waited_ns = gt_sat_add(ri->out.waited_ns, wait);
            cells[n_cells++] = (cell){by_number ? s->number : (int64_t)i, k, work[i]};
        }
        an_dist(&ri->out.step_time, dur, ri->n_steps);
        an_dist(&ri->out.work, work, ri->n_steps);
        free(dur);
    }
    return 0;
}

/* The steps two ranks or more ran: the slowest and the fastest by work. */
static int match_steps(gt_rank_steps *rs, rank_in *v, cell *cells, size_t n_cells)
{
    qsort(cells, n_cells, sizeof *cells, cmp_cell);
    size_t n_keys = 0;
    for (size_t i = 0; i < n_cells; i++)
        n_keys += i == 0 || cells[i].key != cells[i - 1].key;
    rs->steps = calloc(n_keys ? n_keys : 1, sizeof *rs->steps);
    if (!rs->steps)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory measuring the steps per rank");
    for (size_t i = 0; i < n_cells;) {
        size_t j = i, hi = i, lo = i;
        for (; j < n_cells && cells[j].key == cells[i].key; j++) {
            if (cells[j].work_ns > cells[hi].work_ns)
                hi = j;
            if (cells[j].work_ns < cells[lo].work_ns)
                lo = j;
        }
        if (j - i >= 2) {
            rs->steps[rs->n_steps++] = (gt_rank_step){cells[i].key, (int64_t)(j - i), (int64_t)cells[hi].rank,
                                                      (int64_t)cells[lo].rank, cells[hi].work_ns, cells[lo].work_ns};
            v[cells[hi].rank].out.n_slowest++;
        }
        i = j;
    }
    return 0;
}

/* Whether every rank numbers its steps in increasing order (else they are
 * matched by order). */
static bool numbers_increase(const rank_in *v, size_t n)
{
    for (size_t k = 0; k < n; k++)
        for (size_t i = 1; i < v[k].n_steps; i++)
            if (v[k].steps[i].number <= v[k].steps[i - 1].number)
                return false;
    return true;
}

int an_rank_steps_measure(gt_rank_steps *rs, const an_model *m, const gt_report *r, const gt_report_options *opt)
{
    memset(rs, 0, sizeof *rs);
    size_t n_proc = 0, n = 0, n_cells = 0;
    const gt_process *p = m->t ? gt_trace_processes(m->t, &n_proc) : NULL;
    if (n_proc < 2)
        return 0;
    rank_in *v = calloc(n_proc, sizeof *v);
    cell *cells = NULL;
    int rc = 0;
    if (!v)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory measuring the steps per rank");
    for (size_t i = 0; i < n_proc && rc == 0; i++) {
        rank_in *ri = &v[n];
        if ((rc = an_steps_selected(&ri->steps, &ri->n_steps, m, p[i].pid, opt)) < 0 || ri->n_steps == 0)
            continue;
        ri->out.pid = p[i].pid;
        ri->out.rank = p[i].rank;
        ri->comm = comm_of(&r->comm, p[i].pid);
        n_cells += ri->n_steps;
        n++;
    }
    if (rc < 0 || n < 2)
        goto cleanup;
    qsort(v, n, sizeof *v, cmp_rank_in);
    rs->waits_known = true;
    for (size_t k = 0; k < n; k++)
        rs->waits_known = rs->waits_known && v[k].comm;
    for (size_t k = 0; k < n && !rs->waits_known; k++)
        v[k].comm = NULL; /* every rank's work the same way: its step time */
    if (!(cells = malloc(n_cells * sizeof *cells))) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory measuring the steps per rank");
        goto cleanup;
    }
    if ((rc = measure_ranks(v, n, cells, numbers_increase(v, n))) < 0 || (rc = match_steps(rs, v, cells, n_cells)) < 0)
        goto cleanup;
    if (!(rs->ranks = calloc(n, sizeof *rs->ranks))) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory measuring the steps per rank");
        goto cleanup;
    }
    for (size_t k = 0; k < n; k++) {
        const char *name = "";
        for (size_t i = 0; i < n_proc; i++)
            if (p[i].pid == v[k].out.pid && p[i].name)
                name = p[i].name;
        rs->ranks[k] = v[k].out;
        if (!(rs->ranks[k].name = an_strdup(name))) {
            rs->n_ranks = k;
            rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory measuring the steps per rank");
            goto cleanup;
        }
    }
    rs->n_ranks = n;
cleanup:
    for (size_t k = 0; k < n_proc; k++)
        free(v[k].steps);
    free(v);
    free(cells);
    if (rc < 0)
        an_rank_steps_clear(rs);
    return rc < 0 ? rc : 0;
}

void an_rank_steps_clear(gt_rank_steps *rs)
{
    for (size_t i = 0; i < rs->n_ranks; i++)
        free(rs->ranks[i].name);
    free(rs->ranks);
    free(rs->steps);
    memset(rs, 0, sizeof *rs);
}
