/* session.h: starting and stopping the capture session (session.c), for the
 * hooks that must do it around exec and fatal signals (hooks.c, signals.c). */
#ifndef GT_CAPTURE_SESSION_H
#define GT_CAPTURE_SESSION_H

#include <stdbool.h>

/* Flushes everything, finishes this process's trace file and stops the
 * writer thread (exit, exec). Waits at most 60 s for the writer. Returns
 * false when no session was running in this process. */
bool gt_cap_stop(void);
/* The same from a signal handler: async-signal-safe, waits at most 5 s. */
void gt_cap_stop_from_signal(void);
/* The same, waiting at most `max_ms` (_exit, which may be called from a
 * signal handler; CUPTI's buffers are not flushed). */
void gt_cap_stop_wait(int max_ms);
/* Starts a new session (and part file) after gt_cap_stop, when exec failed. */
void gt_cap_restart(void);
bool gt_cap_is_writer_thread(void);

/* True once any thread has recorded (or tried to record) an event. */
bool gt_cap_have_rings(void);

/* Installs the flush-on-fatal-signal handlers (signals.c). */
void gt_cap_install_signal_handlers(void);

#endif
