/* analyze_cmds.c: the subcommands that read traces through libtrace/analyze:
 * `report`, `diff`, `memory` and `export`. Each parses its options, opens its
 * traces through the store, calls analyze, and prints; nothing is computed
 * here (the viewer calls the same functions). Exit status: 0, 1 when a trace
 * cannot be read or analysed, 2 for a usage error. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "gt_analyze.h"

enum { EXIT_USAGE = 2 };

static int usage(const char *cmd, const char *synopsis, const char *problem)
{
    if (problem)
        gt_cli_error("%s: %s", cmd, problem);
    fprintf(stderr, "usage: gtrace %s\n", synopsis);
    return EXIT_USAGE;
}

/* getopt_long met an option it does not know, or one without its value. */
static int bad_option(const char *cmd, const char *synopsis, char **argv)
{
    gt_cli_error("%s: unknown option or missing value: '%s'", cmd, argv[optind - 1]);
    fprintf(stderr, "usage: gtrace %s\n", synopsis);
    return EXIT_USAGE;
}

/* flags: GT_OPEN_CHECK_LATER where analyze reads the whole trace and asks
 * for the check's verdict (gt_report_compute does): the check of a big file
 * then runs beside the reading. */
static gt_trace *open_trace(const char *path, unsigned flags)
{
    gt_trace *t = NULL;
    if (gt_trace_open(&t, path, flags) != 0) {
        gt_cli_error("%s", gt_error_last());
        return NULL;
    }
    return t;
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
static bool parse_steps(const char *s, gt_report_options *opt)
{
    const char *colon = strchr(s, ':');
    char first[32] = "", last[32] = "";
    if (!colon) {
        if (!parse_count(s, &opt->step_first))
            return false;
        opt->step_last = opt->step_first;
        return true;
    }
    size_t n = (size_t)(colon - s);
    if (n >= sizeof first || strlen(colon + 1) >= sizeof last)
        return false;
    memcpy(first, s, n);
    strcpy(last, colon + 1);
    if ((*first && !parse_count(first, &opt->step_first)) || (*last && !parse_count(last, &opt->step_last)))
        return false;
    return *first || *last;
}

/* A time on the trace's clock: "1.5s", "250ms", "40us", "123ns" or plain ns. */
static bool parse_time(const char *s, int64_t *out_ns)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
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
    if (v * scale > 9.2e18)
        return false;
    *out_ns = (int64_t)(v * scale + 0.5);
    return true;
}

/* ---- gtrace report ------------------------------------------------------- */

#define REPORT_SYNOPSIS "report TRACE [--json] [--steps A:B] [--top N]"

int gt_cli_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},
        {"steps", required_argument, NULL, 's'},
        {"top", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    gt_report_options opt;
    gt_report_options_init(&opt);
    bool json = false;
    int64_t top;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 's':
            if (!parse_steps(optarg, &opt))
                return usage("report", REPORT_SYNOPSIS, "--steps wants A:B, A:, :B or N (step numbers)");
            break;
        case 't':
            if (!parse_count(optarg, &top) || top < 1 || top > 100000)
                return usage("report", REPORT_SYNOPSIS, "--top wants a number from 1 to 100000");
            opt.top_n = (int)top;
            break;
        case 'h': printf("usage: gtrace %s\n", REPORT_SYNOPSIS); return 0;
        default: return bad_option("report", REPORT_SYNOPSIS, argv);
        }
    }
    if (argc - optind != 1)
        return usage("report", REPORT_SYNOPSIS, argc - optind < 1 ? "which trace?" : "one trace at a time");
    if (opt.step_first >= 0 && opt.step_last >= 0 && opt.step_first > opt.step_last)
        return usage("report", REPORT_SYNOPSIS, "--steps A:B needs A <= B");

    gt_trace *t = open_trace(argv[optind], GT_OPEN_CHECK_LATER);
    gt_report *r = NULL;
    int status = 1;
    if (!t)
        goto cleanup;
    if (gt_report_compute(&r, t, &opt) != 0) {
        gt_cli_error("report %s: %s", argv[optind], gt_error_last());
        goto cleanup;
    }
    if ((json ? gt_report_print_json(r, stdout) : gt_report_print_text(r, stdout)) != 0 || fflush(stdout) != 0) {
        gt_cli_error("report: cannot write the report: %s", strerror(errno));
        goto cleanup;
    }
    status = 0;
