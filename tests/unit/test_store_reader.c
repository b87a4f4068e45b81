/* test_store_reader.c: the reader (gt_trace_*, gt_iter_*) against the real
 * nsys exports in the fixtures, hand-made traces of both origins, and bad
 * input: missing, foreign, truncated, corrupted and too-new files.
 * The write-then-read round trip is test_store_roundtrip.c. */
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

#define FIX_2024 "nsys/cloverleaf-cuda-nsys2024.5.sqlite"
#define FIX_2022 "nsys/saxpy-mpi-cuda-nsys2022.2.sqlite"

/* ---- helpers ----------------------------------------------------------------- */



static int64_t count_of(gt_trace *t, gt_event_kind kind)
{
    int64_t n = -1;
    CU_ASSERT_EQUAL(gt_trace_count(t, kind, &n), 0);
    return n;
}

static bool time_ordered(const gt_event *evs, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (gt_event_start(&evs[i]) < gt_event_start(&evs[i - 1]))
            return false;
    return true;
}



/* Ranges that catch off-by-ones: around event boundaries, plus a spread. */
static void check_ranges(gt_trace *t, gt_event_kind kind)
{
    size_t n_all = 0;
    gt_event *all = read_events(t, kind, INT64_MIN, INT64_MAX, &n_all);
    int64_t span_start, span_end;
    CU_ASSERT_EQUAL_FATAL(gt_trace_time_span(t, &span_start, &span_end), 0);
    int64_t len = span_end - span_start + 1;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 40; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t a = span_start - 10 + (int64_t)(x % (uint64_t)(len + 20));
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t b = a + (int64_t)(x % (uint64_t)(len / (1 + i % 7) + 1));
        check_range(t, kind, all, n_all, a, b);
    }
    for (size_t i = 0; i < n_all; i += n_all / 7 + 1) {
        int64_t s = gt_event_start(&all[i]), e = gt_event_end(&all[i]);
        check_range(t, kind, all, n_all, s, s + 1);
        check_range(t, kind, all, n_all, s - 1, s); /* ends just before it */
        check_range(t, kind, all, n_all, e, e + 1000); /* starts at its end */
        check_range(t, kind, all, n_all, e - 1, e);
        check_range(t, kind, all, n_all, INT64_MIN, s);
        check_range(t, kind, all, n_all, s, INT64_MAX);
    }
    check_range(t, kind, all, n_all, INT64_MIN, INT64_MAX);
    check_range(t, kind, all, n_all, span_end + 1, span_end + 100);
    free(all);
}

static int make_db(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    char *err = NULL;
    unlink(path);
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK)
        fprintf(stderr, "\n  make_db %s: %s\n", path, err ? err : sqlite3_errmsg(db));
    sqlite3_free(err);
    sqlite3_close(db);
    return rc;
}

static int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, n, f);
    return (fclose(f) == 0 && w == n) ? 0 : -1;
}

static unsigned char *read_whole(const char *path, size_t *out_n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        *out_n = (size_t)n;
    }
    fclose(f);
    return buf;
}

/* Size, modification time and a hash of the content. */
typedef struct file_id {
    long long size;
    struct timespec mtime;
    uint64_t hash;
} file_id;

static file_id identify_file(const char *path)
{
    file_id id = {-1, {0, 0}, 0};
    struct stat st;
    size_t n = 0;
    unsigned char *buf = read_whole(path, &n);
    if (stat(path, &st) == 0 && buf) {
        id.size = (long long)st.st_size;
        id.mtime = st.st_mtim;
        id.hash = 1469598103934665603ull;
        for (size_t i = 0; i < n; i++)
            id.hash = (id.hash ^ buf[i]) * 1099511628211ull;
    }
    free(buf);
    return id;
}

static bool side_file_exists(const char *path, const char *suffix)
{
    char p[4096];
    snprintf(p, sizeof p, "%s%s", path, suffix);
    return access(p, F_OK) == 0;
}

/* A failure must be one of the documented statuses, with a message naming the file. */
static void check_failure(int rc, const char *path)
{
    bool known = rc == GT_ERR_NOMEM || rc == GT_ERR_IO || rc == GT_ERR_CORRUPT || rc == GT_ERR_NOTTRACE ||
                 rc == GT_ERR_VERSION || rc == GT_ERR_NOTFOUND;
    CU_ASSERT(known);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), path));
    if (!known || !strstr(gt_error_last(), path))
        fprintf(stderr, "\n  bad failure %d: %s\n", rc, gt_error_last());
}

static void expect_open_error(const char *path, int status, const char *words)
{
    gt_trace *t = (gt_trace *)(uintptr_t)1;
    int rc = gt_trace_open(&t, path, 0);
    CU_ASSERT_EQUAL(rc, status);
    CU_ASSERT_PTR_NULL(t);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), path));
    if (words)
        CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), words));
    if (rc != status || !strstr(gt_error_last(), path) || (words && !strstr(gt_error_last(), words)))
        fprintf(stderr, "\n  %s: expected %s (\"%s\"), got %s: %s\n", path, gt_status_name(status),
                words ? words : "", gt_status_name(rc), gt_error_last());
    if (rc == 0)
        gt_trace_free(t);
}

