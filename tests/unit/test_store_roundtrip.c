/* test_store_roundtrip.c: what gt_writer_* writes, gt_trace_* reads back,
 * field for field: every event kind, every description, time ranges on a
 * written trace, and a trace whose writer was killed.
 * The reader on foreign files is test_store_reader.c; the writer's own
 * failure handling is test_store_writer.c. */
#include "gt_store.h"
#include "gt_test.h"
#include "store_check.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------------- */



static gt_event zeroed(gt_event_kind kind)
{
    gt_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = kind;
    return ev;
}

static void add_ok(gt_writer *w, const gt_event *ev)
{
    int rc = gt_writer_add(w, ev);
    if (rc != 0)
        fprintf(stderr, "\n  add %s: %s\n", gt_event_kind_name(ev->kind), gt_error_last());
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static gt_string_id intern_ok(gt_writer *w, const char *s)
{
    gt_string_id id = 0;
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, s, &id), 0);
    CU_ASSERT(id != 0);
    return id;
}

/* The written events of one kind in the order the reader promises: by start,
 * and in the order written where starts are equal. */
static size_t expected_of(const gt_event *written, size_t n_written, gt_event_kind kind, gt_event *out)
{
    size_t n = 0;
    for (size_t i = 0; i < n_written; i++)
        if (written[i].kind == kind)
            out[n++] = written[i];
    for (size_t i = 1; i < n; i++) { /* insertion sort: stable */
        gt_event x = out[i];
        size_t j = i;
        while (j > 0 && gt_event_start(&out[j - 1]) > gt_event_start(&x)) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = x;
    }
    return n;
}

/* The first field in which two events differ, or NULL: every field of every kind. */
static const char *differing_field(const gt_event *a, const gt_event *b)
{
#define F(x) if (a->u.x != b->u.x) return #x
    if (a->kind != b->kind)
        return "kind";
    switch (a->kind) {
    case GT_EV_KERNEL:
        F(kernel.start_ns); F(kernel.end_ns); F(kernel.global_pid); F(kernel.device_id); F(kernel.context_id);
        F(kernel.stream_id); F(kernel.correlation_id); F(kernel.demangled_name); F(kernel.short_name);
        F(kernel.mangled_name); F(kernel.grid_x); F(kernel.grid_y); F(kernel.grid_z); F(kernel.block_x);
        F(kernel.block_y); F(kernel.block_z); F(kernel.registers_per_thread); F(kernel.static_shared_bytes);
        F(kernel.dynamic_shared_bytes); F(kernel.local_per_thread_bytes); F(kernel.local_total_bytes);
        F(kernel.grid_id); F(kernel.launch_type); F(kernel.cache_config); F(kernel.shared_limit_config);
        F(kernel.graph_node_id);
        break;
    case GT_EV_MEMCPY:
        F(memcpy.start_ns); F(memcpy.end_ns); F(memcpy.global_pid); F(memcpy.device_id); F(memcpy.context_id);
        F(memcpy.stream_id); F(memcpy.correlation_id); F(memcpy.bytes); F(memcpy.copy_kind); F(memcpy.src_kind);
        F(memcpy.dst_kind); F(memcpy.src_device_id); F(memcpy.dst_device_id);
        break;
    case GT_EV_MEMSET:
        F(memset.start_ns); F(memset.end_ns); F(memset.global_pid); F(memset.device_id); F(memset.context_id);
        F(memset.stream_id); F(memset.correlation_id); F(memset.value); F(memset.bytes); F(memset.mem_kind);
        break;
    case GT_EV_API:
        F(api.start_ns); F(api.end_ns); F(api.global_tid); F(api.correlation_id); F(api.name);
        F(api.event_class); F(api.return_value); F(api.callchain_id);
        break;
    case GT_EV_SYNC:
        F(sync.start_ns); F(sync.end_ns); F(sync.global_pid); F(sync.device_id); F(sync.context_id);
        F(sync.stream_id); F(sync.correlation_id); F(sync.sync_type); F(sync.event_id);
        break;
    case GT_EV_NVTX:
        F(nvtx.start_ns); F(nvtx.end_ns); F(nvtx.event_type); F(nvtx.range_id); F(nvtx.category);
        F(nvtx.has_color); F(nvtx.color); F(nvtx.text); F(nvtx.text_registered); F(nvtx.global_tid);
        F(nvtx.end_global_tid);
        F(nvtx.domain_id); F(nvtx.payload_kind);
        switch (a->u.nvtx.payload_kind) {
        case GT_PAYLOAD_NONE: break;
        case GT_PAYLOAD_U64: F(nvtx.payload.u64); break;
        case GT_PAYLOAD_I64: F(nvtx.payload.i64); break;
        case GT_PAYLOAD_DOUBLE: F(nvtx.payload.f64); break;
        case GT_PAYLOAD_U32: F(nvtx.payload.u32); break;
        case GT_PAYLOAD_I32: F(nvtx.payload.i32); break;
        case GT_PAYLOAD_FLOAT: F(nvtx.payload.f32); break;
        }
        break;
    case GT_EV_GPU_MEMORY:
        F(gpu_memory.start_ns); F(gpu_memory.global_pid); F(gpu_memory.device_id); F(gpu_memory.context_id);
        F(gpu_memory.address); F(gpu_memory.pc); F(gpu_memory.bytes); F(gpu_memory.mem_kind);
        F(gpu_memory.operation); F(gpu_memory.correlation_id); F(gpu_memory.stream_id);
        F(gpu_memory.callchain_id);
        break;
    case GT_EV_HEAP:
        F(heap.start_ns); F(heap.global_tid); F(heap.operation); F(heap.heap_id); F(heap.address); F(heap.bytes);
        F(heap.heap_usage); F(heap.memory_type); F(heap.name); F(heap.domain_id); F(heap.callchain_id);
        break;
    case GT_EV_CPU_OP:
        F(cpu_op.start_ns); F(cpu_op.end_ns); F(cpu_op.global_tid); F(cpu_op.name); F(cpu_op.stream_id);
        F(cpu_op.flops); F(cpu_op.bytes);
        break;
    case GT_EV_N_KINDS:
        return "kind";
    }
#undef F
    return NULL;
}

