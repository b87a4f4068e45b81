/* test_store_reader.c: the reader (gt_trace_*, gt_iter_*) on the real nsys
 * exports in the fixtures: counts, every kind of event, descriptions and
 * strings, NULLs and columns older exports lack, and the fixtures left
 * unchanged by reading. Time ranges are test_store_ranges.c, refused files
 * test_store_refuse.c, the write-then-read round trip test_store_roundtrip.c. */
#include "gt_store.h"
#include "gt_test.h"
#include "store_check.h"
#include "schema.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- nsys 2024.5 (export schema 3.13.2) ---------------------------------------- */

static void test_store_reader__nsys2024_counts(void)
{
    char *path = gt_test_fixture(FIX_2024);
    gt_trace *t = open_ok(path, 0);
    CU_ASSERT_EQUAL(gt_trace_origin_of(t), GT_ORIGIN_NSYS);
    CU_ASSERT_STRING_EQUAL(gt_trace_schema_version(t), "3.13.2");
    CU_ASSERT_STRING_EQUAL(gt_trace_path(t), path);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_KERNEL), 1312);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_API), 3048);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_MEMCPY), 279);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_SYNC), 1312);
    /* nsys writes no table for what it did not collect */
    CU_ASSERT_EQUAL(count_of(t, GT_EV_NVTX), 0);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_MEMSET), 0);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_GPU_MEMORY), 0);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_HEAP), 0);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_CPU_OP), 0);
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        size_t n;
        gt_event *evs = read_events(t, (gt_event_kind)k, INT64_MIN, INT64_MAX, &n);
        CU_ASSERT_EQUAL((int64_t)n, count_of(t, (gt_event_kind)k));
        CU_ASSERT(time_ordered(evs, n));
        for (size_t i = 0; i < n; i++)
            CU_ASSERT_EQUAL(evs[i].kind, (gt_event_kind)k);
        free(evs);
    }
    int64_t s, e;
    CU_ASSERT_EQUAL(gt_trace_time_span(t, &s, &e), 0);
    CU_ASSERT_EQUAL(s, 264403140);
    CU_ASSERT_EQUAL(e, 882754401);
    gt_trace_free(t);
    free(path);
}

static void test_store_reader__nsys2024_kernels(void)
{
    char *path = gt_test_fixture(FIX_2024);
    gt_trace *t = open_ok(path, 0);
    size_t n;
    gt_event *evs = read_events(t, GT_EV_KERNEL, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL_FATAL(n, 1312);
    const gt_kernel *k = &evs[0].u.kernel;
    CU_ASSERT_EQUAL(k->start_ns, 533338240);
    CU_ASSERT_EQUAL(k->end_ns, 534705884);
    CU_ASSERT_EQUAL(k->global_pid, 310028053512192);
    CU_ASSERT_EQUAL(k->global_pid, gt_global_pid(1701896));
    CU_ASSERT_EQUAL(k->device_id, 0);
    CU_ASSERT_EQUAL(k->context_id, 1);
    CU_ASSERT_EQUAL(k->stream_id, 7);
    CU_ASSERT_EQUAL(k->correlation_id, 452);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, k->short_name), "par_ranged2d_kernel");
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, k->mangled_name),
                           "_ZN6clover19par_ranged2d_kernelIZ11build_fieldR16global_variablesEUliiE_EEvNS_7Range2dET_");
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_trace_string(t, k->demangled_name), "void clover::par_ranged2d_kernel<build_field"));
    CU_ASSERT_EQUAL(k->grid_x, 115426);
    CU_ASSERT_EQUAL(k->grid_y, 1);
    CU_ASSERT_EQUAL(k->grid_z, 1);
    CU_ASSERT_EQUAL(k->block_x, 256);
    CU_ASSERT_EQUAL(k->block_y, 1);
    CU_ASSERT_EQUAL(k->block_z, 1);
    CU_ASSERT_EQUAL(k->registers_per_thread, 32);
    CU_ASSERT_EQUAL(k->static_shared_bytes, 0);
    CU_ASSERT_EQUAL(k->local_total_bytes, 127401984);
    CU_ASSERT_EQUAL(k->grid_id, 1);
    CU_ASSERT_EQUAL(k->launch_type, 1);
    CU_ASSERT_EQUAL(k->cache_config, 1);
    CU_ASSERT_EQUAL(k->graph_node_id, 0); /* NULL: not from a graph */
    CU_ASSERT_EQUAL(evs[1].u.kernel.start_ns, 534720380);
    CU_ASSERT_EQUAL(evs[1].u.kernel.grid_id, 2);
    CU_ASSERT_EQUAL(evs[n - 1].u.kernel.end_ns, 875678947);
    free(evs);
    gt_trace_free(t);
    free(path);
}

