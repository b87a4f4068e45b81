/* train.c: the training step of train.h. */
#include "config.h"

#include "train.h"

#include "error.h"
#include "nvtx.h"
#ifdef HAVE_MPI
#include "dist_gpt.h"
#endif

#include <math.h>
#include <stdio.h>

int tr_train_config_check(const tr_train_config *c)
{
    if (c->accum < 1)
        return tr_error_set(TR_EINVAL, "--accum must be at least 1, not %d", c->accum);
    if (c->amp == TR_F32 && c->loss_scale > 0)
        return tr_error_set(TR_EINVAL, "--loss-scale needs mixed precision (--amp fp16 or bf16)");
    if (c->loss_scale < 0 || !isfinite(c->loss_scale))
        return tr_error_set(TR_EINVAL, "--loss-scale must be positive");
    if (c->ema_decay < 0 || c->ema_decay >= 1)
        return tr_error_set(TR_EINVAL, "--ema takes a decay in [0, 1), like 0.999");
    if (c->clip < 0)
        return tr_error_set(TR_EINVAL, "--clip takes a positive norm");
    if (c->optim.kind == TR_OPTIM_ADAMW && c->optim.momentum != 0)
        return tr_error_set(TR_EINVAL, "--momentum is for --optimizer sgd; AdamW has --beta1/--beta2");
    if (c->schedule.warmup >= c->schedule.total_steps && c->schedule.kind != TR_SCHEDULE_CONSTANT &&
        c->schedule.total_steps > 0)
        return tr_error_set(TR_EINVAL, "--warmup (%d) must be shorter than the run (%d steps) for a %s schedule",
                            c->schedule.warmup, c->schedule.total_steps,
                            c->schedule.kind == TR_SCHEDULE_COSINE ? "cosine" : "onecycle");
    return TR_OK;
}

/* Distributed training (dist_gpt.h): the hooks, and the shard this rank
 * updates. After AMP is set: ZeRO-3 replaces the weight copy by its own. */
static int dist_init(tr_trainer *t)
{
#ifdef HAVE_MPI
    const tr_train_config *c = &t->cfg;
    if (c->dist_cfg->strategy == TR_DIST_FSDP && c->dist_cfg->zero == 3 && c->ema_decay > 0)
        return tr_error_set(TR_EINVAL, "--ema keeps a whole copy of the weights, which --zero 3 shards; "
                                       "use --zero 1 or 2 with --ema");
    int rc = tr_dist_gpt_new(&t->dist, c->dist, t->model, c->dist_cfg);
    if (rc < 0)
        return rc;
    tr_dist_gpt_range(t->dist, &t->shard_begin, &t->shard_end);
    return TR_OK;
#else
    (void)t;
    return tr_error_set(TR_EINVAL, "this trainer was built without Open MPI: no distributed training");
#endif
}

int tr_trainer_init(tr_trainer *t, tr_gpt *model, const tr_train_config *cfg)
{
    *t = (tr_trainer){.cfg = *cfg, .model = model, .shard_begin = 0, .shard_end = model->n_params};
    int rc = tr_train_config_check(cfg);
    if (rc < 0 || (rc = tr_gpt_set_amp(model, cfg->amp)) < 0)
        return rc;
    model->checkpoint = cfg->checkpoint;
    model->fuse = cfg->fuse;
    if (cfg->dist && (rc = dist_init(t)) < 0)
        return rc;
    tr_optim_config oc = cfg->optim;
    oc.fused = cfg->fuse;
    if ((rc = tr_optim_init(&t->opt, model, &oc, t->shard_begin, t->shard_end)) < 0)
        return rc;
    if (cfg->ema_decay > 0 && (rc = tr_ema_init(&t->ema, model, cfg->ema_decay)) < 0) {
        tr_optim_release(&t->opt, model);
        return rc;
    }
    if (cfg->loss_scale > 0)
        tr_scaler_fixed(&t->scaler, cfg->loss_scale);
    else if (cfg->amp == TR_F16)
        tr_scaler_dynamic(&t->scaler, cfg->init_scale > 0 ? cfg->init_scale : 65536.0f,
                          cfg->growth_interval > 0 ? cfg->growth_interval : 2000);
    else
        tr_scaler_off(&t->scaler);
    tr_gpt_zero_grad(model);
    return TR_OK;
}

void tr_trainer_release(tr_trainer *t)
{
    if (!t->model)
        return;
    tr_optim_release(&t->opt, t->model);
    if (t->ema.w.data)
        tr_ema_release(&t->ema, t->model);
#ifdef HAVE_MPI
    tr_dist_gpt_free(t->dist);
    t->dist = NULL;
#endif
    t->model = NULL;
}

