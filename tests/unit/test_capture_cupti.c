/* test_capture_cupti.c: CUPTI activity records -> trace rows (cupti_records.c),
 * without a GPU: each record is built as cupti_activity.h lays it out, with
 * the values CUPTI 13 puts there, and the row must carry what nsys would
 * write for it (the enum numbering of the ENUM_* tables, checked against
 * the nsys export in the fixtures where it has the column). */
#include "config.h"

#include "cupti_records.h"
#include "gt_test.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHIFT_NS (-1000)
#define PID 4242

/* ---- enums ------------------------------------------------------------ */

static void test_capture_cupti__memory_kinds_renumbered(void)
{
    CU_ASSERT_EQUAL(gt_cupti_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN), GT_MEM_UNKNOWN);
    CU_ASSERT_EQUAL(gt_cupti_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE), GT_MEM_PAGEABLE);
    CU_ASSERT_EQUAL(gt_cupti_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_PINNED), GT_MEM_PINNED);
    CU_ASSERT_EQUAL(gt_cupti_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE), GT_MEM_DEVICE);
    CU_ASSERT_EQUAL(gt_cupti_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_ARRAY), GT_MEM_ARRAY);
    CU_ASSERT_EQUAL(gt_cupti_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED), GT_MEM_MANAGED);
    CU_ASSERT_EQUAL(gt_cupti_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC), GT_MEM_DEVICE_STATIC);
    CU_ASSERT_EQUAL(gt_cupti_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC), GT_MEM_MANAGED_STATIC);
    CU_ASSERT_EQUAL(gt_cupti_mem_kind(8), GT_MEM_UNKNOWN);
}

/* The label nsys gives an id in one of its ENUM_* tables, from the real export. */
static char *nsys_label(const char *table, int id)
{
    char *path = gt_test_fixture("nsys/cloverleaf-cuda-nsys2024.5.sqlite");
    char *label = NULL;
    sqlite3 *db = NULL;
    if (path && sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT name FROM %s WHERE id = %d", table, id);
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
            label = strdup((const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    free(path);
    return label;
}

static void expect_label(const char *table, int id, const char *want)
{
    char *got = nsys_label(table, id);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_STRING_EQUAL(got, want);
    free(got);
}

static void test_capture_cupti__launch_types_as_nsys_labels_them(void)
{
    /* CUPTI numbers a regular launch 0, which nsys labels "unknown". */
    expect_label("ENUM_CUDA_KERNEL_LAUNCH_TYPE", gt_cupti_launch_type(CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR),
                 "CUDA_KERNEL_LAUNCH_TYPE_REGULAR");
    expect_label("ENUM_CUDA_KERNEL_LAUNCH_TYPE",
                 gt_cupti_launch_type(CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE),
                 "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE");
    expect_label("ENUM_CUDA_KERNEL_LAUNCH_TYPE",
                 gt_cupti_launch_type(CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE),
                 "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE");
    /* A kind nsys has no row for. */
    expect_label("ENUM_CUDA_KERNEL_LAUNCH_TYPE", gt_cupti_launch_type(CUPTI_ACTIVITY_LAUNCH_TYPE_CBL_COMMANDLIST),
                 "CUDA_KERNEL_LAUNCH_TYPE_UNKNOWN");
    expect_label("ENUM_CUDA_MEM_KIND", gt_cupti_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE),
                 "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE");
    expect_label("ENUM_CUDA_MEM_KIND", gt_cupti_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE),
                 "CUDA_MEMOPR_MEMORY_KIND_DEVICE");
    expect_label("ENUM_CUPTI_SYNC_TYPE", CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
                 "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE");
    expect_label("ENUM_CUDA_MEMCPY_OPER", CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, "CUDA_MEMCPY_KIND_DTOH");
}

/* ---- records ---------------------------------------------------------- */

static CUpti_ActivityKernel10 kernel_record(void)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.cacheConfig.config.requested = 1;
    k.cacheConfig.config.executed = 2; /* CU_FUNC_CACHE_PREFER_L1 */
    k.registersPerThread = 40;
    k.start = 5000;
    k.end = 7500;
    k.deviceId = 1;
    k.contextId = 3;
    k.streamId = 7;
    k.gridX = 4, k.gridY = 2, k.gridZ = 3; /* a 3-D grid (a volume's kernel): every axis its own */
    k.blockX = 128, k.blockY = 2, k.blockZ = 1;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 2048;
    k.localMemoryPerThread = 16;
    k.localMemoryTotal = 99; /* the 32-bit field; the row takes localMemoryTotal_v2 */
    k.correlationId = 31;
    k.gridId = 12;
    k.name = "_Z4fillPffi";
    k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
    k.graphNodeId = 77;
    k.shmemLimitConfig = CUPTI_FUNC_SHMEM_LIMIT_OPTIN;
    k.localMemoryTotal_v2 = 5ull << 32;
    return k;
}