static void test_store_reader__nsys2024_copies_calls_syncs(void)
{
    char *path = gt_test_fixture(FIX_2024);
    gt_trace *t = open_ok(path, 0);
    size_t n, htod_pageable = 0, dtoh = 0, launches = 0, syncs = 0;
    gt_event *evs = read_events(t, GT_EV_MEMCPY, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL(n, 279);
    for (size_t i = 0; i < n; i++) {
        const gt_memcpy *m = &evs[i].u.memcpy;
        if (m->copy_kind == GT_COPY_HTOD && m->src_kind == GT_MEM_PAGEABLE && m->dst_kind == GT_MEM_DEVICE)
            htod_pageable++;
        if (m->copy_kind == GT_COPY_DTOH && m->src_kind == GT_MEM_DEVICE && m->dst_kind == GT_MEM_PAGEABLE)
            dtoh++;
    }
    CU_ASSERT_EQUAL(htod_pageable, 254);
    CU_ASSERT_EQUAL(dtoh, 25);
    CU_ASSERT_EQUAL(evs[0].u.memcpy.start_ns, 537713204);
    CU_ASSERT_EQUAL(evs[0].u.memcpy.bytes, 16);
    CU_ASSERT_EQUAL(evs[0].u.memcpy.correlation_id, 479);
    free(evs);

    evs = read_events(t, GT_EV_API, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL_FATAL(n, 3048);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, evs[0].u.api.name), "cuModuleGetLoadingMode");
    CU_ASSERT_EQUAL(evs[0].u.api.event_class, GT_API_DRIVER);
    CU_ASSERT_EQUAL(evs[0].u.api.global_tid, 310028055214088);
    CU_ASSERT_EQUAL(gt_pid_of(evs[0].u.api.global_tid), 1701896);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, evs[1].u.api.name), "cudaMalloc_v3020");
    CU_ASSERT_EQUAL(evs[1].u.api.event_class, GT_API_RUNTIME);
    CU_ASSERT_EQUAL(evs[1].u.api.end_ns, 527908040);
    CU_ASSERT_EQUAL(evs[1].u.api.callchain_id, 0);
    for (size_t i = 0; i < n; i++)
        launches += strcmp(gt_trace_string(t, evs[i].u.api.name), "cudaLaunchKernel_v7000") == 0;
    CU_ASSERT_EQUAL(launches, 1312);
    free(evs);

    evs = read_events(t, GT_EV_SYNC, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL_FATAL(n, 1312);
    for (size_t i = 0; i < n; i++)
        syncs += evs[i].u.sync.sync_type == GT_SYNC_EVENT;
    CU_ASSERT_EQUAL(syncs, 1312);
    CU_ASSERT_EQUAL(evs[0].u.sync.start_ns, 533339056);
    CU_ASSERT_EQUAL(evs[0].u.sync.correlation_id, 453);
    CU_ASSERT_EQUAL(evs[0].u.sync.event_id, 4294967295);
    free(evs);
    gt_trace_free(t);
    free(path);
}

