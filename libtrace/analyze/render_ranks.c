/* render_ranks.c: the report's Steps by rank section (rank_steps.c) as text
 * and as JSON; render.c places it. It computes nothing. */
#include "analyze_int.h"
#include "gt_metrics.h"

#include <string.h>

static const char *ns(char *b, double v)
{
    gt_fmt_ns(b, 40, v);
    return b;
}

/* "rank 1 (pid 4993)", as the Communication section names it. */
static const char *label(char *b, size_t n, const gt_rank_steps_rank *k)
{
    gt_comm_rank c = {.pid = k->pid, .rank = k->rank, .device_id = -1};
    return an_rank_label(b, n, &c);
}

static int64_t spread(const gt_rank_step *st)
{
    return st->slowest_work_ns - st->fastest_work_ns;
}

static void print_step(const gt_rank_steps *rs, const gt_rank_step *st, FILE *f)
{
    char a[40], b[40], c[40], ls[64], lf[64];
    fprintf(f, "  step %-5lld slowest %-20s %10s  fastest %-20s %10s  (+%s)\n", (long long)st->number,
            label(ls, sizeof ls, &rs->ranks[st->slowest]), ns(a, (double)st->slowest_work_ns),
            label(lf, sizeof lf, &rs->ranks[st->fastest]), ns(b, (double)st->fastest_work_ns),
            ns(c, (double)spread(st)));
}

void an_rank_steps_print_text(const gt_report *r, FILE *f)
{
    enum { ALL_STEPS_MAX = 6, N_WIDEST = 5 };
    const gt_rank_steps *rs = &r->rank_steps;
    char a[40], b[40], c[40], d[40], lb[64];
    if (rs->n_ranks == 0)
        return;
    fprintf(f, "\nsteps by rank  %zu ranks, each its own steps; work: %s\n", rs->n_ranks,
            rs->waits_known ? "the step less the communication it waited for (exposed)"
                            : "the step's time (no communication in the trace to take out)");
    fprintf(f, "  %-30s %5s %11s %11s %11s %11s  %s\n", "rank", "steps", "median", "max", "work", "waited",
            "slowest in");
    for (size_t i = 0; i < rs->n_ranks; i++) {
        const gt_rank_steps_rank *k = &rs->ranks[i];
        char who[96];
        snprintf(who, sizeof who, "%s %s", label(lb, sizeof lb, k), k->name);
        fprintf(f, "  %-30.30s %5lld %11s %11s %11s %11s  %lld of %zu steps\n", who, (long long)k->step_time.n,
                ns(a, k->step_time.median_ns), ns(b, (double)k->step_time.max_ns), ns(c, k->work.median_ns),
                ns(d, k->step_time.n ? (double)k->waited_ns / (double)k->step_time.n : 0), (long long)k->n_slowest,
                rs->n_steps);
    }
    fputs("  (median and max step time; work and waited: median and mean per step)\n", f);
    if (rs->n_steps == 0)
        return;
    if (rs->n_steps <= ALL_STEPS_MAX) {
        fputs("  slowest rank per step, by work (the others waited for it):\n", f);
        for (size_t i = 0; i < rs->n_steps; i++)
            print_step(rs, &rs->steps[i], f);
        return;
    }
    /* the N_WIDEST steps with the widest spread, by selection: N_WIDEST is tiny */
    size_t pick[N_WIDEST], n_pick = 0;
    for (; n_pick < N_WIDEST; n_pick++) {
        size_t best = rs->n_steps;
        for (size_t i = 0; i < rs->n_steps; i++) {
            bool taken = false;
            for (size_t k = 0; k < n_pick && !taken; k++)
                taken = pick[k] == i;
            if (!taken && (best == rs->n_steps || spread(&rs->steps[i]) > spread(&rs->steps[best])))
                best = i;
        }
        pick[n_pick] = best;
    }
    fprintf(f, "  slowest rank per step, by work: the %zu steps of %zu where the ranks differ most:\n", n_pick,
            rs->n_steps);
    for (size_t i = 0; i < n_pick; i++)
        print_step(rs, &rs->steps[pick[i]], f);
}

void an_rank_steps_print_json(const gt_report *r, gt_json *j)
{
    const gt_rank_steps *rs = &r->rank_steps;
    gt_json_key(j, "rank_steps");
    gt_json_object(j);
    gt_json_kv_bool(j, "waits_known", rs->waits_known);
    gt_json_key(j, "ranks");
    gt_json_array(j);
    for (size_t i = 0; i < rs->n_ranks; i++) {
        const gt_rank_steps_rank *k = &rs->ranks[i];
        gt_json_object(j);
        gt_json_kv_int(j, "pid", k->pid);
        gt_json_kv_int(j, "rank", k->rank);
        gt_json_kv_str(j, "name", k->name);
        an_json_dist(j, gt_metric_key(GT_M_STEP_TIME), &k->step_time);
        an_json_dist(j, "work", &k->work);
        gt_json_kv_int(j, "waited_ns", k->waited_ns);
        gt_json_kv_int(j, "slowest_steps", k->n_slowest);
        gt_json_end(j);
    }
    gt_json_end(j);
    gt_json_key(j, "steps");
    gt_json_array(j);
    for (size_t i = 0; i < rs->n_steps; i++) {
        const gt_rank_step *st = &rs->steps[i];
        gt_json_object(j);
        gt_json_kv_int(j, "number", st->number);
        gt_json_kv_int(j, "ranks", st->n_ranks);
        gt_json_kv_int(j, "slowest", st->slowest);
        gt_json_kv_int(j, "slowest_rank", rs->ranks[st->slowest].rank);
        gt_json_kv_int(j, "slowest_work_ns", st->slowest_work_ns);
        gt_json_kv_int(j, "fastest", st->fastest);
        gt_json_kv_int(j, "fastest_rank", rs->ranks[st->fastest].rank);
        gt_json_kv_int(j, "fastest_work_ns", st->fastest_work_ns);
        gt_json_end(j);
    }
    gt_json_end(j);
    gt_json_end(j);
}
