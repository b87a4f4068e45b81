/* train.c: the training loop and step of train.h, one body whatever the
 * model (model.h) and whoever decides the step: on the host (the CPU
 * backend, distributed training: the verdict read back, the optimizer given
 * values) or on the device (kernels/step_state.h: the optimizer given the
 * device state), eagerly or as a captured CUDA graph. */
#include "config.h"

#include "train.h"

#include "error.h"
#include "nvtx.h"
#include "step_state.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int dist_forward_begin(tr_trainer *t);

/* --cuda-graph: eager steps before the capture: at least one (it makes the
 * GEMM plans, sizes the workspaces and fills the allocator's cache), then
 * until a step takes no new segment, at most this many. */
enum { GRAPH_MAX_WARMUP = 3, GRAPH_INPUTS_ALIGN = 64 };

void tr_train_config_scaler(const tr_train_config *c, tr_scaler *s)
{
    if (c->loss_scale > 0)
        tr_scaler_fixed(s, c->loss_scale);
    else if (c->amp == TR_F16)
        tr_scaler_dynamic(s, c->init_scale > 0 ? c->init_scale : 65536.0f,
                          c->growth_interval > 0 ? c->growth_interval : 2000);
    else
        tr_scaler_off(s);
}

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
    if (c->cuda_graph && c->dist)
        return tr_error_set(TR_EINVAL, "--cuda-graph with --dist: the collectives are not captured yet; "
                                       "train without one of them");
    if (c->optim.kind == TR_OPTIM_ADAMW && c->optim.momentum != 0)
        return tr_error_set(TR_EINVAL, "--momentum is for --optimizer sgd; AdamW has --beta1/--beta2");
    if (c->schedule.warmup >= c->schedule.total_steps && c->schedule.kind != TR_SCHEDULE_CONSTANT &&
        c->schedule.total_steps > 0)
        return tr_error_set(TR_EINVAL, "--warmup (%d) must be shorter than the run (%d steps) for a %s schedule",
                            c->schedule.warmup, c->schedule.total_steps,
                            c->schedule.kind == TR_SCHEDULE_COSINE ? "cosine" : "onecycle");
    return TR_OK;
}

/* Distributed training (tr_train_dist): the hooks, and the shard this rank
 * updates. After AMP is set: ZeRO-3 replaces the weight copy by its own. */
static int dist_init(tr_trainer *t)
{
    const tr_train_config *c = &t->cfg;
    if (c->dist->shards_weights && c->ema_decay > 0)
        return tr_error_set(TR_EINVAL, "--ema keeps a whole copy of the weights, which --zero 3 shards; "
                                       "use --zero 1 or 2 with --ema");
    int rc = c->dist->attach(&t->dist, c->dist->ctx, t->gpt);
    if (rc < 0)
        return rc;
    c->dist->range(t->dist, &t->shard_begin, &t->shard_end);
    return TR_OK;
}

/* The optimizer, the EMA and the scaler of a model set up. */
static int init_step_state(tr_trainer *t)
{
    const tr_train_config *cfg = &t->cfg;
    tr_optim_config oc = cfg->optim;
    oc.fused = cfg->fuse;
    int rc = tr_optim_init(&t->opt, t->model, &oc, t->shard_begin, t->shard_end);
    if (rc < 0)
        return rc;
    if (cfg->ema_decay > 0 && (rc = tr_ema_init(&t->ema, t->model, cfg->ema_decay)) < 0) {
        tr_optim_release(&t->opt, t->model);
        return rc;
    }
    tr_train_config_scaler(cfg, &t->scaler);
    t->model->ops->zero_grad(t->model);
    return TR_OK;
}

int tr_trainer_init_model(tr_trainer *t, tr_model *model, const tr_train_config *cfg)
{
    *t = (tr_trainer){.cfg = *cfg, .model = model, .shard_begin = 0, .shard_end = model->n_params};
    t->graph.captured_at = -1;
    int rc = tr_train_config_check(cfg);
    if (rc < 0)
        return rc;
    if (cfg->cuda_graph || cfg->dist)
        return tr_error_set(TR_EINVAL, "--cuda-graph and --dist are the GPT's");
    return init_step_state(t);
}

