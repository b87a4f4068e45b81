/* model_cnn.h: convolutional image classifiers on the backend's ops: the
 * PyTorch guides' net (two conv layers, max pooling, dropout, two linear
 * layers: "cnn-guide") and a small ResNet (BatchNorm, three residual
 * blocks, global average pooling: "cnn-resnet"). Layers are a list in
 * topological order, each reading the output of earlier ones, so residual
 * connections are layers too. Parameters and their gradients are one flat
 * buffer each (weights first, then biases and BatchNorm's affine
 * parameters: weight decay is one range); BatchNorm's running statistics a
 * third. A forward allocates the batch's activations from the caching
 * allocator (region "cnn activations") and the backward releases them, so
 * the allocator sees each step rise and fall. Activations in cfg.act: fp32,
 * or bf16/fp16 under --amp (autocast's choice for every CNN op: the convs
 * and linear layers read a low-precision copy of the weights, made once per
 * step, BatchNorm keeps fp32 statistics and parameters, the loss is fp32);
 * parameters, their gradients and BatchNorm's statistics are always fp32.
 * Activations NCHW, or channels-last NHWC (cfg.nhwc: the backend's cnn_nhwc ops), where a linear
 * layer reads its input transposed to PyTorch's C,H,W flatten order and
 * dropout's mask is drawn in that order too, so both layouts compute the
 * same function of the same parameters (weights stay (OC,C,K,K)). Where the
 * backend has them, BatchNorm and the residual add run fused with the ReLU
 * that alone reads them: one pass and one buffer fewer each.
 * With cfg.checkpoint_blocks (cnn-resnet's --checkpoint blocks) the layers
 * inside each residual block keep their outputs and gradients in one
 * scratch area that every block reuses: the backward runs a block's forward
 * again (same batch statistics, running averages left alone) just before
 * its residual add, so the gradients are bitwise those without it.
 * With cfg.fuse (--fuse on) the classifier's softmax and cross-entropy run
 * as one op in the forward, which writes the loss's gradient over the
 * logits and keeps no probabilities.
 * It does not read data or print. */
#ifndef TR_MODEL_CNN_H
#define TR_MODEL_CNN_H

#include "alloc.h"
#include "backend.h"
#include "rng.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum tr_cnn_kind {
    TR_CNN_CONV,
    TR_CNN_BN,
    TR_CNN_RELU,
    TR_CNN_MAXPOOL,
    TR_CNN_AVGPOOL,
    TR_CNN_DROPOUT,
    TR_CNN_LINEAR, /* on the flattened (C*H*W) input */
    TR_CNN_ADD,    /* the residual connection: in + in2 */
} tr_cnn_kind;

typedef struct tr_cnn_layer {
    tr_cnn_kind kind;
    int in, in2;             /* the layers read (-1: the images); in2 for ADD only */
    int C, H, W;             /* the input's shape */
    int OC, OH, OW;          /* the output's */
    int K, stride, pad;      /* conv and pooling */
    bool bias;               /* conv, linear */
    float p;                 /* dropout's probability */
    size_t w_off, b_off;     /* in the flat parameters: weight (OC,C,K,K) or (OC,C*H*W) or BN (OC); bias (OC) */
    size_t rs_off;           /* BN: running mean (OC) then running var (OC) in the statistics buffer */
    size_t act_off, aux_off; /* per image, in bytes: the output (act dtype); maxpool: idx (int32); dropout: mask
                              * (fp32); NHWC linear: its input transposed to (C,H,W) (act dtype) */
    size_t bn_off;           /* BN: its batch's mean then rstd (fp32), in floats in the BN statistics area */
    size_t n_aux;            /* elements of aux per image */
    bool relu_fused;         /* BN, ADD: the ReLU after it runs in the same op, which writes the ReLU's output (the
                              * two layers share one buffer); RELU: run by the layer before */
    bool relu_in_conv;       /* CONV: its op also applies the ReLU after it, writing the ReLU's output (its own
                              * is not written); RELU: its forward done so, its backward as usual */
    bool in_block;           /* --checkpoint blocks: inside a residual block, its output in the scratch area */
    int block_first;         /* ADD of a recomputed block: the block's first layer (its last is this one - 1);
                              * -1 otherwise */
} tr_cnn_layer;

