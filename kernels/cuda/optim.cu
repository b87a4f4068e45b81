/* optim.cu: the optimizer's element-wise kernels on the GPU: AdamW, the fused
 * multi-range AdamW (multi-tensor apply with the loss scaler's 1/S), SGD with
 * momentum, the gradient-norm reductions, scaling and the weight EMA.
 * References: kernels/cpu/adamw.c and optim.c. The reductions use a fixed
 * grid and combine partial sums in a fixed order, so a result does not
 * depend on timing (nor on the GPU model). fp32 only: master weights and
 * optimizer state are fp32 in every mode. */
#include "common.cuh"

#include <math.h>

enum { RED_BLOCKS = 512, RED_THREADS = 256 };

__device__ __forceinline__ float adamw_update(float *p, float g, float *m, float *v, float lr, float beta1,
                                              float beta2, float eps, float wd, float c1, float c2)
{
    float mi = beta1 * *m + (1.0f - beta1) * g;
    float vi = beta2 * *v + (1.0f - beta2) * g * g;
    *m = mi;
    *v = vi;
    return *p - lr * ((mi / c1) / (sqrtf(vi / c2) + eps) + wd * *p);
}

__global__ void adamw_kernel(float *param, const float *grad, float *m, float *v, long n, float lr, float beta1,
                             float beta2, float eps, float wd, float c1, float c2)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        param[i] = adamw_update(&param[i], grad[i], &m[i], &v[i], lr, beta1, beta2, eps, wd, c1, c2);
}

/* Elements [bounds[0], bounds[n]); element i decays by the range it is in. */
__global__ void adamw_fused_kernel(float *param, const float *grad, float *m, float *v, kc_ranges r, float lr,
                                   float beta1, float beta2, float eps, float grad_scale, float c1, float c2)
{
    size_t begin = r.bounds[0], n = r.bounds[r.n] - begin;
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n; k += (size_t)gridDim.x * blockDim.x) {
        size_t i = begin + k;
        int j = 0;
        while (j + 1 < r.n && i >= r.bounds[j + 1])
            j++;
        param[i] = adamw_update(&param[i], grad[i] * grad_scale, &m[i], &v[i], lr, beta1, beta2, eps, r.decay[j],
                                c1, c2);
    }
}

__global__ void sgd_kernel(float *param, const float *grad, float *buf, long n, float lr, float momentum, float wd,
                           int first)
{
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

__global__ void scale_kernel(float *x, float s, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        x[i] *= s;
}

__global__ void ema_kernel(float *ema, const float *x, float decay, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        ema[i] = decay * ema[i] + (1.0f - decay) * x[i];
}

extern "C" int kc_adamw(float *param, const float *grad, float *m, float *v, long n, float lr, float beta1,
                        float beta2, float eps, float weight_decay, int t, cudaStream_t stream)
{
    kc_range r("adamw");
    /* on the host, as the CPU reference computes them: the same bits */
    float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
    adamw_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(param, grad, m, v, n, lr, beta1, beta2, eps, weight_decay,
                                                        c1, c2);
    return kc_launched();
}

extern "C" int kc_adamw_fused(float *param, const float *grad, float *m, float *v, const kc_ranges *ranges,
                              float lr, float beta1, float beta2, float eps, float grad_scale, int t,
                              cudaStream_t stream)
{
    kc_range r("adamw_fused");
    if (ranges->n < 1 || ranges->n > KC_MAX_RANGES)
        return (int)cudaErrorInvalidValue;
    float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
    long n = (long)(ranges->bounds[ranges->n] - ranges->bounds[0]);
    adamw_fused_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(param, grad, m, v, *ranges, lr, beta1, beta2, eps,
                                                              grad_scale, c1, c2);
    return kc_launched();
}

extern "C" int kc_sgd(float *param, const float *grad, float *buf, long n, float lr, float momentum,
                      float weight_decay, int first, cudaStream_t stream)
{
    kc_range r("sgd");
    sgd_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(param, grad, buf, n, lr, momentum, weight_decay, first);
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
    scale_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(x, s, n);
    return kc_launched();
}

extern "C" int kc_ema(float *ema, const float *x, float decay, long n, cudaStream_t stream)
{
    kc_range r("ema");
    ema_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(ema, x, decay, n);
    return kc_launched();
}
