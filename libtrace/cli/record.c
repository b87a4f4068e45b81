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

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli.h"
#include "gt_analyze.h"

/* The exit status of a run whose program exited 0 but whose trace is
 * incomplete (events dropped or lost) or was not written (gtrace.1). */
#define GT_EXIT_INCOMPLETE 3

typedef struct record_opts {
    const char *output;
    const char *cuda;      /* auto, on, off */
    int n_stack_frames;
    int flush_ms;
    bool force;
    int wait_leftovers_s;  /* after the program ends, for what it left running */
    char pytorch[64];      /* "steps,modules[,ops][,shapes]"; empty: --pytorch not given */
    const char *capture;   /* --capture: steps:A-B[,C-D], nvtx:NAME, signal; NULL: the whole run */
    int64_t delay_ns, duration_ns;
    const char *flight;    /* --flight-recorder as given; NULL: none */
    int64_t flight_ns, flight_bytes;
    const char *summary;   /* auto, on, off: keep the report in the trace */
} record_opts;

/* "A-B[,C-D...]" (or "A"), A <= B: step numbers as the `step N` ranges count. */
static bool parse_steps(const char *s)
{
    for (;;) {
        char *end;
        if (*s < '0' || *s > '9')
            return false;
        errno = 0;
        unsigned long long a = strtoull(s, &end, 10), b = a;
        if (errno)
            return false;
        s = end;
        if (*s == '-') {
            if (s[1] < '0' || s[1] > '9')
                return false;
            b = strtoull(s + 1, &end, 10);
            if (errno || b < a || b > INT64_MAX)
                return false;
            s = end;
        }
        if (*s == '\0')
            return true;
        if (*s++ != ',')
            return false;
    }
}

static bool parse_capture(const char *arg)
{
    if (!strncmp(arg, "steps:", 6))
        return parse_steps(arg + 6);
    if (!strncmp(arg, "nvtx:", 5))
        return arg[5] != '\0' && strlen(arg + 5) < 256;
    return !strcmp(arg, "signal") || !strcmp(arg, "cudaProfilerApi");
}

/* --flight-recorder=N(s|min|h) or N(K|M|G): a time (to a week) or a size
 * (to 1 TiB, powers of 1024), more than zero; a unit is needed. */
static bool parse_flight(const char *s, int64_t *out_ns, int64_t *out_bytes)
{
    static const struct { const char *unit; double ns, bytes; } units[] = {
        {"ms", 1e6, 0}, {"s", 1e9, 0}, {"min", 60e9, 0}, {"h", 3600e9, 0},
        {"K", 0, 1024.0}, {"M", 0, 1048576.0}, {"G", 0, 1073741824.0},
    };
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v > 0) || *s < '0' || *s > '9')
        return false;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].unit) != 0)
            continue;
        double ns = v * units[i].ns, bytes = v * units[i].bytes;
        if (ns > 7 * 24 * 3600e9 || bytes > 1099511627776.0 || (ns > 0 && ns < 1e6) || (bytes > 0 && bytes < 1))
            return false;
        *out_ns = (int64_t)ns;
        *out_bytes = (int64_t)bytes;
        return true;
    }
    return false;
}

/* Seconds, fractions allowed, from 0 to a week, as ns. */
static bool parse_seconds(const char *s, int64_t *out_ns)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0) || v > 7 * 24 * 3600.0)
        return false;
    *out_ns = (int64_t)(v * 1e9);
    return true;
}

/* --pytorch[=LIST]: LIST is a comma-separated subset of these (shapes adds
 * ops) and backward-every=N (module backward ranges on steps 0 to N-1 and
 * every N-th step; hooks.py); no feature means steps,modules. Written back
 * in this order. */
static const char *const pytorch_features[] = {"steps", "modules", "ops", "shapes"};

