/* frag: a caching allocator that fragments. Sequences grow by 1 MiB a step
 * (dynamic shapes): no cached segment is big enough for the next batch, so
 * each step reserves a new segment and the old ones stay cached, unusable.
 * --fixed pads every batch to the longest length (bucketed shapes): one
 * segment, reused every step. */
#include "problem.h"

#define MAX_STEPS 4096

int main(int argc, char **argv)
{
    pb_args a = pb_init(argc, argv, "batches that grow a MiB a step (--fixed: padded to the longest)");
    if (a.steps > MAX_STEPS)
        a.steps = MAX_STEPS;
    static pb_seg cache[MAX_STEPS];
    int n_cache = 0;
    pb_seg pool = pb_seg_new(8 * PB_MIB, "frag pool activations");
    for (int i = 0; i < a.steps; i++) {
        uint64_t want = (uint64_t)(a.fixed ? 4 + a.steps : 4 + i) * PB_MIB;
        pb_step_push(i);
        int s = 0; /* the allocator's search: a cached segment big enough, or a new one */
        while (s < n_cache && cache[s].size < want)
            s++;
        if (s == n_cache)
            cache[n_cache++] = pb_seg_new(want, "frag pool batch");
        uint64_t batch = pb_block_new(&cache[s], 0, want);
        uint64_t act[4];
        for (int k = 0; k < 4; k++)
            act[k] = pb_block_new(&pool, (uint64_t)k * 2 * PB_MIB, 2 * PB_MIB);
        pb_compute("forward", 1200);
        pb_compute("backward", 1000);
        for (int k = 3; k >= 0; k--)
            pb_block_free(&pool, act[k]);
        pb_block_free(&cache[s], batch);
        pb_compute("optimizer", 300);
        pb_host("log", 100);
        pb_pop();
    }
    puts("ok");
    return 0;
}
