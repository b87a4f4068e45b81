/* dist_nccl.c: the NCCL transport of dist_nccl.h: the communicator, the
 * communication stream and its events, the watchdog thread, the statistics.
 * The uneven collectives (a ZeRO block's runs differ per rank) are groups of
 * rooted collectives, as PyTorch's ProcessGroupNCCL does for uneven
 * all-gather and reduce-scatter: no padding, no extra copy, and each rank
 * receives the bytes MPI's v-variants move. It does not know buckets or
 * shards (dist.c). */
#include "config.h"

#include "dist_nccl.h"

#include "error.h"
#include "nvtx.h"

#include <cuda_runtime_api.h>
/* nccl.h declares functions without a prototype */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

_Static_assert(sizeof(ncclUniqueId) == TR_NCCL_ID_BYTES, "ncclUniqueId is not TR_NCCL_ID_BYTES");

/* One collective, from its enqueue until it has finished and been consumed.
 * The host function of the communication stream holds a pointer to it, so an
 * op is recycled only once done. */
struct tr_nccl_op {
    tr_nccl_op *next;             /* the active list (enqueue order) or the free list */
    cudaEvent_t ready;            /* compute stream: what the collective must come after */
    cudaEvent_t started, done;    /* communication stream, timed */
    int64_t t0_ns;                /* enqueue (host clock): the deadline runs from here */
    uint64_t nvtx_id;
    _Atomic int64_t done_ns;      /* set by the host function; 0 before */
    bool consumed, counted;
    char name[48];
};

/* A compute-stream wait, timed: before is recorded before the wait, after
 * behind it, so after - before is the time the stream stood still. */
typedef struct stall {
    cudaEvent_t before, after;
} stall;

