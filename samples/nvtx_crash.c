/* nvtx_crash: records N "doomed" ranges and a mark, then crashes at once
 * (no time for a periodic flush): nvtx_crash segv|abort N */
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>

/* A real invalid store, the crash under test: UBSan (the sanitizer build)
 * would stop the program at it with a report instead of the signal. */
__attribute__((no_sanitize_undefined)) static void crash(void)
{
    volatile int *p = NULL;
    *p = 42;
}

int main(int argc, char **argv)
{
    int n = argc > 2 ? atoi(argv[2]) : 50;
    for (int i = 0; i < n; i++) {
        nvtxRangePushA("doomed");
        nvtxRangePop();
    }
    nvtxMarkA("last words");
    if (argc > 1 && !strcmp(argv[1], "abort"))
        abort();
    crash();
    return 0;
}
