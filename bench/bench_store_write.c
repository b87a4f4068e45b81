/* bench_store_write.c: sustained write rate of the trace store, and what an
 * event costs on disk.
 *
 * Replays a synthetic training step the way the capture library would hand
 * it to the writer: per launch a cudaLaunchKernel call and its kernel (on two
 * streams, so kernels reach the writer slightly out of start order), an NVTX
 * range per op, copies and a synchronization per step; about 300 kernels with
 * long templated names, launched again and again. Batches of --batch events
 * are committed as the capture's writer thread does per drain.
 *
 *   bench_store_write [-n EVENTS] [-o FILE] [--batch N] [--kernels-only]
 *   bench_store_write --ranges FILE [--width NS] [--count N]
 *
 * Prints events/s (wall and CPU time of this process) while adding and
 * committing, the time close takes (indexes, checkpoint), and bytes per
 * event (and per kernel) of the closed file.
 *
 * --ranges times the query a timeline view makes: the kernels of a time
 * window (gt_iter_new over [a, a + width)), for --count windows spread over
 * the trace of FILE, and prints the median and total per window. Not run by
 * make check. */
#include "gt_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
    N_KERNEL_NAMES = 300,
    N_OPS = 400,         /* NVTX-annotated ops per step */
    MAX_STEP_EVENTS = 8192,
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
        fprintf(stderr, "bench_store_write: %s: %s\n", what, gt_error_last());
        exit(1);
    }
}

/* A tiny deterministic generator: the same step every run. */
static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 32);
}

typedef struct step {
    gt_event ev[MAX_STEP_EVENTS];
    int n;
    int64_t span_ns;        /* a step's length: the next replay starts after it */
    int64_t n_correlations; /* ids a step uses */
} step;

