/* say.c: the engine's one way to tell its user something (gt_record.h's
 * message hook): each message is formatted whole and handed to the hook,
 * or written on stderr. It decides nothing about what is said. */
#define _GNU_SOURCE
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "record_int.h"

static gt_record_say_fn say_fn;
static void *say_ctx;

void gt_record_set_say(gt_record_say_fn fn, void *ctx)
{
    say_fn = fn;
    say_ctx = ctx;
}

static void say_v(const char *prefix, const char *fmt, va_list ap, const char *suffix)
{
    char *body = NULL, *text = NULL;
    if (vasprintf(&body, fmt, ap) < 0)
        return;
    if (asprintf(&text, "%s%s%s", prefix, body, suffix) >= 0) {
        if (say_fn)
            say_fn(text, say_ctx);
        else
            fputs(text, stderr);
    }
    free(text);
    free(body);
}

void gt_record_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say_v("", fmt, ap, "");
    va_end(ap);
}

void gt_record_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say_v("gtrace: ", fmt, ap, "\n");
    va_end(ap);
}
