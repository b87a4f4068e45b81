/* test_analyze_comm.c: the Communication section on traces built with the
 * writer, whose figures are known by construction: two ranks of a CPU job
 * (NVTX "communication" and "compute" categories), two ranks on GPUs (NCCL
 * kernels beside compute kernels), a trace without steps, --steps, a
 * trace without communication, a barrier among sized collectives, and one
 * process driving two GPUs. Times below are in ms unless marked. */
#include "analyze_fixture.h"
#include "analyze_int.h"

enum { DOM = 1, CAT_COMPUTE = 1, CAT_COMM = 2 };
#define PID_A 101
#define PID_B 102
#define PID_C 103
#define TID_OF(pid) gt_global_tid((pid), (pid))

static void op(fx *f, int64_t pid, int64_t s, int64_t e, const char *name)
{
    fx_nvtx(f, GT_NVTX_PUSHPOP, s, e, name, DOM, CAT_COMPUTE, TID_OF(pid), -1);
}

static void coll(fx *f, int64_t pid, int64_t s, int64_t e, const char *name, int64_t bytes)
{
    fx_nvtx(f, GT_NVTX_STARTEND, s, e, name, DOM, CAT_COMM, TID_OF(pid), bytes);
}

static void step(fx *f, int64_t pid, int64_t s, int64_t e, int n)
{
    char name[32];
    snprintf(name, sizeof name, "step %d", n);
    fx_nvtx(f, GT_NVTX_PUSHPOP, s, e, name, DOM, 0, TID_OF(pid), -1);
}

static void categories(fx *f, int64_t pid)
{
    fx_category_on(f, 0, DOM, CAT_COMPUTE, "compute", TID_OF(pid));
    fx_category_on(f, 0, DOM, CAT_COMM, "communication", TID_OF(pid));
}

/* Rank A (pid 101), steps [0, 10) and [10, 20):
 *   step 0: ops [0, 4) [5, 8); bucket 0 [3, 6) 1000 bytes, bucket 1 [7, 9.5) 500 bytes
 *     comm 3 + 2.5 = 5.5, compute 7, overlap [3,4) [5,6) [7,8) = 3, exposed 2.5
 *   step 1: op [10, 18); bucket 0 [12, 19), no payload
 *     comm 7, compute 8, overlap 6, exposed 1
 * Rank B (pid 102), steps [0.5, 10.5) and [10.5, 20.5): one op [s, s + 9) and a
 *   bucket [s + 8.5, s + 10) each: comm 1.5, compute 9, overlap 0.5, exposed 1;
 *   a barrier at [25, 26) outside its steps.
 * Process C (pid 103) names its category 2 "logging": its range is not
 *   communication although A and B call category 2 of domain 1 that. */
static gt_trace *two_cpu_ranks(bool with_ranks)
{
    fx f;
    fx_open(&f, with_ranks ? "comm_cpu_ranks.sqlite" : "comm_cpu.sqlite");
    fx_process(&f, PID_A, "trainer");
    fx_process(&f, PID_B, "trainer");
    fx_process(&f, PID_C, "logger");
    if (with_ranks) { /* as the capture records mpirun's variables: A is rank 1, B rank 0 */
        CU_ASSERT_EQUAL(gt_writer_add_config(f.w, gt_global_pid(PID_A), "env.OMPI_COMM_WORLD_RANK", "1"), 0);
        CU_ASSERT_EQUAL(gt_writer_add_config(f.w, gt_global_pid(PID_B), "env.RANK", "7"), 0); /* outranked by: */
        CU_ASSERT_EQUAL(gt_writer_add_config(f.w, gt_global_pid(PID_B), "env.PMIX_RANK", "0"), 0);
        CU_ASSERT_EQUAL(gt_writer_add_config(f.w, gt_global_pid(PID_C), "env.PMI_RANK", "not a number"), 0);
    }
    categories(&f, PID_A);
    categories(&f, PID_B);
    fx_category_on(&f, 0, DOM, CAT_COMM, "logging", TID_OF(PID_C));
    fx_nvtx(&f, GT_NVTX_PUSHPOP, 0, 5 * MS, "write log", DOM, CAT_COMM, TID_OF(PID_C), -1);

    step(&f, PID_A, 0, 10 * MS, 0);
    op(&f, PID_A, 0, 4 * MS, "matmul_backward");
    coll(&f, PID_A, 3 * MS, 6 * MS, "allreduce bucket 0", 1000);
    op(&f, PID_A, 5 * MS, 8 * MS, "matmul_backward");
    coll(&f, PID_A, 7 * MS, 9500 * US, "allreduce bucket 1", 500);
    step(&f, PID_A, 10 * MS, 20 * MS, 1);
    op(&f, PID_A, 10 * MS, 18 * MS, "matmul_backward");
    coll(&f, PID_A, 12 * MS, 19 * MS, "allreduce bucket 0", -1);

    for (int i = 0; i < 2; i++) {
        int64_t s = 500 * US + i * 10 * MS;
        step(&f, PID_B, s, s + 10 * MS, i);
        op(&f, PID_B, s, s + 9 * MS, "matmul_backward");
        coll(&f, PID_B, s + 8500 * US, s + 10 * MS, "allreduce bucket 0", 1500);
    }
    coll(&f, PID_B, 25 * MS, 26 * MS, "barrier", 0);
    return fx_close(&f);
}

