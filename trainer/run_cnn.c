/* run_cnn.c: training a CNN (model_cnn.h) on Fashion-MNIST: the images
 * normalized with the training set's mean and standard deviation (0.2860,
 * 0.3530, torchvision's usual constants for it), a seeded shuffle per epoch,
 * micro-batches of --batch (--accum of them per optimizer step: the first
 * backward writes the gradients, the others add), AdamW or SGD over the
 * flat parameters (weight decay on the conv and linear weights only), the
 * learning-rate schedule, and after each epoch the test set's loss and
 * accuracy with the running BatchNorm statistics. --amp bf16|fp16 runs the
 * model's activations in low precision (model_cnn.h); fp16 scales the loss
 * by GradScaler's rules (scaler.h), skipping the steps whose gradients
 * overflowed. --ema DECAY keeps an exponential average of the parameters and
 * of BatchNorm's running statistics (AveragedModel with use_buffers), which
 * the test set is evaluated with. --fuse on fuses the classifier's softmax
 * and cross-entropy (model_cnn.h) and, with AdamW, runs one update over the
 * flat buffers that unscales and clips on the fly. --save writes the run's
 * whole state at the end and --resume continues from it (ckpt_cnn.h): the
 * resumed run's losses and final state equal the uninterrupted run's.
 * The steps are train.c's (tr_trainer_run), as the GPT's: this file is the
 * CNN's face to them (model.h: its batches staged on the device, its
 * forward, backward and flat buffers), its data order and its lines.
 * NVTX: "step N", "data", "forward", "backward", "grad norm", "optimizer",
 * "ema", "eval" and the ops' ranges, as for the GPT. */
#include "config.h"

#include "run_cnn.h"

#include "alloc.h"
#include "backend.h"
#include "ckpt_cnn.h"
#include "ckpt_io.h"
#include "data_idx.h"
#include "error.h"
#include "model_cnn.h"
#include "nvtx.h"
#include "plug.h"
#include "train.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { N_CLASSES = 10 };
#define PIXEL_MEAN 0.2860f
#define PIXEL_STD 0.3530f

typedef struct cnn_run {
    tr_model base;             /* the trainer's view of the CNN (model.h) */
    tr_tensor params, grads, stats; /* the model's flat buffers as base's tensors */
    tr_param_slice slices[2];  /* the weights (decayed), then biases and BatchNorm's affine parameters */
    const tr_options *o;
    tr_idx_set train, test;
    tr_backend *be;
    tr_alloc *alloc;
    tr_cnn *model;
    tr_train_config tc;        /* the optimizer, schedule and precision of the flags */
    tr_trainer trainer;
    int B, n_train, n_test, n_steps;
    int batch_B;               /* the micro-batch on the device */
    float *h_images;           /* host staging: (B, 1, H, W) normalized */
    int32_t *h_labels;         /* (B) */
    float *h_losses, *h_logits;
    float *d_images;           /* device: the same, plus the loss's tensors */
    int32_t *d_labels;
    float *d_losses, *d_probs;
    /* the data order: a seeded shuffle per epoch */
    int *perm;
    int pos, epoch;
    tr_rng rng;
    /* the lines */
    long images_done, images_log, step_images;
    double t_log, loss_sum, first_loss, last_loss;
    int loss_n;
} cnn_run;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *dev_alloc(cnn_run *r, size_t n_bytes, const char *name)
{
    void *p;
    tr_check(tr_alloc_malloc(r->alloc, &p, n_bytes ? n_bytes : 4, 0));
    tr_alloc_name(r->alloc, p, name);
    r->be->memset0(r->be, p, n_bytes ? n_bytes : 4, 0);
    return p;
}

static tr_tensor dev_view(cnn_run *r, void *p, size_t n, tr_dtype dt)
{
    return (tr_tensor){p, dt, r->be->device, 1, {(int64_t)n}};
}

