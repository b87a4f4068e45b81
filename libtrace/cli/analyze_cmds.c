/* analyze_cmds.c: the subcommands that read traces through libtrace/analyze:
 * `report`, `diff`, `memory` and `export`. Each parses its options, opens its
 * traces through the store, calls analyze, and prints; nothing is computed
 * here (the viewer calls the same functions). Exit status: 0, 1 when a trace
 * cannot be read or analysed, 2 for a usage error. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "flags.h"
#include "gt_outpath.h"
#include "gt_analyze.h"

enum { EXIT_USAGE = 2 };

static int usage(const char *cmd, const char *synopsis, const char *problem)
{
    if (problem)
        gt_cli_error("%s: %s", cmd, problem);
    fprintf(stderr, "usage: gtrace %s\n", synopsis);
    return EXIT_USAGE;
}

/* The parser met an option it does not know, or one without its value. */
static int bad_option(const char *cmd, const char *synopsis, const char *arg)
{
    gt_cli_error("%s: unknown option or missing value: '%s'", cmd, arg);
    fprintf(stderr, "usage: gtrace %s\n", synopsis);
    return EXIT_USAGE;
}

/* The flags of fs (flags.h) into v; -1 when parsed, else the exit status
 * (0 after --help, which prints the help). */
static int parse_flags(const gt_flags *fs, int argc, char **argv, gt_analyze_flags *v, gt_flags_result *res)
{
    switch (gt_flags_parse(fs, argc, argv, v, res, stderr)) {
    case GT_FLAGS_OK: return -1;
    case GT_FLAGS_HELP: gt_flags_help(fs, stdout); return 0;
    case GT_FLAGS_UNKNOWN: return bad_option(fs->command, fs->synopsis, res->bad);
    default: return EXIT_USAGE;
    }
}

/* What a command's flags are before parsing: none given. */
static const gt_analyze_flags no_flags = {.steps = {-1, -1}, .at_ns = -1, .step = -1, .pid = -1};

/* flags: GT_OPEN_CHECK_LATER where analyze reads the whole trace and asks
 * for the check's verdict (gt_report_compute does): the check of a big file
 * then runs beside the reading. A torch.profiler JSON or a memory snapshot
 * is imported on the fly into a temporary trace (open_any.c). */
static gt_trace *open_trace(const char *path, unsigned flags)
{
    return gt_cli_open_trace(path, flags);
}

/* ---- gtrace report ------------------------------------------------------- */

#define REPORT_SYNOPSIS (gt_report_flag_table.synopsis)

/* GTRACE_SUMMARY_SAY=1: says on stderr how the report was made (for tests). */
static void say_how(const char *how)
{
    const char *v = getenv("GTRACE_SUMMARY_SAY");
    if (v && !strcmp(v, "1"))
        fprintf(stderr, "gtrace: report: %s\n", how);
}

/* Without options, the report kept in the trace when it was finished
 * (report_kept.c), if the trace can be trusted to be what it was: 1 when
 * it was printed, 0 when the caller analyses, -1 for a failed write. */
static int print_kept_report(gt_trace *t, bool json)
{
    int rc = gt_report_print_kept(t, json, stdout);
    if (rc == GT_ERR_IO) {
        gt_cli_error("report: cannot write the report: %s", strerror(errno));
        return -1;
    }
    if (rc == 0)
        say_how("from the summary kept in the trace");
    return rc == 0;
}

