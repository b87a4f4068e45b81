/* report_window.c: `gtrace report --steps A:B` at the size of its window.
 * When a trace is finished, the close analyses every event (report_kept.c);
 * what a window's rows cannot tell of the whole trace (an_whole: the span,
 * rows refused, the main thread, the devices, the longest activity and
 * call, how far launches lie from their activities) is kept then beside
 * the report, as text: made, written and parsed here. A report of steps on
 * a trace that has them reads the window only (model_window.c, from
 * gt_report_compute_window in report_kept.c) and gives the whole model's
 * bytes.
 *
 * The facts are kept only for traces where that holds: none where the
 * Communication section measures anything (each rank in its own steps,
 * which need not lie in the window) or nsys 2.x's wrapper calls were
 * dropped (a wrapper in the window whose call is outside it would stay).
 * Without them (those traces, small ones where no report is kept, nsys
 * exports, imports, traces kept by another build) the whole model is read. */
#include "analyze_int.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_WHOLE "report.whole"

/* The facts' fields, one "name value" line each (devices, n_events: lists). */
#define WHOLE_FIELDS(X)                                                                                                \
    X(span_start_ns) X(span_end_ns) X(n_refused) X(max_act_ns) X(main_tid) X(max_api_ns) X(launch_before_ns)           \
    X(launch_after_ns) X(alloc_before_ns) X(alloc_after_ns) X(n_ooms)

/* How far an activity's launch call lies before and after it. */
static void launch_lags(an_whole *w, const an_model *m)
{
    for (size_t i = 0; i < m->n_acts; i++) {
        const an_act *x = &m->acts[i];
        const an_api *a = x->corr ? an_model_launch(m, x->corr) : NULL;
        if (!a)
            continue;
        int64_t d = x->start_ns - a->start_ns; /* times within AN_TIME_LIMIT_NS: no overflow */
        if (d > w->launch_before_ns)
            w->launch_before_ns = d;
        if (-d > w->launch_after_ns)
            w->launch_after_ns = -d;
    }
}

bool an_whole_of(an_whole *w, const an_model *m, const gt_report *r)
{
    memset(w, 0, sizeof *w);
    if (r->comm.n_ranks > 0 || m->n_dropped > 0)
        return false;
    w->span_start_ns = m->span_start_ns;
    w->span_end_ns = m->span_end_ns;
    w->n_refused = m->n_refused;
    w->max_act_ns = m->max_act_ns;
    w->main_tid = m->main_tid;
    w->cpu_timeline = m->cpu_timeline;
    for (size_t i = 0; i < m->n_acts && !w->any_kernel; i++)
        w->any_kernel = m->acts[i].kind == GT_EV_KERNEL;
    for (size_t i = 0; i < m->n_apis; i++)
        if (m->apis[i].end_ns - m->apis[i].start_ns > w->max_api_ns)
            w->max_api_ns = m->apis[i].end_ns - m->apis[i].start_ns;
    launch_lags(w, m);
    w->alloc_before_ns = m->alloc_before_ns;
    w->alloc_after_ns = m->alloc_after_ns;
    w->n_ooms = r->oom ? r->oom->n_ooms : 0;
    memcpy(w->n_events, r->n_events, sizeof w->n_events);
    w->n_devices = an_devices(w->devices, m);
    return true;
}

int an_whole_text(char **out, size_t *out_bytes, const an_whole *w)
{
    FILE *f = open_memstream(out, out_bytes);
    if (!f)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
#define PRINT(name) fprintf(f, #name " %" PRId64 "\n", w->name);
    WHOLE_FIELDS(PRINT)
#undef PRINT
    fprintf(f, "any_kernel %d\ncpu_timeline %d\ndevices", w->any_kernel, w->cpu_timeline);
    for (size_t i = 0; i < w->n_devices; i++)
        fprintf(f, " %" PRId32, w->devices[i]);
    fprintf(f, "\nn_events");
    for (size_t k = 0; k < GT_EV_N_KINDS; k++)
        fprintf(f, " %" PRId64, w->n_events[k]);
    fprintf(f, "\n");
    if (fclose(f) != 0) {
        free(*out);
        *out = NULL;
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    }
    return 0;
}

