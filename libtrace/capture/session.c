/* session.c: the life of a capture session in one process image: options
 * from the launcher's environment, the clock's zero, the region of rings
 * handed to the launcher, fork.
 *
 * At start (the constructor, or the first NVTX call when the library was
 * only dlopened as an NVTX injection) the process connects to the launcher
 * (GTRACE_SOCKET, an abstract unix socket), makes its region (ring.c)
 * with a description of itself (name, command line, the environment worth
 * keeping, the options) and sends it. From then on the launcher reads the
 * rings while the program runs, and once more when the connection closes:
 * when the process ends in any way (exit, _exit, a crash, SIGKILL) or
 * replaces its image (exec; the new image connects again). Nothing here
 * waits for the launcher: if it is gone, rings fill up and events are
 * dropped and counted, and the program runs on.
 *
 * A fork child forgets the parent's region and connection and makes its
 * own, which starts with the parent's registered strings (ring.c): the
 * handles the child inherited stay valid. A process that was not started
 * under gtrace (no GTRACE_SOCKET) records nothing and says so once. What
 * runs at the library's load, its unload and before exec (CUPTI's flush) is
 * library.c's.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "ring.h"
#include "session.h"
#include "window.h"
#include "warn.h"

extern char **environ;

gt_cap_options gt_cap_opts = {.flush_ms = 200, .n_stack_frames = 0, .cuda = 2, .ring_bytes = GT_CAP_DEFAULT_RING_KB * 1024,
                              .region_bytes = 256u << 20};
_Atomic int gt_cap_pid;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static _Atomic int64_t next_callchain_id = 1;
static int64_t utc_t0_ns;
static bool is_fork_child;

int64_t gt_cap_next_callchain_id(void)
{
    return atomic_fetch_add_explicit(&next_callchain_id, 1, memory_order_relaxed);
}

/* ---- options ---------------------------------------------------------- */

static long env_long(const char *name, long fallback, long lo, long hi)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return fallback;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) {
        static _Atomic int once;
        gt_cap_warn_once(&once, "ignoring %s=%s (expected a number from %ld to %ld)", name, s, lo, hi);
        return fallback;
    }
    return v;
}

static void read_options(void)
{
    gt_cap_opts.flush_ms = (int)env_long("GTRACE_FLUSH_MS", 200, 1, 60000);
    gt_cap_opts.n_stack_frames = (int)env_long("GTRACE_STACKS", 0, 0, GT_CAP_MAX_FRAMES);
    long kb = env_long("GTRACE_BUFFER_KB", GT_CAP_DEFAULT_RING_KB, 64, 1 << 20);
    size_t bytes = ((size_t)kb + 3) / 4 * 4 * 1024;
    gt_cap_opts.ring_bytes = bytes;
    long total_mb = env_long("GTRACE_BUFFER_TOTAL_MB", 256, 1, 1 << 20);
    gt_cap_opts.region_bytes = (size_t)total_mb << 20;
    if (gt_cap_opts.region_bytes < bytes)
        gt_cap_opts.region_bytes = bytes;
    const char *cuda = getenv("GTRACE_CUDA");
    gt_cap_opts.cuda = !cuda || !strcmp(cuda, "auto") ? 2 : !strcmp(cuda, "off") ? 0 : 1;

    struct timespec mono, real;
    clock_gettime(CLOCK_MONOTONIC, &mono);
    clock_gettime(CLOCK_REALTIME, &real);
    int64_t mono_ns = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec;
    int64_t real_ns = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec;
    /* The launcher's zero, shared by every process of the run (the monotonic
     * clock is the same for all processes of a machine). */
    long long t0 = 0;
    const char *s = getenv("GTRACE_T0_NS");
    if (!s || sscanf(s, "%lld", &t0) != 1 || t0 <= 0 || t0 > mono_ns)
        t0 = mono_ns;
    utc_t0_ns = real_ns - (mono_ns - t0);
    gt_cap_clock_init(t0);
}

static char *read_small_file(const char *path, size_t *out_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        ssize_t n = read(fd, buf + len, cap - len);
        if (n <= 0)
            break;
        len += (size_t)n;
        if (len == cap) {
            if (cap >= (1u << 20))
                break;
            char *b = realloc(buf, cap * 2 + 1);
            if (!b)
                break;
            buf = b;
            cap *= 2;
        }
    }
    close(fd);
    if (buf) {
        buf[len] = '\0';
        if (out_len)
            *out_len = len;
    }
    return buf;
}

/* The environment worth keeping: what changes CUDA, the libraries and the
 * threads, and the job rank. */
static bool is_recorded_env(const char *kv)
{
    static const char *const prefixes[] = {
        "CUDA_", "NCCL_", "CUBLAS_", "CUBLASLT_", "CUDNN_", "PYTORCH_", "TORCH_", "NVIDIA_TF32",
        "OMP_NUM_THREADS=", "GTRACE_", "LD_PRELOAD=", "NVTX_INJECTION64_PATH=",
        /* which rank of a distributed job this process is (the report names ranks by them) */
        "OMPI_COMM_WORLD_RANK=", "OMPI_COMM_WORLD_LOCAL_RANK=", "OMPI_COMM_WORLD_SIZE=", "PMIX_RANK=", "PMI_RANK=",
        "PMI_SIZE=", "SLURM_PROCID=", "SLURM_NTASKS=", "RANK=", "LOCAL_RANK=", "WORLD_SIZE=",
    };
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(kv, prefixes[i], strlen(prefixes[i])))
            return true;
    return false;
}

