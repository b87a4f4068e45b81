/* test_analyze_report.c: the measured part of a report on traces built with
 * the writer (steps, utilization, top kernels, API summary, copies, idle gaps
 * and their causes) and on the real nsys exports, whose figures were checked
 * with sqlite3 on the files; the window read of --steps against the whole
 * model. */
#include "analyze_fixture.h"
#include "analyze_int.h"

#include <math.h>

/* A step with three gaps of known cause:
 *   kernel A [100, 1000) us, then the host sits in cudaStreamSynchronize
 *   until 1100 us and launches B at 1200 us: gap [1000, 1300) is host-wait;
 *   C is launched at 1260 us, long before B ends: its 10 us gap is kernel-wait;
 *   D is launched at 1280 us and starts 100 us after C ends: other. */
static gt_trace *three_gaps(void)
{
    fx f;
    fx_open(&f, "gaps.sqlite");
    fx_range(&f, 0, 3000 * US, "step 0");
    fx_range(&f, 900 * US, 1200 * US, "loss.item");
    fx_kernel(&f, 50 * US, 100 * US, 1000 * US, "kernel_a");
    fx_api(&f, 200 * US, 1100 * US, "cudaStreamSynchronize_v3020", 0);
    fx_kernel(&f, 1200 * US, 1300 * US, 2000 * US, "kernel_b");
    fx_kernel(&f, 1260 * US, 2010 * US, 2500 * US, "kernel_c");
    fx_kernel(&f, 1280 * US, 2600 * US, 2900 * US, "kernel_b");
    return fx_close(&f);
}

static void test_analyze_report__gap_causes(void)
{
    gt_trace *t = three_gaps();
    gt_report *r = fx_report(t, NULL);
    const gt_gaps *g = &r->gaps;
    CU_ASSERT_EQUAL(g->n_gaps, 3);
    CU_ASSERT_EQUAL(g->idle_by_cause_ns[GT_GAP_HOST_WAIT], 300 * US);
    CU_ASSERT_EQUAL(g->idle_by_cause_ns[GT_GAP_KERNEL_WAIT], 10 * US);
    CU_ASSERT_EQUAL(g->idle_by_cause_ns[GT_GAP_OTHER], 100 * US);
    CU_ASSERT_EQUAL(g->idle_ns, 410 * US);
    CU_ASSERT_EQUAL_FATAL(g->n_longest, 3);
    const gt_gap *w = &g->longest[0];
    CU_ASSERT_EQUAL(w->start_ns, 1000 * US);
    CU_ASSERT_EQUAL(w->end_ns, 1300 * US);
    CU_ASSERT_EQUAL(w->cause, GT_GAP_HOST_WAIT);
    CU_ASSERT_STRING_EQUAL(w->api, "cudaStreamSynchronize");
    CU_ASSERT_EQUAL(w->api_overlap_ns, 100 * US);
    CU_ASSERT_STRING_EQUAL(w->nvtx, "loss.item");
    CU_ASSERT_STRING_EQUAL(w->nvtx_path, "step 0 > loss.item");
    CU_ASSERT_EQUAL(g->longest[1].cause, GT_GAP_OTHER);
    CU_ASSERT_EQUAL(g->longest[2].cause, GT_GAP_KERNEL_WAIT);
    /* utilization: busy 900 + 700 + 490 + 300 us of the 3000 us trace */
    CU_ASSERT_EQUAL_FATAL(r->n_devices, 1);
    CU_ASSERT_EQUAL(r->devices[0].busy_ns, 2390 * US);
    CU_ASSERT_EQUAL(r->wall_ns, 3000 * US);
    /* top kernels: kernel_b twice (700 + 300 us) leads */
    CU_ASSERT_EQUAL_FATAL(r->n_kernels, 3);
    CU_ASSERT_STRING_EQUAL(r->kernels[0].name, "kernel_b");
    CU_ASSERT_EQUAL(r->kernels[0].d.n, 2);
    CU_ASSERT_EQUAL(r->kernels[0].d.total_ns, 1000 * US);
    CU_ASSERT_EQUAL(r->n_kernel_names, 3);
    /* the API summary drops the version suffix */
    bool sync_row = false;
    for (size_t i = 0; i < r->n_apis; i++)
        if (strcmp(r->apis[i].name, "cudaStreamSynchronize") == 0)
            sync_row = r->apis[i].d.n == 1 && r->apis[i].d.total_ns == 900 * US;
    CU_ASSERT_TRUE(sync_row);
    gt_report_free(r);
    gt_trace_free(t);
}

