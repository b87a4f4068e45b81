/* backend_cuda.c: the CUDA backend: the ops of backend.h on the kernels of
 * kernels/cuda and cuBLASLt GEMMs, device memory for the caching allocator,
 * a compute stream and a copy stream. It does not know the model. This file
 * makes and frees it and holds its memory, copies and streams; the ops,
 * the GEMMs, expandable segments and the step on the device are its parts
 * (backend_cuda_core.h lists them).
 *
 * Streams: every op runs on the compute stream, so ops are ordered without
 * events and the allocator's blocks (all on stream 0) are reused in stream
 * order. Host-to-device copies from pinned memory go through the copy
 * stream into a ring of device staging buffers, then to their destination
 * on the compute stream after an event: the copy overlaps whatever compute
 * is still queued, and no device buffer is written while a queued kernel may
 * read it. The host waits for that copy (microseconds), never for compute,
 * so the caller may refill its buffer as soon as copy_h2d returns (the
 * loader's contract). Pageable copies are cudaMemcpyAsync on the compute
 * stream, which the driver makes wait for the stream: what --pin-memory
 * removes. Nothing else synchronizes the host but copy_d2h to host memory
 * and the reductions read back (sumsq, all_finite), one sync each.
 *
 * Dtypes: the roles of op_roles.h (the activation dtype, fp32, tokens),
 * for which the kernels are instantiated, checked by the one function the
 * CPU backend calls too; an op refuses other combinations by name.
 *
 * NVTX: each op opens one range (category "compute"), as the CPU backend
 * does; the kernels' launchers, which open their own when called directly,
 * are told not to (kc_nvtx_ranges), so a trace has one range per op.
 *
 * Memory: segments from cudaMalloc, or with expandable segments physical
 * memory (cuMemCreate) mapped into one reserved virtual range
 * (cuMemAddressReserve, cuMemMap, cuMemSetAccess) at the lowest free
 * address, in granularity-sized chunks, PyTorch's expandable_segments
 * mechanism (backend_cuda_vmm.c). The driver API is reached through
 * cudaGetDriverEntryPoint, so the trainer does not link libcuda and still starts on machines without a
 * driver (it then says so). The allocator announces segments and blocks
 * through the NVTX memory API itself (alloc.c), as on the CPU. */
#include "backend_cuda.h"

#include "backend_cuda_core.h"
#include "backend_cuda_step.h"
#include "error.h"
#ifdef HAVE_CUDNN
#include "attention_cudnn.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- memory: segments for the caching allocator ---- */

static void *seg_alloc_plain(size_t n, void *ctx)
{
    (void)ctx;
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, n);
    if (err == cudaSuccess)
        return p;
    (void)cudaGetLastError(); /* an out-of-memory error is not sticky: clear it */
    if (err != cudaErrorMemoryAllocation)
        tr_cuda_fail("cudaMalloc of a segment", err);
    return NULL; /* the allocator frees its cache, retries, then reports with its statistics */
}

static void seg_free_plain(void *p, size_t n, void *ctx)
{
    (void)n;
    (void)ctx;
    tr_cuda_check(cudaFree(p), "cudaFree of a segment"); /* cudaFree waits for the device */
}

/* ---- copies, streams ---- */

