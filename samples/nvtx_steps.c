/* nvtx_steps: a training loop of known timing, for gtrace diff's verdicts.
 *   nvtx_steps STEPS STEP_US [EXTRA_PCT [SEED]]
 * Each step is a range "step N" holding two ranges of the category
 * "compute" (so a trace has a CPU timeline): "forward" (60% of STEP_US) and
 * "backward" (30%), then 10% with no compute (the device idle, waiting on
 * the host). EXTRA_PCT lengthens "forward" by that share of STEP_US: the
 * controlled regression. Each step varies by a pseudo-random +-2% (SEED),
 * and step 0 is 3 times longer (a warm-up). Times are slept, not spun, so
 * a loaded machine changes them little. Prints "ok". */
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { CAT_COMPUTE = 1 };

static void sleep_us(double us)
{
    struct timespec ts = {(time_t)(us / 1e6), (long)((us - (double)(time_t)(us / 1e6) * 1e6) * 1e3)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void compute(const char *name, double us)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = CAT_COMPUTE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    nvtxRangePushEx(&a);
    sleep_us(us);
    nvtxRangePop();
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: nvtx_steps STEPS STEP_US [EXTRA_PCT [SEED]]\n");
        return 2;
    }
    int steps = atoi(argv[1]);
    double step_us = atof(argv[2]);
    double extra = argc > 3 ? atof(argv[3]) / 100 : 0;
    uint64_t s = argc > 4 ? strtoull(argv[4], NULL, 10) * 2654435761u + 1 : 88172645463325252ULL;
    nvtxNameCategoryA(CAT_COMPUTE, "compute");
    for (int i = 0; i < steps; i++) {
        char name[32];
        s ^= s << 13; /* xorshift: the same seed, the same steps */
        s ^= s >> 7;
        s ^= s << 17;
        double jitter = 1 + 0.02 * ((double)(s % 2001) / 1000 - 1), scale = (i == 0 ? 3 : 1) * jitter;
        snprintf(name, sizeof name, "step %d", i);
        nvtxRangePushA(name);
        compute("forward", scale * step_us * (0.6 + extra));
        compute("backward", scale * step_us * 0.3);
        sleep_us(scale * step_us * 0.1);
        nvtxRangePop();
    }
    puts("ok");
    return 0;
}
