/* hooks.c: the libc functions libgtrace.so interposes (LD_PRELOAD): the
 * exec family. Before a process replaces its image, what CUPTI holds is
 * moved into the rings (nothing runs exit handlers on exec); the launcher
 * reads them when the image's connection closes, and the new image loads
 * libgtrace.so again through the inherited environment and connects anew.
 * _exit, crashes and SIGKILL need no hook: the rings are shared with the
 * launcher, which reads them after the process is gone.
 *
 * A program that passes its own environment to execve/execvpe/execle gets
 * gtrace's variables added back when it dropped them, so the new image is
 * traced too. Real functions are found with dlsym(RTLD_NEXT) under
 * pthread_once. vfork children (same memory, different pid) and re-entry
 * pass straight through.
 *
 * cudaProfilerStart/Stop (CUDA runtime, a shared libcudart as PyTorch
 * loads it) and cuProfilerStart/Stop (the driver, called directly) open
 * and close a --capture=cudaProfilerApi window (window.c), then run the
 * real function. A program with a static cudart (nvcc's default) calls
 * its own copy: CUPTI's callbacks see those calls (cupti.c).
 */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "library.h"
#include "ring.h"
#include "session.h"
#include "window.h"

extern char **environ;

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvp_fn)(const char *, char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);

static execve_fn real_execve;
static execvp_fn real_execv, real_execvp;
static execvpe_fn real_execvpe;
static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;
static __thread int in_hook;

/* gtrace's variables as the process started with them ("KEY=value"). */
#define MAX_KEPT 32
static char *kept_env[MAX_KEPT];
static size_t n_kept;

static void resolve(void)
{
    real_execve = (execve_fn)dlsym(RTLD_NEXT, "execve");
    real_execv = (execvp_fn)dlsym(RTLD_NEXT, "execv");
    real_execvp = (execvp_fn)dlsym(RTLD_NEXT, "execvp");
    real_execvpe = (execvpe_fn)dlsym(RTLD_NEXT, "execvpe");
    for (char **e = environ; e && *e && n_kept < MAX_KEPT; e++) {
        if (!strncmp(*e, "GTRACE_", 7) || !strncmp(*e, "NVTX_INJECTION64_PATH=", 22)
            || (!strncmp(*e, "LD_PRELOAD=", 11) && strstr(*e, "libgtrace"))
            || (!strncmp(*e, "CUDA_INJECTION64_PATH=", 22) && strstr(*e, "libgtrace")))
            kept_env[n_kept++] = strdup(*e);
    }
}

/* The environment as the process started, before the program changes it. */
__attribute__((constructor)) static void hooks_ctor(void)
{
    pthread_once(&resolve_once, resolve);
}

/* Flushes CUPTI into the rings before exec. Returns whether this process
 * records (its gtrace variables are then passed on). */
static bool before_exec(void)
{
    pthread_once(&resolve_once, resolve);
    if (in_hook || getpid() != atomic_load(&gt_cap_pid))
        return false; /* a vfork child shares our memory: leave the session alone */
    in_hook = 1;
    gt_cap_flush();
    in_hook = 0;
    return atomic_load(&gt_cap_active) != 0;
}

static void after_failed_exec(bool stopped)
{
    (void)stopped; /* the session never stopped: the connection closes only with the image */
}

/* envp with gtrace's variables added where missing; `envp` itself if none is. */
static char *const *with_gtrace_env(char *const envp[], char ***to_free)
{
    *to_free = NULL;
    if (!envp || envp == environ || n_kept == 0)
        return envp;
    size_t n = 0;
    while (envp[n])
        n++;
    char **out = malloc((n + n_kept + 1) * sizeof *out);
    if (!out)
        return envp;
    memcpy(out, envp, n * sizeof *out);
    size_t n_out = n; /* envp itself has n entries: only those are searched */
    for (size_t k = 0; k < n_kept; k++) {
        size_t key_len = (size_t)(strchr(kept_env[k], '=') - kept_env[k]) + 1;
        bool present = false;
        for (size_t i = 0; i < n && !present; i++)
            present = !strncmp(envp[i], kept_env[k], key_len);
        if (!present)
            out[n_out++] = kept_env[k];
    }
    out[n_out] = NULL;
    *to_free = out;
    return out;
}

