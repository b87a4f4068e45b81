/* gpt.h: a GPT-2 style decoder (llm.c's train_gpt2.c, on a backend): token
 * and position embeddings, L pre-LayerNorm blocks of causal self-attention
 * and a GELU MLP, a final LayerNorm and the LM head tied to the token
 * embedding. Forward and backward are explicit per block, so a block can be
 * recomputed (activation checkpointing). Parameters and gradients are one
 * flat buffer each, in the order of tr_gpt_params, so they can be sharded.
 * Activations come from the caching allocator: a block's are allocated by
 * its forward and released by its backward (or at once in eval). */
#ifndef TR_GPT_H
#define TR_GPT_H

#include "alloc.h"
#include "backend.h"
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

/* What one block keeps from its forward for its backward; one allocation. */
typedef struct tr_gpt_block_acts {
    void *mem;
    tr_tensor ln1;      /* (B, T, C) */
    tr_tensor ln1_mean; /* (B, T) */
    tr_tensor ln1_rstd; /* (B, T) */
    tr_tensor qkv;      /* (B, T, 3*C) */
    tr_tensor atty;     /* (B, T, C) */
    tr_tensor att;      /* (B, NH, T, T) */
    tr_tensor attproj;  /* (B, T, C) */
    tr_tensor res2;     /* (B, T, C) */
    tr_tensor ln2;      /* (B, T, C) */
    tr_tensor ln2_mean; /* (B, T) */
    tr_tensor ln2_rstd; /* (B, T) */
    tr_tensor fch;      /* (B, T, 4*C) */
    tr_tensor fch_gelu; /* (B, T, 4*C) */
    tr_tensor fcproj;   /* (B, T, C) */
    tr_tensor res3;     /* (B, T, C): the block's output */
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

typedef struct tr_gpt {
    tr_gpt_config cfg;
    tr_backend *be;
    tr_alloc *alloc;
    size_t n_params;            /* elements in each flat buffer */
    tr_tensor params_flat;      /* (n_params) */
    tr_tensor grads_flat;       /* (n_params) */
    tr_gpt_params params, grads; /* views into the flat buffers */
    int B, T;                   /* shape of the batch in flight */
    bool need_grad;             /* the forward kept activations for a backward */
    tr_gpt_head_acts head;
    tr_gpt_block_acts *blocks;  /* (L) */
    float mean_loss;
} tr_gpt;

/* Fills Vp from V. */
void tr_gpt_config_finish(tr_gpt_config *c);
/* Checks a configuration; TR_EINVAL with a message naming the bad field. */
int tr_gpt_config_check(const tr_gpt_config *c);

/* Allocates parameters and gradients and initializes the weights from seed
 * (GPT-2's scheme: N(0, 0.02), residual projections scaled by 1/sqrt(2L)). */
int tr_gpt_new(tr_gpt **out, const tr_gpt_config *cfg, tr_backend *be, tr_alloc *alloc, uint64_t seed);
void tr_gpt_free(tr_gpt *m);

/* Runs the model on inputs (B, T) and, if targets is not NULL, sets *loss to
 * the mean cross-entropy. need_grad keeps activations for tr_gpt_backward;
 * without it each block's activations are released as soon as the next
 * block has run. */
int tr_gpt_forward(tr_gpt *m, const int32_t *inputs, const int32_t *targets, int B, int T, bool need_grad,
                   float *loss);
/* Adds d(mean loss)/d(params) into the gradients and releases the activations. */
int tr_gpt_backward(tr_gpt *m);
void tr_gpt_zero_grad(tr_gpt *m);

/* One block, explicit so it can be recomputed: x is the block's input. */
int tr_gpt_block_forward(tr_gpt *m, int l, const tr_tensor *x);
/* dout: gradient of the block's output; din: gradient of x, accumulated (+=). */
int tr_gpt_block_backward(tr_gpt *m, int l, const tr_tensor *x, const tr_tensor *dout, tr_tensor *din);

#endif
