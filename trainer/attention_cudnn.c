/* attention_cudnn.c: causal self-attention on cuDNN's fused flash attention
 * through the cuDNN 9 graph (backend) API, in C. cuDNN has no "attention"
 * call in that API: a caller builds the operation graph that attention is
 * (Q K^T, scale, causal mask, softmax with its statistics, P V; the backward
 * the matching pattern) out of matmul, pointwise, reduction and reshape
 * operations, and the engine heuristics recognize the pattern and return
 * fused flash-attention engines. The graphs here are the ones
 * cudnn-frontend's SDPA nodes expand to (scaled_dot_product_flash_attention.h,
 * its "composite" path, used before cuDNN 9.21 and still accepted after),
 * with the same virtual-tensor types and layouts, since the pattern matcher
 * is strict about them; the two workarounds the frontend applies for old
 * cuDNN versions are applied under the same conditions, but for one part:
 * the backward's padding mask is not applied a second time before 9.10
 * (see build_backward).
 *
 * libcudnn.so.9 is dlopened on first use. Plans are built once per
 * direction, dtype and shape (descriptors, heuristics mode A, the first
 * engine configuration that finalizes) and kept with every descriptor they
 * were made of. Workspace: the caller's, sized by tr_attn_cudnn_prepare;
 * the backward's two fp32 tensors that live in it (the per-row dO.O sums and
 * the dQ accumulator) come after cuDNN's own part.
 * Not here: fp32 (no fused kernel), dropout, bias, other masks, GQA. */
#include "config.h"

#include "attention_cudnn.h"

#include "error.h"

#include <cudnn.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the library, loaded once ---- */

#define CUDNN_FUNCTIONS(X)                                                                                       \
    X(cudnnGetVersion) X(cudnnGetErrorString) X(cudnnGetLastErrorString) X(cudnnCreate) X(cudnnDestroy)        \
    X(cudnnSetStream) X(cudnnBackendCreateDescriptor) X(cudnnBackendDestroyDescriptor)                          \
    X(cudnnBackendSetAttribute) X(cudnnBackendGetAttribute) X(cudnnBackendFinalize) X(cudnnBackendExecute)

static struct {
    void *lib;
#define FIELD(f) __typeof__(f) *f;
    CUDNN_FUNCTIONS(FIELD)
#undef FIELD
} api;

static int load_api(void)
{
    if (api.lib)
        return TR_OK;
    static const char *const paths[] = {"libcudnn.so.9", GT_CUDA_LIBDIR "/libcudnn.so.9"};
    char why[512] = "";
    void *lib = NULL;
    for (size_t i = 0; i < sizeof paths / sizeof *paths && !lib; i++) {
        lib = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char *e = dlerror();
            snprintf(why + strlen(why), sizeof why - strlen(why), "%s%s", *why ? "; " : "", e ? e : paths[i]);
        }
    }
    if (!lib)
        return tr_error_set(TR_EINVAL, "cuDNN: libcudnn.so.9 does not load (%s); install cuDNN 9 or put its "
                                       "library directory on LD_LIBRARY_PATH",
                            why);
