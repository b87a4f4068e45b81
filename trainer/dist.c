/* dist.c: dist.h over MPI, and over NCCL for device buffers (the
 * transport in dist_nccl.c). Every collective is non-blocking and tracked
 * as a pending operation. MPI: started with an NVTX start/end range,
 * polled by tr_dist_progress, waited for by polling MPI_Test against a
 * deadline (the watchdog), so no wait can hang. NCCL: enqueued on the
 * communication stream; a wait makes the compute stream wait; dist_nccl.c
 * keeps the range, the watchdog and the times. Buckets, shards, packing
 * and unpacking are the same code for both, the data moved by the
 * backend's ops. It does not touch the model or the optimizer. */
#include "config.h"

#include "dist.h"

#include "dist_nccl.h"
#include "error.h"
#include "nvtx.h"

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One collective in flight. */
typedef struct pending {
    MPI_Request req;
    tr_nccl_op *op; /* NCCL: the collective on the communication stream */
    int64_t t0_ns;
    uint64_t nvtx_id;
    bool active, done;
    char name[48];
    struct pending *prev, *next;
} pending;

struct tr_dist {
    MPI_Comm comm;
    int rank, size, local_rank, local_size;
    tr_backend *be;  /* whose buffers the buckets hold (tr_dist_use_backend) */
    tr_nccl *nccl;   /* NULL: MPI carries the buckets */
    double timeout_s;
    bool we_initialized;
    pending *inflight; /* list of started, not yet waited-for operations */
    tr_dist_stats stats;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int mpi_error(int rc, const char *call, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "MPI error %d", rc);
    return tr_error_set(TR_EIO, "%s (%s) failed: %s", call, what, msg);
}

bool tr_dist_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

int tr_dist_init(tr_dist **out, double timeout_s)
{
    *out = NULL;
    if (!(timeout_s > 0))
        return tr_error_set(TR_EINVAL, "--dist-timeout must be positive, got %g", timeout_s);
    tr_dist *d = calloc(1, sizeof *d);
    if (!d)
        return tr_error_set(TR_ENOMEM, "out of host memory for the MPI context");
    int inited = 0, rc, provided;
    MPI_Initialized(&inited);
    if (!inited) {
        if ((rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided)) != MPI_SUCCESS) {
            free(d);
            return tr_error_set(TR_EIO, "MPI_Init_thread failed (%d): was the trainer started by Open MPI's mpirun?",
                                rc);
        }
        d->we_initialized = true;
    }
    /* a private communicator: our errors return codes instead of aborting */
    MPI_Comm_dup(MPI_COMM_WORLD, &d->comm);
    MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(d->comm, &d->rank);
    MPI_Comm_size(d->comm, &d->size);
    MPI_Comm node;
    if (MPI_Comm_split_type(d->comm, MPI_COMM_TYPE_SHARED, d->rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &d->local_rank);
        MPI_Comm_size(node, &d->local_size);
        MPI_Comm_free(&node);
    } else { /* mpirun's own count, else one rank per node */
        const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK"), *ls = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
        d->local_rank = lr ? atoi(lr) : 0;
        d->local_size = ls ? atoi(ls) : 1;
    }
    d->timeout_s = timeout_s;
    *out = d;
    return TR_OK;
}

void tr_dist_free(tr_dist *d)
{
    if (!d)
        return;
#ifdef TR_DIST_NCCL
    tr_nccl_free(d->nccl);
#endif
    MPI_Comm_free(&d->comm);
    int fin = 0;
    MPI_Finalized(&fin);
    if (d->we_initialized && !fin)
        MPI_Finalize();
    free(d);
}

int tr_dist_rank(const tr_dist *d) { return d->rank; }
int tr_dist_size(const tr_dist *d) { return d->size; }
int tr_dist_local_rank(const tr_dist *d) { return d->local_rank; }
int tr_dist_local_size(const tr_dist *d) { return d->local_size; }

void tr_dist_abort(tr_dist *d, int code)
{
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(d ? d->comm : MPI_COMM_WORLD, code);
    exit(code); /* MPI_Abort does not return; this keeps the compiler sure of it */
}