static void check_same(const gt_event *want, size_t n_want, const gt_event *got, size_t n_got, const char *what)
{
    CU_ASSERT_EQUAL(n_got, n_want);
    for (size_t i = 0; i < n_want && i < n_got; i++) {
        const char *field = differing_field(&want[i], &got[i]);
        if (field) {
            fprintf(stderr, "\n  %s %s #%zu (start %lld): %s differs\n", what, gt_event_kind_name(want[i].kind), i,
                    (long long)gt_event_start(&want[i]), field);
            CU_FAIL("event read back differs from the one written");
        }
    }
}



static uint64_t next_random(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* ---- one of everything ---------------------------------------------------------------- */

enum { MAX_EVENTS = 64 };

typedef struct written {
    gt_event events[MAX_EVENTS];
    size_t n_events;
    gt_string_id names[8];
    gt_gpu_info gpu;
    gt_frame frames[3];
} written;

static void push(gt_writer *w, written *wr, const gt_event *ev)
{
    CU_ASSERT_FATAL(wr->n_events < MAX_EVENTS);
    add_ok(w, ev);
    wr->events[wr->n_events++] = *ev;
}

static const char *const name_strings[8] = {"gemm_kernel", "void gemm<float>(float*)", "_Z4gemmPf", "cudaLaunchKernel_v7000",
                                            "step", "optimizer", "libcudart.so.13", "caching allocator"};

/* A message stored as text (not a registered string) comes back under an id
 * of the reader's: put back the writer's id of the same string. */
static void writer_text_ids(gt_trace *t, const written *wr, gt_event *evs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        gt_nvtx *v = &evs[i].u.nvtx;
        if (evs[i].kind != GT_EV_NVTX || v->text_registered || !v->text)
            continue;
        const char *s = gt_trace_string(t, v->text);
        for (int k = 0; s && k < 8; k++)
            if (strcmp(s, name_strings[k]) == 0)
                v->text = wr->names[k];
    }
}

