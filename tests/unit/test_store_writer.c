/* test_store_writer.c: the trace writer, checked from the outside with plain
 * SQLite: every event kind in its table, interning and kernel
 * deduplication, batches, and files a killed program leaves. The schema is
 * test_store_schema.c, injected failures test_store_failures.c. */
#include "config.h"

#include "gt_store.h"
#include "gt_test.h"
#include "schema.h"
#include "store_writes.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- events -------------------------------------------------------------------------- */

static void test_store_writer__every_kind_in_its_table(void)
{
    char *path = fresh_path("kinds.sqlite");
    gt_writer *w = open_writer(path);
    gt_string_id name = intern(w, "cudaMemcpyAsync_v3020"), op = intern(w, "matmul"), msg = intern(w, "forward");
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), GT_OK);
    int64_t pid = gt_global_pid(77), tid = gt_global_tid(77, 78);
    gt_event evs[12];
    memset(evs, 0, sizeof evs);
    evs[0].kind = GT_EV_MEMCPY;
    evs[0].u.memcpy = (gt_memcpy){10, 20, pid, 1, 2, 3, 44, 4096, GT_COPY_DTOH, GT_MEM_DEVICE, GT_MEM_PINNED, 1, 5};
    evs[1].kind = GT_EV_MEMSET;
    evs[1].u.memset = (gt_memset){30, 40, pid, 1, 2, 3, 45, 0xab, 512, GT_MEM_DEVICE};
    evs[2].kind = GT_EV_API;
    evs[2].u.api = (gt_api_call){5, 9, tid, 44, name, GT_API_RUNTIME, 2, 0};
    evs[3].kind = GT_EV_SYNC;
    evs[3].u.sync = (gt_sync){50, 60, pid, 1, 2, 3, 46, GT_SYNC_STREAM, 4294967295};
    evs[4].kind = GT_EV_NVTX; /* a range with a double payload and a color */
    evs[4].u.nvtx = (gt_nvtx){.start_ns = 1, .end_ns = 100, .event_type = GT_NVTX_PUSHPOP, .has_color = true,
                              .color = 0xff00ff00u, .text = msg, .global_tid = tid, .domain_id = 0,
                              .payload_kind = GT_PAYLOAD_DOUBLE, .payload.f64 = 2.5};
    evs[5].kind = GT_EV_NVTX; /* a mark: no end, no color, no payload */
    evs[5].u.nvtx = (gt_nvtx){.start_ns = 7, .end_ns = -1, .event_type = GT_NVTX_MARK, .text = msg, .global_tid = tid,
                              .domain_id = 3};
    evs[6].kind = GT_EV_GPU_MEMORY;
    evs[6].u.gpu_memory = (gt_gpu_memory){70, pid, 1, 2, 0xdead0000u, 0x400123u, 1 << 20, GT_MEM_DEVICE,
                                          GT_DEVMEM_ALLOC, 47, 3, 900};
    evs[7].kind = GT_EV_GPU_MEMORY; /* no stack */
    evs[7].u.gpu_memory = (gt_gpu_memory){80, pid, 1, 2, 0xdead0000u, 0, 1 << 20, GT_MEM_DEVICE, GT_DEVMEM_FREE, 48, 3, 0};
    evs[8].kind = GT_EV_HEAP;
    evs[8].u.heap = (gt_heap_event){90, tid, GT_REGION_REGISTER, 0x5000, 0xbeef000, 256, 0, 2, 0, 9, 0};
    evs[9].kind = GT_EV_CPU_OP;
    evs[9].u.cpu_op = (gt_cpu_op){100, 200, tid, op, 1, 1000000, 4096};
    evs[10] = kernel_event(300, op, 4);
    evs[10].u.kernel.mangled_name = msg;
    evs[10].u.kernel.graph_node_id = 12;
    evs[11].kind = GT_EV_NVTX; /* a float payload */
    evs[11].u.nvtx = (gt_nvtx){.start_ns = 8, .end_ns = 9, .event_type = GT_NVTX_STARTEND, .range_id = 5,
                               .text = msg, .global_tid = tid, .payload_kind = GT_PAYLOAD_FLOAT, .payload.f32 = 0.5f};
    for (int i = 0; i < 12; i++)
        CU_ASSERT_EQUAL(gt_writer_add(w, &evs[i]), GT_OK);
    gt_frame frames[] = {{name, op, false, 0x400123}, {op, op, true, 0x400200}};
    CU_ASSERT_EQUAL(gt_writer_add_callchain(w, 900, frames, 2), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_add_callchain(w, 900, frames, 2), GT_ERR_INVALID); /* ids are unique */
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);                                /* and the batch survived that */
    CU_ASSERT_EQUAL(gt_writer_count(w, GT_EV_NVTX), 3);
    CU_ASSERT_EQUAL(gt_writer_count(w, GT_EV_GPU_MEMORY), 2);

    /* descriptions, outside a batch */
    CU_ASSERT_EQUAL(gt_writer_add_process(w, 77, "python"), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_add_thread_name(w, tid, "dataloader", 5), GT_OK);
    gt_gpu_info gpu = {.id = 0, .name = "NVIDIA H100", .bus_location = "0000:c1:00.0", .uuid = "u-1",
                       .chip_name = "GH100", .total_memory_bytes = 80LL << 30, .sm_count = 132,
                       .compute_major = 9, .compute_minor = 0, .threads_per_warp = 32};
    CU_ASSERT_EQUAL(gt_writer_add_gpu(w, &gpu), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_add_config(w, 0, "argv", "train --steps 10"), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_add_dropped(w, pid, GT_EV_NVTX, 5), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_add_dropped(w, pid, GT_EV_NVTX, 2), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_set_session_start(w, 1696392839587175550LL), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_set_session_start(w, 1687813257637297504LL), GT_OK); /* the last one counts */
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);

    sqlite3 *db = open_ro(path);
    char buf[128];
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE start = 10 AND end = 20"
                                  " AND deviceId = 1 AND contextId = 2 AND streamId = 3 AND correlationId = 44"
                                  " AND globalPid = (77 << 24) | (1 << 48) AND bytes = 4096 AND copyKind = 2 AND srcKind = 2"
                                  " AND dstKind = 1 AND srcDeviceId = 1 AND dstDeviceId = 5 AND greenContextId IS NULL"),
                    1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE start = 30 AND value = 171"
                                  " AND bytes = 512 AND memKind = 2 AND correlationId = 45"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId"
                                  " WHERE s.value = 'cudaMemcpyAsync_v3020' AND r.returnValue = 2 AND r.eventClass = 0"
                                  " AND r.callchainId IS NULL AND r.globalTid = ((77 << 24) | 78 | (1 << 48))"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType = 3"
                                  " AND eventId = 4294967295"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE start = 1 AND end = 100 AND eventType = 59"
                                  " AND color = 4278255360 AND doubleValue = 2.5 AND uint64Value IS NULL"
                                  " AND rangeId IS NULL AND endGlobalTid IS NULL"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE start = 7 AND end IS NULL AND color IS NULL"
                                  " AND domainId = 3 AND doubleValue IS NULL AND floatValue IS NULL"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE rangeId = 5 AND floatValue = 0.5"
                                  " AND typeof(floatValue) = 'real'"), 1);
    /* a message that is no registered string is in text, as nsys stores it */
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'forward' AND textId IS NULL"), 3);
    /* the stack of the allocation, through its rowid */
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS e JOIN " GT_TABLE_GPU_MEMORY_STACKS
                                  " s ON s.eventId = e.rowid WHERE e.start = 70 AND s.callchainId = 900"
                                  " AND e.address = 3735879680 AND e.pc = 4194595 AND e.memoryOperationType = 0"
                                  " AND e.streamId = 3 AND e.correlationId = 47"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM " GT_TABLE_GPU_MEMORY_STACKS), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUDA_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol"
                                  " WHERE c.id = 900 AND c.stackDepth = 0 AND s.value = 'cudaMemcpyAsync_v3020'"
                                  " AND c.originalIP = 4194595 AND c.unresolved = 0"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUDA_CALLCHAINS WHERE id = 900"), 2);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM " GT_TABLE_MEMORY_EVENTS " WHERE operation = 3 AND heapId = 20480"
                                  " AND address = 200208384 AND bytes = 256 AND memoryType = 2 AND nameId IS NULL"
                                  " AND domainId = 9"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM " GT_TABLE_CPU_OPS " WHERE start = 100 AND end = 200"
                                  " AND flops = 1000000 AND bytes = 4096 AND streamId = 1"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start = 300 AND end = 1800"
                                  " AND gridX = 4 AND blockX = 256 AND graphNodeId = 12 AND launchType = 1"
                                  " AND greenContextId IS NULL AND mangledName IS NOT NULL"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM PROCESSES WHERE pid = 77 AND name = 'python'"
                                  " AND globalPid = (77 << 24) | (1 << 48)"), 1);
    CU_ASSERT_STRING_EQUAL(query_text(db, "SELECT s.value FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId",
                                      buf, sizeof buf), "dataloader");
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM TARGET_INFO_GPU WHERE name = 'NVIDIA H100' AND smCount = 132"
                                  " AND computeMajor = 9 AND vmId = 1 << 48 AND cuDevice = 0"), 1);
    CU_ASSERT_STRING_EQUAL(query_text(db, "SELECT value FROM " GT_TABLE_RUN_CONFIG " WHERE globalPid = 0 AND key = 'argv'",
                                      buf, sizeof buf), "train --steps 10");
    CU_ASSERT_EQUAL(query_int(db, "SELECT count FROM " GT_TABLE_DROPPED_EVENTS " WHERE kind = 'nvtx'"), 7);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM TARGET_INFO_SESSION_START_TIME"), 1);
    CU_ASSERT_STRING_EQUAL(query_text(db, "SELECT utcTime FROM TARGET_INFO_SESSION_START_TIME", buf, sizeof buf),
                           "2023-06-26T21:00:57"); /* as nsys wrote it in the 2022.2 fixture */
    sqlite3_close(db);
    free(path);
}