/* Opens `path` and reads everything it offers. Each call must succeed or fail
 * cleanly; returns the first failure (0: the file read as valid data). */
static int read_everything(const char *path)
{
    gt_trace *t = NULL;
    int first = 0;
    int rc = gt_trace_open(&t, path, 0);
    if (rc < 0) {
        check_failure(rc, path);
        return rc;
    }
    size_t n = 0;
    const gt_process *procs = gt_trace_processes(t, &n);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT_PTR_NOT_NULL(procs[i].name);
    const gt_gpu_info *gpus = gt_trace_gpus(t, &n);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT(strlen(gpus[i].name) + strlen(gpus[i].uuid) < 1u << 30);
    const gt_thread *threads = gt_trace_threads(t, &n);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT_PTR_NOT_NULL(threads[i].name);
    int64_t s = 0, e = 0;
    rc = gt_trace_time_span(t, &s, &e);
    if (rc < 0) {
        check_failure(rc, path);
        first = first ? first : rc;
    }
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        int64_t c;
        rc = gt_trace_count(t, (gt_event_kind)k, &c);
        if (rc < 0) {
            check_failure(rc, path);
            first = first ? first : rc;
        }
        for (int pass = 0; pass < 2; pass++) {
            gt_iter *it = NULL;
            gt_event ev;
            rc = pass ? gt_iter_new(&it, t, (gt_event_kind)k, s + (e - s) / 3, e - (e - s) / 3)
                      : gt_iter_new(&it, t, (gt_event_kind)k, INT64_MIN, INT64_MAX);
            while (rc == 0 && (rc = gt_iter_next(it, &ev)) == 1) {
                if (k == GT_EV_NVTX)
                    CU_ASSERT_PTR_NOT_NULL(gt_trace_string(t, ev.u.nvtx.text));
                if (k == GT_EV_KERNEL)
                    CU_ASSERT_PTR_NOT_NULL(gt_trace_string(t, ev.u.kernel.short_name));
                rc = 0;
            }
            if (rc < 0) {
                check_failure(rc, path);
                first = first ? first : rc;
            }
            gt_iter_free(it);
        }
    }
    const gt_frame *frames;
    rc = gt_trace_callchain(t, 1, &frames, &n);
    if (rc < 0 && rc != GT_ERR_NOTFOUND) {
        check_failure(rc, path);
        first = first ? first : rc;
    }
    gt_trace_free(t);
    return first;
}

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

/* ---- time ranges ------------------------------------------------------------------- */

static void test_store_reader__time_ranges_nsys(void)
{
    const char *fixtures[] = {FIX_2024, FIX_2022};
    for (size_t f = 0; f < 2; f++) {
        char *path = gt_test_fixture(fixtures[f]);
        gt_trace *t = open_ok(path, 0);
        for (int k = 0; k < GT_EV_N_KINDS; k++)
            check_ranges(t, (gt_event_kind)k);
        gt_iter *it = NULL;
        CU_ASSERT_EQUAL(gt_iter_new(&it, t, GT_EV_KERNEL, 10, 9), GT_ERR_INVALID);
        CU_ASSERT_PTR_NULL(it);
        CU_ASSERT_EQUAL(gt_iter_new(&it, t, GT_EV_N_KINDS, 0, 10), GT_ERR_INVALID);
        gt_trace_free(t);
        free(path);
    }
}

/* A hand-made gtrace trace: kernels in GTRACE_KERNELS keyed by start << 8 | k,
 * one far longer than the rest, several sharing a start nanosecond. */
static char *make_gtrace_kernels(void)
{
    char *path = gt_test_path("kernels.gtrace.sqlite");
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    CU_ASSERT_FATAL(path != NULL);
    unlink(path);
    CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &db), SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(gt_schema_create(db), SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db,
                                       "INSERT INTO StringIds VALUES (1, 'gemm'), (2, 'gemm_kernel'), (3, '_Z4gemmv');"
                                       "INSERT INTO GTRACE_KERNEL_LAUNCHES (id, globalPid, deviceId, contextId,"
                                       " demangledName, shortName, mangledName, launchType, cacheConfig,"
                                       " registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,"
                                       " staticSharedMemory, dynamicSharedMemory, localMemoryPerThread,"
                                       " localMemoryTotal, sharedMemoryLimitConfig)"
                                       " VALUES (1, 281474976710656 + (42 << 24), 3, 7, 1, 2, 3, 1, 2, 64, 8, 4, 2,"
                                       " 128, 2, 1, 1024, 2048, 16, 65536, 1);",
                                       NULL, NULL, NULL),
                          SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlite3_prepare_v2(db,
                                             "INSERT INTO GTRACE_KERNELS (id, end, streamId, correlationId, launchId,"
                                             " gridId, graphNodeId) VALUES (?1, ?2, ?3, ?4, 1, ?5, NULL)",
                                             -1, &st, NULL),
                          SQLITE_OK);
    uint64_t x = 12345;
    int64_t start = -5000; /* times may precede the session start */
    for (int i = 0; i < 3000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int same = (i % 50 == 0) ? 3 : 1; /* kernels starting in the same nanosecond */
        for (int k = 0; k < same; k++) {
            int64_t dur = i == 1500 ? 2000000 : (int64_t)(x % 5000);
            sqlite3_bind_int64(st, 1, start * 256 + k);
            sqlite3_bind_int64(st, 2, start + dur);
            sqlite3_bind_int64(st, 3, k + 1);
            sqlite3_bind_int64(st, 4, i * 4 + k);
            sqlite3_bind_int64(st, 5, i * 4 + k + 1);
            CU_ASSERT_EQUAL(sqlite3_step(st), SQLITE_DONE);
            sqlite3_reset(st);
        }
        start += 1 + (int64_t)(x % 3000);
    }
    sqlite3_finalize(st);
    CU_ASSERT_EQUAL(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    return path;
}

