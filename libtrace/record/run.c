/* run.c: the engine of `gtrace [options] PROGRAM [ARGS...]` (gt_record_run).
 *
 * Runs PROGRAM with libgtrace.so in LD_PRELOAD (after what it already held)
 * and NVTX_INJECTION64_PATH, and the collector's socket in GTRACE_SOCKET;
 * while the collector (collect.c) reads the rings of every traced process
 * into part files, waits for PROGRAM and every process it started (gtrace
 * is their subreaper), then assembles the parts into one trace
 * (assemble.c). With --pytorch it also puts gtrace's Python package
 * (libtrace/python) first on PYTHONPATH and names libgtrace-nvtx.so for it;
 * the CUDA memory snapshots it leaves go into the trace (snapshots.c).
 *
 * It parses no command line and prints no summary (the CLI's record.c
 * does); what it has to say goes through the message hook (say.c). The
 * traced processes only fill their rings (libtrace/capture); this process
 * writes the trace, through libtrace/store.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "flight.h"
#include "leftovers.h"
#include "record_int.h"

#ifndef GT_BINDIR
#define GT_BINDIR "/usr/local/bin"
#endif
#ifndef GT_PKGLIBDIR
#define GT_PKGLIBDIR "/usr/local/lib/gtrace"
#endif
#ifndef GT_PKGDATADIR
#define GT_PKGDATADIR "/usr/local/share/gtrace"
#endif

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
            gt_record_error("cannot run '%s': %s", name, strerror(errno));
            return 127;
        }
        if (S_ISDIR(st.st_mode)) {
            gt_record_error("cannot run '%s': it is a directory", name);
            return 126;
        }
        if (access(name, X_OK) != 0) {
            gt_record_error("cannot run '%s': it is not executable (%s)", name, strerror(errno));
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
        gt_record_error("cannot run '%s': found in PATH but not executable", name);
        return 126;
    }
    gt_record_error("cannot run '%s': command not found in PATH", name);
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
static bool locate_our_library(const char *name, const char *subdir, char *out)
{
    char dir[PATH_MAX], path[2 * PATH_MAX];
    if (exe_dir(dir, sizeof dir)) {
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
    return realpath(path, out) && is_file(out);
}

static bool find_our_library(const char *name, const char *env_name, const char *subdir, char *out,
                             size_t out_bytes)
{
    const char *env = getenv(env_name);
    if (env && *env) {
        if (realpath(env, out) && is_file(out))
            return true;
        gt_record_error("%s=%s: no such library", env_name, env);
        return false;
    }
    if (locate_our_library(name, subdir, out))
        return true;
    char dir[PATH_MAX];
    bool have_dir = exe_dir(dir, sizeof dir);
    gt_record_error("cannot find %s (looked beside %s and in %s); set %s", name, have_dir ? dir : "gtrace",
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
        gt_record_error("GTRACE_PYTHON_DIR=%s: no sitecustomize.py there", env);
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
    gt_record_error("--pytorch: cannot find gtrace's Python package (looked in %s); set GTRACE_PYTHON_DIR",
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
                    gt_record_error("-o %s: %%r names the job rank, but none of OMPI_COMM_WORLD_RANK, PMIX_RANK, "
                                 "PMI_RANK, SLURM_PROCID is set", pattern);
                    return false;
                }
            } else if (*p == 'p') {
                snprintf(piece, sizeof piece, "%d", (int)getpid());
            } else if (*p != '%') {
                gt_record_error("-o %s: unknown %%%c (expected %%r, %%p or %%%%)", pattern, *p);
                return false;
            }
        }
        size_t len = strlen(add);
        if (n + len + 1 > out_bytes) {
            gt_record_error("-o %s: name too long", pattern);
            return false;
        }
        memcpy(out + n, add, len);
        n += len;
    }
    out[n] = '\0';
    return true;
}

static bool choose_output(const gt_record_options *o, const char *program, char *out, size_t out_bytes)
{
    if (o->output) {
        if (!expand_output(o->output, out, out_bytes))
            return false;
        /* the program is an input: never written over; a link's file is written in its place */
        const char *program_file[] = {program};
        if (gt_record_check_output(out, o->force, program_file, 1, out, out_bytes) != 0) {
            gt_record_error("%s", gt_error_last());
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
    gt_record_error("no free name gtrace-%s-N.sqlite in this directory; use -o", base);
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
        gt_record_error("cannot create a directory for the trace in %s: %s", dir, strerror(errno));
        return false;
    }
    char abs[PATH_MAX];
    if (realpath(out, abs))
        snprintf(out, out_bytes, "%s", abs);
    if (gt_record_make_losses(out) != 0) {
        gt_record_error("cannot prepare the trace: %s", gt_error_last());
        rmdir(out);
        return false;
    }
    return true;
}