static void write_everything(const char *path, written *wr)
{
    gt_writer *w = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_writer_open(&w, path, GT_WRITE_OVERWRITE), 0);
    memset(wr, 0, sizeof *wr);
    for (int i = 0; i < 8; i++)
        wr->names[i] = intern_ok(w, name_strings[i]);
    const int64_t pid = 4242, tid = gt_global_tid(pid, 4243);

    CU_ASSERT_EQUAL(gt_writer_add_process(w, pid, "trainer"), 0);
    CU_ASSERT_EQUAL(gt_writer_add_thread_name(w, tid, "main thread", 10), 0);
    wr->gpu = (gt_gpu_info){
        .id = 1, .name = "NVIDIA H100 80GB HBM3", .bus_location = "0000:c1:00.0",
        .uuid = "0a1b2c3d-0000-1111-2222-333344445555", .chip_name = "GH100",
        .total_memory_bytes = 85045460992, .l2_cache_bytes = 52428800,
        .memory_bandwidth_bytes_per_s = 3352320000000, .clock_rate_hz = 1980000000, .sm_count = 132,
        .compute_major = 9, .compute_minor = 0, .max_threads_per_block = 1024, .threads_per_warp = 32,
        .max_shmem_per_block = 49152, .max_shmem_per_block_optin = 232448, .max_shmem_per_sm = 233472,
        .max_registers_per_block = 65536, .max_registers_per_sm = 65536, .async_engines = 3,
    };
    CU_ASSERT_EQUAL(gt_writer_add_gpu(w, &wr->gpu), 0);
    wr->frames[0] = (gt_frame){.symbol = wr->names[3], .module = wr->names[6], .unresolved = false,
                               .original_ip = 0x7f0012345678u};
    wr->frames[1] = (gt_frame){.symbol = wr->names[4], .module = wr->names[6], .unresolved = true,
                               .original_ip = 0xffffffff81000000u}; /* top bit set */
    wr->frames[2] = (gt_frame){.symbol = wr->names[5], .module = 0, .unresolved = false, .original_ip = 4096};
    CU_ASSERT_EQUAL(gt_writer_add_callchain(w, 7, wr->frames, 3), 0);
    CU_ASSERT_EQUAL(gt_writer_add_config(w, 0, "command", "trainer --steps 3"), 0);
    CU_ASSERT_EQUAL(gt_writer_add_config(w, gt_global_pid(pid), "rank", "0"), 0);
    CU_ASSERT_EQUAL(gt_writer_set_session_start(w, 1700000000123456789), 0);

    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), 0);
    gt_event ev;
    /* kernels: three start in the same nanosecond; one from a graph; one without a mangled name */
    for (int i = 0; i < 5; i++) {
        ev = zeroed(GT_EV_KERNEL);
        gt_kernel *k = &ev.u.kernel;
        k->start_ns = i < 3 ? 1000 : 1000 + 500 * i;
        k->end_ns = k->start_ns + 100 + 10 * i;
        k->global_pid = gt_global_pid(pid);
        k->device_id = 1;
        k->context_id = 2;
        k->stream_id = 7 + i;
        k->correlation_id = 100 + i;
        k->demangled_name = wr->names[1];
        k->short_name = wr->names[0];
        k->mangled_name = i == 4 ? 0 : wr->names[2];
        k->grid_x = 64 + i, k->grid_y = 2, k->grid_z = 1;
        k->block_x = 256, k->block_y = 1, k->block_z = 1;
        k->registers_per_thread = 40;
        k->static_shared_bytes = 4096;
        k->dynamic_shared_bytes = i * 1024;
        k->local_per_thread_bytes = 8;
        k->local_total_bytes = 1 << 20;
        k->grid_id = 5000 + i;
        k->launch_type = 1 + (i & 1);
        k->cache_config = i & 3;
        k->shared_limit_config = 1;
        k->graph_node_id = i == 3 ? 77 : 0;
        push(w, wr, &ev);
    }
    ev = zeroed(GT_EV_MEMCPY);
    ev.u.memcpy = (gt_memcpy){.start_ns = 900, .end_ns = 950, .global_pid = gt_global_pid(pid), .device_id = 1,
                              .context_id = 2, .stream_id = 7, .correlation_id = 99, .bytes = 1 << 26,
                              .copy_kind = GT_COPY_HTOD, .src_kind = GT_MEM_PAGEABLE, .dst_kind = GT_MEM_DEVICE,
                              .src_device_id = 0, .dst_device_id = 1};
    push(w, wr, &ev);
    ev = zeroed(GT_EV_MEMCPY);
    ev.u.memcpy = (gt_memcpy){.start_ns = 3000, .end_ns = 3100, .global_pid = gt_global_pid(pid), .device_id = 1,
                              .context_id = 2, .stream_id = 8, .correlation_id = 120, .bytes = 4096,
                              .copy_kind = GT_COPY_PTOP, .src_kind = GT_MEM_DEVICE, .dst_kind = GT_MEM_DEVICE,
                              .src_device_id = 1, .dst_device_id = 2};
    push(w, wr, &ev);
    ev = zeroed(GT_EV_MEMSET);
    ev.u.memset = (gt_memset){.start_ns = 800, .end_ns = 820, .global_pid = gt_global_pid(pid), .device_id = 1,
                              .context_id = 2, .stream_id = 7, .correlation_id = 98, .value = -1,
                              .bytes = 123456789, .mem_kind = GT_MEM_MANAGED};
    push(w, wr, &ev);
    ev = zeroed(GT_EV_API);
    ev.u.api = (gt_api_call){.start_ns = 990, .end_ns = 1010, .global_tid = tid, .correlation_id = 100,
                             .name = wr->names[3], .event_class = GT_API_RUNTIME, .return_value = 0,
                             .callchain_id = 7};
    push(w, wr, &ev);
    ev = zeroed(GT_EV_API);
    ev.u.api = (gt_api_call){.start_ns = 990, .end_ns = 995, .global_tid = tid, .correlation_id = 101,
                             .name = wr->names[3], .event_class = GT_API_DRIVER, .return_value = 2};
    push(w, wr, &ev);
    ev = zeroed(GT_EV_SYNC);
    ev.u.sync = (gt_sync){.start_ns = 1200, .end_ns = 3500, .global_pid = gt_global_pid(pid), .device_id = 1,
                          .context_id = 2, .stream_id = -1, .correlation_id = 130,
                          .sync_type = GT_SYNC_STREAM_WAIT_EVENT, .event_id = 4294967295};
    push(w, wr, &ev);
    /* NVTX: a range of each kind, marks (end -1), every payload kind, colors */
    for (int p = GT_PAYLOAD_NONE; p <= GT_PAYLOAD_FLOAT; p++) {
        ev = zeroed(GT_EV_NVTX);
        gt_nvtx *v = &ev.u.nvtx;
        v->start_ns = 500 + 10 * p;
        v->end_ns = p % 2 ? -1 : 4000 - p;
        v->event_type = p % 2 ? GT_NVTX_MARK : GT_NVTX_PUSHPOP;
        v->global_tid = tid;
        v->text = p == GT_PAYLOAD_I32 ? 0 : wr->names[4];
        v->text_registered = v->text && p % 3 == 0; /* registered strings: textId; the rest: text */
        v->domain_id = p >= GT_PAYLOAD_U32 ? 3 : 0;
        v->category = p == GT_PAYLOAD_DOUBLE ? 12 : 0;
        if (p & 2) {
            v->has_color = true;
            v->color = 0xff76b900u;
        }
        v->payload_kind = (gt_payload_kind)p;
        switch (p) {
        case GT_PAYLOAD_U64: v->payload.u64 = UINT64_MAX - 1; break;
        case GT_PAYLOAD_I64: v->payload.i64 = INT64_MIN + 3; break;
        case GT_PAYLOAD_DOUBLE: v->payload.f64 = -1.0 / 3.0; break;
        case GT_PAYLOAD_U32: v->payload.u32 = 4000000000u; break;
        case GT_PAYLOAD_I32: v->payload.i32 = -123456; break;
        case GT_PAYLOAD_FLOAT: v->payload.f32 = 0.1f; break;
        }
        push(w, wr, &ev);
    }
    ev = zeroed(GT_EV_NVTX);
    ev.u.nvtx = (gt_nvtx){.start_ns = 600, .end_ns = 2600, .event_type = GT_NVTX_STARTEND, .range_id = 31,
                          .text = wr->names[5], .global_tid = tid, .end_global_tid = gt_global_tid(pid, 4250),
                          .domain_id = 3};
    push(w, wr, &ev);
    ev = zeroed(GT_EV_NVTX);
    ev.u.nvtx = (gt_nvtx){.start_ns = 1, .end_ns = -1, .event_type = GT_NVTX_DOMAIN_CREATE, .text = wr->names[7],
                          .global_tid = tid, .domain_id = 3};
    push(w, wr, &ev);
    ev = zeroed(GT_EV_GPU_MEMORY);
    ev.u.gpu_memory = (gt_gpu_memory){.start_ns = 700, .global_pid = gt_global_pid(pid), .device_id = 1,
                                      .context_id = 2, .address = 0xffff800000001000u, .pc = 0x7f0000001234u,
                                      .bytes = 1 << 30, .mem_kind = GT_MEM_DEVICE, .operation = GT_DEVMEM_ALLOC,
                                      .correlation_id = 97, .stream_id = 7, .callchain_id = 7};
    push(w, wr, &ev);
    ev = zeroed(GT_EV_GPU_MEMORY);
    ev.u.gpu_memory = (gt_gpu_memory){.start_ns = 3900, .global_pid = gt_global_pid(pid), .device_id = 1,
                                      .context_id = 2, .address = 0xffff800000001000u, .bytes = 1 << 30,
                                      .mem_kind = GT_MEM_DEVICE, .operation = GT_DEVMEM_FREE,
                                      .correlation_id = 140};
    push(w, wr, &ev);
    for (int op = GT_HEAP_REGISTER; op <= GT_REGION_NAME; op++) {
        ev = zeroed(GT_EV_HEAP);
        ev.u.heap = (gt_heap_event){.start_ns = 720 + op, .global_tid = tid, .operation = op,
                                    .heap_id = 0x5500000000000000u + 1, .address = 0xffff800000001000u + 256u * op,
                                    .bytes = 512 * op, .heap_usage = op & 1, .memory_type = 2,
                                    .name = op == GT_REGION_NAME ? wr->names[7] : 0, .domain_id = 3,
                                    .callchain_id = op == GT_REGION_REGISTER ? 7 : 0};
        push(w, wr, &ev);
    }
    ev = zeroed(GT_EV_CPU_OP);
    ev.u.cpu_op = (gt_cpu_op){.start_ns = 1500, .end_ns = 2500, .global_tid = tid, .name = wr->names[0],
                              .stream_id = 1, .flops = 2LL * 1024 * 1024 * 1024, .bytes = 3 << 20};
    push(w, wr, &ev);
    ev = zeroed(GT_EV_CPU_OP);
    ev.u.cpu_op = (gt_cpu_op){.start_ns = 1500, .end_ns = 1600, .global_tid = tid, .name = wr->names[4]};
    push(w, wr, &ev);
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
}