static void test_analyze_comm__cpu_ranks(void)
{
    gt_trace *t = two_cpu_ranks(false);
    gt_report *r = fx_report(t, NULL);
    const gt_comm *c = &r->comm;
    CU_ASSERT_TRUE(r->cpu_timeline);
    CU_ASSERT_EQUAL_FATAL(c->n_ranks, 2); /* not the logger */
    const gt_comm_rank *a = &c->ranks[0], *b = &c->ranks[1];
    CU_ASSERT_EQUAL(a->pid, PID_A);
    CU_ASSERT_EQUAL(b->pid, PID_B);
    CU_ASSERT_EQUAL(a->source, GT_COMM_NVTX);
    CU_ASSERT_EQUAL(a->device_id, -1);
    CU_ASSERT_STRING_EQUAL(a->name, "trainer");
    CU_ASSERT_TRUE(a->own_steps);
    CU_ASSERT_EQUAL_FATAL(a->n_steps, 2);
    CU_ASSERT_EQUAL_FATAL(b->n_steps, 2);

    const gt_comm_step *a0 = &a->steps[0], *a1 = &a->steps[1];
    CU_ASSERT_EQUAL(a0->number, 0);
    CU_ASSERT_EQUAL(a0->comm_ns, 5500 * US);
    CU_ASSERT_EQUAL(a0->compute_ns, 7 * MS);
    CU_ASSERT_EQUAL(a0->overlap_ns, 3 * MS);
    CU_ASSERT_EQUAL(a0->exposed_ns, 2500 * US);
    CU_ASSERT_EQUAL(a0->n_collectives, 2);
    CU_ASSERT_EQUAL(a0->bytes, 1500);
    CU_ASSERT_EQUAL(a0->n_bytes_known, 2);
    CU_ASSERT_EQUAL(a1->number, 1);
    CU_ASSERT_EQUAL(a1->comm_ns, 7 * MS);
    CU_ASSERT_EQUAL(a1->compute_ns, 8 * MS);
    CU_ASSERT_EQUAL(a1->overlap_ns, 6 * MS);
    CU_ASSERT_EQUAL(a1->exposed_ns, 1 * MS);
    CU_ASSERT_EQUAL(a1->n_collectives, 1);
    CU_ASSERT_EQUAL(a1->n_bytes_known, 0);

    CU_ASSERT_EQUAL(a->span_ns, 20 * MS);
    CU_ASSERT_EQUAL(a->comm_ns, 12500 * US);
    CU_ASSERT_EQUAL(a->compute_ns, 15 * MS);
    CU_ASSERT_EQUAL(a->overlap_ns, 9 * MS);
    CU_ASSERT_EQUAL(a->exposed_ns, 3500 * US);
    CU_ASSERT_EQUAL(a->n_collectives, 3);
    CU_ASSERT_EQUAL(a->bytes, 1500);
    CU_ASSERT_EQUAL(a->n_bytes_known, 2);
    CU_ASSERT_DOUBLE_EQUAL(a->hidden, 9.0 / 12.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(a->exposed_share, 3.5 / 20, 1e-12);

    /* B: the barrier after its last step is in none of them */
    CU_ASSERT_EQUAL(b->steps[1].start_ns, 10500 * US);
    CU_ASSERT_EQUAL(b->steps[1].comm_ns, 1500 * US);
    CU_ASSERT_EQUAL(b->steps[1].overlap_ns, 500 * US);
    CU_ASSERT_EQUAL(b->steps[1].exposed_ns, 1 * MS);
    CU_ASSERT_EQUAL(b->comm_ns, 3 * MS);
    CU_ASSERT_EQUAL(b->compute_ns, 18 * MS);
    CU_ASSERT_EQUAL(b->exposed_ns, 2 * MS);
    CU_ASSERT_EQUAL(b->n_collectives, 2);
    CU_ASSERT_EQUAL(b->bytes, 3000);

    /* means over ranks per step; A waits most, B computes most */
    CU_ASSERT_TRUE(c->per_step);
    CU_ASSERT_DOUBLE_EQUAL(c->comm_ns, (6.25 + 1.5) / 2 * MS, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(c->exposed_ns, (1.75 + 1.0) / 2 * MS, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(c->overlap_ns, (4.5 + 0.5) / 2 * MS, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(c->collectives, (1.5 + 1.0) / 2, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(c->hidden, 10.0 / 15.5, 1e-12);
    CU_ASSERT_EQUAL(c->most_exposed, 0);
    CU_ASSERT_EQUAL(c->slowest, 1);

    /* by name, the bucket numbers dropped: each one's own time without compute */
    CU_ASSERT_EQUAL(c->n_kind_names, 1);
    CU_ASSERT_EQUAL_FATAL(c->n_kinds, 1);
    CU_ASSERT_STRING_EQUAL(c->kinds[0].name, "allreduce bucket");
    CU_ASSERT_EQUAL(c->kinds[0].n, 5);
    CU_ASSERT_EQUAL(c->kinds[0].total_ns, 15500 * US);
    CU_ASSERT_EQUAL(c->kinds[0].exposed_ns, 5500 * US);

    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_report_print_text(r, m), 0);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "communication  2 ranks: NVTX ranges of a \"communication\" category"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "pid 101 trainer"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "most exposed: pid 101, 1.750 ms per step"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "slowest: pid 102, 9.000 ms of compute per step"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "1.46 KiB")); /* A's 1500 bytes over 2 steps: 750 B; B's 1500 B */
    free(buf);
    buf = NULL;
    m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_report_print_json(r, m), 0);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"communication\":{\"per_step\":true,"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"pid\":101,\"rank\":-1,\"device_id\":-1,\"source\":\"nvtx\",\"name\":\"trainer\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"comm_ns\":5500000,\"compute_ns\":7000000,\"overlap_ns\":3000000,"
                                       "\"exposed_ns\":2500000,\"collectives\":2,\"bytes\":1500,\"bytes_known\":2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "{\"name\":\"allreduce bucket\",\"n\":5,\"total_ns\":15500000,\"exposed_ns\":5500000}"));
    free(buf);
    gt_report_free(r);

    /* --steps 1:1: each rank's step 1 only */
    gt_report_options opt;
    gt_report_options_init(&opt);
    opt.step_first = opt.step_last = 1;
    r = fx_report(t, &opt);
    CU_ASSERT_EQUAL_FATAL(r->comm.n_ranks, 2);
    CU_ASSERT_EQUAL_FATAL(r->comm.ranks[0].n_steps, 1);
    CU_ASSERT_EQUAL(r->comm.ranks[0].steps[0].number, 1);
    CU_ASSERT_EQUAL(r->comm.ranks[0].exposed_ns, 1 * MS);
    CU_ASSERT_EQUAL(r->comm.ranks[0].n_collectives, 1);
    CU_ASSERT_EQUAL(r->comm.ranks[1].steps[0].start_ns, 10500 * US);
    gt_report_free(r);
    gt_trace_free(t);
}

