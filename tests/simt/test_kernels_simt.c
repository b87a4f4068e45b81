/* test_kernels_simt: the CUDA kernels of kernels/cuda, run on the CPU by the
 * SIMT emulator (tests/simt/simt.h), against the CPU reference of
 * kernels/cpu, with fp32, bf16 and fp16 storage; the device-side training
 * step (kernels/step_state.h) against the host's rules; and the emulator's
 * own checks on the broken kernels of faulty_kernels.cu.
 * Inputs are rounded to their storage type first, so both sides read the
 * same values; the reference's outputs are rounded the same way before the
 * comparison. Tolerances are those of tests/gpu/test_cuda_ops (a few units
 * in the last place of bf16/fp16; orders of summation differ), exact for
 * casts. Shapes are odd on purpose. This proves indexing, reductions,
 * barriers and dtype handling in CI; only tests/gpu proves them on a GPU. */
#include "config.h"

#include "gt_test.h"
#include "kernels_cuda.h"
#include "lowp.h"
#include "ops.h"
#include "simt_mem.h"
#include "step_state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 2, TT = 67, C = 96, NH = 2, V = 200, VP = 256, MAXT = 80, N_CE = 37 };
static const int dtypes[] = {KC_F32, KC_BF16, KC_F16};
static const char *const dt_names[] = {"f32", "bf16", "f16"};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static float uniform(void) /* [-1, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((rng_state >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

/* A tensor on both sides: ref (fp32, what the reference computes in) and
 * dev (emulated device memory in the storage type dt). */
typedef struct buf {
    int dt;
    size_t n;
    float *ref;
    void *dev;
} buf;

static float dev_get(const buf *b, size_t i)
{
    switch (b->dt) {
    case KC_BF16: return lowp_bf16_to_f32(((const uint16_t *)b->dev)[i]);
    case KC_F16: return lowp_f16_to_f32(((const uint16_t *)b->dev)[i]);
    default: return ((const float *)b->dev)[i];
    }
}

/* ref[i] = v rounded to the storage type, and the same in dev */
static void set(buf *b, size_t i, float v)
{
    switch (b->dt) {
    case KC_BF16: ((uint16_t *)b->dev)[i] = lowp_f32_to_bf16(v); break;
    case KC_F16: ((uint16_t *)b->dev)[i] = lowp_f32_to_f16(v); break;
    default: ((float *)b->dev)[i] = v;
    }
    b->ref[i] = dev_get(b, i);
}

static buf make(int dt, size_t n, float scale)
{
    buf b = {dt, n, malloc(n * sizeof(float) + 1), simt_alloc(n * (dt == KC_F32 ? 4 : 2))};
    if (!b.ref || !b.dev) {
        fprintf(stderr, "test_kernels_simt: out of memory\n");
        exit(99);
    }
    for (size_t i = 0; i < n; i++)
        set(&b, i, scale * uniform());
    return b;
}

/* Both sides take the reference's values (rounded): the next op's input. */
static void settle(buf *b)
{
    for (size_t i = 0; i < b->n; i++)
        set(b, i, b->ref[i]);
}

static void drop(buf *b)
{
    free(b->ref);
    simt_free(b->dev);
}

typedef struct tokens {
    size_t n;
    int32_t *ref, *dev;
} tokens;

static tokens make_tokens(size_t n, int range)
{
    tokens t = {n, malloc(n * sizeof(int32_t)), simt_alloc(n * sizeof(int32_t))};
    for (size_t i = 0; i < n; i++)
        t.ref[i] = t.dev[i] = (int32_t)((uniform() + 1.0f) * 0.5f * range) % range;
    return t;
}

static void drop_tokens(tokens *t)
{
    free(t->ref);
    simt_free(t->dev);
}

/* A launcher's result: 0, else the emulator's account of what failed. */
static void launched(int err, const char *launcher)
{
    if (err)
        printf("FAIL %s: CUDA error %d: %s\n", launcher, err, simt_last_failure());
    CU_ASSERT_EQUAL_FATAL(err, 0);
}

