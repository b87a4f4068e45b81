/* bench_capture: what NVTX costs the traced program.
 *   bench_capture pushpop N          N push+pop pairs on one thread; prints ns per pair
 *   bench_capture rate R S [T]       T threads (default 1) emit R push+pop pairs per
 *                                    second in all, for S seconds; prints what was emitted
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
    if (argc >= 3 && !strcmp(argv[1], "threads")) {
        resident(atoi(argv[2]));
        return 0;
    }
    if (argc >= 4 && !strcmp(argv[1], "rate")) {
        rate(atof(argv[2]), atof(argv[3]), argc > 4 ? atoi(argv[4]) : 1);
        return 0;
    }
    fprintf(stderr, "usage: bench_capture pushpop N | rate PAIRS_PER_S SECONDS [THREADS] | threads T\n");
    return 2;
}
