/* test_import_values.c: a small torch.profiler (Kineto) trace of one CUDA
 * step, imported, read back row by row: the values, not only the rows. A
 * runtime call's duration and correlation id, its kernel's times and grid,
 * ProfilerStep#N as "step N" with its end, a collective's bytes from its
 * first input (an empty tensor: 0 bytes, still a size), and a call Kineto
 * wrote with a negative duration (it ends where it starts), an instant
 * (a mark: no end), two kernels on one GPU (one GPU), and the wall clock
 * told from a clock since boot by the size of the times; two ranks with the
 * same host pid; a file that starts with a byte order mark. torch 2.5's
 * short ProfilerStep#N ranges of a resumed run (steps 10-12) made spans,
 * the last to its thread's latest end, with the GPU's metadata first; an
 * event past the time limit only once baseTimeNanoseconds is added, and a
 * "ProfilerStep#-1"; a temporary allocated and freed in one microsecond,
 * and a second GPU's allocator. */
#include "gt_import.h"
#include "gt_store.h"
#include "gt_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Microseconds since the epoch, as Kineto writes them (from
 * 4793178600000.000); the trace's zero is the first event. */

static const char kineto[] =
    "{\"schemaVersion\": 1, \"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#5\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178600000.000, \"dur\": 1000.000},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178600100.500, \"dur\": 7.250, \"args\": {\"correlation\": 42, \"External id\": 9}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm_kernel\", \"pid\": 0, \"tid\": 7,"
    " \"ts\": 4793178600110.000, \"dur\": 50.125, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 42,"
    " \"grid\": [4, 2, 3], \"block\": [128, 1, 1]}},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"nccl:all_reduce\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178600300.000, \"dur\": 20.000, \"args\": {\"Input Dims\": [[1024, 2]],"
    " \"Input type\": [\"float\", \"ScalarList\"]}},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"nccl:broadcast\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178600400.000, \"dur\": 10.000, \"args\": {\"Input Dims\": [[0, 16]], \"Input type\": [\"float\"]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaStreamSynchronize\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178600500.000, \"dur\": -3.000, \"args\": {\"correlation\": 43}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm_kernel\", \"pid\": 0, \"tid\": 7,"
    " \"ts\": 4793178600510.000, \"dur\": 40.000, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 44,"
    " \"grid\": [1, 1, 1], \"block\": [64, 1, 1]}},\n"
    "{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"user_annotation\", \"name\": \"epoch_end\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178600600.000},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#6\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178601000.000, \"dur\": 1000.000}\n"
    "]}\n";

/* A step on the wall clock (2025-12-02 00:00 UTC), with its GPU. */
static const char kineto_wall_clock[] =
    "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\","
    " \"totalGlobalMem\": 85031714816, \"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132}],"
    " \"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#5\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 1764633600000000.000, \"dur\": 1000.000}\n"
    "]}\n";

/* torch 2.5 with with_stack, a resumed run: ProfilerStep#10..#12 ranges of
 * 20 us, 10 ms apart, so each step is the span to the next one's start and
 * the last one runs to the end of its thread's ranges (the optimizer's, not
 * the forward's, which ends first but comes first in the file). Metadata as
 * Kineto writes it, the GPU's first: the GPU's process and stream names
 * are not the host's. */
static const char kineto_with_stack[] =
    "{\"schemaVersion\": 1, \"traceEvents\": [\n"
    "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 0, \"tid\": 0, \"args\": {\"name\": \"GPU 0\"}},\n"
    "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 0, \"tid\": 100, \"args\": {\"name\": \"stream 100 \"}},\n"
    "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 100, \"tid\": 0, \"args\": {\"name\": \"python3\"}},\n"
    "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 100, \"tid\": 100, \"args\": {\"name\": \"thread 100 (python3)\"}},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#10\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178600000.000, \"dur\": 20.000},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"forward\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178600050.000, \"dur\": 6000.000},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#11\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178610000.000, \"dur\": 20.000},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"forward\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178610050.000, \"dur\": 6000.000},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#12\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178620000.000, \"dur\": 20.000},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"forward\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178620050.000, \"dur\": 6000.000},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"Optimizer.step#AdamW.step\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178626100.000, \"dur\": 2900.000},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"zero_grad\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178629010.000, \"dur\": 5.000}\n"
    "]}\n";