static void test_store_roundtrip__every_event_kind(void)
{
    char *path = gt_test_path("everything.sqlite");
    written *wr = malloc(sizeof *wr);
    CU_ASSERT_FATAL(path && wr);
    write_everything(path, wr);
    gt_trace *t = open_ok(path, 0);
    CU_ASSERT_EQUAL(gt_trace_origin_of(t), GT_ORIGIN_GTRACE);
    gt_event want[MAX_EVENTS];
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        size_t n_want = expected_of(wr->events, wr->n_events, (gt_event_kind)k, want), n_got;
        CU_ASSERT(n_want > 0);
        int64_t count = -1;
        CU_ASSERT_EQUAL(gt_trace_count(t, (gt_event_kind)k, &count), 0);
        CU_ASSERT_EQUAL(count, (int64_t)n_want);
        gt_event *got = read_events(t, (gt_event_kind)k, INT64_MIN, INT64_MAX, &n_got);
        writer_text_ids(t, wr, got, n_got);
        check_same(want, n_want, got, n_got, "roundtrip");
        free(got);
    }
    /* the same-nanosecond kernels come back in the order written */
    size_t n;
    gt_event *kernels = read_events(t, GT_EV_KERNEL, 1000, 1001, &n);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(kernels[i].u.kernel.start_ns, 1000);
        CU_ASSERT_EQUAL(kernels[i].u.kernel.stream_id, 7 + (int32_t)i);
    }
    free(kernels);
    int64_t s, e;
    CU_ASSERT_EQUAL(gt_trace_time_span(t, &s, &e), 0);
    CU_ASSERT_EQUAL(s, 1);    /* the domain creation */
    CU_ASSERT_EQUAL(e, 4000); /* the first NVTX range */
    gt_trace_free(t);
    free(wr);
    free(path);
}