static void test_store_writer__interning(void)
{
    char *path = fresh_path("strings.sqlite");
    gt_writer *w = open_writer(path);
    /* outside a batch; ids from 1 */
    gt_string_id a = intern(w, "ampere_sgemm_128x64_tn"), b = intern(w, ""), a2 = intern(w, "ampere_sgemm_128x64_tn");
    CU_ASSERT_EQUAL(a, 1);
    CU_ASSERT_EQUAL(b, 2);
    CU_ASSERT_EQUAL(a2, a);
    /* enough strings to grow the table many times; each keeps its id */
    enum { N = 20000 };
    gt_string_id *ids = malloc(N * sizeof *ids);
    char s[64];
    for (int i = 0; i < N; i++) {
        snprintf(s, sizeof s, "void kernel<%d>(float*)", i);
        ids[i] = intern(w, s);
        CU_ASSERT_EQUAL(ids[i], 3 + i);
    }
    CU_ASSERT_EQUAL(gt_writer_begin(w), GT_OK);
    for (int i = 0; i < N; i += 7) {
        snprintf(s, sizeof s, "void kernel<%d>(float*)", i);
        CU_ASSERT_EQUAL(intern(w, s), ids[i]);
    }
    gt_string_id c = intern(w, "in a batch");
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);
    gt_string_id d = intern(w, "after the last commit"); /* written by close */
    CU_ASSERT_EQUAL(gt_writer_intern(w, NULL, &c), GT_ERR_INVALID);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);

    sqlite3 *db = open_ro(path);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM StringIds"), N + 4);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(DISTINCT value) FROM StringIds"), N + 4);
    CU_ASSERT_EQUAL(query_int(db, "SELECT id FROM StringIds WHERE value = 'void kernel<12345>(float*)'"), ids[12345]);
    CU_ASSERT_EQUAL(query_int(db, "SELECT id FROM StringIds WHERE value = ''"), b);
    CU_ASSERT_EQUAL(query_int(db, "SELECT id FROM StringIds WHERE value = 'in a batch'"), c);
    CU_ASSERT_EQUAL(query_int(db, "SELECT id FROM StringIds WHERE value = 'after the last commit'"), d);
    sqlite3_close(db);
    free(ids);
    free(path);
}

