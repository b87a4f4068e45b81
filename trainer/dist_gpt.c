/* dist_gpt.c: DDP and ZeRO-1/2/3 of dist_gpt.h, on the model's hooks.
 * A block's parameters (or gradients) are 12 slices of the flat order, one
 * per (L, ...) tensor; packed in flat order they are one buffer of block_n
 * elements that collectives move at once and the model's layer views point
 * into. It does not touch the optimizer or the data. */
#include "config.h"

#include "dist_gpt.h"

#include "error.h"
#include "optim.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_FIELDS 12
static const size_t layer_fields[N_FIELDS] = {
    offsetof(tr_gpt_layer, ln1w), offsetof(tr_gpt_layer, ln1b),     offsetof(tr_gpt_layer, qkvw),
    offsetof(tr_gpt_layer, qkvb), offsetof(tr_gpt_layer, attprojw), offsetof(tr_gpt_layer, attprojb),
    offsetof(tr_gpt_layer, ln2w), offsetof(tr_gpt_layer, ln2b),     offsetof(tr_gpt_layer, fcw),
    offsetof(tr_gpt_layer, fcb),  offsetof(tr_gpt_layer, fcprojw),  offsetof(tr_gpt_layer, fcprojb)};
static tr_tensor *field(tr_gpt_layer *ly, int k) { return (tr_tensor *)((char *)ly + layer_fields[k]); }

/* The root unit: wte and wpe (the start of the flat order), lnfw and lnfb (its end). */
enum { WTE = 0, WPE = 1, LNFW = 14, LNFB = 15 };
static const int root_tensors[4] = {WTE, WPE, LNFW, LNFB};

struct tr_dist_gpt {
    tr_dist *d;
    tr_gpt *m;
    tr_alloc *alloc;
    tr_backend *be;
    tr_dist_gpt_config cfg;
    int L, size;
    size_t n, begin, end;
    tr_dist_slice (*slices)[N_FIELDS]; /* (L) block l's slices, rising */
    size_t pos[N_FIELDS], block_n;     /* a slice's place in a packed block; its size */
    size_t tensor_off[TR_GPT_N_TENSORS];
    tr_dist_slice root[2];             /* [wte wpe] and [lnfw lnfb] */
    size_t root_n;
    tr_dist_grads *grads;
    bool first, sync;
    char name[32];
    /* ZeRO-2/3 */
    float *grad_shard;   /* (end - begin) */
    float *root_grad;    /* (root_n) during a backward */
    float *block_grad;   /* (block_n) during a block's backward */
    /* ZeRO-3 */
    float *param_shard;  /* (end - begin) */
    float **gathered;    /* (L) a block's parameters, packed; NULL when not held */
    void **gathered_lp;  /* (L) their AMP copy */
    tr_dist_gather **inflight; /* (L) */
    float *root_params;  /* (root_n) */
    void *root_lp;       /* wte in the AMP dtype */
};

static size_t zmax(size_t a, size_t b) { return a > b ? a : b; }

/* Points t at element off of a buffer indexed by flat element (it may
 * address a shard only: see dist_gpt.h). */
static void at_flat(tr_tensor *t, float *flat, size_t off) { t->data = flat + off; }

static int malloc_named(tr_dist_gpt *w, void **p, size_t n_bytes, const char *name)
{
    int rc = tr_alloc_malloc(w->alloc, p, zmax(n_bytes, 1), 0);
    if (rc == TR_OK)
        tr_alloc_name(w->alloc, *p, name);
    return rc;
}

static void release(tr_dist_gpt *w, void *pp)
{
    void **p = pp;
    tr_alloc_release(w->alloc, *p);
    *p = NULL;
}

/* ---- ZeRO-3 parameter gathering ------------------------------------------------ */

static void point_block_params(tr_dist_gpt *w, int l)
{
    tr_gpt *m = w->m;
    for (int k = 0; k < N_FIELDS; k++) {
        if (w->gathered[l])
            field(&m->layer_params[l], k)->data = w->gathered[l] + w->pos[k];
        else /* not held: the view addresses the flat order again */
            at_flat(field(&m->layer_params[l], k), m->params_flat.data, w->slices[l][k].off);
        if (m->amp != TR_F32)
            field(&m->layer_params_lp[l], k)->data =
                w->gathered_lp[l] ? (char *)w->gathered_lp[l] + w->pos[k] * tr_dtype_size(m->amp) : NULL;
    }
}