#define LOAD(f)                                                                                                  \
    {                                                                                                            \
        void *sym = dlsym(lib, #f);                                                                              \
        if (!sym) {                                                                                              \
            dlclose(lib);                                                                                        \
            return tr_error_set(TR_EINVAL, "cuDNN: the loaded libcudnn.so.9 has no %s (cuDNN 9 is needed)", #f); \
        }                                                                                                        \
        memcpy(&api.f, &sym, sizeof sym);                                                                        \
    }
    CUDNN_FUNCTIONS(LOAD)
#undef LOAD
    api.lib = lib;
    return TR_OK;
}

/* "CUDNN_STATUS_BAD_PARAM: <cuDNN's reason>" for the last failed call. */
static int cudnn_error(cudnnStatus_t st, const char *call, const char *what)
{
    char reason[512] = "";
    api.cudnnGetLastErrorString(reason, sizeof reason);
    return tr_error_set(TR_EINVAL, "cuDNN %s (%s): %s%s%s", call, what, api.cudnnGetErrorString(st),
                        *reason ? ": " : "", reason);
}

/* ---- plans ---- */

enum { FORWARD, BACKWARD };
enum { MAX_DESCS = 256, MAX_OPS = 64, MAX_SCALARS = 8, MAX_CONFIGS = 64 };
/* the graph's non-virtual tensors, as the variant pack names them */
enum { UID_Q = 1, UID_K, UID_V, UID_O, UID_STATS, UID_DO, UID_DQ, UID_DK, UID_DV, UID_SUM, UID_DQ_ACCUM,
       UID_SEQ_Q, UID_SEQ_KV, UID_FIRST_FREE = 100 };

typedef struct plan_key {
    int dir, dt, B, T, NH, HS;
} plan_key;

typedef struct plan {
    plan_key key;
    int status;       /* TR_OK, or why this shape has no plan (asked once) */
    char why[512];
    cudnnBackendDescriptor_t exec;
    cudnnBackendDescriptor_t descs[MAX_DESCS]; /* everything the plan was made of, freed with it */
    int n_descs;
    cudnnBackendDescriptor_t ops[MAX_OPS];
    int n_ops;
    size_t cudnn_bytes;            /* cuDNN's workspace */
    size_t sum_at, dq_at, bytes;   /* the backward's tensors in the workspace, and its whole size */
    bool dq_accum;                 /* backward: dQ accumulated in fp32 (else the dP-workspace engines) */
    bool padding;                  /* backward: the padding-mask workaround of cuDNN <= 9.15 */
    int32_t *seq_lens;             /* device: B query lengths, then at seq_kv_at B key lengths (all T) */
    float scalars[MAX_SCALARS];    /* the graph's by-value scalars, passed by host pointer */
    int64_t scalar_uids[MAX_SCALARS];
    int n_scalars;
} plan;

struct tr_attn_cudnn {
    cudnnHandle_t handle;                /* NULL when deviceless */
    cudnnBackendDescriptor_t deviceprop; /* deviceless: the device plans are built for */
    size_t version;
    size_t graph_version; /* whose workarounds the graphs get: version's, or a test's */
    bool dq_accum_only;   /* a test's: the backward with the dQ accumulator, not the deterministic one first */
    char version_text[24];
    plan **plans;
    int n_plans, cap_plans;
};

static size_t align256(size_t n) { return (n + 255) / 256 * 256; }

/* Where the key lengths start in seq_lens, in int32s: past the B query
 * lengths, rounded up to 16 bytes, the alignment the tensors declare and
 * execute() checks (right after them, B = 1, 2 or 3 mod 4 was refused). */
static size_t seq_kv_at(int64_t B) { return (size_t)(B + 3) / 4 * 4; }

static void plan_free(plan *p)
{
    if (!p)
        return;
    for (int i = p->n_descs - 1; i >= 0; i--)
        api.cudnnBackendDestroyDescriptor(p->descs[i]);
    if (p->seq_lens)
        cudaFree(p->seq_lens);
    free(p);
}

/* ---- building a graph: each step checks the last, the first error stays ---- */

typedef struct builder {
    tr_attn_cudnn *a;
    plan *p;
    int rc;
    int64_t next_uid;
} builder;

typedef struct tens {
    cudnnBackendDescriptor_t d;
    int64_t uid;
} tens;

#define D4(a, b, c, d) ((const int64_t[4]){(a), (b), (c), (d)})
enum { VIRTUAL = 1, BY_VALUE = 2 };

static bool ok(builder *b, cudnnStatus_t st, const char *call, const char *what)
{
    if (b->rc < 0)
        return false;
    if (st != CUDNN_STATUS_SUCCESS)
        b->rc = cudnn_error(st, call, what);
    return b->rc == TR_OK;
}

static cudnnBackendDescriptor_t make(builder *b, cudnnBackendDescriptorType_t type, const char *what)
{
    cudnnBackendDescriptor_t d = NULL;
    if (b->rc < 0)
        return NULL;
    if (b->p->n_descs == MAX_DESCS) {
        b->rc = tr_error_set(TR_EINVAL, "cuDNN attention: more than %d descriptors at %s", MAX_DESCS, what);
        return NULL;
    }
    if (!ok(b, api.cudnnBackendCreateDescriptor(type, &d), "cudnnBackendCreateDescriptor", what))
        return NULL;
    b->p->descs[b->p->n_descs++] = d;
    return d;
}

static void set(builder *b, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                cudnnBackendAttributeType_t type, int64_t n, const void *v, const char *what)
{
    if (b->rc < 0)
        return;
    cudnnStatus_t st = api.cudnnBackendSetAttribute(d, name, type, n, v);
    if (st != CUDNN_STATUS_SUCCESS) {
        char w[160];
        snprintf(w, sizeof w, "%s, attribute %d", what, (int)name);
        ok(b, st, "cudnnBackendSetAttribute", w);
    }
}

static void finalize(builder *b, cudnnBackendDescriptor_t d, const char *what)
{
    if (b->rc == TR_OK)
        ok(b, api.cudnnBackendFinalize(d), "cudnnBackendFinalize", what);
}

static tens tensor(builder *b, const char *name, int64_t uid, cudnnDataType_t dt, const int64_t *dim,
                   const int64_t *stride, int flags)
{
    tens t = {make(b, CUDNN_BACKEND_TENSOR_DESCRIPTOR, name), uid ? uid : b->next_uid++};
    bool is_virtual = flags & VIRTUAL, by_value = flags & BY_VALUE;
    int64_t alignment = 16; /* cudnn-frontend's default; the backend checks the pointers */
    set(b, t.d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt, name);
    set(b, t.d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dim, name);
    set(b, t.d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, stride, name);
    set(b, t.d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &t.uid, name);
    set(b, t.d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, name);
    set(b, t.d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, name);
    if (by_value)
        set(b, t.d, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value, name);
    finalize(b, t.d, name);
    return t;
}

static tens virt(builder *b, const char *name, cudnnDataType_t dt, const int64_t *dim, const int64_t *stride)
{
    return tensor(b, name, 0, dt, dim, stride, VIRTUAL);
}

/* A float the graph reads by value (a fused constant); its host copy is
 * passed with every execution. */
static tens scalar(builder *b, const char *name, float value)
{
    plan *p = b->p;
    if (b->rc == TR_OK && p->n_scalars == MAX_SCALARS)
        b->rc = tr_error_set(TR_EINVAL, "cuDNN attention: more than %d scalars at %s", MAX_SCALARS, name);
    tens t = tensor(b, name, 0, CUDNN_DATA_FLOAT, D4(1, 1, 1, 1), D4(1, 1, 1, 1), BY_VALUE);
    if (b->rc == TR_OK) {
        p->scalars[p->n_scalars] = value;
        p->scalar_uids[p->n_scalars++] = t.uid;
    }
    return t;
}

static void add_op(builder *b, cudnnBackendDescriptor_t op, const char *what)
{
    if (b->rc < 0)
        return;
    if (b->p->n_ops == MAX_OPS) {
        b->rc = tr_error_set(TR_EINVAL, "cuDNN attention: more than %d operations at %s", MAX_OPS, what);
        return;
    }
    b->p->ops[b->p->n_ops++] = op;
}

/* y = mode(x, in_b, in_t): in_b the second operand, in_t the third
 * (BINARY_SELECT's condition: y = in_t ? x : in_b). */
static void pointwise(builder *b, const char *name, cudnnPointwiseMode_t mode, cudnnDataType_t prec, int64_t axis,
                      tens x, const tens *in_b, const tens *in_t, tens y)
{
    cudnnBackendDescriptor_t pw = make(b, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, name);
    set(b, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, name);
    set(b, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec, name);
    if (axis >= 0)
        set(b, pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, name);
    finalize(b, pw, name);
    cudnnBackendDescriptor_t op = make(b, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, name);
    set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw, name);
    set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x.d, name);
    if (in_b)
        set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &in_b->d, name);
    if (in_t)
        set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &in_t->d, name);
    set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y.d, name);
    finalize(b, op, name);
    add_op(b, op, name);
}

/* c = a b over the last two dimensions; m, n, k: per-batch overrides of
 * the GEMM's sizes (the padding workaround's sequence lengths) or NULL. */
