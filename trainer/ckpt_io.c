/* ckpt_io.c: ckpt_io.h's model-independent checkpoint file handling: the
 * header text, the atomic write, and on loading the file's header, its
 * metadata fields and tensor data. */
#include "ckpt_io.h"

#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

void tr_ckpt_put(tr_ckpt_buf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (b->s && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = (b->cap + (size_t)k + 1) * 2;
        char *s = realloc(b->s, cap);
        if (!s)
            abort(); /* a few KB of header */
        b->s = s;
        b->cap = cap;
    }
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* ---- where a save writes, and what an interrupted one leaves ------------------------ */

static const char *kind_of(mode_t mode)
{
    return S_ISDIR(mode) ? "a folder" : S_ISFIFO(mode) ? "a FIFO" : S_ISCHR(mode) ? "a character device"
         : S_ISBLK(mode) ? "a block device" : S_ISSOCK(mode) ? "a socket" : "not a regular file";
}

/* The file a save to path replaces: path, or the regular file a symbolic
 * link there names (the link stays). Anything else already there (a
 * device, a FIFO, a folder, a link to one, a dangling link) is refused:
 * a save replaces a regular file or creates one, nothing more. */
static int save_target(const char *path, char **out)
{
    *out = NULL;
    struct stat sb;
    char *target = NULL;
    if (!*path)
        return tr_error_set(TR_EINVAL, "cannot save a checkpoint to an empty path");
    if (lstat(path, &sb) != 0) {
        if (errno != ENOENT)
            return tr_error_set(TR_EIO, "cannot save the checkpoint %s: %s", path, strerror(errno));
        target = strdup(path);
    } else if (S_ISREG(sb.st_mode)) {
        target = strdup(path);
    } else if (S_ISLNK(sb.st_mode)) {
        if (!(target = realpath(path, NULL)))
            return tr_error_set(TR_EIO, "cannot save the checkpoint %s: it is a symbolic link to nothing (%s); "
                                "a save replaces only a regular file", path, strerror(errno));
        if (stat(target, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            int rc = tr_error_set(TR_EIO, "cannot save the checkpoint %s: it is a symbolic link to %s, which is %s; "
                                  "a save replaces only a regular file", path, target, kind_of(sb.st_mode));
            free(target);
            return rc;
        }
    } else {
        return tr_error_set(TR_EIO, "cannot save the checkpoint %s: it is %s; a save replaces only a regular "
                            "file (choose another path)", path, kind_of(sb.st_mode));
    }
    if (!target)
        return tr_error_set(TR_ENOMEM, "out of memory saving %s", path);
    *out = target;
    return TR_OK;
}

/* The temporary file of the save in progress, removed by a signal that
 * ends the process during it (the handler runs on any thread: only
 * async-signal-safe calls). One save at a time per process. */
static char tmp_name[PATH_MAX + 16];
static volatile sig_atomic_t tmp_armed;
static const int end_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
enum { N_END_SIGNALS = sizeof end_signals / sizeof end_signals[0] };
static struct sigaction saved_actions[N_END_SIGNALS], saved_xfsz;

static void on_end_signal(int sig)
{
    if (tmp_armed)
        unlink(tmp_name);
    tmp_armed = 0;
    /* what the program did before, then the signal again: it ends as it would have (pending until return) */
    for (int i = 0; i < N_END_SIGNALS; i++)
        if (end_signals[i] == sig)
            sigaction(sig, &saved_actions[i], NULL);
    raise(sig);
}

/* Signals that end the process remove the temporary file first; a signal
 * the process ignores stays ignored. SIGXFSZ (a file-size limit) is ignored
 * during the save, so the write fails with EFBIG and the save says so. */
static void arm_cleanup(void)
{
    struct sigaction sa = {.sa_handler = on_end_signal};
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < N_END_SIGNALS; i++) {
        sigaction(end_signals[i], NULL, &saved_actions[i]);
        if (saved_actions[i].sa_handler != SIG_IGN)
            sigaction(end_signals[i], &sa, NULL);
    }
    struct sigaction ign = {.sa_handler = SIG_IGN};
    sigemptyset(&ign.sa_mask);
    sigaction(SIGXFSZ, &ign, &saved_xfsz);
}

static void disarm_cleanup(void)
{
    tmp_armed = 0;
    for (int i = 0; i < N_END_SIGNALS; i++)
        if (saved_actions[i].sa_handler != SIG_IGN)
            sigaction(end_signals[i], &saved_actions[i], NULL);
    sigaction(SIGXFSZ, &saved_xfsz, NULL);
}

/* The probe is a temporary file as a save makes one, removed as its file
 * is by a signal that ends the process meanwhile. */
int tr_ckpt_check_target(const char *path)
{
    char *target;
    int rc = save_target(path, &target);
    if (rc < 0)
        return rc;
    if (strlen(target) + 12 > PATH_MAX) {
        rc = tr_error_set(TR_EIO, "cannot save the checkpoint %s: the path is too long", path);
        free(target);
        return rc;
    }
    snprintf(tmp_name, sizeof tmp_name, "%s.tmp.XXXXXX", target);
    arm_cleanup();
    tmp_armed = 1;
    int fd = mkstemp(tmp_name);
    if (fd < 0) {
        tmp_armed = 0;
        rc = tr_error_set(TR_EIO, "cannot save the checkpoint %s: cannot create a file beside %s: %s", path, target,
                          strerror(errno));
    } else {
        close(fd);
        unlink(tmp_name);
    }
    disarm_cleanup();
    free(target);
    return rc;
}

bool tr_ckpt_on_host(const tr_backend *be) { return !be || be->device == TR_CPU; }


/* A temporary file beside what path names (save_target), fsync, rename,
 * fsync of the folder. Device blobs go through a host buffer of at most
 * TR_CKPT_CHUNK_BYTES (the largest blob's size, if less). */
int tr_ckpt_write(const char *path, tr_ckpt_buf *h, const tr_ckpt_blob *blobs, int n_blobs, tr_backend *be)
{
    size_t n_bytes = 0;
    for (int i = 0; i < n_blobs; i++)
        n_bytes = blobs[i].n_bytes > n_bytes ? blobs[i].n_bytes : n_bytes;
    tr_ckpt_put(h, "}");
    while ((8 + h->n) % 8) /* data starts 8-byte aligned, as safetensors writes it */
        tr_ckpt_put(h, " ");
    size_t chunk = n_bytes < TR_CKPT_CHUNK_BYTES ? n_bytes : TR_CKPT_CHUNK_BYTES;
    char *target = NULL;
    float *host = NULL;
    int fd = -1, rc = save_target(path, &target);
    bool armed = false;
    struct stat sb;
    char *dir = NULL;
    uint64_t hlen = h->n; /* little-endian on every machine we build for */
    if (rc < 0)
        return rc;
    if (strlen(target) + 12 > PATH_MAX) {
        rc = tr_error_set(TR_EIO, "cannot save the checkpoint %s: the path is too long", path);
        goto cleanup;
    }
    if (!tr_ckpt_on_host(be) && chunk && !(host = malloc(chunk))) {
        rc = tr_error_set(TR_ENOMEM, "out of memory saving %s", path);
        goto cleanup;
    }
    snprintf(tmp_name, sizeof tmp_name, "%s.tmp.XXXXXX", target);
    arm_cleanup();
    armed = true;
    tmp_armed = 1; /* before mkstemp: the name is complete in tmp_name once the file exists */
    if ((fd = mkstemp(tmp_name)) < 0) {
        tmp_armed = 0;
        rc = tr_error_set(TR_EIO, "cannot create a temporary file beside %s: %s", target, strerror(errno));
        goto cleanup;
    }
    if (write_all(fd, &hlen, 8) < 0 || write_all(fd, h->s, h->n) < 0)
        goto io_error;
    for (int g = 0; g < n_blobs; g++) {
        size_t nb = blobs[g].n_bytes;
        if (nb && tr_ckpt_on_host(be)) {
            if (write_all(fd, blobs[g].p, nb) < 0)
                goto io_error;
            continue;
        }
        for (size_t at = 0; at < nb; at += chunk) {
            size_t k = nb - at < chunk ? nb - at : chunk;
            be->copy_d2h(be, host, (const char *)blobs[g].p + at, k, 0);
            if (write_all(fd, host, k) < 0)
                goto io_error;
        }
    }
    if (fsync(fd) != 0)
        goto io_error;
    if (close(fd) != 0) {
        fd = -1;
        goto io_error;
    }
    fd = -1;
    /* what is there now may have changed since the start: still nothing but a regular file is replaced */
    if (lstat(target, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        rc = tr_error_set(TR_EIO, "cannot save the checkpoint %s: %s became %s during the save; it is left as it is",
                          path, target, kind_of(sb.st_mode));
        unlink(tmp_name);
        goto cleanup;
    }
    if (rename(tmp_name, target) != 0)
        goto io_error;
    tmp_armed = 0;
    if ((dir = strdup(target))) { /* make the rename itself durable */
        int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
        free(dir);
    }
    goto cleanup;
io_error:
    rc = tr_error_set(TR_EIO, "cannot write the checkpoint %s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    fd = -1;
    unlink(tmp_name);
cleanup:
    if (fd >= 0)
        close(fd);
    if (armed)
        disarm_cleanup();
    free(target);
    free(host);
    return rc;
}

/* The value of "key":"..." in the metadata, as a number. */
int tr_ckpt_meta_num(const char *header, const char *key, long long *out)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(header, pat);
    if (!p)
        return -1;
    p += strlen(pat);
    if (!(*p == '-' || (*p >= '0' && *p <= '9'))) /* strtoll would take spaces and a '+' */
        return -1;
    char *end;
    errno = 0;
    *out = strtoll(p, &end, 10);
    return *end == '"' && !errno ? 0 : -1;
}

/* The text of "key":"..." in the metadata, for messages ("?" if absent). */
const char *tr_ckpt_meta_str(const char *header, const char *key, char *buf, size_t n)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(header, pat), *e = p ? strchr(p + strlen(pat), '"') : NULL;
    if (!e)
        return "?";
    p += strlen(pat);
    snprintf(buf, n, "%.*s", (int)(e - p < (ptrdiff_t)n ? e - p : (ptrdiff_t)n - 1), p);
    return buf;
}


void tr_ckpt_close(tr_ckpt_file *c)
{
    if (c->f)
        fclose(c->f);
    free(c->header);
    c->f = NULL;
    c->header = NULL;
}

int tr_ckpt_open(tr_ckpt_file *c, const char *path)
{
    *c = (tr_ckpt_file){.path = path};
    struct stat sb;
    /* without blocking, and checked on the descriptor: a FIFO or a device is refused, never waited on */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        c->open_errno = errno;
        return tr_error_set(TR_EIO, "cannot open the checkpoint %s: %s", path, strerror(errno));
    }
    int rc = TR_OK;
    if (fstat(fd, &sb) != 0)
        rc = tr_error_set(TR_EIO, "cannot read the checkpoint %s: %s", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        rc = tr_error_set(TR_EIO, "cannot read the checkpoint %s: it is %s, not a regular file", path,
                          kind_of(sb.st_mode));
    if (rc < 0) {
        close(fd);
        return rc;
    }
    if (!(c->f = fdopen(fd, "rb"))) {
        close(fd);
        return tr_error_set(TR_ENOMEM, "out of memory opening %s", path);
    }
    if (sb.st_size < 8 || fread(&c->hlen, 8, 1, c->f) != 1 ||
        c->hlen > (uint64_t)sb.st_size - 8 || c->hlen > (64u << 20))
        return tr_error_set(TR_EFORMAT, "%s is not a safetensors file (no valid header length)", path);
    c->size = (long long)sb.st_size;
    if (!(c->header = malloc(c->hlen + 1)) || fread(c->header, 1, c->hlen, c->f) != c->hlen)
        return tr_error_set(TR_EFORMAT, "%s: truncated header", path);
    c->header[c->hlen] = 0;
    if (c->header[0] != '{' || !strstr(c->header, "\"format\":\"gtrace-trainer-"))
        return tr_error_set(TR_EFORMAT, "%s is not a checkpoint of this trainer (no \"format\":\"gtrace-trainer-...\" "
                            "in its metadata)", path);
    return TR_OK;
}

bool tr_ckpt_has_format(const tr_ckpt_file *c, const char *format)
{
    char kv[96];
    snprintf(kv, sizeof kv, "\"format\":\"%s\"", format);
    return strstr(c->header, kv) != NULL;
}

/* The tensor table (want: the one this model and optimizer write) and the size. */
int tr_ckpt_check_table(const tr_ckpt_file *c, const char *want, size_t data_bytes)
{
    if (!strstr(c->header, want))
        return tr_error_set(TR_EFORMAT, "%s: the tensor table is not the one this model and optimizer write "
                            "(another optimizer setting, or a damaged header)", c->path);
    if ((uint64_t)c->size != 8 + c->hlen + data_bytes)
        return tr_error_set(TR_EFORMAT, "%s is truncated or padded: %lld bytes, expected %llu", c->path, c->size,
                            (unsigned long long)(8 + c->hlen + data_bytes));
    return TR_OK;
}

/* One whole number of the metadata in [lo, hi], or an error naming the file
 * and the field. */
int tr_ckpt_meta_field(const tr_ckpt_file *c, const char *key, long long lo, long long hi, long long *out)
{
    char buf[48];
    if (tr_ckpt_meta_num(c->header, key, out) < 0) {
        const char *v = tr_ckpt_meta_str(c->header, key, buf, sizeof buf);
        return !strcmp(v, "?") ? tr_error_set(TR_EFORMAT, "%s: the metadata has no %s", c->path, key)
                               : tr_error_set(TR_EFORMAT, "%s: the metadata's %s is '%s': expected a whole number "
                                              "from %lld to %lld", c->path, key, v, lo, hi);
    }
    if (*out < lo || *out > hi)
        return tr_error_set(TR_EFORMAT, "%s: the metadata's %s is %lld: expected %lld to %lld", c->path, key, *out,
                            lo, hi);
    return TR_OK;
}

int tr_ckpt_read(const tr_ckpt_file *c, uint64_t data_off, void *dst, size_t n_bytes, tr_backend *be,
                 tr_ckpt_check_fn check, void *ctx)
{
    if (!n_bytes)
        return TR_OK;
    size_t chunk = n_bytes < TR_CKPT_CHUNK_BYTES ? n_bytes : TR_CKPT_CHUNK_BYTES;
    char *host = tr_ckpt_on_host(be) ? NULL : malloc(chunk); /* the CPU's memory is read into directly */
    if (!tr_ckpt_on_host(be) && !host)
        return tr_error_set(TR_ENOMEM, "out of memory loading %s", c->path);
    int rc = TR_OK;
    if (fseeko(c->f, (off_t)(8 + c->hlen + data_off), SEEK_SET) != 0)
        rc = tr_error_set(TR_EFORMAT, "%s: truncated tensor data", c->path);
    for (size_t done = 0; rc == TR_OK && done < n_bytes; done += chunk) {
        size_t k = n_bytes - done < chunk ? n_bytes - done : chunk;
        char *p = host ? host : (char *)dst + done;
        if (fread(p, 1, k, c->f) != k)
            rc = tr_error_set(TR_EFORMAT, "%s: truncated tensor data", c->path);
        else if (check)
            rc = check(ctx, p, k, done);
        if (rc == TR_OK && host)
            be->copy_h2d(be, (char *)dst + done, host, k, 0);
    }
    free(host);
    return rc;
}

int tr_ckpt_meta_loss_scale(const tr_ckpt_file *c, long long max_good, double *scale, int *good)
{
    *scale = 0;
    *good = 0;
    const char *p = strstr(c->header, "\"loss_scale\":\"");
    if (!p) /* saved without a dynamic loss scale */
        return strstr(c->header, "\"loss_scale_good_steps\":")
                   ? tr_error_set(TR_EFORMAT, "%s: the metadata has loss_scale_good_steps but no loss_scale", c->path)
                   : TR_OK;
    char *end, buf[48];
    errno = 0;
    double s = strtod(p + 14, &end);
    if (*end != '"' || end == p + 14 || errno || !(s > 0 && s <= FLT_MAX))
        return tr_error_set(TR_EFORMAT, "%s: the metadata's loss_scale is '%s': expected a number above 0 and at "
                            "most %g", c->path, tr_ckpt_meta_str(c->header, "loss_scale", buf, sizeof buf), (double)FLT_MAX);
    long long g;
    int rc = tr_ckpt_meta_field(c, "loss_scale_good_steps", 0, max_good, &g);
    if (rc < 0)
        return rc;
    *scale = s;
    *good = (int)g;
    return TR_OK;
}
