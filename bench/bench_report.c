/* bench_report.c: how long `gtrace report` takes on a big trace.
 *
 * Writes (once; the file is kept and reused while its size matches) a
 * synthetic trace of a training run with the store's writer, shaped like
 * what the capture records from a PyTorch-style trainer: NVTX "step N"
 * ranges with data / forward / backward / optimizer phases and nested op
 * ranges; per op 1-3 cudaLaunchKernel calls and their kernels on two compute
 * streams; host-to-device copies on a copy stream (some from pageable
 * memory), memsets, a stream synchronization per step; a caching allocator
 * announced through the NVTX memory API (heaps = segments, regions = blocks:
 * activations made in forward and freed in backward, a small block kept
 * every step), device allocations (cudaMalloc/cudaFree) for the segments and
 * for a big workspace now and then; data-loader stalls that leave the
 * device idle.
 *
 * Then it times, best of --runs: opening the trace, gt_report_compute (and,
 * apart, loading the analysis model alone), rendering the report as text and
 * as JSON; and the CLI end to end (`gtrace report TRACE > /dev/null`, a
 * child process). Prints wall and CPU seconds per phase.
 *
 *   bench_report [-n EVENTS] [-f TRACE] [--runs N] [--gtrace PATH] [--regen] [--no-summary]
 *                [--no-runs | --keep-only]
 *
 * -f: a trace to time; an existing file is used as it is (any trace), a
 * missing one is written. Without -f: bench_report-EVENTS.sqlite here,
 * rewritten when it was made for another size or by another generator.
 * A trace it writes, or its own that lacks one, gets the default report
 * kept in it as the launcher keeps it (gt_report_keep), so the CLI's
 * figure is `gtrace report` reading it; --no-summary leaves it out.
 * --no-runs stops once the trace is written (and its report kept);
 * --keep-only keeps the report in TRACE (any trace, written or not) and
 * stops: bench_scale.sh times writing and keeping apart so.
 *
 * Not run by make check; figures are in bench/results/. */
#include "analyze_int.h"
#include "gt_analyze.h"
#include "gt_store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GENERATOR_VERSION "4" /* bump when the generated trace (or the writer) changes; 4: the close mark */
#define US 1000LL
#define MS 1000000LL
#define MIB (1024LL * 1024)

enum {
    PID = 4242,
    N_KERNEL_NAMES = 160,
    N_OP_NAMES = 48,
    N_FWD_OPS = 120,        /* ops in forward; backward has one per forward op */
    STREAM_MAIN = 7, STREAM_SIDE = 13, STREAM_COPY = 14,
};

static double seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void check(int status, const char *what)
{
    if (status != GT_OK) {
        fprintf(stderr, "bench_report: %s: %s\n", what, gt_error_last());
        exit(1);
    }
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 32);
}

/* ---- the synthetic trace ------------------------------------------------ */

typedef struct gen {
    gt_writer *w;
    int64_t n_events, target;
    int64_t cpu;            /* the main thread's clock */
    int64_t gpu[3];         /* when each stream is free: main, side, copy */
    int64_t corr;
    int64_t main_tid, loader_tid;
    gt_string_id kernel[N_KERNEL_NAMES], op[N_OP_NAMES], bwd_op[N_OP_NAMES];
    gt_string_id s_launch, s_memcpy, s_memset, s_sync, s_malloc, s_free;
    gt_string_id s_data, s_fwd, s_bwd, s_opt, s_log, s_fetch, s_act, s_ws;
    int in_batch;
} gen;

static void add(gen *g, const gt_event *ev)
{
    if (g->in_batch == 0)
        check(gt_writer_begin(g->w), "begin");
    check(gt_writer_add(g->w, ev), "add");
    g->n_events++;
    if (++g->in_batch == 65536) {
        check(gt_writer_commit(g->w), "commit");
        g->in_batch = 0;
    }
}

static gt_string_id intern(gen *g, const char *s)
{
    gt_string_id id;
    check(gt_writer_intern(g->w, s, &id), "intern");
    return id;
}

static void api(gen *g, int64_t s, int64_t e, gt_string_id name, int64_t corr)
{
    gt_event ev = {.kind = GT_EV_API};
    ev.u.api = (gt_api_call){s, e, g->main_tid, corr, name, GT_API_RUNTIME, 0, 0};
    add(g, &ev);
}

