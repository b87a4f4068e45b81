/* attention.cu: causal multi-head self-attention from packed q,k,v, the own
 * kernels of the CUDA backend (kernels/cpu/attention.c is the reference and
 * fixes the layout: qkv (B,T,3C) with q|k|v per position, heads of C/NH; att
 * (B,NH,T,T) keeps the probabilities, zero above the diagonal). One warp per
 * row: simple and exact rather than fast; the scores are recomputed instead
 * of stored, so no (T,T) fp32 buffer is needed in the forward.
 * Backward without atomics: one kernel per query row (datt, dpre, dq) and one
 * per key row (dk, dv gather over the queries that saw the key, in order). */
#include "common.cuh"

enum { ROWS_PER_BLOCK = 4 };

template <typename T> __device__ __forceinline__ float dot_row(const T *a, const T *b, int n)
{
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        s += to_f32(a[i]) * to_f32(b[i]);
    return s;
}

/* Warp per (b, h, t): online max/sum over the keys t2 <= t (lanes split the
 * keys), then the probabilities, then out = att @ v (lanes split the head). */
template <typename T>
__global__ void attention_forward_kernel(T *out, T *att, const T *qkv, int B, int T_, int C, int NH, float scale)
{
    long row = (long)blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / WARP;
    int lane = threadIdx.x % WARP;
    if (row >= (long)B * NH * T_)
        return;
    int t = (int)(row % T_), h = (int)(row / T_ % NH), b = (int)(row / ((long)T_ * NH));
    int hs = C / NH;
    long C3 = 3L * C;
    const T *q = qkv + ((long)b * T_ + t) * C3 + h * hs;
    const T *k0 = qkv + (long)b * T_ * C3 + C + h * hs, *v0 = k0 + C;
    float m = -INFINITY, sum = 0.0f;
    for (int t2 = lane; t2 <= t; t2 += WARP) {
        float s = dot_row(q, k0 + t2 * C3, hs) * scale;
        if (s > m) {
            sum = sum * expf(m - s) + 1.0f;
            m = s;
        } else {
            sum += expf(s - m);
        }
    }
    float M = warp_max(m);
    float S = warp_sum(m == -INFINITY ? 0.0f : sum * expf(m - M));
    float inv = 1.0f / S;
    T *a = att + row * T_;
    for (int t2 = lane; t2 < T_; t2 += WARP)
        a[t2] = from_f32<T>(t2 <= t ? expf(dot_row(q, k0 + t2 * C3, hs) * scale - M) * inv : 0.0f);
    __syncwarp(); /* the row's probabilities are read by every lane below */
    T *o = out + ((long)b * T_ + t) * C + h * hs;
    for (int d = lane; d < hs; d += WARP) {
        float acc = 0.0f;
        for (int t2 = 0; t2 <= t; t2++)
            acc += to_f32(a[t2]) * to_f32(v0[t2 * C3 + d]);
        o[d] = from_f32<T>(acc);
    }
}

/* Warp per query row (b, h, t): datt = dout . v, dpre = att * (datt - sum(att *
 * datt)) * scale into scratch (B,NH,T,T), dq += dpre @ k. */
template <typename T>
__global__ void attention_backward_query_kernel(T *dqkv, float *scratch, const T *dout, const T *qkv, const T *att,
                                                int B, int T_, int C, int NH, float scale)
{
    long row = (long)blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / WARP;
    int lane = threadIdx.x % WARP;
    if (row >= (long)B * NH * T_)
        return;
    int t = (int)(row % T_), h = (int)(row / T_ % NH), b = (int)(row / ((long)T_ * NH));
    int hs = C / NH;
    long C3 = 3L * C;
    const T *d = dout + ((long)b * T_ + t) * C + h * hs;
    const T *k0 = qkv + (long)b * T_ * C3 + C + h * hs, *v0 = k0 + C;
    const T *a = att + row * T_;
    float *dp = scratch + row * T_;
    float dot = 0.0f;
    for (int t2 = lane; t2 <= t; t2 += WARP) {
        float datt = dot_row(d, v0 + t2 * C3, hs);
        dp[t2] = datt;
        dot += to_f32(a[t2]) * datt;
    }
    dot = warp_sum(dot);
    for (int t2 = lane; t2 < T_; t2 += WARP)
        dp[t2] = t2 <= t ? to_f32(a[t2]) * (dp[t2] - dot) * scale : 0.0f;
    __syncwarp();
    T *dq = dqkv + ((long)b * T_ + t) * C3 + h * hs;
    for (int i = lane; i < hs; i += WARP) {
        float acc = 0.0f;
        for (int t2 = 0; t2 <= t; t2++)
            acc += dp[t2] * to_f32(k0[t2 * C3 + i]);
        dq[i] = from_f32<T>(to_f32(dq[i]) + acc);
    }
}