/* Odd events: the earliest, after a later one in the file (Kineto does
 * not sort its events), has a duration that takes it past the time limit
 * once baseTimeNanoseconds (written after the events) is added: skipped,
 * and the trace's zero is the first event kept; a "ProfilerStep#-1", which
 * is no step. */
static const char kineto_odd[] =
    "{\"schemaVersion\": 1, \"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#-1\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 5.000, \"dur\": 3.000},\n"
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"broken\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 1.000, \"dur\": 1000000000000000.000}\n"
    "], \"baseTimeNanoseconds\": 4000000000000000000}\n";

/* The caching allocator's [memory] events: a block, then a temporary
 * allocated and freed in the same microsecond, as Kineto often writes them
 * (its clock's resolution): the free comes a nanosecond after. A second
 * GPU of the same process has an allocator, and a heap, of its own. */
static const char kineto_memory[] =
    "{\"schemaVersion\": 1, \"traceEvents\": [\n"
    "{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"cpu_instant_event\", \"name\": \"[memory]\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178600100.000, \"args\": {\"Total Reserved\": 2097152, \"Total Allocated\": 1048576,"
    " \"Bytes\": 1048576, \"Addr\": 139637976727552, \"Device Id\": 0, \"Device Type\": 1}},\n"
    "{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"cpu_instant_event\", \"name\": \"[memory]\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178600200.000, \"args\": {\"Total Reserved\": 2097152, \"Total Allocated\": 1049088,"
    " \"Bytes\": 512, \"Addr\": 139637977776128, \"Device Id\": 0, \"Device Type\": 1}},\n"
    "{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"cpu_instant_event\", \"name\": \"[memory]\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178600200.000, \"args\": {\"Total Reserved\": 2097152, \"Total Allocated\": 1048576,"
    " \"Bytes\": -512, \"Addr\": 139637977776128, \"Device Id\": 0, \"Device Type\": 1}},\n"
    "{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"cpu_instant_event\", \"name\": \"[memory]\", \"pid\": 100, \"tid\": 100,"
    " \"ts\": 4793178600150.000, \"args\": {\"Total Reserved\": 2097152, \"Total Allocated\": 4096,"
    " \"Bytes\": 4096, \"Addr\": 138538465099776, \"Device Id\": 1, \"Device Type\": 1}}\n"
    "]}\n";

/* texts[0..n) as n files (ranks of one run) imported into one trace. */
static gt_trace *import_texts(const char *const *texts, size_t n)
{
    char *json[4], *out = gt_test_path("values.sqlite");
    for (size_t i = 0; i < n && i < 4; i++) {
        char name[64];
        snprintf(name, sizeof name, "values%zu.pt.trace.json", i);
        json[i] = gt_test_path(name);
        FILE *f = fopen(json[i], "w");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs(texts[i], f);
        fclose(f);
    }
    int rc = gt_import_files(NULL, out, (const char *const *)json, n, GT_IMPORT_OVERWRITE);
    if (rc != 0)
        fprintf(stderr, "import: %s\n", gt_error_last());
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, out, 0), 0);
    for (size_t i = 0; i < n && i < 4; i++) {
        unlink(json[i]);
        free(json[i]);
    }
    free(out);
    return t;
}

static gt_trace *import_it(void)
{
    const char *texts[] = {kineto};
    return import_texts(texts, 1);
}