int tr_dist_get_stats(tr_dist *d, tr_dist_stats *out)
{
    *out = d->stats;
#ifdef TR_DIST_NCCL
    if (d->nccl) {
        int rc = tr_nccl_progress(d->nccl, true);
        int64_t in_flight, exposed;
        tr_nccl_times(d->nccl, &in_flight, &exposed);
        out->in_flight_ns += in_flight;
        out->exposed_ns += exposed;
        return rc;
    }
#endif
    return TR_OK;
}

/* ---- pending operations and the watchdog ---------------------------------- */

static void start_pending(tr_dist *d, pending *p, const char *name, size_t bytes)
{
    snprintf(p->name, sizeof p->name, "%s", name);
    p->t0_ns = now_ns();
    p->nvtx_id = p->op ? 0 : tr_nvtx_start_comm(p->name, bytes); /* NCCL's range ends on the GPU's completion */
    p->active = true;
    p->done = false;
    p->prev = NULL;
    p->next = d->inflight;
    if (d->inflight)
        d->inflight->prev = p;
    d->inflight = p;
    d->stats.n_collectives++;
    d->stats.bytes += bytes;
}

static void unlink_pending(tr_dist *d, pending *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else
        d->inflight = p->next;
    if (p->next)
        p->next->prev = p->prev;
    p->active = false;
}