static int gather_start(tr_dist_gpt *w, int l)
{
    if (l < 0 || l >= w->L || w->gathered[l])
        return TR_OK;
    int rc = malloc_named(w, (void **)&w->gathered[l], w->block_n * sizeof(float), "gathered parameters");
    if (rc < 0)
        return rc;
    char name[40];
    snprintf(name, sizeof name, "all-gather block %d", l);
    return tr_dist_gather_start(&w->inflight[l], w->d, w->alloc, w->n, w->slices[l], N_FIELDS, w->param_shard,
                                w->begin, w->gathered[l], name);
}

static int gather_ensure(tr_dist_gpt *w, int l)
{
    int rc = gather_start(w, l);
    if (rc == TR_OK && w->inflight[l]) {
        rc = tr_dist_gather_wait(w->inflight[l]);
        w->inflight[l] = NULL;
        tr_gpt *m = w->m;
        if (rc == TR_OK && m->amp != TR_F32) { /* autocast's weight copy, per block */
            rc = malloc_named(w, &w->gathered_lp[l], w->block_n * tr_dtype_size(m->amp), "gathered parameters (amp)");
            if (rc == TR_OK) {
                tr_tensor src = {w->gathered[l], TR_F32, m->be->device, 1, {(int64_t)w->block_n}};
                tr_tensor dst = {w->gathered_lp[l], m->amp, m->be->device, 1, {(int64_t)w->block_n}};
                m->be->cast(m->be, &dst, &src);
            }
        }
    }
    if (rc == TR_OK)
        point_block_params(w, l);
    return rc;
}

static int gather_release(tr_dist_gpt *w, int l)
{
    int rc = TR_OK;
    if (w->inflight[l]) { /* a prefetch nobody used (eval's last block) */
        rc = tr_dist_gather_wait(w->inflight[l]);
        w->inflight[l] = NULL;
    }
    release(w, &w->gathered[l]);
    release(w, &w->gathered_lp[l]);
    point_block_params(w, l);
    return rc;
}

static void point_root_params(tr_dist_gpt *w)
{
    tr_gpt *m = w->m;
    size_t at = 0;
    for (int i = 0; i < 4; i++) {
        tr_tensor *t = &m->params.all[root_tensors[i]];
        if (w->root_params)
            t->data = w->root_params + at;
        else
            at_flat(t, m->params_flat.data, w->tensor_off[root_tensors[i]]);
        at += (size_t)tr_tensor_numel(t);
    }
    /* the head reads wte's AMP copy at the start of params_lp */
    m->params_lp.data = w->root_lp;
}

static int root_gather(tr_dist_gpt *w)
{
    tr_gpt *m = w->m;
    m->params_lp_stale = false; /* there is no full copy to cast; blocks cast their own */
    if (w->root_params)
        return TR_OK;
    tr_dist_gather *g;
    int rc = malloc_named(w, (void **)&w->root_params, w->root_n * sizeof(float), "gathered parameters");
    if (rc == TR_OK)
        rc = tr_dist_gather_start(&g, w->d, w->alloc, w->n, w->root, 2, w->param_shard, w->begin, w->root_params,
                                  "all-gather root");
    if (rc == TR_OK)
        rc = tr_dist_gather_wait(g);
    if (rc == TR_OK && m->amp != TR_F32) {
        size_t n_wte = (size_t)tr_tensor_numel(&m->params.wte);
        rc = malloc_named(w, &w->root_lp, n_wte * tr_dtype_size(m->amp), "gathered parameters (amp)");
        if (rc == TR_OK) {
            tr_tensor src = {w->root_params, TR_F32, m->be->device, 1, {(int64_t)n_wte}};
            tr_tensor dst = {w->root_lp, m->amp, m->be->device, 1, {(int64_t)n_wte}};
            m->be->cast(m->be, &dst, &src);
        }
    }
    point_root_params(w);
    return rc;
}

static void root_release(tr_dist_gpt *w)
{
    release(w, &w->root_params);
    release(w, &w->root_lp);
    point_root_params(w);
}

