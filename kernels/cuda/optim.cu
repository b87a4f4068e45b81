/* optim.cu: the optimizer's element-wise kernels on the GPU: AdamW, the fused
 * multi-range AdamW (multi-tensor apply with the loss scaler's 1/S), SGD with
 * momentum, the gradient-norm reductions, scaling and the weight EMA; and
 * the step decided on the device (kernels/step_state.h): the per-step sums,
 * the loss scaler's verdict, and *_step launchers of the updates that read
 * lr, t and the gradients' scale from that state and skip a skipped step.
 * References: kernels/cpu/adamw.c and optim.c. The reductions use a fixed
 * grid and combine partial sums in a fixed order, so a result does not
 * depend on timing (nor on the GPU model). fp32 only: master weights and
 * optimizer state are fp32 in every mode. */
#include "common.cuh"
#include "step_state.h"

#include <math.h>

enum { RED_BLOCKS = 512, RED_THREADS = 256, LOSS_THREADS = 256 };

/* What an update reads that may change per step. From the arguments when
 * st is NULL (the host decided); else from the device step state
 * (kernels/step_state.h), and false on a skipped step: nothing to write. */
struct hyper {
    float lr, grad_scale, c1, c2;
    int t;
};

__device__ __forceinline__ bool step_hyper(const tr_step_state *st, float beta1, float beta2, hyper *h)
{
    if (!st)
        return true;
    if (st->skipped)
        return false;
    h->lr = st->lr;
    h->grad_scale = st->grad_scale;
    h->t = st->t;
    h->c1 = 1.0f - powf(beta1, (float)st->t);
    h->c2 = 1.0f - powf(beta2, (float)st->t);
    return true;
}

__device__ __forceinline__ float adamw_update(float *p, float g, float *m, float *v, float lr, float beta1,
                                              float beta2, float eps, float wd, float c1, float c2)
{
    float mi = beta1 * *m + (1.0f - beta1) * g;
    float vi = beta2 * *v + (1.0f - beta2) * g * g;
    *m = mi;
    *v = vi;
    return *p - lr * ((mi / c1) / (sqrtf(vi / c2) + eps) + wd * *p);
}

__global__ void adamw_kernel(float *param, const float *grad, float *m, float *v, long n, hyper h, float beta1,
                             float beta2, float eps, float wd, const tr_step_state *st)
{
    if (!step_hyper(st, beta1, beta2, &h))
        return;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        param[i] = adamw_update(&param[i], grad[i], &m[i], &v[i], h.lr, beta1, beta2, eps, wd, h.c1, h.c2);
}

/* Elements [bounds[0], bounds[n]); element i decays by the range it is in. */
__global__ void adamw_fused_kernel(float *param, const float *grad, float *m, float *v, kc_ranges r, hyper h,
                                   float beta1, float beta2, float eps, const tr_step_state *st)
{
    if (!step_hyper(st, beta1, beta2, &h))
        return;
    size_t begin = r.bounds[0], n = r.bounds[r.n] - begin;
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n; k += (size_t)gridDim.x * blockDim.x) {
        size_t i = begin + k;
        int j = 0;
        while (j + 1 < r.n && i >= r.bounds[j + 1])
            j++;
        param[i] = adamw_update(&param[i], grad[i] * h.grad_scale, &m[i], &v[i], h.lr, beta1, beta2, eps, r.decay[j],
                                h.c1, h.c2);
    }
}

__global__ void sgd_kernel(float *param, const float *grad, float *buf, long n, hyper h, float momentum, float wd,
                           const tr_step_state *st)
{
    if (!step_hyper(st, 0.0f, 0.0f, &h))
        return;
    float lr = h.lr;
    int first = h.t == 1;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        float g = grad[i] + wd * param[i];
        if (buf) {
            g = first ? g : momentum * buf[i] + g;
            buf[i] = g;
        }
        param[i] -= lr * g;
    }
}

/* Per-block partial sum of squares (double) and finite flag; fixed grid. */
__global__ void sumsq_partial_kernel(double *part, int *part_ok, const float *x, long n)
{
    __shared__ double s[RED_THREADS / WARP];
    __shared__ int ok_s[RED_THREADS / WARP];
    double acc = 0.0;
    int ok = 1;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        float f = x[i];
        acc += (double)f * f;
        ok &= isfinite(f) ? 1 : 0;
    }
    acc = warp_sum_d(acc);
    ok = __all_sync(0xffffffffu, ok);
    int lane = threadIdx.x % WARP, w = threadIdx.x / WARP;
    if (lane == 0) {
        s[w] = acc;
        ok_s[w] = ok;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int k = 1; k < RED_THREADS / WARP; k++) {
            s[0] += s[k];
            ok_s[0] &= ok_s[k];
        }
        part[blockIdx.x] = s[0];
        part_ok[blockIdx.x] = ok_s[0];
    }
}