/* Warp per key row (b, h, t2): dk += sum over t >= t2 of dpre[t, t2] q_t,
 * dv += sum over t >= t2 of att[t, t2] dout_t. */
template <typename T>
__global__ void attention_backward_key_kernel(T *dqkv, const float *scratch, const T *dout, const T *qkv,
                                              const T *att, int B, int T_, int C, int NH)
{
    long row = (long)blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / WARP;
    int lane = threadIdx.x % WARP;
    if (row >= (long)B * NH * T_)
        return;
    int t2 = (int)(row % T_), h = (int)(row / T_ % NH), b = (int)(row / ((long)T_ * NH));
    int hs = C / NH;
    long C3 = 3L * C, head = row - t2; /* (b, h, 0) */
    const T *q0 = qkv + (long)b * T_ * C3 + h * hs, *d0 = dout + (long)b * T_ * C + h * hs;
    T *dk = dqkv + ((long)b * T_ + t2) * C3 + C + h * hs, *dv = dk + C;
    for (int i = lane; i < hs; i += WARP) {
        float ak = 0.0f, av = 0.0f;
        for (int t = t2; t < T_; t++) {
            long at = (head + t) * T_ + t2;
            ak += scratch[at] * to_f32(q0[t * C3 + i]);
            av += to_f32(att[at]) * to_f32(d0[(long)t * C + i]);
        }
        dk[i] = from_f32<T>(to_f32(dk[i]) + ak);
        dv[i] = from_f32<T>(to_f32(dv[i]) + av);
    }
}

static unsigned row_blocks(int B, int T, int NH) { return (unsigned)(((long)B * NH * T + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK); }

extern "C" int kc_attention_forward(void *out, void *att, const void *qkv, int dt, int B, int T, int C, int NH,
                                    cudaStream_t stream)
{
    kc_range r("attention_forward");
    float scale = 1.0f / sqrtf((float)(C / NH));
    KC_DISPATCH(dt, S, attention_forward_kernel<S><<<row_blocks(B, T, NH), ROWS_PER_BLOCK * WARP, 0, stream>>>(
                           (S *)out, (S *)att, (const S *)qkv, B, T, C, NH, scale));
    return kc_launched();
}

extern "C" int kc_attention_backward(void *dqkv, float *scratch, const void *dout, const void *qkv, const void *att,
                                     int dt, int B, int T, int C, int NH, cudaStream_t stream)
{
    kc_range r("attention_backward");
    float scale = 1.0f / sqrtf((float)(C / NH));
    KC_DISPATCH(dt, S, {
        attention_backward_query_kernel<S><<<row_blocks(B, T, NH), ROWS_PER_BLOCK * WARP, 0, stream>>>(
            (S *)dqkv, scratch, (const S *)dout, (const S *)qkv, (const S *)att, B, T, C, NH, scale);
        int err = kc_launched();
        if (err)
            return err;
        attention_backward_key_kernel<S><<<row_blocks(B, T, NH), ROWS_PER_BLOCK * WARP, 0, stream>>>(
            (S *)dqkv, scratch, (const S *)dout, (const S *)qkv, (const S *)att, B, T, C, NH);
    });
    return kc_launched();
}