static void test_store_reader__time_ranges_gtrace_kernels(void)
{
    char *path = make_gtrace_kernels();
    gt_trace *t = open_ok(path, 0);
    CU_ASSERT_EQUAL(gt_trace_origin_of(t), GT_ORIGIN_GTRACE);
    CU_ASSERT_STRING_EQUAL(gt_trace_schema_version(t), "1");
    CU_ASSERT_EQUAL(count_of(t, GT_EV_KERNEL), 3000 + 2 * 60);
    size_t n;
    gt_event *evs = read_events(t, GT_EV_KERNEL, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL_FATAL(n, 3120);
    CU_ASSERT(time_ordered(evs, n));
    /* the first three share start -5000 and come out by k */
    const gt_kernel *k = &evs[0].u.kernel;
    CU_ASSERT_EQUAL(k->start_ns, -5000);
    CU_ASSERT_EQUAL(evs[1].u.kernel.start_ns, -5000);
    CU_ASSERT_EQUAL(evs[2].u.kernel.start_ns, -5000);
    CU_ASSERT_EQUAL(k->stream_id, 1);
    CU_ASSERT_EQUAL(evs[1].u.kernel.stream_id, 2);
    CU_ASSERT_EQUAL(evs[2].u.kernel.stream_id, 3);
    CU_ASSERT_EQUAL(evs[2].u.kernel.correlation_id, 2);
    CU_ASSERT_EQUAL(evs[2].u.kernel.grid_id, 3);
    /* the launch configuration comes from GTRACE_KERNEL_LAUNCHES */
    CU_ASSERT_EQUAL(k->global_pid, gt_global_pid(42));
    CU_ASSERT_EQUAL(k->device_id, 3);
    CU_ASSERT_EQUAL(k->context_id, 7);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, k->demangled_name), "gemm");
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, k->short_name), "gemm_kernel");
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t, k->mangled_name), "_Z4gemmv");
    CU_ASSERT_EQUAL(k->launch_type, 1);
    CU_ASSERT_EQUAL(k->cache_config, 2);
    CU_ASSERT_EQUAL(k->registers_per_thread, 64);
    CU_ASSERT(k->grid_x == 8 && k->grid_y == 4 && k->grid_z == 2);
    CU_ASSERT(k->block_x == 128 && k->block_y == 2 && k->block_z == 1);
    CU_ASSERT_EQUAL(k->static_shared_bytes, 1024);
    CU_ASSERT_EQUAL(k->dynamic_shared_bytes, 2048);
    CU_ASSERT_EQUAL(k->local_per_thread_bytes, 16);
    CU_ASSERT_EQUAL(k->local_total_bytes, 65536);
    CU_ASSERT_EQUAL(k->shared_limit_config, 1);
    CU_ASSERT_EQUAL(k->graph_node_id, 0);
    /* the long kernel must be found by ranges that start long after it did */
    const gt_event *longest = NULL;
    for (size_t i = 0; i < n; i++)
        if (!longest || evs[i].u.kernel.end_ns - evs[i].u.kernel.start_ns >
                            longest->u.kernel.end_ns - longest->u.kernel.start_ns)
            longest = &evs[i];
    int64_t mid = longest->u.kernel.start_ns + 1000000;
    size_t n_mid;
    gt_event *at_mid = read_events(t, GT_EV_KERNEL, mid, mid + 1, &n_mid);
    bool found = false;
    for (size_t i = 0; i < n_mid; i++)
        found |= memcmp(&at_mid[i], longest, sizeof *longest) == 0;
    CU_ASSERT(found);
    free(at_mid);
    free(evs);
    check_ranges(t, GT_EV_KERNEL);
    int64_t s, e;
    CU_ASSERT_EQUAL(gt_trace_time_span(t, &s, &e), 0);
    CU_ASSERT_EQUAL(s, -5000);
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

static bool has_index(const char *path, const char *name)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    bool found = false;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?1", -1, &st, NULL) ==
            SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        found = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return found;
}

