/* model_gpt.c: the GPT of gpt.h, forward and backward on a backend. The
 * shapes follow llm.c's train_gpt2.c; the memory is the caching allocator's.
 * It does not know where batches come from or how weights are updated. */
#include "gpt.h"

#include "error.h"
#include "nvtx.h"
#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const tr_gpt_tensor_names[TR_GPT_N_TENSORS] = {
    "wte.weight", "wpe.weight", "blocks.ln_1.weight", "blocks.ln_1.bias",
    "blocks.attn.qkv.weight", "blocks.attn.qkv.bias", "blocks.attn.proj.weight", "blocks.attn.proj.bias",
    "blocks.ln_2.weight", "blocks.ln_2.bias", "blocks.mlp.fc.weight", "blocks.mlp.fc.bias",
    "blocks.mlp.proj.weight", "blocks.mlp.proj.bias", "ln_f.weight", "ln_f.bias",
};

void tr_gpt_config_finish(tr_gpt_config *c) { c->padded_vocab_size = (c->vocab_size + 63) / 64 * 64; }

int tr_gpt_config_check(const tr_gpt_config *c)
{
    if (c->n_layers < 1 || c->n_layers > 1024)
        return tr_error_set(TR_EINVAL, "the model needs 1 to 1024 layers, not %d", c->n_layers);
    if (c->channels < 1 || c->n_heads < 1 || c->channels % c->n_heads != 0)
        return tr_error_set(TR_EINVAL, "the width (%d) must be a positive multiple of the heads (%d)",
                            c->channels, c->n_heads);
    if (c->max_seq_len < 1 || c->vocab_size < 2 || c->vocab_size > 1 << 20)
        return tr_error_set(TR_EINVAL, "context %d and vocabulary %d: both must be positive (vocabulary 2..2^20)",
                            c->max_seq_len, c->vocab_size);
    return TR_OK;
}

/* A view of n contiguous elements at p. */
static tr_tensor view(void **p, tr_dtype dt, tr_device dev, int n_dims, int64_t d0, int64_t d1, int64_t d2,
                      int64_t d3)
{
    tr_tensor t = {*p, dt, dev, n_dims, {d0, d1, d2, d3}};
    *p = (char *)*p + tr_tensor_bytes(&t);
    return t;
}

/* The parameter views over a flat buffer of dtype dt (fp32 master weights,
 * gradients, or the low-precision copy). */
static void point_params_as(tr_gpt_params *p, void *mem, tr_dtype dt, tr_device dev, const tr_gpt_config *c)
{
    int64_t L = c->n_layers, C = c->channels;
    void *q = mem;
    p->wte = view(&q, dt, dev, 2, c->padded_vocab_size, C, 0, 0);
    p->wpe = view(&q, dt, dev, 2, c->max_seq_len, C, 0, 0);
    p->ln1w = view(&q, dt, dev, 2, L, C, 0, 0);
    p->ln1b = view(&q, dt, dev, 2, L, C, 0, 0);
    p->qkvw = view(&q, dt, dev, 3, L, 3 * C, C, 0);
    p->qkvb = view(&q, dt, dev, 2, L, 3 * C, 0, 0);
    p->attprojw = view(&q, dt, dev, 3, L, C, C, 0);
    p->attprojb = view(&q, dt, dev, 2, L, C, 0, 0);
    p->ln2w = view(&q, dt, dev, 2, L, C, 0, 0);
    p->ln2b = view(&q, dt, dev, 2, L, C, 0, 0);
    p->fcw = view(&q, dt, dev, 3, L, 4 * C, C, 0);
    p->fcb = view(&q, dt, dev, 2, L, 4 * C, 0, 0);
    p->fcprojw = view(&q, dt, dev, 3, L, C, 4 * C, 0);
    p->fcprojb = view(&q, dt, dev, 2, L, C, 0, 0);
    p->lnfw = view(&q, dt, dev, 1, C, 0, 0, 0);
    p->lnfb = view(&q, dt, dev, 1, C, 0, 0, 0);
}

/* Layer l of a (L, ...) parameter: the same tensor without its first dimension. */
static tr_tensor layer(const tr_tensor *t, int l)
{
    tr_tensor r = *t;
    r.n_dims = t->n_dims - 1;
    for (int i = 0; i < r.n_dims; i++)
        r.shape[i] = t->shape[i + 1];
    for (int i = r.n_dims; i < TR_MAX_DIMS; i++)
        r.shape[i] = 0;
    r.data = (char *)t->data + (size_t)l * tr_tensor_bytes(&r);
    return r;
}