/* One MPI_Test; notes the completion. */
static int poll_pending(tr_dist *d, pending *p)
{
    if (p->done)
        return TR_OK;
#ifdef TR_DIST_NCCL
    if (p->op) { /* dist_nccl.c keeps the times and ends the range */
        p->done = tr_nccl_op_done(p->op);
        return TR_OK;
    }
#endif
    int flag = 0, rc = MPI_Test(&p->req, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        return mpi_error(rc, "MPI_Test", p->name);
    if (flag) {
        p->done = true;
        d->stats.in_flight_ns += now_ns() - p->t0_ns;
        tr_nvtx_end(p->nvtx_id);
    }
    return TR_OK;
}

int tr_dist_progress(tr_dist *d)
{
    for (pending *p = d->inflight; p; p = p->next) {
        int rc = poll_pending(d, p);
        if (rc < 0)
            return rc;
    }
#ifdef TR_DIST_NCCL
    if (d->nccl)
        return tr_nccl_progress(d->nccl, false);
#endif
    return TR_OK;
}

/* Waits for p under the deadline. A collective cannot be cancelled in MPI,
 * so on timeout the only way out that does not hang is MPI_Abort: say which
 * collective stalled on which rank, then stop the job. */
static int wait_pending(tr_dist *d, pending *p)
{
#ifdef TR_DIST_NCCL
    if (p->op) { /* the compute stream waits; dist_nccl.c's watchdog watches */
        int rc = tr_nccl_op_consume(d->nccl, p->op);
        p->op = NULL;
        unlink_pending(d, p);
        return rc;
    }
#endif
    int64_t t0 = now_ns(), deadline = t0 + (int64_t)(d->timeout_s * 1e9);
    long nap_ns = 20000;
    int rc = TR_OK;
    bool pushed = false;
    while (!p->done) {
        if ((rc = poll_pending(d, p)) < 0)
            break;
        if (p->done)
            break;
        if (!pushed) {
            char name[64];
            snprintf(name, sizeof name, "wait %s", p->name);
            tr_nvtx_push(name);
            pushed = true;
        }
        int64_t t = now_ns();
        if (t > deadline) {
            fprintf(stderr,
                    "trainer: rank %d of %d: %s did not complete within %g s: another rank died or stalled "
                    "(--dist-timeout); stopping all ranks\n",
                    d->rank, d->size, p->name, d->timeout_s);
            tr_dist_abort(d, 1);
        }
        /* back off to 1 ms: a rank that shares cores with the others must not spin */
        struct timespec ts = {0, nap_ns};
        nanosleep(&ts, NULL);
        if (nap_ns < 1000000)
            nap_ns *= 2;
    }
    if (pushed)
        tr_nvtx_pop();
    d->stats.exposed_ns += now_ns() - t0;
    unlink_pending(d, p);
    return rc;
}

/* ---- the transport ------------------------------------------------------------ */

int tr_dist_use_backend(tr_dist *d, tr_backend *be)
{
    if (d->be)
        return tr_error_set(TR_EINVAL, "the distributed layer already has a backend (%s)", d->be->name);
    d->be = be;
    if (be->device == TR_CPU)
        return TR_OK; /* MPI on host buffers */
#ifdef TR_DIST_NCCL
    /* rank 0 makes the id and broadcasts it with its status, so a failure
     * there stops every rank instead of leaving them waiting to join */
    struct {
        int ok;
        unsigned char id[TR_NCCL_ID_BYTES];
    } msg = {0};
    int rc = TR_OK;
    if (d->rank == 0)
        msg.ok = (rc = tr_nccl_make_id(msg.id)) == TR_OK;
    pending p = {0};
    int mpi = MPI_Ibcast(&msg, (int)sizeof msg, MPI_BYTE, 0, d->comm, &p.req);
    if (mpi != MPI_SUCCESS)
        return mpi_error(mpi, "MPI_Ibcast", "the NCCL id");
    start_pending(d, &p, "broadcast NCCL id", sizeof msg);
    int rc_wait = wait_pending(d, &p);
    if (rc < 0 || rc_wait < 0)
        return rc < 0 ? rc : rc_wait;
    if (!msg.ok)
        return tr_error_set(TR_EIO, "rank 0 could not make the NCCL communicator's id (see its message)");
    return tr_nccl_new(&d->nccl, be, d->rank, d->size, msg.id, d->timeout_s);
#else
    return tr_error_set(TR_EINVAL, "--dist on --backend %s needs NCCL, and this trainer was built without it "
                        "(configure found no nccl.h/libnccl in the CUDA toolkit)", be->name);
#endif
}

const char *tr_dist_transport(const tr_dist *d)
{
#ifdef TR_DIST_NCCL
    if (d->nccl)
        return tr_nccl_describe(d->nccl);
#endif
    return "MPI";
}

/* Data moves through the backend's ops, so on a GPU they are queued on its
 * compute stream, and on the CPU they are the plain loops they were. */
static int need_backend(const tr_dist *d, const char *what)
{
    return d->be ? TR_OK : tr_error_set(TR_EINVAL, "%s before tr_dist_use_backend", what);
}

static tr_tensor vec(const tr_dist *d, float *x, size_t n)
{
    return (tr_tensor){x, TR_F32, d->be->device, 1, {(int64_t)n}};
}

static void copy_floats(tr_dist *d, float *dst, const float *src, size_t n)
{
    if (n)
        d->be->copy_h2d(d->be, dst, src, n * sizeof(float), 0); /* device to device on a GPU */
}

static void scale_floats(tr_dist *d, float *x, size_t n, float scale)
{
    if (n && scale != 1.0f) {
        tr_tensor t = vec(d, x, n);
        d->be->scale(d->be, &t, scale);
    }
}

/* dst = src, or dst += src: src holds the reduced values already scaled */
static void put_floats(tr_dist *d, float *dst, float *src, size_t n, bool accumulate)
{
    if (!n)
        return;
    if (!accumulate) {
        copy_floats(d, dst, src, n);
        return;
    }
    tr_tensor t = vec(d, dst, n), u = vec(d, src, n);
    d->be->residual_forward(d->be, &t, &t, &u);
}

/* A collective in flight given up on an error path: the compute stream
 * waits for an NCCL one before its buffers go back to the allocator. */
static void abandon_pending(tr_dist *d, pending *p)
{
#ifdef TR_DIST_NCCL
    if (p->op) {
        tr_nccl_op_consume(d->nccl, p->op);
        p->op = NULL;
    }
#endif
    unlink_pending(d, p);
}

/* ---- small blocking collectives ------------------------------------------- */

int tr_dist_allreduce_sum(tr_dist *d, double *x, int n, const char *what)
{
    pending p = {0};
    int rc = MPI_Iallreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, MPI_SUM, d->comm, &p.req);
    if (rc != MPI_SUCCESS)
        return mpi_error(rc, "MPI_Iallreduce", what);
    start_pending(d, &p, what, (size_t)n * sizeof *x);
    return wait_pending(d, &p);
}

int tr_dist_allreduce_min_int(tr_dist *d, int *x, int n, const char *what)
{
    pending p = {0};
    int rc = MPI_Iallreduce(MPI_IN_PLACE, x, n, MPI_INT, MPI_MIN, d->comm, &p.req);
    if (rc != MPI_SUCCESS)
        return mpi_error(rc, "MPI_Iallreduce", what);
    start_pending(d, &p, what, (size_t)n * sizeof *x);
    return wait_pending(d, &p);
}

