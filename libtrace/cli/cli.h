/* cli.h: what the subcommands of gtrace share (private to libtrace/cli).
 *
 * main.c dispatches argv[1] through a table of subcommands; anything that
 * is not a subcommand name is a program to record (record.c). Subcommands
 * print results on stdout and errors on stderr, and return the exit status.
 */
#ifndef GT_CLI_H
#define GT_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gt_store.h"

typedef struct gt_cli_command {
    const char *name;
    const char *synopsis;  /* one line for `gtrace --help` */
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand's name */
} gt_cli_command;

/* The subcommands, in the order --help lists them; ends with {NULL}. */
extern const gt_cli_command gt_cli_commands[];

/* `gtrace [options] PROGRAM [ARGS...]` (record.c). argv[0] is "gtrace". */
int gt_cli_record(int argc, char **argv);
/* `gtrace info TRACE` (info.c). */
int gt_cli_info(int argc, char **argv);
/* `gtrace report|diff|memory|export` over libtrace/analyze (analyze_cmds.c). */
int gt_cli_report(int argc, char **argv);
int gt_cli_diff(int argc, char **argv);
int gt_cli_memory(int argc, char **argv);
int gt_cli_export(int argc, char **argv);
/* `gtrace import FILE... -o TRACE`: torch.profiler traces and memory snapshots (import_cmd.c). */
int gt_cli_import(int argc, char **argv);
/* `gtrace merge PART... -o TRACE`: per-rank traces on one clock (merge.c). */
int gt_cli_merge(int argc, char **argv);
/* `gtrace recover DIR -o TRACE`: the parts a killed launcher left, as a trace (recover.c). */
int gt_cli_recover(int argc, char **argv);
/* A trace to analyze: a trace file, or a torch.profiler JSON or CUDA memory
 * snapshot imported into a temporary trace removed at exit (open_any.c).
 * NULL after saying why on stderr. */
gt_trace *gt_cli_open_trace(const char *path, unsigned flags);

/* ---- output.c: what the commands share about their output ---- */

/* Prints "gtrace: " and the message on stderr. */
void gt_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints the counts by kind of an open trace, one "  kind  N" line each,
 * with `indent`; returns the total, or a negative gt_status. */
int64_t gt_cli_print_counts(FILE *out, gt_trace *t, const char *indent);
/* "1.234 s", "15.2 ms"... for a duration in ns. */
const char *gt_cli_duration(int64_t ns, char *buf, size_t buf_bytes);
/* 0 when a trace may be written to `output` (gt_outpath.h's rule): nothing
 * is there, or a regular file that is none of `inputs` (n_inputs names)
 * and `force`; else GT_ERR_EXISTS with the message set. `target` (may be
 * NULL) gets the file to write: `output`, or the regular file its link
 * names, which the caller then writes beside and installs over. */
int gt_cli_check_output(const char *output, bool force, const char *const *inputs, size_t n_inputs, char *target,
                        size_t target_bytes);
/* Moves a finished trace `from` (on the same file system) to `output`,
 * replacing only a regular file and only with `force`, even if one
 * appeared since gt_cli_check_output. */
int gt_cli_install(const char *from, const char *output, bool force);
/* Removes a trace of gtrace's own making and SQLite's files beside it. */
void gt_cli_remove_trace(const char *path);

/* Events the producers of an open trace dropped, per kind (dropped.c). */
int gt_cli_dropped(gt_trace *t, int64_t out[GT_EV_N_KINDS]);

/* The run entries (GTRACE_RUN_CONFIG, global pid 0) that hold the
 * launcher's end-of-run clock pair: the trace's time and the wall-clock time
 * (UTC, ns since the epoch) read together when the program ended. With the
 * session start (wall clock at the trace's zero), they let `gtrace merge`
 * put traces taken on several hosts on one clock: offset and drift. */
#define GT_CLI_CLOCK_END_KEY "clock_end_ns"
#define GT_CLI_CLOCK_END_UTC_KEY "clock_end_utc_ns"

/* What the launcher knows about a run, for the trace it assembles. */
typedef struct gt_run_info {
    int64_t utc_t0_ns;         /* wall-clock time at the trace's zero */
    int64_t end_ns;            /* the trace's time when the program ended (0: unknown) */
    int64_t utc_end_ns;        /* the wall-clock time then */
    int64_t root_pid;          /* the program's pid */
    const char *program_name;  /* its basename */
    const char *command_line;  /* as given, joined with spaces */
    const char *options;       /* gtrace's options, for GTRACE_RUN_CONFIG */
} gt_run_info;

/* What the traced processes could not write (beyond the drop counts the
 * trace holds). */
typedef struct gt_run_losses {
    int n_failed;             /* process images whose part could not be written */
    char reason[128];         /* why, for the first of them */
    int64_t n_unaccounted;    /* processes that lost events they could not count */
} gt_run_losses;

/* Assembles the parts the traced processes wrote in `parts_dir` into one
 * trace at `output` (replacing a regular file there only when `force`),
 * then removes the parts; with `output` NULL, only removes them. Fills
 * `out_losses` (may be NULL). Returns 0, or a negative gt_status with the
 * message in gt_error_last(); the parts are then kept. */
int gt_cli_assemble(const char *parts_dir, const char *output, bool force, const gt_run_info *run,
                    gt_run_losses *out_losses);
/* The collector (collect.c): the thread that reads the traced processes'
 * rings and writes their parts into `parts_dir`. Made (its socket listening)
 * before the program starts; started once it is forked; finished once every
 * traced process has ended (it reads every region one last time). */
typedef struct gt_collector gt_collector;
int gt_collector_new(gt_collector **out, const char *parts_dir, int flush_ms);
/* The socket's name for GTRACE_SOCKET ("@..." : an abstract name). */
const char *gt_collector_socket(const gt_collector *c);
int gt_collector_start(gt_collector *c);
void gt_collector_finish(gt_collector *c);
void gt_collector_free(gt_collector *c);

/* Creates the loss table in a fresh parts directory (losses.h). */
int gt_cli_make_losses(const char *parts_dir);
/* Removes every file gtrace puts in a parts directory (not the directory). */
void gt_cli_remove_parts(const char *parts_dir);
/* Set by the launcher's handler of SIGINT, SIGTERM, SIGHUP and SIGQUIT
 * while it assembles: the assembly stops and fails. */
extern volatile sig_atomic_t gt_cli_stop_signal;

#endif