/* The lines a body must have: the fields' bits count from 1 (parse_line). */
enum { SEEN_ANY_KERNEL = 1u << 20, SEEN_CPU_TIMELINE = 1u << 21, SEEN_DEVICES = 1u << 22, SEEN_N_EVENTS = 1u << 23 };

/* A number that is the whole of [s, end): the body is the file's, and a
 * damaged one is refused, never guessed at. */
static bool number(const char *s, const char *end, int64_t *out)
{
    char buf[32];
    size_t n = (size_t)(end - s);
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *stop;
    errno = 0;
    long long v = strtoll(buf, &stop, 10);
    *out = v;
    return *stop == '\0' && errno == 0 && (isdigit((unsigned char)buf[0]) || buf[0] == '-');
}

/* One line "name value..." into w; false: not a line of this build's. */
static bool parse_line(an_whole *w, const char *s, const char *end, unsigned *seen)
{
    const char *sp = memchr(s, ' ', (size_t)(end - s));
    sp = sp ? sp : end; /* a list may be empty: "devices" */
    size_t n = (size_t)(sp - s);
    const char *v = sp < end ? sp + 1 : end;
    int64_t x;
    unsigned bit = 0;
#define FIELD(name)                                                                                                    \
    if (++bit && n == sizeof #name - 1 && memcmp(s, #name, n) == 0) {                                                  \
        *seen |= 1u << bit;                                                                                            \
        return number(v, end, &w->name);                                                                               \
    }
    WHOLE_FIELDS(FIELD)
#undef FIELD
    if ((n == 10 && memcmp(s, "any_kernel", n) == 0) || (n == 12 && memcmp(s, "cpu_timeline", n) == 0)) {
        if (!number(v, end, &x) || (x != 0 && x != 1))
            return false;
        *(n == 10 ? &w->any_kernel : &w->cpu_timeline) = x;
        *seen |= n == 10 ? SEEN_ANY_KERNEL : SEEN_CPU_TIMELINE;
        return true;
    }
    if (n == 8 && memcmp(s, "n_events", n) == 0) {
        size_t k = 0;
        for (const char *p = v; p < end && k < GT_EV_N_KINDS; k++) {
            const char *q = memchr(p, ' ', (size_t)(end - p));
            q = q ? q : end;
            if (!number(p, q, &w->n_events[k]) || w->n_events[k] < 0)
                return false;
            p = q < end ? q + 1 : end;
        }
        *seen |= SEEN_N_EVENTS;
        return k == GT_EV_N_KINDS;
    }
    if (n != 7 || memcmp(s, "devices", n) != 0)
        return false;
    *seen |= SEEN_DEVICES;
    for (const char *p = v; p < end;) {
        const char *q = memchr(p, ' ', (size_t)(end - p));
        q = q ? q : end;
        if (w->n_devices == AN_MAX_DEVICES || !number(p, q, &x) || x < INT32_MIN || x > INT32_MAX)
            return false;
        w->devices[w->n_devices++] = (int32_t)x;
        p = q < end ? q + 1 : end;
    }
    return true;
}

/* The facts of a body; false: not all of them, or not as written here. */
bool an_whole_parse(an_whole *w, const char *body, size_t n)
{
    unsigned seen = 0, all = SEEN_ANY_KERNEL | SEEN_CPU_TIMELINE | SEEN_DEVICES | SEEN_N_EVENTS;
    unsigned bit = 0;
#define ALL(name) all |= 1u << ++bit;
    WHOLE_FIELDS(ALL)
#undef ALL
    memset(w, 0, sizeof *w);
    for (const char *s = body, *end = body + n; s < end;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl || !parse_line(w, s, nl, &seen))
            return false;
        s = nl + 1;
    }
    return seen == all && w->max_act_ns >= 0 && w->max_api_ns >= 0 && w->launch_before_ns >= 0 &&
           w->launch_after_ns >= 0 && w->alloc_before_ns >= 0 && w->alloc_after_ns >= 0;
}

const char *an_whole_key(void)
{
    return KEY_WHOLE;
}
