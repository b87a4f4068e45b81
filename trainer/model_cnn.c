/* model_cnn.c: the CNN presets of model_cnn.h, their forward and backward
 * through the backend's ops (one NVTX range per op), and their memory
 * through the caching allocator. */
#include "model_cnn.h"

#include "error.h"
#include "nvtx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const tr_cnn_presets[] = {"cnn-guide", "cnn-resnet", NULL};

tr_tensor tr_cnn_view(float *p, size_t n) { return (tr_tensor){p, TR_F32, TR_CPU, 1, {(int64_t)n}}; }

/* n elements of dtype dt at p, on the model's device. */
static tr_tensor view_as(const tr_cnn *m, void *p, size_t n, tr_dtype dt)
{
    return (tr_tensor){p, dt, m->be->device, 1, {(int64_t)n}};
}
static tr_tensor view(const tr_cnn *m, float *p, size_t n) { return view_as(m, p, n, TR_F32); }
/* An activation (or its gradient): the model's activation dtype. */
static tr_tensor act(const tr_cnn *m, void *p, size_t n) { return view_as(m, p, n, m->cfg.act); }
/* Layer l's weight as its op reads it: the low-precision copy under --amp. */
static tr_tensor weight(const tr_cnn *m, const tr_cnn_layer *l, size_t n)
{
    if (m->cfg.act == TR_F32)
        return view(m, m->params + l->w_off, n);
    return act(m, (char *)m->params_lp + l->w_off * tr_dtype_size(m->cfg.act), n);
}

/* ---- building the layer list ---- */

typedef struct builder {
    tr_cnn *m;
    int last;         /* the layer the next one reads by default */
    int C, H, W;      /* its output's shape */
} builder;

static int shape_of(const builder *b, int i, int *C, int *H, int *W)
{
    if (i < 0) {
        *C = b->m->cfg.C, *H = b->m->cfg.H, *W = b->m->cfg.W;
    } else {
        const tr_cnn_layer *l = &b->m->layers[i];
        *C = l->OC, *H = l->OH, *W = l->OW;
    }
    return i;
}

static int add(builder *b, tr_cnn_layer l)
{
    tr_cnn *m = b->m;
    shape_of(b, l.in, &l.C, &l.H, &l.W);
    switch (l.kind) {
    case TR_CNN_CONV:
        l.OH = (l.H + 2 * l.pad - l.K) / l.stride + 1;
        l.OW = (l.W + 2 * l.pad - l.K) / l.stride + 1;
        break;
    case TR_CNN_MAXPOOL:
    case TR_CNN_AVGPOOL:
        l.OC = l.C;
        l.OH = (l.H - l.K) / l.stride + 1;
        l.OW = (l.W - l.K) / l.stride + 1;
        break;
    case TR_CNN_LINEAR:
        l.OH = l.OW = 1;
        break;
    default:
        l.OC = l.C, l.OH = l.H, l.OW = l.W;
        break;
    }
    if (l.kind != TR_CNN_ADD)
        l.block_first = -1;
    m->layers[m->n_layers] = l;
    b->last = m->n_layers++;
    b->C = l.OC, b->H = l.OH, b->W = l.OW;
    return b->last;
}

static int conv(builder *b, int in, int OC, int K, int stride, int pad, bool bias)
{
    return add(b, (tr_cnn_layer){.kind = TR_CNN_CONV, .in = in, .OC = OC, .K = K, .stride = stride, .pad = pad,
                                 .bias = bias});
}
static int simple(builder *b, tr_cnn_kind kind) { return add(b, (tr_cnn_layer){.kind = kind, .in = b->last}); }
static int conv_bn(builder *b, int in, int OC, int K, int stride, int pad)
{
    conv(b, in, OC, K, stride, pad, b->m->cfg.bias_before_bn);
    return simple(b, TR_CNN_BN);
}

/* ResNet's basic block: two 3x3 conv-BN, the shortcut (a 1x1 conv-BN when
 * the shape changes), the sum, ReLU. With checkpoint_blocks the layers
 * before the sum are the block's inside, recomputed in the backward. */