static void range(gen *g, int64_t tid, int64_t s, int64_t e, gt_string_id text)
{
    gt_event ev = {.kind = GT_EV_NVTX};
    ev.u.nvtx = (gt_nvtx){.start_ns = s, .end_ns = e, .event_type = GT_NVTX_PUSHPOP, .text = text, .global_tid = tid};
    add(g, &ev);
}

static void heap(gen *g, int64_t t, int op, uint64_t heap_id, uint64_t addr, int64_t bytes, gt_string_id name)
{
    gt_event ev = {.kind = GT_EV_HEAP};
    ev.u.heap = (gt_heap_event){t, g->main_tid, op, heap_id, addr, bytes, 1, 1, name, 0, 0};
    add(g, &ev);
}

static void dev_mem(gen *g, int64_t t, int op, uint64_t addr, int64_t bytes, int64_t corr)
{
    gt_event ev = {.kind = GT_EV_GPU_MEMORY};
    ev.u.gpu_memory = (gt_gpu_memory){.start_ns = t, .global_pid = gt_global_pid(PID), .device_id = 0,
                                      .context_id = 1, .address = addr, .bytes = bytes, .mem_kind = GT_MEM_DEVICE,
                                      .operation = op, .correlation_id = corr, .stream_id = STREAM_MAIN};
    add(g, &ev);
}

/* A cudaLaunchKernel call on the main thread and its kernel. */
static void launch(gen *g, int k, int side)
{
    int64_t s = g->cpu + 400 + rng() % 300, e = s + 3 * US + rng() % (2 * US);
    int64_t corr = ++g->corr;
    g->cpu = e;
    api(g, s, e, g->s_launch, corr);
    int64_t *q = &g->gpu[side];
    int64_t start = (*q > s + 4 * US ? *q : s + 4 * US) + rng() % 400;
    int64_t dur = 1500 + (int64_t)(k * 7919 % 45000) + rng() % 3000;
    *q = start + dur;
    gt_event ev = {.kind = GT_EV_KERNEL};
    gt_kernel *kk = &ev.u.kernel;
    kk->start_ns = start;
    kk->end_ns = start + dur;
    kk->global_pid = gt_global_pid(PID);
    kk->context_id = 1;
    kk->stream_id = side ? STREAM_SIDE : STREAM_MAIN;
    kk->correlation_id = corr;
    kk->demangled_name = kk->short_name = kk->mangled_name = g->kernel[k];
    kk->grid_x = 1 << (k % 6);
    kk->grid_y = 1 + k % 3;
    kk->grid_z = 1;
    kk->block_x = 128 << (k % 3);
    kk->block_y = kk->block_z = 1;
    kk->registers_per_thread = 32 + k % 64;
    kk->static_shared_bytes = (k % 4) * 4096;
    kk->grid_id = corr;
    kk->launch_type = 1;
    add(g, &ev);
}

static void copy(gen *g, int64_t bytes, bool pageable)
{
    int64_t s = g->cpu + 500, corr = ++g->corr;
    int64_t start = (g->gpu[2] > s + 5 * US ? g->gpu[2] : s + 5 * US);
    int64_t dur = bytes / (pageable ? 6 : 20); /* 6 or 20 GB/s */
    g->gpu[2] = start + dur;
    int64_t e = pageable ? g->gpu[2] + 2 * US : s + 8 * US; /* pageable copies block the host */
    g->cpu = e;
    api(g, s, e, g->s_memcpy, corr);
    gt_event ev = {.kind = GT_EV_MEMCPY};
    ev.u.memcpy = (gt_memcpy){.start_ns = start, .end_ns = start + dur, .global_pid = gt_global_pid(PID),
                              .context_id = 1, .stream_id = STREAM_COPY, .correlation_id = corr, .bytes = bytes,
                              .copy_kind = GT_COPY_HTOD, .src_kind = pageable ? GT_MEM_PAGEABLE : GT_MEM_PINNED,
                              .dst_kind = GT_MEM_DEVICE};
    add(g, &ev);
}