int tr_trainer_init(tr_trainer *t, tr_gpt *model, const tr_train_config *cfg)
{
    *t = (tr_trainer){.cfg = *cfg, .model = &model->base, .gpt = model, .shard_begin = 0,
                      .shard_end = model->n_params};
    t->graph.captured_at = -1;
    int rc = tr_train_config_check(cfg);
    if (rc < 0)
        return rc;
    if (cfg->cuda_graph && !model->be->step_ops)
        return tr_error_set(TR_EINVAL, "--cuda-graph needs a GPU: the %s backend has no graphs (--backend cuda)",
                            model->be->name);
    t->on_device = model->be->step_ops && !cfg->dist;
    if ((rc = tr_gpt_set_amp(model, cfg->amp)) < 0)
        return rc;
    model->checkpoint = cfg->checkpoint;
    model->fuse = cfg->fuse;
    if (cfg->dist && (rc = dist_init(t)) < 0)
        return rc;
    return init_step_state(t);
}

void tr_trainer_release(tr_trainer *t)
{
    if (!t->model)
        return;
    tr_backend *be = t->model->be;
    if (t->graph.captured_at >= 0) {
        be->step_ops->graph_free(be); /* waits for the last replay */
        tr_alloc_graph_release(t->model->alloc);
        t->graph.captured_at = -1;
    }
    if (t->graph.inputs) {
        be->synchronize(be, 0); /* no copy reads them any more */
        be->step_ops->pinned_free(be, t->graph.inputs);
        t->graph.inputs = NULL;
    }
    tr_optim_release(&t->opt, t->model);
    if (t->ema.w.data)
        tr_ema_release(&t->ema, t->model);
    if (t->dist)
        t->cfg.dist->detach(t->dist);
    t->dist = NULL;
    t->model = NULL;
    t->gpt = NULL;
}

int tr_trainer_evaluate(tr_trainer *t, tr_loader *val, int n_batches, int B, int T, float *loss)
{
    tr_gpt *m = t->gpt;
    tr_nvtx_push_static("eval");
    int rc = tr_loader_seek(val, 0); /* the same batches every time: comparable numbers */
    double s = 0;
    size_t row0 = (size_t)t->row0 * T;
    for (int i = 0; i < n_batches && rc >= 0; i++) {
        const tr_batch *b;
        float l = 0;
        if ((rc = tr_loader_next(val, &b)) >= 0 && (rc = dist_forward_begin(t)) >= 0)
            rc = tr_gpt_forward(m, b->inputs + row0, b->targets + row0, B, T, false, &l);
        s += l;
    }
    *loss = (float)(s / n_batches);
    if (rc >= 0 && t->dist && (rc = t->cfg.dist->eval_end(t->dist)) >= 0)
        rc = t->cfg.dist->mean(t->dist, loss);
    tr_nvtx_pop();
    return rc;
}

void tr_trainer_eval_weights(tr_trainer *t, bool begin)
{
    (void)begin; /* swapping is its own inverse */
    if (t->ema.w.data)
        tr_ema_swap(&t->ema, t->model);
}

/* ---- the step decided on the device (step_state.h) ---- */

/* The device state from the host's scaler and optimizer step count. */
static int device_load(tr_trainer *t)
{
    tr_backend *be = t->model->be;
    tr_step_state st = {.scaler = t->scaler, .clip = t->cfg.clip, .check = t->scaler.enabled || t->cfg.clip > 0,
                        .t = t->opt.t, .scale_used = t->scaler.scale, .grad_scale = 1.0f, .grad_norm = NAN,
                        .finite = 1};
    int rc = be->step_ops->load(be, &st);
    if (rc >= 0)
        t->device_loaded = true;
    return rc;
}