static void test_store_roundtrip__descriptions(void)
{
    char *path = gt_test_path("descriptions.sqlite");
    written *wr = malloc(sizeof *wr);
    CU_ASSERT_FATAL(path && wr);
    write_everything(path, wr);
    gt_trace *t = open_ok(path, 0);
    CU_ASSERT_STRING_EQUAL(gt_trace_schema_version(t), "1");
    CU_ASSERT_STRING_EQUAL(gt_trace_meta(t, "EXPORT_PRODUCT_NAME"), "gtrace");
    CU_ASSERT_STRING_EQUAL(gt_trace_meta(t, "GTRACE_SCHEMA_VERSION"), "1");
    CU_ASSERT_STRING_EQUAL(gt_trace_meta(t, "EXPORT_SCHEMA_VERSION"), "3.13.2");
    CU_ASSERT_STRING_EQUAL(gt_trace_meta(t, "command"), "trainer --steps 3"); /* run config of pid 0 */
    CU_ASSERT_PTR_NULL(gt_trace_meta(t, "rank"));                              /* one process's */
    static const char *const names[8] = {"gemm_kernel", "void gemm<float>(float*)", "_Z4gemmPf", "cudaLaunchKernel_v7000",
                                         "step", "optimizer", "libcudart.so.13", "caching allocator"};
    for (int i = 0; i < 8; i++)
        CU_ASSERT_STRING_EQUAL(gt_trace_string(t, wr->names[i]), names[i]);

    size_t n;
    const gt_process *procs = gt_trace_processes(t, &n);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(procs[0].pid, 4242);
    CU_ASSERT_EQUAL(procs[0].global_pid, gt_global_pid(4242));
    CU_ASSERT_STRING_EQUAL(procs[0].name, "trainer");
    const gt_thread *threads = gt_trace_threads(t, &n);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(threads[0].global_tid, gt_global_tid(4242, 4243));
    CU_ASSERT_STRING_EQUAL(threads[0].name, "main thread");

    const gt_gpu_info *g = gt_trace_gpus(t, &n), *w = &wr->gpu;
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_EQUAL(g->id, w->id);
    CU_ASSERT_STRING_EQUAL(g->name, w->name);
    CU_ASSERT_STRING_EQUAL(g->bus_location, w->bus_location);
    CU_ASSERT_STRING_EQUAL(g->uuid, w->uuid);
    CU_ASSERT_STRING_EQUAL(g->chip_name, w->chip_name);
    CU_ASSERT_EQUAL(g->total_memory_bytes, w->total_memory_bytes);
    CU_ASSERT_EQUAL(g->l2_cache_bytes, w->l2_cache_bytes);
    CU_ASSERT_EQUAL(g->memory_bandwidth_bytes_per_s, w->memory_bandwidth_bytes_per_s);
    CU_ASSERT_EQUAL(g->clock_rate_hz, w->clock_rate_hz);
    CU_ASSERT_EQUAL(g->sm_count, w->sm_count);
    CU_ASSERT_EQUAL(g->compute_major, w->compute_major);
    CU_ASSERT_EQUAL(g->compute_minor, w->compute_minor);
    CU_ASSERT_EQUAL(g->max_threads_per_block, w->max_threads_per_block);
    CU_ASSERT_EQUAL(g->threads_per_warp, w->threads_per_warp);
    CU_ASSERT_EQUAL(g->max_shmem_per_block, w->max_shmem_per_block);
    CU_ASSERT_EQUAL(g->max_shmem_per_block_optin, w->max_shmem_per_block_optin);
    CU_ASSERT_EQUAL(g->max_shmem_per_sm, w->max_shmem_per_sm);
    CU_ASSERT_EQUAL(g->max_registers_per_block, w->max_registers_per_block);
    CU_ASSERT_EQUAL(g->max_registers_per_sm, w->max_registers_per_sm);
    CU_ASSERT_EQUAL(g->async_engines, w->async_engines);

    const gt_frame *frames = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_callchain(t, 7, &frames, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(frames[i].symbol, wr->frames[i].symbol);
        CU_ASSERT_EQUAL(frames[i].module, wr->frames[i].module);
        CU_ASSERT_EQUAL(frames[i].unresolved, wr->frames[i].unresolved);
        CU_ASSERT_EQUAL(frames[i].original_ip, wr->frames[i].original_ip);
    }
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, frames[0].symbol), "cudaLaunchKernel_v7000");
    CU_ASSERT_EQUAL(gt_trace_callchain(t, 8, &frames, &n), GT_ERR_NOTFOUND);
    gt_trace_free(t);
    free(wr);
    free(path);
}

