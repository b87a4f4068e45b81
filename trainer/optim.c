/* optim.c: the optimizers, gradient norm, EMA and schedules of optim.h.
 * Every update is element-wise over the flat buffers, so a shard [begin, end)
 * is updated exactly as the whole would be. */
#include "optim.h"

#include "alloc.h"
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

/* Calls fn on the part of each parameter slice inside [begin, end). */
typedef void (*slice_fn)(void *ctx, const tr_param_slice *sl, size_t lo, size_t hi);
static void for_each_slice(const tr_model *model, size_t begin, size_t end, slice_fn fn, void *ctx)
{
    for (int i = 0; i < model->n_slices; i++) {
        const tr_param_slice *sl = &model->slices[i];
        size_t lo = sl->lo < begin ? begin : sl->lo, hi = sl->hi > end ? end : sl->hi;
        if (lo < hi)
            fn(ctx, sl, lo, hi);
    }
}

int tr_optim_init(tr_optim *o, tr_model *model, const tr_optim_config *cfg, size_t begin, size_t end)
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

void tr_optim_release(tr_optim *o, tr_model *model)
{
    tr_alloc_release(model->alloc, o->m.data);
    tr_alloc_release(model->alloc, o->v.data);
    o->m.data = o->v.data = NULL;
}

typedef struct step_ctx {
    tr_optim *o;
    tr_model *model;
    const tr_step_hyper *h;
} step_ctx;

static void step_slice(void *ctx, const tr_param_slice *sl, size_t lo, size_t hi)
{
    step_ctx *c = ctx;
    tr_optim *o = c->o;
    tr_model *model = c->model;
    tr_backend *be = model->be;
    size_t n = hi - lo;
    tr_tensor p = flat(model->params, lo, n), g = flat(model->grads, lo, n);
    tr_tensor m = o->m.data ? flat(&o->m, lo - o->begin, n) : (tr_tensor){0};
    float wd = sl->decays ? o->cfg.weight_decay : 0.0f;
    if (o->cfg.kind == TR_OPTIM_ADAMW) {
        tr_tensor v = flat(&o->v, lo - o->begin, n);
        be->adamw(be, &p, &g, &m, &v, c->h, o->cfg.beta1, o->cfg.beta2, o->cfg.eps, wd);
    } else {
        be->sgd(be, &p, &g, o->m.data ? &m : NULL, c->h, o->cfg.momentum, wd);
    }
}

/* The fused path's range table: the tensors' bounds inside [begin, end). */
typedef struct ranges {
    size_t bounds[TR_MAX_SLICES + 1];
    float decay[TR_MAX_SLICES];
    int n;
    float wd;
} ranges;

static void add_range(void *ctx, const tr_param_slice *sl, size_t lo, size_t hi)
{
    ranges *r = ctx;
    r->bounds[r->n] = lo;
    r->decay[r->n] = sl->decays ? r->wd : 0.0f;
    r->bounds[++r->n] = hi;
}

tr_step_hyper tr_optim_host_step(tr_optim *o, float lr, float grad_scale)
{
    o->t++;
    return (tr_step_hyper){.lr = lr, .grad_scale = grad_scale, .t = o->t, .scaled = grad_scale != 1.0f};
}

void tr_optim_step(tr_optim *o, tr_model *model, const tr_step_hyper *h)
{
    tr_nvtx_push_static("optimizer");
    tr_backend *be = model->be;
    if (o->end > o->begin) {
        if (o->cfg.fused && o->cfg.kind == TR_OPTIM_ADAMW) {
            ranges r = {.wd = o->cfg.weight_decay};
            for_each_slice(model, o->begin, o->end, add_range, &r);
            /* the kernel indexes param/grad/m/v alike: shift the state so index i is element i */
            tr_tensor p = flat(model->params, 0, model->n_params);
            tr_tensor g = flat(model->grads, 0, model->n_params);
            tr_tensor m = o->m, v = o->v;
            m.data = (float *)o->m.data - o->begin;
            v.data = (float *)o->v.data - o->begin;
            be->adamw_fused(be, &p, &g, &m, &v, r.bounds, r.decay, r.n, h, o->cfg.beta1, o->cfg.beta2, o->cfg.eps);
        } else {
            if (h->scaled) {
                tr_tensor g = flat(model->grads, o->begin, o->end - o->begin);
                be->unscale(be, &g, h);
            }
            step_ctx c = {o, model, h};
            for_each_slice(model, o->begin, o->end, step_slice, &c);
        }
    }
    tr_nvtx_pop();
}