__global__ void sumsq_finish_kernel(kc_reduction *out, const double *part, const int *part_ok)
{
    if (threadIdx.x != 0)
        return;
    double s = 0.0;
    int ok = 1;
    for (int k = 0; k < RED_BLOCKS; k++) {
        s += part[k];
        ok &= part_ok[k];
    }
    out->sumsq = s;
    out->finite = ok;
}

/* x *= s, or the state's grad_scale (applied on skipped steps too: those
 * gradients are dropped anyway) */
__global__ void scale_kernel(float *x, float s, long n, const tr_step_state *st)
{
    if (st)
        s = st->grad_scale;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        x[i] *= s;
}

__global__ void ema_kernel(float *ema, const float *x, float decay, long n, const tr_step_state *st)
{
    if (st && st->skipped)
        return;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        ema[i] = decay * ema[i] + (1.0f - decay) * x[i];
}

/* ---- the step decided on the device (kernels/step_state.h) ---- */

__global__ void step_begin_kernel(tr_step_state *s, float lr, const float *lr_src)
{
    s->lr = lr_src ? *lr_src : lr;
    s->sumsq = 0.0;
    s->finite = 1;
    s->loss_sum = 0.0;
}

/* loss_sum += the mean of the losses, as tr_gpt_forward's mean (a double
 * sum rounded to float), summed in a fixed order */
__global__ void step_add_loss_kernel(tr_step_state *s, const float *losses, int n)
{
    __shared__ double part[LOSS_THREADS];
    double acc = 0.0;
    for (int i = threadIdx.x; i < n; i += LOSS_THREADS)
        acc += losses[i];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int w = LOSS_THREADS / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        s->loss_sum += (double)(float)(part[0] / n);
}

/* The partial sums of sumsq_partial_kernel into the state, in block order */
__global__ void step_check_finish_kernel(tr_step_state *s, const double *part, const int *part_ok)
{
    double sum = 0.0;
    int ok = 1;
    for (int k = 0; k < RED_BLOCKS; k++) {
        sum += part[k];
        ok &= part_ok[k];
    }
    s->sumsq += sum;
    s->finite &= ok;
}

/* GradScaler's rules and the clipping factor: scaler.h's code, as train.c runs it on the host */
__global__ void step_verdict_kernel(tr_step_state *s)
{
    bool finite = !s->check || s->finite;
    float norm;
    s->scale_used = s->scaler.scale;
    s->grad_scale = tr_scaler_grad_scale(&s->scaler, s->clip, s->check != 0, s->sumsq, finite, &norm);
    s->grad_norm = norm;
    bool take = tr_scaler_update(&s->scaler, !finite);
    s->skipped = !take;
    if (take)
        s->t++;
}

extern "C" int kc_adamw(float *param, const float *grad, float *m, float *v, long n, float lr, float beta1,
                        float beta2, float eps, float weight_decay, int t, cudaStream_t stream)
{
    kc_range r("adamw");
    /* on the host, as the CPU reference computes them: the same bits */
    hyper h = {lr, 1.0f, 1.0f - powf(beta1, (float)t), 1.0f - powf(beta2, (float)t), t};
    adamw_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(param, grad, m, v, n, h, beta1, beta2, eps, weight_decay,
                                                        NULL);
    return kc_launched();
}

extern "C" int kc_adamw_step(float *param, const float *grad, float *m, float *v, long n, float beta1, float beta2,
                             float eps, float weight_decay, const tr_step_state *st, cudaStream_t stream)
{
    kc_range r("adamw");
    hyper h = {};
    adamw_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(param, grad, m, v, n, h, beta1, beta2, eps, weight_decay, st);
    return kc_launched();
}

extern "C" int kc_adamw_fused(float *param, const float *grad, float *m, float *v, const kc_ranges *ranges,
                              float lr, float beta1, float beta2, float eps, float grad_scale, int t,
                              cudaStream_t stream)
{
    kc_range r("adamw_fused");
    if (ranges->n < 1 || ranges->n > KC_MAX_RANGES)
        return (int)cudaErrorInvalidValue;
    hyper h = {lr, grad_scale, 1.0f - powf(beta1, (float)t), 1.0f - powf(beta2, (float)t), t};
    long n = (long)(ranges->bounds[ranges->n] - ranges->bounds[0]);
    adamw_fused_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(param, grad, m, v, *ranges, h, beta1, beta2, eps, NULL);
    return kc_launched();
}

