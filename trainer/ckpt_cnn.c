/* ckpt_cnn.c: the CNN models' checkpoints of ckpt_cnn.h. The tensors are
 * flat 1-D buffers in the model's own order; the header this model would
 * write is built and compared whole, as ckpt.c does for the GPT. */
#include "ckpt_cnn.h"

#include "ckpt_io.h"
#include "error.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CNN_FORMAT "gtrace-trainer-cnn-1"

_Static_assert(sizeof(int) == 4, "data.order is saved as int32");

enum { MAX_TENSORS = 7 };

/* The tensors saved, in order, with their device (or host) buffers. */
typedef struct cnn_table {
    int n;
    const char *name[MAX_TENSORS];
    const char *dtype[MAX_TENSORS];
    size_t numel[MAX_TENSORS];
    void *p[MAX_TENSORS];
    bool host[MAX_TENSORS]; /* data.order lives on the host */
} cnn_table;

static void add(cnn_table *t, const char *name, const char *dtype, size_t numel, void *p, bool host)
{
    t->name[t->n] = name;
    t->dtype[t->n] = dtype;
    t->numel[t->n] = numel;
    t->p[t->n] = p;
    t->host[t->n++] = host;
}

static cnn_table table_of(tr_cnn *m, const tr_optim_config *oc, float *opt_m, float *opt_v,
                          const tr_ckpt_cnn_state *st)
{
    cnn_table t = {0};
    add(&t, "params", "F32", m->n_params, m->params, false);
    add(&t, "bn_running_stats", "F32", m->n_stats, m->stats, false);
    if (oc->kind == TR_OPTIM_ADAMW) {
        add(&t, "optimizer.m", "F32", m->n_params, opt_m, false);
        add(&t, "optimizer.v", "F32", m->n_params, opt_v, false);
    } else if (oc->momentum > 0) {
        add(&t, "optimizer.momentum", "F32", m->n_params, opt_m, false);
    }
    if (st->ema_params) {
        add(&t, "ema.params", "F32", m->n_params, st->ema_params, false);
        add(&t, "ema.bn_running_stats", "F32", m->n_stats, st->ema_stats, false);
    }
    add(&t, "data.order", "I32", (size_t)st->n_order, st->order, true);
    return t;
}

static void entries(tr_ckpt_buf *b, const cnn_table *t, size_t *data_bytes)
{
    size_t off = 0;
    for (int i = 0; i < t->n; i++) {
        size_t n = t->numel[i] * 4;
        tr_ckpt_put(b, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%zu],\"data_offsets\":[%zu,%zu]}", t->name[i],
                    t->dtype[i], t->numel[i], off, off + n);
        off += n;
    }
    *data_bytes = off;
}

static const char *optim_name(const tr_optim_config *oc) { return oc->kind == TR_OPTIM_ADAMW ? "adamw" : "sgd"; }

static void shape_text(char *s, size_t n, const tr_cnn *m)
{
    const tr_cnn_config *c = &m->cfg;
    snprintf(s, n, "params=%zu,decayed=%zu,stats=%zu,input=%dx%dx%d,classes=%d", m->n_params, m->n_decay, m->n_stats,
             c->C, c->H, c->W, c->n_classes);
}

