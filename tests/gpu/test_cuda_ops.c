/* test_cuda_ops: every op of the CUDA backend against the CPU backend (the
 * reference kernels of kernels/cpu behind the same table), on random inputs,
 * with the activation dtype fp32, bf16 and fp16. Both backends get the same
 * input bits; accumulating outputs start from the same random values, so
 * "+=" and "write" are both checked. Tolerances are per output dtype: a few
 * units in the last place of bf16/fp16 (both round once from fp32, but sum
 * in different orders), 1e-4-ish in fp32. Shapes are odd on purpose (T and
 * the head size are not multiples of 32, V is not a multiple of 64).
 * Exits 77 (skipped) without a usable GPU. */
#include "config.h"

#include "backend.h"
#include "backend_cuda.h"
#include "error.h"
#include "tensor.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tr_backend *cpu, *gpu;
static int n_failed, n_checked;
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static float uniform(void) /* [-1, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((rng_state >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

/* One tensor on both backends, holding the same bits. */
typedef struct pair {
    tr_tensor c, g;
} pair;

static float get(const tr_tensor *t, const void *data, size_t i)
{
    switch (t->dtype) {
    case TR_BF16: return tr_bf16_to_f32(((const uint16_t *)data)[i]);
    case TR_F16: return tr_f16_to_f32(((const uint16_t *)data)[i]);
    case TR_I32: return (float)((const int32_t *)data)[i];
    default: return ((const float *)data)[i];
    }
}

static void put(tr_tensor *t, size_t i, float v)
{
    switch (t->dtype) {
    case TR_BF16: ((uint16_t *)t->data)[i] = tr_f32_to_bf16(v); break;
    case TR_F16: ((uint16_t *)t->data)[i] = tr_f32_to_f16(v); break;
    case TR_I32: ((int32_t *)t->data)[i] = (int32_t)v; break;
    default: ((float *)t->data)[i] = v;
    }
}

static void cuda_ok(cudaError_t err, const char *what)
{
    if (err != cudaSuccess) {
        fprintf(stderr, "test_cuda_ops: %s: %s\n", what, cudaGetErrorString(err));
        exit(1);
    }
}

/* values: scale * uniform, or integers in [0, scale) for I32 */
static pair make(tr_dtype dt, float scale, int n_dims, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    pair p;
    p.c = (tr_tensor){NULL, dt, TR_CPU, n_dims, {d0, d1, d2, d3}};
    size_t n = (size_t)tr_tensor_numel(&p.c), bytes = tr_tensor_bytes(&p.c);
    p.c.data = malloc(bytes ? bytes : 1);
    for (size_t i = 0; i < n; i++)
        put(&p.c, i, dt == TR_I32 ? floorf((uniform() + 1.0f) * 0.5f * scale) : scale * uniform());
    p.g = p.c;
    p.g.device = TR_CUDA;
    cuda_ok(cudaMalloc(&p.g.data, bytes ? bytes : 1), "cudaMalloc");
    gpu->copy_h2d(gpu, p.g.data, p.c.data, bytes, 0);
    return p;
}

static void drop(pair *p)
{
    free(p->c.data);
    cudaFree(p->g.data);
}

/* Compares the GPU's result with the CPU's: |g - c| <= atol + rtol |c|. */
static void expect_close(const char *op, const char *what, const pair *p, double atol, double rtol)
{
    size_t n = (size_t)tr_tensor_numel(&p->c), bytes = tr_tensor_bytes(&p->c);
    void *g = malloc(bytes ? bytes : 1);
    gpu->copy_d2h(gpu, g, p->g.data, bytes, 0);
    size_t bad = 0, worst = 0;
    double worst_excess = -1;
    for (size_t i = 0; i < n; i++) {
        double c = get(&p->c, p->c.data, i), v = get(&p->g, g, i), lim = atol + rtol * fabs(c);
        double err = fabs(v - c);
        if (!(err <= lim) && !(isnan(c) && isnan(v)) && !(isinf(c) && c == v)) {
            bad++;
            if (err - lim > worst_excess || isnan(err)) {
                worst_excess = isnan(err) ? INFINITY : err - lim;
                worst = i;
            }
        }
    }
    n_checked++;
    if (bad) {
        n_failed++;
        printf("FAIL %-28s %-8s %-4s %zu of %zu outside %.1e + %.1e|x|; worst at %zu: gpu %.9g cpu %.9g\n", op, what,
               tr_dtype_name(p->c.dtype), bad, n, atol, rtol, worst, get(&p->g, g, worst), get(&p->c, p->c.data, worst));
    } else {
        printf("ok   %-28s %-8s %-4s %zu values\n", op, what, tr_dtype_name(p->c.dtype), n);
    }
    free(g);
}

