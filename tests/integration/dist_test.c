/* dist_test.c: the pieces of trainer/dist.c under mpirun (dist_mpi.sh runs
 * it with 2 and 4 ranks). Values are small integers, so every sum is exact
 * whatever order MPI or NCCL adds in, and a check can compare bits.
 *   dist_test          shards, agreement, bucketed all-reduce and
 *                      reduce-scatter, all-gather, small reductions, memory
 *                      accounting; prints "ok" per check, exits 1 on a failure
 *   dist_test stall S  rank 1 sleeps S seconds before a barrier that the
 *                      others wait for under a 2 s watchdog (dist_watchdog.sh)
 * With NCCL built in (tests/gpu/dist_nccl.sh, on a GPU; 77 without one):
 *   dist_test --backend cuda  the same checks on device buffers through NCCL,
 *                      each rank on the GPU of its index on its node
 *   dist_test nccl-stall S  the compute stream is held S seconds (a host
 *                      function) before an all-reduce that must finish under
 *                      a 2 s watchdog: NCCL's watchdog must stop the rank */
#include "config.h"

#include "alloc.h"
#include "backend.h"
#include "dist.h"
#include "error.h"
#ifdef TR_DIST_NCCL
#include "backend_cuda.h"

#include <cuda_runtime_api.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size, n_failed, n_failed_reported;
static tr_backend *be; /* the buffers handed to dist.c live on its device */

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "rank %d: FAIL %s:%d: ", rank, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fprintf(stderr, "\n");                                         \
            n_failed++;                                                    \
        }                                                                  \
    } while (0)

static void ok(const char *what)
{
    if (rank == 0 && n_failed == n_failed_reported)
        printf("ok: %s (%d ranks, %s)\n", what, size, be->name);
    n_failed_reported = n_failed;
}

/* A device copy of n host floats, from the caching allocator. */
static float *device_copy(tr_alloc *a, const float *host, size_t n)
{
    float *p;
    tr_check(tr_alloc_malloc(a, (void **)&p, (n ? n : 1) * sizeof *p, 0));
    if (n)
        be->copy_h2d(be, p, host, n * sizeof *p, 0);
    return p;
}

static void to_host(float *host, const float *dev, size_t n)
{
    if (n)
        be->copy_d2h(be, host, dev, n * sizeof *host, 0); /* waits for the device */
}

/* Rank r's gradient value of element i: small integers, exact in sums. */
static float grad_of(int r, size_t i) { return (float)((int)((i * 7 + (size_t)r * 3) % 17) - 8); }

static float mean_of(size_t i)
{
    float s = 0;
    for (int r = 0; r < size; r++)
        s += grad_of(r, i);
    return s / (float)size; /* size is 2 or 4: exact */
}

static void test_shards(void)
{
    size_t sizes[] = {0, 1, 15, 16, 17, 1000, 12345, 1 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k], at = 0;
        for (int r = 0; r < size; r++) {
            size_t b, e;
            tr_dist_shard_range(n, size, r, &b, &e);
            CHECK(b == at, "n=%zu: rank %d's shard starts at %zu, not where rank %d's ended (%zu)", n, r, b, r - 1, at);
            CHECK(e >= b && (b % 16 == 0 || b == n), "n=%zu: rank %d's shard [%zu, %zu) is misaligned", n, r, b, e);
            CHECK(e - b <= (n + (size_t)size - 1) / (size_t)size + 15, "n=%zu: rank %d's shard is unbalanced", n, r);
            at = e;
        }
        CHECK(at == n, "n=%zu: shards cover %zu elements", n, at);
    }
    ok("shard ranges tile the buffer");
}