static void point_layers(tr_gpt_layer *ls, const tr_gpt_params *p, int L)
{
    for (int l = 0; l < L; l++)
        ls[l] = (tr_gpt_layer){layer(&p->ln1w, l),     layer(&p->ln1b, l),     layer(&p->qkvw, l),
                               layer(&p->qkvb, l),     layer(&p->attprojw, l), layer(&p->attprojb, l),
                               layer(&p->ln2w, l),     layer(&p->ln2b, l),     layer(&p->fcw, l),
                               layer(&p->fcb, l),      layer(&p->fcprojw, l),  layer(&p->fcprojb, l)};
}

void tr_gpt_point_params(tr_gpt *m, void *flat)
{
    m->params_flat.data = flat;
    point_params_as(&m->params, flat, TR_F32, m->be->device, &m->cfg);
    point_layers(m->layer_params, &m->params, m->cfg.n_layers);
    m->params_lp_stale = true;
}

/* ---- the trainer's view (model.h) ---- */

static tr_gpt *gpt_of(tr_model *m) { return (tr_gpt *)((char *)m - offsetof(tr_gpt, base)); }

static int base_forward(tr_model *m, const void *batch, float dloss, double *loss)
{
    const tr_gpt_batch *b = batch;
    tr_gpt *g = gpt_of(m);
    float l;
    g->dloss = dloss;
    int rc = tr_gpt_forward(g, b->inputs, b->targets, b->B, b->T, true, loss ? &l : NULL);
    if (loss && rc >= 0)
        *loss = l;
    return rc;
}

static int base_backward(tr_model *m, int k)
{
    (void)k; /* the first backward after a zero-grad writes the gradients */
    return tr_gpt_backward(gpt_of(m));
}

static void base_zero_grad(tr_model *m) { tr_gpt_zero_grad(gpt_of(m)); }
static void base_params_changed(tr_model *m) { gpt_of(m)->params_lp_stale = true; }
static void base_point_params(tr_model *m, void *params, void *stats)
{
    (void)stats;
    tr_gpt_point_params(gpt_of(m), params);
}

static const tr_model_ops gpt_ops = {base_forward, base_backward, base_zero_grad, base_params_changed,
                                     base_point_params};

/* The tensors' slices: matrices and embeddings decay, biases and LayerNorm gains do not. */
static void make_base(tr_gpt *m)
{
    for (int i = 0; i < TR_GPT_N_TENSORS; i++) {
        const tr_tensor *t = &m->params.all[i];
        size_t lo = (size_t)((float *)t->data - (float *)m->params_flat.data);
        m->slices[i] = (tr_param_slice){lo, lo + (size_t)tr_tensor_numel(t), i < 2 || t->n_dims == 3};
    }
    m->base = (tr_model){.ops = &gpt_ops, .be = m->be, .alloc = m->alloc, .n_params = m->n_params,
                         .params = &m->params_flat, .grads = &m->grads_flat, .slices = m->slices,
                         .n_slices = TR_GPT_N_TENSORS};
}

int tr_gpt_new(tr_gpt **out, const tr_gpt_config *cfg, tr_backend *be, tr_alloc *alloc, uint64_t seed)
{
    *out = NULL;
    int rc = tr_gpt_config_check(cfg);
    if (rc < 0)
        return rc;
    tr_gpt *m = calloc(1, sizeof *m);
    float *host = NULL;
    if (!m)
        return tr_error_set(TR_ENOMEM, "out of host memory");
    m->cfg = *cfg;
    m->be = be;
    m->alloc = alloc;
    m->amp = TR_F32;
    m->dloss = 1.0f;
    int L = cfg->n_layers;
    m->blocks = calloc(L, sizeof *m->blocks);
    m->layer_params = calloc(L, sizeof *m->layer_params);
    m->layer_grads = calloc(L, sizeof *m->layer_grads);
    m->layer_params_lp = calloc(L, sizeof *m->layer_params_lp);
    if (!m->blocks || !m->layer_params || !m->layer_grads || !m->layer_params_lp) {
        rc = tr_error_set(TR_ENOMEM, "out of host memory");
        goto cleanup;
    }
    point_params_as(&m->params, NULL, TR_F32, be->device, cfg);
    for (int i = 0; i < TR_GPT_N_TENSORS; i++)
        m->n_params += (size_t)tr_tensor_numel(&m->params.all[i]);
    size_t n_bytes = m->n_params * sizeof(float);
    void *pmem, *gmem;
    if ((rc = tr_alloc_malloc(alloc, &pmem, n_bytes, 0)) < 0)
        goto cleanup;
    m->params_flat = (tr_tensor){pmem, TR_F32, be->device, 1, {(int64_t)m->n_params}};
    if ((rc = tr_alloc_malloc(alloc, &gmem, n_bytes, 0)) < 0)
        goto cleanup;
    m->grads_flat = (tr_tensor){gmem, TR_F32, be->device, 1, {(int64_t)m->n_params}};
    tr_alloc_name(alloc, pmem, "parameters");
    tr_alloc_name(alloc, gmem, "gradients");
    tr_gpt_point_params(m, pmem);
    point_params_as(&m->grads, gmem, TR_F32, be->device, cfg);
    point_layers(m->layer_grads, &m->grads, L);
    make_base(m);

    /* Initialize on the host, in tensor order, then copy: the same weights on every backend. */
    host = malloc(n_bytes);
    if (!host) {
        rc = tr_error_set(TR_ENOMEM, "out of host memory");
        goto cleanup;
    }
    tr_rng rng = {seed};
    float std_proj = 0.02f / sqrtf(2.0f * cfg->n_layers);
    float *h = host;
    for (int i = 0; i < TR_GPT_N_TENSORS; i++) {
        tr_tensor *t = &m->params.all[i];
        size_t n = (size_t)tr_tensor_numel(t);
        const tr_gpt_params *P = &m->params;
        bool normal = t == &P->wte || t == &P->wpe || t == &P->qkvw || t == &P->attprojw || t == &P->fcw ||
                      t == &P->fcprojw;
        bool one = t == &P->ln1w || t == &P->ln2w || t == &P->lnfw; /* LayerNorm gains; biases are 0 */
        float std = (t == &P->attprojw || t == &P->fcprojw) ? std_proj : 0.02f;
        for (size_t k = 0; k < n; k++)
            h[k] = normal ? (float)(std * tr_rng_normal(&rng)) : one ? 1.0f : 0.0f;
        h += n;
    }
    /* the padded vocabulary rows never take part: keep them zero */
    for (int64_t v = cfg->vocab_size; v < cfg->padded_vocab_size; v++)
        memset(host + v * cfg->channels, 0, cfg->channels * sizeof(float));
    be->copy_h2d(be, pmem, host, n_bytes, 0);
    be->memset0(be, gmem, n_bytes, 0);
    *out = m;
    m = NULL;
cleanup:
    free(host);
    tr_gpt_free(m);
    return rc;
}