static void test_store_reader__add_indexes(void)
{
    const char *fixtures[] = {FIX_2024, FIX_2022};
    for (size_t f = 0; f < 2; f++) {
        char *path = gt_test_fixture(fixtures[f]);
        char *copy = gt_test_path("indexed.sqlite");
        CU_ASSERT_EQUAL_FATAL(gt_test_copy(path, copy), 0);
        CU_ASSERT_FALSE(has_index(copy, "GTRACE_IDX_CUPTI_ACTIVITY_KIND_KERNEL_start"));
        gt_trace *plain = open_ok(path, 0);
        gt_trace *indexed = open_ok(copy, GT_OPEN_ADD_INDEXES);
        CU_ASSERT(has_index(copy, "GTRACE_IDX_CUPTI_ACTIVITY_KIND_KERNEL_start"));
        CU_ASSERT(has_index(copy, "GTRACE_IDX_CUPTI_ACTIVITY_KIND_RUNTIME_start"));
        CU_ASSERT(has_index(copy, "GTRACE_IDX_CUPTI_ACTIVITY_KIND_MEMCPY_start"));
        CU_ASSERT_EQUAL(has_index(copy, "GTRACE_IDX_NVTX_EVENTS_start"), f == 1);
        CU_ASSERT_FALSE(has_index(copy, "GTRACE_IDX_GTRACE_CPU_OPS_start")); /* no such table there */
        CU_ASSERT_FALSE(side_file_exists(copy, "-journal"));
        /* the same answers, served by the indexes */
        for (int k = 0; k < GT_EV_N_KINDS; k++) {
            int64_t s, e;
            CU_ASSERT_EQUAL(gt_trace_time_span(plain, &s, &e), 0);
            int64_t bounds[][2] = {{INT64_MIN, INT64_MAX}, {s + (e - s) / 4, s + (e - s) / 2}, {s, s + 1000000}};
            for (size_t b = 0; b < 3; b++) {
                size_t n1, n2;
                gt_event *a = read_events(plain, (gt_event_kind)k, bounds[b][0], bounds[b][1], &n1);
                gt_event *c = read_events(indexed, (gt_event_kind)k, bounds[b][0], bounds[b][1], &n2);
                CU_ASSERT(n1 == n2 && (n1 == 0 || memcmp(a, c, n1 * sizeof *a) == 0));
                free(a);
                free(c);
            }
        }
        gt_trace_free(indexed);
        gt_trace_free(plain);
        /* a second open finds them there and changes nothing */
        file_id before = identify_file(copy);
        gt_trace_free(open_ok(copy, GT_OPEN_ADD_INDEXES));
        file_id after = identify_file(copy);
        CU_ASSERT_EQUAL(after.hash, before.hash);
        unlink(copy);
        free(copy);
        free(path);
    }
}

/* A capture that is still writing (or was killed): WAL mode with a live -wal. */
static void test_store_reader__live_wal(void)
{
    char *path = gt_test_path("live.sqlite");
    sqlite3 *w = NULL;
    unlink(path);
    CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &w), SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(
        sqlite3_exec(w,
                     "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;"
                     "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"
                     "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'gtrace'),"
                     " ('GTRACE_SCHEMA_VERSION', '1');"
                     "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
                     "INSERT INTO StringIds VALUES (1, 'cudaMalloc_v3020');"
                     "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,"
                     " eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,"
                     " nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);"
                     "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (10, 20, 0, 5, 1, 1, 0, NULL);",
                     NULL, NULL, NULL),
        SQLITE_OK);
    CU_ASSERT(side_file_exists(path, "-wal"));
    gt_trace *t = open_ok(path, 0);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_API), 1); /* committed, still only in the -wal */
    gt_trace_free(t);
    CU_ASSERT_EQUAL(sqlite3_exec(w, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (30, 40, 0, 5, 2, 1, 0, NULL)",
                                 NULL, NULL, NULL),
                    SQLITE_OK);
    t = open_ok(path, 0);
    size_t n;
    gt_event *evs = read_events(t, GT_EV_API, INT64_MIN, INT64_MAX, &n);
    CU_ASSERT_EQUAL(n, 2);
    if (n == 2)
        CU_ASSERT_STRING_EQUAL(gt_trace_string(t, evs[1].u.api.name), "cudaMalloc_v3020");
    free(evs);
    gt_trace_free(t);
    sqlite3_close(w);
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

/* Paths are given to SQLite as URIs: characters that mean something there
 * (?, #, %, spaces, a leading //) must still name the file. */