/* |dev - round(ref)| <= atol + rtol |round(ref)| for every element */
static void expect_close(const char *op, const char *what, const buf *b, double atol, double rtol)
{
    size_t n_bad = 0, worst = 0;
    double worst_excess = -1;
    for (size_t i = 0; i < b->n; i++) {
        double r = lowp_round(b->ref[i], b->dt), d = dev_get(b, i), lim = atol + rtol * fabs(r), err = fabs(d - r);
        if (!(err <= lim) && !(isnan(r) && isnan(d)) && !(isinf(r) && r == d)) {
            n_bad++;
            double excess = isnan(err) ? INFINITY : err - lim;
            if (excess > worst_excess) {
                worst_excess = excess;
                worst = i;
            }
        }
    }
    if (n_bad)
        printf("FAIL %s %s %s: %zu of %zu outside %.1e + %.1e|x|; worst at %zu: kernel %.9g reference %.9g\n", op,
               what, dt_names[b->dt], n_bad, b->n, atol, rtol, worst, dev_get(b, worst),
               lowp_round(b->ref[worst], b->dt));
    CU_ASSERT_EQUAL(n_bad, 0);
}

/* The tolerance of a tensor's storage type, for ops of a few roundings. */
static void expect(const char *op, const char *what, const buf *b)
{
    switch (b->dt) {
    case KC_BF16: expect_close(op, what, b, 2e-2, 2e-2); break;
    case KC_F16: expect_close(op, what, b, 4e-3, 4e-3); break;
    default: expect_close(op, what, b, 2e-4, 1e-3);
    }
}

/* ---- the ops ---- */

static void test_kernels_cuda__encoder(void)
{
    for (int k = 0; k < 3; k++) {
        int dt = dtypes[k];
        buf out = make(dt, (size_t)B * TT * C, 1), wte = make(dt, (size_t)V * C, 1), wpe = make(dt, (size_t)MAXT * C, 1);
        tokens inp = make_tokens((size_t)B * TT, 13); /* few tokens: repeats */
        launched(kc_encoder_forward(out.dev, dt, inp.dev, wte.dev, wpe.dev, B, TT, C, 0), "kc_encoder_forward");
        op_encoder_forward_cpu(out.ref, inp.ref, wte.ref, wpe.ref, B, TT, C);
        expect("encoder_forward", "out", &out);
        settle(&out);
        for (int add = 0; add < 2; add++) {
            buf dwte = make(KC_F32, (size_t)V * C, 1), dwpe = make(KC_F32, (size_t)MAXT * C, 1);
            launched(kc_encoder_backward(dwte.dev, dwpe.dev, out.dev, dt, inp.dev, B, TT, C,
                                         MAXT, add, 0),
                     "kc_encoder_backward");
            op_encoder_backward_cpu(dwte.ref, dwpe.ref, out.ref, inp.ref, B, TT, C, add);
            if (!add) /* the kernel zeroes the rows past T when it writes */
                memset(dwpe.ref + (size_t)TT * C, 0, (size_t)(MAXT - TT) * C * sizeof(float));
            expect("encoder_backward", "dwte", &dwte);
            expect("encoder_backward", "dwpe", &dwpe);
            drop(&dwte), drop(&dwpe);
        }
        drop(&out), drop(&wte), drop(&wpe), drop_tokens(&inp);
    }
}