static void memset_(gen *g, int64_t bytes)
{
    int64_t s = g->cpu + 300, e = s + 4 * US, corr = ++g->corr;
    g->cpu = e;
    api(g, s, e, g->s_memset, corr);
    int64_t start = (g->gpu[0] > s + 4 * US ? g->gpu[0] : s + 4 * US), dur = bytes / 500 + 2 * US;
    g->gpu[0] = start + dur;
    gt_event ev = {.kind = GT_EV_MEMSET};
    ev.u.memset = (gt_memset){.start_ns = start, .end_ns = start + dur, .global_pid = gt_global_pid(PID),
                              .context_id = 1, .stream_id = STREAM_MAIN, .correlation_id = corr, .bytes = bytes,
                              .mem_kind = GT_MEM_DEVICE};
    add(g, &ev);
}

/* cudaMalloc or cudaFree with its device memory event. */
static void cuda_mem(gen *g, bool alloc, uint64_t addr, int64_t bytes)
{
    int64_t s = g->cpu + 300, e = s + (alloc ? 250 : 120) * US, corr = ++g->corr;
    g->cpu = e;
    api(g, s, e, alloc ? g->s_malloc : g->s_free, corr);
    dev_mem(g, s + 10 * US, alloc ? GT_DEVMEM_ALLOC : GT_DEVMEM_FREE, addr, bytes, corr);
}

static const uint64_t PARAM_HEAP = 0x7f1000000000ull, ACT_HEAP = 0x7f2000000000ull, LOG_HEAP = 0x7f3000000000ull,
                      WS_HEAP = 0x7f4000000000ull;

static void one_step(gen *g, int64_t step)
{
    char name[32];
    int64_t step_start = g->cpu;
    int64_t act_size[N_FWD_OPS];
    uint64_t act_addr[N_FWD_OPS], off = 0;

    /* data: a short fetch, a long stall now and then (an empty loader queue) */
    int64_t d0 = g->cpu;
    int64_t fetch = step % 97 == 13 ? 40 * MS : 150 * US + rng() % (50 * US);
    range(g, g->loader_tid, d0, d0 + fetch, g->s_fetch);
    g->cpu += fetch;
    copy(g, 4 * MIB, step % 10 == 3);
    range(g, g->main_tid, d0, g->cpu + 1 * US, g->s_data);
    g->cpu += 2 * US;

    int64_t f0 = g->cpu;
    for (int op = 0; op < N_FWD_OPS; op++) {
        int64_t o0 = g->cpu;
        act_size[op] = (int64_t)(1 + (op * 37) % 64) * 512 * 1024;
        act_addr[op] = ACT_HEAP + off;
        off += (uint64_t)act_size[op];
        heap(g, g->cpu + 200, GT_REGION_REGISTER, ACT_HEAP, act_addr[op], act_size[op], g->s_act);
        int n = 1 + (int)(rng() % 3);
        for (int l = 0; l < n; l++) {
            int k = (int)(rng() % N_KERNEL_NAMES);
            launch(g, k, k % 9 == 0);
        }
        range(g, g->main_tid, o0, g->cpu + 500, g->op[op % N_OP_NAMES]);
        g->cpu += 600;
    }
    range(g, g->main_tid, f0, g->cpu + 1 * US, g->s_fwd);
    g->cpu += 2 * US;

    int64_t b0 = g->cpu;
    for (int op = N_FWD_OPS - 1; op >= 0; op--) {
        int64_t o0 = g->cpu;
        g->cpu += 1 * US;
        int64_t i0 = g->cpu;
        for (int l = 0; l < 2; l++) {
            int k = (int)(rng() % N_KERNEL_NAMES);
            launch(g, k, k % 9 == 0);
        }
        heap(g, g->cpu + 100, GT_REGION_UNREGISTER, ACT_HEAP, act_addr[op], 0, 0);
        range(g, g->main_tid, i0, g->cpu + 300, g->op[op % N_OP_NAMES]);
        range(g, g->main_tid, o0, g->cpu + 600, g->bwd_op[op % N_OP_NAMES]);
        g->cpu += 700;
    }
    range(g, g->main_tid, b0, g->cpu + 1 * US, g->s_bwd);
    g->cpu += 2 * US;

    int64_t p0 = g->cpu;
    memset_(g, 64 * MIB);
    for (int l = 0; l < 4; l++)
        launch(g, N_KERNEL_NAMES - 1 - l, 0);
    if (step % 250 == 7) { /* a big workspace for one step: a memory spike */
        uint64_t a = WS_HEAP + (uint64_t)(step % 1000) * (1ull << 32);
        cuda_mem(g, true, a, 2048 * MIB);
        heap(g, g->cpu + 100, GT_HEAP_REGISTER, a, a, 2048 * MIB, 0);
        heap(g, g->cpu + 200, GT_REGION_REGISTER, a, a, 2000 * MIB, g->s_ws);
        launch(g, 3, 0);
        heap(g, g->cpu + 100, GT_REGION_UNREGISTER, a, a, 0, 0);
        g->cpu += 200;
        heap(g, g->cpu + 100, GT_HEAP_UNREGISTER, a, a, 0, 0);
        cuda_mem(g, false, a, 2048 * MIB);
    }
    range(g, g->main_tid, p0, g->cpu + 1 * US, g->s_opt);
    g->cpu += 2 * US;

    /* a small block kept every step (a list of losses with their graphs) */
    int64_t l0 = g->cpu;
    heap(g, l0 + 500, GT_REGION_REGISTER, LOG_HEAP, LOG_HEAP + (uint64_t)step * 4096, 4096, 0);
    g->cpu += 2 * US;
    range(g, g->main_tid, l0, g->cpu, g->s_log);

    /* the step ends waiting for the device */
    int64_t s = g->cpu + 200, corr = ++g->corr;
    int64_t dev_end = g->gpu[0] > g->gpu[1] ? g->gpu[0] : g->gpu[1];
    if (g->gpu[2] > dev_end)
        dev_end = g->gpu[2];
    int64_t e = (dev_end > s ? dev_end : s) + 5 * US;
    api(g, s, e, g->s_sync, corr);
    gt_event ev = {.kind = GT_EV_SYNC};
    ev.u.sync = (gt_sync){.start_ns = s + 2 * US, .end_ns = e - 1 * US, .global_pid = gt_global_pid(PID),
                          .context_id = 1, .stream_id = STREAM_MAIN, .correlation_id = corr,
                          .sync_type = GT_SYNC_STREAM};
    add(g, &ev);
    g->cpu = e + 3 * US;
    snprintf(name, sizeof name, "step %" PRId64, step);
    range(g, g->main_tid, step_start, g->cpu, intern(g, name));
    g->cpu += 20 * US;
}