/* The tolerance of a tensor's dtype, for ops of a few fp32 roundings. */
static void expect(const char *op, const char *what, const pair *p)
{
    switch (p->c.dtype) {
    case TR_BF16: expect_close(op, what, p, 2e-2, 2e-2); break;
    case TR_F16: expect_close(op, what, p, 4e-3, 4e-3); break;
    default: expect_close(op, what, p, 2e-4, 1e-3);
    }
}

#define BOTH(call)                          \
    do {                                    \
        for (int side = 0; side < 2; side++) { \
            tr_backend *be = side ? gpu : cpu; \
            call;                           \
        }                                   \
        gpu->synchronize(gpu, 0);           \
    } while (0)
#define T(p) (side ? &(p).g : &(p).c)

enum { B = 2, TT = 67, C = 96, NH = 2, V = 200, VP = 256, MAXT = 80 };

static void test_encoder(tr_dtype dt)
{
    pair out = make(dt, 1, 3, B, TT, C, 0), inp = make(TR_I32, 13, 2, B, TT, 0, 0); /* few tokens: repeats */
    pair wte = make(dt, 1, 2, V, C, 0, 0), wpe = make(dt, 1, 2, MAXT, C, 0, 0);
    BOTH(be->encoder_forward(be, T(out), T(inp), T(wte), T(wpe), B, TT, C));
    expect("encoder_forward", "out", &out);
    for (int add = 0; add < 2; add++) {
        pair dwte = make(TR_F32, 1, 2, V, C, 0, 0), dwpe = make(TR_F32, 1, 2, MAXT, C, 0, 0);
        BOTH(be->encoder_backward(be, T(dwte), T(dwpe), T(out), T(inp), B, TT, C, add));
        expect(add ? "encoder_backward (add)" : "encoder_backward", "dwte", &dwte);
        expect(add ? "encoder_backward (add)" : "encoder_backward", "dwpe", &dwpe);
        drop(&dwte);
        drop(&dwpe);
    }
    drop(&out), drop(&inp), drop(&wte), drop(&wpe);
}

