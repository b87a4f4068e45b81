/* snapshots.c: CUDA memory snapshots that `gtrace --pytorch` leaves in the
 * parts folder, made parts of the trace before assembly (libtrace/import's
 * gt_import_snapshot_part), and those that are not kept beside it. Here
 * because only the launcher knows the run's monotonic zero that a
 * process's clock pair is read against. */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt_import.h"
#include "record_int.h"

/* CUDA memory snapshots the Python package left in the parts folder
 * (gtrace_torch/memory.py: pytorch-PID[-oom].pickle, beside pytorch-PID.clock:
 * "realtime_ns monotonic_ns" read together at its start) go into the trace as
 * that process's memory events and stacks: each becomes one more part,
 * pytorch-PID.sqlite, which assembly copies like any other. Its actions
 * (time_us, on the wall clock) are put on the trace's clock through the
 * process's own clock pair, else through the run's start. The snapshot at
 * exit holds the history up to the end; the one taken at an out-of-memory
 * error goes in only when there is none (a process killed after it), else it
 * is kept beside the trace for gtrace import. A snapshot that cannot be read
 * is kept beside the trace, said in one line, and makes the run incomplete. */
typedef struct snap_result {
    char name[NAME_MAX + 1]; /* its file name in the parts folder */
    char why[1024];   /* the reason it is not in the trace; "" when it is */
    gt_import_stats st;
} snap_result;

struct gt_record_snapshots { snap_result *v; size_t n; };
typedef gt_record_snapshots snap_results;

/* The pid of pytorch-PID.pickle (oom false) or pytorch-PID-oom.pickle (true); 0: neither. */
static long long snapshot_pid(const char *name, bool oom)
{
    long long pid = 0;
    int end = 0;
    if (sscanf(name, oom ? "pytorch-%lld-oom.pickle%n" : "pytorch-%lld.pickle%n", &pid, &end) != 1 ||
        name[end] != '\0' || pid <= 0 || pid > 0xffffff)
        return 0;
    return pid;
}

/* The wall-clock time at the trace's zero (monotonic t0_ns) as process pid saw it. */
static int64_t wall_zero_of(const char *parts, long long pid, int64_t t0_ns, int64_t utc_t0_ns)
{
    char path[PATH_MAX * 2];
    long long wall = 0, mono = 0;
    snprintf(path, sizeof path, "%s/pytorch-%lld.clock", parts, pid);
    FILE *f = fopen(path, "r");
    int n = f ? fscanf(f, "%lld %lld", &wall, &mono) : 0;
    if (f)
        fclose(f);
    return n == 2 && wall > 0 && mono > 0 ? (int64_t)(wall - mono) + t0_ns : utc_t0_ns;
}

gt_record_snapshots *gt_record_import_snapshots(const char *parts, int64_t t0_ns, int64_t utc_t0_ns)
{
    return gt_record_import_snapshots_into(parts, NULL, t0_ns, utc_t0_ns);
}

gt_record_snapshots *gt_record_import_snapshots_into(const char *parts, const char *into, int64_t t0_ns,
                                                     int64_t utc_t0_ns)
{
    snap_results *out = calloc(1, sizeof *out);
    if (!out)
        return NULL;
    DIR *d = opendir(parts);
    struct dirent *e;
    while (d && !gt_record_stop_signal && (e = readdir(d))) { /* interrupted: no trace is written */
        long long pid = snapshot_pid(e->d_name, false);
        char pickle[PATH_MAX * 2], part[PATH_MAX * 2];
        if (!pid && (pid = snapshot_pid(e->d_name, true))) {
            bool at_exit = false; /* the snapshot at exit goes in, or went in already */
            snprintf(pickle, sizeof pickle, "%s/pytorch-%lld.pickle", parts, pid);
            for (size_t i = 0; i < out->n && !at_exit; i++)
                at_exit = !strcmp(out->v[i].name, strrchr(pickle, '/') + 1);
            if (at_exit || access(pickle, F_OK) == 0)
                continue;
        }
        snap_result *r = pid ? realloc(out->v, (out->n + 1) * sizeof *out->v) : NULL;
        if (!r)
            continue; /* not a snapshot; or out of memory: kept beside the trace */
        out->v = r;
        r = &out->v[out->n++];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%s", e->d_name);
        snprintf(pickle, sizeof pickle, "%s/%s", parts, e->d_name);
        snprintf(part, sizeof part, "%s/pytorch-%lld.sqlite", into ? into : parts, pid);
        if (gt_import_snapshot_part(&r->st, part, pickle, pid, wall_zero_of(parts, pid, t0_ns, utc_t0_ns)) == 0) {
            if (!into) /* elsewhere, the pickle goes once that trace is written (gt_record_snapshots_taken) */
                unlink(pickle);
            continue;
        }
        /* the message names the file by its place in the parts folder, which goes */
        const char *why = gt_error_last();
        if (!strncmp(why, pickle, strlen(pickle)) && !strncmp(why + strlen(pickle), ": ", 2))
            why += strlen(pickle) + 2;
        snprintf(r->why, sizeof r->why, "%s", why);
    }
    if (d)
        closedir(d);
    return out;
}

/* Says what became of each snapshot, and moves those that are not in the
 * trace beside it as TRACE.NAME. True when one could not be read. */
bool gt_record_keep_snapshots(const char *parts, const char *output, const snap_results *res)
{
    static const snap_results none = {NULL, 0};
    if (!res)
        res = &none;
    bool failed = false;
    for (size_t i = 0; i < res->n; i++)
        if (!res->v[i].why[0])
            gt_record_say("  CUDA memory     process %lld: %lld segments, %lld blocks, %lld actions\n",
                    (long long)res->v[i].st.pid, (long long)res->v[i].st.n_segments,
                    (long long)res->v[i].st.n_blocks, (long long)res->v[i].st.n_actions);
    DIR *d = opendir(parts);
    if (!d)
        return false;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "pytorch-", 8) != 0)
            continue;
        char from[PATH_MAX * 2], to[PATH_MAX * 2];
        snprintf(from, sizeof from, "%s/%s", parts, e->d_name);
        if (len <= 7 || strcmp(e->d_name + len - 7, ".pickle") != 0) {
            unlink(from); /* the .clock, or a .tmp left by a process that died while writing */
            continue;
        }
        const snap_result *r = NULL;
        for (size_t i = 0; i < res->n && !r; i++)
            if (!strcmp(res->v[i].name, e->d_name))
                r = &res->v[i];
        snprintf(to, sizeof to, "%s.%s", output, e->d_name);
        if (rename(from, to) != 0)
            gt_record_error("cannot keep the CUDA memory snapshot %s: %s", from, strerror(errno));
        else if (r && r->why[0])
            gt_record_error("the CUDA memory snapshot %s is not in the trace (%s); kept as %s", e->d_name, r->why, to);
        else
            gt_record_say("  CUDA memory snapshot: %s (gtrace import it)\n", to);
        failed |= r && r->why[0];
    }
    closedir(d);
    return failed;
}

void gt_record_snapshots_taken(const char *parts, gt_record_snapshots *res, bool written)
{
    for (size_t i = 0; res && i < res->n; i++) {
        snap_result *r = &res->v[i];
        if (r->why[0])
            continue;
        char pickle[PATH_MAX * 2];
        snprintf(pickle, sizeof pickle, "%s/%s", parts, r->name);
        if (written)
            unlink(pickle);
        else
            snprintf(r->why, sizeof r->why, "the trace it went into was not written");
    }
}

void gt_record_snapshots_free(gt_record_snapshots *s)
{
    if (s)
        free(s->v);
    free(s);
}
