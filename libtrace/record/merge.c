/* merge.c: the engine of `gtrace merge` (gt_record_merge): traces taken
 * apart, one per rank or node (`mpirun -np 4 gtrace -o trace.%r.sqlite
 * PROGRAM`), made into one trace on one clock. The CLI (cli/merge_cmd.c)
 * parses the command line, checks the output and prints the summary.
 *
 * The clock. A trace's times are nanoseconds of its own host's monotonic
 * clock from its zero. It holds the wall clock at its zero (its start
 * time, utc0) and, written by the launcher when the program ended, the
 * pair (trace time T, wall clock utc0 + W) (GT_RECORD_CLOCK_END_KEY). The hosts'
 * wall clocks are the common reference (NTP keeps them together); between
 * the two pairs a part's clock runs at its own rate r = W / T against it:
 *     wall_p(t) = utc0_p + t * r_p
 * Every part goes onto the first part's clock (the first named), and the
 * merged trace's zero is the earliest part's zero, utc0_min:
 *     t' = (utc0_p - utc0_min + t * r_p) / r_1
 * so the first part keeps its own clock, shifted, and the merged trace
 * starts at utc0_min. A part without the end pair (written by an older
 * gtrace) or with a damaged one (not numbers, out of range, ending before
 * it starts), or whose clocks moved apart by more than MAX_DRIFT (the wall
 * clock was stepped during the run), has its offset corrected, not its
 * drift (r = 1), and merge says so.
 *
 * Processes keep distinct ids: a pid an earlier part has is given a free one
 * (from 0xffffff down, where no real pid is) and merge says so in one line.
 * So do GPUs: one an earlier part has (the same UUID) keeps that part's id;
 * another that an earlier part's GPU id names (another UUID: another node)
 * gets an id no part uses, and merge says so. GPUs without a UUID are told
 * apart by id only.
 * Each part's run entries are kept under "part.N." (N from 1, in the order
 * given), with its file and the correction made (part.N.offset_ns,
 * part.N.drift_ppb); its processes keep theirs (ranks included), and its
 * drop counts go to its first process.
 *
 * The merged trace lists every original trace it holds, at any depth, as
 * "origin.K" (its zero and its processes' pids), so a part that is already
 * in another merged part is found and refused: its events would be there
 * twice.
 *
 * Bad input (no part, a part that is not a trace or has no start time,
 * one given twice or already inside another part, an output that may not
 * be written by files.c's rule) gets one line and exit 1 before anything
 * is written; the trace
 * is written in a fresh directory beside the output and renamed into place
 * only when whole (gt_record_install).
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record_int.h"
#include "trace_copy.h"

#define MAX_DRIFT 1e-3L              /* 1000 ppm: more is a clock step, not a drift */
#define MAX_SPREAD_NS ((int64_t)1 << 52) /* parts further apart are not one run */
#define MERGED_NAME "merged.sqlite"

typedef struct part {
    const char *path;
    gt_trace *t;
    struct stat st;
    int64_t utc0_ns;
    int64_t end_ns, utc_end_ns; /* the end-of-run pair; end_ns 0: none */
    bool no_clock_end;          /* none, or damaged: offset only */
    char *damaged_clock;        /* the damaged pair as found, for the note (else NULL) */
    char **origins;             /* the original traces it holds ("UTC0:PID,PID..."), one unless merged */
    size_t n_origins;
    bool merged;                /* a merged trace: its origins are its entries */
    int64_t step_ns;            /* not 0: its clocks moved this far apart (a clock step): offset only */
    long double rate;           /* r: wall-clock ns per ns of this trace; 1: offset only */
    int64_t *own_pids;          /* pids of its processes and threads */
    size_t n_own;
    int64_t (*pids)[2];         /* (own pid, pid in the merged trace), for those that moved */
    size_t n_pids;
    int32_t (*devices)[2];      /* (own GPU id, id in the merged trace), for those that moved */
    bool *device_known;         /* (n_devices) moved to an earlier part's GPU of its UUID */
    size_t n_devices;
    gt_copy_map map;
} part;

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list ap;
    char *msg = NULL;
    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) >= 0)
        gt_record_error("merge: %s", msg);
    va_end(ap);
    free(msg);
    return 1;
}