static void test_capture_cupti__kernel_row(void)
{
    CUpti_ActivityKernel10 k = kernel_record();
    gt_kernel g;
    CU_ASSERT_TRUE_FATAL(gt_cupti_kernel_row(&g, &k, SHIFT_NS, PID));
    CU_ASSERT_EQUAL(g.start_ns, 4000);
    CU_ASSERT_EQUAL(g.end_ns, 6500);
    CU_ASSERT_EQUAL(g.global_pid, gt_global_pid(PID));
    CU_ASSERT_EQUAL(g.device_id, 1);
    CU_ASSERT_EQUAL(g.context_id, 3);
    CU_ASSERT_EQUAL(g.stream_id, 7);
    CU_ASSERT_EQUAL(g.correlation_id, 31);
    CU_ASSERT_EQUAL(g.grid_x, 4);
    CU_ASSERT_EQUAL(g.grid_y, 2);
    CU_ASSERT_EQUAL(g.grid_z, 3);
    CU_ASSERT_EQUAL(g.block_x, 128);
    CU_ASSERT_EQUAL(g.block_y, 2);
    CU_ASSERT_EQUAL(g.block_z, 1);
    CU_ASSERT_EQUAL(g.registers_per_thread, 40);
    CU_ASSERT_EQUAL(g.static_shared_bytes, 1024);
    CU_ASSERT_EQUAL(g.dynamic_shared_bytes, 2048);
    CU_ASSERT_EQUAL(g.local_per_thread_bytes, 16);
    CU_ASSERT_EQUAL(g.local_total_bytes, 5ll << 32);
    CU_ASSERT_EQUAL(g.grid_id, 12);
    CU_ASSERT_EQUAL(g.launch_type, 1); /* nsys: CUDA_KERNEL_LAUNCH_TYPE_REGULAR */
    CU_ASSERT_EQUAL(g.cache_config, 2);
    CU_ASSERT_EQUAL(g.shared_limit_config, 1);
    CU_ASSERT_EQUAL(g.graph_node_id, 77);
    CU_ASSERT_EQUAL(g.demangled_name, 0); /* strings are the caller's */
}

static void test_capture_cupti__untimed_records_refused(void)
{
    /* CUPTI_TIMESTAMP_UNKNOWN: CUPTI could not time it, or a forced flush
     * returned it before it completed. Written as is, it would sit at minus
     * the trace's zero. */
    CUpti_ActivityKernel10 k = kernel_record();
    gt_kernel g;
    k.start = k.end = CUPTI_TIMESTAMP_UNKNOWN;
    CU_ASSERT_FALSE(gt_cupti_kernel_row(&g, &k, SHIFT_NS, PID));
    k.start = 5000;
    CU_ASSERT_FALSE(gt_cupti_kernel_row(&g, &k, SHIFT_NS, PID));
    k.end = 4999;
    CU_ASSERT_FALSE(gt_cupti_kernel_row(&g, &k, SHIFT_NS, PID));
    k.end = 5000;
    CU_ASSERT_TRUE(gt_cupti_kernel_row(&g, &k, SHIFT_NS, PID));

    CUpti_ActivityMemcpy6 c;
    gt_memcpy gc;
    memset(&c, 0, sizeof c);
    c.start = 10;
    CU_ASSERT_FALSE(gt_cupti_memcpy_row(&gc, &c, SHIFT_NS, PID));
    CUpti_ActivityMemset4 s;
    gt_memset gs;
    memset(&s, 0, sizeof s);
    CU_ASSERT_FALSE(gt_cupti_memset_row(&gs, &s, SHIFT_NS, PID));
    CUpti_ActivityMemory4 m;
    gt_gpu_memory gm;
    memset(&m, 0, sizeof m);
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    CU_ASSERT_FALSE(gt_cupti_memory_row(&gm, &m, SHIFT_NS, PID));
}