int tr_dist_barrier(tr_dist *d, const char *what)
{
    pending p = {0};
    int rc = MPI_Ibarrier(d->comm, &p.req);
    if (rc != MPI_SUCCESS)
        return mpi_error(rc, "MPI_Ibarrier", what);
    start_pending(d, &p, what, 0);
    return wait_pending(d, &p);
}

/* ---- configuration agreement ----------------------------------------------- */

static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull; /* a separator, so "ab","c" != "a","bc" */
}

int tr_dist_agree(tr_dist *d, const tr_dist_setting *settings, int n_settings)
{
    uint64_t h = 14695981039346656037ull;
    for (int i = 0; i < n_settings; i++)
        h = fnv1a(fnv1a(h, settings[i].name), settings[i].value);
    uint64_t mm[2] = {h, ~h}; /* min of h and min of ~h (= ~max h) in one reduction */
    pending p = {0};
    int rc = MPI_Iallreduce(MPI_IN_PLACE, mm, 2, MPI_UINT64_T, MPI_MIN, d->comm, &p.req);
    if (rc != MPI_SUCCESS)
        return mpi_error(rc, "MPI_Iallreduce", "configuration check");
    start_pending(d, &p, "configuration check", sizeof mm);
    if ((rc = wait_pending(d, &p)) < 0)
        return rc;
    if (mm[0] == ~mm[1])
        return TR_OK;

    /* they differ: gather every rank's values to name the first difference */
    int n_all = n_settings * d->size;
    char *all = malloc((size_t)n_all * TR_DIST_VALUE_MAX);
    char *mine = malloc((size_t)n_settings * TR_DIST_VALUE_MAX + 1);
    if (!all || !mine) {
        free(all);
        free(mine);
        return tr_error_set(TR_ENOMEM, "out of host memory for the configuration check");
    }
    for (int i = 0; i < n_settings; i++)
        memcpy(mine + (size_t)i * TR_DIST_VALUE_MAX, settings[i].value, TR_DIST_VALUE_MAX);
    pending q = {0};
    int count = n_settings * TR_DIST_VALUE_MAX;
    rc = MPI_Iallgather(mine, count, MPI_CHAR, all, count, MPI_CHAR, d->comm, &q.req);
    if (rc != MPI_SUCCESS) {
        free(all);
        free(mine);
        return mpi_error(rc, "MPI_Iallgather", "configuration check");
    }
    start_pending(d, &q, "configuration check", (size_t)count);
    rc = wait_pending(d, &q);
    for (int i = 0; rc == TR_OK && i < n_settings; i++) {
        const char *v0 = all + (size_t)i * TR_DIST_VALUE_MAX;
        for (int r = 1; r < d->size; r++) {
            const char *vr = all + ((size_t)r * n_settings + i) * TR_DIST_VALUE_MAX;
            if (strncmp(v0, vr, TR_DIST_VALUE_MAX) != 0) {
                rc = tr_error_set(TR_EINVAL,
                                  "the ranks were started with different configurations: %s is '%.*s' on rank 0 "
                                  "but '%.*s' on rank %d; start every rank with the same flags and data",
                                  settings[i].name, TR_DIST_VALUE_MAX, v0, TR_DIST_VALUE_MAX, vr, r);
                break;
            }
        }
    }
    if (rc == TR_OK) /* equal texts, different hashes: a different number of settings */
        rc = tr_error_set(TR_EINVAL, "the ranks were started with different configurations (different builds?)");
    free(all);
    free(mine);
    return rc;
}

/* ---- shards ----------------------------------------------------------------- */

void tr_dist_shard_range(size_t n, int size, int rank, size_t *begin, size_t *end)
{
    size_t per = (n + (size_t)size - 1) / (size_t)size;
    per = (per + 15) & ~(size_t)15;
    size_t b = (size_t)rank * per;
    *begin = b < n ? b : n;
    *end = b + per < n ? b + per : n;
}

/* Elements of slices that fall in [lo, hi). */
static size_t overlap(const tr_dist_slice *s, int n, size_t lo, size_t hi)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        size_t a = s[i].off > lo ? s[i].off : lo, b = s[i].off + s[i].n < hi ? s[i].off + s[i].n : hi;
        if (a < b)
            total += b - a;
    }
    return total;
}