int tr_ckpt_cnn_save(const char *path, tr_cnn *m, const tr_optim_config *oc, const float *opt_m, const float *opt_v,
                     const tr_ckpt_cnn_state *st)
{
    cnn_table t = table_of(m, oc, (float *)opt_m, (float *)opt_v, st); /* only read */
    tr_ckpt_buf h = {0};
    char shape[160];
    size_t data_bytes;
    shape_text(shape, sizeof shape, m);
    tr_ckpt_put(&h, "{\"__metadata__\":{\"format\":\"" CNN_FORMAT "\",\"model\":\"%s\",\"shape\":\"%s\","
                "\"optimizer\":\"%s\",\"step\":\"%" PRId64 "\",\"optimizer_t\":\"%d\",\"seed\":\"%" PRIu64 "\","
                "\"train_images\":\"%d\",\"epoch\":\"%d\",\"pos\":\"%d\",\"data_rng\":\"%" PRIu64 "\","
                "\"dropout_rng\":\"%" PRIu64 "\",\"loss_sum\":\"%a\",\"loss_n\":\"%d\"", m->cfg.name, shape,
                optim_name(oc), st->step, st->t, st->seed, st->n_order, st->epoch, st->pos, st->data_rng,
                st->dropout_rng, st->loss_sum, st->loss_n);
    if (st->loss_scale > 0)
        tr_ckpt_put(&h, ",\"loss_scale\":\"%.9g\",\"loss_scale_good_steps\":\"%d\"", st->loss_scale,
                    st->loss_scale_good_steps);
    tr_ckpt_put(&h, "}");
    entries(&h, &t, &data_bytes);
    /* the device's tensors, then the order from the host (tr_ckpt_write takes one memory per call): the
     * order is small, so the device part goes through a host copy of the whole */
    tr_ckpt_blob blobs[MAX_TENSORS];
    char *host = NULL;
    if (!tr_ckpt_on_host(m->be)) {
        if (!(host = malloc(data_bytes ? data_bytes : 1))) {
            free(h.s);
            return tr_error_set(TR_ENOMEM, "out of memory saving %s", path);
        }
    }
    size_t off = 0;
    for (int i = 0; i < t.n; i++) {
        size_t n = t.numel[i] * 4;
        if (host && n) {
            if (t.host[i])
                memcpy(host + off, t.p[i], n);
            else
                m->be->copy_d2h(m->be, host + off, t.p[i], n, 0);
        }
        blobs[i] = (tr_ckpt_blob){host ? host + off : t.p[i], n};
        off += n;
    }
    int rc = tr_ckpt_write(path, &h, blobs, t.n, NULL);
    free(host);
    free(h.s);
    return rc;
}

/* ---- loading ------------------------------------------------------------------- */

typedef struct value_check { const tr_ckpt_file *c; const char *name; bool nonneg, index; int n_order; } value_check;

/* Values no run writes: a NaN or infinity, a negative second moment, an
 * image index outside the training set. */
static int check_chunk(void *ctx, const void *p, size_t n_bytes, size_t done)
{
    const value_check *k = ctx;
    for (size_t i = 0; i < n_bytes / 4; i++) {
        size_t at = done / 4 + i;
        if (k->index) {
            int v = ((const int *)p)[i];
            if (v < 0 || v >= k->n_order)
                return tr_error_set(TR_EFORMAT, "%s: %s holds %d at element %zu: not an image of the %d of the "
                                    "training set (a damaged or edited file)", k->c->path, k->name, v, at, k->n_order);
            continue;
        }
        float v = ((const float *)p)[i];
        if (!isfinite(v) || (k->nonneg && v < 0))
            return tr_error_set(TR_EFORMAT, "%s: %s holds %g at element %zu: %s (a damaged or edited file)",
                                k->c->path, k->name, (double)v, at,
                                isfinite(v) ? "AdamW's second moment is never negative" : "not a finite number");
    }
    return TR_OK;
}

/* An unsigned 64-bit metadata field (a generator's state). */
static int meta_u64(const tr_ckpt_file *c, const char *key, uint64_t *out)
{
    char buf[48], *end;
    const char *v = tr_ckpt_meta_str(c->header, key, buf, sizeof buf);
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (!(*v >= '0' && *v <= '9') || *end || errno)
        return tr_error_set(TR_EFORMAT, "%s: the metadata's %s is '%s': expected a whole number from 0 to %llu",
                            c->path, key, v, ULLONG_MAX);
    *out = x;
    return TR_OK;
}

/* The kind, model, optimizer, shape and training-set size: the clearest
 * reasons first. */