static bool parse_ns(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = s ? strtoll(s, &end, 10) : 0;
    if (!s || errno || end == s || *end)
        return false;
    *out = v;
    return true;
}

static bool has_pid(const int64_t *v, size_t n, int64_t pid)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == pid)
            return true;
    return false;
}

/* The pids a trace uses: its processes' and its threads'. */
static int collect_pids(part *p)
{
    size_t n_proc, n_thr;
    const gt_process *procs = gt_trace_processes(p->t, &n_proc);
    const gt_thread *threads = gt_trace_threads(p->t, &n_thr);
    p->own_pids = malloc((n_proc + n_thr + 1) * sizeof *p->own_pids);
    if (!p->own_pids)
        return fail("out of memory");
    for (size_t i = 0; i < n_proc; i++)
        if (!has_pid(p->own_pids, p->n_own, procs[i].pid))
            p->own_pids[p->n_own++] = procs[i].pid;
    for (size_t i = 0; i < n_thr; i++)
        if (!has_pid(p->own_pids, p->n_own, gt_pid_of(threads[i].global_tid)))
            p->own_pids[p->n_own++] = gt_pid_of(threads[i].global_tid);
    return 0;
}

/* The identity of one original trace, as check_distinct compares them:
 * its zero to the nanosecond and its processes ("UTC0:PID,PID,..."). */
static char *origin_of(const part *p)
{
    size_t cap = 32 + p->n_own * 21, n;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    n = (size_t)snprintf(s, cap, "%lld:", (long long)p->utc0_ns);
    for (size_t i = 0; i < p->n_own; i++)
        n += (size_t)snprintf(s + n, cap - n, "%s%lld", i ? "," : "", (long long)p->own_pids[i]);
    return s;
}

/* The original traces a part holds: a merged trace's entries "origin.K"
 * (every trace merged into it, at any depth), else (a trace of one run, or
 * one merged before origins were kept) itself. */
static int read_origins(part *p)
{
    size_t n = 0;
    char key[32];
    for (;; n++) {
        snprintf(key, sizeof key, "origin.%zu", n + 1);
        if (!gt_trace_meta(p->t, key))
            break;
    }
    p->merged = n > 0;
    p->origins = calloc(n ? n : 1, sizeof *p->origins);
    if (!p->origins)
        return fail("out of memory");
    for (size_t i = 0; i < n; i++) {
        snprintf(key, sizeof key, "origin.%zu", i + 1);
        if (!(p->origins[p->n_origins++] = strdup(gt_trace_meta(p->t, key))))
            return fail("out of memory");
    }
    if (n == 0 && !(p->origins[p->n_origins++] = origin_of(p)))
        return fail("out of memory");
    return 0;
}

