/* test_cuda_attention: cuDNN's fused attention (the CUDA backend with
 * --attention cudnn, trainer/attention_cudnn.c) against the CPU backend, in
 * bf16 and fp16, at shapes with T not a multiple of 64 and head sizes 32, 64
 * and 128. Both backends get the same input bits. The forward's output is
 * compared with the CPU's, its softmax statistics with the log-sum-exp of the
 * scaled scores computed here in double; the backward's dqkv (written by
 * cuDNN, added into zeros by the CPU) with the CPU's. The CPU keeps its
 * probabilities in the activation dtype, as the own kernels do; cuDNN rounds
 * P and dS to it before its matrix products: a few units in the last place
 * apart. A deterministic backward plan must give the same bits twice. The
 * backward graphs the backend does not choose here run too, through the API:
 * the dQ accumulator's, and the padding-mask workaround of cuDNN <= 9.15.0
 * (T not a multiple of 128), as tr_attn_cudnn_test_graphs builds them.
 * With $OUT set it writes cuDNN's description of the GPU there
 * (cudnn_deviceprop.json), which test_cudnn_attention_plans can build for.
 * Exits 77 (skipped) without a usable GPU or without cuDNN. */
#include "config.h"

#include "attention_cudnn.h"
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
static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static float uniform(void) /* [-1, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((rng_state >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

static void cuda_ok(cudaError_t err, const char *what)
{
    if (err != cudaSuccess) {
        fprintf(stderr, "test_cuda_attention: %s: %s\n", what, cudaGetErrorString(err));
        exit(1);
    }
}

static float get(const tr_tensor *t, const void *data, size_t i)
{
    switch (t->dtype) {
    case TR_BF16: return tr_bf16_to_f32(((const uint16_t *)data)[i]);
    case TR_F16: return tr_f16_to_f32(((const uint16_t *)data)[i]);
    default: return ((const float *)data)[i];
    }
}

static void put(tr_tensor *t, size_t i, float v)
{
    switch (t->dtype) {
    case TR_BF16: ((uint16_t *)t->data)[i] = tr_f32_to_bf16(v); break;
    case TR_F16: ((uint16_t *)t->data)[i] = tr_f32_to_f16(v); break;
    default: ((float *)t->data)[i] = v;
    }
}

/* One tensor on both backends with the same bits: scale * uniform values. */
typedef struct pair {
    tr_tensor c, g;
} pair;

