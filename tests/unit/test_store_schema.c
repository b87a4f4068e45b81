/* test_store_schema.c: the tables' descriptions (columns.c) against nsys's
 * own exports, every described column through the writer and back through
 * the reader, what closing adds (nsys's tables, the machine, what was
 * collected), the ENUM_* rows, the metadata and the time indexes.
 *
 * The nsys-named tables gtrace creates must have the columns of nsys's
 * tables, in nsys's order, with nsys's declared types and NOT NULLs: the
 * 2024.5 export (schema 3.13.2) where it has the table; otherwise the 2022.2
 * one, whose columns must all be there, in the same order (gtrace adds the
 * columns 3.x added). */
#include "config.h"

#include "columns.h"
#include "gt_store.h"
#include "gt_test.h"
#include "schema.h"
#include "store_writes.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIX_2024 "nsys/cloverleaf-cuda-nsys2024.5.sqlite"
#define FIX_2022 "nsys/saxpy-mpi-cuda-nsys2022.2.sqlite"

enum { MAX_COLS = 64 };

typedef struct column_info {
    char name[64], type[16];
    int not_null;
} column_info;

/* The columns of `table` in `db`, in order; -1 when there is no such table. */
static int columns_of(sqlite3 *db, const char *table, column_info *out)
{
    sqlite3_stmt *st = NULL;
    int n = 0;
    if (sqlite3_prepare_v2(db, "SELECT name, type, \"notnull\" FROM pragma_table_info(?1) ORDER BY cid", -1, &st,
                           NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    while (sqlite3_step(st) == SQLITE_ROW && n < MAX_COLS) {
        snprintf(out[n].name, sizeof out[n].name, "%s", (const char *)sqlite3_column_text(st, 0));
        snprintf(out[n].type, sizeof out[n].type, "%s", (const char *)sqlite3_column_text(st, 1));
        out[n].not_null = sqlite3_column_int(st, 2);
        n++;
    }
    sqlite3_finalize(st);
    return n ? n : -1;
}

static sqlite3 *open_fixture(const char *rel)
{
    char *path = gt_test_fixture(rel);
    sqlite3 *db = NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    CU_ASSERT_EQUAL_FATAL(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    free(path);
    return db;
}

/* The table as its description's DDL creates it. */
static int described_columns(const gt_table_desc *t, column_info *out)
{
    sqlite3 *db = NULL;
    sqlite3_open(":memory:", &db);
    sqlite3_str *s = sqlite3_str_new(db);
    gt_table_ddl(s, t);
    char *sql = sqlite3_str_finish(s);
    CU_ASSERT_EQUAL(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_free(sql);
    int n = columns_of(db, t->name, out);
    sqlite3_close(db);
    return n;
}

static bool same_column(const column_info *a, const column_info *b)
{
    return strcmp(a->name, b->name) == 0 && strcmp(a->type, b->type) == 0 && a->not_null == b->not_null;
}

static void test_store_schema__nsys_column_order(void)
{
    sqlite3 *fix2024 = open_fixture(FIX_2024), *fix2022 = open_fixture(FIX_2022);
    column_info ours[MAX_COLS], theirs[MAX_COLS];
    for (size_t i = 0; i < gt_n_nsys_tables; i++) {
        const gt_table_desc *t = gt_nsys_tables[i];
        int n = described_columns(t, ours);
        CU_ASSERT_EQUAL(n, (int)t->n_cols);
        int m = columns_of(fix2024, t->name, theirs);
        if (m > 0) { /* exactly nsys 2024.5's */
            CU_ASSERT_EQUAL(n, m);
            for (int c = 0; c < n && c < m; c++)
                if (!same_column(&ours[c], &theirs[c])) {
                    fprintf(stderr, "\n  %s column %d: ours %s %s%s, nsys %s %s%s\n", t->name, c, ours[c].name,
                            ours[c].type, ours[c].not_null ? " NOT NULL" : "", theirs[c].name, theirs[c].type,
                            theirs[c].not_null ? " NOT NULL" : "");
                    CU_FAIL("a column differs from nsys 2024.5's");
                }
            continue;
        }
        m = columns_of(fix2022, t->name, theirs);
        if (m <= 0) {
            fprintf(stderr, "\n  %s is in neither nsys export\n", t->name);
            CU_FAIL("an nsys-named table no nsys export has");
            continue;
        }
        /* every 2.9.1 column, in its order, among ours */
        int c = 0;
        for (int k = 0; k < m; k++) {
            while (c < n && strcmp(ours[c].name, theirs[k].name) != 0)
                c++;
            if (c == n) {
                fprintf(stderr, "\n  %s: nsys 2022.2's column %s is missing or out of order\n", t->name,
                        theirs[k].name);
                CU_FAIL("a column of nsys 2022.2 missing or out of order");
                break;
            }
            CU_ASSERT(same_column(&ours[c], &theirs[k]));
            c++;
        }
    }
    sqlite3_close(fix2024);
    sqlite3_close(fix2022);
}

/* ---- a closed trace ------------------------------------------------------------ */

/* The kinds of event and the table each goes to in a closed trace. */
static const struct {
    gt_event_kind kind;
    const gt_table_desc *table, *joined;
} kinds[] = {
    {GT_EV_KERNEL, &gt_tab_kernel, NULL},
    {GT_EV_MEMCPY, &gt_tab_memcpy, NULL},
    {GT_EV_MEMSET, &gt_tab_memset, NULL},
    {GT_EV_API, &gt_tab_runtime, NULL},
    {GT_EV_SYNC, &gt_tab_sync, NULL},
    {GT_EV_NVTX, &gt_tab_nvtx, NULL},
    {GT_EV_GPU_MEMORY, &gt_tab_gpu_memory, &gt_tab_gpu_memory_stacks},
    {GT_EV_HEAP, &gt_tab_memory_events, NULL},
    {GT_EV_CPU_OP, &gt_tab_cpu_ops, NULL},
};
enum { N_KINDS = sizeof kinds / sizeof kinds[0] };

/* Sets every member a column of `t` is read into to a value of its own
 * (v0 + column number), times as start 1000, end 2000. */
static void fill_described(const gt_table_desc *t, void *base, int64_t v0)
{
    char *b = base;
    for (size_t i = 0; i < t->n_cols; i++) {
        const gt_column *c = &t->cols[i];
        int64_t v = v0 + (int64_t)i, ns = strcmp(c->name, "end") == 0 ? 2000 : 1000;
        int32_t v32 = (int32_t)v;
        bool yes = true;
        switch (c->get) {
        case F_I64:
        case F_SIZE:
            memcpy(b + c->offset, &v, sizeof v);
            break;
        case F_I32:
            memcpy(b + c->offset, &v32, sizeof v32);
            break;
        case F_BOOL:
            memcpy(b + c->offset, &yes, sizeof yes);
            break;
        case F_TIME:
        case F_END_OR_NEG1:
        case F_ID_START:
            memcpy(b + c->offset, &ns, sizeof ns);
            break;
        default: /* F_HOOK, F_NONE, F_STR: not set here */
            break;
        }
    }
}

/* Whether every member `t` reads holds the same bytes in a and b. */
static bool same_described(const gt_table_desc *t, const void *a, const void *b, gt_event_kind kind)
{
    bool same = true;
    for (size_t i = 0; i < t->n_cols; i++) {
        const gt_column *c = &t->cols[i];
        size_t n_bytes = c->get == F_I32 ? 4 : c->get == F_BOOL ? sizeof(bool)
                         : c->get == F_NONE || c->get == F_HOOK || c->get == F_STR ? 0 : 8;
        if (n_bytes && memcmp((const char *)a + c->offset, (const char *)b + c->offset, n_bytes) != 0) {
            fprintf(stderr, "\n  %s: column %s did not come back\n", gt_event_kind_name(kind), c->name);
            same = false;
        }
    }
    return same;
}

static void test_store_schema__every_column_round_trips(void)
{
    char *path = gt_test_path("columns.sqlite");
    gt_writer *w = NULL;
    gt_event sent[N_KINDS];
    CU_ASSERT_EQUAL_FATAL(gt_writer_open(&w, path, GT_WRITE_OVERWRITE), GT_OK);
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), GT_OK);
    for (int k = 0; k < N_KINDS; k++) {
        memset(&sent[k], 0, sizeof sent[k]);
        sent[k].kind = kinds[k].kind;
        fill_described(kinds[k].table, &sent[k].u, 100 * (k + 1));
        if (kinds[k].joined)
            fill_described(kinds[k].joined, &sent[k].u, 100 * (k + 1) + 50);
        CU_ASSERT_EQUAL_FATAL(gt_writer_add(w, &sent[k]), GT_OK);
    }
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(w), GT_OK);

    gt_trace *t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, 0), GT_OK);
    for (int k = 0; k < N_KINDS; k++) {
        gt_iter *it = NULL;
        gt_event got;
        CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, kinds[k].kind, INT64_MIN, INT64_MAX), GT_OK);
        CU_ASSERT_EQUAL(gt_iter_next(it, &got), 1);
        CU_ASSERT(same_described(kinds[k].table, &sent[k].u, &got.u, kinds[k].kind));
        if (kinds[k].joined)
            CU_ASSERT(same_described(kinds[k].joined, &sent[k].u, &got.u, kinds[k].kind));
        CU_ASSERT_EQUAL(gt_iter_next(it, &got), 0);
        gt_iter_free(it);
    }
    gt_trace_free(t);

    /* the nsys-named tables of the closed file are their descriptions */
    sqlite3 *db = NULL;
    CU_ASSERT_EQUAL_FATAL(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    column_info ours[MAX_COLS], in_file[MAX_COLS];
    int n_checked = 0;
    for (size_t i = 0; i < gt_n_nsys_tables; i++) {
        int m = columns_of(db, gt_nsys_tables[i]->name, in_file);
        if (m < 0)
            continue; /* left out: nothing went into it */
        int n = described_columns(gt_nsys_tables[i], ours);
        CU_ASSERT_EQUAL(n, m);
        for (int c = 0; c < n && c < m; c++)
            CU_ASSERT(same_column(&ours[c], &in_file[c]));
        n_checked++;
    }
    CU_ASSERT(n_checked >= 12); /* the event tables, kernels included, and the descriptions */
    /* every nsys-named object is a real table: readers list tables with
     * type = 'table', and a view is missed */
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'view'"), 0);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                                  " AND name = 'CUPTI_ACTIVITY_KIND_KERNEL'"), 1);
    sqlite3_close(db);
    unlink(path);
    free(path);
}

