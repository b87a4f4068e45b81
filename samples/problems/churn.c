/* churn: an allocator without a cache. Every tensor gets a segment of its
 * own, mapped and faulted in when it is allocated and unmapped when it is
 * freed, as cudaMalloc/cudaFree per tensor (or empty_cache every step)
 * does: the host pays for the mapping in every step. --fixed maps one
 * segment before the loop and hands out blocks from it (a caching
 * allocator). The mappings are real (mmap with MAP_POPULATE, 2 MiB). */
#define _GNU_SOURCE /* MAP_POPULATE */
#include "problem.h"

#include <sys/mman.h>

static pb_seg map_seg(uint64_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) {
        perror("churn: mmap");
        exit(1);
    }
    return pb_seg_at((uint64_t)(uintptr_t)p, size, "churn segment");
}

static void unmap_seg(pb_seg *s)
{
    pb_seg_free(s);
    munmap((void *)(uintptr_t)s->base, s->size);
}

int main(int argc, char **argv)
{
    pb_args a = pb_init(argc, argv, "a segment mapped per tensor (--fixed: one cached segment)");
    enum { N_ACT = 4 };
    const uint64_t sz = 2 * PB_MIB;
    pb_seg pool = {0};
    if (a.fixed)
        pool = map_seg(N_ACT * sz);
    for (int i = 0; i < a.steps; i++) {
        pb_step_push(i);
        pb_seg seg[N_ACT];
        uint64_t act[N_ACT];
        for (int k = 0; k < N_ACT; k++) {
            if (!a.fixed)
                seg[k] = map_seg(sz);
            act[k] = a.fixed ? pb_block_new(&pool, (uint64_t)k * sz, sz) : pb_block_new(&seg[k], 0, sz);
        }
        pb_compute("forward", 1200);
        pb_compute("backward", 1000);
        for (int k = N_ACT - 1; k >= 0; k--) {
            pb_block_free(a.fixed ? &pool : &seg[k], act[k]);
            if (!a.fixed)
                unmap_seg(&seg[k]);
        }
        pb_compute("optimizer", 300);
        pb_host("log", 100);
        pb_pop();
    }
    if (a.fixed)
        unmap_seg(&pool);
    puts("ok");
    return 0;
}