static pair make(tr_dtype dt, float scale, int n_dims, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    pair p;
    p.c = (tr_tensor){NULL, dt, TR_CPU, n_dims, {d0, d1, d2, d3}};
    size_t n = (size_t)tr_tensor_numel(&p.c), bytes = tr_tensor_bytes(&p.c);
    p.c.data = malloc(bytes);
    for (size_t i = 0; i < n; i++)
        put(&p.c, i, scale * uniform());
    p.g = p.c;
    p.g.device = TR_CUDA;
    cuda_ok(cudaMalloc(&p.g.data, bytes), "cudaMalloc");
    cuda_ok(cudaMemcpy(p.g.data, p.c.data, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    return p;
}

static void drop(pair *p)
{
    free(p->c.data);
    cudaFree(p->g.data);
}

static void *fetch(const tr_tensor *g)
{
    size_t bytes = tr_tensor_bytes(g);
    void *h = malloc(bytes);
    cuda_ok(cudaDeviceSynchronize(), "waiting for the GPU (an op failed?)");
    cuda_ok(cudaMemcpy(h, g->data, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    return h;
}

/* |gpu - ref| <= atol + rtol |ref| everywhere; ref is in the layout of g. */
static void compare(const char *what, const tr_tensor *ref, const void *ref_data, const tr_tensor *g, double atol,
                    double rtol)
{
    size_t n = (size_t)tr_tensor_numel(g), bad = 0, worst = 0;
    void *h = fetch(g);
    double worst_excess = -1;
    for (size_t i = 0; i < n; i++) {
        double r = get(ref, ref_data, i), v = get(g, h, i), err = fabs(v - r), lim = atol + rtol * fabs(r);
        if (!(err <= lim)) {
            bad++;
            if (isnan(err) || err - lim > worst_excess) {
                worst_excess = isnan(err) ? INFINITY : err - lim;
                worst = i;
            }
        }
    }
    n_checked++;
    if (bad) {
        n_failed++;
        printf("FAIL %-48s %zu of %zu outside %.1e + %.1e|x|; worst at %zu: gpu %.9g reference %.9g\n", what, bad, n,
               atol, rtol, worst, get(g, h, worst), get(ref, ref_data, worst));
    } else {
        printf("ok   %-48s %zu values\n", what, n);
    }
    free(h);
}

/* A few units in the last place of the activation dtype. */
static double tolerance(tr_dtype dt) { return dt == TR_BF16 ? 2e-2 : 4e-3; }

/* The log-sum-exp of each row of causal scaled scores, from the inputs' bits. */
static double *reference_stats(const pair *qkv, int B, int T, int NH, int HS)
{
    int C = NH * HS;
    double *lse = malloc((size_t)B * NH * T * sizeof *lse), scale = 1.0 / sqrt((double)HS), *s = malloc(T * sizeof *s);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++)
            for (int t = 0; t < T; t++) {
                double m = -INFINITY, sum = 0;
                for (int u = 0; u <= t; u++) {
                    double d = 0;
                    for (int i = 0; i < HS; i++)
                        d += (double)get(&qkv->c, qkv->c.data, ((size_t)b * T + t) * 3 * C + h * HS + i) *
                             get(&qkv->c, qkv->c.data, ((size_t)b * T + u) * 3 * C + C + h * HS + i);
                    s[u] = d * scale;
                    m = s[u] > m ? s[u] : m;
                }
                for (int u = 0; u <= t; u++)
                    sum += exp(s[u] - m);
                lse[((size_t)b * NH + h) * T + t] = m + log(sum);
            }
    free(s);
    return lse;
}

static size_t version_number; /* the loaded cuDNN's, like 91900 */

/* The backward again through the API, with the graphs of another version's
 * workarounds or the dQ accumulator, against the CPU's dqkv. */
static void test_backward_variant(tr_attn_cudnn *direct, const char *name, const char *variant, size_t version,
                                  bool dq_accumulator, const pair *dqkv_ref, const pair *dout, const pair *qkv,
                                  const pair *out, const tr_tensor *stats, tr_dtype dt, int B, int T, int NH, int HS)
{
    char what[160];
    snprintf(what, sizeof what, "%s backward dqkv, %s", name, variant);
    tr_attn_cudnn_test_graphs(direct, version, dq_accumulator);
    size_t ws_bytes;
    void *ws = NULL;
    pair dqkv = make(dt, 0, 3, B, T, 3 * (int64_t)NH * HS, 0);
    int rc = tr_attn_cudnn_prepare(direct, dt, B, T, NH, HS, &ws_bytes);
    if (rc >= 0) {
        cuda_ok(cudaMalloc(&ws, ws_bytes ? ws_bytes : 1), "cudaMalloc");
        rc = tr_attn_cudnn_backward(direct, dqkv.g.data, dout->g.data, qkv->g.data, out->g.data, stats->data, dt, B,
                                    T, NH, HS, ws, 0);
    }
    if (rc < 0) {
        n_checked++;
        n_failed++;
        printf("FAIL %s: %s\n", what, tr_error_last());
    } else {
        compare(what, &dqkv_ref->c, dqkv_ref->c.data, &dqkv.g, tolerance(dt), tolerance(dt));
    }
    cudaFree(ws);
    drop(&dqkv);
    tr_attn_cudnn_test_graphs(direct, version_number, false);
}

static void test_shape(tr_attn_cudnn *direct, tr_dtype dt, int B, int T, int NH, int HS)
{
    int C = NH * HS;
    char name[96];
    snprintf(name, sizeof name, "%s B %d T %d NH %d HS %d", tr_dtype_name(dt), B, T, NH, HS);
    tr_tensor att_g, scr_g;
    gpu->attention_layout(gpu, dt, B, T, C, NH, &att_g, &scr_g);
    n_checked++;
    if (att_g.dtype != TR_F32 || att_g.n_dims != 3 || tr_tensor_numel(&att_g) != (int64_t)B * NH * T ||
        tr_tensor_numel(&scr_g) != 0) {
        n_failed++;
        printf("FAIL %s: the layout is not cuDNN's (B,NH,T) fp32 statistics without scratch\n", name);
        return;
    }
    printf("ok   %s: cuDNN keeps (B,NH,T) fp32 statistics; backward %s\n", name,
           tr_attn_cudnn_backward_kind(direct, dt, B, T, NH, HS));
    pair qkv = make(dt, 1, 3, B, T, 3 * C, 0), out = make(dt, 0, 3, B, T, C, 0), dout = make(dt, 1, 3, B, T, C, 0);
    pair dqkv = make(dt, 0, 3, B, T, 3 * C, 0), dqkv2 = make(dt, 0, 3, B, T, 3 * C, 0);
    tr_tensor att_c = {malloc((size_t)B * NH * T * T * tr_dtype_size(dt)), dt, TR_CPU, 4, {B, NH, T, T}};
    tr_tensor scr_c = {malloc((size_t)B * NH * T * T * sizeof(float)), TR_F32, TR_CPU, 4, {B, NH, T, T}};
    cuda_ok(cudaMalloc(&att_g.data, tr_tensor_bytes(&att_g)), "cudaMalloc");

    cpu->attention_forward(cpu, &out.c, &att_c, &qkv.c, B, T, C, NH);
    gpu->attention_forward(gpu, &out.g, &att_g, &qkv.g, B, T, C, NH);
    char what[160];
    snprintf(what, sizeof what, "%s forward out", name);
    compare(what, &out.c, out.c.data, &out.g, tolerance(dt), tolerance(dt));
    double *lse = reference_stats(&qkv, B, T, NH, HS);
    float *lse_f = malloc((size_t)B * NH * T * sizeof *lse_f);
    for (size_t i = 0; i < (size_t)B * NH * T; i++)
        lse_f[i] = (float)lse[i];
    tr_tensor lse_t = {lse_f, TR_F32, TR_CPU, 3, {B, NH, T}};
    snprintf(what, sizeof what, "%s forward stats", name);
    compare(what, &lse_t, lse_f, &att_g, 1e-4, 1e-4);

    cpu->attention_backward(cpu, &dqkv.c, &scr_c, &dout.c, &qkv.c, &out.c, &att_c, B, T, C, NH);
    gpu->attention_backward(gpu, &dqkv.g, &scr_g, &dout.g, &qkv.g, &out.g, &att_g, B, T, C, NH);
    snprintf(what, sizeof what, "%s backward dqkv", name);
    compare(what, &dqkv.c, dqkv.c.data, &dqkv.g, tolerance(dt), tolerance(dt));

    /* the same backward again: a deterministic plan gives the same bits */
    gpu->attention_backward(gpu, &dqkv2.g, &scr_g, &dout.g, &qkv.g, &out.g, &att_g, B, T, C, NH);
    void *first = fetch(&dqkv.g), *second = fetch(&dqkv2.g);
    bool same = !memcmp(first, second, tr_tensor_bytes(&dqkv.g));
    bool deterministic = !strncmp(tr_attn_cudnn_backward_kind(direct, dt, B, T, NH, HS), "deterministic", 13);
    n_checked++;
    if (deterministic && !same) {
        n_failed++;
        printf("FAIL %s backward: a deterministic plan gave other bits the second time\n", name);
    } else {
        printf("ok   %s backward twice: %s\n", name, same ? "the same bits" : "other bits (dQ accumulator)");
    }
    test_backward_variant(direct, name, "the dQ accumulator", version_number, true, &dqkv, &dout, &qkv, &out, &att_g,
                          dt, B, T, NH, HS);
    if (T % 128 != 0) {
        test_backward_variant(direct, name, "as for cuDNN 9.15.0 (padding mask)", 91500, false, &dqkv, &dout, &qkv,
                              &out, &att_g, dt, B, T, NH, HS);
        test_backward_variant(direct, name, "as for cuDNN 9.15.0, the dQ accumulator", 91500, true, &dqkv, &dout,
                              &qkv, &out, &att_g, dt, B, T, NH, HS);
    }
    free(first), free(second), free(lse), free(lse_f), free(att_c.data), free(scr_c.data);
    cudaFree(att_g.data);
    drop(&qkv), drop(&out), drop(&dout), drop(&dqkv), drop(&dqkv2);
}

/* cuDNN's description of this GPU, for deviceless plans elsewhere. */
static void write_deviceprop(tr_attn_cudnn *direct)
{
    const char *dir = getenv("OUT");
    if (!dir)
        return;
    char *json = tr_attn_cudnn_deviceprop_json(direct), path[4096];
    if (!json) {
        printf("note: no device description: %s\n", tr_error_last());
        return;
    }
    snprintf(path, sizeof path, "%s/cudnn_deviceprop.json", dir);
    FILE *f = fopen(path, "w");
    if (f && fputs(json, f) >= 0 && fclose(f) == 0)
        printf("wrote %s\n", path);
    else
        printf("note: could not write %s\n", path);
    free(json);
}

int main(void)
{
    int n_devices = 0;
    if (cudaGetDeviceCount(&n_devices) != cudaSuccess || n_devices == 0) {
        printf("SKIP: no CUDA device (%s)\n", cudaGetErrorString(cudaGetLastError()));
        return 77;
    }
    tr_cuda_options opt = {.device = 0, .attention = TR_CUDA_ATTENTION_CUDNN};
    if (tr_backend_cuda_new(&gpu, &opt) < 0) {
        const char *why = tr_error_last();
        bool no_cudnn = strstr(why, "does not load") || strstr(why, "or newer is needed");
        printf("%s: %s\n", no_cudnn ? "SKIP" : "FAIL", why);
        return no_cudnn ? 77 : 1;
    }
    cpu = tr_backend_cpu(0);
    printf("device: %s\n", tr_backend_cuda_describe(gpu));
    tr_attn_cudnn *direct; /* the API itself: which backward plan cuDNN chose, the device's description */
    if (tr_attn_cudnn_new(&direct, NULL) < 0) {
        printf("FAIL cuDNN: %s\n", tr_error_last());
        return 1;
    }
    unsigned major = 0, minor = 0, patch = 0;
    sscanf(tr_attn_cudnn_version(direct), "%u.%u.%u", &major, &minor, &patch);
    version_number = major * 10000 + minor * 100 + patch;
    write_deviceprop(direct);
    static const int shapes[][4] = {{2, 67, 2, 64}, {1, 200, 3, 128}, {3, 128, 4, 32}, {2, 256, 12, 64},
                                    {1, 1024, 2, 64}};
    static const tr_dtype dts[] = {TR_BF16, TR_F16};
    for (size_t d = 0; d < 2; d++)
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
            const int *s = shapes[i];
            size_t ws;
            if (tr_attn_cudnn_prepare(direct, dts[d], s[0], s[1], s[2], s[3], &ws) < 0)
                printf("note: %s\n", tr_error_last()); /* the backend's own attempt below says it as a failure */
            test_shape(direct, dts[d], s[0], s[1], s[2], s[3]);
        }
    tr_attn_cudnn_free(direct);
    tr_backend_cuda_free(gpu);
    printf("%d of %d checks failed\n", n_failed, n_checked);
    return n_failed ? 1 : 0;
}