/* One event of every nsys kind (and a GPU), so that a closed trace has every
 * nsys table: closing leaves out the tables nothing went into. */
static void write_one_of_each(gt_writer *w)
{
    gt_string_id name = intern(w, "k"), api = intern(w, "cudaLaunchKernel_v7000"), msg = intern(w, "step");
    int64_t pid = gt_global_pid(4242), tid = gt_global_tid(4242, 4243);
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), GT_OK);
    gt_event ev = kernel_event(1000, name, 2);
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    ev = (gt_event){.kind = GT_EV_MEMCPY};
    ev.u.memcpy = (gt_memcpy){.start_ns = 10, .end_ns = 20, .global_pid = pid, .context_id = 1, .stream_id = 8,
                              .bytes = 64, .copy_kind = GT_COPY_HTOD};
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    ev = (gt_event){.kind = GT_EV_MEMSET};
    ev.u.memset = (gt_memset){.start_ns = 30, .end_ns = 40, .global_pid = pid, .context_id = 1, .stream_id = 7,
                              .bytes = 64};
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    ev = (gt_event){.kind = GT_EV_API};
    ev.u.api = (gt_api_call){.start_ns = 5, .end_ns = 9, .global_tid = tid, .correlation_id = 100, .name = api};
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    ev = (gt_event){.kind = GT_EV_SYNC};
    ev.u.sync = (gt_sync){.start_ns = 50, .end_ns = 60, .global_pid = pid, .context_id = 1, .stream_id = 7,
                          .sync_type = GT_SYNC_STREAM};
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    ev = (gt_event){.kind = GT_EV_NVTX};
    ev.u.nvtx = (gt_nvtx){.start_ns = 1, .end_ns = 2000, .event_type = GT_NVTX_PUSHPOP, .text = msg,
                          .global_tid = tid};
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    gt_frame frames[1] = {{.symbol = api, .module = api}};
    CU_ASSERT_EQUAL(gt_writer_add_callchain(w, 1, frames, 1), GT_OK);
    ev = (gt_event){.kind = GT_EV_GPU_MEMORY};
    ev.u.gpu_memory = (gt_gpu_memory){.start_ns = 70, .global_pid = pid, .address = 4096, .bytes = 4096,
                                      .mem_kind = GT_MEM_DEVICE, .callchain_id = 1};
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);
    gt_gpu_info gpu = {.id = 0, .name = "NVIDIA H100", .sm_count = 132, .compute_major = 9};
    CU_ASSERT_EQUAL(gt_writer_add_gpu(w, &gpu), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_add_thread_name(w, tid, "main", 0), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_add_process(w, 4242, "python"), GT_OK);
}