int gt_cli_report(int argc, char **argv)
{
    gt_report_options opt;
    gt_report_options_init(&opt);
    gt_analyze_flags f = no_flags;
    gt_flags_result res;
    int rc = parse_flags(&gt_report_flag_table, argc, argv, &f, &res);
    if (rc >= 0)
        return rc;
    bool json = f.json, answer_changed = f.steps.first >= 0 || f.steps.last >= 0 || f.top > 0; /* not what was kept */
    bool no_summary = f.no_summary || (getenv("GTRACE_NO_SUMMARY") && *getenv("GTRACE_NO_SUMMARY"));
    opt.step_first = f.steps.first;
    opt.step_last = f.steps.last;
    if (f.top > 0)
        opt.top_n = (int)f.top;
    if (res.n != 1)
        return usage("report", REPORT_SYNOPSIS, res.n < 1 ? "which trace?" : "one trace at a time");
    if (opt.step_first >= 0 && opt.step_last >= 0 && opt.step_first > opt.step_last)
        return usage("report", REPORT_SYNOPSIS, "--steps A:B needs A <= B");

    gt_trace *t = open_trace(argv[res.first], GT_OPEN_CHECK_LATER);
    gt_analysis *a = NULL;
    gt_report *window = NULL;
    int status = 1;
    if (!t)
        goto cleanup;
    if (!no_summary && !answer_changed) {
        int kept = print_kept_report(t, json);
        if (kept != 0) {
            status = kept > 0 && fflush(stdout) == 0 ? 0 : 1;
            goto cleanup;
        }
    }
    /* --steps on a trace that kept its whole-trace facts: the window only */
    bool read = false;
    if (!no_summary && gt_report_compute_window(&window, &read, t, &opt) != 0) {
        gt_cli_error("report %s: %s", argv[res.first], gt_error_last());
        goto cleanup;
    }
    say_how(read ? "the window of its steps, with the facts kept in the trace" : "analysed (no summary used)");
    if (!read && gt_analysis_load(&a, t, &opt) != 0) {
        gt_cli_error("report %s: %s", argv[res.first], gt_error_last());
        goto cleanup;
    }
    const gt_report *r = read ? window : gt_analysis_report(a);
    if ((json ? gt_report_print_json(r, stdout) : gt_report_print_text(r, stdout)) != 0 || fflush(stdout) != 0) {
        gt_cli_error("report: cannot write the report: %s", strerror(errno));
        goto cleanup;
    }
    status = 0;
cleanup:
    gt_report_free(window);
    gt_analysis_free(a);
    gt_trace_free(t);
    return status;
}

/* ---- gtrace diff ----------------------------------------------------------- */

#define DIFF_SYNOPSIS (gt_diff_flag_table.synopsis)

/* One run: its report and per-step samples (one side's model at a time in memory). */
static gt_diff_run *run_of(const char *path)
{
    gt_report_options opt;
    gt_report_options_init(&opt);
    opt.top_n = 50; /* compare more kernels than a report shows */
    gt_diff_run *run = NULL;
    gt_trace *t = open_trace(path, GT_OPEN_CHECK_LATER);
    /* A PyTorch file is read through a temporary trace: name the file given. */
    if (t && (gt_diff_run_load(&run, t, &opt) != 0 || gt_diff_run_rename(run, path) != 0)) {
        gt_cli_error("diff %s: %s", path, gt_error_last());
        gt_diff_run_free(run);
        run = NULL;
    }
    gt_trace_free(t);
    return run;
}

