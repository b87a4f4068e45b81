/* test_analyze_diff.c: a baseline and an optimized run of the same training
 * loop, built with the writer: the optimized one pins its input copies and
 * drops the per-step synchronization, so its steps are shorter, its device
 * busier, its host-wait smaller; the diff says so, by the right amounts.
 * A rank whose collectives moved under compute: less exposed communication.
 * And the statistics the verdicts rest on, on samples of known
 * distributions: A/A pairs are the same, a 10% shift is found, the spread
 * between runs widens the interval, warm-up steps are found and left out,
 * too few steps give no verdict. */
#include "analyze_fixture.h"
#include "diff_int.h"
#include "gt_metrics.h"
#include "gt_vocab.h"

#include <math.h>

/* 12 steps. Baseline: a 2 ms pageable input copy, a 3 ms host wait in
 * cudaStreamSynchronize, then the 6 ms compute kernel: 11 ms steps.
 * Optimized: a 1 ms pinned copy and no wait: 7 ms steps. The kernel varies
 * by -50, 0, +50 us from step to step, so the medians are 11 and 7 ms. */
static gt_report *run(bool optimized, const char *name)
{
    fx f;
    fx_open(&f, name);
    int64_t t0 = 0;
    for (int i = 0; i < 12; i++) {
        char step[32];
        int64_t copy = optimized ? 1 * MS : 2 * MS, wait = optimized ? 0 : 3 * MS;
        int64_t len = copy + wait + 6 * MS + (i % 3 - 1) * 50 * US;
        snprintf(step, sizeof step, "step %d", i);
        fx_range(&f, t0, t0 + len, step);
        fx_copy(&f, t0, t0 + copy, optimized ? "cudaMemcpyAsync_v3020" : "cudaMemcpy_v3020", t0, t0 + copy,
                GT_COPY_HTOD, optimized ? GT_MEM_PINNED : GT_MEM_PAGEABLE, 64 * MIB);
        if (wait)
            fx_api(&f, t0 + copy, t0 + copy + wait, "cudaStreamSynchronize_v3020", 0);
        fx_kernel(&f, t0 + copy + wait - 10 * US, t0 + copy + wait, t0 + len, "train_kernel");
        t0 += len;
    }
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    gt_trace_free(t);
    return r;
}

static const gt_diff_row *row(const gt_diff *d, const char *metric)
{
    for (size_t i = 0; i < d->n_rows; i++)
        if (strcmp(d->rows[i].metric, metric) == 0)
            return &d->rows[i];
    fprintf(stderr, "no row %s\n", metric);
    CU_FAIL_FATAL("diff row missing");
    return NULL;
}

static void test_analyze_diff__baseline_vs_optimized(void)
{
    gt_report *a = run(false, "base.sqlite"), *b = run(true, "opt.sqlite");
    gt_diff *d = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_diff_compute(&d, a, b), 0);
    const gt_diff_row *st = row(d, "step time median");
    CU_ASSERT_DOUBLE_EQUAL(st->before, 11.0 * MS, 1);
    CU_ASSERT_DOUBLE_EQUAL(st->after, 7.0 * MS, 1);
    CU_ASSERT_DOUBLE_EQUAL(st->change, -4.0 / 11.0, 1e-9);
    CU_ASSERT_EQUAL(st->verdict, 1);
    CU_ASSERT_EQUAL(st->n_before, 11); /* step 0 left out as warm-up */
    CU_ASSERT_TRUE(st->lo <= st->change && st->change <= st->hi && st->hi < 0);
    const gt_diff_row *u = row(d, "device utilization");
    CU_ASSERT_TRUE(u->after > u->before);
    CU_ASSERT_EQUAL(u->verdict, 1);
    /* the 3 ms waits were device idle waiting on the host, per step */
    const gt_diff_row *hw = row(d, "idle host-wait per step");
    CU_ASSERT_TRUE(hw->before > hw->after);
    CU_ASSERT_EQUAL(hw->verdict, 1);
    const gt_diff_row *pg = row(d, "HtoD pageable copies per step");
    CU_ASSERT_DOUBLE_EQUAL(pg->before, 1.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(pg->after, 0.0, 1e-9);
    const gt_diff_row *bw = row(d, "HtoD bandwidth");
    CU_ASSERT_DOUBLE_EQUAL(bw->after / bw->before, 2.0, 1e-9);
    CU_ASSERT_EQUAL(bw->verdict, 1);
    const gt_diff_row *k = row(d, "kernel time per step: train_kernel");
    CU_ASSERT_EQUAL(k->verdict, 0); /* same kernel, same time */
    const gt_diff_row *adv = row(d, "advice rules fired");
    CU_ASSERT_TRUE(adv->after < adv->before);

    /* reversed, the same rows are worse */
    gt_diff *rd = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_diff_compute(&rd, b, a), 0);
    CU_ASSERT_EQUAL(row(rd, "step time median")->verdict, -1);
    CU_ASSERT_EQUAL(row(rd, "device utilization")->verdict, -1);

    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_diff_print_text(d, m), 0);
    CU_ASSERT_EQUAL(gt_diff_print_json(d, m), 0);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "step time median"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"verdict\":\"better\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "warm-up left out: step 0"));
    CU_ASSERT_PTR_NULL(strstr(buf, "WORSE"));
    free(buf);
    gt_diff_free(rd);
    gt_diff_free(d);
    gt_report_free(a);
    gt_report_free(b);
}

