/* ckpt.c: safetensors checkpoints of ckpt.h. The header is JSON written by
 * us; loading checks it against the header this model would write (same
 * names, dtypes, shapes, offsets), so no general JSON parser is needed and
 * anything else is refused. */
#include "ckpt.h"

#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FORMAT "gtrace-trainer-1"

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
 * (AdamW: m and v; SGD: its momentum buffer, if any). */
typedef struct groups {
    const char *prefix[3];
    void *buf[3];
    int n;
} groups;

static groups groups_of(const tr_gpt *m, const tr_optim *opt)
{
    groups g = {{""}, {m->params_flat.data}, 1};
    bool adamw = opt->cfg.kind == TR_OPTIM_ADAMW;
    if (opt->m.data) {
        g.prefix[g.n] = adamw ? "optimizer.m." : "optimizer.momentum.";
        g.buf[g.n++] = opt->m.data;
    }
    if (opt->v.data) {
        g.prefix[g.n] = "optimizer.v.";
        g.buf[g.n++] = opt->v.data;
    }
    return g;
}

/* The tensor table: each group in tr_gpt_params order. */
static void tensor_entries(strbuf *b, const tr_gpt *m, const groups *gs, size_t *data_bytes)
{
    const char *const *prefix = gs->prefix;
    size_t off = 0;
    for (int g = 0; g < gs->n; g++)
        for (int i = 0; i < TR_GPT_N_TENSORS; i++) {
            const tr_tensor *t = &m->params.all[i];
            put(b, ",\"%s%s\":{\"dtype\":\"%s\",\"shape\":[", prefix[g], tr_gpt_tensor_names[i],
                tr_dtype_name(t->dtype));
            for (int d = 0; d < t->n_dims; d++)
                put(b, "%s%" PRId64, d ? "," : "", t->shape[d]);
            put(b, "],\"data_offsets\":[%zu,%zu]}", off, off + tr_tensor_bytes(t));
            off += tr_tensor_bytes(t);
        }
    *data_bytes = off;
}

static const char *optim_name(const tr_optim *opt) { return opt->cfg.kind == TR_OPTIM_ADAMW ? "adamw" : "sgd"; }

static void metadata(strbuf *b, const tr_gpt *m, const tr_optim *opt, const tr_ckpt_state *st)
{
    const tr_gpt_config *c = &m->cfg;
    put(b, "{\"__metadata__\":{\"format\":\"" FORMAT "\",\"shape\":\"layers=%d,width=%d,heads=%d,context=%d,"
        "vocab=%d\",\"optimizer\":\"%s\",\"step\":\"%" PRId64 "\",\"optimizer_t\":\"%d\",\"seed\":\"%" PRIu64 "\"}",
        c->n_layers, c->channels, c->n_heads, c->max_seq_len, c->vocab_size, optim_name(opt), st->step, opt->t,
        st->seed);
}

