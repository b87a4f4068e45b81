/* model.h: what the training step (train.h) and the optimizers (optim.h)
 * need of a model, whichever it is (the GPT of gpt.h, the CNNs of
 * model_cnn.h): a forward and a backward per micro-batch, a zero-grad,
 * the flat fp32 parameters and gradients, the running statistics an EMA
 * averages too, and the parameter tensors' slices of the flat buffers
 * (which ones weight decay applies to). */
#ifndef TR_MODEL_H
#define TR_MODEL_H

#include "tensor.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct tr_model tr_model;

typedef struct tr_model_ops {
    /* The training forward of a micro-batch (what the step's batches gave:
     * the model's own kind), the mean loss's gradient times dloss; *loss
     * gets the micro-batch's mean loss (loss NULL: not read back). */
    int (*forward)(tr_model *m, const void *batch, float dloss, double *loss);
    /* The backward of micro-batch k of the step's forward. */
    int (*backward)(tr_model *m, int k);
    /* After a step: the next backward writes the gradients, not adds. */
    void (*zero_grad)(tr_model *m);
    /* The parameters changed in place (an update, a checkpoint loaded). */
    void (*params_changed)(tr_model *m);
    /* The parameters and statistics are now the buffers params and stats
     * (the EMA swaps its averages in this way); stats NULL without any. */
    void (*point_params)(tr_model *m, void *params, void *stats);
} tr_model_ops;

enum { TR_MAX_SLICES = 32 };

/* [lo, hi) of the flat buffers is one parameter tensor. */
typedef struct tr_param_slice {
    size_t lo, hi;
    bool decays; /* weight decay applies (matrices, embeddings, conv weights) */
} tr_param_slice;

struct tr_model {
    const tr_model_ops *ops;
    struct tr_backend *be;     /* backend.h; declared only, so the model's face stays low in the tree */
    struct tr_alloc *alloc;
    size_t n_params;
    tr_tensor *params, *grads; /* the model's flat (n_params) fp32 buffers: whatever they point at now */
    tr_tensor *stats;          /* running statistics the EMA averages too (BatchNorm's); NULL: none */
    const char *ema_stats_name; /* the allocator's name for the EMA of stats */
    const tr_param_slice *slices; /* in order: the unfused optimizer's calls, the fused one's ranges */
    int n_slices;              /* at most TR_MAX_SLICES */
    bool check_one_pass;       /* the gradient check is one pass over the range, fused or not */
};

#endif