/* One CPU rank, 8 steps of 10 ms, compute [0, 6). Before: one collective
 * [6, 8), all of it exposed. After: two, [4.5, 5.5) and [5.5, 6.5): the same
 * 2 ms of communication, 1.5 ms of it under compute. */
static gt_report *comm_run(bool overlapped, const char *name)
{
    fx f;
    fx_open(&f, name);
    fx_category_on(&f, 0, 1, 1, "compute", TID);
    fx_category_on(&f, 0, 1, 2, "communication", TID);
    for (int i = 0; i < 8; i++) {
        char step[32];
        int64_t t0 = i * 10 * MS;
        snprintf(step, sizeof step, "step %d", i);
        fx_nvtx(&f, GT_NVTX_PUSHPOP, t0, t0 + 10 * MS, step, 1, 0, TID, -1);
        fx_nvtx(&f, GT_NVTX_PUSHPOP, t0, t0 + 6 * MS, "matmul_backward", 1, 1, TID, -1);
        if (overlapped) {
            fx_nvtx(&f, GT_NVTX_STARTEND, t0 + 4500 * US, t0 + 5500 * US, "allreduce bucket 0", 1, 2, TID, -1);
            fx_nvtx(&f, GT_NVTX_STARTEND, t0 + 5500 * US, t0 + 6500 * US, "allreduce bucket 1", 1, 2, TID, -1);
        } else {
            fx_nvtx(&f, GT_NVTX_STARTEND, t0 + 6 * MS, t0 + 8 * MS, "allreduce bucket 0", 1, 2, TID, -1);
        }
    }
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    gt_trace_free(t);
    return r;
}

