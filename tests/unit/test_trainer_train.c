/* test_trainer_train.c: each optimization switch against its reference:
 * checkpointing gives the same gradient bits, accumulation the update of
 * the large batch, fusion the unfused results, AMP real low-precision
 * storage close to fp32, set_to_none the memset path; the loss scaler's
 * rules, an fp16 run that overflows and recovers, the optimizers (fused,
 * unfused, sharded, SGD), gradient norm, EMA and schedules. */
#include "data.h"
#include "error.h"
#include "gpt.h"
#include "gt_test.h"
#include "trainer_fixture.h"
#include "optim.h"
#include "scaler.h"
#include "train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 4, T = 16 };

static void setup(fixture *f, uint64_t seed) { fixture_setup(f, 32, T, seed); }
static void teardown(fixture *f) { fixture_teardown(f); }

/* One forward and backward on a fresh model with the given switches; the
 * gradients (n_params floats) and the loss come back. */
typedef struct run {
    float *grads;
    float loss;
    size_t n;
    size_t peak_activations;
    tr_dtype qkv_dtype;
} run;

/* A step the host decided to take, with lr and the gradients' scale. */
static void optim_step(tr_optim *o, tr_gpt *m, float lr, float grad_scale)
{
    tr_step_hyper h = tr_optim_host_step(o, lr, grad_scale);
    tr_optim_step(o, &m->base, &h);
}

static run grads_of(tr_dtype amp, tr_gpt_checkpoint ckpt, bool fuse, int batch, int accum)
{
    fixture f;
    setup(&f, 7);
    CU_ASSERT_EQUAL(tr_gpt_set_amp(f.m, amp), TR_OK);
    f.m->checkpoint = ckpt;
    f.m->fuse = fuse;
    int n_tok = batch * accum * T;
    int32_t *in = malloc(n_tok * sizeof *in), *tg = malloc(n_tok * sizeof *tg);
    fixture_tokens(in, tg, n_tok, 1);
    run r = {.n = f.m->n_params};
    tr_gpt_zero_grad(f.m);
    f.m->dloss = 1.0f / accum;
    double loss_sum = 0;
    for (int k = 0; k < accum; k++) {
        float loss;
        CU_ASSERT_EQUAL(tr_gpt_forward(f.m, in + k * batch * T, tg + k * batch * T, batch, T, true, &loss), TR_OK);
        r.qkv_dtype = f.m->blocks[0].qkv.dtype;
        CU_ASSERT_EQUAL(tr_gpt_backward(f.m), TR_OK);
        loss_sum += loss;
    }
    r.loss = (float)(loss_sum / accum);
    r.grads = malloc(r.n * sizeof(float));
    memcpy(r.grads, f.m->grads_flat.data, r.n * sizeof(float));
    r.peak_activations = f.m->peak_activation_bytes;
    free(in);
    free(tg);
    teardown(&f);
    return r;
}

/* max |a-b| / max |b| */
static double rel_diff(const float *a, const float *b, size_t n)
{
    double d = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)a[i] - b[i]));
        s = fmax(s, fabs((double)b[i]));
    }
    return d / (s > 0 ? s : 1);
}

static double cosine(const float *a, const float *b, size_t n)
{
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < n; i++) {
        ab += (double)a[i] * b[i];
        aa += (double)a[i] * a[i];
        bb += (double)b[i] * b[i];
    }
    return ab / sqrt(aa * bb);
}

static void test_trainer_train__checkpointing_is_bitwise(void)
{
    const tr_dtype amps[] = {TR_F32, TR_BF16, TR_F16};
    for (int a = 0; a < 3; a++)
        for (int fuse = 0; fuse < 2; fuse++) {
            run none = grads_of(amps[a], TR_CHECKPOINT_NONE, fuse, B, 1);
            run blocks = grads_of(amps[a], TR_CHECKPOINT_BLOCKS, fuse, B, 1);
            run sel = grads_of(amps[a], TR_CHECKPOINT_SELECTIVE, fuse, B, 1);
            CU_ASSERT(memcmp(none.grads, blocks.grads, none.n * sizeof(float)) == 0);
            CU_ASSERT(memcmp(none.grads, sel.grads, none.n * sizeof(float)) == 0);
            CU_ASSERT_EQUAL(none.loss, blocks.loss);
            /* what each mode keeps: blocks < selective < everything */
            CU_ASSERT(blocks.peak_activations < sel.peak_activations);
            CU_ASSERT(sel.peak_activations < none.peak_activations);
            free(none.grads);
            free(blocks.grads);
            free(sel.grads);
        }
}

