/* test_trainer_cnn_model.c: the CNN presets (model_cnn.c) on the CPU
 * backend: the whole model's gradients against finite differences of the
 * loss, its memory returned after each step, --bias-before-bn off, every
 * CNN op checked against its dtype roles, training on a small learnable
 * set lowering the loss and classifying it, and --amp bf16/fp16 (the
 * gradients those of fp32 to low-precision rounding, training as well). */
#include "error.h"
#include "gt_test.h"
#include "model_cnn.h"
#include "op_roles.h"
#include "ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct fix {
    tr_backend *be;
    tr_alloc *alloc;
    tr_cnn *m;
} fix;

static void setup_cfg(fix *f, const char *name, int H, bool bias_before_bn, bool nhwc, tr_dtype act, bool fuse)
{
    tr_cnn_config c = {.name = name, .bias_before_bn = bias_before_bn, .C = 1, .H = H, .W = H, .n_classes = 10,
                       .bn_momentum = 0.1f, .bn_eps = 1e-5f, .nhwc = nhwc, .act = act, .fuse = fuse};
    f->be = tr_backend_cpu(0);
    f->be->cnn_nhwc = nhwc;
    CU_ASSERT_EQUAL_FATAL(tr_alloc_new(&f->alloc, &f->be->mem, 0), TR_OK);
    CU_ASSERT_EQUAL_FATAL(tr_cnn_new(&f->m, &c, f->be, f->alloc, 7), TR_OK);
}

static void setup_amp(fix *f, const char *name, int H, bool bias_before_bn, bool nhwc, tr_dtype act)
{
    setup_cfg(f, name, H, bias_before_bn, nhwc, act, false);
}

static void setup_layout(fix *f, const char *name, int H, bool bias_before_bn, bool nhwc)
{
    setup_amp(f, name, H, bias_before_bn, nhwc, TR_F32);
}

static void setup(fix *f, const char *name, int H, bool bias_before_bn)
{
    setup_layout(f, name, H, bias_before_bn, false);
}

static void teardown(fix *f)
{
    tr_cnn_free(f->m);
    tr_alloc_free(f->alloc);
}

/* Images of class k: a bright bar at row 2k (of a 10 x 10 or larger image), plus noise. */
static void make_batch(float *x, int32_t *y, int B, int H, uint64_t salt)
{
    tr_rng r = {salt};
    for (int b = 0; b < B; b++) {
        int k = (int)((b * 7 + salt) % 5);
        y[b] = k;
        for (int i = 0; i < H * H; i++)
            x[(size_t)b * H * H + i] = 0.3f * (float)tr_rng_normal(&r) + (i / H == 2 * k ? 2.0f : 0.0f);
    }
}

static tr_tensor t1(void *p, size_t n, tr_dtype dt) { return (tr_tensor){p, dt, TR_CPU, 1, {(int64_t)n}}; }

/* The mean loss of the batch by a training forward; its activations stay
 * for a backward (the next forward releases them otherwise). */
static double loss_of(fix *f, float *x, int32_t *y, int B, float *losses, float *probs)
{
    tr_tensor im = t1(x, (size_t)B * f->m->cfg.H * f->m->cfg.W, TR_F32), tg = t1(y, B, TR_I32),
              ls = t1(losses, B, TR_F32), pr = t1(probs, (size_t)B * 10, TR_F32);
    CU_ASSERT_EQUAL(tr_cnn_forward(f->m, &im, B, true, NULL, &pr, &tg, &ls, 1.0f), TR_OK);
    double s = 0;
    for (int b = 0; b < B; b++)
        s += losses[b];
    return s / B;
}