static void matmul(builder *b, const char *name, tens x, tens y, tens c, const tens *m, const tens *n, const tens *k)
{
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    double padding = 0.0;
    cudnnBackendDescriptor_t mm = make(b, CUDNN_BACKEND_MATMUL_DESCRIPTOR, name);
    set(b, mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, name);
    set(b, mm, CUDNN_ATTR_MATMUL_PADDING_VALUE, CUDNN_TYPE_DOUBLE, 1, &padding, name);
    finalize(b, mm, name);
    cudnnBackendDescriptor_t op = make(b, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, name);
    set(b, op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x.d, name);
    set(b, op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y.d, name);
    set(b, op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c.d, name);
    set(b, op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm, name);
    if (m)
        set(b, op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &m->d, name);
    if (n)
        set(b, op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n->d, name);
    if (k)
        set(b, op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &k->d, name);
    finalize(b, op, name);
    add_op(b, op, name);
}

/* y = x reduced (max or sum) over the dimensions where y has size 1. */
static void reduction(builder *b, const char *name, cudnnReduceTensorOp_t how, tens x, tens y)
{
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t r = make(b, CUDNN_BACKEND_REDUCTION_DESCRIPTOR, name);
    set(b, r, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &how, name);
    set(b, r, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, name);
    finalize(b, r, name);
    cudnnBackendDescriptor_t op = make(b, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, name);
    set(b, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x.d, name);
    set(b, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y.d, name);
    set(b, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &r, name);
    finalize(b, op, name);
    add_op(b, op, name);
}

/* y = x seen with y's dimensions and strides (a transpose, for cuDNN) */
static void reshape(builder *b, const char *name, tens x, tens y)
{
    cudnnBackendDescriptor_t op = make(b, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, name);
    set(b, op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x.d, name);
    set(b, op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y.d, name);
    finalize(b, op, name);
    add_op(b, op, name);
}

/* ---- the attention graphs ---- */

typedef struct shape {
    int64_t B, H, T, D;
    const int64_t *ss, *ss_stride, *s1, *s1_stride; /* (B,H,T,T) scores and (B,H,T,1) row values, packed */
} shape;

/* Scores above the diagonal become the lowest float: row >= col is kept. */
static tens causal_mask(builder *b, tens x, const shape *s)
{
    tens row = virt(b, "causal row index", CUDNN_DATA_INT32, s->ss, s->ss_stride);
    pointwise(b, "causal row index", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, 2, x, NULL, NULL, row);
    tens col = virt(b, "causal column index", CUDNN_DATA_INT32, s->ss, s->ss_stride);
    pointwise(b, "causal column index", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, 3, x, NULL, NULL, col);
    tens keep = virt(b, "causal row >= column", CUDNN_DATA_BOOLEAN, s->ss, s->ss_stride);
    pointwise(b, "causal row >= column", CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, -1, row, &col, NULL, keep);
    tens lowest = scalar(b, "causal masked value", -FLT_MAX);
    tens y = virt(b, "causal scores", CUDNN_DATA_FLOAT, s->ss, s->ss_stride);
    pointwise(b, "causal select", CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, -1, x, &lowest, &keep, y);
    return y;
}

/* The workaround's padding mask: rows and columns beyond the (full) sequence
 * lengths are masked, which changes nothing but the engines chosen. */
static tens padding_mask(builder *b, tens x, tens seq_q, tens seq_kv, float masked, const shape *s)
{
    tens row = virt(b, "padding row index", CUDNN_DATA_INT32, s->ss, s->ss_stride);
    pointwise(b, "padding row index", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, 2, x, NULL, NULL, row);
    tens col = virt(b, "padding column index", CUDNN_DATA_INT32, s->ss, s->ss_stride);
    pointwise(b, "padding column index", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, 3, x, NULL, NULL, col);
    tens row_in = virt(b, "padding row < seq_q", CUDNN_DATA_BOOLEAN, s->ss, s->ss_stride);
    pointwise(b, "padding row < seq_q", CUDNN_POINTWISE_CMP_LT, CUDNN_DATA_BOOLEAN, -1, row, &seq_q, NULL, row_in);
    tens col_in = virt(b, "padding col < seq_kv", CUDNN_DATA_BOOLEAN, s->ss, s->ss_stride);
    pointwise(b, "padding col < seq_kv", CUDNN_POINTWISE_CMP_LT, CUDNN_DATA_BOOLEAN, -1, col, &seq_kv, NULL, col_in);
    tens keep = virt(b, "padding keep", CUDNN_DATA_BOOLEAN, s->ss, s->ss_stride);
    pointwise(b, "padding and", CUDNN_POINTWISE_LOGICAL_AND, CUDNN_DATA_BOOLEAN, -1, row_in, &col_in, NULL, keep);
    tens value = scalar(b, "padding masked value", masked);
    tens y = virt(b, "padded scores", CUDNN_DATA_FLOAT, s->ss, s->ss_stride);
    pointwise(b, "padding select", CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, -1, x, &value, &keep, y);
    return y;
}

/* O = softmax(mask(Q K^T * scale)) V, stats = log-sum-exp of each row. */
static void build_forward(builder *b, cudnnDataType_t io, const shape *s)
{
    int64_t B = s->B, H = s->H, T = s->T, D = s->D, C = H * D, C3 = 3 * C;
    const cudnnDataType_t F = CUDNN_DATA_FLOAT;
    tens q = tensor(b, "Q", UID_Q, io, D4(B, H, T, D), D4(T * C3, D, C3, 1), 0);
    tens kt = tensor(b, "K^T", UID_K, io, D4(B, H, D, T), D4(T * C3, D, 1, C3), 0);
    tens v = tensor(b, "V", UID_V, io, D4(B, H, T, D), D4(T * C3, D, C3, 1), 0);
    tens o = tensor(b, "O", UID_O, io, D4(B, H, T, D), D4(T * C, D, C, 1), 0);
    tens stats = tensor(b, "stats", UID_STATS, F, s->s1, s->s1_stride, 0);
    tens scale = scalar(b, "attention scale", 1.0f / sqrtf((float)D));

    tens scores = virt(b, "Q K^T", F, s->ss, s->ss_stride);
    matmul(b, "Q K^T", q, kt, scores, NULL, NULL, NULL);
    tens scaled = virt(b, "scaled scores", F, s->ss, s->ss_stride);
    pointwise(b, "scale", CUDNN_POINTWISE_MUL, F, -1, scores, &scale, NULL, scaled);
    tens masked = causal_mask(b, scaled, s);
    /* softmax with its statistics, as four ops and two reductions */
    tens max = virt(b, "row max", F, s->s1, s->s1_stride);
    reduction(b, "row max", CUDNN_REDUCE_TENSOR_MAX, masked, max);
    tens centered = virt(b, "scores - max", F, s->ss, s->ss_stride);
    pointwise(b, "scores - max", CUDNN_POINTWISE_SUB, F, -1, masked, &max, NULL, centered);
    tens e = virt(b, "exp", F, s->ss, s->ss_stride);
    pointwise(b, "exp", CUDNN_POINTWISE_EXP, F, -1, centered, NULL, NULL, e);
    tens sum = virt(b, "row sum", F, s->s1, s->s1_stride);
    reduction(b, "row sum", CUDNN_REDUCE_TENSOR_ADD, e, sum);
    tens log_sum = virt(b, "log row sum", F, s->s1, s->s1_stride);
    pointwise(b, "log row sum", CUDNN_POINTWISE_LOG, F, -1, sum, NULL, NULL, log_sum);
    pointwise(b, "stats", CUDNN_POINTWISE_ADD, F, -1, max, &log_sum, NULL, stats);
    tens p = virt(b, "P", io, s->ss, s->ss_stride); /* P V's A operand in the I/O type, as cuDNN requires */
    pointwise(b, "softmax", CUDNN_POINTWISE_DIV, F, -1, e, &sum, NULL, p);
    matmul(b, "P V", p, v, o, NULL, NULL, NULL);
}