/* ---- hooks ----------------------------------------------------------------------- */

static bool sharded_grads(const tr_dist_gpt *w) { return w->cfg.strategy == TR_DIST_FSDP && w->cfg.zero >= 2; }
static bool sharded_params(const tr_dist_gpt *w) { return w->cfg.strategy == TR_DIST_FSDP && w->cfg.zero >= 3; }

static int hook_block(void *ctx, tr_gpt *m, int l, tr_gpt_phase phase, bool begin)
{
    tr_dist_gpt *w = ctx;
    int rc = tr_dist_progress(w->d);
    if (rc == TR_OK && sharded_params(w)) {
        if (begin) {
            if ((rc = gather_ensure(w, l)) == TR_OK) /* and prefetch the next one */
                rc = gather_start(w, phase == TR_PHASE_FORWARD ? l + 1 : l - 1);
        } else if (phase == TR_PHASE_FORWARD && !(m->need_grad && l == w->L - 1)) {
            rc = gather_release(w, l); /* the last block's backward comes at once: keep it */
        }
    }
    if (rc == TR_OK && begin && phase == TR_PHASE_BACKWARD && sharded_grads(w)) {
        /* the block's gradients land in a packed buffer, reduce-scattered when final */
        size_t n_bytes = w->block_n * sizeof(float);
        if ((rc = malloc_named(w, (void **)&w->block_grad, n_bytes, "block gradients (unsharded)")) < 0)
            return rc;
        m->be->memset0(m->be, w->block_grad, n_bytes, 0);
        for (int k = 0; k < N_FIELDS; k++)
            field(&m->layer_grads[l], k)->data = w->block_grad + w->pos[k];
    }
    return rc;
}

static int hook_grads(void *ctx, tr_gpt *m, int l)
{
    tr_dist_gpt *w = ctx;
    int rc = TR_OK;
    if (!sharded_grads(w)) { /* DDP, ZeRO-1: all-reduce in place, on the last micro-batch */
        if (!w->sync)
            return tr_dist_progress(w->d);
        float *g = m->grads_flat.data;
        const tr_dist_slice *s = l >= 0 ? w->slices[l] : w->root;
        for (int k = 0; k < (l >= 0 ? N_FIELDS : 2) && rc == TR_OK; k++)
            rc = tr_dist_grads_add(w->grads, g + s[k].off, s[k].off, s[k].n);
        return rc == TR_OK ? tr_dist_progress(w->d) : rc;
    }
    float *dst = w->grad_shard - w->begin;
    float scale = 1.0f / (float)w->size;
    if (l >= 0) {
        for (int k = 0; k < N_FIELDS && rc == TR_OK; k++)
            rc = tr_dist_grads_add(w->grads, w->block_grad + w->pos[k], w->slices[l][k].off, w->slices[l][k].n);
        release(w, &w->block_grad);
        for (int k = 0; k < N_FIELDS; k++)
            at_flat(field(&m->layer_grads[l], k), m->grads_flat.data, w->slices[l][k].off);
        if (rc == TR_OK && sharded_params(w))
            rc = gather_release(w, l);
    } else {
        rc = tr_dist_grads_add(w->grads, w->root_grad, w->root[0].off, w->root[0].n);
        if (rc == TR_OK)
            rc = tr_dist_grads_add(w->grads, w->root_grad + w->root[0].n, w->root[1].off, w->root[1].n);
        release(w, &w->root_grad);
        for (int i = 0; i < 4; i++)
            at_flat(&m->grads.all[root_tensors[i]], m->grads_flat.data, w->tensor_off[root_tensors[i]]);
    }
    /* start this unit's reduce-scatter now; keep one older in flight, so
     * unsharded gradients never pile up */
    if (rc == TR_OK)
        rc = tr_dist_grads_flush(w->grads);
    if (rc == TR_OK)
        rc = tr_dist_grads_drain(w->grads, dst, 0, scale, !w->first, 1);
    return rc == TR_OK ? tr_dist_progress(w->d) : rc;
}

/* ---- setup ------------------------------------------------------------------------ */