GT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    bool stopped = before_exec();
    if (!real_execve) {
        errno = ENOSYS;
        return -1;
    }
    char **to_free;
    char *const *env = stopped ? with_gtrace_env(envp, &to_free) : (to_free = NULL, envp);
    int rc = real_execve(path, argv, env);
    free(to_free);
    after_failed_exec(stopped);
    return rc;
}

GT_EXPORT int execv(const char *path, char *const argv[])
{
    bool stopped = before_exec();
    if (!real_execv) {
        errno = ENOSYS;
        return -1;
    }
    int rc = real_execv(path, argv);
    after_failed_exec(stopped);
    return rc;
}

GT_EXPORT int execvp(const char *file, char *const argv[])
{
    bool stopped = before_exec();
    if (!real_execvp) {
        errno = ENOSYS;
        return -1;
    }
    int rc = real_execvp(file, argv);
    after_failed_exec(stopped);
    return rc;
}

GT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    bool stopped = before_exec();
    if (!real_execvpe) {
        errno = ENOSYS;
        return -1;
    }
    char **to_free;
    char *const *env = stopped ? with_gtrace_env(envp, &to_free) : (to_free = NULL, envp);
    int rc = real_execvpe(file, argv, env);
    free(to_free);
    after_failed_exec(stopped);
    return rc;
}

/* execl, execlp, execle: their arguments gathered into an argv. */
static char **gather(const char *arg0, va_list ap, char ***out_envp)
{
    size_t cap = 16, n = 0;
    char **argv = malloc(cap * sizeof *argv);
    if (!argv)
        return NULL;
    argv[n++] = (char *)arg0;
    for (;;) {
        char *a = arg0 ? va_arg(ap, char *) : NULL;
        if (n == cap) {
            char **b = realloc(argv, (cap *= 2) * sizeof *argv);
            if (!b) {
                free(argv);
                return NULL;
            }
            argv = b;
        }
        argv[n++] = a;
        if (!a)
            break;
    }
    if (out_envp)
        *out_envp = va_arg(ap, char **);
    return argv;
}

GT_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    char **argv = gather(arg, ap, NULL);
    va_end(ap);
    if (!argv) {
        errno = ENOMEM;
        return -1;
    }
    int rc = execv(path, argv);
    free(argv);
    return rc;
}

GT_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    char **argv = gather(arg, ap, NULL);
    va_end(ap);
    if (!argv) {
        errno = ENOMEM;
        return -1;
    }
    int rc = execvp(file, argv);
    free(argv);
    return rc;
}

GT_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    char **envp = NULL;
    char **argv = gather(arg, ap, &envp);
    va_end(ap);
    if (!argv) {
        errno = ENOMEM;
        return -1;
    }
    int rc = execve(path, argv, envp);
    free(argv);
    return rc;
}

/* ---- cudaProfilerStart/Stop --------------------------------------------- */

typedef int (*profiler_fn)(void); /* cudaError_t, CUresult: an enum, an int */

/* CUDA's own declarations are not included: the library builds without CUDA. */
GT_EXPORT int cudaProfilerStart(void);
GT_EXPORT int cudaProfilerStop(void);
GT_EXPORT int cuProfilerStart(void);
GT_EXPORT int cuProfilerStop(void);

/* The real one's result, or "not supported" (cudaErrorNotSupported,
 * CUDA_ERROR_NOT_SUPPORTED: 801 in both) when no CUDA library has one. */
static int call_real(const char *name, profiler_fn *cache)
{
    if (!*cache)
        *cache = (profiler_fn)dlsym(RTLD_NEXT, name);
    return *cache ? (*cache)() : 801;
}

GT_EXPORT int cudaProfilerStart(void)
{
    static profiler_fn real;
    gt_cap_window_profiler(true);
    return call_real("cudaProfilerStart", &real);
}

GT_EXPORT int cudaProfilerStop(void)
{
    static profiler_fn real;
    gt_cap_window_profiler(false);
    return call_real("cudaProfilerStop", &real);
}

GT_EXPORT int cuProfilerStart(void)
{
    static profiler_fn real;
    gt_cap_window_profiler(true);
    return call_real("cuProfilerStart", &real);
}

GT_EXPORT int cuProfilerStop(void)
{
    static profiler_fn real;
    gt_cap_window_profiler(false);
    return call_real("cuProfilerStop", &real);
}
