/* gt_record.h: the recording engine (libtrace/record), the heart of
 * `gtrace PROGRAM`, `gtrace merge` and `gtrace recover`.
 *
 * gt_record_run runs a program under libgtrace.so, collects the rings of
 * every process it starts into part files (collect.c, drain.c), waits for
 * what it leaves running (leftovers.c) and assembles the parts into one
 * trace (assemble.c); gt_record_merge puts traces taken one per rank or
 * node on one clock (merge.c); gt_record_assemble makes a trace of the
 * parts a killed launcher left. Options go in, a trace and its losses come
 * out; the caller (the CLI) parses arguments and prints summaries.
 *
 * Messages: what the engine has to say while it works (a process that
 * could not write its part, processes left running, a snapshot kept) is
 * said through one hook (gt_record_set_say); by default on stderr. Errors
 * that end a call are in gt_error_last() or in the result.
 */
#ifndef GT_RECORD_H
#define GT_RECORD_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gt_store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- messages ---------------------------------------------------------- */

/* Receives each message whole, as it would be written on stderr
 * ("gtrace: ...\n"); may be called from the collector's threads. */
typedef void (*gt_record_say_fn)(const char *text, void *ctx);
/* Sets the hook (NULL: stderr, the default). */
void gt_record_set_say(gt_record_say_fn fn, void *ctx);

/* Set by the engine's handlers of SIGINT, SIGTERM, SIGHUP and SIGQUIT
 * while it writes a trace: the writing stops and fails. */
extern volatile sig_atomic_t gt_record_stop_signal;

/* ---- recording a program ---------------------------------------------- */

/* The run entries (GTRACE_RUN_CONFIG, global pid 0) that hold the
 * launcher's end-of-run clock pair: the trace's time and the wall-clock time
 * (UTC, ns since the epoch) read together when the program ended. With the
 * session start (wall clock at the trace's zero), they let `gtrace merge`
 * put traces taken on several hosts on one clock: offset and drift. */
#define GT_RECORD_CLOCK_END_KEY "clock_end_ns"
#define GT_RECORD_CLOCK_END_UTC_KEY "clock_end_utc_ns"

/* What to record and how. */
typedef struct gt_record_options {
    char *const *argv;    /* PROGRAM [ARGS...], NULL-terminated */
    const char *output;   /* the trace (%r: job rank, %p: pid, %%); NULL: gtrace-PROGRAM-N.sqlite here */
    bool force;           /* an existing regular file at output may be replaced */
    const char *cuda;     /* "auto", "on", "off" */
    int n_stack_frames;   /* 0..64 */
    int flush_ms;         /* 1..60000 */
    int wait_leftovers_s; /* after the program ends, for what it left running */
    const char *pytorch;  /* "steps,modules[,ops][,shapes]"; "" or NULL: no --pytorch */
    /* The capture window: outside it NVTX ranges and marks are not written
     * (names and the NVTX memory API always are). */
    const char *capture;  /* "steps:A-B[,C-D...]", "nvtx:NAME", "signal" (closed until SIGUSR1); NULL or "": none */
    int64_t delay_ns;     /* --delay: the window opens this long after the start (0: at once) */
    int64_t duration_ns;  /* --duration: and closes this long after it opened (0: never) */
    /* The flight recorder (--flight-recorder, not with a capture window):
     * only the last flight_ns (or flight_bytes of records) is kept, and a
     * trace of it is written at the end, on SIGUSR2 (to gtrace or a traced
     * process) and at a process's first out-of-memory mark: the first at
     * `output`, the next numbered (gtrace.1). */
    int64_t flight_ns;
    int64_t flight_bytes;
    const char *flight;   /* as given, for the trace's run entries */
} gt_record_options;

/* With a capture window, SIGUSR1 to the launcher during the run opens the
 * window if it is closed and closes it if open (the launcher's side of it). */
bool gt_record_has_window(const gt_record_options *o);

/* What the traced processes could not write (beyond the drop counts the
 * trace holds). */
typedef struct gt_record_losses {
    int n_failed;             /* process images whose part could not be written */
    char reason[128];         /* why, for the first of them */
    int64_t n_unaccounted;    /* processes that lost events they could not count */
} gt_record_losses;

typedef struct gt_record_snapshots gt_record_snapshots;