static int check_whole(const char *path, const tr_gpt *m, const tr_optim *opt)
{
    if (opt->begin != 0 || opt->end != m->n_params)
        return tr_error_set(TR_EINVAL, "%s: a checkpoint holds the whole optimizer state, not a shard", path);
    return TR_OK;
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

int tr_ckpt_save(const char *path, tr_gpt *m, const tr_optim *opt, const tr_ckpt_state *st)
{
    int rc = check_whole(path, m, opt);
    if (rc < 0)
        return rc;
    strbuf h = {0};
    size_t data_bytes;
    groups gs = groups_of(m, opt);
    metadata(&h, m, opt, st);
    tensor_entries(&h, m, &gs, &data_bytes);
    put(&h, "}");
    while ((8 + h.n) % 8) /* data starts 8-byte aligned, as safetensors writes it */
        put(&h, " ");
    size_t tmp_n = strlen(path) + 16;
    char *tmp = malloc(tmp_n);
    float *host = malloc(m->n_params * sizeof(float));
    int fd = -1;
    if (!tmp || !host) {
        rc = tr_error_set(TR_ENOMEM, "out of memory saving %s", path);
        goto cleanup;
    }
    snprintf(tmp, tmp_n, "%s.tmp.XXXXXX", path);
    if ((fd = mkstemp(tmp)) < 0) {
        rc = tr_error_set(TR_EIO, "cannot create a temporary file beside %s: %s", path, strerror(errno));
        goto cleanup;
    }
    uint64_t hlen = h.n; /* little-endian on every machine we build for */
    if (write_all(fd, &hlen, 8) < 0 || write_all(fd, h.s, h.n) < 0)
        goto io_error;
    for (int g = 0; g < gs.n; g++) {
        m->be->copy_d2h(m->be, host, gs.buf[g], m->n_params * sizeof(float), 0);
        if (write_all(fd, host, m->n_params * sizeof(float)) < 0)
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
    free(h.s);
    (void)data_bytes;
    return rc;
}

/* The value of "key":"..." in the metadata, as a number. */
static int meta_num(const char *header, const char *key, long long *out)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(header, pat);
    if (!p)
        return -1;
    char *end;
    *out = strtoll(p + strlen(pat), &end, 10);
    return *end == '"' ? 0 : -1;
}

int tr_ckpt_load(const char *path, tr_gpt *m, tr_optim *opt, tr_ckpt_state *st)
{
    int rc = check_whole(path, m, opt);
    if (rc < 0)
        return rc;
    FILE *f = fopen(path, "rb");
    if (!f)
        return tr_error_set(TR_EIO, "cannot open the checkpoint %s: %s", path, strerror(errno));
    char *header = NULL;
    float *host = NULL;
    strbuf want = {0};
    uint64_t hlen;
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || fread(&hlen, 8, 1, f) != 1 || hlen > (uint64_t)sb.st_size - 8 ||
        hlen > (64u << 20)) {
        rc = tr_error_set(TR_EFORMAT, "%s is not a safetensors file (no valid header length)", path);
        goto cleanup;
    }
    if (!(header = malloc(hlen + 1)) || fread(header, 1, hlen, f) != hlen) {
        rc = tr_error_set(TR_EFORMAT, "%s: truncated header", path);
        goto cleanup;
    }
    header[hlen] = 0;
    if (header[0] != '{' || !strstr(header, "\"format\":\"" FORMAT "\"")) {
        rc = tr_error_set(TR_EFORMAT, "%s is not a checkpoint of this trainer (no \"format\":\"" FORMAT
                          "\" in its metadata)", path);
        goto cleanup;
    }
    char opt_kind[48];
    snprintf(opt_kind, sizeof opt_kind, "\"optimizer\":\"%s\"", optim_name(opt));
    if (!strstr(header, opt_kind)) {
        const char *p = strstr(header, "\"optimizer\":\"");
        rc = tr_error_set(TR_EFORMAT, "%s holds the state of another optimizer (%.16s); this run uses %s", path,
                          p ? p + 13 : "none", optim_name(opt));
        goto cleanup;
    }
    size_t data_bytes;
    groups gs = groups_of(m, opt);
    tensor_entries(&want, m, &gs, &data_bytes);
    const tr_gpt_config *c = &m->cfg;
    char shape[160];
    snprintf(shape, sizeof shape, "\"shape\":\"layers=%d,width=%d,heads=%d,context=%d,vocab=%d\"", c->n_layers,
             c->channels, c->n_heads, c->max_seq_len, c->vocab_size);
    if (!strstr(header, shape) || !strstr(header, want.s)) {
        const char *p = strstr(header, "\"shape\":\"");
        rc = tr_error_set(TR_EFORMAT, "%s was saved from another model (%.80s); this one has %s", path,
                          p ? p + 9 : "?", shape + 9);
        goto cleanup;
    }
    if ((uint64_t)sb.st_size != 8 + hlen + data_bytes) {
        rc = tr_error_set(TR_EFORMAT, "%s is truncated or padded: %lld bytes, expected %llu", path,
                          (long long)sb.st_size, (unsigned long long)(8 + hlen + data_bytes));
        goto cleanup;
    }
    long long step, t, seed;
    if (meta_num(header, "step", &step) < 0 || meta_num(header, "optimizer_t", &t) < 0 ||
        meta_num(header, "seed", &seed) < 0 || step < 0 || t < 0) {
        rc = tr_error_set(TR_EFORMAT, "%s: the metadata lacks step, optimizer_t or seed", path);
        goto cleanup;
    }
    if (!(host = malloc(m->n_params * sizeof(float)))) {
        rc = tr_error_set(TR_ENOMEM, "out of memory loading %s", path);
        goto cleanup;
    }
    for (int g = 0; g < gs.n; g++) {
        if (fread(host, sizeof(float), m->n_params, f) != m->n_params) {
            rc = tr_error_set(TR_EFORMAT, "%s: truncated tensor data", path);
            goto cleanup;
        }
        m->be->copy_h2d(m->be, gs.buf[g], host, m->n_params * sizeof(float), 0);
    }
    m->params_lp_stale = true;
    opt->t = (int)t;
    st->step = step;
    st->seed = (uint64_t)seed;
cleanup:
    fclose(f);
    free(header);
    free(host);
    free(want.s);
    return rc;
}