static void generate(const char *path, int64_t target)
{
    static const char *const families[] = {
        "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::AddFunctor<float>>(at::TensorIteratorBase&, at::native::AddFunctor<float> const&)::{lambda(int)#1}>(int, %d)",
        "ampere_sgemm_128x64_tn_%d",
        "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_256x128_16x3_nn_align4_%d>(cutlass_80_tensorop_s1688gemm_256x128_16x3_nn_align4::Params)",
        "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int) [%d]",
        "void at::native::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*) [%d]",
        "void at::native::multi_tensor_apply_kernel<at::native::TensorListMetadata<4>, at::native::FusedAdamMathFunctor<float, 4>>(%d)",
    };
    static const char *const ops[] = {"aten::linear", "aten::matmul", "aten::add", "aten::gelu", "aten::layer_norm",
                                      "aten::softmax", "aten::dropout", "aten::embedding"};
    char tmp[4096], buf[512];
    gen g = {0};
    g.target = target;
    g.main_tid = gt_global_tid(PID, PID);
    g.loader_tid = gt_global_tid(PID, PID + 7);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    double w0 = seconds(CLOCK_MONOTONIC);
    check(gt_writer_open(&g.w, tmp, GT_WRITE_OVERWRITE), "open the trace for writing");
    check(gt_writer_add_process(g.w, PID, "python"), "process");
    check(gt_writer_add_thread_name(g.w, g.main_tid, "python", 0), "thread");
    check(gt_writer_add_thread_name(g.w, g.loader_tid, "pt_data_worker", 0), "thread");
    gt_gpu_info gpu = {.id = 0, .name = "NVIDIA A100-SXM4-80GB", .chip_name = "GA100",
                       .total_memory_bytes = 80 * 1024 * MIB, .compute_major = 8, .compute_minor = 0, .sm_count = 108};
    check(gt_writer_add_gpu(g.w, &gpu), "gpu");
    snprintf(buf, sizeof buf, "%" PRId64, target);
    check(gt_writer_add_config(g.w, 0, "bench_report_events", buf), "config");
    check(gt_writer_add_config(g.w, 0, "bench_report_generator", GENERATOR_VERSION), "config");
    for (int i = 0; i < N_KERNEL_NAMES; i++) {
        snprintf(buf, sizeof buf, families[i % 6], i);
        g.kernel[i] = intern(&g, buf);
    }
    for (int i = 0; i < N_OP_NAMES; i++) {
        snprintf(buf, sizeof buf, "%s_%d", ops[i % 8], i / 8);
        g.op[i] = intern(&g, buf);
        snprintf(buf, sizeof buf, "autograd::engine::evaluate_function: %sBackward%d", ops[i % 8] + 6, i / 8);
        g.bwd_op[i] = intern(&g, buf);
    }
    g.s_launch = intern(&g, "cudaLaunchKernel_v7000");
    g.s_memcpy = intern(&g, "cudaMemcpyAsync_v3020");
    g.s_memset = intern(&g, "cudaMemsetAsync_v3020");
    g.s_sync = intern(&g, "cudaStreamSynchronize_v3020");
    g.s_malloc = intern(&g, "cudaMalloc_v3020");
    g.s_free = intern(&g, "cudaFree_v3020");
    g.s_data = intern(&g, "data");
    g.s_fwd = intern(&g, "forward");
    g.s_bwd = intern(&g, "backward");
    g.s_opt = intern(&g, "optimizer");
    g.s_log = intern(&g, "log");
    g.s_fetch = intern(&g, "DataLoader fetch");
    g.s_act = intern(&g, "activations");
    g.s_ws = intern(&g, "workspace");

    /* the model's memory: segments from cudaMalloc, weights and state in them */
    g.cpu = 1000 * MS;
    static const struct { uint64_t base; int64_t bytes; } segs[] = {
        {PARAM_HEAP, 4096 * MIB}, {ACT_HEAP, 8192 * MIB}, {LOG_HEAP, 512 * MIB}};
    for (size_t i = 0; i < 3; i++) {
        cuda_mem(&g, true, segs[i].base, segs[i].bytes);
        heap(&g, g.cpu + 100, GT_HEAP_REGISTER, segs[i].base, segs[i].base, segs[i].bytes, 0);
    }
    static const char *const state[] = {"parameters", "gradients", "adamw m", "adamw v"};
    for (int i = 0; i < 4; i++)
        heap(&g, g.cpu + 200 + i, GT_REGION_REGISTER, PARAM_HEAP, PARAM_HEAP + (uint64_t)i * 1024 * MIB, 1000 * MIB,
             intern(&g, state[i]));
    g.cpu += 5 * MS;
    for (int i = 0; i < 3; i++)
        g.gpu[i] = g.cpu;
    for (int64_t step = 0; g.n_events < target; step++)
        one_step(&g, step);
    if (g.in_batch)
        check(gt_writer_commit(g.w), "commit");
    check(gt_writer_close(g.w), "close");
    if (rename(tmp, path) != 0) {
        fprintf(stderr, "bench_report: cannot rename %s to %s: %s\n", tmp, path, strerror(errno));
        exit(1);
    }
    printf("wrote %s: %" PRId64 " events in %.1f s\n", path, g.n_events, seconds(CLOCK_MONOTONIC) - w0);
}