static void test_analyze_report__steps_and_filter(void)
{
    static const int64_t ms[] = {10, 20, 30, 40, 100};
    fx f;
    fx_open(&f, "steps.sqlite");
    int64_t t0 = 0;
    for (int i = 0; i < 5; i++) {
        char name[32];
        snprintf(name, sizeof name, "step %d", i);
        fx_range(&f, t0, t0 + ms[i] * MS, name);
        fx_range(&f, t0 + 1 * MS, t0 + 2 * MS, "forward"); /* nested: not a step */
        fx_kernel(&f, t0, t0 + 1 * MS, t0 + 5 * MS, "k");
        t0 += ms[i] * MS + 1 * MS;
    }
    fx_range(&f, t0, t0 + 1 * MS, "stepper"); /* not a step name */
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    CU_ASSERT_EQUAL_FATAL(r->n_steps, 5);
    CU_ASSERT_EQUAL(r->steps[4].number, 4);
    CU_ASSERT_EQUAL(r->step_time.n, 5);
    CU_ASSERT_DOUBLE_EQUAL(r->step_time.mean_ns, 40.0 * MS, 1);
    CU_ASSERT_DOUBLE_EQUAL(r->step_time.median_ns, 30.0 * MS, 1);
    CU_ASSERT_DOUBLE_EQUAL(r->step_time.p95_ns, 88.0 * MS, 1); /* 40 + 0.8 * (100 - 40) */
    CU_ASSERT_EQUAL(r->steps[0].busy_ns, 4 * MS);
    gt_report_free(r);

    gt_report_options opt;
    gt_report_options_init(&opt);
    opt.step_first = 1;
    opt.step_last = 3;
    r = fx_report(t, &opt);
    CU_ASSERT_EQUAL_FATAL(r->n_steps, 3);
    CU_ASSERT_EQUAL(r->steps[0].number, 1);
    CU_ASSERT_EQUAL(r->start_ns, 11 * MS);
    CU_ASSERT_EQUAL(r->end_ns, 103 * MS); /* steps start at 0, 11, 32, 63 ms */
    CU_ASSERT_DOUBLE_EQUAL(r->step_time.median_ns, 30.0 * MS, 1);
    CU_ASSERT_EQUAL(r->kernels[0].d.n, 3); /* only kernels of steps 1..3 */
    gt_report_free(r);

    opt.step_first = 7;
    opt.step_last = 9;
    r = NULL;
    CU_ASSERT_EQUAL(gt_report_compute(&r, t, &opt), GT_ERR_NOTFOUND);
    CU_ASSERT_PTR_NULL(r);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "no step"));
    gt_trace_free(t);
}

static void test_analyze_report__step_names(void)
{
    int64_t n;
    CU_ASSERT_TRUE(an_is_step_name("step 12", &n) && n == 12);
    CU_ASSERT_TRUE(an_is_step_name("iteration_3", &n) && n == 3);
    CU_ASSERT_TRUE(an_is_step_name("train_step", &n) && n == -1);
    CU_ASSERT_TRUE(an_is_step_name("Step#4", &n) && n == 4);
    CU_ASSERT_TRUE(an_is_step_name("ProfilerStep#7", &n) && n == 7);
    CU_ASSERT_FALSE(an_is_step_name("ProfilerStepper", &n));
    CU_ASSERT_FALSE(an_is_step_name("stepper", &n));
    CU_ASSERT_FALSE(an_is_step_name("optimizer.step", &n));
    CU_ASSERT_FALSE(an_is_step_name("iterator", &n));
}

static void test_analyze_report__empty_trace(void)
{
    fx f;
    fx_open(&f, "empty.sqlite");
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    CU_ASSERT_EQUAL(r->n_steps, 0);
    CU_ASSERT_EQUAL(r->n_devices, 0);
    CU_ASSERT_EQUAL(r->gaps.n_gaps, 0);
    for (size_t i = 0; i < r->n_advice; i++)
        CU_ASSERT_FALSE(r->advice[i].fired);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_report_print_text(r, m), 0);
    CU_ASSERT_EQUAL(gt_report_print_json(r, m), 0);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "no device activity"));
    free(buf);
    gt_report_free(r);
    gt_trace_free(t);
}

