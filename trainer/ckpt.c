/* ckpt.c: safetensors checkpoints of ckpt.h, full and sharded. The header
 * is JSON written by us; loading checks it against the header this model
 * would write (same names, dtypes, shapes, offsets), so no general JSON
 * parser is needed and anything else is refused. The file handling that
 * does not depend on the model (the atomic write, the header and metadata
 * reading) is ckpt_io.c's; one writer serves every kind: it takes the
 * groups' buffers on the host or on the device. */
#include "ckpt.h"

#include "ckpt_io.h"
#include "error.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FORMAT "gtrace-trainer-1"
#define SHARD_FORMAT "gtrace-trainer-shard-1"

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
static void tensor_entries(tr_ckpt_buf *b, const tr_gpt *m, const groups *gs, size_t *data_bytes)
{
    size_t off = 0;
    char buf[32];
    for (int g = 0; g < gs->n; g++)
        for (int i = 0; i < TR_GPT_N_TENSORS; i++) {
            const tr_tensor *t = &m->params.all[i];
            tr_ckpt_put(b, ",\"%s%s\":{\"dtype\":\"%s\",\"shape\":[", group_prefix(gs, g, buf, sizeof buf),
                tr_gpt_tensor_names[i], tr_dtype_name(t->dtype));
            for (int d = 0; d < t->n_dims; d++)
                tr_ckpt_put(b, "%s%" PRId64, d ? "," : "", t->shape[d]);
            tr_ckpt_put(b, "],\"data_offsets\":[%zu,%zu]}", off, off + tr_tensor_bytes(t));
            off += tr_tensor_bytes(t);
        }
    *data_bytes = off;
}