static void test_kernels_cuda__layernorm(void)
{
    int N = B * TT;
    for (int k = 0; k < 3; k++) {
        int dt = dtypes[k];
        buf out = make(dt, (size_t)N * C, 1), mean = make(KC_F32, N, 1), rstd = make(KC_F32, N, 1);
        buf inp = make(KC_F32, (size_t)N * C, 2), w = make(KC_F32, C, 1), b = make(KC_F32, C, 1);
        launched(kc_layernorm_forward(out.dev, dt, mean.dev, rstd.dev, inp.dev, w.dev, b.dev, N, C, 0),
                 "kc_layernorm_forward");
        op_layernorm_forward_cpu(out.ref, mean.ref, rstd.ref, inp.ref, w.ref, b.ref, N, C);
        expect("layernorm_forward", "out", &out);
        expect("layernorm_forward", "mean", &mean);
        expect("layernorm_forward", "rstd", &rstd);
        settle(&mean), settle(&rstd);
        float *scratch = simt_alloc(kc_layernorm_backward_scratch_bytes(N, C));
        for (int add = 0; add < 2; add++) {
            buf dinp = make(KC_F32, (size_t)N * C, 1), dw = make(KC_F32, C, 1), db = make(KC_F32, C, 1);
            buf dout = make(dt, (size_t)N * C, 1);
            launched(kc_layernorm_backward(dinp.dev, dw.dev, db.dev, dout.dev, dt, inp.dev, w.dev, mean.dev, rstd.dev,
                                           add, scratch, N, C, 0),
                     "kc_layernorm_backward");
            op_layernorm_backward_cpu(dinp.ref, dw.ref, db.ref, dout.ref, inp.ref, w.ref, mean.ref, rstd.ref, N, C,
                                      add);
            expect("layernorm_backward", "dinp", &dinp);
            expect("layernorm_backward", "dweight", &dw);
            expect("layernorm_backward", "dbias", &db);
            drop(&dinp), drop(&dw), drop(&db), drop(&dout);
        }
        /* fused residual + LayerNorm */
        buf res = make(KC_F32, (size_t)N * C, 1), a = make(KC_F32, (size_t)N * C, 1), bb = make(dt, (size_t)N * C, 1);
        launched(kc_residual_layernorm_forward(res.dev, out.dev, dt, mean.dev, rstd.dev, a.dev, bb.dev, w.dev, b.dev, N,
                                               C, 0),
                 "kc_residual_layernorm_forward");
        op_residual_layernorm_forward_cpu(res.ref, out.ref, mean.ref, rstd.ref, a.ref, bb.ref, w.ref, b.ref, N, C);
        expect("residual_layernorm_forward", "res", &res);
        expect("residual_layernorm_forward", "out", &out);
        expect("residual_layernorm_forward", "rstd", &rstd);
        settle(&res), settle(&mean), settle(&rstd);
        for (int add = 0; add < 2; add++) {
            buf da = make(KC_F32, (size_t)N * C, 1), db = make(dt, (size_t)N * C, 1), dres = make(KC_F32, (size_t)N * C, 1);
            buf dw = make(KC_F32, C, 1), dbias = make(KC_F32, C, 1), dout = make(dt, (size_t)N * C, 1);
            launched(kc_residual_layernorm_backward(da.dev, db.dev, dres.dev, dw.dev, dbias.dev, dout.dev, dt, res.dev,
                                                    w.dev, mean.dev, rstd.dev, add, scratch, N, C, 0),
                     "kc_residual_layernorm_backward");
            op_residual_layernorm_backward_cpu(da.ref, db.ref, dres.ref, dw.ref, dbias.ref, dout.ref, res.ref, w.ref,
                                               mean.ref, rstd.ref, N, C, add);
            expect("residual_layernorm_backward", "da", &da);
            expect("residual_layernorm_backward", "db", &db);
            expect("residual_layernorm_backward", "dres", &dres);
            expect("residual_layernorm_backward", "dweight", &dw);
            expect("residual_layernorm_backward", "dbias", &dbias);
            drop(&da), drop(&db), drop(&dres), drop(&dw), drop(&dbias), drop(&dout);
        }
        simt_free(scratch);
        drop(&out), drop(&mean), drop(&rstd), drop(&inp), drop(&w), drop(&b), drop(&res), drop(&a), drop(&bb);
    }
}

/* The epilogues beside cuBLASLt's GEMMs: bias, bias + GELU, dbias. */
static void test_kernels_cuda__bias(void)
{
    int N = B * TT, OC = 3 * C;
    for (int k = 0; k < 3; k++) {
        int dt = dtypes[k];
        buf out = make(dt, (size_t)N * OC, 1), bias = make(KC_F32, OC, 1);
        launched(kc_bias_add(out.dev, dt, bias.dev, N, OC, 0), "kc_bias_add");
        for (int n = 0; n < N; n++)
            for (int o = 0; o < OC; o++)
                out.ref[(size_t)n * OC + o] += bias.ref[o];
        expect("bias_add", "out", &out);

        buf pre = make(dt, (size_t)N * OC, 2), act = make(dt, (size_t)N * OC, 1);
        launched(kc_bias_gelu(pre.dev, act.dev, dt, bias.dev, N, OC, 0), "kc_bias_gelu");
        for (int n = 0; n < N; n++)
            for (int o = 0; o < OC; o++) { /* GELU reads pre as stored */
                size_t i = (size_t)n * OC + o;
                pre.ref[i] = lowp_round(pre.ref[i] + bias.ref[o], dt);
            }
        op_gelu_forward_cpu(act.ref, pre.ref, (size_t)N * OC);
        expect("bias_gelu", "pre", &pre);
        expect("bias_gelu", "out", &act);

        for (int add = 0; add < 2; add++) {
            buf dbias = make(KC_F32, OC, 1);
            float *scratch = simt_alloc(kc_dbias_scratch_bytes(N, OC));
            launched(kc_dbias(dbias.dev, out.dev, dt, N, OC, add, scratch, 0), "kc_dbias");
            for (int o = 0; o < OC; o++) {
                double s = add ? dbias.ref[o] : 0.0;
                for (int n = 0; n < N; n++)
                    s += lowp_round(out.ref[(size_t)n * OC + o], dt);
                dbias.ref[o] = (float)s;
            }
            expect(add ? "dbias (add)" : "dbias", "dbias", &dbias);
            simt_free(scratch);
            drop(&dbias);
        }
        drop(&out), drop(&bias), drop(&pre), drop(&act);
    }
}

