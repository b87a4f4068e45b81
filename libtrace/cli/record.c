/* record.c: `gtrace [options] PROGRAM [ARGS...]`, the launcher.
 *
 * Runs PROGRAM with libgtrace.so in LD_PRELOAD (after what it already held)
 * and NVTX_INJECTION64_PATH, and the collector's socket in GTRACE_SOCKET;
 * while the collector (collect.c) reads the rings of every traced process
 * into part files, waits for PROGRAM and every process it started (gtrace
 * is their subreaper), assembles the parts into one trace, prints a summary on stderr and exits as PROGRAM did: its exit code,
 * or, when it died of a signal, by the same signal (so a shell sees 128+N).
 * A run that lost events (full buffers, a trace that could not be written)
 * says so, and when PROGRAM exited 0 gtrace exits GT_EXIT_INCOMPLETE (3).
 *
 * With --pytorch it also puts gtrace's Python package (libtrace/python) first
 * on PYTHONPATH and names libgtrace-nvtx.so for it: a PyTorch program then
 * marks its steps, phases, modules and ops as NVTX ranges without a change,
 * and on a GPU leaves CUDA memory snapshots in the parts folder, which go
 * into the trace as its processes' memory events and stacks.
 *
 * The traced processes only fill their rings (libtrace/capture); this
 * process writes the trace, through libtrace/store.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "gt_import.h"
#include "leftovers.h"

#ifndef GT_BINDIR
#define GT_BINDIR "/usr/local/bin"
#endif
#ifndef GT_PKGLIBDIR
#define GT_PKGLIBDIR "/usr/local/lib/gtrace"
#endif
#ifndef GT_PKGDATADIR
#define GT_PKGDATADIR "/usr/local/share/gtrace"
#endif

/* The exit status of a run whose program exited 0 but whose trace is
 * incomplete (events dropped or lost) or was not written (gtrace.1). */
#define GT_EXIT_INCOMPLETE 3

typedef struct record_opts {
    const char *output;
    const char *cuda;      /* auto, on, off */
    int n_stack_frames;
    int flush_ms;
    bool force;
    int wait_leftovers_s;  /* after the program ends, for what it left running */
    char pytorch[64];      /* "steps,modules[,ops][,shapes]"; empty: --pytorch not given */
} record_opts;

/* --pytorch[=LIST]: LIST is a comma-separated subset of these (shapes adds
 * ops); no LIST means steps,modules. Written back in this order. */
static const char *const pytorch_features[] = {"steps", "modules", "ops", "shapes"};

static bool parse_pytorch(const char *arg, char *out, size_t out_bytes)
{
    bool on[4] = {false, false, false, false};
    if (!arg) {
        on[0] = on[1] = true;
    } else {
        const char *p = arg;
        for (;;) {
            size_t len = strcspn(p, ",");
            size_t i = 0;
            while (i < 4 && !(strlen(pytorch_features[i]) == len && !strncmp(p, pytorch_features[i], len)))
                i++;
            if (i == 4)
                return false;
            on[i] = true;
            if (!p[len])
                break;
            p += len + 1;
        }
    }
    if (on[3])
        on[2] = true;
    out[0] = '\0';
    for (size_t i = 0, len = 0; i < 4; i++)
        if (on[i])
            len += (size_t)snprintf(out + len, out_bytes - len, "%s%s", len ? "," : "", pytorch_features[i]);
    return true;
}

static bool parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

/* ---- finding the program and the library ------------------------------ */

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Resolves PROGRAM as execvp would, so that errors are ours to explain:
 * 127 when it does not exist, 126 when it cannot be run (as shells say). */
static int find_program(const char *name, char *out, size_t out_bytes)
{
    struct stat st;
    if (strchr(name, '/')) {
        if (stat(name, &st) != 0) {
            gt_cli_error("cannot run '%s': %s", name, strerror(errno));
            return 127;
        }
        if (S_ISDIR(st.st_mode)) {
            gt_cli_error("cannot run '%s': it is a directory", name);
            return 126;
        }
        if (access(name, X_OK) != 0) {
            gt_cli_error("cannot run '%s': it is not executable (%s)", name, strerror(errno));
            return 126;
        }
        snprintf(out, out_bytes, "%s", name);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    bool found_not_exec = false;
    for (const char *p = path; p;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        snprintf(out, out_bytes, "%.*s%s%s", (int)len, len ? p : ".", "/", name);
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(out, X_OK) == 0)
                return 0;
            found_not_exec = true;
        }
        p = colon ? colon + 1 : NULL;
    }
    if (found_not_exec) {
        gt_cli_error("cannot run '%s': found in PATH but not executable", name);
        return 126;
    }
    gt_cli_error("cannot run '%s': command not found in PATH", name);
    return 127;
}

