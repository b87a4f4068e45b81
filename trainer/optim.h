/* optim.h: AdamW over a model's flat parameter buffer. The moments m and v
 * are flat buffers in the same order, so a rank can own a shard (ZeRO).
 * Weight decay applies to matrices and embeddings, not to biases and
 * LayerNorm gains (GPT-2/nanoGPT practice). */
#ifndef TR_OPTIM_H
#define TR_OPTIM_H

#include "gpt.h"

typedef struct tr_adamw {
    float beta1, beta2, eps, weight_decay;
    int t;          /* steps taken */
    tr_tensor m;    /* (n_params) */
    tr_tensor v;    /* (n_params) */
    tr_gpt_params m_views, v_views;
} tr_adamw;

int tr_adamw_init(tr_adamw *o, tr_gpt *model, float beta1, float beta2, float eps, float weight_decay);
void tr_adamw_release(tr_adamw *o, tr_gpt *model);
/* One step with learning rate lr; NVTX range "optimizer". */
void tr_adamw_step(tr_adamw *o, tr_gpt *model, float lr);

#endif