/* gt_record_assemble consumed the parts; a directory that is not empty (a
 * process still writing after its parent ended) is left for the user. */
static void remove_parts_dir(const char *dir)
{
    if (rmdir(dir) != 0 && errno == ENOTEMPTY)
        gt_record_error("left %s behind: a traced process was still writing into it", dir);
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

/* Whether the --pytorch list `spec` names `feature`. */
static bool has_feature(const char *spec, const char *feature)
{
    size_t n = strlen(feature);
    for (const char *p = spec; *p;) {
        size_t k = strcspn(p, ",");
        if (k == n && strncmp(p, feature, n) == 0)
            return true;
        p += k + (p[k] == ',');
    }
    return false;
}

/* --pytorch: the package first on PYTHONPATH, what it marks, the NVTX
 * library it calls (which hands every call to libgtrace.so), and the parts
 * folder where it leaves CUDA memory snapshots. */
static void prepare_python_env(const gt_record_options *o, const char *python_dir, const char *nvtx_lib,
                               const char *parts_dir, const char *lib)
{
    const char *old = getenv("PYTHONPATH");
    if (old && *old)
        setenv_fmt("PYTHONPATH", "%s:%s", python_dir, old);
    else
        setenv("PYTHONPATH", python_dir, 1);
    setenv("GTRACE_PYTORCH", o->pytorch, 1);
    setenv("GTRACE_NVTX_LIB", nvtx_lib, 1);
    setenv("GTRACE_PARTS_DIR", parts_dir, 1);
    /* The C wrapper of module calls, where it was built: optional (without
     * it the Python wrapper does all); $GTRACE_TORCH_FAST as given ("none":
     * not used), else found as our libraries are. hooks.py loads it only in
     * a Python with the suffix it was built for. */
    const char *fast = getenv("GTRACE_TORCH_FAST");
    char fast_path[PATH_MAX];
    if (!(fast && *fast) && GT_PYTHON_EXT_SUFFIX[0] && locate_our_library("_gtrace_fast.so", "python", fast_path))
        setenv("GTRACE_TORCH_FAST", fast_path, 1);
    setenv("GTRACE_TORCH_FAST_SUFFIX", GT_PYTHON_EXT_SUFFIX, 1);
    /* Ops without shapes: libgtrace.so is the ITT collector PyTorch 2.x
     * loads (itt.c), unless the program names its own (a VTune user's);
     * GTRACE_ITT_LIB tells hooks.py which it is. */
    unsetenv("GTRACE_ITT_LIB");
    const char *itt = getenv("INTEL_LIBITTNOTIFY64");
    bool ops = has_feature(o->pytorch, "ops") && !has_feature(o->pytorch, "shapes");
    if (ops && !(itt && *itt)) {
        setenv("INTEL_LIBITTNOTIFY64", lib, 1);
        setenv("GTRACE_ITT_LIB", lib, 1);
    }
    /* For a torch without ITT: the RecordFunction callback, where it was
     * built ($GTRACE_TORCH_OPS_LIB as given; "none": not used), and the
     * libtorch it is for: record.py loads it only into a process that maps
     * that one. */
    const char *rec = getenv("GTRACE_TORCH_OPS_LIB");
    char rec_path[PATH_MAX];
    if (ops && !(rec && *rec) && GT_TORCH_CPU_LIB[0] && locate_our_library("_gtrace_torch_ops.so", "python", rec_path))
        setenv("GTRACE_TORCH_OPS_LIB", rec_path, 1);
    setenv("GTRACE_TORCH_CPU_LIB", GT_TORCH_CPU_LIB, 1);
}

static void prepare_env(const gt_record_options *o, const char *lib, const char *socket_name, int64_t t0_ns)
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
    /* The process's side of the window (window.c) and where the launcher's starts. */
    unsetenv("GTRACE_CAPTURE");
    unsetenv("GTRACE_CAPTURE_GATE");
    if (o->capture && (!strncmp(o->capture, "steps:", 6) || !strncmp(o->capture, "nvtx:", 5)
                       || !strcmp(o->capture, "cudaProfilerApi")))
        setenv("GTRACE_CAPTURE", o->capture, 1);
    /* A flight recorder: SIGUSR2 to a traced process asks for a dump (window.c). */
    unsetenv("GTRACE_FLIGHT");
    if (o->flight && o->flight[0])
        setenv("GTRACE_FLIGHT", o->flight, 1);
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
        gt_record_leftover_signal(sig); /* the program has ended: the wait for its leftovers hears it */
    }
}

