/* dist.h: distributed training over Open MPI (DDP and ZeRO/FSDP), the
 * layer between the training loop and the transports. It does: start-up
 * from mpirun's environment, the agreement check of the ranks'
 * configurations, bucketed asynchronous gradient all-reduce and
 * reduce-scatter over slices of the model's flat buffers, all-gather of
 * parameter shards, a watchdog on every wait (a stalled rank stops the job
 * with a message naming the collective, never a hang), NVTX ranges for
 * every collective (category "communication"), the ZeRO shard arithmetic
 * and the ZeRO memory accounting. It does not know the model: it moves
 * floats between ranks.
 *
 * Transports, chosen by tr_dist_use_backend from the backend: on the CPU,
 * MPI's non-blocking collectives on host buffers; on the CUDA backend, NCCL
 * on device buffers (dist_nccl.h: a communication stream ordered against
 * the compute stream by events; a wait makes the compute stream wait, the
 * host never does). The bucket copies, the unpacking and the scaling go
 * through the backend's ops either way. Small host reductions (loss,
 * gradient norm, flags), the start-up and checkpoint gathers stay on MPI.
 *
 * Sharding: every ZeRO stage gives rank r one contiguous range
 * [begin, end) of the flat parameter order (tr_dist_shard_range), so the
 * optimizer, the gradient norm and checkpoint shards work on one range.
 * A unit's slices (a block's 12 tensors) packed in flat order split into
 * per-rank runs in rank order, which is what MPI_Ireduce_scatter and
 * MPI_Iallgatherv exchange (on NCCL: a group of ncclReduce or
 * ncclBroadcast, one per rank); so a block is reduce-scattered and gathered
 * as one packed buffer.
 *
 * Open MPI progresses non-blocking collectives only inside MPI calls (no
 * progress thread by default): the caller pokes tr_dist_progress at each
 * block boundary so buckets move while the next block computes.
 * Only compiled when configure finds Open MPI (HAVE_MPI); this header does
 * not include mpi.h, so its users need no MPI flags. */
#ifndef TR_DIST_H
#define TR_DIST_H

#include "alloc.h"
#include "backend.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tr_dist tr_dist;

/* Whether this process was started by mpirun (Open MPI's or PMIx's rank
 * variables are set); usable before tr_dist_init. */
bool tr_dist_launched(void);
/* Initializes MPI (MPI_THREAD_FUNNELED: only the training thread calls
 * MPI) on a private duplicate of MPI_COMM_WORLD whose errors return codes.
 * timeout_s bounds every wait (the watchdog). */
int tr_dist_init(tr_dist **out, double timeout_s);
/* Finalizes MPI; NULL is fine. */
void tr_dist_free(tr_dist *d);
int tr_dist_rank(const tr_dist *d);
int tr_dist_size(const tr_dist *d);
/* This rank's index among the ranks of its node, and their count
 * (MPI_Comm_split_type SHARED): the GPU a rank takes. */
int tr_dist_local_rank(const tr_dist *d);
int tr_dist_local_size(const tr_dist *d);
/* Collective. The backend whose buffers the buckets and gathers hold, and
 * so the transport: MPI for the CPU backend; NCCL for the CUDA one (the
 * communicator made here, its id broadcast over MPI), or TR_EINVAL when
 * this trainer was built without NCCL. Call before any bucket or gather. */
int tr_dist_use_backend(tr_dist *d, tr_backend *be);
/* "MPI" or "NCCL 2.28.9": what carries the buckets and gathers. */
const char *tr_dist_transport(const tr_dist *d);
/* Stops every rank (MPI_Abort): the one way out when ranks disagree midway. */
void tr_dist_abort(tr_dist *d, int code) __attribute__((noreturn));

/* One setting that must be equal on every rank, printed as its flag. */
#define TR_DIST_VALUE_MAX 64
typedef struct tr_dist_setting {
    const char *name;               /* "--batch", "parameters" */
    char value[TR_DIST_VALUE_MAX];  /* as text; longer values are compared by hash */
} tr_dist_setting;
/* Collective: compares a hash of the settings across ranks; when they
 * differ, every rank returns TR_EINVAL with a message naming the first
 * differing setting and two ranks' values. */
int tr_dist_agree(tr_dist *d, const tr_dist_setting *settings, int n_settings);

/* The ZeRO shard of rank of n elements: contiguous, balanced, boundaries on
 * multiples of 16 elements (64 bytes) except the end. */
void tr_dist_shard_range(size_t n, int size, int rank, size_t *begin, size_t *end);

/* Blocking all-reduces (sums) of small host arrays, under the watchdog:
 * the gradient norm's sum of squares, the loss, finite flags. MPI on either
 * transport: these values are on the host already. */
int tr_dist_allreduce_sum(tr_dist *d, double *x, int n, const char *what);
int tr_dist_allreduce_min_int(tr_dist *d, int *x, int n, const char *what);
/* Every rank waits for every other (start-up, before timing). */
int tr_dist_barrier(tr_dist *d, const char *what);
/* Polls every collective in flight (moves Open MPI's schedules along and
 * notes completions; on NCCL notes finished collectives and stream waits).
 * Cheap; call between blocks. */
int tr_dist_progress(tr_dist *d);

/* A slice of a flat buffer: elements [off, off + n). */
typedef struct tr_dist_slice {
    size_t off, n;
} tr_dist_slice;