struct tr_nccl {
    tr_backend *be;
    cudaStream_t compute, comm_stream;
    int device, rank, size;
    ncclComm_t comm;
    double timeout_s;
    char description[32];
    /* the active list: appended and unlinked by the training thread under
     * lock, read by the watchdog under lock */
    pthread_mutex_t lock;
    tr_nccl_op *active, *active_tail, *free_ops;
    /* the watchdog */
    pthread_cond_t wake;
    pthread_t watchdog;
    bool watchdog_started, stop;
    _Atomic int64_t init_t0_ns; /* while ncclCommInitRank runs */
    /* stalls recorded, oldest first (a ring), and spare event pairs */
    stall *queue, *spare;
    int q_head, q_len, q_cap, n_spare, cap_spare;
    int64_t in_flight_ns, exposed_ns;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cuda_error(cudaError_t err, const char *call, const char *what)
{
    return tr_error_set(TR_EIO, "%s (%s) failed: %s", call, what, cudaGetErrorString(err));
}

static int nccl_error(const tr_nccl *n, ncclResult_t r, const char *call, const char *what)
{
    const char *detail = n && n->comm ? ncclGetLastError(n->comm) : ncclGetLastError(NULL);
    return tr_error_set(TR_EIO, "%s (%s) failed: %s%s%s", call, what, ncclGetErrorString(r),
                        detail && *detail ? ": " : "", detail ? detail : "");
}

#define CUDA_TRY(call, what)                                                                                   \
    do {                                                                                                       \
        cudaError_t err_ = (call);                                                                             \
        if (err_ != cudaSuccess)                                                                               \
            return cuda_error(err_, #call, what);                                                              \
    } while (0)

/* ---- the watchdog ------------------------------------------------------------------ */

/* The least time ncclCommInitRank is given, whatever --dist-timeout says. */
#define INIT_TIMEOUT_MIN_S 60
/* How long ncclCommAbort may take before the process ends without it. */
#define ABORT_GRACE_S 10

/* Ends the process if ncclCommAbort does not return: it frees device memory,
 * which waits for whatever holds the GPU, and has been seen to hang
 * (NVIDIA/nccl#549, #992; PyTorch's heartbeat monitor exists for this). */
static void *abort_backstop(void *arg)
{
    const tr_nccl *n = arg;
    struct timespec ts = {ABORT_GRACE_S, 0};
    while (nanosleep(&ts, &ts) != 0)
        ;
    fprintf(stderr, "trainer: rank %d of %d: ncclCommAbort did not return within %d s; stopping without it\n",
            n->rank, n->size, ABORT_GRACE_S);
    _exit(1);
}

/* No way back from here: say what stalled, free the GPU from NCCL's kernels
 * (ncclCommAbort may be called from another thread), and end the process,
 * within ABORT_GRACE_S whatever the abort does. The training thread may sit
 * in a CUDA wait that only the abort ends; MPI may not be called from this
 * thread (MPI_THREAD_FUNNELED), and mpirun stops the other ranks when one
 * exits without MPI_Finalize. */
__attribute__((noreturn)) static void fire(tr_nccl *n, const char *msg)
{
    pthread_t backstop;
    bool armed = pthread_create(&backstop, NULL, abort_backstop, n) == 0; /* before anything that may block */
    fprintf(stderr, "trainer: rank %d of %d: %s; aborting the NCCL communicator and stopping this rank (mpirun "
                    "stops the others)\n", n->rank, n->size, msg);
    fflush(stdout);
    fflush(stderr);
    if (n->comm && armed) /* unguarded, skip it: the exit frees the GPU too */
        ncclCommAbort(n->comm);
    _exit(1);
}

static void *watchdog_main(void *arg)
{
    tr_nccl *n = arg;
    /* a tenth of the timeout, between 10 ms and 200 ms: the deadline is
     * kept to within 10%, and an idle rank wakes rarely */
    double tick_s = n->timeout_s / 10;
    tick_s = tick_s < 0.01 ? 0.01 : tick_s > 0.2 ? 0.2 : tick_s;
    int64_t timeout_ns = (int64_t)(n->timeout_s * 1e9);
    /* the start-up (topology, buffers, NCCL's kernels loaded) takes seconds
     * on a healthy machine: a timeout chosen for collectives must not kill it */
    double init_timeout_s = n->timeout_s > INIT_TIMEOUT_MIN_S ? n->timeout_s : INIT_TIMEOUT_MIN_S;
    int64_t init_timeout_ns = (int64_t)(init_timeout_s * 1e9);
    pthread_mutex_lock(&n->lock);
    while (!n->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t wake = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + (int64_t)(tick_s * 1e9);
        ts.tv_sec = wake / 1000000000;
        ts.tv_nsec = wake % 1000000000;
        pthread_cond_timedwait(&n->wake, &n->lock, &ts);
        if (n->stop)
            break;
        int64_t t = now_ns(), init_t0 = atomic_load(&n->init_t0_ns);
        char msg[320];
        if (init_t0 && t - init_t0 > init_timeout_ns) {
            snprintf(msg, sizeof msg, "ncclCommInitRank (the NCCL communicator's start-up) did not complete "
                     "within %g s: another rank did not join (--dist-timeout, at least %d s here)", init_timeout_s,
                     INIT_TIMEOUT_MIN_S);
            fire(n, msg);
        }
        const tr_nccl_op *oldest = NULL;
        for (const tr_nccl_op *op = n->active; op && !oldest; op = op->next)
            if (!atomic_load(&op->done_ns))
                oldest = op;
        if (n->comm && !init_t0) {
            ncclResult_t async = ncclSuccess;
            if (ncclCommGetAsyncError(n->comm, &async) == ncclSuccess && async != ncclSuccess &&
                async != ncclInProgress) {
                snprintf(msg, sizeof msg, "%s failed on the GPU after %.3g s: NCCL reported %s (%s)",
                         oldest ? oldest->name : "a collective", oldest ? (t - oldest->t0_ns) / 1e9 : 0.0,
                         ncclGetErrorString(async), ncclGetLastError(n->comm));
                fire(n, msg);
            }
        }
        if (oldest && t - oldest->t0_ns > timeout_ns) {
            snprintf(msg, sizeof msg, "%s (NCCL) did not complete within %g s: another rank died or stalled "
                     "(--dist-timeout)", oldest->name, n->timeout_s);
            fire(n, msg);
        }
    }
    pthread_mutex_unlock(&n->lock);
    return NULL;
}

/* ---- start-up and end ---------------------------------------------------------------- */

int tr_nccl_make_id(unsigned char id[TR_NCCL_ID_BYTES])
{
    ncclUniqueId u;
    ncclResult_t r = ncclGetUniqueId(&u);
    if (r != ncclSuccess)
        return nccl_error(NULL, r, "ncclGetUniqueId", "rank 0 making the communicator's id");
    memcpy(id, &u, sizeof u);
    return TR_OK;
}

int tr_nccl_new(tr_nccl **out, tr_backend *be, int rank, int size, const unsigned char id[TR_NCCL_ID_BYTES],
                double timeout_s)
{
    *out = NULL;
    if (be->device != TR_CUDA)
        return tr_error_set(TR_EINVAL, "NCCL needs the CUDA backend, not %s", be->name);
    tr_nccl *n = calloc(1, sizeof *n);
    if (!n)
        return tr_error_set(TR_ENOMEM, "out of host memory for the NCCL context");
    n->be = be;
    n->compute = be->compute_stream(be, &n->device);
    n->rank = rank;
    n->size = size;
    n->timeout_s = timeout_s;
    int version = 0;
    ncclGetVersion(&version);
    snprintf(n->description, sizeof n->description, "NCCL %d.%d.%d", version / 10000, version / 100 % 100,
             version % 100);
    pthread_mutex_init(&n->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&n->wake, &ca);
    pthread_condattr_destroy(&ca);

    int rc = TR_OK, least, greatest;
    cudaError_t err = cudaSetDevice(n->device);
    /* the highest priority: a collective's kernels start as soon as SMs free
     * up, not behind the backward's queue (what Megatron does too) */
    if (err == cudaSuccess)
        err = cudaDeviceGetStreamPriorityRange(&least, &greatest);
    if (err == cudaSuccess)
        err = cudaStreamCreateWithPriority(&n->comm_stream, cudaStreamNonBlocking, greatest);
    if (err != cudaSuccess) {
        rc = cuda_error(err, "cudaStreamCreateWithPriority", "the communication stream");
        goto fail;
    }
    atomic_store(&n->init_t0_ns, now_ns());
    if (pthread_create(&n->watchdog, NULL, watchdog_main, n) != 0) {
        rc = tr_error_set(TR_EIO, "could not start the NCCL watchdog thread");
        goto fail;
    }
    n->watchdog_started = true;
    ncclUniqueId u;
    memcpy(&u, id, sizeof u);
    ncclComm_t comm;
    ncclResult_t r = ncclCommInitRank(&comm, size, u, rank);
    if (r != ncclSuccess) {
        char what[96];
        snprintf(what, sizeof what, "rank %d of %d on cuda:%d", rank, size, n->device);
        rc = nccl_error(NULL, r, "ncclCommInitRank", what);
        goto fail;
    }
    pthread_mutex_lock(&n->lock);
    n->comm = comm;
    atomic_store(&n->init_t0_ns, 0);
    pthread_mutex_unlock(&n->lock);
    *out = n;
    return TR_OK;
fail:
    atomic_store(&n->init_t0_ns, 0);
    tr_nccl_free(n);
    return rc;
}

static void destroy_op(tr_nccl_op *op)
{
    cudaEventDestroy(op->ready);
    cudaEventDestroy(op->started);
    cudaEventDestroy(op->done);
    free(op);
}

void tr_nccl_free(tr_nccl *n)
{
    if (!n)
        return;
    if (n->comm_stream)
        cudaStreamSynchronize(n->comm_stream); /* a hang here is the watchdog's */
    if (n->comm)
        tr_nccl_progress(n, true);
    if (n->watchdog_started) {
        pthread_mutex_lock(&n->lock);
        n->stop = true;
        pthread_cond_signal(&n->wake);
        pthread_mutex_unlock(&n->lock);
        pthread_join(n->watchdog, NULL);
    }
    if (n->comm)
        ncclCommDestroy(n->comm);
    for (tr_nccl_op *op = n->active, *next; op; op = next) {
        next = op->next;
        destroy_op(op);
    }
    for (tr_nccl_op *op = n->free_ops, *next; op; op = next) {
        next = op->next;
        destroy_op(op);
    }
    for (int i = 0; i < n->q_len; i++) {
        stall *s = &n->queue[(n->q_head + i) % n->q_cap];
        cudaEventDestroy(s->before);
        cudaEventDestroy(s->after);
    }
    for (int i = 0; i < n->n_spare; i++) {
        cudaEventDestroy(n->spare[i].before);
        cudaEventDestroy(n->spare[i].after);
    }
    free(n->queue);
    free(n->spare);
    if (n->comm_stream)
        cudaStreamDestroy(n->comm_stream);
    pthread_cond_destroy(&n->wake);
    pthread_mutex_destroy(&n->lock);
    free(n);
}

const char *tr_nccl_describe(const tr_nccl *n) { return n->description; }

/* ---- enqueueing a collective --------------------------------------------------------- */

/* The host function behind a collective: its end, as exactly as the host
 * can know it without waiting. No CUDA calls are allowed here. */
static void CUDART_CB op_finished(void *arg)
{
    tr_nccl_op *op = arg;
    tr_nvtx_end(op->nvtx_id);
    atomic_store(&op->done_ns, now_ns());
}

/* A recycled or new op, already in the active list (so the watchdog sees a
 * first collective that blocks in NCCL's connection set-up), its NVTX range
 * started, the communication stream waiting for the compute stream. */
static int begin_op(tr_nccl *n, tr_nccl_op **out, const char *name, size_t bytes)
{
    tr_nccl_op *op = n->free_ops;
    if (op) {
        n->free_ops = op->next;
    } else {
        if (!(op = calloc(1, sizeof *op)))
            return tr_error_set(TR_ENOMEM, "out of host memory for %s", name);
        cudaError_t err = cudaEventCreateWithFlags(&op->ready, cudaEventDisableTiming);
        if (err == cudaSuccess)
            err = cudaEventCreate(&op->started);
        if (err == cudaSuccess)
            err = cudaEventCreate(&op->done);
        if (err != cudaSuccess) {
            destroy_op(op);
            return cuda_error(err, "cudaEventCreate", name);
        }
    }
    snprintf(op->name, sizeof op->name, "%s", name);
    op->next = NULL;
    op->consumed = op->counted = false;
    atomic_store(&op->done_ns, 0);
    op->t0_ns = now_ns();
    cudaError_t err = cudaEventRecord(op->ready, n->compute);
    if (err == cudaSuccess)
        err = cudaStreamWaitEvent(n->comm_stream, op->ready, 0);
    if (err == cudaSuccess)
        err = cudaEventRecord(op->started, n->comm_stream);
    if (err != cudaSuccess) {
        op->next = n->free_ops;
        n->free_ops = op;
        return cuda_error(err, "ordering the communication stream after the compute stream", name);
    }
    op->nvtx_id = tr_nvtx_start_comm(op->name, bytes);
    pthread_mutex_lock(&n->lock);
    if (n->active_tail)
        n->active_tail->next = op;
    else
        n->active = op;
    n->active_tail = op;
    pthread_mutex_unlock(&n->lock);
    *out = op;
    return TR_OK;
}

/* Unlinks op from the active list (the training thread is the only writer). */
static void unlink_op(tr_nccl *n, tr_nccl_op *op)
{
    pthread_mutex_lock(&n->lock);
    tr_nccl_op **at = &n->active, *prev = NULL;
    while (*at && *at != op) {
        prev = *at;
        at = &(*at)->next;
    }
    if (*at) {
        *at = op->next;
        if (n->active_tail == op)
            n->active_tail = prev;
    }
    pthread_mutex_unlock(&n->lock);
    op->next = n->free_ops;
    n->free_ops = op;
}

/* After the NCCL call(s): the end event and the host function; on a
 * failed call the op goes back unused. */
static int end_op(tr_nccl *n, tr_nccl_op *op, ncclResult_t r, const char *call, tr_nccl_op **out)
{
    int rc = TR_OK;
    if (r != ncclSuccess) {
        rc = nccl_error(n, r, call, op->name);
    } else {
        cudaError_t err = cudaEventRecord(op->done, n->comm_stream);
        if (err == cudaSuccess)
            err = cudaLaunchHostFunc(n->comm_stream, op_finished, op);
        if (err != cudaSuccess)
            rc = cuda_error(err, "cudaLaunchHostFunc", op->name);
    }
    if (rc < 0) {
        tr_nvtx_end(op->nvtx_id);
        unlink_op(n, op);
        return rc;
    }
    *out = op;
    return TR_OK;
}

int tr_nccl_allreduce(tr_nccl *n, tr_nccl_op **out, float *buf, size_t count, const char *name)
{
    tr_nccl_op *op;
    int rc = begin_op(n, &op, name, count * sizeof(float));
    if (rc < 0)
        return rc;
    ncclResult_t r = ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, n->comm, n->comm_stream);
    return end_op(n, op, r, "ncclAllReduce", out);
}

int tr_nccl_reduce_scatterv(tr_nccl *n, tr_nccl_op **out, const float *send, float *recv, const int *counts,
                            const int *displs, const char *name)
{
    tr_nccl_op *op;
    size_t sent = 0; /* as dist.c counts a bucket: all of it */
    for (int root = 0; root < n->size; root++)
        sent += (size_t)counts[root];
    int rc = begin_op(n, &op, name, sent * sizeof(float));
    if (rc < 0)
        return rc;
    ncclResult_t r = ncclGroupStart();
    for (int root = 0; root < n->size && r == ncclSuccess; root++) {
        if (counts[root] == 0)
            continue; /* every rank skips the same roots: the counts are computed alike */
        /* recvbuff is read on the root only; elsewhere any valid pointer */
        float *to = root == n->rank ? recv : (float *)send + displs[root];
        r = ncclReduce(send + displs[root], to, (size_t)counts[root], ncclFloat, ncclSum, root, n->comm,
                       n->comm_stream);
    }
    ncclResult_t r_end = ncclGroupEnd(); /* always closes the group, also after a failed call */
    return end_op(n, op, r != ncclSuccess ? r : r_end, "ncclGroupEnd of ncclReduce per rank", out);
}

int tr_nccl_allgatherv(tr_nccl *n, tr_nccl_op **out, const float *send, float *packed, const int *counts,
                       const int *displs, const char *name)
{
    tr_nccl_op *op;
    int rc = begin_op(n, &op, name, (size_t)counts[n->rank] * sizeof(float)); /* this rank's part, as dist.c counts */
    if (rc < 0)
        return rc;
    ncclResult_t r = ncclGroupStart();
    for (int root = 0; root < n->size && r == ncclSuccess; root++) {
        if (counts[root] == 0)
            continue;
        /* sendbuff is read on the root only; equal to recvbuff there, in place */
        const float *from = root == n->rank ? send : packed + displs[root];
        r = ncclBroadcast(from, packed + displs[root], (size_t)counts[root], ncclFloat, root, n->comm,
                          n->comm_stream);
    }
    ncclResult_t r_end = ncclGroupEnd();
    return end_op(n, op, r != ncclSuccess ? r : r_end, "ncclGroupEnd of ncclBroadcast per rank", out);
}

/* ---- consuming and accounting ----------------------------------------------------------- */

bool tr_nccl_op_done(const tr_nccl_op *op) { return atomic_load(&op->done_ns) != 0; }

int tr_nccl_op_consume(tr_nccl *n, tr_nccl_op *op)
{
    stall s;
    if (n->n_spare) {
        s = n->spare[--n->n_spare];
    } else {
        CUDA_TRY(cudaEventCreate(&s.before), op->name);
        cudaError_t err = cudaEventCreate(&s.after);
        if (err != cudaSuccess) {
            cudaEventDestroy(s.before);
            return cuda_error(err, "cudaEventCreate", op->name);
        }
    }
    if (n->q_len == n->q_cap) { /* grow the ring, oldest first again */
        int cap = n->q_cap ? 2 * n->q_cap : 64;
        stall *q = malloc((size_t)cap * sizeof *q);
        if (!q) {
            cudaEventDestroy(s.before);
            cudaEventDestroy(s.after);
            return tr_error_set(TR_ENOMEM, "out of host memory for the stream-wait timings");
        }
        for (int i = 0; i < n->q_len; i++)
            q[i] = n->queue[(n->q_head + i) % n->q_cap];
        free(n->queue);
        n->queue = q;
        n->q_head = 0;
        n->q_cap = cap;
    }
    n->queue[(n->q_head + n->q_len++) % n->q_cap] = s;
    op->consumed = true;
    CUDA_TRY(cudaEventRecord(s.before, n->compute), op->name);
    CUDA_TRY(cudaStreamWaitEvent(n->compute, op->done, 0), op->name);
    CUDA_TRY(cudaEventRecord(s.after, n->compute), op->name);
    return TR_OK;
}

/* Whether ev has completed; with wait, waits for it. */
static int event_reached(cudaEvent_t ev, bool wait, bool *reached, const char *what)
{
    cudaError_t err = wait ? cudaEventSynchronize(ev) : cudaEventQuery(ev);
    *reached = err == cudaSuccess;
    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError(); /* not an error: clear it, as PyTorch's CUDAEvent::query does */
        return TR_OK;
    }
    return err == cudaSuccess ? TR_OK : cuda_error(err, "cudaEventQuery", what);
}