/* Images idx[0..B) of set into the device's input buffers. */
static void load_batch(cnn_run *r, const tr_idx_set *set, const int *idx, int B)
{
    tr_nvtx_push("data");
    size_t px = (size_t)set->rows * set->cols;
    for (int b = 0; b < B; b++) {
        const uint8_t *src = set->images + (size_t)idx[b] * px;
        float *dst = r->h_images + (size_t)b * px;
        for (size_t i = 0; i < px; i++)
            dst[i] = (src[i] * (1.0f / 255.0f) - PIXEL_MEAN) / PIXEL_STD;
        r->h_labels[b] = set->labels[idx[b]];
    }
    r->be->copy_h2d(r->be, r->d_images, r->h_images, (size_t)B * px * sizeof(float), 0);
    r->be->copy_h2d(r->be, r->d_labels, r->h_labels, (size_t)B * sizeof(int32_t), 0);
    r->batch_B = B;
    tr_nvtx_pop();
}

/* ---- the CNN as a model of model.h; a batch is the one load_batch staged ---- */

static cnn_run *run_of(tr_model *m) { return (cnn_run *)((char *)m - offsetof(cnn_run, base)); }

static int cnn_forward(tr_model *m, const void *batch, float dloss, double *loss)
{
    (void)batch;
    cnn_run *r = run_of(m);
    int B = r->batch_B;
    tr_tensor images = dev_view(r, r->d_images, (size_t)B * r->train.rows * r->train.cols, TR_F32),
              targets = dev_view(r, r->d_labels, B, TR_I32), losses = dev_view(r, r->d_losses, B, TR_F32),
              probs = dev_view(r, r->d_probs, (size_t)B * N_CLASSES, TR_F32);
    int rc = tr_cnn_forward(r->model, &images, B, true, NULL, &probs, &targets, &losses, dloss);
    if (rc < 0 || !loss)
        return rc;
    r->be->copy_d2h(r->be, r->h_losses, r->d_losses, (size_t)B * sizeof(float), 0);
    r->be->synchronize(r->be, 0);
    double s = 0.0;
    for (int b = 0; b < B; b++)
        s += r->h_losses[b];
    *loss = s / B;
    return TR_OK;
}

static int cnn_backward(tr_model *m, int k)
{
    cnn_run *r = run_of(m);
    tr_tensor targets = dev_view(r, r->d_labels, r->batch_B, TR_I32),
              probs = dev_view(r, r->d_probs, (size_t)r->batch_B * N_CLASSES, TR_F32);
    return tr_cnn_backward(r->model, &probs, &targets, r->batch_B, k > 0); /* the first writes the gradients */
}

static void cnn_zero_grad(tr_model *m) { (void)m; /* the first backward of a step writes the gradients */ }
static void cnn_params_changed(tr_model *m) { tr_cnn_params_changed(run_of(m)->model); }

static void cnn_point_params(tr_model *m, void *params, void *stats)
{
    cnn_run *r = run_of(m);
    r->model->params = r->params.data = params;
    if (stats)
        r->model->stats = r->stats.data = stats;
    tr_cnn_params_changed(r->model);
}

static const tr_model_ops cnn_ops = {cnn_forward, cnn_backward, cnn_zero_grad, cnn_params_changed,
                                     cnn_point_params};

static void make_base(cnn_run *r)
{
    tr_cnn *c = r->model;
    r->params = dev_view(r, c->params, c->n_params, TR_F32);
    r->grads = dev_view(r, c->grads, c->n_params, TR_F32);
    r->stats = dev_view(r, c->stats, c->n_stats, TR_F32);
    r->slices[0] = (tr_param_slice){0, c->n_decay, true};
    r->slices[1] = (tr_param_slice){c->n_decay, c->n_params, false};
    /* the gradient norm in one pass over every gradient, as clip_grad_norm_ with foreach */
    r->base = (tr_model){.ops = &cnn_ops, .be = r->be, .alloc = r->alloc, .n_params = c->n_params,
                         .params = &r->params, .grads = &r->grads, .stats = c->n_stats ? &r->stats : NULL,
                         .ema_stats_name = "ema batchnorm statistics", .slices = r->slices, .n_slices = 2,
                         .check_one_pass = true};
}

