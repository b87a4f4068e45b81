/* session.c: the life of a capture session in one process: options from the
 * launcher's environment, the clock, the writer thread, fork, exit.
 *
 * One writer thread per process wakes every --flush-ms (or earlier, when a
 * ring fills or the session stops), drains every ring in one gt_writer
 * transaction, and so bounds what a SIGKILL can lose to one interval. The
 * trace file of a process is opened on the first drain that has something
 * to write: processes that record nothing leave no file. Each process writes
 * its own part file (GTRACE_PARTS_DIR/PID-N.sqlite); the launcher merges
 * them when the run ends. A fork child forgets the parent's rings and file
 * and starts its own; exec and _exit stop the session first (hooks.c).
 *
 * When writing fails (a full disk, a file size limit) the writer keeps
 * draining the rings without writing, counts every event it could not
 * write, and at the end hands the counts to the launcher (losses.c): what
 * a process emitted is what its part holds plus what it says it lost.
 *
 * The writer thread must not keep a process alive: glibc ends a process
 * when its last thread ends, and counts ours. When the program's last
 * thread is gone (main ended with pthread_exit, then its other threads),
 * the writer finishes the trace and ends the process with exit(0), as
 * glibc would have.
 *
 * Producers never take drain_lock; only the writer, fork and exec do.
 */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "drain.h"
#include "session.h"

extern char **environ;

int64_t gt_cap_t0_ns;
gt_cap_options gt_cap_opts = {.flush_ms = 200, .n_stack_frames = 0, .cuda = 2, .ring_bytes = 4u << 20};
_Atomic int gt_cap_active;
_Atomic int gt_cap_pid;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t writer_thread;
static bool writer_started;
static _Atomic int stop_flag;
static _Atomic int writer_done;
static _Atomic int64_t next_callchain_id = 1;
static int64_t utc_t0_ns;
static bool is_fork_child;

/* Writer-thread state. */
static gt_writer *writer;
static gt_drain *drain;        /* also without a writer, once writing failed */
static int64_t dropped_total[GT_EV_N_KINDS];
static char part_name[64];     /* the part's file name */
static char fail_reason[128];  /* why writing stopped; "" while it works */

int64_t gt_cap_next_callchain_id(void)
{
    return atomic_fetch_add_explicit(&next_callchain_id, 1, memory_order_relaxed);
}

void gt_cap_warn_once(_Atomic int *once, const char *fmt, ...)
{
    if (atomic_exchange(once, 1))
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof msg - 2)
        n = sizeof msg - 2;
    msg[n++] = '\n';
    /* write(2), not stdio: no lock the program could hold, no buffering. */
    char line[600];
    int m = snprintf(line, sizeof line, "gtrace: %.*s", n, msg);
    if (m > 0) {
        ssize_t w = write(STDERR_FILENO, line, (size_t)m < sizeof line ? (size_t)m : sizeof line - 1);
        (void)w;
    }
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
    long kb = env_long("GTRACE_BUFFER_KB", 4096, 64, 1 << 20);
    size_t bytes = 64 * 1024;
    while (bytes < (size_t)kb * 1024)
        bytes <<= 1;
    gt_cap_opts.ring_bytes = bytes;
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
    if (s && sscanf(s, "%lld", &t0) == 1 && t0 > 0 && t0 <= mono_ns)
        gt_cap_t0_ns = t0;
    else
        gt_cap_t0_ns = mono_ns;
    utc_t0_ns = real_ns - (mono_ns - gt_cap_t0_ns);
    gt_cap_clock_init();
}

/* ---- the part file ---------------------------------------------------- */

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

static void write_config(int64_t gpid, const char *key, const char *value, bool root)
{
    gt_writer_add_config(writer, gpid, key, value);
    if (root)
        gt_writer_add_config(writer, 0, key, value);
}

