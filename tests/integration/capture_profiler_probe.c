/* capture_profiler_probe: a program that marks its region of interest with
 * cudaProfilerStart/cudaProfilerStop, as nsys's --capture-range=cudaProfilerApi
 * expects, without a GPU: the two functions are looked up in the global
 * scope, the one a program linked with a shared libcudart binds them in
 * (under gtrace, libgtrace.so is first in it, as LD_PRELOAD puts it).
 *
 *   capture_profiler_probe      ranges "before", then start, "inside" x3, stop,
 *                               "between", start, "again", stop, "after"
 *
 * Prints "start=RC stop=RC" (the calls' results; "unbound" when no library
 * defines them) for the test to check that the real call was made after
 * gtrace's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>

typedef int (*profiler_fn)(void);

static void range(const char *name)
{
    nvtxRangePushA(name);
    nvtxRangePop();
}

int main(void)
{
    profiler_fn cudaProfilerStart = (profiler_fn)dlsym(RTLD_DEFAULT, "cudaProfilerStart");
    profiler_fn cudaProfilerStop = (profiler_fn)dlsym(RTLD_DEFAULT, "cudaProfilerStop");
    if (!cudaProfilerStart || !cudaProfilerStop) {
        range("before");
        puts("unbound");
        return 0;
    }
    range("before");
    int start = cudaProfilerStart();
    for (int i = 0; i < 3; i++)
        range("inside");
    int stop = cudaProfilerStop();
    range("between");
    cudaProfilerStart();
    range("again");
    cudaProfilerStop();
    range("after");
    printf("start=%d stop=%d\n", start, stop);
    return 0;
}