/* ---- the description of this process ------------------------------------ */

typedef struct info_buf {
    char *p;
    size_t n, cap;
} info_buf;

static void info_add(info_buf *b, const char *s, size_t len)
{
    if (!b->p || b->n + len + 1 > b->cap)
        return;
    memcpy(b->p + b->n, s, len);
    b->p[b->n + len] = '\0';
    b->n += len + 1;
}

static void info_pair(info_buf *b, const char *key, const char *value)
{
    size_t kl = strlen(key), vl = strlen(value);
    if (b->n + kl + vl + 2 > b->cap)
        return; /* the description is full: the rest is left out */
    info_add(b, key, kl);
    info_add(b, value, vl);
}

/* Name, command line, environment worth keeping, options: what the
 * launcher writes to GTRACE_RUN_CONFIG for this process. */
static void describe_process(info_buf *b)
{
    char *comm = read_small_file("/proc/self/comm", NULL);
    if (comm)
        comm[strcspn(comm, "\n")] = '\0';
    info_add(b, comm ? comm : "", comm ? strlen(comm) : 0);
    size_t len = 0;
    char *cmd = read_small_file("/proc/self/cmdline", &len);
    if (cmd) {
        for (size_t i = 0; i + 1 < len; i++)
            if (cmd[i] == '\0')
                cmd[i] = ' ';
        info_pair(b, "command_line", cmd);
    }
    info_pair(b, "process_name", comm ? comm : "");
    for (char **e = environ; e && *e; e++) {
        if (!is_recorded_env(*e))
            continue;
        const char *eq = strchr(*e, '=');
        if (!eq)
            continue;
        char key[256];
        snprintf(key, sizeof key, "env.%.*s", (int)(eq - *e), *e);
        info_pair(b, key, eq + 1);
    }
    char v[32];
    snprintf(v, sizeof v, "%d", gt_cap_opts.flush_ms);
    info_pair(b, "option.flush_ms", v);
    snprintf(v, sizeof v, "%d", gt_cap_opts.n_stack_frames);
    info_pair(b, "option.stacks", v);
    info_pair(b, "option.cuda", gt_cap_opts.cuda == 0 ? "off" : gt_cap_opts.cuda == 1 ? "on" : "auto");
    snprintf(v, sizeof v, "%zu", gt_cap_opts.ring_bytes);
    info_pair(b, "option.buffer_bytes", v);
    free(cmd);
    free(comm);
}

/* A connection to the launcher's socket; -1 (said once) when there is none. */
static int connect_launcher(void)
{
    static _Atomic int once_none, once_failed;
    const char *name = getenv("GTRACE_SOCKET");
    if (!name || !*name) {
        gt_cap_warn_once(&once_none, "not started by gtrace (no GTRACE_SOCKET): nothing is recorded");
        return -1;
    }
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    size_t len = strlen(name);
    if (len >= sizeof addr.sun_path) {
        gt_cap_warn_once(&once_failed, "GTRACE_SOCKET=%s: name too long; nothing is recorded", name);
        return -1;
    }
    memcpy(addr.sun_path, name, len);
    if (name[0] == '@')
        addr.sun_path[0] = '\0'; /* an abstract name */
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        gt_cap_warn_once(&once_failed, "cannot make a socket (%s): nothing is recorded", strerror(errno));
        return -1;
    }
    int rc;
    do {
        rc = connect(fd, (struct sockaddr *)&addr, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        gt_cap_warn_once(&once_failed, "cannot reach the gtrace launcher (%s): process %d is not recorded",
                         strerror(errno), (int)getpid());
        close(fd);
        return -1;
    }
    return fd;
}

/* Connects, makes the region and hands it over; capture is on if that worked. */
static void start_region(void)
{
    int fd = connect_launcher();
    if (fd < 0)
        return;
    info_buf b = {.p = malloc(GT_SHM_INFO_BYTES), .n = 0, .cap = GT_SHM_INFO_BYTES};
    if (b.p)
        describe_process(&b);
    const char *root_pid = getenv("GTRACE_ROOT_PID");
    bool root = root_pid && atoll(root_pid) == getpid() && !is_fork_child;
    bool ok = gt_cap_region_open(fd, b.p ? b.p : "", b.n, utc_t0_ns, root, gt_cap_opts.ring_bytes,
                                 gt_cap_opts.region_bytes);
    free(b.p);
    if (!ok) {
        close(fd);
        return;
    }
    atomic_store(&gt_cap_active, 1);
}

/* ---- start, fork, exec, exit ---------------------------------------------- */

static void at_fork_prepare(void)
{
    gt_cap_rings_before_fork();
}

static void at_fork_child(void)
{
    atomic_store(&gt_cap_active, 0);
    atomic_store(&gt_cap_pid, getpid());
    is_fork_child = true;
    gt_cap_rings_after_fork();
    start_region();
}

static void init_session(void)
{
    atomic_store(&gt_cap_pid, getpid());
    read_options();
    gt_cap_window_init();
    pthread_atfork(at_fork_prepare, NULL, at_fork_child);
    start_region();
}

void gt_cap_init(void)
{
    pthread_once(&init_once, init_session);
}
