/* open_any.c: a trace, or a file of PyTorch's own imported on the fly into
 * a temporary trace that is removed at exit (see gt_open_any.h). An SQLite
 * file always goes to the reader, which explains what is wrong with it; so
 * does a file that cannot be read. It opens nothing itself: the caller opens
 * the path it is given back. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt_open_any.h"

#define MAX_TEMPS 8

static pthread_mutex_t temps_lock = PTHREAD_MUTEX_INITIALIZER;
static char *temps[MAX_TEMPS]; /* under temps_lock */
static int n_temps;
static bool at_exit_set;

static void remove_temps(void)
{
    pthread_mutex_lock(&temps_lock);
    for (int i = 0; i < n_temps; i++) {
        unlink(temps[i]);
        free(temps[i]);
    }
    n_temps = 0;
    pthread_mutex_unlock(&temps_lock);
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

/* A new empty temporary file, in the list of those removed at exit; its
 * name in *out (borrowed: the list owns it). */
static int make_temp(const char *path, const char **out)
{
    const char *dir = getenv("TMPDIR");
    char *tmp = NULL;
    int rc = 0;
    if (!dir || !*dir)
        dir = "/tmp";
    pthread_mutex_lock(&temps_lock);
    if (n_temps == MAX_TEMPS) {
        rc = gt_error_set(GT_ERR_INVALID, "%s: too many PyTorch files to import at once", path);
        goto cleanup;
    }
    if (asprintf(&tmp, "%s/gtrace-import-XXXXXX", dir) < 0) {
        rc = gt_error_set(GT_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        rc = gt_error_set(GT_ERR_IO, "%s: cannot make a temporary trace in %s: %s", path, dir, strerror(errno));
        free(tmp);
        goto cleanup;
    }
    close(fd);
    if (!at_exit_set)
        at_exit_set = atexit(remove_temps) == 0;
    temps[n_temps++] = tmp; /* removed at exit, imported or not */
    *out = tmp;
cleanup:
    pthread_mutex_unlock(&temps_lock);
    return rc;
}

const char *gt_open_any_format_name(gt_import_format format)
{
    return format == GT_IMPORT_KINETO ? "torch.profiler trace" : "CUDA memory snapshot";
}

int gt_open_any(char **out_path, gt_import_format *out_format, const char *path)
{
    gt_import_format fmt = 0;
    const char *tmp = NULL;
    int rc;
    *out_path = NULL;
    *out_format = 0;
    if (!is_sqlite(path) && gt_import_detect(path, &fmt) == 0) {
        if ((rc = make_temp(path, &tmp)) < 0)
            return rc;
        const char *inputs[1] = {path};
        if ((rc = gt_import_files(NULL, tmp, inputs, 1, GT_IMPORT_OVERWRITE)) < 0)
            return rc;
        path = tmp;
    } else {
        fmt = 0; /* a trace, or the reader's to refuse */
    }
    if (!(*out_path = strdup(path)))
        return gt_error_set(GT_ERR_NOMEM, "out of memory");
    *out_format = fmt;
    return 0;
}