cleanup:
    gt_report_free(r);
    gt_trace_free(t);
    return status;
}

/* ---- gtrace diff ----------------------------------------------------------- */

#define DIFF_SYNOPSIS "diff BEFORE AFTER [--json]"

static gt_report *report_of(const char *path)
{
    gt_report_options opt;
    gt_report_options_init(&opt);
    opt.top_n = 50; /* compare more kernels than a report shows */
    gt_report *r = NULL;
    gt_trace *t = open_trace(path, GT_OPEN_CHECK_LATER);
    if (t && gt_report_compute(&r, t, &opt) != 0)
        gt_cli_error("diff %s: %s", path, gt_error_last());
    gt_trace_free(t);
    return r;
}

int gt_cli_diff(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'h': printf("usage: gtrace %s\n", DIFF_SYNOPSIS); return 0;
        default: return bad_option("diff", DIFF_SYNOPSIS, argv);
        }
    }
    if (argc - optind != 2)
        return usage("diff", DIFF_SYNOPSIS, "two traces: the one before and the one after a change");

    gt_report *before = report_of(argv[optind]), *after = NULL;
    gt_diff *d = NULL;
    int status = 1;
    if (!before || !(after = report_of(argv[optind + 1])))
        goto cleanup;
    if (gt_diff_compute(&d, before, after) != 0) {
        gt_cli_error("diff: %s", gt_error_last());
        goto cleanup;
    }
    if ((json ? gt_diff_print_json(d, stdout) : gt_diff_print_text(d, stdout)) != 0 || fflush(stdout) != 0) {
        gt_cli_error("diff: cannot write the comparison: %s", strerror(errno));
        goto cleanup;
    }
    status = 0;
cleanup:
    gt_diff_free(d);
    gt_report_free(before);
    gt_report_free(after);
    return status;
}

/* ---- gtrace memory ----------------------------------------------------------- */

#define MEMORY_SYNOPSIS "memory TRACE (--at TIME | --step N) [--json]   (TIME: 1.5s, 250ms, 40us or ns)"

int gt_cli_memory(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"at", required_argument, NULL, 'a'},
        {"step", required_argument, NULL, 's'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false, have_at = false, have_step = false;
    int64_t at_ns = 0, step = 0;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'a':
            if (!parse_time(optarg, &at_ns))
                return usage("memory", MEMORY_SYNOPSIS, "--at wants a time such as 1.5s, 250ms, 40us or 123 (ns)");
            have_at = true;
            break;
        case 's':
            if (!parse_count(optarg, &step))
                return usage("memory", MEMORY_SYNOPSIS, "--step wants a step number");
            have_step = true;
            break;
        case 'j': json = true; break;
        case 'h': printf("usage: gtrace %s\n", MEMORY_SYNOPSIS); return 0;
        default: return bad_option("memory", MEMORY_SYNOPSIS, argv);
        }
    }
    if (argc - optind != 1)
        return usage("memory", MEMORY_SYNOPSIS, argc - optind < 1 ? "which trace?" : "one trace at a time");
    if (have_at == have_step)
        return usage("memory", MEMORY_SYNOPSIS, "give either --at TIME or --step N");

    gt_trace *t = open_trace(argv[optind], 0);
    gt_mem_state *s = NULL;
    int status = 1;
    if (!t)
        goto cleanup;
    int rc = have_at ? gt_memory_state_at(&s, t, at_ns) : gt_memory_state_at_step(&s, t, step);
    if (rc != 0) {
        gt_cli_error("memory %s: %s", argv[optind], gt_error_last());
        goto cleanup;
    }
    if ((json ? gt_mem_state_print_json(s, stdout) : gt_mem_state_print_text(s, stdout)) != 0 || fflush(stdout) != 0) {
        gt_cli_error("memory: cannot write the allocator state: %s", strerror(errno));
        goto cleanup;
    }
    status = 0;
