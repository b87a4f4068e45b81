/* encoder.cu: token + position embedding on the GPU (kernels/cpu/encoder.c is
 * the reference). The backward's scatter into dwte is deterministic without
 * atomics: each thread owns one channel of the tokens of one bucket
 * (token % N_BUCKETS) and walks the positions in order, so every sum is
 * taken in (b, t) order, as the CPU does. */
#include "common.cuh"

enum { N_BUCKETS = 32, TILE = 1024 };

template <typename T>
__global__ void encoder_forward_kernel(T *out, const int32_t *inp, const T *wte, const T *wpe, int B, int T_,
                                       int C)
{
    long n = (long)B * T_ * C;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        long bt = i / C;
        int c = (int)(i % C), t = (int)(bt % T_);
        out[i] = from_f32<T>(to_f32(wte[(long)inp[bt] * C + c]) + to_f32(wpe[(long)t * C + c]));
    }
}

/* grid (ceil(C / blockDim), N_BUCKETS): thread (c, bucket) */
template <typename T>
__global__ void encoder_backward_wte_kernel(float *dwte, const T *dout, const int32_t *inp, int N, int C)
{
    __shared__ int32_t tok[TILE];
    int c = blockIdx.x * blockDim.x + threadIdx.x, bucket = blockIdx.y;
    for (int n0 = 0; n0 < N; n0 += TILE) {
        int m = N - n0 < TILE ? N - n0 : TILE;
        __syncthreads();
        for (int i = threadIdx.x; i < m; i += blockDim.x)
            tok[i] = inp[n0 + i];
        __syncthreads();
        if (c >= C)
            continue;
        for (int i = 0; i < m; i++) {
            int v = tok[i];
            if (v % N_BUCKETS == bucket)
                dwte[(long)v * C + c] += to_f32(dout[(long)(n0 + i) * C + c]);
        }
    }
}

/* one thread per (t, c) of dwpe's maxT rows: the sum over the batch; rows
 * past T take no part and are zeroed when written (not added) */
template <typename T>
__global__ void encoder_backward_wpe_kernel(float *dwpe, const T *dout, int B, int T_, int maxT, int C, int add)
{
    long n = (long)maxT * C;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        int t = (int)(i / C), c = (int)(i % C);
        if (t >= T_) {
            if (!add)
                dwpe[i] = 0.0f;
            continue;
        }
        float s = add ? dwpe[i] : 0.0f;
        for (int b = 0; b < B; b++)
            s += to_f32(dout[((long)b * T_ + t) * C + c]);
        dwpe[i] = s;
    }
}

extern "C" int kc_encoder_forward(void *out, int dt, const int32_t *inp, const void *wte, const void *wpe, int B,
                                  int T, int C, cudaStream_t stream)
{
    kc_range r("encoder_forward");
    KC_DISPATCH(dt, S, encoder_forward_kernel<S><<<kc_blocks((long)B * T * C, 256), 256, 0, stream>>>(
                           (S *)out, inp, (const S *)wte, (const S *)wpe, B, T, C));
    return kc_launched();
}

extern "C" int kc_encoder_backward(float *dwte, float *dwpe, const void *dout, int dt, const int32_t *inp, int B,
                                   int T, int C, int maxT, int add_dwpe, cudaStream_t stream)
{
    kc_range r("encoder_backward");
    dim3 grid((C + 127) / 128, N_BUCKETS);
    KC_DISPATCH(dt, S, {
        encoder_backward_wte_kernel<S><<<grid, 128, 0, stream>>>(dwte, (const S *)dout, inp, B * T, C);
        int err = kc_launched();
        if (err)
            return err;
        encoder_backward_wpe_kernel<S><<<kc_blocks((long)maxT * C, 256), 256, 0, stream>>>(
            dwpe, (const S *)dout, B, T, maxT, C, add_dwpe);
    });
    return kc_launched();
}
