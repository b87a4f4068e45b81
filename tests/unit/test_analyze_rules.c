/* test_analyze_rules.c: each advice rule fires on a trace that has its
 * problem and stays silent on the same trace without it. Traces are built
 * with the writer; the numbers in the evidence are known by construction. */
#include "analyze_fixture.h"

/* Steps of 10 ms, each with one 8 ms kernel launched at the step start. */
static void busy_steps(fx *f, int n_steps)
{
    for (int i = 0; i < n_steps; i++) {
        char name[32];
        int64_t t0 = i * 10 * MS;
        snprintf(name, sizeof name, "step %d", i);
        fx_range(f, t0, t0 + 10 * MS, name);
        fx_kernel(f, t0, t0 + 1 * MS, t0 + 9 * MS, "compute_kernel");
    }
}

static gt_report *report_of(fx *f)
{
    gt_trace *t = fx_close(f);
    gt_report *r = fx_report(t, NULL);
    gt_trace_free(t);
    return r;
}

static void test_analyze_rules__quiet_trace(void)
{
    fx f;
    fx_open(&f, "quiet.sqlite");
    busy_steps(&f, 5);
    gt_report *r = report_of(&f);
    for (size_t i = 0; i < r->n_advice; i++) {
        if (r->advice[i].fired)
            fprintf(stderr, "unexpected: %s: %s\n", r->advice[i].rule, r->advice[i].evidence);
        CU_ASSERT_FALSE(r->advice[i].fired);
        CU_ASSERT_TRUE(*r->advice[i].threshold != '\0');
    }
    CU_ASSERT_TRUE(r->n_advice >= 16);
    gt_report_free(r);
}

static gt_report *copies(int host_kind, const char *api)
{
    fx f;
    fx_open(&f, "copies.sqlite");
    busy_steps(&f, 5);
    for (int i = 0; i < 20; i++) {
        int64_t t = i * 2 * MS + 9 * MS + 100 * US;
        fx_copy(&f, t, t + 300 * US, api, t + 50 * US, t + 250 * US, GT_COPY_HTOD, host_kind, 4 * MIB);
    }
    return report_of(&f);
}

static void test_analyze_rules__pageable_copies(void)
{
    gt_report *r = copies(GT_MEM_PAGEABLE, "cudaMemcpyAsync_v3020");
    CU_ASSERT_TRUE(fx_fired(r, "pageable_copies"));
    CU_ASSERT_TRUE(fx_fired(r, "cuda_memcpy_async"));
    CU_ASSERT_FALSE(fx_fired(r, "cuda_memcpy_sync"));
    const gt_advice *a = fx_rule(r, "pageable_copies");
    CU_ASSERT_PTR_NOT_NULL(strstr(a->evidence, "20 of 20"));
    CU_ASSERT_EQUAL(a->gain_ns, 20 * 200 * US / 2);
    CU_ASSERT_TRUE(*a->suggestion && *a->gain);
    gt_report_free(r);

    r = copies(GT_MEM_PINNED, "cudaMemcpyAsync_v3020");
    CU_ASSERT_FALSE(fx_fired(r, "pageable_copies"));
    CU_ASSERT_FALSE(fx_fired(r, "cuda_memcpy_async"));
    gt_report_free(r);

    r = copies(GT_MEM_PINNED, "cudaMemcpy_v3020");
    CU_ASSERT_TRUE(fx_fired(r, "cuda_memcpy_sync"));
    CU_ASSERT_PTR_NOT_NULL(strstr(fx_rule(r, "cuda_memcpy_sync")->evidence, "20 synchronous copies"));
    gt_report_free(r);
}

static void test_analyze_rules__memset_sync(void)
{
    for (int sync = 0; sync < 2; sync++) {
        fx f;
        fx_open(&f, "memset.sqlite");
        busy_steps(&f, 3);
        int64_t corr = ++f.corr;
        fx_api(&f, 9 * MS, 9 * MS + 100 * US, sync ? "cudaMemset_v3020" : "cudaMemsetAsync_v3020", corr);
        gt_event ev = {.kind = GT_EV_MEMSET};
        ev.u.memset = (gt_memset){9 * MS + 10 * US, 9 * MS + 50 * US, gt_global_pid(PID), 0, 0, 7, corr, 0, MIB, GT_MEM_DEVICE};
        fx_add(&f, &ev);
        gt_report *r = report_of(&f);
        CU_ASSERT_EQUAL(fx_fired(r, "cuda_memset_sync"), sync == 1);
        gt_report_free(r);
    }
}

