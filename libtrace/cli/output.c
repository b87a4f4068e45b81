/* output.c: what gtrace's commands share about their output: messages on
 * stderr, durations and event counts as printed; trace files are put in
 * place by the engine's rule (libtrace/record/files.c), named here as the
 * commands call them. It calls no command; the commands call it. */
#define _GNU_SOURCE
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"

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
    return gt_record_check_output(output, force, inputs, n_inputs, target, target_bytes);
}

void gt_cli_remove_trace(const char *path)
{
    gt_record_remove_trace(path);
}

int gt_cli_install(const char *from, const char *output, bool force)
{
    return gt_record_install(from, output, force);
}

int gt_cli_dropped(gt_trace *t, int64_t out[GT_EV_N_KINDS])
{
    return gt_record_dropped(t, out);
}