/* The folder this executable is in, into dir (false when /proc cannot say). */
static bool exe_dir(char *dir, size_t dir_bytes)
{
    ssize_t n = readlink("/proc/self/exe", dir, dir_bytes - 1);
    if (n <= 0)
        return false;
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash)
        return false;
    *slash = '\0';
    return true;
}

/* TARGET, an installation folder as configured, seen from DIR, the folder
 * this gtrace runs from: the path from GT_BINDIR to TARGET (with `prefix`
 * /usr, ../lib/gtrace), taken from DIR. So an installation staged under
 * DESTDIR, installed with another prefix at `make install`, or moved as a
 * whole finds its parts where `make install` put them. */
static void installed_beside(char *out, size_t out_bytes, const char *dir, const char *target)
{
    const char *bin = GT_BINDIR;
    size_t i = 0, common = 0;
    while (bin[i] && bin[i] == target[i])
        i++;
    if ((bin[i] == '\0' || bin[i] == '/') && (target[i] == '\0' || target[i] == '/'))
        common = i;
    else
        for (size_t j = 0; j < i; j++)
            if (bin[j] == '/')
                common = j;
    size_t len = (size_t)snprintf(out, out_bytes, "%s", dir);
    for (const char *p = bin + common; *p && len < out_bytes; p++)
        if (*p != '/' && (p == bin || p[-1] == '/'))
            len += (size_t)snprintf(out + len, out_bytes - len, "/..");
    if (len < out_bytes)
        snprintf(out + len, out_bytes - len, "%s", target + common);
}

/* A library of ours: $ENV, else beside this executable in the build tree
 * (libtrace/SUBDIR/.libs), else in the installed pkglibdir, first relative
 * to this executable (installed_beside), then as configured. The libraries
 * are loaded by path (LD_PRELOAD, NVTX_INJECTION64_PATH, ctypes), never
 * linked, so they live in $(pkglibdir), not on the linker's path. */
static bool find_our_library(const char *name, const char *env_name, const char *subdir, char *out,
                             size_t out_bytes)
{
    const char *env = getenv(env_name);
    if (env && *env) {
        if (realpath(env, out) && is_file(out))
            return true;
        gt_cli_error("%s=%s: no such library", env_name, env);
        return false;
    }
    char dir[PATH_MAX], path[2 * PATH_MAX];
    bool have_dir = exe_dir(dir, sizeof dir);
    if (have_dir) {
        snprintf(path, sizeof path, "%s/../%s/.libs/%s", dir, subdir, name);
        if (realpath(path, out) && is_file(out))
            return true;
        char pkglib[PATH_MAX + 64];
        installed_beside(pkglib, sizeof pkglib, dir, GT_PKGLIBDIR);
        snprintf(path, sizeof path, "%s/%s", pkglib, name);
        if (realpath(path, out) && is_file(out))
            return true;
    }
    snprintf(path, sizeof path, "%s/%s", GT_PKGLIBDIR, name);
    if (realpath(path, out) && is_file(out))
        return true;
    gt_cli_error("cannot find %s (looked beside %s and in %s); set %s", name, have_dir ? dir : "gtrace",
                 GT_PKGLIBDIR, env_name);
    (void)out_bytes;
    return false;
}

static bool find_library(char *out, size_t out_bytes)
{
    return find_our_library("libgtrace.so", "GTRACE_LIB", "capture", out, out_bytes);
}

/* The Python package (a folder with sitecustomize.py): $GTRACE_PYTHON_DIR,
 * else the installed pkgdatadir/python relative to this executable (as
 * installed_beside finds it), else as configured, else the source tree this
 * gtrace was built from. */
static bool find_python_dir(char *out, size_t out_bytes)
{
    char path[PATH_MAX + 64];
    const char *env = getenv("GTRACE_PYTHON_DIR");
    if (env && *env) {
        snprintf(path, sizeof path, "%s/sitecustomize.py", env);
        if (is_file(path) && realpath(env, out))
            return true;
        gt_cli_error("GTRACE_PYTHON_DIR=%s: no sitecustomize.py there", env);
        return false;
    }
    char dir[PATH_MAX];
    const char *dirs[3] = {NULL, GT_PKGDATADIR "/python", GT_SRCDIR "/libtrace/python"};
    char installed[PATH_MAX + 64];
    if (exe_dir(dir, sizeof dir)) {
        installed_beside(installed, sizeof installed, dir, GT_PKGDATADIR "/python");
        dirs[0] = installed;
    }
    for (size_t i = 0; i < 3; i++) {
        if (!dirs[i])
            continue;
        snprintf(path, sizeof path, "%s/sitecustomize.py", dirs[i]);
        if (is_file(path) && realpath(dirs[i], out))
            return true;
    }
    gt_cli_error("--pytorch: cannot find gtrace's Python package (looked in %s); set GTRACE_PYTHON_DIR",
                 GT_PKGDATADIR "/python");
    (void)out_bytes;
    return false;
}