static void test_analyze_diff__communication(void)
{
    gt_report *a = comm_run(false, "comm_before.sqlite"), *b = comm_run(true, "comm_after.sqlite");
    gt_diff *d = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_diff_compute(&d, a, b), 0);
    const gt_diff_row *c = row(d, "communication per step");
    CU_ASSERT_DOUBLE_EQUAL(c->before, 2.0 * MS, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(c->after, 2.0 * MS, 1e-6);
    CU_ASSERT_EQUAL(c->verdict, 0);
    const gt_diff_row *e = row(d, "exposed communication per step");
    CU_ASSERT_DOUBLE_EQUAL(e->before, 2.0 * MS, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(e->after, 0.5 * MS, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(e->change, -0.75, 1e-9);
    CU_ASSERT_EQUAL(e->verdict, 1);
    const gt_diff_row *h = row(d, "communication hidden by compute");
    CU_ASSERT_DOUBLE_EQUAL(h->before, 0.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(h->after, 75.0, 1e-9);
    CU_ASSERT_EQUAL(h->verdict, 1);
    const gt_diff_row *n = row(d, "collectives per step");
    CU_ASSERT_DOUBLE_EQUAL(n->before, 1.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(n->after, 2.0, 1e-9);
    CU_ASSERT_EQUAL(n->verdict, 0); /* more, smaller collectives: the exposed time judges */
    gt_diff_free(d);

    /* against a run without communication: the rows are there, from 0 */
    gt_report *none = run(false, "comm_none.sqlite");
    CU_ASSERT_EQUAL_FATAL(gt_diff_compute(&d, none, a), 0);
    e = row(d, "exposed communication per step");
    CU_ASSERT_DOUBLE_EQUAL(e->before, 0.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(e->after, 2.0 * MS, 1e-6);
    CU_ASSERT_EQUAL(e->verdict, -1);
    gt_diff_free(d);
    /* neither has any: no communication rows */
    CU_ASSERT_EQUAL_FATAL(gt_diff_compute(&d, none, none), 0);
    for (size_t i = 0; i < d->n_rows; i++)
        CU_ASSERT_PTR_NULL(strstr(d->rows[i].metric, "communication"));
    gt_diff_free(d);
    gt_report_free(none);
    gt_report_free(a);
    gt_report_free(b);
}

/* The words the CLI and the viewer share: a bandwidth row reads in GB/s in
 * both (the viewer once printed it as a bare number), version suffixes go,
 * copy directions have one spelling. */
static void test_analyze_diff__vocabulary(void)
{
    char buf[64];
    CU_ASSERT_STRING_EQUAL(gt_diff_cell(buf, sizeof buf, "GB/s", 12.345), "12.35 GB/s");
    CU_ASSERT_STRING_EQUAL(gt_diff_cell(buf, sizeof buf, "ns", 1250000), "1.250 ms");
    CU_ASSERT_STRING_EQUAL(gt_diff_cell(buf, sizeof buf, "bytes", 1536.0 * 1024), "1.50 MiB");
    CU_ASSERT_STRING_EQUAL(gt_diff_change(buf, sizeof buf, -0.125), "-12.5%");
    CU_ASSERT_STRING_EQUAL(gt_api_base_name("cudaLaunchKernel_v7000", buf, sizeof buf), "cudaLaunchKernel");
    CU_ASSERT_STRING_EQUAL(gt_api_base_name("cuda_graph_launch", buf, sizeof buf), "cuda_graph_launch");
    CU_ASSERT_STRING_EQUAL(gt_api_base_name("x_v", buf, sizeof buf), "x_v");
    CU_ASSERT_STRING_EQUAL(gt_copy_kind_name(GT_COPY_HTOD), "HtoD");
    CU_ASSERT_STRING_EQUAL(gt_copy_kind_name(-1), "memset");
    CU_ASSERT_STRING_EQUAL(gt_copy_kind_name(99), "unknown");
}


/* Normal samples (Box-Muller on a fixed xorshift), so each test knows its distribution. */
static uint64_t rng = 12345;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static void normal(double *v, size_t n, double mean, double sd)
{
    for (size_t i = 0; i < n; i++)
        v[i] = mean + sd * sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median and p95 by selection equal those of a sorted copy. */
static void test_analyze_diff__statistics(void)
{
    for (size_t n = 1; n < 60; n++) {
        double v[60], w[60];
        normal(v, n, 10, 3);
        if (n % 7 == 0)
            v[n / 2] = v[0]; /* ties */
        memcpy(w, v, n * sizeof *v);
        qsort(w, n, sizeof *w, cmp_d);
        double pos = 0.95 * (double)(n - 1);
        size_t k = (size_t)pos;
        double p95 = k + 1 < n ? w[k] + (pos - (double)k) * (w[k + 1] - w[k]) : w[k];
        double med = n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2;
        memcpy(w, v, n * sizeof *v);
        CU_ASSERT_DOUBLE_EQUAL(an_stat_of(AN_STAT_MEDIAN, w, n), med, 1e-12);
        memcpy(w, v, n * sizeof *v);
        CU_ASSERT_DOUBLE_EQUAL(an_stat_of(AN_STAT_P95, w, n), p95, 1e-12);
    }
    /* warm-up: the first step always; then the steps far above the median */
    double steps[20];
    for (int i = 0; i < 20; i++)
        steps[i] = 10 + 0.1 * (i % 3);
    CU_ASSERT_EQUAL(an_warmup_n(steps, 20, AN_WARMUP_MADS), 1);
    steps[0] = 50;
    steps[1] = 30;
    steps[2] = 12;
    CU_ASSERT_EQUAL(an_warmup_n(steps, 20, AN_WARMUP_MADS), 3);
    steps[5] = 40; /* a slow step later is not warm-up */
    CU_ASSERT_EQUAL(an_warmup_n(steps, 20, AN_WARMUP_MADS), 3);
    CU_ASSERT_EQUAL(an_warmup_n(steps, 1, AN_WARMUP_MADS), 0);
    /* steps 2 and 3 of five slow (a cache filled late): the warm-up stops at
     * half the run, the first step and one more */
    double five[5] = {10, 50, 50, 10, 10};
    CU_ASSERT_EQUAL(an_warmup_n(five, 5, AN_WARMUP_MADS), 2);
}

/* 200 A/A pairs of 40 steps from one distribution (sd 5%): the 95% interval
 * holds 0 in about 95% of them; a 10% shift is found in every pair; the
 * intervals are the same when asked again. */
static void test_analyze_diff__bootstrap_coverage(void)
{
    enum { PAIRS = 200, N = 40 };
    int aa_out = 0, ab_found = 0;
    for (int p = 0; p < PAIRS; p++) {
        double a[N], b[N], c[N];
        normal(a, N, 100, 5);
        normal(b, N, 100, 5);
        normal(c, N, 110, 5);
        an_series sa = {a, N}, sb = {b, N}, sc = {c, N};
        an_change ch, again;
        CU_ASSERT_EQUAL_FATAL(an_boot_change(&ch, AN_STAT_MEDIAN, &sa, 1, &sb, 1, 500, 0), 0);
        aa_out += ch.lo > 0 || ch.hi < 0;
        CU_ASSERT_EQUAL(an_boot_change(&again, AN_STAT_MEDIAN, &sa, 1, &sb, 1, 500, 0), 0);
        CU_ASSERT_TRUE(again.lo == ch.lo && again.hi == ch.hi);
        CU_ASSERT_EQUAL_FATAL(an_boot_change(&ch, AN_STAT_MEDIAN, &sa, 1, &sc, 1, 500, 0), 0);
        ab_found += ch.lo > 0;
        CU_ASSERT_TRUE(ch.lo < ch.after - ch.before && ch.after - ch.before < ch.hi);
    }
    printf("\n    A/A intervals without 0: %d of %d; +10%% found: %d of %d\n", aa_out, PAIRS, ab_found, PAIRS);
    CU_ASSERT_TRUE(aa_out <= PAIRS / 10); /* 5% expected; the percentile bootstrap is a little narrow */
    CU_ASSERT_EQUAL(ab_found, PAIRS);
}

/* Two runs a side whose steps agree within a run (sd 0.5%) but whose runs
 * differ by 10% (the machine's load): resampling runs puts 0 in the
 * interval; taken as one run a side, the same steps would say "changed". */
static void test_analyze_diff__runs_spread(void)
{
    enum { N = 30 };
    double a1[N], a2[N], b1[N], b2[N];
    normal(a1, N, 100, 0.5);
    normal(a2, N, 110, 0.5);
    normal(b1, N, 102, 0.5);
    normal(b2, N, 109, 0.5);
    an_series a[2] = {{a1, N}, {a2, N}}, b[2] = {{b1, N}, {b2, N}};
    an_change ch;
    CU_ASSERT_EQUAL_FATAL(an_boot_change(&ch, AN_STAT_MEDIAN, a, 2, b, 2, 2000, 0), 0);
    CU_ASSERT_TRUE(ch.lo < 0 && ch.hi > 0);
    /* one run a side cannot see that spread: its steps alone say +2% */
    CU_ASSERT_EQUAL_FATAL(an_boot_change(&ch, AN_STAT_MEDIAN, &a[0], 1, &b[0], 1, 2000, 0), 0);
    CU_ASSERT_TRUE(ch.lo > 0);
}

/* Steps of given lengths (ms) as a trace's report. */
static gt_report *steps_run(const char *name, const double *ms, int n)
{
    fx f;
    fx_open(&f, name);
    int64_t t0 = 0;
    for (int i = 0; i < n; i++) {
        char step[32];
        int64_t len = (int64_t)(ms[i] * MS);
        snprintf(step, sizeof step, "step %d", i);
        fx_range(&f, t0, t0 + len, step);
        fx_kernel(&f, t0, t0 + 10 * US, t0 + len - 100 * US, "k");
        t0 += len;
    }
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    gt_trace_free(t);
    return r;
}

/* The case of the report: 60 steps of one command twice, the second on a
 * busier machine (steps +3%), and a start-up of 3 slow
 * steps: the same. 4 steps a side: too few steps. */
static void test_analyze_diff__warmup_and_too_few(void)
{
    double a[60], b[60];
    normal(a, 60, 16, 0.8);
    normal(b, 60, 16.5, 0.8);
    a[0] = 200, a[1] = 90, a[2] = 40; /* compile, autotune, allocator growth */
    b[0] = 180;
    gt_report *ra = steps_run("warm_a.sqlite", a, 60), *rb = steps_run("warm_b.sqlite", b, 60);
    gt_diff *d = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_diff_compute(&d, ra, rb), 0);
    CU_ASSERT_EQUAL(d->n_runs, 2);
    CU_ASSERT_EQUAL(d->runs[0].n_warmup, 3);
    CU_ASSERT_EQUAL(d->runs[0].warmup_last, 2);
    CU_ASSERT_EQUAL(d->runs[1].n_warmup, 1);
    const gt_diff_row *st = row(d, "step time median");
    CU_ASSERT_EQUAL(st->n_before, 57);
    CU_ASSERT_EQUAL(st->verdict, 0);
    CU_ASSERT_FALSE(st->too_few);
    CU_ASSERT_EQUAL(row(d, "step time mean")->verdict, 0); /* the 200 ms step would have made it -10% */
    CU_ASSERT_EQUAL(row(d, "step time p95")->verdict, 0);
    gt_diff_free(d);
    gt_report *sa = steps_run("few_a.sqlite", a + 10, 4), *sb = steps_run("few_b.sqlite", a + 20, 4);
    double slow[4] = {30, 30, 31, 29};
    gt_report *sc = steps_run("few_c.sqlite", slow, 4);
    CU_ASSERT_EQUAL_FATAL(gt_diff_compute(&d, sa, sc), 0);
    st = row(d, "step time median");
    CU_ASSERT_TRUE(st->too_few);
    CU_ASSERT_EQUAL(st->verdict, 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_diff_print_text(d, m), 0);
    CU_ASSERT_EQUAL(gt_diff_print_json(d, m), 0);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "too few steps\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"verdict\":\"too few steps\""));
    free(buf);
    gt_diff_free(d);
    gt_report_free(sa);
    gt_report_free(sb);
    gt_report_free(sc);
    gt_report_free(ra);
    gt_report_free(rb);
}

/* Load from other programs on the machine: B's run is the same code, but
 * 35 of its 60 steps ran beside another process and took 60% longer, so its
 * median moved +60%; its fastest steps did not move: the same. The same
 * code 10% slower moves the fastest steps too: worse. */
static void test_analyze_diff__load_is_not_a_change(void)
{
    double a[60], b[60], c[60];
    normal(a, 60, 16, 0.3);
    normal(b, 60, 16, 0.3);
    normal(c, 60, 17.6, 0.3);
    for (int i = 20; i < 55; i++)
        b[i] *= 1.6;
    gt_report *ra = steps_run("load_a.sqlite", a, 60), *rb = steps_run("load_b.sqlite", b, 60),
              *rc = steps_run("load_c.sqlite", c, 60);
    gt_diff *d = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_diff_compute(&d, ra, rb), 0);
    const gt_diff_row *st = row(d, "step time median");
    CU_ASSERT_TRUE(st->change > 0.4 && st->lo > 0); /* the median did move */
    CU_ASSERT_EQUAL(st->verdict, 0);
    /* each replicate's change against its own before: a time never falls by more than 100% */
    for (size_t i = 0; i < d->n_rows; i++)
        if (!isnan(d->rows[i].lo) && strcmp(d->rows[i].unit, "ns") == 0)
            CU_ASSERT_TRUE(d->rows[i].lo >= -1 && d->rows[i].lo <= d->rows[i].hi);
    gt_diff_free(d);
    CU_ASSERT_EQUAL_FATAL(gt_diff_compute(&d, ra, rc), 0);
    CU_ASSERT_EQUAL(row(d, "step time median")->verdict, -1);
    CU_ASSERT_EQUAL(row(d, "kernel time per step: k")->verdict, -1);
    gt_diff_free(d);
    gt_report_free(ra);
    gt_report_free(rb);
    gt_report_free(rc);
}

/* Which runs of a side were slowed from first step to last: the one whose
 * fastest steps are 30% slower than the side's fastest run's; not one 3%
 * slower; nor a run too short to judge. */
static void test_analyze_diff__busy_runs(void)
{
    enum { N = 40 };
    double r1[N], r2[N], r3[N], r4[3];
    normal(r1, N, 100, 1);
    normal(r2, N, 103, 1);
    normal(r3, N, 130, 8); /* shifted and wider: another program on the cores */
    normal(r4, 3, 200, 1);
    an_series runs[4] = {{r1, N}, {r2, N}, {r3, N}, {r4, 3}};
    bool busy[4];
    double slower[4];
    size_t fastest;
    CU_ASSERT_EQUAL(an_busy_runs(busy, slower, &fastest, runs, NULL, 4, AN_BUSY_SHARE), 1);
    CU_ASSERT_EQUAL(fastest, 0);
    CU_ASSERT_FALSE(busy[0]);
    CU_ASSERT_FALSE(busy[1]);
    CU_ASSERT_TRUE(busy[2]);
    CU_ASSERT_FALSE(busy[3]);
    CU_ASSERT_DOUBLE_EQUAL(slower[0], 0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(slower[1], 0.03, 0.01);
    CU_ASSERT_TRUE(slower[2] > 0.15 && slower[2] < 0.35);
    CU_ASSERT_TRUE(isnan(slower[3]));
    /* the fastest run is the reference, wherever it is */
    an_series rev[2] = {{r3, N}, {r1, N}};
    CU_ASSERT_EQUAL(an_busy_runs(busy, slower, &fastest, rev, NULL, 2, AN_BUSY_SHARE), 1);
    CU_ASSERT_TRUE(busy[0] && !busy[1]);
    CU_ASSERT_EQUAL(fastest, 1);
}

/* Where the scheduler's account is known, a slower run is busy only if it
 * also waited for a CPU: 30% slower and waiting as little as the fastest run
 * (the program's own threads, not another program) is kept; 30% slower and
 * waiting 25% of its time is busy; a run without the account, or beside a
 * fastest run without it, is judged on its steps alone, as before. */
static void test_analyze_diff__busy_needs_waiting(void)
{
    enum { N = 40 };
    double r1[N], r2[N], r3[N];
    normal(r1, N, 100, 1);
    normal(r2, N, 130, 8);
    normal(r3, N, 131, 8);
    an_series runs[3] = {{r1, N}, {r2, N}, {r3, N}};
    bool busy[3];
    double slower[3];
    size_t fastest;
    double quiet[3] = {0.010, 0.015, 0.025};
    CU_ASSERT_EQUAL(an_busy_runs(busy, slower, &fastest, runs, quiet, 3, AN_BUSY_SHARE), 0);
    CU_ASSERT_FALSE(busy[1] || busy[2]);
    CU_ASSERT_TRUE(slower[1] > 0.15 && slower[2] > 0.15); /* as slow as before: the evidence is what differs */
    double waited[3] = {0.010, 0.25, 0.015};
    CU_ASSERT_EQUAL(an_busy_runs(busy, slower, &fastest, runs, waited, 3, AN_BUSY_SHARE), 1);
    CU_ASSERT_TRUE(busy[1] && !busy[2] && !busy[0]);
    double unknown[3] = {0.010, NAN, 0.015};
    CU_ASSERT_EQUAL(an_busy_runs(busy, slower, &fastest, runs, unknown, 3, AN_BUSY_SHARE), 1);
    CU_ASSERT_TRUE(busy[1] && !busy[2]);
    double no_ref[3] = {NAN, 0.010, 0.015};
    CU_ASSERT_EQUAL(an_busy_runs(busy, slower, &fastest, runs, no_ref, 3, AN_BUSY_SHARE), 2);
    CU_ASSERT_EQUAL(an_busy_runs(busy, slower, &fastest, runs, NULL, 3, AN_BUSY_SHARE), 2);
    CU_ASSERT_EQUAL(fastest, 0);
}

/* n runs of 60 steps around ms each (sd 2%); slow: the factor of run 0's
 * steps (another program on the machine for the whole run), burst: the
 * share of each run's steps that ran beside another program and took 80%
 * longer. */
static void load_runs(gt_report **out, const char *tag, int n, double ms, double slow, double burst)
{
    for (int k = 0; k < n; k++) {
        double v[60];
        char name[64];
        normal(v, 60, ms, 0.02 * ms);
        for (int i = 0; i < 60; i++) {
            if (k == 0)
                v[i] *= slow;
            if (uniform() < burst)
                v[i] *= 1.8;
        }
        snprintf(name, sizeof name, "%s%d.sqlite", tag, k);
        out[k] = steps_run(name, v, 60);
    }
}

static gt_diff *diff_of(gt_report **a, gt_report **b, int n, bool keep_busy)
{
    gt_diff_run ra[3], rb[3];
    gt_diff_run *pa[3], *pb[3];
    for (int k = 0; k < n; k++) {
        ra[k] = (gt_diff_run){.r = a[k], .borrowed = true, .n_steps = a[k]->n_steps};
        rb[k] = (gt_diff_run){.r = b[k], .borrowed = true, .n_steps = b[k]->n_steps};
        CU_ASSERT_EQUAL_FATAL(an_run_report_samples(&ra[k]), 0);
        CU_ASSERT_EQUAL_FATAL(an_run_report_samples(&rb[k]), 0);
        pa[k] = &ra[k];
        pb[k] = &rb[k];
    }
    gt_diff_options opt;
    gt_diff_options_init(&opt);
    opt.keep_busy = keep_busy;
    gt_diff *d = NULL;
    CU_ASSERT_EQUAL(gt_diff_compute_runs(&d, pa, (size_t)n, pb, (size_t)n, &opt), 0);
    for (int k = 0; k < n; k++) {
        for (size_t i = 0; i < ra[k].n_m; i++)
            free(ra[k].m[i].key), free(ra[k].m[i].v);
        for (size_t i = 0; i < rb[k].n_m; i++)
            free(rb[k].m[i].key), free(rb[k].m[i].v);
        free(ra[k].m);
        free(rb[k].m);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    return d;
}

static void free_runs(gt_report **r, int n)
{
    for (int k = 0; k < n; k++)
        gt_report_free(r[k]);
}

/* Three runs a side; the change makes the steps 10% shorter, and one of the
 * three runs after it was slowed by 60% from first step to last (another
 * program on the cores). Resampling runs draws that run two or three times
 * in a quarter of the replicates, so with it in, the interval reaches far
 * above 0: "same". Left out and named, the change is found; --keep-busy
 * gives the old answer. The same runs without the change: the same. */
static void test_analyze_diff__a_slowed_run(void)
{
    gt_report *a[3], *b[3], *c[3];
    load_runs(a, "slow_a", 3, 16, 1, 0);
    load_runs(b, "slow_b", 3, 14.4, 1.6, 0);
    load_runs(c, "slow_c", 3, 16, 1.6, 0);
    gt_diff *d = diff_of(a, b, 3, false);
    CU_ASSERT_TRUE(d->runs[3].busy); /* the first run after */
    CU_ASSERT_TRUE(d->runs[3].fast_slower > 0.4);
    for (int k = 0; k < 6; k++)
        CU_ASSERT_TRUE(k == 3 || !d->runs[k].busy);
    CU_ASSERT_EQUAL(row(d, "step time median")->verdict, 1);
    CU_ASSERT_EQUAL(row(d, "step time median")->n_after, 2 * 59);
    CU_ASSERT_EQUAL(row(d, "step time p10")->verdict, 1);
    CU_ASSERT_EQUAL(row(d, "kernel time per step: k")->verdict, 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_diff_print_text(d, m), 0);
    CU_ASSERT_EQUAL(gt_diff_print_json(d, m), 0);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "slow_b0.sqlite (60 steps; warm-up left out: step 0; left out: a busier machine"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"busy\":true"));
    free(buf);
    gt_diff_free(d);
    d = diff_of(a, b, 3, true);
    CU_ASSERT_FALSE(d->runs[3].busy);
    CU_ASSERT_EQUAL(row(d, "step time median")->verdict, 0);
    gt_diff_free(d);
    d = diff_of(a, c, 3, false);
    CU_ASSERT_TRUE(d->runs[3].busy);
    CU_ASSERT_EQUAL(row(d, "step time median")->verdict, 0);
    CU_ASSERT_EQUAL(row(d, "step time p10")->verdict, 0);
    gt_diff_free(d);
    free_runs(a, 3);
    free_runs(b, 3);
    free_runs(c, 3);
}

/* Two of the three runs after were slowed: leaving both out would leave one
 * run of three, whose steps cannot say how runs differ (a narrow interval on
 * one run: a sure verdict on noise). Every run is kept, and the diff says
 * so, in text and JSON. With one of three slowed, it is left out as before,
 * and so is the slowed one of two (half the side stays). */
static void test_analyze_diff__most_runs_busy(void)
{
    gt_report *a[3], *b[3];
    load_runs(a, "most_a", 3, 16, 1, 0);
    for (int k = 0; k < 3; k++) {
        double v[60];
        char name[64];
        normal(v, 60, k < 2 ? 25.6 : 16, 0.32);
        snprintf(name, sizeof name, "most_b%d.sqlite", k);
        b[k] = steps_run(name, v, 60);
    }
    gt_diff *d = diff_of(a, b, 3, false);
    for (int k = 0; k < 6; k++)
        CU_ASSERT_FALSE(d->runs[k].busy);
    CU_ASSERT_TRUE(d->runs[3].fast_slower > 0.4 && d->runs[4].fast_slower > 0.4);
    CU_ASSERT_FALSE(d->busy_kept[0]);
    CU_ASSERT_TRUE(d->busy_kept[1]);
    CU_ASSERT_EQUAL(row(d, "step time median")->n_after, 3 * 59);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_diff_print_text(d, m), 0);
    CU_ASSERT_EQUAL(gt_diff_print_json(d, m), 0);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "  after: most runs ran on a busier machine: all kept"));
    CU_ASSERT_PTR_NULL(strstr(buf, "  before: most runs"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"busy_runs_kept\":{\"before\":false,\"after\":true}"));
    free(buf);
    gt_diff_free(d);
    gt_report_free(b[1]);
    double v[60];
    normal(v, 60, 16, 0.32);
    b[1] = steps_run("most_b1.sqlite", v, 60);
    d = diff_of(a, b, 3, false);
    CU_ASSERT_TRUE(d->runs[3].busy);
    CU_ASSERT_FALSE(d->busy_kept[1]);
    CU_ASSERT_EQUAL(row(d, "step time median")->n_after, 2 * 59);
    gt_diff_free(d);
    gt_report *c[2];
    load_runs(c, "most_c", 2, 16, 1.6, 0);
    d = diff_of(a, c, 2, false);
    CU_ASSERT_TRUE(d->runs[2].busy); /* the first run after, of two */
    CU_ASSERT_FALSE(d->busy_kept[1]);
    gt_diff_free(d);
    free_runs(c, 2);
    free_runs(a, 3);
    free_runs(b, 3);
}

