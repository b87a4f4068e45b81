/* model_gpt.c: the GPT of gpt.h, forward and backward on a backend. The
 * shapes follow llm.c's train_gpt2.c; the memory is the caching allocator's.
 * It does not know where batches come from or how weights are updated. */
#include "gpt.h"

#include "error.h"
#include "nvtx.h"
#include "rng.h"

#include <math.h>
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

static void point_params(tr_gpt_params *p, void *mem, tr_device dev, const tr_gpt_config *c)
{
    int64_t L = c->n_layers, C = c->channels;
    void *q = mem;
    p->wte = view(&q, TR_F32, dev, 2, c->padded_vocab_size, C, 0, 0);
    p->wpe = view(&q, TR_F32, dev, 2, c->max_seq_len, C, 0, 0);
    p->ln1w = view(&q, TR_F32, dev, 2, L, C, 0, 0);
    p->ln1b = view(&q, TR_F32, dev, 2, L, C, 0, 0);
    p->qkvw = view(&q, TR_F32, dev, 3, L, 3 * C, C, 0);
    p->qkvb = view(&q, TR_F32, dev, 2, L, 3 * C, 0, 0);
    p->attprojw = view(&q, TR_F32, dev, 3, L, C, C, 0);
    p->attprojb = view(&q, TR_F32, dev, 2, L, C, 0, 0);
    p->ln2w = view(&q, TR_F32, dev, 2, L, C, 0, 0);
    p->ln2b = view(&q, TR_F32, dev, 2, L, C, 0, 0);
    p->fcw = view(&q, TR_F32, dev, 3, L, 4 * C, C, 0);
    p->fcb = view(&q, TR_F32, dev, 2, L, 4 * C, 0, 0);
    p->fcprojw = view(&q, TR_F32, dev, 3, L, C, 4 * C, 0);
    p->fcprojb = view(&q, TR_F32, dev, 2, L, C, 0, 0);
    p->lnfw = view(&q, TR_F32, dev, 1, C, 0, 0, 0);
    p->lnfb = view(&q, TR_F32, dev, 1, C, 0, 0, 0);
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
    m->blocks = calloc(cfg->n_layers, sizeof *m->blocks);
    if (!m->blocks) {
        rc = tr_error_set(TR_ENOMEM, "out of host memory");
        goto cleanup;
    }
    point_params(&m->params, NULL, be->device, cfg);
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
    point_params(&m->params, pmem, be->device, cfg);
    point_params(&m->grads, gmem, be->device, cfg);

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

static void release_acts(tr_gpt *m)
{
    for (int l = 0; l < m->cfg.n_layers; l++) {
        tr_alloc_release(m->alloc, m->blocks[l].mem);
        m->blocks[l].mem = NULL;
    }
    tr_alloc_release(m->alloc, m->head.mem);
    m->head.mem = NULL;
}

void tr_gpt_free(tr_gpt *m)
{
    if (!m)
        return;
    if (m->blocks)
        release_acts(m);
    tr_alloc_release(m->alloc, m->params_flat.data);
    tr_alloc_release(m->alloc, m->grads_flat.data);
    free(m->blocks);
    free(m);
}

void tr_gpt_zero_grad(tr_gpt *m) { m->be->memset0(m->be, m->grads_flat.data, m->n_params * sizeof(float), 0); }

static void point_block(tr_gpt_block_acts *a, void *mem, tr_device dev, int B, int T, int C, int NH)
{
    void *q = mem;
    a->ln1 = view(&q, TR_F32, dev, 3, B, T, C, 0);
    a->ln1_mean = view(&q, TR_F32, dev, 2, B, T, 0, 0);
    a->ln1_rstd = view(&q, TR_F32, dev, 2, B, T, 0, 0);
    a->qkv = view(&q, TR_F32, dev, 3, B, T, 3 * C, 0);
    a->atty = view(&q, TR_F32, dev, 3, B, T, C, 0);
    a->att = view(&q, TR_F32, dev, 4, B, NH, T, T);
    a->attproj = view(&q, TR_F32, dev, 3, B, T, C, 0);
    a->res2 = view(&q, TR_F32, dev, 3, B, T, C, 0);
    a->ln2 = view(&q, TR_F32, dev, 3, B, T, C, 0);
    a->ln2_mean = view(&q, TR_F32, dev, 2, B, T, 0, 0);
    a->ln2_rstd = view(&q, TR_F32, dev, 2, B, T, 0, 0);
    a->fch = view(&q, TR_F32, dev, 3, B, T, 4 * C, 0);
    a->fch_gelu = view(&q, TR_F32, dev, 3, B, T, 4 * C, 0);
    a->fcproj = view(&q, TR_F32, dev, 3, B, T, C, 0);
    a->res3 = view(&q, TR_F32, dev, 3, B, T, C, 0);
    a->mem = mem;
}

static size_t block_bytes(int B, int T, int C, int NH)
{
    tr_gpt_block_acts a;
    point_block(&a, NULL, TR_CPU, B, T, C, NH);
    return (size_t)((char *)a.res3.data - (char *)NULL) + tr_tensor_bytes(&a.res3);
}

int tr_gpt_block_forward(tr_gpt *m, int l, const tr_tensor *x)
{
    tr_backend *be = m->be;
    int B = m->B, T = m->T, C = m->cfg.channels, NH = m->cfg.n_heads, N = B * T;
    tr_gpt_block_acts *a = &m->blocks[l];
    void *mem;
    int rc = tr_alloc_malloc(m->alloc, &mem, block_bytes(B, T, C, NH), 0);
    if (rc < 0)
        return rc;
    tr_alloc_name(m->alloc, mem, "block activations");
    point_block(a, mem, be->device, B, T, C, NH);
    tr_gpt_params *p = &m->params;
    tr_tensor ln1w = layer(&p->ln1w, l), ln1b = layer(&p->ln1b, l), qkvw = layer(&p->qkvw, l),
              qkvb = layer(&p->qkvb, l), apw = layer(&p->attprojw, l), apb = layer(&p->attprojb, l),
              ln2w = layer(&p->ln2w, l), ln2b = layer(&p->ln2b, l), fcw = layer(&p->fcw, l),
              fcb = layer(&p->fcb, l), fpw = layer(&p->fcprojw, l), fpb = layer(&p->fcprojb, l);
    be->layernorm_forward(be, &a->ln1, &a->ln1_mean, &a->ln1_rstd, x, &ln1w, &ln1b, N, C);
    be->matmul_forward(be, &a->qkv, &a->ln1, &qkvw, &qkvb, N, C, 3 * C);
    be->attention_forward(be, &a->atty, &a->att, &a->qkv, B, T, C, NH);
    be->matmul_forward(be, &a->attproj, &a->atty, &apw, &apb, N, C, C);
    be->residual_forward(be, &a->res2, x, &a->attproj);
    be->layernorm_forward(be, &a->ln2, &a->ln2_mean, &a->ln2_rstd, &a->res2, &ln2w, &ln2b, N, C);
    be->matmul_forward(be, &a->fch, &a->ln2, &fcw, &fcb, N, C, 4 * C);
    be->gelu_forward(be, &a->fch_gelu, &a->fch);
    be->matmul_forward(be, &a->fcproj, &a->fch_gelu, &fpw, &fpb, N, 4 * C, C);
    be->residual_forward(be, &a->res3, &a->res2, &a->fcproj);
    return TR_OK;
}

/* Gradients of a block's activations, scratch for its backward; one allocation. */
typedef struct block_grads {
    tr_tensor dln1, dqkv, datty, dattproj, dres2, dln2, dfch, dfch_gelu, dfcproj, scratch;
} block_grads;

static void point_block_grads(block_grads *g, void *mem, tr_device dev, int B, int T, int C, int NH)
{
    void *q = mem;
    g->dln1 = view(&q, TR_F32, dev, 3, B, T, C, 0);
    g->dqkv = view(&q, TR_F32, dev, 3, B, T, 3 * C, 0);
    g->datty = view(&q, TR_F32, dev, 3, B, T, C, 0);
    g->dattproj = view(&q, TR_F32, dev, 3, B, T, C, 0);
    g->dres2 = view(&q, TR_F32, dev, 3, B, T, C, 0);
    g->dln2 = view(&q, TR_F32, dev, 3, B, T, C, 0);
    g->dfch = view(&q, TR_F32, dev, 3, B, T, 4 * C, 0);
    g->dfch_gelu = view(&q, TR_F32, dev, 3, B, T, 4 * C, 0);
    g->dfcproj = view(&q, TR_F32, dev, 3, B, T, C, 0);
    g->scratch = view(&q, TR_F32, dev, 4, B, NH, T, T);
}

int tr_gpt_block_backward(tr_gpt *m, int l, const tr_tensor *x, const tr_tensor *dout, tr_tensor *din)
{
    tr_backend *be = m->be;
    int B = m->B, T = m->T, C = m->cfg.channels, NH = m->cfg.n_heads, N = B * T;
    tr_gpt_block_acts *a = &m->blocks[l];
    block_grads g;
    point_block_grads(&g, NULL, be->device, B, T, C, NH);
    size_t n_bytes = (size_t)((char *)g.scratch.data - (char *)NULL) + tr_tensor_bytes(&g.scratch);
    void *mem;
    int rc = tr_alloc_malloc(m->alloc, &mem, n_bytes, 0);
    if (rc < 0)
        return rc;
    tr_alloc_name(m->alloc, mem, "block gradients");
    point_block_grads(&g, mem, be->device, B, T, C, NH);
    be->memset0(be, mem, n_bytes, 0);
    tr_gpt_params *p = &m->params, *d = &m->grads;
    tr_tensor ln1w = layer(&p->ln1w, l), qkvw = layer(&p->qkvw, l), apw = layer(&p->attprojw, l),
              ln2w = layer(&p->ln2w, l), fcw = layer(&p->fcw, l), fpw = layer(&p->fcprojw, l);
    tr_tensor dln1w = layer(&d->ln1w, l), dln1b = layer(&d->ln1b, l), dqkvw = layer(&d->qkvw, l),
              dqkvb = layer(&d->qkvb, l), dapw = layer(&d->attprojw, l), dapb = layer(&d->attprojb, l),
              dln2w = layer(&d->ln2w, l), dln2b = layer(&d->ln2b, l), dfcw = layer(&d->fcw, l),
              dfcb = layer(&d->fcb, l), dfpw = layer(&d->fcprojw, l), dfpb = layer(&d->fcprojb, l);
    be->residual_backward(be, &g.dres2, &g.dfcproj, dout);
    be->matmul_backward(be, &g.dfch_gelu, &dfpw, &dfpb, &g.dfcproj, &a->fch_gelu, &fpw, N, 4 * C, C);
    be->gelu_backward(be, &g.dfch, &a->fch, &g.dfch_gelu);
    be->matmul_backward(be, &g.dln2, &dfcw, &dfcb, &g.dfch, &a->ln2, &fcw, N, C, 4 * C);
    be->layernorm_backward(be, &g.dres2, &dln2w, &dln2b, &g.dln2, &a->res2, &ln2w, &a->ln2_mean, &a->ln2_rstd, N, C);
    be->residual_backward(be, din, &g.dattproj, &g.dres2);
    be->matmul_backward(be, &g.datty, &dapw, &dapb, &g.dattproj, &a->atty, &apw, N, C, C);
    be->attention_backward(be, &g.dqkv, &g.scratch, &g.datty, &a->qkv, &a->att, B, T, C, NH);
    be->matmul_backward(be, &g.dln1, &dqkvw, &dqkvb, &g.dqkv, &a->ln1, &qkvw, N, C, 3 * C);
    be->layernorm_backward(be, din, &dln1w, &dln1b, &g.dln1, x, &ln1w, &a->ln1_mean, &a->ln1_rstd, N, C);
    tr_alloc_release(m->alloc, mem);
    return TR_OK;
}

int tr_gpt_forward(tr_gpt *m, const int32_t *inputs, const int32_t *targets, int B, int T, bool need_grad,
                   float *loss)
{
    tr_backend *be = m->be;
    const tr_gpt_config *c = &m->cfg;
    int C = c->channels, Vp = c->padded_vocab_size, V = c->vocab_size, N = B * T;
    if (B < 1 || T < 1 || T > c->max_seq_len)
        return tr_error_set(TR_EINVAL, "batch %dx%d does not fit the model (context %d)", B, T, c->max_seq_len);
    for (int i = 0; i < N; i++)
        if (inputs[i] < 0 || inputs[i] >= V || (targets && (targets[i] < 0 || targets[i] >= V)))
            return tr_error_set(TR_EINVAL, "token %d at %d is outside the vocabulary (%d)",
                                inputs[i] < 0 || inputs[i] >= V ? inputs[i] : targets[i], i, V);
    release_acts(m); /* a forward without its backward (eval) leaves nothing behind */
    m->B = B;
    m->T = T;
    m->need_grad = need_grad;
    tr_gpt_head_acts *h = &m->head;
    tr_tensor shape[9];
    void *q = NULL;
    shape[0] = view(&q, TR_I32, be->device, 2, B, T, 0, 0);
    shape[1] = view(&q, TR_I32, be->device, 2, B, T, 0, 0);
    shape[2] = view(&q, TR_F32, be->device, 3, B, T, C, 0);
    shape[3] = view(&q, TR_F32, be->device, 3, B, T, C, 0);
    shape[4] = view(&q, TR_F32, be->device, 2, B, T, 0, 0);
    shape[5] = view(&q, TR_F32, be->device, 2, B, T, 0, 0);
    shape[6] = view(&q, TR_F32, be->device, 3, B, T, Vp, 0);
    shape[7] = view(&q, TR_F32, be->device, 3, B, T, Vp, 0);
    shape[8] = view(&q, TR_F32, be->device, 2, B, T, 0, 0);
    void *mem;
    int rc = tr_alloc_malloc(m->alloc, &mem, (size_t)((char *)q - (char *)NULL), 0);
    if (rc < 0)
        return rc;
    tr_alloc_name(m->alloc, mem, "head activations");
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
        if (!need_grad && l > 0) { /* eval: block l-1 is spent once block l has read it */
            tr_alloc_release(m->alloc, m->blocks[l - 1].mem);
            m->blocks[l - 1].mem = NULL;
        }
        x = &m->blocks[l].res3;
    }
    be->layernorm_forward(be, &h->lnf, &h->lnf_mean, &h->lnf_rstd, x, &m->params.lnfw, &m->params.lnfb, N, C);
    be->matmul_forward(be, &h->logits, &h->lnf, &m->params.wte, NULL, N, C, Vp);
    if (targets) {
        be->crossentropy_forward(be, &h->losses, &h->probs, &h->logits, &h->targets, N, V, Vp);
        float *losses = malloc(N * sizeof *losses);
        if (!losses)
            return tr_error_set(TR_ENOMEM, "out of host memory");
        be->copy_d2h(be, losses, h->losses.data, N * sizeof *losses, 0);
        double s = 0;
        for (int i = 0; i < N; i++)
            s += losses[i];
        free(losses);
        m->mean_loss = (float)(s / N);
        if (loss)
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
    tr_gpt_head_acts *h = &m->head;
    /* dlogits (N, Vp), dlnf (N, C), and two (N, C) gradients of the residual stream */
    size_t n_bytes = (size_t)N * (Vp + 3 * C) * sizeof(float);
    void *mem;
    int rc = tr_alloc_malloc(m->alloc, &mem, n_bytes, 0);
    if (rc < 0)
        return rc;
    tr_alloc_name(m->alloc, mem, "head gradients");
    be->memset0(be, mem, n_bytes, 0);
    void *q = mem;
    tr_tensor dlogits = view(&q, TR_F32, be->device, 3, B, T, Vp, 0);
    tr_tensor dlnf = view(&q, TR_F32, be->device, 3, B, T, C, 0);
    tr_tensor dres[2] = {view(&q, TR_F32, be->device, 3, B, T, C, 0), view(&q, TR_F32, be->device, 3, B, T, C, 0)};
    be->crossentropy_backward(be, &dlogits, &h->probs, &h->targets, 1.0f / N, N, V, Vp);
    be->matmul_backward(be, &dlnf, &m->grads.wte, NULL, &dlogits, &h->lnf, &m->params.wte, N, C, Vp);
    const tr_tensor *last = &m->blocks[c->n_layers - 1].res3;
    be->layernorm_backward(be, &dres[0], &m->grads.lnfw, &m->grads.lnfb, &dlnf, last, &m->params.lnfw,
                           &h->lnf_mean, &h->lnf_rstd, N, C);
    int cur = 0;
    for (int l = c->n_layers - 1; l >= 0; l--) {
        const tr_tensor *x = l > 0 ? &m->blocks[l - 1].res3 : &h->encoded;
        be->memset0(be, dres[1 - cur].data, tr_tensor_bytes(&dres[1 - cur]), 0);
        if ((rc = tr_gpt_block_backward(m, l, x, &dres[cur], &dres[1 - cur])) < 0)
            break;
        if (l + 1 < c->n_layers) { /* block l+1's input was block l's output: now spent */
            tr_alloc_release(m->alloc, m->blocks[l + 1].mem);
            m->blocks[l + 1].mem = NULL;
        }
        cur = 1 - cur;
    }
    if (rc >= 0)
        be->encoder_backward(be, &m->grads.wte, &m->grads.wpe, &dres[cur], &h->inputs, B, T, C);
    tr_alloc_release(m->alloc, mem);
    release_acts(m);
    m->need_grad = false;
    return rc;
}