static void test_import_values__runtime_calls_and_kernel(void)
{
    gt_trace *t = import_it();
    gt_iter *it = NULL;
    gt_event ev;
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, GT_EV_API, INT64_MIN, INT64_MAX), 0);
    while (gt_iter_next(it, &ev) > 0) {
        const char *name = gt_trace_string(t, ev.u.api.name);
        if (name && strncmp(name, "cudaLaunchKernel", 16) == 0) {
            CU_ASSERT_EQUAL(ev.u.api.start_ns, 100500);
            CU_ASSERT_EQUAL(ev.u.api.end_ns, 107750);
            CU_ASSERT_EQUAL(ev.u.api.correlation_id, 42);
            CU_ASSERT_EQUAL(ev.u.api.event_class, GT_API_RUNTIME);
            n++;
        } else if (name && strncmp(name, "cudaStreamSynchronize", 21) == 0) {
            CU_ASSERT_EQUAL(ev.u.api.start_ns, 500000);
            CU_ASSERT_EQUAL(ev.u.api.end_ns, 500000);
            CU_ASSERT_EQUAL(ev.u.api.correlation_id, 43);
            n++;
        }
    }
    gt_iter_free(it);
    CU_ASSERT_EQUAL(n, 2);

    n = 0;
    CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, GT_EV_KERNEL, INT64_MIN, INT64_MAX), 0);
    while (gt_iter_next(it, &ev) > 0) {
        if (ev.u.kernel.correlation_id == 44) {
            CU_ASSERT_EQUAL(ev.u.kernel.start_ns, 510000);
            CU_ASSERT_EQUAL(ev.u.kernel.end_ns, 550000);
            n++;
            continue;
        }
        CU_ASSERT_EQUAL(ev.u.kernel.start_ns, 110000);
        CU_ASSERT_EQUAL(ev.u.kernel.end_ns, 160125);
        CU_ASSERT_EQUAL(ev.u.kernel.correlation_id, 42);
        CU_ASSERT_EQUAL(ev.u.kernel.stream_id, 7);
        CU_ASSERT_EQUAL(ev.u.kernel.grid_x, 4);
        CU_ASSERT_EQUAL(ev.u.kernel.grid_y, 2);
        CU_ASSERT_EQUAL(ev.u.kernel.grid_z, 3);
        CU_ASSERT_EQUAL(ev.u.kernel.block_x, 128);
        n++;
    }
    gt_iter_free(it);
    CU_ASSERT_EQUAL(n, 2);
    gt_trace_free(t);
}

static void test_import_values__steps_and_collectives(void)
{
    gt_trace *t = import_it();
    gt_iter *it = NULL;
    gt_event ev;
    int steps = 0, colls = 0, marks = 0;
    CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, GT_EV_NVTX, INT64_MIN, INT64_MAX), 0);
    while (gt_iter_next(it, &ev) > 0) {
        const gt_nvtx *n = &ev.u.nvtx;
        const char *text = gt_trace_string(t, n->text);
        if (!text)
            continue;
        if (strcmp(text, "step 5") == 0 || strcmp(text, "step 6") == 0) {
            int64_t s = text[5] == '5' ? 0 : 1000000;
            CU_ASSERT_EQUAL(n->start_ns, s);
            CU_ASSERT_EQUAL(n->end_ns, s + 1000000);
            steps++;
        } else if (strcmp(text, "nccl:all_reduce") == 0) {
            CU_ASSERT_EQUAL(n->start_ns, 300000);
            CU_ASSERT_EQUAL(n->end_ns, 320000);
            CU_ASSERT_EQUAL(n->payload_kind, GT_PAYLOAD_U64);
            CU_ASSERT_EQUAL(n->payload.u64, 1024 * 2 * 4); /* of its first input's type */
            colls++;
        } else if (strcmp(text, "epoch_end") == 0) {
            CU_ASSERT_EQUAL(n->event_type, GT_NVTX_MARK);
            CU_ASSERT_EQUAL(n->start_ns, 600000);
            CU_ASSERT_EQUAL(n->end_ns, -1);
            marks++;
        } else if (strcmp(text, "nccl:broadcast") == 0) {
            CU_ASSERT_EQUAL(n->payload_kind, GT_PAYLOAD_U64);
            CU_ASSERT_EQUAL(n->payload.u64, 0);
            colls++;
        }
    }
    gt_iter_free(it);
    CU_ASSERT_EQUAL(steps, 2);
    CU_ASSERT_EQUAL(colls, 2);
    CU_ASSERT_EQUAL(marks, 1);
    gt_trace_free(t);
}