static void test_kernels_cuda__attention(void)
{
    size_t n_qkv = (size_t)B * TT * 3 * C, n_out = (size_t)B * TT * C, n_att = (size_t)B * NH * TT * TT;
    for (int k = 0; k < 3; k++) {
        int dt = dtypes[k];
        buf out = make(dt, n_out, 1), att = make(dt, n_att, 1), qkv = make(dt, n_qkv, 1);
        launched(kc_attention_forward(out.dev, att.dev, qkv.dev, dt, B, TT, C, NH, 0), "kc_attention_forward");
        op_attention_forward_cpu(out.ref, att.ref, qkv.ref, B, TT, C, NH);
        expect("attention_forward", "att", &att);
        expect("attention_forward", "out", &out);
        settle(&att); /* the same probabilities into the backward */
        buf dqkv = make(dt, n_qkv, 1), dout = make(dt, n_out, 1);
        float *scratch = simt_alloc(n_att * sizeof(float)), *scratch_ref = malloc(n_att * sizeof(float));
        launched(kc_attention_backward(dqkv.dev, scratch, dout.dev, qkv.dev, att.dev, dt, B, TT, C, NH, 0),
                 "kc_attention_backward");
        op_attention_backward_cpu(dqkv.ref, scratch_ref, dout.ref, qkv.ref, att.ref, B, TT, C, NH);
        expect("attention_backward", "dqkv", &dqkv);
        simt_free(scratch), free(scratch_ref);
        drop(&out), drop(&att), drop(&qkv), drop(&dqkv), drop(&dout);
    }
}

static void test_kernels_cuda__elementwise(void)
{
    size_t n = 10007;
    for (int k = 0; k < 3; k++) {
        int dt = dtypes[k];
        buf x = make(dt, n, 3), y = make(dt, n, 1), dy = make(dt, n, 1);
        launched(kc_gelu_forward(y.dev, x.dev, dt, (long)n, 0), "kc_gelu_forward");
        op_gelu_forward_cpu(y.ref, x.ref, n);
        expect("gelu_forward", "out", &y);
        settle(&y);
        launched(kc_gelu_backward(y.dev, x.dev, dy.dev, dt, (long)n, 0), "kc_gelu_backward");
        op_gelu_backward_cpu(y.ref, x.ref, dy.ref, n);
        expect("gelu_backward", "dinp", &y);

        buf out = make(KC_F32, n, 1), a = make(KC_F32, n, 1), b = make(dt, n, 1);
        launched(kc_residual_forward(out.dev, a.dev, b.dev, dt, (long)n, 0), "kc_residual_forward");
        op_residual_forward_cpu(out.ref, a.ref, b.ref, n);
        expect("residual_forward", "out", &out);
        settle(&out);
        launched(kc_residual_backward(a.dev, b.dev, dt, out.dev, (long)n, 0), "kc_residual_backward");
        op_residual_backward_cpu(a.ref, b.ref, out.ref, n);
        expect("residual_backward", "da", &a);
        expect("residual_backward", "db", &b);
        drop(&x), drop(&y), drop(&dy), drop(&out), drop(&a), drop(&b);
    }
}