int tr_gpt_set_amp(tr_gpt *m, tr_dtype amp)
{
    if (amp != TR_F32 && amp != TR_BF16 && amp != TR_F16)
        return tr_error_set(TR_EINVAL, "mixed precision takes bf16 or fp16, not %s", tr_dtype_name(amp));
    tr_alloc_release(m->alloc, m->params_lp.data);
    m->params_lp = (tr_tensor){0};
    m->amp = amp;
    if (amp == TR_F32)
        return TR_OK;
    void *mem;
    int rc = tr_alloc_malloc(m->alloc, &mem, m->n_params * tr_dtype_size(amp), 0);
    if (rc < 0)
        return rc;
    tr_alloc_name(m->alloc, mem, amp == TR_BF16 ? "weights (bf16 copy)" : "weights (fp16 copy)");
    m->params_lp = (tr_tensor){mem, amp, m->be->device, 1, {(int64_t)m->n_params}};
    tr_gpt_params lp;
    point_params_as(&lp, mem, amp, m->be->device, &m->cfg);
    point_layers(m->layer_params_lp, &lp, m->cfg.n_layers);
    m->params_lp_stale = true;
    return TR_OK;
}

/* Activation memory, counted as the caching allocator rounds it. */
static int acts_malloc(tr_gpt *m, void **p, size_t n_bytes, const char *name)
{
    int rc = tr_alloc_malloc(m->alloc, p, n_bytes, 0);
    if (rc < 0)
        return rc;
    tr_alloc_name(m->alloc, *p, name);
    m->activation_bytes += tr_alloc_block_size(m->alloc, *p);
    if (m->activation_bytes > m->peak_activation_bytes)
        m->peak_activation_bytes = m->activation_bytes;
    return TR_OK;
}

static void acts_release(tr_gpt *m, void **p)
{
    if (!*p)
        return;
    m->activation_bytes -= tr_alloc_block_size(m->alloc, *p);
    tr_alloc_release(m->alloc, *p);
    *p = NULL;
}

static void release_block(tr_gpt *m, int l)
{
    acts_release(m, &m->blocks[l].mem);
    acts_release(m, &m->blocks[l].cheap_mem);
    acts_release(m, &m->blocks[l].out_mem);
}

static void release_acts(tr_gpt *m)
{
    for (int l = 0; l < m->cfg.n_layers; l++)
        release_block(m, l);
    acts_release(m, &m->head.mem);
}

void tr_gpt_free(tr_gpt *m)
{
    if (!m)
        return;
    if (m->blocks)
        release_acts(m);
    tr_alloc_release(m->alloc, m->params_flat.data);
    tr_alloc_release(m->alloc, m->grads_flat.data);
    tr_alloc_release(m->alloc, m->params_lp.data);
    free(m->blocks);
    free(m->layer_params);
    free(m->layer_grads);
    free(m->layer_params_lp);
    free(m);
}

void tr_gpt_zero_grad(tr_gpt *m) { m->grads_none = true; }

