/* crossentropy.cu: softmax + cross-entropy over a padded vocabulary on the
 * GPU, unfused and fused (llm.c's classifier: the gradient written over the
 * logits); reference kernels/cpu/crossentropy.c. One block per row; the
 * block reductions have a fixed order. */
#include "common.cuh"

enum { THREADS = 512 };

/* max and sum of exp(l - max) over the first V logits of a row */
template <typename T> __device__ void row_stats(const T *l, int V, float *maxv, float *sum)
{
    float m = -INFINITY;
    for (int i = threadIdx.x; i < V; i += blockDim.x)
        m = fmaxf(m, to_f32(l[i]));
    m = block_max(m);
    float s = 0.0f;
    for (int i = threadIdx.x; i < V; i += blockDim.x)
        s += expf(to_f32(l[i]) - m);
    *sum = block_sum(s);
    *maxv = m;
}

template <typename T>
__global__ void crossentropy_forward_kernel(float *losses, float *probs, const T *logits, const int32_t *targets,
                                            int V, int Vp)
{
    long n = blockIdx.x;
    const T *l = logits + n * Vp;
    float *p = probs + n * Vp;
    float m, sum;
    row_stats(l, V, &m, &sum);
    for (int i = threadIdx.x; i < Vp; i += blockDim.x)
        p[i] = i < V ? expf(to_f32(l[i]) - m) / sum : 0.0f;
    if (threadIdx.x == 0)
        losses[n] = logf(sum) + m - to_f32(l[targets[n]]);
}

/* WRITES dlogits = (probs - onehot) * dloss, zero in the padding */
template <typename T>
__global__ void crossentropy_backward_kernel(T *dlogits, const float *probs, const int32_t *targets, float dloss,
                                             const float *dloss_scale, int V, int Vp)
{
    long n = blockIdx.x;
    if (dloss_scale)
        dloss *= *dloss_scale;
    int tgt = targets[n];
    for (int i = threadIdx.x; i < Vp; i += blockDim.x)
        dlogits[n * Vp + i] = from_f32<T>(i < V ? (probs[n * Vp + i] - (i == tgt ? 1.0f : 0.0f)) * dloss : 0.0f);
}

template <typename T>
__global__ void crossentropy_fused_kernel(float *losses, T *logits, const int32_t *targets, float dloss,
                                          const float *dloss_scale, int V, int Vp)
{
    long n = blockIdx.x;
    T *l = logits + n * Vp;
    int tgt = targets[n];
    float m, sum;
    row_stats(l, V, &m, &sum);
    float lt = to_f32(l[tgt]); /* read before any thread overwrites it */
    __syncthreads();
    if (threadIdx.x == 0)
        losses[n] = logf(sum) + m - lt;
    if (dloss == 0.0f)
        return;
    if (dloss_scale)
        dloss *= *dloss_scale;
    for (int i = threadIdx.x; i < Vp; i += blockDim.x) {
        float d = 0.0f;
        if (i < V)
            d = (expf(to_f32(l[i]) - m) / sum - (i == tgt ? 1.0f : 0.0f)) * dloss;
        l[i] = from_f32<T>(d);
    }
}

extern "C" int kc_crossentropy_forward(float *losses, float *probs, const void *logits, int dt,
                                       const int32_t *targets, int N, int V, int Vp, cudaStream_t stream)
{
    kc_range r("crossentropy_forward");
    KC_DISPATCH(dt, S, crossentropy_forward_kernel<S><<<N, THREADS, 0, stream>>>(losses, probs, (const S *)logits,
                                                                                 targets, V, Vp));
    return kc_launched();
}

extern "C" int kc_crossentropy_backward(void *dlogits, int dt, const float *probs, const int32_t *targets,
                                        float dloss, const float *dloss_scale, int N, int V, int Vp,
                                        cudaStream_t stream)
{
    kc_range r("crossentropy_backward");
    KC_DISPATCH(dt, S, crossentropy_backward_kernel<S><<<N, THREADS, 0, stream>>>((S *)dlogits, probs, targets,
                                                                                  dloss, dloss_scale, V, Vp));
    return kc_launched();
}

extern "C" int kc_crossentropy_fused_forward(float *losses, void *logits, int dt, const int32_t *targets,
                                             float dloss, const float *dloss_scale, int N, int V, int Vp,
                                             cudaStream_t stream)
{
    kc_range r("crossentropy_fused_forward");
    KC_DISPATCH(dt, S, crossentropy_fused_kernel<S><<<N, THREADS, 0, stream>>>(losses, (S *)logits, targets, dloss,
                                                                               dloss_scale, V, Vp));
    return kc_launched();
}