/* One training step: ops as NVTX ranges, each launching 1-3 kernels. */
static void make_step(gt_writer *w, step *s, bool kernels_only)
{
    static const char *const families[] = {
        "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::AddFunctor<float>>(at::TensorIteratorBase&, at::native::AddFunctor<float> const&)::{lambda(int)#1}>(int, %d)",
        "ampere_sgemm_128x64_tn_%d",
        "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_256x128_16x3_nn_align4_%d>(cutlass_80_tensorop_s1688gemm_256x128_16x3_nn_align4::Params)",
        "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int) [%d]",
        "void at::native::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*) [%d]",
    };
    gt_string_id demangled[N_KERNEL_NAMES], short_name[N_KERNEL_NAMES], mangled[N_KERNEL_NAMES];
    gt_string_id op_name[N_OPS];
    char buf[512];
    for (int i = 0; i < N_KERNEL_NAMES; i++) {
        snprintf(buf, sizeof buf, families[i % 5], i);
        check(gt_writer_intern(w, buf, &demangled[i]), "intern");
        snprintf(buf, sizeof buf, "kernel_family_%d_%d", i % 5, i);
        check(gt_writer_intern(w, buf, &short_name[i]), "intern");
        snprintf(buf, sizeof buf, "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_%dEEvi", i);
        check(gt_writer_intern(w, buf, &mangled[i]), "intern");
    }
    for (int i = 0; i < N_OPS; i++) {
        snprintf(buf, sizeof buf, "aten::op_%d", i % 120);
        check(gt_writer_intern(w, buf, &op_name[i]), "intern");
    }
    gt_string_id launch_api, memcpy_api, sync_api;
    check(gt_writer_intern(w, "cudaLaunchKernel_v7000", &launch_api), "intern");
    check(gt_writer_intern(w, "cudaMemcpyAsync_v3020", &memcpy_api), "intern");
    check(gt_writer_intern(w, "cudaStreamSynchronize_v3020", &sync_api), "intern");

    const int64_t pid = gt_global_pid(31337), tid = gt_global_tid(31337, 31338);
    int64_t cpu = 0, gpu[2] = {5000, 5000}, corr = 0;
    s->n = 0;
    for (int op = 0; op < N_OPS && s->n < MAX_STEP_EVENTS - 16; op++) {
        int64_t op_start = cpu;
        int n_launch = 1 + (int)(rng() % 3);
        for (int l = 0; l < n_launch; l++) {
            int k = (int)(rng() % N_KERNEL_NAMES);
            int stream = (k % 7 == 0); /* a side stream: starts overlap the main one */
            int64_t api_start = cpu + 300, api_end = api_start + 2500 + rng() % 2000;
            cpu = api_end;
            corr++;
            if (!kernels_only) {
                gt_event *e = &s->ev[s->n++];
                *e = (gt_event){.kind = GT_EV_API};
                e->u.api = (gt_api_call){.start_ns = api_start, .end_ns = api_end, .global_tid = tid,
                                         .correlation_id = corr, .name = launch_api, .event_class = GT_API_RUNTIME};
            }
            int64_t start = (gpu[stream] > api_start + 4000 ? gpu[stream] : api_start + 4000) + rng() % 500;
            int64_t dur = 2000 + (int64_t)(k * 997 % 40000) + rng() % 3000;
            gpu[stream] = start + dur;
            gt_event *e = &s->ev[s->n++];
            *e = (gt_event){.kind = GT_EV_KERNEL};
            gt_kernel *kk = &e->u.kernel;
            kk->start_ns = start;
            kk->end_ns = start + dur;
            kk->global_pid = pid;
            kk->device_id = 0;
            kk->context_id = 1;
            kk->stream_id = 7 + 6 * stream;
            kk->correlation_id = corr;
            kk->demangled_name = demangled[k];
            kk->short_name = short_name[k];
            kk->mangled_name = mangled[k];
            kk->grid_x = 1 << (k % 4 + (int)(rng() % 2)); /* two grid sizes per kernel */
            kk->grid_y = 1 + k % 3;
            kk->grid_z = 1;
            kk->block_x = 128 << (k % 3);
            kk->block_y = kk->block_z = 1;
            kk->registers_per_thread = 32 + k % 96;
            kk->static_shared_bytes = (k % 5) * 4096;
            kk->dynamic_shared_bytes = (k % 11 == 0) * 49152;
            kk->local_total_bytes = 127401984;
            kk->grid_id = corr;
            kk->launch_type = 1;
            kk->cache_config = 1;
        }
        if (kernels_only)
            continue;
        if (op % 40 == 0) { /* a host-to-device copy: its call and the copy */
            corr++;
            int64_t api_start = cpu + 200, api_end = api_start + 6000;
            cpu = api_end;
            gt_event *e = &s->ev[s->n++];
            *e = (gt_event){.kind = GT_EV_API};
            e->u.api = (gt_api_call){.start_ns = api_start, .end_ns = api_end, .global_tid = tid,
                                     .correlation_id = corr, .name = memcpy_api};
            e = &s->ev[s->n++];
            *e = (gt_event){.kind = GT_EV_MEMCPY};
            int64_t start = gpu[0] + 100;
            gpu[0] = start + 20000;
            e->u.memcpy = (gt_memcpy){.start_ns = start, .end_ns = gpu[0], .global_pid = pid, .device_id = 0,
                                      .context_id = 1, .stream_id = 7, .correlation_id = corr, .bytes = 1 << 20,
                                      .copy_kind = GT_COPY_HTOD, .src_kind = GT_MEM_PINNED, .dst_kind = GT_MEM_DEVICE};
        }
        gt_event *e = &s->ev[s->n++];
        *e = (gt_event){.kind = GT_EV_NVTX};
        e->u.nvtx = (gt_nvtx){.start_ns = op_start, .end_ns = cpu + 100, .event_type = GT_NVTX_PUSHPOP,
                              .text = op_name[op], .global_tid = tid, .domain_id = 0};
    }
    if (!kernels_only) { /* the step ends with a synchronization */
        corr++;
        int64_t end = gpu[0] > gpu[1] ? gpu[0] : gpu[1];
        gt_event *e = &s->ev[s->n++];
        *e = (gt_event){.kind = GT_EV_API};
        e->u.api = (gt_api_call){.start_ns = cpu + 100, .end_ns = end + 1000, .global_tid = tid,
                                 .correlation_id = corr, .name = sync_api};
        e = &s->ev[s->n++];
        *e = (gt_event){.kind = GT_EV_SYNC};
        e->u.sync = (gt_sync){.start_ns = cpu + 150, .end_ns = end + 900, .global_pid = pid, .context_id = 1,
                              .stream_id = 7, .correlation_id = corr, .sync_type = GT_SYNC_STREAM,
                              .event_id = 4294967295};
        cpu = end + 1000;
    }
    s->span_ns = (cpu > gpu[0] ? cpu : gpu[0]) + 10000;
    s->n_correlations = corr;
}