static int basic_block(builder *b, int in, int OC, int stride)
{
    int C = in < 0 ? b->m->cfg.C : b->m->layers[in].OC;
    int first = b->m->n_layers;
    conv_bn(b, in, OC, 3, stride, 1);
    simple(b, TR_CNN_RELU);
    int main_ = conv_bn(b, b->last, OC, 3, 1, 1);
    int shortcut = in;
    if (stride != 1 || C != OC)
        shortcut = conv_bn(b, in, OC, 1, stride, 0);
    int sum = add(b, (tr_cnn_layer){.kind = TR_CNN_ADD, .in = main_, .in2 = shortcut, .block_first = -1});
    if (b->m->cfg.checkpoint_blocks) {
        for (int i = first; i < sum; i++)
            b->m->layers[i].in_block = true;
        b->m->layers[sum].block_first = first;
    }
    return simple(b, TR_CNN_RELU);
}

static int build(tr_cnn *m)
{
    builder b = {m, -1, m->cfg.C, m->cfg.H, m->cfg.W};
    if (!strcmp(m->cfg.name, "cnn-guide")) {
        /* PyTorch's examples/mnist Net */
        conv(&b, -1, 32, 3, 1, 0, true);
        simple(&b, TR_CNN_RELU);
        conv(&b, b.last, 64, 3, 1, 0, true);
        simple(&b, TR_CNN_RELU);
        add(&b, (tr_cnn_layer){.kind = TR_CNN_MAXPOOL, .in = b.last, .K = 2, .stride = 2});
        add(&b, (tr_cnn_layer){.kind = TR_CNN_DROPOUT, .in = b.last, .p = 0.25f});
        add(&b, (tr_cnn_layer){.kind = TR_CNN_LINEAR, .in = b.last, .OC = 128, .bias = true});
        simple(&b, TR_CNN_RELU);
        add(&b, (tr_cnn_layer){.kind = TR_CNN_DROPOUT, .in = b.last, .p = 0.5f});
        add(&b, (tr_cnn_layer){.kind = TR_CNN_LINEAR, .in = b.last, .OC = m->cfg.n_classes, .bias = true});
    } else if (!strcmp(m->cfg.name, "cnn-resnet")) {
        conv_bn(&b, -1, 16, 3, 1, 1);
        int x = simple(&b, TR_CNN_RELU);
        x = basic_block(&b, x, 16, 1);
        x = basic_block(&b, x, 32, 2);
        x = basic_block(&b, x, 64, 2);
        add(&b, (tr_cnn_layer){.kind = TR_CNN_AVGPOOL, .in = x, .K = b.H, .stride = 1}); /* global */
        add(&b, (tr_cnn_layer){.kind = TR_CNN_LINEAR, .in = b.last, .OC = m->cfg.n_classes, .bias = true});
    } else {
        return tr_error_set(TR_EINVAL, "--model %s: not a CNN preset (cnn-guide, cnn-resnet)", m->cfg.name);
    }
    if (m->cfg.checkpoint_blocks && strcmp(m->cfg.name, "cnn-resnet") != 0)
        return tr_error_set(TR_EINVAL, "--checkpoint blocks: --model %s has no residual blocks", m->cfg.name);
    return TR_OK;
}

/* How many later layers read layer i's output. */
static int readers(const tr_cnn *m, int i)
{
    int n = 0;
    for (int j = i + 1; j < m->n_layers; j++)
        n += (m->layers[j].in == i) + (m->layers[j].kind == TR_CNN_ADD && m->layers[j].in2 == i);
    return n;
}

/* The BN and ADD layers whose output only a ReLU right after reads, with the
 * backend's fused op for the pair (the two share the ReLU's buffer); a conv
 * so read stores the ReLU's output itself (the backward needs only that). */
static void fuse(tr_cnn *m)
{
    const tr_backend *be = m->be;
    for (int i = 0; i + 1 < m->n_layers; i++) {
        tr_cnn_layer *l = &m->layers[i], *next = &m->layers[i + 1];
        if (next->kind != TR_CNN_RELU || next->in != i || readers(m, i) != 1)
            continue;
        if ((l->kind == TR_CNN_BN && be->batchnorm_relu_forward && be->batchnorm_relu_backward) ||
            (l->kind == TR_CNN_ADD && be->residual_relu_forward && be->residual_relu_backward))
            l->relu_fused = next->relu_fused = true;
        else if (l->kind == TR_CNN_CONV && be->conv2d_relu_forward)
            l->relu_in_conv = next->relu_in_conv = true;
    }
}

/* Per-image regions start 16-byte aligned, so that the fp32 and int32 ones
 * among bf16 ones stay aligned for any batch. */
static size_t align16(size_t n) { return (n + 15) / 16 * 16; }

