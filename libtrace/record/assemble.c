/* assemble.c: one trace out of the part files the traced processes wrote.
 *
 * Every traced process writes its own part (libtrace/capture): PID-N.sqlite
 * in the run's parts directory. One cleanly finished part is renamed into
 * place, with the launcher's end-of-run clock pair added to its run entries.
 * Several parts, or a part whose writer was killed (it still has its -wal
 * file), are copied into a fresh trace (trace_copy.c): duplicate
 * descriptions (a process that exec'd wrote two parts) are written once.
 * GTRACE_RUN_CONFIG: the run's own entries (command line, options, root pid,
 * end-of-run clock pair) are written here; each process's (and the root's
 * copy under pid 0 of its environment) come from the first part that has
 * them, so an exec'd image does not repeat them.
 *
 * Drop counts: each part's own, except for a part whose process could not
 * write it (full disk, file size limit): its account is in the loss table
 * (losses.h), which also speaks for parts that were never created.
 *
 * The output: a trace is assembled in the parts directory (beside the
 * output, on the same file system) and renamed into place only once it is
 * complete (gt_record_install: only a regular file is ever replaced, with
 * `force`; without it nothing is, even a file that appeared while the
 * program ran).
 */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record_int.h"
#include "losses.h"
#include "trace_copy.h"

_Static_assert(GT_EV_N_KINDS <= GT_LOSS_KINDS, "the loss table has a count for every kind");

#define ASSEMBLED_NAME "assembled.tmp" /* in the parts directory; not a part (*.sqlite) */

static int interrupted(void)
{
    return gt_error_set(GT_ERR_IO, "interrupted by signal %d while assembling the trace", (int)gt_record_stop_signal);
}

static char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* The part files (*.sqlite) of a directory, sorted; NULL-terminated. */
static char **list_parts(const char *dir, size_t *out_n)
{
    DIR *d = opendir(dir);
    *out_n = 0;
    if (!d)
        return NULL;
    size_t n = 0, cap = 16;
    char **v = malloc(cap * sizeof *v);
    struct dirent *e;
    while (v && (e = readdir(d))) {
        if (!ends_with(e->d_name, ".sqlite"))
            continue;
        if (n + 1 >= cap) {
            char **b = realloc(v, (cap *= 2) * sizeof *v);
            if (!b)
                break;
            v = b;
        }
        v[n++] = path_join(dir, e->d_name);
    }
    closedir(d);
    if (v) {
        qsort(v, n, sizeof *v, gt_cmp_str);
        v[n] = NULL;
    }
    *out_n = n;
    return v;
}

static bool has_wal(const char *path)
{
    char side[4200];
    struct stat st;
    snprintf(side, sizeof side, "%s-wal", path);
    return stat(side, &st) == 0;
}

/* The loss table's account of a part (by its file name), marked used. */
static const gt_loss_slot *find_slot(const gt_loss_table *losses, bool *slot_used, const char *part_path)
{
    if (!losses)
        return NULL;
    const char *slash = strrchr(part_path, '/');
    const char *name = slash ? slash + 1 : part_path;
    for (int i = 0; i < GT_LOSS_SLOTS; i++) {
        const gt_loss_slot *s = &losses->slots[i];
        if (s->pid && s->complete && !slot_used[i] && !strncmp(s->part, name, sizeof s->part)) {
            slot_used[i] = true;
            return s;
        }
    }
    return NULL;
}

static int copy_part(gt_copy *c, const char *path, const gt_loss_table *losses, bool *slot_used)
{
    gt_trace *t = NULL;
    if (gt_trace_open(&t, path, 0) != 0) {
        /* A process killed before its first commit leaves an empty file: say so, go on. */
        gt_record_say("gtrace: skipping an unreadable part of the trace: %s\n", gt_error_last());
        return 0;
    }
    const gt_loss_slot *slot = find_slot(losses, slot_used, path);
    int rc = gt_copy_trace(c, t, &GT_COPY_SAME, slot ? slot->n_lost : NULL);
    gt_trace_free(t);
    return rc;
}