static void test_store_reader__odd_paths(void)
{
    char *fix = gt_test_fixture(FIX_2022);
    char *odd = gt_test_path("a trace?mode=rw#1 100%.sqlite");
    CU_ASSERT_EQUAL_FATAL(gt_test_copy(fix, odd), 0);
    gt_trace *t = open_ok(odd, 0);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_KERNEL), 5);
    gt_trace_free(t);

    char slashed[4096];
    snprintf(slashed, sizeof slashed, "/%s", odd); /* "//tmp/...": not a URI authority */
    t = open_ok(slashed, 0);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_NVTX), 24);
    gt_trace_free(t);

    char cwd[4096];
    CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
    CU_ASSERT_EQUAL_FATAL(chdir(gt_test_tmpdir()), 0);
    t = open_ok("a trace?mode=rw#1 100%.sqlite", 0);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_MEMCPY), 15);
    gt_trace_free(t);
    expect_open_error("a trace?mode=rw#1 100%", GT_ERR_NOTFOUND, "does not exist");
    CU_ASSERT_EQUAL(chdir(cwd), 0);
    free(odd);
    free(fix);
}

/* ---- bad input ------------------------------------------------------------------------- */

static void test_store_reader__missing_and_not_files(void)
{
    char *missing = gt_test_path("no-such-trace.sqlite");
    expect_open_error(missing, GT_ERR_NOTFOUND, "does not exist");
    char *in_missing_dir = gt_test_path("no-such-dir/trace.sqlite");
    expect_open_error(in_missing_dir, GT_ERR_NOTFOUND, NULL);
    expect_open_error(gt_test_tmpdir(), GT_ERR_IO, "directory");
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL(gt_trace_open(&t, NULL, 0), GT_ERR_INVALID);
    CU_ASSERT_EQUAL(gt_trace_open(NULL, missing, 0), GT_ERR_INVALID);
    char *fix = gt_test_fixture(FIX_2022);
    CU_ASSERT_EQUAL(gt_trace_open(&t, fix, 0x80), GT_ERR_INVALID);
    CU_ASSERT_PTR_NULL(t);
    if (geteuid() != 0) { /* root reads everything */
        char *locked = gt_test_path("locked.sqlite");
        CU_ASSERT_EQUAL(gt_test_copy(fix, locked), 0);
        chmod(locked, 0);
        expect_open_error(locked, GT_ERR_IO, "cannot be read");
        free(locked);
    }
    gt_trace_free(NULL);
    gt_iter_free(NULL);
    free(fix);
    free(in_missing_dir);
    free(missing);
}

static void test_store_reader__not_sqlite(void)
{
    char *empty = gt_test_path("empty.sqlite");
    CU_ASSERT_EQUAL_FATAL(write_file(empty, "", 0), 0);
    expect_open_error(empty, GT_ERR_NOTTRACE, "not an SQLite database");
    CU_ASSERT_EQUAL(gt_test_file_size(empty), 0); /* SQLite would have made it a database */

    char *text = gt_test_path("notes.txt");
    const char *words = "This is a text file, not a trace.\nIt has several lines.\n";
    CU_ASSERT_EQUAL_FATAL(write_file(text, words, strlen(words)), 0);
    expect_open_error(text, GT_ERR_NOTTRACE, "is not an SQLite database");

    char *random = gt_test_path("random.bin");
    unsigned char buf[8192];
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    CU_ASSERT_EQUAL_FATAL(write_file(random, buf, sizeof buf), 0);
    expect_open_error(random, GT_ERR_NOTTRACE, "is not an SQLite database");
    /* random bytes behind a valid magic: damaged, not foreign */
    memcpy(buf, "SQLite format 3", 16);
    CU_ASSERT_EQUAL_FATAL(write_file(random, buf, sizeof buf), 0);
    expect_open_error(random, GT_ERR_CORRUPT, NULL);
    free(random);
    free(text);
    free(empty);
}