int tr_dist_gpt_new(tr_dist_gpt **out, tr_dist *d, tr_gpt *m, const tr_dist_gpt_config *cfg)
{
    *out = NULL;
    if (cfg->strategy == TR_DIST_FSDP && (cfg->zero < 1 || cfg->zero > 3))
        return tr_error_set(TR_EINVAL, "--zero takes 1, 2 or 3, not %d", cfg->zero);
    if (m->hooks.grads_ready || m->hooks.block)
        return tr_error_set(TR_EINVAL, "the model already has distributed hooks");
    tr_dist_gpt *w = calloc(1, sizeof *w);
    int L = m->cfg.n_layers, rc = TR_OK;
    float *pf;      /* the flat order's start */
    size_t n_shard; /* this rank's range */
    if (!w)
        return tr_error_set(TR_ENOMEM, "out of host memory");
    w->d = d;
    w->m = m;
    w->alloc = m->alloc;
    w->be = m->be;
    w->cfg = *cfg;
    w->L = L;
    w->size = tr_dist_size(d);
    w->n = m->n_params;
    w->slices = calloc((size_t)L, sizeof *w->slices);
    w->gathered = calloc((size_t)L, sizeof *w->gathered);
    w->gathered_lp = calloc((size_t)L, sizeof *w->gathered_lp);
    w->inflight = calloc((size_t)L, sizeof *w->inflight);
    if (!w->slices || !w->gathered || !w->gathered_lp || !w->inflight) {
        rc = tr_error_set(TR_ENOMEM, "out of host memory");
        goto cleanup;
    }
    if (cfg->strategy == TR_DIST_DDP)
        snprintf(w->name, sizeof w->name, "ddp");
    else
        snprintf(w->name, sizeof w->name, "fsdp zero-%d", cfg->zero);

    /* where everything sits in the flat order, read off the model's views */
    pf = m->params_flat.data;
    for (int i = 0; i < TR_GPT_N_TENSORS; i++)
        w->tensor_off[i] = (size_t)((float *)m->params.all[i].data - pf);
    for (int l = 0; l < L; l++) {
        size_t at = 0;
        for (int k = 0; k < N_FIELDS; k++) {
            const tr_tensor *t = field(&m->layer_params[l], k);
            w->slices[l][k] = (tr_dist_slice){(size_t)((float *)t->data - pf), (size_t)tr_tensor_numel(t)};
            w->pos[k] = at;
            at += w->slices[l][k].n;
        }
        w->block_n = at;
    }
    w->root[0] = (tr_dist_slice){0, w->tensor_off[WPE] + (size_t)tr_tensor_numel(&m->params.wpe)};
    w->root[1] = (tr_dist_slice){w->tensor_off[LNFW], w->n - w->tensor_off[LNFW]};
    w->root_n = w->root[0].n + w->root[1].n;
    if (w->tensor_off[WPE] != (size_t)tr_tensor_numel(&m->params.wte) ||
        w->tensor_off[LNFB] != w->tensor_off[LNFW] + (size_t)m->cfg.channels || w->root[1].n != 2u * m->cfg.channels) {
        rc = tr_error_set(TR_EINVAL, "the model's flat layout is not the one dist_gpt.c knows");
        goto cleanup;
    }

    if (cfg->strategy == TR_DIST_DDP) {
        w->begin = 0;
        w->end = w->n;
    } else {
        tr_dist_shard_range(w->n, w->size, tr_dist_rank(d), &w->begin, &w->end);
    }
    n_shard = w->end - w->begin;
    rc = tr_dist_grads_new(&w->grads, d, w->alloc, sharded_grads(w) ? TR_DIST_REDUCE_SCATTER : TR_DIST_ALLREDUCE,
                           w->n, cfg->bucket_bytes);
    if (rc < 0)
        goto cleanup;
    if (sharded_grads(w)) {
        if ((rc = malloc_named(w, (void **)&w->grad_shard, n_shard * sizeof(float), "gradients (shard)")) < 0)
            goto cleanup;
        m->be->memset0(m->be, w->grad_shard, zmax(n_shard, 1) * sizeof(float), 0);
        release(w, &m->grads_flat.data);
        m->grads_flat.data = w->grad_shard - w->begin;
        for (int i = 0; i < TR_GPT_N_TENSORS; i++)
            at_flat(&m->grads.all[i], m->grads_flat.data, w->tensor_off[i]);
        for (int l = 0; l < L; l++)
            for (int k = 0; k < N_FIELDS; k++)
                at_flat(field(&m->layer_grads[l], k), m->grads_flat.data, w->slices[l][k].off);
    }
    if (sharded_params(w)) {
        if ((rc = malloc_named(w, (void **)&w->param_shard, n_shard * sizeof(float), "parameters (shard)")) < 0)
            goto cleanup;
        m->be->copy_d2h(m->be, w->param_shard, pf + w->begin, n_shard * sizeof(float), 0); /* same device */
        release(w, &m->params_flat.data);
        release(w, &m->params_lp.data);
        m->params_flat.data = w->param_shard - w->begin;
        for (int i = 0; i < TR_GPT_N_TENSORS; i++)
            at_flat(&m->params.all[i], m->params_flat.data, w->tensor_off[i]);
        for (int l = 0; l < L; l++)
            point_block_params(w, l);
        point_root_params(w);
        m->params_lp_stale = false;
    }
    m->hooks = (tr_gpt_hooks){.ctx = w, .grads_ready = hook_grads, .block = hook_block};
    *out = w;
    w = NULL;
cleanup:
    tr_dist_gpt_free(w);
    return rc;
}

