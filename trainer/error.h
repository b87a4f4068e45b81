/* error.h: the trainer's error codes and per-thread messages (libgit2's
 * giterr pattern): a function returns a negative code and leaves a message
 * that names what failed; the caller prints tr_error_last(). */
#ifndef TR_ERROR_H
#define TR_ERROR_H

#include <stdio.h>
#include <stdlib.h>

enum {
    TR_OK = 0,
    TR_ENOMEM = -1,  /* the device (or --mem-limit) is out of memory */
    TR_EINVAL = -2,  /* a bad argument: flag, pointer, shape */
    TR_EIO = -3,     /* reading or writing a file failed */
    TR_EFORMAT = -4, /* a file is truncated, corrupt or of another kind */
    TR_ENOSPC = -5,  /* an in-place resize has no room; allocate and copy instead */
};

/* Sets this thread's message (printf-style) and returns code. */
int tr_error_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* This thread's last message ("" if none); borrowed. */
const char *tr_error_last(void);

/* Fail fast in programs: print file:line, the message and exit(1). */
#define tr_check(rc)                                                                 \
    do {                                                                             \
        int tr_check_rc_ = (rc);                                                     \
        if (tr_check_rc_ < 0) {                                                      \
            fprintf(stderr, "trainer: error at %s:%d: %s\n", __FILE__, __LINE__,     \
                    tr_error_last());                                                \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

#endif