static void test_agree(tr_dist *d)
{
    tr_dist_setting s[3] = {{.name = "--model"}, {.name = "--batch"}, {.name = "parameters"}};
    snprintf(s[0].value, sizeof s[0].value, "gpt-tiny");
    snprintf(s[1].value, sizeof s[1].value, "8");
    snprintf(s[2].value, sizeof s[2].value, "%d", 123456);
    CHECK(tr_dist_agree(d, s, 3) == TR_OK, "equal settings refused: %s", tr_error_last());
    /* the last rank differs in --batch: every rank must refuse and name it */
    if (rank == size - 1)
        snprintf(s[1].value, sizeof s[1].value, "4");
    int rc = tr_dist_agree(d, s, 3);
    CHECK(rc == TR_EINVAL, "different --batch accepted (rc %d)", rc);
    CHECK(strstr(tr_error_last(), "--batch") && strstr(tr_error_last(), "'8' on rank 0") &&
              strstr(tr_error_last(), "'4' on rank"),
          "the message does not name --batch and its values: %s", tr_error_last());
    if (rank == 0)
        printf("    %s\n", tr_error_last());
    ok("configuration agreement");
}

/* The flat buffer as backward produces it: slices in falling order of
 * blocks, rising inside a block, of odd sizes, over several buckets. */
static const tr_dist_slice pieces[] = {{9000, 700}, {9800, 133}, {5000, 2500}, {7600, 1},
                                       {100, 3000}, {3100, 1900}, {0, 100}};
#define N_FLAT 10000
#define N_PIECES ((int)(sizeof pieces / sizeof *pieces))

static void test_reduce(tr_dist *d, tr_alloc *a, tr_dist_reduce_kind kind, size_t bucket_bytes)
{
    const char *what = kind == TR_DIST_ALLREDUCE ? "all-reduce" : "reduce-scatter";
    float *grads = malloc(N_FLAT * sizeof *grads), *out = malloc(N_FLAT * sizeof *out);
    for (size_t i = 0; i < N_FLAT; i++)
        grads[i] = grad_of(rank, i);
    float *grads_dev = device_copy(a, grads, N_FLAT), *out_dev = device_copy(a, grads, N_FLAT);
    tr_dist_grads *g;
    tr_check(tr_dist_grads_new(&g, d, a, kind, N_FLAT, bucket_bytes));
    for (int round = 0; round < 2; round++) { /* the second round reuses the cached buffers */
        for (size_t i = 0; i < N_FLAT; i++)
            out[i] = -1000;
        be->copy_h2d(be, out_dev, out, N_FLAT * sizeof *out, 0);
        for (int k = 0; k < N_PIECES; k++) {
            tr_check(tr_dist_grads_add(g, grads_dev + pieces[k].off, pieces[k].off, pieces[k].n));
            tr_check(tr_dist_progress(d));
        }
        int n_started = tr_dist_grads_n_started(g);
        size_t lo = 0, hi = N_FLAT;
        if (kind == TR_DIST_REDUCE_SCATTER)
            tr_dist_shard_range(N_FLAT, size, rank, &lo, &hi);
        /* dst holds [lo, hi) only: dst[i - lo] is element i */
        tr_check(tr_dist_grads_finish(g, out_dev + lo, lo, 1.0f / (float)size, false));
        to_host(out, out_dev, N_FLAT);
        size_t total = 0;
        for (int k = 0; k < N_PIECES; k++)
            total += pieces[k].n;
        /* every full bucket goes out during "backward", before finish */
        CHECK(n_started >= (int)(total * sizeof(float) / bucket_bytes), "%s: only %d buckets started before finish",
              what, n_started);
        int bad = 0;
        for (size_t i = 0; i < N_FLAT; i++) {
            bool added = !(i >= 7500 && i < 7600) && !(i >= 7601 && i < 9000) && i < 9933 && !(i >= 9700 && i < 9800);
            float want = added && i >= lo && i < hi ? mean_of(i) : -1000;
            if (out[i] != want && bad++ < 3)
                CHECK(0, "%s round %d: element %zu is %g, expected %g", what, round, i, out[i], want);
        }
        CHECK(bad == 0, "%s: %d elements wrong", what, bad);
    }
    /* accumulate: the reduced mean added on top */
    size_t lo = 0, hi = N_FLAT;
    if (kind == TR_DIST_REDUCE_SCATTER)
        tr_dist_shard_range(N_FLAT, size, rank, &lo, &hi);
    for (size_t i = 0; i < N_FLAT; i++)
        out[i] = 1;
    be->copy_h2d(be, out_dev, out, N_FLAT * sizeof *out, 0);
    tr_check(tr_dist_grads_add(g, grads_dev, 0, N_FLAT));
    tr_check(tr_dist_grads_finish(g, out_dev + lo, lo, 1.0f / (float)size, true));
    to_host(out, out_dev, N_FLAT);
    int bad = 0;
    for (size_t i = 0; i < N_FLAT; i++) {
        float want = i >= lo && i < hi ? 1 + mean_of(i) : 1;
        bad += out[i] != want;
    }
    CHECK(bad == 0, "%s with accumulate: %d elements wrong", what, bad);
    tr_dist_grads_free(g);
    tr_alloc_release(a, grads_dev);
    tr_alloc_release(a, out_dev);
    free(grads);
    free(out);
    char line[96];
    snprintf(line, sizeof line, "bucketed %s, %zu-byte buckets", what, bucket_bytes);
    ok(line);
}