static void clock_end_values(const gt_record_run_info *run, char end[32], char utc_end[32])
{
    snprintf(end, 32, "%lld", (long long)run->end_ns);
    snprintf(utc_end, 32, "%lld", (long long)run->utc_end_ns);
}

static int write_run_config(gt_writer *w, const gt_record_run_info *run)
{
    char v[32], end[32], utc_end[32];
    int rc = gt_writer_set_session_start(w, run->utc_t0_ns);
    if (rc == 0)
        rc = gt_writer_add_config(w, 0, "command_line", run->command_line);
    if (rc == 0)
        rc = gt_writer_add_config(w, 0, "gtrace_options", run->options);
    snprintf(v, sizeof v, "%lld", (long long)run->root_pid);
    if (rc == 0)
        rc = gt_writer_add_config(w, 0, "root_pid", v);
    clock_end_values(run, end, utc_end);
    if (rc == 0 && run->end_ns > 0)
        rc = gt_writer_add_config(w, 0, GT_RECORD_CLOCK_END_KEY, end);
    if (rc == 0 && run->end_ns > 0)
        rc = gt_writer_add_config(w, 0, GT_RECORD_CLOCK_END_UTC_KEY, utc_end);
    return rc;
}

/* A part renamed into place whole gets the run's end-of-run clock pair
 * (its other run entries are its root process's, written by the collector).
 * Without it the trace is still whole: say so, go on. */
static void add_clock_end(const char *part, const gt_record_run_info *run)
{
    char end[32], utc_end[32];
    clock_end_values(run, end, utc_end);
    const char *const keys[] = {GT_RECORD_CLOCK_END_KEY, GT_RECORD_CLOCK_END_UTC_KEY};
    const char *const values[] = {end, utc_end};
    if (run->end_ns > 0 && gt_trace_add_config(part, 0, keys, values, 2) != 0)
        gt_record_say("gtrace: the trace will not hold its end-of-run clock (gtrace merge corrects its "
                "offset only): %s\n", gt_error_last());
}

static int copy_all(char **parts, size_t n_parts, const char *output, const gt_record_run_info *run,
                    gt_loss_table *losses)
{
    bool slot_used[GT_LOSS_SLOTS] = {false};
    gt_copy *c = NULL;
    int rc = gt_copy_new(&c, output);
    if (rc != 0)
        return rc;
    rc = write_run_config(gt_copy_writer(c), run);
    if (rc == 0 && n_parts == 0)
        rc = gt_copy_add_process(c, run->root_pid, run->program_name);
    for (size_t i = 0; i < n_parts && rc == 0; i++)
        rc = copy_part(c, parts[i], losses, slot_used);
    /* Processes that lost everything: their part could not even be created. */
    for (int i = 0; losses && i < GT_LOSS_SLOTS && rc == 0; i++) {
        const gt_loss_slot *s = &losses->slots[i];
        if (s->pid && s->complete && !slot_used[i]) {
            rc = gt_copy_add_process(c, s->pid, "");
            if (rc == 0)
                rc = gt_copy_add_dropped(c, gt_global_pid(s->pid), s->n_lost);
        }
    }
    if (rc == 0)
        return gt_copy_finish(c);
    gt_copy_free(c);
    return rc;
}