static gt_report *syncs(bool with_sync)
{
    fx f;
    fx_open(&f, "sync.sqlite");
    busy_steps(&f, 6);
    if (with_sync)
        for (int i = 0; i < 6; i++)
            fx_api(&f, i * 10 * MS + 1 * MS, i * 10 * MS + 9 * MS, "cudaStreamSynchronize_v3020", 0);
    return report_of(&f);
}

static void test_analyze_rules__sync_in_steps(void)
{
    gt_report *r = syncs(true);
    CU_ASSERT_TRUE(fx_fired(r, "cuda_api_sync"));
    CU_ASSERT_TRUE(fx_fired(r, "sync_in_steps"));
    CU_ASSERT_EQUAL(fx_rule(r, "sync_in_steps")->gain_ns, 6 * 8 * MS);
    CU_ASSERT_PTR_NOT_NULL(strstr(fx_rule(r, "sync_in_steps")->evidence, "1.0 synchronizations per step"));
    gt_report_free(r);
    r = syncs(false);
    CU_ASSERT_FALSE(fx_fired(r, "cuda_api_sync"));
    CU_ASSERT_FALSE(fx_fired(r, "sync_in_steps"));
    gt_report_free(r);
}

/* Every step frees and allocates its activations with cudaMalloc (churn), or
 * allocates once in step 0 and reuses them (no churn). */
static void test_analyze_rules__allocator_churn(void)
{
    for (int churn = 0; churn < 2; churn++) {
        fx f;
        fx_open(&f, "churn.sqlite");
        busy_steps(&f, 5);
        for (int i = 0; i < 5; i++) {
            if (!churn && i > 0)
                break;
            int64_t t0 = i * 10 * MS;
            fx_devmem(&f, t0 + 100 * US, GT_DEVMEM_ALLOC, 0x7000000 + (uint64_t)i * 0x100000, MIB);
            fx_devmem(&f, t0 + 300 * US, GT_DEVMEM_ALLOC, 0x8000000 + (uint64_t)i * 0x100000, MIB);
            if (churn) {
                fx_devmem(&f, t0 + 9500 * US, GT_DEVMEM_FREE, 0x7000000 + (uint64_t)i * 0x100000, MIB);
                fx_devmem(&f, t0 + 9700 * US, GT_DEVMEM_FREE, 0x8000000 + (uint64_t)i * 0x100000, MIB);
            }
        }
        gt_report *r = report_of(&f);
        CU_ASSERT_EQUAL(fx_fired(r, "allocator_churn"), churn == 1);
        if (churn) {
            CU_ASSERT_DOUBLE_EQUAL(r->memory.dev_churn_per_step, 4.0, 1e-9);
            CU_ASSERT_EQUAL(r->steps[2].n_dev_allocs, 2);
            CU_ASSERT_EQUAL(r->steps[2].n_dev_frees, 2);
            CU_ASSERT_EQUAL(fx_rule(r, "allocator_churn")->gain_ns, 4 * 4 * 10 * US); /* steps 1..4 */
        }
        gt_report_free(r);
    }
}

/* No cudaMalloc timed, but each step after the first reserves a segment at
 * its very first nanosecond (the end of the step before) and releases it
 * halfway: 2 per step, in the step it opens. */
static void test_analyze_rules__segment_churn_on_step_start(void)
{
    fx f;
    fx_open(&f, "segchurn.sqlite");
    busy_steps(&f, 5);
    for (int i = 1; i < 5; i++) {
        int64_t t0 = i * 10 * MS;
        uint64_t heap = 0x10000000ULL * (uint64_t)i;
        fx_heap(&f, t0, GT_HEAP_REGISTER, (uint64_t)i, heap, 64 * MIB);
        fx_heap(&f, t0 + 5 * MS, GT_HEAP_UNREGISTER, (uint64_t)i, heap, 0);
    }
    gt_report *r = report_of(&f);
    CU_ASSERT_TRUE_FATAL(fx_fired(r, "allocator_churn"));
    CU_ASSERT_PTR_NOT_NULL(strstr(fx_rule(r, "allocator_churn")->evidence,
                                  "2.0 allocator segments reserved and released per step after the first (8 in those steps)"));
    gt_report_free(r);
}