static bool parse_pytorch(const char *arg, char *out, size_t out_bytes)
{
    bool on[4] = {false, false, false, false};
    long every = -1;
    if (arg) {
        const char *p = arg;
        for (;;) {
            size_t len = strcspn(p, ",");
            size_t i = 0;
            while (i < 4 && !(strlen(pytorch_features[i]) == len && !strncmp(p, pytorch_features[i], len)))
                i++;
            if (i == 4) {
                char *end;
                if (strncmp(p, "backward-every=", 15) != 0 || p[15] < '0' || p[15] > '9')
                    return false;
                errno = 0;
                every = strtol(p + 15, &end, 10);
                if (errno || end != p + len || every > 1000000)
                    return false;
                if (!p[len])
                    break;
                p += len + 1;
                continue;
            }
            on[i] = true;
            if (!p[len])
                break;
            p += len + 1;
        }
    }
    if (!on[0] && !on[1] && !on[2] && !on[3])
        on[0] = on[1] = true;
    if (on[3])
        on[2] = true;
    out[0] = '\0';
    size_t len = 0;
    for (size_t i = 0; i < 4; i++)
        if (on[i])
            len += (size_t)snprintf(out + len, out_bytes - len, "%s%s", len ? "," : "", pytorch_features[i]);
    if (every >= 0)
        snprintf(out + len, out_bytes - len, ",backward-every=%ld", every);
    return true;
}

static bool parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

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

