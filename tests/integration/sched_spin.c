/* sched_spin: a CPU-bound loop of NVTX steps, for the scheduler's account
 * (sched_wait.sh).
 *   sched_spin STEPS WORK
 * Each step is a range "step N" of WORK million rounds of integer work on
 * one thread: its time grows with how long the thread waits for a CPU,
 * unlike nvtx_steps, which sleeps. Prints the work's result. */
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: sched_spin STEPS WORK\n");
        return 2;
    }
    int steps = atoi(argv[1]);
    long work = atol(argv[2]) * 1000000;
    uint64_t x = 1;
    for (int i = 0; i < steps; i++) {
        char name[32];
        snprintf(name, sizeof name, "step %d", i);
        nvtxRangePushA(name);
        for (long k = 0; k < work; k++)
            x = x * 6364136223846793005ULL + 1442695040888963407ULL; /* a dependent chain: not folded */
        nvtxRangePop();
    }
    printf("%llu\n", (unsigned long long)(x >> 48));
    return 0;
}
