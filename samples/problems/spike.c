/* spike: one temporary sets the memory peak. Attention materializes its
 * whole score matrix (32 MiB) for a short op, four times the activations
 * that live through the step, as an unfused attention does. --fixed
 * computes it in 8 chunks of 4 MiB, one alive at a time (a fused or
 * chunked attention): the same work, a fraction of the peak. */
#include "problem.h"

int main(int argc, char **argv)
{
    pb_args a = pb_init(argc, argv, "a 32 MiB attention temporary (--fixed: 8 chunks of 4 MiB)");
    pb_seg pool = pb_seg_new(8 * PB_MIB, "spike pool activations");
    /* the scratch segment holds the one temporary alive at a time */
    pb_seg scratch = pb_seg_new(a.fixed ? 4 * PB_MIB : 32 * PB_MIB, "spike pool scratch");
    for (int i = 0; i < a.steps; i++) {
        pb_step_push(i);
        uint64_t act[4];
        for (int k = 0; k < 4; k++)
            act[k] = pb_block_new(&pool, (uint64_t)k * 2 * PB_MIB, 2 * PB_MIB);
        pb_compute("forward", 1000);
        pb_push("attention", 0);
        int chunks = a.fixed ? 8 : 1;
        for (int c = 0; c < chunks; c++) {
            uint64_t scores = pb_block_new(&scratch, 0, 32 * PB_MIB / (uint64_t)chunks);
            pb_compute("attention scores", 240.0 / chunks);
            pb_block_free(&scratch, scores);
        }
        pb_pop();
        pb_compute("backward", 1000);
        for (int k = 3; k >= 0; k--)
            pb_block_free(&pool, act[k]);
        pb_compute("optimizer", 300);
        pb_host("log", 100);
        pb_pop();
    }
    puts("ok");
    return 0;
}