/* A shard's tensor table: one 1-D tensor of n floats per group. */
static void shard_entries(tr_ckpt_buf *b, const groups *gs, size_t n, size_t *data_bytes)
{
    size_t off = 0, n_bytes = n * sizeof(float);
    for (int g = 0; g < gs->n; g++) {
        tr_ckpt_put(b, ",\"shard.%s%s\":{\"dtype\":\"F32\",\"shape\":[%zu],\"data_offsets\":[%zu,%zu]}",
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
static void metadata(tr_ckpt_buf *b, const tr_gpt *m, const tr_optim *opt, const tr_ckpt_state *st,
                     const tr_ckpt_shard *sh)
{
    char shape[160];
    shape_text(shape, sizeof shape, m);
    tr_ckpt_put(b, "{\"__metadata__\":{\"format\":\"%s\",\"shape\":\"%s\",\"optimizer\":\"%s\",\"step\":\"%" PRId64
        "\",\"optimizer_t\":\"%d\",\"seed\":\"%" PRIu64 "\"", sh ? SHARD_FORMAT : FORMAT, shape, optim_name(opt),
        st->step, opt->t, st->seed);
    if (st->loss_scale > 0)
        tr_ckpt_put(b, ",\"loss_scale\":\"%.9g\",\"loss_scale_good_steps\":\"%d\"", st->loss_scale,
            st->loss_scale_good_steps);
    if (sh)
        tr_ckpt_put(b, ",\"rank\":\"%d\",\"ranks\":\"%d\",\"zero\":\"%d\",\"begin\":\"%zu\",\"end\":\"%zu\",\"n_params\":\"%zu\"",
            sh->rank, sh->n_ranks, sh->zero, sh->begin, sh->end, m->n_params);
    tr_ckpt_put(b, "}");
}


/* n floats of each group after the header h (tr_ckpt_write). */
static int write_groups(const char *path, tr_ckpt_buf *h, float *const *src, const groups *gs, size_t n,
                        tr_backend *be)
{
    tr_ckpt_blob blobs[MAX_GROUPS];
    for (int g = 0; g < gs->n; g++)
        blobs[g] = (tr_ckpt_blob){src[g], n * sizeof(float)};
    return tr_ckpt_write(path, h, blobs, gs->n, be);
}

int tr_ckpt_save(const char *path, tr_gpt *m, const tr_optim *opt, const tr_ckpt_state *st)
{
    if (opt->begin != 0 || opt->end != m->n_params)
        return tr_error_set(TR_EINVAL, "%s: a full checkpoint needs the whole optimizer state, not a shard "
                            "(gather it, or save shards)", path);
    tr_ckpt_buf h = {0};
    size_t data_bytes;
    groups gs = groups_of(&opt->cfg, st->ema != NULL);
    float *dev[MAX_GROUPS];
    device_groups(m, opt, st, &gs, dev);
    metadata(&h, m, opt, st, NULL);
    tensor_entries(&h, m, &gs, &data_bytes);
    int rc = write_groups(path, &h, dev, &gs, m->n_params, m->be);
    free(h.s);
    return rc;
}

int tr_ckpt_save_host(const char *path, const tr_gpt *m, const tr_optim *opt, const tr_ckpt_state *st,
                      const float *const *groups_host)
{
    tr_ckpt_buf h = {0};
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
    int rc = write_groups(path, &h, src, &gs, m->n_params, NULL);
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
    tr_ckpt_buf h = {0};
    size_t data_bytes;
    groups gs = groups_of(&opt->cfg, false);
    float *dev[MAX_GROUPS];
    device_groups(m, opt, st, &gs, dev);
    metadata(&h, m, opt, st, sh);
    shard_entries(&h, &gs, sh->end - sh->begin, &data_bytes);
    rc = write_groups(file, &h, dev, &gs, sh->end - sh->begin, m->be);
    free(h.s);
    free(file);
    return rc;
}

/* ---- loading ----------------------------------------------------------------------- */

/* tr_ckpt_open, and a file of the GPT's formats: a CNN's is refused by name. */
static int open_gpt(tr_ckpt_file *c, const char *path)
{
    int rc = tr_ckpt_open(c, path);
    char fmt[64], model[64];
    if (rc == TR_OK && !tr_ckpt_has_format(c, FORMAT) && !tr_ckpt_has_format(c, SHARD_FORMAT))
        rc = tr_error_set(TR_EFORMAT, "%s is a checkpoint of another kind of model (format %s, model %s), not of "
                          "a GPT", path, tr_ckpt_meta_str(c->header, "format", fmt, sizeof fmt),
                          tr_ckpt_meta_str(c->header, "model", model, sizeof model));
    return rc;
}

static bool is_shard(const tr_ckpt_file *c) { return tr_ckpt_has_format(c, SHARD_FORMAT); }

/* The optimizer and the shape: the clearest reasons, checked first. */
static int check_model(const tr_ckpt_file *c, const tr_gpt *m, const tr_optim *opt)
{
    char buf[160], opt_kind[48];
    snprintf(opt_kind, sizeof opt_kind, "\"optimizer\":\"%s\"", optim_name(opt));
    if (!strstr(c->header, opt_kind))
        return tr_error_set(TR_EFORMAT, "%s holds the state of another optimizer (%s); this run uses %s", c->path,
                            tr_ckpt_meta_str(c->header, "optimizer", buf, sizeof buf), optim_name(opt));
    char shape[160], shape_kv[180];
    shape_text(shape, sizeof shape, m);
    snprintf(shape_kv, sizeof shape_kv, "\"shape\":\"%s\"", shape);
    if (!strstr(c->header, shape_kv))
        return tr_error_set(TR_EFORMAT, "%s was saved from another model (%s); this one has %s", c->path,
                            tr_ckpt_meta_str(c->header, "shape", buf, sizeof buf), shape);
    return TR_OK;
}

/* The run's state in the metadata, each number checked against what the
 * trainer can run with: the step counter is an int, the optimizer has not
 * stepped more often than the run, a seed is one --seed accepts, the loss
 * scale a positive float and its good steps no more than the steps. */
static int read_state(const tr_ckpt_file *c, tr_ckpt_state *st, long long *t)
{
    long long step, seed;
    int rc;
    if ((rc = tr_ckpt_meta_field(c, "step", 0, INT32_MAX, &step)) < 0 || (rc = tr_ckpt_meta_field(c, "optimizer_t", 0, step, t)) < 0 ||
        (rc = tr_ckpt_meta_field(c, "seed", 0, LLONG_MAX, &seed)) < 0)
        return rc;
    st->step = step;
    st->seed = (uint64_t)seed;
    return tr_ckpt_meta_loss_scale(c, step, &st->loss_scale, &st->loss_scale_good_steps);
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
static int check_values(const tr_ckpt_file *c, const tr_gpt *m, const groups *gs, int g, const float *p, size_t n,
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

typedef struct group_check { const tr_ckpt_file *c; const tr_gpt *m; const groups *gs; int g; size_t flat_at; }
    group_check;

static int check_chunk(void *ctx, const void *p, size_t n_bytes, size_t done)
{
    const group_check *k = ctx;
    return check_values(k->c, k->m, k->gs, k->g, p, n_bytes / sizeof(float), k->flat_at + done / sizeof(float));
}

/* Reads elements [lo, lo + n) of group g (n_group floats each, after g
 * groups) into the device buffer dst, and checks their values (flat_at:
 * the flat index of element lo). */
static int read_group(const tr_ckpt_file *c, const tr_gpt *m, const groups *gs, int g, float *dst, size_t n_group,
                      size_t lo, size_t n, size_t flat_at)
{
    group_check k = {c, m, gs, g, flat_at};
    return tr_ckpt_read(c, ((size_t)g * n_group + lo) * sizeof(float), dst, n * sizeof(float), m->be, check_chunk,
                        &k);
}

/* The weights and the optimizer's state over [lo, lo + n), into dev[g]. */
static int read_groups(const tr_ckpt_file *c, const tr_gpt *m, float *const *dev, const groups *gs, size_t n_group,
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
    tr_ckpt_file c;
    tr_ckpt_buf want = {0};
    char ema_key[80];
    size_t data_bytes;
    groups gs;
    long long t;
    tr_ckpt_state read = {0};
    float *dev[MAX_GROUPS];
    int rc = open_gpt(&c, path);
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
        tr_ckpt_meta_num(c.header, "rank", &r);
        tr_ckpt_meta_num(c.header, "ranks", &n);
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
    if ((rc = check_model(&c, m, opt)) < 0 || (rc = tr_ckpt_check_table(&c, want.s, data_bytes)) < 0 ||
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
    tr_ckpt_close(&c);
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
    tr_ckpt_file c;
    tr_ckpt_buf want = {0};
    long long r, n, b, e, np, t;
    size_t data_bytes, n_shard = sh->end - sh->begin;
    groups gs = groups_of(&opt->cfg, false);
    tr_ckpt_state read = {0};
    float *dev[MAX_GROUPS];
    if ((rc = open_gpt(&c, file)) < 0) {
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
    if (tr_ckpt_meta_num(c.header, "rank", &r) < 0 || tr_ckpt_meta_num(c.header, "ranks", &n) < 0 ||
        tr_ckpt_meta_num(c.header, "begin", &b) < 0 || tr_ckpt_meta_num(c.header, "end", &e) < 0 ||
        tr_ckpt_meta_num(c.header, "n_params", &np) < 0) {
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
    if ((rc = tr_ckpt_check_table(&c, want.s, data_bytes)) < 0 || (rc = read_state(&c, &read, &t)) < 0)
        goto cleanup;
    device_groups(m, opt, st, &gs, dev);
    if ((rc = read_groups(&c, m, dev, &gs, n_shard, 0, n_shard, sh->begin)) < 0)
        goto cleanup;
    set_state(m, opt, st, &read, t);
cleanup:
    tr_ckpt_close(&c);
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