static void test_store_reader__foreign_sqlite(void)
{
    char *path = gt_test_path("unrelated.sqlite");
    CU_ASSERT_EQUAL_FATAL(make_db(path, "CREATE TABLE recipes (name TEXT, minutes INTEGER);"
                                        "INSERT INTO recipes VALUES ('bread', 240);"),
                          SQLITE_OK);
    expect_open_error(path, GT_ERR_NOTTRACE, "neither a gtrace trace nor an Nsight Systems export");

    CU_ASSERT_EQUAL_FATAL(make_db(path, "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"
                                        "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'Other Profiler');"
                                        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"),
                          SQLITE_OK);
    expect_open_error(path, GT_ERR_NOTTRACE, "Other Profiler");

    CU_ASSERT_EQUAL_FATAL(make_db(path, "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"
                                        "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'),"
                                        " ('EXPORT_SCHEMA_VERSION', '3.13.2');"),
                          SQLITE_OK);
    expect_open_error(path, GT_ERR_NOTTRACE, "StringIds");

    /* an empty database is a valid SQLite file with nothing in it */
    CU_ASSERT_EQUAL_FATAL(make_db(path, "PRAGMA user_version = 3; CREATE TABLE x(a); DROP TABLE x;"), SQLITE_OK);
    expect_open_error(path, GT_ERR_NOTTRACE, NULL);
    free(path);
}

static void test_store_reader__newer_schema(void)
{
    char *path = gt_test_path("future.sqlite");
    CU_ASSERT_EQUAL_FATAL(make_db(path, "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"
                                        "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'gtrace'),"
                                        " ('EXPORT_SCHEMA_VERSION', '3.13.2'), ('GTRACE_SCHEMA_VERSION', '999');"
                                        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"),
                          SQLITE_OK);
    expect_open_error(path, GT_ERR_VERSION, "999");

    CU_ASSERT_EQUAL_FATAL(make_db(path, "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"
                                        "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'gtrace'),"
                                        " ('GTRACE_SCHEMA_VERSION', 'two');"),
                          SQLITE_OK);
    expect_open_error(path, GT_ERR_VERSION, "GTRACE_SCHEMA_VERSION");

    CU_ASSERT_EQUAL_FATAL(make_db(path, "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"
                                        "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'),"
                                        " ('EXPORT_SCHEMA_VERSION', '5.0.0');"
                                        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"),
                          SQLITE_OK);
    expect_open_error(path, GT_ERR_VERSION, "5.0.0");

    /* this build's own version opens */
    char sql[512];
    snprintf(sql, sizeof sql,
             "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"
             "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'gtrace'), ('GTRACE_SCHEMA_VERSION', '%d');",
             GT_SCHEMA_VERSION);
    CU_ASSERT_EQUAL_FATAL(make_db(path, sql), SQLITE_OK);
    gt_trace *t = open_ok(path, 0);
    CU_ASSERT_EQUAL(gt_trace_origin_of(t), GT_ORIGIN_GTRACE);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_KERNEL), 0);
    gt_trace_free(t);
    free(path);
}

static void test_store_reader__truncated(void)
{
    char *fix = gt_test_fixture(FIX_2024);
    char *path = gt_test_path("truncated.sqlite");
    size_t size = 0;
    unsigned char *data = read_whole(fix, &size);
    CU_ASSERT_FATAL(data != NULL && size > 65536);
    const size_t offsets[] = {1,        15,       16,       50,       99,          100,        101,
                              511,      512,      4095,     4096,     4097,        8192,       12295,
                              size / 8, size / 4, size / 3, size / 2, 2 * size / 3, 3 * size / 4, size - 4096,
                              size - 4095, size - 100, size - 1};
    for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
        CU_ASSERT_EQUAL_FATAL(write_file(path, data, offsets[i]), 0);
        int expected = offsets[i] < 16 ? GT_ERR_NOTTRACE : GT_ERR_CORRUPT;
        expect_open_error(path, expected, offsets[i] < 16 ? NULL : "truncated");
        CU_ASSERT_EQUAL(read_everything(path), expected);
    }
    free(data);
    free(path);
    free(fix);
}

/* Flips bytes all over a copy of each fixture: every open and read must fail
 * cleanly or give data; damage to the structure must be found. */
static void test_store_reader__flipped_bytes(void)
{
    const char *fixtures[] = {FIX_2024, FIX_2022};
    for (size_t f = 0; f < 2; f++) {
        char *fix = gt_test_fixture(fixtures[f]);
        char *path = gt_test_path("flipped.sqlite");
        size_t size = 0, n_offsets = 0, n_failed = 0;
        unsigned char *data = read_whole(fix, &size);
        CU_ASSERT_FATAL(data != NULL && size > 65536);
        size_t offsets[400];
        for (size_t o = 0; o < 100; o += 3) /* the header */
            offsets[n_offsets++] = o;
        for (size_t page = 1; page * 4096 < size; page += 9) /* b-tree page headers and cell pointers */
            for (size_t o = 0; o < 12; o += 3)
                offsets[n_offsets++] = page * 4096 + o;
        uint64_t x = 0x2545F4914F6CDD1Dull + f;
        while (n_offsets < sizeof offsets / sizeof offsets[0] - 8) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            offsets[n_offsets++] = (size_t)(x % size);
        }
        for (size_t o = 1; o <= 8; o++) /* the last page */
            offsets[n_offsets++] = size - o * 500;
        for (size_t i = 0; i < n_offsets; i++) {
            static const unsigned char masks[] = {0xff, 0x01, 0x80, 0x10};
            unsigned char saved = data[offsets[i]];
            data[offsets[i]] ^= masks[i % 4];
            CU_ASSERT_EQUAL_FATAL(write_file(path, data, size), 0);
            data[offsets[i]] = saved;
            n_failed += read_everything(path) != 0;
        }
        /* a page of garbage in the middle: quick_check finds it */
        memset(data + (size / 2 / 4096) * 4096, 0x5a, 4096);
        CU_ASSERT_EQUAL_FATAL(write_file(path, data, size), 0);
        expect_open_error(path, GT_ERR_CORRUPT, "damaged");
        CU_ASSERT(n_failed > 0);
        fprintf(stderr, "(%zu of %zu flips refused) ", n_failed, n_offsets);
        free(data);
        free(path);
        free(fix);
    }
}

/* Files of 64 MB and more are checked table by table on two connections, or
 * beside the reading (GT_OPEN_CHECK_LATER): a damaged page is found either
 * way; gt_trace_reopen gives a second handle without a second check. */