static void resnet_gradients(bool nhwc)
{
    fix f;
    setup_layout(&f, "cnn-resnet", 8, true, nhwc);
    enum { B = 4, H = 8 };
    float x[B * H * H], losses[B], probs[B * 10];
    int32_t y[B];
    make_batch(x, y, B, H, 3);
    tr_tensor tg = t1(y, B, TR_I32), pr = t1(probs, B * 10, TR_F32);
    loss_of(&f, x, y, B, losses, probs);
    CU_ASSERT_EQUAL_FATAL(tr_cnn_backward(f.m, &pr, &tg, B, false), TR_OK);
    size_t n = f.m->n_params;
    float *g = malloc(n * sizeof(float));
    memcpy(g, f.m->grads, n * sizeof(float));
    /* ReLU's kinks and BatchNorm's batch statistics make the loss only
     * piecewise smooth: a step of h may cross a kink, so a few checks may be
     * off by some percent; a wrong backward is off everywhere, and grossly. */
    int bad = 0, gross = 0, n_checked = 0;
    /* every conv, BN and linear layer's first two weights and first bias */
    for (int i = 0; i < f.m->n_layers; i++) {
        const tr_cnn_layer *l = &f.m->layers[i];
        size_t at[3] = {l->w_off, l->w_off + 1, l->b_off};
        int n_at = l->kind == TR_CNN_CONV || l->kind == TR_CNN_LINEAR || l->kind == TR_CNN_BN ? 3 : 0;
        for (int k = 0; k < n_at; k++) {
            float *p = f.m->params + at[k], keep = *p, h = 1e-3f;
            *p = keep + h;
            double lp = loss_of(&f, x, y, B, losses, probs);
            *p = keep - h;
            double lm = loss_of(&f, x, y, B, losses, probs);
            *p = keep;
            double num = (lp - lm) / (2 * h), err = fabs(num - g[at[k]]);
            n_checked++;
            if (err > 2e-3 + 5e-2 * fabs(num)) {
                fprintf(stderr, "  layer %d param %zu: analytic %g, finite differences %g\n", i, at[k], g[at[k]], num);
                bad++;
            }
            gross += err > 5e-3 + 0.5 * fabs(num);
        }
    }
    CU_ASSERT(n_checked >= 40);
    CU_ASSERT(bad <= n_checked / 10);
    CU_ASSERT_EQUAL(gross, 0);
    free(g);
    teardown(&f);
}
static void test_trainer_cnn_model__resnet_gradients(void) { resnet_gradients(false); }
static void test_trainer_cnn_model__resnet_gradients_nhwc(void) { resnet_gradients(true); }

/* Steps of AdamW from the same parameters in one layout; the losses and the final parameters into the arrays. */
static void train_layout(const char *name, bool nhwc, int n_steps, double *loss, float **params, size_t *n_params)
{
    fix f;
    setup_layout(&f, name, 12, false, nhwc);
    enum { B = 8, H = 12 };
    float x[B * H * H], losses[B], probs[B * 10];
    int32_t y[B];
    size_t np = f.m->n_params;
    float *m = calloc(np, 4), *v = calloc(np, 4);
    for (int s = 0; s < n_steps; s++) {
        make_batch(x, y, B, H, 50 + (uint64_t)s);
        tr_tensor tg = t1(y, B, TR_I32), pr = t1(probs, B * 10, TR_F32);
        loss[s] = loss_of(&f, x, y, B, losses, probs);
        CU_ASSERT_EQUAL_FATAL(tr_cnn_backward(f.m, &pr, &tg, B, false), TR_OK);
        op_adamw_cpu(f.m->params, f.m->grads, m, v, np, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, s + 1);
    }
    *params = malloc(np * sizeof(float));
    memcpy(*params, f.m->params, np * sizeof(float));
    *n_params = np;
    free(m); free(v);
    teardown(&f);
}

/* --layout nhwc and nchw: the same losses step after step and the same
 * parameters at the end (dropout's masks included: drawn in one order).
 * Without conv biases before BatchNorm: their gradient is zero but for
 * rounding, and AdamW turns rounding noise into steps of lr. AdamW also
 * divides small gradients by their own size, so parameters agree to a
 * fraction of lr (1e-3 here), not to float precision. */
static void layouts_agree(const char *name)
{
    enum { N = 6 };
    double a[N], b[N];
    float *pa, *pb;
    size_t na, nb;
    train_layout(name, false, N, a, &pa, &na);
    train_layout(name, true, N, b, &pb, &nb);
    CU_ASSERT_EQUAL_FATAL(na, nb);
    for (int s = 0; s < N; s++) {
        if (fabs(a[s] - b[s]) > 1e-4 * (1 + fabs(a[s])))
            fprintf(stderr, "  %s step %d: loss %.6f nchw, %.6f nhwc\n", name, s + 1, a[s], b[s]);
        CU_ASSERT(fabs(a[s] - b[s]) <= 1e-4 * (1 + fabs(a[s])));
    }
    CU_ASSERT(a[N - 1] < a[0]); /* it trained */
    double worst = 0;
    for (size_t i = 0; i < na; i++)
        worst = fmax(worst, fabs(pa[i] - pb[i]));
    fprintf(stderr, "  %s: parameters at most %g apart\n", name, worst);
    CU_ASSERT(worst < 2.5e-4);
    free(pa); free(pb);
}
static void test_trainer_cnn_model__layouts_agree_resnet(void) { layouts_agree("cnn-resnet"); }
static void test_trainer_cnn_model__layouts_agree_guide(void) { layouts_agree("cnn-guide"); }