static void test_trainer_train__accumulation_matches_the_large_batch(void)
{
    for (int fuse = 0; fuse < 2; fuse++) {
        run big = grads_of(TR_F32, TR_CHECKPOINT_NONE, fuse, 2 * B, 1);
        run acc = grads_of(TR_F32, TR_CHECKPOINT_NONE, fuse, B, 2);
        run acc4 = grads_of(TR_F32, TR_CHECKPOINT_NONE, fuse, B / 2, 4);
        CU_ASSERT(fabs(big.loss - acc.loss) < 1e-5);
        CU_ASSERT(rel_diff(acc.grads, big.grads, big.n) < 1e-5);
        CU_ASSERT(rel_diff(acc4.grads, big.grads, big.n) < 1e-5);
        /* a micro-batch holds fewer activations than the large batch */
        CU_ASSERT(acc.peak_activations < big.peak_activations);
        free(big.grads);
        free(acc.grads);
        free(acc4.grads);
    }
}

static void test_trainer_train__fusion_matches_unfused(void)
{
    const tr_dtype amps[] = {TR_F32, TR_BF16};
    for (int a = 0; a < 2; a++) {
        run plain = grads_of(amps[a], TR_CHECKPOINT_NONE, false, B, 1);
        run fused = grads_of(amps[a], TR_CHECKPOINT_NONE, true, B, 1);
        CU_ASSERT(fabs(plain.loss - fused.loss) < 1e-5);
        CU_ASSERT(rel_diff(fused.grads, plain.grads, plain.n) < 1e-4);
        /* the fused classifier keeps no (B, T, Vp) probabilities */
        CU_ASSERT(fused.peak_activations < plain.peak_activations);
        free(plain.grads);
        free(fused.grads);
    }
}

static void test_trainer_train__amp_stores_low_precision(void)
{
    run ref = grads_of(TR_F32, TR_CHECKPOINT_NONE, false, B, 1);
    const tr_dtype amps[] = {TR_BF16, TR_F16};
    for (int a = 0; a < 2; a++) {
        run lp = grads_of(amps[a], TR_CHECKPOINT_NONE, false, B, 1);
        CU_ASSERT_EQUAL(lp.qkv_dtype, amps[a]);
        CU_ASSERT(fabs(lp.loss - ref.loss) < 0.01);
        CU_ASSERT(cosine(lp.grads, ref.grads, ref.n) > 0.99);
        /* rounding is real: the gradients are not the fp32 ones */
        CU_ASSERT(memcmp(lp.grads, ref.grads, ref.n * sizeof(float)) != 0);
        /* half the bytes for most activations */
        CU_ASSERT(lp.peak_activations < ref.peak_activations * 3 / 4);
        free(lp.grads);
    }
    CU_ASSERT_EQUAL(ref.qkv_dtype, TR_F32);
    free(ref.grads);

    /* the stored values are bf16 numbers: widening and rounding again changes nothing */
    fixture f;
    setup(&f, 7);
    CU_ASSERT_EQUAL(tr_gpt_set_amp(f.m, TR_BF16), TR_OK);
    int32_t in[B * T], tg[B * T];
    fixture_tokens(in, tg, B * T, 1);
    float loss;
    CU_ASSERT_EQUAL(tr_gpt_forward(f.m, in, tg, B, T, true, &loss), TR_OK);
    const uint16_t *q = f.m->blocks[0].qkv.data;
    size_t n = (size_t)tr_tensor_numel(&f.m->blocks[0].qkv), n_same = 0;
    for (size_t i = 0; i < n; i++)
        n_same += tr_f32_to_bf16(tr_bf16_to_f32(q[i])) == q[i];
    CU_ASSERT_EQUAL(n_same, n);
    CU_ASSERT_EQUAL(tr_gpt_set_amp(f.m, TR_I32), TR_EINVAL);
    teardown(&f);
}