static void test_capture_cupti__memcpy_row(void)
{
    CUpti_ActivityMemcpy6 c;
    memset(&c, 0, sizeof c);
    c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    c.bytes = 1 << 20;
    c.start = 2000;
    c.end = 3000;
    c.deviceId = 0;
    c.contextId = 1;
    c.streamId = 13;
    c.correlationId = 55;
    c.copyCount = 1;
    gt_memcpy g;
    CU_ASSERT_TRUE_FATAL(gt_cupti_memcpy_row(&g, &c, SHIFT_NS, PID));
    CU_ASSERT_EQUAL(g.start_ns, 1000);
    CU_ASSERT_EQUAL(g.end_ns, 2000);
    CU_ASSERT_EQUAL(g.copy_kind, GT_COPY_HTOD);
    CU_ASSERT_EQUAL(g.src_kind, GT_MEM_PAGEABLE);
    CU_ASSERT_EQUAL(g.dst_kind, GT_MEM_DEVICE);
    CU_ASSERT_EQUAL(g.bytes, 1 << 20);
    CU_ASSERT_EQUAL(g.stream_id, 13);
    CU_ASSERT_EQUAL(g.correlation_id, 55);
    CU_ASSERT_EQUAL(g.global_pid, gt_global_pid(PID));
}

static void test_capture_cupti__memset_row(void)
{
    CUpti_ActivityMemset4 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    s.value = 0xab;
    s.bytes = 4096;
    s.start = 100000;
    s.end = 100500;
    s.streamId = 2;
    s.correlationId = 8;
    s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    gt_memset g;
    CU_ASSERT_TRUE_FATAL(gt_cupti_memset_row(&g, &s, SHIFT_NS, PID));
    CU_ASSERT_EQUAL(g.start_ns, 99000);
    CU_ASSERT_EQUAL(g.value, 0xab);
    CU_ASSERT_EQUAL(g.bytes, 4096);
    CU_ASSERT_EQUAL(g.mem_kind, GT_MEM_DEVICE);
    CU_ASSERT_EQUAL(g.correlation_id, 8);
}

static void test_capture_cupti__sync_row(void)
{
    CUpti_ActivitySynchronization2 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    s.start = 3000;
    s.end = 9000;
    s.correlationId = 90;
    s.contextId = 1;
    s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    gt_sync g;
    CU_ASSERT_TRUE_FATAL(gt_cupti_sync_row(&g, &s, SHIFT_NS, PID, 2));
    CU_ASSERT_EQUAL(g.start_ns, 2000);
    CU_ASSERT_EQUAL(g.end_ns, 8000);
    CU_ASSERT_EQUAL(g.sync_type, GT_SYNC_CONTEXT);
    CU_ASSERT_EQUAL(g.stream_id, -1);
    CU_ASSERT_EQUAL(g.event_id, -1);
    CU_ASSERT_EQUAL(g.device_id, 2);
    CU_ASSERT_EQUAL(g.correlation_id, 90);
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
    s.streamId = 14;
    s.cudaEventId = 6;
    CU_ASSERT_TRUE_FATAL(gt_cupti_sync_row(&g, &s, SHIFT_NS, PID, 2));
    CU_ASSERT_EQUAL(g.sync_type, GT_SYNC_EVENT);
    CU_ASSERT_EQUAL(g.stream_id, 14);
    CU_ASSERT_EQUAL(g.event_id, 6);
}