/* Per-rank element counts of slices (rising, disjoint) and displacements. */
static int rank_counts(const tr_dist *d, size_t n_flat, const tr_dist_slice *s, int n, int *counts, int *displs)
{
    size_t at = 0;
    for (int r = 0; r < d->size; r++) {
        size_t lo, hi;
        tr_dist_shard_range(n_flat, d->size, r, &lo, &hi);
        size_t c = overlap(s, n, lo, hi);
        if (c > (size_t)INT32_MAX || at > (size_t)INT32_MAX)
            return tr_error_set(TR_EINVAL, "a collective of %zu elements is too large for MPI's int counts", at + c);
        counts[r] = (int)c;
        displs[r] = (int)at;
        at += c;
    }
    return TR_OK;
}

/* ---- gradient buckets -------------------------------------------------------- */

typedef struct bucket {
    pending p;
    float *buf;            /* (n) packed slices */
    float *recv;           /* reduce-scatter: (n_recv = counts[rank]) this rank's run */
    size_t n, n_recv;
    tr_dist_slice *slices;
    int n_slices, cap_slices;
    bool started;
    struct bucket *next;
} bucket;

struct tr_dist_grads {
    tr_dist *d;
    tr_alloc *alloc;
    tr_dist_reduce_kind kind;
    size_t n_flat, cap;    /* cap: elements per bucket */
    bucket *head, *tail;   /* in start order; tail may be open */
    int n_started;
    int *counts, *displs;  /* (size) scratch for reduce-scatter */
};

int tr_dist_grads_new(tr_dist_grads **out, tr_dist *d, tr_alloc *alloc, tr_dist_reduce_kind kind, size_t n_flat,
                      size_t bucket_bytes)
{
    *out = NULL;
    int rc = need_backend(d, "gradient buckets");
    if (rc < 0)
        return rc;
    size_t cap = bucket_bytes / sizeof(float);
    if (cap < 1024)
        return tr_error_set(TR_EINVAL, "a bucket of %zu bytes is too small (at least 4 KiB)", bucket_bytes);
    if (cap > (size_t)INT32_MAX / 2)
        cap = (size_t)INT32_MAX / 2; /* MPI counts are ints */
    if (cap > n_flat && n_flat > 0)
        cap = n_flat; /* no bucket needs more than the whole model */
    tr_dist_grads *g = calloc(1, sizeof *g);
    if (!g || !(g->counts = calloc((size_t)d->size * 2, sizeof(int)))) {
        free(g);
        return tr_error_set(TR_ENOMEM, "out of host memory for gradient buckets");
    }
    g->displs = g->counts + d->size;
    g->d = d;
    g->alloc = alloc;
    g->kind = kind;
    g->n_flat = n_flat;
    g->cap = cap;
    *out = g;
    return TR_OK;
}

static void bucket_free(tr_dist_grads *g, bucket *b)
{
    if (b->p.active) /* freed while in flight: only on the error path, before an abort */
        abandon_pending(g->d, &b->p);
    tr_alloc_release(g->alloc, b->buf);
    tr_alloc_release(g->alloc, b->recv);
    free(b->slices);
    free(b);
}

void tr_dist_grads_free(tr_dist_grads *g)
{
    if (!g)
        return;
    for (bucket *b = g->head, *next; b; b = next) {
        next = b->next;
        bucket_free(g, b);
    }
    free(g->counts);
    free(g);
}

int tr_dist_grads_n_started(const tr_dist_grads *g) { return g->n_started; }

