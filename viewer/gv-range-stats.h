/* gv-range-stats.h: what happened inside a time range, as Perfetto's area
 * selection shows it: per lane and name the items that overlap the range
 * (count), their time inside it (total, clipped to the range), that time
 * less their children's (self: an NVTX range's children are the ranges one
 * depth below it on its thread; other items have none), the average and
 * the share of the range; and per device its busy time (the union of its
 * streams' work) and its idle gaps by cause (the analysis's), clipped.
 * Plain data; computed under the model's lock. */
#ifndef GV_RANGE_STATS_H
#define GV_RANGE_STATS_H

#include "gv-trace-model.h"

G_BEGIN_DECLS

typedef struct GvRangeRow {
    char *lane;  /* "GPU 0 / stream 7", or a device's title for its busy and idle rows */
    char *name;  /* the items' name; "busy", or "idle: host-wait" (a cause) */
    int64_t count, total_ns, self_ns;
    double share; /* total / the range's length */
} GvRangeRow;

typedef struct GvRangeStats {
    int64_t from_ns, to_ns;
    GvRangeRow *rows; size_t n_rows;
} GvRangeStats;

/* The rows for [from, to) (either order), by total time, longest first. */
GvRangeStats *gv_range_stats_compute(GvTraceModel *m, int64_t from_ns, int64_t to_ns);
void gv_range_stats_free(GvRangeStats *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GvRangeStats, gv_range_stats_free)

G_END_DECLS

#endif /* GV_RANGE_STATS_H */
