/* layernorm.cu: LayerNorm (eps 1e-5) and the fused residual + LayerNorm on the
 * GPU; kernels/cpu/layernorm.c is the reference. The forward is one warp per
 * row, two passes (mean, then variance of the centred values) as the CPU
 * does. The backward's dweight/dbias are column sums taken deterministically:
 * per row chunk in a fixed order, then the chunks in order (no atomics).
 * Storage: the residual stream (inp, res, dinp, da) and the statistics are
 * fp32; out, dout and the fused db are in the activation dtype. */
#include "common.cuh"

#define EPS 1e-5f
enum { ROWS_PER_CHUNK = 256, COL_THREADS = 32, ROW_THREADS = 8 };

/* One warp normalizes row x of width C into o. */
template <typename T>
__device__ void layernorm_row(T *o, float *mean, float *rstd, const float *x, const float *w, const float *b,
                              int C, int lane)
{
    float s = 0.0f;
    for (int i = lane; i < C; i += WARP)
        s += x[i];
    float m = warp_sum(s) / C;
    float v = 0.0f;
    for (int i = lane; i < C; i += WARP)
        v += (x[i] - m) * (x[i] - m);
    float r = 1.0f / sqrtf(warp_sum(v) / C + EPS);
    for (int i = lane; i < C; i += WARP)
        o[i] = from_f32<T>((x[i] - m) * r * w[i] + b[i]);
    if (lane == 0) {
        *mean = m;
        *rstd = r;
    }
}

template <typename T>
__global__ void layernorm_forward_kernel(T *out, float *mean, float *rstd, const float *inp, const float *w,
                                         const float *b, int N, int C)
{
    int row = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
    if (row >= N)
        return;
    layernorm_row(out + (long)row * C, mean + row, rstd + row, inp + (long)row * C, w, b, C, threadIdx.x % WARP);
}

/* res = a + b, written, then read back by the same lanes (no sync needed). */
template <typename T>
__global__ void residual_layernorm_forward_kernel(float *res, T *out, float *mean, float *rstd, const float *a,
                                                  const T *b, const float *w, const float *bias, int N, int C)
{
    int row = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP, lane = threadIdx.x % WARP;
    if (row >= N)
        return;
    float *r = res + (long)row * C;
    for (int i = lane; i < C; i += WARP)
        r[i] = a[(long)row * C + i] + to_f32(b[(long)row * C + i]);
    layernorm_row(out + (long)row * C, mean + row, rstd + row, r, w, bias, C, lane);
}

/* One warp per row: dinp += LayerNorm'(dout); with da (the fused residual),
 * then da += dinp and db += dinp. */
template <typename T>
__global__ void layernorm_backward_rows_kernel(float *dinp, float *da, T *db, const T *dout, const float *inp,
                                               const float *w, const float *mean, const float *rstd, int N, int C)
{
    int row = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP, lane = threadIdx.x % WARP;
    if (row >= N)
        return;
    const float *x = inp + (long)row * C;
    const T *d = dout + (long)row * C;
    float m = mean[row], s = rstd[row], a = 0.0f, b = 0.0f;
    for (int i = lane; i < C; i += WARP) {
        float norm = (x[i] - m) * s, dnorm = w[i] * to_f32(d[i]);
        a += dnorm;
        b += dnorm * norm;
    }
    float dnorm_mean = warp_sum(a) / C, dnorm_norm_mean = warp_sum(b) / C;
    float *dx = dinp + (long)row * C;
    for (int i = lane; i < C; i += WARP) {
        float norm = (x[i] - m) * s, dnorm = w[i] * to_f32(d[i]);
        float v = dx[i] + (dnorm - dnorm_mean - norm * dnorm_norm_mean) * s;
        dx[i] = v;
        if (da) {
            da[(long)row * C + i] += v;
            T *q = db + (long)row * C + i;
            *q = from_f32<T>(to_f32(*q) + v);
        }
    }
}

/* Partial column sums over one chunk of rows: block (COL_THREADS,
 * ROW_THREADS), grid (ceil(C / COL_THREADS), n_chunks). part is
 * (n_chunks, 2, C): sum of dout * norm, sum of dout. */
template <typename T>
__global__ void layernorm_backward_cols_kernel(float *part, const T *dout, const float *inp, const float *mean,
                                               const float *rstd, int N, int C)
{
    __shared__ float sw[ROW_THREADS][COL_THREADS], sb[ROW_THREADS][COL_THREADS];
    int c = blockIdx.x * COL_THREADS + threadIdx.x, chunk = blockIdx.y;
    int r0 = chunk * ROWS_PER_CHUNK, r1 = min(r0 + ROWS_PER_CHUNK, N);
    float pw = 0.0f, pb = 0.0f;
    if (c < C)
        for (int n = r0 + threadIdx.y; n < r1; n += ROW_THREADS) {
            float d = to_f32(dout[(long)n * C + c]);
            pw += d * (inp[(long)n * C + c] - mean[n]) * rstd[n];
            pb += d;
        }
    sw[threadIdx.y][threadIdx.x] = pw;
    sb[threadIdx.y][threadIdx.x] = pb;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
        for (int k = 1; k < ROW_THREADS; k++) {
            pw += sw[k][threadIdx.x];
            pb += sb[k][threadIdx.x];
        }
        part[((long)chunk * 2) * C + c] = pw;
        part[((long)chunk * 2 + 1) * C + c] = pb;
    }
}

