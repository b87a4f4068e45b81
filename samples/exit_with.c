/* exit_with: records one NVTX range, prints "hello" on stdout, then
 *   exit_with CODE        exits with CODE
 *   exit_with -s SIGNAL   kills itself with SIGNAL (a number) */
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    nvtxRangePushA("exit_with");
    nvtxRangePop();
    printf("hello\n");
    fflush(stdout);
    if (argc == 3 && !strcmp(argv[1], "-s")) {
        raise(atoi(argv[2]));
        return 100;
    }
    return argc > 1 ? atoi(argv[1]) : 0;
}
