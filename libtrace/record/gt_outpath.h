/* gt_outpath.h: the one rule for where gtrace's programs write a file.
 *
 * A file is written where nothing is, or replaces a regular file (one a
 * symbolic link names included: the file is replaced, the link stays),
 * and only when asked (GT_OUTPATH_FORCE). Never a FIFO, a device, a
 * socket, a folder, a dangling link or a link to one of those, and never
 * one of the command's own inputs (the same file, by device and inode,
 * through any name). Commands that write a stream (export) may also write
 * in place into a character device or a FIFO that a process reads
 * (GT_OUTPATH_STREAM). libc only: the engine (files.c), gtrace and gtrace-view use it;
 * the trainer, which links neither, keeps the same rule in ckpt_io.c. */
#ifndef GT_OUTPATH_H
#define GT_OUTPATH_H

#include <limits.h>
#include <stddef.h>

enum {
    GT_OUTPATH_FORCE = 1u << 0,  /* an existing regular file may be replaced */
    GT_OUTPATH_STREAM = 1u << 1, /* a character device or a read FIFO is written in place */
};

typedef enum gt_outpath_how {
    GT_OUTPATH_CREATE,   /* nothing is there: target is created */
    GT_OUTPATH_REPLACE,  /* target is a regular file, replaced by a rename */
    GT_OUTPATH_IN_PLACE, /* a device or a FIFO (GT_OUTPATH_STREAM): opened and written */
} gt_outpath_how;

typedef struct gt_outpath {
    gt_outpath_how how;
    char target[PATH_MAX];  /* what is written: the path, or the regular file its link names */
    char why[2 * PATH_MAX]; /* when refused: the path and what is wrong, one line */
} gt_outpath;

/* 0 when `path` may be written under `flags`, with `out` saying how and
 * where; -1 when not, with out->why set. `inputs` (n_inputs names, NULL
 * entries skipped) are the files the command reads. */
int gt_outpath_check(gt_outpath *out, const char *path, unsigned flags, const char *const *inputs, size_t n_inputs);

#endif