void tr_dist_gpt_free(tr_dist_gpt *w)
{
    if (!w)
        return;
    tr_gpt *m = w->m;
    if (m->hooks.ctx == w)
        m->hooks = (tr_gpt_hooks){0};
    for (int l = 0; w->gathered && l < w->L; l++) {
        if (w->inflight[l])
            tr_dist_gather_wait(w->inflight[l]);
        release(w, &w->gathered[l]);
        release(w, &w->gathered_lp[l]);
    }
    release(w, &w->root_params);
    release(w, &w->root_lp);
    release(w, &w->block_grad);
    release(w, &w->root_grad);
    if (w->grad_shard) { /* the model's buffers were these shards: leave it none */
        release(w, &w->grad_shard);
        m->grads_flat.data = NULL;
    }
    if (w->param_shard) {
        release(w, &w->param_shard);
        m->params_flat.data = NULL;
        m->params_lp.data = NULL;
    }
    tr_dist_grads_free(w->grads);
    free(w->slices);
    free(w->gathered);
    free(w->gathered_lp);
    free(w->inflight);
    free(w);
}

tr_dist *tr_dist_gpt_dist(const tr_dist_gpt *w) { return w->d; }
const char *tr_dist_gpt_name(const tr_dist_gpt *w) { return w->name; }

void tr_dist_gpt_range(const tr_dist_gpt *w, size_t *begin, size_t *end)
{
    *begin = w->begin;
    *end = w->end;
}

/* ---- the step ------------------------------------------------------------------------ */

int tr_dist_gpt_forward_begin(tr_dist_gpt *w) { return sharded_params(w) ? root_gather(w) : TR_OK; }

int tr_dist_gpt_eval_end(tr_dist_gpt *w)
{
    if (sharded_params(w))
        root_release(w);
    return TR_OK;
}

int tr_dist_gpt_backward_begin(tr_dist_gpt *w, bool first, bool last)
{
    w->first = first;
    w->sync = last;
    if (!sharded_grads(w))
        return TR_OK;
    tr_gpt *m = w->m;
    size_t n_bytes = w->root_n * sizeof(float);
    int rc = malloc_named(w, (void **)&w->root_grad, n_bytes, "root gradients (unsharded)");
    if (rc < 0)
        return rc;
    m->be->memset0(m->be, w->root_grad, n_bytes, 0);
    size_t at = 0;
    for (int i = 0; i < 4; i++) {
        m->grads.all[root_tensors[i]].data = w->root_grad + at;
        at += (size_t)tr_tensor_numel(&m->grads.all[root_tensors[i]]);
    }
    return TR_OK;
}

int tr_dist_gpt_backward_end(tr_dist_gpt *w)
{
    int rc = TR_OK;
    float scale = 1.0f / (float)w->size;
    if (sharded_grads(w))
        rc = tr_dist_grads_finish(w->grads, w->grad_shard - w->begin, 0, scale, !w->first);
    else if (w->sync) /* DDP/ZeRO-1: the average replaces the local sum */
        rc = tr_dist_grads_finish(w->grads, w->m->grads_flat.data, 0, scale, false);
    if (sharded_params(w) && w->sync)
        root_release(w); /* the optimizer reads the shard only */
    return rc;
}