/* No kernels: the CPU backend's ops are the device, and the report says so. */
static void test_analyze_report__cpu_timeline(void)
{
    fx f;
    fx_open(&f, "cpu.sqlite");
    fx_range(&f, 0, 10 * MS, "step 0");
    fx_range(&f, 2 * MS, 6 * MS, "data_load");
    fx_cpu_op(&f, 0, 2 * MS, "matmul");
    fx_cpu_op(&f, 6 * MS, 9 * MS, "matmul");
    fx_cpu_op(&f, 9 * MS + 5 * US, 10 * MS, "relu");
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    CU_ASSERT_TRUE(r->cpu_timeline);
    CU_ASSERT_EQUAL_FATAL(r->n_devices, 1);
    CU_ASSERT_EQUAL(r->devices[0].device_id, -1);
    CU_ASSERT_EQUAL(r->devices[0].busy_ns, 6 * MS - 5 * US);
    CU_ASSERT_EQUAL(r->gaps.idle_by_cause_ns[GT_GAP_HOST_WAIT], 4 * MS);
    CU_ASSERT_EQUAL(r->gaps.idle_by_cause_ns[GT_GAP_KERNEL_WAIT], 5 * US);
    CU_ASSERT_EQUAL(r->gaps.loader_idle_ns, 4 * MS);
    CU_ASSERT_STRING_EQUAL(r->kernels[0].name, "matmul");
    CU_ASSERT_TRUE(fx_fired(r, "data_loader_stall"));
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    gt_report_print_text(r, m);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "CPU compute ops stand in for kernels"));
    free(buf);
    gt_report_free(r);
    gt_trace_free(t);
}

/* No kernels, no GTRACE_CPU_OPS: NVTX ranges of a category named "compute"
 * in their domain are the ops (the trainer's CPU backend). Other categories,
 * the same category id in another domain, uncategorised ranges and an op
 * nested in an op are not. */
static void test_analyze_report__nvtx_compute_ops(void)
{
    const int64_t tid2 = gt_global_tid(PID, 4243);
    fx f;
    fx_open(&f, "nvtx_ops.sqlite");
    fx_category(&f, 0, 1, 1, "compute");
    fx_category(&f, 0, 1, 2, "logging");
    fx_range(&f, 0, 10 * MS, "step 0");
    fx_range(&f, 0, 3 * MS, "forward");
    fx_range_cat(&f, 0, 2 * MS, "matmul_forward", 1, 1, TID);
    fx_range_cat(&f, 2 * MS + 10 * US, 3 * MS, "gelu_forward", 1, 1, TID);   /* 10 us after: kernel-wait */
    fx_range(&f, 3 * MS, 7 * MS, "data");                                     /* 4 ms host-wait, loading */
    fx_range_cat(&f, 4 * MS, 5 * MS, "log_metrics", 1, 2, TID);               /* category "logging" */
    fx_range_cat(&f, 5 * MS, 6 * MS, "io_read", 2, 1, tid2);                  /* category 1 of domain 2 */
    fx_range_cat(&f, 7 * MS, 9 * MS, "matmul_forward", 1, 1, TID);
    fx_range_cat(&f, 7 * MS + 500 * US, 8 * MS, "inner", 1, 1, TID);          /* nested: counted once */
    fx_range_cat(&f, 9 * MS + 500 * US, 10 * MS, "matmul_backward", 1, 1, tid2); /* 500 us gap, other thread */
    fx_category(&f, 9 * MS, 2, 1, "io");
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    CU_ASSERT_TRUE(r->cpu_timeline);
    CU_ASSERT_EQUAL_FATAL(r->n_devices, 1);
    CU_ASSERT_EQUAL(r->devices[0].device_id, -1);
    CU_ASSERT_EQUAL(r->devices[0].span_ns, 10 * MS);
    CU_ASSERT_EQUAL(r->devices[0].busy_ns, 2 * MS + 990 * US + 2 * MS + 500 * US);
    CU_ASSERT_DOUBLE_EQUAL(r->devices[0].utilization, 0.549, 1e-9);
    CU_ASSERT_EQUAL(r->gaps.n_gaps, 3);
    CU_ASSERT_EQUAL(r->gaps.n_by_cause[GT_GAP_KERNEL_WAIT], 1);
    CU_ASSERT_EQUAL(r->gaps.idle_by_cause_ns[GT_GAP_KERNEL_WAIT], 10 * US);
    CU_ASSERT_EQUAL(r->gaps.n_by_cause[GT_GAP_HOST_WAIT], 2);
    CU_ASSERT_EQUAL(r->gaps.idle_by_cause_ns[GT_GAP_HOST_WAIT], 4 * MS + 500 * US);
    CU_ASSERT_EQUAL(r->gaps.loader_idle_ns, 4 * MS);
    CU_ASSERT_EQUAL_FATAL(r->gaps.n_longest, 3);
    CU_ASSERT_EQUAL(r->gaps.longest[0].start_ns, 3 * MS);
    CU_ASSERT_EQUAL(r->gaps.longest[0].end_ns, 7 * MS);
    CU_ASSERT_STRING_EQUAL(r->gaps.longest[0].nvtx_path, "step 0 > data");
    CU_ASSERT_EQUAL(r->n_kernel_names, 3);
    CU_ASSERT_EQUAL_FATAL(r->n_kernels, 3);
    CU_ASSERT_STRING_EQUAL(r->kernels[0].name, "matmul_forward");
    CU_ASSERT_EQUAL(r->kernels[0].d.n, 2);
    CU_ASSERT_EQUAL(r->kernels[0].d.total_ns, 4 * MS);
    CU_ASSERT_STRING_EQUAL(r->kernels[1].name, "gelu_forward");
    CU_ASSERT_EQUAL(r->kernels[1].d.total_ns, 990 * US);
    CU_ASSERT_STRING_EQUAL(r->kernels[2].name, "matmul_backward");
    CU_ASSERT_EQUAL(r->kernels[2].d.total_ns, 500 * US);
    CU_ASSERT_TRUE(fx_fired(r, "data_loader_stall"));
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    gt_report_print_text(r, m);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "CPU compute ops stand in for kernels"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "top CPU ops (3 names)"));
    free(buf);
    gt_report_free(r);
    gt_trace_free(t);

    /* The same ranges without a category named "compute": no device at all. */
    fx_open(&f, "nvtx_no_ops.sqlite");
    fx_category(&f, 0, 1, 1, "kernels");
    fx_range_cat(&f, 0, 2 * MS, "matmul_forward", 1, 1, TID);
    t = fx_close(&f);
    r = fx_report(t, NULL);
    CU_ASSERT_FALSE(r->cpu_timeline);
    CU_ASSERT_EQUAL(r->n_devices, 0);
    gt_report_free(r);
    gt_trace_free(t);
}