/* The description of this process: name, command line, environment, options. */
static void describe_process(void)
{
    int64_t pid = getpid();
    int64_t gpid = gt_global_pid(pid);
    char *comm = read_small_file("/proc/self/comm", NULL);
    if (comm) {
        comm[strcspn(comm, "\n")] = '\0';
    }
    gt_writer_add_process(writer, pid, comm ? comm : "");
    gt_writer_set_session_start(writer, utc_t0_ns);

    const char *root_pid = getenv("GTRACE_ROOT_PID");
    bool root = root_pid && atoll(root_pid) == pid && !is_fork_child;
    size_t len = 0;
    char *cmd = read_small_file("/proc/self/cmdline", &len);
    if (cmd) {
        for (size_t i = 0; i + 1 < len; i++)
            if (cmd[i] == '\0')
                cmd[i] = ' ';
        write_config(gpid, "command_line", cmd, root);
    }
    write_config(gpid, "process_name", comm ? comm : "", root);
    for (char **e = environ; e && *e; e++) {
        if (!is_recorded_env(*e))
            continue;
        const char *eq = strchr(*e, '=');
        if (!eq)
            continue;
        char key[256];
        snprintf(key, sizeof key, "env.%.*s", (int)(eq - *e), *e);
        write_config(gpid, key, eq + 1, root);
    }
    char v[32];
    snprintf(v, sizeof v, "%d", gt_cap_opts.flush_ms);
    write_config(gpid, "option.flush_ms", v, root);
    snprintf(v, sizeof v, "%d", gt_cap_opts.n_stack_frames);
    write_config(gpid, "option.stacks", v, root);
    write_config(gpid, "option.cuda", gt_cap_opts.cuda == 0 ? "off" : gt_cap_opts.cuda == 1 ? "on" : "auto", root);
    snprintf(v, sizeof v, "%zu", gt_cap_opts.ring_bytes);
    write_config(gpid, "option.buffer_bytes", v, root);
    free(cmd);
    free(comm);
}

/* Writing failed for good: keep draining, count instead of writing. Call
 * with drain_lock held (or from the writer before it has a drain). */
static void stop_writing(const char *what)
{
    if (!fail_reason[0])
        snprintf(fail_reason, sizeof fail_reason, "%s", what);
    if (writer) {
        gt_writer_free(writer);
        writer = NULL;
    }
    if (drain)
        gt_drain_discard(drain);
    else if (gt_drain_new(&drain, NULL, getpid()) == 0)
        gt_drain_discard(drain);
}

static int open_part(void)
{
    static _Atomic int once;
    char path[4096];
    const char *dir = getenv("GTRACE_PARTS_DIR");
    int rc = GT_ERR_EXISTS;
    for (int k = 0; k < 1000 && rc == GT_ERR_EXISTS; k++) {
        if (dir && *dir)
            snprintf(path, sizeof path, "%s/%d-%d.sqlite", dir, (int)getpid(), k);
        else if (k == 0)
            snprintf(path, sizeof path, "gtrace-%d.sqlite", (int)getpid());
        else
            snprintf(path, sizeof path, "gtrace-%d-%d.sqlite", (int)getpid(), k);
        rc = gt_writer_open(&writer, path, 0);
    }
    const char *slash = strrchr(path, '/');
    snprintf(part_name, sizeof part_name, "%.63s", slash ? slash + 1 : path);
    if (rc != 0) {
        gt_cap_warn_once(&once, "cannot write the trace (%s): %s; events of process %d are counted, not recorded", path,
                         gt_error_last(), (int)getpid());
        writer = NULL;
        stop_writing(gt_error_last());
        return rc;
    }
    rc = gt_drain_new(&drain, writer, getpid());
    if (rc == 0)
        rc = gt_writer_begin(writer);
    if (rc == 0) {
        describe_process();
        rc = gt_writer_commit(writer);
    }
    if (rc != 0)
        stop_writing(gt_error_last());
    return rc;
}

/* ---- the writer thread ------------------------------------------------ */

static void lost_end(void *ctx, int64_t range_id)
{
    gt_drain_range_lost(ctx, range_id);
}

/* Every ring drained: into one transaction while writing works, else only
 * counted. Call with drain_lock held. With `last`, also the ranges never
 * ended and the drop counts. */
static void drain_batch(bool last)
{
    static _Atomic int once;
    gt_cap_clock_sample();
    int rc = writer ? gt_writer_begin(writer) : 0;
    if (rc != 0)
        stop_writing(gt_error_last());
    gt_drain_batch_begin(drain);
    gt_cap_drain_rings(gt_drain_record, drain, gt_drain_thread);
    gt_nvtx_take_lost_ends(lost_end, drain);
    if (last) {
        gt_drain_finish(drain, gt_cap_now());
        gt_cap_take_dropped(dropped_total);
        gt_drain_take_lost(drain, dropped_total); /* ranges whose end was dropped */
    }
    if (writer) {
        rc = gt_drain_error(drain);
        if (rc == 0 && last)
            for (int k = 0; k < GT_EV_N_KINDS && rc == 0; k++)
                if (dropped_total[k] > 0)
                    rc = gt_writer_add_dropped(writer, gt_global_pid(getpid()), (gt_event_kind)k, dropped_total[k]);
        int rc2 = gt_writer_commit(writer);
        if (rc == 0)
            rc = rc2;
        gt_drain_batch_end(drain, rc == 0);
        if (rc != 0) {
            gt_cap_warn_once(&once, "writing the trace failed (%s): the events of process %d are counted from now on, "
                                    "not recorded", gt_error_last(), (int)getpid());
            stop_writing(gt_error_last());
        }
    }
}