/* Gradient reduction in buckets. Slices are copied into a bucket buffer
 * (from the caching allocator, "communication bucket") as they are added;
 * a bucket is started (MPI_Iallreduce, or MPI_Ireduce_scatter over the
 * owners' runs; ncclAllReduce, or ncclReduce per owner) when it is full,
 * and finish waits, unpacks and scales (on NCCL: the compute stream waits,
 * and the unpacking is queued behind the wait).
 * For reduce-scatter, slices within a bucket must rise in offset: an added
 * slice below the previous one starts the bucket first. */
typedef enum tr_dist_reduce_kind { TR_DIST_ALLREDUCE, TR_DIST_REDUCE_SCATTER } tr_dist_reduce_kind;
typedef struct tr_dist_grads tr_dist_grads;
/* n_flat: elements of the flat buffer (the shard ranges come from it);
 * bucket_bytes: a bucket's capacity (PyTorch DDP's bucket_cap_mb). */
int tr_dist_grads_new(tr_dist_grads **out, tr_dist *d, tr_alloc *alloc, tr_dist_reduce_kind kind, size_t n_flat,
                      size_t bucket_bytes);
void tr_dist_grads_free(tr_dist_grads *g);
/* Adds flat elements [off, off + n) whose values are at src. src may be
 * reused as soon as this returns (on a GPU: by work queued on the compute
 * stream after this call). */
int tr_dist_grads_add(tr_dist_grads *g, const float *src, size_t off, size_t n);
/* Starts the partly filled bucket. */
int tr_dist_grads_flush(tr_dist_grads *g);
/* Flushes, waits for every bucket and writes the reduced sums times scale
 * into dst, where dst[i - dst_off] is flat element i: all-reduce writes
 * every added element, reduce-scatter only those of this rank's shard.
 * accumulate adds to dst instead of overwriting. Releases the buckets. */
int tr_dist_grads_finish(tr_dist_grads *g, float *dst, size_t dst_off, float scale, bool accumulate);
/* Waits for and unpacks (as finish does) the oldest started buckets until
 * at most keep are in flight: bounds the memory held in buckets. */
int tr_dist_grads_drain(tr_dist_grads *g, float *dst, size_t dst_off, float scale, bool accumulate, int keep);
/* Buckets started since the last finish (names "allreduce bucket i"). */
int tr_dist_grads_n_started(const tr_dist_grads *g);

/* All-gather of parameter slices from their owners: every rank contributes
 * its shard's part of the slices, and receives the slices packed in flat
 * order into packed (sum of n). shard[i - shard_off] is flat element i of
 * this rank's shard. name is the NVTX range ("all-gather block 3"). */
typedef struct tr_dist_gather tr_dist_gather;
int tr_dist_gather_start(tr_dist_gather **out, tr_dist *d, tr_alloc *alloc, size_t n_flat, const tr_dist_slice *slices,
                         int n_slices, const float *shard, size_t shard_off, float *packed, const char *name);
/* Waits (under the watchdog; on NCCL the compute stream waits) and frees
 * the handle; NULL is fine. */
int tr_dist_gather_wait(tr_dist_gather *g);

/* Gathers every rank's shard of a flat buffer of n_flat elements
 * (tr_dist_shard_range, in rank order) into full on root: MPI_Igatherv
 * under the watchdog. shard holds this rank's elements (host memory);
 * full (n_flat) is only written on root and may be NULL elsewhere. For
 * checkpoints: the one time everything meets on one rank. */
int tr_dist_gather_shards(tr_dist *d, const float *shard, size_t n_flat, float *full, int root, const char *what);

/* Communication time, for the progress line and the benchmark. MPI:
 * in_flight from a collective's start to the poll that saw it complete;
 * exposed, the training thread blocked in waits (what compute did not
 * hide). NCCL: in_flight, the collectives' time on the communication
 * stream (from when it could start them to their end); exposed, the time
 * the compute stream stood waiting for them (events around each wait). */
typedef struct tr_dist_stats {
    uint64_t n_collectives;
    uint64_t bytes;       /* payload sent by this rank's collectives' buffers */
    int64_t in_flight_ns;
    int64_t exposed_ns;
} tr_dist_stats;
/* On NCCL it first waits for the collectives and stream waits in flight:
 * call it outside a step. */
int tr_dist_get_stats(tr_dist *d, tr_dist_stats *out);

/* ZeRO memory accounting. A model state buffer holds bytes_per_param bytes
 * per parameter and is sharded from ZeRO stage shard_stage on (1: optimizer
 * state, 2: gradients, 3: parameters; 0 never). */
typedef struct tr_dist_state_buffer {
    const char *name;
    double bytes_per_param;
    int shard_stage;
} tr_dist_state_buffer;
/* Bytes per rank of the model states at a ZeRO stage (0 = DDP) over size
 * ranks: sum of bytes_per_param * n_params, divided by size where sharded. */
double tr_dist_expected_bytes(const tr_dist_state_buffer *bufs, int n_bufs, size_t n_params, int stage, int size);
/* The ZeRO paper's figure for mixed-precision Adam (2 + 2 + 12 bytes per
 * parameter): 16Ψ, 4Ψ + 12Ψ/N, 2Ψ + 14Ψ/N, 16Ψ/N. */
double tr_dist_zero_paper_bytes(size_t n_params, int stage, int size);

#endif