/* ---- the output file -------------------------------------------------- */

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* The rank of this launcher in an MPI or Slurm job, or NULL. */
static const char *job_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return v;
    }
    return NULL;
}

/* -o with %r (the job rank of this launcher), %p (its pid) and %% expanded,
 * so that `mpirun -np 4 gtrace -o trace.%r.sqlite PROGRAM` writes one trace per rank. */
static bool expand_output(const char *pattern, char *out, size_t out_bytes)
{
    size_t n = 0;
    for (const char *p = pattern; *p; p++) {
        char piece[32];
        const char *add = piece;
        piece[0] = *p;
        piece[1] = '\0';
        if (*p == '%' && p[1]) {
            p++;
            if (*p == 'r') {
                add = job_rank();
                if (!add) {
                    gt_cli_error("-o %s: %%r names the job rank, but none of OMPI_COMM_WORLD_RANK, PMIX_RANK, "
                                 "PMI_RANK, SLURM_PROCID is set", pattern);
                    return false;
                }
            } else if (*p == 'p') {
                snprintf(piece, sizeof piece, "%d", (int)getpid());
            } else if (*p != '%') {
                gt_cli_error("-o %s: unknown %%%c (expected %%r, %%p or %%%%)", pattern, *p);
                return false;
            }
        }
        size_t len = strlen(add);
        if (n + len + 1 > out_bytes) {
            gt_cli_error("-o %s: name too long", pattern);
            return false;
        }
        memcpy(out + n, add, len);
        n += len;
    }
    out[n] = '\0';
    return true;
}

static bool choose_output(const record_opts *o, const char *program, char *out, size_t out_bytes)
{
    if (o->output) {
        if (!expand_output(o->output, out, out_bytes))
            return false;
        /* the program is an input: never written over; a link's file is written in its place */
        const char *program_file[] = {program};
        if (gt_cli_check_output(out, o->force, program_file, 1, out, out_bytes) != 0) {
            gt_cli_error("%s", gt_error_last());
            return false;
        }
        return true;
    }
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", program);
    const char *base = basename(copy);
    for (int n = 1; n < 100000; n++) {
        snprintf(out, out_bytes, "gtrace-%s-%d.sqlite", base, n);
        if (!exists(out))
            return true;
    }
    gt_cli_error("no free name gtrace-%s-N.sqlite in this directory; use -o", base);
    return false;
}

/* A fresh directory beside the output for the parts the processes write. */
static bool make_parts_dir(const char *output, char *out, size_t out_bytes)
{
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", output);
    const char *dir = dirname(copy);
    snprintf(out, out_bytes, "%s/.gtrace-parts-XXXXXX", dir);
    if (!mkdtemp(out)) {
        gt_cli_error("cannot create a directory for the trace in %s: %s", dir, strerror(errno));
        return false;
    }
    char abs[PATH_MAX];
    if (realpath(out, abs))
        snprintf(out, out_bytes, "%s", abs);
    if (gt_cli_make_losses(out) != 0) {
        gt_cli_error("cannot prepare the trace: %s", gt_error_last());
        rmdir(out);
        return false;
    }
    return true;
}

/* gt_cli_assemble consumed the parts; a directory that is not empty (a
 * process still writing after its parent ended) is left for the user. */
static void remove_parts_dir(const char *dir)
{
    if (rmdir(dir) != 0 && errno == ENOTEMPTY)
        gt_cli_error("left %s behind: a traced process was still writing into it", dir);
}

/* ---- the environment of the program ----------------------------------- */

