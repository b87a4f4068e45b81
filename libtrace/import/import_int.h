/* import_int.h: what the parts of libtrace/import share, from the bottom
 * up: the streaming JSON reader (json.c), the data-only pickle reader
 * (pickle.c), where the importers write (batch.c), and the two importers
 * (kineto*.c, snapshot.c) that import.c drives. Private. */
#ifndef GT_IMPORT_INT_H
#define GT_IMPORT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gt_import.h"
#include "gt_store.h"

/* ---- JSON: a pull reader over a plain or gzipped file ------------------- */

typedef enum json_tok {
    JT_EOF = 0,  /* after the one top-level value */
    JT_OBJ,      /* { */
    JT_OBJ_END,  /* } */
    JT_ARR,      /* [ */
    JT_ARR_END,  /* ] */
    JT_KEY,      /* an object key: json_text() */
    JT_STR,      /* a string value: json_text() */
    JT_NUM,      /* a number, its text as written: json_text() */
    JT_TRUE, JT_FALSE, JT_NULL,
} json_tok;

enum { JSON_MAX_DEPTH = 64 };

typedef struct json_reader json_reader;

/* Opens `path` (gzip or not; a UTF-8 byte-order mark is skipped). Memory is
 * bounded: a 64 KiB buffer and the longest string (kept to 16 MiB). */
int json_open(json_reader **out, const char *path);
void json_free(json_reader *r);
/* The next token; the grammar is checked as it goes. Errors (a negative
 * gt_status) name the file, the line and what was expected. */
int json_next(json_reader *r, json_tok *out);
/* Inside an object: the next member's key (cut to key_bytes) and the first
 * token of its value. 1: a member; 0: the object closed; or an error. */
int json_next_member(json_reader *r, char *key, size_t key_bytes, json_tok *value);
/* Inside an array: the first token of the next element. 1: an element; 0:
 * the array closed; or an error. */
int json_next_element(json_reader *r, json_tok *value);
/* Skips the rest of a value whose first token was `first`. */
int json_skip(json_reader *r, json_tok first);
/* Text of the last KEY, STR or NUM token (NUL-terminated, UTF-8); valid
 * until the next call. */
const char *json_text(const json_reader *r, size_t *out_len);
/* What is odd about the last KEY or STR text: JSON_TEXT_NUL, it held
 * \u0000 (left out); JSON_TEXT_CUT, it was longer than 16 MiB (cut there).
 * A key with either reads as "". */
enum { JSON_TEXT_NUL = 1u << 0, JSON_TEXT_CUT = 1u << 1 };
unsigned json_text_flags(const json_reader *r);
/* Nesting depth after the last token (0: top level). */
int json_depth(const json_reader *r);
/* Fails with "PATH: line N: what" (GT_ERR_CORRUPT). */
int json_fail(json_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parses a JSON number's text: an integer (no fraction or exponent, in range),
 * or microseconds as exact int64 nanoseconds (rounded to the nearest). */
bool json_int(const char *s, int64_t *out);
bool json_us_to_ns(const char *s, int64_t *out_ns);

/* ---- pickle: data only --------------------------------------------------- */

typedef enum pk_type {
    PK_NONE = 0, PK_BOOL, PK_INT, PK_FLOAT, PK_STR, PK_BYTES, PK_LIST, PK_TUPLE, PK_DICT,
} pk_type;

typedef struct pk_value pk_value;
struct pk_value {
    pk_type type;
    union {
        int64_t i;       /* BOOL (0/1), INT */
        double f;        /* FLOAT */
        struct { char *s; size_t len; } str;  /* STR, BYTES; NUL-terminated */
        struct { pk_value **v; size_t n, cap; } seq;  /* LIST, TUPLE; DICT: keys and values alternate */
    } u;
    bool big;            /* INT: an unsigned value above INT64_MAX, in u.i's bits */
    int depth;           /* containers: how deep their contents nest (bounded) */
};

typedef struct pk_doc pk_doc; /* every value of one loaded pickle */

/* Loads a pickle file (protocol 2 to 5). Only data opcodes are accepted; any
 * other (GLOBAL, REDUCE, BUILD...) is refused by name and offset without
 * running anything. Depth, lengths and the memo are bounded by the file. */
int pk_load(pk_doc **out, const char *path);
void pk_free(pk_doc *d);
const pk_value *pk_root(const pk_doc *d);
/* The size of the file it was loaded from: what an importer's work is
 * bounded by, however often the memo repeats a value. */
size_t pk_file_bytes(const pk_doc *d);
/* A dict's value for a string key; NULL when absent or not a dict. */
const pk_value *pk_get(const pk_value *dict, const char *key);
/* Helpers that read a dict field of an expected type. */
bool pk_get_int(const pk_value *dict, const char *key, int64_t *out);
const char *pk_get_str(const pk_value *dict, const char *key); /* NULL if absent or not a str */
const pk_value *pk_get_list(const pk_value *dict, const char *key); /* LIST or TUPLE */

/* ---- what an importer learns of an input, and where it writes ------------ */

/* What a first pass learns of an input. */
typedef struct im_scan {
    gt_import_format format;
    bool has_time;             /* min/max below are set */
    int64_t min_abs_ns, max_abs_ns;
    bool wall_clock;           /* times are on the wall clock (UTC epoch) */
    int64_t os_pid;            /* Kineto: the profiled process's pid; 0 unknown */
    int32_t rank;              /* -1 unknown */
    int64_t base_ns;           /* Kineto: baseTimeNanoseconds (0 when absent) */
    int64_t n_device_mem;      /* Kineto: "[memory]" events of an accelerator */
} im_scan;

/* Where a second pass writes. */
typedef struct im_out {
    gt_writer *w;
    const char *path;          /* the input, for messages */
    int64_t t0_abs_ns;         /* subtracted from every time */
    int64_t pid;               /* the trace's pid for this input */
    int64_t pending;           /* rows since the last commit */
    uint64_t *gpus_added;      /* devices 0-63 already in TARGET_INFO_GPU (shared by the inputs) */
    int32_t rank;              /* -1 unknown */
    bool named;                /* its PROCESSES row is written */
} im_out;

/* ---- batch.c: the writer's side, shared by the importers ---------------- */

/* Writes the input's PROCESSES row once (its rank is in GTRACE_RUN_CONFIG). */
int im_name_process(im_out *o, const char *name);

/* Adds a row; commits every so many so a batch stays small. */
int im_add(im_out *o, const gt_event *ev);
int im_intern(im_out *o, const char *s, gt_string_id *out);
/* Room for element n of an array of `cap` elements of `elem` bytes: the
 * array doubles (from 64) when full. */
int im_grow(void **v, size_t *cap, size_t n, size_t elem);

/* A GTRACE_MEMORY_EVENTS row (GT_HEAP_* or GT_REGION_* `op`) of a
 * sub-allocator on virtual addresses, as a caching allocator registers its
 * segments (heaps) and blocks (regions) through NVTX; `name` may be NULL,
 * `chain_id` 0 (no stack). */
int im_add_heap(im_out *o, int64_t t_ns, int64_t tid, int32_t op, uint64_t heap, uint64_t addr, int64_t bytes,
                const char *name, int64_t chain_id);

/* ---- the importers: a scan (pass 1), then the rows (pass 2) -------------- */

int im_kineto_scan(const char *path, im_scan *out);
int im_kineto_write(const char *path, const im_scan *scan, im_out *o, gt_import_stats *st);
int im_snapshot_scan(const char *path, im_scan *out);
int im_snapshot_write(const char *path, const im_scan *scan, im_out *o, gt_import_stats *st);

#endif