/* Offsets: weights first, then biases and BN's affine; activations per image, in bytes. */
static void lay_out(tr_cnn *m)
{
    size_t es = tr_dtype_size(m->cfg.act);
    size_t p = 0;
    for (int i = 0; i < m->n_layers; i++) {
        tr_cnn_layer *l = &m->layers[i];
        if (l->kind == TR_CNN_CONV) {
            l->w_off = p;
            p += (size_t)l->OC * l->C * l->K * l->K;
        } else if (l->kind == TR_CNN_LINEAR) {
            l->w_off = p;
            p += (size_t)l->OC * l->C * l->H * l->W;
        }
    }
    m->n_decay = p;
    size_t s = 0, a = 0, bn = 0, sa = 0, scratch = 0;
    if (m->cfg.act != TR_F32) { /* autocast's cast of the images, read by the first conv */
        m->img_off = 0;
        a = align16((size_t)m->cfg.C * m->cfg.H * m->cfg.W * es);
    }
    for (int i = 0; i < m->n_layers; i++) {
        tr_cnn_layer *l = &m->layers[i];
        if (l->kind == TR_CNN_BN) {
            l->w_off = p;
            p += (size_t)l->OC;
            l->rs_off = s;
            s += 2 * (size_t)l->OC;
            l->bn_off = bn;
            bn += 2 * (size_t)l->OC;
        }
        if (l->bias || l->kind == TR_CNN_BN) {
            l->b_off = p;
            p += (size_t)l->OC;
        }
        size_t n_out = (size_t)l->OC * l->OH * l->OW, out = align16(n_out * es);
        if (l->in_block) { /* in the scratch area, from its start for each block */
            if (i == 0 || !m->layers[i - 1].in_block)
                sa = 0;
            l->act_off = sa;
            if (!(l->relu_fused && l->kind != TR_CNN_RELU))
                sa += out;
            scratch = sa > scratch ? sa : scratch;
            continue; /* a block holds conv, BN and ReLU: no aux */
        }
        l->act_off = a;
        if (!(l->relu_fused && l->kind != TR_CNN_RELU)) /* a fused pair's first layer shares the ReLU's buffer */
            a += out;
        if (l->kind == TR_CNN_MAXPOOL || l->kind == TR_CNN_DROPOUT) { /* int32 indices, fp32 mask */
            l->aux_off = a;
            l->n_aux = n_out;
            a += align16(n_out * 4);
        }
        if (l->kind == TR_CNN_LINEAR && m->cfg.nhwc && l->H * l->W > 1) {
            l->aux_off = a;
            l->n_aux = (size_t)l->C * l->H * l->W;
            a += align16(l->n_aux * es);
        }
    }
    m->n_params = p;
    m->n_stats = s;
    m->act_bytes = a;
    m->scratch_bytes = scratch;
    m->bn_aux = bn;
}