static void test_trainer_train__set_to_none_needs_no_memset(void)
{
    run ref = grads_of(TR_F32, TR_CHECKPOINT_NONE, false, B, 1);
    fixture f;
    setup(&f, 7);
    int32_t in[B * T], tg[B * T];
    fixture_tokens(in, tg, B * T, 1);
    float *g = f.m->grads_flat.data;
    for (size_t i = 0; i < f.m->n_params; i++)
        g[i] = NAN; /* stale garbage: set_to_none must overwrite every element */
    tr_gpt_zero_grad(f.m);
    float loss;
    CU_ASSERT_EQUAL(tr_gpt_forward(f.m, in, tg, B, T, true, &loss), TR_OK);
    CU_ASSERT_EQUAL(tr_gpt_backward(f.m), TR_OK);
    CU_ASSERT(memcmp(g, ref.grads, ref.n * sizeof(float)) == 0);
    /* without zero_grad a second backward adds: twice the gradient */
    CU_ASSERT_EQUAL(tr_gpt_forward(f.m, in, tg, B, T, true, &loss), TR_OK);
    CU_ASSERT_EQUAL(tr_gpt_backward(f.m), TR_OK);
    size_t n_double = 0;
    for (size_t i = 0; i < ref.n; i++)
        n_double += fabsf(g[i] - 2 * ref.grads[i]) <= 1e-6f * (1 + fabsf(ref.grads[i]));
    CU_ASSERT_EQUAL(n_double, ref.n);
    free(ref.grads);
    teardown(&f);
}

static void test_trainer_train__scaler_follows_gradscaler(void)
{
    tr_scaler s;
    tr_scaler_dynamic(&s, 65536.0f, 3);
    CU_ASSERT(tr_scaler_update(&s, false));
    CU_ASSERT(tr_scaler_update(&s, false));
    CU_ASSERT_EQUAL(s.scale, 65536.0f);
    CU_ASSERT(tr_scaler_update(&s, false)); /* the third good step in a row grows it */
    CU_ASSERT_EQUAL(s.scale, 131072.0f);
    CU_ASSERT(tr_scaler_update(&s, false));
    CU_ASSERT_FALSE(tr_scaler_update(&s, true)); /* inf: skip and back off, the count restarts */
    CU_ASSERT_EQUAL(s.scale, 65536.0f);
    CU_ASSERT_EQUAL(s.n_skipped, 1);
    CU_ASSERT(tr_scaler_update(&s, false));
    CU_ASSERT(tr_scaler_update(&s, false));
    CU_ASSERT_EQUAL(s.scale, 65536.0f);
    CU_ASSERT(tr_scaler_update(&s, false));
    CU_ASSERT_EQUAL(s.scale, 131072.0f);
    tr_scaler_fixed(&s, 1024.0f);
    CU_ASSERT_FALSE(tr_scaler_update(&s, true));
    CU_ASSERT_EQUAL(s.scale, 1024.0f);
    tr_scaler_off(&s);
    CU_ASSERT(tr_scaler_update(&s, true));
    CU_ASSERT_EQUAL(s.scale, 1.0f);
}

static tr_dataset *text_dataset(void)
{
    char *path = gt_test_path("train-text.txt");
    FILE *fp = fopen(path, "w");
    for (int i = 0; i < 300; i++)
        fprintf(fp, "the quick brown fox %d jumps over the lazy dog\n", i % 10);
    fclose(fp);
    tr_dataset *d = NULL;
    CU_ASSERT_EQUAL(tr_dataset_open(&d, path), TR_OK);
    free(path);
    return d;
}