/* Times since the epoch: the trace's zero is the first event's wall-clock
 * time. Times since boot (the main trace: 55 days of uptime): no wall
 * clock. Two ranks of one machine both list GPU 0: the trace has it once. */
static void test_import_values__wall_clock_and_gpus(void)
{
    gt_trace *t = import_it();
    int64_t utc = 0;
    CU_ASSERT_EQUAL(gt_trace_session_start(t, &utc), GT_ERR_NOTFOUND);
    gt_trace_free(t);
    const char *ranks[] = {kineto_wall_clock, kineto_wall_clock};
    t = import_texts(ranks, 2);
    CU_ASSERT_EQUAL(gt_trace_session_start(t, &utc), 0);
    CU_ASSERT_EQUAL(utc, 1764633600000000000LL);
    size_t n_gpus = 0;
    const gt_gpu_info *g = gt_trace_gpus(t, &n_gpus);
    CU_ASSERT_EQUAL_FATAL(n_gpus, 1);
    CU_ASSERT_EQUAL(g[0].id, 0);
    CU_ASSERT_EQUAL(g[0].total_memory_bytes, 85031714816LL);
    /* both ranks had host pid 100: the second is moved to a free one */
    size_t n_procs = 0;
    const gt_process *p = gt_trace_processes(t, &n_procs);
    CU_ASSERT_EQUAL_FATAL(n_procs, 2);
    CU_ASSERT_NOT_EQUAL(p[0].pid, p[1].pid);
    CU_ASSERT_TRUE(p[0].pid == 100 || p[1].pid == 100);
    gt_trace_free(t);
}

/* A JSON file saved with a UTF-8 byte order mark is still Kineto's. */
static void test_import_values__detect_bom(void)
{
    char *path = gt_test_path("bom.pt.trace.json");
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("\xef\xbb\xbf", f);
    fputs(kineto_wall_clock, f);
    fclose(f);
    gt_import_format fmt = 0;
    CU_ASSERT_EQUAL(gt_import_detect(path, &fmt), 0);
    CU_ASSERT_EQUAL(fmt, GT_IMPORT_KINETO);
    unlink(path);
    free(path);
}

/* The NVTX range named `text` on the trace: how many, and the last one's
 * times. */
static int find_range(gt_trace *t, const char *text, int64_t *start_ns, int64_t *end_ns)
{
    gt_iter *it = NULL;
    gt_event ev;
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, GT_EV_NVTX, INT64_MIN, INT64_MAX), 0);
    while (gt_iter_next(it, &ev) > 0) {
        const char *s = gt_trace_string(t, ev.u.nvtx.text);
        if (s && strcmp(s, text) == 0) {
            *start_ns = ev.u.nvtx.start_ns;
            *end_ns = ev.u.nvtx.end_ns;
            n++;
        }
    }
    gt_iter_free(it);
    return n;
}

static void test_import_values__short_profiler_steps(void)
{
    const char *texts[] = {kineto_with_stack};
    gt_trace *t = import_texts(texts, 1);
    int64_t s = 0, e = 0;
    CU_ASSERT_EQUAL(find_range(t, "step 10", &s, &e), 1);
    CU_ASSERT_EQUAL(s, 0);
    CU_ASSERT_EQUAL(e, 10000000);
    CU_ASSERT_EQUAL(find_range(t, "step 11", &s, &e), 1);
    CU_ASSERT_EQUAL(s, 10000000);
    CU_ASSERT_EQUAL(e, 20000000);
    CU_ASSERT_EQUAL(find_range(t, "step 12", &s, &e), 1);
    CU_ASSERT_EQUAL(s, 20000000);
    CU_ASSERT_EQUAL(e, 29015000); /* zero_grad's end, the thread's last */
    /* the host's names, once; the GPU's stream is no host thread */
    size_t n = 0;
    const gt_process *p = gt_trace_processes(t, &n);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_STRING_EQUAL(p[0].name ? p[0].name : "", "python3");
    const gt_thread *th = gt_trace_threads(t, &n);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(th[0].global_tid, gt_global_tid(p[0].pid, 100));
    CU_ASSERT_STRING_EQUAL(th[0].name ? th[0].name : "", "thread 100 (python3)");
    gt_trace_free(t);
}

