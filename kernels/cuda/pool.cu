/* pool.cu: the CNN's window and elementwise ops on the GPU (reference:
 * kernels/cpu/pool.c): max and average pooling over NCHW (no padding),
 * ReLU and dropout by a mask; fp32. The convolution and BatchNorm run on
 * cuDNN (trainer/cnn_cudnn.c). One thread per output element; the pooling
 * backwards scatter with atomics only where windows overlap. */
#include "common.cuh"

__global__ void maxpool_forward_kernel(float *out, int32_t *idx, const float *inp, long n, int H, int W, int OH,
                                       int OW, int K, int stride)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        long p = i / ((long)OH * OW);
        int oh = (int)(i / OW % OH), ow = (int)(i % OW);
        const float *x = inp + p * H * W;
        int best = oh * stride * W + ow * stride;
        for (int a = 0; a < K; a++)
            for (int b = 0; b < K; b++) {
                int at = (oh * stride + a) * W + ow * stride + b;
                if (x[at] > x[best] || isnan(x[at]))
                    best = at;
            }
        out[i] = x[best];
        idx[i] = best;
    }
}

__global__ void maxpool_backward_kernel(float *dinp, const float *dout, const int32_t *idx, long n, int H, int W,
                                        int OH, int OW, bool overlap)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        float *dx = dinp + i / ((long)OH * OW) * H * W + idx[i];
        if (overlap)
            atomicAdd(dx, dout[i]);
        else
            *dx += dout[i];
    }
}

__global__ void avgpool_forward_kernel(float *out, const float *inp, long n, int H, int W, int OH, int OW, int K,
                                       int stride)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        long p = i / ((long)OH * OW);
        int oh = (int)(i / OW % OH), ow = (int)(i % OW);
        const float *x = inp + p * H * W;
        float s = 0.0f;
        for (int a = 0; a < K; a++)
            for (int b = 0; b < K; b++)
                s += x[(oh * stride + a) * W + ow * stride + b];
        out[i] = s / (float)(K * K);
    }
}

/* One thread per input element: the sum over the windows that hold it, no atomics. */
__global__ void avgpool_backward_kernel(float *dinp, const float *dout, long n, int H, int W, int OH, int OW, int K,
                                        int stride)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        long p = i / ((long)H * W);
        int h = (int)(i / W % H), w = (int)(i % W);
        const float *dy = dout + p * OH * OW;
        float s = 0.0f;
        for (int oh = 0; oh < OH; oh++) {
            if (h < oh * stride || h >= oh * stride + K)
                continue;
            for (int ow = 0; ow < OW; ow++)
                if (w >= ow * stride && w < ow * stride + K)
                    s += dy[oh * OW + ow];
        }
        dinp[i] += s / (float)(K * K);
    }
}

__global__ void relu_forward_kernel(float *out, const float *inp, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

__global__ void relu_backward_kernel(float *dinp, const float *out, const float *dout, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        dinp[i] += out[i] > 0.0f ? dout[i] : 0.0f;
}

__global__ void dropout_forward_kernel(float *out, const float *inp, const float *mask, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        out[i] = mask ? inp[i] * mask[i] : inp[i];
}

__global__ void dropout_backward_kernel(float *dinp, const float *mask, const float *dout, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        dinp[i] += dout[i] * mask[i];
}

extern "C" int kc_maxpool_forward(float *out, int32_t *idx, const float *inp, int B, int C, int H, int W, int K,
                                  int stride, cudaStream_t stream)
{
    kc_range r("maxpool_forward");
    int OH = (H - K) / stride + 1, OW = (W - K) / stride + 1;
    long n = (long)B * C * OH * OW;
    maxpool_forward_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(out, idx, inp, n, H, W, OH, OW, K, stride);
    return kc_launched();
}

extern "C" int kc_maxpool_backward(float *dinp, const float *dout, const int32_t *idx, int B, int C, int H, int W,
                                   int K, int stride, cudaStream_t stream)
{
    kc_range r("maxpool_backward");
    int OH = (H - K) / stride + 1, OW = (W - K) / stride + 1;
    long n = (long)B * C * OH * OW;
    maxpool_backward_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(dinp, dout, idx, n, H, W, OH, OW, K > stride);
    return kc_launched();
}

extern "C" int kc_avgpool_forward(float *out, const float *inp, int B, int C, int H, int W, int K, int stride,
                                  cudaStream_t stream)
{
    kc_range r("avgpool_forward");
    int OH = (H - K) / stride + 1, OW = (W - K) / stride + 1;
    long n = (long)B * C * OH * OW;
    avgpool_forward_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(out, inp, n, H, W, OH, OW, K, stride);
    return kc_launched();
}

extern "C" int kc_avgpool_backward(float *dinp, const float *dout, int B, int C, int H, int W, int K, int stride,
                                   cudaStream_t stream)
{
    kc_range r("avgpool_backward");
    int OH = (H - K) / stride + 1, OW = (W - K) / stride + 1;
    long n = (long)B * C * H * W;
    avgpool_backward_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(dinp, dout, n, H, W, OH, OW, K, stride);
    return kc_launched();
}

extern "C" int kc_relu_forward(float *out, const float *inp, long n, cudaStream_t stream)
{
    kc_range r("relu_forward");
    relu_forward_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(out, inp, n);
    return kc_launched();
}

extern "C" int kc_relu_backward(float *dinp, const float *out, const float *dout, long n, cudaStream_t stream)
{
    kc_range r("relu_backward");
    relu_backward_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(dinp, out, dout, n);
    return kc_launched();
}

extern "C" int kc_dropout_forward(float *out, const float *inp, const float *mask, long n, cudaStream_t stream)
{
    kc_range r("dropout_forward");
    dropout_forward_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(out, inp, mask, n);
    return kc_launched();
}

extern "C" int kc_dropout_backward(float *dinp, const float *mask, const float *dout, long n, cudaStream_t stream)
{
    kc_range r("dropout_backward");
    dropout_backward_kernel<<<kc_blocks(n, 256), 256, 0, stream>>>(dinp, mask, dout, n);
    return kc_launched();
}