static void test_kernels_cuda__crossentropy(void)
{
    float scale = 0.5f, *dloss_scale = simt_alloc(sizeof(float));
    *dloss_scale = scale;
    for (int k = 0; k < 3; k++) {
        int dt = dtypes[k];
        buf losses = make(KC_F32, N_CE, 1), probs = make(KC_F32, (size_t)N_CE * VP, 1);
        buf logits = make(dt, (size_t)N_CE * VP, 4);
        tokens targets = make_tokens(N_CE, V);
        launched(kc_crossentropy_forward(losses.dev, probs.dev, logits.dev, dt, targets.dev, N_CE, V, VP, 0),
                 "kc_crossentropy_forward");
        op_crossentropy_forward_cpu(losses.ref, probs.ref, logits.ref, targets.ref, N_CE, V, VP);
        expect("crossentropy_forward", "losses", &losses);
        expect_close("crossentropy_forward", "probs", &probs, 1e-6, 1e-3);
        settle(&probs);
        buf dlogits = make(dt, (size_t)N_CE * VP, 1);
        launched(kc_crossentropy_backward(dlogits.dev, dt, probs.dev, targets.dev, 0.37f, NULL, N_CE, V, VP, 0),
                 "kc_crossentropy_backward");
        op_crossentropy_backward_cpu(dlogits.ref, probs.ref, targets.ref, 0.37f, N_CE, V, VP);
        expect("crossentropy_backward", "dlogits", &dlogits);
        /* times the device step's loss scale */
        launched(kc_crossentropy_backward(dlogits.dev, dt, probs.dev, targets.dev, 0.37f, dloss_scale, N_CE, V, VP, 0),
                 "kc_crossentropy_backward");
        op_crossentropy_backward_cpu(dlogits.ref, probs.ref, targets.ref, 0.37f * scale, N_CE, V, VP);
        expect("crossentropy_backward (loss scale)", "dlogits", &dlogits);

        launched(kc_crossentropy_fused_forward(losses.dev, logits.dev, dt, targets.dev, 0.0f, NULL, N_CE, V, VP, 0),
                 "kc_crossentropy_fused_forward");
        op_crossentropy_fused_forward_cpu(losses.ref, logits.ref, targets.ref, 0.0f, N_CE, V, VP);
        expect("crossentropy_fused (loss only)", "losses", &losses);
        expect("crossentropy_fused (loss only)", "logits", &logits);
        launched(kc_crossentropy_fused_forward(losses.dev, logits.dev, dt, targets.dev, 0.37f, dloss_scale, N_CE, V,
                                               VP, 0),
                 "kc_crossentropy_fused_forward");
        op_crossentropy_fused_forward_cpu(losses.ref, logits.ref, targets.ref, 0.37f * scale, N_CE, V, VP);
        expect("crossentropy_fused_forward", "losses", &losses);
        expect("crossentropy_fused_forward", "dlogits", &logits);
        drop(&losses), drop(&probs), drop(&logits), drop(&dlogits), drop_tokens(&targets);
    }
    simt_free(dloss_scale);
}

static void test_kernels_cuda__cast(void)
{
    size_t n = 10007;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            buf src = make(dtypes[i], n, 100), dst = make(dtypes[j], n, 1);
            launched(kc_cast(dst.dev, dtypes[j], src.dev, dtypes[i], (long)n, 0), "kc_cast");
            memcpy(dst.ref, src.ref, n * sizeof(float));
            expect_close("cast", dt_names[i], &dst, 0, 0); /* both round to nearest even: the same bits */
            drop(&src), drop(&dst);
        }
    /* the named casts of the host's transfers */
    buf f = make(KC_F32, n, 100), h = make(KC_BF16, n, 1), back = make(KC_F32, n, 1);
    launched(kc_cast_f32_to_bf16(h.dev, f.dev, (long)n, 0), "kc_cast_f32_to_bf16");
    launched(kc_cast_bf16_to_f32(back.dev, h.dev, (long)n, 0), "kc_cast_bf16_to_f32");
    for (size_t i = 0; i < n; i++)
        back.ref[i] = lowp_round(f.ref[i], LOWP_BF16);
    expect_close("cast f32->bf16->f32", "dst", &back, 0, 0);
    drop(&h);
    h = make(KC_F16, n, 1);
    launched(kc_cast_f32_to_f16(h.dev, f.dev, (long)n, 0), "kc_cast_f32_to_f16");
    launched(kc_cast_f16_to_f32(back.dev, h.dev, (long)n, 0), "kc_cast_f16_to_f32");
    for (size_t i = 0; i < n; i++)
        back.ref[i] = lowp_round(f.ref[i], LOWP_F16);
    expect_close("cast f32->f16->f32", "dst", &back, 0, 0);
    drop(&f), drop(&h), drop(&back);
}