static tr_train_config base_config(void)
{
    return (tr_train_config){
        .accum = 1,
        .amp = TR_F32,
        .optim = {.kind = TR_OPTIM_ADAMW, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f},
        .schedule = {.kind = TR_SCHEDULE_CONSTANT, .lr = 3e-3f, .total_steps = 40},
    };
}

static void test_trainer_train__fp16_overflow_skips_then_recovers(void)
{
    tr_dataset *d = text_dataset();
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    fixture f;
    setup(&f, 3);
    tr_train_config c = base_config();
    c.amp = TR_F16;
    c.init_scale = 1e9f; /* far past fp16's range: the first steps overflow */
    tr_trainer t;
    CU_ASSERT_EQUAL_FATAL(tr_trainer_init(&t, f.m, &c), TR_OK);
    tr_loader *l;
    CU_ASSERT_EQUAL_FATAL(tr_loader_new(&l, d, 0, d->n_train, B, T, 5, 0, NULL), TR_OK);
    float *before = malloc(f.m->n_params * sizeof(float));
    int n_skipped = 0, first_good = -1;
    float first_loss = 0, last_loss = 0, last_scale = 2e9f;
    for (int s = 0; s < 40; s++) {
        memcpy(before, f.m->params_flat.data, f.m->n_params * sizeof(float));
        tr_step_result r;
        CU_ASSERT_EQUAL_FATAL(tr_train_step(&t, l, s, B, T, &r), TR_OK);
        if (s == 0)
            first_loss = r.loss;
        last_loss = r.loss;
        if (r.skipped) {
            n_skipped++;
            CU_ASSERT(r.scale < last_scale); /* each skip backs off */
            last_scale = r.scale;
            /* a skipped step changes no weight */
            CU_ASSERT(memcmp(before, f.m->params_flat.data, f.m->n_params * sizeof(float)) == 0);
        } else if (first_good < 0) {
            first_good = s;
        }
    }
    CU_ASSERT(first_good >= 3); /* the first steps overflow, one after the other */
    CU_ASSERT(n_skipped < first_good + 5); /* then the scale fits and steps are taken */
    CU_ASSERT_EQUAL(t.scaler.n_skipped, n_skipped);
    CU_ASSERT(t.scaler.scale < 1e9f);
    CU_ASSERT(last_loss < first_loss - 0.5f); /* it recovered and learned */
    free(before);
    tr_loader_free(l);
    tr_trainer_release(&t);
    teardown(&f);
    tr_dataset_free(d);
}

static void test_trainer_train__clipping_bounds_the_update(void)
{
    tr_dataset *d = text_dataset();
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    fixture f;
    setup(&f, 3);
    tr_train_config c = base_config();
    c.clip = 1e-3f; /* far below the gradient norm: every step is clipped */
    c.optim.kind = TR_OPTIM_SGD;
    c.optim.weight_decay = 0;
    c.schedule.lr = 1.0f;
    tr_trainer t;
    CU_ASSERT_EQUAL_FATAL(tr_trainer_init(&t, f.m, &c), TR_OK);
    tr_loader *l;
    CU_ASSERT_EQUAL_FATAL(tr_loader_new(&l, d, 0, d->n_train, B, T, 5, 0, NULL), TR_OK);
    float *before = malloc(f.m->n_params * sizeof(float));
    memcpy(before, f.m->params_flat.data, f.m->n_params * sizeof(float));
    tr_step_result r;
    CU_ASSERT_EQUAL(tr_train_step(&t, l, 0, B, T, &r), TR_OK);
    CU_ASSERT(r.grad_norm > 1e-2f);
    /* SGD's first step with lr 1 moves the weights by exactly the clipped gradient */
    double moved = 0;
    const float *p = f.m->params_flat.data;
    for (size_t i = 0; i < f.m->n_params; i++)
        moved += ((double)p[i] - before[i]) * ((double)p[i] - before[i]);
    CU_ASSERT(fabs(sqrt(moved) - 1e-3) < 1e-5);
    free(before);
    tr_loader_free(l);
    tr_trainer_release(&t);
    teardown(&f);
    tr_dataset_free(d);
}

