/* flag_tables.c: the table of each gtrace command's flags (flags.h), in
 * --help's order, and the parsers of the values that are more than a number
 * or a choice: --pytorch's list, --capture's window, --flight-recorder's
 * time or size, a time on the trace's clock, --steps, a percentage. The
 * parsing, checks and --help made of the tables are flags.c's. */
#include "config.h"

#include "flags.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- values beyond a number ---- */

/* "A-B[,C-D...]" (or "A"), A <= B: step numbers as the `step N` ranges count. */
static bool parse_step_list(const char *s)
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

static bool parse_capture(const char *arg, void *field)
{
    bool ok;
    if (!strncmp(arg, "steps:", 6))
        ok = parse_step_list(arg + 6);
    else if (!strncmp(arg, "nvtx:", 5))
        ok = arg[5] != '\0' && strlen(arg + 5) < 256;
    else
        ok = !strcmp(arg, "signal") || !strcmp(arg, "cudaProfilerApi");
    if (ok)
        *(const char **)field = arg;
    return ok;
}

/* --flight-recorder=N(s|min|h) or N(K|M|G): a time (to a week) or a size
 * (to 1 TiB, powers of 1024), more than zero; a unit is needed. */
static bool parse_flight(const char *s, void *field)
{
    static const struct { const char *unit; double ns, bytes; } units[] = {
        {"ms", 1e6, 0}, {"s", 1e9, 0}, {"min", 60e9, 0}, {"h", 3600e9, 0},
        {"K", 0, 1024.0}, {"M", 0, 1048576.0}, {"G", 0, 1073741824.0},
    };
    gt_flight_value *out = field;
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
        *out = (gt_flight_value){s, (int64_t)ns, (int64_t)bytes};
        return true;
    }
    return false;
}

/* --pytorch[=LIST]: LIST is a comma-separated subset of these (shapes adds
 * ops) and backward-every=N (module backward ranges on the first N steps, ten
 * at most, and every N-th step; hooks.py); no feature means steps,modules. Written back
 * in this order. */
static const char *const pytorch_features[] = {"steps", "modules", "ops", "shapes"};

static bool parse_pytorch(const char *arg, void *field)
{
    char *out = field;
    size_t out_bytes = sizeof ((gt_record_flags *)0)->pytorch;
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

/* A non-negative integer, all of the text. */
static bool parse_count(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < 0)
        return false;
    *out = v;
    return true;
}

/* "A:B", "A:", ":B" or "N" (one step). */
static bool parse_steps(const char *s, void *field)
{
    gt_steps_value *st = field;
    const char *colon = strchr(s, ':');
    char first[32] = "", last[32] = "";
    if (!colon) {
        if (!parse_count(s, &st->first))
            return false;
        st->last = st->first;
        return true;
    }
    size_t n = (size_t)(colon - s);
    if (n >= sizeof first || strlen(colon + 1) >= sizeof last)
        return false;
    memcpy(first, s, n);
    strcpy(last, colon + 1);
    if ((*first && !parse_count(first, &st->first)) || (*last && !parse_count(last, &st->last)))
        return false;
    return *first || *last;
}

/* A time on the trace's clock: "1.5s", "250ms", "40us", "123ns" or plain ns;
 * from 0 to what int64 ns hold. Not "nan", "inf", hex, spaces or a sign. */
static bool parse_time(const char *s, void *field)
{
    int64_t *out_ns = field;
    char *end;
    if (!((*s >= '0' && *s <= '9') || *s == '.') || strpbrk(s, "xXpP"))
        return false;
    size_t n_digits = strspn(s, "0123456789");
    if (n_digits > 0 && (!s[n_digits] || !strcmp(s + n_digits, "ns"))) { /* whole ns: exact, to INT64_MAX */
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno)
            return false;
        *out_ns = v;
        return true;
    }
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v < 0)
        return false;
    double scale = 1;
    if (!strcmp(end, "s"))
        scale = 1e9;
    else if (!strcmp(end, "ms"))
        scale = 1e6;
    else if (!strcmp(end, "us"))
        scale = 1e3;
    else if (*end && strcmp(end, "ns"))
        return false;
    double ns = v * scale + 0.5;
    if (!(ns < 9223372036854775807.0)) /* 2^63: the first double past int64 */
        return false;
    *out_ns = (int64_t)ns;
    return true;
}

/* "5", "2.5" or "5%": a percentage from 0 to 100, kept as a fraction. */
static bool parse_percent(const char *s, void *field)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || (*end && strcmp(end, "%")) || !isfinite(v) || v < 0 || v > 100)
        return false;
    *(double *)field = v / 100;
    return true;
}