int tr_dist_gpt_grad_sumsq(tr_dist_gpt *w, bool fused, double *sumsq, bool *finite)
{
    double x[2];
    x[0] = tr_grad_sumsq(&w->m->base, fused, w->begin, w->end, finite);
    if (w->cfg.strategy == TR_DIST_DDP) { /* every rank holds the same whole gradient */
        *sumsq = x[0];
        return TR_OK;
    }
    x[1] = *finite ? 0 : 1;
    int rc = tr_dist_allreduce_sum(w->d, x, 2, "all-reduce grad norm");
    *sumsq = x[0];
    *finite = x[1] == 0;
    return rc;
}

/* ZeRO-1/2: every rank holds all parameters but wrote only its shard
 * (the update, a checkpoint): all of them need all of it. */
static int gather_params(tr_dist_gpt *w)
{
    if (w->cfg.strategy != TR_DIST_FSDP || w->cfg.zero >= 3)
        return TR_OK;
    float *p = w->m->params_flat.data;
    tr_dist_slice all = {0, w->n};
    tr_dist_gather *g;
    int rc = tr_dist_gather_start(&g, w->d, w->alloc, w->n, &all, 1, p + w->begin, w->begin, p,
                                  "all-gather parameters");
    return rc == TR_OK ? tr_dist_gather_wait(g) : rc;
}

int tr_dist_gpt_step_end(tr_dist_gpt *w, bool stepped) { return stepped ? gather_params(w) : TR_OK; }

int tr_dist_gpt_mean(tr_dist_gpt *w, float *x)
{
    double s = *x;
    int rc = tr_dist_allreduce_sum(w->d, &s, 1, "all-reduce loss");
    *x = (float)(s / w->size);
    return rc;
}

void tr_dist_gpt_get_memory(tr_dist_gpt *w, double optim_bytes_per_param, tr_dist_gpt_memory *out)
{
    int stage = w->cfg.strategy == TR_DIST_DDP ? 0 : w->cfg.zero;
    tr_dist_state_buffer bufs[4] = {{"fp32 parameters", 4, 3},
                                    {"gradients", 4, 2},
                                    {"optimizer state", optim_bytes_per_param, 1},
                                    {"amp weight copy", 0, 3}};
    if (w->m->amp != TR_F32 && stage < 3) /* ZeRO-3 keeps no copy between steps, only per gathered block */
        bufs[3].bytes_per_param = (double)tr_dtype_size(w->m->amp);
    out->expected_bytes = tr_dist_expected_bytes(bufs, 4, w->n, stage, w->size);
    out->paper_bytes = tr_dist_zero_paper_bytes(w->n, stage, w->size);
    tr_alloc_stats st;
    tr_alloc_get_stats(w->alloc, &st);
    out->measured_bytes = (double)st.allocated_bytes;
}

/* ---- checkpoints ------------------------------------------------------------------------ */

/* Every rank's status: rc where this rank failed, else an error when any
 * other did (so no rank goes on to wait for one that stopped). */
static int agree(tr_dist_gpt *w, int rc, const char *what, const char *path)
{
    int ok = rc >= 0;
    int rc_mpi = tr_dist_allreduce_min_int(w->d, &ok, 1, "checkpoint status");
    if (rc < 0)
        return rc;
    if (rc_mpi < 0)
        return rc_mpi;
    return ok ? TR_OK : tr_error_set(TR_EIO, "%s %s failed on another rank (see its message)", what, path);
}

