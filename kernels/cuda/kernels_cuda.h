/* kernels_cuda.h: C-callable launchers of the CUDA kernels in kernels/cuda,
 * one family per file beside kernels/cpu/<family>.c (the reference each is
 * tested against, tests/gpu/test_cuda_ops.c). Each returns a cudaError_t as
 * int (0 on success: the launch was accepted); work is asynchronous on
 * `stream`. Each launcher opens an NVTX range named after its op, unless
 * kc_nvtx_ranges(0) turned them off: a caller that opens one range per op
 * itself (the trainer's CUDA backend, whose trace has the CPU backend's
 * shape) would otherwise get two, nested.
 * Storage: a tensor passed as void * is in the dtype `dt` (KC_F32, KC_BF16
 * or KC_F16, the order of tr_dtype); float * tensors are fp32 (the residual
 * stream, statistics, gradients of parameters, optimizer state). Kernels
 * compute in fp32 and round to nearest even at their stores. Semantics,
 * shapes and accumulation (+=) are those of kernels/ops.h. Reductions
 * (dweight, dbias, dwte, sums of squares) are deterministic: fixed order, no
 * atomics. scratch arguments are device workspace of the size the matching
 * *_scratch_bytes function gives. */
#ifndef KERNELS_CUDA_H
#define KERNELS_CUDA_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { KC_F32 = 0, KC_BF16 = 1, KC_F16 = 2 };

/* The launchers' own NVTX ranges on (1, the default) or off (0). */
void kc_nvtx_ranges(int on);

/* cast.cu */
int kc_cast_f32_to_bf16(uint16_t *out, const float *in, long n, cudaStream_t stream);
int kc_cast_bf16_to_f32(float *out, const uint16_t *in, long n, cudaStream_t stream);
int kc_cast_f32_to_f16(uint16_t *out, const float *in, long n, cudaStream_t stream);
int kc_cast_f16_to_f32(float *out, const uint16_t *in, long n, cudaStream_t stream);
int kc_cast(void *dst, int dst_dt, const void *src, int src_dt, long n, cudaStream_t stream);

/* encoder.cu: out, wte, wpe in dt. The backward: dwte += (scatter), dwpe's
 * first T of maxT rows += if add_dwpe, else written and the rest zeroed. */
int kc_encoder_forward(void *out /* (B,T,C) */, int dt, const int32_t *inp /* (B,T) */, const void *wte /* (V,C) */,
                       const void *wpe /* (maxT,C) */, int B, int T, int C, cudaStream_t stream);
int kc_encoder_backward(float *dwte /* (V,C) */, float *dwpe /* (maxT,C) */, const void *dout /* (B,T,C) */, int dt,
                        const int32_t *inp, int B, int T, int C, int maxT, int add_dwpe, cudaStream_t stream);

/* layernorm.cu: out in dt; inp, weight, bias, mean, rstd fp32. */
int kc_layernorm_forward(void *out /* (N,C) */, int dt, float *mean /* (N) */, float *rstd /* (N) */,
                         const float *inp /* (N,C) */, const float *w /* (C) */, const float *b /* (C) */, int N,
                         int C, cudaStream_t stream);
/* res = a + b (b in dt), out = LayerNorm(res) in dt */
int kc_residual_layernorm_forward(float *res, void *out, int dt, float *mean, float *rstd, const float *a,
                                  const void *b, const float *w, const float *bias, int N, int C,
                                  cudaStream_t stream);
size_t kc_layernorm_backward_scratch_bytes(int N, int C);
/* dinp += ; dw, db += if add_dparams else written; dout in dt */
int kc_layernorm_backward(float *dinp, float *dw, float *db, const void *dout, int dt, const float *inp,
                          const float *w, const float *mean, const float *rstd, int add_dparams, float *scratch,
                          int N, int C, cudaStream_t stream);
/* dres += LayerNorm'(dout), then da += dres (fp32) and db += dres (dt) */
int kc_residual_layernorm_backward(float *da, void *db, float *dres, float *dw, float *dbias, const void *dout,
                                   int dt, const float *res, const float *w, const float *mean, const float *rstd,
                                   int add_dparams, float *scratch, int N, int C, cudaStream_t stream);

/* matmul.cu: beside cuBLASLt's GEMMs. out/pre/dout in dt, bias fp32. */
int kc_bias_add(void *out /* (N,OC) */, int dt, const float *bias, int N, int OC, cudaStream_t stream);
/* pre holds the GEMM result: pre = pre + bias (rounded to dt), out = GELU(pre) */
int kc_bias_gelu(void *pre, void *out, int dt, const float *bias, int N, int OC, cudaStream_t stream);
size_t kc_dbias_scratch_bytes(int N, int OC);
/* dbias (OC) = (add ? dbias : 0) + column sums of dout (N,OC) */
int kc_dbias(float *dbias, const void *dout, int dt, int N, int OC, int add, float *scratch, cudaStream_t stream);

/* attention.cu: out, att, qkv, dqkv, dout in dt; scratch (B,NH,T,T) fp32. */
int kc_attention_forward(void *out /* (B,T,C) */, void *att /* (B,NH,T,T) */, const void *qkv /* (B,T,3C) */,
                         int dt, int B, int T, int C, int NH, cudaStream_t stream);
int kc_attention_backward(void *dqkv, float *scratch, const void *dout, const void *qkv, const void *att, int dt,
                          int B, int T, int C, int NH, cudaStream_t stream);