void tr_trainer_eval_weights(tr_trainer *t, bool begin)
{
    (void)begin; /* swapping is its own inverse */
    if (t->ema.w.data)
        tr_ema_swap(&t->ema, t->model);
}

int tr_train_step(tr_trainer *t, tr_loader *loader, int step, int B, int T, tr_step_result *r)
{
    tr_gpt *m = t->model;
    const tr_train_config *c = &t->cfg;
    char name[32];
    snprintf(name, sizeof name, "step %d", step);
    tr_nvtx_push(name);
    *r = (tr_step_result){.lr = tr_schedule_lr(&c->schedule, step), .scale = t->scaler.scale,
                          .grad_norm = NAN};
    int rc = TR_OK;
    double loss_sum = 0;
    /* each micro-batch's mean loss counts 1/K, times the loss scale */
    m->dloss = t->scaler.scale / c->accum;
    for (int k = 0; k < c->accum && rc >= 0; k++) {
        const tr_batch *b;
        float loss = NAN; /* stays NaN when the loss is not read back */
        tr_nvtx_push_static("data");
        rc = tr_loader_next(loader, &b);
        tr_nvtx_pop();
        if (rc < 0)
            break;
        tr_nvtx_push_static("forward");
        size_t row0 = (size_t)t->row0 * T; /* this rank's rows of the global batch */
#ifdef HAVE_MPI
        if (t->dist)
            rc = tr_dist_gpt_forward_begin(t->dist); /* ZeRO-3: the root unit */
#endif
        if (rc >= 0)
            rc = tr_gpt_forward(m, b->inputs + row0, b->targets + row0, B, T, true,
                                t->skip_loss && !t->dist ? NULL : &loss);
        tr_nvtx_pop();
        if (rc < 0)
            break;
        tr_nvtx_push_static("backward");
#ifdef HAVE_MPI
        if (t->dist) /* DDP communicates on the last micro-batch only */
            rc = tr_dist_gpt_backward_begin(t->dist, k == 0, k == c->accum - 1);
#endif
        if (rc >= 0)
            rc = tr_gpt_backward(m);
#ifdef HAVE_MPI
        if (rc >= 0 && t->dist)
            rc = tr_dist_gpt_backward_end(t->dist);
#endif
        tr_nvtx_pop();
        loss_sum += loss;
    }
    if (rc < 0) {
        tr_nvtx_pop();
        return rc;
    }
    r->loss = (float)(loss_sum / c->accum);
#ifdef HAVE_MPI
    if (t->dist && (rc = tr_dist_gpt_mean(t->dist, &r->loss)) < 0) {
        tr_nvtx_pop();
        return rc;
    }
#endif

    /* Gradient checks: one pass for the norm and inf/NaN when needed */
    float grad_scale = 1.0f / t->scaler.scale;
    bool finite = true;
    if (t->scaler.enabled || c->clip > 0) {
        double sumsq = 0;
#ifdef HAVE_MPI
        if (t->dist && (rc = tr_dist_gpt_grad_sumsq(t->dist, c->fuse, &sumsq, &finite)) < 0) {
            tr_nvtx_pop();
            return rc;
        }
        if (!t->dist)
#endif
            sumsq = tr_grad_sumsq(m, c->fuse, t->shard_begin, t->shard_end, &finite);
        if (finite) {
            double norm = sqrt(sumsq) / t->scaler.scale;
            r->grad_norm = (float)norm;
            if (c->clip > 0 && norm > c->clip)
                grad_scale *= (float)(c->clip / (norm + 1e-6));
        }
    }
    bool take = tr_scaler_update(&t->scaler, !finite);
    if (t->scaler.enabled)
        tr_nvtx_mark_value("loss scale", r->scale);
    if (take) {
        tr_optim_step(&t->opt, m, r->lr, grad_scale);
        m->params_lp_stale = true;
#ifdef HAVE_MPI
        if (t->dist && (rc = tr_dist_gpt_step_end(t->dist, true)) < 0) { /* ZeRO-1/2: gather the update */
            tr_nvtx_pop();
            return rc;
        }
#endif
        if (t->ema.w.data)
            tr_ema_update(&t->ema, m);
    } else {
        r->skipped = true;
        tr_nvtx_mark_value("skipped step", r->scale);
    }
    tr_gpt_zero_grad(m);
    tr_nvtx_pop();
    return TR_OK;
}