/* The runs of test_analyze_diff__a_slowed_run with the scheduler's account:
 * the slowed run waited for a CPU 23% of its time, the others 1%: left out,
 * with that evidence in the header and the shares in --json. The same run
 * waiting 1.2% of its time (slowed by its own code, not by the machine) is
 * kept. */
static void test_analyze_diff__busy_evidence(void)
{
    gt_report *a[3], *b[3];
    load_runs(a, "wait_a", 3, 16, 1, 0);
    load_runs(b, "wait_b", 3, 14.4, 1.6, 0);
    for (int k = 0; k < 3; k++) {
        a[k]->cpu_run_ns = b[k]->cpu_run_ns = 1000000000 - 10000000;
        a[k]->cpu_wait_ns = b[k]->cpu_wait_ns = 10000000;
    }
    b[0]->cpu_run_ns = 770000000;
    b[0]->cpu_wait_ns = 230000000;
    gt_diff *d = diff_of(a, b, 3, false);
    CU_ASSERT_TRUE(d->runs[3].busy);
    CU_ASSERT_DOUBLE_EQUAL(d->runs[3].cpu_wait_share, 0.23, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(d->runs[3].fastest_wait_share, 0.01, 1e-9);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_diff_print_text(d, m), 0);
    CU_ASSERT_EQUAL(gt_diff_print_json(d, m), 0);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "slower than the side's fastest run's, waited for a CPU 23.0% of its time, "
                                       "against 1.0% for the side's fastest run)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"cpu_wait_share\":0.23,\"fastest_cpu_wait_share\":0.01,\"busy\":true"));
    free(buf);
    gt_diff_free(d);
    b[0]->cpu_run_ns = 988000000;
    b[0]->cpu_wait_ns = 12000000;
    d = diff_of(a, b, 3, false);
    for (int k = 0; k < 6; k++)
        CU_ASSERT_FALSE(d->runs[k].busy);
    CU_ASSERT_TRUE(d->runs[3].fast_slower > 0.4);
    gt_diff_free(d);
    free_runs(a, 3);
    free_runs(b, 3);
}