/* ---- time ranges on a written trace --------------------------------------------------- */

static void test_store_roundtrip__time_ranges(void)
{
    enum { N_PER_KIND = 1500 };
    char *path = gt_test_path("ranges.sqlite");
    gt_writer *w = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_writer_open(&w, path, GT_WRITE_OVERWRITE), 0);
    gt_string_id name = intern_ok(w, "op");
    uint64_t x = 0xdeadbeefcafef00dull;
    int64_t span = 10 * 1000 * 1000;
    for (int batch = 0; batch < 3; batch++) {
        CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), 0);
        for (int i = 0; i < N_PER_KIND / 3; i++) {
            for (int k = 0; k < GT_EV_N_KINDS; k++) {
                gt_event ev = zeroed((gt_event_kind)k);
                int64_t start = (int64_t)(next_random(&x) % (uint64_t)span) - 1000;
                int64_t dur = (int64_t)(next_random(&x) % 20000);
                if (i == 17 && batch == 1)
                    dur = span / 2; /* one very long event per kind */
                if (i % 97 == 0)
                    dur = 0;
                switch ((gt_event_kind)k) {
                case GT_EV_KERNEL:
                    /* clusters of kernels in the same nanosecond */
                    ev.u.kernel = (gt_kernel){.start_ns = i % 10 == 0 ? 777 : start, .end_ns = start + dur,
                                              .short_name = name, .demangled_name = name, .stream_id = i,
                                              .grid_x = 1 + i % 3, .block_x = 32};
                    if (ev.u.kernel.start_ns == 777)
                        ev.u.kernel.end_ns = 777 + dur;
                    break;
                case GT_EV_MEMCPY: ev.u.memcpy = (gt_memcpy){.start_ns = start, .end_ns = start + dur, .bytes = i}; break;
                case GT_EV_MEMSET: ev.u.memset = (gt_memset){.start_ns = start, .end_ns = start + dur, .bytes = i}; break;
                case GT_EV_API:
                    ev.u.api = (gt_api_call){.start_ns = start, .end_ns = start + dur, .name = name, .correlation_id = i};
                    break;
                case GT_EV_SYNC: ev.u.sync = (gt_sync){.start_ns = start, .end_ns = start + dur, .event_id = i}; break;
                case GT_EV_NVTX:
                    ev.u.nvtx = (gt_nvtx){.start_ns = start, .end_ns = i % 5 == 0 ? -1 : start + dur,
                                          .event_type = i % 5 == 0 ? GT_NVTX_MARK : GT_NVTX_PUSHPOP, .text = name,
                                          .range_id = i};
                    break;
                case GT_EV_GPU_MEMORY:
                    ev.u.gpu_memory = (gt_gpu_memory){.start_ns = start, .bytes = i, .address = (uint64_t)i << 12};
                    break;
                case GT_EV_HEAP: ev.u.heap = (gt_heap_event){.start_ns = start, .bytes = i, .operation = i % 7}; break;
                case GT_EV_CPU_OP: ev.u.cpu_op = (gt_cpu_op){.start_ns = start, .end_ns = start + dur, .name = name, .flops = i}; break;
                case GT_EV_N_KINDS: break;
                }
                add_ok(w, &ev);
            }
        }
        CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    }
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);

    gt_trace *t = open_ok(path, 0);
    int64_t s0, e0;
    CU_ASSERT_EQUAL_FATAL(gt_trace_time_span(t, &s0, &e0), 0);
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        size_t n_all;
        gt_event *all = read_events(t, (gt_event_kind)k, INT64_MIN, INT64_MAX, &n_all);
        CU_ASSERT_EQUAL(n_all, N_PER_KIND);
        for (size_t i = 1; i < n_all; i++)
            CU_ASSERT_FATAL(gt_event_start(&all[i - 1]) <= gt_event_start(&all[i]));
        for (int r = 0; r < 60; r++) {
            int64_t a = s0 - 50 + (int64_t)(next_random(&x) % (uint64_t)(e0 - s0 + 100));
            int64_t b = a + (int64_t)(next_random(&x) % (uint64_t)(span / (1 + r % 20) + 1));
            check_range(t, (gt_event_kind)k, all, n_all, a, b);
        }
        for (size_t i = 0; i < n_all; i += 97) {
            int64_t s = gt_event_start(&all[i]), e = gt_event_end(&all[i]);
            check_range(t, (gt_event_kind)k, all, n_all, s, s + 1);
            check_range(t, (gt_event_kind)k, all, n_all, s - 1, s);
            check_range(t, (gt_event_kind)k, all, n_all, e, e + 10);
            check_range(t, (gt_event_kind)k, all, n_all, e - 1, e);
        }
        check_range(t, (gt_event_kind)k, all, n_all, 777, 778);
        free(all);
    }
    gt_trace_free(t);
    free(path);
}