int gt_cli_diff(int argc, char **argv)
{
    gt_diff_options dopt;
    gt_diff_options_init(&dopt);
    /* BEFORE... -- AFTER...: options come before the "--" */
    int sep = -1;
    for (int i = 1; i < argc && sep < 0; i++)
        if (strcmp(argv[i], "--") == 0)
            sep = i;
    int n_opt_args = sep < 0 ? argc : sep;
    gt_analyze_flags f = no_flags;
    f.noise_floor = dopt.noise_floor;
    gt_flags_result res;
    int rc = parse_flags(&gt_diff_flag_table, n_opt_args, argv, &f, &res);
    if (rc >= 0)
        return rc;
    bool json = f.json;
    dopt.noise_floor = f.noise_floor;
    dopt.keep_warmup = f.keep_warmup;
    dopt.keep_busy = f.keep_busy;
    char **bpaths = argv + res.first, **apaths;
    int nb = res.n, na;
    if (sep < 0) {
        if (nb != 2)
            return usage("diff", DIFF_SYNOPSIS, "two traces: the one before and the one after a change");
        apaths = bpaths + 1;
        nb = na = 1;
    } else {
        apaths = argv + sep + 1;
        na = argc - sep - 1;
        if (nb < 1 || na < 1)
            return usage("diff", DIFF_SYNOPSIS, "two traces: the one before and the one after a change");
    }

    gt_diff_run **runs = calloc((size_t)(nb + na), sizeof *runs);
    gt_diff *d = NULL;
    int status = 1;
    if (!runs) {
        gt_cli_error("diff: out of memory");
        return 1;
    }
    for (int i = 0; i < nb + na; i++)
        if (!(runs[i] = run_of(i < nb ? bpaths[i] : apaths[i - nb])))
            goto cleanup;
    if (gt_diff_compute_runs(&d, runs, (size_t)nb, runs + nb, (size_t)na, &dopt) != 0) {
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
    for (int i = 0; i < nb + na; i++)
        gt_diff_run_free(runs[i]);
    free(runs);
    return status;
}

/* ---- gtrace memory ----------------------------------------------------------- */

#define MEMORY_SYNOPSIS (gt_memory_flag_table.synopsis)

int gt_cli_memory(int argc, char **argv)
{
    gt_analyze_flags f = no_flags;
    gt_flags_result res;
    int rc = parse_flags(&gt_memory_flag_table, argc, argv, &f, &res);
    if (rc >= 0)
        return rc;
    bool json = f.json, have_at = f.at_ns >= 0, have_step = f.step >= 0;
    int64_t at_ns = f.at_ns, step = f.step, pid = f.pid;
    if (res.n != 1)
        return usage("memory", MEMORY_SYNOPSIS, res.n < 1 ? "which trace?" : "one trace at a time");
    if (have_at == have_step)
        return usage("memory", MEMORY_SYNOPSIS, "give either --at TIME or --step N");

    gt_trace *t = open_trace(argv[res.first], 0);
    gt_mem_states *s = NULL;
    int status = 1;
    if (!t)
        goto cleanup;
    /* the memory part of the trace only, not a whole analysis */
    rc = have_at ? gt_memory_states_at(&s, t, pid, at_ns) : gt_memory_states_at_step(&s, t, pid, step);
    if (rc != 0) {
        gt_cli_error("memory %s: %s", argv[res.first], gt_error_last());
        goto cleanup;
    }
    if ((json ? gt_mem_states_print_json(s, stdout) : gt_mem_states_print_text(s, stdout)) != 0 ||
        fflush(stdout) != 0) {
        gt_cli_error("memory: cannot write the allocator state: %s", strerror(errno));
        goto cleanup;
    }
    status = 0;
cleanup:
    gt_mem_states_free(s);
    gt_trace_free(t);
    return status;
}

/* ---- gtrace export ------------------------------------------------------------- */

#define EXPORT_SYNOPSIS (gt_export_flag_table.synopsis)

/* ---- safe output files ----
 * A file is written beside its target (a temporary in the same folder),
 * flushed to disk, and renamed over the target only once complete: a failed
 * or interrupted export leaves the target as it was and no temporary behind
 * (SIGINT, SIGTERM and SIGHUP remove it too). A target that exists and is
 * not a regular file (/dev/stdout, a pipe, /dev/full) is written directly
 * and never removed or replaced. */

static char tmp_path[PATH_MAX];
static volatile sig_atomic_t tmp_live;

static void remove_tmp_and_die(int sig)
{
    if (tmp_live)
        unlink(tmp_path); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

typedef struct out_file {
    const char *path;      /* as the user gave it */
    char target[PATH_MAX]; /* what is renamed over: the path, or where its symbolic link points */
    FILE *f;
    bool direct;           /* an existing file that is not a regular one: written in place */
} out_file;

/* Checks `path` as a target by gt_outpath's rule, as a stream: a regular
 * file (or one a link names) replaced only with --force, a device or a
 * read FIFO written in place, never a folder or the trace read. */
static bool check_output(const char *path, bool force, const char *trace_path, out_file *o)
{
    gt_outpath p;
    memset(o, 0, sizeof *o);
    o->path = path;
    if (gt_outpath_check(&p, path, GT_OUTPATH_STREAM | (force ? GT_OUTPATH_FORCE : 0), &trace_path, 1) != 0) {
        gt_cli_error("export: %s", p.why);
        return false;
    }
    _Static_assert(sizeof o->target == sizeof p.target, "same size");
    memcpy(o->target, p.target, sizeof o->target);
    o->direct = p.how == GT_OUTPATH_IN_PLACE;
    return true;
}

/* Opens the output: the target itself when direct, else a temporary beside it. */
static bool open_output(out_file *o, const char *mode)
{
    if (o->direct) {
        if (!(o->f = fopen(o->target, mode)))
            gt_cli_error("export: cannot write %s: %s", o->path, strerror(errno));
        return o->f != NULL;
    }
    /* DIR/.NAME.XXXXXX: check_output left room for the 8 more bytes */
    const char *slash = strrchr(o->target, '/');
    size_t dir_n = slash ? (size_t)(slash - o->target) + 1 : 0, n = strlen(o->target);
    memcpy(tmp_path, o->target, dir_n);
    tmp_path[dir_n] = '.';
    memcpy(tmp_path + dir_n + 1, o->target + dir_n, n - dir_n);
    memcpy(tmp_path + n + 1, ".XXXXXX", 8);
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old); /* the temporary exists only where a signal removes it */
    int fd = mkstemp(tmp_path);
    if (fd >= 0)
        tmp_live = 1;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        gt_cli_error("export: cannot create a file beside %s: %s", o->path, strerror(errno));
        return false;
    }
    mode_t mask = umask(0);
    umask(mask);
    struct stat st;
    fchmod(fd, stat(o->target, &st) == 0 ? (st.st_mode & 07777) : (0666 & ~mask));
    if (!(o->f = fdopen(fd, mode))) {
        gt_cli_error("export: cannot write %s: %s", o->path, strerror(errno));
        close(fd);
        unlink(tmp_path);
        tmp_live = 0;
        return false;
    }
    return true;
}