/* The end of the session: the last batch, the part closed, and what could
 * not be written handed to the launcher. */
static void finish(void)
{
    pthread_mutex_lock(&drain_lock);
    drain_batch(true);
    int rc = 0;
    if (writer) {
        rc = gt_writer_close(writer); /* what was committed stays readable if it fails */
        writer = NULL;
    }
    if (fail_reason[0]) {
        /* The drop counts never reached the part: all of them go to the launcher. */
        int64_t lost[GT_EV_N_KINDS];
        memcpy(lost, dropped_total, sizeof lost);
        gt_drain_take_lost(drain, lost);
        gt_cap_report_losses(part_name, lost, fail_reason);
    }
    gt_drain_free(drain);
    drain = NULL;
    pthread_mutex_unlock(&drain_lock);
    if (rc != 0) {
        static _Atomic int once;
        gt_cap_warn_once(&once, "finishing the trace failed: %s", gt_error_last());
    }
}

/* Whether every thread of the program has ended, leaving this one: the main
 * thread is a zombie (it ended with pthread_exit) and the process has two
 * threads, that zombie and the writer. */
static bool program_threads_gone(void)
{
    char buf[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ' || p[2] != 'Z')
        return false;
    /* After the name: state ppid pgrp session tty_nr tpgid flags minflt cminflt
     * majflt cmajflt utime stime cutime cstime priority nice num_threads */
    p += 2;
    for (int field = 3; field < 20 && p; field++) {
        p = strchr(p, ' ');
        if (p)
            p++;
    }
    return p && atol(p) <= 2;
}

static void *writer_main(void *arg)
{
    (void)arg;
    /* Signals go to the program's threads, never to this one. */
    sigset_t all;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_setname_np(pthread_self(), "gtrace-writer");

    /* Every call into SQLite happens under drain_lock, which fork's prepare
     * handler takes: a fork child never inherits SQLite's own mutexes held. */
    for (;;) {
        struct pollfd p = {.fd = gt_cap_wake_pipe[0], .events = POLLIN};
        if (!atomic_load(&stop_flag))
            poll(&p, 1, gt_cap_opts.flush_ms);
        char buf[64];
        while (read(gt_cap_wake_pipe[0], buf, sizeof buf) > 0) {
        }
        bool stopping = atomic_load(&stop_flag);
        bool orphaned = !stopping && getpid() == atomic_load(&gt_cap_pid) && program_threads_gone();
        pthread_mutex_lock(&drain_lock);
        if (!drain && atomic_load(&gt_cap_active) && gt_cap_have_rings())
            open_part();
        if (drain && !stopping && !orphaned)
            drain_batch(false);
        pthread_mutex_unlock(&drain_lock);
        if (orphaned) {
            if (drain)
                finish();
            atomic_store(&gt_cap_active, 0);
            atomic_store(&writer_done, 1);
            /* The program's exit handlers run on this thread (capture_dtor
             * knows it has nothing left to do). */
            exit(0);
        }
        if (stopping)
            break;
    }
    if (drain)
        finish();
    atomic_store(&writer_done, 1);
    return NULL;
}

static void start_writer(void)
{
    atomic_store(&stop_flag, 0);
    atomic_store(&writer_done, 0);
    if (gt_cap_wake_pipe[0] < 0 && pipe2(gt_cap_wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        static _Atomic int once;
        gt_cap_warn_once(&once, "cannot create the writer's pipe (%s): recording is off", strerror(errno));
        return;
    }
    /* The writer thread must not receive the program's signals, even before it blocks them. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&writer_thread, NULL, writer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        static _Atomic int once;
        gt_cap_warn_once(&once, "cannot start the writer thread (%s): recording is off", strerror(rc));
        close(gt_cap_wake_pipe[0]);
        close(gt_cap_wake_pipe[1]);
        gt_cap_wake_pipe[0] = gt_cap_wake_pipe[1] = -1;
        return;
    }
    writer_started = true;
    atomic_store(&gt_cap_active, 1);
}

bool gt_cap_is_writer_thread(void)
{
    return writer_started && pthread_equal(pthread_self(), writer_thread);
}

/* ---- start, stop, fork ------------------------------------------------ */

static void at_fork_prepare(void)
{
    pthread_mutex_lock(&drain_lock);
}

static void at_fork_parent(void)
{
    pthread_mutex_unlock(&drain_lock);
}

static void at_fork_child(void)
{
    pthread_mutex_init(&drain_lock, NULL);
    atomic_store(&gt_cap_pid, getpid());
    is_fork_child = true;
    bool was_active = writer_started;
    atomic_store(&gt_cap_active, 0);
    /* The parent's writer, file and pipe belong to the parent: never touch
     * them here (closing the connection could checkpoint the parent's file). */
    writer = NULL;
    drain = NULL;
    memset(dropped_total, 0, sizeof dropped_total);
    part_name[0] = '\0';
    fail_reason[0] = '\0';
    writer_started = false;
    if (gt_cap_wake_pipe[0] >= 0) {
        close(gt_cap_wake_pipe[0]);
        close(gt_cap_wake_pipe[1]);
        gt_cap_wake_pipe[0] = gt_cap_wake_pipe[1] = -1;
    }
    gt_cap_rings_after_fork();
    if (was_active)
        start_writer();
}

static void init_session(void)
{
    atomic_store(&gt_cap_pid, getpid());
    read_options();
    pthread_atfork(at_fork_prepare, at_fork_parent, at_fork_child);
    gt_cap_install_signal_handlers();
    start_writer();
#ifdef HAVE_CUPTI
    /* Normally the CUDA driver starts CUPTI (InitializeInjection, cupti.c);
     * a process that already has the driver loaded is subscribed now. */
    if (atomic_load(&gt_cap_active) && gt_cap_opts.cuda != 0) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (h) {
            dlclose(h);
            gt_cupti_start();
        }
    }
#endif
}

void gt_cap_init(void)
{
    pthread_once(&init_once, init_session);
}

bool gt_cap_stop(void)
{
    if (!writer_started || getpid() != atomic_load(&gt_cap_pid) || gt_cap_is_writer_thread())
        return false;
#ifdef HAVE_CUPTI
    gt_cupti_flush();
    const char *root = getenv("GTRACE_ROOT_PID");
    if (gt_cap_opts.cuda == 1 && !gt_cupti_started() && root && atoll(root) == getpid()) {
        static _Atomic int once;
        gt_cap_warn_once(&once, "--cuda=on: CUDA was not traced: the program did not initialize CUDA "
                                "(no GPU or driver?), or CUPTI could not be used (see above)");
    }
#endif
    atomic_store(&stop_flag, 1);
    gt_cap_wake_writer();
    /* A writer stuck on a lock inherited through fork must not hang the exit. */
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 60;
    if (pthread_timedjoin_np(writer_thread, NULL, &deadline) != 0) {
        static _Atomic int once;
        gt_cap_warn_once(&once, "the trace writer did not finish in 60 s: the trace of process %d may miss its last events",
                         (int)getpid());
        pthread_detach(writer_thread);
    }
    writer_started = false;
    atomic_store(&gt_cap_active, 0);
    /* The pipe stays open: a thread still recording may write to it, and a
     * closed descriptor's number could be reused by the program's next file. */
    return true;
}

void gt_cap_stop_wait(int max_ms)
{
    /* Async-signal-safe: flags, write(2), nanosleep(2). The writer thread
     * does the work. */
    if (!writer_started || getpid() != atomic_load(&gt_cap_pid) || gt_cap_is_writer_thread())
        return;
    atomic_store(&stop_flag, 1);
    gt_cap_wake_writer();
    for (int i = 0; i < max_ms / 10 && !atomic_load(&writer_done); i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&gt_cap_active, 0);
}

void gt_cap_stop_from_signal(void)
{
    /* The program dies anyway: the writer gets 5 s. */
    gt_cap_stop_wait(5000);
}

void gt_cap_restart(void)
{
    if (writer_started || getpid() != atomic_load(&gt_cap_pid))
        return;
    part_name[0] = '\0';
    fail_reason[0] = '\0';
    memset(dropped_total, 0, sizeof dropped_total);
    start_writer();
}

__attribute__((constructor)) static void capture_ctor(void)
{
    gt_cap_init();
}

__attribute__((destructor)) static void capture_dtor(void)
{
    (void)gt_cap_stop();
}
