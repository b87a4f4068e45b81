/* error.c: the per-thread message behind gt_error_last(), and status names.
 * Every library function that fails sets the message with gt_error_set();
 * the message is always one line. */
#include "gt_base.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_message[1024];

const char *gt_error_last(void)
{
    return last_message;
}

void gt_error_clear(void)
{
    last_message[0] = '\0';
}

/* Makes the message one line: SQLite's messages quote a damaged file's
 * schema, newlines and indentation included. A control character becomes
 * one space, and the spaces and control characters around it go with it. */
static void one_line(char *s)
{
    char *w = s;
    for (const char *r = s; *r;) {
        unsigned char c = (unsigned char)*r;
        if (c >= 0x20 && c != 0x7f) {
            *w++ = *r++;
            continue;
        }
        while (w > s && w[-1] == ' ')
            w--;
        while (*r && ((unsigned char)*r < 0x20 || *r == 0x7f || *r == ' '))
            r++;
        if (w > s && *r)
            *w++ = ' ';
    }
    *w = '\0';
}

int gt_error_set(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    one_line(last_message);
    return status;
}

const char *gt_status_name(int status)
{
    switch (status) {
    case GT_OK: return "ok";
    case GT_ERR_NOMEM: return "out of memory";
    case GT_ERR_IO: return "input/output error";
    case GT_ERR_CORRUPT: return "corrupt file";
    case GT_ERR_NOTTRACE: return "not a trace";
    case GT_ERR_VERSION: return "unsupported schema version";
    case GT_ERR_INVALID: return "invalid argument";
    case GT_ERR_NOTFOUND: return "not found";
    case GT_ERR_FULL: return "disk full";
    case GT_ERR_EXISTS: return "file exists";
    }
    return "unknown error";
}