/* The kernel of each step waits for the host, which is in "data_load" (or
 * in "optimizer", which is no loader). */
static void test_analyze_rules__data_loader(void)
{
    for (int loader = 0; loader < 2; loader++) {
        fx f;
        fx_open(&f, "loader.sqlite");
        for (int i = 0; i < 5; i++) {
            char name[32];
            int64_t t0 = i * 10 * MS;
            snprintf(name, sizeof name, "step %d", i);
            fx_range(&f, t0, t0 + 10 * MS, name);
            fx_range(&f, t0, t0 + 4 * MS, loader ? "data_load" : "optimizer");
            fx_kernel(&f, t0 + 4 * MS, t0 + 4 * MS + 10 * US, t0 + 10 * MS, "compute");
        }
        gt_report *r = report_of(&f);
        CU_ASSERT_EQUAL(fx_fired(r, "data_loader_stall"), loader == 1);
        CU_ASSERT_EQUAL(r->gaps.idle_by_cause_ns[GT_GAP_HOST_WAIT], 4 * (4 * MS + 10 * US));
        if (loader)
            CU_ASSERT_EQUAL(fx_rule(r, "data_loader_stall")->gain_ns, 4 * (4 * MS + 10 * US));
        gt_report_free(r);
    }
}

/* 200 kernels of 5 us with 20 us launch gaps, or 200 kernels of 200 us. */
static void test_analyze_rules__launch_bound(void)
{
    for (int shortk = 0; shortk < 2; shortk++) {
        fx f;
        fx_open(&f, "launch.sqlite");
        int64_t len = shortk ? 5 * US : 200 * US, t = 0;
        for (int i = 0; i < 200; i++) {
            fx_kernel(&f, t, t + 20 * US, t + 20 * US + len, "elementwise");
            t += 20 * US + len;
        }
        gt_report *r = report_of(&f);
        CU_ASSERT_EQUAL(fx_fired(r, "launch_bound"), shortk == 1);
        gt_report_free(r);
    }
}

static void test_analyze_rules__amp_and_conv(void)
{
    static const char *names[] = {"ampere_sgemm_128x64_nn", "ampere_bf16_s16816gemm_bf16_128x64", "implicit_convolve_sgemm",
                                  "cudnn_winograd_conv_128"};
    for (int i = 0; i < 4; i++) {
        for (int major = 6; major <= 8; major += 2) {
            fx f;
            fx_open(&f, "amp.sqlite");
            fx_gpu(&f, major, 0);
            for (int k = 0; k < 10; k++) {
                fx_kernel(&f, k * MS, k * MS + 10 * US, k * MS + 600 * US, names[i]);
                fx_kernel(&f, k * MS, k * MS + 600 * US, k * MS + 990 * US, "other_kernel");
            }
            gt_report *r = report_of(&f);
            CU_ASSERT_EQUAL(fx_fired(r, "amp"), i == 0 && major == 8);
            CU_ASSERT_EQUAL(fx_fired(r, "conv_autotune"), i == 2);
            gt_report_free(r);
        }
    }
}

static void test_analyze_rules__memory_limits(void)
{
    static const int64_t peaks[] = {1024 * MIB, 10 * 1024 * MIB, 15 * 1024 * MIB}; /* 6%, 62%, 94% */
    for (int i = 0; i < 3; i++) {
        fx f;
        fx_open(&f, "limits.sqlite");
        fx_gpu(&f, 8, 16 * 1024 * MIB);
        busy_steps(&f, 3);
        fx_devmem(&f, 1 * MS, GT_DEVMEM_ALLOC, 0x10000000, peaks[i]);
        gt_report *r = report_of(&f);
        CU_ASSERT_EQUAL(r->memory.peak_reserved_bytes, peaks[i]);
        CU_ASSERT_EQUAL(fx_fired(r, "memory_headroom"), i == 0);
        CU_ASSERT_EQUAL(fx_fired(r, "memory_near_limit"), i == 2);
        gt_report_free(r);
    }
}

/* A 600 ms hole in the device timeline (gpu_gaps), which also leaves most
 * 30ths of the trace under 50% busy (gpu_time_util); a 400 ms hole is under
 * gpu_gaps' 500 ms. */