/* dQ, dK, dV from dO, O and the stats: P = exp(S - stats) recomputed,
 * dV = P^T dO, dS = P (dO V^T - rowsum(dO O)) * scale, dK = dS^T Q, dQ = dS K. */
static void build_backward(builder *b, cudnnDataType_t io, const shape *s, float masked_value)
{
    plan *pl = b->p;
    int64_t B = s->B, H = s->H, T = s->T, D = s->D, C = H * D, C3 = 3 * C;
    const cudnnDataType_t F = CUDNN_DATA_FLOAT;
    const int64_t *qkv_dim = D4(B, H, T, D), *qkv_stride = D4(T * C3, D, C3, 1);
    const int64_t *t_dim = D4(B, H, D, T), *t_stride = D4(T * C3, D, 1, C3);
    const int64_t *o_stride = D4(T * C, D, C, 1), *ss_t_stride = D4(H * T * T, T * T, 1, T);
    tens q = tensor(b, "Q", UID_Q, io, qkv_dim, qkv_stride, 0);
    tens kt = tensor(b, "K^T", UID_K, io, t_dim, t_stride, 0);
    tens vt = tensor(b, "V^T", UID_V, io, t_dim, t_stride, 0);
    tens o = tensor(b, "O", UID_O, io, qkv_dim, o_stride, 0);
    tens d_o = tensor(b, "dO", UID_DO, io, qkv_dim, o_stride, 0);
    tens stats = tensor(b, "stats", UID_STATS, F, s->s1, s->s1_stride, 0);
    tens dq = tensor(b, "dQ", UID_DQ, io, qkv_dim, qkv_stride, 0);
    tens dk = tensor(b, "dK", UID_DK, io, qkv_dim, qkv_stride, 0);
    tens dv = tensor(b, "dV", UID_DV, io, qkv_dim, qkv_stride, 0);
    tens scale = scalar(b, "attention scale", 1.0f / sqrtf((float)D));
    tens one = scalar(b, "one", 1.0f);
    tens seq_q = {0}, seq_kv = {0};
    const tens *over_q = NULL, *over_kv = NULL;
    if (pl->padding) {
        seq_q = tensor(b, "seq_len_q", UID_SEQ_Q, CUDNN_DATA_INT32, D4(B, 1, 1, 1), D4(1, 1, 1, 1), 0);
        seq_kv = tensor(b, "seq_len_kv", UID_SEQ_KV, CUDNN_DATA_INT32, D4(B, 1, 1, 1), D4(1, 1, 1, 1), 0);
        over_q = &seq_q;
        over_kv = &seq_kv;
    }

    /* rowsum(dO * O): the softmax backward's correction, kept in the workspace */
    tens prod = virt(b, "dO * O", F, qkv_dim, D4(H * T * D, T * D, H * D, 1));
    pointwise(b, "dO * O", CUDNN_POINTWISE_MUL, F, -1, d_o, &o, NULL, prod);
    tens rowsum = virt(b, "rowsum(dO * O)", F, s->s1, s->s1_stride);
    reduction(b, "rowsum(dO * O)", CUDNN_REDUCE_TENSOR_ADD, prod, rowsum);
    tens softmax_sum = tensor(b, "softmax sum", UID_SUM, F, s->s1, s->s1_stride, 0);
    pointwise(b, "softmax sum", CUDNN_POINTWISE_MUL, F, -1, rowsum, &one, NULL, softmax_sum);

    /* P, recomputed from the stats */
    tens scores = virt(b, "Q K^T", F, s->ss, s->ss_stride);
    matmul(b, "Q K^T", q, kt, scores, over_q, over_kv, NULL);
    tens scaled = virt(b, "scaled scores", F, s->ss, s->ss_stride);
    pointwise(b, "scale", CUDNN_POINTWISE_MUL, F, -1, scores, &scale, NULL, scaled);
    tens centered = virt(b, "scores - stats", F, s->ss, s->ss_stride);
    pointwise(b, "scores - stats", CUDNN_POINTWISE_SUB, F, -1, scaled, &stats, NULL, centered);
    /* The frontend masks a second time for cuDNN 9.0 to 9.9, for rows past a sequence length; cuDNN 9.9.0's
     * heuristics crash on that graph (a segmentation fault, as 9.19's do), and with every length full no row
     * is past one: the mask changes nothing but the engines chosen, and once is what steers them. */
    if (pl->padding)
        centered = padding_mask(b, centered, seq_q, seq_kv, masked_value, s);
    tens masked = causal_mask(b, centered, s);
    tens p = virt(b, "P", F, s->ss, s->ss_stride);
    pointwise(b, "exp", CUDNN_POINTWISE_EXP, F, -1, masked, NULL, NULL, p);

    /* dV = P^T dO */
    tens pt = virt(b, "P^T", io, s->ss, ss_t_stride);
    reshape(b, "P^T", p, pt);
    matmul(b, "P^T dO", pt, d_o, dv, over_kv, NULL, over_q);

    /* dS = P (dO V^T - softmax sum) * scale */
    tens dp = virt(b, "dO V^T", F, s->ss, s->ss_stride);
    matmul(b, "dO V^T", d_o, vt, dp, over_q, over_kv, NULL);
    tens dp_c = virt(b, "dP - softmax sum", F, s->ss, s->ss_stride);
    pointwise(b, "dP - softmax sum", CUDNN_POINTWISE_SUB, F, -1, dp, &softmax_sum, NULL, dp_c);
    tens dp_p = virt(b, "(dP - sum) * P", F, s->ss, s->ss_stride);
    pointwise(b, "(dP - sum) * P", CUDNN_POINTWISE_MUL, F, -1, dp_c, &p, NULL, dp_p);
    tens ds = virt(b, "dS", F, s->ss, s->ss_stride);
    pointwise(b, "dS scale", CUDNN_POINTWISE_MUL, F, -1, dp_p, &scale, NULL, ds);

    /* dK = dS^T Q */
    tens dst = virt(b, "dS^T", io, s->ss, ss_t_stride);
    reshape(b, "dS^T", ds, dst);
    matmul(b, "dS^T Q", dst, q, dk, over_kv, NULL, over_q);

    /* dQ = dS K: straight into dQ (deterministic; dP in cuDNN's workspace) or through an fp32 accumulator */
    tens k = virt(b, "K", F, qkv_dim, qkv_stride);
    reshape(b, "K", kt, k);
    if (pl->dq_accum) {
        tens acc = tensor(b, "dQ accumulator", UID_DQ_ACCUM, F, qkv_dim, D4(H * T * D, T * D, D, 1), 0);
        matmul(b, "dS K", ds, k, acc, over_q, NULL, over_kv);
        pointwise(b, "dQ", CUDNN_POINTWISE_IDENTITY, F, -1, acc, NULL, NULL, dq);
    } else {
        matmul(b, "dS K", ds, k, dq, over_q, NULL, over_kv);
    }
}