static void test_trainer_cnn_model__memory_and_bias_before_bn(void)
{
    fix f, g;
    setup(&f, "cnn-resnet", 28, true);
    setup(&g, "cnn-resnet", 28, false);
    /* each conv that BatchNorm follows loses its OC biases */
    size_t n_bias = 0;
    int n_conv = 0;
    for (int i = 0; i < f.m->n_layers; i++)
        if (f.m->layers[i].kind == TR_CNN_CONV) {
            n_conv++;
            CU_ASSERT_EQUAL(f.m->layers[i + 1].kind, TR_CNN_BN);
            n_bias += (size_t)f.m->layers[i].OC;
        }
    CU_ASSERT_EQUAL(n_conv, 9);
    CU_ASSERT_EQUAL(f.m->n_params - g.m->n_params, n_bias);
    /* a step's activations and their gradients go back to the allocator */
    enum { B = 6, H = 28 };
    float *x = malloc(B * H * H * sizeof(float)), losses[B], probs[B * 10];
    int32_t y[B];
    make_batch(x, y, B, H, 1);
    tr_alloc_stats before, after;
    tr_tensor im = t1(x, B * H * H, TR_F32), tg = t1(y, B, TR_I32), ls = t1(losses, B, TR_F32),
              pr = t1(probs, B * 10, TR_F32);
    /* the first step sizes the conv workspace, which stays */
    CU_ASSERT_EQUAL(tr_cnn_forward(g.m, &im, B, true, NULL, &pr, &tg, &ls, 1.0f), TR_OK);
    CU_ASSERT_EQUAL(tr_cnn_backward(g.m, &pr, &tg, B, false), TR_OK);
    CU_ASSERT(g.m->ws_bytes > 0 && g.m->ws_B == B);
    tr_alloc_get_stats(g.alloc, &before);
    CU_ASSERT_EQUAL(tr_cnn_forward(g.m, &im, B, true, NULL, &pr, &tg, &ls, 1.0f), TR_OK);
    CU_ASSERT_EQUAL(tr_cnn_backward(g.m, &pr, &tg, B, false), TR_OK);
    tr_alloc_get_stats(g.alloc, &after);
    CU_ASSERT_EQUAL(after.allocated_bytes, before.allocated_bytes);
    CU_ASSERT(after.peak_allocated_bytes >= before.allocated_bytes + (size_t)B * g.m->act_bytes);
    /* a backward without its forward is refused */
    CU_ASSERT_EQUAL(tr_cnn_backward(g.m, &pr, &tg, B, false), TR_EINVAL);
    free(x);
    teardown(&f);
    teardown(&g);
}

static void test_trainer_cnn_model__unknown_preset(void)
{
    tr_cnn_config c = {.name = "cnn-huge", .C = 1, .H = 28, .W = 28, .n_classes = 10};
    tr_backend *be = tr_backend_cpu(0);
    tr_alloc *a;
    tr_cnn *m;
    CU_ASSERT_EQUAL_FATAL(tr_alloc_new(&a, &be->mem, 0), TR_OK);
    CU_ASSERT_EQUAL(tr_cnn_new(&m, &c, be, a, 1), TR_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), "cnn-huge"));
    tr_alloc_free(a);
}

/* Steps of AdamW on one learnable set: the loss falls and eval (running
 * statistics, no dropout) classifies it. Every CNN op passes its role check. */
