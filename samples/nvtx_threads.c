/* nvtx_threads: N threads, each naming itself and pushing M "outer" ranges
 * with one "inner" range nested in each: 2*N*M push/pop ranges in all. The
 * threads wait for each other and start at once, so that their first events
 * (each takes a buffer then) come together.
 * Usage: nvtx_threads N M */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static int n_ranges;
static pthread_barrier_t start;

static void *worker(void *arg)
{
    pthread_barrier_wait(&start);
    char name[32];
    snprintf(name, sizeof name, "worker-%d", (int)(intptr_t)arg);
    nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), name);
    for (int i = 0; i < n_ranges; i++) {
        nvtxRangePushA("outer");
        nvtxRangePushA("inner");
        nvtxRangePop();
        nvtxRangePop();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: nvtx_threads N_THREADS N_RANGES\n");
        return 2;
    }
    int n_threads = atoi(argv[1]);
    n_ranges = atoi(argv[2]);
    pthread_t *t = calloc((size_t)n_threads, sizeof *t);
    if (!t || n_threads < 1 || pthread_barrier_init(&start, NULL, (unsigned)n_threads) != 0)
        return 1;
    for (int i = 0; i < n_threads; i++)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < n_threads; i++)
        pthread_join(t[i], NULL);
    free(t);
    printf("done %d x %d\n", n_threads, n_ranges);
    return 0;
}
