/* info.c: `gtrace info TRACE`: what a trace holds, read through the store:
 * where it comes from, its schema, time span, counts by kind, processes,
 * threads and GPUs. Works on gtrace traces and nsys exports alike, and on
 * PyTorch's files, imported on the fly (gt_open_any.h). Every file gets the
 * integrity check and every row the reader's checks (the refused count),
 * but for a big trace gtrace closed whole, unchanged since (its close mark
 * holds): its rows are the ones the writer took, so hashing it is the
 * check, and only --check reads every page and row. */
#include "config.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "flags.h"
#include "gt_analyze.h"
#include "gt_open_any.h"

#define MAX_LISTED 32 /* processes and threads listed (an nsys export lists the whole machine) */

/* Whether `path` is a folder of parts (PID-N.sqlite) a launcher left: one
 * that was killed, or one still running. */
static bool is_parts_folder(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    bool parts = false;
    while (d && !parts && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        parts = n > 7 && !strcmp(e->d_name + n - 7, ".sqlite");
    }
    if (d)
        closedir(d);
    return parts;
}

/* The trace at `path`: a trace file, or PyTorch's file imported on the fly
 * (*out_format nonzero), as report and memory take them. A parts folder
 * gets the way to its trace. 1 after saying why not. */
static int open_for_info(gt_trace **out, gt_import_format *out_format, const char *path, bool check)
{
    char *resolved = NULL;
    if (is_parts_folder(path)) {
        gt_cli_error("%s is the parts folder of a gtrace run that did not finish (or is still running); "
                     "gtrace recover %s -o TRACE makes its trace", path, path);
        return 1;
    }
    if (gt_open_any(&resolved, out_format, path) < 0) {
        gt_cli_error("%s", gt_error_last());
        return 1;
    }
    int rc = gt_trace_open(out, resolved, check ? 0 : GT_OPEN_CHECK_LATER);
    free(resolved);
    if (rc != 0) {
        gt_cli_error("%s", gt_error_last());
        return 1;
    }
    return 0;
}

/* A trace `gtrace merge` made: its parts, each with its command and the
 * correction of its clock (merge.c's run entries). */
static void print_parts(gt_trace *t)
{
    const char *n_parts = gt_trace_meta(t, "merged_parts");
    if (!n_parts)
        return;
    printf("merged     %s parts\n", n_parts);
    for (int i = 1; i <= atoi(n_parts) && i <= MAX_LISTED; i++) {
        char key[64];
        const char *v[4];
        static const char *const names[4] = {"file", "command_line", "offset_ns", "drift_ppb"};
        for (int k = 0; k < 4; k++) {
            snprintf(key, sizeof key, "part.%d.%s", i, names[k]);
            v[k] = gt_trace_meta(t, key);
        }
        printf("  %d: %s, starts at +%s ns, %s%s%s\n", i, v[0] ? v[0] : "?", v[2] ? v[2] : "?",
               v[3] ? "drift " : "offset only", v[3] ? v[3] : "", v[3] ? " ppb" : "");
        if (v[1])
            printf("     %s\n", v[1]);
    }
}