/* Micro-batch k of a step: the next images of the epoch's order. A new
 * epoch draws a seeded shuffle; a last image alone is left out: a batch of
 * one has no BatchNorm statistics. */
static int next_batch(void *ctx, int k, const void **batch)
{
    (void)k;
    cnn_run *r = ctx;
    if (r->pos + 2 > r->n_train) {
        for (int i = 0; i < r->n_train; i++)
            r->perm[i] = i;
        for (int i = r->n_train - 1; i > 0; i--) {
            int j = (int)tr_rng_below(&r->rng, (uint64_t)i + 1), tmp = r->perm[i];
            r->perm[i] = r->perm[j];
            r->perm[j] = tmp;
        }
        r->pos = 0;
        r->epoch++;
    }
    int B = r->n_train - r->pos < r->B ? r->n_train - r->pos : r->B;
    load_batch(r, &r->train, r->perm + r->pos, B);
    r->pos += B;
    r->step_images += B;
    *batch = &r->batch_B;
    return TR_OK;
}

/* Mean loss and accuracy over the first n_test test images (with the EMA's weights under --ema). */
static void evaluate(cnn_run *r, double *loss, double *acc)
{
    tr_nvtx_push("eval");
    tr_trainer_eval_weights(&r->trainer, true);
    double sum = 0.0;
    int correct = 0, *idx = malloc((size_t)r->B * sizeof(int));
    if (!idx) {
        fprintf(stderr, "trainer: out of host memory\n");
        exit(1);
    }
    for (int i0 = 0; i0 < r->n_test; i0 += r->B) {
        int B = r->n_test - i0 < r->B ? r->n_test - i0 : r->B;
        for (int b = 0; b < B; b++)
            idx[b] = i0 + b;
        load_batch(r, &r->test, idx, B);
        tr_tensor images = dev_view(r, r->d_images, (size_t)B * r->test.rows * r->test.cols, TR_F32),
                  targets = dev_view(r, r->d_labels, B, TR_I32), losses = dev_view(r, r->d_losses, B, TR_F32),
                  probs = dev_view(r, r->d_probs, (size_t)B * N_CLASSES, TR_F32),
                  logits = (tr_tensor){r->h_logits, TR_F32, TR_CPU, 1, {(int64_t)B * N_CLASSES}};
        tr_check(tr_cnn_forward(r->model, &images, B, false, &logits, &probs, &targets, &losses, 0.0f));
        r->be->copy_d2h(r->be, r->h_losses, r->d_losses, (size_t)B * sizeof(float), 0);
        r->be->synchronize(r->be, 0);
        for (int b = 0; b < B; b++) {
            sum += r->h_losses[b];
            const float *l = r->h_logits + (size_t)b * N_CLASSES;
            int best = 0;
            for (int c = 1; c < N_CLASSES; c++)
                if (l[c] > l[best])
                    best = c;
            correct += best == r->h_labels[b];
        }
    }
    free(idx);
    tr_trainer_eval_weights(&r->trainer, false);
    *loss = sum / r->n_test;
    *acc = (double)correct / r->n_test;
    tr_nvtx_pop();
}

