/* clean: a training loop without a problem the advice looks for: a caching
 * allocator that reserves its segment once and reuses it every step, the
 * device busy for all but a short logging tail of each step. No rule
 * should fire on its trace. --fixed changes nothing (the gallery runs every
 * program both ways). */
#include "problem.h"

int main(int argc, char **argv)
{
    pb_args a = pb_init(argc, argv, "a loop with no problem");
    pb_seg pool = pb_seg_new(8 * PB_MIB, "clean pool segment");
    for (int i = 0; i < a.steps; i++) {
        pb_step_push(i);
        uint64_t act[4];
        for (int k = 0; k < 4; k++) /* activations, freed by the end of backward */
            act[k] = pb_block_new(&pool, (uint64_t)k * 2 * PB_MIB, 2 * PB_MIB);
        pb_compute("forward", 1200);
        pb_compute("backward", 1000);
        for (int k = 3; k >= 0; k--)
            pb_block_free(&pool, act[k]);
        pb_compute("optimizer", 300);
        pb_host("log", 100);
        pb_pop();
    }
    pb_seg_free(&pool);
    puts("ok");
    return 0;
}
