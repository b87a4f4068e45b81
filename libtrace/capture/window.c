/* window.c: the process's side of the capture window. With
 * GTRACE_CAPTURE=steps:A-B the push of a range "step N" opens the window
 * when N is in one of the listed windows and closes it when not, and the
 * pop of "step B" closes it; with nvtx:NAME the window is open while a
 * range NAME is open on any thread (a count). The window is the region's
 * gate word (shm.h): the launcher holds the other half of it (--delay,
 * --duration, SIGUSR1). With cudaProfilerApi, cudaProfilerStart and
 * cudaProfilerStop (hooks.c, cupti.c) open and close it, as nsys does. The
 * recording layers (nvtx.c) read the gate, this file only moves it; it
 * writes no record.
 *
 * Under a flight recorder (GTRACE_FLIGHT) a SIGUSR2 the process gets asks
 * the launcher for a dump, unless the program handles SIGUSR2 itself (its
 * handler is then left alone; `kill -USR2` the launcher instead).
 */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ring.h"
#include "warn.h"
#include "window.h"

#define MAX_WINDOWS 64
#define MAX_NAME_BYTES 256

enum { MODE_NONE = 0, MODE_STEPS = 1, MODE_NVTX = 2 };

int gt_cap_window_mode;
static int64_t windows[MAX_WINDOWS][2]; /* (n_windows, first and last step) */
static int n_windows;
static char range_name[MAX_NAME_BYTES];
static size_t range_name_len;
static _Atomic int64_t n_open_named; /* ranges NAME open now, all threads */
static bool profiler_api;            /* cudaProfilerStart/Stop move the gate */

static void on_dump_signal(int sig)
{
    (void)sig;
    gt_cap_request_dump();
}

/* SIGUSR2 asks for a dump, where the program left it to kill the process. */
static void catch_dump_signal(void)
{
    struct sigaction old;
    if (sigaction(SIGUSR2, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
        return;
    struct sigaction sa = {.sa_handler = on_dump_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR2, &sa, NULL);
}

void gt_cap_window_profiler(bool start)
{
    if (profiler_api)
        gt_cap_gate_set(GT_GATE_PROCESS, !start);
}

static bool parse_step(const char **p, int64_t *out)
{
    const char *s = *p;
    int64_t v = 0;
    if (*s < '0' || *s > '9')
        return false;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (INT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (*s - '0');
    }
    *p = s;
    *out = v;
    return true;
}

int gt_cap_window_parse_steps(const char *s, int64_t (*out)[2], int max)
{
    int n = 0;
    for (;;) {
        int64_t a, b;
        if (!parse_step(&s, &a))
            return -1;
        b = a;
        if (*s == '-') {
            s++;
            if (!parse_step(&s, &b) || b < a)
                return -1;
        }
        if (n == max)
            return -1;
        out[n][0] = a;
        out[n][1] = b;
        n++;
        if (*s == '\0')
            return n;
        if (*s++ != ',')
            return -1;
    }
}

void gt_cap_window_init(void)
{
    static _Atomic int once;
    /* The launcher's side as it is now; the launcher sets it in the region
     * from the moment it has seen it. */
    const char *gate_file = getenv("GTRACE_CAPTURE_GATE");
    if (gate_file && *gate_file) {
        char c = '0';
        int fd = open(gate_file, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            if (read(fd, &c, 1) != 1)
                c = '0';
            close(fd);
        }
        gt_cap_gate_set(GT_GATE_LAUNCHER, c == '1');
    }
    const char *flight = getenv("GTRACE_FLIGHT");
    if (flight && *flight)
        catch_dump_signal();
    const char *spec = getenv("GTRACE_CAPTURE");
    if (!spec || !*spec)
        return;
    if (!strcmp(spec, "cudaProfilerApi")) {
        profiler_api = true; /* closed until the first cudaProfilerStart */
        gt_cap_gate_set(GT_GATE_PROCESS, true);
        return;
    }
    if (!strncmp(spec, "steps:", 6)) {
        n_windows = gt_cap_window_parse_steps(spec + 6, windows, MAX_WINDOWS);
        if (n_windows > 0)
            gt_cap_window_mode = MODE_STEPS;
    } else if (!strncmp(spec, "nvtx:", 5) && spec[5] && strlen(spec + 5) < MAX_NAME_BYTES) {
        range_name_len = strlen(spec + 5);
        memcpy(range_name, spec + 5, range_name_len);
        gt_cap_window_mode = MODE_NVTX;
    }
    if (gt_cap_window_mode == MODE_NONE) {
        gt_cap_warn_once(&once, "GTRACE_CAPTURE=%s: not a capture window; the whole run is recorded", spec);
        return;
    }
    gt_cap_gate_set(GT_GATE_PROCESS, true);
}

/* "step N", N the whole rest: N; else -1. */
static int64_t step_of(const char *text, size_t len)
{
    if (len < 6 || memcmp(text, "step ", 5) != 0)
        return -1;
    const char *p = text + 5;
    int64_t n;
    if (!parse_step(&p, &n) || (size_t)(p - text) != len)
        return -1;
    return n;
}

bool gt_cap_window_push(const char *text, size_t len, int64_t *out_key)
{
    if (!text)
        return false;
    if (gt_cap_window_mode == MODE_STEPS) {
        int64_t n = step_of(text, len);
        if (n < 0)
            return false;
        bool inside = false;
        for (int i = 0; i < n_windows && !inside; i++)
            inside = n >= windows[i][0] && n <= windows[i][1];
        gt_cap_gate_set(GT_GATE_PROCESS, !inside);
        *out_key = n;
        return true;
    }
    if (len != range_name_len || memcmp(text, range_name, len) != 0)
        return false;
    atomic_fetch_add_explicit(&n_open_named, 1, memory_order_relaxed);
    gt_cap_gate_set(GT_GATE_PROCESS, false);
    *out_key = 0;
    return true;
}

void gt_cap_window_pop(int64_t key)
{
    if (gt_cap_window_mode == MODE_STEPS) {
        for (int i = 0; i < n_windows; i++)
            if (key == windows[i][1])
                gt_cap_gate_set(GT_GATE_PROCESS, true);
        return;
    }
    if (atomic_fetch_sub_explicit(&n_open_named, 1, memory_order_relaxed) != 1)
        return;
    gt_cap_gate_set(GT_GATE_PROCESS, true);
    /* A push on another thread between the count and the close. */
    if (atomic_load_explicit(&n_open_named, memory_order_relaxed) > 0)
        gt_cap_gate_set(GT_GATE_PROCESS, false);
}