static void setup(cnn_run *r, const tr_options *o)
{
    r->o = o;
    if (tr_idx_load_dir(&r->train, &r->test, o->data, N_CLASSES) < 0) {
        fprintf(stderr, "trainer: %s\n", tr_error_last());
        exit(1);
    }
    r->n_train = o->train_images && o->train_images < r->train.n ? o->train_images : r->train.n;
    r->n_test = o->test_images && o->test_images < r->test.n ? o->test_images : r->test.n;
    r->B = o->batch < r->n_train ? o->batch : r->n_train;
    r->be = tr_plug_backend(o);
    tr_check(tr_alloc_new(&r->alloc, &r->be->mem, o->mem_limit));
    r->be->conv_autotune = tr_options_on("--conv-autotune", o->conv_autotune);
    r->be->cnn_nhwc = !strcmp(o->layout, "nhwc");
    tr_cnn_config cfg = {.name = o->model, .act = tr_options_amp(o), .bias_before_bn = !o->bias_before_bn ||
                         tr_options_on("--bias-before-bn", o->bias_before_bn), .C = 1, .H = r->train.rows,
                         .W = r->train.cols, .n_classes = N_CLASSES, .bn_momentum = 0.1f, .bn_eps = 1e-5f,
                         .nhwc = r->be->cnn_nhwc, .checkpoint_blocks = !strcmp(o->checkpoint, "blocks"),
                         .fuse = tr_options_on("--fuse", o->fuse)};
    tr_check(tr_cnn_new(&r->model, &cfg, r->be, r->alloc, o->seed));
    size_t px = (size_t)r->train.rows * r->train.cols;
    r->h_images = r->be->host_alloc(r->be, (size_t)r->B * px * sizeof(float));
    r->h_labels = r->be->host_alloc(r->be, (size_t)r->B * sizeof(int32_t));
    r->h_losses = malloc((size_t)r->B * sizeof(float));
    r->h_logits = malloc((size_t)r->B * N_CLASSES * sizeof(float));
    r->perm = malloc((size_t)r->n_train * sizeof(int));
    if (!r->h_images || !r->h_labels || !r->h_losses || !r->h_logits || !r->perm) {
        fprintf(stderr, "trainer: out of host memory\n");
        exit(1);
    }
    r->d_images = dev_alloc(r, (size_t)r->B * px * sizeof(float), "cnn inputs");
    r->d_labels = dev_alloc(r, (size_t)r->B * sizeof(int32_t), "cnn inputs");
    r->d_losses = dev_alloc(r, (size_t)r->B * sizeof(float), "cnn losses");
    r->d_probs = dev_alloc(r, (size_t)r->B * N_CLASSES * sizeof(float), "cnn losses");
    /* the steps: --epochs of them, or --steps when fewer */
    int per_epoch = (r->n_train + r->B * o->accum - 1) / (r->B * o->accum);
    r->n_steps = per_epoch * o->epochs;
    if (o->steps_given && o->steps < r->n_steps)
        r->n_steps = o->steps;
    tr_options oo = *o;
    oo.steps = r->n_steps > 0 ? r->n_steps : 1;
    r->tc = tr_options_train_config(&oo);
    make_base(r);
    tr_check(tr_trainer_init_model(&r->trainer, &r->base, &r->tc)); /* AveragedModel's copy: the initial values */
    r->pos = r->n_train;
    r->rng = (tr_rng){o->seed * 0x9E3779B97F4A7C15ull + 17};
    r->first_loss = r->last_loss = NAN;
}

static tr_ckpt_cnn_state ckpt_state(cnn_run *r, int step)
{
    const tr_trainer *t = &r->trainer;
    return (tr_ckpt_cnn_state){.step = step, .t = t->opt.t, .seed = r->o->seed, .epoch = r->epoch, .pos = r->pos,
                               .n_order = r->n_train, .order = r->perm, .data_rng = r->rng.state,
                               .dropout_rng = r->model->rng.state, .loss_sum = r->loss_sum, .loss_n = r->loss_n,
                               .loss_scale = t->scaler.dynamic ? t->scaler.scale : 0.0,
                               .loss_scale_good_steps = t->scaler.dynamic ? t->scaler.good_steps : 0,
                               .ema_params = t->ema.w.data, .ema_stats = t->ema.stats.data};
}