void tr_ema_update(tr_ema *e, tr_model *model, const tr_step_hyper *h)
{
    tr_nvtx_push_static("ema");
    model->be->ema(model->be, &e->w, model->params, e->decay, h);
    if (e->stats.data)
        model->be->ema(model->be, &e->stats, model->stats, e->decay, h);
    tr_nvtx_pop();
}

/* ---- the gradient check: read back (the host decides), or into the device state ---- */

typedef struct norm_ctx {
    tr_model *model;
    bool on_device; /* accumulate into the device state, read nothing back */
    bool fused;
    double sumsq;
    bool finite;
} norm_ctx;

/* One slice of the check: fused, one pass for both; unfused, the sum of
 * squares and the finite check per tensor, as torch.nn.utils.clip_grad_norm_
 * without foreach. */
static void norm_slice(void *ctx, const tr_param_slice *sl, size_t lo, size_t hi)
{
    (void)sl;
    norm_ctx *c = ctx;
    tr_backend *be = c->model->be;
    tr_tensor g = flat(c->model->grads, lo, hi - lo);
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
        norm_slice(c, NULL, begin, end);
    else
        for_each_slice(c->model, begin, end, norm_slice, c);
    tr_nvtx_pop();
}

double tr_grad_sumsq(tr_model *model, bool fused, size_t begin, size_t end, bool *finite)
{
    norm_ctx c = {.model = model, .fused = fused || model->check_one_pass, .finite = true};
    grad_check(&c, begin, end);
    *finite = c.finite;
    return c.sumsq;
}

void tr_grad_check_device(tr_model *model, bool fused, size_t begin, size_t end)
{
    norm_ctx c = {.model = model, .on_device = true, .fused = fused || model->check_one_pass, .finite = true};
    grad_check(&c, begin, end);
}

/* A copy of src (n elements) named name. */
static int copy_of(tr_model *model, const tr_tensor *src, size_t n, const char *name, tr_tensor *out)
{
    void *w;
    int rc = tr_alloc_malloc(model->alloc, &w, n * sizeof(float), 0);
    if (rc < 0)
        return rc;
    tr_alloc_name(model->alloc, w, name);
    model->be->copy_d2h(model->be, w, src->data, n * sizeof(float), 0); /* same device: a plain copy */
    *out = (tr_tensor){w, TR_F32, src->device, 1, {(int64_t)n}};
    return TR_OK;
}

int tr_ema_init(tr_ema *e, tr_model *model, float decay)
{
    memset(e, 0, sizeof *e);
    e->decay = decay;
    int rc = copy_of(model, model->params, model->n_params, "ema weights", &e->w);
    if (rc >= 0 && model->stats &&
        (rc = copy_of(model, model->stats, (size_t)tr_tensor_numel(model->stats), model->ema_stats_name,
                      &e->stats)) < 0)
        tr_ema_release(e, model);
    return rc;
}

void tr_ema_release(tr_ema *e, tr_model *model)
{
    tr_alloc_release(model->alloc, e->w.data);
    tr_alloc_release(model->alloc, e->stats.data);
    e->w.data = e->stats.data = NULL;
}

void tr_ema_swap(tr_ema *e, tr_model *model)
{
    /* swap the buffers, not the bytes: the views follow the flat pointers */
    void *w = e->w.data, *s = e->stats.data;
    e->w.data = model->params->data;
    if (s)
        e->stats.data = model->stats->data;
    model->ops->point_params(model, w, s);
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