static void test_analyze_rules__gpu_gaps(void)
{
    for (int long_hole = 0; long_hole < 2; long_hole++) {
        fx f;
        fx_open(&f, "hole.sqlite");
        int64_t next = long_hole ? 700 * MS : 500 * MS;
        fx_kernel(&f, 0, 10 * US, 100 * MS, "k");
        fx_kernel(&f, next - 10 * MS, next, next + 100 * MS, "k");
        gt_report *r = report_of(&f);
        CU_ASSERT_EQUAL(fx_fired(r, "gpu_gaps"), long_hole == 1);
        CU_ASSERT_EQUAL(r->gaps.n_long, long_hole);
        if (long_hole) {
            CU_ASSERT_EQUAL(r->gaps.long_ns, 600 * MS);
            CU_ASSERT_EQUAL(fx_rule(r, "gpu_gaps")->from_ns, 100 * MS);
            CU_ASSERT_EQUAL(fx_rule(r, "gpu_gaps")->to_ns, 700 * MS);
        }
        CU_ASSERT_TRUE(fx_fired(r, "gpu_time_util"));
        gt_report_free(r);
    }
}

/* 30 steps of 10 ms, each busy 8 ms, but for steps 10-13 (1 ms each) when
 * `dip`: step 0 is the warm-up, then slices of two steps; those over the dip
 * (9-10, 11-12, 13-14) are 45%, 10% and 45% busy. */
static void test_analyze_rules__gpu_time_util(void)
{
    for (int dip = 0; dip < 2; dip++) {
        fx f;
        fx_open(&f, "util.sqlite");
        for (int i = 0; i < 30; i++) {
            char name[32];
            int64_t t0 = i * 10 * MS, busy = dip && i >= 10 && i < 14 ? 1 * MS : 8 * MS;
            snprintf(name, sizeof name, "step %d", i);
            fx_range(&f, t0, t0 + 10 * MS, name);
            fx_kernel(&f, t0, t0 + 1 * MS, t0 + 1 * MS + busy, "compute_kernel");
        }
        gt_report *r = report_of(&f);
        CU_ASSERT_EQUAL(fx_fired(r, "gpu_time_util"), dip == 1);
        if (dip) {
            const gt_advice *a = fx_rule(r, "gpu_time_util");
            CU_ASSERT_PTR_NOT_NULL(strstr(a->evidence, "3 of 14 slices of 2 steps"));
            CU_ASSERT_PTR_NOT_NULL(strstr(a->evidence, "the worst 10.0% busy"));
            CU_ASSERT_EQUAL(a->from_ns, 110 * MS);
            CU_ASSERT_EQUAL(a->to_ns, 130 * MS);
            CU_ASSERT_EQUAL(a->gain_ns, (10 - 9) * MS + (10 - 2) * MS + (10 - 9) * MS);
        }
        gt_report_free(r);
    }
}

/* The trainer's default run: 48 ms of start-up before step 0 at 47% busy
 * (loading, the first allocations), a slow step 0, then 100 steps of 24 ms
 * at 97.5% busy: no low utilization (30 slices of the whole time called
 * the start-up slice low). A program that really idles, 100 steps of 24 ms
 * at 40% busy, still fires it. */
static void test_analyze_rules__gpu_time_util_startup(void)
{
    for (int idle = 0; idle < 2; idle++) {
        fx f;
        fx_open(&f, "util_startup.sqlite");
        fx_kernel(&f, 0, 1 * MS, 1 * MS + 22600 * US, "init_kernel"); /* 47% of [0, 48 ms) */
        int64_t t0 = 48 * MS;
        fx_range(&f, t0, t0 + 60 * MS, "step 0");
        fx_kernel(&f, t0, t0 + 10 * US, t0 + 30 * MS, "compute_kernel");
        t0 += 60 * MS;
        for (int i = 1; i <= 100; i++) {
            char name[32];
            int64_t busy = idle ? 9600 * US : 23400 * US;
            snprintf(name, sizeof name, "step %d", i);
            fx_range(&f, t0, t0 + 24 * MS, name);
            fx_kernel(&f, t0, t0 + 10 * US, t0 + 10 * US + busy, "compute_kernel");
            t0 += 24 * MS;
        }
        gt_report *r = report_of(&f);
        CU_ASSERT_EQUAL(fx_fired(r, "gpu_time_util"), idle == 1);
        if (idle)
            CU_ASSERT_PTR_NOT_NULL(strstr(fx_rule(r, "gpu_time_util")->evidence, "25 of 25 slices of 4 steps"));
        gt_report_free(r);
    }
}