int tr_cnn_new(tr_cnn **out, const tr_cnn_config *cfg, tr_backend *be, tr_alloc *alloc, uint64_t seed)
{
    *out = NULL;
    if (!be->conv2d_forward || !be->batchnorm_forward || !be->maxpool_forward || !be->relu_forward)
        return tr_error_set(TR_EINVAL, "--model %s: the %s backend has no convolution ops", cfg->name, be->name);
    if (cfg->nhwc && cfg->C != 1) /* one channel: the images are (B,H,W,C) as they are */
        return tr_error_set(TR_EINVAL, "--layout nhwc: images of %d channels are not implemented", cfg->C);
    if (cfg->nhwc && !be->cnn_transpose)
        return tr_error_set(TR_EINVAL, "--layout nhwc: the %s backend has no channels-last ops (use --layout nchw)",
                            be->name);
    if (cfg->act != TR_F32 && cfg->act != TR_BF16 && cfg->act != TR_F16)
        return tr_error_set(TR_EINVAL, "mixed precision takes bf16 or fp16, not %s", tr_dtype_name(cfg->act));
    if (cfg->act != TR_F32 && !be->cast)
        return tr_error_set(TR_EINVAL, "--amp: the %s backend has no cast op", be->name);
    tr_cnn *m = calloc(1, sizeof(*m));
    if (!m)
        return tr_error_set(TR_ENOMEM, "out of host memory");
    m->cfg = *cfg;
    m->be = be;
    m->alloc = alloc;
    m->rng.state = seed ^ 0xC0FFEEull;
    int rc = build(m);
    if (rc < 0)
        goto cleanup;
    fuse(m);
    lay_out(m);
    void *p = NULL, *g = NULL, *s = NULL, *lp = NULL;
    bool amp = cfg->act != TR_F32;
    if ((rc = tr_alloc_malloc(alloc, &p, m->n_params * sizeof(float), 0)) < 0 ||
        (rc = tr_alloc_malloc(alloc, &g, m->n_params * sizeof(float), 0)) < 0 ||
        (rc = tr_alloc_malloc(alloc, &s, m->n_stats * sizeof(float) + 4, 0)) < 0 ||
        (amp && (rc = tr_alloc_malloc(alloc, &lp, m->n_decay * tr_dtype_size(cfg->act), 0)) < 0))
        goto cleanup_mem;
    m->params = p, m->grads = g, m->stats = s, m->params_lp = lp;
    m->params_lp_stale = true;
    tr_alloc_name(alloc, p, "parameters");
    tr_alloc_name(alloc, g, "gradients");
    tr_alloc_name(alloc, s, "batchnorm running statistics");
    if (amp)
        tr_alloc_name(alloc, lp, cfg->act == TR_BF16 ? "weights (bf16 copy)" : "weights (fp16 copy)");
    /* the initial values on the host, then copied */
    float *hp = malloc(m->n_params * sizeof(float) + 4), *hs = malloc(m->n_stats * sizeof(float) + 4);
    if (!hp || !hs) {
        free(hp);
        free(hs);
        rc = tr_error_set(TR_ENOMEM, "out of host memory");
        goto cleanup_mem;
    }
    tr_rng r = {seed};
    for (int i = 0; i < m->n_layers; i++) {
        const tr_cnn_layer *l = &m->layers[i];
        if (l->kind == TR_CNN_BN) {
            for (int c = 0; c < l->OC; c++) {
                hp[l->w_off + c] = 1.0f;
                hp[l->b_off + c] = 0.0f;
                hs[l->rs_off + c] = 0.0f;
                hs[l->rs_off + l->OC + c] = 1.0f;
            }
        } else if (l->kind == TR_CNN_CONV || l->kind == TR_CNN_LINEAR) {
            size_t fan_in = l->kind == TR_CNN_CONV ? (size_t)l->C * l->K * l->K : (size_t)l->C * l->H * l->W;
            float bound = 1.0f / sqrtf((float)fan_in);
            for (size_t k = 0; k < (size_t)l->OC * fan_in; k++)
                hp[l->w_off + k] = (float)(tr_rng_uniform(&r) * 2.0 - 1.0) * bound;
            for (int c = 0; l->bias && c < l->OC; c++)
                hp[l->b_off + c] = (float)(tr_rng_uniform(&r) * 2.0 - 1.0) * bound;
        }
    }
    be->copy_h2d(be, m->params, hp, m->n_params * sizeof(float), 0);
    be->copy_h2d(be, m->stats, hs, m->n_stats * sizeof(float), 0);
    be->synchronize(be, 0);
    free(hp);
    free(hs);
    *out = m;
    return TR_OK;
cleanup_mem:
    if (p) tr_alloc_release(alloc, p);
    if (g) tr_alloc_release(alloc, g);
    if (s) tr_alloc_release(alloc, s);
    if (lp) tr_alloc_release(alloc, lp);
cleanup:
    free(m);
    return rc;
}

void tr_cnn_free(tr_cnn *m)
{
    if (!m)
        return;
    if (m->acts)
        tr_alloc_release(m->alloc, m->acts);
    tr_alloc_release(m->alloc, m->params);
    tr_alloc_release(m->alloc, m->grads);
    tr_alloc_release(m->alloc, m->stats);
    if (m->ws)
        tr_alloc_release(m->alloc, m->ws);
    if (m->params_lp)
        tr_alloc_release(m->alloc, m->params_lp);
    free(m);
}

void tr_cnn_params_changed(tr_cnn *m) { m->params_lp_stale = true; }

/* ---- forward and backward ---- */

/* The conv workspace for batch B: the backend's need may change with the
 * batch (cuDNN picks its algorithms per shape), so it is asked again when the
 * batch changes, and the buffer grows when the need does. */