static bool setenv_fmt(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool setenv_fmt(const char *name, const char *fmt, ...)
{
    char buf[PATH_MAX * 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return setenv(name, buf, 1) == 0;
}

/* --pytorch: the package first on PYTHONPATH, what it marks, the NVTX
 * library it calls (which hands every call to libgtrace.so), and the parts
 * folder where it leaves CUDA memory snapshots. */
static void prepare_python_env(const record_opts *o, const char *python_dir, const char *nvtx_lib,
                               const char *parts_dir)
{
    const char *old = getenv("PYTHONPATH");
    if (old && *old)
        setenv_fmt("PYTHONPATH", "%s:%s", python_dir, old);
    else
        setenv("PYTHONPATH", python_dir, 1);
    setenv("GTRACE_PYTORCH", o->pytorch, 1);
    setenv("GTRACE_NVTX_LIB", nvtx_lib, 1);
    setenv("GTRACE_PARTS_DIR", parts_dir, 1);
}

static void prepare_env(const record_opts *o, const char *lib, const char *socket_name, int64_t t0_ns)
{
    const char *old = getenv("LD_PRELOAD");
    if (old && *old && !strstr(old, lib))
        setenv_fmt("LD_PRELOAD", "%s:%s", old, lib);
    else if (!old || !*old)
        setenv("LD_PRELOAD", lib, 1);
    setenv("NVTX_INJECTION64_PATH", lib, 1);
    setenv("GTRACE_SOCKET", socket_name, 1);
    setenv_fmt("GTRACE_T0_NS", "%lld", (long long)t0_ns);
    setenv_fmt("GTRACE_FLUSH_MS", "%d", o->flush_ms);
    setenv_fmt("GTRACE_STACKS", "%d", o->n_stack_frames);
    setenv("GTRACE_CUDA", o->cuda, 1);
#ifdef HAVE_CUPTI
    /* The CUDA driver calls libgtrace's InitializeInjection during cuInit,
     * so CUPTI is loaded only into processes that use CUDA. */
    if (strcmp(o->cuda, "off") != 0)
        setenv("CUDA_INJECTION64_PATH", lib, 1);
#endif
}

/* ---- running it ------------------------------------------------------- */

static volatile sig_atomic_t forward_to, forwarded;

static void forward_signal(int sig)
{
    if (forward_to > 0) {
        kill((pid_t)forward_to, sig);
        forwarded = sig; /* passed on to what the program leaves running, too */
    } else {
        gt_cli_leftover_signal(sig); /* the program has ended: the wait for its leftovers hears it */
    }
}

static void on_stop_signal(int sig)
{
    gt_cli_stop_signal = sig;
}

static void after_run(int sig, const struct sigaction *old)
{
    struct sigaction stop = {.sa_handler = on_stop_signal};
    sigemptyset(&stop.sa_mask);
    bool ignored = !(old->sa_flags & SA_SIGINFO) && old->sa_handler == SIG_IGN;
    sigaction(sig, ignored ? old : &stop, NULL);
}

/* Runs the program and waits for it, then for what it left running (at
 * most wait_s seconds: gt_cli_wait_leftovers); returns 0 with its wait
 * status, or -1 with the error said. *out_signal: a signal gtrace got while
 * waiting for the leftovers (0: none), which it dies of once the trace is
 * written. */
static int run_program(const char *path, char **argv, gt_collector *col, int wait_s, int *out_status,
                       pid_t *out_pid, int *out_signal)
{
    int err_pipe[2];
    if (pipe2(err_pipe, O_CLOEXEC) != 0) {
        gt_cli_error("pipe: %s", strerror(errno));
        return -1;
    }
    /* Processes the program leaves behind become ours, so we wait for them
     * too and their part files are complete when we assemble the trace. */
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

    struct sigaction ign = {.sa_handler = SIG_IGN}, fwd = {.sa_handler = forward_signal}, old_int, old_quit,
                     old_term, old_hup;
    sigemptyset(&ign.sa_mask);
    sigemptyset(&fwd.sa_mask);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        gt_cli_error("fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        close(err_pipe[0]);
        setenv_fmt("GTRACE_ROOT_PID", "%d", (int)getpid());
        execv(path, argv);
        int e = errno;
        ssize_t n = write(err_pipe[1], &e, sizeof e);
        (void)n;
        _exit(127);
    }
    forward_to = pid;
    /* The collector starts once the program is forked (a fork child of a
     * threaded process may only exec); connections wait in the backlog. */
    if (gt_collector_start(col) != 0)
        gt_cli_error("%s: nothing is recorded", gt_error_last());
    /* A file size limit (ulimit -f) makes writes fail instead of killing
     * gtrace, which then says what it could not write. The program keeps
     * its own disposition (it was forked before this). */
    signal(SIGXFSZ, SIG_IGN);
    /* Like system(): the terminal's ^C and ^\ go to the program (same process
     * group); gtrace outlives it to finish the trace. TERM and HUP are passed on. */
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    sigaction(SIGTERM, &fwd, &old_term);
    sigaction(SIGHUP, &fwd, &old_hup);
    close(err_pipe[1]);
    int exec_errno = 0;
    ssize_t n;
    do {
        n = read(err_pipe[0], &exec_errno, sizeof exec_errno);
    } while (n < 0 && errno == EINTR);
    close(err_pipe[0]);

    int status = 0;
    bool have_status = false;
    for (;;) {
        int st;
        pid_t w = waitpid(-1, &st, 0);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            break; /* ECHILD: every descendant is gone */
        }
        if (w == pid) {
            status = st;
            have_status = true;
            forward_to = 0;
            const struct sigaction old[4] = {old_int, old_quit, old_term, old_hup};
            *out_signal = gt_cli_wait_leftovers(wait_s, (int)forwarded, old);
            break;
        }
    }
    /* From here an interruption stops the assembly, which then leaves
     * nothing behind; a signal ignored when gtrace started stays ignored. */
    after_run(SIGINT, &old_int);
    after_run(SIGQUIT, &old_quit);
    after_run(SIGTERM, &old_term);
    after_run(SIGHUP, &old_hup);
    if (n == (ssize_t)sizeof exec_errno) {
        gt_cli_error("cannot run '%s': %s", path, strerror(exec_errno));
        return -1;
    }
    if (!have_status) {
        gt_cli_error("lost track of '%s'", path);
        return -1;
    }
    *out_status = status;
    *out_pid = pid;
    return 0;
}

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the summary ------------------------------------------------------ */

/* Prints the summary; returns whether the trace says events are missing. */
static bool print_summary(const char *output, int64_t wall_ns, const gt_run_losses *losses)
{
    gt_trace *t = NULL;
    char buf[64];
    if (gt_trace_open(&t, output, 0) != 0) {
        gt_cli_error("the trace cannot be read back: %s", gt_error_last());
        return true;
    }
    fprintf(stderr, "gtrace: trace written to %s\n", output);
    fprintf(stderr, "  run time        %s\n", gt_cli_duration(wall_ns, buf, sizeof buf));
    int64_t start, end;
    if (gt_trace_time_span(t, &start, &end) == 0 && end >= start)
        fprintf(stderr, "  events span     %s\n", gt_cli_duration(end - start, buf, sizeof buf));
    size_t n_proc = 0;
    gt_trace_processes(t, &n_proc);
    fprintf(stderr, "  processes       %zu\n", n_proc);
    fprintf(stderr, "  events by kind:\n");
    int64_t total = gt_cli_print_counts(stderr, t, "    ");
    int64_t dropped[GT_EV_N_KINDS], n_dropped = 0;
    gt_cli_dropped(t, dropped);
    for (int k = 0; k < GT_EV_N_KINDS; k++)
        n_dropped += dropped[k];
    if (total == 0 && n_dropped == 0 && losses->n_failed == 0 && losses->n_unaccounted == 0)
        fprintf(stderr, "    (none: the program made no NVTX or CUDA calls gtrace could see)\n");
    else if (total == 0)
        fprintf(stderr, "    (none recorded)\n");
    if (n_dropped > 0) {
        if (losses->n_failed > 0)
            fprintf(stderr, "  DROPPED events (%d process%s could not write the trace: %s):\n", losses->n_failed,
                    losses->n_failed > 1 ? "es" : "", losses->reason[0] ? losses->reason : "unknown error");
        else
            fprintf(stderr, "  DROPPED events (buffers full; try a larger GTRACE_BUFFER_KB or a smaller --flush-ms):\n");
        for (int k = 0; k < GT_EV_N_KINDS; k++)
            if (dropped[k] > 0)
                fprintf(stderr, "    %-12s %lld\n", gt_event_kind_name((gt_event_kind)k), (long long)dropped[k]);
    }
    if (losses->n_unaccounted > 0)
        fprintf(stderr, "  %lld process%s lost events that could not be counted\n", (long long)losses->n_unaccounted,
                losses->n_unaccounted > 1 ? "es" : "");
    gt_trace_free(t);
    bool incomplete = n_dropped > 0 || losses->n_failed > 0 || losses->n_unaccounted > 0;
    if (incomplete)
        gt_cli_error("the trace is incomplete: events were lost (counted above)");
    return incomplete;
}

/* CUDA memory snapshots the Python package left in the parts folder
 * (gtrace_torch/memory.py: pytorch-PID[-oom].pickle, beside pytorch-PID.clock:
 * "realtime_ns monotonic_ns" read together at its start) go into the trace as
 * that process's memory events and stacks: each becomes one more part,
 * pytorch-PID.sqlite, which assembly copies like any other. Its actions
 * (time_us, on the wall clock) are put on the trace's clock through the
 * process's own clock pair, else through the run's start. The snapshot at
 * exit holds the history up to the end; the one taken at an out-of-memory
 * error goes in only when there is none (a process killed after it), else it
 * is kept beside the trace for gtrace import. A snapshot that cannot be read
 * is kept beside the trace, said in one line, and makes the run incomplete. */
typedef struct snap_result {
    char name[NAME_MAX + 1]; /* its file name in the parts folder */
    char why[1024];   /* the reason it is not in the trace; "" when it is */
    gt_import_stats st;
} snap_result;

typedef struct snap_results { snap_result *v; size_t n; } snap_results;

/* The pid of pytorch-PID.pickle (oom false) or pytorch-PID-oom.pickle (true); 0: neither. */
static long long snapshot_pid(const char *name, bool oom)
{
    long long pid = 0;
    int end = 0;
    if (sscanf(name, oom ? "pytorch-%lld-oom.pickle%n" : "pytorch-%lld.pickle%n", &pid, &end) != 1 ||
        name[end] != '\0' || pid <= 0 || pid > 0xffffff)
        return 0;
    return pid;
}

/* The wall-clock time at the trace's zero (monotonic t0_ns) as process pid saw it. */
static int64_t wall_zero_of(const char *parts, long long pid, int64_t t0_ns, int64_t utc_t0_ns)
{
    char path[PATH_MAX * 2];
    long long wall = 0, mono = 0;
    snprintf(path, sizeof path, "%s/pytorch-%lld.clock", parts, pid);
    FILE *f = fopen(path, "r");
    int n = f ? fscanf(f, "%lld %lld", &wall, &mono) : 0;
    if (f)
        fclose(f);
    return n == 2 && wall > 0 && mono > 0 ? (int64_t)(wall - mono) + t0_ns : utc_t0_ns;
}

static void import_snapshots(const char *parts, int64_t t0_ns, int64_t utc_t0_ns, snap_results *out)
{
    DIR *d = opendir(parts);
    struct dirent *e;
    while (d && !gt_cli_stop_signal && (e = readdir(d))) { /* interrupted: no trace is written */
        long long pid = snapshot_pid(e->d_name, false);
        char pickle[PATH_MAX * 2], part[PATH_MAX * 2];
        if (!pid && (pid = snapshot_pid(e->d_name, true))) {
            bool at_exit = false; /* the snapshot at exit goes in, or went in already */
            snprintf(pickle, sizeof pickle, "%s/pytorch-%lld.pickle", parts, pid);
            for (size_t i = 0; i < out->n && !at_exit; i++)
                at_exit = !strcmp(out->v[i].name, strrchr(pickle, '/') + 1);
            if (at_exit || access(pickle, F_OK) == 0)
                continue;
        }
        snap_result *r = pid ? realloc(out->v, (out->n + 1) * sizeof *out->v) : NULL;
        if (!r)
            continue; /* not a snapshot; or out of memory: kept beside the trace */
        out->v = r;
        r = &out->v[out->n++];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%s", e->d_name);
        snprintf(pickle, sizeof pickle, "%s/%s", parts, e->d_name);
        snprintf(part, sizeof part, "%s/pytorch-%lld.sqlite", parts, pid);
        if (gt_import_snapshot_part(&r->st, part, pickle, pid, wall_zero_of(parts, pid, t0_ns, utc_t0_ns)) == 0) {
            unlink(pickle);
            continue;
        }
        /* the message names the file by its place in the parts folder, which goes */
        const char *why = gt_error_last();
        if (!strncmp(why, pickle, strlen(pickle)) && !strncmp(why + strlen(pickle), ": ", 2))
            why += strlen(pickle) + 2;
        snprintf(r->why, sizeof r->why, "%s", why);
    }
    if (d)
        closedir(d);
}

/* Says what became of each snapshot, and moves those that are not in the
 * trace beside it as TRACE.NAME. True when one could not be read. */
static bool keep_snapshots(const char *parts, const char *output, const snap_results *res)
{
    bool failed = false;
    for (size_t i = 0; i < res->n; i++)
        if (!res->v[i].why[0])
            fprintf(stderr, "  CUDA memory     process %lld: %lld segments, %lld blocks, %lld actions\n",
                    (long long)res->v[i].st.pid, (long long)res->v[i].st.n_segments,
                    (long long)res->v[i].st.n_blocks, (long long)res->v[i].st.n_actions);
    DIR *d = opendir(parts);
    if (!d)
        return false;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "pytorch-", 8) != 0)
            continue;
        char from[PATH_MAX * 2], to[PATH_MAX * 2];
        snprintf(from, sizeof from, "%s/%s", parts, e->d_name);
        if (len <= 7 || strcmp(e->d_name + len - 7, ".pickle") != 0) {
            unlink(from); /* the .clock, or a .tmp left by a process that died while writing */
            continue;
        }
        const snap_result *r = NULL;
        for (size_t i = 0; i < res->n && !r; i++)
            if (!strcmp(res->v[i].name, e->d_name))
                r = &res->v[i];
        snprintf(to, sizeof to, "%s.%s", output, e->d_name);
        if (rename(from, to) != 0)
            gt_cli_error("cannot keep the CUDA memory snapshot %s: %s", from, strerror(errno));
        else if (r && r->why[0])
            gt_cli_error("the CUDA memory snapshot %s is not in the trace (%s); kept as %s", e->d_name, r->why, to);
        else
            fprintf(stderr, "  CUDA memory snapshot: %s (gtrace import it)\n", to);
        failed |= r && r->why[0];
    }
    closedir(d);
    return failed;
}