static void test_layernorm(tr_dtype dt)
{
    int N = B * TT;
    pair out = make(dt, 1, 2, N, C, 0, 0), mean = make(TR_F32, 1, 1, N, 0, 0, 0), rstd = make(TR_F32, 1, 1, N, 0, 0, 0);
    pair inp = make(TR_F32, 2, 2, N, C, 0, 0), w = make(TR_F32, 1, 1, C, 0, 0, 0), b = make(TR_F32, 1, 1, C, 0, 0, 0);
    BOTH(be->layernorm_forward(be, T(out), T(mean), T(rstd), T(inp), T(w), T(b), N, C));
    expect("layernorm_forward", "out", &out);
    expect("layernorm_forward", "mean", &mean);
    expect("layernorm_forward", "rstd", &rstd);
    /* the backward reads the CPU's statistics on both sides */
    gpu->copy_h2d(gpu, mean.g.data, mean.c.data, tr_tensor_bytes(&mean.c), 0);
    gpu->copy_h2d(gpu, rstd.g.data, rstd.c.data, tr_tensor_bytes(&rstd.c), 0);
    for (int add = 0; add < 2; add++) {
        pair dinp = make(TR_F32, 1, 2, N, C, 0, 0), dw = make(TR_F32, 1, 1, C, 0, 0, 0), db = make(TR_F32, 1, 1, C, 0, 0, 0);
        pair dout = make(dt, 1, 2, N, C, 0, 0);
        const char *name = add ? "layernorm_backward (add)" : "layernorm_backward";
        BOTH(be->layernorm_backward(be, T(dinp), T(dw), T(db), T(dout), T(inp), T(w), T(mean), T(rstd), N, C, add));
        expect(name, "dinp", &dinp);
        expect(name, "dweight", &dw);
        expect(name, "dbias", &db);
        drop(&dinp), drop(&dw), drop(&db), drop(&dout);
    }
    /* fused residual + LayerNorm */
    pair res = make(TR_F32, 1, 2, N, C, 0, 0), a = make(TR_F32, 1, 2, N, C, 0, 0), bb = make(dt, 1, 2, N, C, 0, 0);
    BOTH(be->residual_layernorm_forward(be, T(res), T(out), T(mean), T(rstd), T(a), T(bb), T(w), T(b), N, C));
    expect("residual_layernorm_forward", "res", &res);
    expect("residual_layernorm_forward", "out", &out);
    expect("residual_layernorm_forward", "rstd", &rstd);
    gpu->copy_h2d(gpu, res.g.data, res.c.data, tr_tensor_bytes(&res.c), 0);
    gpu->copy_h2d(gpu, mean.g.data, mean.c.data, tr_tensor_bytes(&mean.c), 0);
    gpu->copy_h2d(gpu, rstd.g.data, rstd.c.data, tr_tensor_bytes(&rstd.c), 0);
    for (int add = 0; add < 2; add++) {
        pair da = make(TR_F32, 1, 2, N, C, 0, 0), db = make(dt, 1, 2, N, C, 0, 0), dres = make(TR_F32, 1, 2, N, C, 0, 0);
        pair dw = make(TR_F32, 1, 1, C, 0, 0, 0), dbias = make(TR_F32, 1, 1, C, 0, 0, 0), dout = make(dt, 1, 2, N, C, 0, 0);
        const char *name = add ? "residual_layernorm_bwd (add)" : "residual_layernorm_backward";
        BOTH(be->residual_layernorm_backward(be, T(da), T(db), T(dres), T(dw), T(dbias), T(dout), T(res), T(w),
                                             T(mean), T(rstd), N, C, add));
        expect(name, "da", &da);
        expect(name, "db", &db);
        expect(name, "dres", &dres);
        expect(name, "dweight", &dw);
        expect(name, "dbias", &dbias);
        drop(&da), drop(&db), drop(&dres), drop(&dw), drop(&dbias), drop(&dout);
    }
    drop(&out), drop(&mean), drop(&rstd), drop(&inp), drop(&w), drop(&b), drop(&res), drop(&a), drop(&bb);
}