static void test_store_reader__nsys2024_descriptions(void)
{
    char *path = gt_test_fixture(FIX_2024);
    gt_trace *t = open_ok(path, 0);
    size_t n;
    const gt_gpu_info *gpus = gt_trace_gpus(t, &n);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(gpus[i].id, (int32_t)i); /* by ordinal */
        CU_ASSERT_STRING_EQUAL(gpus[i].name, "NVIDIA A100-SXM4-80GB");
        CU_ASSERT_STRING_EQUAL(gpus[i].chip_name, "GA100");
        CU_ASSERT_EQUAL(gpus[i].total_memory_bytes, 84990623744);
        CU_ASSERT_EQUAL(gpus[i].sm_count, 108);
        CU_ASSERT_EQUAL(gpus[i].compute_major, 8);
        CU_ASSERT_EQUAL(gpus[i].compute_minor, 0);
        CU_ASSERT_EQUAL(gpus[i].l2_cache_bytes, 41943040);
        CU_ASSERT_EQUAL(gpus[i].clock_rate_hz, 1410000000);
    }
    CU_ASSERT_STRING_EQUAL(gpus[0].bus_location, "0000:c1:00.0");
    CU_ASSERT_STRING_EQUAL(gpus[0].uuid, "cf6b97c0-bf53-a39e-febd-9532190b5766");
    CU_ASSERT_STRING_EQUAL(gpus[3].bus_location, "0000:03:00.0");

    const gt_process *procs = gt_trace_processes(t, &n);
    CU_ASSERT_EQUAL(n, 1770);
    const gt_process *app = NULL;
    for (size_t i = 0; i < n; i++)
        if (procs[i].pid == 1701896)
            app = &procs[i];
    CU_ASSERT_PTR_NOT_NULL_FATAL(app);
    CU_ASSERT_STRING_EQUAL(app->name, "cuda-cloverleaf");
    CU_ASSERT_EQUAL(app->global_pid, gt_global_pid(1701896));

    const gt_thread *threads = gt_trace_threads(t, &n);
    CU_ASSERT_EQUAL_FATAL(n, 6);
    bool main_thread = false, cupti = false;
    for (size_t i = 0; i < n; i++) {
        main_thread |= threads[i].global_tid == 310028055214088 && strcmp(threads[i].name, "cuda-cloverleaf") == 0;
        cupti |= strcmp(threads[i].name, "CUPTI worker thread") == 0;
        CU_ASSERT_EQUAL(gt_pid_of(threads[i].global_tid), 1701896);
    }
    CU_ASSERT(main_thread && cupti);

    CU_ASSERT_STRING_EQUAL(gt_trace_meta(t, "EXPORT_PRODUCT_NAME"), "NVIDIA Nsight Systems");
    CU_ASSERT_STRING_EQUAL(gt_trace_meta(t, "EXPORT_PRODUCT_VERSION"), "2024.5.1.113");
    CU_ASSERT_STRING_EQUAL(gt_trace_meta(t, "EXPORT_PARAM_TABLES_TO_EXPORT"), "");
    CU_ASSERT_PTR_NULL(gt_trace_meta(t, "GTRACE_SCHEMA_VERSION"));

    const gt_frame *frames = NULL;
    CU_ASSERT_EQUAL(gt_trace_callchain(t, 1, &frames, &n), GT_ERR_NOTFOUND); /* no CUDA_CALLCHAINS */
    CU_ASSERT_EQUAL(n, 0);
    gt_trace_free(t);
    free(path);
}

static void test_store_reader__nsys2024_strings(void)
{
    char *path = gt_test_fixture(FIX_2024);
    gt_trace *t = open_ok(path, 0);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, 0), ""); /* 0 is "no string", even where nsys has a row 0 */
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, 1), "[kernel.kallsyms]");
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, 1083), "par_ranged2d_kernel");
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, 1053), "CUPTI worker thread");
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, 1297), "");
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, -5), "");
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, INT64_MAX), "");
    /* every name an event refers to resolves */
    size_t n;
    gt_event *evs = read_events(t, GT_EV_API, INT64_MIN, INT64_MAX, &n);
    size_t unresolved = 0;
    for (size_t i = 0; i < n; i++)
        unresolved += gt_trace_string(t, evs[i].u.api.name)[0] == '\0';
    CU_ASSERT_EQUAL(unresolved, 0);
    free(evs);
    gt_trace_free(t);
    free(path);
}