static int start_bucket(tr_dist_grads *g, bucket *b)
{
    tr_dist *d = g->d;
    char name[48];
    int rc;
    if (g->kind == TR_DIST_ALLREDUCE) {
        snprintf(name, sizeof name, "allreduce bucket %d", g->n_started);
#ifdef TR_DIST_NCCL
        if (d->nccl) {
            if ((rc = tr_nccl_allreduce(d->nccl, &b->p.op, b->buf, b->n, name)) < 0)
                return rc;
        } else
#endif
        if ((rc = MPI_Iallreduce(MPI_IN_PLACE, b->buf, (int)b->n, MPI_FLOAT, MPI_SUM, d->comm, &b->p.req)) !=
            MPI_SUCCESS)
            return mpi_error(rc, "MPI_Iallreduce", name);
    } else {
        snprintf(name, sizeof name, "reduce-scatter bucket %d", g->n_started);
        if ((rc = rank_counts(d, g->n_flat, b->slices, b->n_slices, g->counts, g->displs)) < 0)
            return rc;
        size_t mine = (size_t)g->counts[d->rank];
        if (mine) {
            if ((rc = tr_alloc_malloc(g->alloc, (void **)&b->recv, mine * sizeof(float), 0)) < 0)
                return rc;
            tr_alloc_name(g->alloc, b->recv, "communication bucket");
        }
        b->n_recv = mine;
#ifdef TR_DIST_NCCL
        if (d->nccl) {
            if ((rc = tr_nccl_reduce_scatterv(d->nccl, &b->p.op, b->buf, b->recv, g->counts, g->displs, name)) < 0)
                return rc;
        } else
#endif
        if ((rc = MPI_Ireduce_scatter(b->buf, b->recv, g->counts, MPI_FLOAT, MPI_SUM, d->comm, &b->p.req)) !=
            MPI_SUCCESS)
            return mpi_error(rc, "MPI_Ireduce_scatter", name);
    }
    start_pending(d, &b->p, name, b->n * sizeof(float));
    b->started = true;
    g->n_started++;
    return TR_OK;
}

int tr_dist_grads_flush(tr_dist_grads *g)
{
    if (g->tail && !g->tail->started && g->tail->n)
        return start_bucket(g, g->tail);
    return TR_OK;
}

static int open_bucket(tr_dist_grads *g)
{
    bucket *b = calloc(1, sizeof *b);
    if (!b)
        return tr_error_set(TR_ENOMEM, "out of host memory for a gradient bucket");
    int rc = tr_alloc_malloc(g->alloc, (void **)&b->buf, g->cap * sizeof(float), 0);
    if (rc < 0) {
        free(b);
        return rc;
    }
    tr_alloc_name(g->alloc, b->buf, "communication bucket");
    if (g->tail)
        g->tail->next = b;
    else
        g->head = b;
    g->tail = b;
    return TR_OK;
}

int tr_dist_grads_add(tr_dist_grads *g, const float *src, size_t off, size_t n)
{
    if (off > g->n_flat || n > g->n_flat - off)
        return tr_error_set(TR_EINVAL, "gradient slice [%zu, %zu) is outside the %zu elements", off, off + n,
                            g->n_flat);
    int rc;
    while (n > 0) {
        bucket *b = g->tail;
        if (b && !b->started && g->kind == TR_DIST_REDUCE_SCATTER && b->n_slices) {
            const tr_dist_slice *last = &b->slices[b->n_slices - 1];
            if (off < last->off + last->n) { /* runs must rise: close this bucket */
                if ((rc = start_bucket(g, b)) < 0)
                    return rc;
                b = NULL;
            }
        }
        if (!b || b->started) {
            if ((rc = open_bucket(g)) < 0)
                return rc;
            b = g->tail;
        }
        size_t take = g->cap - b->n < n ? g->cap - b->n : n;
        copy_floats(g->d, b->buf + b->n, src, take);
        tr_dist_slice *last = b->n_slices ? &b->slices[b->n_slices - 1] : NULL;
        if (last && last->off + last->n == off) {
            last->n += take; /* contiguous with the previous slice */
        } else {
            if (b->n_slices == b->cap_slices) {
                int cap = b->cap_slices ? 2 * b->cap_slices : 16;
                tr_dist_slice *s = realloc(b->slices, (size_t)cap * sizeof *s);
                if (!s)
                    return tr_error_set(TR_ENOMEM, "out of host memory for a bucket's slice list");
                b->slices = s;
                b->cap_slices = cap;
            }
            b->slices[b->n_slices++] = (tr_dist_slice){off, take};
        }
        b->n += take;
        src += take;
        off += take;
        n -= take;
        if (b->n == g->cap && (rc = start_bucket(g, b)) < 0)
            return rc;
    }
    return TR_OK;
}

/* The reduced run scaled in place once, then put slice by slice: on the
 * CPU bitwise what dst = src * scale (or dst += src * scale) gives. */