static void test_kernels_cuda__optimizer(void)
{
    size_t n = 100003;
    buf p = make(KC_F32, n, 1), g = make(KC_F32, n, 1), m = make(KC_F32, n, 0.1f), v = make(KC_F32, n, 0.01f);
    for (size_t i = 0; i < n; i++) /* v >= 0 */
        set(&v, i, fabsf(v.ref[i]));
    for (int t = 1; t <= 3; t++) {
        launched(kc_adamw(p.dev, g.dev, m.dev, v.dev, (long)n, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, t, 0), "kc_adamw");
        op_adamw_cpu(p.ref, g.ref, m.ref, v.ref, n, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, t);
    }
    expect("adamw (3 steps)", "param", &p);
    expect("adamw (3 steps)", "m", &m);
    expect("adamw (3 steps)", "v", &v);
    settle(&p), settle(&m), settle(&v);

    kc_ranges r = {.bounds = {17, 5000, 5001, 77777, n}, .decay = {0.1f, 0.0f, 0.1f, 0.0f}, .n = 4};
    launched(kc_adamw_fused(p.dev, g.dev, m.dev, v.dev, &r, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.25f, 4, 0), "kc_adamw_fused");
    op_adamw_fused_cpu(p.ref, g.ref, m.ref, v.ref, r.bounds, r.decay, r.n, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.25f, 4);
    expect("adamw_fused", "param", &p); /* elements outside the ranges stay as they were */
    expect("adamw_fused", "m", &m);
    expect("adamw_fused", "v", &v);
    settle(&p);

    buf mom = make(KC_F32, n, 1);
    launched(kc_sgd(p.dev, g.dev, mom.dev, (long)n, 0.01f, 0.9f, 0.01f, 1, 0), "kc_sgd");
    op_sgd_cpu(p.ref, g.ref, mom.ref, n, 0.01f, 0.9f, 0.01f, 1);
    launched(kc_sgd(p.dev, g.dev, mom.dev, (long)n, 0.01f, 0.9f, 0.01f, 0, 0), "kc_sgd");
    op_sgd_cpu(p.ref, g.ref, mom.ref, n, 0.01f, 0.9f, 0.01f, 0);
    launched(kc_sgd(p.dev, g.dev, NULL, (long)n, 0.01f, 0.0f, 0.0f, 0, 0), "kc_sgd");
    op_sgd_cpu(p.ref, g.ref, NULL, n, 0.01f, 0.0f, 0.0f, 0);
    expect("sgd", "param", &p);
    expect("sgd", "momentum", &mom);
    settle(&p);

    launched(kc_scale(g.dev, 0.5f, (long)n, 0), "kc_scale");
    op_scale_cpu(g.ref, 0.5f, n);
    expect("scale", "x", &g);
    launched(kc_ema(m.dev, p.dev, 0.99f, (long)n, 0), "kc_ema");
    op_ema_cpu(m.ref, p.ref, 0.99f, n);
    expect("ema", "ema", &m);

    kc_reduction *red = simt_alloc(sizeof *red);
    void *scratch = simt_alloc(kc_sumsq_scratch_bytes());
    launched(kc_sumsq_finite(red, g.dev, (long)n, scratch, 0), "kc_sumsq_finite");
    int finite;
    double s = op_sumsq_finite_cpu(g.ref, n, &finite);
    CU_ASSERT(fabs(red->sumsq - s) <= 1e-12 * s);
    CU_ASSERT_EQUAL(red->finite, 1);
    float bad[] = {INFINITY, -INFINITY, NAN};
    for (int i = 0; i < 3; i++) {
        set(&g, 77777, bad[i]);
        launched(kc_sumsq_finite(red, g.dev, (long)n, scratch, 0), "kc_sumsq_finite");
        CU_ASSERT_EQUAL(red->finite, 0);
    }
    /* the last element is read too (n is not a multiple of the grid) */
    set(&g, 77777, 0.0f);
    set(&g, n - 1, NAN);
    launched(kc_sumsq_finite(red, g.dev, (long)n, scratch, 0), "kc_sumsq_finite");
    CU_ASSERT_EQUAL(red->finite, 0);
    simt_free(red), simt_free(scratch);
    drop(&p), drop(&g), drop(&m), drop(&v), drop(&mom);
}

/* The step decided on the device: the sums, the scaler's verdict and the
 * updates that read it, against scaler.h's rules and the CPU's AdamW. */
