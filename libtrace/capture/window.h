/* window.h: the capture window of a traced process (window.c): which NVTX
 * ranges open and close it (--capture=steps:A-B, --capture=nvtx:NAME),
 * through the process's side of the region's gate (ring.h). The launcher's
 * side (--delay, --duration, SIGUSR1) is set by the launcher. */
#ifndef GT_CAPTURE_WINDOW_H
#define GT_CAPTURE_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 0: no range opens a window (GTRACE_CAPTURE unset or only the launcher
 * gates); else ranges are looked at as they are pushed. Set once, at start. */
extern int gt_cap_window_mode;

/* Reads GTRACE_CAPTURE ("steps:A-B[,C-D...]", "nvtx:NAME" or
 * "cudaProfilerApi") and the file
 * GTRACE_CAPTURE_GATE names (the launcher's side: "1" closed) and closes the
 * gate as they say; a value it cannot read is said once and ignored (the
 * whole run is recorded). With GTRACE_FLIGHT, SIGUSR2 asks for a dump. */
void gt_cap_window_init(void);

/* cudaProfilerStart (`start`) or cudaProfilerStop was called: under
 * GTRACE_CAPTURE=cudaProfilerApi the window opens or closes. */
void gt_cap_window_profiler(bool start);

/* Parses a list of step windows "A-B[,C-D...]" (A <= B, both >= 0) into
 * `out` (pairs, at most `max` of them); the count, or -1 when it is not one. */
int gt_cap_window_parse_steps(const char *s, int64_t (*out)[2], int max);

/* A range named `text` (`len` bytes) is pushed: it may open or close the
 * window. True when it is one whose pop must be told (`*out_key`). */
bool gt_cap_window_push(const char *text, size_t len, int64_t *out_key);
/* Its pop. */
void gt_cap_window_pop(int64_t key);

#endif