static void test_matmul(tr_dtype dt)
{
    int N = B * TT, OC = 3 * C;
    pair out = make(dt, 1, 2, N, OC, 0, 0), inp = make(dt, 1, 2, N, C, 0, 0), w = make(dt, 0.2f, 2, OC, C, 0, 0);
    pair bias = make(TR_F32, 1, 1, OC, 0, 0, 0);
    BOTH(be->matmul_forward(be, T(out), T(inp), T(w), T(bias), N, C, OC));
    expect("matmul_forward", "out", &out);
    BOTH(be->matmul_forward(be, T(out), T(inp), T(w), NULL, N, C, OC));
    expect("matmul_forward (no bias)", "out", &out);
    pair pre = make(dt, 1, 2, N, OC, 0, 0);
    /* a bias 4 bytes off alignment takes the own epilogue kernels (kc_bias_add, kc_bias_gelu) */
    pair bias_off = make(TR_F32, 1, 1, OC + 1, 0, 0, 0), b4 = bias_off;
    b4.c.shape[0] = b4.g.shape[0] = OC;
    b4.c.data = (float *)b4.c.data + 1;
    b4.g.data = (float *)b4.g.data + 1;
    BOTH(be->matmul_forward(be, T(out), T(inp), T(w), T(b4), N, C, OC));
    expect("matmul_forward (own bias kernel)", "out", &out);
    BOTH(be->matmul_bias_gelu_forward(be, T(pre), T(out), T(inp), T(w), T(b4), N, C, OC));
    expect("matmul_bias_gelu (own kernel)", "pre", &pre);
    expect("matmul_bias_gelu (own kernel)", "out", &out);
    BOTH(be->matmul_bias_gelu_forward(be, T(pre), T(out), T(inp), T(w), T(bias), N, C, OC));
    expect("matmul_bias_gelu_forward", "pre", &pre);
    /* cuBLASLt's GELU epilogue evaluates the tanh its own way: a looser fp32 bound */
    if (dt == TR_F32)
        expect_close("matmul_bias_gelu_forward", "out", &out, 2e-3, 2e-3);
    else
        expect("matmul_bias_gelu_forward", "out", &out);
    /* the backward's dout: the CPU's out on both sides */
    gpu->copy_h2d(gpu, out.g.data, out.c.data, tr_tensor_bytes(&out.c), 0);
    for (int add = 0; add < 2; add++) {
        pair dinp = make(dt, 1, 2, N, C, 0, 0), dw = make(TR_F32, 1, 2, OC, C, 0, 0), db = make(TR_F32, 1, 1, OC, 0, 0, 0);
        const char *name = add ? "matmul_backward (add)" : "matmul_backward";
        BOTH(be->matmul_backward(be, T(dinp), T(dw), T(db), T(out), T(inp), T(w), N, C, OC, add));
        expect(name, "dinp", &dinp);
        expect(name, "dweight", &dw);
        expect(name, "dbias", &db);
        BOTH(be->matmul_backward(be, NULL, T(dw), NULL, T(out), T(inp), T(w), N, C, OC, add));
        expect("matmul_backward (no dinp)", "dweight", &dw);
        drop(&dinp), drop(&dw), drop(&db);
    }
    drop(&out), drop(&inp), drop(&w), drop(&bias), drop(&pre), drop(&bias_off);
}

static void test_attention(tr_dtype dt)
{
    pair out = make(dt, 1, 3, B, TT, C, 0), att = make(dt, 1, 4, B, NH, TT, TT), qkv = make(dt, 1, 3, B, TT, 3 * C, 0);
    BOTH(be->attention_forward(be, T(out), T(att), T(qkv), B, TT, C, NH));
    expect("attention_forward", "out", &out);
    expect("attention_forward", "att", &att);
    gpu->copy_h2d(gpu, att.g.data, att.c.data, tr_tensor_bytes(&att.c), 0); /* the same probabilities in */
    pair dqkv = make(dt, 1, 3, B, TT, 3 * C, 0), scratch = make(TR_F32, 0, 4, B, NH, TT, TT);
    pair dout = make(dt, 1, 3, B, TT, C, 0);
    BOTH(be->attention_backward(be, T(dqkv), T(scratch), T(dout), T(qkv), T(out), T(att), B, TT, C, NH));
    expect("attention_backward", "dqkv", &dqkv);
    drop(&out), drop(&att), drop(&qkv), drop(&dqkv), drop(&scratch), drop(&dout);
}

static void test_elementwise(tr_dtype dt)
{
    int N = B * TT;
    pair x = make(dt, 3, 2, N, 4 * C, 0, 0), y = make(dt, 1, 2, N, 4 * C, 0, 0), dy = make(dt, 1, 2, N, 4 * C, 0, 0);
    BOTH(be->gelu_forward(be, T(y), T(x)));
    expect("gelu_forward", "out", &y);
    gpu->copy_h2d(gpu, y.g.data, y.c.data, tr_tensor_bytes(&y.c), 0); /* dinp adds to the same values */
    BOTH(be->gelu_backward(be, T(y), T(x), T(dy)));
    expect("gelu_backward", "dinp", &y);
    pair out = make(TR_F32, 1, 2, N, C, 0, 0), a = make(TR_F32, 1, 2, N, C, 0, 0), b = make(dt, 1, 2, N, C, 0, 0);
    BOTH(be->residual_forward(be, T(out), T(a), T(b)));
    expect("residual_forward", "out", &out);
    BOTH(be->residual_backward(be, T(a), T(b), T(out)));
    expect("residual_backward", "da", &a);
    expect("residual_backward", "db", &b);
    drop(&x), drop(&y), drop(&dy), drop(&out), drop(&a), drop(&b);
}