static bool is_device(const void *p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

static bool is_pinned(const void *p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return a.type == cudaMemoryTypeHost;
}

static void copy_h2d(tr_backend *be, void *dst, const void *src, size_t n, int stream)
{
    (void)stream;
    cuda_backend *cb = cb_of(be);
    tr_nvtx_push_static("copy_h2d");
    if (tr_cuda_step_capturing(cb->step)) {
        /* a captured copy reads its source again at every replay: the step's
         * pinned inputs, which the trainer rewrites before each, or device memory */
        bool input = tr_cuda_step_is_input(cb->step, src, n);
        if (!input && !is_device(src))
            tr_cuda_step_refuse("a host-to-device copy from memory other than the step's pinned inputs");
        tr_cuda_check(
            cudaMemcpyAsync(dst, src, n, input ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToDevice, cb->compute),
            "a captured copy");
    } else if (is_device(src)) {
        tr_cuda_check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, cb->compute), "device-to-device copy");
    } else if (!is_pinned(src)) {
        tr_cuda_check(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, cb->compute),
                      "pageable host-to-device copy");
    } else {
        struct stage *s = &cb->stages[cb->next_stage];
        cb->next_stage = (cb->next_stage + 1) % N_STAGES;
        if (s->cap < n) { /* first use, or a larger batch: the old buffer's last reader must be done */
            tr_cuda_check(cudaEventSynchronize(s->consumed), "waiting for a staging buffer");
            tr_cuda_check(cudaFree(s->dev), "cudaFree of a staging buffer");
            s->dev = NULL;
            tr_cuda_check(cudaMalloc(&s->dev, n), "cudaMalloc of a staging buffer");
            s->cap = n;
        }
        tr_cuda_check(cudaStreamWaitEvent(cb->copy, s->consumed, 0), "copy stream waits for the staging buffer");
        tr_cuda_check(cudaMemcpyAsync(s->dev, src, n, cudaMemcpyHostToDevice, cb->copy), "pinned host-to-device copy");
        tr_cuda_check(cudaEventRecord(s->copied, cb->copy), "event after the copy");
        tr_cuda_check(cudaStreamWaitEvent(cb->compute, s->copied, 0), "compute stream waits for the copy");
        tr_cuda_check(cudaMemcpyAsync(dst, s->dev, n, cudaMemcpyDeviceToDevice, cb->compute), "staging to destination");
        tr_cuda_check(cudaEventRecord(s->consumed, cb->compute), "event after the staging buffer's use");
        /* the caller may reuse src at once: wait for the DMA only (the copy
         * stream holds nothing else), not for the compute stream */
        tr_cuda_check(cudaEventSynchronize(s->copied), "waiting for the host-to-device copy");
    }
    if (cb->opt.sync_every_op)
        tr_cuda_check(cudaStreamSynchronize(cb->compute), "copy_h2d");
    tr_nvtx_pop();
}

static void copy_d2h(tr_backend *be, void *dst, const void *src, size_t n, int stream)
{
    (void)stream;
    cuda_backend *cb = cb_of(be);
    tr_nvtx_push_static("copy_d2h");
    if (tr_cuda_step_capturing(cb->step))
        tr_cuda_step_refuse("a device-to-host copy");
    tr_cuda_check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, cb->compute), "device-to-host copy");
    if (!is_device(dst)) /* the caller reads dst at once */
        tr_cuda_check(cudaStreamSynchronize(cb->compute),
                      "waiting for a device-to-host copy (a kernel before it failed?)");
    tr_nvtx_pop();
}

/* An op range, as the CPU backend's memset has: the traces keep one shape. */
static void memset0(tr_backend *be, void *dst, size_t n, int stream)
{
    (void)stream;
    cuda_backend *cb = cb_of(be);
    tr_nvtx_push_op("memset");
    tr_cuda_check(cudaMemsetAsync(dst, 0, n, cb->compute), "cudaMemsetAsync");
    if (cb->opt.sync_every_op)
        tr_cuda_check(cudaStreamSynchronize(cb->compute), "memset0");
    tr_nvtx_pop();
}

static void synchronize(tr_backend *be, int stream)
{
    (void)stream;
    tr_cuda_check(cudaStreamSynchronize(cb_of(be)->compute), "synchronize");
}

static void *host_alloc(tr_backend *be, size_t n)
{
    void *p = NULL;
    if (cb_of(be)->opt.pin_memory) {
        cudaError_t err = cudaHostAlloc(&p, n, cudaHostAllocDefault);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            return NULL;
        }
        return p;
    }
    return posix_memalign(&p, 4096, n) == 0 ? p : NULL;
}

static void host_free(tr_backend *be, void *p)
{
    if (cb_of(be)->opt.pin_memory)
        tr_cuda_check(cudaFreeHost(p), "cudaFreeHost");
    else
        free(p);
}

static void *compute_stream(tr_backend *be, int *device)
{
    *device = cb_of(be)->opt.device;
    return cb_of(be)->compute;
}
/* ---- making and freeing the backend ---- */

