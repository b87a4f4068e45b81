/* nvtx_fork_stress: forks while other threads record: 4 threads push and
 * pop "busy" ranges (10 every millisecond) while the main thread forks 20 children
 * one after the other; each child records 10 "child" ranges and exits.
 * Nothing may deadlock (the fork handlers take the writer's lock; the
 * child starts its own writer). Prints "children 20".
 *
 * NVTX initializes itself lazily on the first call, and that is not
 * fork-safe: a fork while another thread is inside its first NVTX call
 * leaves the child spinning in nvtxInitOnce forever, with or without a tool
 * (seen here once in a dozen runs on a loaded machine). So main makes the
 * first NVTX call before any thread starts, as a program that forks should. */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;

static void *busy(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        for (int i = 0; i < 10; i++) {
            nvtxRangePushA("busy");
            nvtxRangePop();
        }
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    nvtxMarkA("start"); /* NVTX initialized before threads and forks (see above) */
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, busy, NULL);
    int n_ok = 0;
    for (int c = 0; c < 20; c++) {
        pid_t pid = fork();
        if (pid == 0) {
            for (int i = 0; i < 10; i++) {
                nvtxRangePushA("child");
                nvtxRangePop();
            }
            exit(0);
        }
        int st = 0;
        if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0)
            n_ok++;
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("children %d\n", n_ok);
    return n_ok == 20 ? 0 : 1;
}