/* ---- nsys 2022.2 (export schema 2.9.1, no ENUM_* tables) ------------------------ */

static void test_store_reader__nsys2022_counts(void)
{
    char *path = gt_test_fixture(FIX_2022);
    gt_trace *t = open_ok(path, 0);
    CU_ASSERT_EQUAL(gt_trace_origin_of(t), GT_ORIGIN_NSYS);
    CU_ASSERT_STRING_EQUAL(gt_trace_schema_version(t), "2.9.1");
    CU_ASSERT_STRING_EQUAL(gt_trace_meta(t, "EXPORT_PRODUCT_VERSION"), "2022.2.1.31");
    CU_ASSERT_EQUAL(count_of(t, GT_EV_KERNEL), 5);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_MEMCPY), 15);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_API), 95);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_NVTX), 24);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_MEMSET), 0);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_SYNC), 0);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_GPU_MEMORY), 0);
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        size_t n;
        gt_event *evs = read_events(t, (gt_event_kind)k, INT64_MIN, INT64_MAX, &n);
        CU_ASSERT_EQUAL((int64_t)n, count_of(t, (gt_event_kind)k));
        CU_ASSERT(time_ordered(evs, n));
        free(evs);
    }
    size_t n;
    gt_event *evs = read_events(t, GT_EV_KERNEL, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL_FATAL(n, 5);
    static const int64_t starts[] = {924922186, 1196058242, 1449177557, 1696275954, 1947782617};
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(evs[i].u.kernel.start_ns, starts[i]);
        CU_ASSERT_STRING_EQUAL(gt_trace_string(t, evs[i].u.kernel.short_name), "saxpy");
        CU_ASSERT_STRING_EQUAL(gt_trace_string(t, evs[i].u.kernel.mangled_name), "_Z5saxpyPdS_S_di");
    }
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, evs[0].u.kernel.demangled_name),
                           "saxpy(double *, double *, double *, double, int)");
    CU_ASSERT_EQUAL(evs[0].u.kernel.registers_per_thread, 26);
    CU_ASSERT_EQUAL(evs[0].u.kernel.block_x, 512);
    CU_ASSERT_EQUAL(evs[0].u.kernel.grid_x, 2);
    free(evs);

    evs = read_events(t, GT_EV_MEMCPY, INT64_MIN, INT64_MAX, &n);
    size_t htod = 0, dtoh = 0;
    for (size_t i = 0; i < n; i++) {
        htod += evs[i].u.memcpy.copy_kind == GT_COPY_HTOD && evs[i].u.memcpy.src_kind == GT_MEM_PAGEABLE;
        dtoh += evs[i].u.memcpy.copy_kind == GT_COPY_DTOH && evs[i].u.memcpy.dst_kind == GT_MEM_PAGEABLE;
    }
    CU_ASSERT_EQUAL(htod, 10);
    CU_ASSERT_EQUAL(dtoh, 5);
    CU_ASSERT_EQUAL(evs[0].u.memcpy.bytes, 262144000);
    free(evs);

    int64_t s, e;
    CU_ASSERT_EQUAL(gt_trace_time_span(t, &s, &e), 0);
    CU_ASSERT_EQUAL(s, 64186762);
    CU_ASSERT_EQUAL(e, 2088944716);

    const gt_gpu_info *gpus = gt_trace_gpus(t, &n);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_STRING_EQUAL(gpus[0].name, "NVIDIA A100-SXM4-40GB");
    CU_ASSERT_EQUAL(gpus[0].max_threads_per_block, 1024);
    CU_ASSERT_EQUAL(gpus[0].threads_per_warp, 32);
    const gt_process *procs = gt_trace_processes(t, &n);
    CU_ASSERT_EQUAL(n, 1667);
    CU_ASSERT_STRING_EQUAL(procs[0].name, "./saxpy-mpi-cuda");
    CU_ASSERT_EQUAL(procs[0].pid, 1230493);
    gt_trace_free(t);
    free(path);
}