/* This file's part of the table; the ops and GEMMs fill theirs (tr_cuda_ops_fill, tr_cuda_gemm_fill). */
static const tr_backend table = {
    .name = "cuda",
    .device = TR_CUDA,
    .n_threads = 1,
    .copy_h2d = copy_h2d,
    .copy_d2h = copy_d2h,
    .memset0 = memset0,
    .synchronize = synchronize,
    .compute_stream = compute_stream,
    .host_alloc = host_alloc,
    .host_free = host_free,
    .step_ops = &tr_cuda_step_ops,
};

/* The checks a user needs named before anything runs. */
static int open_device(const tr_cuda_options *opt, struct cudaDeviceProp *prop, int *driver)
{
    int runtime = 0, n = 0;
    *driver = 0;
    cudaDriverGetVersion(driver);
    cudaRuntimeGetVersion(&runtime);
    if (*driver == 0)
        return tr_error_set(TR_EINVAL, "--backend cuda: no NVIDIA driver is loaded (libcuda.so.1 is missing or "
                                       "did not load); install the driver, or use --backend cpu");
    if (*driver < runtime)
        return tr_error_set(TR_EINVAL, "--backend cuda: the NVIDIA driver supports CUDA %d.%d, but this trainer "
                                       "was built with CUDA %d.%d; install a newer driver, or use --backend cpu",
                            *driver / 1000, *driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess || n == 0) {
        (void)cudaGetLastError();
        return tr_error_set(TR_EINVAL, "--backend cuda: no CUDA device (%s); use --backend cpu",
                            err != cudaSuccess ? cudaGetErrorString(err) : "the driver sees none");
    }
    if (opt->device < 0 || opt->device >= n)
        return tr_error_set(TR_EINVAL, "--device %d: this machine has %d CUDA device(s), 0 to %d", opt->device, n,
                            n - 1);
    if ((err = cudaSetDevice(opt->device)) != cudaSuccess ||
        (err = cudaGetDeviceProperties(prop, opt->device)) != cudaSuccess)
        return tr_error_set(TR_EINVAL, "--device %d: %s", opt->device, cudaGetErrorString(err));
    if (prop->major < 8)
        return tr_error_set(TR_EINVAL, "--device %d is %s (sm_%d%d): the kernels need sm_80 or newer (bf16, "
                                       "configure --with-cuda-arch)",
                            opt->device, prop->name, prop->major, prop->minor);
    return TR_OK;
}

/* cuDNN for --attention auto and cudnn, on the device open_device chose;
 * only --attention cudnn fails without it. The banner says which runs. */
static int attention_init(cuda_backend *cb)
{
    if (cb->opt.attention == TR_CUDA_ATTENTION_OWN) {
        snprintf(cb->cudnn_why, sizeof cb->cudnn_why, "--attention own");
    } else {
#ifdef HAVE_CUDNN
        if (tr_attn_cudnn_new(&cb->cudnn, NULL) < 0)
            snprintf(cb->cudnn_why, sizeof cb->cudnn_why, "%s", tr_error_last());
#else
        snprintf(cb->cudnn_why, sizeof cb->cudnn_why, "this trainer was built without cuDNN (configure found no "
                                                      "cudnn.h or libcudnn)");
#endif
        if (!cb->cudnn && cb->opt.attention == TR_CUDA_ATTENTION_CUDNN)
            return tr_error_set(TR_EINVAL, "--attention cudnn: %s", cb->cudnn_why);
    }
    size_t n = strlen(cb->description);
#ifdef HAVE_CUDNN
    if (cb->cudnn) {
        snprintf(cb->description + n, sizeof cb->description - n, "; attention: cuDNN %s fused for bf16/fp16, own "
                                                                    "kernel for fp32",
                 tr_attn_cudnn_version(cb->cudnn));
        return TR_OK;
    }
#endif
    snprintf(cb->description + n, sizeof cb->description - n, "; attention: own kernel (%.200s)", cb->cudnn_why);
    return TR_OK;
}

