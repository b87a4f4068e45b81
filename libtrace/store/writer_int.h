/* writer_int.h: private to the writer (writer.c, writer_rows.c,
 * writer_dict.c, writer_util.c). The gt_writer handle and what its files
 * share.
 *
 * writer_util.c, at the bottom, turns SQLite failures into messages and binds
 * a struct's members as its table's description says; writer_dict.c keeps
 * the interned strings and the kernel launch configurations; writer_rows.c
 * buffers events and inserts them many rows at a time; writer.c, on top,
 * opens, commits and closes a trace and writes its descriptions. */
#ifndef GT_WRITER_INT_H
#define GT_WRITER_INT_H

#include "columns.h"
#include "gt_store.h"
#include "schema.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    BULK_ROWS = 64,          /* rows per multi-row INSERT: measured, see bench/results */
    SORT_ROWS = 1024,        /* rows are put in start order this many at a time */
    CHUNK_BYTES = 64 * 1024, /* string arena */
};

/* ---- tables written through row buffers (writer_rows.c) -------------------- */

typedef enum table_id {
    TB_KERNEL, TB_MEMCPY, TB_MEMSET, TB_API, TB_SYNC, TB_NVTX, TB_HEAP, TB_CPU_OP, N_TABLES
} table_id;

/* Rows waiting for multi-row INSERTs, one int64 cell per written column of
 * the table's description (a double kept as its bits, a text as the id of
 * an interned string). */
typedef struct row_buffer {
    const gt_table_desc *desc;
    sqlite3_stmt *one, *bulk; /* 1 row, BULK_ROWS rows */
    int n_rows, cap_rows;     /* cap_rows: a multiple of BULK_ROWS */
    int n_cols;               /* written columns, at most 32: NULLs are a bit mask */
    int start_col;            /* rows are put in order of this cell: start, or a kernel's id */
    uint32_t real_cols;       /* bit c: cell c is bound as a double */
    uint32_t text_cols;       /* bit c: cell c holds a string id, bound as that string */
    int64_t *cells;           /* (cap_rows, n_cols) */
    uint32_t *nulls;          /* (cap_rows) bit c: cell c is NULL */
} row_buffer;

typedef struct row_key {
    int64_t id;
    int row;
} row_key;

/* ---- other statements (writer.c prepares them) ------------------------------ */

typedef enum stmt_id {
    ST_STRING, ST_LAUNCH, ST_GPU_MEMORY, ST_GPU_STACK, ST_PROCESS, ST_THREAD, ST_GPU,
    ST_CALLCHAIN_EXISTS, ST_CALLCHAIN, ST_CONFIG, ST_DROPPED, ST_SESSION_CLEAR, ST_SESSION,
    N_STMTS
} stmt_id;

/* ---- dictionaries (writer_dict.c) -------------------------------------------- */

/* Open addressing over entry ids 1..n; ids 1..n_written have rows in the
 * file or the open transaction, 1..n_durable committed ones. */
typedef struct dict {
    uint32_t *slots;  /* an entry id, 0 for empty */
    uint32_t *hashes; /* the hash of the entry in that slot */
    size_t n_slots;   /* a power of two, at least 2n */
    size_t n, n_written, n_durable;
} dict;

typedef struct string_ref {
    const char *s;
    size_t n_bytes;
} string_ref;

typedef struct chunk {
    struct chunk *next;
    size_t used_bytes, size_bytes;
    char data[];
} chunk;

struct gt_writer {
    sqlite3 *db;
    char *path;
    bool in_batch;
    sqlite3_stmt *stmts[N_STMTS];
    row_buffer rows[N_TABLES];
    void *row_memory;              /* every buffer's cells and nulls */
    row_key order[SORT_ROWS];
    /* Whether each table's rows went in with non-decreasing starts: then a
     * reader can take rowid order for time order (GTRACE_TIME_ORDERED). */
    int64_t last_start[N_TABLES];
    bool has_rows[N_TABLES], unordered[N_TABLES];
    int64_t n_events[GT_EV_N_KINDS];         /* added, including the open batch */
    int64_t n_events_durable[GT_EV_N_KINDS]; /* committed */

    int64_t n_unplaced; /* kernels of the open batch that found no free id */

    /* Cells the writer's code fills (P_HOOK columns), found by name at open. */
    int kernel_id_col, kernel_launch_col;
    int nvtx_color_col, nvtx_text_col, nvtx_text_id_col;
    int nvtx_payload_col[GT_PAYLOAD_FLOAT + 1]; /* by gt_payload_kind; [0] unused */

    dict strings;
    string_ref *string_of; /* (strings.n) by id - 1, pointing into the chunks */
    size_t string_cap;
    chunk *chunks;

    /* A launch configuration is a gt_kernel, zeroed but for the members the
     * GTRACE_KERNEL_LAUNCHES description writes: keys compare with memcmp. */
    dict launches;
    gt_kernel *launch_of; /* (launches.n) by id - 1 */
    size_t launch_cap;
};

/* ---- writer_util.c ------------------------------------------------------------ */

/* Sets this thread's message for a failed SQLite call, naming the file. */
int gt_wr_sql_error(gt_writer *w, int rc, const char *what);
int gt_wr_nomem(gt_writer *w, const char *what);
/* sqlite3_step and sqlite3_reset; SQLITE_DONE also for a row. */
int gt_wr_step_reset(sqlite3_stmt *stmt);
/* Binds the members of the struct at `base` that `t` writes (P_HOOK
 * columns excepted: the caller binds them, see gt_table_param). */
void gt_wr_bind_struct(sqlite3_stmt *stmt, const gt_table_desc *t, const void *base);
/* The INSERT of `t` for n_rows rows, prepared to be kept. */
int gt_wr_prepare_insert(gt_writer *w, const gt_table_desc *t, int n_rows, const char *suffix, sqlite3_stmt **out);
void *gt_wr_grow(void *p, size_t *cap, size_t need, size_t elem_bytes);
uint32_t gt_wr_hash(const void *p, size_t n_bytes);

/* ---- writer_dict.c --------------------------------------------------------------- */

int gt_wr_intern(gt_writer *w, const char *s, gt_string_id *out_id);
/* The id of k's launch configuration, new or not. */
int gt_wr_launch_id(gt_writer *w, const gt_kernel *k, int64_t *out_id);
/* Inserts the strings and launches given ids since the last call. */
int gt_wr_write_dicts(gt_writer *w);
void gt_wr_free_dicts(gt_writer *w);

/* ---- writer_rows.c ------------------------------------------------------------------ */

/* Prepares the row tables' statements and allocates their buffers. */
int gt_wr_open_rows(gt_writer *w);
void gt_wr_free_rows(gt_writer *w);
/* Adds one event (any kind) to its table. */
int gt_wr_add_event(gt_writer *w, const gt_event *ev);
/* Inserts every buffered row. */
int gt_wr_flush_rows(gt_writer *w);
/* Forgets the buffered rows of a batch that failed. */
void gt_wr_drop_rows(gt_writer *w);
/* The tables whose rowid order is their time order, space-separated. */
void gt_wr_ordered_tables(const gt_writer *w, char *out, size_t n_bytes);

#endif /* GT_WRITER_INT_H */
