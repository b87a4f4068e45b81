/* cnn_cudnn.c: cnn_cudnn.h on cuDNN's classic convolution and
 * BatchNorm calls, loaded with dlopen like attention_cudnn.c. Descriptors
 * are made per call (four small host structures: cheap beside the
 * convolution) so no shape cache can go stale. */
#include "config.h"

#include "cnn_cudnn.h"

#include "error.h"

#include <cudnn.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define CUDNN_FUNCTIONS(X)                                                                                       \
    X(cudnnGetErrorString) X(cudnnCreate) X(cudnnSetStream) X(cudnnCreateTensorDescriptor)                       \
    X(cudnnSetTensor4dDescriptor) X(cudnnDestroyTensorDescriptor) X(cudnnCreateFilterDescriptor)                 \
    X(cudnnSetFilter4dDescriptor) X(cudnnDestroyFilterDescriptor) X(cudnnCreateConvolutionDescriptor)            \
    X(cudnnSetConvolution2dDescriptor) X(cudnnDestroyConvolutionDescriptor)                                      \
    X(cudnnGetConvolutionForwardWorkspaceSize) X(cudnnGetConvolutionBackwardDataWorkspaceSize)                   \
    X(cudnnGetConvolutionBackwardFilterWorkspaceSize) X(cudnnConvolutionForward)                                 \
    X(cudnnConvolutionBackwardData) X(cudnnConvolutionBackwardFilter) X(cudnnConvolutionBackwardBias)            \
    X(cudnnAddTensor) X(cudnnDeriveBNTensorDescriptor) X(cudnnBatchNormalizationForwardTraining)                 \
    X(cudnnBatchNormalizationForwardInference) X(cudnnBatchNormalizationBackward)

static struct {
    void *lib;
    cudnnHandle_t handle;
#define FIELD(f) __typeof__(f) *f;
    CUDNN_FUNCTIONS(FIELD)
#undef FIELD
} api;

static const cudnnConvolutionFwdAlgo_t FWD_ALGO = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
static const cudnnConvolutionBwdDataAlgo_t BWD_DATA_ALGO = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
static const cudnnConvolutionBwdFilterAlgo_t BWD_FILTER_ALGO = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;