void tr_trainer_sync(tr_trainer *t)
{
    if (!t->on_device || !t->device_loaded)
        return;
    tr_backend *be = t->model->be;
    tr_step_state st;
    be->step_ops->read(be, &st);
    t->scaler = st.scaler;
    t->opt.t = st.t;
}

/* The last step's loss, scale and verdict (one wait), and the host's
 * mirrors of the state; the marks a host-decided step makes at once. */
static void device_read(tr_trainer *t, tr_step_result *r)
{
    tr_backend *be = t->model->be;
    tr_step_state st;
    be->step_ops->read(be, &st);
    t->scaler = st.scaler;
    t->opt.t = st.t;
    r->loss = (float)(st.loss_sum / t->cfg.accum);
    r->scale = st.scale_used;
    r->grad_norm = st.grad_norm;
    r->skipped = st.skipped != 0;
    if (t->scaler.enabled)
        tr_nvtx_mark_value("loss scale", r->scale);
    if (r->skipped)
        tr_nvtx_mark_value("skipped step", r->scale);
}

/* Micro-batch k's tokens in the graph's pinned inputs. */
static int32_t *graph_tokens(const tr_trainer *t, int k, bool targets)
{
    size_t n = (size_t)t->graph.B * t->graph.T;
    return (int32_t *)((char *)t->graph.inputs + GRAPH_INPUTS_ALIGN) + (2 * (size_t)k + targets) * n;
}

/* ---- distributed training's hooks into the step (tr_train_dist); nothing in one process ---- */

static int dist_forward_begin(tr_trainer *t)
{
    if (t->dist)
        return t->cfg.dist->forward_begin(t->dist); /* ZeRO-3: the root unit */
    return TR_OK;
}

static int dist_backward(tr_trainer *t, int k)
{
    int rc = TR_OK;
    if (t->dist) /* DDP communicates on the last micro-batch only */
        rc = t->cfg.dist->backward_begin(t->dist, k == 0, k == t->cfg.accum - 1);
    if (rc >= 0)
        rc = t->model->ops->backward(t->model, k);
    if (rc >= 0 && t->dist)
        rc = t->cfg.dist->backward_end(t->dist);
    return rc;
}

/* The ranks' mean loss; every rank skips the same steps (main.c decides from
 * the step number alone), so the collective is skipped with the read-back. */
static int dist_mean_loss(tr_trainer *t, double *loss)
{
    if (t->dist && !t->skip_loss) {
        float l = (float)*loss;
        int rc = t->cfg.dist->mean(t->dist, &l);
        *loss = l;
        return rc;
    }
    return TR_OK;
}

static int grad_sumsq(tr_trainer *t, double *sumsq, bool *finite)
{
    if (t->dist)
        return t->cfg.dist->grad_sumsq(t->dist, t->cfg.fuse, sumsq, finite);
    *sumsq = tr_grad_sumsq(t->model, t->cfg.fuse, t->shard_begin, t->shard_end, finite);
    return TR_OK;
}

static int dist_step_end(tr_trainer *t)
{
    if (t->dist)
        return t->cfg.dist->step_end(t->dist, true); /* ZeRO-1/2: gather the update */
    return TR_OK;
}

/* ---- the step, decided on the host or on the device ---- */

/* Micro-batch k: its batch from src; the forward (loss: read back into it,
 * NULL: not read back; on the device the state adds it up) and the
 * backward. */
static int micro_batch(tr_trainer *t, const tr_batches *src, int k, float dloss, bool capturing, double *loss)
{
    tr_model *m = t->model;
    tr_backend *be = m->be;
    const tr_step_ops *ops = t->on_device ? be->step_ops : NULL;
    const void *batch;
    int rc = src->next(src->ctx, k, &batch);
    if (rc < 0)
        return rc;
    tr_nvtx_push_static("forward");
    rc = dist_forward_begin(t);
    if (rc >= 0)
        rc = m->ops->forward(m, batch, dloss, loss);
    if (rc >= 0 && ops)
        ops->add_loss(be, &t->gpt->head.losses);
    tr_nvtx_pop();
    if (rc < 0)
        return rc;
    if (capturing && k == t->cfg.accum - 1)
        ops->inputs_read(be);
    tr_nvtx_push_static("backward");
    rc = dist_backward(t, k);
    tr_nvtx_pop();
    return rc;
}

