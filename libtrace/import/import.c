/* import.c: drives an import: tells each input's format from its first
 * bytes, scans every input (time span, process, rank), puts them on one
 * clock (nanoseconds from the earliest event of all), gives each its own
 * process, and writes them through the store's writer into a file beside
 * the output that is renamed into place only when complete. It knows no
 * format itself: kineto.c and snapshot.c do, writing through batch.c.
 * gt_import_snapshot_part writes one snapshot as a part of a recorded run,
 * under the pid and on the clock the launcher gives, for assembly to copy. */
#include "import_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

int gt_import_detect(const char *path, gt_import_format *out_format)
{
    unsigned char head[64];
    struct stat sb;
    int n, rc = 0;
    gzFile gz;
    if (stat(path, &sb) != 0)
        return gt_error_set(errno == ENOENT ? GT_ERR_NOTFOUND : GT_ERR_IO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return gt_error_set(GT_ERR_INVALID, "%s: not a regular file", path);
    if (!(gz = gzopen(path, "rb")))
        return gt_error_set(GT_ERR_IO, "%s: cannot open: %s", path, errno ? strerror(errno) : "out of memory");
    n = gzread(gz, head, sizeof head);
    if (n < 0) {
        int err;
        rc = gt_error_set(GT_ERR_CORRUPT, "%s: %s", path, gzerror(gz, &err));
    } else if (gzdirect(gz) && n >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5) {
        *out_format = GT_IMPORT_SNAPSHOT; /* PROTO 2-5: a pickle */
    } else if (n >= 2 && head[0] == 0x80) {
        rc = gt_error_set(GT_ERR_CORRUPT, "%s: a pickle of protocol %d%s; snapshots are protocol 2 to 5", path,
                          head[1], gzdirect(gz) ? "" : " inside gzip");
    } else {
        int i = n >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf ? 3 : 0; /* a UTF-8 BOM */
        while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
            i++;
        if (i < n && (head[i] == '{' || head[i] == '['))
            *out_format = GT_IMPORT_KINETO;
        else if (n == 0)
            rc = gt_error_set(GT_ERR_CORRUPT, "%s: the file is empty", path);
        else
            rc = gt_error_set(GT_ERR_CORRUPT, "%s: neither a torch.profiler trace (JSON) nor a memory snapshot "
                              "(pickle)", path);
    }
    gzclose(gz);
    return rc;
}

static const char *basename_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static void remove_partial(const char *tmp)
{
    char p[4096 + 8];
    unlink(tmp);
    snprintf(p, sizeof p, "%s-wal", tmp);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", tmp);
    unlink(p);
    snprintf(p, sizeof p, "%s-journal", tmp);
    unlink(p);
}

int gt_import_files(gt_import_stats **out_stats, const char *output, const char *const *inputs,
                    size_t n_inputs, unsigned flags)
{
    im_scan *scans = NULL;
    gt_import_stats *stats = NULL;
    int64_t *pids = NULL;
    gt_writer *w = NULL;
    char *tmp = NULL;
    char msg[1024] = "";
    uint64_t gpus_added = 0;
    int64_t t0 = INT64_MAX;
    bool wall_clock = true, any_time = false;
    size_t tmp_bytes = output ? strlen(output) + 32 : 0;
    int rc = 0;
    if (out_stats)
        *out_stats = NULL;
    if (!output || !inputs || n_inputs == 0)
        return gt_error_set(GT_ERR_INVALID, "import: no %s", !output ? "output" : "input");
    if (!(flags & GT_IMPORT_OVERWRITE) && access(output, F_OK) == 0)
        return gt_error_set(GT_ERR_EXISTS, "%s exists (use --force to replace it)", output);
    scans = calloc(n_inputs, sizeof *scans);
    stats = calloc(n_inputs, sizeof *stats);
    pids = calloc(n_inputs, sizeof *pids);
    tmp = malloc(tmp_bytes);
    if (!scans || !stats || !pids || !tmp) {
        rc = gt_error_set(GT_ERR_NOMEM, "import: out of memory");
        goto cleanup;
    }
    tmp[0] = '\0'; /* named once the inputs are read */

    /* Pass 1: what each input is, and when. */
    for (size_t i = 0; i < n_inputs; i++) {
        gt_import_format fmt;
        if ((rc = gt_import_detect(inputs[i], &fmt)) < 0)
            goto cleanup;
        rc = fmt == GT_IMPORT_KINETO ? im_kineto_scan(inputs[i], &scans[i]) : im_snapshot_scan(inputs[i], &scans[i]);
        if (rc < 0)
            goto cleanup;
        if (scans[i].has_time) {
            any_time = true;
            if (scans[i].min_abs_ns < t0)
                t0 = scans[i].min_abs_ns;
            wall_clock &= scans[i].wall_clock;
        }
    }
    if (!any_time)
        t0 = 0;

    /* One process per input: its own pid when it has one no other took. */
    for (size_t i = 0; i < n_inputs; i++) {
        int64_t p = scans[i].os_pid;
        bool taken = p <= 0 || p > 0xffffff;
        for (size_t j = 0; j < i && !taken; j++)
            taken = pids[j] == p;
        for (int64_t cand = 0xfff000; taken; cand++) {
            p = cand;
            taken = false;
            for (size_t j = 0; j < n_inputs && !taken; j++)
                taken = pids[j] == p || scans[j].os_pid == p;
        }
        pids[i] = p;
    }

    snprintf(tmp, tmp_bytes, "%s.import-%ld", output, (long)getpid());
    remove_partial(tmp);
    if ((rc = gt_writer_open(&w, tmp, GT_WRITE_OVERWRITE)) < 0)
        goto cleanup;
    if (any_time && wall_clock && (rc = gt_writer_set_session_start(w, t0)) < 0)
        goto cleanup;

    /* Pass 2: the rows. */
    for (size_t i = 0; i < n_inputs; i++) {
        im_out o = {w, inputs[i], t0, pids[i], 0, &gpus_added, scans[i].rank, false};
        int64_t gpid = gt_global_pid(pids[i]);
        char rank[16];
        stats[i].format = scans[i].format;
        stats[i].pid = pids[i];
        stats[i].rank = scans[i].rank;
        if ((rc = gt_writer_begin(w)) < 0)
            goto cleanup;
        rc = scans[i].format == GT_IMPORT_KINETO ? im_kineto_write(inputs[i], &scans[i], &o, &stats[i])
                                                 : im_snapshot_write(inputs[i], &scans[i], &o, &stats[i]);
        if (rc < 0)
            goto cleanup;
        if ((rc = im_name_process(&o, basename_of(inputs[i]))) < 0 ||
            (rc = gt_writer_add_config(w, gpid, "import.source", inputs[i])) < 0 ||
            (rc = gt_writer_add_config(w, gpid, "import.format",
                                       scans[i].format == GT_IMPORT_KINETO ? "kineto" : "snapshot")) < 0)
            goto cleanup;
        if (scans[i].rank >= 0) {
            snprintf(rank, sizeof rank, "%d", (int)scans[i].rank);
            if ((rc = gt_writer_add_config(w, gpid, "env.RANK", rank)) < 0)
                goto cleanup;
        }
        if ((rc = gt_writer_commit(w)) < 0)
            goto cleanup;
    }
    rc = gt_writer_close(w);
    w = NULL;
    if (rc < 0)
        goto cleanup;
    if (rename(tmp, output) != 0) {
        rc = gt_error_set(GT_ERR_IO, "%s: cannot move the trace into place: %s", output, strerror(errno));
        goto cleanup;
    }
    if (out_stats) {
        *out_stats = stats;
        stats = NULL;
    }
cleanup:
    if (rc < 0) {
        snprintf(msg, sizeof msg, "%s", gt_error_last());
        if (w)
            gt_writer_free(w);
        if (tmp && tmp[0])
            remove_partial(tmp);
        gt_error_set(rc, "%s", msg);
    }
    free(scans);
    free(stats);
    free(pids);
    free(tmp);
    return rc < 0 ? rc : 0;
}

int gt_import_snapshot_part(gt_import_stats *out_stats, const char *part, const char *pickle, int64_t pid,
                            int64_t wall_zero_ns)
{
    gt_import_stats st = {.format = GT_IMPORT_SNAPSHOT, .pid = pid, .rank = -1};
    gt_import_format fmt;
    im_scan scan;
    gt_writer *w = NULL;
    uint64_t gpus_added = 0;
    char tmp[4096], msg[1024];
    int rc;
    if (out_stats)
        *out_stats = st;
    if (!part || !pickle || pid <= 0 || pid > 0xffffff)
        return gt_error_set(GT_ERR_INVALID, "import: no part, no snapshot or a pid out of range");
    if (access(part, F_OK) == 0)
        return gt_error_set(GT_ERR_EXISTS, "%s exists", part);
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.import-%ld", part, (long)getpid()) >= sizeof tmp)
        return gt_error_set(GT_ERR_INVALID, "%s: the name is too long", part);
    if ((rc = gt_import_detect(pickle, &fmt)) < 0)
        return rc;
    if (fmt != GT_IMPORT_SNAPSHOT)
        return gt_error_set(GT_ERR_CORRUPT, "%s: not a memory snapshot (pickle)", pickle);
    if ((rc = im_snapshot_scan(pickle, &scan)) < 0)
        return rc;
    remove_partial(tmp);
    if ((rc = gt_writer_open(&w, tmp, GT_WRITE_OVERWRITE)) < 0 ||
        (rc = gt_writer_set_session_start(w, wall_zero_ns)) < 0 || (rc = gt_writer_begin(w)) < 0)
        goto cleanup;
    im_out o = {w, pickle, wall_zero_ns, pid, 0, &gpus_added, -1, false};
    if ((rc = im_snapshot_write(pickle, &scan, &o, &st)) < 0 || (rc = im_name_process(&o, basename_of(pickle))) < 0 ||
        (rc = gt_writer_add_config(w, gt_global_pid(pid), "pytorch.snapshot", basename_of(pickle))) < 0 ||
        (rc = gt_writer_commit(w)) < 0)
        goto cleanup;
    rc = gt_writer_close(w);
    w = NULL;
    if (rc < 0)
        goto cleanup;
    if (rename(tmp, part) != 0)
        rc = gt_error_set(GT_ERR_IO, "%s: cannot move the part into place: %s", part, strerror(errno));
cleanup:
    if (rc < 0) {
        snprintf(msg, sizeof msg, "%s", gt_error_last());
        if (w)
            gt_writer_free(w);
        remove_partial(tmp);
        return gt_error_set(rc, "%s", msg);
    }
    if (out_stats)
        *out_stats = st;
    return 0;
}