/* Another program beside every run, coming and going: in the runs after
 * the change 60% of the steps took 80% longer, in the runs before 20%. The
 * medians moved by the machine (+30% or so) while the code got 10% faster;
 * the fastest steps show the code: "step time p10" is better. */
static void test_analyze_diff__fastest_steps(void)
{
    gt_report *a[3], *b[3];
    load_runs(a, "burst_a", 3, 16, 1, 0.2);
    load_runs(b, "burst_b", 3, 14.4, 1, 0.6);
    gt_diff *d = diff_of(a, b, 3, false);
    const gt_diff_row *p10 = row(d, "step time p10");
    CU_ASSERT_EQUAL(p10->verdict, 1);
    CU_ASSERT_TRUE(p10->change < -0.05 && p10->change > -0.15);
    CU_ASSERT_TRUE(row(d, "step time median")->change > 0);
    CU_ASSERT_NOT_EQUAL(row(d, "step time median")->verdict, 1);
    gt_diff_free(d);
    free_runs(a, 3);
    free_runs(b, 3);
}

/* Which way each metric is better, written down here apart from the
 * registry: a registry row turned the other way fails here, a diff that
 * judges a row by anything but its row's direction fails below. */
static void test_analyze_diff__directions_from_the_registry(void)
{
    static const struct { gt_metric_id id; int lower_better; const char *unit; } want[] = {
        {GT_M_WALL, 1, "ns"}, {GT_M_STEP_TIME, 1, "ns"}, {GT_M_UTILIZATION, -1, "%"}, {GT_M_IDLE, 1, "ns"},
        {GT_M_IDLE_CAUSE, 1, "ns"}, {GT_M_OP_TIME, 1, "ns"}, {GT_M_COPIES, 1, "count"},
        {GT_M_COPY_TIME, 1, "ns"}, {GT_M_BANDWIDTH, -1, "GB/s"}, {GT_M_PAGEABLE, 1, "count"},
        {GT_M_COMM, 1, "ns"}, {GT_M_EXPOSED, 1, "ns"}, {GT_M_HIDDEN, -1, "%"}, {GT_M_COLLECTIVES, 0, "count"},
        {GT_M_ALLOC_END, 1, "bytes"}, {GT_M_PEAK_ALLOCATED, 1, "bytes"}, {GT_M_PEAK_RESERVED, 1, "bytes"},
        {GT_M_ADVICE_FIRED, 1, "count"},
    };
    CU_ASSERT_EQUAL(sizeof want / sizeof want[0], GT_M_N);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const gt_metric *m = gt_metric_get(want[i].id);
        CU_ASSERT_EQUAL(m->lower_better, want[i].lower_better);
        CU_ASSERT_STRING_EQUAL(m->unit, want[i].unit);
        CU_ASSERT_TRUE(m->label && *m->label && m->meaning && *m->meaning);
    }
    /* every row with a verdict follows its metric's direction, both ways round */
    gt_report *a = run(false, "dir_base.sqlite"), *b = run(true, "dir_opt.sqlite");
    gt_report *ca = comm_run(false, "dir_comm_a.sqlite"), *cb = comm_run(true, "dir_comm_b.sqlite");
    gt_report *pairs[][2] = {{a, b}, {b, a}, {ca, cb}, {cb, ca}};
    int n_judged = 0, seen[GT_M_N] = {0};
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        gt_diff *d = NULL;
        CU_ASSERT_EQUAL_FATAL(gt_diff_compute(&d, pairs[p][0], pairs[p][1]), 0);
        for (size_t i = 0; i < d->n_rows; i++) {
            const gt_diff_row *r = &d->rows[i];
            CU_ASSERT_FATAL(r->metric_id >= 0 && r->metric_id < GT_M_N);
            const gt_metric *m = gt_metric_get((gt_metric_id)r->metric_id);
            CU_ASSERT_STRING_EQUAL(r->unit, m->unit);
            if (m->lower_better == 0)
                CU_ASSERT_EQUAL(r->verdict, 0);
            if (r->verdict == 0)
                continue;
            int expect = (r->after < r->before) == (m->lower_better > 0) ? 1 : -1;
            if (r->verdict != expect)
                fprintf(stderr, "%s: verdict %d, its metric says %d\n", r->metric, r->verdict, expect);
            CU_ASSERT_EQUAL(r->verdict, expect);
            n_judged++;
            seen[r->metric_id] = 1;
        }
        gt_diff_free(d);
    }
    /* both directions were put to the test */
    CU_ASSERT_TRUE(seen[GT_M_STEP_TIME] && seen[GT_M_UTILIZATION] && seen[GT_M_IDLE_CAUSE] && seen[GT_M_BANDWIDTH] &&
                   seen[GT_M_EXPOSED] && seen[GT_M_HIDDEN]);
    CU_ASSERT_TRUE(n_judged >= 12);
    gt_report_free(a);
    gt_report_free(b);
    gt_report_free(ca);
    gt_report_free(cb);
}