static void test_store_writer__kernel_launches_deduplicated(void)
{
    char *path = fresh_path("dedupe.sqlite");
    gt_writer *w = open_writer(path);
    gt_string_id names[3] = {intern(w, "gemm"), intern(w, "softmax"), intern(w, "layernorm")};
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), GT_OK);
    enum { N = 3000 };
    for (int i = 0; i < N; i++) {
        /* four configurations: gemm at two grid sizes, softmax, layernorm */
        gt_event ev = kernel_event(1000 + 10 * (int64_t)i, names[i % 3], i % 3 == 0 ? 1 + (i / 3) % 2 : 8);
        CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
        if (i == N / 2) { /* and across batches */
            CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);
            CU_ASSERT_EQUAL(gt_writer_begin(w), GT_OK);
        }
    }
    gt_event other_pid = kernel_event(50, names[1], 8);
    other_pid.u.kernel.global_pid = gt_global_pid(999);
    CU_ASSERT_EQUAL(gt_writer_add(w, &other_pid), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_count(w, GT_EV_KERNEL), N + 1);
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);
    /* while written: each configuration once, kernels stored on start (a range of ids is a range of starts) */
    sqlite3 *db = open_ro(path);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM " GT_TABLE_KERNEL_LAUNCHES), 5);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM " GT_TABLE_KERNELS " WHERE id >= 2000 << 8 AND id < 3000 << 8"), 100);
    sqlite3_close(db);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);

    /* closed: nsys's kernel table alone, its rows in start order */
    db = open_ro(path);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'GTRACE_KERNEL%'"), 0);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL a JOIN CUPTI_ACTIVITY_KIND_KERNEL b"
                                  " ON b.rowid = a.rowid + 1 WHERE b.start < a.start"), 0);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM META_DATA_EXPORT WHERE name = 'GTRACE_TIME_ORDERED'"
                                  " AND ' ' || value || ' ' LIKE '% CUPTI_ACTIVITY_KIND_KERNEL %'"), 1);
    CU_ASSERT_EQUAL(query_int(db, "PRAGMA freelist_count"), 0); /* the compact tables' pages were given back */
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), N + 1);
    /* every kernel comes back from the view with what was added */
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName"
                                  " WHERE (start - 1000) % 10 = 0 AND end = start + 1500 AND correlationId = start / 10"
                                  " AND gridId = start / 10 AND streamId = 7 AND blockX = 256 AND registersPerThread = 32"
                                  " AND globalPid = (4242 << 24) | (1 << 48) AND graphNodeId IS NULL AND mangledName IS NULL"
                                  " AND s.value = CASE ((start - 1000) / 10) % 3 WHEN 0 THEN 'gemm' WHEN 1 THEN 'softmax'"
                                  " ELSE 'layernorm' END"), N);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid = (999 << 24) | (1 << 48)"), 1);
    sqlite3_close(db);
    free(path);
}

