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
 * NVTX: "step N", "data", "forward", "backward", "optimizer", "eval" and
 * the ops' ranges, as for the GPT. */
#include "config.h"

#include "run_cnn.h"

#include "alloc.h"
#include "backend.h"
#include "ckpt_cnn.h"
#include "ckpt_io.h"
#include "data_idx.h"
#include "error.h"
#include "memlimit.h"
#include "model_cnn.h"
#include "nvtx.h"
#include "plug.h"
#include "scaler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { N_CLASSES = 10 };
#define PIXEL_MEAN 0.2860f
#define PIXEL_STD 0.3530f

typedef struct cnn_run {
    const tr_options *o;
    tr_idx_set train, test;
    tr_backend *be;
    tr_alloc *alloc;
    tr_cnn *model;
    tr_train_config tc;        /* the optimizer, schedule and precision of the flags */
    tr_scaler scaler;          /* the loss scale: fp16's dynamic one, --loss-scale's, or none */
    int B, n_train, n_test;
    float *h_images;           /* host staging: (B, 1, H, W) normalized */
    int32_t *h_labels;         /* (B) */
    float *h_losses, *h_logits;
    float *d_images;           /* device: the same, plus the loss's tensors */
    int32_t *d_labels;
    float *d_losses, *d_probs;
    float *m, *v;              /* AdamW's moments, or SGD's momentum in m */
    float *ema_params, *ema_stats; /* --ema: the averages (n_params), (n_stats); NULL without it */
    int t;                     /* optimizer steps taken */
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
    tr_nvtx_pop();
}

/* AdamW over all of the flat buffers in one pass (--fuse on): decay on the
 * weights [0, n_decay), none after; h's grad_scale applied on the fly. */
static void update_fused(cnn_run *r, const tr_step_hyper *h)
{
    tr_cnn *m = r->model;
    size_t n = m->n_params, bounds[3] = {0, m->n_decay, n};
    float decay[2] = {r->tc.optim.weight_decay, 0.0f};
    tr_tensor p = dev_view(r, m->params, n, TR_F32), g = dev_view(r, m->grads, n, TR_F32),
              mm = dev_view(r, r->m, n, TR_F32), vv = dev_view(r, r->v, n, TR_F32);
    const tr_optim_config *oc = &r->tc.optim;
    r->be->adamw_fused(r->be, &p, &g, &mm, &vv, bounds, decay, 2, h, oc->beta1, oc->beta2, oc->eps);
}

/* One update over [begin, end) of the flat buffers with weight decay wd. */
static void update(cnn_run *r, size_t begin, size_t end, float wd, const tr_step_hyper *h)
{
    if (end <= begin)
        return;
    tr_backend *be = r->be;
    tr_cnn *m = r->model;
    size_t n = end - begin;
    tr_tensor p = dev_view(r, m->params + begin, n, TR_F32), g = dev_view(r, m->grads + begin, n, TR_F32),
              mm = dev_view(r, r->m + begin, n, TR_F32), vv = dev_view(r, r->v ? r->v + begin : NULL, n, TR_F32);
    const tr_optim_config *oc = &r->tc.optim;
    if (oc->kind == TR_OPTIM_ADAMW)
        be->adamw(be, &p, &g, &mm, &vv, h, oc->beta1, oc->beta2, oc->eps, wd);
    else
        be->sgd(be, &p, &g, oc->momentum > 0 ? &mm : NULL, h, oc->momentum, wd);
}

/* Exchanges the model's parameters and statistics with the EMA's (twice restores them). */
static void swap_ema(cnn_run *r)
{
    tr_cnn *m = r->model;
    float *p = m->params, *s = m->stats;
    m->params = r->ema_params, m->stats = r->ema_stats;
    r->ema_params = p, r->ema_stats = s;
    tr_cnn_params_changed(m);
}

/* Mean loss and accuracy over the first n_test test images (with the EMA's weights under --ema). */
static void evaluate(cnn_run *r, double *loss, double *acc)
{
    tr_nvtx_push("eval");
    if (r->ema_params)
        swap_ema(r);
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
    if (r->ema_params)
        swap_ema(r);
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
    if (!r->h_images || !r->h_labels || !r->h_losses || !r->h_logits) {
        fprintf(stderr, "trainer: out of host memory\n");
        exit(1);
    }
    r->d_images = dev_alloc(r, (size_t)r->B * px * sizeof(float), "cnn inputs");
    r->d_labels = dev_alloc(r, (size_t)r->B * sizeof(int32_t), "cnn inputs");
    r->d_losses = dev_alloc(r, (size_t)r->B * sizeof(float), "cnn losses");
    r->d_probs = dev_alloc(r, (size_t)r->B * N_CLASSES * sizeof(float), "cnn losses");
}

