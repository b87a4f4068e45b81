/* schema_finish.c: closing a trace (gt_schema_finish): what nsys's export
 * has, made from what was written. The compact kernel tables become nsys's
 * CUPTI_ACTIVITY_KIND_KERNEL table (rows in start order), the event tables
 * nothing went into are dropped, as nsys leaves out what it did not
 * collect, and TARGET_INFO_CUDA_CONTEXT_INFO, TARGET_INFO_CUDA_STREAM,
 * TARGET_INFO_SYSTEM_ENV and META_DATA_CAPTURE get what gtrace knows.
 *
 * The tables' columns are those of columns.c. This file does not create a
 * trace (schema.c) nor build its time indexes (writer.c). */
#include "config.h"

#include "columns.h"
#include "gt_store.h"
#include "schema.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define STR_(x) #x
#define STR(x) STR_(x)

static int create_table(sqlite3 *db, const gt_table_desc *t)
{
    sqlite3_str *s = sqlite3_str_new(db);
    gt_table_ddl(s, t);
    char *sql = sqlite3_str_finish(s);
    int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    return rc;
}

/* nsys's event tables, left out of a closed trace when nothing went into
 * them (as nsys leaves out what it did not collect); every reader of nsys
 * exports, gtrace's included, copes with their absence. The GTRACE_* tables
 * stay, empty or not: an empty GTRACE_DROPPED_EVENTS says nothing was lost. */
static const char *const droppable_tables[] = {
    "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS",
    "CUDA_GPU_MEMORY_USAGE_EVENTS", "CUDA_CALLCHAINS",
};

/* The GPU activity tables a context or a stream shows up in. */
static const char *const gpu_tables[] = {
    "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
};

/* One integer from `sql` (0 when it returns no row). */
static int query_int(sqlite3 *db, const char *sql, int64_t *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    *out = 0;
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            *out = sqlite3_column_int64(st, 0);
        rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    sqlite3_finalize(st);
    return rc;
}

/* Whether `name` is a table (not a view) of the trace. */
static int is_table(sqlite3 *db, const char *name, bool *out)
{
    char *sql = sqlite3_mprintf("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = %Q", name);
    if (!sql)
        return SQLITE_NOMEM;
    int64_t n;
    int rc = query_int(db, sql, &n);
    sqlite3_free(sql);
    *out = n > 0;
    return rc;
}

static int exec_fmt(sqlite3 *db, const char *fmt, const char *arg)
{
    char *sql = sqlite3_mprintf(fmt, arg);
    if (!sql)
        return SQLITE_NOMEM;
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_free(sql);
    return rc;
}

/* The compact kernel tables become nsys's table, its rows in start order
 * (the compact table's rowid order), so GTRACE_TIME_ORDERED may list it. */
static int finish_kernels(sqlite3 *db)
{
    bool compact;
    int rc = is_table(db, GT_TABLE_KERNELS, &compact);
    if (rc != SQLITE_OK || !compact)
        return rc;
    rc = sqlite3_exec(db, "DROP VIEW IF EXISTS CUPTI_ACTIVITY_KIND_KERNEL", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = create_table(db, &gt_tab_kernel);
    if (rc == SQLITE_OK) {
        sqlite3_str *s = sqlite3_str_new(db);
        sqlite3_str_appendall(s, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT\n");
        gt_schema_kernel_select(s);
        sqlite3_str_appendall(s, " ORDER BY k.id");
        char *sql = sqlite3_str_finish(s);
        rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
        sqlite3_free(sql);
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "DROP TABLE " GT_TABLE_KERNELS "; DROP TABLE " GT_TABLE_KERNEL_LAUNCHES, NULL, NULL, NULL);
    return rc;
}

static int drop_empty_tables(sqlite3 *db)
{
    int rc = SQLITE_OK;
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof droppable_tables / sizeof droppable_tables[0]; i++) {
        bool there = false;
        int64_t any = 1;
        rc = is_table(db, droppable_tables[i], &there);
        if (rc != SQLITE_OK || !there)
            continue;
        char *sql = sqlite3_mprintf("SELECT EXISTS (SELECT 1 FROM \"%w\")", droppable_tables[i]);
        rc = sql ? query_int(db, sql, &any) : SQLITE_NOMEM;
        sqlite3_free(sql);
        if (rc == SQLITE_OK && !any)
            rc = exec_fmt(db, "DROP TABLE \"%w\"", droppable_tables[i]);
    }
    return rc;
}

/* Creates `table`, then runs the INSERT of `select_fmt` over the union of
 * the GPU tables there are (%s: the union). The table stays without rows:
 * nsys writes its TARGET_INFO_* tables on a run without a GPU too, and
 * readers (nsys2prv's converter) read them unconditionally. */
static int table_from_gpu_rows(sqlite3 *db, const gt_table_desc *table, const char *select_fmt, const char *columns)
{
    sqlite3_str *u = sqlite3_str_new(db);
    int n = 0, rc = SQLITE_OK;
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof gpu_tables / sizeof gpu_tables[0]; i++) {
        bool there = false;
        rc = is_table(db, gpu_tables[i], &there);
        if (rc == SQLITE_OK && there)
            sqlite3_str_appendf(u, "%sSELECT %s FROM \"%w\"", n++ ? " UNION " : "", columns, gpu_tables[i]);
    }
    char *uni = sqlite3_str_finish(u);
    if (rc != SQLITE_OK || (n > 0 && !uni)) {
        sqlite3_free(uni);
        return rc != SQLITE_OK ? rc : SQLITE_NOMEM;
    }
    rc = create_table(db, table);
    if (rc == SQLITE_OK && n > 0)
        rc = exec_fmt(db, select_fmt, uni);
    sqlite3_free(uni);
    return rc;
}

