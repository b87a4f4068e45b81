/* reader_int.h: private to the reader (reader_base.c, reader_check.c,
 * reader_iter.c, reader.c). The gt_trace handle and the helpers the files
 * share.
 *
 * reader_base.c, at the bottom, holds the shared helpers; reader_iter.c
 * reads rows into structs (refusing values out of range), counts and
 * iterates events; reader_check.c decides whether the file may be read at
 * all (integrity, shape) and bounds the work of every query; reader.c, on
 * top, opens a file and loads its descriptions. */
#ifndef GT_READER_INT_H
#define GT_READER_INT_H

#include "columns.h"
#include "gt_store.h"
#include "schema.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define GT_STR_(x) #x
#define GT_STR(x) GT_STR_(x)

/* Strings handed out by the trace (names, metadata, interned NVTX texts) live
 * in blocks that never move, so borrowed pointers stay valid until free. */
typedef struct arena_block {
    struct arena_block *next;
    size_t used, size;
    char data[];
} arena_block;

typedef struct db_object { /* a table or view of the file (sqlite_master) */
    const char *name;
    bool is_table; /* a real table: not a view, not a virtual table */
    bool without_rowid;
} db_object;

typedef struct meta_entry {
    const char *name, *value;
} meta_entry;

struct gt_trace {
    char *path;
    sqlite3 *db;
    bool live_wal; /* WAL file with a -wal beside it: read through SQLite's WAL protocol */
    int64_t file_bytes;
    gt_trace_origin origin;
    const char *schema_version;
    arena_block *arena;

    /* The work one query may do: SQLite virtual-machine steps, counted by a
     * progress handler into the counter of the statement being stepped
     * (`ops`, NULL between steps). The budget grows with the file's bytes
     * (with its log's, when live), never with the values in it. */
    int64_t op_budget;
    int64_t *ops;
    bool over_budget; /* the last step ran out of budget */

    db_object *objects;
    size_t n_objects;
    meta_entry *meta; /* export metadata first, then GTRACE_RUN_CONFIG of pid 0 */
    size_t n_meta, cap_meta;

    /* StringIds, sorted by id; then the texts this reader interns itself
     * (NVTX messages stored inline), numbered from interned_base up. */
    int64_t *string_ids;
    const char **string_values;
    size_t n_strings;
    int64_t interned_base;
    const char **interned;
    size_t n_interned, cap_interned;
    uint32_t *intern_slots; /* open addressing: index into `interned` + 1; 0 is empty */
    size_t n_slots;

    gt_process *processes;
    size_t n_processes;
    gt_thread *threads;
    size_t n_threads;
    gt_gpu_info *gpus;
    size_t n_gpus;

    sqlite3_stmt *callchain_stmt;
    gt_frame *frames;
    size_t cap_frames;

    /* GTRACE_KERNEL_LAUNCHES, sorted by id, loaded on the first kernel read:
     * each a gt_kernel with only its launch_fields members set; launch_bad[i]
     * when row i was refused (its kernels are refused too). */
    bool launches_loaded;
    int64_t *launch_ids;
    gt_kernel *launches;
    unsigned char *launch_bad;
    size_t n_launches;

    /* GT_OPEN_CHECK_LATER: the check on its own thread and connection */
    bool check_running;
    atomic_bool check_stop; /* set when the handle is freed before the verdict */
    bool check_by_mark;     /* the close mark held, in place of quick_check */
    bool mark_tested, mark_held; /* the close mark tested apart (summary.c) */
    pthread_t check_thread;
    sqlite3 *check_db;
    int check_sqlite_rc; /* its outcome, read after the join */
    char *check_problem;
    bool check_failed;

    /* Longest event per kind, so a time-range query can bound start from
     * below; computed on the first range query of that kind. */
    bool max_dur_known[GT_EV_N_KINDS];
    int64_t max_dur_ns[GT_EV_N_KINDS];

    /* Per kind whose table is in start order: the probe that finds the
     * rowid range of a time range, and one past its last rowid (kept from
     * the first range query on). */
    sqlite3_stmt *rowid_probe[GT_EV_N_KINDS];
    int64_t rowid_end[GT_EV_N_KINDS];

    /* Rows refused per kind (gt_trace_rejected), known once a whole table was read. */
    bool rejected_known[GT_EV_N_KINDS];
    int64_t n_rejected[GT_EV_N_KINDS];
};

/* The column layouts (field, FLD, F_*) are in columns.h, made from the
 * tables' descriptions. */

/* ---- shared helpers (reader_base.c) ------------------------------------------- */