static int size_workspace(tr_cnn *m, int B)
{
    if (m->ws && m->ws_B == B)
        return TR_OK;
    size_t need = 4;
    for (int i = 0; i < m->n_layers; i++) {
        const tr_cnn_layer *l = &m->layers[i];
        if (l->kind != TR_CNN_CONV)
            continue;
        size_t n = m->be->conv2d_workspace_bytes(m->be, B, l->C, l->H, l->W, l->OC, l->K, l->stride, l->pad);
        if (n == 0)
            return TR_EINVAL; /* the backend's message */
        need = n > need ? n : need;
    }
    need = (need + 3) / 4 * 4; /* viewed as floats */
    if (m->ws && need <= m->ws_bytes) {
        m->ws_B = B;
        return TR_OK;
    }
    if (m->ws)
        tr_alloc_release(m->alloc, m->ws);
    m->ws = NULL;
    void *w;
    int rc = tr_alloc_malloc(m->alloc, &w, need, 0);
    if (rc < 0)
        return rc;
    tr_alloc_name(m->alloc, w, "conv workspace");
    m->ws = w;
    m->ws_bytes = need;
    m->ws_B = B;
    return TR_OK;
}

static size_t out_numel(const tr_cnn_layer *l) { return (size_t)l->OC * l->OH * l->OW; }

/* The batch's activation memory: the kept outputs, the blocks' scratch area,
 * then BatchNorm's batch statistics (fp32). */
static size_t kept_bytes(const tr_cnn *m, int B) { return m->act_bytes * (size_t)B; }
static size_t batch_bytes(const tr_cnn *m, int B) { return (m->act_bytes + m->scratch_bytes) * (size_t)B; }
static float *bn_aux_of(const tr_cnn *m, int B) { return (float *)(m->acts + batch_bytes(m, B)); }
/* Layer i's aux region (maxpool's indices, dropout's mask, NHWC linear's transposed input). */
static void *aux_of(char *base, const tr_cnn_layer *l, int B) { return base + l->aux_off * B; }

/* Layer i's output for the batch (or the images: as given, or their cast under --amp). */
static void *output(const tr_cnn *m, const tr_tensor *images, int i, int B)
{
    if (i < 0)
        return m->cfg.act == TR_F32 ? images->data : m->acts + m->img_off * B;
    const tr_cnn_layer *l = &m->layers[i];
    return m->acts + (l->in_block ? kept_bytes(m, B) : 0) + l->act_off * B;
}

/* Layer i's forward; BatchNorm moves its running averages by `momentum`
 * (0 when a block is run again for its backward). */