static void on_toggle_signal(int sig)
{
    (void)sig;
    gt_record_n_toggles++;
}

static void on_dump_signal(int sig)
{
    (void)sig;
    gt_record_n_dump_signals++;
}

bool gt_record_has_window(const gt_record_options *o)
{
    return (o->capture && o->capture[0]) || o->delay_ns > 0 || o->duration_ns > 0;
}

static void on_stop_signal(int sig)
{
    gt_record_stop_signal = sig;
}

static void after_run(int sig, const struct sigaction *old)
{
    struct sigaction stop = {.sa_handler = on_stop_signal};
    sigemptyset(&stop.sa_mask);
    bool ignored = !(old->sa_flags & SA_SIGINFO) && old->sa_handler == SIG_IGN;
    sigaction(sig, ignored ? old : &stop, NULL);
}

/* Runs the program and waits for it, then for what it left running (at
 * most wait_s seconds: gt_record_wait_leftovers); returns 0 with its wait
 * status, or -1 with the error said. *out_signal: a signal gtrace got while
 * waiting for the leftovers (0: none), which it dies of once the trace is
 * written. */
static int run_program(const char *path, char **argv, gt_collector *col, bool toggles, bool dumps, int wait_s,
                       int *out_status, pid_t *out_pid, int *out_signal)
{
    int err_pipe[2];
    if (pipe2(err_pipe, O_CLOEXEC) != 0) {
        gt_record_error("pipe: %s", strerror(errno));
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
        gt_record_error("fork: %s", strerror(errno));
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
        gt_record_error("%s: nothing is recorded", gt_error_last());
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
    struct sigaction toggle = {.sa_handler = on_toggle_signal, .sa_flags = SA_RESTART}, old_usr1;
    sigemptyset(&toggle.sa_mask);
    if (toggles)
        sigaction(SIGUSR1, &toggle, &old_usr1);
    struct sigaction dump = {.sa_handler = on_dump_signal, .sa_flags = SA_RESTART}, old_usr2;
    sigemptyset(&dump.sa_mask);
    if (dumps)
        sigaction(SIGUSR2, &dump, &old_usr2);
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
            *out_signal = gt_record_wait_leftovers(wait_s, (int)forwarded, old);
            break;
        }
    }
    /* From here an interruption stops the assembly, which then leaves
     * nothing behind; a signal ignored when gtrace started stays ignored. */
    after_run(SIGINT, &old_int);
    after_run(SIGQUIT, &old_quit);
    after_run(SIGTERM, &old_term);
    after_run(SIGHUP, &old_hup);
    if (toggles)
        sigaction(SIGUSR1, &old_usr1, NULL);
    if (dumps)
        sigaction(SIGUSR2, &old_usr2, NULL);
    if (n == (ssize_t)sizeof exec_errno) {
        gt_record_error("cannot run '%s': %s", path, strerror(exec_errno));
        return -1;
    }
    if (!have_status) {
        gt_record_error("lost track of '%s'", path);
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


/* The command line as given and gtrace's options, for GTRACE_RUN_CONFIG. */
static void describe_run(const gt_record_options *o, char **prog_argv, char *cmdline, size_t cmdline_bytes,
                         char *options, size_t options_bytes)
{
    size_t len = 0;
    cmdline[0] = '\0';
    for (char **a = prog_argv; *a && len < cmdline_bytes - 1; a++)
        len += (size_t)snprintf(cmdline + len, cmdline_bytes - len, "%s%s", a == prog_argv ? "" : " ", *a);
    int n_opt = snprintf(options, options_bytes, "--cuda=%s --stacks=%d --flush-ms=%d", o->cuda, o->n_stack_frames,
                         o->flush_ms);
#define ADD_OPTION(...)                                                                                    \
    do {                                                                                                   \
        if (n_opt > 0 && (size_t)n_opt < options_bytes)                                                   \
            n_opt += snprintf(options + n_opt, options_bytes - (size_t)n_opt, __VA_ARGS__);                \
    } while (0)
    if (o->pytorch[0])
        ADD_OPTION(" --pytorch=%s", o->pytorch);
    if (o->capture && o->capture[0])
        ADD_OPTION(" --capture=%s", o->capture);
    if (o->delay_ns > 0)
        ADD_OPTION(" --delay=%.3f", o->delay_ns / 1e9);
    if (o->duration_ns > 0)
        ADD_OPTION(" --duration=%.3f", o->duration_ns / 1e9);
    if (o->flight && o->flight[0])
        ADD_OPTION(" --flight-recorder=%s", o->flight);
#undef ADD_OPTION
}

/* The flight recorder's last dump, once every traced process has ended:
 * why (the program's exit or the signal it died of) goes into the trace. */
static int flight_end(gt_record_result *out, gt_flight *flight, int status)
{
    char reason[64];
    if (WIFSIGNALED(status)) {
        const char *name = sigabbrev_np(WTERMSIG(status));
        if (name)
            snprintf(reason, sizeof reason, "SIG%s", name);
        else
            snprintf(reason, sizeof reason, "signal %d", WTERMSIG(status));
    } else {
        snprintf(reason, sizeof reason, "exit %d", WIFEXITED(status) ? WEXITSTATUS(status) : 0);
    }
    if (!gt_record_stop_signal)
        gt_flight_dump_last(flight, reason, &out->snapshots);
    out->n_dumps = gt_flight_n_written(flight);
    if (out->n_dumps > 0) {
        snprintf(out->output, sizeof out->output, "%s", gt_flight_last_output(flight));
        out->written = true;
    }
    gt_flight_free(flight);
    gt_record_remove_parts(out->parts_dir);
    if (!out->written)
        remove_parts_dir(out->parts_dir);
    if (gt_record_stop_signal)
        out->stop_signal = gt_record_stop_signal;
    return 0;
}

/* ---- the whole run ---------------------------------------------------- */

int gt_record_run(gt_record_result *out, const gt_record_options *opts)
{
    memset(out, 0, sizeof *out);
    gt_record_options o = *opts;
    if (!o.cuda)
        o.cuda = "auto";
    if (!o.pytorch)
        o.pytorch = "";
    char **prog_argv = (char **)o.argv;
    char path[PATH_MAX], lib[PATH_MAX], python_dir[PATH_MAX], nvtx_lib[PATH_MAX];
    char *output = out->output, *parts = out->parts_dir;
    int rc = find_program(prog_argv[0], path, sizeof path);
    if (rc != 0)
        return out->exit_code = rc;
    if (!find_library(lib, sizeof lib))
        return out->exit_code = 1;
    if (o.pytorch[0] && (!find_python_dir(python_dir, sizeof python_dir) ||
                         !find_our_library("libgtrace-nvtx.so", "GTRACE_NVTX_LIB", "nvtxlib", nvtx_lib, sizeof nvtx_lib)))
        return out->exit_code = 1;
    if (!choose_output(&o, prog_argv[0], output, sizeof out->output))
        return out->exit_code = 1;
    if (!make_parts_dir(output, parts, sizeof out->parts_dir))
        return out->exit_code = 1;

    gt_collector *col = NULL;
    if (gt_collector_new(&col, parts, o.flush_ms) != 0) {
        gt_record_error("cannot prepare the trace: %s", gt_error_last());
        gt_record_remove_parts(parts);
        remove_parts_dir(parts);
        return out->exit_code = 1;
    }
    int64_t t0 = monotonic_ns();
    int64_t utc_t0 = realtime_ns();
    prepare_env(&o, lib, gt_collector_socket(col), t0);
    if (o.pytorch[0])
        prepare_python_env(&o, python_dir, nvtx_lib, parts, lib);
    int status = 0;
    pid_t pid = 0;
    bool windowed = gt_record_has_window(&o);
    if (windowed) {
        gt_launcher_window w = {.on = true, .closed = o.capture && !strcmp(o.capture, "signal"),
                                .open_ns = t0 + o.delay_ns,
                                .close_ns = o.duration_ns > 0 ? t0 + o.delay_ns + o.duration_ns : 0};
        setenv("GTRACE_CAPTURE_GATE", gt_collector_set_window(col, &w), 1);
    }
    char cmdline[8192], options[1024], copy[PATH_MAX];
    describe_run(&o, prog_argv, cmdline, sizeof cmdline, options, sizeof options);
    snprintf(copy, sizeof copy, "%s", prog_argv[0]);
    gt_record_run_info run = {.utc_t0_ns = utc_t0, .program_name = basename(copy), .command_line = cmdline,
                              .options = options};
    gt_flight *flight = NULL;
    if (o.flight && o.flight[0]) {
        gt_flight_options fo = {.keep_ns = o.flight_ns, .keep_bytes = o.flight_bytes, .spec = o.flight,
                                .output = output, .force = o.force, .parts_dir = parts, .t0_ns = t0, .run = run};
        if (gt_flight_new(&flight, &fo) != 0) {
            gt_record_error("cannot prepare the flight recorder: %s", gt_error_last());
            gt_collector_free(col);
            gt_record_remove_parts(parts);
            remove_parts_dir(parts);
            return out->exit_code = 1;
        }
        gt_collector_set_flight(col, flight);
    }
    int run_rc = run_program(path, prog_argv, col, windowed, flight != NULL, o.wait_leftovers_s, &status, &pid,
                             &out->leftover_signal);
    /* Every traced process has ended: the last read of every region. */
    gt_collector_free(col);
    if (run_rc != 0) {
        gt_flight_free(flight);
        gt_record_assemble(parts, NULL, false, NULL, NULL); /* removes whatever was written */
        remove_parts_dir(parts);
        return out->exit_code = 127;
    }
    out->wait_status = status;
    /* The end-of-run clock pair: the trace's time and the wall clock, read together. */
    int64_t wall_ns = monotonic_ns() - t0;
    int64_t utc_end = realtime_ns();
    out->run_ns = wall_ns;
    run.end_ns = wall_ns;
    run.utc_end_ns = utc_end;
    run.root_pid = pid;
    if (flight)
        return flight_end(out, flight, status);
    out->snapshots = gt_record_import_snapshots(parts, t0, utc_t0);
    if (gt_record_assemble(parts, output, o.force, &run, &out->losses) != 0) {
        if (gt_record_stop_signal) {
            gt_record_remove_parts(parts);
            remove_parts_dir(parts);
            gt_record_error("interrupted: no trace written");
            gt_record_snapshots_free(out->snapshots);
            out->snapshots = NULL;
            out->stop_signal = gt_record_stop_signal;
            return 0;
        }
        gt_record_error("%s", gt_error_last());
        gt_record_error("no trace written; the recorded parts are kept in %s (gtrace recover %s -o TRACE)", parts,
                        parts);
    } else {
        out->written = true;
    }
    return 0;
}

bool gt_record_finish(gt_record_result *r)
{
    bool failed = false;
    if (r->written) {
        failed = gt_record_keep_snapshots(r->parts_dir, r->output, r->snapshots);
        remove_parts_dir(r->parts_dir);
    }
    gt_record_snapshots_free(r->snapshots);
    r->snapshots = NULL;
    return failed;
}