/* Synchronizations after the last step: the API rule fires, the per-step one
 * does not. */
static void test_analyze_rules__sync_outside_steps(void)
{
    fx f;
    fx_open(&f, "sync_out.sqlite");
    busy_steps(&f, 6);
    for (int i = 0; i < 6; i++)
        fx_api(&f, 61 * MS + i * MS, 61 * MS + i * MS + 500 * US, "cudaDeviceSynchronize_v3020", 0);
    gt_report *r = report_of(&f);
    CU_ASSERT_TRUE(fx_fired(r, "cuda_api_sync"));
    CU_ASSERT_PTR_NOT_NULL(strstr(fx_rule(r, "cuda_api_sync")->evidence, "6 synchronization calls"));
    CU_ASSERT_FALSE(fx_fired(r, "sync_in_steps"));
    gt_report_free(r);
}

/* Two CPU ranks, 3 steps of 10 ms. Exposed: rank 101 computes [0, 6) and
 * then waits for its collective [6, 8): 2 ms of 10 exposed (20%); rank 102
 * computes [0, 7.5) and waits [7.5, 8): it is the straggler rank 101 waits
 * for. Hidden: both collectives start at 5 ms, under compute, and leave
 * 0.5 ms exposed (5%). */
static gt_report *two_ranks(bool exposed, const char *collective)
{
    fx f;
    fx_open(&f, "exposed_comm.sqlite");
    for (int64_t pid = 101; pid <= 102; pid++) {
        int64_t tid = gt_global_tid(pid, pid);
        fx_process(&f, pid, "trainer");
        fx_category_on(&f, 0, 1, 1, "compute", tid);
        fx_category_on(&f, 0, 1, 2, "communication", tid);
        for (int i = 0; i < 3; i++) {
            char name[32];
            int64_t t0 = i * 10 * MS;
            int64_t compute = pid == 101 ? 6 * MS : 7500 * US;
            int64_t cs = exposed ? t0 + compute : t0 + 5 * MS, ce = exposed ? t0 + 8 * MS : cs + compute + 500 * US - 5 * MS;
            snprintf(name, sizeof name, "step %d", i);
            fx_nvtx(&f, GT_NVTX_PUSHPOP, t0, t0 + 10 * MS, name, 1, 0, tid, -1);
            fx_nvtx(&f, GT_NVTX_PUSHPOP, t0, t0 + compute, "matmul_backward", 1, 1, tid, -1);
            fx_nvtx(&f, GT_NVTX_STARTEND, cs, ce, collective, 1, 2, tid, -1);
        }
    }
    return report_of(&f);
}