/* The operation graph, the heuristics' engine configurations, and the
 * first execution plan that finalizes. */
static void build_plan(builder *b)
{
    tr_attn_cudnn *a = b->a;
    plan *p = b->p;
    cudnnBackendDescriptor_t graph = make(b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
    set(b, graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, p->n_ops, p->ops, "operation graph");
    if (a->handle)
        set(b, graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &a->handle, "operation graph");
    finalize(b, graph, "operation graph");
    cudnnBackendDescriptor_t heur = make(b, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "engine heuristics");
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    set(b, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph, "heuristics");
    set(b, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "heuristics");
    if (a->deviceprop)
        set(b, heur, CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a->deviceprop, "heuristics");
    finalize(b, heur, "engine heuristics");
    if (b->rc == TR_OK && p->n_descs > MAX_DESCS - 2) /* room for the chosen configuration and its plan */
        b->rc = tr_error_set(TR_EINVAL, "cuDNN attention: more than %d descriptors", MAX_DESCS - 2);
    if (b->rc < 0)
        return;
    int64_t n_configs = 0;
    if (!ok(b, api.cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                             &n_configs, NULL),
            "cudnnBackendGetAttribute", "the number of engine configurations"))
        return;
    if (n_configs < 1) {
        b->rc = tr_error_set(TR_EINVAL, "cuDNN %s has no engine for this attention graph", a->version_text);
        return;
    }
    if (n_configs > MAX_CONFIGS)
        n_configs = MAX_CONFIGS;
    cudnnBackendDescriptor_t configs[MAX_CONFIGS];
    int64_t n_made = 0;
    for (; n_made < n_configs; n_made++)
        if (api.cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &configs[n_made]) !=
            CUDNN_STATUS_SUCCESS)
            break;
    int64_t n_got = 0;
    cudnnStatus_t st = api.cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, n_made, &n_got, configs);
    if (st != CUDNN_STATUS_SUCCESS)
        ok(b, st, "cudnnBackendGetAttribute", "engine configurations");
    /* the first configuration whose plan finalizes (the frontend's default policy) */
    char last[400] = "";
    int chosen = -1;
    for (int64_t i = 0; b->rc == TR_OK && i < n_got && chosen < 0; i++) {
        cudnnBackendDescriptor_t exec = NULL;
        if (api.cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &exec) != CUDNN_STATUS_SUCCESS)
            break;
        st = api.cudnnBackendSetAttribute(exec, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &configs[i]);
        if (st == CUDNN_STATUS_SUCCESS)
            st = a->handle ? api.cudnnBackendSetAttribute(exec, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
                                                          &a->handle)
                           : api.cudnnBackendSetAttribute(exec, CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP,
                                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a->deviceprop);
        if (st == CUDNN_STATUS_SUCCESS)
            st = api.cudnnBackendFinalize(exec);
        if (st == CUDNN_STATUS_SUCCESS) {
            chosen = (int)i;
            p->exec = exec;
        } else if (a->deviceprop && st == CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER) {
            /* deviceless: cuDNN accepted the configuration and compiled its kernel; loading it needs the device */
            chosen = (int)i;
            api.cudnnBackendDestroyDescriptor(exec);
        } else {
            char reason[300] = "";
            api.cudnnGetLastErrorString(reason, sizeof reason);
            snprintf(last, sizeof last, "%s%s%s", api.cudnnGetErrorString(st), *reason ? ": " : "", reason);
            api.cudnnBackendDestroyDescriptor(exec);
        }
    }
    for (int64_t i = 0; i < n_made; i++) { /* the chosen configuration lives as long as its plan */
        if (i == chosen)
            p->descs[p->n_descs++] = configs[i];
        else
            api.cudnnBackendDestroyDescriptor(configs[i]);
    }
    if (b->rc < 0)
        return;
    if (n_got == 0) {
        b->rc = tr_error_set(TR_EINVAL, "cuDNN %s supports none of the %lld engine configurations its heuristics "
                                        "propose for this attention graph (CUDNN_LOGLEVEL_DBG=2 "
                                        "CUDNN_LOGDEST_DBG=stderr shows why)",
                             a->version_text, (long long)n_configs);
        return;
    }
    if (chosen < 0) {
        b->rc = tr_error_set(TR_EINVAL, "cuDNN %s: none of the %lld engine configurations for this attention graph "
                                        "makes a plan (the last: %s)",
                             a->version_text, (long long)n_got, last);
        return;
    }
    if (!p->exec) /* deviceless */
        return;
    p->descs[p->n_descs++] = p->exec;
    int64_t ws = 0, n = 0;
    if (ok(b, api.cudnnBackendGetAttribute(p->exec, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                           &ws),
           "cudnnBackendGetAttribute", "the plan's workspace size"))
        p->cudnn_bytes = (size_t)(ws > 0 ? ws : 0);
}