static void test_store_writer__same_nanosecond_kernels(void)
{
    char *path = fresh_path("samens.sqlite");
    gt_writer *w = open_writer(path);
    gt_string_id name = intern(w, "k");
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), GT_OK);
    /* 40 at t=500 in one batch: inside one multi-row insert and across two */
    for (int i = 0; i < 40; i++) {
        gt_event ev = kernel_event(500, name, 1 + i);
        CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    }
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);
    /* 3 more at t=500 in a later batch, and one at a negative time */
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), GT_OK);
    for (int i = 0; i < 3; i++) {
        gt_event ev = kernel_event(500, name, 100 + i);
        CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    }
    gt_event early = kernel_event(-3, name, 1);
    CU_ASSERT_EQUAL(gt_writer_add(w, &early), GT_OK);
    gt_event bad = kernel_event(INT64_MAX / 2, name, 1);
    CU_ASSERT_EQUAL(gt_writer_add(w, &bad), GT_ERR_INVALID); /* no room for the shift */
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);

    /* more than 256 in one nanosecond: the rest of the batch is committed,
     * the one left over is counted as dropped and commit says so */
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), GT_OK);
    for (int i = 0; i < 257; i++) {
        gt_event ev = kernel_event(9000, name, 1);
        CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    }
    gt_event after = kernel_event(9001, name, 1);
    CU_ASSERT_EQUAL(gt_writer_add(w, &after), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_ERR_INVALID);
    CU_ASSERT_TRUE(names_file(path));
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "256"));
    CU_ASSERT_EQUAL(gt_writer_count(w, GT_EV_KERNEL), 40 + 3 + 1 + 256 + 1);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);

    sqlite3 *db = open_ro(path);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start = 500"), 43);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(DISTINCT gridX) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start = 500"), 43);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start = -3 AND end = 1497"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start = 9000"), 256);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start = 9001"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count FROM " GT_TABLE_DROPPED_EVENTS " WHERE kind = 'kernel'"
                                  " AND globalPid = (4242 << 24) | (1 << 48)"), 1);
    sqlite3_close(db);
    free(path);
}

