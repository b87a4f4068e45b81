/* gpt.h: a GPT-2 style decoder (llm.c's train_gpt2.c, on a backend): token
 * and position embeddings, L pre-LayerNorm blocks of causal self-attention
 * and a GELU MLP, a final LayerNorm and the LM head tied to the token
 * embedding. Forward and backward are explicit per block, so a block can be
 * recomputed (activation checkpointing). Parameters and gradients are one
 * flat buffer each, in the order of tr_gpt_params, so they can be sharded.
 * Activations come from the caching allocator: a block's are allocated by
 * its forward and released by its backward (or at once in eval). Its face
 * to the trainer is base (model.h), whose forward takes a tr_gpt_batch. */
#ifndef TR_GPT_H
#define TR_GPT_H

#include "alloc.h"
#include "backend.h"
#include "model.h"
#include "tensor.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct tr_gpt_config {
    int max_seq_len;       /* maxT */
    int vocab_size;        /* V */
    int padded_vocab_size; /* Vp: V rounded up to 64, GEMM-friendly */
    int n_layers;          /* L */
    int n_heads;           /* NH */
    int channels;          /* C */
} tr_gpt_config;

#define TR_GPT_N_TENSORS 16
typedef union tr_gpt_params {
    struct {
        tr_tensor wte;      /* (Vp, C) */
        tr_tensor wpe;      /* (maxT, C) */
        tr_tensor ln1w;     /* (L, C) */
        tr_tensor ln1b;     /* (L, C) */
        tr_tensor qkvw;     /* (L, 3*C, C) */
        tr_tensor qkvb;     /* (L, 3*C) */
        tr_tensor attprojw; /* (L, C, C) */
        tr_tensor attprojb; /* (L, C) */
        tr_tensor ln2w;     /* (L, C) */
        tr_tensor ln2b;     /* (L, C) */
        tr_tensor fcw;      /* (L, 4*C, C) */
        tr_tensor fcb;      /* (L, 4*C) */
        tr_tensor fcprojw;  /* (L, C, 4*C) */
        tr_tensor fcprojb;  /* (L, C) */
        tr_tensor lnfw;     /* (C) */
        tr_tensor lnfb;     /* (C) */
    };
    tr_tensor all[TR_GPT_N_TENSORS];
} tr_gpt_params;

/* The names of the tensors in checkpoints, in tr_gpt_params order. */
extern const char *const tr_gpt_tensor_names[TR_GPT_N_TENSORS];

/* One block's parameters (or gradients): views of its layer of the (L, ...)
 * tensors. The model reads block l's weights and writes its gradients only
 * through layers[l], so distributed training can point them elsewhere
 * (ZeRO-3 gathers a block's parameters just in time). */
typedef struct tr_gpt_layer {
    tr_tensor ln1w, ln1b;   /* (C) */
    tr_tensor qkvw;         /* (3*C, C) */
    tr_tensor qkvb;         /* (3*C) */
    tr_tensor attprojw;     /* (C, C) */
    tr_tensor attprojb;     /* (C) */
    tr_tensor ln2w, ln2b;   /* (C) */
    tr_tensor fcw;          /* (4*C, C) */
    tr_tensor fcb;          /* (4*C) */
    tr_tensor fcprojw;      /* (C, 4*C) */
    tr_tensor fcprojb;      /* (C) */
} tr_gpt_layer;

/* What one block keeps from its forward for its backward. Three
 * allocations: the output (the next block's input, kept by every
 * checkpointing mode), the cheap-to-recompute part (LayerNorm outputs and
 * GELU, dropped by selective checkpointing) and the rest (dropped too by
 * block checkpointing). Tensors marked lp are stored in the AMP dtype. */
typedef struct tr_gpt_block_acts {
    void *mem, *cheap_mem, *out_mem;
    tr_tensor ln1;      /* (B, T, C) lp, cheap */
    tr_tensor ln1_mean; /* (B, T) */
    tr_tensor ln1_rstd; /* (B, T) */
    tr_tensor qkv;      /* (B, T, 3*C) lp */
    tr_tensor atty;     /* (B, T, C) lp */
    tr_tensor att;      /* (B, NH, T, T) lp probabilities; fused attention: (B, NH, T) softmax statistics */
    tr_tensor attproj;  /* (B, T, C) lp */
    tr_tensor res2;     /* (B, T, C) */
    tr_tensor ln2;      /* (B, T, C) lp, cheap */
    tr_tensor ln2_mean; /* (B, T) */
    tr_tensor ln2_rstd; /* (B, T) */
    tr_tensor fch;      /* (B, T, 4*C) lp */
    tr_tensor fch_gelu; /* (B, T, 4*C) lp, cheap */
    tr_tensor fcproj;   /* (B, T, C) lp */
    tr_tensor res3;     /* (B, T, C): the block's output, out_mem */
} tr_gpt_block_acts;

/* Embedding, head and loss activations; one allocation. */
typedef struct tr_gpt_head_acts {
    void *mem;
    tr_tensor inputs;   /* (B, T) int32 */
    tr_tensor targets;  /* (B, T) int32 */
    tr_tensor encoded;  /* (B, T, C) */
    tr_tensor lnf;      /* (B, T, C) */
    tr_tensor lnf_mean; /* (B, T) */
    tr_tensor lnf_rstd; /* (B, T) */
    tr_tensor logits;   /* (B, T, Vp) */
    tr_tensor probs;    /* (B, T, Vp) */
    tr_tensor losses;   /* (B, T) */
} tr_gpt_head_acts;