/* The CUDA contexts and streams the GPU activity names. gtrace records
 * neither a context's null stream (nullStreamId -1: none known) nor a
 * stream's priority and creation flags (0: the default priority, and
 * CUPTI's "unknown stream type"). */
#define GT_VM_ID_STR STR(GT_VM_ID)
static int add_context_and_stream_info(sqlite3 *db)
{
    int rc = table_from_gpu_rows(
        db, &gt_tab_context_info,
        "INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO (nullStreamId, hwId, vmId, processId, deviceId, contextId)"
        " SELECT DISTINCT -1, deviceId, " GT_VM_ID_STR ", (coalesce(globalPid, 0) >> 24) & 16777215, deviceId,"
        " contextId FROM (%s) ORDER BY 4, 5, 6",
        "globalPid, deviceId, contextId");
    if (rc == SQLITE_OK)
        rc = table_from_gpu_rows(
            db, &gt_tab_stream_info,
            "INSERT INTO TARGET_INFO_CUDA_STREAM (streamId, hwId, vmId, processId, contextId, priority, flag)"
            " SELECT DISTINCT streamId, deviceId, " GT_VM_ID_STR ", (coalesce(globalPid, 0) >> 24) & 16777215,"
            " contextId, 0, 0 FROM (%s) WHERE streamId >= 0 ORDER BY 4, 5, 1",
            "globalPid, deviceId, contextId, streamId");
    return rc;
}

/* The machine the trace was recorded on, for a trace written where it was
 * recorded (not for one imported from another tool's files). nameEnum: the
 * numbers nsys gives these names. */
static int add_system_env(sqlite3 *db)
{
    bool config;
    int64_t imported = 0;
    int rc = is_table(db, GT_TABLE_RUN_CONFIG, &config);
    if (rc == SQLITE_OK && config)
        rc = query_int(db, "SELECT EXISTS (SELECT 1 FROM " GT_TABLE_RUN_CONFIG " WHERE key = 'import.source')",
                       &imported);
    if (rc != SQLITE_OK || imported)
        return rc;

    char host[256] = "", cores[32], os[512] = "", arch[128] = "";
    struct utsname u;
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    snprintf(cores, sizeof cores, "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    if (uname(&u) == 0) {
        snprintf(os, sizeof os, "%s %s", u.sysname, u.release);
        snprintf(arch, sizeof arch, "%s", u.machine);
    }
    const struct { const char *name; int name_enum; const char *value; } rows[] = {
        {"CpuCores", 1, cores}, {"CpuArchitecture", 3, arch}, {"OsDescription", 605, os}, {"Hostname", 619, host},
    };
    rc = create_table(db, &gt_tab_system_env);
    sqlite3_stmt *st = NULL;
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT INTO TARGET_INFO_SYSTEM_ENV (globalVid, devStateName, name, nameEnum, value)"
                                " VALUES (" STR(GT_VM_ID) " << 48, 'Local (gtrace)', ?, ?, ?)", -1, &st, NULL);
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof rows / sizeof rows[0]; i++) {
        if (!rows[i].value[0] || strcmp(rows[i].value, "-1") == 0)
            continue; /* not known here */
        sqlite3_bind_text(st, 1, rows[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, rows[i].name_enum);
        sqlite3_bind_text(st, 3, rows[i].value, -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(st);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

/* What was collected, as nsys names it (CAPTURE_EVENT_TYPE rows). */
static int add_capture_meta(sqlite3 *db)
{
    static const struct { const char *table, *type; } kinds[] = {
        {"CUPTI_ACTIVITY_KIND_RUNTIME", "Cuda"}, {"CUPTI_ACTIVITY_KIND_KERNEL", "Cuda"},
        {"CUPTI_ACTIVITY_KIND_MEMCPY", "Cuda"}, {"NVTX_EVENTS", "NvtxEvents"},
    };
    bool cuda = false, nvtx = false;
    int rc = SQLITE_OK;
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof kinds / sizeof kinds[0]; i++) {
        bool there = false;
        rc = is_table(db, kinds[i].table, &there);
        if (there && strcmp(kinds[i].type, "Cuda") == 0)
            cuda = true;
        else if (there)
            nvtx = true;
    }
    if (rc != SQLITE_OK || (!cuda && !nvtx))
        return rc;
    rc = create_table(db, &gt_tab_meta_data_capture);
    if (rc == SQLITE_OK && nvtx)
        rc = sqlite3_exec(db, "INSERT INTO META_DATA_CAPTURE (name, value) VALUES ('CAPTURE_EVENT_TYPE', 'NvtxEvents')",
                          NULL, NULL, NULL);
    if (rc == SQLITE_OK && cuda)
        rc = sqlite3_exec(db, "INSERT INTO META_DATA_CAPTURE (name, value) VALUES ('CAPTURE_EVENT_TYPE', 'Cuda')",
                          NULL, NULL, NULL);
    return rc;
}

int gt_schema_finish(sqlite3 *db)
{
    int rc = finish_kernels(db);
    if (rc == SQLITE_OK)
        rc = drop_empty_tables(db);
    if (rc == SQLITE_OK)
        rc = add_context_and_stream_info(db);
    if (rc == SQLITE_OK)
        rc = add_system_env(db);
    if (rc == SQLITE_OK)
        rc = add_capture_meta(db);
    return rc;
}

int gt_schema_is_table(sqlite3 *db, const char *name, bool *out)
{
    return is_table(db, name, out);
}