typedef struct gt_record_result {
    int exit_code;            /* not 0: nothing was recorded (1; 126, 127: PROGRAM cannot run), said */
    int wait_status;          /* the program's, as waitpid gives it */
    bool written;             /* the trace is at `output` */
    char output[PATH_MAX];    /* the trace */
    int64_t run_ns;           /* from the program's start to its end (and its leftovers') */
    gt_record_losses losses;
    int stop_signal;          /* not 0: the writing was interrupted by it, no trace (said) */
    int leftover_signal;      /* a signal got while waiting for the leftovers: the trace is written */
    int n_dumps;              /* flight recorder: traces written (`output` is the last) */
    char parts_dir[PATH_MAX]; /* the parts folder (private to the engine) */
    gt_record_snapshots *snapshots; /* CUDA memory snapshots imported or not (private) */
} gt_record_result;

/* Records: finds PROGRAM and libgtrace.so, chooses and checks the output,
 * runs PROGRAM under the collector, waits for it and what it left running,
 * assembles the trace. Fills `out`; returns out->exit_code. Once the
 * caller has read the trace (its summary), gt_record_finish. */
int gt_record_run(gt_record_result *out, const gt_record_options *o);
/* Keeps the CUDA memory snapshots that are not in the trace beside it
 * (one line each, as all that were imported), removes the parts folder,
 * frees what `r` holds. True when a snapshot could not be read (the trace
 * is then incomplete). */
bool gt_record_finish(gt_record_result *r);

/* ---- parts into a trace ------------------------------------------------ */

/* What the launcher knows about a run, for the trace it assembles. */
typedef struct gt_record_run_info {
    int64_t utc_t0_ns;         /* wall-clock time at the trace's zero */
    int64_t end_ns;            /* the trace's time when the program ended (0: unknown) */
    int64_t utc_end_ns;        /* the wall-clock time then */
    int64_t root_pid;          /* the program's pid */
    const char *program_name;  /* its basename */
    const char *command_line;  /* as given, joined with spaces */
    const char *options;       /* gtrace's options, for GTRACE_RUN_CONFIG */
} gt_record_run_info;

/* Assembles the parts the traced processes wrote in `parts_dir` into one
 * trace at `output` (replacing a regular file there only when `force`),
 * then removes the parts; with `output` NULL, only removes them. Fills
 * `out_losses` (may be NULL). Returns 0, or a negative gt_status with the
 * message in gt_error_last(); the parts are then kept. */
int gt_record_assemble(const char *parts_dir, const char *output, bool force, const gt_record_run_info *run,
                       gt_record_losses *out_losses);

/* ---- traces on one clock ---------------------------------------------- */

/* One part of a merged trace, as it went in. */
typedef struct gt_record_merge_part {
    const char *path;      /* as given */
    int64_t offset_ns;     /* where its zero is in the merged trace */
    bool has_drift;        /* its drift was corrected (it holds an end-of-run clock) */
    long double rate;      /* its clock's rate against its wall clock (1: none) */
    size_t n_processes;
} gt_record_merge_part;

typedef struct gt_record_merge_result {
    gt_record_merge_part *parts; /* n_parts, in the order given */
    size_t n_parts;
    int64_t n_events;      /* in the merged trace */
    int stop_signal;       /* not 0: interrupted by it, no trace */
} gt_record_merge_result;

/* Merges the traces `paths` (n) into `output` (already checked by the
 * caller: gt_record_check_output), on the clock of the first. Says what it
 * corrected (a pid or GPU renumbered, a clock without drift) through the
 * message hook. Returns 0, or 1 with the reason said. */
int gt_record_merge(gt_record_merge_result *out, const char *const *paths, size_t n, const char *output,
                    bool force);
void gt_record_merge_result_free(gt_record_merge_result *r);

/* ---- files ------------------------------------------------------------- */

/* 0 when a trace may be written to `output` (gt_outpath.h's rule): nothing
 * is there, or a regular file that is none of `inputs` (n_inputs names)
 * and `force`; else GT_ERR_EXISTS with the message set. `target` (may be
 * NULL) gets the file to write: `output`, or the regular file its link
 * names, which the caller then writes beside and installs over. */
int gt_record_check_output(const char *output, bool force, const char *const *inputs, size_t n_inputs,
                           char *target, size_t target_bytes);
/* Moves a finished trace `from` (on the same file system) to `output`,
 * replacing only a regular file and only with `force`, even if one
 * appeared since gt_record_check_output. */
int gt_record_install(const char *from, const char *output, bool force);
/* Removes a trace of gtrace's own making and SQLite's files beside it. */
void gt_record_remove_trace(const char *path);
/* Events the producers of an open trace dropped, per kind (dropped.c). */
int gt_record_dropped(gt_trace *t, int64_t out[GT_EV_N_KINDS]);

#ifdef __cplusplus
}
#endif
#endif /* GT_RECORD_H */
