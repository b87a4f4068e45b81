/* leak: memory that grows step over step. Each step keeps its loss tensor
 * (a block allocated in the "loss" range) in a history that is never freed,
 * as `losses.append(loss)` keeps a tensor and its graph alive. --fixed
 * keeps a number on the host instead: the block is freed in its step. */
#include "problem.h"

int main(int argc, char **argv)
{
    pb_args a = pb_init(argc, argv, "a loss history that keeps a block per step (--fixed: freed)");
    pb_seg pool = pb_seg_new(8 * PB_MIB, "leak pool activations");
    pb_seg history = pb_seg_new((uint64_t)a.steps * 256 * 1024, "leak pool history");
    for (int i = 0; i < a.steps; i++) {
        pb_step_push(i);
        uint64_t act[4];
        for (int k = 0; k < 4; k++)
            act[k] = pb_block_new(&pool, (uint64_t)k * 2 * PB_MIB, 2 * PB_MIB);
        pb_compute("forward", 1200);
        pb_push("loss", 0);
        uint64_t loss = pb_block_new(&history, (uint64_t)i * 256 * 1024, 256 * 1024);
        pb_pop();
        pb_compute("backward", 1000);
        for (int k = 3; k >= 0; k--)
            pb_block_free(&pool, act[k]);
        pb_compute("optimizer", 300);
        pb_host("log", 100);
        if (a.fixed) /* loss.item(): the tensor goes */
            pb_block_free(&history, loss);
        pb_pop();
    }
    puts("ok");
    return 0;
}