int gt_rd_nomem(const gt_trace *t);
/* Turns an SQLite failure into a status and a one-line message naming the file. */
int gt_rd_sql_fail_msg(const gt_trace *t, int rc, const char *doing, const char *msg);
int gt_rd_sql_fail(const gt_trace *t, int rc, const char *doing);
int gt_rd_prepare(gt_trace *t, const char *sql, sqlite3_stmt **out, const char *doing);
/* sqlite3_step within the budget of the query whose work `ops` counts. */
int gt_rd_step(gt_trace *t, sqlite3_stmt *st, int64_t *ops);
/* A copy of s[0..n) in the arena, clipped to `limit` bytes (gt_rd_clip). */
char *gt_rd_arena_text(gt_trace *t, const char *s, size_t n, size_t limit);
void *gt_rd_grow(void *arr, size_t *cap, size_t need, size_t elem_bytes);

/* A growable SQL string; `failed` sticks after the first allocation failure. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
    bool failed;
} sbuf;
void gt_rd_sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The object named `name` (any case); NULL when absent. */
const db_object *gt_rd_find_object(const gt_trace *t, const char *name);
/* The same, but only a real table: a view or a virtual table is never read. */
const db_object *gt_rd_find_table(const gt_trace *t, const char *name);

/* Runs a query whose first row's first column is an integer. */
int gt_rd_query_int64(gt_trace *t, const char *sql, int64_t *out, bool *out_null, const char *doing);
/* Gives an inline NVTX text an id of the reader's own (see reader.c). */
int gt_rd_intern(gt_trace *t, const char *text, gt_string_id *out_id);

/* Longest string the reader hands out for a name or an NVTX text, and for a
 * metadata or configuration value. A longer one is cut at a character
 * boundary and ends with its length and a hash of the whole, so that two
 * long names stay apart and the same name matches across traces. */
enum { NAME_MAX_BYTES = 4096, VALUE_MAX_BYTES = 65536 };
/* The length of s[0..n) once clipped to `limit`, and the suffix to append
 * (written into suffix, at most 48 bytes; "" when nothing is cut). */
size_t gt_rd_clip(const char *s, size_t n, size_t limit, char suffix[48]);

/* ---- reader_check.c -------------------------------------------------------- */

/* Checks what can be checked before SQLite sees t->path (missing, not a
 * file, not SQLite, truncated), and sets t->file_bytes, t->live_wal and the
 * work budget of a query. */
int gt_rd_probe_file(gt_trace *t);
/* A connection to t's file (read-only, or read-write for adding indexes).
 * Returns an SQLite code; *out may be set (for its message) even on failure. */
int gt_rd_open_db(const gt_trace *t, bool rw, sqlite3 **out);
/* Opens t->db, with the work budget installed. */
int gt_rd_connect_db(gt_trace *t, bool rw);

/* The whole-file integrity check (PRAGMA quick_check), now or, for big files
 * with GT_OPEN_CHECK_LATER, on a thread of its own. */
int gt_rd_check_integrity(gt_trace *t);
int gt_rd_start_check(gt_trace *t);
/* Refuses the file when a table the reader reads is a view, a virtual table,
 * has generated columns or lacks a column it needs: the description tables,
 * or (`events`, once the origin is known) the event tables. */
int gt_rd_check_shapes(gt_trace *t, bool events);

/* ---- reading rows (reader_iter.c) ----------------------------------------------- */

/* Copies one row's columns into the struct at `base` (zeroed by the caller:
 * NULLs leave it so) as `fields` say. Returns the number of values refused (a wrong type, out of range, an end
 * before its start or too far after it; their members are left zero), or a
 * negative status. */
int gt_rd_fill_fields(gt_trace *t, sqlite3_stmt *st, const field *fields, size_t n_fields, void *base);
/* What those checks promise of every event handed out: its start within
 * +-GT_TIME_LIMIT_NS, its end at or after it and at most GT_TIME_LIMIT_NS
 * later (asserted, gt_base.h). */
static inline bool gt_rd_row_in_limits(const gt_event *ev)
{
    int64_t s = gt_event_start(ev), e = gt_event_end(ev);
    return s >= -GT_TIME_LIMIT_NS && s <= GT_TIME_LIMIT_NS && e >= s && e - s <= GT_TIME_LIMIT_NS;
}
/* Appends the select list for `fields`: alias."column" where the table has
 * that column, NULL where it does not (nsys versions differ in columns). */
int gt_rd_append_columns(gt_trace *t, sbuf *sql, const field *fields, size_t n_fields, const char *table,
                         const char *join_table);

/* ---- reader_iter.c ----------------------------------------------------------- */

/* Event-table names and the columns each needs (for gt_rd_check_shapes):
 * calls fn for each table a trace of t's origin is read from. */
typedef int (*gt_rd_table_fn)(gt_trace *t, const char *table, const char *const *columns);
int gt_rd_each_event_table(gt_trace *t, gt_rd_table_fn fn);

#endif /* GT_READER_INT_H */