static void test_store_reader__nsys2022_nvtx(void)
{
    char *path = gt_test_fixture(FIX_2022);
    gt_trace *t = open_ok(path, 0);
    size_t n;
    gt_event *evs = read_events(t, GT_EV_NVTX, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL_FATAL(n, 24);
    size_t in_mpi = 0, sends = 0, recvs = 0, saxpy = 0;
    gt_string_id saxpy_id = 0;
    for (size_t i = 0; i < n; i++) {
        const gt_nvtx *v = &evs[i].u.nvtx;
        const char *text = gt_trace_string(t, v->text);
        CU_ASSERT(text[0] != '\0'); /* every event here has a message, inline or registered */
        in_mpi += v->domain_id == 1;
        sends += strcmp(text, "MPI_Send") == 0;
        recvs += strcmp(text, "MPI_Recv") == 0;
        if (strcmp(text, "saxpy") == 0) {
            /* inline texts get the reader's own ids, above StringIds (max 696), one per text */
            CU_ASSERT(v->text > 696);
            CU_ASSERT(saxpy_id == 0 || saxpy_id == v->text);
            saxpy_id = v->text;
            saxpy++;
        }
        CU_ASSERT_EQUAL(v->global_tid, 302119224788637);
        CU_ASSERT_FALSE(v->has_color);
        CU_ASSERT_EQUAL(v->payload_kind, GT_PAYLOAD_NONE);
    }
    CU_ASSERT_EQUAL(in_mpi, 18);
    CU_ASSERT_EQUAL(sends, 10);
    CU_ASSERT_EQUAL(recvs, 5);
    CU_ASSERT_EQUAL(saxpy, 5);
    /* the "MPI" domain is created first: an instant event (end -1) with inline text */
    CU_ASSERT_EQUAL(evs[0].u.nvtx.event_type, GT_NVTX_DOMAIN_CREATE);
    CU_ASSERT_EQUAL(evs[0].u.nvtx.start_ns, 64186762);
    CU_ASSERT_EQUAL(evs[0].u.nvtx.end_ns, -1);
    CU_ASSERT_EQUAL(evs[0].u.nvtx.domain_id, 1);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, evs[0].u.nvtx.text), "MPI");
    CU_ASSERT_EQUAL(evs[1].u.nvtx.event_type, GT_NVTX_PUSHPOP);
    CU_ASSERT_EQUAL(evs[1].u.nvtx.end_ns, 710796807);
    CU_ASSERT_EQUAL(evs[1].u.nvtx.text, 59); /* registered: the StringIds id */
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, evs[1].u.nvtx.text), "MPI_Init");
    CU_ASSERT_EQUAL(evs[2].u.nvtx.event_type, GT_NVTX_THREAD_NAME);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, evs[2].u.nvtx.text), "MPI Rank 0");
    CU_ASSERT_EQUAL(evs[2].u.nvtx.end_ns, -1);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, evs[n - 1].u.nvtx.text), "MPI_Finalize");
    /* a second pass gives the same ids */
    size_t n2;
    gt_event *again = read_events(t, GT_EV_NVTX, INT64_MIN, INT64_MAX, &n2);
    CU_ASSERT_EQUAL(n2, n);
    CU_ASSERT(n2 == n && memcmp(again, evs, n * sizeof *evs) == 0);
    free(again);
    free(evs);
    gt_trace_free(t);
    free(path);
}