/* A model with random gradients, for the optimizer tests. */
static void random_grads(fixture *f, unsigned seed)
{
    float *g = f->m->grads_flat.data;
    for (size_t i = 0; i < f->m->n_params; i++) {
        seed = seed * 1103515245u + 12345u;
        g[i] = ((seed >> 8) / 16777216.0f - 0.5f) * 0.02f;
    }
}

static void test_trainer_train__optimizers(void)
{
    fixture a, b, c;
    setup(&a, 1);
    setup(&b, 1);
    setup(&c, 1);
    random_grads(&a, 9);
    random_grads(&b, 9);
    random_grads(&c, 9);
    size_t n = a.m->n_params, half = n / 2 + 3;
    tr_optim_config adamw = {.kind = TR_OPTIM_ADAMW, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f,
                             .weight_decay = 0.1f};
    tr_optim_config fused = adamw;
    fused.fused = true;
    tr_optim oa, ob1, ob2, oc;
    CU_ASSERT_EQUAL(tr_optim_init(&oa, &a.m->base, &adamw, 0, n), TR_OK);
    /* b: two shards, as two ZeRO ranks would hold them */
    CU_ASSERT_EQUAL(tr_optim_init(&ob1, &b.m->base, &adamw, 0, half), TR_OK);
    CU_ASSERT_EQUAL(tr_optim_init(&ob2, &b.m->base, &adamw, half, n), TR_OK);
    CU_ASSERT_EQUAL(tr_optim_init(&oc, &c.m->base, &fused, 0, n), TR_OK);
    CU_ASSERT_EQUAL(tr_optim_init(&oc, &c.m->base, &fused, 0, n + 1), TR_EINVAL);
    CU_ASSERT_EQUAL(tr_optim_init(&oc, &c.m->base, &fused, 0, n), TR_OK);
    for (int s = 0; s < 3; s++) {
        optim_step(&oa, a.m, 1e-2f, 0.5f);
        optim_step(&ob1, b.m, 1e-2f, 0.5f);
        optim_step(&ob2, b.m, 1e-2f, 0.5f);
        random_grads(&a, 10 + s);
        random_grads(&b, 10 + s);
    }
    /* a shard is updated exactly as the whole */
    CU_ASSERT(memcmp(a.m->params_flat.data, b.m->params_flat.data, n * sizeof(float)) == 0);
    /* the fused pass (unscaling on the fly) against the per-tensor loop (a scaling pass first) */
    random_grads(&a, 20);
    random_grads(&c, 20);
    tr_optim_release(&oa, &a.m->base);
    CU_ASSERT_EQUAL(tr_optim_init(&oa, &a.m->base, &adamw, 0, n), TR_OK);
    memcpy(c.m->params_flat.data, a.m->params_flat.data, n * sizeof(float));
    optim_step(&oa, a.m, 1e-2f, 0.5f);
    optim_step(&oc, c.m, 1e-2f, 0.5f);
    CU_ASSERT(rel_diff(c.m->params_flat.data, a.m->params_flat.data, n) < 1e-6);
    /* with zero gradients and fresh moments only the decay moves a weight: matrices and
     * embeddings decay, LayerNorm gains and biases do not */
    tr_optim od;
    CU_ASSERT_EQUAL(tr_optim_init(&od, &a.m->base, &adamw, 0, n), TR_OK);
    memset(a.m->grads_flat.data, 0, n * sizeof(float));
    float gain = ((float *)a.m->params.lnfw.data)[0], w = ((float *)a.m->params.qkvw.data)[0];
    /* per-layer gains and biases are stacked (L, C): 2-D, and still not decayed (PyTorch's groups) */
    ((float *)a.m->params.qkvb.data)[0] = 0.5f; /* biases start at 0, where decay is invisible */
    float gain1 = ((float *)a.m->params.ln1w.data)[0], bias = 0.5f;
    optim_step(&od, a.m, 1e-2f, 1.0f);
    CU_ASSERT_EQUAL(((float *)a.m->params.lnfw.data)[0], gain);
    CU_ASSERT_EQUAL(((float *)a.m->params.ln1w.data)[0], gain1);
    CU_ASSERT_EQUAL(((float *)a.m->params.qkvb.data)[0], bias);
    CU_ASSERT_DOUBLE_EQUAL(((float *)a.m->params.qkvw.data)[0], w * (1 - 1e-2 * 0.1), 1e-7);
    tr_optim_release(&od, &a.m->base);
    random_grads(&a, 21);

    /* the gradient norm: fused and per-tensor agree, and an inf is found */
    bool fin1, fin2;
    double s1 = tr_grad_sumsq(&a.m->base, true, 0, n, &fin1), s2 = tr_grad_sumsq(&a.m->base, false, 0, n, &fin2);
    CU_ASSERT(fin1 && fin2);
    CU_ASSERT(fabs(s1 - s2) < 1e-9 * s1);
    ((float *)a.m->grads_flat.data)[n - 1] = INFINITY;
    tr_grad_sumsq(&a.m->base, true, 0, n, &fin1);
    tr_grad_sumsq(&a.m->base, false, 0, n, &fin2);
    CU_ASSERT_FALSE(fin1);
    CU_ASSERT_FALSE(fin2);

    /* SGD with momentum, torch.optim.SGD's update by hand on one element */
    tr_optim_config sgd = {.kind = TR_OPTIM_SGD, .momentum = 0.9f, .weight_decay = 0.0f};
    tr_optim os;
    CU_ASSERT_EQUAL(tr_optim_init(&os, &b.m->base, &sgd, 0, n), TR_OK);
    float *p = b.m->params_flat.data, *g = b.m->grads_flat.data;
    float p0 = p[5], g0 = g[5];
    optim_step(&os, b.m, 0.1f, 1.0f); /* buf = g; p -= 0.1 g */
    CU_ASSERT_DOUBLE_EQUAL(p[5], p0 - 0.1f * g0, 1e-7);
    float p1 = p[5];
    g[5] = 2 * g0;
    optim_step(&os, b.m, 0.1f, 1.0f); /* buf = 0.9 g0 + 2 g0 */
    CU_ASSERT_DOUBLE_EQUAL(p[5], p1 - 0.1f * (0.9f * g0 + 2 * g0), 1e-7);
    tr_optim_release(&os, &b.m->base);

    /* the EMA: one update, then swap in and back; decay 0.75 keeps 3/4 of the
     * average (0.5 would not tell the average's share from the weight's) */
    tr_ema e;
    CU_ASSERT_EQUAL(tr_ema_init(&e, &a.m->base, 0.75f), TR_OK);
    float w0 = ((float *)a.m->params_flat.data)[7];
    ((float *)a.m->params_flat.data)[7] = w0 + 1.0f;
    tr_ema_update(&e, &a.m->base, &(tr_step_hyper){.lr = 0.0f});
    CU_ASSERT_DOUBLE_EQUAL(((float *)e.w.data)[7], w0 + 0.25f, 1e-6);
    tr_ema_swap(&e, &a.m->base);
    CU_ASSERT_DOUBLE_EQUAL(((float *)a.m->params.wte.data)[7], w0 + 0.25f, 1e-6); /* the views follow */
    tr_ema_swap(&e, &a.m->base);
    CU_ASSERT_DOUBLE_EQUAL(((float *)a.m->params.wte.data)[7], w0 + 1.0f, 1e-6);
    tr_ema_release(&e, &a.m->base);

    tr_optim_release(&oa, &a.m->base);
    tr_optim_release(&ob1, &b.m->base);
    tr_optim_release(&ob2, &b.m->base);
    tr_optim_release(&oc, &c.m->base);
    teardown(&a);
    teardown(&b);
    teardown(&c);
}