static void test_kernels_cuda__device_step(void)
{
    size_t n = 4099;
    int n_losses = 301;
    tr_step_state host = {0};
    host.scaler = (tr_scaler){.enabled = true, .dynamic = true, .scale = 1024.0f, .growth = 2.0f, .backoff = 0.5f,
                              .growth_interval = 3};
    host.clip = 1.0f;
    host.check = 1;
    host.t = 5;
    tr_step_state *st = simt_alloc(sizeof *st);
    *st = host;
    buf losses = make(KC_F32, n_losses, 3), g = make(KC_F32, n, 1), p = make(KC_F32, n, 1), m = make(KC_F32, n, 0.1f);
    buf v = make(KC_F32, n, 0.01f);
    for (size_t i = 0; i < n; i++)
        set(&v, i, fabsf(v.ref[i]));
    void *scratch = simt_alloc(kc_sumsq_scratch_bytes());
    kc_ranges r = {.bounds = {0, 1000, n}, .decay = {0.1f, 0.0f}, .n = 2};

    for (int step = 0; step < 2; step++) {
        if (step == 1) /* an overflow: the step is skipped, the scale backs off */
            set(&g, 1234, INFINITY);
        launched(kc_step_begin(st, 3e-4f, NULL, 0), "kc_step_begin");
        double loss_sum = 0.0;
        for (int micro = 0; micro < 2; micro++) {
            launched(kc_step_add_loss(st, losses.dev, n_losses, 0), "kc_step_add_loss");
            double s = 0.0;
            for (int i = 0; i < n_losses; i++)
                s += losses.ref[i];
            loss_sum += (double)(float)(s / n_losses);
        }
        launched(kc_step_check_grads(st, g.dev, (long)n, scratch, 0), "kc_step_check_grads");
        launched(kc_step_verdict(st, 0), "kc_step_verdict");
        launched(kc_adamw_fused_step(p.dev, g.dev, m.dev, v.dev, &r, 0.9f, 0.95f, 1e-8f, st, 0), "kc_adamw_fused_step");

        /* the host's decision, by the same rules */
        int finite;
        double sumsq = op_sumsq_finite_cpu(g.ref, n, &finite);
        float norm, scale_used = host.scaler.scale;
        float grad_scale = tr_scaler_grad_scale(&host.scaler, host.clip, true, sumsq, finite, &norm);
        bool take = tr_scaler_update(&host.scaler, !finite);
        CU_ASSERT(fabs(st->loss_sum - loss_sum) <= 1e-12 * fabs(loss_sum));
        CU_ASSERT_EQUAL(st->finite, finite);
        CU_ASSERT_EQUAL(st->skipped, !take);
        CU_ASSERT_EQUAL(st->scale_used, scale_used);
        CU_ASSERT_EQUAL(st->scaler.scale, host.scaler.scale);
        CU_ASSERT_EQUAL(st->scaler.n_skipped, host.scaler.n_skipped);
        CU_ASSERT_EQUAL(st->t, host.t + (take ? 1 : 0));
        if (finite) {
            CU_ASSERT(fabs(st->sumsq - sumsq) <= 1e-12 * sumsq);
            CU_ASSERT(fabsf(st->grad_scale - grad_scale) <= 1e-6f * grad_scale);
            CU_ASSERT(fabsf(st->grad_norm - norm) <= 1e-5f * norm);
        }
        if (take) {
            host.t++;
            op_adamw_fused_cpu(p.ref, g.ref, m.ref, v.ref, r.bounds, r.decay, r.n, st->lr, 0.9f, 0.95f, 1e-8f,
                               st->grad_scale, host.t);
        }
        CU_ASSERT(take == (step == 0));
        expect(take ? "adamw_fused_step" : "adamw_fused_step (skipped)", "param", &p);
        expect(take ? "adamw_fused_step" : "adamw_fused_step (skipped)", "v", &v);
        settle(&p), settle(&m), settle(&v);
    }
    simt_free(st), simt_free(scratch);
    drop(&losses), drop(&g), drop(&p), drop(&m), drop(&v);
}

/* ---- the emulator's own checks ---- */

int simt_faulty_warp_sum(float *out, const float *in);
int simt_faulty_write_past_end(float *out, int n);
int simt_faulty_read_past_end(float *out, const float *in, int n);
int simt_faulty_divergent_shuffle(float *out);
int simt_faulty_split_barrier(float *out);
int simt_faulty_missing_syncwarp(float *out);
int simt_faulty_block_too_big(float *out);

