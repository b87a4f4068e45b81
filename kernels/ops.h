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
/* dwte accumulates; dwpe's first T rows accumulate if add_dwpe, else are
 * written (set_to_none gradients need no memset pass). */
void op_encoder_backward_cpu(float *dwte /* (V,C) */, float *dwpe /* (maxT,C) */,
                             const float *dout /* (B,T,C) */, const int32_t *inp /* (B,T) */,
                             int B, int T, int C, int add_dwpe);

/* LayerNorm over the last dimension; mean and rstd are kept for the backward. */
void op_layernorm_forward_cpu(float *out /* (N,C) */, float *mean /* (N) */, float *rstd /* (N) */,
                              const float *inp /* (N,C) */, const float *weight /* (C) */,
                              const float *bias /* (C) */, int N, int C);
/* dinp accumulates; dweight and dbias accumulate if add_dparams, else are written. */
void op_layernorm_backward_cpu(float *dinp /* (N,C) */, float *dweight /* (C) */, float *dbias /* (C) */,
                               const float *dout /* (N,C) */, const float *inp /* (N,C) */,
                               const float *weight /* (C) */, const float *mean /* (N) */,
                               const float *rstd /* (N) */, int N, int C, int add_dparams);

/* out = inp @ weight^T + bias (nn.Linear's layout); bias may be NULL. */
void op_matmul_forward_cpu(float *out /* (N,OC) */, const float *inp /* (N,C) */,
                           const float *weight /* (OC,C) */, const float *bias /* (OC) or NULL */,
                           int N, int C, int OC);
/* dinp may be NULL (the input needs no gradient); dbias may be NULL. dinp
 * accumulates; dweight and dbias accumulate if add_dparams, else are written. */
void op_matmul_backward_cpu(float *dinp /* (N,C) */, float *dweight /* (OC,C) */, float *dbias /* (OC) */,
                            const float *dout /* (N,OC) */, const float *inp /* (N,C) */,
                            const float *weight /* (OC,C) */, int N, int C, int OC, int add_dparams);

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
/* out = max(0, a + b), the residual add and ReLU in one pass; the backward
 * adds dout where out > 0 into both da and db (either may be NULL). */
void op_residual_relu_forward_cpu(float *out, const float *a, const float *b, size_t n);
void op_residual_relu_backward_cpu(float *da, float *db, const float *out, const float *dout, size_t n);

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

/* ---- compile-style fusions (--fuse on): one pass where the unfused path
 * takes two or three; the same arithmetic, so results match closely. ---- */

/* res = a + b, then out = LayerNorm(res): one pass over each row. */
void op_residual_layernorm_forward_cpu(float *res /* (N,C) */, float *out /* (N,C) */, float *mean /* (N) */,
                                       float *rstd /* (N) */, const float *a /* (N,C) */,
                                       const float *b /* (N,C) */, const float *weight /* (C) */,
                                       const float *bias /* (C) */, int N, int C);
/* The backward of both: dres += LayerNorm'(dout); then da += dres and db +=
 * dres, in one pass over each row. dweight/dbias as op_layernorm_backward_cpu. */
void op_residual_layernorm_backward_cpu(float *da /* (N,C) */, float *db /* (N,C) */, float *dres /* (N,C) */,
                                        float *dweight /* (C) */, float *dbias /* (C) */,
                                        const float *dout /* (N,C) */, const float *res /* (N,C) */,
                                        const float *weight /* (C) */, const float *mean /* (N) */,
                                        const float *rstd /* (N) */, int N, int C, int add_dparams);
/* pre = inp @ weight^T + bias and out = GELU(pre) in the GEMM's epilogue
 * (cuBLASLt's GELU_AUX_BIAS). pre is kept for the backward in the storage
 * format pre_format (a LOWP_* of lowp.h), and GELU reads the value as
 * stored, so recomputing GELU from pre gives the same bits. */