static void test_gather(tr_dist *d, tr_alloc *a)
{
    size_t lo, hi;
    tr_dist_shard_range(N_FLAT, size, rank, &lo, &hi);
    float *shard = malloc((hi - lo + 1) * sizeof *shard);
    for (size_t i = lo; i < hi; i++)
        shard[i - lo] = (float)i * 0.5f;
    /* a block's slices: spread over the buffer, so several ranks own parts */
    tr_dist_slice block[] = {{10, 20}, {2400, 300}, {4990, 3000}, {9990, 10}};
    size_t n_packed = 0;
    for (int k = 0; k < 4; k++)
        n_packed += block[k].n;
    float *packed = malloc(n_packed * sizeof *packed);
    float *shard_dev = device_copy(a, shard, hi - lo), *packed_dev;
    tr_check(tr_alloc_malloc(a, (void **)&packed_dev, n_packed * sizeof *packed_dev, 0));
    tr_dist_gather *g;
    tr_check(tr_dist_gather_start(&g, d, a, N_FLAT, block, 4, shard_dev, lo, packed_dev, "all-gather block 0"));
    tr_check(tr_dist_gather_wait(g));
    to_host(packed, packed_dev, n_packed);
    size_t at = 0;
    int bad = 0;
    for (int k = 0; k < 4; k++)
        for (size_t i = block[k].off; i < block[k].off + block[k].n; i++)
            bad += packed[at++] != (float)i * 0.5f;
    CHECK(bad == 0, "gathered block: %d elements wrong", bad);

    /* the whole buffer, in place: each rank's shard already sits in it */
    float *full = malloc(N_FLAT * sizeof *full);
    for (size_t i = 0; i < N_FLAT; i++)
        full[i] = i >= lo && i < hi ? (float)i * 0.5f : -1;
    tr_dist_slice all = {0, N_FLAT};
    float *full_dev = device_copy(a, full, N_FLAT);
    tr_check(tr_dist_gather_start(&g, d, a, N_FLAT, &all, 1, full_dev + lo, lo, full_dev, "all-gather parameters"));
    tr_check(tr_dist_gather_wait(g));
    to_host(full, full_dev, N_FLAT);
    bad = 0;
    for (size_t i = 0; i < N_FLAT; i++)
        bad += full[i] != (float)i * 0.5f;
    CHECK(bad == 0, "in-place gather of the whole buffer: %d elements wrong", bad);
    /* slices that fall, or leave the buffer, are refused */
    tr_dist_slice falling[] = {{100, 10}, {50, 10}};
    CHECK(tr_dist_gather_start(&g, d, a, N_FLAT, falling, 2, shard_dev, lo, packed_dev, "bad") == TR_EINVAL,
          "falling slices accepted");
    tr_dist_slice outside = {N_FLAT - 5, 10};
    CHECK(tr_dist_gather_start(&g, d, a, N_FLAT, &outside, 1, shard_dev, lo, packed_dev, "bad") == TR_EINVAL,
          "a slice past the end accepted");
    CHECK(tr_dist_grads_new(&(tr_dist_grads *){0}, d, a, TR_DIST_ALLREDUCE, N_FLAT, 100) == TR_EINVAL,
          "a 100-byte bucket accepted");
    tr_alloc_release(a, full_dev);
    tr_alloc_release(a, packed_dev);
    tr_alloc_release(a, shard_dev);
    free(full);
    free(packed);
    free(shard);
    ok("all-gather of block slices and of the whole buffer in place");
}