static cudnnDataType_t io_type(tr_dtype dt) { return dt == TR_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF; }

/* One attempt at a plan of one kind; the plan's status says how it went. */
static plan *try_plan(tr_attn_cudnn *a, const plan_key *key, bool dq_accum)
{
    plan *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->key = *key;
    int64_t B = key->B, H = key->NH, T = key->T, D = key->HS;
    int64_t ss[4] = {B, H, T, T}, ss_stride[4] = {H * T * T, T * T, T, 1}, s1[4] = {B, H, T, 1},
            s1_stride[4] = {H * T, T, 1, 1};
    shape s = {B, H, T, D, ss, ss_stride, s1, s1_stride};
    builder b = {a, p, TR_OK, UID_FIRST_FREE};
    if (key->dir == FORWARD) {
        build_forward(&b, io_type((tr_dtype)key->dt), &s);
    } else {
        p->dq_accum = dq_accum;
        /* cudnn-frontend: before 9.15.1 the backward needs a padding mask when T is not a multiple of 128 */
        size_t v = a->graph_version;
        p->padding = v <= 91500 && T % 128 != 0;
        float masked = v < 91000 ? -FLT_MAX : -INFINITY;
        build_backward(&b, io_type((tr_dtype)key->dt), &s, masked);
    }
    build_plan(&b);
    if (b.rc == TR_OK) {
        size_t bytes = align256(p->cudnn_bytes);
        if (key->dir == BACKWARD) {
            p->sum_at = bytes;
            bytes += align256((size_t)B * H * T * sizeof(float));
            if (p->dq_accum) {
                p->dq_at = bytes;
                bytes += align256((size_t)B * H * T * D * sizeof(float));
            }
        }
        p->bytes = bytes;
    }
    if (b.rc == TR_OK && p->padding && a->handle) { /* the workaround's sequence lengths: all full */
        size_t n = 2 * seq_kv_at(B);
        int32_t *lens = malloc(n * sizeof *lens);
        cudaError_t err = cudaErrorMemoryAllocation;
        if (lens)
            err = cudaMalloc((void **)&p->seq_lens, n * sizeof *lens);
        for (size_t i = 0; lens && i < n; i++)
            lens[i] = (int32_t)T;
        if (err == cudaSuccess)
            err = cudaMemcpy(p->seq_lens, lens, n * sizeof *lens, cudaMemcpyHostToDevice);
        /* from pageable memory cudaMemcpy may return before the copy lands, and the compute stream does not
         * wait for the legacy stream it went on */
        if (err == cudaSuccess)
            err = cudaDeviceSynchronize();
        free(lens);
        if (err != cudaSuccess)
            b.rc = tr_error_set(TR_ENOMEM, "cuDNN attention: the sequence lengths of the padding workaround: %s",
                                cudaGetErrorString(err));
    }
    p->status = b.rc;
    if (b.rc < 0)
        snprintf(p->why, sizeof p->why, "%s", tr_error_last());
    return p;
}

/* The cached plan for key (built on first use), or NULL with a message. */
static plan *get_plan(tr_attn_cudnn *a, const plan_key *key)
{
    for (int i = 0; i < a->n_plans; i++)
        if (!memcmp(&a->plans[i]->key, key, sizeof *key)) {
            plan *p = a->plans[i];
            if (p->status < 0) {
                tr_error_set(p->status, "%s", p->why);
                return NULL;
            }
            return p;
        }
    if (a->n_plans == a->cap_plans) {
        int cap = a->cap_plans ? 2 * a->cap_plans : 8;
        plan **v = realloc(a->plans, cap * sizeof *v);
        if (!v) {
            tr_error_set(TR_ENOMEM, "out of host memory");
            return NULL;
        }
        a->plans = v;
        a->cap_plans = cap;
    }
    /* the backward: the deterministic engines (dQ = dS K written directly) if cuDNN has them for this shape,
     * else dQ accumulated in fp32 */
    plan *p = try_plan(a, key, a->dq_accum_only);
    if (p && p->status < 0 && key->dir == BACKWARD && !a->dq_accum_only) {
        char first[512];
        snprintf(first, sizeof first, "%s", p->why);
        plan_free(p);
        p = try_plan(a, key, true);
        if (p && p->status < 0) {
            char both[512];
            snprintf(both, sizeof both, "deterministic: %.200s; with a dQ accumulator: %.250s", first, p->why);
            snprintf(p->why, sizeof p->why, "%s", both);
        }
    }
    if (!p) {
        tr_error_set(TR_ENOMEM, "out of host memory");
        return NULL;
    }
    /* a failed plan keeps only its message */
    if (p->status < 0) {
        for (int i = p->n_descs - 1; i >= 0; i--)
            api.cudnnBackendDestroyDescriptor(p->descs[i]);
        p->n_descs = 0;
        p->exec = NULL;
    }
    a->plans[a->n_plans++] = p;
    if (p->status < 0) {
        tr_error_set(p->status, "%s", p->why);
        return NULL;
    }
    return p;
}

/* ---- the interface ---- */