/* Two ranks on two GPUs (pid 301 on device 0, pid 302 on device 1), NCCL on
 * stream 20 beside compute on stream 7, host steps [0, 10) and [10, 20):
 *   301 step 0: sgemm [1, 6), AllReduce [4, 8): comm 4, compute 5, overlap 2, exposed 2
 *   301 step 1: sgemm [11, 17), AllReduce [12, 15), AllGather [16, 19):
 *               comm 6, compute 6, overlap 3 + 1 = 4, exposed 2
 *   302 step 0: sgemm [1, 9), AllReduce [8, 9.5): comm 1.5, overlap 1, exposed 0.5
 *   302 step 1: sgemm [11, 19), no collective
 * 301's host range of a "communication" category and its copy during the
 * AllReduce are not counted: a process with NCCL kernels is measured on its
 * device, and copies are not compute; the range's payload (4096) is step 0's
 * bytes, all 301's bytes say. */
static void test_analyze_comm__nccl_ranks(void)
{
    static const char *allreduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm *, unsigned long, ncclWork *)";
    static const char *allgather = "void ncclKernel_AllGather_RING_LL<float>(ncclWorkElem)";
    fx f;
    fx_open(&f, "comm_gpu.sqlite");
    fx_gpu(&f, 8, 80LL << 30);
    fx_process(&f, 301, "train.py");
    fx_process(&f, 302, "train.py");
    categories(&f, 301);
    fx_nvtx(&f, GT_NVTX_STARTEND, 0, 10 * MS, "host all-reduce", DOM, CAT_COMM, TID_OF(301), 4096);
    for (int64_t pid = 301; pid <= 302; pid++) {
        step(&f, pid, 0, 10 * MS, 0);
        step(&f, pid, 10 * MS, 20 * MS, 1);
    }
    fx_kernel_on(&f, 301, 0, 7, 1 * MS, 6 * MS, "sgemm");
    fx_kernel_on(&f, 301, 0, 20, 4 * MS, 8 * MS, allreduce);
    fx_kernel_on(&f, 301, 0, 7, 11 * MS, 17 * MS, "sgemm");
    fx_kernel_on(&f, 301, 0, 20, 12 * MS, 15 * MS, allreduce);
    fx_kernel_on(&f, 301, 0, 20, 16 * MS, 19 * MS, allgather);
    fx_kernel_on(&f, 302, 1, 7, 1 * MS, 9 * MS, "sgemm");
    fx_kernel_on(&f, 302, 1, 20, 8 * MS, 9500 * US, allreduce);
    fx_kernel_on(&f, 302, 1, 7, 11 * MS, 19 * MS, "sgemm");
    gt_event ev = {.kind = GT_EV_MEMCPY};
    ev.u.memcpy = (gt_memcpy){.start_ns = 7 * MS, .end_ns = 7500 * US, .global_pid = gt_global_pid(301),
                              .device_id = 0, .stream_id = 7, .bytes = 1 << 20, .copy_kind = GT_COPY_DTOH,
                              .src_kind = GT_MEM_DEVICE, .dst_kind = GT_MEM_PINNED};
    fx_add(&f, &ev);
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    const gt_comm *c = &r->comm;
    CU_ASSERT_FALSE(r->cpu_timeline);
    CU_ASSERT_EQUAL_FATAL(c->n_ranks, 2);
    const gt_comm_rank *a = &c->ranks[0], *b = &c->ranks[1];
    CU_ASSERT_EQUAL(a->pid, 301);
    CU_ASSERT_EQUAL(a->device_id, 0);
    CU_ASSERT_EQUAL(a->source, GT_COMM_NCCL);
    CU_ASSERT_EQUAL(b->pid, 302);
    CU_ASSERT_EQUAL(b->device_id, 1);
    CU_ASSERT_EQUAL_FATAL(a->n_steps, 2);
    CU_ASSERT_EQUAL(a->steps[0].comm_ns, 4 * MS);
    CU_ASSERT_EQUAL(a->steps[0].compute_ns, 5 * MS);
    CU_ASSERT_EQUAL(a->steps[0].overlap_ns, 2 * MS);
    CU_ASSERT_EQUAL(a->steps[0].exposed_ns, 2 * MS);
    CU_ASSERT_EQUAL(a->steps[1].comm_ns, 6 * MS);
    CU_ASSERT_EQUAL(a->steps[1].overlap_ns, 4 * MS);
    CU_ASSERT_EQUAL(a->steps[1].exposed_ns, 2 * MS);
    CU_ASSERT_EQUAL(a->steps[1].n_collectives, 2);
    CU_ASSERT_EQUAL(a->n_collectives, 3);
    CU_ASSERT_EQUAL(a->steps[0].bytes, 4096);
    CU_ASSERT_EQUAL(a->steps[0].n_bytes_known, 1);
    CU_ASSERT_EQUAL(a->steps[1].n_bytes_known, 0);
    CU_ASSERT_EQUAL(a->bytes, 4096);
    CU_ASSERT_EQUAL(b->n_bytes_known, 0);
    CU_ASSERT_EQUAL(a->comm_ns, 10 * MS);
    CU_ASSERT_EQUAL(a->compute_ns, 11 * MS);
    CU_ASSERT_EQUAL(a->exposed_ns, 4 * MS);
    CU_ASSERT_EQUAL_FATAL(b->n_steps, 2);
    CU_ASSERT_EQUAL(b->comm_ns, 1500 * US);
    CU_ASSERT_EQUAL(b->compute_ns, 16 * MS);
    CU_ASSERT_EQUAL(b->overlap_ns, 1 * MS);
    CU_ASSERT_EQUAL(b->exposed_ns, 500 * US);
    CU_ASSERT_EQUAL(b->steps[1].n_collectives, 0);
    CU_ASSERT_EQUAL(c->most_exposed, 0);
    CU_ASSERT_EQUAL(c->slowest, 1);
    /* kernel names by kind: the argument list and "void " dropped */
    CU_ASSERT_EQUAL_FATAL(c->n_kinds, 2);
    CU_ASSERT_STRING_EQUAL(c->kinds[0].name, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    CU_ASSERT_EQUAL(c->kinds[0].n, 3);
    CU_ASSERT_EQUAL(c->kinds[0].total_ns, 8500 * US);
    CU_ASSERT_EQUAL(c->kinds[0].exposed_ns, 2 * MS + 0 + 500 * US);
    CU_ASSERT_STRING_EQUAL(c->kinds[1].name, "ncclKernel_AllGather_RING_LL<float>");
    CU_ASSERT_EQUAL(c->kinds[1].exposed_ns, 2 * MS);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_report_print_text(r, m), 0);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "communication  2 ranks: NCCL kernels; compute: kernels that are not NCCL's"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "pid 301 dev 0"));
    free(buf);
    gt_report_free(r);
    gt_trace_free(t);
}

