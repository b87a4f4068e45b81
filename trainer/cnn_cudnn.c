/* cnn_cudnn.c: cnn_cudnn.h on cuDNN's classic convolution and
 * BatchNorm calls, loaded with dlopen like attention_cudnn.c. Descriptors
 * are made per call (four small host structures: cheap beside the
 * convolution). The algorithms are chosen once per shape and remembered:
 * cuDNN's heuristic ranking (the _v7 queries, as PyTorch without
 * cudnn.benchmark), its first deterministic choice that the shape supports;
 * with --conv-autotune, cuDNN times every algorithm on the device (the
 * cudnnFind queries, as cudnn.benchmark) and the fastest is kept. A fixed
 * algorithm is refused for some shapes (CUDNN_STATUS_BAD_PARAM). */
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
    X(cudnnBatchNormalizationForwardInference) X(cudnnBatchNormalizationBackward)                                \
    X(cudnnGetConvolutionForwardAlgorithm_v7) X(cudnnGetConvolutionBackwardDataAlgorithm_v7)                     \
    X(cudnnGetConvolutionBackwardFilterAlgorithm_v7) X(cudnnFindConvolutionForwardAlgorithm)                     \
    X(cudnnFindConvolutionBackwardDataAlgorithm) X(cudnnFindConvolutionBackwardFilterAlgorithm)

static struct {
    void *lib;
    cudnnHandle_t handle;
#define FIELD(f) __typeof__(f) *f;
    CUDNN_FUNCTIONS(FIELD)
#undef FIELD
    void (*last_error)(char *message, size_t max_size); /* cudnnGetLastErrorString, where the library has it */
} api;

/* One shape's algorithms and the workspace the three need together. */
typedef struct conv_plan {
    int key[8]; /* B C H W OC K stride pad */
    cudnnConvolutionFwdAlgo_t fwd;
    cudnnConvolutionBwdDataAlgo_t bwd_data;
    cudnnConvolutionBwdFilterAlgo_t bwd_filter;
    size_t ws_bytes;
    bool timed;    /* chosen by timing (--conv-autotune), ms[] the chosen ones' times */
    float ms[3];   /* forward, backward data, backward filter */
} conv_plan;

enum { PLAN_CAP = 64 };
static conv_plan plans[PLAN_CAP];
static int n_plans, next_evict;

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
        void *last = dlsym(lib, "cudnnGetLastErrorString");
        if (last)
            memcpy(&api.last_error, &last, sizeof last);
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

/* A failed call's message: cuDNN's status and, from 9.0, its own reason. */
static int cudnn_error(const char *call, cudnnStatus_t st)
{
    char why[512] = "";
    if (api.last_error)
        api.last_error(why, sizeof why);
    for (char *c = why; *c; c++) /* one line */
        if (*c == '\n')
            *c = ' ';
    return tr_error_set(TR_EINVAL, "cuDNN %s: %s%s%s", call, api.cudnnGetErrorString(st), *why ? ": " : "", why);
}