/* Opens a part and reads its clock: start time and end-of-run pair. */
static int open_part(part *p)
{
    if (stat(p->path, &p->st) != 0)
        return fail("%s: %s", p->path, strerror(errno));
    if (!S_ISREG(p->st.st_mode))
        return fail("%s: not a trace (%s)", p->path, S_ISDIR(p->st.st_mode) ? "a directory" : "not a regular file");
    if (gt_trace_open(&p->t, p->path, 0) != 0)
        return fail("%s", gt_error_last());
    if (gt_trace_session_start(p->t, &p->utc0_ns) != 0)
        return fail("%s: the trace holds no start time (the wall-clock time at its zero): it cannot be put on "
                    "a common clock", p->path);
    p->rate = 1;
    const char *end = gt_trace_meta(p->t, GT_RECORD_CLOCK_END_KEY), *utc_end = gt_trace_meta(p->t, GT_RECORD_CLOCK_END_UTC_KEY);
    if (!end && !utc_end) {
        p->no_clock_end = true;
    } else if (!parse_ns(end, &p->end_ns) || !parse_ns(utc_end, &p->utc_end_ns) || p->end_ns <= 0 ||
               p->utc_end_ns <= p->utc0_ns) {
        /* as good as none: the offset is still known from the start pair */
        p->no_clock_end = true;
        p->end_ns = p->utc_end_ns = 0;
        size_t cap = 96 + (end ? strlen(end) : 6) + (utc_end ? strlen(utc_end) : 6);
        if (!(p->damaged_clock = malloc(cap)))
            return fail("out of memory");
        snprintf(p->damaged_clock, cap, "%s=%.40s, %s=%.40s", GT_RECORD_CLOCK_END_KEY, end ? end : "(none)",
                 GT_RECORD_CLOCK_END_UTC_KEY, utc_end ? utc_end : "(none)");
    } else {
        long double rate = (long double)(p->utc_end_ns - p->utc0_ns) / (long double)p->end_ns;
        if (fabsl(rate - 1) > MAX_DRIFT) {
            p->step_ns = p->utc_end_ns - p->utc0_ns - p->end_ns;
            p->end_ns = 0;
        } else {
            p->rate = rate;
        }
    }
    int rc = collect_pids(p);
    if (rc == 0)
        qsort(p->own_pids, p->n_own, sizeof *p->own_pids, gt_cmp_i64);
    return rc == 0 ? read_origins(p) : rc;
}

/* The first original trace both parts hold, or NULL. */
static const char *shared_origin(const part *a, const part *b)
{
    for (size_t i = 0; i < a->n_origins; i++)
        for (size_t k = 0; k < b->n_origins; k++)
            if (!strcmp(a->origins[i], b->origins[k]))
                return a->origins[i];
    return NULL;
}

/* Whether every original trace of `a` is in `b`. */
static bool holds_all(const part *b, const part *a)
{
    for (size_t i = 0; i < a->n_origins; i++) {
        bool found = false;
        for (size_t k = 0; k < b->n_origins && !found; k++)
            found = !strcmp(a->origins[i], b->origins[k]);
        if (!found)
            return false;
    }
    return true;
}

/* Two names of one file, two copies of one trace (same zero to the
 * nanosecond, same processes), or a trace merged into another part
 * already: its events would be in the merged trace twice. */
static int check_distinct(const part *parts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++) {
            const part *a = &parts[j], *b = &parts[i];
            if (a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino)
                return fail("%s and %s are the same file: each part is given once", a->path, b->path);
            const char *same = shared_origin(a, b);
            if (!same)
                continue;
            if (!a->merged && !b->merged)
                return fail("%s and %s are copies of one trace (same start, same processes): each part is "
                            "given once", a->path, b->path);
            if (holds_all(a, b) || holds_all(b, a)) {
                bool b_in_a = holds_all(a, b) && a->merged;
                return fail("%s is already in %s (merged into it before): each part is merged once",
                            b_in_a ? b->path : a->path, b_in_a ? a->path : b->path);
            }
            return fail("%s and %s were both merged from one trace (started at %.*s ns since the epoch): each "
                        "part is merged once", a->path, b->path, (int)strcspn(same, ":"), same);
        }
    return 0;
}

/* Where each part's times go (see the top of the file). */
static int place_parts(part *parts, size_t n)
{
    int64_t utc0_min = parts[0].utc0_ns;
    for (size_t i = 1; i < n; i++)
        if (parts[i].utc0_ns < utc0_min)
            utc0_min = parts[i].utc0_ns;
    for (size_t i = 0; i < n; i++) {
        part *p = &parts[i];
        int64_t after = p->utc0_ns - utc0_min;
        if (after > MAX_SPREAD_NS || after < 0)
            return fail("%s starts %.1f days after another part: they are not parts of one run", p->path,
                        (double)after / 86400e9);
        p->map.offset_ns = (long double)after / parts[0].rate;
        p->map.scale = p->rate / parts[0].rate;
    }
    return 0;
}

