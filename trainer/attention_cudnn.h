/* attention_cudnn.h: causal multi-head self-attention on cuDNN's fused
 * (flash) attention, for the CUDA backend (backend_cuda.c, --attention).
 * Built only with cuDNN's headers (HAVE_CUDNN); the library itself is
 * dlopened, so the trainer starts and trains with its own attention kernel
 * where libcudnn.so.9 is missing.
 *
 * Layouts are the model's, no permute copy: qkv (B,T,3,NH,HS) as the model
 * packs q|k|v per position, out and dout (B,T,NH,HS), dqkv like qkv. What the
 * forward keeps for the backward is the softmax statistics, stats (B,NH,T)
 * fp32 (the log-sum-exp of each row of scaled scores), not the (B,NH,T,T)
 * probabilities. The backward writes dqkv (cuDNN cannot add into it).
 * Activations are bf16 or fp16 (dt TR_BF16 or TR_F16): cuDNN's fused
 * attention has no fp32.
 *
 * Plans are built once per direction, shape and dtype and cached; a shape
 * cuDNN has no engine for is remembered as such. Not thread-safe: one
 * backend thread calls it. Errors return a negative code with a message
 * (tr_error_last) naming the cuDNN call, its status and cuDNN's reason. */
#ifndef TR_ATTENTION_CUDNN_H
#define TR_ATTENTION_CUDNN_H

#include "tensor.h"

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct tr_attn_cudnn tr_attn_cudnn;

/* Loads cuDNN and makes a handle on the current device. deviceprop_json:
 * NULL for that; or a cuDNN device-properties description (JSON, as cuDNN
 * serializes CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR) to build plans for that
 * device without one ("deviceless", cuDNN 9.8 and newer: tr_attn_cudnn_prepare
 * works, the forward and backward refuse). Fails naming why when libcudnn.so.9 does not
 * load, is older than 9.0, or is 9.10.0 or 9.10.1 (known attention bugs). */
int tr_attn_cudnn_new(tr_attn_cudnn **out, const char *deviceprop_json);
void tr_attn_cudnn_free(tr_attn_cudnn *a);
/* cuDNN's version as loaded, like "9.19.0"; borrowed. */
const char *tr_attn_cudnn_version(const tr_attn_cudnn *a);
/* For tests, to build with this cuDNN the graphs an older one gets: from now
 * on the graphs have the workarounds cudnn-frontend applies for cuDNN
 * version (like 91500 for 9.15.0: the backward's padding mask up to 9.15.0,
 * with the lowest float before 9.10), and with dq_accumulator the
 * backward is the one with the fp32 dQ accumulator, not the deterministic
 * one first. The backward plans built so far are dropped (the forward's
 * graph has no workaround). */
void tr_attn_cudnn_test_graphs(tr_attn_cudnn *a, size_t version, bool dq_accumulator);
/* The device-properties description of the current device (JSON), to build
 * plans for it elsewhere; malloc'ed, NULL with a message on failure. */
char *tr_attn_cudnn_deviceprop_json(tr_attn_cudnn *a);

/* Builds (or finds) the forward and backward plans for a shape; TR_OK if
 * cuDNN has engines for both (never for T = 1 or a head size that is not a
 * multiple of 8). *workspace_bytes: the device workspace the
 * forward and the backward each need at most (256-byte aligned). */
int tr_attn_cudnn_prepare(tr_attn_cudnn *a, tr_dtype dt, int B, int T, int NH, int HS, size_t *workspace_bytes);
/* One line about the backward plan of a prepared shape: "deterministic (dP
 * workspace)" or "dQ accumulated in fp32"; borrowed, "" if not prepared. */
const char *tr_attn_cudnn_backward_kind(tr_attn_cudnn *a, tr_dtype dt, int B, int T, int NH, int HS);

/* out (B,T,NH,HS), stats (B,NH,T) fp32 = attention of qkv (B,T,3,NH,HS),
 * causal, scores scaled by 1/sqrt(HS). Asynchronous on stream; workspace is
 * device memory of the prepared size. */
int tr_attn_cudnn_forward(tr_attn_cudnn *a, void *out, float *stats, const void *qkv, tr_dtype dt, int B, int T, int NH,
                          int HS, void *workspace, cudaStream_t stream);
/* dqkv (written) from dout, the forward's qkv, out and stats. */
int tr_attn_cudnn_backward(tr_attn_cudnn *a, void *dqkv, const void *dout, const void *qkv, const void *out,
                           const float *stats, tr_dtype dt, int B, int T, int NH, int HS, void *workspace,
                           cudaStream_t stream);

#endif