static void test_store_reader__nsys2022_callchains(void)
{
    char *path = gt_test_fixture(FIX_2022);
    gt_trace *t = open_ok(path, 0);
    const gt_frame *f = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(gt_trace_callchain(t, 1, &f, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 8);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, f[0].symbol), "0x7fd990700588"); /* innermost first */
    CU_ASSERT(f[0].unresolved);
    CU_ASSERT_EQUAL(f[0].original_ip, 140572407891336u);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_trace_string(t, f[0].module), "libcupti.so.11.7"));
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, f[3].symbol), "cudaMalloc");
    CU_ASSERT_FALSE(f[3].unresolved); /* NULL */
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, f[5].symbol), "main");
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, f[7].symbol), "_start");
    CU_ASSERT_EQUAL(gt_trace_callchain(t, 38, &f, &n), 0);
    CU_ASSERT(n > 0);
    CU_ASSERT_EQUAL(gt_trace_callchain(t, 39, &f, &n), GT_ERR_NOTFOUND);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), path));

    /* API calls point at them */
    gt_event *evs = read_events(t, GT_EV_API, INT64_MIN, INT64_MAX, &n);
    size_t with_chain = 0;
    for (size_t i = 0; i < n; i++)
        with_chain += evs[i].u.api.callchain_id != 0;
    CU_ASSERT_EQUAL(with_chain, 37); /* 38 rows name one, one of them id 0 */
    free(evs);
    gt_trace_free(t);
    free(path);
}

static void test_store_reader__empty_nsys_export(void)
{
    char *path = gt_test_path("empty-export.sqlite");
    CU_ASSERT_EQUAL_FATAL(make_db(path, "CREATE TABLE EXPORT_META_DATA (name TEXT NOT NULL, value TEXT);"
                                        "INSERT INTO EXPORT_META_DATA VALUES ('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'),"
                                        " ('EXPORT_SCHEMA_VERSION', '2.7.0');"
                                        "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"),
                          SQLITE_OK);
    gt_trace *t = open_ok(path, 0);
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        size_t n;
        CU_ASSERT_EQUAL(count_of(t, (gt_event_kind)k), 0);
        gt_event *evs = read_events(t, (gt_event_kind)k, INT64_MIN, INT64_MAX, &n);
        CU_ASSERT_EQUAL(n, 0);
        free(evs);
    }
    int64_t s = 1, e = 1;
    CU_ASSERT_EQUAL(gt_trace_time_span(t, &s, &e), 0);
    CU_ASSERT(s == 0 && e == 0);
    size_t n;
    CU_ASSERT_PTR_NULL(gt_trace_gpus(t, &n));
    CU_ASSERT_EQUAL(n, 0);
    gt_trace_free(t);
    free(path);
}

/* ---- hand-made nsys-like files: NULLs, missing columns and tables, payloads -------- */