static int load(cudaStream_t stream)
{
    if (!api.lib) {
        static const char *const paths[] = {"libcudnn.so.9", GT_CUDA_LIBDIR "/libcudnn.so.9"};
        void *lib = NULL;
        for (size_t i = 0; i < sizeof paths / sizeof *paths && !lib; i++)
            lib = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            return tr_error_set(TR_EINVAL, "cuDNN: libcudnn.so.9 does not load (%s): the CNN's convolution and "
                                "BatchNorm need it on the cuda backend", dlerror());
#define LOAD(f)                                                                                                  \
    {                                                                                                            \
        void *sym = dlsym(lib, #f);                                                                              \
        if (!sym) {                                                                                              \
            dlclose(lib);                                                                                        \
            return tr_error_set(TR_EINVAL, "cuDNN: the loaded libcudnn.so.9 has no %s", #f);                    \
        }                                                                                                        \
        memcpy(&api.f, &sym, sizeof sym);                                                                        \
    }
        CUDNN_FUNCTIONS(LOAD)
#undef LOAD
        cudnnStatus_t st = api.cudnnCreate(&api.handle);
        if (st != CUDNN_STATUS_SUCCESS) {
            int rc = tr_error_set(TR_EINVAL, "cuDNN cudnnCreate: %s", api.cudnnGetErrorString(st));
            dlclose(lib);
            return rc;
        }
        api.lib = lib;
    }
    cudnnStatus_t st = api.cudnnSetStream(api.handle, stream);
    if (st != CUDNN_STATUS_SUCCESS)
        return tr_error_set(TR_EINVAL, "cuDNN cudnnSetStream: %s", api.cudnnGetErrorString(st));
    return TR_OK;
}

/* The descriptors of one convolution (x, w, conv, y, and the bias's (1,OC,1,1)). */
typedef struct conv_descs {
    cudnnTensorDescriptor_t x, y, b;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
} conv_descs;

#define CHECK(call)                                                                                              \
    do {                                                                                                         \
        cudnnStatus_t st_ = (call);                                                                              \
        if (st_ != CUDNN_STATUS_SUCCESS) {                                                                       \
            rc = tr_error_set(TR_EINVAL, "cuDNN %s: %s", #call, api.cudnnGetErrorString(st_));                   \
            goto cleanup;                                                                                        \
        }                                                                                                        \
    } while (0)

static void conv_free(conv_descs *d)
{
    if (d->x) api.cudnnDestroyTensorDescriptor(d->x);
    if (d->y) api.cudnnDestroyTensorDescriptor(d->y);
    if (d->b) api.cudnnDestroyTensorDescriptor(d->b);
    if (d->w) api.cudnnDestroyFilterDescriptor(d->w);
    if (d->conv) api.cudnnDestroyConvolutionDescriptor(d->conv);
}

static int conv_make(conv_descs *d, int B, int C, int H, int W, int OC, int K, int stride, int pad)
{
    int rc = TR_OK, OH = (H + 2 * pad - K) / stride + 1, OW = (W + 2 * pad - K) / stride + 1;
    memset(d, 0, sizeof(*d));
    CHECK(api.cudnnCreateTensorDescriptor(&d->x));
    CHECK(api.cudnnCreateTensorDescriptor(&d->y));
    CHECK(api.cudnnCreateTensorDescriptor(&d->b));
    CHECK(api.cudnnCreateFilterDescriptor(&d->w));
    CHECK(api.cudnnCreateConvolutionDescriptor(&d->conv));
    CHECK(api.cudnnSetTensor4dDescriptor(d->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, B, C, H, W));
    CHECK(api.cudnnSetTensor4dDescriptor(d->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, B, OC, OH, OW));
    CHECK(api.cudnnSetTensor4dDescriptor(d->b, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, OC, 1, 1));
    CHECK(api.cudnnSetFilter4dDescriptor(d->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, OC, C, K, K));
    CHECK(api.cudnnSetConvolution2dDescriptor(d->conv, pad, pad, stride, stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                              CUDNN_DATA_FLOAT));
    return TR_OK;
cleanup:
    conv_free(d);
    return rc;
}

int tr_cnn_cudnn_conv_workspace(size_t *out, int B, int C, int H, int W, int OC, int K, int stride, int pad)
{
    *out = 0;
    int rc = load(0);
    if (rc < 0)
        return rc;
    conv_descs d;
    if ((rc = conv_make(&d, B, C, H, W, OC, K, stride, pad)) < 0)
        return rc;
    size_t f = 0, bd = 0, bf = 0;
    CHECK(api.cudnnGetConvolutionForwardWorkspaceSize(api.handle, d.x, d.w, d.conv, d.y, FWD_ALGO, &f));
    CHECK(api.cudnnGetConvolutionBackwardDataWorkspaceSize(api.handle, d.w, d.y, d.conv, d.x, BWD_DATA_ALGO, &bd));
    CHECK(api.cudnnGetConvolutionBackwardFilterWorkspaceSize(api.handle, d.x, d.y, d.conv, d.w, BWD_FILTER_ALGO,
                                                             &bf));
    *out = f > bd ? f : bd;
    *out = *out > bf ? *out : bf;
cleanup:
    conv_free(&d);
    return rc;
}

int tr_cnn_cudnn_conv_forward(float *out, const float *inp, const float *weight, const float *bias, void *ws,
                              size_t ws_bytes, int B, int C, int H, int W, int OC, int K, int stride, int pad,
                              cudaStream_t stream)
{
    int rc = load(stream);
    if (rc < 0)
        return rc;
    conv_descs d;
    if ((rc = conv_make(&d, B, C, H, W, OC, K, stride, pad)) < 0)
        return rc;
    const float one = 1.0f, zero = 0.0f;
    CHECK(api.cudnnConvolutionForward(api.handle, &one, d.x, inp, d.w, weight, d.conv, FWD_ALGO, ws, ws_bytes, &zero,
                                      d.y, out));
    if (bias)
        CHECK(api.cudnnAddTensor(api.handle, &one, d.b, bias, &one, d.y, out));
cleanup:
    conv_free(&d);
    return rc;
}

int tr_cnn_cudnn_conv_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                               const float *weight, void *ws, size_t ws_bytes, int B, int C, int H, int W, int OC,
                               int K, int stride, int pad, bool add_dparams, cudaStream_t stream)
{
    int rc = load(stream);
    if (rc < 0)
        return rc;
    conv_descs d;
    if ((rc = conv_make(&d, B, C, H, W, OC, K, stride, pad)) < 0)
        return rc;
    const float one = 1.0f, beta_p = add_dparams ? 1.0f : 0.0f;
    CHECK(api.cudnnConvolutionBackwardFilter(api.handle, &one, d.x, inp, d.y, dout, d.conv, BWD_FILTER_ALGO, ws,
                                             ws_bytes, &beta_p, d.w, dweight));
    if (dbias)
        CHECK(api.cudnnConvolutionBackwardBias(api.handle, &one, d.y, dout, &beta_p, d.b, dbias));
    if (dinp) /* ops.h: the input's gradient adds */
        CHECK(api.cudnnConvolutionBackwardData(api.handle, &one, d.w, weight, d.y, dout, d.conv, BWD_DATA_ALGO, ws,
                                               ws_bytes, &one, d.x, dinp));
cleanup:
    conv_free(&d);
    return rc;
}

/* The (B,C,HW) activation as (B,C,HW,1) and BatchNorm's (1,C,1,1) derived from it. */
static int bn_make(cudnnTensorDescriptor_t *x, cudnnTensorDescriptor_t *bn, int B, int C, int HW)
{
    int rc = TR_OK;
    *x = *bn = NULL;
    CHECK(api.cudnnCreateTensorDescriptor(x));
    CHECK(api.cudnnCreateTensorDescriptor(bn));
    CHECK(api.cudnnSetTensor4dDescriptor(*x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, B, C, HW, 1));
    CHECK(api.cudnnDeriveBNTensorDescriptor(*bn, *x, CUDNN_BATCHNORM_SPATIAL));
    return TR_OK;
cleanup:
    if (*x) api.cudnnDestroyTensorDescriptor(*x);
    if (*bn) api.cudnnDestroyTensorDescriptor(*bn);
    *x = *bn = NULL;
    return rc;
}

int tr_cnn_cudnn_batchnorm_forward(float *out, float *mean, float *rstd, float *running_mean, float *running_var,
                                   const float *inp, const float *weight, const float *bias, int B, int C, int HW,
                                   bool training, float momentum, float eps, cudaStream_t stream)
{
    int rc = load(stream);
    if (rc < 0)
        return rc;
    cudnnTensorDescriptor_t x, bn;
    if ((rc = bn_make(&x, &bn, B, C, HW)) < 0)
        return rc;
    const float one = 1.0f, zero = 0.0f;
    if (training) /* cuDNN's running variance is unbiased, as PyTorch's */
        CHECK(api.cudnnBatchNormalizationForwardTraining(api.handle, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x, inp, x,
                                                         out, bn, weight, bias, momentum, running_mean, running_var,
                                                         eps, mean, rstd));
    else
        CHECK(api.cudnnBatchNormalizationForwardInference(api.handle, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x, inp,
                                                          x, out, bn, weight, bias, running_mean, running_var, eps));
cleanup:
    api.cudnnDestroyTensorDescriptor(x);
    api.cudnnDestroyTensorDescriptor(bn);
    return rc;
}

int tr_cnn_cudnn_batchnorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                                    const float *weight, const float *mean, const float *rstd, int B, int C, int HW,
                                    bool add_dparams, float eps, cudaStream_t stream)
{
    if (!dinp)
        return tr_error_set(TR_EINVAL, "cuDNN BatchNorm backward: the input's gradient is needed (cuDNN writes it)");
    int rc = load(stream);
    if (rc < 0)
        return rc;
    cudnnTensorDescriptor_t x, bn;
    if ((rc = bn_make(&x, &bn, B, C, HW)) < 0)
        return rc;
    const float one = 1.0f, beta_p = add_dparams ? 1.0f : 0.0f;
    CHECK(api.cudnnBatchNormalizationBackward(api.handle, CUDNN_BATCHNORM_SPATIAL, &one, &one, &one, &beta_p, x, inp,
                                              x, dout, x, dinp, bn, weight, dweight, dbias, eps, mean, rstd));
cleanup:
    api.cudnnDestroyTensorDescriptor(x);
    api.cudnnDestroyTensorDescriptor(bn);
    return rc;
}