/* ---- a killed writer ----------------------------------------------------------------- */

static uint64_t file_hash(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint64_t h = 1469598103934665603ull;
    int c;
    if (!f)
        return 0;
    while ((c = getc(f)) != EOF)
        h = (h ^ (unsigned char)c) * 1099511628211ull;
    fclose(f);
    return h;
}

static void test_store_roundtrip__killed_writer(void)
{
    char *path = gt_test_path("killed.sqlite");
    CU_ASSERT_FATAL(path != NULL);
    fflush(NULL);
    pid_t child = fork();
    CU_ASSERT_FATAL(child >= 0);
    if (child == 0) {
        gt_writer *w = NULL;
        gt_string_id name;
        if (gt_writer_open(&w, path, GT_WRITE_OVERWRITE) != 0 || gt_writer_intern(w, "cudaMalloc_v3020", &name) != 0)
            _exit(2);
        for (int batch = 0; batch < 2; batch++) {
            if (gt_writer_begin(w) != 0)
                _exit(3);
            for (int i = 0; i < 100; i++) {
                gt_event ev = zeroed(GT_EV_API);
                ev.u.api = (gt_api_call){.start_ns = batch * 1000 + i, .end_ns = batch * 1000 + i + 5, .name = name};
                if (gt_writer_add(w, &ev) != 0)
                    _exit(4);
                ev = zeroed(GT_EV_KERNEL);
                ev.u.kernel = (gt_kernel){.start_ns = batch * 1000 + i, .end_ns = batch * 1000 + i + 3, .short_name = name};
                if (gt_writer_add(w, &ev) != 0)
                    _exit(4);
            }
            if (batch == 0 && gt_writer_commit(w) != 0)
                _exit(5);
        }
        kill(getpid(), SIGKILL); /* the second batch is never committed */
        _exit(6);
    }
    int status = 0;
    CU_ASSERT_EQUAL_FATAL(waitpid(child, &status, 0), child);
    CU_ASSERT_FATAL(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    uint64_t before = file_hash(path);
    gt_trace *t = open_ok(path, 0);
    CU_ASSERT_EQUAL(gt_trace_origin_of(t), GT_ORIGIN_GTRACE);
    size_t n;
    gt_event *evs = read_events(t, GT_EV_API, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL(n, 100); /* the committed batch, and only it */
    if (n == 100) {
        CU_ASSERT_EQUAL(evs[99].u.api.start_ns, 99);
        CU_ASSERT_STRING_EQUAL(gt_trace_string(t, evs[99].u.api.name), "cudaMalloc_v3020");
    }
    free(evs);
    evs = read_events(t, GT_EV_KERNEL, 50, 60, &n);
    CU_ASSERT_EQUAL(n, 12); /* starts 47..59 end after 50; 47 ends at 50 */
    free(evs);
    gt_trace_free(t);
    CU_ASSERT_EQUAL(file_hash(path), before); /* reading did not checkpoint the log */

    /* asked to, the reader indexes it (and SQLite folds the log into the file) */
    t = open_ok(path, GT_OPEN_ADD_INDEXES);
    int64_t count = 0;
    CU_ASSERT_EQUAL(gt_trace_count(t, GT_EV_API, &count), 0);
    CU_ASSERT_EQUAL(count, 100);
    evs = read_events(t, GT_EV_API, 10, 20, &n);
    CU_ASSERT_EQUAL(n, 14); /* starts 6..19 */
    free(evs);
    gt_trace_free(t);
    char wal[4096];
    snprintf(wal, sizeof wal, "%s-wal", path);
    CU_ASSERT_NOT_EQUAL(access(wal, F_OK), 0); /* the log went into the file */
    free(path);
}

/* Dropped-event counts and the session start come back as written; an nsys
 * export has neither. */
static void test_store_roundtrip__dropped_and_session_start(void)
{
    char *path = gt_test_path("dropped.sqlite");
    gt_writer *w = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_writer_open(&w, path, GT_WRITE_OVERWRITE), 0);
    CU_ASSERT_EQUAL(gt_writer_set_session_start(w, 1763700000123456789LL), 0);
    CU_ASSERT_EQUAL(gt_writer_add_dropped(w, gt_global_pid(10), GT_EV_NVTX, 5), 0);
    CU_ASSERT_EQUAL(gt_writer_add_dropped(w, gt_global_pid(11), GT_EV_NVTX, 7), 0);
    CU_ASSERT_EQUAL(gt_writer_add_dropped(w, gt_global_pid(10), GT_EV_KERNEL, 2), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);

    gt_trace *t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, 0), 0);
    int64_t n = -1, utc = 0;
    CU_ASSERT_EQUAL(gt_trace_dropped(t, GT_EV_NVTX, &n), 0);
    CU_ASSERT_EQUAL(n, 12);
    CU_ASSERT_EQUAL(gt_trace_dropped(t, GT_EV_KERNEL, &n), 0);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(gt_trace_dropped(t, GT_EV_MEMCPY, &n), 0);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(gt_trace_session_start(t, &utc), 0);
    CU_ASSERT_EQUAL(utc, 1763700000123456789LL);
    gt_trace_free(t);

    char *nsys = gt_test_fixture("nsys/cloverleaf-cuda-nsys2024.5.sqlite");
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, nsys, 0), 0);
    CU_ASSERT_EQUAL(gt_trace_dropped(t, GT_EV_KERNEL, &n), 0);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(gt_trace_session_start(t, &utc), 0);
    CU_ASSERT_EQUAL(utc, 1696392839587175550LL);
    gt_trace_free(t);
    free(nsys);
    free(path);
}

static const gt_test_case cases[] = {
    {"test_store_roundtrip__every_event_kind", test_store_roundtrip__every_event_kind},
    {"test_store_roundtrip__descriptions", test_store_roundtrip__descriptions},
    {"test_store_roundtrip__time_ranges", test_store_roundtrip__time_ranges},
    {"test_store_roundtrip__killed_writer", test_store_roundtrip__killed_writer},
    {"test_store_roundtrip__dropped_and_session_start", test_store_roundtrip__dropped_and_session_start},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"store_roundtrip", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