void op_matmul_bias_gelu_forward_cpu(float *pre /* (N,OC) */, float *out /* (N,OC) */,
                                     const float *inp /* (N,C) */, const float *weight /* (OC,C) */,
                                     const float *bias /* (OC) */, int N, int C, int OC, int pre_format);
/* The classifier of llm.c: softmax, the loss and, if dloss is not 0, the
 * gradient written over the logits in place, so no (N,Vp) probabilities are
 * kept. Padding columns get zero. */
void op_crossentropy_fused_forward_cpu(float *losses /* (N) */, float *logits /* (N,Vp): in, dlogits out */,
                                       const int32_t *targets /* (N) */, float dloss, int N, int V, int Vp);

/* Casts between storage formats (LOWP_* of lowp.h), round to nearest even. */
void op_cast_cpu(void *dst, int dst_format, const void *src, int src_format, size_t n);

/* The fused AdamW: one pass over a whole flat buffer whose ranges
 * [bounds[i], bounds[i+1]) take weight decay decay[i] (multi-tensor apply).
 * Gradients are multiplied by grad_scale on the fly (a loss scaler's 1/S),
 * as torch.optim.AdamW(fused=True) does with its grad_scale argument. */
void op_adamw_fused_cpu(float *param, const float *grad, float *m, float *v, const size_t *bounds,
                        const float *decay, int n_ranges, float lr, float beta1, float beta2, float eps,
                        float grad_scale, int t);

/* SGD with momentum as torch.optim.SGD (dampening 0, no Nesterov): g += wd*p;
 * buf = first ? g : momentum*buf + g; p -= lr*buf. momentum 0 uses no buffer. */
void op_sgd_cpu(float *param, const float *grad, float *buf /* NULL if momentum is 0 */, size_t n, float lr,
                float momentum, float weight_decay, int first);

/* Sum of squares in double (for the global gradient norm). */
double op_sumsq_cpu(const float *x, size_t n);
/* 1 if every element is finite (no inf, no NaN). */
int op_all_finite_cpu(const float *x, size_t n);
/* The fused reduction: the sum of squares and the finite check in one pass;
 * *finite is 0 if any element is inf or NaN (the sum is then meaningless). */
double op_sumsq_finite_cpu(const float *x, size_t n, int *finite);
/* dst[0..n_bytes) = 0, on the whole team */
void op_zero_cpu(void *dst, size_t n_bytes);
/* x *= s */
void op_scale_cpu(float *x, float s, size_t n);
/* ema = decay*ema + (1-decay)*x */
void op_ema_cpu(float *ema, const float *x, float decay, size_t n);

/* ---- the CNN's ops (NCHW; model_cnn.c) ---- */

/* Floats of workspace the conv2d ops need (one set of columns and partial
 * weight gradients per thread of the team). */
size_t op_conv2d_workspace_cpu(int C, int OC, int K, int OH, int OW);
/* nn.Conv2d: square K x K kernels, stride, zero padding pad; OH = (H + 2 pad
 * - K) / stride + 1, OW likewise. bias may be NULL. */
void op_conv2d_forward_cpu(float *out /* (B,OC,OH,OW) */, const float *inp /* (B,C,H,W) */,
                           const float *weight /* (OC,C,K,K) */, const float *bias /* (OC) or NULL */,
                           float *ws, int B, int C, int H, int W, int OC, int K, int stride, int pad);
/* dinp (may be NULL) accumulates; dweight and dbias (may be NULL) accumulate
 * if add_dparams, else are written. */
void op_conv2d_backward_cpu(float *dinp /* (B,C,H,W) */, float *dweight /* (OC,C,K,K) */, float *dbias /* (OC) */,
                            const float *dout /* (B,OC,OH,OW) */, const float *inp /* (B,C,H,W) */,
                            const float *weight /* (OC,C,K,K) */, float *ws, int B, int C, int H, int W, int OC,
                            int K, int stride, int pad, int add_dparams);