/* Without step ranges the figures are over the window: op [0, 6), a
 * collective [4, 10) of 64 bytes: comm 6, overlap 2, exposed 4 of 10. */
static void test_analyze_comm__no_steps(void)
{
    fx f;
    fx_open(&f, "comm_nosteps.sqlite");
    categories(&f, PID);
    op(&f, PID, 0, 6 * MS, "matmul_forward");
    coll(&f, PID, 4 * MS, 10 * MS, "all-gather parameters", 64);
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    const gt_comm *c = &r->comm;
    CU_ASSERT_EQUAL_FATAL(c->n_ranks, 1);
    CU_ASSERT_FALSE(c->per_step);
    CU_ASSERT_EQUAL(c->ranks[0].n_steps, 0);
    CU_ASSERT_FALSE(c->ranks[0].own_steps);
    CU_ASSERT_EQUAL(c->ranks[0].span_ns, 10 * MS);
    CU_ASSERT_EQUAL(c->ranks[0].comm_ns, 6 * MS);
    CU_ASSERT_EQUAL(c->ranks[0].overlap_ns, 2 * MS);
    CU_ASSERT_EQUAL(c->ranks[0].exposed_ns, 4 * MS);
    CU_ASSERT_EQUAL(c->ranks[0].bytes, 64);
    CU_ASSERT_DOUBLE_EQUAL(c->exposed_ns, 4.0 * MS, 1e-6);
    CU_ASSERT_STRING_EQUAL(c->kinds[0].name, "all-gather parameters");
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_report_print_text(r, m), 0);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "over the window (no steps), mean over ranks: comm 6.000 ms, exposed 4.000 ms"));
    free(buf);
    gt_report_free(r);
    gt_trace_free(t);
}