static void test_capture_cupti__api_row(void)
{
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020;
    a.start = 1500;
    a.end = 1800;
    a.processId = PID;
    a.threadId = PID + 3; /* a kernel thread id: cupti.c asks for CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM */
    a.correlationId = 17;
    a.returnValue = 2; /* cudaErrorMemoryAllocation */
    gt_api_call g;
    CU_ASSERT_TRUE_FATAL(gt_cupti_api_row(&g, &a, true, SHIFT_NS));
    CU_ASSERT_EQUAL(g.start_ns, 500);
    CU_ASSERT_EQUAL(g.end_ns, 800);
    CU_ASSERT_EQUAL(g.global_tid, gt_global_tid(PID, PID + 3));
    CU_ASSERT_EQUAL(g.correlation_id, 17);
    CU_ASSERT_EQUAL(g.event_class, GT_API_RUNTIME);
    CU_ASSERT_EQUAL(g.return_value, 2);
    CU_ASSERT_EQUAL(g.callchain_id, 0);
    CU_ASSERT_TRUE_FATAL(gt_cupti_api_row(&g, &a, false, SHIFT_NS));
    CU_ASSERT_EQUAL(g.event_class, GT_API_DRIVER);
}

static void test_capture_cupti__memory_row(void)
{
    CUpti_ActivityMemory4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.correlationId = 21;
    m.address = 0x7f0000200000ull;
    m.bytes = 1 << 20;
    m.timestamp = 6000;
    m.PC = 0x401234;
    m.processId = 0; /* none given: the caller's pid stands in */
    m.deviceId = 0;
    m.contextId = 1;
    m.streamId = CUPTI_INVALID_STREAM_ID;
    gt_gpu_memory g;
    CU_ASSERT_TRUE_FATAL(gt_cupti_memory_row(&g, &m, SHIFT_NS, PID));
    CU_ASSERT_EQUAL(g.start_ns, 5000);
    CU_ASSERT_EQUAL(g.operation, GT_DEVMEM_ALLOC);
    CU_ASSERT_EQUAL(g.mem_kind, GT_MEM_DEVICE);
    CU_ASSERT_EQUAL(g.address, 0x7f0000200000ull);
    CU_ASSERT_EQUAL(g.bytes, 1 << 20);
    CU_ASSERT_EQUAL(g.pc, 0x401234);
    CU_ASSERT_EQUAL(g.global_pid, gt_global_pid(PID));
    CU_ASSERT_EQUAL(g.correlation_id, 21);
    CU_ASSERT_EQUAL(g.stream_id, -1);
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    m.processId = 77;
    CU_ASSERT_TRUE_FATAL(gt_cupti_memory_row(&g, &m, SHIFT_NS, PID));
    CU_ASSERT_EQUAL(g.operation, GT_DEVMEM_FREE);
    CU_ASSERT_EQUAL(g.global_pid, gt_global_pid(77));
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID;
    CU_ASSERT_FALSE(gt_cupti_memory_row(&g, &m, SHIFT_NS, PID));
}