static gt_report *fixture_report(const char *name)
{
    char *path = gt_test_fixture(name);
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, 0), 0);
    gt_report *r = fx_report(t, NULL);
    gt_trace_free(t);
    free(path);
    return r;
}

static const gt_name_row *api_row(const gt_report *r, const char *name)
{
    for (size_t i = 0; i < r->n_apis; i++)
        if (strcmp(r->apis[i].name, name) == 0)
            return &r->apis[i];
    return NULL;
}

/* Figures checked with sqlite3 on the file:
 *   select count(*), sum(end-start) from CUPTI_ACTIVITY_KIND_KERNEL;   1312 | 294404540 (102 names)
 *   memcpy by copyKind/srcKind: HtoD from pageable 254 (225065752 bytes), DtoH 25 (51200 bytes);
 *   cudaDeviceSynchronize_v3020: 1312 calls, 301652956 ns. */
static void test_analyze_report__cloverleaf(void)
{
    gt_report *r = fixture_report("nsys/cloverleaf-cuda-nsys2024.5.sqlite");
    CU_ASSERT_EQUAL(r->origin, GT_ORIGIN_NSYS);
    CU_ASSERT_EQUAL(r->n_events[GT_EV_KERNEL], 1312);
    CU_ASSERT_EQUAL(r->n_events[GT_EV_MEMCPY], 279);
    CU_ASSERT_EQUAL(r->n_steps, 0);
    int64_t n_k = 0;
    for (size_t i = 0; i < r->n_kernels; i++)
        n_k += r->kernels[i].d.n;
    CU_ASSERT_TRUE(n_k > 0 && n_k <= 1312);
    CU_ASSERT_EQUAL(r->n_kernel_names, 102);
    const gt_name_row *sync = api_row(r, "cudaDeviceSynchronize");
    CU_ASSERT_PTR_NOT_NULL_FATAL(sync);
    CU_ASSERT_EQUAL(sync->d.n, 1312);
    CU_ASSERT_EQUAL(sync->d.total_ns, 301652956);
    CU_ASSERT_EQUAL_FATAL(r->n_copies, 2);
    CU_ASSERT_EQUAL(r->copies[0].copy_kind, GT_COPY_HTOD);
    CU_ASSERT_EQUAL(r->copies[0].n, 254);
    CU_ASSERT_EQUAL(r->copies[0].n_pageable, 254);
    CU_ASSERT_EQUAL(r->copies[0].bytes, 225065752);
    CU_ASSERT_EQUAL(r->copies[0].total_ns, 9346285);
    CU_ASSERT_EQUAL(r->copies[1].copy_kind, GT_COPY_DTOH);
    CU_ASSERT_EQUAL(r->copies[1].n, 25);
    CU_ASSERT_EQUAL(r->copies[1].bytes, 51200);
    CU_ASSERT_TRUE(fx_fired(r, "pageable_copies"));
    CU_ASSERT_TRUE(fx_fired(r, "cuda_api_sync"));
    CU_ASSERT_TRUE(fx_fired(r, "cuda_memcpy_sync"));
    CU_ASSERT_PTR_NOT_NULL(strstr(fx_rule(r, "cuda_api_sync")->evidence, "1312 synchronization calls"));
    CU_ASSERT_PTR_NOT_NULL(strstr(fx_rule(r, "pageable_copies")->evidence, "279 of 279"));
    CU_ASSERT_FALSE(fx_fired(r, "cuda_memset_sync"));
    CU_ASSERT_FALSE(fx_fired(r, "cuda_memcpy_async"));
    CU_ASSERT_FALSE(fx_fired(r, "sync_in_steps")); /* no steps to be inside */
    CU_ASSERT_EQUAL(r->gaps.n_gaps, r->gaps.n_by_cause[0] + r->gaps.n_by_cause[1] + r->gaps.n_by_cause[2]);
    gt_report_free(r);
}

