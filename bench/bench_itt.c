/* bench_itt: what gtrace's ITT collector (libtrace/capture/itt.c) costs an
 * op, without torch: this program plays the static part of ITT that
 * libtorch_cpu.so carries (it loads the library INTEL_LIBITTNOTIFY64 names,
 * hands __itt_api_init its table of four functions) and then does per op
 * what torch's ITT callback does: a string handle for the op's name (one of
 * 40 names, in turn), a task begin, a task end.
 *   bench_itt N      N ops, best of 5; prints ns per op
 * Run it under gtrace with INTEL_LIBITTNOTIFY64 set to libgtrace.so. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "itt_abi.h"

static itt_domain *(*domain_create)(const char *);
static itt_string_handle *(*string_handle_create)(const char *);
static void (*task_begin)(const itt_domain *, itt_id, itt_id, itt_string_handle *);
static void (*task_end)(const itt_domain *);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    const char *lib = getenv("INTEL_LIBITTNOTIFY64");
    void *h = lib ? dlopen(lib, RTLD_NOW) : NULL;
    void (*api_init)(itt_global *, int) = NULL;
    if (h)
        *(void **)&api_init = dlsym(h, "__itt_api_init");
    if (!api_init) {
        fprintf(stderr, "bench_itt: no collector (set INTEL_LIBITTNOTIFY64 to libgtrace.so)\n");
        return 1;
    }
    itt_api_info list[] = {
        {"__itt_domain_create", (void **)&domain_create, NULL, NULL, 0},
        {"__itt_string_handle_create", (void **)&string_handle_create, NULL, NULL, 0},
        {"__itt_task_begin", (void **)&task_begin, NULL, NULL, 0},
        {"__itt_task_end", (void **)&task_end, NULL, NULL, 0},
        {NULL, NULL, NULL, NULL, 0},
    };
    itt_global g = {.magic = ITT_MAGIC, .version_major = 3,
                .api_list_ptr = list};
    pthread_mutex_init(&g.mutex, NULL);
    api_init(&g, 0);
    if (!domain_create || !string_handle_create || !task_begin || !task_end) {
        fprintf(stderr, "bench_itt: the collector filled no functions (not under gtrace?)\n");
        return 1;
    }
    const itt_domain *d = domain_create("PyTorch");
    char names[40][32];
    for (int i = 0; i < 40; i++)
        snprintf(names[i], sizeof names[i], "aten::op_number_%d", i);
    itt_id null = {0, 0, 0};
    double best = 1e30;
    for (int rep = 0; rep < 6; rep++) { /* the first: warm-up, names made */
        double t0 = now_s();
        for (long i = 0; i < n; i++) {
            task_begin(d, null, null, string_handle_create(names[i % 40]));
            task_end(d);
        }
        double dt = now_s() - t0;
        if (rep > 0 && dt < best)
            best = dt;
    }
    printf("itt: %.1f ns per op (string handle, task begin and end), %ld ops, best of 5\n", best * 1e9 / n, n);
    return 0;
}
