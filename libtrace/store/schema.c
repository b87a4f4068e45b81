/* schema.c: creating a gtrace trace: its tables, made from the descriptions
 * of columns.c, the kernel view, the ENUM_* rows (schema_enums.c) and the
 * META_DATA_EXPORT rows every trace starts with; and the time indexes.
 *
 * While a trace is written, kernels are stored compactly (see
 * ARCHITECTURE.md, "Trace format") behind a view with nsys's columns;
 * closing (gt_schema_finish, schema_finish.c) turns them into nsys's real
 * table, adds the TARGET_INFO_* and META_DATA_CAPTURE rows gtrace knows, and
 * drops the event tables nothing went into.
 *
 * This file does not write events: writer.c does. */
#include "config.h"

#include "columns.h"
#include "gt_store.h"
#include "schema.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x)

/* ---- kernels: nsys's columns from the two compact tables ------------------- */

void gt_schema_kernel_select(sqlite3_str *out)
{
    for (size_t i = 0; i < gt_tab_kernel.n_cols; i++) {
        const char *name = gt_tab_kernel.cols[i].name, *sep = i + 1 < gt_tab_kernel.n_cols ? ",\n" : "\n";
        if (strcmp(name, "start") == 0)
            sqlite3_str_appendf(out, "    k.id >> %d AS start%s", GT_KERNEL_ID_SHIFT, sep);
        else if (gt_column_named(&gt_tab_kernels, name))
            sqlite3_str_appendf(out, "    k.%s AS %s%s", name, name, sep);
        else if (gt_column_named(&gt_tab_kernel_launches, name))
            sqlite3_str_appendf(out, "    l.%s AS %s%s", name, name, sep);
        else
            sqlite3_str_appendf(out, "    NULL AS %s%s", name, sep);
    }
    sqlite3_str_appendall(out, "FROM " GT_TABLE_KERNELS " AS k JOIN " GT_TABLE_KERNEL_LAUNCHES
                               " AS l ON l.id = k.launchId");
}

/* ---- time indexes ----------------------------------------------------------- */

#define START_INDEX(t, only) {t, "CREATE INDEX IF NOT EXISTS GTRACE_IDX_" t "_start ON " t "(start)", only}

/* Built by gt_writer_close on the tables not written in start order (and by
 * the reader on request, for foreign files): during capture they would slow
 * every insert. */
const gt_schema_index gt_schema_indexes[] = {
    START_INDEX("CUPTI_ACTIVITY_KIND_KERNEL", false), /* the table closing writes */
    START_INDEX("CUPTI_ACTIVITY_KIND_MEMCPY", false),
    START_INDEX("CUPTI_ACTIVITY_KIND_MEMSET", false),
    START_INDEX("CUPTI_ACTIVITY_KIND_RUNTIME", false),
    START_INDEX("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", false),
    START_INDEX("NVTX_EVENTS", false),
    START_INDEX("CUDA_GPU_MEMORY_USAGE_EVENTS", false),
    START_INDEX(GT_TABLE_MEMORY_EVENTS, false),
    START_INDEX(GT_TABLE_CPU_OPS, false),
};
const size_t gt_schema_n_indexes = sizeof gt_schema_indexes / sizeof gt_schema_indexes[0];

/* ---- creation ----------------------------------------------------------------- */

static int exec_str(sqlite3 *db, sqlite3_str *s)
{
    char *sql = sqlite3_str_finish(s);
    int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    return rc;
}

static int fill_metadata(sqlite3 *db)
{
    static const char *const rows[][2] = {
        {"EXPORT_PRODUCT_NAME", "gtrace"},
        {"EXPORT_PRODUCT_VERSION", PACKAGE_VERSION},
        {"EXPORT_SCHEMA_VERSION", GT_NSYS_SCHEMA_VERSION},
        {"EXPORT_SCHEMA_VERSION_MAJOR", "3"},
        {"EXPORT_SCHEMA_VERSION_MINOR", "13"},
        {"EXPORT_SCHEMA_VERSION_MICRO", "2"},
        {"GTRACE_SCHEMA_VERSION", STR(GT_SCHEMA_VERSION)},
    };
    sqlite3_stmt *stmt = NULL;
    sqlite3_str *s = sqlite3_str_new(db);
    gt_table_insert(s, &gt_tab_meta_data_export, 1);
    char *sql = sqlite3_str_finish(s);
    int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) : SQLITE_NOMEM;
    const int name = gt_table_param(&gt_tab_meta_data_export, "name");
    const int value = gt_table_param(&gt_tab_meta_data_export, "value");
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof rows / sizeof rows[0]; i++) {
        sqlite3_bind_text(stmt, name, rows[i][0], -1, SQLITE_STATIC);
        sqlite3_bind_text(stmt, value, rows[i][1], -1, SQLITE_STATIC);
        rc = sqlite3_step(stmt);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
        sqlite3_reset(stmt);
    }
    sqlite3_finalize(stmt);
    sqlite3_free(sql);
    return rc;
}

int gt_schema_create(sqlite3 *db)
{
    int rc = SQLITE_OK;
    for (size_t i = 0; rc == SQLITE_OK && i < gt_n_created_tables; i++) {
        sqlite3_str *s = sqlite3_str_new(db);
        gt_table_ddl(s, gt_created_tables[i]);
        rc = exec_str(db, s);
    }
    if (rc == SQLITE_OK) {
        /* exactly nsys's columns, in nsys's order: what readers of a trace
         * whose writer was killed see. Closing replaces it with a table. */
        sqlite3_str *s = sqlite3_str_new(db);
        sqlite3_str_appendall(s, "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT\n");
        gt_schema_kernel_select(s);
        rc = exec_str(db, s);
    }
    if (rc == SQLITE_OK)
        rc = gt_schema_create_enums(db);
    if (rc == SQLITE_OK)
        rc = fill_metadata(db);
    return rc;
}