static void train_and_check(const char *name, int H, float lr, int n_steps, double max_final_loss, tr_dtype act)
{
    fix f;
    setup_amp(&f, name, H, true, false, act);
    int n;
    const tr_op_roles *ops = tr_op_roles_table(&n);
    long *before = calloc((size_t)n, sizeof *before);
    for (int i = 0; i < n; i++)
        before[i] = tr_op_roles_n_checked(ops[i].op);
    enum { B = 20 };
    float *x = malloc((size_t)B * H * H * sizeof(float)), losses[B], probs[B * 10], logits[B * 10];
    int32_t y[B];
    size_t np = f.m->n_params;
    float *m = calloc(np, 4), *v = calloc(np, 4);
    double first = 0, last = 0;
    for (int s = 0; s < n_steps; s++) {
        make_batch(x, y, B, H, 100 + (uint64_t)s);
        tr_tensor tg = t1(y, B, TR_I32), pr = t1(probs, B * 10, TR_F32);
        double l = loss_of(&f, x, y, B, losses, probs);
        CU_ASSERT_EQUAL_FATAL(tr_cnn_backward(f.m, &pr, &tg, B, false), TR_OK);
        op_adamw_cpu(f.m->params, f.m->grads, m, v, np, lr, 0.9f, 0.999f, 1e-8f, 0.0f, s + 1);
        tr_cnn_params_changed(f.m); /* --amp: the weights' copy is cast again */
        if (s == 0)
            first = l;
        last = l;
    }
    fprintf(stderr, "  %s (%s): loss %.4f -> %.4f\n", name, tr_dtype_name(act), first, last);
    CU_ASSERT(first > 1.5); /* ln 10 at the start, near enough */
    CU_ASSERT(last < max_final_loss);
    make_batch(x, y, B, H, 999);
    tr_tensor im = t1(x, (size_t)B * H * H, TR_F32), lg = t1(logits, B * 10, TR_F32);
    CU_ASSERT_EQUAL(tr_cnn_forward(f.m, &im, B, false, &lg, NULL, NULL, NULL, 0.0f), TR_OK);
    int correct = 0;
    for (int b = 0; b < B; b++) {
        int best = 0;
        for (int c = 1; c < 10; c++)
            if (logits[b * 10 + c] > logits[b * 10 + best])
                best = c;
        correct += best == y[b];
    }
    CU_ASSERT(correct >= B * 9 / 10);
    for (int i = 0; i < n; i++) {
        const char *op = ops[i].op;
        /* the ResNet's ReLUs all run fused with the BatchNorm or residual add before them */
        bool resnet = !strcmp(name, "cnn-resnet");
        bool cnn = !strncmp(op, "conv2d_", 7) ||
                   (resnet && (!strncmp(op, "batchnorm_", 10) || !strncmp(op, "avgpool_", 8) ||
                               !strncmp(op, "residual_relu_", 14))) ||
                   (!resnet && (!strncmp(op, "maxpool_", 8) || !strncmp(op, "dropout_", 8) || !strncmp(op, "relu_", 5)));
        if (cnn && tr_op_roles_n_checked(op) == before[i])
            fprintf(stderr, "test: %s was not called by %s\n", op, name);
        CU_ASSERT(!cnn || tr_op_roles_n_checked(op) > before[i]);
    }
    free(before); free(x); free(m); free(v);
    teardown(&f);
}

static void test_trainer_cnn_model__resnet_learns(void) { train_and_check("cnn-resnet", 12, 3e-3f, 40, 0.3, TR_F32); }
static void test_trainer_cnn_model__guide_learns(void) { train_and_check("cnn-guide", 12, 1e-3f, 40, 0.3, TR_F32); }
static void test_trainer_cnn_model__resnet_learns_bf16(void)
{
    train_and_check("cnn-resnet", 12, 3e-3f, 40, 0.3, TR_BF16);
}
static void test_trainer_cnn_model__guide_learns_fp16(void)
{
    train_and_check("cnn-guide", 12, 1e-3f, 40, 0.3, TR_F16);
}

/* One batch's loss and gradients under --amp against fp32's from the same
 * parameters: the loss to low-precision rounding, the gradient's direction
 * (cosine) and size; the activations and the weights' copy in the dtype. */