static void test_import_values__odd_events(void)
{
    const char *texts[] = {kineto_odd};
    gt_trace *t = import_texts(texts, 1);
    int64_t s = -1, e = -1;
    CU_ASSERT_EQUAL(find_range(t, "broken", &s, &e), 0);
    CU_ASSERT_EQUAL(find_range(t, "step -1", &s, &e), 0);
    CU_ASSERT_EQUAL(find_range(t, "ProfilerStep#-1", &s, &e), 1);
    CU_ASSERT_EQUAL(s, 0);
    CU_ASSERT_EQUAL(e, 3000);
    gt_trace_free(t);
}

static void test_import_values__allocator_events(void)
{
    const char *texts[] = {kineto_memory};
    gt_trace *t = import_texts(texts, 1);
    gt_iter *it = NULL;
    gt_event ev;
    int64_t reg = -1, unreg = -1, block = -1;
    uint64_t heap0 = 0, heap1 = 0, block_heap0 = 1, block_heap1 = 1;
    CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, GT_EV_HEAP, INT64_MIN, INT64_MAX), 0);
    while (gt_iter_next(it, &ev) > 0) {
        const gt_heap_event *h = &ev.u.heap;
        const char *name = h->name ? gt_trace_string(t, h->name) : NULL;
        if (h->operation == GT_HEAP_REGISTER && name && strcmp(name, "cuda:0 caching allocator") == 0)
            heap0 = h->heap_id;
        if (h->operation == GT_HEAP_REGISTER && name && strcmp(name, "cuda:1 caching allocator") == 0)
            heap1 = h->heap_id;
        if (h->operation == GT_REGION_REGISTER)
            *(h->address == 138538465099776ull ? &block_heap1 : &block_heap0) = h->heap_id;
        if (h->address == 139637976727552ull && h->operation == GT_REGION_REGISTER) {
            CU_ASSERT_EQUAL(h->bytes, 1048576);
            block = h->start_ns;
        } else if (h->address == 139637977776128ull && h->operation == GT_REGION_REGISTER) {
            CU_ASSERT_EQUAL(h->bytes, 512);
            reg = h->start_ns;
        } else if (h->address == 139637977776128ull && h->operation == GT_REGION_UNREGISTER) {
            unreg = h->start_ns;
        }
    }
    gt_iter_free(it);
    CU_ASSERT_EQUAL(block, 0);
    CU_ASSERT_EQUAL(reg, 100000);
    CU_ASSERT_EQUAL(unreg, 100001);
    CU_ASSERT_NOT_EQUAL(heap0, 0);
    CU_ASSERT_NOT_EQUAL(heap1, 0);
    CU_ASSERT_NOT_EQUAL(heap0, heap1);
    CU_ASSERT_EQUAL(block_heap0, heap0);
    CU_ASSERT_EQUAL(block_heap1, heap1);
    gt_trace_free(t);
}

static const gt_test_case cases[] = {
    {"test_import_values__runtime_calls_and_kernel", test_import_values__runtime_calls_and_kernel},
    {"test_import_values__steps_and_collectives", test_import_values__steps_and_collectives},
    {"test_import_values__wall_clock_and_gpus", test_import_values__wall_clock_and_gpus},
    {"test_import_values__detect_bom", test_import_values__detect_bom},
    {"test_import_values__short_profiler_steps", test_import_values__short_profiler_steps},
    {"test_import_values__odd_events", test_import_values__odd_events},
    {"test_import_values__allocator_events", test_import_values__allocator_events},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"import_values", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
