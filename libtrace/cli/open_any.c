/* open_any.c: what `gtrace report|diff|memory|export` open: a trace (gtrace's
 * or an nsys export), or a file of PyTorch's own, which is imported on the
 * fly (libtrace/import) into a temporary trace that is removed when gtrace
 * exits: a torch.profiler (Kineto) JSON trace, plain or gzipped, or a CUDA
 * memory snapshot pickle. It decides by content, never by name: an SQLite
 * file always goes to the reader, which explains what is wrong with it. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gt_import.h"

#define MAX_TEMPS 8

static char *temps[MAX_TEMPS];
static int n_temps;

static void remove_temps(void)
{
    for (int i = 0; i < n_temps; i++) {
        unlink(temps[i]);
        free(temps[i]);
    }
    n_temps = 0;
}

static bool is_sqlite(const char *path)
{
    char head[16];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return true; /* the reader says why it cannot be opened */
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    return n != (ssize_t)sizeof head || memcmp(head, "SQLite format 3", 16) == 0;
}

/* Imports `path` into a new temporary trace; its name in *out (malloc'd). */
static int import_temp(const char *path, char **out)
{
    const char *dir = getenv("TMPDIR");
    char *tmp = NULL;
    if (!dir || !*dir)
        dir = "/tmp";
    if (n_temps == MAX_TEMPS)
        return gt_error_set(GT_ERR_INVALID, "%s: too many PyTorch files to import at once", path);
    if (asprintf(&tmp, "%s/gtrace-import-XXXXXX", dir) < 0)
        return gt_error_set(GT_ERR_NOMEM, "out of memory");
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int rc = gt_error_set(GT_ERR_IO, "%s: cannot make a temporary trace in %s: %s", path, dir, strerror(errno));
        free(tmp);
        return rc;
    }
    close(fd);
    if (n_temps == 0)
        atexit(remove_temps);
    temps[n_temps++] = tmp; /* removed at exit, imported or not */
    const char *inputs[1] = {path};
    int rc = gt_import_files(NULL, tmp, inputs, 1, GT_IMPORT_OVERWRITE);
    if (rc < 0)
        return rc;
    *out = tmp;
    return 0;
}

gt_trace *gt_cli_open_trace(const char *path, unsigned flags)
{
    gt_trace *t = NULL;
    gt_import_format fmt;
    char *imported = NULL;
    if (!is_sqlite(path) && gt_import_detect(path, &fmt) == 0) {
        if (import_temp(path, &imported) < 0) {
            gt_cli_error("%s", gt_error_last());
            return NULL;
        }
        fprintf(stderr, "gtrace: %s: imported as a %s (gtrace import keeps it as a trace)\n", path,
                fmt == GT_IMPORT_KINETO ? "torch.profiler trace" : "CUDA memory snapshot");
        path = imported;
    }
    if (gt_trace_open(&t, path, flags) != 0) {
        gt_cli_error("%s", gt_error_last());
        return NULL;
    }
    return t;
}