/* The host's verdict: the gradient check read back, scaler.h's rules (which
 * the device step runs too), the marks. *take: the update is made, with *h. */
static int host_verdict(tr_trainer *t, float lr, tr_step_result *r, tr_step_hyper *h, bool *take)
{
    const tr_train_config *c = &t->cfg;
    bool checked = t->scaler.enabled || c->clip > 0, finite = true;
    double sumsq = 0;
    int rc;
    if (checked && (rc = grad_sumsq(t, &sumsq, &finite)) < 0)
        return rc;
    float grad_scale = tr_scaler_grad_scale(&t->scaler, c->clip, checked, sumsq, finite, &r->grad_norm);
    *take = tr_scaler_update(&t->scaler, !finite);
    if (t->scaler.enabled)
        tr_nvtx_mark_value("loss scale", r->scale);
    if (*take) {
        *h = tr_optim_host_step(&t->opt, lr, grad_scale);
    } else {
        r->skipped = true;
        tr_nvtx_mark_value("skipped step", r->scale);
    }
    return TR_OK;
}

/* One step's work: the micro-batches from src (lr_src: the pinned lr the
 * replays of a captured step read), the gradient check, the verdict and
 * the update. Decided on the host, r gets the loss and the verdict; on the
 * device the state keeps them, nothing here waits for the device, and the
 * update always runs (its kernels skip a skipped step). */
static int step_body(tr_trainer *t, const tr_batches *src, float lr, const float *lr_src, bool capturing,
                     tr_step_result *r)
{
    tr_model *m = t->model;
    tr_backend *be = m->be;
    const tr_step_ops *ops = t->on_device ? be->step_ops : NULL;
    const tr_train_config *c = &t->cfg;
    float dloss = t->scaler.scale / c->accum; /* each micro-batch's mean loss counts 1/K, times the loss scale */
    if (ops) {
        ops->begin(be, lr, lr_src);
        dloss = 1.0f / c->accum; /* the backend multiplies by the device's loss scale */
    }
    int rc = TR_OK;
    double loss_sum = 0;
    for (int k = 0; k < c->accum && rc >= 0; k++) {
        double loss = NAN; /* stays NaN when the loss is not read back */
        rc = micro_batch(t, src, k, dloss, capturing, ops || t->skip_loss ? NULL : &loss);
        loss_sum += loss / c->accum;
    }
    if (rc < 0)
        return rc;
    tr_step_hyper h = {0};
    bool take = true;
    if (ops) {
        bool checked = t->scaler.enabled || c->clip > 0;
        if (checked)
            tr_grad_check_device(m, c->fuse, t->shard_begin, t->shard_end);
        ops->verdict(be);
        h = (tr_step_hyper){.lr = lr, .scaled = checked, .dev = ops->state(be)};
    } else {
        r->loss = loss_sum;
        if ((rc = dist_mean_loss(t, &r->loss)) < 0 || (rc = host_verdict(t, lr, r, &h, &take)) < 0)
            return rc;
    }
    if (take) {
        tr_optim_step(&t->opt, m, &h);
        /* on the device: recast every step, a replay cannot know whether the update was skipped */
        m->ops->params_changed(m);
        if ((rc = dist_step_end(t)) < 0)
            return rc;
        if (t->ema.w.data)
            tr_ema_update(&t->ema, m, &h);
    }
    m->ops->zero_grad(m);
    return TR_OK;
}

