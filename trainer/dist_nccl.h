/* dist_nccl.h: the NCCL transport of dist.c, private to it: the
 * collectives of dist.h on device buffers of the CUDA backend. It does the
 * NCCL communicator (from an id rank 0 made, which dist.c broadcasts over
 * MPI), a communication stream ordered against the backend's compute stream
 * by events, the watchdog thread, and the statistics of the collectives. It
 * does not do buckets, shards or MPI: dist.c does, for both transports.
 *
 * A collective is enqueued with no host wait: an event recorded on the
 * compute stream (what was queued before, the bucket's copy included) makes
 * the communication stream wait, the NCCL call runs there, an event after it
 * marks its end, and a host function on that stream notes the completion
 * (ending the collective's NVTX range, started at the enqueue). The consumer
 * (tr_nccl_op_consume) makes the compute stream wait for that event: what it
 * enqueues afterwards (the unpack, the optimizer, the next block's use of a
 * gathered buffer, a reuse of the buffer by the caching allocator) runs
 * after the collective. The host never blocks on a collective.
 *
 * Watchdog: every collective has a deadline, timeout_s after its enqueue
 * (the host runs at most about a step ahead of the GPU, because the step
 * reads its loss and gradient norm back). A thread checks the deadlines and
 * ncclCommGetAsyncError; on a timeout or an NCCL error it names the
 * collective and the rank, calls ncclCommAbort and ends the process (within
 * 10 s, also when the abort hangs), which makes mpirun stop the other ranks.
 * ncclCommInitRank is watched the same way, given at least 60 s.
 *
 * Compiled only with NCCL, the CUDA backend and Open MPI (TR_DIST_NCCL); this
 * header includes neither nccl.h nor the CUDA headers. */
#ifndef TR_DIST_NCCL_H
#define TR_DIST_NCCL_H

#include "backend.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TR_NCCL_ID_BYTES 128 /* sizeof(ncclUniqueId) */

typedef struct tr_nccl tr_nccl;
typedef struct tr_nccl_op tr_nccl_op;

/* Rank 0's part of the start-up: the id the other ranks join with. */
int tr_nccl_make_id(unsigned char id[TR_NCCL_ID_BYTES]);
/* Collective (ncclCommInitRank) over size ranks on be's device and its
 * compute stream. */
int tr_nccl_new(tr_nccl **out, tr_backend *be, int rank, int size, const unsigned char id[TR_NCCL_ID_BYTES],
                double timeout_s);
/* Waits for the communication stream, stops the watchdog, destroys the
 * communicator. NULL is fine. */
void tr_nccl_free(tr_nccl *n);
/* "NCCL 2.28.9" */
const char *tr_nccl_describe(const tr_nccl *n);

/* In-place sum of buf (count floats) over the ranks. */
int tr_nccl_allreduce(tr_nccl *n, tr_nccl_op **op, float *buf, size_t count, const char *name);
/* Rank r receives into recv (on r) the sum over ranks of send[displs[r] ..
 * + counts[r]): MPI_Reduce_scatter with per-rank counts, as one group of
 * ncclReduce calls, one per rank with a non-empty run. */
int tr_nccl_reduce_scatterv(tr_nccl *n, tr_nccl_op **op, const float *send, float *recv, const int *counts,
                            const int *displs, const char *name);
/* Every rank receives rank r's run (send on r, counts[r] floats) at
 * packed + displs[r]: MPI_Allgatherv as one group of ncclBroadcast calls.
 * send may be packed + displs[rank] (in place). */
int tr_nccl_allgatherv(tr_nccl *n, tr_nccl_op **op, const float *send, float *packed, const int *counts,
                       const int *displs, const char *name);

/* Whether op finished on the GPU (no CUDA call). */
bool tr_nccl_op_done(const tr_nccl_op *op);
/* The compute stream waits for op; the caller hands op back and must not
 * use it again. No host wait. */
int tr_nccl_op_consume(tr_nccl *n, tr_nccl_op *op);

/* Notes finished collectives and compute-stream stalls; with wait, waits
 * for all of them first (outside a step only). in_flight: the collectives'
 * time on the communication stream (from when it could start them to their
 * end, waiting for peers included); exposed: the time the compute stream
 * stood waiting for them, what compute did not hide. Cumulative. */
int tr_nccl_progress(tr_nccl *n, bool wait);
void tr_nccl_times(const tr_nccl *n, int64_t *in_flight_ns, int64_t *exposed_ns);

#endif