static void test_capture_cupti__gpu_row(void)
{
    CUpti_ActivityDevice5 d;
    memset(&d, 0, sizeof d);
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.globalMemoryBandwidth = 2039040000ull; /* kB/s: an A100-SXM4-80GB */
    d.globalMemorySize = 84990623744ull;
    d.l2CacheSize = 41943040;
    d.numThreadsPerWarp = 32;
    d.coreClockRate = 1410000; /* kHz */
    d.numMemcpyEngines = 5;
    d.numMultiprocessors = 108;
    d.maxSharedMemoryPerMultiprocessor = 167936;
    d.maxRegistersPerMultiprocessor = 65536;
    d.maxRegistersPerBlock = 65536;
    d.maxSharedMemoryPerBlock = 49152;
    d.maxThreadsPerBlock = 1024;
    d.computeCapabilityMajor = 8;
    d.computeCapabilityMinor = 0;
    d.id = 0;
    static const unsigned char uuid[16] = {0xcf, 0x6b, 0x97, 0xc0, 0xbf, 0x53, 0xa3, 0x9e,
                                           0xfe, 0xbd, 0x95, 0x32, 0x19, 0x0b, 0x57, 0x66};
    memcpy(d.uuid.bytes, uuid, sizeof uuid);
    d.name = "NVIDIA A100-SXM4-80GB";
    gt_gpu_info g;
    gt_cupti_gpu_row(&g, &d);
    /* The same GPU as nsys described it in the fixture's TARGET_INFO_GPU. */
    CU_ASSERT_EQUAL(g.memory_bandwidth_bytes_per_s, 2039040000000ll);
    CU_ASSERT_EQUAL(g.clock_rate_hz, 1410000000ll);
    CU_ASSERT_EQUAL(g.total_memory_bytes, 84990623744ll);
    CU_ASSERT_EQUAL(g.l2_cache_bytes, 41943040);
    CU_ASSERT_EQUAL(g.sm_count, 108);
    CU_ASSERT_EQUAL(g.compute_major, 8);
    CU_ASSERT_EQUAL(g.threads_per_warp, 32);
    CU_ASSERT_EQUAL(g.async_engines, 5);
    CU_ASSERT_EQUAL(g.max_shmem_per_sm, 167936);
    char text[37];
    gt_cupti_uuid(text, &d.uuid);
    CU_ASSERT_STRING_EQUAL(text, "cf6b97c0-bf53-a39e-febd-9532190b5766");
}

/* ---- names ------------------------------------------------------------ */

static void expect_short(const char *demangled, const char *want)
{
    char *s = gt_cupti_short_name(demangled);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    if (strcmp(s, want) != 0)
        fprintf(stderr, "short name of '%s': got '%s', want '%s'\n", demangled, s, want);
    CU_ASSERT_STRING_EQUAL(s, want);
    free(s);
}

static void test_capture_cupti__short_names(void)
{
    expect_short("fill(float*, float, int)", "fill");
    expect_short("void fill(float*, float, int)", "fill");
    expect_short("void ns::inner::foo<int, 4>(float*, int)", "foo");
    expect_short("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                 "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
                 "vectorized_elementwise_kernel");
    /* A scope, not a parameter list. */
    expect_short("void (anonymous namespace)::softmax_kernel<float>(float*, int)", "softmax_kernel");
    expect_short("void at::native::(anonymous namespace)::reduce_kernel<512, 1>(int)", "reduce_kernel");
    /* extern "C" kernels, and names the demangler gave back as they were. */
    expect_short("gemm_bias_gelu", "gemm_bias_gelu");
    expect_short("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n");
}

static const gt_test_case cases[] = {
    {"test_capture_cupti__memory_kinds_renumbered", test_capture_cupti__memory_kinds_renumbered},
    {"test_capture_cupti__launch_types_as_nsys_labels_them", test_capture_cupti__launch_types_as_nsys_labels_them},
    {"test_capture_cupti__kernel_row", test_capture_cupti__kernel_row},
    {"test_capture_cupti__untimed_records_refused", test_capture_cupti__untimed_records_refused},
    {"test_capture_cupti__memcpy_row", test_capture_cupti__memcpy_row},
    {"test_capture_cupti__memset_row", test_capture_cupti__memset_row},
    {"test_capture_cupti__sync_row", test_capture_cupti__sync_row},
    {"test_capture_cupti__api_row", test_capture_cupti__api_row},
    {"test_capture_cupti__memory_row", test_capture_cupti__memory_row},
    {"test_capture_cupti__gpu_row", test_capture_cupti__gpu_row},
    {"test_capture_cupti__short_names", test_capture_cupti__short_names},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"capture_cupti", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