static int forward_layer(tr_cnn *m, const tr_tensor *images, int i, int B, bool training, float momentum,
                         float **hmask)
{
    tr_backend *be = m->be;
    float *bn_aux = bn_aux_of(m, B);
    const tr_cnn_layer *l = &m->layers[i];
    size_t n_in = (size_t)B * l->C * l->H * l->W, n_out = (size_t)B * out_numel(l);
    tr_tensor x = act(m, output(m, images, l->in, B), n_in), y = act(m, output(m, images, i, B), n_out);
    switch (l->kind) {
    case TR_CNN_CONV: {
        tr_tensor w = weight(m, l, (size_t)l->OC * l->C * l->K * l->K),
                  b = view(m, m->params + l->b_off, (size_t)l->OC), ws = view(m, m->ws, m->ws_bytes / 4);
        if (l->relu_in_conv) { /* into the ReLU's output */
            tr_tensor yr = act(m, output(m, images, i + 1, B), n_out);
            be->conv2d_relu_forward(be, &yr, &x, &w, l->bias ? &b : NULL, &ws, B, l->C, l->H, l->W, l->OC, l->K,
                                    l->stride, l->pad);
        } else {
            be->conv2d_forward(be, &y, &x, &w, l->bias ? &b : NULL, &ws, B, l->C, l->H, l->W, l->OC, l->K,
                               l->stride, l->pad);
        }
        break;
    }
    case TR_CNN_BN: {
        tr_tensor w = view(m, m->params + l->w_off, l->OC), b = view(m, m->params + l->b_off, l->OC),
                  rm = view(m, m->stats + l->rs_off, l->OC), rv = view(m, m->stats + l->rs_off + l->OC, l->OC),
                  mean = view(m, bn_aux + l->bn_off, l->OC), rstd = view(m, bn_aux + l->bn_off + l->OC, l->OC);
        (l->relu_fused ? be->batchnorm_relu_forward : be->batchnorm_forward)(
            be, &y, training ? &mean : NULL, training ? &rstd : NULL, &rm, &rv, &x, &w, &b, B, l->C, l->H * l->W,
            training, momentum, m->cfg.bn_eps);
        break;
    }
    case TR_CNN_RELU:
        if (!l->relu_fused && !l->relu_in_conv)
            be->relu_forward(be, &y, &x);
        break;
    case TR_CNN_MAXPOOL: {
        tr_tensor idx = view_as(m, aux_of(m->acts, l, B), n_out, TR_I32);
        be->maxpool_forward(be, &y, &idx, &x, B, l->C, l->H, l->W, l->K, l->stride);
        break;
    }
    case TR_CNN_AVGPOOL:
        be->avgpool_forward(be, &y, &x, B, l->C, l->H, l->W, l->K, l->stride);
        break;
    case TR_CNN_DROPOUT: {
        if (!training) { /* the identity: no mask */
            be->dropout_forward(be, &y, &x, NULL);
            break;
        }
        /* the mask drawn on the host from the model's generator */
        float *nm = realloc(*hmask, n_out * sizeof(float)); /* the caller frees it */
        if (!nm)
            return tr_error_set(TR_ENOMEM, "out of host memory");
        *hmask = nm;
        float keep = 1.0f / (1.0f - l->p);
        size_t HW = (size_t)l->OH * l->OW, OC = (size_t)l->OC;
        bool nhwc = m->cfg.nhwc && HW > 1;
        float *hk = *hmask;
        for (size_t b = 0; b < (size_t)B; b++) /* drawn in (B,C,H,W) order, stored in the layout's */
            for (size_t c = 0; c < OC; c++)
                for (size_t px = 0; px < HW; px++)
                    hk[nhwc ? (b * HW + px) * OC + c : (b * OC + c) * HW + px] =
                        tr_rng_uniform(&m->rng) < l->p ? 0.0f : keep;
        tr_tensor mask = view(m, aux_of(m->acts, l, B), n_out);
        be->copy_h2d(be, mask.data, *hmask, n_out * sizeof(float), 0);
        be->synchronize(be, 0);
        be->dropout_forward(be, &y, &x, &mask);
        break;
    }
    case TR_CNN_LINEAR: {
        int C = l->C * l->H * l->W;
        tr_tensor w = weight(m, l, (size_t)l->OC * C), b = view(m, m->params + l->b_off, l->OC);
        if (l->n_aux) { /* NHWC: the flatten reads (C,H,W) */
            tr_tensor xt = act(m, aux_of(m->acts, l, B), n_in);
            be->cnn_transpose(be, &xt, &x, B, l->C, l->H * l->W, false, false);
            x = xt;
        }
        be->matmul_forward(be, &y, &x, &w, l->bias ? &b : NULL, B, C, l->OC);
        break;
    }
    case TR_CNN_ADD: {
        tr_tensor x2 = act(m, output(m, images, l->in2, B), n_in);
        (l->relu_fused ? be->residual_relu_forward : be->residual_forward)(be, &y, &x, &x2);
        break;
    }
    }
    return TR_OK;
}


/* The logits to the host as fp32, widened there from the activation dtype. */
static void copy_logits(tr_cnn *m, float *host, const void *dev, size_t n)
{
    size_t es = tr_dtype_size(m->cfg.act);
    m->be->copy_d2h(m->be, host, dev, n * es, 0);
    m->be->synchronize(m->be, 0);
    if (m->cfg.act == TR_F32)
        return;
    const uint16_t *h = (const uint16_t *)host;
    for (size_t i = n; i-- > 0;) /* from the end: each fp32 lands at or after its 16-bit source */
        host[i] = m->cfg.act == TR_BF16 ? tr_bf16_to_f32(h[i]) : tr_f16_to_f32(h[i]);
}