static void unpack(tr_dist_grads *g, bucket *b, float *dst, size_t dst_off, float scale, bool accumulate)
{
    tr_dist *d = g->d;
    size_t lo, hi, at = 0;
    tr_dist_shard_range(g->n_flat, d->size, d->rank, &lo, &hi);
    float *run = g->kind == TR_DIST_ALLREDUCE ? b->buf : b->recv;
    scale_floats(d, run, g->kind == TR_DIST_ALLREDUCE ? b->n : b->n_recv, scale);
    for (int i = 0; i < b->n_slices; i++) {
        const tr_dist_slice *s = &b->slices[i];
        if (g->kind == TR_DIST_ALLREDUCE) {
            put_floats(d, dst + (s->off - dst_off), run + at, s->n, accumulate);
            at += s->n;
            continue;
        }
        /* reduce-scatter: this rank's run holds its parts of the slices, in order */
        size_t a = s->off > lo ? s->off : lo, e = s->off + s->n < hi ? s->off + s->n : hi;
        if (a < e) {
            put_floats(d, dst + (a - dst_off), run + at, e - a, accumulate);
            at += e - a;
        }
    }
}

int tr_dist_grads_drain(tr_dist_grads *g, float *dst, size_t dst_off, float scale, bool accumulate, int keep)
{
    int n_started = 0, rc = TR_OK;
    for (bucket *b = g->head; b && b->started; b = b->next)
        n_started++;
    while (n_started > keep) {
        bucket *b = g->head;
        if ((rc = wait_pending(g->d, &b->p)) < 0)
            return rc;
        unpack(g, b, dst, dst_off, scale, accumulate);
        g->head = b->next;
        if (!g->head)
            g->tail = NULL;
        bucket_free(g, b);
        n_started--;
    }
    return rc;
}

int tr_dist_grads_finish(tr_dist_grads *g, float *dst, size_t dst_off, float scale, bool accumulate)
{
    int rc = tr_dist_grads_flush(g);
    if (rc == TR_OK)
        rc = tr_dist_grads_drain(g, dst, dst_off, scale, accumulate, 0);
    /* what is left: an open bucket that never got a slice */
    for (bucket *b = g->head, *next; b; b = next) {
        next = b->next;
        bucket_free(g, b);
    }
    g->head = g->tail = NULL;
    g->n_started = 0;
    return rc;
}

/* ---- all-gather --------------------------------------------------------------- */

struct tr_dist_gather {
    tr_dist *d;
    tr_alloc *alloc;
    pending p;
    float *send; /* packed parts of this rank's shard; NULL when sent in place */
    int *counts, *displs;
};

int tr_dist_gather_start(tr_dist_gather **out, tr_dist *d, tr_alloc *alloc, size_t n_flat, const tr_dist_slice *slices,
                         int n_slices, const float *shard, size_t shard_off, float *packed, const char *name)
{
    *out = NULL;
    int rc = need_backend(d, name);
    if (rc < 0)
        return rc;
    for (int i = 0; i < n_slices; i++)
        if (slices[i].off > n_flat || slices[i].n > n_flat - slices[i].off ||
            (i && slices[i].off < slices[i - 1].off + slices[i - 1].n))
            return tr_error_set(TR_EINVAL, "%s: slice %d [%zu, %zu) is outside the %zu elements or not rising", name,
                                i, slices[i].off, slices[i].off + slices[i].n, n_flat);
    tr_dist_gather *g = calloc(1, sizeof *g);
    if (!g || !(g->counts = calloc((size_t)d->size * 2, sizeof(int)))) {
        free(g);
        return tr_error_set(TR_ENOMEM, "out of host memory for %s", name);
    }
    g->displs = g->counts + d->size;
    g->d = d;
    g->alloc = alloc;
    rc = rank_counts(d, n_flat, slices, n_slices, g->counts, g->displs);
    size_t lo, hi, mine = rc == TR_OK ? (size_t)g->counts[d->rank] : 0;
    tr_dist_shard_range(n_flat, d->size, d->rank, &lo, &hi);
    /* in place when this rank's run already sits where it belongs in packed */
    const float *first = NULL;
    size_t n_runs = 0;
    for (int i = 0; i < n_slices; i++) {
        size_t a = slices[i].off > lo ? slices[i].off : lo, e = slices[i].off + slices[i].n < hi ? slices[i].off + slices[i].n : hi;
        if (a < e && n_runs++ == 0)
            first = shard + (a - shard_off);
    }
    bool in_place = rc == TR_OK && (mine == 0 || (n_runs == 1 && first == packed + g->displs[d->rank]));
    if (rc == TR_OK && !in_place) {
        if ((rc = tr_alloc_malloc(alloc, (void **)&g->send, mine * sizeof(float), 0)) == TR_OK) {
            tr_alloc_name(alloc, g->send, "communication bucket");
            size_t at = 0;
            for (int i = 0; i < n_slices; i++) {
                size_t a = slices[i].off > lo ? slices[i].off : lo;
                size_t e = slices[i].off + slices[i].n < hi ? slices[i].off + slices[i].n : hi;
                if (a < e) {
                    copy_floats(d, g->send + at, shard + (a - shard_off), e - a);
                    at += e - a;
                }
            }
        }
    }
#ifdef TR_DIST_NCCL
    if (rc == TR_OK && d->nccl) {
        rc = tr_nccl_allgatherv(d->nccl, &g->p.op, in_place ? packed + g->displs[d->rank] : g->send, packed,
                                g->counts, g->displs, name);
    } else
#endif
    if (rc == TR_OK) {
        int mpi = in_place ? MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, packed, g->counts, g->displs,
                                             MPI_FLOAT, d->comm, &g->p.req)
                           : MPI_Iallgatherv(g->send, (int)mine, MPI_FLOAT, packed, g->counts, g->displs, MPI_FLOAT,
                                             d->comm, &g->p.req);
        if (mpi != MPI_SUCCESS)
            rc = mpi_error(mpi, "MPI_Iallgatherv", name);
    }
    if (rc < 0) {
        tr_alloc_release(alloc, g->send);
        free(g->counts);
        free(g);
        return rc;
    }
    start_pending(d, &g->p, name, mine * sizeof(float));
    *out = g;
    return TR_OK;
}

