/* pool.c: max and average pooling over NCHW and channels-last NHWC tensors
 * (square windows, stride, no padding), ReLU and dropout: the CNN's
 * elementwise and window ops, and the transpose between the two layouts. Max
 * pooling keeps the index of each window's maximum (the first of equal
 * values, as PyTorch) for the backward. Dropout multiplies by a mask the
 * model draws (0 or 1/(1-p)), so the op has no random state. */
#include "ops.h"

#include <math.h>
#include <string.h>

/* Elements per chunk of an elementwise op, handed to a thread as it comes free. */
enum { ELEMS = 16384 };

void op_maxpool_forward_cpu(float *out, int32_t *idx, const float *inp, int B, int C, int H, int W, int K,
                            int stride)
{
    int OH = (H - K) / stride + 1, OW = (W - K) / stride + 1;
#pragma omp parallel for schedule(static)
    for (int p = 0; p < B * C; p++) {
        const float *x = inp + (size_t)p * H * W;
        for (int oh = 0; oh < OH; oh++)
            for (int ow = 0; ow < OW; ow++) {
                int best = (oh * stride) * W + ow * stride;
                for (int i = 0; i < K; i++)
                    for (int j = 0; j < K; j++) {
                        int at = (oh * stride + i) * W + ow * stride + j;
                        if (x[at] > x[best] || isnan(x[at]))
                            best = at;
                    }
                out[((size_t)p * OH + oh) * OW + ow] = x[best];
                idx[((size_t)p * OH + oh) * OW + ow] = best;
            }
    }
}

void op_maxpool_backward_cpu(float *dinp, const float *dout, const int32_t *idx, int B, int C, int H, int W, int K,
                             int stride)
{
    int OH = (H - K) / stride + 1, OW = (W - K) / stride + 1;
#pragma omp parallel for schedule(static)
    for (int p = 0; p < B * C; p++)
        for (int i = 0; i < OH * OW; i++)
            dinp[(size_t)p * H * W + idx[(size_t)p * OH * OW + i]] += dout[(size_t)p * OH * OW + i];
}

void op_avgpool_forward_cpu(float *out, const float *inp, int B, int C, int H, int W, int K, int stride)
{
    int OH = (H - K) / stride + 1, OW = (W - K) / stride + 1;
    float inv = 1.0f / (float)(K * K);
#pragma omp parallel for schedule(static)
    for (int p = 0; p < B * C; p++) {
        const float *x = inp + (size_t)p * H * W;
        for (int oh = 0; oh < OH; oh++)
            for (int ow = 0; ow < OW; ow++) {
                float s = 0.0f;
                for (int i = 0; i < K; i++)
                    for (int j = 0; j < K; j++)
                        s += x[(oh * stride + i) * W + ow * stride + j];
                out[((size_t)p * OH + oh) * OW + ow] = s * inv;
            }
    }
}

void op_avgpool_backward_cpu(float *dinp, const float *dout, int B, int C, int H, int W, int K, int stride)
{
    int OH = (H - K) / stride + 1, OW = (W - K) / stride + 1;
    float inv = 1.0f / (float)(K * K);
#pragma omp parallel for schedule(static)
    for (int p = 0; p < B * C; p++) {
        float *dx = dinp + (size_t)p * H * W;
        for (int oh = 0; oh < OH; oh++)
            for (int ow = 0; ow < OW; ow++) {
                float g = dout[((size_t)p * OH + oh) * OW + ow] * inv;
                for (int i = 0; i < K; i++)
                    for (int j = 0; j < K; j++)
                        dx[(oh * stride + i) * W + ow * stride + j] += g;
            }
    }
}