/* ---- the tables ---- */

#define CHOICES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define N_OF(a) ((int)(sizeof(a) / sizeof(a)[0]))
#define HELP_ROW(s) {.name = "help", .short_name = s, .kind = GT_FLAG_SWITCH, .help = "show this help", \
                     .bits = GT_FLAG_HELP}
#define ONOFF CHOICES("auto", "on", "off")
#define WEEK_S (7 * 24 * 3600)

#define R(field) offsetof(gt_record_flags, field)
static const gt_flag record_rows[] = {
    {.name = "output", .short_name = 'o', .kind = GT_FLAG_TEXT, .offset = R(output), .arg = "FILE",
     .help = "write the trace to FILE (default: gtrace-PROGRAM-N.sqlite)"},
    {.name = "force", .kind = GT_FLAG_SWITCH, .offset = R(force), .help = "replace FILE if it exists"},
    {.name = "cuda", .kind = GT_FLAG_CHOICE, .offset = R(cuda), .choices = ONOFF, .arg = "MODE",
     .help = "auto: trace CUDA when a GPU and CUPTI are there;\n"
             "on: say so when they are not; off: NVTX only", .def = "auto"},
    {.name = "stacks", .kind = GT_FLAG_INT, .offset = R(n_stack_frames), .lo = 0, .hi = 64,
     .wants = "a number of frames", .arg = "N",
     .help = "record N frames of the call stack of device\nallocations, 0: none", .def = "16"},
    {.name = "flush-ms", .kind = GT_FLAG_INT, .offset = R(flush_ms), .lo = 1, .hi = 60000, .wants = "milliseconds",
     .arg = "N", .help = "write buffered events at least every N ms", .def = "200"},
    {.name = "pytorch", .kind = GT_FLAG_PARSED, .offset = R(pytorch), .parse = parse_pytorch,
     .wants = "a comma-separated list of steps, modules, ops, shapes, backward-every=N (0 to 1000000)",
     .arg = "LIST", .bits = GT_FLAG_OPTIONAL,
     .help = "a Python PyTorch program marks, unchanged, what LIST names:\n"
             "steps (and their phases: data, forward, backward, optimizer),\n"
             "modules, ops (ATen ops), shapes (ops with input shapes),\n"
             "backward-every=N (module backward ranges on the first N\n"
             "steps, ten at most, and every N-th, default 25);\n"
             "default steps,modules"},
    {.name = "wait-leftovers", .kind = GT_FLAG_INT, .offset = R(wait_leftovers_s), .lo = 0, .hi = WEEK_S,
     .wants = "seconds", .arg = "SECONDS",
     .help = "once PROGRAM ends, wait at most SECONDS for the\n"
             "processes it left running, then write the trace", .def = "60"},
    {.name = "capture", .kind = GT_FLAG_PARSED, .offset = R(capture), .parse = parse_capture,
     .wants = "steps:A-B[,C-D...] (A <= B), nvtx:NAME, signal or cudaProfilerApi", .arg = "WINDOW",
     .help = "record NVTX only in a window: steps:A-B[,C-D], nvtx:NAME,\n"
             "signal (SIGUSR1 toggles) or cudaProfilerApi"},
    {.name = "delay", .kind = GT_FLAG_SECONDS, .offset = R(delay_ns), .lo = 0, .hi = WEEK_S, .wants = "seconds",
     .arg = "SECONDS", .help = "a window in time"},
    {.name = "duration", .kind = GT_FLAG_SECONDS, .offset = R(duration_ns), .lo = 0, .hi = WEEK_S,
     .wants = "seconds", .arg = "SECONDS", .bits = GT_FLAG_SAME_LINE},
    {.name = "flight-recorder", .kind = GT_FLAG_PARSED, .offset = R(flight), .parse = parse_flight,
     .wants = "a time (30s, 10min, 1h) or a size (256M, 1G) above zero", .arg = "TIME|SIZE",
     .help = "keep only the last 30s (or 256M) and write it at\n"
             "the end, at a crash or OOM, and on SIGUSR2"},
    {.name = "summary", .kind = GT_FLAG_CHOICE, .offset = R(summary), .choices = ONOFF, .arg = "MODE",
     .help = "keep the report in the trace, so gtrace report prints it at once:\n"
             "auto: for traces of 64 MB and more; on; off", .def = "auto"},
    HELP_ROW('h'),
    {.name = "version", .short_name = 'V', .kind = GT_FLAG_SWITCH, .help = "show the version",
     .bits = GT_FLAG_VERSION},
};
const gt_flags gt_record_flag_table = {
    .operands = "[--] PROGRAM [ARGS...]",
    .about = "Records a trace of PROGRAM (NVTX ranges and memory regions, CUDA calls, kernels,\n"
             "copies and device memory) into an SQLite file, then prints a summary.\n",
    .style = GT_FLAGS_EXPECTED, .sep = '=', .v = record_rows, .n = N_OF(record_rows)};