int tr_attn_cudnn_new(tr_attn_cudnn **out, const char *deviceprop_json)
{
    *out = NULL;
    int rc = load_api();
    if (rc < 0)
        return rc;
    size_t version = api.cudnnGetVersion();
    if (version < 90000)
        return tr_error_set(TR_EINVAL, "cuDNN: the loaded library is version %zu; 9.0 or newer is needed", version);
    if (version == 91000 || version == 91001) /* cudnn-frontend refuses both directions there too */
        return tr_error_set(TR_EINVAL, "cuDNN: the loaded library is 9.10.%zu, whose fused attention has known bugs in "
                                       "bf16/fp16; 9.10.2 or newer is needed",
                            version % 100);
    tr_attn_cudnn *a = calloc(1, sizeof *a);
    if (!a)
        return tr_error_set(TR_ENOMEM, "out of host memory");
    a->version = a->graph_version = version;
    snprintf(a->version_text, sizeof a->version_text, "%zu.%zu.%zu", version / 10000, version / 100 % 100,
             version % 100);
    cudnnStatus_t st;
    if (deviceprop_json && version < 90800) {
        rc = tr_error_set(TR_EINVAL, "cuDNN %s: plans without a device need cuDNN 9.8 or newer", a->version_text);
        tr_attn_cudnn_free(a);
        return rc;
    } else if (deviceprop_json) {
        if ((st = api.cudnnBackendCreateDescriptor(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, &a->deviceprop)) !=
                CUDNN_STATUS_SUCCESS ||
            (st = api.cudnnBackendSetAttribute(a->deviceprop, CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION,
                                               CUDNN_TYPE_CHAR, (int64_t)strlen(deviceprop_json), deviceprop_json)) !=
                CUDNN_STATUS_SUCCESS ||
            (st = api.cudnnBackendFinalize(a->deviceprop)) != CUDNN_STATUS_SUCCESS) {
            rc = cudnn_error(st, "device properties", "from the JSON description");
            tr_attn_cudnn_free(a);
            return rc;
        }
    } else if ((st = api.cudnnCreate(&a->handle)) != CUDNN_STATUS_SUCCESS) {
        a->handle = NULL;
        rc = cudnn_error(st, "cudnnCreate", "a handle on the current device");
        tr_attn_cudnn_free(a);
        return rc;
    }
    *out = a;
    return TR_OK;
}

void tr_attn_cudnn_free(tr_attn_cudnn *a)
{
    if (!a)
        return;
    for (int i = 0; i < a->n_plans; i++)
        plan_free(a->plans[i]);
    free(a->plans);
    if (a->deviceprop)
        api.cudnnBackendDestroyDescriptor(a->deviceprop);
    if (a->handle)
        api.cudnnDestroy(a->handle);
    free(a);
}

const char *tr_attn_cudnn_version(const tr_attn_cudnn *a) { return a->version_text; }

void tr_attn_cudnn_test_graphs(tr_attn_cudnn *a, size_t version, bool dq_accumulator)
{
    int n = 0;
    for (int i = 0; i < a->n_plans; i++) {
        if (a->plans[i]->key.dir == BACKWARD)
            plan_free(a->plans[i]);
        else
            a->plans[n++] = a->plans[i];
    }
    a->n_plans = n;
    a->graph_version = version;
    a->dq_accum_only = dq_accumulator;
}

char *tr_attn_cudnn_deviceprop_json(tr_attn_cudnn *a)
{
    if (!a->handle) {
        tr_error_set(TR_EINVAL, "cuDNN: deviceless: no device to describe");
        return NULL;
    }
    cudnnBackendDescriptor_t d = NULL;
    char *json = NULL;
    int64_t n = 0, got = 0;
    cudnnStatus_t st;
    if ((st = api.cudnnBackendCreateDescriptor(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, &d)) != CUDNN_STATUS_SUCCESS ||
        (st = api.cudnnBackendSetAttribute(d, CUDNN_ATTR_DEVICEPROP_HANDLE, CUDNN_TYPE_HANDLE, 1, &a->handle)) !=
            CUDNN_STATUS_SUCCESS ||
        (st = api.cudnnBackendFinalize(d)) != CUDNN_STATUS_SUCCESS ||
        (st = api.cudnnBackendGetAttribute(d, CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, 0, &n,
                                           NULL)) != CUDNN_STATUS_SUCCESS) {
        cudnn_error(st, "device properties", "of the current device");
    } else if (!(json = calloc((size_t)n + 1, 1))) {
        tr_error_set(TR_ENOMEM, "out of host memory");
    } else if ((st = api.cudnnBackendGetAttribute(d, CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, n,
                                                  &got, json)) != CUDNN_STATUS_SUCCESS) {
        cudnn_error(st, "device properties", "as JSON");
        free(json);
        json = NULL;
    }
    if (d)
        api.cudnnBackendDestroyDescriptor(d);
    return json;
}

static int check_args(const char *what, tr_dtype dt, int B, int T, int NH, int HS)
{
    if (dt != TR_BF16 && dt != TR_F16)
        return tr_error_set(TR_EINVAL, "cuDNN attention (%s): activations in %s; cuDNN's fused attention takes BF16 "
                                       "or F16",
                            what, tr_dtype_name(dt));
    if (B < 1 || T < 1 || NH < 1 || HS < 8 || HS % 8 != 0)
        return tr_error_set(TR_EINVAL, "cuDNN attention (%s): batch %d, sequence %d, %d heads of %d: cuDNN needs a "
                                       "head size that is a multiple of 8",
                            what, B, T, NH, HS);
    if (T == 1) /* as cudnn-frontend: its backward has no sequence of one query and one key */
        return tr_error_set(TR_EINVAL, "cuDNN attention (%s): a sequence of 1: cuDNN's fused attention backward "
                                       "takes 2 or more",
                            what);
    return TR_OK;
}

int tr_attn_cudnn_prepare(tr_attn_cudnn *a, tr_dtype dt, int B, int T, int NH, int HS, size_t *workspace_bytes)
{
    *workspace_bytes = 0;
    int rc = check_args("prepare", dt, B, T, NH, HS);
    if (rc < 0)
        return rc;
    plan_key fk = {FORWARD, dt, B, T, NH, HS}, bk = {BACKWARD, dt, B, T, NH, HS};
    plan *f = get_plan(a, &fk), *b = f ? get_plan(a, &bk) : NULL;
    if (!f || !b) {
        char why[1024];
        snprintf(why, sizeof why, "%s", tr_error_last());
        return tr_error_set(TR_EINVAL, "%s attention for batch %d, sequence %d, %d heads of %d in %s: %s",
                            f ? "the backward" : "the forward", B, T, NH, HS, tr_dtype_name(dt), why);
    }
    *workspace_bytes = f->bytes > b->bytes ? f->bytes : b->bytes;
    return TR_OK;
}

