/* record.c: `gtrace [options] PROGRAM [ARGS...]`, the launcher: parses the
 * options, runs the recording engine (libtrace/record, gt_record_run: the
 * program under libgtrace.so, its rings collected, the parts assembled into
 * one trace), prints a summary on stderr and exits as PROGRAM did: its exit code,
 * or, when it died of a signal, by the same signal (so a shell sees 128+N).
 * A run that lost events (full buffers, a trace that could not be written)
 * says so, and when PROGRAM exited 0 gtrace exits GT_EXIT_INCOMPLETE (3).
 *
 * With --pytorch a PyTorch program marks its steps, phases, modules and ops
 * as NVTX ranges without a change, and on a GPU its CUDA memory snapshots
 * go into the trace as its processes' memory events and stacks.
 */
#define _GNU_SOURCE
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli.h"
#include "flags.h"
#include "gt_analyze.h"
#include "mem_free.h"

/* The exit status of a run whose program exited 0 but whose trace is
 * incomplete (events dropped or lost) or was not written (gtrace.1). */
#define GT_EXIT_INCOMPLETE 3

/* ---- the summary ------------------------------------------------------ */

/* Prints the summary; returns whether the trace says events are missing. */
static bool print_summary(const char *output, int64_t wall_ns, const gt_record_losses *losses)
{
    gt_trace *t = NULL;
    char buf[64];
    if (gt_trace_open(&t, output, 0) != 0) {
        gt_cli_error("the trace cannot be read back: %s", gt_error_last());
        return true;
    }
    fprintf(stderr, "gtrace: trace written to %s\n", output);
    fprintf(stderr, "  run time        %s\n", gt_cli_duration(wall_ns, buf, sizeof buf));
    int64_t start, end;
    if (gt_trace_time_span(t, &start, &end) == 0 && end >= start)
        fprintf(stderr, "  events span     %s\n", gt_cli_duration(end - start, buf, sizeof buf));
    size_t n_proc = 0;
    gt_trace_processes(t, &n_proc);
    fprintf(stderr, "  processes       %zu\n", n_proc);
    fprintf(stderr, "  events by kind:\n");
    int64_t total = gt_cli_print_counts(stderr, t, "    ");
    int64_t dropped[GT_EV_N_KINDS], n_dropped = 0;
    gt_cli_dropped(t, dropped);
    for (int k = 0; k < GT_EV_N_KINDS; k++)
        n_dropped += dropped[k];
    if (total == 0 && n_dropped == 0 && losses->n_failed == 0 && losses->n_unaccounted == 0)
        fprintf(stderr, "    (none: the program made no NVTX or CUDA calls gtrace could see)\n");
    else if (total == 0)
        fprintf(stderr, "    (none recorded)\n");
    if (n_dropped > 0) {
        if (losses->n_failed > 0)
            fprintf(stderr, "  DROPPED events (%d process%s could not write the trace: %s):\n", losses->n_failed,
                    losses->n_failed > 1 ? "es" : "", losses->reason[0] ? losses->reason : "unknown error");
        else
            fprintf(stderr, "  DROPPED events (buffers full; try a larger GTRACE_BUFFER_KB or a smaller --flush-ms):\n");
        for (int k = 0; k < GT_EV_N_KINDS; k++)
            if (dropped[k] > 0)
                fprintf(stderr, "    %-12s %lld\n", gt_event_kind_name((gt_event_kind)k), (long long)dropped[k]);
    }
    if (losses->n_unaccounted > 0)
        fprintf(stderr, "  %lld process%s lost events that could not be counted\n", (long long)losses->n_unaccounted,
                losses->n_unaccounted > 1 ? "es" : "");
    gt_trace_free(t);
    bool incomplete = n_dropped > 0 || losses->n_failed > 0 || losses->n_unaccounted > 0;
    if (incomplete)
        gt_cli_error("the trace is incomplete: events were lost (counted above)");
    return incomplete;
}

/* --summary: the report computed now and kept in the trace, so `gtrace
 * report` prints it at once; by default only for traces of 64 MB and more,
 * where the analysis takes seconds (small ones pay nothing). */
enum { SUMMARY_AUTO_BYTES = 64 << 20 };

/* Keeping it loads the whole trace: about 1.1 times the file's size in
 * memory (bench/results/2026-12-03-scale-100m.md). With less memory free
 * than KEEP_NEED times the file, the kernel would kill the launcher for
 * memory, and the program's exit status would be lost: the report is not
 * kept (gtrace report analyses when asked). */
