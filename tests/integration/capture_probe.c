/* capture_probe: NVTX programs that end or overflow in the ways the capture
 * tests check (tests/integration/capture_*.sh). Each mode prints one line
 * on stdout saying what it emitted, so a test can compare it with the trace.
 *
 *   capture_probe _exit N        N push/pop ranges "quick", then _exit(0)
 *   capture_probe _Exit N        the same, ending with _Exit(0)
 *   capture_probe fork_exit N    a fork child records N ranges "child" and
 *                                _exits; the parent waits for it and returns
 *   capture_probe vfork_exit N   a vfork child fails to exec and _exits; the
 *                                parent then records N ranges "quick" and _exits
 *   capture_probe pthread_exit N [SLEEP_MS]
 *                                main records N ranges "main", starts a worker
 *                                that sleeps SLEEP_MS (default 0) then records
 *                                one range "worker", and ends with pthread_exit
 *   capture_probe wait_term      main ends with pthread_exit; a worker records
 *                                one range "waiting" and sleeps until killed
 *   capture_probe burst N        N start/end ranges, N push/pop ranges and N
 *                                marks as fast as it can (meant to overflow
 *                                the buffers)
 *   capture_probe fill N         N push/pop ranges with 200-byte texts, each
 *                                text different, 1,000 every 20 ms (meant to
 *                                outgrow a size limit after a few batches)
 *   capture_probe counted N FILE N push/pop ranges "counted" as fast as it can;
 *                                after each, the number done is stored in
 *                                FILE (8 bytes, mapped: it survives SIGKILL);
 *                                then it waits to be killed
 *   capture_probe attributes     what real programs mix that the sample does
 *                                not: ranges of two domains closed out of
 *                                order ("a-outer" in gt.a, then "b-inner" in
 *                                gt.b; gt.a's pop comes first), a mark with a
 *                                color whose type is unknown ("no-color-type")
 *                                and one with a uint64 payload of 2^63 + 5
 *                                ("u64-mark"); a worker records a range
 *                                "worker-range" and main names it "loader-0"
 *                                (a pool naming its threads)
 */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void ranges(const char *name, long n)
{
    for (long i = 0; i < n; i++) {
        nvtxRangePushA(name);
        nvtxRangePop();
    }
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static long worker_sleep_ms;

static void *worker(void *arg)
{
    (void)arg;
    sleep_ms(worker_sleep_ms);
    ranges("worker", 1);
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    ranges("waiting", 1);
    for (;;)
        pause();
    return NULL;
}

static void *named_worker(void *arg)
{
    *(uint32_t *)arg = (uint32_t)syscall(SYS_gettid);
    ranges("worker-range", 1);
    return NULL;
}

static int usage(void)
{
    fprintf(stderr, "usage: capture_probe _exit|_Exit|fork_exit|vfork_exit|pthread_exit|wait_term|burst|fill|counted|attributes [N] [SLEEP_MS|FILE]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    const char *mode = argv[1];
    long n = argc > 2 ? atol(argv[2]) : 0;
    if (!strcmp(mode, "_exit") || !strcmp(mode, "_Exit")) {
        ranges("quick", n);
        printf("emitted %ld\n", n);
        fflush(stdout);
        if (mode[1] == 'e')
            _exit(0);
        _Exit(0);
    }
    if (!strcmp(mode, "fork_exit")) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            ranges("child", n);
            _exit(0);
        }
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 1;
        printf("emitted %ld\n", n);
        return 0;
    }
    if (!strcmp(mode, "vfork_exit")) {
        pid_t pid = vfork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            char *const args[] = {"/nonexistent/program", NULL};
            execv(args[0], args);
            _exit(127);
        }
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 127)
            return 1;
        ranges("quick", n);
        printf("emitted %ld\n", n);
        fflush(stdout);
        _exit(0);
    }
    if (!strcmp(mode, "pthread_exit")) {
        worker_sleep_ms = argc > 3 ? atol(argv[3]) : 0;
        ranges("main", n);
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL) != 0)
            return 1;
        printf("emitted %ld\n", n + 1);
        fflush(stdout);
        pthread_exit(NULL);
    }
    if (!strcmp(mode, "wait_term")) {
        pthread_t t;
        if (pthread_create(&t, NULL, waiter, NULL) != 0)
            return 1;
        printf("waiting\n");
        fflush(stdout);
        pthread_exit(NULL);
    }
    if (!strcmp(mode, "burst")) {
        for (long i = 0; i < n; i++) {
            nvtxRangeId_t id = nvtxRangeStartA("se");
            nvtxRangeEnd(id);
            nvtxRangePushA("pp");
            nvtxRangePop();
            nvtxMarkA("mk");
        }
        printf("emitted %ld\n", 3 * n);
        return 0;
    }
    if (!strcmp(mode, "fill")) {
        char text[201];
        memset(text, 'x', sizeof text - 1);
        text[sizeof text - 1] = '\0';
        for (long i = 0; i < n; i++) {
            char num[24];
            int len = snprintf(num, sizeof num, "%ld", i);
            memcpy(text, num, (size_t)len); /* each text different */
            if (i % 1000 == 999)
                sleep_ms(20); /* several batches reach the file before it is full */
            nvtxRangePushA(text);
            nvtxRangePop();
        }
        printf("emitted %ld\n", n);
        return 0;
    }
    if (!strcmp(mode, "attributes")) {
        nvtxDomainHandle_t a = nvtxDomainCreateA("gt.a"), b = nvtxDomainCreateA("gt.b");
        nvtxDomainRangePushEx(a, &(nvtxEventAttributes_t){.version = NVTX_VERSION, .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
                                                           .messageType = NVTX_MESSAGE_TYPE_ASCII,
                                                           .message.ascii = "a-outer"});
        nvtxDomainRangePushEx(b, &(nvtxEventAttributes_t){.version = NVTX_VERSION, .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
                                                           .messageType = NVTX_MESSAGE_TYPE_ASCII,
                                                           .message.ascii = "b-inner"});
        nvtxDomainRangePop(a);
        nvtxDomainRangePop(b);
        nvtxMarkEx(&(nvtxEventAttributes_t){.version = NVTX_VERSION, .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
                                            .colorType = NVTX_COLOR_UNKNOWN, .color = 0xff00ff00,
                                            .messageType = NVTX_MESSAGE_TYPE_ASCII, .message.ascii = "no-color-type"});
        nvtxMarkEx(&(nvtxEventAttributes_t){.version = NVTX_VERSION, .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
                                            .payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64,
                                            .payload.ullValue = (1ull << 63) + 5,
                                            .messageType = NVTX_MESSAGE_TYPE_ASCII, .message.ascii = "u64-mark"});
        uint32_t worker_tid = 0;
        pthread_t t;
        if (pthread_create(&t, NULL, named_worker, &worker_tid) != 0)
            return 1;
        pthread_join(t, NULL);
        nvtxNameOsThreadA(worker_tid, "loader-0");
        printf("emitted 2 ranges, 2 marks\n");
        return 0;
    }
    if (!strcmp(mode, "counted") && argc > 3) {
        int fd = open(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || ftruncate(fd, 8) != 0)
            return 1;
        volatile int64_t *done = mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (done == MAP_FAILED)
            return 1;
        for (long i = 0; i < n; i++) {
            nvtxRangePushA("counted");
            nvtxRangePop();
            *done = i + 1;
        }
        printf("emitted %ld\n", n);
        fflush(stdout);
        for (;;)
            pause();
    }
    return usage();
}