/* The cached trace is reused when it was written for this many events by this generator. */
static bool trace_usable(const char *path, int64_t target)
{
    gt_trace *t = NULL;
    struct stat st;
    char want[32];
    if (stat(path, &st) != 0 || gt_trace_open(&t, path, 0) != 0)
        return false;
    snprintf(want, sizeof want, "%" PRId64, target);
    const char *n = gt_trace_meta(t, "bench_report_events"), *v = gt_trace_meta(t, "bench_report_generator");
    bool ok = n && v && strcmp(n, want) == 0 && strcmp(v, GENERATOR_VERSION) == 0;
    gt_trace_free(t);
    return ok;
}

/* Whether the trace carries a kept report this build prints. */
static bool report_kept(const char *path)
{
    gt_trace *t = NULL;
    bool kept = gt_trace_open(&t, path, 0) == 0 && gt_report_kept_state(t) == 0;
    gt_trace_free(t);
    return kept;
}

/* ---- timing ------------------------------------------------------------- */

enum { PH_OPEN, PH_COMPUTE, PH_MODEL, PH_STEPS, PH_SUMMARY, PH_GAPS, PH_MEMORY, PH_ADVICE, PH_TEXT, PH_JSON,
       PH_FREE, PH_TOTAL, PH_CLI, N_PH };