/* --resume: the model, optimizer, EMA, loss scale, data order and the epoch's sums; the step it was saved at. */
static int resume(cnn_run *r)
{
    const tr_options *o = r->o;
    tr_trainer *t = &r->trainer;
    tr_ckpt_cnn_state cs = ckpt_state(r, 0);
    if (tr_ckpt_cnn_load(o->resume, r->model, &r->tc.optim, t->opt.m.data, t->opt.v.data, &cs) < 0) {
        fprintf(stderr, "trainer: %s\n", tr_error_last());
        exit(1);
    }
    if (cs.step > r->n_steps) {
        fprintf(stderr, "trainer: %s was saved at step %lld, past this run's %d steps; give more --steps or "
                "--epochs\n", o->resume, (long long)cs.step, r->n_steps);
        exit(1);
    }
    t->opt.t = cs.t;
    r->epoch = cs.epoch;
    r->pos = cs.pos;
    r->rng.state = cs.data_rng;
    r->model->rng.state = cs.dropout_rng;
    r->loss_sum = cs.loss_sum;
    r->loss_n = cs.loss_n;
    if (!tr_scaler_resume(&t->scaler, cs.loss_scale, cs.loss_scale_good_steps)) { /* the scale it had learned */
        fprintf(stderr, "trainer: %s: the metadata's loss_scale_good_steps is %d: expected below the loss "
                "scale's growth interval (%d)\n", o->resume, cs.loss_scale_good_steps, t->scaler.growth_interval);
        exit(1);
    }
    tr_cnn_params_changed(r->model);
    printf("trainer: resumed %s at step %d (epoch %d)\n", o->resume, (int)cs.step, r->epoch);
    fflush(stdout);
    return (int)cs.step;
}

/* A step's line; at an epoch's end (or the run's) the test pass. */
static int report_step(void *ctx, int step, const tr_step_result *res, double dt, double elapsed)
{
    (void)dt, (void)elapsed;
    cnn_run *r = ctx;
    const tr_trainer *t = &r->trainer;
    if (isnan(r->first_loss))
        r->first_loss = res->loss;
    r->last_loss = res->loss;
    r->loss_sum += res->loss;
    r->loss_n++;
    r->images_done += r->step_images;
    r->images_log += r->step_images;
    r->step_images = 0;
    int done = step + 1;
    bool epoch_end = r->pos + 2 > r->n_train || done == r->n_steps;
    if (done % r->o->log_every == 0 || epoch_end) {
        double now = now_s();
        tr_alloc_stats st;
        tr_alloc_get_stats(r->alloc, &st);
        char norm[80] = "";
        int at = 0;
        if (r->tc.clip > 0)
            at = snprintf(norm, sizeof norm, " norm %.3f", res->grad_norm);
        if (t->scaler.enabled)
            snprintf(norm + at, sizeof norm - (size_t)at, " scale %g%s", res->scale, res->skipped ? " (skipped)" : "");
        printf("epoch %d step %d/%d loss %.4f (mean %.4f)%s %.0f img/s mem %.1f/%.1f MiB\n", r->epoch, done,
               r->n_steps, res->loss, r->loss_sum / r->loss_n, norm, r->images_log / (now - r->t_log),
               st.allocated_bytes / 1048576.0, st.reserved_bytes / 1048576.0);
        fflush(stdout);
        r->t_log = now;
        r->images_log = 0;
    }
    if (epoch_end) {
        double tl, ta;
        evaluate(r, &tl, &ta);
        printf("epoch %d train loss %.4f test loss %.4f test accuracy %.2f%%%s\n", r->epoch, r->loss_sum / r->loss_n,
               tl, 100.0 * ta, t->ema.w.data ? " (ema weights)" : "");
        fflush(stdout);
        if (r->pos + 2 > r->n_train) { /* a last step mid-epoch keeps its sum for a checkpoint */
            r->loss_sum = 0.0;
            r->loss_n = 0;
        }
        r->t_log = now_s();
    }
    return 0;
}