/* nsys 2.x holds each runtime call twice (class 0 and a class-67 wrapper):
 * the summary counts each call once. sqlite3: 15 cudaMemcpy_v3020, 5 kernels. */
static void test_analyze_report__saxpy(void)
{
    gt_report *r = fixture_report("nsys/saxpy-mpi-cuda-nsys2022.2.sqlite");
    const gt_name_row *cp = api_row(r, "cudaMemcpy");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cp);
    CU_ASSERT_EQUAL(cp->d.n, 15);
    size_t n_memcpy_rows = 0;
    for (size_t i = 0; i < r->n_apis; i++)
        n_memcpy_rows += strcmp(r->apis[i].name, "cudaMemcpy") == 0;
    CU_ASSERT_EQUAL(n_memcpy_rows, 1);
    CU_ASSERT_EQUAL_FATAL(r->n_kernels, 1);
    CU_ASSERT_EQUAL(r->kernels[0].d.n, 5);
    /* its longest gap (196 ms) is the host in MPI_Recv; the cudaMalloc calls
     * at its end (0.9 ms) are too small a part of it to be named */
    CU_ASSERT_TRUE_FATAL(r->gaps.n_longest > 0);
    CU_ASSERT_STRING_EQUAL(r->gaps.longest[0].nvtx, "MPI_Recv");
    CU_ASSERT_STRING_EQUAL(r->gaps.longest[0].api, "");
    CU_ASSERT_EQUAL(r->gaps.longest[0].cause, GT_GAP_HOST_WAIT);
    gt_report_free(r);
}

/* What `gtrace --pytorch` writes: phases in steps, modules and their
 * "NAME backward" ranges, compute ops nested as torch.profiler's are. */