/* Closing writes what nsys's export has and gtrace knows, and leaves out
 * the event tables nothing went into (as nsys does). */
static void test_store_schema__nsys_tables_when_closed(void)
{
    char *path = fresh_path("closed.sqlite");
    gt_writer *w = open_writer(path);
    write_one_of_each(w);
    gt_string_id reg = intern(w, "registered"), plain = intern(w, "plain");
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), GT_OK);
    gt_event ev = {.kind = GT_EV_NVTX};
    ev.u.nvtx = (gt_nvtx){.start_ns = 3, .end_ns = -1, .event_type = GT_NVTX_MARK, .text = reg,
                          .text_registered = true, .global_tid = gt_global_tid(4242, 4243)};
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    ev.u.nvtx.text = plain;
    ev.u.nvtx.text_registered = false;
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    ev.u.nvtx.text = reg + 1000; /* no such string */
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_ERR_INVALID);
    CU_ASSERT_TRUE(names_file(path));
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);

    sqlite3 *db = open_ro(path);
    char buf[256], host[256] = "";
    /* NVTX: a registered string by textId, any other message in text */
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId"
                                  " WHERE s.value = 'registered' AND n.text IS NULL"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'plain' AND textId IS NULL"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'step' AND textId IS NULL"), 1);
    /* contexts and streams of the GPU activity */
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM TARGET_INFO_CUDA_CONTEXT_INFO WHERE processId = 4242"
                                  " AND deviceId = 0 AND contextId = 1 AND vmId = 1"), 1);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM TARGET_INFO_CUDA_CONTEXT_INFO"), 1); /* one, however many events */
    CU_ASSERT_STRING_EQUAL(query_text(db, "SELECT group_concat(streamId) FROM (SELECT DISTINCT streamId FROM"
                                          " TARGET_INFO_CUDA_STREAM WHERE processId = 4242 ORDER BY streamId)",
                                      buf, sizeof buf), "7,8");
    /* the machine, and what was collected */
    gethostname(host, sizeof host - 1);
    CU_ASSERT_STRING_EQUAL(query_text(db, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'"
                                          " AND nameEnum = 619", buf, sizeof buf), host);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM META_DATA_CAPTURE WHERE name = 'CAPTURE_EVENT_TYPE'"
                                  " AND value IN ('Cuda', 'NvtxEvents')"), 2);
    CU_ASSERT_EQUAL(query_int(db, "PRAGMA freelist_count"), 0);
    sqlite3_close(db);

    /* nothing collected: no event tables; the GPU description tables stay
     * without rows, as nsys writes them (readers query them regardless);
     * the string, process and enum tables stay */
    unlink(path);
    w = open_writer(path);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
    db = open_ro(path);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'CUPTI_%' OR name LIKE 'NVTX%'"
                                  " OR name LIKE 'CUDA_%' OR name LIKE 'GTRACE_KERNEL%'"
                                  " OR name = 'META_DATA_CAPTURE' OR type = 'view'"), 0);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN"
                                  " ('TARGET_INFO_CUDA_CONTEXT_INFO', 'TARGET_INFO_CUDA_STREAM')"), 2);
    CU_ASSERT_EQUAL(query_int(db, "SELECT (SELECT count(*) FROM TARGET_INFO_CUDA_CONTEXT_INFO)"
                                  " + (SELECT count(*) FROM TARGET_INFO_CUDA_STREAM)"), 0);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('StringIds',"
                                  " 'PROCESSES', 'ThreadNames', 'META_DATA_EXPORT', 'ENUM_CUDA_MEMCPY_OPER')"), 5);
    /* gtrace's own tables stay: an empty GTRACE_DROPPED_EVENTS says nothing was lost */
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM " GT_TABLE_DROPPED_EVENTS), 0);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM " GT_TABLE_CPU_OPS), 0);
    CU_ASSERT_TRUE(integrity_ok(db));
    sqlite3_close(db);
    free(path);
}

