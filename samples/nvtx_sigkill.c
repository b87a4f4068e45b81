/* nvtx_sigkill: records N "before" ranges, sleeps MS milliseconds (several
 * flush intervals), records one "after" range and kills itself with SIGKILL
 * before any exit handler can run. Usage: nvtx_sigkill N MS */
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100;
    int ms = argc > 2 ? atoi(argv[2]) : 500;
    for (int i = 0; i < n; i++) {
        nvtxRangePushA("before");
        nvtxRangePop();
    }
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    nvtxRangePushA("after");
    nvtxRangePop();
    kill(getpid(), SIGKILL);
    return 0;
}
