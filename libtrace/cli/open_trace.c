/* open_trace.c: what `gtrace report|diff|memory|export` open: a trace, or a
 * torch.profiler JSON or CUDA memory snapshot imported into a temporary
 * trace removed at exit (gt_open_any.h), with one line on stderr saying so. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "gt_open_any.h"

gt_trace *gt_cli_open_trace(const char *path, unsigned flags)
{
    gt_trace *t = NULL;
    gt_import_format fmt;
    char *resolved = NULL;
    if (gt_open_any(&resolved, &fmt, path) < 0) {
        gt_cli_error("%s", gt_error_last());
        return NULL;
    }
    if (fmt)
        fprintf(stderr, "gtrace: %s: imported as a %s (gtrace import keeps it as a trace)\n", path,
                gt_open_any_format_name(fmt));
    if (gt_trace_open(&t, resolved, flags) != 0) {
        gt_cli_error("%s", gt_error_last());
        t = NULL;
    }
    free(resolved);
    return t;
}