static void test_store_schema__enums_match_nsys(void)
{
    char *path = fresh_path("enums.sqlite");
    gt_writer *w = open_writer(path);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
    char *f3 = gt_test_fixture("nsys/cloverleaf-cuda-nsys2024.5.sqlite");
    sqlite3 *db = open_ro(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(db);
    char *sql = sqlite3_mprintf("ATTACH %Q AS nsys", f3);
    CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_free(sql);

    /* every ENUM_* table our tables reference, each row as nsys has it */
    static const char *const enums[] = {
        "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND", "ENUM_CUPTI_SYNC_TYPE", "ENUM_CUDA_DEV_MEM_EVENT_OPER",
        "ENUM_CUDA_KERNEL_LAUNCH_TYPE", "ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG", "ENUM_CUDA_FUNC_CACHE_CONFIG",
        "ENUM_CUPTI_STREAM_TYPE", "ENUM_STACK_UNWIND_METHOD", "ENUM_CUDA_MEMPOOL_TYPE", "ENUM_CUDA_MEMPOOL_OPER",
        "ENUM_CUDA_UNIF_MEM_MIGRATION", "ENUM_NSYS_EVENT_CLASS", "ENUM_NSYS_EVENT_TYPE",
    };
    for (size_t i = 0; i < sizeof enums / sizeof enums[0]; i++) {
        char q[512];
        snprintf(q, sizeof q, "SELECT count(*) FROM main.%s", enums[i]);
        int64_t n = query_int(db, q);
        snprintf(q, sizeof q, "SELECT count(*) FROM nsys.%s", enums[i]);
        CU_ASSERT_TRUE(n > 0);
        CU_ASSERT_EQUAL(n, query_int(db, q));
        /* rows in one and not the other */
        snprintf(q, sizeof q, "SELECT count(*) FROM (SELECT id, name, label FROM main.%s EXCEPT"
                              " SELECT id, name, label FROM nsys.%s)", enums[i], enums[i]);
        CU_ASSERT_EQUAL(query_int(db, q), 0);
    }
    /* the values gt_store.h names are nsys's */
    CU_ASSERT_EQUAL(query_int(db, "SELECT id FROM ENUM_CUDA_MEM_KIND WHERE name = 'CUDA_MEMOPR_MEMORY_KIND_PINNED'"), GT_MEM_PINNED);
    CU_ASSERT_EQUAL(query_int(db, "SELECT id FROM ENUM_NSYS_EVENT_TYPE WHERE name = 'NvtxPushPopRange'"), GT_NVTX_PUSHPOP);
    CU_ASSERT_EQUAL(query_int(db, "SELECT id FROM ENUM_NSYS_EVENT_CLASS WHERE label = 'CUDA driver'"), GT_API_DRIVER);
    CU_ASSERT_EQUAL(query_int(db, "SELECT id FROM ENUM_CUPTI_SYNC_TYPE WHERE label = 'Stream sync'"), GT_SYNC_STREAM);
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM GTRACE_ENUM_MEMORY_OPER"), GT_REGION_NAME + 1);
    sqlite3_close(db);
    free(f3);
    free(path);
}

static void test_store_schema__metadata_and_indexes(void)
{
    char *path = fresh_path("meta.sqlite");
    gt_writer *w = open_writer(path);
    int64_t t = 1000;
    mix m = {0};
    CU_ASSERT_EQUAL(write_batch(w, 100, 1, &t, &m), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);

    sqlite3 *db = open_ro(path);
    char buf[64];
#define META(name) query_text(db, "SELECT value FROM META_DATA_EXPORT WHERE name = '" name "'", buf, sizeof buf)
    CU_ASSERT_STRING_EQUAL(META("EXPORT_PRODUCT_NAME"), "gtrace");
    CU_ASSERT_STRING_EQUAL(META("EXPORT_PRODUCT_VERSION"), PACKAGE_VERSION);
    CU_ASSERT_STRING_EQUAL(META("EXPORT_SCHEMA_VERSION"), "3.13.2");
    CU_ASSERT_STRING_EQUAL(META("EXPORT_SCHEMA_VERSION_MAJOR"), "3");
    CU_ASSERT_STRING_EQUAL(META("EXPORT_SCHEMA_VERSION_MINOR"), "13");
    CU_ASSERT_STRING_EQUAL(META("EXPORT_SCHEMA_VERSION_MICRO"), "2");
    CU_ASSERT_EQUAL(atoi(META("GTRACE_SCHEMA_VERSION")), GT_SCHEMA_VERSION);
#undef META
    /* one rollback-journal file, like an nsys export */
    CU_ASSERT_STRING_EQUAL(query_text(db, "PRAGMA journal_mode", buf, sizeof buf), "delete");
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", path);
    CU_ASSERT_NOT_EQUAL(access(wal, F_OK), 0);
    /* time indexes on the tables not in start order; the others (kernels
     * always) are listed as time ordered, and a time range is a rowid range */
    char obuf[512], list[520];
    const char *ordered = query_text(db, "SELECT value FROM META_DATA_EXPORT WHERE name = 'GTRACE_TIME_ORDERED'", obuf,
                                     sizeof obuf);
    CU_ASSERT_PTR_NOT_NULL(strstr(ordered, "CUPTI_ACTIVITY_KIND_KERNEL"));
    snprintf(list, sizeof list, " %s ", ordered);
    for (size_t i = 0; i < gt_schema_n_indexes; i++) {
        char *q = sqlite3_mprintf("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = %Q",
                                  gt_schema_indexes[i].table);
        char *tq = sqlite3_mprintf("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = %Q",
                                  gt_schema_indexes[i].table);
        char *name = sqlite3_mprintf(" %s ", gt_schema_indexes[i].table);
        bool in_order = strstr(list, name) != NULL;
        CU_ASSERT_EQUAL(query_int(db, q), gt_schema_indexes[i].nsys_only || in_order ? 0 : query_int(db, tq));
        sqlite3_free(name);
        sqlite3_free(q);
        sqlite3_free(tq);
    }
    CU_ASSERT_EQUAL(query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
                                  " AND tbl_name = 'CUPTI_ACTIVITY_KIND_KERNEL'"), 0);
    sqlite3_close(db);
    free(path);
}