/* Tokens a replay would take unchecked: the model's own test, by the host. */
static int check_tokens(const tr_gpt *m, const int32_t *inputs, const int32_t *targets, int n)
{
    int V = m->cfg.vocab_size;
    for (int i = 0; i < n; i++)
        if (inputs[i] < 0 || inputs[i] >= V || targets[i] < 0 || targets[i] >= V)
            return tr_error_set(TR_EINVAL, "token %d at %d is outside the vocabulary (%d)",
                                inputs[i] < 0 || inputs[i] >= V ? inputs[i] : targets[i], i, V);
    return TR_OK;
}

/* The graph's pinned tokens as the micro-batches of a warm-up or captured step. */
static int graph_next(void *ctx, int k, const void **batch)
{
    tr_trainer *t = ctx;
    t->graph.batch = (tr_gpt_batch){graph_tokens(t, k, false), graph_tokens(t, k, true), t->graph.B, t->graph.T};
    *batch = &t->graph.batch;
    return TR_OK;
}

/* The pinned inputs, made at the first step for its shape; the last
 * replay done reading them. */
static int graph_inputs(tr_trainer *t, const tr_gpt_batch *b)
{
    tr_backend *be = t->model->be;
    const tr_step_ops *ops = be->step_ops;
    if (!t->graph.inputs) {
        t->graph.inputs_bytes = GRAPH_INPUTS_ALIGN + 2 * (size_t)t->cfg.accum * b->B * b->T * sizeof(int32_t);
        if (!(t->graph.inputs = ops->pinned_alloc(be, t->graph.inputs_bytes)))
            return tr_error_set(TR_ENOMEM, "--cuda-graph: no pinned host memory for the step's inputs (%zu bytes)",
                                t->graph.inputs_bytes);
        t->graph.B = b->B;
        t->graph.T = b->T;
    } else if (b->B != t->graph.B || b->T != t->graph.T) {
        return tr_error_set(TR_EINVAL, "--cuda-graph: the batch changed from %dx%d to %dx%d; the graph holds one shape",
                            t->graph.B, t->graph.T, b->B, b->T);
    }
    ops->wait_inputs(be); /* the last replay has read the previous step's */
    return TR_OK;
}

/* --cuda-graph: this step's lr and tokens (src's tr_gpt_batch) into the
 * pinned inputs, then a warm-up step, the capture, or a replay. */
static int graph_step(tr_trainer *t, const tr_batches *src, int step, float lr, tr_step_result *r)
{
    tr_model *m = t->model;
    tr_backend *be = m->be;
    const tr_step_ops *ops = be->step_ops;
    const tr_train_config *c = &t->cfg;
    for (int k = 0; k < c->accum; k++) {
        const void *batch;
        int rc = src->next(src->ctx, k, &batch);
        if (rc < 0)
            return rc;
        const tr_gpt_batch *b = batch;
        size_t n = (size_t)b->B * b->T;
        if (k == 0 && (rc = graph_inputs(t, b)) < 0)
            return rc;
        if ((rc = check_tokens(t->gpt, b->inputs, b->targets, (int)n)) < 0)
            return rc;
        memcpy(graph_tokens(t, k, false), b->inputs, n * sizeof(int32_t));
        memcpy(graph_tokens(t, k, true), b->targets, n * sizeof(int32_t));
    }
    float *lr_src = t->graph.inputs;
    *lr_src = lr;
    if (t->graph.captured_at >= 0) {
        ops->replay(be);
        t->graph.n_replays++;
        m->ops->params_changed(m); /* the replay updated the weights: an evaluation recasts them */
        return TR_OK;
    }
    const tr_batches pinned = {graph_next, t};
    if (t->graph.n_warmup < 1 || (t->graph.warmup_grew && t->graph.n_warmup < GRAPH_MAX_WARMUP)) {
        tr_alloc_stats before, after;
        tr_alloc_get_stats(m->alloc, &before);
        int rc = step_body(t, &pinned, lr, NULL, false, r);
        tr_alloc_get_stats(m->alloc, &after);
        t->graph.n_warmup++;
        t->graph.warmup_grew = after.n_segment_allocs != before.n_segment_allocs;
        return rc;
    }
    int rc = tr_alloc_capture_begin(m->alloc);
    if (rc < 0)
        return rc;
    if ((rc = ops->capture_begin(be, t->graph.inputs, t->graph.inputs_bytes)) < 0) {
        tr_alloc_capture_end(m->alloc);
        return rc;
    }
    rc = step_body(t, &pinned, lr, lr_src, true, r);
    int rc_end = ops->capture_end(be, &t->graph.n_nodes); /* ended even when the step failed */
    tr_alloc_capture_end(m->alloc);
    t->graph.captured_at = step; /* released with the trainer from here on */
    if (rc < 0 || (rc = rc_end) < 0)
        return rc;
    r->graph_captured = true;
    ops->replay(be);
    t->graph.n_replays++;
    m->ops->params_changed(m);
    return TR_OK;
}

