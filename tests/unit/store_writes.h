/* store_writes.h: what the writer's suites share (test_store_writer.c,
 * test_store_schema.c, test_store_failures.c): fresh paths, plain SQLite
 * queries on a written file, and batches shaped like a training step. */
#ifndef STORE_WRITES_H
#define STORE_WRITES_H

#include "gt_store.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mix {
    int64_t n_kernels, n_api, n_nvtx, n_memcpy, n_gpu_memory;
} mix;

char *fresh_path(const char *name);
sqlite3 *open_ro(const char *path);
/* First column of the first row; -1 when the query fails. */
int64_t query_int(sqlite3 *db, const char *sql);
/* First column of the first row, in buf; "" when absent or NULL. */
const char *query_text(sqlite3 *db, const char *sql, char *buf, size_t n_bytes);
bool integrity_ok(sqlite3 *db);
gt_writer *open_writer(const char *path);
gt_string_id intern(gt_writer *w, const char *s);
gt_event kernel_event(int64_t start, gt_string_id name, int grid_x);
/* A batch shaped like a training step: per launch an API call and a kernel,
 * an NVTX range per 8 launches, a copy per 32, an allocation with its stack
 * per 64. Names depend on `seed`, so each batch interns new strings and new
 * launch configurations. Stops at the first failure and returns it. */
int write_batch(gt_writer *w, int n_launches, unsigned seed, int64_t *t_ns, mix *m);
/* Rows of `table`; 0 for a table a closed trace leaves out (nothing went in). */
int64_t count_rows(sqlite3 *db, const char *table, const char *where);
/* The file holds exactly `m`, and is sound. */
void check_counts(const char *path, const mix *m);
void add_mix(mix *a, const mix *b);
bool names_file(const char *path);

#endif