static void keep_report(const char *summary, const char *output)
{
    struct stat st;
    if (!strcmp(summary, "off") ||
        (!strcmp(summary, "auto") && (stat(output, &st) != 0 || st.st_size < SUMMARY_AUTO_BYTES)))
        return;
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

static void record_usage(FILE *out)
{
    fprintf(out, "Usage: gtrace [-o FILE] [--cuda=auto|on|off] [--stacks=N] [--flush-ms=N] [--pytorch[=LIST]] [--force]\n"
                 "              [--wait-leftovers=SECONDS] [--capture=steps:A-B[,C-D]|nvtx:NAME|signal]\n"
                 "              [--delay=SECONDS] [--duration=SECONDS] [--flight-recorder=TIME|SIZE]\n"
                 "              [--summary=auto|on|off]\n"
                 "              [--] PROGRAM [ARGS...]\n"
                 "Try 'gtrace --help' for more.\n");
}

int gt_cli_record(int argc, char **argv)
{
    record_opts o = {.output = NULL, .cuda = "auto", .n_stack_frames = 16, .flush_ms = 200, .force = false,
                     .wait_leftovers_s = GT_RECORD_WAIT_LEFTOVERS_S, .pytorch = "", .summary = "auto"};
    enum { OPT_CUDA = 256, OPT_STACKS, OPT_FLUSH, OPT_FORCE, OPT_PYTORCH, OPT_WAIT_LEFTOVERS, OPT_CAPTURE, OPT_DELAY,
           OPT_DURATION, OPT_FLIGHT, OPT_SUMMARY };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},   {"cuda", required_argument, NULL, OPT_CUDA},
        {"stacks", required_argument, NULL, OPT_STACKS}, {"flush-ms", required_argument, NULL, OPT_FLUSH},
        {"force", no_argument, NULL, OPT_FORCE},    {"pytorch", optional_argument, NULL, OPT_PYTORCH},
        {"wait-leftovers", required_argument, NULL, OPT_WAIT_LEFTOVERS},
        {"capture", required_argument, NULL, OPT_CAPTURE}, {"delay", required_argument, NULL, OPT_DELAY},
        {"duration", required_argument, NULL, OPT_DURATION},
        {"flight-recorder", required_argument, NULL, OPT_FLIGHT},
        {"summary", required_argument, NULL, OPT_SUMMARY},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    /* '+': stop at the first non-option, PROGRAM's own options are its own. */
    while ((c = getopt_long(argc, argv, "+o:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': o.output = optarg; break;
        case OPT_CUDA:
            if (strcmp(optarg, "auto") && strcmp(optarg, "on") && strcmp(optarg, "off")) {
                gt_cli_error("--cuda=%s: expected auto, on or off", optarg);
                return 2;
            }
            o.cuda = optarg;
            break;
        case OPT_STACKS:
            if (!parse_int(optarg, 0, 64, &o.n_stack_frames)) {
                gt_cli_error("--stacks=%s: expected a number of frames from 0 to 64", optarg);
                return 2;
            }
            break;
        case OPT_FLUSH:
            if (!parse_int(optarg, 1, 60000, &o.flush_ms)) {
                gt_cli_error("--flush-ms=%s: expected milliseconds from 1 to 60000", optarg);
                return 2;
            }
            break;
        case OPT_FORCE: o.force = true; break;
        case OPT_SUMMARY:
            if (strcmp(optarg, "auto") && strcmp(optarg, "on") && strcmp(optarg, "off")) {
                gt_cli_error("--summary=%s: expected auto, on or off", optarg);
                return 2;
            }
            o.summary = optarg;
            break;
        case OPT_WAIT_LEFTOVERS:
            if (!parse_int(optarg, 0, 7 * 24 * 3600, &o.wait_leftovers_s)) {
                gt_cli_error("--wait-leftovers=%s: expected seconds from 0 to 604800", optarg);
                return 2;
            }
            break;
        case OPT_PYTORCH:
            if (!parse_pytorch(optarg, o.pytorch, sizeof o.pytorch)) {
                gt_cli_error("--pytorch=%s: expected a comma-separated list of steps, modules, ops, shapes, "
                             "backward-every=N (0 to 1000000)", optarg);
                return 2;
            }
            break;
        case OPT_CAPTURE:
            if (!parse_capture(optarg)) {
                gt_cli_error("--capture=%s: expected steps:A-B[,C-D...] (A <= B), nvtx:NAME, signal or "
                             "cudaProfilerApi", optarg);
                return 2;
            }
            o.capture = optarg;
            break;
        case OPT_DELAY:
        case OPT_DURATION:
            if (!parse_seconds(optarg, c == OPT_DELAY ? &o.delay_ns : &o.duration_ns)) {
                gt_cli_error("--%s=%s: expected seconds from 0 to 604800", c == OPT_DELAY ? "delay" : "duration",
                             optarg);
                return 2;
            }
            break;
        case OPT_FLIGHT:
            if (!parse_flight(optarg, &o.flight_ns, &o.flight_bytes)) {
                gt_cli_error("--flight-recorder=%s: expected a time (30s, 10min, 1h) or a size (256M, 1G) above "
                             "zero", optarg);
                return 2;
            }
            o.flight = optarg;
            break;
        case 'h': record_usage(stdout); return 0;
        case 'V': printf("gtrace %s\n", PACKAGE_VERSION); return 0;
        default:
            if (optopt && optopt < 256)
                gt_cli_error("unknown option '-%c'", optopt);
            else
                gt_cli_error("unknown option '%s'", argv[optind - 1]);
            record_usage(stderr);
            return 2;
        }
    }
    if (o.flight && (o.capture || o.delay_ns > 0 || o.duration_ns > 0)) {
        gt_cli_error("--flight-recorder keeps the last part of the whole run: it does not go with --capture, "
                     "--delay or --duration");
        return 2;
    }
    if (optind >= argc) {
        gt_cli_error("no program to run");
        record_usage(stderr);
        return 2;
    }
    gt_record_options ro = {.argv = argv + optind, .output = o.output, .force = o.force, .cuda = o.cuda,
                            .n_stack_frames = o.n_stack_frames, .flush_ms = o.flush_ms,
                            .wait_leftovers_s = o.wait_leftovers_s, .pytorch = o.pytorch, .capture = o.capture,
                            .delay_ns = o.delay_ns, .duration_ns = o.duration_ns, .flight = o.flight,
                            .flight_ns = o.flight_ns, .flight_bytes = o.flight_bytes};
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