#undef R

#define A(field) offsetof(gt_analyze_flags, field)
#define JSON_ROW(text) {.name = "json", .kind = GT_FLAG_SWITCH, .offset = A(json), .help = text}
#define TIME_WANTS "a time such as 1.5s, 250ms, 40us or 123 (ns), from 0 to 9.2e18 ns"
#define PID_ROW(text) {.name = "pid", .kind = GT_FLAG_INT, .offset = A(pid), .lo = 0, .hi = 0xffffff, \
                       .wants = "a process id", .arg = "P", .help = text, .bits = GT_FLAG_NO_RANGE}
#define AT_ROW(text) {.name = "at", .kind = GT_FLAG_PARSED, .offset = A(at_ns), .parse = parse_time, \
                      .wants = TIME_WANTS, .arg = "TIME", .help = text}
#define STEP_ROW(text) {.name = "step", .kind = GT_FLAG_INT, .offset = A(step), .lo = 0, .hi = INT64_MAX, \
                        .wants = "a step number", .arg = "N", .help = text, .bits = GT_FLAG_NO_RANGE}

static const gt_flag report_rows[] = {
    JSON_ROW("the report as JSON"),
    {.name = "steps", .kind = GT_FLAG_PARSED, .offset = A(steps), .parse = parse_steps,
     .wants = "A:B, A:, :B or N (step numbers)", .arg = "A:B", .help = "only steps A to B (A:, :B, or one step N)"},
    {.name = "top", .kind = GT_FLAG_INT, .offset = A(top), .lo = 1, .hi = 100000, .wants = "a number", .arg = "N",
     .help = "list the top N kernels, calls and copies"},
    {.name = "no-summary", .kind = GT_FLAG_SWITCH, .offset = A(no_summary),
     .help = "analyse again, not the report kept in the trace"},
    HELP_ROW(0),
};
const gt_flags gt_report_flag_table = {
    .command = "report", .synopsis = "report TRACE [--json] [--steps A:B] [--top N] [--no-summary]",
    .about = "Why the run is slow and where its memory went.\n", .style = GT_FLAGS_WANTS_USAGE, .sep = ' ',
    .v = report_rows, .n = N_OF(report_rows)};

static const gt_flag diff_rows[] = {
    JSON_ROW("the comparison as JSON"),
    {.name = "noise-floor", .kind = GT_FLAG_PARSED, .offset = A(noise_floor), .parse = parse_percent,
     .wants = "a percentage from 0 to 100", .arg = "PCT",
     .help = "a change under PCT percent is the same (5, 2.5 or 5%)"},
    {.name = "keep-warmup", .kind = GT_FLAG_SWITCH, .offset = A(keep_warmup),
     .help = "count the warm-up steps too"},
    {.name = "keep-busy", .kind = GT_FLAG_SWITCH, .offset = A(keep_busy),
     .help = "keep a run that waited for a CPU"},
    HELP_ROW(0),
};
const gt_flags gt_diff_flag_table = {
    .command = "diff",
    .synopsis = "diff BEFORE AFTER [--json] [--noise-floor PCT] [--keep-warmup] [--keep-busy]\n"
                "       gtrace diff [options] BEFORE... -- AFTER...   (several runs a side)",
    .about = "What got better or worse between two runs (or several a side).\n", .style = GT_FLAGS_WANTS_USAGE,
    .sep = ' ', .v = diff_rows, .n = N_OF(diff_rows)};

static const gt_flag memory_rows[] = {
    AT_ROW("the moment on the trace's clock: 1.5s, 250ms, 40us or ns"),
    STEP_ROW("the peak of step N"),
    PID_ROW("only process P"),
    JSON_ROW("the segments and blocks as JSON"),
    HELP_ROW(0),
};
const gt_flags gt_memory_flag_table = {
    .command = "memory",
    .synopsis = "memory TRACE (--at TIME | --step N) [--pid P] [--json]   (TIME: 1.5s, 250ms, 40us or ns)",
    .about = "The allocator's segments and blocks at a moment.\n", .style = GT_FLAGS_WANTS_VALUE, .sep = ' ',
    .v = memory_rows, .n = N_OF(memory_rows)};