static void test_store_reader__nulls_and_missing_columns(void)
{
    char *path = gt_test_path("sparse.sqlite");
    CU_ASSERT_EQUAL_FATAL(
        make_db(path,
                "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"
                "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'),"
                " ('EXPORT_SCHEMA_VERSION', '3.11.0'), ('EMPTY', NULL);"
                "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
                "INSERT INTO StringIds VALUES (7, 'registered');"
                /* an older layout: no srcKind, dstKind, srcDeviceId, dstDeviceId */
                "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,"
                " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
                " correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL);"
                "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (100, 200, 1, 2, 3, NULL, NULL, 4096, 8);"
                "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
                " rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,"
                " endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER,"
                " doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER,"
                " jsonText TEXT);"
                "INSERT INTO NVTX_EVENTS (start, end, eventType, color, text, int64Value) VALUES"
                " (1, NULL, 34, 4278255360, 'hello', -5);"
                "INSERT INTO NVTX_EVENTS (start, end, eventType, textId, doubleValue, globalTid) VALUES"
                " (2, 50, 59, 7, 2.5, 99);"
                "INSERT INTO NVTX_EVENTS (start, end, eventType, rangeId, text, uint64Value, endGlobalTid) VALUES"
                " (3, 60, 60, 11, 'hello', -1, 77);"
                "INSERT INTO NVTX_EVENTS (start, end, eventType, text, uint32Value) VALUES (4, 4, 34, 'other', 4000000000);"
                "INSERT INTO NVTX_EVENTS (start, end, eventType, int32Value, category) VALUES (5, NULL, 34, -7, 3);"
                "INSERT INTO NVTX_EVENTS (start, end, eventType, floatValue) VALUES (6, NULL, 34, 1.5);"
                "CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT);"
                "INSERT INTO TARGET_INFO_GPU VALUES (1, 1, NULL), (1, 0, 'GPU zero');"
                "CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);"
                "INSERT INTO PROCESSES VALUES (NULL, 12, NULL);"),
        SQLITE_OK);
    gt_trace *t = open_ok(path, 0);
    CU_ASSERT_STRING_EQUAL(gt_trace_schema_version(t), "3.11.0");
    CU_ASSERT_STRING_EQUAL(gt_trace_meta(t, "EMPTY"), "");
    size_t n;
    gt_event *evs = read_events(t, GT_EV_MEMCPY, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    const gt_memcpy *m = &evs[0].u.memcpy;
    CU_ASSERT(m->start_ns == 100 && m->end_ns == 200 && m->bytes == 4096 && m->copy_kind == GT_COPY_DTOD);
    CU_ASSERT(m->device_id == 1 && m->context_id == 2 && m->stream_id == 3);
    CU_ASSERT(m->correlation_id == 0 && m->global_pid == 0); /* NULL */
    CU_ASSERT(m->src_kind == 0 && m->dst_kind == 0 && m->src_device_id == 0 && m->dst_device_id == 0); /* absent */
    free(evs);

    evs = read_events(t, GT_EV_NVTX, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL_FATAL(n, 6);
    const gt_nvtx *v = &evs[0].u.nvtx;
    CU_ASSERT_EQUAL(v->end_ns, -1);
    CU_ASSERT(v->has_color && v->color == 0xFF00FF00u);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, v->text), "hello");
    CU_ASSERT(v->text > 7);
    CU_ASSERT(v->payload_kind == GT_PAYLOAD_I64 && v->payload.i64 == -5);
    v = &evs[1].u.nvtx;
    CU_ASSERT(v->end_ns == 50 && v->text == 7 && !v->has_color && v->global_tid == 99);
    CU_ASSERT(v->payload_kind == GT_PAYLOAD_DOUBLE && v->payload.f64 == 2.5);
    v = &evs[2].u.nvtx;
    CU_ASSERT_EQUAL(v->text, evs[0].u.nvtx.text); /* the same inline text, the same id */
    CU_ASSERT(v->range_id == 11 && v->end_global_tid == 77 && v->event_type == GT_NVTX_STARTEND);
    CU_ASSERT(v->payload_kind == GT_PAYLOAD_U64 && v->payload.u64 == UINT64_MAX);
    v = &evs[3].u.nvtx;
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, v->text), "other");
    CU_ASSERT(v->text != evs[0].u.nvtx.text);
    CU_ASSERT(v->end_ns == 4 && v->payload_kind == GT_PAYLOAD_U32 && v->payload.u32 == 4000000000u);
    v = &evs[4].u.nvtx;
    CU_ASSERT(v->text == 0 && v->category == 3 && v->payload_kind == GT_PAYLOAD_I32 && v->payload.i32 == -7);
    v = &evs[5].u.nvtx;
    CU_ASSERT(v->payload_kind == GT_PAYLOAD_FLOAT && v->payload.f32 == 1.5f);
    free(evs);
    /* instants lie in a range or not; the zero-length range at 4 is one */
    evs = read_events(t, GT_EV_NVTX, 4, 5, &n);
    CU_ASSERT_EQUAL(n, 3); /* 2..50, 3..60 and the instant at 4 */
    free(evs);
    evs = read_events(t, GT_EV_NVTX, 4, 4, &n);
    CU_ASSERT_EQUAL(n, 0);
    free(evs);

    const gt_gpu_info *gpus = gt_trace_gpus(t, &n);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_STRING_EQUAL(gpus[0].name, "GPU zero");
    CU_ASSERT_STRING_EQUAL(gpus[1].name, ""); /* NULL */
    CU_ASSERT_STRING_EQUAL(gpus[1].uuid, ""); /* no such column */
    CU_ASSERT_EQUAL(gpus[1].sm_count, 0);
    const gt_process *procs = gt_trace_processes(t, &n);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT(procs[0].pid == 12 && procs[0].global_pid == 0 && strcmp(procs[0].name, "") == 0);
    /* tables nsys did not write: nothing, and no error */
    CU_ASSERT_EQUAL(count_of(t, GT_EV_KERNEL), 0);
    evs = read_events(t, GT_EV_KERNEL, 0, 1000, &n);
    CU_ASSERT_EQUAL(n, 0);
    free(evs);
    gt_trace_threads(t, &n);
    CU_ASSERT_EQUAL(n, 0);
    int64_t s, e;
    CU_ASSERT_EQUAL(gt_trace_time_span(t, &s, &e), 0);
    CU_ASSERT(s == 1 && e == 200);
    gt_trace_free(t);
    free(path);
}