/* A description names each column once, and the writer's INSERT lists the
 * columns it puts, in the table's order (nsys's kernel table is filled by
 * closing, from the compact ones, not by an INSERT of its own). */
static void test_store_schema__inserts_follow_descriptions(void)
{
    const gt_table_desc *all[] = {
        &gt_tab_string_ids, &gt_tab_processes, &gt_tab_target_info_gpu, &gt_tab_memcpy, &gt_tab_runtime,
        &gt_tab_sync, &gt_tab_memset, &gt_tab_nvtx, &gt_tab_gpu_memory, &gt_tab_callchains, &gt_tab_kernel_launches, &gt_tab_kernels, &gt_tab_memory_events, &gt_tab_cpu_ops, &gt_tab_dropped_events,
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        const gt_table_desc *t = all[i];
        for (size_t a = 0; a < t->n_cols; a++)
            for (size_t b = a + 1; b < t->n_cols; b++)
                CU_ASSERT(strcmp(t->cols[a].name, t->cols[b].name) != 0);
        sqlite3_str *s = sqlite3_str_new(NULL);
        gt_table_insert(s, t, 2);
        char *sql = sqlite3_str_finish(s);
        int n_put = gt_table_n_put(t), n_marks = 0;
        for (const char *p = sql; *p; p++)
            n_marks += *p == '?';
        CU_ASSERT_EQUAL(n_marks, 2 * n_put);
        if (n_marks != 2 * n_put)
            fprintf(stderr, "\n  %s: %s\n", t->name, sql);
        int param = 0;
        for (size_t c = 0; c < t->n_cols; c++)
            if (t->cols[c].put != P_NONE)
                CU_ASSERT_EQUAL(gt_table_param(t, t->cols[c].name), ++param);
        sqlite3_free(sql);
    }
    /* at most 32 written columns in a buffered table: NULLs are a bit mask */
    CU_ASSERT(gt_table_n_put(&gt_tab_nvtx) <= 32);
}

static const gt_test_case cases[] = {
    {"test_store_schema__nsys_column_order", test_store_schema__nsys_column_order},
    {"test_store_schema__every_column_round_trips", test_store_schema__every_column_round_trips},
    {"test_store_schema__inserts_follow_descriptions", test_store_schema__inserts_follow_descriptions},
    {"test_store_schema__nsys_tables_when_closed", test_store_schema__nsys_tables_when_closed},
    {"test_store_schema__enums_match_nsys", test_store_schema__enums_match_nsys},
    {"test_store_schema__metadata_and_indexes", test_store_schema__metadata_and_indexes},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"store_schema", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
