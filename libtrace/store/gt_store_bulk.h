/* gt_store_bulk.h: every row of one kind of event, fast, for a loader that
 * reads whole tables and orders them itself (the analysis model).
 *
 * Where gt_iter hands out every column in time order, a bulk read hands out
 * the rows in the order the file stores them, with only the members an
 * analysis computes with (below); the others are zero. Reading fewer
 * columns, and reading a table front to back instead of through its time
 * index, makes it several times cheaper than a gt_iter over everything.
 *
 * A row is refused (skipped) on the same terms as gt_iter refuses it, as far
 * as the columns read can tell: a time or size out of range, an end before
 * its start, no integer where an integer belongs. A row whose only fault is
 * in a column not read is handed out. Part of the store's public API
 * (gt_store.h conventions: 0 or a negative gt_status, gt_error_last()). */
#ifndef GT_STORE_BULK_H
#define GT_STORE_BULK_H

#include "gt_store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The members a bulk read fills, per kind (all others are zero):
 *   kernel      start_ns end_ns global_pid device_id stream_id correlation_id
 *               demangled_name short_name mangled_name
 *   memcpy      start_ns end_ns global_pid device_id stream_id correlation_id
 *               bytes copy_kind src_kind dst_kind
 *   memset      start_ns end_ns global_pid device_id stream_id correlation_id bytes mem_kind
 *   cuda_api    start_ns end_ns global_tid correlation_id name event_class
 *   sync        start_ns end_ns
 *   nvtx        start_ns end_ns event_type category global_tid domain_id text
 *               text_registered payload_kind payload
 *   gpu_memory  start_ns device_id address bytes operation correlation_id
 *               stream_id callchain_id
 *   heap        start_ns global_tid operation heap_id address bytes callchain_id
 *   cpu_op      start_ns end_ns global_tid name stream_id flops bytes */
typedef struct gt_bulk gt_bulk;

/* Starts a bulk read of every row of `kind` in `t`, in stored order. A
 * table this reader cannot read in bulk (the kernels of gtrace traces
 * written before kernels had nsys's table) gives *out NULL and 0: read
 * that kind with gt_iter. A trace without the kind's table gives a read
 * with no rows. NVTX texts stored inline get ids of `t`'s own, as gt_iter's. */
int gt_bulk_new(gt_bulk **out, gt_trace *t, gt_event_kind kind);
/* 1: *ev holds the next row; 0: no more; negative: an error (the message
 * names the file). */
int gt_bulk_next(gt_bulk *b, gt_event *ev);
void gt_bulk_free(gt_bulk *b);

#ifdef __cplusplus
}
#endif
#endif /* GT_STORE_BULK_H */