extern "C" int kc_adamw_fused_step(float *param, const float *grad, float *m, float *v, const kc_ranges *ranges,
                                   float beta1, float beta2, float eps, const tr_step_state *st, cudaStream_t stream)
{
    kc_range r("adamw_fused");
    if (ranges->n < 1 || ranges->n > KC_MAX_RANGES)
        return (int)cudaErrorInvalidValue;
    hyper h = {};
    long n = (long)(ranges->bounds[ranges->n] - ranges->bounds[0]);
    adamw_fused_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(param, grad, m, v, *ranges, h, beta1, beta2, eps, st);
    return kc_launched();
}

extern "C" int kc_sgd(float *param, const float *grad, float *buf, long n, float lr, float momentum,
                      float weight_decay, int first, cudaStream_t stream)
{
    kc_range r("sgd");
    hyper h = {lr, 1.0f, 1.0f, 1.0f, first ? 1 : 2}; /* the kernel's first step is t == 1 */
    sgd_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(param, grad, buf, n, h, momentum, weight_decay, NULL);
    return kc_launched();
}

extern "C" int kc_sgd_step(float *param, const float *grad, float *buf, long n, float momentum, float weight_decay,
                           const tr_step_state *st, cudaStream_t stream)
{
    kc_range r("sgd");
    hyper h = {};
    sgd_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(param, grad, buf, n, h, momentum, weight_decay, st);
    return kc_launched();
}

extern "C" size_t kc_sumsq_scratch_bytes(void) { return RED_BLOCKS * (sizeof(double) + sizeof(int)); }

extern "C" int kc_sumsq_finite(kc_reduction *out, const float *x, long n, void *scratch, cudaStream_t stream)
{
    kc_range r("sumsq_finite");
    double *part = (double *)scratch;
    int *part_ok = (int *)(part + RED_BLOCKS);
    sumsq_partial_kernel<<<RED_BLOCKS, RED_THREADS, 0, stream>>>(part, part_ok, x, n);
    int err = kc_launched();
    if (err)
        return err;
    sumsq_finish_kernel<<<1, WARP, 0, stream>>>(out, part, part_ok);
    return kc_launched();
}

extern "C" int kc_scale(float *x, float s, long n, cudaStream_t stream)
{
    kc_range r("scale");
    scale_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(x, s, n, NULL);
    return kc_launched();
}

extern "C" int kc_scale_step(float *x, long n, const tr_step_state *st, cudaStream_t stream)
{
    kc_range r("scale");
    scale_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(x, 1.0f, n, st);
    return kc_launched();
}

extern "C" int kc_ema(float *ema, const float *x, float decay, long n, cudaStream_t stream)
{
    kc_range r("ema");
    ema_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(ema, x, decay, n, NULL);
    return kc_launched();
}

extern "C" int kc_ema_step(float *ema, const float *x, float decay, long n, const tr_step_state *st,
                           cudaStream_t stream)
{
    kc_range r("ema");
    ema_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(ema, x, decay, n, st);
    return kc_launched();
}

extern "C" int kc_step_begin(tr_step_state *s, float lr, const float *lr_src, cudaStream_t stream)
{
    kc_range r("step_begin");
    step_begin_kernel<<<1, 1, 0, stream>>>(s, lr, lr_src);
    return kc_launched();
}

extern "C" int kc_step_add_loss(tr_step_state *s, const float *losses, int n, cudaStream_t stream)
{
    kc_range r("step_add_loss");
    step_add_loss_kernel<<<1, LOSS_THREADS, 0, stream>>>(s, losses, n);
    return kc_launched();
}

extern "C" int kc_step_check_grads(tr_step_state *s, const float *g, long n, void *scratch, cudaStream_t stream)
{
    kc_range r("step_check_grads");
    double *part = (double *)scratch;
    int *part_ok = (int *)(part + RED_BLOCKS);
    sumsq_partial_kernel<<<RED_BLOCKS, RED_THREADS, 0, stream>>>(part, part_ok, g, n);
    int err = kc_launched();
    if (err)
        return err;
    step_check_finish_kernel<<<1, 1, 0, stream>>>(s, part, part_ok);
    return kc_launched();
}

extern "C" int kc_step_verdict(tr_step_state *s, cudaStream_t stream)
{
    kc_range r("step_verdict");
    step_verdict_kernel<<<1, 1, 0, stream>>>(s);
    return kc_launched();
}