/* Rank 0 writes one file from the shards gathered into host buffers. */
static int save_gathered(tr_dist_gpt *w, const char *path, const tr_optim *opt, const tr_ckpt_state *st)
{
    tr_gpt *m = w->m;
    int n_groups = 1 + tr_ckpt_n_optim_groups(&opt->cfg), rank = tr_dist_rank(w->d);
    size_t n_shard = w->end - w->begin;
    float *send = malloc(zmax(n_shard, 1) * sizeof(float)); /* host: MPI reads it, the device may be a GPU */
    float *all = rank == 0 ? malloc((size_t)n_groups * w->n * sizeof(float)) : NULL; /* (n_groups, n) */
    int rc = !send || (rank == 0 && !all) ? tr_error_set(TR_ENOMEM, "out of host memory gathering %s", path) : TR_OK;
    if (rc == TR_OK && (opt->begin != w->begin || opt->end != w->end))
        rc = tr_error_set(TR_EINVAL, "%s: the optimizer's range is not this rank's shard", path);
    rc = agree(w, rc, "gathering", path); /* before the first collective: none is left waiting */
    const float *dev[3] = {(float *)m->params_flat.data + w->begin, opt->m.data, opt->v.data};
    const float *groups_host[3];
    for (int g = 0; g < n_groups && rc == TR_OK; g++) {
        if (n_shard)
            m->be->copy_d2h(m->be, send, dev[g], n_shard * sizeof(float), 0);
        groups_host[g] = all ? all + (size_t)g * w->n : NULL;
        rc = tr_dist_gather_shards(w->d, send, w->n, all ? all + (size_t)g * w->n : NULL, 0, "gather checkpoint");
    }
    if (rc == TR_OK && rank == 0)
        rc = tr_ckpt_save_host(path, m, opt, st, groups_host);
    free(send);
    free(all);
    return rc;
}

int tr_dist_gpt_save(tr_dist_gpt *w, const char *path, bool full, const tr_optim *opt, const tr_ckpt_state *st)
{
    int rc = TR_OK, rank = tr_dist_rank(w->d);
    if (!full && w->cfg.strategy == TR_DIST_DDP)
        rc = tr_error_set(TR_EINVAL, "%s: DDP holds everything on every rank: its checkpoint is one full file", path);
    else if (full && w->cfg.strategy == TR_DIST_DDP)
        rc = rank == 0 ? tr_ckpt_save(path, w->m, opt, st) : TR_OK;
    else if (full)
        rc = save_gathered(w, path, opt, st);
    else
        rc = tr_ckpt_save_shard(path, w->m, opt, st,
                                &(tr_ckpt_shard){rank, w->size, w->cfg.zero, w->begin, w->end});
    return agree(w, rc, "saving", path);
}

int tr_dist_gpt_load(tr_dist_gpt *w, const char *path, tr_optim *opt, tr_ckpt_state *st)
{
    tr_ckpt_kind kind;
    int n_saved, rank = tr_dist_rank(w->d);
    int rc = tr_ckpt_locate(path, &kind, &n_saved);
    if (rc == TR_OK && kind == TR_CKPT_SHARDED && w->cfg.strategy == TR_DIST_DDP)
        rc = tr_error_set(TR_EINVAL, "%s is a sharded checkpoint (%s.rank0-of-%d ...), which DDP cannot resume: "
                          "resume it with --dist fsdp on %d ranks, or gather it there with --save-format full",
                          path, path, n_saved, n_saved);
    else if (rc == TR_OK && kind == TR_CKPT_SHARDED)
        rc = tr_ckpt_load_shard(path, w->m, opt, st, &(tr_ckpt_shard){rank, w->size, w->cfg.zero, w->begin, w->end});
    else if (rc == TR_OK) /* a full file, or none: its loader names what is missing */
        rc = tr_ckpt_load(path, w->m, opt, st);
    if ((rc = agree(w, rc, "resuming from", path)) < 0)
        return rc;
    /* every rank at the same point: not shards of different saves */
    int at[6] = {st->step < INT32_MAX ? (int)st->step : INT32_MAX, 0, opt->t, 0, (int)(st->seed % 2147483647u), 0};
    at[1] = -at[0];
    at[3] = -at[2];
    at[5] = -at[4];
    if ((rc = tr_dist_allreduce_min_int(w->d, at, 6, "checkpoint step")) < 0)
        return rc;
    if (at[0] != -at[1] || at[2] != -at[3] || at[4] != -at[5])
        return tr_error_set(TR_EFORMAT, "the shards of %s were saved at different steps (%d to %d) or from different "
                            "runs: a sharded checkpoint's files must come from one save", path, at[0], -at[1]);
    return gather_params(w);
}