/* A view shaped like shape (attention's tensors, as the backend lays them out). */
static tr_tensor view_as(void **p, const tr_tensor *shape)
{
    const int64_t *d = shape->shape;
    return view(p, shape->dtype, shape->device, shape->n_dims, d[0], d[1], d[2], d[3]);
}

/* What attention keeps for its backward and the scratch the backward takes. */
static void attention_shapes(const tr_gpt *m, tr_tensor *att, tr_tensor *scratch)
{
    tr_backend *be = m->be;
    int64_t B = m->B, T = m->T, NH = m->cfg.n_heads;
    if (be->attention_layout) {
        be->attention_layout(be, m->amp, m->B, m->T, m->cfg.channels, m->cfg.n_heads, att, scratch);
        return;
    }
    *att = (tr_tensor){NULL, m->amp, be->device, 4, {B, NH, T, T}};
    *scratch = (tr_tensor){NULL, TR_F32, be->device, 4, {B, NH, T, T}};
}

/* The block's activations in its three allocations; a NULL base gives
 * offsets, so the sizes are the end pointers. lp is the AMP dtype; att is
 * attention's saved tensor's shape. qkv, atty and att come first: cuDNN
 * reads them 16-byte aligned. */
typedef struct block_layout {
    size_t mem_bytes, cheap_bytes, out_bytes;
} block_layout;

static block_layout point_block(tr_gpt_block_acts *a, void *mem, void *cheap, void *out, tr_dtype lp,
                                tr_device dev, int B, int T, int C, const tr_tensor *att)
{
    void *q = mem, *c = cheap, *o = out;
    a->ln1 = view(&c, lp, dev, 3, B, T, C, 0);
    a->ln2 = view(&c, lp, dev, 3, B, T, C, 0);
    a->fch_gelu = view(&c, lp, dev, 3, B, T, 4 * C, 0);
    a->qkv = view(&q, lp, dev, 3, B, T, 3 * C, 0);
    a->atty = view(&q, lp, dev, 3, B, T, C, 0);
    a->att = view_as(&q, att);
    a->ln1_mean = view(&q, TR_F32, dev, 2, B, T, 0, 0);
    a->ln1_rstd = view(&q, TR_F32, dev, 2, B, T, 0, 0);
    a->attproj = view(&q, lp, dev, 3, B, T, C, 0);
    a->res2 = view(&q, TR_F32, dev, 3, B, T, C, 0);
    a->ln2_mean = view(&q, TR_F32, dev, 2, B, T, 0, 0);
    a->ln2_rstd = view(&q, TR_F32, dev, 2, B, T, 0, 0);
    a->fch = view(&q, lp, dev, 3, B, T, 4 * C, 0);
    a->fcproj = view(&q, lp, dev, 3, B, T, C, 0);
    a->res3 = view(&o, TR_F32, dev, 3, B, T, C, 0);
    return (block_layout){(size_t)((char *)q - (char *)mem), (size_t)((char *)c - (char *)cheap),
                          (size_t)((char *)o - (char *)out)};
}

static int hook_block(tr_gpt *m, int l, tr_gpt_phase phase, bool begin)
{
    return m->hooks.block ? m->hooks.block(m->hooks.ctx, m, l, phase, begin) : TR_OK;
}

/* The weights a matrix product reads: the low-precision copy under AMP. */
static const tr_gpt_layer *matrices(const tr_gpt *m, int l)
{
    return m->amp != TR_F32 ? &m->layer_params_lp[l] : &m->layer_params[l];
}

/* Allocates what block l lacks for a forward (mem and cheap_mem; out_mem
 * unless it exists) and points the views. */
static int block_alloc(tr_gpt *m, int l, bool with_out)
{
    tr_gpt_block_acts *a = &m->blocks[l];
    tr_dtype lp = m->amp;
    tr_tensor att, scratch;
    attention_shapes(m, &att, &scratch);
    block_layout sz = point_block(a, NULL, NULL, NULL, lp, m->be->device, m->B, m->T, m->cfg.channels, &att);
    int rc;
    if (!a->mem && (rc = acts_malloc(m, &a->mem, sz.mem_bytes, "block activations")) < 0)
        return rc;
    if (!a->cheap_mem && (rc = acts_malloc(m, &a->cheap_mem, sz.cheap_bytes, "block activations (cheap)")) < 0)
        return rc;
    if (with_out && !a->out_mem && (rc = acts_malloc(m, &a->out_mem, sz.out_bytes, "block output")) < 0)
        return rc;
    point_block(a, a->mem, a->cheap_mem, a->out_mem, lp, m->be->device, m->B, m->T, m->cfg.channels, &att);
    return TR_OK;
}

/* The forward of block l from its input x. recompute: the backward's
 * second run under block checkpointing (the output exists and is kept). */