/* How much runs of one command differ, whatever the code: runs whose steps
 * take 100, 110 and 121 ms (each 10% over the last) on both sides differ by
 * ln 1.1 (the sd of ln step time p10); the diff says what change three runs
 * a side find and how many runs a change of the noise floor needs, in text
 * and JSON. One run a side: unknown, and nothing said. */
static void test_analyze_diff__between_runs(void)
{
    gt_report *a[3], *b[3];
    const double base[3] = {100, 110, 121};
    for (int k = 0; k < 3; k++) {
        double va[20], vb[20];
        char na[32], nb[32];
        for (int i = 0; i < 20; i++)
            va[i] = base[k], vb[i] = 0.9 * base[k];
        snprintf(na, sizeof na, "between_a%d.sqlite", k);
        snprintf(nb, sizeof nb, "between_b%d.sqlite", k);
        a[k] = steps_run(na, va, 20);
        b[k] = steps_run(nb, vb, 20);
    }
    gt_diff *d = diff_of(a, b, 3, true); /* keep all: the slower runs would be left out as busy */
    CU_ASSERT_DOUBLE_EQUAL(d->runs_spread, log(1.1), 1e-6);
    CU_ASSERT_EQUAL(d->spread_runs[0], 3);
    CU_ASSERT_EQUAL(d->spread_runs[1], 3);
    double least = an_smallest_change(d->runs_spread, 3, 3);
    CU_ASSERT_DOUBLE_EQUAL(least, exp(2.8 * log(1.1) * sqrt(2.0 / 3)) - 1, 1e-9);
    CU_ASSERT_EQUAL(an_runs_for_change(log(1.1), 0.05), 60); /* 2 (2.8 ln 1.1 / ln 1.05)^2 = 59.8 */
    CU_ASSERT_EQUAL(an_runs_for_change(0.001, 0.05), 2);
    CU_ASSERT_TRUE(isnan(an_runs_for_change(NAN, 0.05)));
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_diff_print_text(d, m), 0);
    CU_ASSERT_EQUAL(gt_diff_print_json(d, m), 0);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "between runs: step time p10 differs by 10.0% (sd) from one run of a side to "
                                       "another: with 3 and 3 runs a change under about 24% can read same; a change "
                                       "of 5.0% needs about 60 runs a side\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"between_runs\":{\"step_time_p10_sd\":0.1,\"runs\":[3,3],"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"runs_for_noise_floor\":60}"));
    free(buf);
    gt_diff_free(d);
    d = diff_of(a, b, 1, true);
    CU_ASSERT_TRUE(isnan(d->runs_spread));
    buf = NULL;
    m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_diff_print_text(d, m), 0);
    CU_ASSERT_EQUAL(gt_diff_print_json(d, m), 0);
    fclose(m);
    CU_ASSERT_PTR_NULL(strstr(buf, "between runs"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"between_runs\":null"));
    free(buf);
    gt_diff_free(d);
    free_runs(a, 3);
    free_runs(b, 3);
}

