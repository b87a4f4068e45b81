/* warn.c: libgtrace.so's one way to speak: a line on stderr, once per
 * thing, written with write(2) (no stdio lock the program could hold, no
 * buffering). It never writes to stdout and never exits. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "warn.h"

void gt_cap_warn_once(_Atomic int *once, const char *fmt, ...)
{
    if (atomic_exchange(once, 1))
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof msg - 2)
        n = sizeof msg - 2;
    msg[n++] = '\n';
    char line[600];
    int m = snprintf(line, sizeof line, "gtrace: %.*s", n, msg);
    if (m > 0) {
        ssize_t w = write(STDERR_FILENO, line, (size_t)m < sizeof line ? (size_t)m : sizeof line - 1);
        (void)w;
    }
}