#define KEEP_NEED 1.25

static void keep_report(const char *summary, const char *output)
{
    struct stat st;
    bool sized = stat(output, &st) == 0;
    if (!strcmp(summary, "off") || (!strcmp(summary, "auto") && (!sized || st.st_size < SUMMARY_AUTO_BYTES)))
        return;
    int64_t free_bytes = gt_mem_free();
    double need = sized ? KEEP_NEED * (double)st.st_size : 0;
    if (free_bytes >= 0 && need > (double)free_bytes) {
        fprintf(stderr, "gtrace: warning: the report was not kept in the trace: keeping it needs about %.0f MiB of "
                        "memory and %.0f MiB are free (gtrace report analyses the trace instead)\n",
                need / 1048576, (double)free_bytes / 1048576);
        return;
    }
    if (gt_report_keep(output) != 0)
        fprintf(stderr, "gtrace: warning: the report was not kept in the trace: %s\n", gt_error_last());
    else
        fprintf(stderr, "gtrace: report kept in the trace (gtrace report prints it without analysing)\n");
}

/* Dies of `sig` (after the parts are removed), as a shell expects of an interrupted command. */
static int die_of(int sig)
{
    fflush(NULL);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    return 128 + sig;
}

/* Exits as the program did: same code, or the same signal. */
static int pass_status_through(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        fflush(NULL);
        /* The program dumped core (or not): gtrace must not add its own. */
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        signal(sig, SIG_DFL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        raise(sig);
        return 128 + sig; /* a signal that does not kill (it cannot happen for WTERMSIG, but be sure) */
    }
    return 1;
}

/* The usage, for -h and after a usage error ("gtrace --help" says more: main.c). */
static void record_usage(FILE *out)
{
    gt_flags_usage(&gt_record_flag_table, out);
    fputs("Try 'gtrace --help' for more.\n", out);
}

int gt_cli_record(int argc, char **argv)
{
    gt_record_flags o = {0}; /* the defaults are the table's */
    gt_flags_result res;
    switch (gt_flags_parse(&gt_record_flag_table, argc, argv, &o, &res, stderr)) {
    case GT_FLAGS_OK: break;
    case GT_FLAGS_HELP: record_usage(stdout); return 0;
    case GT_FLAGS_VERSION: printf("gtrace %s\n", PACKAGE_VERSION); return 0;
    case GT_FLAGS_BAD: return 2;
    case GT_FLAGS_UNKNOWN:
        if (res.bad_short)
            gt_cli_error("unknown option '-%c'", res.bad_short);
        else
            gt_cli_error("unknown option '%s'", res.bad);
        record_usage(stderr);
        return 2;
    }
    if (o.flight.text && (o.capture || o.delay_ns > 0 || o.duration_ns > 0)) {
        gt_cli_error("--flight-recorder keeps the last part of the whole run: it does not go with --capture, "
                     "--delay or --duration");
        return 2;
    }
    if (res.n == 0) {
        gt_cli_error("no program to run");
        record_usage(stderr);
        return 2;
    }
    gt_record_options ro = {.argv = argv + res.first, .output = o.output, .force = o.force, .cuda = o.cuda,
                            .n_stack_frames = (int)o.n_stack_frames, .flush_ms = (int)o.flush_ms,
                            .wait_leftovers_s = (int)o.wait_leftovers_s, .pytorch = o.pytorch,
                            .capture = o.capture, .delay_ns = o.delay_ns, .duration_ns = o.duration_ns,
                            .flight = o.flight.text, .flight_ns = o.flight.ns, .flight_bytes = o.flight.bytes};
    gt_record_result r;
    if (gt_record_run(&r, &ro) != 0)
        return r.exit_code;
    if (r.stop_signal)
        return die_of(r.stop_signal);
    bool incomplete = true;
    if (r.written)
        incomplete = print_summary(r.output, r.run_ns, &r.losses);
    incomplete |= gt_record_finish(&r);
    if (gt_record_stop_signal)
        return die_of(gt_record_stop_signal);
    if (r.leftover_signal) /* the trace is written: gtrace was asked to stop */
        return die_of(r.leftover_signal);
    if (r.written) /* last: the trace is complete, nothing else writes it */
        keep_report(o.summary, r.output);
    if (incomplete && WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 0)
        return GT_EXIT_INCOMPLETE;
    return pass_status_through(r.wait_status);
}
