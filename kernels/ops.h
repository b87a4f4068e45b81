/* ops.h: the compute ops of the trainer, one family per file under cpu/ (the
 * reference, fp32, OpenMP) and, later, cuda/ (kernels plus launchers). Every op
 * is named op_<family>_<forward|backward>_<device>. Layouts are row-major;
 * shapes are written beside each argument. Backward ops ACCUMULATE (+=) into
 * their gradient outputs unless the comment says "writes", so a residual
 * stream's gradient can be summed in place, as in llm.c.
 * This header does not know the model, the allocator or NVTX: the backend
 * (trainer/backend_*.c) wraps each call in an NVTX range. */
#ifndef TR_OPS_H
#define TR_OPS_H

#include <stddef.h>
#include <stdint.h>

/* out[b,t,:] = wte[inp[b,t],:] + wpe[t,:] */
void op_encoder_forward_cpu(float *out /* (B,T,C) */, const int32_t *inp /* (B,T) */,
                            const float *wte /* (V,C) */, const float *wpe /* (maxT,C) */,
                            int B, int T, int C);
void op_encoder_backward_cpu(float *dwte /* (V,C) */, float *dwpe /* (maxT,C) */,
                             const float *dout /* (B,T,C) */, const int32_t *inp /* (B,T) */,
                             int B, int T, int C);

/* LayerNorm over the last dimension; mean and rstd are kept for the backward. */
void op_layernorm_forward_cpu(float *out /* (N,C) */, float *mean /* (N) */, float *rstd /* (N) */,
                              const float *inp /* (N,C) */, const float *weight /* (C) */,
                              const float *bias /* (C) */, int N, int C);
void op_layernorm_backward_cpu(float *dinp /* (N,C) */, float *dweight /* (C) */, float *dbias /* (C) */,
                               const float *dout /* (N,C) */, const float *inp /* (N,C) */,
                               const float *weight /* (C) */, const float *mean /* (N) */,
                               const float *rstd /* (N) */, int N, int C);

/* out = inp @ weight^T + bias (nn.Linear's layout); bias may be NULL. */
void op_matmul_forward_cpu(float *out /* (N,OC) */, const float *inp /* (N,C) */,
                           const float *weight /* (OC,C) */, const float *bias /* (OC) or NULL */,
                           int N, int C, int OC);
/* dinp may be NULL (the input needs no gradient); dbias may be NULL. */
void op_matmul_backward_cpu(float *dinp /* (N,C) */, float *dweight /* (OC,C) */, float *dbias /* (OC) */,
                            const float *dout /* (N,OC) */, const float *inp /* (N,C) */,
                            const float *weight /* (OC,C) */, int N, int C, int OC);

/* Causal multi-head self-attention from packed q,k,v. att keeps the softmax
 * probabilities for the backward; scratch is (B,NH,T,T) of workspace. */
void op_attention_forward_cpu(float *out /* (B,T,C) */, float *att /* (B,NH,T,T) */,
                              const float *qkv /* (B,T,3C) */, int B, int T, int C, int NH);
void op_attention_backward_cpu(float *dqkv /* (B,T,3C) */, float *scratch /* (B,NH,T,T) */,
                               const float *dout /* (B,T,C) */, const float *qkv /* (B,T,3C) */,
                               const float *att /* (B,NH,T,T) */, int B, int T, int C, int NH);

/* GELU, tanh approximation (GPT-2's). */
void op_gelu_forward_cpu(float *out, const float *inp, size_t n);
void op_gelu_backward_cpu(float *dinp, const float *inp, const float *dout, size_t n);

/* out = a + b; the backward adds dout into both. */
void op_residual_forward_cpu(float *out, const float *a, const float *b, size_t n);
void op_residual_backward_cpu(float *da, float *db, const float *dout, size_t n);

/* Softmax over the first V of Vp logits (the rest is padding) and the
 * cross-entropy against targets. */
void op_crossentropy_forward_cpu(float *losses /* (N) */, float *probs /* (N,Vp) */,
                                 const float *logits /* (N,Vp) */, const int32_t *targets /* (N) */,
                                 int N, int V, int Vp);
/* WRITES dlogits = (probs - onehot(target)) * dloss; padding gets zero. */
void op_crossentropy_backward_cpu(float *dlogits /* (N,Vp) */, const float *probs /* (N,Vp) */,
                                  const int32_t *targets /* (N) */, float dloss, int N, int V, int Vp);

/* One AdamW update (decoupled weight decay, bias-corrected), t counts from 1. */
void op_adamw_cpu(float *param, const float *grad, float *m, float *v, size_t n, float lr,
                  float beta1, float beta2, float eps, float weight_decay, int t);

#endif