static void test_crossentropy(tr_dtype dt)
{
    int N = B * TT;
    pair losses = make(TR_F32, 1, 1, N, 0, 0, 0), probs = make(TR_F32, 1, 2, N, VP, 0, 0);
    pair logits = make(dt, 4, 2, N, VP, 0, 0), targets = make(TR_I32, V, 1, N, 0, 0, 0);
    BOTH(be->crossentropy_forward(be, T(losses), T(probs), T(logits), T(targets), N, V, VP));
    expect("crossentropy_forward", "losses", &losses);
    expect_close("crossentropy_forward", "probs", &probs, 1e-6, 1e-3);
    gpu->copy_h2d(gpu, probs.g.data, probs.c.data, tr_tensor_bytes(&probs.c), 0);
    pair dlogits = make(dt, 1, 2, N, VP, 0, 0);
    BOTH(be->crossentropy_backward(be, T(dlogits), T(probs), T(targets), 0.37f, N, V, VP));
    expect("crossentropy_backward", "dlogits", &dlogits);
    BOTH(be->crossentropy_fused_forward(be, T(losses), T(logits), T(targets), 0.0f, N, V, VP));
    expect("crossentropy_fused (loss only)", "losses", &losses);
    expect("crossentropy_fused (loss only)", "logits", &logits);
    BOTH(be->crossentropy_fused_forward(be, T(losses), T(logits), T(targets), 0.37f, N, V, VP));
    expect("crossentropy_fused_forward", "losses", &losses);
    expect("crossentropy_fused_forward", "dlogits", &logits);
    drop(&losses), drop(&probs), drop(&logits), drop(&targets), drop(&dlogits);
}

static void test_cast(void)
{
    static const tr_dtype dts[] = {TR_F32, TR_BF16, TR_F16};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            pair src = make(dts[i], 100, 1, 10007, 0, 0, 0), dst = make(dts[j], 1, 1, 10007, 0, 0, 0);
            BOTH(be->cast(be, T(dst), T(src)));
            char name[32];
            snprintf(name, sizeof name, "cast %s->%s", tr_dtype_name(dts[i]), tr_dtype_name(dts[j]));
            expect_close(name, "dst", &dst, 0, 0); /* both round to nearest even: the same bits */
            drop(&src), drop(&dst);
        }
}