static void expect_failure(int err, int expected, const char *needle)
{
    CU_ASSERT_EQUAL(err, expected);
    CU_ASSERT_PTR_NOT_NULL(strstr(simt_last_failure(), needle));
    if (!strstr(simt_last_failure(), needle))
        printf("FAIL expected \"%s\" in: %s\n", needle, simt_last_failure());
}

static void test_simt__runs_a_warp_reduction(void)
{
    float *in = simt_alloc(32 * sizeof(float)), *out = simt_alloc(32 * sizeof(float));
    for (int i = 0; i < 32; i++)
        in[i] = (float)i;
    CU_ASSERT_EQUAL(simt_faulty_warp_sum(out, in), 0);
    for (int i = 0; i < 32; i++)
        CU_ASSERT_EQUAL(out[i], 496.0f);
    simt_free(in), simt_free(out);
}

static void test_simt__catches_out_of_bounds(void)
{
    int n = 1000;
    float *out = simt_alloc((size_t)n * sizeof(float)), *in = simt_alloc((size_t)n * sizeof(float));
    expect_failure(simt_faulty_write_past_end(out, n), cudaErrorIllegalAddress, "byte 0 past the end of a buffer of 4000 bytes");
    expect_failure(simt_faulty_read_past_end(out, in, n), cudaErrorIllegalAddress, "byte 0 past the end of a buffer of 4000 bytes");
    simt_free(out);
    /* within the alignment slack: the canary tells */
    out = simt_alloc(1001 * sizeof(float));
    expect_failure(simt_faulty_write_past_end(out, 1001), cudaErrorLaunchFailure,
                   "wrote byte 0 past the end of a buffer of 4004 bytes");
    simt_free(out), simt_free(in);
}

static void test_simt__catches_divergent_warps(void)
{
    float *out = simt_alloc(32 * sizeof(float));
    expect_failure(simt_faulty_divergent_shuffle(out), cudaErrorLaunchFailure, "which has exited");
    expect_failure(simt_faulty_split_barrier(out), cudaErrorLaunchFailure, "deadlock");
    simt_free(out);
}

/* A missing __syncwarp reads stale values in one order of the lanes or
 * the other: launches alternate the order, so two runs show it. */
static void test_simt__shows_missing_syncwarp(void)
{
    float *out = simt_alloc(32 * sizeof(float));
    int n_wrong = 0;
    for (int run = 0; run < 2; run++) {
        CU_ASSERT_EQUAL(simt_faulty_missing_syncwarp(out), 0);
        for (int i = 0; i < 32; i++)
            n_wrong += out[i] != (float)((i + 1) % 32);
    }
    CU_ASSERT(n_wrong > 0);
    simt_free(out);
}

static void test_simt__refuses_bad_launches(void)
{
    float *out = simt_alloc(32 * sizeof(float));
    expect_failure(simt_faulty_block_too_big(out), cudaErrorInvalidConfiguration, "2048 threads per block");
    simt_free(out);
}

static const gt_test_case kernel_cases[] = {
    {"test_kernels_cuda__encoder", test_kernels_cuda__encoder},
    {"test_kernels_cuda__layernorm", test_kernels_cuda__layernorm},
    {"test_kernels_cuda__bias", test_kernels_cuda__bias},
    {"test_kernels_cuda__attention", test_kernels_cuda__attention},
    {"test_kernels_cuda__elementwise", test_kernels_cuda__elementwise},
    {"test_kernels_cuda__crossentropy", test_kernels_cuda__crossentropy},
    {"test_kernels_cuda__cast", test_kernels_cuda__cast},
    {"test_kernels_cuda__optimizer", test_kernels_cuda__optimizer},
    {"test_kernels_cuda__device_step", test_kernels_cuda__device_step},
    {NULL, NULL},
};
static const gt_test_case simt_cases[] = {
    {"test_simt__runs_a_warp_reduction", test_simt__runs_a_warp_reduction},
    {"test_simt__catches_out_of_bounds", test_simt__catches_out_of_bounds},
    {"test_simt__catches_divergent_warps", test_simt__catches_divergent_warps},
    {"test_simt__shows_missing_syncwarp", test_simt__shows_missing_syncwarp},
    {"test_simt__refuses_bad_launches", test_simt__refuses_bad_launches},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    static const gt_test_suite suites[] = {{"kernels_cuda", kernel_cases}, {"simt", simt_cases}};
    int rc = gt_test_main(argc, argv, suites, 2);
    printf("simt: %ld launches, %ld threads emulated\n", simt_n_launches(), simt_n_threads());
    return rc;
}