static const gt_test_case cases[] = {
    {"test_analyze_diff__between_runs", test_analyze_diff__between_runs},
    {"test_analyze_diff__directions_from_the_registry", test_analyze_diff__directions_from_the_registry},
    {"test_analyze_diff__vocabulary", test_analyze_diff__vocabulary},
    {"test_analyze_diff__baseline_vs_optimized", test_analyze_diff__baseline_vs_optimized},
    {"test_analyze_diff__communication", test_analyze_diff__communication},
    {"test_analyze_diff__statistics", test_analyze_diff__statistics},
    {"test_analyze_diff__bootstrap_coverage", test_analyze_diff__bootstrap_coverage},
    {"test_analyze_diff__runs_spread", test_analyze_diff__runs_spread},
    {"test_analyze_diff__warmup_and_too_few", test_analyze_diff__warmup_and_too_few},
    {"test_analyze_diff__load_is_not_a_change", test_analyze_diff__load_is_not_a_change},
    {"test_analyze_diff__busy_runs", test_analyze_diff__busy_runs},
    {"test_analyze_diff__busy_needs_waiting", test_analyze_diff__busy_needs_waiting},
    {"test_analyze_diff__busy_evidence", test_analyze_diff__busy_evidence},
    {"test_analyze_diff__most_runs_busy", test_analyze_diff__most_runs_busy},
    {"test_analyze_diff__a_slowed_run", test_analyze_diff__a_slowed_run},
    {"test_analyze_diff__fastest_steps", test_analyze_diff__fastest_steps},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"analyze_diff", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
