/* output.c: what gtrace's commands share about their output: messages on
 * stderr, durations and event counts as printed, and trace files put in
 * place (checked first by gt_outpath's rule, installed last, only ever
 * replacing a regular file, and only when asked). It calls no command; the
 * commands call it. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "gt_outpath.h"

void gt_cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gtrace: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

const char *gt_cli_duration(int64_t ns, char *buf, size_t buf_bytes)
{
    double v = (double)ns;
    if (ns >= 1000000000)
        snprintf(buf, buf_bytes, "%.3f s", v / 1e9);
    else if (ns >= 1000000)
        snprintf(buf, buf_bytes, "%.3f ms", v / 1e6);
    else if (ns >= 1000)
        snprintf(buf, buf_bytes, "%.3f us", v / 1e3);
    else
        snprintf(buf, buf_bytes, "%" PRId64 " ns", ns);
    return buf;
}

int64_t gt_cli_print_counts(FILE *out, gt_trace *t, const char *indent)
{
    int64_t total = 0;
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        int64_t n = 0;
        int rc = gt_trace_count(t, (gt_event_kind)k, &n);
        if (rc != 0)
            return rc;
        if (n > 0)
            fprintf(out, "%s%-12s %" PRId64 "\n", indent, gt_event_kind_name((gt_event_kind)k), n);
        total += n;
    }
    return total;
}

int gt_cli_check_output(const char *output, bool force, const char *const *inputs, size_t n_inputs, char *target,
                        size_t target_bytes)
{
    gt_outpath o;
    if (gt_outpath_check(&o, output, force ? GT_OUTPATH_FORCE : 0, inputs, n_inputs) != 0)
        return gt_error_set(GT_ERR_EXISTS, "%s", o.why);
    if (target && strlen(o.target) >= target_bytes)
        return gt_error_set(GT_ERR_EXISTS, "%s: the path is too long", output);
    if (target)
        snprintf(target, target_bytes, "%s", o.target);
    return 0;
}

void gt_cli_remove_trace(const char *path)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    char p[4200];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffixes[i]);
        unlink(p);
    }
}

/* Removes SQLite's files beside `path` (regular files only). */
static void remove_sidecars(const char *path)
{
    static const char *const suffixes[] = {"-wal", "-shm", "-journal"};
    char side[4200];
    struct stat st;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(side, sizeof side, "%s%s", path, suffixes[i]);
        if (lstat(side, &st) == 0 && S_ISREG(st.st_mode))
            unlink(side);
    }
}

int gt_cli_install(const char *from, const char *output, bool force)
{
    struct stat st;
    bool exists = lstat(output, &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {
        gt_outpath o;
        gt_outpath_check(&o, output, force ? GT_OUTPATH_FORCE : 0, NULL, 0);
        return gt_error_set(GT_ERR_EXISTS, "%s", o.why[0] ? o.why : "it is not a regular file");
    }
    if (exists && !force)
        return gt_error_set(GT_ERR_EXISTS, "%s appeared while the trace was written; it is left as it is", output);
    /* Journals beside the name belong to the file replaced, or to none:
     * SQLite must not apply them to the new trace. */
    remove_sidecars(output);
    if (exists) {
        if (rename(from, output) != 0)
            return gt_error_set(GT_ERR_IO, "cannot move the trace to %s: %s", output, strerror(errno));
        return 0;
    }
    /* Without --force, never replace: a file may have appeared since the check. */
    if (renameat2(AT_FDCWD, from, AT_FDCWD, output, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno == EEXIST)
        return gt_error_set(GT_ERR_EXISTS, "%s appeared while the trace was written; it is left as it is", output);
    if (errno != EINVAL && errno != ENOSYS)
        return gt_error_set(GT_ERR_IO, "cannot move the trace to %s: %s", output, strerror(errno));
    if (link(from, output) == 0) { /* a file system without RENAME_NOREPLACE */
        unlink(from);
        return 0;
    }
    if (errno == EEXIST)
        return gt_error_set(GT_ERR_EXISTS, "%s appeared while the trace was written; it is left as it is", output);
    if (rename(from, output) != 0)
        return gt_error_set(GT_ERR_IO, "cannot move the trace to %s: %s", output, strerror(errno));
    return 0;
}