static void test_small(tr_dist *d)
{
    double x[2] = {rank + 1.0, 0.25};
    tr_check(tr_dist_allreduce_sum(d, x, 2, "loss"));
    CHECK(x[0] == size * (size + 1) / 2.0 && x[1] == 0.25 * size, "sum: %g %g", x[0], x[1]);
    int f = rank == size - 1 ? 0 : 1;
    tr_check(tr_dist_allreduce_min_int(d, &f, 1, "finite"));
    CHECK(f == 0, "min of the finite flags is %d", f);
    tr_check(tr_dist_barrier(d, "barrier"));
    tr_dist_stats st;
    tr_check(tr_dist_get_stats(d, &st));
    CHECK(st.n_collectives >= 3 && st.bytes > 0, "stats count %llu collectives", (unsigned long long)st.n_collectives);
    ok("small all-reduces and the statistics");
}

static void test_memory(void)
{
    /* the paper's mixed-precision Adam as buffers must give its closed forms */
    const tr_dist_state_buffer paper[] = {
        {"fp16 parameters", 2, 3}, {"fp16 gradients", 2, 2}, {"fp32 parameters, m, v", 12, 1}};
    size_t psi = 7500000000ull; /* the paper's example: 7.5B parameters, 64 ranks */
    for (int stage = 0; stage <= 3; stage++) {
        double a = tr_dist_expected_bytes(paper, 3, psi, stage, 64), b = tr_dist_zero_paper_bytes(psi, stage, 64);
        CHECK(a == b, "stage %d: %g from the buffers, %g from the formula", stage, a, b);
    }
    /* the paper's figures (GB): 120, 31.4, 16.6, 1.88 */
    CHECK((long)(tr_dist_zero_paper_bytes(psi, 0, 64) / 1e8) == 1200, "DDP: 120 GB");
    CHECK((long)(tr_dist_zero_paper_bytes(psi, 1, 64) / 1e8) == 314, "ZeRO-1: 31.4 GB");
    CHECK((long)(tr_dist_zero_paper_bytes(psi, 2, 64) / 1e8) == 166, "ZeRO-2: 16.6 GB");
    CHECK((long)(tr_dist_zero_paper_bytes(psi, 3, 64) / 1e7) == 187, "ZeRO-3: 1.88 GB");
    ok("ZeRO memory accounting");
}

#ifdef TR_DIST_NCCL
static unsigned hold_seconds;
static void CUDART_CB hold_stream(void *unused)
{
    (void)unused;
    sleep(hold_seconds);
}
#endif

/* The CUDA backend on the GPU of this rank's index on its node; exits 77
 * (skipped) on a machine without a GPU. */
static tr_backend *cuda_backend(tr_dist *d)
{
#ifdef TR_DIST_NCCL
    tr_backend *cuda;
    if (tr_backend_cuda_new(&cuda, &(tr_cuda_options){.device = tr_dist_local_rank(d)}) < 0) {
        printf("skip: rank %d: %s\n", rank, tr_error_last());
        tr_dist_free(d);
        exit(77);
    }
    return cuda;
#else
    (void)d;
    fprintf(stderr, "dist_test: built without NCCL: no --backend cuda\n");
    exit(2);
#endif
}

/* nccl-stall S: the compute stream held S seconds, then an all-reduce that
 * must complete within 2 s; the watchdog must stop the process first. */