/* Many steps: the text keeps the 5 with most exposed time, worst first.
 * 10 steps of 10 ms, op [0, 5), a collective [5, 5 + 0.1 (i + 1)) but step 7's
 * [5, 9): exposed 4 ms, then step 9's 1 ms, step 8's 0.9 ms... */
static void test_analyze_comm__many_steps(void)
{
    fx f;
    fx_open(&f, "comm_many.sqlite");
    categories(&f, PID);
    for (int i = 0; i < 10; i++) {
        int64_t t0 = i * 10 * MS;
        step(&f, PID, t0, t0 + 10 * MS, i);
        op(&f, PID, t0, t0 + 5 * MS, "matmul_backward");
        coll(&f, PID, t0 + 5 * MS, t0 + 5 * MS + (i == 7 ? 4 * MS : (i + 1) * 100 * US), "allreduce bucket 0", -1);
    }
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    CU_ASSERT_EQUAL_FATAL(r->comm.n_ranks, 1);
    CU_ASSERT_EQUAL(r->comm.ranks[0].n_steps, 10);
    CU_ASSERT_EQUAL(r->comm.ranks[0].exposed_ns, 4 * MS + (55 - 8) * 100 * US);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_report_print_text(r, m), 0);
    fclose(m);
    const char *head = strstr(buf, "the 5 steps with most exposed communication, of 10 (rank x step):\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(head);
    const char *s7 = strstr(head, "step 7 "), *s9 = strstr(head, "step 9 "), *s8 = strstr(head, "step 8 ");
    const char *s5 = strstr(head, "step 5 "), *s4 = strstr(head, "step 4 ");
    CU_ASSERT_TRUE(s7 && s9 && s8 && s5 && s7 < s9 && s9 < s8);
    CU_ASSERT_PTR_NULL(s4); /* 0.5 ms: the sixth */
    free(buf);
    gt_report_free(r);
    gt_trace_free(t);
}

