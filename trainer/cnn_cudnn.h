/* cnn_cudnn.h: the CNN's convolution and BatchNorm on cuDNN's classic API
 * (cudnnConvolution*, cudnnBatchNormalization*), for the CUDA backend.
 * Built only with cuDNN's headers (HAVE_CUDNN); libcudnn.so.9 is dlopened
 * at the first call, so the trainer starts without it and the CNN ops then
 * fail naming why. NCHW fp32; the algorithms are chosen per shape at its
 * workspace query (cuDNN's heuristics, or its timing with autotune) and kept
 * for the process. Gradients follow ops.h: dinp adds (beta 1), parameter
 * gradients add only when asked. Errors: a negative code and a message
 * naming the cuDNN call and its status. One backend thread calls it. */
#ifndef TR_CNN_CUDNN_H
#define TR_CNN_CUDNN_H

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>

/* Bytes of workspace the three convolution calls need at most for this
 * shape, whose algorithms are chosen here on its first query: timed on the
 * device if autotune (cudnn.benchmark's way), else cuDNN's heuristics. */
int tr_cnn_cudnn_conv_workspace(size_t *out, int B, int C, int H, int W, int OC, int K, int stride, int pad,
                                bool autotune);
/* The timed shapes' choices, a line each, into buf; returns how many. */
int tr_cnn_cudnn_conv_choices(char *buf, size_t n);
int tr_cnn_cudnn_conv_forward(float *out, const float *inp, const float *weight, const float *bias, void *ws,
                              size_t ws_bytes, int B, int C, int H, int W, int OC, int K, int stride, int pad,
                              cudaStream_t stream);
/* dinp and dbias may be NULL. */
int tr_cnn_cudnn_conv_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                               const float *weight, void *ws, size_t ws_bytes, int B, int C, int H, int W, int OC,
                               int K, int stride, int pad, bool add_dparams, cudaStream_t stream);
/* training: batch statistics (mean and the inverse standard deviation kept
 * for the backward), running averages moved by momentum; else the running
 * averages normalize. */
int tr_cnn_cudnn_batchnorm_forward(float *out, float *mean, float *rstd, float *running_mean, float *running_var,
                                   const float *inp, const float *weight, const float *bias, int B, int C, int HW,
                                   bool training, float momentum, float eps, cudaStream_t stream);
int tr_cnn_cudnn_batchnorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                                    const float *weight, const float *mean, const float *rstd, int B, int C, int HW,
                                    bool add_dparams, float eps, cudaStream_t stream);

#endif
