/* test_analyze_diff.c: a baseline and an optimized run of the same training
 * loop, built with the writer: the optimized one pins its input copies and
 * drops the per-step synchronization, so its steps are shorter, its device
 * busier, its host-wait smaller; the diff says so, by the right amounts.
 * And a rank whose collectives moved under compute: less exposed communication. */
#include "analyze_fixture.h"
#include "gt_vocab.h"

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

/* One CPU rank, 3 steps of 10 ms, compute [0, 6). Before: one collective
 * [6, 8), all of it exposed. After: two, [4.5, 5.5) and [5.5, 6.5): the same
 * 2 ms of communication, 1.5 ms of it under compute. */
static gt_report *comm_run(bool overlapped, const char *name)
{
    fx f;
    fx_open(&f, name);
    fx_category_on(&f, 0, 1, 1, "compute", TID);
    fx_category_on(&f, 0, 1, 2, "communication", TID);
    for (int i = 0; i < 3; i++) {
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

static const gt_test_case cases[] = {
    {"test_analyze_diff__vocabulary", test_analyze_diff__vocabulary},
    {"test_analyze_diff__baseline_vs_optimized", test_analyze_diff__baseline_vs_optimized},
    {"test_analyze_diff__communication", test_analyze_diff__communication},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"analyze_diff", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
