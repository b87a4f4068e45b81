/* matmul.cu: what the linear layer needs beside cuBLASLt's GEMMs (the GEMMs
 * themselves are issued by trainer/backend_cuda.c): the bias gradient as a
 * deterministic column sum, and the bias / bias+GELU epilogues as kernels of
 * their own for when cuBLASLt offers no fused algorithm for a shape or
 * dtype. kernels/cpu/matmul.c is the reference. */
#include "common.cuh"

enum { ROWS_PER_CHUNK = 256, COL_THREADS = 32, ROW_THREADS = 8 };

/* out[n, o] += bias[o], in out's storage */
template <typename T> __global__ void bias_add_kernel(T *out, const float *bias, int N, int OC)
{
    long n = (long)N * OC;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        out[i] = from_f32<T>(to_f32(out[i]) + bias[i % OC]);
}

/* pre holds the GEMM's result: pre = round(pre + bias), out = GELU(pre as stored) */
template <typename T> __global__ void bias_gelu_kernel(T *pre, T *out, const float *bias, int N, int OC)
{
    long n = (long)N * OC;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        T p = from_f32<T>(to_f32(pre[i]) + bias[i % OC]);
        pre[i] = p;
        out[i] = from_f32<T>(gelu_f(to_f32(p)));
    }
}

/* Partial column sums of dout (N, OC) over one chunk of rows. */
template <typename T> __global__ void dbias_cols_kernel(float *part, const T *dout, int N, int OC)
{
    __shared__ float s[ROW_THREADS][COL_THREADS];
    int o = blockIdx.x * COL_THREADS + threadIdx.x, chunk = blockIdx.y;
    int r0 = chunk * ROWS_PER_CHUNK, r1 = min(r0 + ROWS_PER_CHUNK, N);
    float p = 0.0f;
    if (o < OC)
        for (int n = r0 + threadIdx.y; n < r1; n += ROW_THREADS)
            p += to_f32(dout[(long)n * OC + o]);
    s[threadIdx.y][threadIdx.x] = p;
    __syncthreads();
    if (threadIdx.y == 0 && o < OC) {
        for (int k = 1; k < ROW_THREADS; k++)
            p += s[k][threadIdx.x];
        part[(long)chunk * OC + o] = p;
    }
}

__global__ void dbias_finish_kernel(float *dbias, const float *part, int n_chunks, int OC, int add)
{
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= OC)
        return;
    float s = add ? dbias[o] : 0.0f;
    for (int k = 0; k < n_chunks; k++)
        s += part[(long)k * OC + o];
    dbias[o] = s;
}

static int n_chunks(int N) { return (N + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK; }

extern "C" size_t kc_dbias_scratch_bytes(int N, int OC) { return (size_t)n_chunks(N) * OC * sizeof(float); }

extern "C" int kc_bias_add(void *out, int dt, const float *bias, int N, int OC, cudaStream_t stream)
{
    kc_range r("bias_add");
    KC_DISPATCH(dt, S, bias_add_kernel<S><<<kc_blocks((long)N * OC, 256), 256, 0, stream>>>((S *)out, bias, N, OC));
    return kc_launched();
}

extern "C" int kc_bias_gelu(void *pre, void *out, int dt, const float *bias, int N, int OC, cudaStream_t stream)
{
    kc_range r("bias_gelu");
    KC_DISPATCH(dt, S, bias_gelu_kernel<S><<<kc_blocks((long)N * OC, 256), 256, 0, stream>>>((S *)pre, (S *)out,
                                                                                             bias, N, OC));
    return kc_launched();
}

extern "C" int kc_dbias(float *dbias, const void *dout, int dt, int N, int OC, int add, float *scratch,
                        cudaStream_t stream)
{
    kc_range r("dbias");
    dim3 grid((OC + COL_THREADS - 1) / COL_THREADS, n_chunks(N)), block(COL_THREADS, ROW_THREADS);
    KC_DISPATCH(dt, S, dbias_cols_kernel<S><<<grid, block, 0, stream>>>(scratch, (const S *)dout, N, OC));
    int err = kc_launched();
    if (err)
        return err;
    dbias_finish_kernel<<<(OC + 255) / 256, 256, 0, stream>>>(dbias, scratch, n_chunks(N), OC, add);
    return kc_launched();
}