/* Sums the chunks in order into dw and db (added or written). */
__global__ void layernorm_backward_finish_kernel(float *dw, float *db, const float *part, int n_chunks, int C,
                                                 int add)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C)
        return;
    float w = add ? dw[c] : 0.0f, b = add ? db[c] : 0.0f;
    for (int k = 0; k < n_chunks; k++) {
        w += part[((long)k * 2) * C + c];
        b += part[((long)k * 2 + 1) * C + c];
    }
    dw[c] = w;
    db[c] = b;
}

static int n_chunks(int N) { return (N + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK; }

extern "C" size_t kc_layernorm_backward_scratch_bytes(int N, int C)
{
    return (size_t)n_chunks(N) * 2 * C * sizeof(float);
}

extern "C" int kc_layernorm_forward(void *out, int dt, float *mean, float *rstd, const float *inp, const float *w,
                                    const float *b, int N, int C, cudaStream_t stream)
{
    kc_range r("layernorm_forward");
    const int threads = 256, rows = threads / WARP;
    KC_DISPATCH(dt, S, layernorm_forward_kernel<S><<<(N + rows - 1) / rows, threads, 0, stream>>>(
                           (S *)out, mean, rstd, inp, w, b, N, C));
    return kc_launched();
}

extern "C" int kc_residual_layernorm_forward(float *res, void *out, int dt, float *mean, float *rstd, const float *a,
                                             const void *b, const float *w, const float *bias, int N, int C,
                                             cudaStream_t stream)
{
    kc_range r("residual_layernorm_forward");
    const int threads = 256, rows = threads / WARP;
    KC_DISPATCH(dt, S, residual_layernorm_forward_kernel<S><<<(N + rows - 1) / rows, threads, 0, stream>>>(
                           res, (S *)out, mean, rstd, a, (const S *)b, w, bias, N, C));
    return kc_launched();
}

/* Shared by both backward launchers: rows, then the column sums. */
template <typename S>
static int layernorm_backward(float *dinp, float *da, S *db, const S *dout, const float *inp, const float *w,
                              const float *mean, const float *rstd, float *dw, float *dbias, int add, float *scratch,
                              int N, int C, cudaStream_t stream)
{
    const int threads = 256, rows = threads / WARP;
    layernorm_backward_rows_kernel<S><<<(N + rows - 1) / rows, threads, 0, stream>>>(dinp, da, db, dout, inp, w,
                                                                                      mean, rstd, N, C);
    int err = kc_launched();
    if (err)
        return err;
    dim3 grid((C + COL_THREADS - 1) / COL_THREADS, n_chunks(N)), block(COL_THREADS, ROW_THREADS);
    layernorm_backward_cols_kernel<S><<<grid, block, 0, stream>>>(scratch, dout, inp, mean, rstd, N, C);
    if ((err = kc_launched()))
        return err;
    layernorm_backward_finish_kernel<<<(C + 255) / 256, 256, 0, stream>>>(dw, dbias, scratch, n_chunks(N), C, add);
    return kc_launched();
}

extern "C" int kc_layernorm_backward(float *dinp, float *dw, float *db, const void *dout, int dt, const float *inp,
                                     const float *w, const float *mean, const float *rstd, int add_dparams,
                                     float *scratch, int N, int C, cudaStream_t stream)
{
    kc_range r("layernorm_backward");
    KC_DISPATCH(dt, S, return layernorm_backward<S>(dinp, NULL, NULL, (const S *)dout, inp, w, mean, rstd, dw, db,
                                                    add_dparams, scratch, N, C, stream));
    return 0;
}

extern "C" int kc_residual_layernorm_backward(float *da, void *db, float *dres, float *dw, float *dbias,
                                              const void *dout, int dt, const float *res, const float *w,
                                              const float *mean, const float *rstd, int add_dparams, float *scratch,
                                              int N, int C, cudaStream_t stream)
{
    kc_range r("residual_layernorm_backward");
    KC_DISPATCH(dt, S, return layernorm_backward<S>(dres, da, (S *)db, (const S *)dout, res, w, mean, rstd, dw,
                                                    dbias, add_dparams, scratch, N, C, stream));
    return 0;
}
