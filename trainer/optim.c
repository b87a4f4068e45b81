/* optim.c: AdamW of optim.h, one backend call per parameter tensor. */
#include "optim.h"

#include "error.h"
#include "nvtx.h"

#include <string.h>

/* The moments take the parameters' layout: the views are offsets into m, v. */
static void point_like(tr_gpt_params *dst, const tr_gpt *model, void *base)
{
    for (int i = 0; i < TR_GPT_N_TENSORS; i++) {
        dst->all[i] = model->params.all[i];
        dst->all[i].data = (char *)base + ((char *)model->params.all[i].data - (char *)model->params_flat.data);
    }
}

int tr_adamw_init(tr_adamw *o, tr_gpt *model, float beta1, float beta2, float eps, float weight_decay)
{
    memset(o, 0, sizeof *o);
    o->beta1 = beta1;
    o->beta2 = beta2;
    o->eps = eps;
    o->weight_decay = weight_decay;
    size_t n_bytes = model->n_params * sizeof(float);
    void *m, *v;
    int rc = tr_alloc_malloc(model->alloc, &m, n_bytes, 0);
    if (rc < 0)
        return rc;
    if ((rc = tr_alloc_malloc(model->alloc, &v, n_bytes, 0)) < 0) {
        tr_alloc_release(model->alloc, m);
        return rc;
    }
    tr_alloc_name(model->alloc, m, "adamw m");
    tr_alloc_name(model->alloc, v, "adamw v");
    model->be->memset0(model->be, m, n_bytes, 0);
    model->be->memset0(model->be, v, n_bytes, 0);
    o->m = model->params_flat;
    o->m.data = m;
    o->v = model->params_flat;
    o->v.data = v;
    point_like(&o->m_views, model, m);
    point_like(&o->v_views, model, v);
    return TR_OK;
}

void tr_adamw_release(tr_adamw *o, tr_gpt *model)
{
    tr_alloc_release(model->alloc, o->m.data);
    tr_alloc_release(model->alloc, o->v.data);
    o->m.data = o->v.data = NULL;
}

void tr_adamw_step(tr_adamw *o, tr_gpt *model, float lr)
{
    tr_nvtx_push_static("optimizer");
    o->t++;
    for (int i = 0; i < TR_GPT_N_TENSORS; i++) {
        tr_tensor *p = &model->params.all[i];
        /* the last dimension of a decayed tensor is the width: matrices and embeddings */
        bool decay = i < 2 || p->n_dims == 3; /* wte, wpe and the (L, OC, C) matrices */
        model->be->adamw(model->be, p, &model->grads.all[i], &o->m_views.all[i], &o->v_views.all[i], lr,
                         o->beta1, o->beta2, o->eps, decay ? o->weight_decay : 0.0f, o->t);
    }
    tr_nvtx_pop();
}