static int check_model(const tr_ckpt_file *c, const tr_cnn *m, const tr_optim_config *oc, int n_order, bool ema)
{
    long long n;
    char buf[160], shape[160];
    if (!tr_ckpt_has_format(c, CNN_FORMAT))
        return tr_error_set(TR_EFORMAT, "%s is not a CNN checkpoint (format %s: a GPT's): --model %s cannot resume it",
                            c->path, tr_ckpt_meta_str(c->header, "format", buf, sizeof buf), m->cfg.name);
    if (strcmp(tr_ckpt_meta_str(c->header, "model", buf, sizeof buf), m->cfg.name) != 0)
        return tr_error_set(TR_EFORMAT, "%s holds the model %s; this run trains %s", c->path, buf, m->cfg.name);
    if (strcmp(tr_ckpt_meta_str(c->header, "optimizer", buf, sizeof buf), optim_name(oc)) != 0)
        return tr_error_set(TR_EFORMAT, "%s holds the state of another optimizer (%s); this run uses %s", c->path,
                            buf, optim_name(oc));
    shape_text(shape, sizeof shape, m);
    if (strcmp(tr_ckpt_meta_str(c->header, "shape", buf, sizeof buf), shape) != 0)
        return tr_error_set(TR_EFORMAT, "%s was saved from another shape of %s (%s); this one has %s (another "
                            "--bias-before-bn?)", c->path, m->cfg.name, buf, shape);
    if ((strstr(c->header, "\"ema.params\":") != NULL) != ema)
        return tr_error_set(TR_EFORMAT, "%s was saved %s a weight EMA; this run has %s (--ema)", c->path,
                            ema ? "without" : "with", ema ? "one" : "none");
    return tr_ckpt_meta_field(c, "train_images", n_order, n_order, &n);
}

/* The run's position and generators from the metadata, each checked. */
static int read_state(const tr_ckpt_file *c, tr_ckpt_cnn_state *st)
{
    long long step, t, seed, epoch, pos, loss_n;
    int rc;
    if ((rc = tr_ckpt_meta_field(c, "step", 0, INT32_MAX, &step)) < 0 ||
        (rc = tr_ckpt_meta_field(c, "optimizer_t", 0, step, &t)) < 0 ||
        (rc = tr_ckpt_meta_field(c, "seed", 0, LLONG_MAX, &seed)) < 0 ||
        (rc = tr_ckpt_meta_field(c, "epoch", 0, INT32_MAX, &epoch)) < 0 ||
        (rc = tr_ckpt_meta_field(c, "pos", 0, st->n_order, &pos)) < 0 ||
        (rc = tr_ckpt_meta_field(c, "loss_n", 0, step, &loss_n)) < 0 ||
        (rc = meta_u64(c, "data_rng", &st->data_rng)) < 0 || (rc = meta_u64(c, "dropout_rng", &st->dropout_rng)) < 0)
        return rc;
    char buf[64], *end;
    const char *v = tr_ckpt_meta_str(c->header, "loss_sum", buf, sizeof buf);
    errno = 0;
    double loss_sum = strtod(v, &end);
    if (end == v || *end || errno || !isfinite(loss_sum))
        return tr_error_set(TR_EFORMAT, "%s: the metadata's loss_sum is '%s': expected a finite number", c->path, v);
    st->step = step;
    st->t = (int)t;
    st->seed = (uint64_t)seed;
    st->epoch = (int)epoch;
    st->pos = (int)pos;
    st->loss_sum = loss_sum;
    st->loss_n = (int)loss_n;
    return tr_ckpt_meta_loss_scale(c, step, &st->loss_scale, &st->loss_scale_good_steps);
}

int tr_ckpt_cnn_load(const char *path, tr_cnn *m, const tr_optim_config *oc, float *opt_m, float *opt_v,
                     tr_ckpt_cnn_state *st)
{
    tr_ckpt_file c;
    tr_ckpt_buf want = {0};
    size_t data_bytes;
    cnn_table t = table_of(m, oc, opt_m, opt_v, st);
    entries(&want, &t, &data_bytes);
    int rc = tr_ckpt_open(&c, path);
    if (rc == TR_OK && (rc = check_model(&c, m, oc, st->n_order, st->ema_params != NULL)) == TR_OK && (rc = tr_ckpt_check_table(&c, want.s, data_bytes)) == TR_OK)
        rc = read_state(&c, st);
    size_t off = 0;
    for (int i = 0; i < t.n && rc == TR_OK; i++) {
        size_t n = t.numel[i] * 4;
        value_check k = {&c, t.name[i], !strcmp(t.name[i], "optimizer.v"), t.host[i], st->n_order};
        rc = tr_ckpt_read(&c, off, t.p[i], n, t.host[i] ? NULL : m->be, check_chunk, &k);
        off += n;
    }
    tr_ckpt_close(&c);
    free(want.s);
    return rc;
}
