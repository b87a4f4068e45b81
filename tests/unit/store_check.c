/* store_check.c: the reader checks of store_check.h. */
#include "store_check.h"

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gt_trace *open_ok(const char *path, unsigned flags)
{
    gt_trace *t = NULL;
    int rc = gt_trace_open(&t, path, flags);
    if (rc != 0)
        fprintf(stderr, "\n  open %s: %s (%s)\n", path, gt_status_name(rc), gt_error_last());
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    return t;
}

gt_event *read_events(gt_trace *t, gt_event_kind kind, int64_t from, int64_t to, size_t *out_n)
{
    gt_iter *it = NULL;
    gt_event *evs = NULL, ev;
    size_t n = 0, cap = 0;
    int rc = gt_iter_new(&it, t, kind, from, to);
    if (rc != 0)
        fprintf(stderr, "\n  iter %s: %s\n", gt_event_kind_name(kind), gt_error_last());
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    while ((rc = gt_iter_next(it, &ev)) == 1) {
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            evs = realloc(evs, cap * sizeof *evs);
            CU_ASSERT_PTR_NOT_NULL_FATAL(evs);
        }
        evs[n++] = ev;
    }
    if (rc != 0)
        fprintf(stderr, "\n  next %s: %s\n", gt_event_kind_name(kind), gt_error_last());
    CU_ASSERT_EQUAL(rc, 0);
    gt_iter_free(it);
    *out_n = n;
    return evs;
}

bool overlaps(const gt_event *ev, int64_t from, int64_t to)
{
    int64_t s = gt_event_start(ev), e = gt_event_end(ev);
    if (s >= to && to != INT64_MAX)
        return false;
    return e > s ? e > from : s >= from;
}

void check_range(gt_trace *t, gt_event_kind kind, const gt_event *all, size_t n_all, int64_t from,
                        int64_t to)
{
    size_t n = 0, j = 0;
    gt_event *got = read_events(t, kind, from, to, &n);
    bool same = true;
    for (size_t i = 0; i < n_all; i++) {
        if (!overlaps(&all[i], from, to))
            continue;
        if (j >= n || memcmp(&got[j], &all[i], sizeof all[i]) != 0)
            same = false;
        j++;
    }
    if (!same || j != n)
        fprintf(stderr, "\n  %s in [%lld, %lld): %zu events, brute force says %zu\n", gt_event_kind_name(kind),
                (long long)from, (long long)to, n, j);
    CU_ASSERT(same && j == n);
    free(got);
}