int gt_cli_info(int argc, char **argv)
{
    gt_output_flags f = {0};
    gt_flags_result res = {0};
    gt_flags_rc frc = gt_flags_parse(&gt_info_flag_table, argc, argv, &f, &res, stderr);
    if (frc == GT_FLAGS_HELP) {
        gt_flags_help(&gt_info_flag_table, stdout);
        return 0;
    }
    /* its one operand may start with '-': a trace named so is read as given */
    if (frc == GT_FLAGS_UNKNOWN && argc == 2 && !res.missing)
        res = (gt_flags_result){.first = 1, .n = 1}, frc = GT_FLAGS_OK;
    if (frc == GT_FLAGS_UNKNOWN) {
        gt_cli_error("info: unknown option '%s' (usage: gtrace %s)", res.bad, gt_info_flag_table.synopsis);
        return 2;
    }
    if (frc != GT_FLAGS_OK || res.n != 1) {
        gt_cli_error("usage: gtrace %s", gt_info_flag_table.synopsis);
        return 2;
    }
    const char *path = argv[res.first];
    gt_trace *t = NULL;
    gt_import_format format = 0;
    if (open_for_info(&t, &format, path, f.check) != 0)
        return 1;
    int status = 0;
    char a[64], b[64];
    printf("trace      %s\n", format ? path : gt_trace_path(t));
    if (format)
        printf("origin     %s (imported)\n", gt_open_any_format_name(format));
    else
        printf("origin     %s\n", gt_trace_origin_of(t) == GT_ORIGIN_GTRACE ? "gtrace" : "nsys export");
    printf("schema     %s\n", gt_trace_schema_version(t));
    if (gt_trace_origin_of(t) == GT_ORIGIN_GTRACE && !format && gt_trace_has_summary(t)) {
        int kept = gt_report_kept_state(t);
        if (kept == 0)
            printf("summary    the report, kept when the trace was closed (gtrace report prints it)\n");
        else
            printf("summary    none used: %s\n", gt_error_last());
    }
    const char *cmd = gt_trace_meta(t, "command_line");
    if (cmd)
        printf("command    %s\n", cmd);
    print_parts(t);
    int64_t start = 0, end = 0, len = 0;
    if (gt_trace_time_span(t, &start, &end) == 0 && end >= start && (start != 0 || end != 0))
        /* a damaged trace's span may be longer than an int64 holds */
        printf("span       %s to %s (%s)\n", gt_cli_duration(start, a, sizeof a), gt_cli_duration(end, b, sizeof b),
               __builtin_sub_overflow(end, start, &len) ? "longer than 292 years"
                                                        : gt_cli_duration(len, (char[64]){0}, 64));
    else
        printf("span       (no events)\n");
    printf("events\n");
    int64_t total = gt_cli_print_counts(stdout, t, "  ");
    if (total < 0) {
        gt_cli_error("%s", gt_error_last());
        status = 1;
    }
    int64_t dropped[GT_EV_N_KINDS];
    gt_cli_dropped(t, dropped);
    for (int k = 0; k < GT_EV_N_KINDS; k++)
        if (dropped[k] > 0)
            printf("dropped    %-12s %" PRId64 "\n", gt_event_kind_name((gt_event_kind)k), dropped[k]);
    /* Rows the reader refuses (damaged times, sizes or types) are in no count above. */
    bool by_mark = !f.check && gt_trace_checked_by_mark(t);
    for (int k = 0; k < GT_EV_N_KINDS && !by_mark; k++) {
        int64_t refused = 0;
        if (gt_trace_rejected(t, (gt_event_kind)k, &refused) == 0 && refused > 0)
            printf("refused    %-12s %" PRId64 " rows (times, sizes or types out of range)\n",
                   gt_event_kind_name((gt_event_kind)k), refused);
    }
    size_t n;
    const gt_process *procs = gt_trace_processes(t, &n);
    printf("processes  %zu\n", n);
    for (size_t i = 0; i < n && i < MAX_LISTED; i++)
        printf("  %-8" PRId64 " %-16s%s\n", procs[i].pid, procs[i].name ? procs[i].name : "",
               procs[i].rank >= 0 ? (snprintf(a, sizeof a, "rank %d", (int)procs[i].rank), a) : "");
    if (n > MAX_LISTED)
        printf("  (%zu more)\n", n - MAX_LISTED);
    const gt_thread *threads = gt_trace_threads(t, &n);
    printf("threads    %zu\n", n);
    if (n > MAX_LISTED)
        printf("  (%zu more, not listed)\n", n - MAX_LISTED);
    for (size_t i = 0; i < n && i < MAX_LISTED; i++)
        printf("  %" PRId64 "/%-8" PRId64 " %s\n", gt_pid_of(threads[i].global_tid), gt_tid_of(threads[i].global_tid),
               threads[i].name ? threads[i].name : "");
    const gt_gpu_info *gpus = gt_trace_gpus(t, &n);
    printf("gpus       %zu\n", n);
    for (size_t i = 0; i < n; i++)
        printf("  %d: %s (sm_%d%d, %d SMs, %.1f GiB)\n", gpus[i].id, gpus[i].name ? gpus[i].name : "?",
               gpus[i].compute_major, gpus[i].compute_minor, gpus[i].sm_count,
               (double)gpus[i].total_memory_bytes / (1024.0 * 1024 * 1024));
    if (by_mark)
        printf("checked    by its close mark: as gtrace closed it (--check reads every page and row)\n");
    else if (gt_trace_check(t) != 0) { /* a big file's check ran beside the reading */
        gt_cli_error("%s", gt_error_last());
        status = 1;
    }
    gt_trace_free(t);
    return status;
}