/* No communication: no ranks, no section; the JSON says so with an empty list. */
/* One process driving two GPUs: NCCL on GPU 0 [2, 6), GPU 0's own compute
 * [7, 8), and GPU 1 computing [1, 9) throughout. GPU 1's kernels hide none
 * of GPU 0's communication: overlap 0, all 4 ms exposed. */
static void test_analyze_comm__nccl_beside_other_gpu(void)
{
    static const char *allreduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm *, unsigned long, ncclWork *)";
    fx f;
    fx_open(&f, "comm_two_gpus.sqlite");
    fx_gpu(&f, 8, 80LL << 30);
    fx_process(&f, 401, "train.py");
    step(&f, 401, 0, 10 * MS, 0);
    fx_kernel_on(&f, 401, 0, 20, 2 * MS, 6 * MS, allreduce);
    fx_kernel_on(&f, 401, 0, 7, 7 * MS, 8 * MS, "sgemm");
    fx_kernel_on(&f, 401, 1, 7, 1 * MS, 9 * MS, "sgemm");
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    CU_ASSERT_EQUAL_FATAL(r->comm.n_ranks, 1);
    const gt_comm_rank *a = &r->comm.ranks[0];
    CU_ASSERT_EQUAL(a->source, GT_COMM_NCCL);
    CU_ASSERT_EQUAL(a->device_id, 0);
    CU_ASSERT_EQUAL(a->comm_ns, 4 * MS);
    CU_ASSERT_EQUAL(a->compute_ns, 1 * MS);
    CU_ASSERT_EQUAL(a->overlap_ns, 0);
    CU_ASSERT_EQUAL(a->exposed_ns, 4 * MS);
    gt_report_free(r);
    gt_trace_free(t);
}

/* A barrier (a collective of 0 bytes) beside a sized all-reduce in one step:
 * both have known sizes, the barrier's none. */