static const char *const ph_names[N_PH] = {
    "open (gt_trace_open)", "gt_report_compute", "  of which: model load", "  steps", "  summary", "  gaps",
    "  memory", "  advice", "render text", "render JSON", "free", "open+compute+text",
    "CLI: gtrace report > /dev/null"};

typedef struct times { double wall[N_PH], cpu[N_PH]; } times;

static void run_library(const char *path, times *tm)
{
    FILE *null = fopen("/dev/null", "w");
    gt_trace *t = NULL;
    gt_report *r = NULL;
    an_model *m = NULL;
    if (!null) {
        perror("bench_report: /dev/null");
        exit(1);
    }
    double w[13], c[13];
#define MARK(i) (w[i] = seconds(CLOCK_MONOTONIC), c[i] = seconds(CLOCK_PROCESS_CPUTIME_ID))
    MARK(0);
    check(gt_trace_open(&t, path, GT_OPEN_CHECK_LATER), "open"); /* as gtrace report does */
    MARK(1);
    check(gt_report_compute(&r, t, NULL), "report");
    MARK(2);
    check(gt_report_print_text(r, null), "text");
    fflush(null);
    MARK(3);
    check(gt_report_print_json(r, null), "json");
    fflush(null);
    MARK(4);
    gt_report_free(r);
    gt_trace_free(t);
    MARK(5);
    /* gt_report_compute's pieces one by one (as report.c calls them), on a
     * fresh open so that nothing is warmer than in the CLI */
    check(gt_trace_open(&t, path, 0), "open");
    MARK(6);
    check(an_model_load(&m, t), "model");
    MARK(7);
    an_steps all = {0};
    r = calloc(1, sizeof *r);
    if (!r)
        check(GT_ERR_NOMEM, "report");
    r->start_ns = m->span_start_ns;
    r->end_ns = m->span_end_ns;
    check(an_steps_find(&all, m), "steps");
    r->steps = all.v;
    r->n_steps = all.n;
    MARK(8);
    check(an_summary(r, m, NULL), "summary");
    MARK(9);
    check(an_gaps(&r->gaps, m, r->start_ns, r->end_ns, 10), "gaps");
    MARK(10);
    check(an_memory(&r->memory, m, r->steps, r->n_steps), "memory");
    MARK(11);
    check(an_advice(r, m), "advice");
    MARK(12);
    gt_report_free(r);
    an_model_free(m);
    gt_trace_free(t);
#undef MARK
    fclose(null);
    for (int p = PH_MODEL; p <= PH_ADVICE; p++)
        tm->wall[p] = w[p - PH_MODEL + 7] - w[p - PH_MODEL + 6], tm->cpu[p] = c[p - PH_MODEL + 7] - c[p - PH_MODEL + 6];
    tm->wall[PH_OPEN] = w[1] - w[0], tm->cpu[PH_OPEN] = c[1] - c[0];
    tm->wall[PH_COMPUTE] = w[2] - w[1], tm->cpu[PH_COMPUTE] = c[2] - c[1];
    tm->wall[PH_TEXT] = w[3] - w[2], tm->cpu[PH_TEXT] = c[3] - c[2];
    tm->wall[PH_JSON] = w[4] - w[3], tm->cpu[PH_JSON] = c[4] - c[3];
    tm->wall[PH_FREE] = w[5] - w[4], tm->cpu[PH_FREE] = c[5] - c[4];
    tm->wall[PH_TOTAL] = w[3] - w[0], tm->cpu[PH_TOTAL] = c[3] - c[0];
}

/* gtrace report as a user runs it: a process of its own, output discarded. */
static void run_cli(const char *gtrace, const char *path, times *tm)
{
    fflush(stdout); /* else the child's freopen writes our buffer again */
    double w0 = seconds(CLOCK_MONOTONIC);
    pid_t pid = fork();
    if (pid < 0) {
        perror("bench_report: fork");
        exit(1);
    }
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout))
            _exit(127);
        execl(gtrace, gtrace, "report", path, (char *)NULL);
        fprintf(stderr, "bench_report: cannot run %s: %s\n", gtrace, strerror(errno));
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench_report: %s report %s failed\n", gtrace, path);
        exit(1);
    }
    tm->wall[PH_CLI] = seconds(CLOCK_MONOTONIC) - w0;
    tm->cpu[PH_CLI] = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
                      1e-6 * (double)ru.ru_stime.tv_usec;
}

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [-n EVENTS] [-f TRACE] [--runs N] [--gtrace PATH] [--regen] [--no-summary]\n"
                    "       [--no-runs | --keep-only]\n", argv0);
    exit(2);
}