/* Finishes the output: flushed, on disk, renamed over the target if `ok`;
 * otherwise the temporary goes. Returns whether the target now holds it all. */
static bool close_output(out_file *o, bool ok)
{
    int err = 0;
    if (fflush(o->f) != 0 || ferror(o->f))
        err = errno ? errno : EIO;
    if (!err && ok && !o->direct && fsync(fileno(o->f)) != 0)
        err = errno;
    if (fclose(o->f) != 0 && !err)
        err = errno ? errno : EIO;
    o->f = NULL;
    if (ok && err)
        gt_cli_error("export: cannot write %s: %s", o->path, strerror(err));
    ok = ok && !err;
    if (o->direct)
        return ok;
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    if (ok && rename(tmp_path, o->target) != 0) {
        gt_cli_error("export: cannot put %s in place: %s", o->path, strerror(errno));
        ok = false;
    }
    if (!ok)
        unlink(tmp_path);
    tmp_live = 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return ok;
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

/* OUT.pickle -> OUT.pid<P>.pickle (OUT -> OUT.pid<P>.pickle). */
static char *pid_output(const char *path, int64_t pid)
{
    size_t n = strlen(path);
    if (n > 7 && !strcmp(path + n - 7, ".pickle"))
        n -= 7;
    size_t cap = n + 40;
    char *out = malloc(cap);
    if (out)
        snprintf(out, cap, "%.*s.pid%lld.pickle", (int)n, path, (long long)pid);
    return out;
}

/* A memviz snapshot's moment and form. */
typedef struct memviz_opts {
    int64_t at_ns; /* INT64_MAX: the trace's end */
    int64_t step;  /* >= 0: the moment `gtrace memory --step N` shows, per process */
    bool v113;     /* PyTorch 1.13's list of segments */
} memviz_opts;

static const memviz_opts memviz_end = {INT64_MAX, -1, false};

/* The moment of process pid's snapshot (-1: the only process's). */
static int memviz_moment(gt_trace *t, int64_t pid, const memviz_opts *mo, int64_t *out_ns)
{
    *out_ns = mo->at_ns;
    if (mo->step < 0)
        return 0;
    gt_mem_states *ss = NULL;
    int rc = gt_memory_states_at_step(&ss, t, pid, mo->step);
    if (rc == 0 && ss->n > 0)
        *out_ns = ss->v[0]->at_ns;
    gt_mem_states_free(ss);
    return rc;
}

/* Writes one export to `path`: chrome of process pid (-1: all) as rank
 * `rank` of `world`, or memviz of process pid. */
static int export_one(gt_trace *t, const char *format, int64_t pid, int32_t rank, int32_t world, const memviz_opts *mo,
                      const char *trace_path, const out_file *checked)
{
    int64_t at_ns = INT64_MAX;
    if (!strcmp(format, "memviz") && memviz_moment(t, pid, mo, &at_ns) != 0) {
        gt_cli_error("export %s: %s", trace_path, gt_error_last());
        return 1;
    }
    out_file o = *checked;
    if (!open_output(&o, !strcmp(format, "memviz") ? "wb" : "w"))
        return 1;
    errno = 0;
    int rc = !strcmp(format, "chrome") ? gt_export_chrome_process(t, pid, rank, world, o.f)
                                       : gt_export_memviz_at(t, pid, at_ns, mo->v113, o.f);
    int err = errno;
    if (rc != 0 && ferror(o.f)) /* the output refused the bytes: say why, in one line */
        gt_cli_error("export: cannot write %s: %s", o.path, strerror(err ? err : EIO));
    else if (rc != 0)
        gt_cli_error("export %s: %s", trace_path, gt_error_last());
    if (!close_output(&o, rc == 0) || rc != 0)
        return 1;
    fprintf(stderr, "gtrace: wrote %s\n", o.path);
    return 0;
}

/* Whether an output names a folder: it ends in '/' or is one. */
static bool is_folder(const char *path)
{
    struct stat st;
    size_t n = strlen(path);
    return (n > 0 && path[n - 1] == '/') || (stat(path, &st) == 0 && S_ISDIR(st.st_mode));
}

/* Chrome, one file per rank as PyTorch's tensorboard_trace_handler writes
 * them (DIR/<host>_<pid>.<ms>.pt.trace.json), for HTA's folder of ranks; or
 * (pid >= 0) process pid alone, into the file or folder `path`. */
static int export_ranks(gt_trace *t, const char *path, int64_t pid, bool force, const char *trace_path)
{
    gt_chrome_rank *ranks = NULL;
    size_t n = 0;
    char host[256] = "localhost", *file = NULL;
    int64_t start_ns = 0;
    int status = 1;
    bool folder = is_folder(path);
    struct sigaction rm = {.sa_handler = remove_tmp_and_die}, old_int, old_term, old_hup;
    if (gt_export_chrome_ranks(&ranks, &n, t) != 0) {
        gt_cli_error("export %s: %s", trace_path, gt_error_last());
        return 1;
    }
    size_t first = 0, last = n;
    if (pid >= 0) {
        while (first < n && ranks[first].pid != pid)
            first++;
        if (first == n) {
            gt_cli_error("export %s: process %lld has no events to export (%zu processes have)", trace_path,
                         (long long)pid, n);
            goto cleanup;
        }
        last = first + 1;
    } else if (n == 0) {
        gt_cli_error("export %s: no process has events to export", trace_path);
        goto cleanup;
    }
    if (folder && mkdir(path, 0777) != 0 && errno != EEXIST) {
        gt_cli_error("export: cannot create the folder %s: %s", path, strerror(errno));
        goto cleanup;
    }
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    for (char *c = host; *c; c++)
        if (*c == '/' || *c == '_')
            *c = '-'; /* the name splits at '_' into host and pid */
    if (gt_trace_session_start(t, &start_ns) != 0)
        start_ns = 0;
    sigemptyset(&rm.sa_mask);
    sigaction(SIGINT, &rm, &old_int);
    sigaction(SIGTERM, &rm, &old_term);
    sigaction(SIGHUP, &rm, &old_hup);
    status = 0;
    for (size_t i = first; i < last && status == 0; i++) {
        size_t cap = strlen(path) + strlen(host) + 80;
        free(file);
        if (!(file = malloc(cap))) {
            gt_cli_error("export: out of memory");
            status = 1;
            break;
        }
        size_t len = strlen(path);
        if (folder)
            snprintf(file, cap, "%s%s%s_%lld.%lld.pt.trace.json", path, path[len - 1] == '/' ? "" : "/", host,
                     (long long)ranks[i].pid, (long long)(start_ns / 1000000));
        else
            snprintf(file, cap, "%s", path);
        out_file o;
        if (!check_output(file, force, trace_path, &o)) {
            status = 1;
            break;
        }
        status = export_one(t, "chrome", ranks[i].pid, ranks[i].rank, (int32_t)n, &memviz_end, trace_path, &o);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
cleanup:
    free(file);
    free(ranks);
    return status;
}

int gt_cli_export(int argc, char **argv)
{
    gt_analyze_flags f = no_flags;
    gt_flags_result res;
    int rc = parse_flags(&gt_export_flag_table, argc, argv, &f, &res);
    if (rc >= 0)
        return rc;
    const char *format = f.format, *output = f.output;
    bool force = f.force, have_at = f.at_ns >= 0;
    memviz_opts mo = memviz_end;
    if (have_at)
        mo.at_ns = f.at_ns;
    mo.step = f.step;
    mo.v113 = f.memviz_format && !strcmp(f.memviz_format, "1.13");
    int64_t pid = f.pid;
    if (res.n != 1)
        return usage("export", EXPORT_SYNOPSIS, res.n < 1 ? "which trace?" : "one trace at a time");
    if (!format)
        return usage("export", EXPORT_SYNOPSIS, "--format is required");
    static const char *const exts[] = {".json", ".pickle", "-csv"}; /* in the order of --format's choices */
    const gt_flag *format_flag = gt_flags_find(&gt_export_flag_table, "format");
    int format_i = gt_flag_pick(format_flag, format);
    if (format_i < 0) {
        char choices[64], problem[96];
        snprintf(problem, sizeof problem, "--format wants %s",
                 gt_flag_choices_text(format_flag, choices, sizeof choices));
        return usage("export", EXPORT_SYNOPSIS, problem);
    }
    const char *ext = exts[format_i];
    if (pid >= 0 && !strcmp(format, "csv"))
        return usage("export", EXPORT_SYNOPSIS, "--pid is for --format chrome or memviz");
    if ((have_at || mo.step >= 0 || mo.v113) && strcmp(format, "memviz") != 0)
        return usage("export", EXPORT_SYNOPSIS, "--at, --step and --memviz-format are for --format memviz");
    if (have_at && mo.step >= 0)
        return usage("export", EXPORT_SYNOPSIS, "give --at TIME or --step N, not both");

    const char *trace_path = argv[res.first];
    char *owned = output ? NULL : default_output(trace_path, ext);
    const char *path = output ? output : owned;
    gt_trace *t = NULL;
    int64_t *pids = NULL;
    size_t n_pids = 0;
    char **paths = NULL;
    out_file *outs = NULL;
    size_t n_out = 1;
    bool known = pid < 0;
    struct sigaction rm = {.sa_handler = remove_tmp_and_die}, old_int, old_term, old_hup;
    int status = 1;
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
        if (gt_export_csv(t, path) != 0) {
            gt_cli_error("export %s: %s", trace_path, gt_error_last());
            goto cleanup;
        }
        fprintf(stderr, "gtrace: wrote %s\n", path);
        status = 0;
        goto cleanup;
    }
    if (!strcmp(format, "chrome") && (pid >= 0 || is_folder(path))) {
        status = export_ranks(t, path, pid, force, trace_path);
        goto cleanup;
    }
    sigemptyset(&rm.sa_mask);
    sigaction(SIGINT, &rm, &old_int);
    sigaction(SIGTERM, &rm, &old_term);
    sigaction(SIGHUP, &rm, &old_hup);
    /* memviz: a snapshot per process, as PyTorch writes one per rank */
    if (!strcmp(format, "memviz")) {
        if (gt_memory_pids(&pids, &n_pids, t) != 0) {
            gt_cli_error("export %s: %s", trace_path, gt_error_last());
            goto restore;
        }
        for (size_t i = 0; i < n_pids && !known; i++)
            known = pids[i] == pid;
        if (!known) {
            gt_cli_error("export %s: process %lld has no allocation events (%zu processes have)", trace_path,
                         (long long)pid, n_pids);
            goto restore;
        }
        if (pid < 0 && n_pids > 1)
            n_out = n_pids;
    }
    paths = calloc(n_out, sizeof *paths);
    outs = calloc(n_out, sizeof *outs);
    if (!paths || !outs) {
        gt_cli_error("export: out of memory");
        goto restore;
    }
    if (n_out > 1) { /* a stream or a device takes one snapshot: no files are made beside it */
        struct stat st;
        if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode) &&
            (!S_ISREG(st.st_mode) || !strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6))) {
            gt_cli_error("export %s: %zu processes have allocation events, one snapshot each: choose one with "
                         "--pid for %s", trace_path, n_out, path);
            goto restore;
        }
    }
    for (size_t i = 0; i < n_out; i++) {
        if (n_out > 1 && !(paths[i] = pid_output(path, pids[i]))) {
            gt_cli_error("export: out of memory");
            goto restore;
        }
        if (!check_output(n_out > 1 ? paths[i] : path, force, trace_path, &outs[i]))
            goto restore;
        if (n_out > 1 && outs[i].direct) {
            gt_cli_error("export %s: %zu processes have allocation events, one snapshot each: choose one with "
                         "--pid for %s", trace_path, n_out, paths[i]);
            goto restore;
        }
    }
    status = 0;
    for (size_t i = 0; i < n_out && status == 0; i++)
        status = export_one(t, format, n_out > 1 ? pids[i] : pid, 0, 1, &mo, trace_path, &outs[i]);
restore:
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
cleanup:
    for (size_t i = 0; paths && i < n_out; i++)
        free(paths[i]);
    free(paths);
    free(outs);
    free(pids);
    gt_trace_free(t);
    free(owned);
    return status;
}
