/* outpath.c: the check of an output path before anything is written
 * (gt_outpath.h). It decides and explains; it opens nothing but a FIFO's
 * probe, and writes nothing. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gt_outpath.h"

static const char *kind_of(mode_t mode)
{
    return S_ISDIR(mode) ? "a folder" : S_ISFIFO(mode) ? "a FIFO" : S_ISCHR(mode) ? "a character device"
         : S_ISBLK(mode) ? "a block device" : S_ISSOCK(mode) ? "a socket" : "not a regular file";
}

static int refuse(gt_outpath *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(gt_outpath *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->why, sizeof out->why, fmt, ap);
    va_end(ap);
    return -1;
}

/* Whether a stream may be written in place into what `st` describes; a
 * FIFO only while a process reads it (else the open would wait forever). */
static bool stream_ok(const char *path, const struct stat *st, gt_outpath *out)
{
    if (S_ISCHR(st->st_mode))
        return true;
    if (!S_ISFIFO(st->st_mode))
        return false;
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        refuse(out, "%s: it is a FIFO that no process reads%s%s", path, errno == ENXIO ? "" : ": ",
               errno == ENXIO ? "" : strerror(errno));
        return false;
    }
    close(fd);
    return true;
}

int gt_outpath_check(gt_outpath *out, const char *path, unsigned flags, const char *const *inputs, size_t n_inputs)
{
    struct stat lst, st;
    memset(out, 0, sizeof *out);
    if (!path || !*path)
        return refuse(out, "an empty file name");
    if (strlen(path) >= sizeof out->target - 32)
        return refuse(out, "%.64s...: the path is too long", path);
    snprintf(out->target, sizeof out->target, "%s", path);
    if (lstat(path, &lst) != 0) {
        if (errno == ENOENT)
            return 0; /* GT_OUTPATH_CREATE; whether its folder takes files is the writer's to say */
        return refuse(out, "cannot use %s: %s", path, strerror(errno));
    }
    st = lst;
    if (S_ISLNK(lst.st_mode)) {
        char *real = realpath(path, NULL);
        if (!real || stat(real, &st) != 0) {
            free(real);
            return refuse(out, "%s: it is a symbolic link to nothing, not a regular file: only a regular file is "
                          "replaced (choose another name)", path);
        }
        bool fits = strlen(real) < sizeof out->target - 32;
        if (fits)
            snprintf(out->target, sizeof out->target, "%s", real);
        free(real);
        if (!fits)
            return refuse(out, "%s: the file it links to has too long a name", path);
    }
    for (size_t i = 0; i < n_inputs; i++) {
        struct stat in;
        if (inputs[i] && stat(inputs[i], &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino)
            return refuse(out, "%s is %s, which this command reads: choose another name", path, inputs[i]);
    }
    bool dev_name = !strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6);
    if ((flags & GT_OUTPATH_STREAM) && (!S_ISREG(st.st_mode) || dev_name) && !S_ISDIR(st.st_mode)) {
        /* a device, a pipe, /dev/stdout or /dev/fd/N (whatever the shell opened there) */
        if (S_ISREG(st.st_mode) || stream_ok(path, &st, out)) {
            out->how = GT_OUTPATH_IN_PLACE;
            snprintf(out->target, sizeof out->target, "%s", path);
            return 0;
        }
        if (out->why[0])
            return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        if (S_ISLNK(lst.st_mode))
            return refuse(out, "%s: it is a symbolic link to %s, which is %s, not a regular file: only a regular "
                          "file is replaced (choose another name)", path, out->target, kind_of(st.st_mode));
        return refuse(out, "%s: it is %s, not a regular file: only a regular file is replaced (choose another "
                      "name)", path, kind_of(st.st_mode));
    }
    if (!(flags & GT_OUTPATH_FORCE))
        return refuse(out, "%s exists (use --force to replace it)", path);
    out->how = GT_OUTPATH_REPLACE;
    return 0;
}
