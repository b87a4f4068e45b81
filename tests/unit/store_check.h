/* store_check.h: what the store's suites share to check the reader: open a
 * trace or fail the test, read every event of a kind in a time range, and
 * compare a range query with a brute-force filter of the whole iteration. */
#ifndef STORE_CHECK_H
#define STORE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gt_store.h"

#include <time.h>

#define FIX_2024 "nsys/cloverleaf-cuda-nsys2024.5.sqlite"
#define FIX_2022 "nsys/saxpy-mpi-cuda-nsys2022.2.sqlite"

/* Opens `path` or fails the test (fatally), printing the reader's message. */
gt_trace *open_ok(const char *path, unsigned flags);
/* Every event of `kind` overlapping [from, to), in the reader's order (caller frees). */
gt_event *read_events(gt_trace *t, gt_event_kind kind, int64_t from, int64_t to, size_t *out_n);
/* The header's rule: [start, end) overlaps [from, to); instants lie in it. */
bool overlaps(const gt_event *ev, int64_t from, int64_t to);
/* Checks a range query against filtering `all` (the full iteration) by hand. */
void check_range(gt_trace *t, gt_event_kind kind, const gt_event *all, size_t n_all, int64_t from, int64_t to);

/* The number of events of `kind` (asserted to succeed). */
int64_t count_of(gt_trace *t, gt_event_kind kind);
/* Whether the events' starts never decrease. */
bool time_ordered(const gt_event *evs, size_t n);
/* Ranges that catch off-by-ones (around event boundaries, plus a spread),
 * each checked with check_range. */
void check_ranges(gt_trace *t, gt_event_kind kind);
/* A new SQLite file at `path` made by running `sql`; an SQLite code. */
int make_db(const char *path, const char *sql);
int write_file(const char *path, const void *data, size_t n);
/* The whole file (caller frees), NULL if it cannot be read. */
unsigned char *read_whole(const char *path, size_t *out_n);

/* Size, modification time and a hash of the content. */
typedef struct file_id {
    long long size;
    struct timespec mtime;
    uint64_t hash;
} file_id;
file_id identify_file(const char *path);
bool side_file_exists(const char *path, const char *suffix);
/* A failure must be one of the documented statuses, with a message naming the file. */
void check_failure(int rc, const char *path);
/* Opening `path` fails with `status`, and a message naming the file (and `words`). */
void expect_open_error(const char *path, int status, const char *words);
/* Opens `path` and reads everything it offers. Each call must succeed or fail
 * cleanly; returns the first failure (0: the file read as valid data). */
int read_everything(const char *path);
/* Whether the file has an index of that name. */
bool has_index(const char *path, const char *name);

#endif