int tr_cnn_forward(tr_cnn *m, const tr_tensor *images, int B, bool training, tr_tensor *logits, tr_tensor *probs,
                   const tr_tensor *targets, tr_tensor *losses, float dloss_scale)
{
    tr_backend *be = m->be;
    if (m->acts) { /* a training forward without its backward: start over */
        tr_alloc_release(m->alloc, m->acts);
        m->acts = NULL;
    }
    int rc = size_workspace(m, B);
    if (rc < 0)
        return rc;
    void *mem;
    rc = tr_alloc_malloc(m->alloc, &mem, batch_bytes(m, B) + m->bn_aux * sizeof(float), 0);
    if (rc < 0)
        return rc;
    tr_alloc_name(m->alloc, mem, "cnn activations");
    m->acts = mem;
    m->act_B = B;
    m->dloss_scale = dloss_scale;
    m->images = images->data;
    if (m->cfg.act != TR_F32) {
        if (m->params_lp_stale) { /* autocast's weight cache, once per step rather than per micro-batch */
            tr_tensor lp = act(m, m->params_lp, m->n_decay), w = view(m, m->params, m->n_decay);
            tr_nvtx_push_static("cast weights");
            be->cast(be, &lp, &w);
            tr_nvtx_pop();
            m->params_lp_stale = false;
        }
        size_t n_img = (size_t)B * m->cfg.C * m->cfg.H * m->cfg.W;
        tr_tensor lp = act(m, output(m, images, -1, B), n_img), img = view(m, images->data, n_img);
        be->cast(be, &lp, &img);
    }
    float *hmask = NULL;
    for (int i = 0; i < m->n_layers && rc == TR_OK; i++)
        rc = forward_layer(m, images, i, B, training, m->cfg.bn_momentum, &hmask);
    free(hmask);
    if (rc < 0) {
        tr_alloc_release(m->alloc, m->acts);
        m->acts = NULL;
        return rc;
    }
    size_t n_logits = (size_t)B * m->cfg.n_classes;
    if (logits)
        copy_logits(m, logits->data, output(m, images, m->n_layers - 1, B), n_logits);
    if (targets) {
        tr_tensor lg = act(m, output(m, images, m->n_layers - 1, B), n_logits);
        if (m->cfg.fuse) /* the loss's gradient over the logits, which only the backward reads now */
            be->crossentropy_fused_forward(be, losses, &lg, targets, training ? dloss_scale / (float)B : 0.0f, B,
                                           m->cfg.n_classes, m->cfg.n_classes);
        else
            be->crossentropy_forward(be, losses, probs, &lg, targets, B, m->cfg.n_classes, m->cfg.n_classes);
    }
    if (!training) {
        tr_alloc_release(m->alloc, m->acts);
        m->acts = NULL;
    }
    return TR_OK;
}

