/* files.c: trace files put in place, for the engine and the commands
 * alike: the output checked first by gt_outpath's rule, the trace
 * installed last (only ever replacing a regular file, and only when
 * asked), and a trace of gtrace's own making removed with SQLite's files
 * beside it. It prints nothing: errors are in gt_error_last(). */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gt_outpath.h"
#include "gt_record.h"

int gt_record_check_output(const char *output, bool force, const char *const *inputs, size_t n_inputs, char *target,
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

void gt_record_remove_trace(const char *path)
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

int gt_record_install(const char *from, const char *output, bool force)
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