void op_relu_forward_cpu(float *out, const float *inp, size_t n)
{
#pragma omp parallel for schedule(dynamic, ELEMS)
    for (size_t i = 0; i < n; i++)
        out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void op_relu_backward_cpu(float *dinp, const float *out, const float *dout, size_t n)
{
#pragma omp parallel for schedule(dynamic, ELEMS)
    for (size_t i = 0; i < n; i++)
        dinp[i] += out[i] > 0.0f ? dout[i] : 0.0f;
}

void op_dropout_forward_cpu(float *out, const float *inp, const float *mask, size_t n)
{
    if (!mask) {
        memcpy(out, inp, n * sizeof(float));
        return;
    }
#pragma omp parallel for schedule(dynamic, ELEMS)
    for (size_t i = 0; i < n; i++)
        out[i] = inp[i] * mask[i];
}

void op_dropout_backward_cpu(float *dinp, const float *mask, const float *dout, size_t n)
{
#pragma omp parallel for schedule(dynamic, ELEMS)
    for (size_t i = 0; i < n; i++)
        dinp[i] += dout[i] * mask[i];
}

/* ---- channels-last (NHWC) pooling, and the layout transpose ---- */

void op_maxpool_nhwc_forward_cpu(float *out, int32_t *idx, const float *inp, int B, int C, int H, int W, int K,
                                 int stride)
{
    int OH = (H - K) / stride + 1, OW = (W - K) / stride + 1;
#pragma omp parallel for schedule(dynamic, 1)
    for (int r = 0; r < B * OH; r++) {
        int b = r / OH, oh = r % OH;
        const float *x = inp + (size_t)b * H * W * C;
        for (int ow = 0; ow < OW; ow++) {
            float *y = out + ((size_t)r * OW + ow) * C;
            int32_t *ix = idx + ((size_t)r * OW + ow) * C;
            int at0 = (oh * stride) * W + ow * stride;
            for (int c = 0; c < C; c++) {
                y[c] = x[(size_t)at0 * C + c];
                ix[c] = at0;
            }
            for (int i = 0; i < K; i++)
                for (int j = 0; j < K; j++) {
                    int at = (oh * stride + i) * W + ow * stride + j;
                    const float *xv = x + (size_t)at * C;
                    for (int c = 0; c < C; c++)
                        if (xv[c] > y[c] || isnan(xv[c])) {
                            y[c] = xv[c];
                            ix[c] = at;
                        }
                }
        }
    }
}

void op_maxpool_nhwc_backward_cpu(float *dinp, const float *dout, const int32_t *idx, int B, int C, int H, int W,
                                  int K, int stride)
{
    int OH = (H - K) / stride + 1, OW = (W - K) / stride + 1;
#pragma omp parallel for schedule(dynamic, 1)
    for (int b = 0; b < B; b++) {
        float *dx = dinp + (size_t)b * H * W * C;
        const float *dy = dout + (size_t)b * OH * OW * C;
        const int32_t *ix = idx + (size_t)b * OH * OW * C;
        for (int i = 0; i < OH * OW; i++)
            for (int c = 0; c < C; c++)
                dx[(size_t)ix[(size_t)i * C + c] * C + c] += dy[(size_t)i * C + c];
    }
}

void op_avgpool_nhwc_forward_cpu(float *out, const float *inp, int B, int C, int H, int W, int K, int stride)
{
    int OH = (H - K) / stride + 1, OW = (W - K) / stride + 1;
    float inv = 1.0f / (float)(K * K);
#pragma omp parallel for schedule(dynamic, 1)
    for (int r = 0; r < B * OH; r++) {
        int b = r / OH, oh = r % OH;
        const float *x = inp + (size_t)b * H * W * C;
        for (int ow = 0; ow < OW; ow++) {
            float *y = out + ((size_t)r * OW + ow) * C;
            for (int c = 0; c < C; c++)
                y[c] = 0.0f;
            for (int i = 0; i < K; i++)
                for (int j = 0; j < K; j++) {
                    const float *xv = x + ((size_t)(oh * stride + i) * W + ow * stride + j) * C;
                    for (int c = 0; c < C; c++)
                        y[c] += xv[c];
                }
            for (int c = 0; c < C; c++)
                y[c] *= inv;
        }
    }
}

void op_avgpool_nhwc_backward_cpu(float *dinp, const float *dout, int B, int C, int H, int W, int K, int stride)
{
    int OH = (H - K) / stride + 1, OW = (W - K) / stride + 1;
    float inv = 1.0f / (float)(K * K);
#pragma omp parallel for schedule(dynamic, 1)
    for (int b = 0; b < B; b++)
        for (int oh = 0; oh < OH; oh++)
            for (int ow = 0; ow < OW; ow++) {
                const float *g = dout + (((size_t)b * OH + oh) * OW + ow) * C;
                for (int i = 0; i < K; i++)
                    for (int j = 0; j < K; j++) {
                        float *dx = dinp + (((size_t)b * H + oh * stride + i) * W + ow * stride + j) * C;
                        for (int c = 0; c < C; c++)
                            dx[c] += g[c] * inv;
                    }
            }
}

void op_layout_transpose_cpu(float *out, const float *inp, int B, int C, int HW, int to_nhwc, int add)
{
#pragma omp parallel for schedule(dynamic, 1)
    for (int b = 0; b < B; b++) {
        const float *x = inp + (size_t)b * C * HW;
        float *y = out + (size_t)b * C * HW;
        for (int c = 0; c < C; c++)
            for (int i = 0; i < HW; i++) {
                size_t nchw = (size_t)c * HW + i, nhwc = (size_t)i * C + c;
                size_t from = to_nhwc ? nchw : nhwc, to = to_nhwc ? nhwc : nchw;
                y[to] = (add ? y[to] : 0.0f) + x[from];
            }
    }
}
