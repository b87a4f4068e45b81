/* merge_cmd.c: `gtrace merge PART... -o TRACE [--force]`: the command line
 * and the summary; the merging (the clocks, the ids, the copy) is the
 * engine's (libtrace/record/merge.c, gt_record_merge). Bad arguments get one
 * line and exit 1 (2 for an unknown option) before anything is written. */
#define _GNU_SOURCE
#include "config.h"

#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "flags.h"

#define MERGE_SYNOPSIS (gt_merge_flag_table.synopsis)

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gtrace: merge: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

static void print_summary(const char *output, const gt_record_merge_result *r)
{
    size_t n = r->n_parts, n_proc = 0;
    for (size_t i = 0; i < n; i++)
        n_proc += r->parts[i].n_processes;
    printf("gtrace: merged %zu trace%s into %s: %zu process%s, %lld events, on the clock of %s\n", n,
           n > 1 ? "s" : "", output, n_proc, n_proc == 1 ? "" : "es", (long long)r->n_events, r->parts[0].path);
    for (size_t i = 0; i < n; i++) {
        char buf[64];
        printf("  %s: starts at %s", r->parts[i].path, gt_cli_duration(r->parts[i].offset_ns, buf, sizeof buf));
        if (r->parts[i].has_drift)
            printf(", its clock %+.3Lf ppm against its wall clock\n", (r->parts[i].rate - 1) * 1e6L);
        else
            printf(", offset only\n");
    }
}

int gt_cli_merge(int argc, char **argv)
{
    gt_output_flags f = {0};
    gt_flags_result res;
    switch (gt_flags_parse(&gt_merge_flag_table, argc, argv, &f, &res, stderr)) {
    case GT_FLAGS_OK: break;
    case GT_FLAGS_HELP: gt_flags_help(&gt_merge_flag_table, stdout); return 0;
    case GT_FLAGS_UNKNOWN:
        fail("unknown option '%s' (usage: gtrace %s)", res.bad, MERGE_SYNOPSIS);
        return 2;
    default: return 2;
    }
    const char *output = f.output;
    bool force = f.force;
    size_t n = (size_t)res.n;
    if (n == 0)
        return fail("no traces to merge (usage: gtrace %s)", MERGE_SYNOPSIS);
    if (!output || !*output)
        return fail("no output: name the merged trace with -o TRACE");
    /* the parts are inputs: never written over; a link's file is written in its place */
    const char *const *paths = (const char *const *)argv + res.first;
    char target[PATH_MAX];
    if (gt_cli_check_output(output, force, paths, n, target, sizeof target) != 0)
        return fail("%s", gt_error_last());
    gt_record_merge_result r;
    int status = gt_record_merge(&r, paths, n, target, force);
    if (r.stop_signal) {
        gt_record_merge_result_free(&r);
        fflush(NULL);
        raise(r.stop_signal);
        return 128 + r.stop_signal;
    }
    if (status == 0)
        print_summary(target, &r);
    gt_record_merge_result_free(&r);
    return status;
}