static void amp_gradients(const char *name, bool nhwc, tr_dtype act)
{
    enum { B = 8, H = 12 };
    float x[B * H * H], losses[B], probs[B * 10];
    int32_t y[B];
    make_batch(x, y, B, H, 5);
    tr_tensor tg = t1(y, B, TR_I32), pr = t1(probs, B * 10, TR_F32);
    fix f, g;
    setup_amp(&f, name, H, true, nhwc, TR_F32);
    setup_amp(&g, name, H, true, nhwc, act);
    CU_ASSERT_EQUAL_FATAL(f.m->n_params, g.m->n_params);
    size_t n = f.m->n_params;
    CU_ASSERT_EQUAL(memcmp(f.m->params, g.m->params, n * sizeof(float)), 0); /* same seed, same fp32 start */
    CU_ASSERT(g.m->act_bytes < f.m->act_bytes * 3 / 5); /* half the activations, fp32 aux and images' copy aside */
    double l32 = loss_of(&f, x, y, B, losses, probs);
    CU_ASSERT_EQUAL_FATAL(tr_cnn_backward(f.m, &pr, &tg, B, false), TR_OK);
    double llp = loss_of(&g, x, y, B, losses, probs);
    CU_ASSERT_EQUAL_FATAL(tr_cnn_backward(g.m, &pr, &tg, B, false), TR_OK);
    double dot = 0, n32 = 0, nlp = 0;
    for (size_t i = 0; i < n; i++) {
        dot += (double)f.m->grads[i] * g.m->grads[i];
        n32 += (double)f.m->grads[i] * f.m->grads[i];
        nlp += (double)g.m->grads[i] * g.m->grads[i];
    }
    double cosine = dot / sqrt(n32 * nlp), ratio = sqrt(nlp / n32);
    fprintf(stderr, "  %s %s %s: loss %.5f (fp32 %.5f), gradient cosine %.5f, norm ratio %.4f\n", name,
            nhwc ? "nhwc" : "nchw", tr_dtype_name(act), llp, l32, cosine, ratio);
    CU_ASSERT(fabs(llp - l32) < 1e-2);
    /* bf16 keeps 8 bits, fp16 11: rounding at each of the ResNet's ~30 layers turns its gradient by ~1% in bf16 */
    CU_ASSERT(cosine > (act == TR_BF16 ? 0.98 : 0.995));
    CU_ASSERT(fabs(ratio - 1.0) < 0.02);
    /* an fp32 gradient that low precision alone changed: not every value equal */
    CU_ASSERT(memcmp(f.m->grads, g.m->grads, n * sizeof(float)) != 0);
    teardown(&g);
    teardown(&f);
}
static void test_trainer_cnn_model__amp_gradients_resnet(void)
{
    amp_gradients("cnn-resnet", false, TR_BF16);
    amp_gradients("cnn-resnet", true, TR_BF16);
    amp_gradients("cnn-resnet", true, TR_F16);
}
static void test_trainer_cnn_model__amp_gradients_guide(void)
{
    amp_gradients("cnn-guide", false, TR_F16);
    amp_gradients("cnn-guide", true, TR_BF16);
}

/* --fuse on: the forward's fused softmax+cross-entropy writes the loss's
 * gradient over the logits (the backward runs no cross-entropy op), and the
 * gradients are the unfused ones to the bit (the same operations). */
static void test_trainer_cnn_model__fused_loss(void)
{
    enum { B = 6, H = 12 };
    float x[B * H * H], losses[B], probs[B * 10];
    int32_t y[B];
    make_batch(x, y, B, H, 9);
    tr_tensor tg = t1(y, B, TR_I32), pr = t1(probs, B * 10, TR_F32);
    fix f, g;
    setup_cfg(&f, "cnn-resnet", H, true, true, TR_F32, false);
    setup_cfg(&g, "cnn-resnet", H, true, true, TR_F32, true);
    double l0 = loss_of(&f, x, y, B, losses, probs);
    CU_ASSERT_EQUAL_FATAL(tr_cnn_backward(f.m, &pr, &tg, B, false), TR_OK);
    long fused0 = tr_op_roles_n_checked("crossentropy_fused_forward"),
         bwd0 = tr_op_roles_n_checked("crossentropy_backward");
    double l1 = loss_of(&g, x, y, B, losses, NULL);
    CU_ASSERT_EQUAL_FATAL(tr_cnn_backward(g.m, NULL, &tg, B, false), TR_OK);
    CU_ASSERT(tr_op_roles_n_checked("crossentropy_fused_forward") > fused0);
    CU_ASSERT_EQUAL(tr_op_roles_n_checked("crossentropy_backward"), bwd0);
    CU_ASSERT_EQUAL(l0, l1);
    CU_ASSERT_EQUAL(memcmp(f.m->grads, g.m->grads, f.m->n_params * sizeof(float)), 0);
    teardown(&g);
    teardown(&f);
}

static const gt_test_case cases[] = {
    {"resnet_gradients", test_trainer_cnn_model__resnet_gradients},
    {"resnet_gradients_nhwc", test_trainer_cnn_model__resnet_gradients_nhwc},
    {"layouts_agree_resnet", test_trainer_cnn_model__layouts_agree_resnet},
    {"layouts_agree_guide", test_trainer_cnn_model__layouts_agree_guide},
    {"memory_and_bias_before_bn", test_trainer_cnn_model__memory_and_bias_before_bn},
    {"unknown_preset", test_trainer_cnn_model__unknown_preset},
    {"resnet_learns", test_trainer_cnn_model__resnet_learns},
    {"guide_learns", test_trainer_cnn_model__guide_learns},
    {"resnet_learns_bf16", test_trainer_cnn_model__resnet_learns_bf16},
    {"guide_learns_fp16", test_trainer_cnn_model__guide_learns_fp16},
    {"amp_gradients_resnet", test_trainer_cnn_model__amp_gradients_resnet},
    {"amp_gradients_guide", test_trainer_cnn_model__amp_gradients_guide},
    {"fused_loss", test_trainer_cnn_model__fused_loss},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"trainer_cnn_model", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