int tr_cnn_backward(tr_cnn *m, const tr_tensor *probs, const tr_tensor *targets, int B, bool add_dparams)
{
    tr_backend *be = m->be;
    if (!m->acts || m->act_B != B)
        return tr_error_set(TR_EINVAL, "cnn backward without its training forward of batch %d", B);
    void *mem;
    size_t n_grad = batch_bytes(m, B); /* the activations' layout, in their dtype */
    int rc = tr_alloc_malloc(m->alloc, &mem, n_grad, 0);
    if (rc < 0)
        return rc;
    tr_alloc_name(m->alloc, mem, "cnn activation gradients");
    char *d = mem;
    float *bn_aux = bn_aux_of(m, B);
    /* backward ops add into their input's gradient: it starts at zero */
    be->memset0(be, d, n_grad, 0);
    const tr_tensor images = view(m, (float *)m->images, (size_t)B * m->cfg.C * m->cfg.H * m->cfg.W);
    /* a gradient lies where its output does: kept, or in the scratch area */
#define DOUT(i) (d + (m->layers[i].in_block ? kept_bytes(m, B) : 0) + m->layers[i].act_off * B)
    int n = m->n_layers;
    size_t n_logits = (size_t)B * m->cfg.n_classes;
    tr_tensor dlogits = act(m, m->cfg.fuse ? output(m, &images, n - 1, B) : DOUT(n - 1), n_logits);
    if (!m->cfg.fuse) /* fused, the forward wrote it over the logits */
        be->crossentropy_backward(be, &dlogits, probs, targets, m->dloss_scale / (float)B, B, m->cfg.n_classes,
                                  m->cfg.n_classes);
    for (int i = n - 1; i >= 0; i--) {
        const tr_cnn_layer *l = &m->layers[i];
        if (l->block_first >= 0) { /* a recomputed block's sum: its inside again, gradients from zero */
            tr_nvtx_push("recompute block");
            be->memset0(be, d + kept_bytes(m, B), m->scratch_bytes * (size_t)B, 0);
            for (int j = l->block_first; j < i && rc == TR_OK; j++)
                rc = forward_layer(m, &images, j, B, true, 0.0f, NULL);
            tr_nvtx_pop();
            if (rc < 0)
                break;
        }
        size_t n_in = (size_t)B * l->C * l->H * l->W, n_out = (size_t)B * out_numel(l);
        tr_tensor x = act(m, output(m, &images, l->in, B), n_in), y = act(m, output(m, &images, i, B), n_out),
                  dy = i == n - 1 ? dlogits : act(m, DOUT(i), n_out), dx = act(m, l->in < 0 ? NULL : DOUT(l->in), n_in);
        tr_tensor *pdx = l->in < 0 ? NULL : &dx; /* the images need no gradient */
        switch (l->kind) {
        case TR_CNN_CONV: {
            tr_tensor w = weight(m, l, (size_t)l->OC * l->C * l->K * l->K),
                      dw = view(m, m->grads + l->w_off, (size_t)l->OC * l->C * l->K * l->K),
                      db = view(m, m->grads + l->b_off, l->OC), ws = view(m, m->ws, m->ws_bytes / 4);
            be->conv2d_backward(be, pdx, &dw, l->bias ? &db : NULL, &dy, &x, &w, &ws, B, l->C, l->H,
                                l->W, l->OC, l->K, l->stride, l->pad, add_dparams);
            break;
        }
        case TR_CNN_BN: {
            tr_tensor w = view(m, m->params + l->w_off, l->OC), dw = view(m, m->grads + l->w_off, l->OC),
                      db = view(m, m->grads + l->b_off, l->OC), mean = view(m, bn_aux + l->bn_off, l->OC),
                      rstd = view(m, bn_aux + l->bn_off + l->OC, l->OC);
            tr_tensor b = view(m, m->params + l->b_off, l->OC);
            if (l->relu_fused) /* dy is the ReLU's output gradient */
                be->batchnorm_relu_backward(be, pdx, &dw, &db, &dy, &x, &w, &b, &mean, &rstd, B, l->C, l->H * l->W,
                                            add_dparams, m->cfg.bn_eps);
            else
                be->batchnorm_backward(be, pdx, &dw, &db, &dy, &x, &w, &mean, &rstd, B, l->C, l->H * l->W,
                                       add_dparams, m->cfg.bn_eps);
            break;
        }
        case TR_CNN_RELU:
            if (pdx && !l->relu_fused)
                be->relu_backward(be, pdx, &y, &dy);
            break;
        case TR_CNN_MAXPOOL: {
            tr_tensor idx = view_as(m, aux_of(m->acts, l, B), n_out, TR_I32);
            if (pdx)
                be->maxpool_backward(be, pdx, &dy, &idx, B, l->C, l->H, l->W, l->K, l->stride);
            break;
        }
        case TR_CNN_AVGPOOL:
            if (pdx)
                be->avgpool_backward(be, pdx, &dy, B, l->C, l->H, l->W, l->K, l->stride);
            break;
        case TR_CNN_DROPOUT: {
            tr_tensor mask = view(m, aux_of(m->acts, l, B), n_out);
            if (pdx)
                be->dropout_backward(be, pdx, &mask, &dy);
            break;
        }
        case TR_CNN_LINEAR: {
            int C = l->C * l->H * l->W;
            tr_tensor w = weight(m, l, (size_t)l->OC * C),
                      dw = view(m, m->grads + l->w_off, (size_t)l->OC * C), db = view(m, m->grads + l->b_off, l->OC);
            if (l->n_aux) { /* NHWC: the gradient of the transposed copy, then transposed back onto dx */
                tr_tensor xt = act(m, aux_of(m->acts, l, B), n_in), dxt = act(m, aux_of(d, l, B), n_in);
                be->matmul_backward(be, pdx ? &dxt : NULL, &dw, l->bias ? &db : NULL, &dy, &xt, &w, B, C, l->OC,
                                    add_dparams);
                if (pdx)
                    be->cnn_transpose(be, pdx, &dxt, B, l->C, l->H * l->W, true, true);
                break;
            }
            be->matmul_backward(be, pdx, &dw, l->bias ? &db : NULL, &dy, &x, &w, B, C, l->OC, add_dparams);
            break;
        }
        case TR_CNN_ADD: {
            tr_tensor dx2 = act(m, l->in2 < 0 ? NULL : DOUT(l->in2), n_in);
            if (l->relu_fused)
                be->residual_relu_backward(be, &dx, &dx2, &y, &dy);
            else
                be->residual_backward(be, &dx, &dx2, &dy);
            break;
        }
        }
    }
#undef DOUT
    tr_alloc_release(m->alloc, mem);
    tr_alloc_release(m->alloc, m->acts);
    m->acts = NULL;
    return rc;
}