static void test_analyze_report__pytorch_tables(void)
{
    fx f;
    fx_open(&f, "pytorch.sqlite");
    fx_category(&f, 0, 1, 1, "compute");
    fx_range(&f, 0, 10 * MS, "step 0");
    fx_range(&f, 0, 1 * MS, "data");
    fx_range(&f, 1 * MS, 4 * MS, "forward");
    fx_range(&f, 1 * MS, 4 * MS, "Net");
    fx_range(&f, 1500 * US, 3500 * US, "fc");
    fx_range_cat(&f, 2 * MS, 3500 * US, "aten::linear", 1, 1, TID);
    fx_range_cat(&f, 2200 * US, 3400 * US, "aten::addmm [32, 64] [64, 10]", 1, 1, TID); /* called by linear */
    fx_range(&f, 4 * MS, 8 * MS, "backward");
    fx_range(&f, 4 * MS, 8 * MS, "Net backward");
    fx_range(&f, 5 * MS, 7 * MS, "fc backward");
    fx_range(&f, 8 * MS, 9500 * US, "optimizer");
    fx_range(&f, 10 * MS, 20 * MS, "step 1");
    fx_range(&f, 10 * MS, 12 * MS, "forward");
    fx_range(&f, 10 * MS, 12 * MS, "Net");
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    CU_ASSERT_EQUAL_FATAL(r->n_phases, 5);
    const char *names[] = {"data", "forward", "backward", "optimizer", "other"};
    const double shares[] = {1 / 20.0, 5 / 20.0, 4 / 20.0, 1.5 / 20, 8.5 / 20};
    const double medians[] = {0.5 * MS, 2.5 * MS, 2 * MS, 0.75 * MS, 4.25 * MS};
    for (size_t i = 0; i < 5; i++) {
        CU_ASSERT_STRING_EQUAL(r->phases[i].name, names[i]);
        CU_ASSERT_DOUBLE_EQUAL(r->phases[i].share, shares[i], 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(r->phases[i].d.median_ns, medians[i], 1);
    }
    /* self time: linear less the addmm it called; shapes dropped from the name */
    CU_ASSERT_TRUE(r->ops_nest);
    CU_ASSERT_EQUAL(r->n_op_names, 2);
    CU_ASSERT_EQUAL_FATAL(r->n_ops, 2);
    CU_ASSERT_STRING_EQUAL(r->ops[0].name, "aten::addmm");
    CU_ASSERT_EQUAL(r->ops[0].self_ns, 1200 * US);
    CU_ASSERT_STRING_EQUAL(r->ops[1].name, "aten::linear");
    CU_ASSERT_EQUAL(r->ops[1].self_ns, 300 * US);
    CU_ASSERT_EQUAL(r->ops[1].total_ns, 1500 * US);
    CU_ASSERT_DOUBLE_EQUAL(r->ops[0].share, 0.8, 1e-9);
    /* modules: self is less the submodules, forward and backward apart */
    CU_ASSERT_EQUAL(r->n_module_names, 2);
    CU_ASSERT_EQUAL_FATAL(r->n_modules, 2);
    const gt_module_row *net = &r->modules[0], *fc = &r->modules[1];
    CU_ASSERT_STRING_EQUAL(net->name, "Net");
    CU_ASSERT_EQUAL(net->n_forward, 2);
    CU_ASSERT_EQUAL(net->n_backward, 1);
    CU_ASSERT_EQUAL(net->fwd_total_ns, 5 * MS);
    CU_ASSERT_EQUAL(net->fwd_self_ns, 3 * MS);
    CU_ASSERT_EQUAL(net->bwd_total_ns, 4 * MS);
    CU_ASSERT_EQUAL(net->bwd_self_ns, 2 * MS);
    CU_ASSERT_STRING_EQUAL(fc->name, "fc");
    CU_ASSERT_EQUAL(fc->fwd_self_ns, 2 * MS);
    CU_ASSERT_EQUAL(fc->bwd_self_ns, 2 * MS);
    CU_ASSERT_DOUBLE_EQUAL(net->share, 5 / 9.0, 1e-9);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    gt_report_print_text(r, m);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nphases "));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nops by self time (2 names"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nmodules        2 names"));
    free(buf);
    gt_report_free(r);
    gt_trace_free(t);

    /* With a kernel the compute ranges are no CPU timeline, but ops all the
     * same, and the ATen op in the forward is no module. */
    fx_open(&f, "pytorch_gpu.sqlite");
    fx_category(&f, 0, 1, 1, "compute");
    fx_range(&f, 0, 10 * MS, "step 0");
    fx_range(&f, 1 * MS, 4 * MS, "forward");
    fx_range(&f, 1 * MS, 4 * MS, "Net");
    fx_range_cat(&f, 2 * MS, 3 * MS, "aten::mm", 1, 1, TID);
    fx_kernel(&f, 2 * MS, 2100 * US, 2900 * US, "sgemm");
    t = fx_close(&f);
    r = fx_report(t, NULL);
    CU_ASSERT_FALSE(r->cpu_timeline);
    CU_ASSERT_EQUAL_FATAL(r->n_ops, 1);
    CU_ASSERT_STRING_EQUAL(r->ops[0].name, "aten::mm");
    CU_ASSERT_EQUAL(r->ops[0].self_ns, 1 * MS);
    CU_ASSERT_EQUAL_FATAL(r->n_modules, 1);
    CU_ASSERT_STRING_EQUAL(r->modules[0].name, "Net");
    CU_ASSERT_EQUAL(r->modules[0].fwd_self_ns, 3 * MS);
    CU_ASSERT_EQUAL(r->n_phases, 2); /* forward and the rest */
    gt_report_free(r);
    gt_trace_free(t);
}

/* r as text and JSON, one string (malloc'd). */
static char *rendered(const gt_report *r)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(gt_report_print_text(r, f), 0);
    CU_ASSERT_EQUAL(gt_report_print_json(r, f), 0);
    fclose(f);
    return buf;
}

/* Threads of two more processes: TID2 launches, synchronizes and allocates
 * (so a call it is not found for lands elsewhere), TID3 makes the most calls
 * of the trace, none in a step (the main thread is not the window's). */
#define PID2 4343
#define TID2 gt_global_tid(PID2, 4343)
#define TID3 gt_global_tid(4444, 4444)

static void call_on(fx *f, int64_t tid, int64_t s, int64_t e, const char *name, int64_t corr)
{
    gt_event call = {.kind = GT_EV_API};
    call.u.api = (gt_api_call){s, e, tid, corr, fx_s(f, name), GT_API_RUNTIME, 0, 0};
    fx_add(f, &call);
}

/* A kernel [ks, ke) on a device, launched by TID2 over [ls, ls + 5 us)
 * (ls < 0: by no call in the trace). */