static void print_summary(cnn_run *r, double seconds)
{
    const tr_trainer *t = &r->trainer;
    tr_alloc_stats st;
    tr_alloc_get_stats(r->alloc, &st);
    printf("trainer: %d steps in %.2f s, %.0f img/s (test passes included); first loss %.4f, final loss %.4f; "
           "peak allocated %.1f MiB, peak reserved %.1f MiB\n", r->n_steps, seconds, r->images_done / seconds,
           r->first_loss, r->last_loss, st.peak_allocated_bytes / 1048576.0, st.peak_reserved_bytes / 1048576.0);
    if (t->scaler.enabled)
        printf("trainer: loss scale %g at the end; %lld step(s) skipped for overflowed gradients\n", t->scaler.scale,
               (long long)t->scaler.n_skipped);
    if (r->be->conv_autotune && r->be->conv_choices) {
        static char choices[16384];
        int n_shapes = r->be->conv_choices(choices, sizeof choices);
        printf("trainer: --conv-autotune timed %d conv shape(s):\n%s", n_shapes, choices);
    }
}

static void release(cnn_run *r)
{
    free(r->perm);
    free(r->h_losses);
    free(r->h_logits);
    r->be->host_free(r->be, r->h_images);
    r->be->host_free(r->be, r->h_labels);
    tr_alloc_release(r->alloc, r->d_images);
    tr_alloc_release(r->alloc, r->d_labels);
    tr_alloc_release(r->alloc, r->d_losses);
    tr_alloc_release(r->alloc, r->d_probs);
    tr_trainer_release(&r->trainer);
    tr_cnn_free(r->model);
    tr_alloc_free(r->alloc);
    tr_plug_backend_free(r->be);
    tr_idx_release(&r->train);
    tr_idx_release(&r->test);
}

int tr_run_cnn(const tr_options *o)
{
    cnn_run r = {0};
    setup(&r, o);
    printf("trainer: %s, %zu parameters, %d layers; %d training and %d test images of %dx%d; batch %d x accum %d, "
           "%d steps (%d epoch%s), %s lr %g, %s backend, %s, %s, %d threads\n",
           o->model, r.model->n_params, r.model->n_layers, r.n_train, r.n_test, r.train.rows, r.train.cols, r.B,
           o->accum, r.n_steps, o->epochs, o->epochs > 1 ? "s" : "", o->optimizer, o->lr, r.be->name, o->layout,
           r.tc.amp == TR_F32 ? "fp32" : r.tc.amp == TR_BF16 ? "amp bf16" : "amp fp16", r.be->n_threads);
    fflush(stdout);
    double t_start = now_s();
    r.t_log = t_start;
    if (o->save && tr_ckpt_check_target(o->save) < 0) {
        fprintf(stderr, "trainer: %s\n", tr_error_last());
        return 1;
    }
    int step0 = o->resume ? resume(&r) : 0;
    const tr_batches batches = {next_batch, &r};
    const tr_run_hooks hooks = {.ctx = &r, .after_step = report_step};
    int rc = tr_trainer_run(&r.trainer, &batches, step0, r.n_steps, &hooks);
    tr_check(rc < 0 ? rc : TR_OK);
    if (rc)
        return rc;
    if (o->save) {
        tr_ckpt_cnn_state cs = ckpt_state(&r, r.n_steps);
        if (tr_ckpt_cnn_save(o->save, r.model, &r.tc.optim, r.trainer.opt.m.data, r.trainer.opt.v.data, &cs) < 0) {
            fprintf(stderr, "trainer: %s\n", tr_error_last());
            return 1;
        }
        printf("trainer: saved %s at step %d\n", o->save, r.n_steps);
    }
    print_summary(&r, now_s() - t_start);
    release(&r);
    return 0;
}