static void test_store_writer__batch_rules(void)
{
    char *path = fresh_path("rules.sqlite");
    gt_writer *w = open_writer(path);
    gt_event ev = kernel_event(1, 0, 1);
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_ERR_INVALID); /* outside a batch */
    CU_ASSERT_TRUE(names_file(path));
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_ERR_INVALID);
    CU_ASSERT_EQUAL(gt_writer_begin(w), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_begin(w), GT_ERR_INVALID);
    ev.kind = GT_EV_N_KINDS;
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_ERR_INVALID);
    ev = kernel_event(1, 0, 1);
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK); /* the batch is still open */
    CU_ASSERT_EQUAL(gt_writer_add_dropped(w, 0, GT_EV_N_KINDS, 1), GT_ERR_INVALID);
    CU_ASSERT_EQUAL(gt_writer_add_callchain(w, 1, NULL, 0), GT_ERR_INVALID);
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_count(w, GT_EV_KERNEL), 1);
    CU_ASSERT_EQUAL(gt_writer_count(w, GT_EV_N_KINDS), 0);
    CU_ASSERT_EQUAL(gt_writer_open(NULL, path, 0), GT_ERR_INVALID);
    gt_writer *w2 = NULL;
    CU_ASSERT_EQUAL(gt_writer_open(&w2, path, 1u << 7), GT_ERR_INVALID);
    CU_ASSERT_EQUAL(gt_writer_close(NULL), GT_ERR_INVALID);
    gt_writer_free(NULL);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
    free(path);
}

/* ---- files ---------------------------------------------------------------------------- */