const char *tr_attn_cudnn_backward_kind(tr_attn_cudnn *a, tr_dtype dt, int B, int T, int NH, int HS)
{
    plan_key key = {BACKWARD, dt, B, T, NH, HS};
    for (int i = 0; i < a->n_plans; i++)
        if (!memcmp(&a->plans[i]->key, &key, sizeof key) && a->plans[i]->status == TR_OK)
            return a->plans[i]->dq_accum ? "dQ accumulated in fp32 (not deterministic)"
                                         : "deterministic (dP in the workspace)";
    return "";
}

static bool aligned16(const void *p) { return (uintptr_t)p % 16 == 0; }

/* Binds the tensors (and the plan's scalars) and runs the plan on stream. */
static int execute(tr_attn_cudnn *a, plan *p, const char *what, int n, const int64_t *uids, void *const *ptrs,
                   void *workspace, cudaStream_t stream)
{
    int64_t all_uids[16 + MAX_SCALARS];
    void *all_ptrs[16 + MAX_SCALARS];
    for (int i = 0; i < n; i++) {
        if (!aligned16(ptrs[i]))
            return tr_error_set(TR_EINVAL, "cuDNN attention (%s): tensor %lld at %p is not 16-byte aligned", what,
                                (long long)uids[i], ptrs[i]);
        all_uids[i] = uids[i];
        all_ptrs[i] = ptrs[i];
    }
    for (int i = 0; i < p->n_scalars; i++) {
        all_uids[n + i] = p->scalar_uids[i];
        all_ptrs[n + i] = &p->scalars[i];
    }
    int64_t total = n + p->n_scalars;
    cudnnBackendDescriptor_t pack = NULL;
    cudnnStatus_t st;
    if ((st = api.cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack)) != CUDNN_STATUS_SUCCESS)
        return cudnn_error(st, "cudnnBackendCreateDescriptor", what);
    if ((st = api.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, total,
                                           all_uids)) != CUDNN_STATUS_SUCCESS ||
        (st = api.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, total,
                                           all_ptrs)) != CUDNN_STATUS_SUCCESS ||
        (st = api.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
                                           &workspace)) != CUDNN_STATUS_SUCCESS ||
        (st = api.cudnnBackendFinalize(pack)) != CUDNN_STATUS_SUCCESS ||
        (st = api.cudnnSetStream(a->handle, stream)) != CUDNN_STATUS_SUCCESS ||
        (st = api.cudnnBackendExecute(a->handle, p->exec, pack)) != CUDNN_STATUS_SUCCESS) {
        int rc = cudnn_error(st, "executing", what);
        api.cudnnBackendDestroyDescriptor(pack);
        return rc;
    }
    api.cudnnBackendDestroyDescriptor(pack);
    return TR_OK;
}

static int plan_for_run(plan **out, tr_attn_cudnn *a, int dir, tr_dtype dt, int B, int T, int NH, int HS,
                        void *workspace)
{
    const char *what = dir == FORWARD ? "forward" : "backward";
    if (!a->handle)
        return tr_error_set(TR_EINVAL, "cuDNN attention (%s): deviceless: plans only, no execution", what);
    int rc = check_args(what, dt, B, T, NH, HS);
    if (rc < 0)
        return rc;
    plan_key key = {dir, dt, B, T, NH, HS};
    if (!(*out = get_plan(a, &key)))
        return TR_EINVAL;
    if (!workspace && (*out)->bytes)
        return tr_error_set(TR_EINVAL, "cuDNN attention (%s): no workspace (it needs %zu bytes)", what, (*out)->bytes);
    return TR_OK;
}

int tr_attn_cudnn_forward(tr_attn_cudnn *a, void *out, float *stats, const void *qkv, tr_dtype dt, int B, int T,
                          int NH, int HS, void *workspace, cudaStream_t stream)
{
    plan *p;
    int rc = plan_for_run(&p, a, FORWARD, dt, B, T, NH, HS, workspace);
    if (rc < 0)
        return rc;
    size_t head = (size_t)NH * HS * 2; /* one of q, k, v per position, in bytes */
    const char *x = qkv;
    int64_t uids[] = {UID_Q, UID_K, UID_V, UID_O, UID_STATS};
    void *ptrs[] = {(void *)x, (void *)(x + head), (void *)(x + 2 * head), out, stats};
    return execute(a, p, "forward", 5, uids, ptrs, workspace, stream);
}

int tr_attn_cudnn_backward(tr_attn_cudnn *a, void *dqkv, const void *dout, const void *qkv, const void *out,
                           const float *stats, tr_dtype dt, int B, int T, int NH, int HS, void *workspace,
                           cudaStream_t stream)
{
    plan *p;
    int rc = plan_for_run(&p, a, BACKWARD, dt, B, T, NH, HS, workspace);
    if (rc < 0)
        return rc;
    size_t head = (size_t)NH * HS * 2;
    const char *x = qkv;
    char *dx = dqkv, *ws = workspace;
    int64_t uids[16] = {UID_Q, UID_K, UID_V, UID_O, UID_DO, UID_STATS, UID_DQ, UID_DK, UID_DV, UID_SUM};
    void *ptrs[16] = {(void *)x,   (void *)(x + head), (void *)(x + 2 * head), (void *)out,     (void *)dout,
                      (void *)stats, dx,                 dx + head,              dx + 2 * head, ws + p->sum_at};
    int n = 10;
    if (p->dq_accum) {
        uids[n] = UID_DQ_ACCUM;
        ptrs[n++] = ws + p->dq_at;
        if (a->version < 90600) { /* cudnn-frontend: before 9.6 the accumulator starts from zeros we write */
            cudaError_t err = cudaMemsetAsync(ws + p->dq_at, 0, (size_t)B * NH * T * HS * sizeof(float), stream);
            if (err != cudaSuccess)
                return tr_error_set(TR_EINVAL, "cuDNN attention (backward): clearing the dQ accumulator: %s",
                                    cudaGetErrorString(err));
        }
    }
    if (p->padding) {
        uids[n] = UID_SEQ_Q;
        ptrs[n++] = p->seq_lens;
        uids[n] = UID_SEQ_KV;
        ptrs[n++] = p->seq_lens + seq_kv_at(B);
    }
    return execute(a, p, "backward", n, uids, ptrs, workspace, stream);
}
