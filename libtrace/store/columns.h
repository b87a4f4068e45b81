/* columns.h: private to libtrace/store. One description per table: its
 * columns in order, each with its SQL type and nullability, how the writer
 * gets its value from the struct it writes, and how the reader puts it back
 * into the struct it hands out. The DDL (schema.c, schema_finish.c), the
 * writer's INSERT statements and binds (writer_rows.c, writer.c) and the
 * reader's field lists (reader_iter.c, reader.c) are all made from these
 * tables (columns.c), so a column is spelled once. */
#ifndef GT_COLUMNS_H
#define GT_COLUMNS_H

#include "gt_store.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the reader's side: which column goes to which struct member -------- */

enum field_type {
    F_I64,         /* int64_t or uint64_t member (bits kept) */
    F_I32,         /* int32_t or uint32_t member */
    F_BOOL,        /* bool member */
    F_STR,         /* const char * member, copied into the arena (clipped); NULL -> "" */
    F_TIME,        /* int64_t time: an integer within +-GT_TIME_LIMIT_NS, never NULL */
    F_SIZE,        /* int64_t size or count: an integer in [0, GT_SIZE_LIMIT]; NULL -> 0 */
    F_END_OR_NEG1, /* int64_t time; NULL -> -1 (the end of an instant NVTX event) */
    F_ID_START,    /* int64_t start from a GTRACE_KERNELS id, within +-GT_TIME_LIMIT_NS */
    F_HOOK,        /* read by the kind's hook */
    F_NONE,        /* not read */
};

typedef struct field {
    const char *column;
    unsigned short offset; /* of the member in its struct */
    unsigned char type;    /* enum field_type */
    unsigned char joined;  /* 1: a column of the kind's joined table */
} field;

#define FLD(s, col, member, type) {col, offsetof(s, member), type, 0}
#define JFLD(s, col, member, type) {col, offsetof(s, member), type, 1}

/* ---- the writer's side: where a column's value comes from -------------- */

enum put_type {
    P_NONE = 0,    /* not written: NULL */
    P_I64,         /* int64_t or uint64_t member */
    P_I32,         /* int32_t member */
    P_U32,         /* uint32_t member */
    P_BOOL,        /* bool member, as 0 or 1 */
    P_TEXT,        /* const char * member; NULL as NULL */
    P_I64_NZ,      /* int64_t member; 0 written as NULL (nsys's "none") */
    P_I32_NZ,      /* int32_t member; 0 written as NULL */
    P_END_NEG1,    /* int64_t end; -1 (an instant) written as NULL */
    P_HOOK,        /* set by the writer's code for that table */
};

/* ---- one column, one table ------------------------------------------------ */

enum sql_type { SQL_INTEGER = 0, SQL_TEXT, SQL_REAL };

typedef struct gt_column {
    const char *name;
    unsigned char sql;      /* enum sql_type */
    unsigned char not_null; /* 0, NN: NOT NULL, PK: NOT NULL PRIMARY KEY (columns.c) */
    unsigned char put;      /* enum put_type */
    unsigned char get;      /* enum field_type */
    unsigned short offset;  /* of the member put and got, in the table's struct */
    const char *note;       /* the DDL comment after the column ("REFERENCES ..."), or NULL */
} gt_column;

typedef struct gt_table_desc {
    const char *name;
    const gt_column *cols;
    size_t n_cols;
    const char *constraint; /* a table constraint after the columns, or NULL */
} gt_table_desc;

/* nsys's tables */
extern const gt_table_desc gt_tab_string_ids, gt_tab_thread_names, gt_tab_processes, gt_tab_target_info_gpu,
    gt_tab_session_start, gt_tab_meta_data_export, gt_tab_memcpy, gt_tab_runtime, gt_tab_sync, gt_tab_memset,
    gt_tab_nvtx, gt_tab_gpu_memory, gt_tab_callchains, gt_tab_kernel, gt_tab_context_info, gt_tab_stream_info,
    gt_tab_system_env, gt_tab_meta_data_capture;
/* gtrace's tables */
extern const gt_table_desc gt_tab_kernel_launches, gt_tab_kernels, gt_tab_memory_events, gt_tab_memory_oper,
    gt_tab_gpu_memory_stacks, gt_tab_run_config, gt_tab_cpu_ops, gt_tab_dropped_events;

/* Every table a trace starts with, in creation order (the ENUM_* tables
 * are made apart, with their rows). */
extern const gt_table_desc *const gt_created_tables[];
extern const size_t gt_n_created_tables;
/* The nsys-named ones among all described tables (those that closing
 * makes included), for checking them against nsys's own exports. */
extern const gt_table_desc *const gt_nsys_tables[];
extern const size_t gt_n_nsys_tables;

/* The column named `name` (exact case), or NULL. */
const gt_column *gt_column_named(const gt_table_desc *t, const char *name);

/* "CREATE TABLE name (\n    col TYPE [NOT NULL],  -- note\n...)", in nsys's layout. */
void gt_table_ddl(sqlite3_str *out, const gt_table_desc *t);
/* "INSERT INTO name (the written columns) VALUES " followed by n_rows rows
 * of placeholders; the columns are those with put != P_NONE, in order. */
void gt_table_insert(sqlite3_str *out, const gt_table_desc *t, int n_rows);
/* How many columns the writer writes (put != P_NONE). */
int gt_table_n_put(const gt_table_desc *t);
/* The 1-based position of column `name` among the written ones; 0 if not written. */
int gt_table_param(const gt_table_desc *t, const char *name);
/* The reader's field list of `t`: its read columns (get != F_NONE), in
 * order, `joined` set on each, appended to out[*n..cap). */
void gt_table_fields(const gt_table_desc *t, bool joined, field *out, size_t *n, size_t cap);

#endif /* GT_COLUMNS_H */
