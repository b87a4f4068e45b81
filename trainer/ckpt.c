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
#include <inttypes.h>
#include <libgen.h>
#include <math.h>
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

/* Writes the header h (closed and padded here) and n floats of each group
 * to path atomically. be NULL: the groups are host memory; else device
 * memory of be, copied through one host buffer. */
static int write_file(const char *path, strbuf *h, float *const *src, int n_groups, size_t n, tr_backend *be)
{
    int rc = TR_OK;
    put(h, "}");
    while ((8 + h->n) % 8) /* data starts 8-byte aligned, as safetensors writes it */
        put(h, " ");
    size_t tmp_n = strlen(path) + 16, n_bytes = n * sizeof(float);
    char *tmp = malloc(tmp_n);
    float *host = be && n ? malloc(n_bytes) : NULL;
    int fd = -1;
    if (!tmp || (be && n && !host)) {
        rc = tr_error_set(TR_ENOMEM, "out of memory saving %s", path);
        goto cleanup;
    }
    snprintf(tmp, tmp_n, "%s.tmp.XXXXXX", path);
    if ((fd = mkstemp(tmp)) < 0) {
        rc = tr_error_set(TR_EIO, "cannot create a temporary file beside %s: %s", path, strerror(errno));
        goto cleanup;
    }
    uint64_t hlen = h->n; /* little-endian on every machine we build for */
    if (write_all(fd, &hlen, 8) < 0 || write_all(fd, h->s, h->n) < 0)
        goto io_error;
    for (int g = 0; g < n_groups && n; g++) {
        const float *p = src[g];
        if (be) {
            be->copy_d2h(be, host, src[g], n_bytes, 0);
            p = host;
        }
        if (write_all(fd, p, n_bytes) < 0)
            goto io_error;
    }
    if (fsync(fd) != 0)
        goto io_error;
    close(fd);
    fd = -1;
    if (rename(tmp, path) != 0)
        goto io_error;
    char *dir = strdup(path); /* make the rename itself durable */
    if (dir) {
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
    unlink(tmp);
cleanup:
    if (fd >= 0)
        close(fd);
    free(tmp);
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
    char *end;
    errno = 0;
    *out = strtoll(p + strlen(pat), &end, 10);
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
    if (!(c->f = fopen(path, "rb"))) {
        c->open_errno = errno;
        return tr_error_set(TR_EIO, "cannot open the checkpoint %s: %s", path, strerror(errno));
    }
    if (fstat(fileno(c->f), &sb) != 0 || sb.st_size < 8 || fread(&c->hlen, 8, 1, c->f) != 1 ||
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

static int read_state(const ckfile *c, long long *step, long long *t, long long *seed)
{
    if (meta_num(c->header, "step", step) < 0 || meta_num(c->header, "optimizer_t", t) < 0 ||
        meta_num(c->header, "seed", seed) < 0 || *step < 0 || *t < 0 || *t > INT32_MAX)
        return tr_error_set(TR_EFORMAT, "%s: the metadata lacks step, optimizer_t or seed", c->path);
    return TR_OK;
}

/* Reads elements [lo, lo + n) of group g (n_group floats each, after g
 * groups) into the device buffer dst. */
static int read_group(const ckfile *c, tr_backend *be, float *dst, int g, size_t n_group, size_t lo, size_t n)
{
    if (!n)
        return TR_OK;
    float *host = malloc(n * sizeof(float));
    if (!host)
        return tr_error_set(TR_ENOMEM, "out of memory loading %s", c->path);
    int rc = TR_OK;
    off_t at = (off_t)(8 + c->hlen + ((size_t)g * n_group + lo) * sizeof(float));
    if (fseeko(c->f, at, SEEK_SET) != 0 || fread(host, sizeof(float), n, c->f) != n)
        rc = tr_error_set(TR_EFORMAT, "%s: truncated tensor data", c->path);
    else
        be->copy_h2d(be, dst, host, n * sizeof(float), 0);
    free(host);
    return rc;
}

/* The weights and the optimizer's state over [lo, lo + n), into dev[g]. */
static int read_groups(const ckfile *c, tr_backend *be, float *const *dev, const groups *gs, size_t n_group,
                       size_t lo, size_t n)
{
    int rc = TR_OK;
    for (int g = 0; g < gs->n && rc == TR_OK; g++)
        if (!is_ema_group(gs, g))
            rc = read_group(c, be, dev[g], g, n_group, lo, n);
    return rc;
}

static void set_state(const ckfile *c, tr_gpt *m, tr_optim *opt, tr_ckpt_state *st, long long step, long long t,
                      long long seed)
{
    m->params_lp_stale = true;
    opt->t = (int)t;
    st->ema_loaded = false;
    st->step = step;
    st->seed = (uint64_t)seed;
    /* the loss scaler's state, if the run that saved it had one (GradScaler.state_dict) */
    st->loss_scale = 0;
    st->loss_scale_good_steps = 0;
    const char *p = strstr(c->header, "\"loss_scale\":\"");
    long long good;
    if (p) {
        char *end;
        double s = strtod(p + 14, &end);
        if (*end == '"' && isfinite(s) && s > 0 && meta_num(c->header, "loss_scale_good_steps", &good) == 0 &&
            good >= 0 && good <= INT32_MAX) {
            st->loss_scale = s;
            st->loss_scale_good_steps = (int)good;
        }
    }
}

int tr_ckpt_load(const char *path, tr_gpt *m, tr_optim *opt, tr_ckpt_state *st)
{
    if (opt->begin > opt->end || opt->end > m->n_params)
        return tr_error_set(TR_EINVAL, "%s: the optimizer's range is outside the model", path);
    ckfile c;
    strbuf want = {0};
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
    char ema_key[80];
    snprintf(ema_key, sizeof ema_key, "\"ema.%s\":", tr_gpt_tensor_names[0]);
    size_t data_bytes;
    groups gs = groups_of(&opt->cfg, strstr(c.header, ema_key) != NULL);
    tensor_entries(&want, m, &gs, &data_bytes);
    long long step, t, seed;
    if ((rc = check_model(&c, m, opt)) < 0 || (rc = check_table(&c, want.s, data_bytes)) < 0 ||
        (rc = read_state(&c, &step, &t, &seed)) < 0)
        goto cleanup;
    float *dev[MAX_GROUPS];
    device_groups(m, opt, st, &gs, dev);
    if ((rc = read_groups(&c, m->be, dev, &gs, m->n_params, opt->begin, opt->end - opt->begin)) < 0)
        goto cleanup;
    /* whoever keeps an EMA keeps all of it (ZeRO-3 refuses --ema): read it whole */
    if (gs.ema && st->ema && (rc = read_group(&c, m->be, st->ema->data, gs.n - 1, m->n_params, 0, m->n_params)) < 0)
        goto cleanup;
    set_state(&c, m, opt, st, step, t, seed);
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
    long long r, n, b, e, np;
    if (meta_num(c.header, "rank", &r) < 0 || meta_num(c.header, "ranks", &n) < 0 ||
        meta_num(c.header, "begin", &b) < 0 || meta_num(c.header, "end", &e) < 0 ||
        meta_num(c.header, "n_params", &np) < 0) {
        rc = tr_error_set(TR_EFORMAT, "%s: the metadata lacks rank, ranks, begin, end or n_params", file);
        goto cleanup;
    }
    size_t data_bytes, n_shard = sh->end - sh->begin;
    groups gs = groups_of(&opt->cfg, false);
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
    long long step, t, seed;
    if ((rc = check_table(&c, want.s, data_bytes)) < 0 || (rc = read_state(&c, &step, &t, &seed)) < 0)
        goto cleanup;
    float *dev[MAX_GROUPS];
    device_groups(m, opt, st, &gs, dev);
    if ((rc = read_groups(&c, m->be, dev, &gs, n_shard, 0, n_shard)) < 0)
        goto cleanup;
    set_state(&c, m, opt, st, step, t, seed);
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
    if (n_ranks != s->keep_n_ranks && unlink(file) == 0)
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