/* Activation checkpointing: keep everything; keep only each block's output
 * and recompute the block in backward; recompute only LayerNorm and GELU
 * (llm.c's recompute). Gradients are the same bits in every mode. */
typedef enum tr_gpt_checkpoint {
    TR_CHECKPOINT_NONE, TR_CHECKPOINT_BLOCKS, TR_CHECKPOINT_SELECTIVE
} tr_gpt_checkpoint;

typedef enum tr_gpt_phase { TR_PHASE_FORWARD, TR_PHASE_BACKWARD } tr_gpt_phase;

typedef struct tr_gpt tr_gpt;
/* What distributed training (dist.c) plugs in; all optional. */
typedef struct tr_gpt_hooks {
    void *ctx;
    /* Block l's parameter gradients are final for this backward; called for
     * l = L-1 .. 0, then with l = -1 for wte, wpe and the final LayerNorm. */
    int (*grads_ready)(void *ctx, tr_gpt *m, int l);
    /* Before block l runs (begin = true) and after (begin = false), in the
     * forward and in the backward (recomputation included). */
    int (*block)(void *ctx, tr_gpt *m, int l, tr_gpt_phase phase, bool begin);
} tr_gpt_hooks;

struct tr_gpt {
    tr_model base;              /* the trainer's view (model.h); its slices are the tensors of params */
    tr_param_slice slices[TR_GPT_N_TENSORS];
    tr_gpt_config cfg;
    tr_backend *be;
    tr_alloc *alloc;
    size_t n_params;            /* elements in each flat buffer */
    tr_tensor params_flat;      /* (n_params) fp32: the master weights */
    tr_tensor grads_flat;       /* (n_params) fp32 */
    tr_gpt_params params, grads; /* views into the flat buffers */
    tr_gpt_layer *layer_params, *layer_grads; /* (L): views of params, grads */

    /* how it runs (set before a forward) */
    tr_dtype amp;               /* TR_F32 (off), TR_BF16 or TR_F16: autocast's low precision */
    tr_gpt_checkpoint checkpoint;
    bool fuse;                  /* fused bias+GELU, residual+LayerNorm, softmax+cross-entropy */
    float dloss;                /* d(objective)/d(mean loss): the loss scale over the micro-batches */
    bool grads_none;            /* set_to_none: the next backward writes the gradients, not adds */
    tr_gpt_hooks hooks;

    tr_tensor params_lp;        /* (n_params) amp dtype: the weights cast once per step; data NULL if off */
    tr_gpt_layer *layer_params_lp; /* (L) views of params_lp */
    bool params_lp_stale;       /* the master weights changed since the cast */

    int B, T;                   /* shape of the batch in flight */
    bool need_grad;             /* the forward kept activations for a backward */
    tr_gpt_head_acts head;
    tr_gpt_block_acts *blocks;  /* (L) */
    float mean_loss;
    size_t peak_activation_bytes; /* the most activation memory held at once (reported) */
    size_t activation_bytes;
};

/* A micro-batch of B x T tokens, what base's forward takes. */
typedef struct tr_gpt_batch {
    const int32_t *inputs, *targets;
    int B, T;
} tr_gpt_batch;

/* Fills Vp from V. */
void tr_gpt_config_finish(tr_gpt_config *c);
/* Checks a configuration; TR_EINVAL with a message naming the bad field. */
int tr_gpt_config_check(const tr_gpt_config *c);

/* Allocates parameters and gradients and initializes the weights from seed
 * (GPT-2's scheme: N(0, 0.02), residual projections scaled by 1/sqrt(2L)). */
int tr_gpt_new(tr_gpt **out, const tr_gpt_config *cfg, tr_backend *be, tr_alloc *alloc, uint64_t seed);
void tr_gpt_free(tr_gpt *m);

/* Runs the model on inputs (B, T) and, if targets is not NULL, sets *loss to
 * the mean cross-entropy (loss NULL: the losses are not read back, so a GPU
 * backend does not wait for the forward to finish). need_grad keeps
 * activations for tr_gpt_backward; without it each block's activations are
 * released as soon as the next block has run. */
int tr_gpt_forward(tr_gpt *m, const int32_t *inputs, const int32_t *targets, int B, int T, bool need_grad,
                   float *loss);
/* Adds d(mean loss)/d(params) into the gradients and releases the activations. */
int tr_gpt_backward(tr_gpt *m);
/* set_to_none: the next backward writes the gradients instead of adding
 * to them, so no memset pass is needed. */
void tr_gpt_zero_grad(tr_gpt *m);
/* Points the parameter views (params, layer_params) at a flat buffer of
 * n_params (the EMA swaps its weights in this way). */
void tr_gpt_point_params(tr_gpt *m, void *flat);
/* Sets the AMP dtype (TR_F32 turns it off); allocates the low-precision
 * copy of the weights. */
int tr_gpt_set_amp(tr_gpt *m, tr_dtype amp);

/* One block, explicit so it can be recomputed: x is the block's input. */
int tr_gpt_block_forward(tr_gpt *m, int l, const tr_tensor *x);
/* dout: gradient of the block's output; din: gradient of x, accumulated (+=).
 * din may be dout itself (fp32 only): the gradient is then updated in place. */
int tr_gpt_block_backward(tr_gpt *m, int l, const tr_tensor *x, const tr_tensor *dout, tr_tensor *din);

#endif