static int block_forward(tr_gpt *m, int l, const tr_tensor *x, bool recompute)
{
    tr_backend *be = m->be;
    int B = m->B, T = m->T, C = m->cfg.channels, NH = m->cfg.n_heads, N = B * T;
    int rc = block_alloc(m, l, !recompute);
    if (rc < 0)
        return rc;
    tr_gpt_block_acts *a = &m->blocks[l];
    const tr_gpt_layer *P = &m->layer_params[l], *W = matrices(m, l);
    be->layernorm_forward(be, &a->ln1, &a->ln1_mean, &a->ln1_rstd, x, &P->ln1w, &P->ln1b, N, C);
    be->matmul_forward(be, &a->qkv, &a->ln1, &W->qkvw, &P->qkvb, N, C, 3 * C);
    be->attention_forward(be, &a->atty, &a->att, &a->qkv, B, T, C, NH);
    be->matmul_forward(be, &a->attproj, &a->atty, &W->attprojw, &P->attprojb, N, C, C);
    if (m->fuse) {
        be->residual_layernorm_forward(be, &a->res2, &a->ln2, &a->ln2_mean, &a->ln2_rstd, x, &a->attproj,
                                       &P->ln2w, &P->ln2b, N, C);
        be->matmul_bias_gelu_forward(be, &a->fch, &a->fch_gelu, &a->ln2, &W->fcw, &P->fcb, N, C, 4 * C);
    } else {
        be->residual_forward(be, &a->res2, x, &a->attproj);
        be->layernorm_forward(be, &a->ln2, &a->ln2_mean, &a->ln2_rstd, &a->res2, &P->ln2w, &P->ln2b, N, C);
        be->matmul_forward(be, &a->fch, &a->ln2, &W->fcw, &P->fcb, N, C, 4 * C);
        be->gelu_forward(be, &a->fch_gelu, &a->fch);
    }
    be->matmul_forward(be, &a->fcproj, &a->fch_gelu, &W->fcprojw, &P->fcprojb, N, 4 * C, C);
    if (!recompute)
        be->residual_forward(be, &a->res3, &a->res2, &a->fcproj);
    return TR_OK;
}

int tr_gpt_block_forward(tr_gpt *m, int l, const tr_tensor *x)
{
    int rc = hook_block(m, l, TR_PHASE_FORWARD, true);
    if (rc < 0 || (rc = block_forward(m, l, x, false)) < 0)
        return rc;
    if (m->need_grad && m->checkpoint == TR_CHECKPOINT_SELECTIVE)
        acts_release(m, &m->blocks[l].cheap_mem);
    if (m->need_grad && m->checkpoint == TR_CHECKPOINT_BLOCKS) {
        acts_release(m, &m->blocks[l].mem);
        acts_release(m, &m->blocks[l].cheap_mem);
    }
    return hook_block(m, l, TR_PHASE_FORWARD, false);
}

/* Brings back what checkpointing dropped, inside a "recompute" range. */
static int recompute(tr_gpt *m, int l, const tr_tensor *x)
{
    tr_gpt_block_acts *a = &m->blocks[l];
    if (a->mem && a->cheap_mem)
        return TR_OK;
    char name[48];
    snprintf(name, sizeof name, "recompute block %d", l);
    tr_nvtx_push(name);
    int rc;
    if (!a->mem) {
        rc = block_forward(m, l, x, true);
    } else if ((rc = block_alloc(m, l, false)) >= 0) {
        /* selective: LayerNorm and GELU only (llm.c's recompute) */
        tr_backend *be = m->be;
        const tr_gpt_layer *P = &m->layer_params[l];
        int N = m->B * m->T, C = m->cfg.channels;
        be->layernorm_forward(be, &a->ln1, &a->ln1_mean, &a->ln1_rstd, x, &P->ln1w, &P->ln1b, N, C);
        be->layernorm_forward(be, &a->ln2, &a->ln2_mean, &a->ln2_rstd, &a->res2, &P->ln2w, &P->ln2b, N, C);
        be->gelu_forward(be, &a->fch_gelu, &a->fch);
    }
    tr_nvtx_pop();
    return rc;
}

/* Gradients of a block's activations, scratch for its backward; one
 * allocation. Each has its activation's dtype, as autograd gives it. In
 * fp32 the residual stream's gradient is one buffer updated in place (as in
 * llm.c): the gradients of res2, attproj and fcproj are that buffer, so they
 * get no room here. */
typedef struct block_grads {
    tr_tensor dln1, dqkv, datty, dattproj, dres2, dln2, dfch, dfch_gelu, dfcproj, scratch;
} block_grads;

