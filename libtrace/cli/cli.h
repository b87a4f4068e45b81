/* cli.h: what the subcommands of gtrace share (private to libtrace/cli).
 *
 * main.c dispatches argv[1] through a table of subcommands; anything that
 * is not a subcommand name is a program to record (record.c). Subcommands
 * print results on stdout and errors on stderr, and return the exit status.
 */
#ifndef GT_CLI_H
#define GT_CLI_H

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

/* Prints "gtrace: " and the message on stderr. */
void gt_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints the counts by kind of an open trace, one "  kind  N" line each,
 * with `indent`; returns the total, or a negative gt_status. */
int64_t gt_cli_print_counts(FILE *out, gt_trace *t, const char *indent);
/* "1.234 s", "15.2 ms"... for a duration in ns. */
const char *gt_cli_duration(int64_t ns, char *buf, size_t buf_bytes);

/* Events the producers of an open trace dropped, per kind (dropped.c). */
int gt_cli_dropped(gt_trace *t, int64_t out[GT_EV_N_KINDS]);

/* What the launcher knows about a run, for the trace it assembles. */
typedef struct gt_run_info {
    int64_t utc_t0_ns;         /* wall-clock time at the trace's zero */
    int64_t root_pid;          /* the program's pid */
    const char *program_name;  /* its basename */
    const char *command_line;  /* as given, joined with spaces */
    const char *options;       /* gtrace's options, for GTRACE_RUN_CONFIG */
} gt_run_info;

/* Assembles the parts the traced processes wrote in `parts_dir` into one
 * trace at `output` (replacing it when `force`), then removes the parts.
 * Returns 0, or a negative gt_status with the message in gt_error_last(). */
int gt_cli_assemble(const char *parts_dir, const char *output, bool force, const gt_run_info *run);

#endif
