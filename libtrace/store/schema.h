/* schema.h: private to libtrace/store. What the writer and the reader share
 * about the layout of a gtrace trace: table names, version numbers, the
 * kernel id encoding and the time indexes. The tables' columns are described
 * in columns.c; schema.c creates them, schema_finish.c closes a trace. */
#ifndef GT_SCHEMA_H
#define GT_SCHEMA_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

/* Version of the GTRACE_* tables, in META_DATA_EXPORT as GTRACE_SCHEMA_VERSION.
 * A reader refuses a trace with a larger number. */
#define GT_SCHEMA_VERSION 1
/* The nsys export schema the nsys-named tables follow (EXPORT_SCHEMA_VERSION). */
#define GT_NSYS_SCHEMA_VERSION "3.13.2"

/* GTRACE_KERNELS.id = (start << GT_KERNEL_ID_SHIFT) | k, k in [0, GT_KERNEL_ID_MAX_K]:
 * kernels are clustered on start time, and k tells apart kernels that start in
 * the same nanosecond. start = id >> 8 (an arithmetic shift, also for start < 0). */
#define GT_KERNEL_ID_SHIFT 8
#define GT_KERNEL_ID_MAX_K 255

/* gtrace-only tables (columns: see columns.c) */
#define GT_TABLE_KERNEL_LAUNCHES "GTRACE_KERNEL_LAUNCHES"
#define GT_TABLE_KERNELS "GTRACE_KERNELS"
#define GT_TABLE_MEMORY_EVENTS "GTRACE_MEMORY_EVENTS"
#define GT_TABLE_GPU_MEMORY_STACKS "GTRACE_GPU_MEMORY_STACKS"
#define GT_TABLE_RUN_CONFIG "GTRACE_RUN_CONFIG"
#define GT_TABLE_CPU_OPS "GTRACE_CPU_OPS"
#define GT_TABLE_DROPPED_EVENTS "GTRACE_DROPPED_EVENTS"
#define GT_TABLE_SUMMARY "GTRACE_SUMMARY" /* summary.c */

/* A time index on the start column of one event table. */
typedef struct gt_schema_index {
    const char *table;
    const char *sql;   /* CREATE INDEX IF NOT EXISTS ... */
    bool nsys_only;    /* indexed in nsys exports only (the writer never builds it) */
} gt_schema_index;

extern const gt_schema_index gt_schema_indexes[];
extern const size_t gt_schema_n_indexes;

/* Creates every table, the kernel view, the ENUM_* rows and the
 * META_DATA_EXPORT rows of an empty trace, in the caller's transaction.
 * Returns an SQLite result code (sqlite3_errmsg tells more). */
int gt_schema_create(sqlite3 *db);
/* The ENUM_* tables with nsys's rows, and GTRACE_ENUM_MEMORY_OPER's rows
 * (schema_enums.c). Returns an SQLite result code. */
int gt_schema_create_enums(sqlite3 *db);
/* Appends the columns of nsys's kernel table, in its order, selected from
 * the compact tables (aliases k and l), and the FROM clause that joins them. */
void gt_schema_kernel_select(sqlite3_str *out);

/* Closing a trace, in the caller's transaction: the compact kernel tables
 * become nsys's CUPTI_ACTIVITY_KIND_KERNEL table (rows in start order), the
 * event tables nothing went into are dropped, and TARGET_INFO_CUDA_CONTEXT_INFO,
 * TARGET_INFO_CUDA_STREAM, TARGET_INFO_SYSTEM_ENV and META_DATA_CAPTURE get
 * what gtrace knows. Returns an SQLite result code. */
int gt_schema_finish(sqlite3 *db);

/* *out: whether `name` is a table (not a view) of the open trace. */
int gt_schema_is_table(sqlite3 *db, const char *name, bool *out);

#endif /* GT_SCHEMA_H */