static size_t point_block_grads(block_grads *g, void *mem, tr_dtype lp, tr_device dev, int B, int T, int C,
                                const tr_tensor *scratch)
{
    void *q = mem;
    int stream = lp == TR_F32 ? 0 : C; /* the residual stream's own gradients: none in place */
    g->dln1 = view(&q, lp, dev, 3, B, T, C, 0);
    g->dqkv = view(&q, lp, dev, 3, B, T, 3 * C, 0);
    g->datty = view(&q, lp, dev, 3, B, T, C, 0);
    g->dattproj = view(&q, lp, dev, 3, B, T, stream, 0);
    g->dres2 = view(&q, TR_F32, dev, 3, B, T, stream, 0);
    g->dln2 = view(&q, lp, dev, 3, B, T, C, 0);
    g->dfch = view(&q, lp, dev, 3, B, T, 4 * C, 0);
    g->dfch_gelu = view(&q, lp, dev, 3, B, T, 4 * C, 0);
    g->dfcproj = view(&q, lp, dev, 3, B, T, stream, 0);
    g->scratch = view_as(&q, scratch); /* attention's workspace */
    return (size_t)((char *)q - (char *)mem);
}

int tr_gpt_block_backward(tr_gpt *m, int l, const tr_tensor *x, const tr_tensor *dout, tr_tensor *din)
{
    tr_backend *be = m->be;
    int B = m->B, T = m->T, C = m->cfg.channels, NH = m->cfg.n_heads, N = B * T;
    bool in_place = din->data == dout->data;
    if (in_place && m->amp != TR_F32)
        return tr_error_set(TR_EINVAL, "tr_gpt_block_backward: in place needs fp32 gradients");
    int rc = hook_block(m, l, TR_PHASE_BACKWARD, true);
    if (rc < 0 || (rc = recompute(m, l, x)) < 0)
        return rc;
    tr_gpt_block_acts *a = &m->blocks[l];
    block_grads g;
    tr_tensor att, scratch;
    attention_shapes(m, &att, &scratch);
    size_t n_bytes = point_block_grads(&g, NULL, m->amp, be->device, B, T, C, &scratch);
    void *mem;
    if ((rc = acts_malloc(m, &mem, n_bytes, "block gradients")) < 0)
        return rc;
    point_block_grads(&g, mem, m->amp, be->device, B, T, C, &scratch);
    be->memset0(be, mem, n_bytes, 0);
    const tr_gpt_layer *P = &m->layer_params[l], *W = matrices(m, l);
    tr_gpt_layer *G = &m->layer_grads[l];
    bool add = !m->grads_none;
    /* In place, dout is fc_proj's gradient; LayerNorm 2's backward adds into
     * it, which makes it the gradient of res2 and of attn_proj; LayerNorm 1's
     * adds into it, which makes it x's. The sums the copies below make, in
     * their order, so the same bits. */
    const tr_tensor *dfcproj = in_place ? dout : &g.dfcproj, *dattproj = in_place ? din : &g.dattproj;
    if (!in_place)
        be->residual_backward(be, &g.dres2, &g.dfcproj, dout);
    be->matmul_backward(be, &g.dfch_gelu, &G->fcprojw, &G->fcprojb, dfcproj, &a->fch_gelu, &W->fcprojw, N, 4 * C,
                        C, add);
    be->gelu_backward(be, &g.dfch, &a->fch, &g.dfch_gelu);
    be->matmul_backward(be, &g.dln2, &G->fcw, &G->fcb, &g.dfch, &a->ln2, &W->fcw, N, C, 4 * C, add);
    if (in_place) {
        be->layernorm_backward(be, din, &G->ln2w, &G->ln2b, &g.dln2, &a->res2, &P->ln2w, &a->ln2_mean,
                               &a->ln2_rstd, N, C, add);
    } else if (m->fuse) {
        be->residual_layernorm_backward(be, din, &g.dattproj, &g.dres2, &G->ln2w, &G->ln2b, &g.dln2, &a->res2,
                                        &P->ln2w, &a->ln2_mean, &a->ln2_rstd, N, C, add);
    } else {
        be->layernorm_backward(be, &g.dres2, &G->ln2w, &G->ln2b, &g.dln2, &a->res2, &P->ln2w, &a->ln2_mean,
                               &a->ln2_rstd, N, C, add);
        be->residual_backward(be, din, &g.dattproj, &g.dres2);
    }
    be->matmul_backward(be, &g.datty, &G->attprojw, &G->attprojb, dattproj, &a->atty, &W->attprojw, N, C, C, add);
    be->attention_backward(be, &g.dqkv, &g.scratch, &g.datty, &a->qkv, &a->atty, &a->att, B, T, C, NH);
    be->matmul_backward(be, &g.dln1, &G->qkvw, &G->qkvb, &g.dqkv, &a->ln1, &W->qkvw, N, C, 3 * C, add);
    be->layernorm_backward(be, din, &G->ln1w, &G->ln1b, &g.dln1, x, &P->ln1w, &a->ln1_mean, &a->ln1_rstd, N, C,
                           add);
    acts_release(m, &mem);
    /* the block's internals are spent; its output was the next block's input, spent too */
    acts_release(m, &a->mem);
    acts_release(m, &a->cheap_mem);
    if ((rc = hook_block(m, l, TR_PHASE_BACKWARD, false)) < 0)
        return rc;
    return m->hooks.grads_ready ? m->hooks.grads_ready(m->hooks.ctx, m, l) : TR_OK;
}