/* The same convolution computed directly (shifted rows, no workspace, no
 * GEMM); results equal to rounding. --conv-autotune picks per shape. */
void op_conv2d_direct_forward_cpu(float *out /* (B,OC,OH,OW) */, const float *inp /* (B,C,H,W) */,
                                  const float *weight /* (OC,C,K,K) */, const float *bias /* (OC) or NULL */, int B,
                                  int C, int H, int W, int OC, int K, int stride, int pad);
void op_conv2d_direct_backward_cpu(float *dinp /* (B,C,H,W) */, float *dweight /* (OC,C,K,K) */,
                                   float *dbias /* (OC) */, const float *dout /* (B,OC,OH,OW) */,
                                   const float *inp /* (B,C,H,W) */, const float *weight /* (OC,C,K,K) */, int B,
                                   int C, int H, int W, int OC, int K, int stride, int pad, int add_dparams);

/* The same convolution over channels-last tensors (--layout nhwc; conv_nhwc.c):
 * inp (B,H,W,C), out (B,OH,OW,OC); weight and its gradient stay (OC,C,K,K).
 * The workspace: op_conv2d_nhwc_workspace_cpu floats (reordered weights, and
 * padded images and partial gradients per thread of the team). */
size_t op_conv2d_nhwc_workspace_cpu(int C, int OC, int K, int H, int W, int stride, int pad);
/* Whether this CPU runs the NHWC kernels in vector registers (AVX-512): with
 * AVX2 alone their 16-float vectors spill to the stack, and NCHW's
 * im2col+GEMM is 6 to 19 times faster (the trainer's default layout). */
int op_conv2d_nhwc_vectorized_cpu(void);
/* relu: a ReLU applied as the result is stored (out is the ReLU's output). */
void op_conv2d_nhwc_forward_cpu(float *out /* (B,OH,OW,OC) */, const float *inp /* (B,H,W,C) */,
                                const float *weight /* (OC,C,K,K) */, const float *bias /* (OC) or NULL */,
                                float *ws, int B, int C, int H, int W, int OC, int K, int stride, int pad, int relu);
void op_conv2d_nhwc_backward_cpu(float *dinp /* (B,H,W,C) */, float *dweight /* (OC,C,K,K) */,
                                 float *dbias /* (OC) */, const float *dout /* (B,OH,OW,OC) */,
                                 const float *inp /* (B,H,W,C) */, const float *weight /* (OC,C,K,K) */, float *ws,
                                 int B, int C, int H, int W, int OC, int K, int stride, int pad, int add_dparams);

/* BatchNorm2d. training: batch statistics into mean and rstd (kept for the
 * backward), running averages moved by momentum; else the running averages
 * normalize and mean, rstd are not touched. relu: a ReLU follows in the same
 * pass (out is its output). */
void op_batchnorm_forward_cpu(float *out /* (B,C,HW) */, float *mean /* (C) */, float *rstd /* (C) */,
                              float *running_mean /* (C) */, float *running_var /* (C) */,
                              const float *inp /* (B,C,HW) */, const float *weight /* (C) */,
                              const float *bias /* (C) */, int B, int C, int HW, int training, float momentum,
                              float eps, int relu);
/* The training-mode backward. dinp (may be NULL) accumulates; dweight and
 * dbias accumulate if add_dparams, else are written. relu_bias (or NULL):
 * a ReLU was fused after (the forward's relu), bias is the BatchNorm's own;
 * dout is the ReLU's output gradient, masked where the ReLU's input, which
 * the backward recomputes exactly as the forward did, is not positive. */
void op_batchnorm_backward_cpu(float *dinp /* (B,C,HW) */, float *dweight /* (C) */, float *dbias /* (C) */,
                               const float *dout /* (B,C,HW) */, const float *inp /* (B,C,HW) */,
                               const float *weight /* (C) */, const float *mean /* (C) */, const float *rstd /* (C) */,
                               int B, int C, int HW, int add_dparams, const float *relu_bias);