#define CHECK(call)                                                                                              \
    do {                                                                                                         \
        cudnnStatus_t st_ = (call);                                                                              \
        if (st_ != CUDNN_STATUS_SUCCESS) {                                                                       \
            rc = cudnn_error(#call, st_);                                                                        \
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

/* The first of cuDNN's ranked choices that the shape supports, deterministic
 * if one is; -1 if none is supported. */
#define PICK(perf, n, out)                                                                                       \
    do {                                                                                                         \
        (out) = -1;                                                                                              \
        for (int i_ = 0; i_ < (n) && (out) < 0; i_++)                                                            \
            if ((perf)[i_].status == CUDNN_STATUS_SUCCESS && (perf)[i_].determinism == CUDNN_DETERMINISTIC)      \
                (out) = i_;                                                                                      \
        for (int i_ = 0; i_ < (n) && (out) < 0; i_++)                                                            \
            if ((perf)[i_].status == CUDNN_STATUS_SUCCESS)                                                       \
                (out) = i_;                                                                                      \
    } while (0)

/* One query's choice into the plan: the algorithm, its workspace and time. */
#define CHOOSE(perf, n, field, slot)                                                                            \
    do {                                                                                                         \
        PICK(perf, n, at);                                                                                       \
        if (at < 0)                                                                                              \
            goto unsupported;                                                                                    \
        p.field = (perf)[at].algo;                                                                               \
        p.ws_bytes = (perf)[at].memory > p.ws_bytes ? (perf)[at].memory : p.ws_bytes;                           \
        p.ms[slot] = (perf)[at].time;                                                                            \
    } while (0)

/* The shape's plan, made on first use from the descriptors d: timed on the
 * device when autotune (cuDNN's Find queries run every algorithm, in memory
 * of their own, and rank them by time), else from the heuristics. */
static int conv_plan_of(const conv_plan **out, const conv_descs *d, const int key[8], bool autotune)
{
    for (int i = 0; i < n_plans; i++)
        if (!memcmp(plans[i].key, key, sizeof plans[i].key)) {
            *out = &plans[i];
            return TR_OK;
        }
    int rc = TR_OK, n, at;
    conv_plan p = {.timed = autotune};
    memcpy(p.key, key, sizeof p.key);
    cudnnConvolutionFwdAlgoPerf_t fwd[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    cudnnConvolutionBwdDataAlgoPerf_t bwd_data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    cudnnConvolutionBwdFilterAlgoPerf_t bwd_filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    /* Find (timed) and Get_v7 (heuristic) take the same arguments */
    CHECK((autotune ? api.cudnnFindConvolutionForwardAlgorithm : api.cudnnGetConvolutionForwardAlgorithm_v7)(
        api.handle, d->x, d->w, d->conv, d->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, fwd));
    CHOOSE(fwd, n, fwd, 0);
    CHECK((autotune ? api.cudnnFindConvolutionBackwardDataAlgorithm : api.cudnnGetConvolutionBackwardDataAlgorithm_v7)(
        api.handle, d->w, d->y, d->conv, d->x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &n, bwd_data));
    CHOOSE(bwd_data, n, bwd_data, 1);
    CHECK((autotune ? api.cudnnFindConvolutionBackwardFilterAlgorithm
                    : api.cudnnGetConvolutionBackwardFilterAlgorithm_v7)(
        api.handle, d->x, d->y, d->conv, d->w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &n, bwd_filter));
    CHOOSE(bwd_filter, n, bwd_filter, 2);
    at = n_plans < PLAN_CAP ? n_plans++ : next_evict++ % PLAN_CAP;
    plans[at] = p;
    *out = &plans[at];
    return TR_OK;
unsupported:
    return tr_error_set(TR_EINVAL, "cuDNN supports no convolution algorithm for batch %d, %d channels of %dx%d, "
                        "%d outputs, kernel %d, stride %d, padding %d", key[0], key[1], key[2], key[3], key[4],
                        key[5], key[6], key[7]);
cleanup:
    return rc;
}

int tr_cnn_cudnn_conv_choices(char *buf, size_t n)
{
    size_t at = 0;
    int shown = 0;
    if (n)
        buf[0] = '\0';
    for (int i = 0; i < n_plans && at < n; i++) {
        const conv_plan *p = &plans[i];
        if (!p->timed)
            continue;
        const int *k = p->key;
        int w = snprintf(buf + at, n - at, "conv batch %d, %dx%dx%d -> %d, k%d s%d p%d: forward algo %d (%.3f ms), "
                         "backward data algo %d (%.3f ms), backward filter algo %d (%.3f ms)\n", k[0], k[1], k[2],
                         k[3], k[4], k[5], k[6], k[7], (int)p->fwd, p->ms[0], (int)p->bwd_data, p->ms[1],
                         (int)p->bwd_filter, p->ms[2]);
        if (w < 0)
            break;
        at += (size_t)w;
        shown++;
    }
    return shown;
}

int tr_cnn_cudnn_conv_workspace(size_t *out, int B, int C, int H, int W, int OC, int K, int stride, int pad,
                                bool autotune)
{
    *out = 0;
    int rc = load(0);
    if (rc < 0)
        return rc;
    conv_descs d;
    if ((rc = conv_make(&d, B, C, H, W, OC, K, stride, pad)) < 0)
        return rc;
    const int key[8] = {B, C, H, W, OC, K, stride, pad};
    const conv_plan *p;
    if ((rc = conv_plan_of(&p, &d, key, autotune)) == TR_OK)
        *out = p->ws_bytes;
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
    const int key[8] = {B, C, H, W, OC, K, stride, pad};
    const conv_plan *p;
    if ((rc = conv_plan_of(&p, &d, key, false)) < 0) /* made by the workspace query before */
        goto cleanup;
    const float one = 1.0f, zero = 0.0f;
    CHECK(api.cudnnConvolutionForward(api.handle, &one, d.x, inp, d.w, weight, d.conv, p->fwd, ws, ws_bytes, &zero,
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
    const int key[8] = {B, C, H, W, OC, K, stride, pad};
    const conv_plan *p;
    if ((rc = conv_plan_of(&p, &d, key, false)) < 0) /* made by the workspace query before */
        goto cleanup;
    const float one = 1.0f, beta_p = add_dparams ? 1.0f : 0.0f;
    CHECK(api.cudnnConvolutionBackwardFilter(api.handle, &one, d.x, inp, d.y, dout, d.conv, p->bwd_filter, ws,
                                             ws_bytes, &beta_p, d.w, dweight));
    if (dbias)
        CHECK(api.cudnnConvolutionBackwardBias(api.handle, &one, d.y, dout, &beta_p, d.b, dbias));
    if (dinp) /* ops.h: the input's gradient adds */
        CHECK(api.cudnnConvolutionBackwardData(api.handle, &one, d.w, weight, d.y, dout, d.conv, p->bwd_data, ws,
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