/* gelu.cu: all in dt; the backward adds into dinp */
int kc_gelu_forward(void *out, const void *inp, int dt, long n, cudaStream_t stream);
int kc_gelu_backward(void *dinp, const void *inp, const void *dout, int dt, long n, cudaStream_t stream);

/* residual.cu: out = a + b; da += dout, db += dout (b, db in dt) */
int kc_residual_forward(float *out, const float *a, const void *b, int dt, long n, cudaStream_t stream);
int kc_residual_backward(float *da, void *db, int dt, const float *dout, long n, cudaStream_t stream);

/* pool.cu: the CNN's pooling (NCHW, no padding; idx: the maximum's place
 * in its plane), ReLU and dropout (mask NULL: a copy); fp32; the backwards
 * add into dinp. */
int kc_maxpool_forward(float *out, int32_t *idx, const float *inp, int B, int C, int H, int W, int K, int stride,
                       cudaStream_t stream);
int kc_maxpool_backward(float *dinp, const float *dout, const int32_t *idx, int B, int C, int H, int W, int K,
                        int stride, cudaStream_t stream);
int kc_avgpool_forward(float *out, const float *inp, int B, int C, int H, int W, int K, int stride,
                       cudaStream_t stream);
int kc_avgpool_backward(float *dinp, const float *dout, int B, int C, int H, int W, int K, int stride,
                        cudaStream_t stream);
int kc_relu_forward(float *out, const float *inp, long n, cudaStream_t stream);
int kc_relu_backward(float *dinp, const float *out, const float *dout, long n, cudaStream_t stream);
int kc_dropout_forward(float *out, const float *inp, const float *mask, long n, cudaStream_t stream);
int kc_dropout_backward(float *dinp, const float *mask, const float *dout, long n, cudaStream_t stream);

/* crossentropy.cu: logits/dlogits in dt; losses, probs fp32. The gradient
 * is scaled by dloss, times *dloss_scale (device memory: the device step's
 * loss scale) when that is not NULL; dloss 0: no gradient (fused). */
int kc_crossentropy_forward(float *losses /* (N) */, float *probs /* (N,Vp) */, const void *logits /* (N,Vp) */,
                            int dt, const int32_t *targets, int N, int V, int Vp, cudaStream_t stream);
int kc_crossentropy_backward(void *dlogits, int dt, const float *probs, const int32_t *targets, float dloss,
                             const float *dloss_scale, int N, int V, int Vp, cudaStream_t stream);
int kc_crossentropy_fused_forward(float *losses, void *logits, int dt, const int32_t *targets, float dloss,
                                  const float *dloss_scale, int N, int V, int Vp, cudaStream_t stream);

/* optim.cu: fp32 */
#define KC_MAX_RANGES 32
typedef struct kc_ranges {
    size_t bounds[KC_MAX_RANGES + 1]; /* range i is [bounds[i], bounds[i+1]) */
    float decay[KC_MAX_RANGES];
    int n;
} kc_ranges;
typedef struct kc_reduction {
    double sumsq;
    int finite;
} kc_reduction;
int kc_adamw(float *param, const float *grad, float *m, float *v, long n, float lr, float beta1, float beta2,
             float eps, float weight_decay, int t, cudaStream_t stream);
int kc_adamw_fused(float *param, const float *grad, float *m, float *v, const kc_ranges *ranges, float lr,
                   float beta1, float beta2, float eps, float grad_scale, int t, cudaStream_t stream);
int kc_sgd(float *param, const float *grad, float *buf /* NULL: no momentum */, long n, float lr, float momentum,
           float weight_decay, int first, cudaStream_t stream);
size_t kc_sumsq_scratch_bytes(void);
/* out (device) = {sum of x^2 in double, all finite} */
int kc_sumsq_finite(kc_reduction *out, const float *x, long n, void *scratch, cudaStream_t stream);
int kc_scale(float *x, float s, long n, cudaStream_t stream);
int kc_ema(float *ema, const float *x, float decay, long n, cudaStream_t stream);

/* optim.cu: the step decided on the device (kernels/step_state.h): the
 * updates above with lr, t and grad_scale read from the state st (device
 * memory), writing nothing on a skipped step; the state's per-step sums
 * (lr_src: NULL, or mapped pinned host memory holding the lr); the loss
 * scaler's verdict. One thread or one block each but the reductions. */
struct tr_step_state;
int kc_adamw_step(float *param, const float *grad, float *m, float *v, long n, float beta1, float beta2, float eps,
                  float weight_decay, const struct tr_step_state *st, cudaStream_t stream);
int kc_adamw_fused_step(float *param, const float *grad, float *m, float *v, const kc_ranges *ranges, float beta1,
                        float beta2, float eps, const struct tr_step_state *st, cudaStream_t stream);
int kc_sgd_step(float *param, const float *grad, float *buf, long n, float momentum, float weight_decay,
                const struct tr_step_state *st, cudaStream_t stream);
int kc_scale_step(float *x, long n, const struct tr_step_state *st, cudaStream_t stream);
int kc_ema_step(float *ema, const float *x, float decay, long n, const struct tr_step_state *st, cudaStream_t stream);
int kc_step_begin(struct tr_step_state *s, float lr, const float *lr_src, cudaStream_t stream);
int kc_step_add_loss(struct tr_step_state *s, const float *losses, int n, cudaStream_t stream);
/* scratch: kc_sumsq_scratch_bytes() */
int kc_step_check_grads(struct tr_step_state *s, const float *g, long n, void *scratch, cudaStream_t stream);
int kc_step_verdict(struct tr_step_state *s, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