/* The loss table of a parts directory, read whole; NULL when absent or not one. */
static gt_loss_table *read_losses(const char *parts_dir)
{
    char *path = path_join(parts_dir, GT_LOSSES_NAME);
    if (!path)
        return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    if (fd < 0)
        return NULL;
    gt_loss_table *t = malloc(sizeof *t);
    size_t got = 0;
    while (t && got < sizeof *t) {
        ssize_t n = read(fd, (char *)t + got, sizeof *t - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (t && (got < sizeof *t || memcmp(t->magic, GT_LOSSES_MAGIC, sizeof t->magic) != 0)) {
        free(t);
        t = NULL;
    }
    return t;
}

int gt_record_make_losses(const char *parts_dir)
{
    char *path = path_join(parts_dir, GT_LOSSES_NAME);
    if (!path)
        return gt_error_set(GT_ERR_NOMEM, "out of memory");
    int err = 0;
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        err = errno;
    } else {
        /* Every block allocated now: a process that lost events because the
         * disk is full can still record how many. */
        char magic[8] = GT_LOSSES_MAGIC;
        err = posix_fallocate(fd, 0, (off_t)sizeof(gt_loss_table));
        if (err == 0 && pwrite(fd, magic, sizeof magic, 0) != (ssize_t)sizeof magic)
            err = errno ? errno : EIO;
        close(fd);
        if (err != 0)
            unlink(path);
    }
    int rc = 0;
    if (err != 0)
        rc = gt_error_set(err == ENOSPC || err == EFBIG ? GT_ERR_FULL : GT_ERR_IO, "cannot create %s: %s", path,
                          strerror(err));
    free(path);
    return rc;
}

void gt_record_remove_parts(const char *parts_dir)
{
    size_t n = 0;
    char **parts = list_parts(parts_dir, &n);
    for (size_t i = 0; i < n; i++) {
        gt_record_remove_trace(parts[i]);
        free(parts[i]);
    }
    free(parts);
    char *p = path_join(parts_dir, GT_LOSSES_NAME);
    if (p)
        unlink(p);
    free(p);
    p = path_join(parts_dir, ASSEMBLED_NAME);
    if (p)
        gt_record_remove_trace(p);
    free(p);
}

int gt_record_assemble(const char *parts_dir, const char *output, bool force, const gt_record_run_info *run,
                    gt_record_losses *out_losses)
{
    size_t n = 0;
    char **parts = list_parts(parts_dir, &n);
    gt_loss_table *losses = read_losses(parts_dir);
    bool any_slot = false;
    if (out_losses)
        memset(out_losses, 0, sizeof *out_losses);
    for (int i = 0; losses && i < GT_LOSS_SLOTS; i++) {
        const gt_loss_slot *s = &losses->slots[i];
        if (!s->pid)
            continue;
        any_slot = true;
        if (!out_losses)
            continue;
        if (!s->complete) {
            out_losses->n_unaccounted++; /* killed while it wrote its account */
            continue;
        }
        if (out_losses->n_failed++ == 0) {
            _Static_assert(sizeof out_losses->reason == sizeof s->reason, "same size");
            memcpy(out_losses->reason, s->reason, sizeof s->reason);
            out_losses->reason[sizeof out_losses->reason - 1] = '\0';
        }
    }
    if (losses && out_losses)
        out_losses->n_unaccounted += losses->n_unrecorded;
    int rc = 0;
    if (output) {
        if (n == 1 && !has_wal(parts[0]) && !any_slot) {
            add_clock_end(parts[0], run);
            rc = gt_record_install(parts[0], output, force);
        } else {
            char *tmp = path_join(parts_dir, ASSEMBLED_NAME);
            if (!tmp) {
                rc = gt_error_set(GT_ERR_NOMEM, "out of memory assembling the trace");
            } else {
                gt_record_remove_trace(tmp);
                rc = copy_all(parts, n, tmp, run, losses);
                if (rc == 0 && gt_record_stop_signal)
                    rc = interrupted();
                if (rc == 0)
                    rc = gt_record_install(tmp, output, force);
                if (rc != 0)
                    gt_record_remove_trace(tmp);
                free(tmp);
            }
        }
    }
    if (rc == 0 || !output) {
        for (size_t i = 0; i < n; i++)
            gt_record_remove_trace(parts[i]);
        char *p = path_join(parts_dir, GT_LOSSES_NAME);
        if (p)
            unlink(p);
        free(p);
    }
    for (size_t i = 0; i < n; i++)
        free(parts[i]);
    free(parts);
    free(losses);
    return rc;
}