cleanup:
    gt_mem_state_free(s);
    gt_trace_free(t);
    return status;
}

/* ---- gtrace export ------------------------------------------------------------- */

#define EXPORT_SYNOPSIS "export TRACE --format chrome|memviz|csv [-o PATH] [--force]"

/* Opens `path` for writing; an existing file is refused unless `force`. */
static FILE *create_output(const char *path, bool force, const char *mode)
{
    if (!force && access(path, F_OK) == 0) {
        gt_cli_error("export: %s exists (use --force to replace it)", path);
        return NULL;
    }
    FILE *f = fopen(path, mode);
    if (!f)
        gt_cli_error("export: cannot create %s: %s", path, strerror(errno));
    return f;
}

/* The default output: the trace's name with its extension replaced. */
static char *default_output(const char *trace, const char *ext)
{
    const char *base = strrchr(trace, '/');
    base = base ? base + 1 : trace;
    const char *dot = strrchr(base, '.');
    size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    char *out = malloc(n + strlen(ext) + 1);
    if (out) {
        memcpy(out, base, n);
        strcpy(out + n, ext);
    }
    return out;
}

int gt_cli_export(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"force", no_argument, NULL, 'F'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *format = NULL, *output = NULL;
    bool force = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
        switch (c) {
        case 'f': format = optarg; break;
        case 'o': output = optarg; break;
        case 'F': force = true; break;
        case 'h': printf("usage: gtrace %s\n", EXPORT_SYNOPSIS); return 0;
        default: return bad_option("export", EXPORT_SYNOPSIS, argv);
        }
    }
    if (argc - optind != 1)
        return usage("export", EXPORT_SYNOPSIS, argc - optind < 1 ? "which trace?" : "one trace at a time");
    if (!format)
        return usage("export", EXPORT_SYNOPSIS, "--format is required");
    const char *ext = !strcmp(format, "chrome") ? ".json" : !strcmp(format, "memviz") ? ".pickle"
                    : !strcmp(format, "csv") ? "-csv" : NULL;
    if (!ext)
        return usage("export", EXPORT_SYNOPSIS, "--format wants chrome, memviz or csv");

    const char *trace_path = argv[optind];
    char *owned = output ? NULL : default_output(trace_path, ext);
    const char *path = output ? output : owned;
    gt_trace *t = NULL;
    FILE *f = NULL;
    int status = 1, rc;
    if (!path) {
        gt_cli_error("export: out of memory");
        goto cleanup;
    }
    if (!(t = open_trace(trace_path, 0)))
        goto cleanup;
    if (!strcmp(format, "csv")) {
        /* A folder of one CSV per event kind. */
        if (mkdir(path, 0777) != 0 && !(errno == EEXIST && force)) {
            gt_cli_error("export: cannot create the folder %s: %s%s", path, strerror(errno),
                         errno == EEXIST ? " (use --force to write into it)" : "");
            goto cleanup;
        }
        rc = gt_export_csv(t, path);
    } else {
        if (!(f = create_output(path, force, !strcmp(format, "memviz") ? "wb" : "w")))
            goto cleanup;
        rc = !strcmp(format, "chrome") ? gt_export_chrome(t, f) : gt_export_memviz(t, f);
        if (fclose(f) != 0 && rc == 0)
            rc = gt_error_set(GT_ERR_IO, "cannot write %s: %s", path, strerror(errno));
        f = NULL;
    }
    if (rc != 0) {
        gt_cli_error("export %s: %s", trace_path, gt_error_last());
        if (strcmp(format, "csv") != 0)
            unlink(path); /* no half-written file left behind */
        goto cleanup;
    }
    fprintf(stderr, "gtrace: wrote %s\n", path);
    status = 0;
cleanup:
    if (f)
        fclose(f);
    gt_trace_free(t);
    free(owned);
    return status;
}
