/* test_analyze_diff.c: a baseline and an optimized run of the same training
 * loop, built with the writer: the optimized one pins its input copies and
 * drops the per-step synchronization, so its steps are shorter, its device
 * busier, its host-wait smaller; the diff says so, by the right amounts. */
#include "analyze_fixture.h"

/* 5 steps. Baseline: a 2 ms pageable input copy, a 3 ms host wait in
 * cudaStreamSynchronize, then the 6 ms compute kernel: 11 ms steps.
 * Optimized: a 1 ms pinned copy and no wait: 7 ms steps. */
static gt_report *run(bool optimized, const char *name)
{
    fx f;
    fx_open(&f, name);
    int64_t t0 = 0;
    for (int i = 0; i < 5; i++) {
        char step[32];
        int64_t copy = optimized ? 1 * MS : 2 * MS, wait = optimized ? 0 : 3 * MS;
        int64_t len = copy + wait + 6 * MS;
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
    free(buf);
    gt_diff_free(rd);
    gt_diff_free(d);
    gt_report_free(a);
    gt_report_free(b);
}

static const gt_test_case cases[] = {
    {"test_analyze_diff__baseline_vs_optimized", test_analyze_diff__baseline_vs_optimized},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"analyze_diff", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