int tr_gpt_forward(tr_gpt *m, const int32_t *inputs, const int32_t *targets, int B, int T, bool need_grad,
                   float *loss)
{
    tr_backend *be = m->be;
    const tr_gpt_config *c = &m->cfg;
    int C = c->channels, Vp = c->padded_vocab_size, V = c->vocab_size, N = B * T;
    if (B < 1 || T < 1 || T > c->max_seq_len)
        return tr_error_set(TR_EINVAL, "batch %dx%d does not fit the model (context %d)", B, T, c->max_seq_len);
    if (need_grad && !targets)
        return tr_error_set(TR_EINVAL, "tr_gpt_forward: a forward for a backward needs targets");
    for (int i = 0; i < N; i++)
        if (inputs[i] < 0 || inputs[i] >= V || (targets && (targets[i] < 0 || targets[i] >= V)))
            return tr_error_set(TR_EINVAL, "token %d at %d is outside the vocabulary (%d)",
                                inputs[i] < 0 || inputs[i] >= V ? inputs[i] : targets[i], i, V);
    release_acts(m); /* a forward without its backward (eval) leaves nothing behind */
    m->B = B;
    m->T = T;
    m->need_grad = need_grad;
    if (m->amp != TR_F32 && m->params_lp_stale) {
        /* autocast's weight cache, made once per step rather than once per micro-batch */
        tr_nvtx_push_static("cast weights");
        be->cast(be, &m->params_lp, &m->params_flat);
        tr_nvtx_pop();
        m->params_lp_stale = false;
    }
    tr_dtype lp = m->amp;
    bool fused_loss = m->fuse && targets;
    tr_gpt_head_acts *h = &m->head;
    tr_tensor shape[9];
    void *q = NULL;
    shape[0] = view(&q, TR_I32, be->device, 2, B, T, 0, 0);
    shape[1] = view(&q, TR_I32, be->device, 2, B, T, 0, 0);
    shape[2] = view(&q, TR_F32, be->device, 3, B, T, C, 0);
    shape[3] = view(&q, lp, be->device, 3, B, T, C, 0);
    shape[4] = view(&q, TR_F32, be->device, 2, B, T, 0, 0);
    shape[5] = view(&q, TR_F32, be->device, 2, B, T, 0, 0);
    shape[6] = view(&q, lp, be->device, 3, B, T, Vp, 0);
    /* the fused classifier keeps no probabilities */
    shape[7] = fused_loss ? view(&q, TR_F32, be->device, 1, 0, 0, 0, 0) : view(&q, TR_F32, be->device, 3, B, T, Vp, 0);
    shape[8] = view(&q, TR_F32, be->device, 2, B, T, 0, 0);
    void *mem;
    int rc = acts_malloc(m, &mem, (size_t)((char *)q - (char *)NULL), "head activations");
    if (rc < 0)
        return rc;
    h->mem = mem;
    tr_tensor *dst[9] = {&h->inputs, &h->targets, &h->encoded, &h->lnf, &h->lnf_mean,
                         &h->lnf_rstd, &h->logits, &h->probs, &h->losses};
    for (int i = 0; i < 9; i++) {
        *dst[i] = shape[i];
        dst[i]->data = (char *)mem + ((char *)shape[i].data - (char *)NULL);
    }
    be->copy_h2d(be, h->inputs.data, inputs, N * sizeof(int32_t), 0);
    if (targets)
        be->copy_h2d(be, h->targets.data, targets, N * sizeof(int32_t), 0);

    be->encoder_forward(be, &h->encoded, &h->inputs, &m->params.wte, &m->params.wpe, B, T, C);
    const tr_tensor *x = &h->encoded;
    for (int l = 0; l < c->n_layers; l++) {
        if ((rc = tr_gpt_block_forward(m, l, x)) < 0)
            return rc;
        if (!need_grad && l > 0) /* eval: block l-1 is spent once block l has read it */
            release_block(m, l - 1);
        x = &m->blocks[l].res3;
    }
    tr_gpt_params lp_params; /* the LM head reads wte in low precision under AMP */
    const tr_tensor *wte = &m->params.wte;
    if (m->amp != TR_F32) {
        point_params_as(&lp_params, m->params_lp.data, lp, be->device, c);
        wte = &lp_params.wte;
    }
    be->layernorm_forward(be, &h->lnf, &h->lnf_mean, &h->lnf_rstd, x, &m->params.lnfw, &m->params.lnfb, N, C);
    be->matmul_forward(be, &h->logits, &h->lnf, wte, NULL, N, C, Vp);
    if (targets) {
        if (fused_loss)
            be->crossentropy_fused_forward(be, &h->losses, &h->logits, &h->targets,
                                           need_grad ? m->dloss / N : 0.0f, N, V, Vp);
        else
            be->crossentropy_forward(be, &h->losses, &h->probs, &h->logits, &h->targets, N, V, Vp);
    }
    if (targets && loss) { /* reading the losses back waits for the device: only when asked */
        float *losses = malloc(N * sizeof *losses);
        if (!losses)
            return tr_error_set(TR_ENOMEM, "out of host memory");
        be->copy_d2h(be, losses, h->losses.data, N * sizeof *losses, 0);
        double s = 0;
        for (int i = 0; i < N; i++)
            s += losses[i];
        free(losses);
        m->mean_loss = (float)(s / N);
        *loss = m->mean_loss;
    }
    return TR_OK;
}