static void test_analyze_comm__barrier_in_step(void)
{
    fx f;
    fx_open(&f, "comm_barrier.sqlite");
    fx_process(&f, PID_A, "trainer");
    categories(&f, PID_A);
    step(&f, PID_A, 0, 10 * MS, 0);
    op(&f, PID_A, 0, 4 * MS, "matmul_backward");
    coll(&f, PID_A, 3 * MS, 6 * MS, "allreduce bucket 0", 1000);
    coll(&f, PID_A, 8 * MS, 9 * MS, "barrier", 0);
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    CU_ASSERT_EQUAL_FATAL(r->comm.n_ranks, 1);
    const gt_comm_rank *a = &r->comm.ranks[0];
    CU_ASSERT_EQUAL_FATAL(a->n_steps, 1);
    CU_ASSERT_EQUAL(a->steps[0].n_collectives, 2);
    CU_ASSERT_EQUAL(a->steps[0].n_bytes_known, 2);
    CU_ASSERT_EQUAL(a->steps[0].bytes, 1000);
    CU_ASSERT_EQUAL(a->n_bytes_known, 2);
    gt_report_free(r);
    gt_trace_free(t);
}

static void test_analyze_comm__none(void)
{
    fx f;
    fx_open(&f, "comm_none.sqlite");
    fx_range(&f, 0, 10 * MS, "step 0");
    fx_kernel(&f, 0, 1 * MS, 9 * MS, "sgemm");
    fx_category_on(&f, 0, DOM, CAT_COMM, "communication", TID); /* named, never used */
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    CU_ASSERT_EQUAL(r->comm.n_ranks, 0);
    CU_ASSERT_EQUAL(r->comm.most_exposed, -1);
    CU_ASSERT_EQUAL(r->comm.slowest, -1);
    CU_ASSERT_FALSE(fx_fired(r, "exposed_communication"));
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_report_print_text(r, m), 0);
    CU_ASSERT_EQUAL(gt_report_print_json(r, m), 0);
    fclose(m);
    CU_ASSERT_PTR_NULL(strstr(buf, "\ncommunication "));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"ranks\":[]"));
    free(buf);
    gt_report_free(r);
    gt_trace_free(t);
}

/* The same job with the ranks the launcher gave: the trace's processes know
 * them, the section lists ranks in job order and names them. */
static void test_analyze_comm__launcher_ranks(void)
{
    gt_trace *t = two_cpu_ranks(true);
    size_t n_proc = 0;
    const gt_process *p = gt_trace_processes(t, &n_proc);
    CU_ASSERT_EQUAL_FATAL(n_proc, 4); /* the fixture's own, A, B, C */
    for (size_t i = 0; i < n_proc; i++)
        CU_ASSERT_EQUAL(p[i].rank, p[i].pid == PID_A ? 1 : p[i].pid == PID_B ? 0 : -1);
    gt_report *r = fx_report(t, NULL);
    const gt_comm *c = &r->comm;
    CU_ASSERT_EQUAL_FATAL(c->n_ranks, 2);
    CU_ASSERT_EQUAL(c->ranks[0].rank, 0);
    CU_ASSERT_EQUAL(c->ranks[0].pid, PID_B);
    CU_ASSERT_EQUAL(c->ranks[1].rank, 1);
    CU_ASSERT_EQUAL(c->ranks[1].exposed_ns, 3500 * US); /* A's figures, moved with it */
    CU_ASSERT_EQUAL(c->most_exposed, 1);
    CU_ASSERT_EQUAL(c->slowest, 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_report_print_text(r, m), 0);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "rank 0 (pid 102) trainer"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "most exposed: rank 1 (pid 101), 1.750 ms per step"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "rank 1 (pid 101) trainer: 1.750 ms of exposed communication"));
    free(buf);
    gt_report_free(r);
    gt_trace_free(t);
}

static const gt_test_case cases[] = {
    {"test_analyze_comm__cpu_ranks", test_analyze_comm__cpu_ranks},
    {"test_analyze_comm__launcher_ranks", test_analyze_comm__launcher_ranks},
    {"test_analyze_comm__nccl_ranks", test_analyze_comm__nccl_ranks},
    {"test_analyze_comm__no_steps", test_analyze_comm__no_steps},
    {"test_analyze_comm__many_steps", test_analyze_comm__many_steps},
    {"test_analyze_comm__none", test_analyze_comm__none},
    {"test_analyze_comm__barrier_in_step", test_analyze_comm__barrier_in_step},
    {"test_analyze_comm__nccl_beside_other_gpu", test_analyze_comm__nccl_beside_other_gpu},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"analyze_comm", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