static void test_store_reader__big_file_checks(void)
{
    char *path = gt_test_path("big.sqlite");
    char sql[1024];
    snprintf(sql, sizeof sql,
             "PRAGMA page_size = 4096;"
             "CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);"
             "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_NAME', 'gtrace'), ('GTRACE_SCHEMA_VERSION', '%d');"
             "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
             "INSERT INTO StringIds VALUES (1, 'kept');"
             "CREATE TABLE filler (id INTEGER PRIMARY KEY, x BLOB);"
             "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 70)"
             " INSERT INTO filler SELECT i, zeroblob(1048576) FROM n;",
             GT_SCHEMA_VERSION);
    CU_ASSERT_EQUAL_FATAL(make_db(path, sql), SQLITE_OK);
    size_t size = 0;
    unsigned char *data = read_whole(path, &size);
    CU_ASSERT_FATAL(data != NULL && size >= (64u << 20));

    gt_trace *t = open_ok(path, 0), *t2 = NULL;
    CU_ASSERT_EQUAL(gt_trace_reopen(&t2, t), 0);
    CU_ASSERT_STRING_EQUAL(gt_trace_string(t2, 1), "kept");
    CU_ASSERT_EQUAL(gt_trace_origin_of(t2), GT_ORIGIN_GTRACE);
    gt_trace_free(t2);
    CU_ASSERT_EQUAL(gt_trace_check(t), 0);
    gt_trace_free(t);
    t = NULL;
    CU_ASSERT_EQUAL(gt_trace_open(&t, path, GT_OPEN_CHECK_LATER), 0);
    CU_ASSERT_EQUAL(gt_trace_check(t), 0);
    CU_ASSERT_EQUAL(gt_trace_check(t), 0); /* the verdict stays */
    gt_trace_free(t);

    /* a page of garbage in the middle (the chain of a blob) */
    memset(data + (size / 2 / 4096) * 4096, 0x5a, 4096);
    CU_ASSERT_EQUAL_FATAL(write_file(path, data, size), 0);
    expect_open_error(path, GT_ERR_CORRUPT, "damaged");
    t = NULL;
    CU_ASSERT_EQUAL(gt_trace_open(&t, path, GT_OPEN_CHECK_LATER), 0);
    CU_ASSERT_EQUAL(gt_trace_check(t), GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "damaged"));
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), path));
    CU_ASSERT_EQUAL(gt_trace_check(t), GT_ERR_CORRUPT);
    gt_trace_free(t);
    /* freed while its check runs: the check stops */
    t = NULL;
    CU_ASSERT_EQUAL(gt_trace_open(&t, path, GT_OPEN_CHECK_LATER), 0);
    gt_trace_free(t);
    free(data);
    unlink(path);
    free(path);
}

/* The writer puts each batch of rows in start order and records the tables
 * whose rows all went in with non-decreasing starts; the reader reads those
 * in rowid order. Either way events come by start, equal starts in the order
 * they were added. */
static void test_store_reader__time_ordered_tables(void)
{
    char *path = gt_test_path("ordered.sqlite");
    gt_writer *w = NULL;
    gt_string_id name = 0;
    CU_ASSERT_EQUAL_FATAL(gt_writer_open(&w, path, GT_WRITE_OVERWRITE), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "x", &name), 0);
    for (int batch = 0; batch < 3; batch++) {
        CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), 0);
        for (int i = 0; i < 3000; i++) {
            int64_t k = batch * 3000 + i;
            gt_event ev = {.kind = GT_EV_API};
            /* pairs with equal starts, told apart by correlation id */
            ev.u.api = (gt_api_call){1000 + k / 2 * 10, 1000 + k / 2 * 10 + 5, 7, k + 1, name, GT_API_RUNTIME, 0, 0};
            CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
            gt_event nv = {.kind = GT_EV_NVTX};
            /* recorded when they end: the last of a batch started first */
            int64_t s = i == 2999 ? batch * 100000 : batch * 100000 + 10 + i;
            nv.u.nvtx = (gt_nvtx){.start_ns = s, .end_ns = batch * 100000 + 50000, .event_type = GT_NVTX_PUSHPOP,
                                  .text = name, .global_tid = 7, .range_id = k + 1};
            CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &nv), 0);
        }
        CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    }
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    gt_trace *t = open_ok(path, 0);
    const char *ordered = gt_trace_meta(t, "GTRACE_TIME_ORDERED");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ordered);
    CU_ASSERT_PTR_NOT_NULL(strstr(ordered, "CUPTI_ACTIVITY_KIND_RUNTIME"));
    CU_ASSERT_PTR_NULL(strstr(ordered, "NVTX_EVENTS")); /* each batch's last range started first */
    gt_iter *it = NULL;
    gt_event ev;
    int64_t n = 0, last_start = INT64_MIN, last_corr = 0;
    CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, GT_EV_API, INT64_MIN, INT64_MAX), 0);
    while (gt_iter_next(it, &ev) == 1) {
        CU_ASSERT(ev.u.api.start_ns > last_start || (ev.u.api.start_ns == last_start && ev.u.api.correlation_id > last_corr));
        last_start = ev.u.api.start_ns;
        last_corr = ev.u.api.correlation_id;
        n++;
    }
    gt_iter_free(it);
    CU_ASSERT_EQUAL(n, 9000);
    n = 0;
    last_start = INT64_MIN;
    CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, GT_EV_NVTX, INT64_MIN, INT64_MAX), 0);
    while (gt_iter_next(it, &ev) == 1) {
        CU_ASSERT(ev.u.nvtx.start_ns >= last_start);
        last_start = ev.u.nvtx.start_ns;
        n++;
    }
    gt_iter_free(it);
    CU_ASSERT_EQUAL(n, 9000);
    gt_trace_free(t);
    unlink(path);
    free(path);
}