static void kernel_on_tid2(fx *f, int32_t device, int64_t ls, int64_t ks, int64_t ke, const char *name)
{
    int64_t corr = ++f->corr;
    if (ls >= 0)
        call_on(f, TID2, ls, ls + 5 * US, "cudaLaunchKernel_v7000", corr);
    gt_event ev = {.kind = GT_EV_KERNEL};
    gt_kernel *k = &ev.u.kernel;
    k->start_ns = ks;
    k->end_ns = ke;
    k->global_pid = gt_global_pid(PID);
    k->stream_id = 7;
    k->correlation_id = corr;
    k->device_id = device;
    k->demangled_name = k->short_name = k->mangled_name = fx_s(f, name);
    k->grid_x = k->grid_y = k->grid_z = k->block_x = k->block_y = k->block_z = 1;
    fx_add(f, &ev);
}

/* Device memory allocated at t + 5 us by a cudaMalloc of TID2 at t (with_call),
 * or by no call in the trace. */
static void devmem_on_tid2(fx *f, int64_t t, uint64_t addr, int64_t bytes, bool with_call)
{
    int64_t corr = ++f->corr;
    if (with_call)
        call_on(f, TID2, t, t + 10 * US, "cudaMalloc_v3020", corr);
    gt_event ev = {.kind = GT_EV_GPU_MEMORY};
    gt_gpu_memory *g = &ev.u.gpu_memory;
    g->start_ns = t + 5 * US;
    g->global_pid = gt_global_pid(PID);
    g->address = addr;
    g->bytes = bytes;
    g->mem_kind = GT_MEM_DEVICE;
    g->operation = GT_DEVMEM_ALLOC;
    g->correlation_id = corr;
    fx_add(f, &ev);
}

/* Ten 1 ms steps (step 5 empty) in an epoch range, each with kernels, a
 * synchronization and a pageable copy; across them, what a window read
 * must reach beyond its steps: a second device busy in step 0 and then
 * after a synchronization that began in step 1 (the call a gap of step 4
 * overlaps most), a kernel of step 4 whose launch is not in the trace (its
 * gap is the main thread's), one of step 8 whose call is stamped after
 * the step, device memory allocated before the first step (by another
 * process's thread, and by no call in the trace) and in step 7, and a main
 * thread busy only after the last step; with long_ones, a kernel running
 * from step 1 into step 6 and a kernel of step 8 launched in step 0 (then
 * the longest activity and launch lead, not the longest call, bound the
 * reads). */
static gt_trace *window_trace(char **out_path, bool long_ones)
{
    fx f;
    fx_open(&f, long_ones ? "window-long.sqlite" : "window.sqlite");
    fx_range(&f, 0, 13 * MS, "epoch");
    fx_devmem(&f, 500 * US, GT_DEVMEM_ALLOC, 0x10000, 4 * MIB);
    devmem_on_tid2(&f, 600 * US, 0x900000, 2 * MIB, true);
    devmem_on_tid2(&f, 700 * US, 0xa00000, 1 * MIB, false);
    devmem_on_tid2(&f, 8900 * US, 0xb00000, 3 * MIB, true);
    for (int i = 0; i < 10; i++) {
        int64_t s = 1 * MS + i * 1100 * US;
        char name[16];
        snprintf(name, sizeof name, "step %d", i);
        fx_range(&f, s, i == 5 ? s : s + 1000 * US, name);
        fx_range(&f, s + 100 * US, s + 400 * US, "forward");
        fx_kernel(&f, s + 50 * US, s + 100 * US, s + 300 * US, "k_fwd");
        fx_kernel(&f, s + 350 * US, s + 500 * US, s + 600 * US, "k_bwd");
        fx_api(&f, s + 600 * US, s + 900 * US, "cudaStreamSynchronize_v3020", 0);
        fx_copy(&f, s + 700 * US, s + 750 * US, "cudaMemcpyAsync_v3020", s + 720 * US, s + 800 * US, GT_COPY_HTOD,
                GT_MEM_PAGEABLE, 1 * MIB);
    }
    if (long_ones) {
        fx_kernel(&f, 2150 * US, 2200 * US, 8000 * US, "k_long");
        kernel_on_tid2(&f, 0, 1100 * US, 10150 * US, 10200 * US, "k_late"); /* in step 8's gap */
    }
    call_on(&f, TID2, 2150 * US, 5450 * US, "cudaDeviceSynchronize_v3020", 0);
    fx_kernel_on(&f, PID, 1, 3, 5390 * US, 5410 * US, "k_dev1_before");
    kernel_on_tid2(&f, 1, 5455 * US, 5470 * US, 5500 * US, "k_after_sync");
    kernel_on_tid2(&f, 0, -1, 5750 * US, 5800 * US, "k_orphan");
    kernel_on_tid2(&f, 0, 10850 * US, 10750 * US, 10790 * US, "k_skew");
    fx_kernel_on(&f, PID, 1, 3, 1010 * US, 1060 * US, "k_dev1");
    gt_event worker = {.kind = GT_EV_NVTX};
    worker.u.nvtx = (gt_nvtx){.start_ns = 9000 * US, .end_ns = 11000 * US, .event_type = GT_NVTX_PUSHPOP,
                              .text = fx_s(&f, "worker"), .global_tid = TID2};
    fx_add(&f, &worker);
    for (int i = 0; i < 60; i++)
        call_on(&f, TID3, 12100 * US + i * 10 * US, 12105 * US + i * 10 * US, "cudaGetDevice_v3020", 0);
    fx_devmem(&f, 12 * MS, GT_DEVMEM_FREE, 0x10000, 4 * MIB);
    gt_trace *t = fx_close(&f);
    *out_path = an_strdup(gt_trace_path(t));
    gt_trace_free(t);
    CU_ASSERT_EQUAL_FATAL(gt_report_keep(*out_path), 0);
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, *out_path, 0), 0);
    return t;
}