/* Dies of `sig` (after the parts are removed), as a shell expects of an interrupted command. */
static int die_of(int sig)
{
    fflush(NULL);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    return 128 + sig;
}

/* Exits as the program did: same code, or the same signal. */
static int pass_status_through(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        fflush(NULL);
        /* The program dumped core (or not): gtrace must not add its own. */
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        signal(sig, SIG_DFL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        raise(sig);
        return 128 + sig; /* a signal that does not kill (it cannot happen for WTERMSIG, but be sure) */
    }
    return 1;
}

static void record_usage(FILE *out)
{
    fprintf(out, "Usage: gtrace [-o FILE] [--cuda=auto|on|off] [--stacks=N] [--flush-ms=N] [--pytorch[=LIST]] [--force]\n"
                 "              [--wait-leftovers=SECONDS] [--] PROGRAM [ARGS...]\n"
                 "Try 'gtrace --help' for more.\n");
}

int gt_cli_record(int argc, char **argv)
{
    record_opts o = {.output = NULL, .cuda = "auto", .n_stack_frames = 16, .flush_ms = 200, .force = false,
                     .wait_leftovers_s = GT_LEFTOVERS_WAIT_S, .pytorch = ""};
    enum { OPT_CUDA = 256, OPT_STACKS, OPT_FLUSH, OPT_FORCE, OPT_PYTORCH, OPT_WAIT_LEFTOVERS };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},   {"cuda", required_argument, NULL, OPT_CUDA},
        {"stacks", required_argument, NULL, OPT_STACKS}, {"flush-ms", required_argument, NULL, OPT_FLUSH},
        {"force", no_argument, NULL, OPT_FORCE},    {"pytorch", optional_argument, NULL, OPT_PYTORCH},
        {"wait-leftovers", required_argument, NULL, OPT_WAIT_LEFTOVERS},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    /* '+': stop at the first non-option, PROGRAM's own options are its own. */
    while ((c = getopt_long(argc, argv, "+o:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': o.output = optarg; break;
        case OPT_CUDA:
            if (strcmp(optarg, "auto") && strcmp(optarg, "on") && strcmp(optarg, "off")) {
                gt_cli_error("--cuda=%s: expected auto, on or off", optarg);
                return 2;
            }
            o.cuda = optarg;
            break;
        case OPT_STACKS:
            if (!parse_int(optarg, 0, 64, &o.n_stack_frames)) {
                gt_cli_error("--stacks=%s: expected a number of frames from 0 to 64", optarg);
                return 2;
            }
            break;
        case OPT_FLUSH:
            if (!parse_int(optarg, 1, 60000, &o.flush_ms)) {
                gt_cli_error("--flush-ms=%s: expected milliseconds from 1 to 60000", optarg);
                return 2;
            }
            break;
        case OPT_FORCE: o.force = true; break;
        case OPT_WAIT_LEFTOVERS:
            if (!parse_int(optarg, 0, 7 * 24 * 3600, &o.wait_leftovers_s)) {
                gt_cli_error("--wait-leftovers=%s: expected seconds from 0 to 604800", optarg);
                return 2;
            }
            break;
        case OPT_PYTORCH:
            if (!parse_pytorch(optarg, o.pytorch, sizeof o.pytorch)) {
                gt_cli_error("--pytorch=%s: expected a comma-separated list of steps, modules, ops, shapes", optarg);
                return 2;
            }
            break;
        case 'h': record_usage(stdout); return 0;
        case 'V': printf("gtrace %s\n", PACKAGE_VERSION); return 0;
        default:
            if (optopt && optopt < 256)
                gt_cli_error("unknown option '-%c'", optopt);
            else
                gt_cli_error("unknown option '%s'", argv[optind - 1]);
            record_usage(stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        gt_cli_error("no program to run");
        record_usage(stderr);
        return 2;
    }
    char **prog_argv = argv + optind;
    char path[PATH_MAX], lib[PATH_MAX], output[PATH_MAX], parts[PATH_MAX], python_dir[PATH_MAX], nvtx_lib[PATH_MAX];
    int rc = find_program(prog_argv[0], path, sizeof path);
    if (rc != 0)
        return rc;
    if (!find_library(lib, sizeof lib))
        return 1;
    if (o.pytorch[0] && (!find_python_dir(python_dir, sizeof python_dir) ||
                         !find_our_library("libgtrace-nvtx.so", "GTRACE_NVTX_LIB", "nvtxlib", nvtx_lib, sizeof nvtx_lib)))
        return 1;
    if (!choose_output(&o, prog_argv[0], output, sizeof output))
        return 1;
    if (!make_parts_dir(output, parts, sizeof parts))
        return 1;

    gt_collector *col = NULL;
    if (gt_collector_new(&col, parts, o.flush_ms) != 0) {
        gt_cli_error("cannot prepare the trace: %s", gt_error_last());
        gt_cli_remove_parts(parts);
        remove_parts_dir(parts);
        return 1;
    }
    int64_t t0 = monotonic_ns();
    int64_t utc_t0 = realtime_ns();
    prepare_env(&o, lib, gt_collector_socket(col), t0);
    if (o.pytorch[0])
        prepare_python_env(&o, python_dir, nvtx_lib, parts);
    int status = 0, leftover_signal = 0;
    pid_t pid = 0;
    int run_rc = run_program(path, prog_argv, col, o.wait_leftovers_s, &status, &pid, &leftover_signal);
    /* Every traced process has ended: the last read of every region. */
    gt_collector_free(col);
    if (run_rc != 0) {
        gt_cli_assemble(parts, NULL, false, NULL, NULL); /* removes whatever was written */
        remove_parts_dir(parts);
        return 127;
    }
    /* The end-of-run clock pair: the trace's time and the wall clock, read together. */
    int64_t wall_ns = monotonic_ns() - t0;
    int64_t utc_end = realtime_ns();

    char cmdline[8192] = "";
    size_t len = 0;
    for (char **a = prog_argv; *a && len < sizeof cmdline - 1; a++)
        len += (size_t)snprintf(cmdline + len, sizeof cmdline - len, "%s%s", a == prog_argv ? "" : " ", *a);
    char options[256];
    int n_opt = snprintf(options, sizeof options, "--cuda=%s --stacks=%d --flush-ms=%d", o.cuda, o.n_stack_frames,
                         o.flush_ms);
    if (o.pytorch[0] && n_opt > 0 && (size_t)n_opt < sizeof options)
        snprintf(options + n_opt, sizeof options - (size_t)n_opt, " --pytorch=%s", o.pytorch);
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", prog_argv[0]);
    gt_run_info run = {.utc_t0_ns = utc_t0, .end_ns = wall_ns, .utc_end_ns = utc_end, .root_pid = pid,
                       .program_name = basename(copy), .command_line = cmdline, .options = options};
    gt_run_losses losses;
    snap_results snaps = {NULL, 0};
    bool incomplete;
    import_snapshots(parts, t0, utc_t0, &snaps);
    if (gt_cli_assemble(parts, output, o.force, &run, &losses) != 0) {
        if (gt_cli_stop_signal) {
            gt_cli_remove_parts(parts);
            remove_parts_dir(parts);
            gt_cli_error("interrupted: no trace written");
            return die_of(gt_cli_stop_signal);
        }
        gt_cli_error("%s", gt_error_last());
        gt_cli_error("no trace written; the recorded parts are kept in %s (gtrace recover %s -o TRACE)", parts,
                     parts);
        incomplete = true;
    } else {
        incomplete = print_summary(output, wall_ns, &losses);
        incomplete |= keep_snapshots(parts, output, &snaps);
        remove_parts_dir(parts);
    }
    free(snaps.v);
    if (gt_cli_stop_signal)
        return die_of(gt_cli_stop_signal);
    if (leftover_signal) /* the trace is written: gtrace was asked to stop */
        return die_of(leftover_signal);
    if (incomplete && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return GT_EXIT_INCOMPLETE;
    return pass_status_through(status);
}
