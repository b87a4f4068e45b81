/* memlimit.c: the caching allocator's capacity under RLIMIT_AS or
 * RLIMIT_DATA (memlimit.h), from the model's size, the thread count and
 * what the process maps already (/proc/self/statm). */
#include "memlimit.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* OpenBLAS maps one buffer per thread that calls a GEMM, at its first call,
 * and keeps it: BUFFER_SIZE (128 MiB on x86_64) and a page. When that fails
 * it retries without end (0.3.21's blas_memory_alloc spins), so a run under
 * a limit that leaves no room for the buffers would hang in its first
 * matrix product. Each thread also takes a stack and a malloc arena. */
#define BLAS_BUFFER_BYTES (((size_t)128 << 20) + 4096)
#define THREAD_BYTES ((size_t)72 << 20) /* an 8 MiB stack and a 64 MiB malloc arena */
#define SLACK_BYTES ((size_t)64 << 20)  /* small allocations outside the caching allocator */

/* The parameters tr_gpt_new allocates (llm.c's count, wte's padding rows included). */
static size_t param_count(const tr_gpt_config *c)
{
    size_t C = (size_t)c->channels, L = (size_t)c->n_layers;
    return (size_t)c->padded_vocab_size * C + (size_t)c->max_seq_len * C + L * (12 * C * C + 13 * C) + 2 * C;
}

/* Field k of /proc/self/statm (0: all mappings, 5: data and stack), in bytes; 0 if unknown. */
static size_t statm_bytes(int k)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long v[7] = {0};
    if (f) {
        if (fscanf(f, "%llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) != 7)
            v[k] = 0;
        fclose(f);
    }
    return (size_t)v[k] * (size_t)sysconf(_SC_PAGESIZE);
}

static double gib(double bytes) { return bytes / 1073741824.0; }

/* The limits that count OpenBLAS's buffers: the address space, and since
 * Linux 4.7 the data size (private writable mappings). */
static const struct mem_rlimit {
    int resource;
    const char *name, *shell; /* the limit, and how a shell sets it */
    int statm_field;          /* what the limit counts now */
} mem_rlimits[] = {
    {RLIMIT_AS, "address-space limit", "ulimit -v", 0},
    {RLIMIT_DATA, "data-size limit", "ulimit -d", 5},
};

/* Under RLIMIT_AS or RLIMIT_DATA on the CPU backend: refuses a run whose
 * model states (parameters, gradients, optimizer state, EMA, AMP copy:
 * bytes known before anything is allocated) and BLAS buffers cannot fit,
 * with the numbers and the ways out; else returns the caching allocator's
 * capacity that keeps room for the buffers, so the activations run out of
 * memory with the allocator's error instead of hanging OpenBLAS. 0: no limit. */
size_t tr_memlimit_cap(const tr_options *o, const tr_backend *be, const tr_gpt_config *cfg)
{
    if (be->device != TR_CPU)
        return 0;
    size_t n_threads = (size_t)be->n_threads, threads = n_threads * (BLAS_BUFFER_BYTES + THREAD_BYTES);
    bool sgd = !strcmp(o->optimizer, "sgd");
    double per_param = 8.0 + (sgd ? (o->momentum != 0 ? 4.0 : 0.0) : 8.0) + (o->ema > 0 ? 4.0 : 0.0) +
                       (strcmp(o->amp, "off") ? 2.0 : 0.0);
    /* one process holds all of it; a ZeRO rank a share that this does not model: only the reserve then */
    double states = o->dist ? 0.0 : per_param * (double)param_count(cfg);
    size_t cap = 0, bound_limit = 0;
    const struct mem_rlimit *bound = NULL;
    for (size_t i = 0; i < sizeof mem_rlimits / sizeof *mem_rlimits; i++) {
        const struct mem_rlimit *r = &mem_rlimits[i];
        struct rlimit rl;
        if (getrlimit(r->resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
            continue;
        size_t limit = (size_t)rl.rlim_cur;
        size_t rest = statm_bytes(r->statm_field) + (size_t)o->workers * THREAD_BYTES + SLACK_BYTES;
        if ((double)(rest + threads) + states > (double)limit) {
            fprintf(stderr, "trainer: the %s (%s) is %.2f GiB and this run needs %.2f GiB before its activations: "
                            "%.2f GiB of model states (%.0f bytes per parameter), %.2f GiB for %zu compute thread(s) "
                            "(OpenBLAS maps a 128 MiB buffer for each, and would hang without it), %.2f GiB for the "
                            "program and its other threads; raise the limit (%s unlimited), or use fewer --threads or "
                            "a smaller --model, --batch or --seq\n",
                    r->name, r->shell, gib((double)limit), gib((double)(rest + threads) + states), gib(states),
                    per_param, gib((double)threads), n_threads, gib((double)rest), r->shell);
            exit(1);
        }
        if (!bound || limit - rest - threads < cap) {
            cap = limit - rest - threads;
            bound = r;
            bound_limit = limit;
        }
    }
    if (bound)
        printf("trainer: the %s (%s) of %.2f GiB leaves %.2f GiB to the caching allocator (the program and "
               "OpenBLAS's buffers for %zu thread(s) keep the rest)\n", bound->name, bound->shell,
               gib((double)bound_limit), gib((double)cap), n_threads);
    return cap;
}
