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

#include "gt_record.h"
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
/* `gtrace merge PART... -o TRACE`: per-rank traces on one clock (merge_cmd.c). */
int gt_cli_merge(int argc, char **argv);
/* `gtrace recover DIR -o TRACE`: the parts a killed launcher left, as a trace (recover.c). */
int gt_cli_recover(int argc, char **argv);
/* A trace to analyze: a trace file, or a torch.profiler JSON or CUDA memory
 * snapshot imported into a temporary trace removed at exit (open_trace.c,
 * through libtrace/import's gt_open_any).
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
/* gt_record_check_output, gt_record_install, gt_record_remove_trace
 * (gt_record.h), as the commands call them. */
int gt_cli_check_output(const char *output, bool force, const char *const *inputs, size_t n_inputs, char *target,
                        size_t target_bytes);
int gt_cli_install(const char *from, const char *output, bool force);
void gt_cli_remove_trace(const char *path);

/* Events the producers of an open trace dropped, per kind (gt_record_dropped). */
int gt_cli_dropped(gt_trace *t, int64_t out[GT_EV_N_KINDS]);

#endif