enum { TR_CNN_MAX_LAYERS = 64 };

typedef struct tr_cnn_config {
    const char *name;        /* "cnn-guide" or "cnn-resnet" */
    bool bias_before_bn;     /* a conv that BatchNorm follows keeps its bias (PyTorch's default) */
    bool nhwc;               /* activations channels-last, (B,H,W,C) (--layout nhwc); else NCHW */
    bool checkpoint_blocks;  /* recompute the residual blocks' insides in the backward (--checkpoint blocks) */
    tr_dtype act;            /* the activations' dtype: TR_F32, or TR_BF16/TR_F16 (--amp) */
    bool fuse;               /* softmax and cross-entropy fused into the forward (--fuse on) */
    int C, H, W, n_classes;  /* the images: 1, 28, 28 and 10 for Fashion-MNIST */
    float bn_momentum, bn_eps;
} tr_cnn_config;

typedef struct tr_cnn {
    tr_cnn_config cfg;
    tr_backend *be;
    tr_alloc *alloc;
    int n_layers;
    tr_cnn_layer layers[TR_CNN_MAX_LAYERS];
    size_t n_params, n_decay;  /* [0, n_decay) are weights (decayed), the rest biases and BN's affine */
    size_t n_stats;            /* BN running statistics */
    size_t act_bytes;          /* activations and aux per image, kept from forward to backward (with the images'
                                * low-precision copy under --amp, at img_off) */
    size_t img_off;
    size_t scratch_bytes;      /* per image, the blocks' scratch area (checkpoint_blocks; else 0) */
    size_t bn_aux;             /* floats of BN batch statistics per batch */
    size_t ws_bytes;           /* the conv workspace, sized for batches up to ws_B at the first forward of one */
    int ws_B;
    float *params, *grads, *stats, *ws; /* device memory */
    void *params_lp;           /* --amp: the weights [0, n_decay) in cfg.act, cast from params when stale */
    bool params_lp_stale;
    char *acts;                /* the batch's activations between forward and backward; NULL otherwise */
    int act_B;                 /* their batch */
    float dloss_scale;         /* the last training forward's: the mean loss's gradient times it */
    const float *images;       /* the images of the last training forward (the caller's, borrowed) */
    tr_rng rng;                /* dropout's masks */
} tr_cnn;

/* Builds a preset ("cnn-guide", "cnn-resnet"): shapes, parameters drawn as
 * PyTorch's defaults (uniform in +-1/sqrt(fan_in)), BatchNorm 1 and 0,
 * running statistics 0 and 1. TR_EINVAL names an unknown preset or a
 * backend without the CNN's ops; TR_ENOMEM from the allocator. */
int tr_cnn_new(tr_cnn **out, const tr_cnn_config *cfg, tr_backend *be, tr_alloc *alloc, uint64_t seed);
void tr_cnn_free(tr_cnn *m);
/* The preset names, NULL-terminated. */
extern const char *const tr_cnn_presets[];

/* The forward of a batch of B images (device, (B,C,H,W) fp32); logits (host,
 * (B,n_classes) fp32, may be NULL) gets them. training: batch statistics,
 * dropout, and the activations kept for tr_cnn_backward, which computes the
 * gradient of the mean loss times dloss_scale; else they are released at
 * once. With targets (device, (B) int32) and losses (device, (B)), the
 * per-image cross-entropy, and unless cfg.fuse, probs (device,
 * (B,n_classes)) are written. */
int tr_cnn_forward(tr_cnn *m, const tr_tensor *images, int B, bool training, tr_tensor *logits, tr_tensor *probs,
                   const tr_tensor *targets, tr_tensor *losses, float dloss_scale);
/* The backward of the last training forward (its images still in place;
 * probs unused under cfg.fuse): gradients written (add_dparams false) or
 * added; the activations are released. */
int tr_cnn_backward(tr_cnn *m, const tr_tensor *probs, const tr_tensor *targets, int B, bool add_dparams);

/* The parameters changed (an optimizer step, a checkpoint loaded): the next
 * forward casts the low-precision copy of the weights again (--amp). */
void tr_cnn_params_changed(tr_cnn *m);

/* Flat buffers as tensors (views). */
tr_tensor tr_cnn_view(float *p, size_t n);

#endif