int main(int argc, char **argv)
{
    int64_t target = 10000000;
    int runs = 3;
    bool regen = false, keep = true, no_runs = false, keep_only = false;
    const char *path = NULL, *gtrace = NULL;
    char default_path[64], default_gtrace[4096];
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            target = atoll(argv[++i]);
        else if (strcmp(argv[i], "-f") == 0 && i + 1 < argc)
            path = argv[++i];
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--gtrace") == 0 && i + 1 < argc)
            gtrace = argv[++i];
        else if (strcmp(argv[i], "--regen") == 0)
            regen = true;
        else if (strcmp(argv[i], "--no-summary") == 0)
            keep = false;
        else if (strcmp(argv[i], "--no-runs") == 0)
            no_runs = true;
        else if (strcmp(argv[i], "--keep-only") == 0)
            keep_only = true;
        else
            usage(argv[0]);
    }
    if (target <= 0 || runs <= 0)
        usage(argv[0]);
    if (!path) { /* beside the program: the build folder's bench/ */
        snprintf(default_path, sizeof default_path, "bench_report-%" PRId64 ".sqlite", target);
        path = default_path;
    }
    if (!gtrace) { /* bench/bench_report -> libtrace/cli/gtrace of the same build */
        const char *slash = strrchr(argv[0], '/');
        int dir = slash ? (int)(slash - argv[0]) : 1;
        snprintf(default_gtrace, sizeof default_gtrace, "%.*s/../libtrace/cli/gtrace", dir, slash ? argv[0] : ".");
        gtrace = default_gtrace;
    }
    if (keep_only) {
        double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
        check(gt_report_keep(path), "keeping the report");
        printf("kept the report in %s: %.2f s wall, %.2f s CPU\n", path, seconds(CLOCK_MONOTONIC) - w0,
               seconds(CLOCK_PROCESS_CPUTIME_ID) - c0);
        return 0;
    }
    struct stat st0;
    bool given = path != default_path && stat(path, &st0) == 0;
    if (!given && (regen || !trace_usable(path, target)))
        generate(path, target);
    else
        printf("reusing %s\n", path);
    if (!given && keep && !report_kept(path)) {
        double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
        check(gt_report_keep(path), "keeping the report");
        printf("kept the report in the trace: %.2f s wall, %.2f s CPU\n", seconds(CLOCK_MONOTONIC) - w0,
               seconds(CLOCK_PROCESS_CPUTIME_ID) - c0);
    }

    struct stat st;
    if (stat(path, &st) == 0)
        printf("trace: %s, %.1f MB\n", path, (double)st.st_size / 1e6);
    if (no_runs)
        return 0;
    gt_trace *t = NULL;
    check(gt_trace_open(&t, path, 0), "open");
    int64_t total = 0;
    printf("events:");
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        int64_t n = 0;
        check(gt_trace_count(t, (gt_event_kind)k, &n), "count");
        total += n;
        if (n)
            printf(" %s %" PRId64, gt_event_kind_name((gt_event_kind)k), n);
    }
    printf("; %" PRId64 " in all\n", total);
    gt_trace_free(t);

    times best, tm;
    for (int p = 0; p < N_PH; p++)
        best.wall[p] = best.cpu[p] = 1e30;
    for (int r = 0; r < runs; r++) {
        memset(&tm, 0, sizeof tm);
        run_library(path, &tm);
        run_cli(gtrace, path, &tm);
        printf("run %d:", r + 1);
        for (int p = 0; p < N_PH; p++) {
            printf(" %.3f", tm.wall[p]);
            if (tm.wall[p] < best.wall[p])
                best.wall[p] = tm.wall[p];
            if (tm.cpu[p] < best.cpu[p])
                best.cpu[p] = tm.cpu[p];
        }
        printf(" (wall s, phases in the order below)\n");
        fflush(stdout);
    }
    printf("\nbest of %d runs         wall s    cpu s\n", runs);
    for (int p = 0; p < N_PH; p++)
        printf("%-32s %7.3f  %7.3f\n", ph_names[p], best.wall[p], best.cpu[p]);
    return 0;
}