int tr_nccl_progress(tr_nccl *n, bool wait)
{
    int rc = TR_OK;
    for (tr_nccl_op *op = n->active, *next; op && rc == TR_OK; op = next) {
        next = op->next;
        bool reached = tr_nccl_op_done(op);
        if (!reached && wait)
            rc = event_reached(op->done, true, &reached, op->name);
        if (!reached || rc < 0)
            continue;
        if (!op->counted) {
            float ms = 0;
            cudaError_t err = cudaEventElapsedTime(&ms, op->started, op->done);
            if (err != cudaSuccess) {
                rc = cuda_error(err, "cudaEventElapsedTime", op->name);
                break;
            }
            n->in_flight_ns += (int64_t)(ms * 1e6);
            op->counted = true;
        }
        /* the host function may still be running when the event is seen
         * reached: recycle only once it has noted the end */
        if (op->consumed && tr_nccl_op_done(op))
            unlink_op(n, op);
    }
    while (n->q_len && rc == TR_OK) { /* stalls complete in stream order */
        stall *s = &n->queue[n->q_head];
        bool reached;
        if ((rc = event_reached(s->after, wait, &reached, "a wait for communication")) < 0 || !reached)
            break;
        float ms = 0;
        cudaError_t err = cudaEventElapsedTime(&ms, s->before, s->after);
        if (err != cudaSuccess) {
            rc = cuda_error(err, "cudaEventElapsedTime", "a wait for communication");
            break;
        }
        n->exposed_ns += (int64_t)(ms * 1e6);
        if (n->n_spare == n->cap_spare) {
            int cap = n->cap_spare ? 2 * n->cap_spare : 64;
            stall *sp = realloc(n->spare, (size_t)cap * sizeof *sp);
            if (!sp)
                return tr_error_set(TR_ENOMEM, "out of host memory for the stream-wait timings");
            n->spare = sp;
            n->cap_spare = cap;
        }
        n->spare[n->n_spare++] = *s;
        n->q_head = (n->q_head + 1) % n->q_cap;
        n->q_len--;
    }
    return rc;
}

void tr_nccl_times(const tr_nccl *n, int64_t *in_flight_ns, int64_t *exposed_ns)
{
    *in_flight_ns = n->in_flight_ns;
    *exposed_ns = n->exposed_ns;
}