/* The step's event i, replayed as step number `rep`. */
static void replay(const step *s, int i, int64_t rep, gt_event *out)
{
    *out = s->ev[i];
    int64_t dt = 1000000000 + rep * s->span_ns; /* the trace starts a second in */
    int64_t dc = rep * s->n_correlations;
    switch (out->kind) {
    case GT_EV_KERNEL:
        out->u.kernel.start_ns += dt;
        out->u.kernel.end_ns += dt;
        out->u.kernel.correlation_id += dc;
        out->u.kernel.grid_id += dc;
        break;
    case GT_EV_API:
        out->u.api.start_ns += dt;
        out->u.api.end_ns += dt;
        out->u.api.correlation_id += dc;
        break;
    case GT_EV_NVTX:
        out->u.nvtx.start_ns += dt;
        out->u.nvtx.end_ns += dt;
        break;
    case GT_EV_MEMCPY:
        out->u.memcpy.start_ns += dt;
        out->u.memcpy.end_ns += dt;
        out->u.memcpy.correlation_id += dc;
        break;
    case GT_EV_SYNC:
        out->u.sync.start_ns += dt;
        out->u.sync.end_ns += dt;
        out->u.sync.correlation_id += dc;
        break;
    default:
        break;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The kernels of `count` windows of `width_ns` over the trace. */
static int time_ranges(const char *path, int64_t width_ns, int count)
{
    gt_trace *t = NULL;
    check(gt_trace_open(&t, path, 0), "open");
    int64_t span_start, span_end;
    check(gt_trace_time_span(t, &span_start, &span_end), "time span");
    double *ms = calloc((size_t)count, sizeof *ms);
    if (!ms)
        return 1;
    int64_t n_events = 0;
    double total0 = seconds(CLOCK_MONOTONIC);
    for (int i = 0; i < count; i++) {
        int64_t from = span_start + (int64_t)((double)(span_end - span_start - width_ns) * (rng() / 4294967296.0));
        double t0 = seconds(CLOCK_MONOTONIC);
        gt_iter *it = NULL;
        gt_event ev;
        check(gt_iter_new(&it, t, GT_EV_KERNEL, from, from + width_ns), "iterate");
        int rc;
        while ((rc = gt_iter_next(it, &ev)) == 1)
            n_events++;
        check(rc, "iterate");
        gt_iter_free(it);
        ms[i] = 1e3 * (seconds(CLOCK_MONOTONIC) - t0);
    }
    double total = seconds(CLOCK_MONOTONIC) - total0;
    qsort(ms, (size_t)count, sizeof *ms, cmp_double);
    printf("ranges           %d windows of %.3f ms: median %.3f ms, max %.3f ms, %.3f s in all, %.1f kernels each\n",
           count, width_ns / 1e6, ms[count / 2], ms[count - 1], total, (double)n_events / count);
    free(ms);
    gt_trace_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    int64_t n_events = 10000000;
    int batch = 65536;
    bool kernels_only = false;
    const char *path = "bench_store_write.sqlite", *ranges = NULL;
    int64_t width_ns = 10000000;
    int count = 200;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            n_events = atoll(argv[++i]);
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            path = argv[++i];
        else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
            batch = atoi(argv[++i]);
        else if (strcmp(argv[i], "--kernels-only") == 0)
            kernels_only = true;
        else if (strcmp(argv[i], "--ranges") == 0 && i + 1 < argc)
            ranges = argv[++i];
        else if (strcmp(argv[i], "--width") == 0 && i + 1 < argc)
            width_ns = atoll(argv[++i]);
        else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
            count = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [-n EVENTS] [-o FILE] [--batch N] [--kernels-only]\n"
                            "       %s --ranges FILE [--width NS] [--count N]\n", argv[0], argv[0]);
            return 2;
        }
    }
    if (ranges) {
        if (width_ns <= 0 || count <= 0) {
            fprintf(stderr, "bench_store_write: --width and --count take positive numbers\n");
            return 2;
        }
        return time_ranges(ranges, width_ns, count);
    }
    if (n_events <= 0 || batch <= 0) {
        fprintf(stderr, "bench_store_write: -n and --batch take positive numbers\n");
        return 2;
    }

    gt_writer *w = NULL;
    check(gt_writer_open(&w, path, GT_WRITE_OVERWRITE), "open");
    static step s;
    make_step(w, &s, kernels_only);
    check(gt_writer_add_process(w, 31337, "python"), "process");

    double wall0 = seconds(CLOCK_MONOTONIC), cpu0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
    int64_t done = 0, rep = 0;
    gt_event ev;
    while (done < n_events) {
        check(gt_writer_begin(w), "begin");
        for (int b = 0; b < batch && done < n_events; b++, done++) {
            int i = (int)(done % s.n);
            if (i == 0 && done)
                rep++;
            replay(&s, i, rep, &ev);
            check(gt_writer_add(w, &ev), "add");
        }
        check(gt_writer_commit(w), "commit");
    }
    double wall1 = seconds(CLOCK_MONOTONIC), cpu1 = seconds(CLOCK_PROCESS_CPUTIME_ID);
    int64_t n_kernels = gt_writer_count(w, GT_EV_KERNEL);
    int64_t counts[GT_EV_N_KINDS];
    for (int k = 0; k < GT_EV_N_KINDS; k++)
        counts[k] = gt_writer_count(w, (gt_event_kind)k);
    check(gt_writer_close(w), "close");
    double wall2 = seconds(CLOCK_MONOTONIC), cpu2 = seconds(CLOCK_PROCESS_CPUTIME_ID);

    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return 1;
    }
    printf("events           %lld (", (long long)done);
    for (int k = 0, first = 1; k < GT_EV_N_KINDS; k++)
        if (counts[k]) {
            printf("%s%s %.1f%%", first ? "" : ", ", gt_event_kind_name((gt_event_kind)k), 100.0 * counts[k] / done);
            first = 0;
        }
    printf("), batches of %d\n", batch);
    printf("add+commit       %.2f s wall, %.2f s cpu: %.2f M events/s wall, %.2f M events/s cpu\n",
           wall1 - wall0, cpu1 - cpu0, done / (wall1 - wall0) / 1e6, done / (cpu1 - cpu0) / 1e6);
    printf("close            %.2f s wall, %.2f s cpu (time indexes, checkpoint)\n", wall2 - wall1, cpu2 - cpu1);
    printf("overall          %.2f M events/s wall, %.2f M events/s cpu\n", done / (wall2 - wall0) / 1e6,
           done / (cpu2 - cpu0) / 1e6);
    printf("file             %lld bytes: %.1f bytes/event", (long long)st.st_size, (double)st.st_size / done);
    if (n_kernels)
        printf(", %.1f bytes/kernel%s", (double)st.st_size / n_kernels, kernels_only ? "" : " (whole file over kernels)");
    printf("\n");
    return 0;
}