/* A pid an earlier part has moves to a free one, from the top down. */
static int give_pids(part *parts, size_t n)
{
    int64_t next = 0xffffff;
    for (size_t i = 1; i < n; i++) {
        part *p = &parts[i];
        p->pids = malloc((p->n_own + 1) * sizeof *p->pids);
        if (!p->pids)
            return fail("out of memory");
        for (size_t k = 0; k < p->n_own; k++) {
            int64_t pid = p->own_pids[k];
            bool taken = false;
            for (size_t j = 0; j < i && !taken; j++)
                taken = has_pid(parts[j].own_pids, parts[j].n_own, pid);
            if (!taken)
                continue;
            bool used = true;
            while (used && next > 0) {
                used = false;
                for (size_t j = 0; j < n && !used; j++)
                    used = has_pid(parts[j].own_pids, parts[j].n_own, next);
                if (used)
                    next--;
            }
            if (next <= 0)
                return fail("%s: no free process id left for pid %lld", p->path, (long long)pid);
            p->pids[p->n_pids][0] = pid;
            p->pids[p->n_pids][1] = next--;
            p->n_pids++;
            p->map.pids = (const int64_t(*)[2])p->pids;
            p->map.n_pids = p->n_pids;
        }
    }
    return 0;
}

static bool has_uuid(const gt_gpu_info *g) { return g->uuid && *g->uuid; }

/* The id in the merged trace of a GPU of part j (its own unless it moved). */
static int32_t merged_device(const part *p, int32_t id)
{
    for (size_t i = 0; i < p->n_devices; i++)
        if (p->devices[i][0] == id)
            return p->devices[i][1];
    return id;
}

/* Where each part's GPUs go (see the top of the file). */
static int give_devices(part *parts, size_t n)
{
    int32_t next = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k;
        const gt_gpu_info *g = gt_trace_gpus(parts[i].t, &k);
        for (size_t q = 0; q < k; q++)
            if (g[q].id >= next)
                next = g[q].id + 1;
    }
    for (size_t i = 1; i < n; i++) {
        part *p = &parts[i];
        size_t n_gpus;
        const gt_gpu_info *gpus = gt_trace_gpus(p->t, &n_gpus);
        p->devices = malloc((n_gpus + 1) * sizeof *p->devices);
        p->device_known = malloc((n_gpus + 1) * sizeof *p->device_known);
        if (!p->devices || !p->device_known)
            return fail("out of memory");
        for (size_t q = 0; q < n_gpus; q++) {
            const gt_gpu_info *g = &gpus[q];
            int32_t to = g->id;
            bool same = false, taken = false;
            for (size_t j = 0; j < i && !same; j++) {
                size_t m;
                const gt_gpu_info *e = gt_trace_gpus(parts[j].t, &m);
                for (size_t r = 0; r < m && !same; r++) {
                    int32_t id = merged_device(&parts[j], e[r].id);
                    if (has_uuid(g) && has_uuid(&e[r]) && !strcmp(g->uuid, e[r].uuid)) {
                        same = true;
                        to = id;
                    } else if (id == g->id && has_uuid(g) && has_uuid(&e[r])) {
                        taken = true;
                    }
                }
            }
            if (!same && taken)
                to = next++;
            if (to != g->id) {
                p->devices[p->n_devices][0] = g->id;
                p->devices[p->n_devices][1] = to;
                p->device_known[p->n_devices] = same;
                p->n_devices++;
            }
        }
        p->map.devices = (const int32_t(*)[2])p->devices;
        p->map.n_devices = p->n_devices;
    }
    return 0;
}

