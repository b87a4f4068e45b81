/* error.c: the per-thread error message of error.h. */
#include "error.h"

#include <stdarg.h>

static __thread char message[1024];

int tr_error_set(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    return code;
}

const char *tr_error_last(void) { return message; }
