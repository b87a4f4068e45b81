/* store_check.h: what the store's suites share to check the reader: open a
 * trace or fail the test, read every event of a kind in a time range, and
 * compare a range query with a brute-force filter of the whole iteration. */
#ifndef STORE_CHECK_H
#define STORE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gt_store.h"

/* Opens `path` or fails the test (fatally), printing the reader's message. */
gt_trace *open_ok(const char *path, unsigned flags);
/* Every event of `kind` overlapping [from, to), in the reader's order (caller frees). */
gt_event *read_events(gt_trace *t, gt_event_kind kind, int64_t from, int64_t to, size_t *out_n);
/* The header's rule: [start, end) overlaps [from, to); instants lie in it. */
bool overlaps(const gt_event *ev, int64_t from, int64_t to);
/* Checks a range query against filtering `all` (the full iteration) by hand. */
void check_range(gt_trace *t, gt_event_kind kind, const gt_event *all, size_t n_all, int64_t from, int64_t to);

#endif