static int add_entry(gt_writer *w, const char *fmt_key, size_t part_no, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int add_entry(gt_writer *w, const char *fmt_key, size_t part_no, const char *fmt, ...)
{
    char key[64], value[PATH_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    snprintf(key, sizeof key, fmt_key, part_no);
    return gt_writer_add_config(w, 0, key, value);
}

/* The merged trace's own run entries and each part's correction. */
static int write_run_entries(gt_writer *w, const part *parts, size_t n)
{
    int64_t utc0_min = parts[0].utc0_ns;
    for (size_t i = 1; i < n; i++)
        if (parts[i].utc0_ns < utc0_min)
            utc0_min = parts[i].utc0_ns;
    int rc = gt_writer_set_session_start(w, utc0_min);
    if (rc == 0)
        rc = add_entry(w, "merged_parts", 0, "%zu", n);
    /* The first part's end-of-run pair, on the merged clock: what merges this trace again. */
    if (rc == 0 && parts[0].end_ns > 0)
        rc = add_entry(w, GT_RECORD_CLOCK_END_KEY, 0, "%lld",
                       (long long)llroundl(parts[0].map.offset_ns + (long double)parts[0].end_ns));
    if (rc == 0 && parts[0].end_ns > 0)
        rc = add_entry(w, GT_RECORD_CLOCK_END_UTC_KEY, 0, "%lld", (long long)parts[0].utc_end_ns);
    size_t k = 0; /* every original trace, so a later merge knows what this one holds */
    for (size_t i = 0; i < n && rc == 0; i++)
        for (size_t o = 0; o < parts[i].n_origins && rc == 0; o++) {
            char key[32];
            snprintf(key, sizeof key, "origin.%zu", ++k);
            rc = gt_writer_add_config(w, 0, key, parts[i].origins[o]);
        }
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = add_entry(w, "part.%zu.file", i + 1, "%s", parts[i].path);
        if (rc == 0)
            rc = add_entry(w, "part.%zu.offset_ns", i + 1, "%lld", (long long)llroundl(parts[i].map.offset_ns));
        if (rc == 0 && parts[i].end_ns > 0)
            rc = add_entry(w, "part.%zu.drift_ppb", i + 1, "%lld", (long long)llroundl((parts[i].rate - 1) * 1e9L));
    }
    return rc;
}

static void on_signal(int sig)
{
    gt_record_stop_signal = sig;
}

/* Writes the merged trace at `tmp`; prints what went in. */
static int write_merged(const char *tmp, part *parts, size_t n, int64_t *out_events)
{
    gt_copy *c = NULL;
    int rc = gt_copy_new(&c, tmp);
    if (rc != 0)
        return rc;
    rc = write_run_entries(gt_copy_writer(c), parts, n);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "part.%zu.", i + 1);
        parts[i].map.run_prefix = prefix;
        rc = gt_copy_trace(c, parts[i].t, &parts[i].map, NULL);
        parts[i].map.run_prefix = NULL;
    }
    *out_events = 0;
    for (int k = 0; k < GT_EV_N_KINDS; k++)
        *out_events += gt_writer_count(gt_copy_writer(c), (gt_event_kind)k);
    if (rc == 0)
        return gt_copy_finish(c);
    gt_copy_free(c);
    return rc;
}

/* What merge did that its user should know: one line each, said. */
static void print_notes(const part *parts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const part *p = &parts[i];
        if (p->damaged_clock)
            gt_record_say("gtrace: merge: %s holds no end-of-run clock it can use (damaged: %s): its clock "
                    "offset is corrected, not its drift\n", p->path, p->damaged_clock);
        else if (p->no_clock_end)
            gt_record_say("gtrace: merge: %s holds no end-of-run clock (an older gtrace wrote it): its clock "
                    "offset is corrected, not its drift\n", p->path);
        if (p->step_ns)
            gt_record_say("gtrace: merge: %s: its wall clock moved %.3f ms against its own clock during the run "
                    "(a clock step?): its offset is corrected, not its drift\n", p->path, (double)p->step_ns / 1e6);
        for (size_t k = 0; k < p->n_pids; k++)
            gt_record_say("gtrace: merge: %s: pid %lld is also in an earlier part; it is pid %lld in the merged "
                    "trace\n", p->path, (long long)p->pids[k][0], (long long)p->pids[k][1]);
        for (size_t k = 0; k < p->n_devices; k++)
            gt_record_say("gtrace: merge: %s: its GPU %d is GPU %d in the merged trace (%s)\n", p->path,
                    (int)p->devices[k][0], (int)p->devices[k][1],
                    p->device_known[k] ? "an earlier part's, by its UUID"
                                       : "another GPU than the one an earlier part calls so, by its UUID");
    }
}