/* A closed trace keeps no index on the start of a table it wrote in start
 * order (kernels always): time ranges are found as rowid ranges, and give
 * what filtering every event gives, equal starts and long kernels included. */
static void test_store_reader__time_ranges_without_index(void)
{
    char *path = gt_test_path("rowid-ranges.sqlite");
    gt_writer *w = NULL;
    gt_string_id name = 0;
    CU_ASSERT_EQUAL_FATAL(gt_writer_open(&w, path, GT_WRITE_OVERWRITE), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(w, "k", &name), 0);
    int64_t corr = 0;
    for (int batch = 0; batch < 4; batch++) {
        CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), 0);
        for (int i = 0; i < 2500; i++) {
            int64_t base = 100000 + (int64_t)(batch * 2500 + i) * 1000;
            for (int s = 0; s < 2; s++) { /* two streams: starts out of order, some equal */
                gt_event ev = {.kind = GT_EV_KERNEL};
                gt_kernel *k = &ev.u.kernel;
                k->start_ns = s ? base - (i % 3) * 700 : base;
                k->end_ns = k->start_ns + (i % 97 == 0 ? 3000000 : 400 + i % 500);
                k->stream_id = 7 + s;
                k->correlation_id = ++corr;
                k->demangled_name = k->short_name = name;
                k->grid_x = k->grid_y = k->grid_z = k->block_x = k->block_y = k->block_z = 1;
                CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &ev), 0);
                gt_event api = {.kind = GT_EV_API};
                api.u.api = (gt_api_call){base - 50 + s, base - 10 + s, 7, corr, name, GT_API_RUNTIME, 0, 0};
                CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &api), 0);
            }
        }
        CU_ASSERT_EQUAL_FATAL(gt_writer_commit(w), 0);
    }
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), 0);
    CU_ASSERT_FALSE(has_index(path, "GTRACE_IDX_CUPTI_ACTIVITY_KIND_KERNEL_start"));
    CU_ASSERT_FALSE(has_index(path, "GTRACE_IDX_CUPTI_ACTIVITY_KIND_RUNTIME_start"));
    gt_trace *t = open_ok(path, 0);
    CU_ASSERT_EQUAL(count_of(t, GT_EV_KERNEL), 20000);
    check_ranges(t, GT_EV_KERNEL);
    check_ranges(t, GT_EV_API);
    /* a range in the middle holds the kernels of that stretch, in start order */
    size_t n = 0;
    gt_event *evs = read_events(t, GT_EV_KERNEL, 100000 + 5000 * 1000, 100000 + 5010 * 1000, &n);
    CU_ASSERT(n >= 20 && time_ordered(evs, n));
    free(evs);
    gt_trace_free(t);
    unlink(path);
    free(path);
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
    {"test_store_reader__time_ranges_nsys", test_store_reader__time_ranges_nsys},
    {"test_store_reader__time_ranges_gtrace_kernels", test_store_reader__time_ranges_gtrace_kernels},
    {"test_store_reader__fixture_unchanged", test_store_reader__fixture_unchanged},
    {"test_store_reader__add_indexes", test_store_reader__add_indexes},
    {"test_store_reader__live_wal", test_store_reader__live_wal},
    {"test_store_reader__nulls_and_missing_columns", test_store_reader__nulls_and_missing_columns},
    {"test_store_reader__empty_nsys_export", test_store_reader__empty_nsys_export},
    {"test_store_reader__odd_paths", test_store_reader__odd_paths},
    {"test_store_reader__missing_and_not_files", test_store_reader__missing_and_not_files},
    {"test_store_reader__not_sqlite", test_store_reader__not_sqlite},
    {"test_store_reader__foreign_sqlite", test_store_reader__foreign_sqlite},
    {"test_store_reader__newer_schema", test_store_reader__newer_schema},
    {"test_store_reader__truncated", test_store_reader__truncated},
    {"test_store_reader__flipped_bytes", test_store_reader__flipped_bytes},
    {"test_store_reader__big_file_checks", test_store_reader__big_file_checks},
    {"test_store_reader__time_ordered_tables", test_store_reader__time_ordered_tables},
    {"test_store_reader__time_ranges_without_index", test_store_reader__time_ranges_without_index},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"store_reader", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
