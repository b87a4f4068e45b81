/* optim.c: the optimizers, gradient norm, EMA and schedules of optim.h.
 * Every update is element-wise over the flat buffers, so a shard [begin, end)
 * is updated exactly as the whole would be. */
#include "optim.h"

#include "error.h"
#include "nvtx.h"

#include <math.h>
#include <string.h>

/* A flat 1-D view of n elements at offset off of t's buffer. */
static tr_tensor flat(const tr_tensor *t, size_t off, size_t n)
{
    tr_tensor r = {(float *)t->data + off, TR_F32, t->device, 1, {(int64_t)n}};
    return r;
}

static size_t offset_of(const tr_gpt *model, int i)
{
    return (size_t)((float *)model->params.all[i].data - (float *)model->params_flat.data);
}

/* Matrices and embeddings decay; biases and LayerNorm gains do not. */
static bool decays(const tr_gpt *model, int i) { return i < 2 || model->params.all[i].n_dims == 3; }

/* Calls fn on the part of each parameter tensor inside [begin, end). */
typedef void (*slice_fn)(void *ctx, int i, size_t lo, size_t hi);
static void for_each_slice(const tr_gpt *model, size_t begin, size_t end, slice_fn fn, void *ctx)
{
    for (int i = 0; i < TR_GPT_N_TENSORS; i++) {
        size_t lo = offset_of(model, i), hi = lo + (size_t)tr_tensor_numel(&model->params.all[i]);
        if (lo < begin)
            lo = begin;
        if (hi > end)
            hi = end;
        if (lo < hi)
            fn(ctx, i, lo, hi);
    }
}

int tr_optim_init(tr_optim *o, tr_gpt *model, const tr_optim_config *cfg, size_t begin, size_t end)
{
    memset(o, 0, sizeof *o);
    if (begin > end || end > model->n_params)
        return tr_error_set(TR_EINVAL, "optimizer range [%zu, %zu) is outside the %zu parameters", begin, end,
                            model->n_params);
    o->cfg = *cfg;
    o->begin = begin;
    o->end = end;
    size_t n = end - begin, n_bytes = n * sizeof(float);
    bool adamw = cfg->kind == TR_OPTIM_ADAMW, need_m = adamw || cfg->momentum != 0.0f;
    void *m = NULL, *v = NULL;
    int rc;
    if (need_m && n) {
        if ((rc = tr_alloc_malloc(model->alloc, &m, n_bytes, 0)) < 0)
            return rc;
        tr_alloc_name(model->alloc, m, adamw ? "adamw m" : "sgd momentum");
        model->be->memset0(model->be, m, n_bytes, 0);
    }
    if (adamw && n) {
        if ((rc = tr_alloc_malloc(model->alloc, &v, n_bytes, 0)) < 0) {
            tr_alloc_release(model->alloc, m);
            return rc;
        }
        tr_alloc_name(model->alloc, v, "adamw v");
        model->be->memset0(model->be, v, n_bytes, 0);
    }
    o->m = (tr_tensor){m, TR_F32, model->be->device, 1, {(int64_t)n}};
    o->v = (tr_tensor){v, TR_F32, model->be->device, 1, {(int64_t)n}};
    return TR_OK;
}

void tr_optim_release(tr_optim *o, tr_gpt *model)
{
    tr_alloc_release(model->alloc, o->m.data);
    tr_alloc_release(model->alloc, o->v.data);
    o->m.data = o->v.data = NULL;
}

typedef struct step_ctx {
    tr_optim *o;
    tr_gpt *model;
    const tr_step_hyper *h;
} step_ctx;

static void step_slice(void *ctx, int i, size_t lo, size_t hi)
{
    step_ctx *c = ctx;
    tr_optim *o = c->o;
    tr_gpt *model = c->model;
    tr_backend *be = model->be;
    size_t n = hi - lo;
    tr_tensor p = flat(&model->params_flat, lo, n), g = flat(&model->grads_flat, lo, n);
    tr_tensor m = o->m.data ? flat(&o->m, lo - o->begin, n) : (tr_tensor){0};
    float wd = decays(model, i) ? o->cfg.weight_decay : 0.0f;
    if (o->cfg.kind == TR_OPTIM_ADAMW) {
        tr_tensor v = flat(&o->v, lo - o->begin, n);
        be->adamw(be, &p, &g, &m, &v, c->h, o->cfg.beta1, o->cfg.beta2, o->cfg.eps, wd);
    } else {
        be->sgd(be, &p, &g, o->m.data ? &m : NULL, c->h, o->cfg.momentum, wd);
    }
}

/* The fused path's range table: the tensors' bounds inside [begin, end). */
typedef struct ranges {
    size_t bounds[TR_GPT_N_TENSORS + 1];
    float decay[TR_GPT_N_TENSORS];
    int n;
    float wd;
    const tr_gpt *model;
} ranges;

static void add_range(void *ctx, int i, size_t lo, size_t hi)
{
    ranges *r = ctx;
    r->bounds[r->n] = lo;
    r->decay[r->n] = decays(r->model, i) ? r->wd : 0.0f;
    r->bounds[++r->n] = hi;
}

tr_step_hyper tr_optim_host_step(tr_optim *o, float lr, float grad_scale)
{
    o->t++;
    return (tr_step_hyper){.lr = lr, .grad_scale = grad_scale, .t = o->t, .scaled = grad_scale != 1.0f};
}