/* What went in, for the caller's summary. */
static int describe_parts(gt_record_merge_result *out, const part *parts, size_t n)
{
    out->parts = calloc(n, sizeof *out->parts);
    if (!out->parts)
        return fail("out of memory");
    out->n_parts = n;
    for (size_t i = 0; i < n; i++) {
        gt_record_merge_part *d = &out->parts[i];
        d->path = parts[i].path;
        d->offset_ns = llroundl(parts[i].map.offset_ns);
        d->has_drift = parts[i].end_ns > 0;
        d->rate = parts[i].rate;
        gt_trace_processes(parts[i].t, &d->n_processes);
    }
    return 0;
}

static int merge(gt_record_merge_result *out, part *parts, size_t n, const char *output, bool force)
{
    int status = 1;
    char dir[PATH_MAX + 32], tmp[PATH_MAX + 64], copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", output);
    snprintf(dir, sizeof dir, "%s/.gtrace-merge-XXXXXX", dirname(copy));
    if (!mkdtemp(dir))
        return fail("cannot write %s: %s", output, strerror(errno));
    snprintf(tmp, sizeof tmp, "%s/%s", dir, MERGED_NAME);
    struct sigaction stop = {.sa_handler = on_signal}, old[3];
    sigemptyset(&stop.sa_mask);
    const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &stop, &old[i]);
    int64_t n_events = 0;
    int rc = write_merged(tmp, parts, n, &n_events);
    if (rc == 0 && gt_record_stop_signal)
        rc = gt_error_set(GT_ERR_IO, "interrupted by signal %d", (int)gt_record_stop_signal);
    if (rc == 0)
        rc = gt_record_install(tmp, output, force);
    if (rc != 0)
        fail("no trace written: %s", gt_error_last());
    gt_record_remove_trace(tmp);
    rmdir(dir);
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &old[i], NULL);
    if (gt_record_stop_signal) {
        out->stop_signal = gt_record_stop_signal;
        return 128 + gt_record_stop_signal;
    }
    if (rc == 0) {
        print_notes(parts, n);
        out->n_events = n_events;
        status = describe_parts(out, parts, n);
    }
    return status;
}

int gt_record_merge(gt_record_merge_result *out, const char *const *paths, size_t n, const char *output,
                    bool force)
{
    memset(out, 0, sizeof *out);
    part *parts = calloc(n, sizeof *parts);
    if (!parts)
        return fail("out of memory");
    int status = 0;
    for (size_t i = 0; i < n && status == 0; i++) {
        parts[i].path = paths[i];
        status = open_part(&parts[i]);
    }
    if (status == 0)
        status = check_distinct(parts, n);
    if (status == 0)
        status = place_parts(parts, n);
    if (status == 0)
        status = give_pids(parts, n);
    if (status == 0)
        status = give_devices(parts, n);
    if (status == 0)
        status = merge(out, parts, n, output, force);
    for (size_t i = 0; i < n; i++) {
        gt_trace_free(parts[i].t);
        free(parts[i].own_pids);
        free(parts[i].pids);
        free(parts[i].devices);
        free(parts[i].device_known);
        free(parts[i].damaged_clock);
        for (size_t k = 0; k < parts[i].n_origins; k++)
            free(parts[i].origins[k]);
        free(parts[i].origins);
    }
    free(parts);
    return status;
}

void gt_record_merge_result_free(gt_record_merge_result *r)
{
    if (!r)
        return;
    free(r->parts);
    r->parts = NULL;
    r->n_parts = 0;
}
