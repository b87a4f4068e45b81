/* bench_capture: what NVTX costs the traced program.
 *   bench_capture pushpop N          N push+pop pairs on one thread; prints ns per pair
 *   bench_capture rate R S [T]       T threads (default 1) emit R push+pop pairs per
 *                                    second in all, for S seconds; prints what was emitted
 *   bench_capture paced N B          N push+pop pairs in blocks of B, 20 ms apart (the
 *                                    launcher reads between blocks: no drops, a ring in
 *                                    cache); prints the median block's ns per pair
 *   bench_capture threads T          T threads each record 1,000 push+pop pairs and wait;
 *                                    prints the process's resident memory (kB) then
 * Run it plain (NVTX calls are no-ops without a tool) and under gtrace
 * (bench_capture.sh does both and reads the drops back from the trace). */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pushpop(long n)
{
    /* Warm up: the first call initializes NVTX (and loads the tool). */
    for (int i = 0; i < 1000; i++) {
        nvtxRangePushA("warmup");
        nvtxRangePop();
    }
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_s();
        for (long i = 0; i < n; i++) {
            nvtxRangePushA("step");
            nvtxRangePop();
        }
        double dt = now_s() - t0;
        if (dt < best)
            best = dt;
    }
    printf("pushpop pairs %ld best-of-5 %.1f ns/pair\n", n, best * 1e9 / (double)n);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void paced(long n, long block)
{
    for (int i = 0; i < 1000; i++) {
        nvtxRangePushA("warmup");
        nvtxRangePop();
    }
    long n_blocks = block > 0 ? n / block : 0;
    double *per = calloc((size_t)(n_blocks > 0 ? n_blocks : 1), sizeof *per);
    if (!per || n_blocks < 1)
        return;
    for (long b = 0; b < n_blocks; b++) {
        struct timespec gap = {0, 20 * 1000 * 1000};
        nanosleep(&gap, NULL);
        double t0 = now_s();
        for (long i = 0; i < block; i++) {
            nvtxRangePushA("step");
            nvtxRangePop();
        }
        per[b] = (now_s() - t0) * 1e9 / (double)block;
    }
    qsort(per, (size_t)n_blocks, sizeof *per, cmp_double);
    printf("paced pairs %ld blocks %ld median %.1f ns/pair (best %.1f)\n", n_blocks * block, n_blocks,
           per[n_blocks / 2], per[0]);
    free(per);
}

typedef struct worker_arg {
    double rate;   /* pairs per second for this thread */
    double seconds;
    long emitted;
} worker_arg;

static void *rate_worker(void *p)
{
    worker_arg *a = p;
    double t0 = now_s(), end = t0 + a->seconds;
    long n = 0;
    for (;;) {
        double t = now_s();
        if (t >= end)
            break;
        long due = (long)((t - t0) * a->rate);
        for (; n < due; n++) {
            nvtxRangePushA("tick");
            nvtxRangePop();
        }
        struct timespec ts = {0, 200 * 1000};
        nanosleep(&ts, NULL);
    }
    a->emitted = n;
    return NULL;
}

static void rate(double r, double seconds, int n_threads)
{
    pthread_t t[64];
    worker_arg a[64];
    if (n_threads < 1 || n_threads > 64)
        n_threads = 1;
    for (int i = 0; i < n_threads; i++) {
        a[i].rate = r / n_threads;
        a[i].seconds = seconds;
        a[i].emitted = 0;
        pthread_create(&t[i], NULL, rate_worker, &a[i]);
    }
    long total = 0;
    for (int i = 0; i < n_threads; i++) {
        pthread_join(t[i], NULL);
        total += a[i].emitted;
    }
    printf("rate target %.0f pairs/s threads %d emitted %ld pairs in %.1f s\n", r, n_threads, total, seconds);
}

static pthread_barrier_t recorded, done;

static void *resident_worker(void *p)
{
    (void)p;
    for (int i = 0; i < 1000; i++) {
        nvtxRangePushA("resident");
        nvtxRangePop();
    }
    pthread_barrier_wait(&recorded);
    pthread_barrier_wait(&done);
    return NULL;
}

/* VmRSS, RssAnon, RssShmem of this process, in kB. */
static void print_resident(int n_threads)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long rss = -1, anon = -1, shmem = -1;
    while (f && fgets(line, sizeof line, f)) {
        sscanf(line, "VmRSS: %ld", &rss);
        sscanf(line, "RssAnon: %ld", &anon);
        sscanf(line, "RssShmem: %ld", &shmem);
    }
    if (f)
        fclose(f);
    printf("threads %d resident kB %ld (anon %ld, shmem %ld)\n", n_threads, rss, anon, shmem);
}

static void resident(int n_threads)
{
    pthread_t t[1024];
    if (n_threads < 1 || n_threads > 1024)
        n_threads = 1;
    pthread_barrier_init(&recorded, NULL, (unsigned)n_threads + 1);
    pthread_barrier_init(&done, NULL, (unsigned)n_threads + 1);
    for (int i = 0; i < n_threads; i++)
        pthread_create(&t[i], NULL, resident_worker, NULL);
    pthread_barrier_wait(&recorded);
    print_resident(n_threads);
    pthread_barrier_wait(&done);
    for (int i = 0; i < n_threads; i++)
        pthread_join(t[i], NULL);
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "pushpop")) {
        pushpop(atol(argv[2]));
        return 0;
    }
    if (argc >= 4 && !strcmp(argv[1], "paced")) {
        paced(atol(argv[2]), atol(argv[3]));
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "threads")) {
        resident(atoi(argv[2]));
        return 0;
    }
    if (argc >= 4 && !strcmp(argv[1], "rate")) {
        rate(atof(argv[2]), atof(argv[3]), argc > 4 ? atoi(argv[4]) : 1);
        return 0;
    }
    fprintf(stderr, "usage: bench_capture pushpop N | rate PAIRS_PER_S SECONDS [THREADS] | paced N B | threads T\n");
    return 2;
}