static const gt_flag export_rows[] = {
    {.name = "format", .kind = GT_FLAG_CHOICE, .offset = A(format), .choices = CHOICES("chrome", "memviz", "csv"),
     .arg = "F", .help = "chrome (Perfetto, HTA), memviz (memory_viz) or csv (a folder)", .bits = GT_FLAG_LATER},
    {.name = "output", .short_name = 'o', .kind = GT_FLAG_TEXT, .offset = A(output), .arg = "PATH",
     .help = "the file or, ending in /, the folder (default: beside the trace)"},
    PID_ROW("only process P (chrome, memviz)"),
    {.name = "force", .kind = GT_FLAG_SWITCH, .offset = A(force), .help = "replace what PATH holds"},
    AT_ROW("memviz: the state at TIME (default: the trace's end)"),
    STEP_ROW("memviz: the state at the peak of step N"),
    {.name = "memviz-format", .kind = GT_FLAG_CHOICE, .offset = A(memviz_format), .choices = CHOICES("2", "1.13"),
     .wants = "2 (PyTorch 2.x) or 1.13", .arg = "V", .help = "memviz: PyTorch 2.x's snapshot (2) or 1.13's"},
    HELP_ROW(0),
};
const gt_flags gt_export_flag_table = {
    .command = "export",
    .synopsis = "export TRACE --format chrome|memviz|csv [-o PATH|DIR/] [--pid P] [--force]\n"
                "       [--at TIME | --step N] [--memviz-format 2|1.13]   (memviz: the snapshot's moment, PyTorch's "
                "form)",
    .about = "The trace for Perfetto and HTA, memory_viz, or spreadsheets.\n", .style = GT_FLAGS_WANTS_VALUE,
    .sep = ' ', .v = export_rows, .n = N_OF(export_rows)};
#undef A

#define O(field) offsetof(gt_output_flags, field)
#define OUTPUT_ROW(text) {.name = "output", .short_name = 'o', .kind = GT_FLAG_TEXT, .offset = O(output), \
                          .arg = "TRACE", .help = text}
#define FORCE_ROW(text) {.name = "force", .kind = GT_FLAG_SWITCH, .offset = O(force), .help = text}

static const gt_flag import_rows[] = {
    OUTPUT_ROW("the trace to write"),
    FORCE_ROW("replace TRACE if it is a regular file that is none of the inputs"),
    HELP_ROW('h'),
};
const gt_flags gt_import_flag_table = {
    .command = "import", .synopsis = "import FILE... -o TRACE [--force]",
    .about = "Makes torch.profiler traces (JSON) and CUDA memory snapshots (pickle) into one trace.\n",
    .style = GT_FLAGS_WANTS_USAGE, .exact = true, .sep = ' ', .v = import_rows, .n = N_OF(import_rows)};

static const gt_flag merge_rows[] = {
    OUTPUT_ROW("the merged trace"),
    FORCE_ROW("replace TRACE if it is a regular file that exists"),
    HELP_ROW('h'),
};
const gt_flags gt_merge_flag_table = {
    .command = "merge", .synopsis = "merge PART... -o TRACE [--force]",
    .about = "Joins traces taken one per rank or node (gtrace -o trace.%r.sqlite) into one trace, each\n"
             "part's clock corrected for its offset and drift against the first part's.\n",
    .style = GT_FLAGS_WANTS_USAGE, .sep = '=', .v = merge_rows, .n = N_OF(merge_rows)};

static const gt_flag recover_rows[] = {
    OUTPUT_ROW("the trace to write"),
    FORCE_ROW("replace TRACE if it is a regular file that exists"),
    HELP_ROW('h'),
};
const gt_flags gt_recover_flag_table = {
    .command = "recover", .synopsis = "recover DIR -o TRACE [--force]",
    .about = "Makes the trace of a run whose gtrace was killed from the parts it left in DIR\n"
             "(the hidden folder .gtrace-parts-XXXXXX beside the trace it was to write).\n",
    .style = GT_FLAGS_WANTS_USAGE, .sep = '=', .v = recover_rows, .n = N_OF(recover_rows)};

static const gt_flag info_rows[] = {
    {.name = "check", .kind = GT_FLAG_SWITCH, .offset = O(check),
     .help = "check every page and row, even of a trace gtrace closed whole"},
    HELP_ROW('h'),
};
const gt_flags gt_info_flag_table = {
    .command = "info", .synopsis = "info TRACE [--check]",
    .about = "Describes a trace written by gtrace or exported by nsys (SQLite),\n"
             "or a torch.profiler trace (JSON) or CUDA memory snapshot (pickle), imported on the fly.\n",
    .style = GT_FLAGS_WANTS_USAGE, .exact = true, .sep = ' ', .v = info_rows, .n = N_OF(info_rows)};