/* report --steps from the window and the kept facts is the whole model's,
 * byte for byte, for windows at the ends, around the empty step, past the
 * end and open at either side; one that selects no step fails the same. */
static void check_window_reads(bool long_ones)
{
    static const int64_t windows[][2] = {{0, 0}, {1, 2}, {3, 3}, {5, 5}, {4, 6},  {6, 6},
                                         {8, 8}, {8, 9}, {9, 12}, {-1, 3}, {7, -1}, {11, 13}};
    char *path = NULL;
    gt_trace *t = window_trace(&path, long_ones);
    for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++) {
        gt_report_options opt;
        gt_report_options_init(&opt);
        opt.step_first = windows[w][0];
        opt.step_last = windows[w][1];
        gt_report *whole = NULL, *part = NULL;
        bool read = false;
        int rc_whole = gt_report_compute(&whole, t, &opt);
        char msg[256];
        snprintf(msg, sizeof msg, "%s", rc_whole < 0 ? gt_error_last() : "");
        int rc_part = gt_report_compute_window(&part, &read, t, &opt);
        CU_ASSERT_EQUAL(rc_part, rc_whole);
        if (rc_whole < 0) {
            CU_ASSERT_STRING_EQUAL(gt_error_last(), msg);
            CU_ASSERT_FALSE(read);
            continue;
        }
        CU_ASSERT_TRUE_FATAL(read);
        char *a = rendered(whole), *b = rendered(part);
        if (strcmp(a, b) != 0)
            fprintf(stderr, "\n  --steps %lld:%lld (%s): the window read differs from the whole model\n",
                    (long long)windows[w][0], (long long)windows[w][1], long_ones ? "long ones" : "short");
        CU_ASSERT_STRING_EQUAL(a, b);
        CU_ASSERT_EQUAL(part->n_devices, 2); /* device 1 too, idle or not */
        free(a);
        free(b);
        gt_report_free(whole);
        gt_report_free(part);
    }
    gt_trace_free(t);
    free(path);
}

static void test_analyze_report__window_read(void)
{
    check_window_reads(false);
    check_window_reads(true);
    /* no kept facts: the caller reads the whole model */
    gt_trace *t = three_gaps();
    gt_report_options opt;
    gt_report_options_init(&opt);
    opt.step_first = opt.step_last = 0;
    gt_report *r = NULL;
    bool read = true;
    CU_ASSERT_EQUAL(gt_report_compute_window(&r, &read, t, &opt), 0);
    CU_ASSERT_FALSE(read);
    CU_ASSERT_PTR_NULL(r);
    gt_trace_free(t);
}

static const gt_test_case cases[] = {
    {"test_analyze_report__gap_causes", test_analyze_report__gap_causes},
    {"test_analyze_report__steps_and_filter", test_analyze_report__steps_and_filter},
    {"test_analyze_report__step_names", test_analyze_report__step_names},
    {"test_analyze_report__empty_trace", test_analyze_report__empty_trace},
    {"test_analyze_report__cpu_timeline", test_analyze_report__cpu_timeline},
    {"test_analyze_report__nvtx_compute_ops", test_analyze_report__nvtx_compute_ops},
    {"test_analyze_report__cloverleaf", test_analyze_report__cloverleaf},
    {"test_analyze_report__saxpy", test_analyze_report__saxpy},
    {"test_analyze_report__pytorch_tables", test_analyze_report__pytorch_tables},
    {"test_analyze_report__window_read", test_analyze_report__window_read},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"analyze_report", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