void tr_optim_step(tr_optim *o, tr_gpt *model, const tr_step_hyper *h)
{
    tr_nvtx_push_static("optimizer");
    tr_backend *be = model->be;
    if (o->end > o->begin) {
        if (o->cfg.fused && o->cfg.kind == TR_OPTIM_ADAMW) {
            ranges r = {.wd = o->cfg.weight_decay, .model = model};
            for_each_slice(model, o->begin, o->end, add_range, &r);
            /* the kernel indexes param/grad/m/v alike: shift the state so index i is element i */
            tr_tensor p = flat(&model->params_flat, 0, model->n_params);
            tr_tensor g = flat(&model->grads_flat, 0, model->n_params);
            tr_tensor m = o->m, v = o->v;
            m.data = (float *)o->m.data - o->begin;
            v.data = (float *)o->v.data - o->begin;
            be->adamw_fused(be, &p, &g, &m, &v, r.bounds, r.decay, r.n, h, o->cfg.beta1, o->cfg.beta2, o->cfg.eps);
        } else {
            if (h->scaled) {
                tr_tensor g = flat(&model->grads_flat, o->begin, o->end - o->begin);
                be->unscale(be, &g, h);
            }
            step_ctx c = {o, model, h};
            for_each_slice(model, o->begin, o->end, step_slice, &c);
        }
    }
    tr_nvtx_pop();
}

void tr_ema_update(tr_ema *e, tr_gpt *model, const tr_step_hyper *h)
{
    tr_nvtx_push_static("ema");
    model->be->ema(model->be, &e->w, &model->params_flat, e->decay, h);
    tr_nvtx_pop();
}

/* ---- the gradient check: read back (the host decides), or into the device state ---- */

typedef struct norm_ctx {
    tr_gpt *model;
    bool on_device; /* accumulate into the device state, read nothing back */
    bool fused;
    double sumsq;
    bool finite;
} norm_ctx;

/* One slice of the check: fused, one pass for both; unfused, the sum of
 * squares and the finite check per tensor, as torch.nn.utils.clip_grad_norm_
 * without foreach. */
static void norm_slice(void *ctx, int i, size_t lo, size_t hi)
{
    (void)i;
    norm_ctx *c = ctx;
    tr_backend *be = c->model->be;
    tr_tensor g = flat(&c->model->grads_flat, lo, hi - lo);
    if (c->on_device) {
        be->step_ops->check_grads(be, &g);
    } else if (c->fused) {
        int ok;
        c->sumsq += be->sumsq_finite(be, &g, &ok);
        c->finite = c->finite && ok;
    } else {
        c->sumsq += be->sumsq(be, &g);
        c->finite = c->finite && be->all_finite(be, &g);
    }
}

static void grad_check(norm_ctx *c, size_t begin, size_t end)
{
    tr_nvtx_push_static("grad norm");
    if (c->fused)
        norm_slice(c, -1, begin, end);
    else
        for_each_slice(c->model, begin, end, norm_slice, c);
    tr_nvtx_pop();
}

double tr_grad_sumsq(tr_gpt *model, bool fused, size_t begin, size_t end, bool *finite)
{
    norm_ctx c = {.model = model, .fused = fused, .finite = true};
    grad_check(&c, begin, end);
    *finite = c.finite;
    return c.sumsq;
}

void tr_grad_check_device(tr_gpt *model, bool fused, size_t begin, size_t end)
{
    norm_ctx c = {.model = model, .on_device = true, .fused = fused, .finite = true};
    grad_check(&c, begin, end);
}

int tr_ema_init(tr_ema *e, tr_gpt *model, float decay)
{
    memset(e, 0, sizeof *e);
    e->decay = decay;
    size_t n_bytes = model->n_params * sizeof(float);
    void *w;
    int rc = tr_alloc_malloc(model->alloc, &w, n_bytes, 0);
    if (rc < 0)
        return rc;
    tr_alloc_name(model->alloc, w, "ema weights");
    model->be->copy_d2h(model->be, w, model->params_flat.data, n_bytes, 0); /* same device: a plain copy */
    e->w = model->params_flat;
    e->w.data = w;
    return TR_OK;
}

void tr_ema_release(tr_ema *e, tr_gpt *model)
{
    tr_alloc_release(model->alloc, e->w.data);
    e->w.data = NULL;
}

void tr_ema_swap(tr_ema *e, tr_gpt *model)
{
    /* swap the buffers, not the bytes: the views follow the flat pointer */
    void *w = e->w.data;
    e->w.data = model->params_flat.data;
    tr_gpt_point_params(model, w);
}

float tr_schedule_lr(const tr_schedule *s, int step)
{
    const double pi = 3.141592653589793;
    double lr = s->lr;
    if (s->kind == TR_SCHEDULE_ONECYCLE) {
        /* OneCycleLR's defaults: div_factor 25, final_div_factor 1e4, cosine annealing */
        double lo = lr / 25.0, end = lo / 1e4;
        /* phase ends as OneCycleLR computes them: pct_start * total - 1, then total - 1 */
        double rise = s->warmup > 0 ? s->warmup : 0.3 * s->total_steps - 1, last = s->total_steps - 1;
        if (rise < 1)
            rise = 1;
        if (step <= rise) {
            double p = step / rise;
            return (float)(lr + (lo - lr) * 0.5 * (1.0 + cos(pi * p)));
        }
        double p = last > rise ? (step - rise) / (last - rise) : 1.0;
        if (p > 1)
            p = 1;
        return (float)(end + (lr - end) * 0.5 * (1.0 + cos(pi * p)));
    }
    if (step < s->warmup)
        return (float)(lr * (step + 1) / s->warmup);
    if (s->kind == TR_SCHEDULE_CONSTANT)
        return (float)lr;
    int span = s->total_steps - s->warmup;
    double p = span > 1 ? (double)(step - s->warmup) / (span - 1) : 1.0;
    if (p > 1)
        p = 1;
    return (float)(lr * (s->min_frac + (1.0 - s->min_frac) * 0.5 * (1.0 + cos(pi * p))));
}