static void test_trainer_train__schedules(void)
{
    tr_schedule s = {.kind = TR_SCHEDULE_CONSTANT, .lr = 1.0f, .min_frac = 0.1f, .warmup = 4, .total_steps = 20};
    CU_ASSERT_DOUBLE_EQUAL(tr_schedule_lr(&s, 0), 0.25, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(tr_schedule_lr(&s, 3), 1.0, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(tr_schedule_lr(&s, 19), 1.0, 1e-6);
    s.kind = TR_SCHEDULE_COSINE;
    CU_ASSERT_DOUBLE_EQUAL(tr_schedule_lr(&s, 4), 1.0, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(tr_schedule_lr(&s, 19), 0.1, 1e-6); /* lr * min_frac at the last step */
    CU_ASSERT(tr_schedule_lr(&s, 10) < tr_schedule_lr(&s, 9));
    /* OneCycleLR(max_lr=1, total_steps=100), values from PyTorch 1.13 */
    tr_schedule oc = {.kind = TR_SCHEDULE_ONECYCLE, .lr = 1.0f, .total_steps = 100};
    CU_ASSERT_DOUBLE_EQUAL(tr_schedule_lr(&oc, 0), 0.04, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(tr_schedule_lr(&oc, 10), 0.2951639485, 1e-5);
    CU_ASSERT_DOUBLE_EQUAL(tr_schedule_lr(&oc, 29), 1.0, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(tr_schedule_lr(&oc, 60), 0.5892800903, 1e-5);
    CU_ASSERT_DOUBLE_EQUAL(tr_schedule_lr(&oc, 99), 4e-6, 1e-9);
    /* past the last step (a run resumed with more steps) it stays at its floor */
    CU_ASSERT_DOUBLE_EQUAL(tr_schedule_lr(&oc, 150), 4e-6, 1e-9);
}

static void test_trainer_train__invalid_configurations(void)
{
    tr_train_config c = base_config();
    CU_ASSERT_EQUAL(tr_train_config_check(&c), TR_OK);
    c.loss_scale = 128;
    CU_ASSERT_EQUAL(tr_train_config_check(&c), TR_EINVAL); /* a loss scale without AMP */
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), "--loss-scale"));
    c = base_config();
    c.optim.momentum = 0.9f; /* momentum is SGD's */
    CU_ASSERT_EQUAL(tr_train_config_check(&c), TR_EINVAL);
    c = base_config();
    c.accum = 0;
    CU_ASSERT_EQUAL(tr_train_config_check(&c), TR_EINVAL);
    c = base_config();
    c.ema_decay = 1.0f;
    CU_ASSERT_EQUAL(tr_train_config_check(&c), TR_EINVAL);
    c = base_config();
    c.schedule.kind = TR_SCHEDULE_COSINE;
    c.schedule.warmup = 40;
    CU_ASSERT_EQUAL(tr_train_config_check(&c), TR_EINVAL);
}

static const gt_test_case cases[] = {
    {"test_trainer_train__checkpointing_is_bitwise", test_trainer_train__checkpointing_is_bitwise},
    {"test_trainer_train__accumulation_matches_the_large_batch",
     test_trainer_train__accumulation_matches_the_large_batch},
    {"test_trainer_train__fusion_matches_unfused", test_trainer_train__fusion_matches_unfused},
    {"test_trainer_train__amp_stores_low_precision", test_trainer_train__amp_stores_low_precision},
    {"test_trainer_train__set_to_none_needs_no_memset", test_trainer_train__set_to_none_needs_no_memset},
    {"test_trainer_train__scaler_follows_gradscaler", test_trainer_train__scaler_follows_gradscaler},
    {"test_trainer_train__fp16_overflow_skips_then_recovers", test_trainer_train__fp16_overflow_skips_then_recovers},
    {"test_trainer_train__clipping_bounds_the_update", test_trainer_train__clipping_bounds_the_update},
    {"test_trainer_train__optimizers", test_trainer_train__optimizers},
    {"test_trainer_train__schedules", test_trainer_train__schedules},
    {"test_trainer_train__invalid_configurations", test_trainer_train__invalid_configurations},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"trainer_train", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