int tr_dist_gather_wait(tr_dist_gather *g)
{
    if (!g)
        return TR_OK;
    int rc = wait_pending(g->d, &g->p);
    tr_alloc_release(g->alloc, g->send);
    free(g->counts);
    free(g);
    return rc;
}

/* ---- gathering shards to one rank ----------------------------------------------- */

int tr_dist_gather_shards(tr_dist *d, const float *shard, size_t n_flat, float *full, int root, const char *what)
{
    if (n_flat > (size_t)INT32_MAX)
        return tr_error_set(TR_EINVAL, "%s: %zu elements is too many for MPI's int counts", what, n_flat);
    if (root < 0 || root >= d->size)
        return tr_error_set(TR_EINVAL, "%s: no rank %d among %d", what, root, d->size);
    int *counts = NULL, *displs = NULL;
    if (d->rank == root) {
        if (!(counts = calloc((size_t)d->size * 2, sizeof(int))))
            return tr_error_set(TR_ENOMEM, "out of host memory for %s", what);
        displs = counts + d->size;
        for (int r = 0; r < d->size; r++) {
            size_t lo, hi;
            tr_dist_shard_range(n_flat, d->size, r, &lo, &hi);
            counts[r] = (int)(hi - lo);
            displs[r] = (int)lo;
        }
    }
    size_t lo, hi;
    tr_dist_shard_range(n_flat, d->size, d->rank, &lo, &hi);
    pending p = {0};
    int rc = MPI_Igatherv(shard, (int)(hi - lo), MPI_FLOAT, full, counts, displs, MPI_FLOAT, root, d->comm, &p.req);
    if (rc != MPI_SUCCESS) {
        free(counts);
        return mpi_error(rc, "MPI_Igatherv", what);
    }
    start_pending(d, &p, what, (hi - lo) * sizeof(float));
    rc = wait_pending(d, &p);
    free(counts);
    return rc;
}

/* ---- memory accounting ---------------------------------------------------------- */

double tr_dist_expected_bytes(const tr_dist_state_buffer *bufs, int n_bufs, size_t n_params, int stage, int size)
{
    double total = 0;
    for (int i = 0; i < n_bufs; i++) {
        double b = bufs[i].bytes_per_param * (double)n_params;
        total += bufs[i].shard_stage > 0 && stage >= bufs[i].shard_stage ? b / size : b;
    }
    return total;
}

double tr_dist_zero_paper_bytes(size_t n_params, int stage, int size)
{
    double psi = (double)n_params, n = size;
    switch (stage) {
    case 0: return 16 * psi;
    case 1: return 4 * psi + 12 * psi / n;
    case 2: return 2 * psi + 14 * psi / n;
    default: return 16 * psi / n;
    }
}