int tr_backend_cuda_new(tr_backend **out, const tr_cuda_options *opt)
{
    *out = NULL;
    struct cudaDeviceProp prop;
    int driver, rc = open_device(opt, &prop, &driver);
    if (rc < 0)
        return rc;
    cuda_backend *cb = calloc(1, sizeof *cb);
    if (!cb)
        return tr_error_set(TR_ENOMEM, "out of host memory");
    cb->be = table;
    tr_cuda_ops_fill(&cb->be);
    tr_cuda_gemm_fill(&cb->be);
    cb->opt = *opt;
    snprintf(cb->device_name, sizeof cb->device_name, "cuda:%d", opt->device);
    snprintf(cb->description, sizeof cb->description, "%.100s, sm_%d%d, %d SMs, %.1f GiB, driver %d.%d", prop.name,
             prop.major, prop.minor, prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0, driver / 1000,
             driver % 1000 / 10);
    cb->be.mem = (tr_mem_ops){seg_alloc_plain, seg_free_plain, cb, cb->device_name};
    if (opt->expandable_segments) {
        if ((rc = tr_cuda_vmm_init(cb, opt->device, prop.totalGlobalMem)) < 0) {
            free(cb);
            return rc;
        }
        cb->be.mem.seg_alloc = tr_cuda_vmm_seg_alloc;
        cb->be.mem.seg_free = tr_cuda_vmm_seg_free;
    }
    if ((rc = attention_init(cb)) < 0) {
        if (cb->vmm.on)
            cb->vmm.address_free(cb->vmm.base, cb->vmm.reserved);
        free(cb);
        return rc;
    }
    tr_cuda_check(cudaStreamCreateWithFlags(&cb->compute, cudaStreamNonBlocking), "creating the compute stream");
    tr_cuda_check(cudaStreamCreateWithFlags(&cb->copy, cudaStreamNonBlocking), "creating the copy stream");
    for (int i = 0; i < N_STAGES; i++) {
        tr_cuda_check(cudaEventCreateWithFlags(&cb->stages[i].copied, cudaEventDisableTiming), "cudaEventCreate");
        tr_cuda_check(cudaEventCreateWithFlags(&cb->stages[i].consumed, cudaEventDisableTiming), "cudaEventCreate");
    }
    tr_cuda_check_lt(cublasLtCreate(&cb->lt), "cublasLtCreate");
    tr_cuda_check(cudaMalloc(&cb->lt_workspace, LT_WORKSPACE_BYTES), "cudaMalloc of cuBLASLt's workspace");
    tr_cuda_check(cudaMalloc((void **)&cb->red_dev, sizeof *cb->red_dev), "cudaMalloc");
    tr_cuda_check(cudaHostAlloc((void **)&cb->red_host, sizeof *cb->red_host, cudaHostAllocDefault), "cudaHostAlloc");
    if ((rc = tr_cuda_step_new(&cb->step, cb->compute, opt->sync_every_op)) < 0) {
        tr_backend_cuda_free(&cb->be);
        return rc;
    }
    cb->be.step_ctx = cb->step;
    /* each op opens its range here (category "compute", as on the CPU): one per op, not the launcher's too */
    kc_nvtx_ranges(0);
    *out = &cb->be;
    return TR_OK;
}

void tr_backend_cuda_free(tr_backend *be)
{
    if (!be)
        return;
    cuda_backend *cb = cb_of(be);
    tr_cuda_check(cudaDeviceSynchronize(), "waiting for the device at the end");
    tr_cuda_step_free(cb->step);
    tr_cuda_gemm_free(cb);
    for (int i = 0; i < N_STAGES; i++) {
        cudaFree(cb->stages[i].dev);
        cudaEventDestroy(cb->stages[i].copied);
        cudaEventDestroy(cb->stages[i].consumed);
    }
    cublasLtDestroy(cb->lt);
    cudaFree(cb->lt_workspace);
    cudaFree(cb->scratch);
#ifdef HAVE_CUDNN
    tr_attn_cudnn_free(cb->cudnn);
#endif
    cudaFree(cb->red_dev);
    cudaFreeHost(cb->red_host);
    cudaStreamDestroy(cb->compute);
    cudaStreamDestroy(cb->copy);
    tr_cuda_vmm_free(cb);
    free(cb);
}

const char *tr_backend_cuda_describe(const tr_backend *be) { return ((const cuda_backend *)be)->description; }
