/* nvtx_fork: a process tree with known NVTX counts:
 *   the parent: 5 "parent" ranges (before and after forking);
 *   a fork child: 7 "forked-child" ranges, then exit(0);
 *   a fork+exec child: 2 "pre-exec" ranges, then execs itself as
 *   `nvtx_fork exec-child`, which records 3 "exec-child" ranges. */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void ranges(const char *text, int n)
{
    for (int i = 0; i < n; i++) {
        nvtxRangePushA(text);
        nvtxRangePop();
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "exec-child")) {
        ranges("exec-child", 3);
        return 0;
    }
    ranges("parent", 2);
    pid_t a = fork();
    if (a == 0) {
        ranges("forked-child", 7);
        exit(0);
    }
    pid_t b = fork();
    if (b == 0) {
        ranges("pre-exec", 2);
        execl("/proc/self/exe", argv[0], "exec-child", (char *)NULL);
        perror("execl");
        _exit(127);
    }
    int st_a = 0, st_b = 0;
    waitpid(a, &st_a, 0);
    waitpid(b, &st_b, 0);
    ranges("parent", 3);
    if (!WIFEXITED(st_a) || WEXITSTATUS(st_a) || !WIFEXITED(st_b) || WEXITSTATUS(st_b)) {
        fprintf(stderr, "a child failed\n");
        return 1;
    }
    printf("forked\n");
    return 0;
}
