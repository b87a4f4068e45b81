/* ckpt.c: safetensors checkpoints of ckpt.h, full and sharded. The header
 * is JSON written by us; loading checks it against the header this model
 * would write (same names, dtypes, shapes, offsets), so no general JSON
 * parser is needed and anything else is refused. One writer (write_file)
 * serves every kind: it takes the groups' buffers on the host or on the
 * device. */
#include "ckpt.h"

#include "error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FORMAT "gtrace-trainer-1"
#define SHARD_FORMAT "gtrace-trainer-shard-1"

typedef struct strbuf { char *s; size_t n, cap; } strbuf;

static void put(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(strbuf *b, const char *fmt, ...)
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

/* The groups of tensors saved: the weights, then the optimizer's state
 * (AdamW: m and v; SGD: its momentum buffer, if any), then the weight EMA
 * if there is one. key[g] names the state ("optimizer.<key>."), NULL for
 * the weights and the EMA. Decided by the configuration, not by pointers:
 * an empty shard has none. */
enum { MAX_GROUPS = 4 };
typedef struct groups {
    const char *key[MAX_GROUPS];
    int n;
    bool ema; /* the last group is the EMA ("ema.<name>") */
} groups;

static groups groups_of(const tr_optim_config *c, bool ema)
{
    groups g = {{NULL}, 1, ema};
    if (c->kind == TR_OPTIM_ADAMW) {
        g.key[g.n++] = "m";
        g.key[g.n++] = "v";
    } else if (c->momentum != 0.0f) {
        g.key[g.n++] = "momentum";
    }
    if (ema)
        g.key[g.n++] = NULL;
    return g;
}

static bool is_ema_group(const groups *gs, int g) { return gs->ema && g == gs->n - 1; }

/* The name prefix of group g's tensors: "", "optimizer.m.", "ema.". */
static const char *group_prefix(const groups *gs, int g, char *buf, size_t n)
{
    if (is_ema_group(gs, g))
        return "ema.";
    if (!gs->key[g])
        return "";
    snprintf(buf, n, "optimizer.%s.", gs->key[g]);
    return buf;
}

int tr_ckpt_n_optim_groups(const tr_optim_config *cfg) { return groups_of(cfg, false).n - 1; }

/* The groups' device buffers over [opt->begin, opt->end): the weights and
 * the EMA at their flat offset, the optimizer's state from its start. */
static void device_groups(const tr_gpt *m, const tr_optim *opt, const tr_ckpt_state *st, const groups *gs,
                          float **dev)
{
    dev[0] = (float *)m->params_flat.data + opt->begin;
    dev[1] = opt->m.data;
    dev[2] = opt->v.data;
    if (gs->ema)
        dev[gs->n - 1] = st->ema ? (float *)st->ema->data + opt->begin : NULL;
}

/* The full tensor table: each group in tr_gpt_params order. */
static void tensor_entries(strbuf *b, const tr_gpt *m, const groups *gs, size_t *data_bytes)
{
    size_t off = 0;
    char buf[32];
    for (int g = 0; g < gs->n; g++)
        for (int i = 0; i < TR_GPT_N_TENSORS; i++) {
            const tr_tensor *t = &m->params.all[i];
            put(b, ",\"%s%s\":{\"dtype\":\"%s\",\"shape\":[", group_prefix(gs, g, buf, sizeof buf),
                tr_gpt_tensor_names[i], tr_dtype_name(t->dtype));
            for (int d = 0; d < t->n_dims; d++)
                put(b, "%s%" PRId64, d ? "," : "", t->shape[d]);
            put(b, "],\"data_offsets\":[%zu,%zu]}", off, off + tr_tensor_bytes(t));
            off += tr_tensor_bytes(t);
        }
    *data_bytes = off;
}

/* A shard's tensor table: one 1-D tensor of n floats per group. */
static void shard_entries(strbuf *b, const groups *gs, size_t n, size_t *data_bytes)
{
    size_t off = 0, n_bytes = n * sizeof(float);
    for (int g = 0; g < gs->n; g++) {
        put(b, ",\"shard.%s%s\":{\"dtype\":\"F32\",\"shape\":[%zu],\"data_offsets\":[%zu,%zu]}",
            gs->key[g] ? "optimizer." : "params", gs->key[g] ? gs->key[g] : "", n, off, off + n_bytes);
        off += n_bytes;
    }
    *data_bytes = off;
}

static const char *optim_name(const tr_optim *opt) { return opt->cfg.kind == TR_OPTIM_ADAMW ? "adamw" : "sgd"; }

static void shape_text(char *s, size_t n, const tr_gpt *m)
{
    const tr_gpt_config *c = &m->cfg;
    snprintf(s, n, "layers=%d,width=%d,heads=%d,context=%d,vocab=%d", c->n_layers, c->channels, c->n_heads,
             c->max_seq_len, c->vocab_size);
}

/* Opens the header and its metadata (left open for the tensor table). */
static void metadata(strbuf *b, const tr_gpt *m, const tr_optim *opt, const tr_ckpt_state *st,
                     const tr_ckpt_shard *sh)
{
    char shape[160];
    shape_text(shape, sizeof shape, m);
    put(b, "{\"__metadata__\":{\"format\":\"%s\",\"shape\":\"%s\",\"optimizer\":\"%s\",\"step\":\"%" PRId64
        "\",\"optimizer_t\":\"%d\",\"seed\":\"%" PRIu64 "\"", sh ? SHARD_FORMAT : FORMAT, shape, optim_name(opt),
        st->step, opt->t, st->seed);
    if (st->loss_scale > 0)
        put(b, ",\"loss_scale\":\"%.9g\",\"loss_scale_good_steps\":\"%d\"", st->loss_scale,
            st->loss_scale_good_steps);
    if (sh)
        put(b, ",\"rank\":\"%d\",\"ranks\":\"%d\",\"zero\":\"%d\",\"begin\":\"%zu\",\"end\":\"%zu\",\"n_params\":\"%zu\"",
            sh->rank, sh->n_ranks, sh->zero, sh->begin, sh->end, m->n_params);
    put(b, "}");
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

int tr_ckpt_check_target(const char *path)
{
    char *target;
    int rc = save_target(path, &target);
    if (rc < 0)
        return rc;
    size_t n = strlen(target) + 16;
    char *probe = malloc(n);
    if (!probe) {
        free(target);
        return tr_error_set(TR_ENOMEM, "out of memory checking %s", path);
    }
    snprintf(probe, n, "%s.tmp.XXXXXX", target);
    int fd = mkstemp(probe);
    if (fd < 0) {
        rc = tr_error_set(TR_EIO, "cannot save the checkpoint %s: cannot create a file beside %s: %s", path, target,
                          strerror(errno));
    } else {
        close(fd);
        unlink(probe);
    }
    free(probe);
    free(target);
    return rc;
}

static bool on_host(const tr_backend *be) { return !be || be->device == TR_CPU; }

enum { CHUNK_BYTES = 16 << 20 }; /* device <-> file copies go through a host buffer of at most this */

/* Writes the header h (closed and padded here) and n floats of each group
 * to path atomically: a temporary file beside what path names (save_target),
 * fsync, rename, fsync of the folder. be NULL or the CPU: the groups are host
 * memory, written as they are; else device memory of be, copied through a
 * host buffer of at most CHUNK_BYTES. */
static int write_file(const char *path, strbuf *h, float *const *src, int n_groups, size_t n, tr_backend *be)
{
    put(h, "}");
    while ((8 + h->n) % 8) /* data starts 8-byte aligned, as safetensors writes it */
        put(h, " ");
    size_t n_bytes = n * sizeof(float), chunk = n_bytes < CHUNK_BYTES ? n_bytes : CHUNK_BYTES;
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
    if (!on_host(be) && chunk && !(host = malloc(chunk))) {
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
    for (int g = 0; g < n_groups && n; g++) {
        if (on_host(be)) {
            if (write_all(fd, src[g], n_bytes) < 0)
                goto io_error;
            continue;
        }
        for (size_t at = 0; at < n_bytes; at += chunk) {
            size_t k = n_bytes - at < chunk ? n_bytes - at : chunk;
            be->copy_d2h(be, host, (char *)src[g] + at, k, 0);
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

int tr_ckpt_save(const char *path, tr_gpt *m, const tr_optim *opt, const tr_ckpt_state *st)
{
    if (opt->begin != 0 || opt->end != m->n_params)
        return tr_error_set(TR_EINVAL, "%s: a full checkpoint needs the whole optimizer state, not a shard "
                            "(gather it, or save shards)", path);
    strbuf h = {0};
    size_t data_bytes;
    groups gs = groups_of(&opt->cfg, st->ema != NULL);
    float *dev[MAX_GROUPS];
    device_groups(m, opt, st, &gs, dev);
    metadata(&h, m, opt, st, NULL);
    tensor_entries(&h, m, &gs, &data_bytes);
    int rc = write_file(path, &h, dev, gs.n, m->n_params, m->be);
    free(h.s);
    return rc;
}

int tr_ckpt_save_host(const char *path, const tr_gpt *m, const tr_optim *opt, const tr_ckpt_state *st,
                      const float *const *groups_host)
{
    strbuf h = {0};
    size_t data_bytes;
    groups gs = groups_of(&opt->cfg, st->ema != NULL);
    float *src[MAX_GROUPS], *ema_host = NULL;
    for (int g = 0; g < gs.n; g++)
        src[g] = (float *)groups_host[g]; /* only read */
    if (gs.ema) { /* the EMA is whole on every rank that keeps one: rank 0's own copy */
        size_t n_bytes = m->n_params * sizeof(float);
        if (!(ema_host = malloc(n_bytes)))
            return tr_error_set(TR_ENOMEM, "out of memory saving %s", path);
        m->be->copy_d2h(m->be, ema_host, st->ema->data, n_bytes, 0);
        src[gs.n - 1] = ema_host;
    }
    metadata(&h, m, opt, st, NULL);
    tensor_entries(&h, m, &gs, &data_bytes);
    int rc = write_file(path, &h, src, gs.n, m->n_params, NULL);
    free(h.s);
    free(ema_host);
    return rc;
}

char *tr_ckpt_shard_path(const char *path, int rank, int n_ranks)
{
    size_t n = strlen(path) + 48;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s.rank%d-of-%d", path, rank, n_ranks);
    return s;
}

static int check_shard_range(const char *path, const tr_gpt *m, const tr_optim *opt, const tr_ckpt_shard *sh)
{
    if (sh->begin != opt->begin || sh->end != opt->end || sh->end > m->n_params || sh->rank < 0 ||
        sh->rank >= sh->n_ranks)
        return tr_error_set(TR_EINVAL, "%s: rank %d of %d: the shard [%zu, %zu) is not the optimizer's [%zu, %zu)",
                            path, sh->rank, sh->n_ranks, sh->begin, sh->end, opt->begin, opt->end);
    return TR_OK;
}

int tr_ckpt_save_shard(const char *path, tr_gpt *m, const tr_optim *opt, const tr_ckpt_state *st,
                       const tr_ckpt_shard *sh)
{
    int rc = check_shard_range(path, m, opt, sh);
    if (rc < 0)
        return rc;
    if (st->ema) /* every rank holds the whole EMA: a shard of it would need a gather on resume */
        return tr_error_set(TR_EINVAL, "%s: the weight EMA (--ema) is saved in full checkpoints only; "
                            "add --save-format full", path);
    char *file = tr_ckpt_shard_path(path, sh->rank, sh->n_ranks);
    if (!file)
        return tr_error_set(TR_ENOMEM, "out of memory saving %s", path);
    strbuf h = {0};
    size_t data_bytes;
    groups gs = groups_of(&opt->cfg, false);
    float *dev[MAX_GROUPS];
    device_groups(m, opt, st, &gs, dev);
    metadata(&h, m, opt, st, sh);
    shard_entries(&h, &gs, sh->end - sh->begin, &data_bytes);
    rc = write_file(file, &h, dev, gs.n, sh->end - sh->begin, m->be);
    free(h.s);
    free(file);
    return rc;
}

/* ---- loading ----------------------------------------------------------------------- */

/* The value of "key":"..." in the metadata, as a number. */
static int meta_num(const char *header, const char *key, long long *out)
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
static const char *meta_str(const char *header, const char *key, char *buf, size_t n)
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

/* An open checkpoint file whose header has been read. */
typedef struct ckfile {
    const char *path;
    FILE *f;
    char *header;
    uint64_t hlen;
    long long size;
    int open_errno; /* fopen's, when it failed */
} ckfile;

static void ck_close(ckfile *c)
{
    if (c->f)
        fclose(c->f);
    free(c->header);
    c->f = NULL;
    c->header = NULL;
}

static int ck_open(ckfile *c, const char *path)
{
    *c = (ckfile){.path = path};
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
    if (c->header[0] != '{' || (!strstr(c->header, "\"format\":\"" FORMAT "\"") &&
                                !strstr(c->header, "\"format\":\"" SHARD_FORMAT "\"")))
        return tr_error_set(TR_EFORMAT, "%s is not a checkpoint of this trainer (no \"format\":\"" FORMAT
                            "\" in its metadata)", path);
    return TR_OK;
}

static bool is_shard(const ckfile *c) { return strstr(c->header, "\"format\":\"" SHARD_FORMAT "\"") != NULL; }

/* The optimizer and the shape: the clearest reasons, checked first. */
static int check_model(const ckfile *c, const tr_gpt *m, const tr_optim *opt)
{
    char buf[160], opt_kind[48];
    snprintf(opt_kind, sizeof opt_kind, "\"optimizer\":\"%s\"", optim_name(opt));
    if (!strstr(c->header, opt_kind))
        return tr_error_set(TR_EFORMAT, "%s holds the state of another optimizer (%s); this run uses %s", c->path,
                            meta_str(c->header, "optimizer", buf, sizeof buf), optim_name(opt));
    char shape[160], shape_kv[180];
    shape_text(shape, sizeof shape, m);
    snprintf(shape_kv, sizeof shape_kv, "\"shape\":\"%s\"", shape);
    if (!strstr(c->header, shape_kv))
        return tr_error_set(TR_EFORMAT, "%s was saved from another model (%s); this one has %s", c->path,
                            meta_str(c->header, "shape", buf, sizeof buf), shape);
    return TR_OK;
}

/* The tensor table (want: the one this model and optimizer write) and the size. */
static int check_table(const ckfile *c, const char *want, size_t data_bytes)
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
static int meta_field(const ckfile *c, const char *key, long long lo, long long hi, long long *out)
{
    char buf[48];
    if (meta_num(c->header, key, out) < 0) {
        const char *v = meta_str(c->header, key, buf, sizeof buf);
        return !strcmp(v, "?") ? tr_error_set(TR_EFORMAT, "%s: the metadata has no %s", c->path, key)
                               : tr_error_set(TR_EFORMAT, "%s: the metadata's %s is '%s': expected a whole number "
                                              "from %lld to %lld", c->path, key, v, lo, hi);
    }
    if (*out < lo || *out > hi)
        return tr_error_set(TR_EFORMAT, "%s: the metadata's %s is %lld: expected %lld to %lld", c->path, key, *out,
                            lo, hi);
    return TR_OK;
}

/* The run's state in the metadata, each number checked against what the
 * trainer can run with: the step counter is an int, the optimizer has not
 * stepped more often than the run, a seed is one --seed accepts, the loss
 * scale a positive float and its good steps no more than the steps. */
static int read_state(const ckfile *c, tr_ckpt_state *st, long long *t)
{
    long long step, seed, good;
    int rc;
    if ((rc = meta_field(c, "step", 0, INT32_MAX, &step)) < 0 || (rc = meta_field(c, "optimizer_t", 0, step, t)) < 0 ||
        (rc = meta_field(c, "seed", 0, LLONG_MAX, &seed)) < 0)
        return rc;
    st->step = step;
    st->seed = (uint64_t)seed;
    st->loss_scale = 0;
    st->loss_scale_good_steps = 0;
    const char *p = strstr(c->header, "\"loss_scale\":\"");
    if (!p) /* saved without a dynamic loss scale */
        return strstr(c->header, "\"loss_scale_good_steps\":")
                   ? tr_error_set(TR_EFORMAT, "%s: the metadata has loss_scale_good_steps but no loss_scale", c->path)
                   : TR_OK;
    char *end, buf[48];
    errno = 0;
    double scale = strtod(p + 14, &end);
    if (*end != '"' || end == p + 14 || errno || !(scale > 0 && scale <= FLT_MAX))
        return tr_error_set(TR_EFORMAT, "%s: the metadata's loss_scale is '%s': expected a number above 0 and at "
                            "most %g", c->path, meta_str(c->header, "loss_scale", buf, sizeof buf), (double)FLT_MAX);
    if ((rc = meta_field(c, "loss_scale_good_steps", 0, step, &good)) < 0)
        return rc;
    st->loss_scale = scale;
    st->loss_scale_good_steps = (int)good;
    return TR_OK;
}

/* The tensor that holds element i of the flat order, and i's index in it
 * (from the shapes: the flat order is tr_gpt_params' order). */
static const char *flat_name(const tr_gpt *m, size_t i, size_t *at)
{
    for (int k = 0; k < TR_GPT_N_TENSORS; k++) {
        size_t n = (size_t)tr_tensor_numel(&m->params.all[k]);
        if (i < n) {
            *at = i;
            return tr_gpt_tensor_names[k];
        }
        i -= n;
    }
    *at = i;
    return "?";
}

/* Values no run writes: NaN or an infinity anywhere, a negative second
 * moment (AdamW's v). p holds n floats of group g from flat index flat_at. */
static int check_values(const ckfile *c, const tr_gpt *m, const groups *gs, int g, const float *p, size_t n,
                        size_t flat_at)
{
    bool nonneg = gs->key[g] && !is_ema_group(gs, g) && !strcmp(gs->key[g], "v");
    for (size_t i = 0; i < n; i++)
        if (!isfinite(p[i]) || (nonneg && p[i] < 0)) {
            char buf[32];
            size_t at;
            const char *name = flat_name(m, flat_at + i, &at);
            return tr_error_set(TR_EFORMAT, "%s: %s%s holds %g at element %zu: %s (a damaged or edited file)",
                                c->path, group_prefix(gs, g, buf, sizeof buf), name, (double)p[i], at,
                                isfinite(p[i]) ? "AdamW's second moment is never negative" : "not a finite number");
        }
    return TR_OK;
}

/* Reads elements [lo, lo + n) of group g (n_group floats each, after g
 * groups) into the device buffer dst, and checks their values (flat_at:
 * the flat index of element lo). */
static int read_group(const ckfile *c, const tr_gpt *m, const groups *gs, int g, float *dst, size_t n_group,
                      size_t lo, size_t n, size_t flat_at)
{
    if (!n)
        return TR_OK;
    tr_backend *be = m->be;
    size_t n_bytes = n * sizeof(float), chunk = n_bytes < CHUNK_BYTES ? n_bytes : CHUNK_BYTES;
    char *host = on_host(be) ? NULL : malloc(chunk); /* the CPU's memory is read into directly */
    if (!on_host(be) && !host)
        return tr_error_set(TR_ENOMEM, "out of memory loading %s", c->path);
    int rc = TR_OK;
    off_t at = (off_t)(8 + c->hlen + ((size_t)g * n_group + lo) * sizeof(float));
    if (fseeko(c->f, at, SEEK_SET) != 0)
        rc = tr_error_set(TR_EFORMAT, "%s: truncated tensor data", c->path);
    for (size_t done = 0; rc == TR_OK && done < n_bytes; done += chunk) {
        size_t k = n_bytes - done < chunk ? n_bytes - done : chunk;
        char *p = host ? host : (char *)dst + done;
        if (fread(p, 1, k, c->f) != k)
            rc = tr_error_set(TR_EFORMAT, "%s: truncated tensor data", c->path);
        else
            rc = check_values(c, m, gs, g, (const float *)p, k / sizeof(float), flat_at + done / sizeof(float));
        if (rc == TR_OK && host)
            be->copy_h2d(be, (char *)dst + done, host, k, 0);
    }
    free(host);
    return rc;
}

/* The weights and the optimizer's state over [lo, lo + n), into dev[g]. */
static int read_groups(const ckfile *c, const tr_gpt *m, float *const *dev, const groups *gs, size_t n_group,
                       size_t lo, size_t n, size_t flat_at)
{
    int rc = TR_OK;
    for (int g = 0; g < gs->n && rc == TR_OK; g++)
        if (!is_ema_group(gs, g))
            rc = read_group(c, m, gs, g, dev[g], n_group, lo, n, flat_at);
    return rc;
}

/* After a load: the state read_state took from the file (st) goes live. */
static void set_state(tr_gpt *m, tr_optim *opt, tr_ckpt_state *st, const tr_ckpt_state *read, long long t)
{
    m->params_lp_stale = true;
    opt->t = (int)t;
    st->ema_loaded = false;
    st->step = read->step;
    st->seed = read->seed;
    /* the loss scaler's state, if the run that saved it had one (GradScaler.state_dict) */
    st->loss_scale = read->loss_scale;
    st->loss_scale_good_steps = read->loss_scale_good_steps;
}

int tr_ckpt_load(const char *path, tr_gpt *m, tr_optim *opt, tr_ckpt_state *st)
{
    if (opt->begin > opt->end || opt->end > m->n_params)
        return tr_error_set(TR_EINVAL, "%s: the optimizer's range is outside the model", path);
    ckfile c;
    strbuf want = {0};
    char ema_key[80];
    size_t data_bytes;
    groups gs;
    long long t;
    tr_ckpt_state read = {0};
    float *dev[MAX_GROUPS];
    int rc = ck_open(&c, path);
    if (rc < 0) {
        tr_ckpt_kind kind;
        int n_ranks;
        if (c.open_errno == ENOENT && tr_ckpt_locate(path, &kind, &n_ranks) == TR_OK && kind == TR_CKPT_SHARDED)
            rc = tr_error_set(TR_EIO, "%s does not exist, but %s.rank0-of-%d does: it is a sharded checkpoint; "
                              "resume it with mpirun -np %d trainer --dist fsdp, or gather it into one file there "
                              "with --save-format full", path, path, n_ranks, n_ranks);
        goto cleanup;
    }
    if (is_shard(&c)) {
        long long r = -1, n = -1;
        meta_num(c.header, "rank", &r);
        meta_num(c.header, "ranks", &n);
        rc = tr_error_set(TR_EFORMAT, "%s is one rank's file of a sharded checkpoint (rank %lld of %lld), not a "
                          "full one: resume from the name without .rank<r>-of-<N> with --dist fsdp on %lld ranks",
                          path, r, n, n);
        goto cleanup;
    }
    /* the table this model and optimizer write, with an EMA if the file has one (a run without --ema
     * resumes from a file with one and ignores it; one with --ema from a file without starts it afresh) */
    snprintf(ema_key, sizeof ema_key, "\"ema.%s\":", tr_gpt_tensor_names[0]);
    gs = groups_of(&opt->cfg, strstr(c.header, ema_key) != NULL);
    tensor_entries(&want, m, &gs, &data_bytes);
    if ((rc = check_model(&c, m, opt)) < 0 || (rc = check_table(&c, want.s, data_bytes)) < 0 ||
        (rc = read_state(&c, &read, &t)) < 0)
        goto cleanup;
    device_groups(m, opt, st, &gs, dev);
    if ((rc = read_groups(&c, m, dev, &gs, m->n_params, opt->begin, opt->end - opt->begin, opt->begin)) < 0)
        goto cleanup;
    /* whoever keeps an EMA keeps all of it (ZeRO-3 refuses --ema): read it whole */
    if (gs.ema && st->ema &&
        (rc = read_group(&c, m, &gs, gs.n - 1, st->ema->data, m->n_params, 0, m->n_params, 0)) < 0)
        goto cleanup;
    set_state(m, opt, st, &read, t);
    st->ema_loaded = gs.ema && st->ema;
cleanup:
    ck_close(&c);
    free(want.s);
    return rc;
}

int tr_ckpt_load_shard(const char *path, tr_gpt *m, tr_optim *opt, tr_ckpt_state *st, const tr_ckpt_shard *sh)
{
    int rc = check_shard_range(path, m, opt, sh);
    if (rc < 0)
        return rc;
    char *file = tr_ckpt_shard_path(path, sh->rank, sh->n_ranks);
    if (!file)
        return tr_error_set(TR_ENOMEM, "out of memory loading %s", path);
    ckfile c;
    strbuf want = {0};
    long long r, n, b, e, np, t;
    size_t data_bytes, n_shard = sh->end - sh->begin;
    groups gs = groups_of(&opt->cfg, false);
    tr_ckpt_state read = {0};
    float *dev[MAX_GROUPS];
    if ((rc = ck_open(&c, file)) < 0) {
        tr_ckpt_kind kind;
        int n_ranks;
        if (c.open_errno == ENOENT) {
            if (tr_ckpt_locate(path, &kind, &n_ranks) == TR_OK && kind == TR_CKPT_SHARDED && n_ranks != sh->n_ranks)
                rc = tr_error_set(TR_EIO, "%s is missing: the checkpoint %s was saved by %d ranks (%s.rank0-of-%d), "
                                  "this job has %d; resume on %d ranks, or gather it there with --save-format full "
                                  "and resume from that file on any number", file, path, n_ranks, path, n_ranks,
                                  sh->n_ranks, n_ranks);
            else
                rc = tr_error_set(TR_EIO, "the shard %s is missing: a sharded checkpoint of %d ranks needs all of "
                                  "%s.rank0-of-%d to %s.rank%d-of-%d", file, sh->n_ranks, path, sh->n_ranks, path,
                                  sh->n_ranks - 1, sh->n_ranks);
        }
        goto cleanup;
    }
    if (!is_shard(&c)) {
        rc = tr_error_set(TR_EFORMAT, "%s is a full checkpoint, not one rank's shard", file);
        goto cleanup;
    }
    if (meta_num(c.header, "rank", &r) < 0 || meta_num(c.header, "ranks", &n) < 0 ||
        meta_num(c.header, "begin", &b) < 0 || meta_num(c.header, "end", &e) < 0 ||
        meta_num(c.header, "n_params", &np) < 0) {
        rc = tr_error_set(TR_EFORMAT, "%s: the metadata lacks rank, ranks, begin, end or n_params", file);
        goto cleanup;
    }
    shard_entries(&want, &gs, n_shard, &data_bytes);
    if ((rc = check_model(&c, m, opt)) < 0)
        goto cleanup;
    if (r != sh->rank || n != sh->n_ranks) {
        rc = tr_error_set(TR_EFORMAT, "%s holds rank %lld of %lld ranks; this is rank %d of %d (renamed files?)", file,
                          r, n, sh->rank, sh->n_ranks);
        goto cleanup;
    }
    if (np != (long long)m->n_params || b != (long long)sh->begin || e != (long long)sh->end) {
        rc = tr_error_set(TR_EFORMAT, "%s holds elements [%lld, %lld) of %lld parameters; this rank's shard is "
                          "[%zu, %zu) of %zu (saved by a build that shards differently)", file, b, e, np, sh->begin,
                          sh->end, m->n_params);
        goto cleanup;
    }
    if ((rc = check_table(&c, want.s, data_bytes)) < 0 || (rc = read_state(&c, &read, &t)) < 0)
        goto cleanup;
    device_groups(m, opt, st, &gs, dev);
    if ((rc = read_groups(&c, m, dev, &gs, n_shard, 0, n_shard, sh->begin)) < 0)
        goto cleanup;
    set_state(m, opt, st, &read, t);
cleanup:
    ck_close(&c);
    free(want.s);
    free(file);
    return rc;
}

/* ---- what a path names ----------------------------------------------------------- */

/* Calls fn on each file "<path>.rank<r>-of-<N>" beside path (its full
 * name, r, N). Temporary files beside one do not match. */
typedef void (*shard_fn)(void *ctx, const char *file, int rank, int n_ranks);
static int for_each_shard_file(const char *path, shard_fn fn, void *ctx)
{
    char *d = strdup(path), *b = strdup(path);
    if (!d || !b) {
        free(d);
        free(b);
        return tr_error_set(TR_ENOMEM, "out of memory looking for %s", path);
    }
    const char *base = basename(b), *dname = dirname(d);
    size_t base_n = strlen(base);
    DIR *dir = opendir(dname);
    for (struct dirent *e; dir && (e = readdir(dir));) {
        int r, n, used = 0;
        if (strncmp(e->d_name, base, base_n) != 0 || strncmp(e->d_name + base_n, ".rank", 5) != 0)
            continue;
        if (sscanf(e->d_name + base_n, ".rank%d-of-%d%n", &r, &n, &used) != 2 || e->d_name[base_n + used] ||
            n < 1 || r < 0 || r >= n)
            continue;
        size_t n_file = strlen(dname) + strlen(e->d_name) + 2;
        char *file = malloc(n_file);
        if (file) {
            snprintf(file, n_file, "%s/%s", dname, e->d_name);
            fn(ctx, file, r, n);
            free(file);
        }
    }
    if (dir)
        closedir(dir);
    free(d);
    free(b);
    return TR_OK;
}

typedef struct counts { int lo, hi; } counts;

static void note_count(void *ctx, const char *file, int rank, int n_ranks)
{
    counts *c = ctx;
    (void)file;
    (void)rank;
    c->lo = !c->lo || n_ranks < c->lo ? n_ranks : c->lo;
    c->hi = n_ranks > c->hi ? n_ranks : c->hi;
}

int tr_ckpt_locate(const char *path, tr_ckpt_kind *kind, int *n_ranks)
{
    *kind = TR_CKPT_NONE;
    *n_ranks = 0;
    struct stat sb;
    bool full = stat(path, &sb) == 0;
    counts c = {0, 0};
    int rc = for_each_shard_file(path, note_count, &c);
    if (rc < 0)
        return rc;
    *n_ranks = c.lo;
    if (c.lo != c.hi)
        return tr_error_set(TR_EFORMAT, "%s: sharded files of different rank counts lie beside it (%s.rank0-of-%d "
                            "and of %d): remove the stale ones", path, path, c.lo, c.hi);
    if (full && c.lo)
        return tr_error_set(TR_EFORMAT, "both a full checkpoint %s and sharded files %s.rank<r>-of-%d exist; which "
                            "is newer cannot be told: remove one of them", path, path, c.lo);
    *kind = full ? TR_CKPT_FULL : c.lo ? TR_CKPT_SHARDED : TR_CKPT_NONE;
    return TR_OK;
}

typedef struct stale { int keep_n_ranks, n_removed; } stale;

static void remove_stale(void *ctx, const char *file, int rank, int n_ranks)
{
    stale *s = ctx;
    (void)rank;
    struct stat sb; /* only what a save wrote: a regular file */
    if (n_ranks != s->keep_n_ranks && lstat(file, &sb) == 0 && S_ISREG(sb.st_mode) && unlink(file) == 0)
        s->n_removed++;
}

int tr_ckpt_remove_stale(const char *path, tr_ckpt_kind kept, int n_ranks)
{
    stale s = {kept == TR_CKPT_SHARDED ? n_ranks : 0, 0};
    int rc = for_each_shard_file(path, remove_stale, &s);
    if (rc < 0)
        return rc;
    struct stat sb;
    if (kept == TR_CKPT_SHARDED && lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) && unlink(path) == 0)
        s.n_removed++;
    return s.n_removed;
}