/* Pooling over K x K windows at stride, no padding: OH = (H - K) / stride + 1.
 * idx keeps the position (h*W + w) of each window's maximum in its plane. */
void op_maxpool_forward_cpu(float *out /* (B,C,OH,OW) */, int32_t *idx /* (B,C,OH,OW) */,
                            const float *inp /* (B,C,H,W) */, int B, int C, int H, int W, int K, int stride);
void op_maxpool_backward_cpu(float *dinp /* (B,C,H,W) */, const float *dout /* (B,C,OH,OW) */,
                             const int32_t *idx /* (B,C,OH,OW) */, int B, int C, int H, int W, int K, int stride);
void op_avgpool_forward_cpu(float *out /* (B,C,OH,OW) */, const float *inp /* (B,C,H,W) */, int B, int C, int H,
                            int W, int K, int stride);
void op_avgpool_backward_cpu(float *dinp /* (B,C,H,W) */, const float *dout /* (B,C,OH,OW) */, int B, int C, int H,
                             int W, int K, int stride);

/* The same over channels-last tensors (NHWC): N = B*H*W rows of C channels. */
void op_batchnorm_nhwc_forward_cpu(float *out /* (N,C) */, float *mean /* (C) */, float *rstd /* (C) */,
                                   float *running_mean /* (C) */, float *running_var /* (C) */,
                                   const float *inp /* (N,C) */, const float *weight /* (C) */,
                                   const float *bias /* (C) */, int N, int C, int training, float momentum,
                                   float eps, int relu);
void op_batchnorm_nhwc_backward_cpu(float *dinp /* (N,C) */, float *dweight /* (C) */, float *dbias /* (C) */,
                                    const float *dout /* (N,C) */, const float *inp /* (N,C) */,
                                    const float *weight /* (C) */, const float *mean /* (C) */,
                                    const float *rstd /* (C) */, int N, int C, int add_dparams,
                                    const float *relu_bias /* (C) or NULL */);
/* Pooling over channels-last tensors; idx keeps h*W + w of each maximum, per channel. */
void op_maxpool_nhwc_forward_cpu(float *out /* (B,OH,OW,C) */, int32_t *idx /* (B,OH,OW,C) */,
                                 const float *inp /* (B,H,W,C) */, int B, int C, int H, int W, int K, int stride);
void op_maxpool_nhwc_backward_cpu(float *dinp /* (B,H,W,C) */, const float *dout /* (B,OH,OW,C) */,
                                  const int32_t *idx /* (B,OH,OW,C) */, int B, int C, int H, int W, int K, int stride);
void op_avgpool_nhwc_forward_cpu(float *out /* (B,OH,OW,C) */, const float *inp /* (B,H,W,C) */, int B, int C,
                                 int H, int W, int K, int stride);
void op_avgpool_nhwc_backward_cpu(float *dinp /* (B,H,W,C) */, const float *dout /* (B,OH,OW,C) */, int B, int C,
                                  int H, int W, int K, int stride);
/* out = inp with the channel and pixel axes swapped: (B,C,HW) -> (B,HW,C) if
 * to_nhwc, else (B,HW,C) -> (B,C,HW); add: out += instead of =. */
void op_layout_transpose_cpu(float *out, const float *inp, int B, int C, int HW, int to_nhwc, int add);

/* ReLU; the backward reads the output (out > 0 where inp > 0). */
void op_relu_forward_cpu(float *out, const float *inp, size_t n);
void op_relu_backward_cpu(float *dinp, const float *out, const float *dout, size_t n);
/* Dropout by a mask of 0 and 1/(1-p): out = inp * mask (mask NULL: a copy,
 * evaluation's identity); dinp += dout * mask. */
void op_dropout_forward_cpu(float *out, const float *inp, const float *mask, size_t n);
void op_dropout_backward_cpu(float *dinp, const float *mask, const float *dout, size_t n);

#endif