static int nccl_stall(tr_dist *d, unsigned seconds)
{
#ifdef TR_DIST_NCCL
    tr_alloc *a;
    tr_check(tr_alloc_new(&a, &be->mem, 0));
    tr_check(tr_dist_use_backend(d, be));
    float ones[1024];
    for (int i = 0; i < 1024; i++)
        ones[i] = 1;
    float *x = device_copy(a, ones, 1024), *y = device_copy(a, ones, 1024);
    int device;
    void *compute = be->compute_stream(be, &device);
    hold_seconds = seconds;
    if (cudaLaunchHostFunc((cudaStream_t)compute, hold_stream, NULL) != cudaSuccess) {
        fprintf(stderr, "dist_test: cudaLaunchHostFunc failed\n");
        return 1;
    }
    tr_dist_grads *g;
    tr_check(tr_dist_grads_new(&g, d, a, TR_DIST_ALLREDUCE, 1024, 4096));
    tr_check(tr_dist_grads_add(g, x, 0, 1024));
    tr_check(tr_dist_grads_finish(g, y, 0, 1.0f, false));
    to_host(ones, y, 1024); /* waits behind the held stream: the watchdog fires first */
    printf("rank %d: the all-reduce completed\n", rank);
    return 0;
#else
    (void)d;
    (void)seconds;
    fprintf(stderr, "dist_test: built without NCCL: no nccl-stall\n");
    return 2;
#endif
}

int main(int argc, char **argv)
{
    bool stall = argc == 3 && !strcmp(argv[1], "stall");
    bool nccl_stall_mode = argc == 3 && !strcmp(argv[1], "nccl-stall");
    bool cuda = argc == 3 && !strcmp(argv[1], "--backend") && !strcmp(argv[2], "cuda");
    if (argc > 1 && !stall && !nccl_stall_mode && !cuda) {
        fprintf(stderr, "usage: dist_test [stall S | nccl-stall S | --backend cuda]\n");
        return 2;
    }
    tr_dist *d;
    tr_check(tr_dist_init(&d, stall || nccl_stall_mode ? 2.0 : 60.0));
    rank = tr_dist_rank(d);
    size = tr_dist_size(d);
    if (stall) {
        if (rank == 1)
            sleep((unsigned)atoi(argv[2])); /* a rank that stalls */
        tr_check(tr_dist_barrier(d, "barrier after the stall"));
        printf("rank %d: passed the barrier\n", rank);
        tr_dist_free(d);
        return 0;
    }
    be = cuda || nccl_stall_mode ? cuda_backend(d) : tr_backend_cpu(1);
    if (nccl_stall_mode)
        return nccl_stall(d, (unsigned)atoi(argv[2]));
    tr_alloc *a;
    tr_check(tr_alloc_new(&a, &be->mem, 0));
    tr_check(tr_dist_use_backend(d, be));
    if (rank == 0)
        printf("dist_test: %d ranks, %s buffers, collectives over %s\n", size, be->name, tr_dist_transport(d));
    test_shards();
    if (size > 1) /* it makes the last rank disagree with rank 0 */
        test_agree(d);
    else
        printf("skip: configuration agreement needs 2 ranks\n");
    test_reduce(d, a, TR_DIST_ALLREDUCE, 4096);
    test_reduce(d, a, TR_DIST_ALLREDUCE, 1 << 20);
    test_reduce(d, a, TR_DIST_REDUCE_SCATTER, 4096);
    test_reduce(d, a, TR_DIST_REDUCE_SCATTER, 1 << 20);
    test_gather(d, a);
    test_small(d);
    test_memory();
    tr_alloc_stats st;
    tr_alloc_get_stats(a, &st);
    CHECK(st.n_live_blocks == 0, "%zu blocks of the caching allocator leaked", st.n_live_blocks);
    int worst = -n_failed; /* every rank fails if one did */
    tr_check(tr_dist_allreduce_min_int(d, &worst, 1, "result"));
    int failed = n_failed ? n_failed : -worst;
    tr_alloc_free(a);
#ifdef TR_DIST_NCCL
    if (be->device == TR_CUDA)
        tr_backend_cuda_free(be);
#endif
    tr_dist_free(d);
    if (failed)
        fprintf(stderr, "rank %d: %d check(s) failed\n", rank, failed);
    return failed ? 1 : 0;
}