int tr_trainer_step(tr_trainer *t, const tr_batches *src, int step, tr_step_result *r)
{
    char name[32];
    snprintf(name, sizeof name, "step %d", step);
    tr_nvtx_push(name);
    *r = (tr_step_result){.lr = tr_schedule_lr(&t->cfg.schedule, step), .loss = NAN,
                          .scale = t->on_device ? NAN : t->scaler.scale, .grad_norm = NAN};
    int rc;
    if (!t->on_device) {
        rc = step_body(t, src, r->lr, NULL, false, r);
    } else {
        rc = t->device_loaded ? TR_OK : device_load(t);
        if (rc >= 0)
            rc = t->cfg.cuda_graph ? graph_step(t, src, step, r->lr, r) : step_body(t, src, r->lr, NULL, false, r);
        if (rc >= 0 && !t->skip_loss)
            device_read(t, r);
    }
    tr_nvtx_pop();
    return rc;
}

static int gpt_next(void *ctx, int k, const void **batch)
{
    (void)k;
    tr_gpt_loader *g = ctx;
    const tr_batch *b;
    tr_nvtx_push_static("data");
    int rc = tr_loader_next(g->loader, &b);
    tr_nvtx_pop();
    if (rc < 0)
        return rc;
    size_t row0 = (size_t)g->t->row0 * g->b.T; /* this rank's rows of the global batch */
    g->b.inputs = b->inputs + row0;
    g->b.targets = b->targets + row0;
    *batch = &g->b;
    return TR_OK;
}

void tr_gpt_loader_init(tr_gpt_loader *g, const tr_trainer *t, tr_loader *loader, int B, int T)
{
    *g = (tr_gpt_loader){.batches = {gpt_next, g}, .t = t, .loader = loader, .b = {.B = B, .T = T}};
}

int tr_train_step(tr_trainer *t, tr_loader *loader, int step, int B, int T, tr_step_result *r)
{
    tr_gpt_loader g;
    tr_gpt_loader_init(&g, t, loader, B, T);
    return tr_trainer_step(t, &g.batches, step, r);
}
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int tr_trainer_run(tr_trainer *t, const tr_batches *src, int step0, int end, const tr_run_hooks *h)
{
    double t_start = now_s();
    for (int step = step0; step < end; step++) {
        double t0 = now_s();
        tr_step_result res;
        t->skip_loss = h->read_loss && !h->read_loss(h->ctx, step);
        int rc = tr_trainer_step(t, src, step, &res);
        if (rc < 0)
            return rc;
        if (!t->skip_loss && !isfinite(res.loss)) {
            fprintf(stderr, "trainer: the loss is %f at step %d: diverged (try a lower --lr)\n", res.loss, step + 1);
            return 1;
        }
        if ((rc = h->after_step(h->ctx, step, &res, now_s() - t0, now_s() - t_start)) != 0)
            return rc;
    }
    return 0;
}
