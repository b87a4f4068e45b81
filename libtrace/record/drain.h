/* drain.h: the collector turns ring records into trace rows (drain.c). */
#ifndef GT_RECORD_DRAIN_H
#define GT_RECORD_DRAIN_H

#include <stdbool.h>

#include "gt_store.h"
#include "shm.h"

typedef struct gt_drain gt_drain;

/* What one read of a process's rings holds (collect.c's reader hands it to
 * the writer, flight.c keeps it): segments, each a header and `n_bytes` (a
 * multiple of 8) of records, a thread's name or a lost end's range id. */
enum { SEG_RECORDS = 1, SEG_THREAD = 2, SEG_LOST_END = 3 };
typedef struct seg_hdr {
    uint32_t kind;             /* SEG_* */
    int32_t tid;
    uint64_t n_bytes;
} seg_hdr;
_Static_assert(sizeof(seg_hdr) == 16, "seg_hdr layout");

/* A drain for the records of process `pid`, whose region is `shm` (for its
 * registered strings and clock). */
int gt_drain_new(gt_drain **out, gt_writer *w, int64_t pid, const gt_shm_header *shm);
void gt_drain_free(gt_drain *d);
/* The first gt_writer error met while draining (0: none). */
int gt_drain_error(const gt_drain *d);
/* Around each gt_writer batch: rows of a batch that was not committed are lost. */
void gt_drain_batch_begin(gt_drain *d);
void gt_drain_batch_end(gt_drain *d, bool committed);
/* Writing failed for good: from now on rows are counted as lost, never written. */
void gt_drain_discard(gt_drain *d);
/* Adds the rows lost so far, per kind, to `out` (GT_EV_N_KINDS) and forgets them. */
void gt_drain_take_lost(gt_drain *d, int64_t *out);
/* The end of start/end range `range_id` found no room in its ring: the range is lost. */
void gt_drain_range_lost(gt_drain *d, int64_t range_id);
/* One record of thread `tid`; `rec` was checked to lie inside its ring. */
void gt_drain_record(gt_drain *d, int32_t tid, const rec_hdr *rec);
/* Walks the segments `data` (`n_bytes`): `on_record` gets every record of
 * a SEG_RECORDS segment (pads left out), each checked to lie inside its
 * segment (a segment's rest after a record no producer writes is skipped);
 * `on_segment` (may be NULL) every other segment, a lost end's only when it
 * holds its range id. A segment longer than what is left ends the walk. */
typedef struct gt_segment_visitor {
    void (*on_record)(void *ctx, int32_t tid, const rec_hdr *rec);
    void (*on_segment)(void *ctx, const seg_hdr *h, const char *body);
    void *ctx;
} gt_segment_visitor;
void gt_segments_walk(const char *data, size_t n_bytes, const gt_segment_visitor *v);
/* Every record of the segments into the drain, threads' names and lost ends too. */
void gt_drain_segments(gt_drain *d, const char *data, size_t n_bytes);
/* Writes the process's description (its region's `info`: name, then
 * key/value pairs) into `w`; the root's run entries also under pid 0. */
void gt_drain_describe(gt_writer *w, int64_t pid, const gt_shm_header *h);
/* Adds the drop counts of every ring of region `h` (`n_rings` of them, as
 * checked when it arrived) and of its threads without one to `out`
 * (GT_EV_N_KINDS); they only grow. */
void gt_drain_region_dropped(const gt_shm_header *h, uint32_t n_rings, int64_t *out);
/* Thread `tid` is seen for the first time (after its first records). */
void gt_drain_thread(gt_drain *d, int32_t tid, const char *name);
/* Writes start/end ranges that never ended as lasting until `end_ns`;
 * returns how many. Call inside a batch. */
int64_t gt_drain_finish(gt_drain *d, int64_t end_ns);
/* A stamp of this process in trace time. */
int64_t gt_drain_stamp_to_ns(const gt_drain *d, uint64_t stamp);

#endif