int tr_gpt_backward(tr_gpt *m)
{
    if (!m->need_grad || !m->head.mem)
        return tr_error_set(TR_EINVAL, "tr_gpt_backward: no forward with need_grad and targets before it");
    tr_backend *be = m->be;
    const tr_gpt_config *c = &m->cfg;
    int B = m->B, T = m->T, C = c->channels, Vp = c->padded_vocab_size, V = c->vocab_size, N = B * T;
    tr_dtype lp = m->amp;
    tr_gpt_head_acts *h = &m->head;
    bool fused_loss = m->fuse; /* the forward wrote dlogits over the logits */
    /* dlogits (N, Vp) unless fused, dlnf (N, C), and two (N, C) gradients of the residual stream */
    void *q = NULL;
    tr_tensor dlogits = fused_loss ? h->logits : view(&q, lp, be->device, 3, B, T, Vp, 0);
    tr_tensor dlnf = view(&q, lp, be->device, 3, B, T, C, 0);
    bool in_place = lp == TR_F32; /* the residual stream's gradient: one buffer (block_backward_in_place) */
    tr_tensor dres[2] = {view(&q, TR_F32, be->device, 3, B, T, C, 0),
                         view(&q, TR_F32, be->device, 3, B, T, in_place ? 0 : C, 0)};
    size_t n_bytes = (size_t)((char *)q - (char *)NULL);
    void *mem;
    int rc = acts_malloc(m, &mem, n_bytes, "head gradients");
    if (rc < 0)
        return rc;
    be->memset0(be, mem, n_bytes, 0);
    tr_tensor *grads[] = {&dlogits, &dlnf, &dres[0], &dres[1]};
    for (int i = fused_loss ? 1 : 0; i < 4; i++)
        grads[i]->data = (char *)mem + ((char *)grads[i]->data - (char *)NULL);
    bool add = !m->grads_none;
    tr_gpt_params lp_params;
    const tr_tensor *wte = &m->params.wte;
    if (m->amp != TR_F32) {
        point_params_as(&lp_params, m->params_lp.data, lp, be->device, c);
        wte = &lp_params.wte;
    }
    if (!fused_loss)
        be->crossentropy_backward(be, &dlogits, &h->probs, &h->targets, m->dloss / N, N, V, Vp);
    be->matmul_backward(be, &dlnf, &m->grads.wte, NULL, &dlogits, &h->lnf, wte, N, C, Vp, add);
    const tr_tensor *last = &m->blocks[c->n_layers - 1].res3;
    be->layernorm_backward(be, &dres[0], &m->grads.lnfw, &m->grads.lnfb, &dlnf, last, &m->params.lnfw,
                           &h->lnf_mean, &h->lnf_rstd, N, C, add);
    int cur = 0;
    for (int l = c->n_layers - 1; l >= 0; l--) {
        const tr_tensor *x = l > 0 ? &m->blocks[l - 1].res3 : &h->encoded;
        int next = in_place ? cur : 1 - cur;
        if (!in_place)
            be->memset0(be, dres[next].data, tr_tensor_bytes(&dres[next]), 0);
        if ((rc = tr_gpt_block_backward(m, l, x, &dres[cur], &dres[next])) < 0)
            break;
        acts_release(m, &m->blocks[l].out_mem); /* block l+1, its reader, is done */
        cur = next;
    }
    if (rc >= 0) {
        be->encoder_backward(be, &m->grads.wte, &m->grads.wpe, &dres[cur], &h->inputs, B, T, C, add);
        if (m->hooks.grads_ready)
            rc = m->hooks.grads_ready(m->hooks.ctx, m, -1);
    }
    acts_release(m, &mem);
    release_acts(m);
    m->need_grad = false;
    m->grads_none = false;
    return rc;
}