static void test_optim(void)
{
    int n = 100003;
    pair p = make(TR_F32, 1, 1, n, 0, 0, 0), g = make(TR_F32, 1, 1, n, 0, 0, 0), m = make(TR_F32, 0.1f, 1, n, 0, 0, 0);
    pair v = make(TR_F32, 0.01f, 1, n, 0, 0, 0);
    /* v must be >= 0 */
    for (int i = 0; i < n; i++)
        ((float *)v.c.data)[i] = fabsf(((float *)v.c.data)[i]);
    gpu->copy_h2d(gpu, v.g.data, v.c.data, n * sizeof(float), 0);
    for (int t = 1; t <= 3; t++)
        BOTH(be->adamw(be, T(p), T(g), T(m), T(v), &(tr_step_hyper){.lr = 1e-3f, .t = t}, 0.9f, 0.95f, 1e-8f, 0.1f));
    expect("adamw (3 steps)", "param", &p);
    expect("adamw (3 steps)", "m", &m);
    expect("adamw (3 steps)", "v", &v);
    size_t bounds[] = {17, 5000, 5001, 77777, (size_t)n};
    float decay[] = {0.1f, 0.0f, 0.1f, 0.0f};
    BOTH(be->adamw_fused(be, T(p), T(g), T(m), T(v), bounds, decay, 4,
                         &(tr_step_hyper){.lr = 1e-3f, .grad_scale = 0.25f, .t = 4}, 0.9f, 0.95f, 1e-8f));
    expect("adamw_fused", "param", &p);
    expect("adamw_fused", "v", &v);
    pair buf = make(TR_F32, 1, 1, n, 0, 0, 0);
    BOTH(be->sgd(be, T(p), T(g), T(buf), &(tr_step_hyper){.lr = 0.01f, .t = 1}, 0.9f, 0.01f));
    BOTH(be->sgd(be, T(p), T(g), T(buf), &(tr_step_hyper){.lr = 0.01f, .t = 2}, 0.9f, 0.01f));
    BOTH(be->sgd(be, T(p), T(g), NULL, &(tr_step_hyper){.lr = 0.01f, .t = 2}, 0.0f, 0.0f));
    expect("sgd", "param", &p);
    expect("sgd", "buf", &buf);
    BOTH(be->scale(be, T(g), 0.5f));
    BOTH(be->unscale(be, T(g), &(tr_step_hyper){.grad_scale = 0.25f, .scaled = true}));
    expect("scale", "x", &g);
    BOTH(be->ema(be, T(m), T(p), 0.99f, &(tr_step_hyper){.lr = 0.0f}));
    expect("ema", "ema", &m);
    double s_c = cpu->sumsq(cpu, &g.c), s_g = gpu->sumsq(gpu, &g.g);
    int f_c, f_g;
    double sf_c = cpu->sumsq_finite(cpu, &g.c, &f_c), sf_g = gpu->sumsq_finite(gpu, &g.g, &f_g);
    n_checked += 2;
    if (fabs(s_c - s_g) > 1e-9 * s_c || fabs(sf_c - sf_g) > 1e-9 * sf_c || f_c != 1 || f_g != 1) {
        n_failed++;
        printf("FAIL sumsq: gpu %.17g cpu %.17g; sumsq_finite gpu %.17g (%d) cpu %.17g (%d)\n", s_g, s_c, sf_g, f_g,
               sf_c, f_c);
    } else {
        printf("ok   sumsq, sumsq_finite                    %.12g\n", s_g);
    }
    int ok_before = gpu->all_finite(gpu, &g.g);
    float bad[2] = {INFINITY, NAN};
    for (int k = 0; k < 2; k++) {
        /* on the compute stream: a cudaMemcpy on the legacy stream is not ordered with its non-blocking one */
        gpu->copy_h2d(gpu, (float *)g.g.data + 77777, &bad[k], sizeof(float), 0);
        int fin;
        gpu->sumsq_finite(gpu, &g.g, &fin);
        int all = gpu->all_finite(gpu, &g.g);
        n_checked++;
        if (!ok_before || fin || all) {
            n_failed++;
            printf("FAIL all_finite/sumsq_finite with %g: all_finite %d (before %d), finite %d\n", bad[k], all,
                   ok_before, fin);
        } else {
            printf("ok   all_finite, sumsq_finite see %g\n", bad[k]);
        }
    }
    drop(&p), drop(&g), drop(&m), drop(&v), drop(&buf);
}

int main(void)
{
    int n_devices = 0;
    if (cudaGetDeviceCount(&n_devices) != cudaSuccess || n_devices == 0) {
        printf("SKIP: no CUDA device (%s)\n", cudaGetErrorString(cudaGetLastError()));
        return 77;
    }
    cpu = tr_backend_cpu(0);
    /* the own attention kernel: cuDNN's is test_cuda_attention's */
    tr_cuda_options opt = {.device = 0, .attention = TR_CUDA_ATTENTION_OWN};
    if (tr_backend_cuda_new(&gpu, &opt) < 0) {
        fprintf(stderr, "test_cuda_ops: %s\n", tr_error_last());
        return 1;
    }
    printf("device: %s\n", tr_backend_cuda_describe(gpu));
    static const tr_dtype dts[] = {TR_F32, TR_BF16, TR_F16};
    for (int i = 0; i < 3; i++) {
        test_encoder(dts[i]);
        test_layernorm(dts[i]);
        test_matmul(dts[i]);
        test_attention(dts[i]);
        test_elementwise(dts[i]);
        test_crossentropy(dts[i]);
    }
    test_cast();
    test_optim();
    tr_backend_cuda_free(gpu);
    printf("%d of %d checks failed\n", n_failed, n_checked);
    return n_failed ? 1 : 0;
}