static void test_analyze_rules__exposed_communication(void)
{
    gt_report *r = two_ranks(true, "allreduce bucket 0");
    CU_ASSERT_TRUE(fx_fired(r, "exposed_communication"));
    const gt_advice *a = fx_rule(r, "exposed_communication");
    CU_ASSERT_PTR_NOT_NULL(strstr(a->evidence, "pid 101 trainer: 2.000 ms of exposed communication per step, "
                                               "20.0% of its step time; 0.0% of its communication (2.000 ms per step) "
                                               "hidden behind compute"));
    CU_ASSERT_PTR_NOT_NULL(strstr(a->evidence, "allreduce bucket (7.500 ms in 6)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(a->suggestion, "smaller buckets"));
    CU_ASSERT_PTR_NOT_NULL(strstr(a->suggestion, "pid 102 computes 1.500 ms more per step than pid 101"));
    CU_ASSERT_EQUAL(a->gain_ns, 6 * MS);
    CU_ASSERT_EQUAL(a->from_ns, 0);
    CU_ASSERT_EQUAL(a->to_ns, 10 * MS);
    gt_report_free(r);

    /* parameter gathers exposed: prefetch, or a lower ZeRO stage */
    r = two_ranks(true, "all-gather block 1");
    CU_ASSERT_TRUE(fx_fired(r, "exposed_communication"));
    CU_ASSERT_PTR_NOT_NULL(strstr(fx_rule(r, "exposed_communication")->suggestion, "ZeRO stage 2"));
    gt_report_free(r);

    /* the same collectives under compute: 5% exposed, silent */
    r = two_ranks(false, "allreduce bucket 0");
    CU_ASSERT_EQUAL_FATAL(r->comm.n_ranks, 2);
    CU_ASSERT_EQUAL(r->comm.ranks[0].exposed_ns, 3 * 500 * US);
    CU_ASSERT_FALSE(fx_fired(r, "exposed_communication"));
    CU_ASSERT_STRING_EQUAL(fx_rule(r, "exposed_communication")->evidence, "");
    gt_report_free(r);
}

/* A block of the allocated peak's size that lives 1 ms of each 10 ms step:
 * 12 MiB on 4 MiB that live throughout fires memory_spike; chunks of 2 MiB do not. */
static void test_analyze_rules__memory_spike(void)
{
    for (int big = 0; big < 2; big++) {
        fx f;
        fx_open(&f, "spike.sqlite");
        busy_steps(&f, 5);
        fx_heap(&f, 1 * US, GT_HEAP_REGISTER, 1, 0x10000000, 16 * MIB);
        fx_heap(&f, 2 * US, GT_REGION_REGISTER, 1, 0x10000000, 4 * MIB);
        for (int i = 0; i < 5; i++) {
            int64_t t0 = i * 10 * MS + 2 * MS;
            fx_heap(&f, t0, GT_REGION_REGISTER, 1, 0x10400000, big ? 12 * MIB : 2 * MIB);
            fx_heap(&f, t0 + 1 * MS, GT_REGION_UNREGISTER, 1, 0x10400000, 0);
        }
        gt_report *r = report_of(&f);
        CU_ASSERT_EQUAL(fx_fired(r, "memory_spike"), big == 1);
        CU_ASSERT_FALSE(fx_fired(r, "memory_fragmentation"));
        if (big)
            CU_ASSERT_PTR_NOT_NULL(strstr(fx_rule(r, "memory_spike")->evidence, "75% of the allocated peak"));
        gt_report_free(r);
    }
}

/* Each step after the first reserves a new, bigger segment for its batch and
 * keeps the old ones cached (fires), or reuses the first step's (silent). */
static void test_analyze_rules__memory_fragmentation(void)
{
    for (int grow = 0; grow < 2; grow++) {
        fx f;
        fx_open(&f, "frag.sqlite");
        busy_steps(&f, 5);
        fx_heap(&f, 1 * US, GT_HEAP_REGISTER, 1, 0x10000000, 4 * MIB);
        fx_heap(&f, 2 * US, GT_REGION_REGISTER, 1, 0x10000000, 4 * MIB);
        for (int i = 0; i < 5; i++) {
            int64_t t0 = i * 10 * MS + 1 * MS, mib = grow ? 4 + i : 8;
            uint64_t base = 0x20000000 + (uint64_t)(grow ? i : 0) * 0x1000000;
            if (grow || i == 0)
                fx_heap(&f, t0, GT_HEAP_REGISTER, (uint64_t)(2 + (grow ? i : 0)), base, mib * MIB);
            fx_heap(&f, t0 + 1 * US, GT_REGION_REGISTER, (uint64_t)(2 + (grow ? i : 0)), base, mib * MIB);
            fx_heap(&f, t0 + 8 * MS, GT_REGION_UNREGISTER, (uint64_t)(2 + (grow ? i : 0)), base, 0);
        }
        gt_report *r = report_of(&f);
        CU_ASSERT_EQUAL(fx_fired(r, "memory_fragmentation"), grow == 1);
        CU_ASSERT_FALSE(fx_fired(r, "allocator_churn")); /* one segment a step, never released */
        if (grow)
            CU_ASSERT_PTR_NOT_NULL(strstr(fx_rule(r, "memory_fragmentation")->evidence, "in 4 of the 4 steps"));
        gt_report_free(r);
    }
}

/* A segment reserved and released in every step (no cache) is churn without
 * any cudaMalloc; reserved once in the first step it is not. */
static void test_analyze_rules__segment_churn(void)
{
    for (int churn = 0; churn < 2; churn++) {
        fx f;
        fx_open(&f, "segchurn.sqlite");
        busy_steps(&f, 5);
        for (int i = 0; i < (churn ? 5 : 1); i++) {
            int64_t t0 = i * 10 * MS + 1 * MS;
            fx_heap(&f, t0, GT_HEAP_REGISTER, (uint64_t)(1 + i), 0x10000000, 2 * MIB);
            fx_heap(&f, t0 + 1 * US, GT_REGION_REGISTER, (uint64_t)(1 + i), 0x10000000, 2 * MIB);
            fx_heap(&f, t0 + 8 * MS, GT_REGION_UNREGISTER, (uint64_t)(1 + i), 0x10000000, 0);
            fx_heap(&f, t0 + 8 * MS + 1 * US, GT_HEAP_UNREGISTER, (uint64_t)(1 + i), 0x10000000, 0);
        }
        gt_report *r = report_of(&f);
        CU_ASSERT_EQUAL(fx_fired(r, "allocator_churn"), churn == 1);
        if (churn)
            CU_ASSERT_PTR_NOT_NULL(strstr(fx_rule(r, "allocator_churn")->evidence, "2.0 allocator segments"));
        gt_report_free(r);
    }
}

/* Without kernels, a host range "synchronize" in each step is a sync in the step. */
static void test_analyze_rules__cpu_sync_ranges(void)
{
    for (int sync = 0; sync < 2; sync++) {
        fx f;
        fx_open(&f, "cpusync.sqlite");
        fx_category(&f, 0, 0, 1, "compute");
        for (int i = 0; i < 5; i++) {
            char name[32];
            int64_t t0 = 1 * MS + i * 10 * MS;
            snprintf(name, sizeof name, "step %d", i);
            fx_range(&f, t0, t0 + 10 * MS, name);
            fx_range_cat(&f, t0, t0 + 8 * MS, "matmul", 0, 1, TID);
            fx_range(&f, t0 + 8 * MS, t0 + 9 * MS, sync ? "synchronize" : "log");
        }
        gt_report *r = report_of(&f);
        CU_ASSERT_TRUE(r->cpu_timeline);
        CU_ASSERT_EQUAL(fx_fired(r, "sync_in_steps"), sync == 1);
        CU_ASSERT_EQUAL(fx_fired(r, "cuda_api_sync"), sync == 1);
        if (sync)
            CU_ASSERT_EQUAL(fx_rule(r, "sync_in_steps")->gain_ns, 5 * MS);
        gt_report_free(r);
    }
}

static const gt_test_case cases[] = {
    {"test_analyze_rules__quiet_trace", test_analyze_rules__quiet_trace},
    {"test_analyze_rules__pageable_copies", test_analyze_rules__pageable_copies},
    {"test_analyze_rules__memset_sync", test_analyze_rules__memset_sync},
    {"test_analyze_rules__sync_in_steps", test_analyze_rules__sync_in_steps},
    {"test_analyze_rules__allocator_churn", test_analyze_rules__allocator_churn},
    {"test_analyze_rules__segment_churn_on_step_start", test_analyze_rules__segment_churn_on_step_start},
    {"test_analyze_rules__data_loader", test_analyze_rules__data_loader},
    {"test_analyze_rules__launch_bound", test_analyze_rules__launch_bound},
    {"test_analyze_rules__amp_and_conv", test_analyze_rules__amp_and_conv},
    {"test_analyze_rules__memory_limits", test_analyze_rules__memory_limits},
    {"test_analyze_rules__gpu_gaps", test_analyze_rules__gpu_gaps},
    {"test_analyze_rules__gpu_time_util", test_analyze_rules__gpu_time_util},
    {"test_analyze_rules__gpu_time_util_startup", test_analyze_rules__gpu_time_util_startup},
    {"test_analyze_rules__sync_outside_steps", test_analyze_rules__sync_outside_steps},
    {"test_analyze_rules__exposed_communication", test_analyze_rules__exposed_communication},
    {"test_analyze_rules__memory_spike", test_analyze_rules__memory_spike},
    {"test_analyze_rules__memory_fragmentation", test_analyze_rules__memory_fragmentation},
    {"test_analyze_rules__segment_churn", test_analyze_rules__segment_churn},
    {"test_analyze_rules__cpu_sync_ranges", test_analyze_rules__cpu_sync_ranges},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"analyze_rules", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