static void test_store_writer__existing_file_refused(void)
{
    char *path = fresh_path("exists.sqlite");
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("my thesis, not a trace\n", f);
    fclose(f);
    gt_writer *w = NULL;
    CU_ASSERT_EQUAL(gt_writer_open(&w, path, 0), GT_ERR_EXISTS);
    CU_ASSERT_PTR_NULL(w);
    CU_ASSERT_TRUE(names_file(path));
    char buf[64] = "";
    f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_PTR_NOT_NULL(fgets(buf, sizeof buf, f));
    fclose(f);
    CU_ASSERT_STRING_EQUAL(buf, "my thesis, not a trace\n");

    /* overwriting was asked for */
    CU_ASSERT_EQUAL(gt_writer_open(&w, path, GT_WRITE_OVERWRITE), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
    sqlite3 *db = open_ro(path);
    CU_ASSERT_TRUE(integrity_ok(db));
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM META_DATA_EXPORT WHERE value = 'gtrace'"), 1);
    sqlite3_close(db);

    /* a stale WAL by that name (a killed program's, its trace since deleted)
     * is not replayed into the new file */
    unlink(path);
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_TRUE_FATAL(pid >= 0);
    if (pid == 0) {
        sqlite3 *old = NULL;
        if (sqlite3_open(path, &old) != SQLITE_OK ||
            sqlite3_exec(old, "PRAGMA journal_mode = WAL; CREATE TABLE old_stuff (x);"
                              " INSERT INTO old_stuff VALUES (1)", NULL, NULL, NULL) != SQLITE_OK)
            _exit(3);
        raise(SIGKILL);
        _exit(4);
    }
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT_TRUE(WIFSIGNALED(status));
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", path);
    CU_ASSERT_TRUE(gt_test_file_size(wal) > 0);
    unlink(path);
    CU_ASSERT_EQUAL(gt_writer_open(&w, path, 0), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
    db = open_ro(path);
    CU_ASSERT_TRUE(integrity_ok(db));
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'old_stuff'"), 0);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM META_DATA_EXPORT WHERE value = 'gtrace'"), 1);
    sqlite3_close(db);

    /* a folder that is not there */
    char *bad = gt_test_path("no/such/dir/t.sqlite");
    CU_ASSERT_NOT_EQUAL(gt_writer_open(&w, bad, 0), GT_OK);
    CU_ASSERT_TRUE(names_file(bad));
    free(bad);
    free(path);
}

static void test_store_writer__readable_after_kill(void)
{
    char *path = fresh_path("killed.sqlite");
    mix committed = {0};
    int64_t t = 0;
    /* what the child commits, computed the same way here */
    {
        mix m1 = {0}, m2 = {0};
        gt_writer *w = open_writer(path);
        CU_ASSERT_EQUAL(write_batch(w, 700, 1, &t, &m1), GT_OK);
        CU_ASSERT_EQUAL(write_batch(w, 300, 2, &t, &m2), GT_OK);
        gt_writer_free(w);
        add_mix(&committed, &m1);
        add_mix(&committed, &m2);
        unlink(path);
    }
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_TRUE_FATAL(pid >= 0);
    if (pid == 0) {
        gt_writer *w = NULL;
        mix m = {0};
        int64_t tc = 0;
        if (gt_writer_open(&w, path, GT_WRITE_OVERWRITE) != GT_OK || write_batch(w, 700, 1, &tc, &m) != GT_OK ||
            write_batch(w, 300, 2, &tc, &m) != GT_OK || gt_writer_begin(w) != GT_OK)
            _exit(3);
        /* a batch in flight when the program dies */
        for (int i = 0; i < 5000; i++) {
            gt_event ev = kernel_event(tc += 1000, 1, 1);
            if (gt_writer_add(w, &ev) != GT_OK)
                _exit(4);
        }
        raise(SIGKILL);
        _exit(5);
    }
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    check_counts(path, &committed);
    sqlite3 *db = open_ro(path);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM META_DATA_EXPORT WHERE name = 'GTRACE_SCHEMA_VERSION'"), 1);
    sqlite3_close(db);
    free(path);
}

static const gt_test_case cases[] = {
    {"test_store_writer__every_kind_in_its_table", test_store_writer__every_kind_in_its_table},
    {"test_store_writer__interning", test_store_writer__interning},
    {"test_store_writer__kernel_launches_deduplicated", test_store_writer__kernel_launches_deduplicated},
    {"test_store_writer__same_nanosecond_kernels", test_store_writer__same_nanosecond_kernels},
    {"test_store_writer__batch_rules", test_store_writer__batch_rules},
    {"test_store_writer__existing_file_refused", test_store_writer__existing_file_refused},
    {"test_store_writer__readable_after_kill", test_store_writer__readable_after_kill},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"store_writer", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