int tr_run_cnn(const tr_options *o)
{
    cnn_run r = {0};
    setup(&r, o);
    int per_epoch = (r.n_train + r.B * o->accum - 1) / (r.B * o->accum);
    int n_steps = per_epoch * o->epochs;
    if (o->steps_given && o->steps < n_steps)
        n_steps = o->steps;
    tr_options oo = *o;
    oo.steps = n_steps > 0 ? n_steps : 1;
    r.tc = tr_options_train_config(&oo);
    size_t n = r.model->n_params;
    r.m = r.tc.optim.kind == TR_OPTIM_ADAMW || r.tc.optim.momentum > 0 ?
          dev_alloc(&r, n * sizeof(float), r.tc.optim.kind == TR_OPTIM_ADAMW ? "adamw m" : "sgd momentum") : NULL;
    r.v = r.tc.optim.kind == TR_OPTIM_ADAMW ? dev_alloc(&r, n * sizeof(float), "adamw v") : NULL;
    if (r.tc.ema_decay > 0) { /* from the initial values, as AveragedModel's copy */
        size_t ns = r.model->n_stats;
        r.ema_params = dev_alloc(&r, n * sizeof(float), "ema weights");
        r.ema_stats = dev_alloc(&r, ns * sizeof(float), "ema batchnorm statistics");
        r.be->copy_d2h(r.be, r.ema_params, r.model->params, n * sizeof(float), 0); /* same device: a plain copy */
        r.be->copy_d2h(r.be, r.ema_stats, r.model->stats, ns * sizeof(float), 0);
    }
    tr_train_config_scaler(&r.tc, &r.scaler);
    printf("trainer: %s, %zu parameters, %d layers; %d training and %d test images of %dx%d; batch %d x accum %d, "
           "%d steps (%d epoch%s), %s lr %g, %s backend, %s, %s, %d threads\n",
           o->model, n, r.model->n_layers, r.n_train, r.n_test, r.train.rows, r.train.cols, r.B, o->accum, n_steps,
           o->epochs, o->epochs > 1 ? "s" : "", o->optimizer, o->lr, r.be->name, o->layout,
           r.tc.amp == TR_F32 ? "fp32" : r.tc.amp == TR_BF16 ? "amp bf16" : "amp fp16", r.be->n_threads);
    fflush(stdout);
    int *perm = malloc((size_t)r.n_train * sizeof(int));
    if (!perm) {
        fprintf(stderr, "trainer: out of host memory\n");
        return 1;
    }
    tr_rng rng = {o->seed * 0x9E3779B97F4A7C15ull + 17};
    double t_start = now_s(), t_log = t_start, loss_sum = 0.0, first_loss = NAN, last_loss = NAN;
    long images_done = 0, images_log = 0;
    int loss_n = 0, step = 0, pos = r.n_train, epoch = 0;
    tr_ckpt_cnn_state cs = {.seed = o->seed, .n_order = r.n_train, .order = perm, .ema_params = r.ema_params,
                            .ema_stats = r.ema_stats};
    if (o->save && tr_ckpt_check_target(o->save) < 0) {
        fprintf(stderr, "trainer: %s\n", tr_error_last());
        return 1;
    }
    if (o->resume) {
        if (tr_ckpt_cnn_load(o->resume, r.model, &r.tc.optim, r.m, r.v, &cs) < 0) {
            fprintf(stderr, "trainer: %s\n", tr_error_last());
            return 1;
        }
        if (cs.step > n_steps) {
            fprintf(stderr, "trainer: %s was saved at step %lld, past this run's %d steps; give more --steps or "
                    "--epochs\n", o->resume, (long long)cs.step, n_steps);
            return 1;
        }
        step = (int)cs.step;
        r.t = cs.t;
        epoch = cs.epoch;
        pos = cs.pos;
        rng.state = cs.data_rng;
        r.model->rng.state = cs.dropout_rng;
        loss_sum = cs.loss_sum;
        loss_n = cs.loss_n;
        if (!tr_scaler_resume(&r.scaler, cs.loss_scale, cs.loss_scale_good_steps)) { /* the scale it had learned */
            fprintf(stderr, "trainer: %s: the metadata's loss_scale_good_steps is %d: expected below the loss "
                    "scale's growth interval (%d)\n", o->resume, cs.loss_scale_good_steps, r.scaler.growth_interval);
            return 1;
        }
        tr_cnn_params_changed(r.model);
        printf("trainer: resumed %s at step %d (epoch %d)\n", o->resume, step, epoch);
        fflush(stdout);
    }
    char name[32];
    while (step < n_steps) {
        snprintf(name, sizeof name, "step %d", step + 1);
        tr_nvtx_push(name);
        double step_loss = 0.0;
        int step_images = 0;
        for (int k = 0; k < o->accum; k++) {
            /* a new epoch: a seeded shuffle. A last image alone is left out: a
             * batch of one has no BatchNorm statistics. */
            if (pos + 2 > r.n_train) {
                for (int i = 0; i < r.n_train; i++)
                    perm[i] = i;
                for (int i = r.n_train - 1; i > 0; i--) {
                    int j = (int)tr_rng_below(&rng, (uint64_t)i + 1), tmp = perm[i];
                    perm[i] = perm[j];
                    perm[j] = tmp;
                }
                pos = 0;
                epoch++;
            }
            int B = r.n_train - pos < r.B ? r.n_train - pos : r.B;
            load_batch(&r, &r.train, perm + pos, B);
            pos += B;
            tr_tensor images = dev_view(&r, r.d_images, (size_t)B * r.train.rows * r.train.cols, TR_F32),
                      targets = dev_view(&r, r.d_labels, B, TR_I32), losses = dev_view(&r, r.d_losses, B, TR_F32),
                      probs = dev_view(&r, r.d_probs, (size_t)B * N_CLASSES, TR_F32);
            tr_nvtx_push("forward");
            tr_check(tr_cnn_forward(r.model, &images, B, true, NULL, &probs, &targets, &losses,
                                    r.scaler.scale / o->accum));
            tr_nvtx_pop();
            tr_nvtx_push("backward");
            tr_check(tr_cnn_backward(r.model, &probs, &targets, B, k > 0));
            tr_nvtx_pop();
            r.be->copy_d2h(r.be, r.h_losses, r.d_losses, (size_t)B * sizeof(float), 0);
            r.be->synchronize(r.be, 0);
            double s = 0.0;
            for (int b = 0; b < B; b++)
                s += r.h_losses[b];
            step_loss += s / B / o->accum;
            step_images += B;
        }
        tr_nvtx_push("optimizer");
        float grad_norm = NAN, loss_scale = r.scaler.scale, scale = 1.0f;
        bool take = true, fused = r.tc.fuse && r.tc.optim.kind == TR_OPTIM_ADAMW;
        if (r.scaler.enabled || r.tc.clip > 0) {
            /* the global norm over every gradient (--clip, as clip_grad_norm_), and whether any overflowed */
            tr_tensor g = dev_view(&r, r.model->grads, r.model->n_params, TR_F32);
            int finite = 1;
            double sumsq = r.be->sumsq_finite(r.be, &g, &finite);
            scale = tr_scaler_grad_scale(&r.scaler, r.tc.clip, true, sumsq, finite != 0, &grad_norm);
            take = tr_scaler_update(&r.scaler, !finite); /* GradScaler: an overflow skips the step */
            if (take && scale != 1.0f && !fused) { /* unscaled and clipped once, for either optimizer */
                tr_step_hyper hs = {.grad_scale = scale};
                r.be->unscale(r.be, &g, &hs);
            }
        }
        if (take) {
            r.t++;
            tr_step_hyper h = {.lr = tr_schedule_lr(&r.tc.schedule, step), .grad_scale = fused ? scale : 1.0f,
                               .t = r.t, .scaled = fused && scale != 1.0f};
            if (fused) {
                update_fused(&r, &h);
            } else {
                update(&r, 0, r.model->n_decay, r.tc.optim.weight_decay, &h);
                update(&r, r.model->n_decay, r.model->n_params, 0.0f, &h);
            }
            tr_cnn_params_changed(r.model);
            if (r.ema_params) {
                tr_tensor e = dev_view(&r, r.ema_params, r.model->n_params, TR_F32),
                          p = dev_view(&r, r.model->params, r.model->n_params, TR_F32),
                          es = dev_view(&r, r.ema_stats, r.model->n_stats, TR_F32),
                          s = dev_view(&r, r.model->stats, r.model->n_stats, TR_F32);
                tr_nvtx_push("ema");
                r.be->ema(r.be, &e, &p, r.tc.ema_decay, &h);
                r.be->ema(r.be, &es, &s, r.tc.ema_decay, &h);
                tr_nvtx_pop();
            }
        }
        tr_nvtx_pop();
        tr_nvtx_pop();
        if (!isfinite(step_loss)) {
            fprintf(stderr, "trainer: the loss is %f at step %d: diverged (try a lower --lr)\n", step_loss, step + 1);
            return 1;
        }
        if (isnan(first_loss))
            first_loss = step_loss;
        last_loss = step_loss;
        loss_sum += step_loss;
        loss_n++;
        images_done += step_images;
        images_log += step_images;
        step++;
        bool epoch_end = pos + 2 > r.n_train || step == n_steps;
        if (step % o->log_every == 0 || epoch_end) {
            double now = now_s();
            tr_alloc_stats st;
            tr_alloc_get_stats(r.alloc, &st);
            char norm[80] = "";
            int at = 0;
            if (r.tc.clip > 0)
                at = snprintf(norm, sizeof norm, " norm %.3f", grad_norm);
            if (r.scaler.enabled)
                snprintf(norm + at, sizeof norm - (size_t)at, " scale %g%s", loss_scale, take ? "" : " (skipped)");
            printf("epoch %d step %d/%d loss %.4f (mean %.4f)%s %.0f img/s mem %.1f/%.1f MiB\n", epoch, step,
                   n_steps, step_loss, loss_sum / loss_n, norm, images_log / (now - t_log),
                   st.allocated_bytes / 1048576.0, st.reserved_bytes / 1048576.0);
            fflush(stdout);
            t_log = now;
            images_log = 0;
        }
        if (epoch_end) {
            double tl, ta;
            evaluate(&r, &tl, &ta);
            printf("epoch %d train loss %.4f test loss %.4f test accuracy %.2f%%%s\n", epoch, loss_sum / loss_n, tl,
                   100.0 * ta, r.ema_params ? " (ema weights)" : "");
            fflush(stdout);
            if (pos + 2 > r.n_train) { /* a last step mid-epoch keeps its sum for a checkpoint */
                loss_sum = 0.0;
                loss_n = 0;
            }
            t_log = now_s();
        }
    }
    if (o->save) {
        cs = (tr_ckpt_cnn_state){.step = step, .t = r.t, .seed = cs.seed, .epoch = epoch, .pos = pos,
                                 .n_order = r.n_train, .order = perm, .data_rng = rng.state,
                                 .dropout_rng = r.model->rng.state, .loss_sum = loss_sum, .loss_n = loss_n,
                                 .loss_scale = r.scaler.dynamic ? r.scaler.scale : 0.0,
                                 .loss_scale_good_steps = r.scaler.dynamic ? r.scaler.good_steps : 0,
                                 .ema_params = r.ema_params, .ema_stats = r.ema_stats};
        if (tr_ckpt_cnn_save(o->save, r.model, &r.tc.optim, r.m, r.v, &cs) < 0) {
            fprintf(stderr, "trainer: %s\n", tr_error_last());
            return 1;
        }
        printf("trainer: saved %s at step %d\n", o->save, step);
    }
    double seconds = now_s() - t_start;
    tr_alloc_stats st;
    tr_alloc_get_stats(r.alloc, &st);
    printf("trainer: %d steps in %.2f s, %.0f img/s (test passes included); first loss %.4f, final loss %.4f; "
           "peak allocated %.1f MiB, peak reserved %.1f MiB\n", n_steps, seconds, images_done / seconds, first_loss,
           last_loss, st.peak_allocated_bytes / 1048576.0, st.peak_reserved_bytes / 1048576.0);
    if (r.scaler.enabled)
        printf("trainer: loss scale %g at the end; %lld step(s) skipped for overflowed gradients\n", r.scaler.scale,
               (long long)r.scaler.n_skipped);
    if (r.be->conv_autotune && r.be->conv_choices) {
        static char choices[16384];
        int n_shapes = r.be->conv_choices(choices, sizeof choices);
        printf("trainer: --conv-autotune timed %d conv shape(s):\n%s", n_shapes, choices);
    }
    free(perm);
    free(r.h_losses);
    free(r.h_logits);
    r.be->host_free(r.be, r.h_images);
    r.be->host_free(r.be, r.h_labels);
    tr_alloc_release(r.alloc, r.d_images);
    tr_alloc_release(r.alloc, r.d_labels);
    tr_alloc_release(r.alloc, r.d_losses);
    tr_alloc_release(r.alloc, r.d_probs);
    if (r.m)
        tr_alloc_release(r.alloc, r.m);
    if (r.v)
        tr_alloc_release(r.alloc, r.v);
    if (r.ema_params) {
        tr_alloc_release(r.alloc, r.ema_params);
        tr_alloc_release(r.alloc, r.ema_stats);
    }
    tr_cnn_free(r.model);
    tr_alloc_free(r.alloc);
    tr_plug_backend_free(r.be);
    tr_idx_release(&r.train);
    tr_idx_release(&r.test);
    return 0;
}