/* ---- indexes, and leaving foreign files alone ------------------------------------- */

static void test_store_reader__fixture_unchanged(void)
{
    const char *fixtures[] = {FIX_2024, FIX_2022};
    for (size_t f = 0; f < 2; f++) {
        char *path = gt_test_fixture(fixtures[f]);
        char copy_name[64];
        snprintf(copy_name, sizeof copy_name, "unchanged-%zu.sqlite", f);
        char *copy = gt_test_path(copy_name);
        CU_ASSERT_EQUAL_FATAL(gt_test_copy(path, copy), 0);
        /* the copy sits in a writable directory, where SQLite could leave files */
        const char *paths[] = {path, copy};
        for (size_t p = 0; p < 2; p++) {
            file_id before = identify_file(paths[p]);
            CU_ASSERT_FATAL(before.size > 0);
            CU_ASSERT_EQUAL(read_everything(paths[p]), 0);
            CU_ASSERT_EQUAL(read_everything(paths[p]), 0);
            file_id after = identify_file(paths[p]);
            CU_ASSERT_EQUAL(after.size, before.size);
            CU_ASSERT_EQUAL(after.hash, before.hash);
            CU_ASSERT(after.mtime.tv_sec == before.mtime.tv_sec && after.mtime.tv_nsec == before.mtime.tv_nsec);
            CU_ASSERT_FALSE(side_file_exists(paths[p], "-journal"));
            CU_ASSERT_FALSE(side_file_exists(paths[p], "-wal"));
            CU_ASSERT_FALSE(side_file_exists(paths[p], "-shm"));
        }
        free(copy);
        free(path);
    }
}

static const gt_test_case cases[] = {
    {"test_store_reader__nsys2024_counts", test_store_reader__nsys2024_counts},
    {"test_store_reader__nsys2024_kernels", test_store_reader__nsys2024_kernels},
    {"test_store_reader__nsys2024_copies_calls_syncs", test_store_reader__nsys2024_copies_calls_syncs},
    {"test_store_reader__nsys2024_descriptions", test_store_reader__nsys2024_descriptions},
    {"test_store_reader__nsys2024_strings", test_store_reader__nsys2024_strings},
    {"test_store_reader__nsys2022_counts", test_store_reader__nsys2022_counts},
    {"test_store_reader__nsys2022_nvtx", test_store_reader__nsys2022_nvtx},
    {"test_store_reader__nsys2022_callchains", test_store_reader__nsys2022_callchains},
    {"test_store_reader__empty_nsys_export", test_store_reader__empty_nsys_export},
    {"test_store_reader__nulls_and_missing_columns", test_store_reader__nulls_and_missing_columns},
    {"test_store_reader__fixture_unchanged", test_store_reader__fixture_unchanged},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"store_reader", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
