/* backend_cuda.c: the CUDA backend: the ops of backend.h on the kernels of
 * kernels/cuda and cuBLASLt GEMMs, device memory for the caching allocator,
 * a compute stream and a copy stream. It does not know the model.
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
 * Dtypes: the model passes each op tensors of two roles, the activation
 * dtype (fp32, bf16 or fp16 under --amp) and fp32 (the residual stream,
 * LayerNorm statistics, parameter gradients, biases, optimizer state). The
 * kernels are instantiated for those roles; an op refuses other
 * combinations by name, as the CPU backend refuses dtypes.
 *
 * Memory: segments from cudaMalloc, or with expandable segments physical
 * memory (cuMemCreate) mapped into one reserved virtual range
 * (cuMemAddressReserve, cuMemMap, cuMemSetAccess) at the lowest free
 * address, in granularity-sized chunks, PyTorch's expandable_segments
 * mechanism. The driver API is reached through cudaGetDriverEntryPoint, so
 * the trainer does not link libcuda and still starts on machines without a
 * driver (it then says so). The allocator announces segments and blocks
 * through the NVTX memory API itself (alloc.c), as on the CPU. */
#include "config.h"

#include "backend_cuda.h"

#include "backend_cuda_step.h"
#include "error.h"
#include "kernels_cuda.h"
#include "nvtx.h"
#ifdef HAVE_CUDNN
#include "attention_cudnn.h"
#endif

/* cublasLt.h declares a function without a prototype */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cublasLt.h>
#pragma GCC diagnostic pop
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N_STAGES = 4, N_ALGOS = 8, AUTOTUNE_REPS = 5 };
#define LT_WORKSPACE_BYTES ((size_t)32 << 20) /* cuBLASLt's workspace: 32 MiB, as llm.c gives it on Hopper */

/* One GEMM shape and configuration; its algorithm is chosen once. */
typedef struct gemm_key {
    int m, n, k, lda, ldb, ldd, ld_aux;
    int ta, tb, td;           /* KC_* dtypes of A, B and C = D */
    int trans_a, trans_b;
    int epilogue;             /* cublasLtEpilogue_t */
    int align_a, align_b, align_d, align_bias, align_aux; /* pointer alignments the algorithm may assume */
} gemm_key;

typedef struct gemm_plan {
    gemm_key key;
    bool supported;           /* false: cuBLASLt offers no algorithm (an epilogue falls back to a kernel) */
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, d;
    cublasLtMatmulAlgo_t algo;
    float ms;                 /* the autotuned time of the chosen algorithm; 0 if not timed */
} gemm_plan;

/* A mapped part of the expandable range. */
typedef struct vmm_range {
    size_t offset, size;
    CUmemGenericAllocationHandle handle;
} vmm_range;

typedef CUresult (*pfn_mem_create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                                   unsigned long long);
typedef CUresult (*pfn_mem_release)(CUmemGenericAllocationHandle);
typedef CUresult (*pfn_mem_address_reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*pfn_mem_address_free)(CUdeviceptr, size_t);
typedef CUresult (*pfn_mem_map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
typedef CUresult (*pfn_mem_unmap)(CUdeviceptr, size_t);
typedef CUresult (*pfn_mem_set_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
typedef CUresult (*pfn_mem_get_granularity)(size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags);
typedef CUresult (*pfn_device_get)(CUdevice *, int);
typedef CUresult (*pfn_device_get_attribute)(int *, CUdevice_attribute, CUdevice);

typedef struct cuda_backend {
    tr_backend be; /* first: the table the model sees */
    tr_cuda_options opt;
    char device_name[16]; /* "cuda:0" */
    char description[512];
    struct tr_attn_cudnn *cudnn; /* cuDNN's fused attention; NULL: the own kernel only (why says why) */
    char cudnn_why[256];
    bool cudnn_fallback_said; /* --attention auto said once that a shape had no cuDNN plan */
    cudaStream_t compute, copy;
    cublasLtHandle_t lt;
    void *lt_workspace;
    void *scratch; /* kernels' workspace (column-sum partials, reductions) */
    size_t scratch_bytes;
    kc_reduction *red_dev, *red_host; /* a reduction's result, and its pinned read-back */
    tr_cuda_step *step; /* the step decided on the device, its CUDA graph (backend_cuda_step.c) */
    struct stage {
        void *dev;
        size_t cap;
        cudaEvent_t copied, consumed;
    } stages[N_STAGES];
    int next_stage;
    gemm_plan *plans;
    int n_plans, cap_plans;
    struct {
        bool on;
        CUdeviceptr base;
        size_t reserved, granularity;
        vmm_range *ranges; /* sorted by offset */
        int n, cap;
        CUmemAllocationProp prop;
        pfn_mem_create create;
        pfn_mem_release release;
        pfn_mem_address_reserve reserve;
        pfn_mem_address_free address_free;
        pfn_mem_map map;
        pfn_mem_unmap unmap;
        pfn_mem_set_access set_access;
        pfn_mem_get_granularity granularity_of;
        pfn_device_get device_get;
        pfn_device_get_attribute device_attribute;
    } vmm;
} cuda_backend;

static cuda_backend *cb_of(tr_backend *be) { return (cuda_backend *)be; }

/* ---- errors: programs fail fast with the op and a hint (llm.c's cudaCheck) ---- */

static void fail_cuda(const char *what, cudaError_t err)
{
    fprintf(stderr, "trainer: cuda: %s: %s (%s)\n", what, cudaGetErrorString(err), cudaGetErrorName(err));
    if (err == cudaErrorIllegalAddress || err == cudaErrorLaunchFailure)
        fprintf(stderr, "trainer: a kernel failed; run with --sync-every-op to find which, or under "
                        "compute-sanitizer\n");
    if (err == cudaErrorStreamCaptureUnsupported || err == cudaErrorStreamCaptureInvalidated ||
        err == cudaErrorStreamCaptureImplicit || err == cudaErrorCapturedEvent)
        fprintf(stderr, "trainer: --cuda-graph: the step did something a CUDA graph cannot capture; train "
                        "without --cuda-graph\n");
    exit(1);
}

static void check(cudaError_t err, const char *what)
{
    if (err != cudaSuccess)
        fail_cuda(what, err);
}

static void check_lt(cublasStatus_t st, const char *what)
{
    if (st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "trainer: cublasLt: %s: status %d\n", what, (int)st);
        exit(1);
    }
}

/* An op's end: the launch's error, then with --sync-every-op the wait that
 * shows what synchronization costs (and names the op that failed). */
static void op_done(cuda_backend *cb, const char *op, int err)
{
    if (err)
        fail_cuda(op, (cudaError_t)err);
    if (cb->opt.sync_every_op)
        check(cudaStreamSynchronize(cb->compute), op);
    tr_nvtx_pop();
}

#define OP(name)                      \
    cuda_backend *cb = cb_of(be);     \
    const char *op_name = name;       \
    tr_nvtx_push_static(name)
#define DONE(err) op_done(cb, op_name, (err))

/* ---- dtype roles ---- */

static void refuse(const char *op, const char *what, const tr_tensor *t, const char *wanted)
{
    fprintf(stderr, "trainer: the cuda backend has no %s kernel for %s as %s on %s (it takes %s)\n", op, what,
            tr_dtype_name(t->dtype), t->device == TR_CUDA ? "cuda" : "cpu", wanted);
    exit(1);
}

static float *f32(const char *op, const char *what, const tr_tensor *t)
{
    if (!t)
        return NULL;
    if (t->device != TR_CUDA || t->dtype != TR_F32)
        refuse(op, what, t, "F32 on cuda");
    return t->data;
}

/* An activation-dtype tensor: the first one fixes *dt, the others match it. */
static void *act(const char *op, const char *what, const tr_tensor *t, int *dt)
{
    if (!t)
        return NULL;
    if (t->device != TR_CUDA || t->dtype == TR_I32 || (*dt >= 0 && (int)t->dtype != *dt))
        refuse(op, what, t, *dt >= 0 ? tr_dtype_name((tr_dtype)*dt) : "F32, BF16 or F16 on cuda");
    *dt = (int)t->dtype; /* TR_F32/BF16/F16 are KC_F32/BF16/F16 */
    return t->data;
}

static const int32_t *i32(const char *op, const tr_tensor *t)
{
    if (t->device != TR_CUDA || t->dtype != TR_I32)
        refuse(op, "tokens", t, "I32 on cuda");
    return t->data;
}

/* The kernels' workspace, grown between ops (the first step sizes it). */
static void *scratch(cuda_backend *cb, size_t n_bytes)
{
    if (n_bytes <= cb->scratch_bytes)
        return cb->scratch;
    if (tr_cuda_step_capturing(cb->step)) /* the warm-up steps sized it: a shape not seen there */
        tr_cuda_step_refuse("the kernels' workspace had to grow (cudaMalloc)");
    check(cudaStreamSynchronize(cb->compute), "growing the kernel workspace");
    if (!tr_cuda_step_retire(cb->step, cb->scratch)) /* a captured graph's kernels still use it */
        check(cudaFree(cb->scratch), "cudaFree of the kernel workspace");
    cb->scratch = NULL;
    size_t n = n_bytes + n_bytes / 2;
    check(cudaMalloc(&cb->scratch, n), "cudaMalloc of the kernel workspace");
    cb->scratch_bytes = n;
    return cb->scratch;
}

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
        fail_cuda("cudaMalloc of a segment", err);
    return NULL; /* the allocator frees its cache, retries, then reports with its statistics */
}

static void seg_free_plain(void *p, size_t n, void *ctx)
{
    (void)n;
    (void)ctx;
    check(cudaFree(p), "cudaFree of a segment"); /* cudaFree waits for the device */
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

static void *seg_alloc_vmm(size_t n, void *ctx)
{
    cuda_backend *cb = ctx;
    size_t size = round_up(n, cb->vmm.granularity), off = 0;
    int at = 0; /* the lowest gap that fits, between ranges[at-1] and ranges[at] */
    for (; at < cb->vmm.n; at++) {
        if (cb->vmm.ranges[at].offset - off >= size)
            break;
        off = cb->vmm.ranges[at].offset + cb->vmm.ranges[at].size;
    }
    if (off + size > cb->vmm.reserved)
        return NULL;
    CUmemGenericAllocationHandle h;
    CUresult r = cb->vmm.create(&h, size, &cb->vmm.prop, 0);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
        return NULL;
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "trainer: cuda: cuMemCreate of %zu bytes: error %d\n", size, (int)r);
        exit(1);
    }
    CUdeviceptr p = cb->vmm.base + off;
    CUmemAccessDesc access = {.location = cb->vmm.prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    if ((r = cb->vmm.map(p, size, 0, h, 0)) != CUDA_SUCCESS || (r = cb->vmm.set_access(p, size, &access, 1)) != CUDA_SUCCESS) {
        fprintf(stderr, "trainer: cuda: mapping %zu bytes into the expandable range: error %d\n", size, (int)r);
        exit(1);
    }
    if (cb->vmm.n == cb->vmm.cap) {
        int cap = cb->vmm.cap ? 2 * cb->vmm.cap : 64;
        vmm_range *v = realloc(cb->vmm.ranges, cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "trainer: out of host memory\n");
            exit(1);
        }
        cb->vmm.ranges = v;
        cb->vmm.cap = cap;
    }
    memmove(&cb->vmm.ranges[at + 1], &cb->vmm.ranges[at], (cb->vmm.n - at) * sizeof *cb->vmm.ranges);
    cb->vmm.ranges[at] = (vmm_range){off, size, h};
    cb->vmm.n++;
    return (void *)(uintptr_t)p;
}

static void seg_free_vmm(void *ptr, size_t n, void *ctx)
{
    (void)n;
    cuda_backend *cb = ctx;
    size_t off = (size_t)((CUdeviceptr)(uintptr_t)ptr - cb->vmm.base);
    for (int i = 0; i < cb->vmm.n; i++) {
        vmm_range *r = &cb->vmm.ranges[i];
        if (r->offset != off)
            continue;
        /* nothing queued may still read the pages */
        check(cudaDeviceSynchronize(), "waiting before unmapping a segment");
        if (cb->vmm.unmap(cb->vmm.base + off, r->size) != CUDA_SUCCESS || cb->vmm.release(r->handle) != CUDA_SUCCESS) {
            fprintf(stderr, "trainer: cuda: unmapping a segment of the expandable range failed\n");
            exit(1);
        }
        memmove(r, r + 1, (cb->vmm.n - i - 1) * sizeof *r);
        cb->vmm.n--;
        return;
    }
    fprintf(stderr, "trainer: cuda: %p is not a segment of the expandable range\n", ptr);
    exit(1);
}

static int vmm_symbol(const char *name, void **fn)
{
    enum cudaDriverEntryPointQueryResult q;
    cudaError_t err = cudaGetDriverEntryPointByVersion(name, fn, 12000, cudaEnableDefault, &q);
    if (err != cudaSuccess || q != cudaDriverEntryPointSuccess || !*fn)
        return tr_error_set(TR_EINVAL, "--expandable-segments: the driver has no %s", name);
    return TR_OK;
}

static int vmm_init(cuda_backend *cb, int device, size_t total_bytes)
{
    struct { const char *name; void **fn; } syms[] = {
        {"cuMemCreate", (void **)&cb->vmm.create},
        {"cuMemRelease", (void **)&cb->vmm.release},
        {"cuMemAddressReserve", (void **)&cb->vmm.reserve},
        {"cuMemAddressFree", (void **)&cb->vmm.address_free},
        {"cuMemMap", (void **)&cb->vmm.map},
        {"cuMemUnmap", (void **)&cb->vmm.unmap},
        {"cuMemSetAccess", (void **)&cb->vmm.set_access},
        {"cuMemGetAllocationGranularity", (void **)&cb->vmm.granularity_of},
        {"cuDeviceGet", (void **)&cb->vmm.device_get},
        {"cuDeviceGetAttribute", (void **)&cb->vmm.device_attribute},
    };
    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
        int rc = vmm_symbol(syms[i].name, syms[i].fn);
        if (rc < 0)
            return rc;
    }
    CUdevice dev;
    int vmm_supported = 0;
    if (cb->vmm.device_get(&dev, device) != CUDA_SUCCESS ||
        cb->vmm.device_attribute(&vmm_supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev) !=
            CUDA_SUCCESS ||
        !vmm_supported) /* as PyTorch checks: cuMemCreate would fail with a bare error code */
        return tr_error_set(TR_EINVAL, "--expandable-segments: device %d does not support virtual memory management "
                                       "(cuMemCreate, cuMemMap); train without --expandable-segments", device);
    memset(&cb->vmm.prop, 0, sizeof cb->vmm.prop);
    cb->vmm.prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    cb->vmm.prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    cb->vmm.prop.location.id = device;
    if (cb->vmm.granularity_of(&cb->vmm.granularity, &cb->vmm.prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) !=
        CUDA_SUCCESS)
        return tr_error_set(TR_EINVAL, "--expandable-segments: the device gives no allocation granularity");
    /* virtual space for all of the device's memory, twice over for holes */
    cb->vmm.reserved = round_up(2 * total_bytes, cb->vmm.granularity);
    if (cb->vmm.reserve(&cb->vmm.base, cb->vmm.reserved, 0, 0, 0) != CUDA_SUCCESS)
        return tr_error_set(TR_ENOMEM, "--expandable-segments: cannot reserve %zu bytes of virtual addresses",
                            cb->vmm.reserved);
    cb->vmm.on = true;
    return TR_OK;
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
        check(cudaMemcpyAsync(dst, src, n, input ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToDevice, cb->compute),
              "a captured copy");
    } else if (is_device(src)) {
        check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, cb->compute), "device-to-device copy");
    } else if (!is_pinned(src)) {
        check(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, cb->compute), "pageable host-to-device copy");
    } else {
        struct stage *s = &cb->stages[cb->next_stage];
        cb->next_stage = (cb->next_stage + 1) % N_STAGES;
        if (s->cap < n) { /* first use, or a larger batch: the old buffer's last reader must be done */
            check(cudaEventSynchronize(s->consumed), "waiting for a staging buffer");
            check(cudaFree(s->dev), "cudaFree of a staging buffer");
            s->dev = NULL;
            check(cudaMalloc(&s->dev, n), "cudaMalloc of a staging buffer");
            s->cap = n;
        }
        check(cudaStreamWaitEvent(cb->copy, s->consumed, 0), "copy stream waits for the staging buffer");
        check(cudaMemcpyAsync(s->dev, src, n, cudaMemcpyHostToDevice, cb->copy), "pinned host-to-device copy");
        check(cudaEventRecord(s->copied, cb->copy), "event after the copy");
        check(cudaStreamWaitEvent(cb->compute, s->copied, 0), "compute stream waits for the copy");
        check(cudaMemcpyAsync(dst, s->dev, n, cudaMemcpyDeviceToDevice, cb->compute), "staging to destination");
        check(cudaEventRecord(s->consumed, cb->compute), "event after the staging buffer's use");
        /* the caller may reuse src at once: wait for the DMA only (the copy
         * stream holds nothing else), not for the compute stream */
        check(cudaEventSynchronize(s->copied), "waiting for the host-to-device copy");
    }
    if (cb->opt.sync_every_op)
        check(cudaStreamSynchronize(cb->compute), "copy_h2d");
    tr_nvtx_pop();
}

static void copy_d2h(tr_backend *be, void *dst, const void *src, size_t n, int stream)
{
    (void)stream;
    cuda_backend *cb = cb_of(be);
    tr_nvtx_push_static("copy_d2h");
    if (tr_cuda_step_capturing(cb->step))
        tr_cuda_step_refuse("a device-to-host copy");
    check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, cb->compute), "device-to-host copy");
    if (!is_device(dst)) /* the caller reads dst at once */
        check(cudaStreamSynchronize(cb->compute), "waiting for a device-to-host copy (a kernel before it failed?)");
    tr_nvtx_pop();
}

static void memset0(tr_backend *be, void *dst, size_t n, int stream)
{
    (void)stream;
    cuda_backend *cb = cb_of(be);
    check(cudaMemsetAsync(dst, 0, n, cb->compute), "cudaMemsetAsync");
    if (cb->opt.sync_every_op)
        check(cudaStreamSynchronize(cb->compute), "memset0");
}

static void synchronize(tr_backend *be, int stream)
{
    (void)stream;
    check(cudaStreamSynchronize(cb_of(be)->compute), "synchronize");
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
        check(cudaFreeHost(p), "cudaFreeHost");
    else
        free(p);
}

/* ---- GEMMs on cuBLASLt ---- */

static cudaDataType_t lt_type(int dt)
{
    return dt == KC_BF16 ? CUDA_R_16BF : dt == KC_F16 ? CUDA_R_16F : CUDA_R_32F;
}

static int alignment(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    int al = 256;
    while (al > 1 && a % al)
        al /= 2;
    return al;
}

static size_t dt_size(int dt) { return dt == KC_F32 ? 4 : 2; }

/* The epilogue's pointers, set before each use of the plan and before its
 * heuristic, which takes their alignment from their values (cublasLt.h). */
static void set_epilogue_pointers(gemm_plan *p, const void *bias, const void *aux)
{
    if (bias)
        check_lt(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
                 "bias pointer");
    if (aux)
        check_lt(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof aux),
                 "aux pointer");
}

/* Times each candidate on a scratch output, once per shape; the choice is
 * kept in the plan. */
static void autotune(cuda_backend *cb, gemm_plan *p, const cublasLtMatmulHeuristicResult_t *cand, int n_cand,
                     const void *A, const void *B, const void *bias)
{
    size_t d_bytes = (size_t)p->key.ldd * p->key.n * dt_size(p->key.td);
    size_t aux_bytes = p->key.ld_aux ? (size_t)p->key.ld_aux * p->key.n * dt_size(p->key.td) : 0;
    void *d = NULL, *aux = NULL;
    check(cudaMalloc(&d, d_bytes), "cudaMalloc for autotuning");
    check(cudaMemsetAsync(d, 0, d_bytes, cb->compute), "autotune memset");
    if (aux_bytes)
        check(cudaMalloc(&aux, aux_bytes), "cudaMalloc for autotuning");
    set_epilogue_pointers(p, bias, aux);
    cudaEvent_t t0, t1;
    check(cudaEventCreate(&t0), "cudaEventCreate");
    check(cudaEventCreate(&t1), "cudaEventCreate");
    float alpha = 1.0f, beta = 0.0f, best = -1.0f;
    for (int i = 0; i < n_cand; i++) {
        if (cublasLtMatmul(cb->lt, p->desc, &alpha, A, p->a, B, p->b, &beta, d, p->d, d, p->d, &cand[i].algo,
                           cb->lt_workspace, LT_WORKSPACE_BYTES, cb->compute) != CUBLAS_STATUS_SUCCESS) {
            (void)cudaGetLastError(); /* a refused launch's error, else the next kernel's check reports it */
            continue;                 /* warm-up; a candidate that fails is not chosen */
        }
        check(cudaEventRecord(t0, cb->compute), "cudaEventRecord");
        for (int r = 0; r < AUTOTUNE_REPS; r++)
            check_lt(cublasLtMatmul(cb->lt, p->desc, &alpha, A, p->a, B, p->b, &beta, d, p->d, d, p->d,
                                    &cand[i].algo, cb->lt_workspace, LT_WORKSPACE_BYTES, cb->compute),
                     "autotuning");
        check(cudaEventRecord(t1, cb->compute), "cudaEventRecord");
        check(cudaEventSynchronize(t1), "autotuning");
        float ms;
        check(cudaEventElapsedTime(&ms, t0, t1), "cudaEventElapsedTime");
        ms /= AUTOTUNE_REPS;
        if (best < 0 || ms < best) {
            best = ms;
            p->algo = cand[i].algo;
        }
    }
    if (best >= 0)
        p->ms = best;
    check(cudaEventDestroy(t0), "cudaEventDestroy");
    check(cudaEventDestroy(t1), "cudaEventDestroy");
    check(cudaFree(d), "cudaFree after autotuning");
    if (aux)
        check(cudaFree(aux), "cudaFree after autotuning");
}

static gemm_plan *plan_for(cuda_backend *cb, const gemm_key *key, const void *A, const void *B, const void *bias,
                           const void *aux)
{
    for (int i = 0; i < cb->n_plans; i++)
        if (!memcmp(&cb->plans[i].key, key, sizeof *key))
            return &cb->plans[i];
    if (cb->n_plans == cb->cap_plans) {
        int cap = cb->cap_plans ? 2 * cb->cap_plans : 32;
        gemm_plan *v = realloc(cb->plans, cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "trainer: out of host memory\n");
            exit(1);
        }
        cb->plans = v;
        cb->cap_plans = cap;
    }
    if (cb->opt.autotune && tr_cuda_step_capturing(cb->step)) /* it allocates and waits */
        tr_cuda_step_refuse("a GEMM shape the warm-up steps did not run needs --autotune");
    gemm_plan *p = &cb->plans[cb->n_plans++];
    memset(p, 0, sizeof *p);
    p->key = *key;
    bool all_f32 = key->ta == KC_F32 && key->tb == KC_F32 && key->td == KC_F32;
    cublasComputeType_t compute = all_f32 && cb->opt.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    check_lt(cublasLtMatmulDescCreate(&p->desc, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
    cublasOperation_t ta = key->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = key->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    check_lt(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "transa");
    check_lt(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "transb");
    cublasLtEpilogue_t epi = (cublasLtEpilogue_t)key->epilogue;
    check_lt(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi), "epilogue");
    if (epi != CUBLASLT_EPILOGUE_DEFAULT) {
        cudaDataType_t bias_type = CUDA_R_32F; /* biases are the fp32 master weights */
        check_lt(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                                sizeof bias_type),
                 "bias type");
    }
    if (key->ld_aux) {
        int64_t ld = key->ld_aux;
        cudaDataType_t aux_type = lt_type(key->td);
        check_lt(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof ld),
                 "aux ld");
        check_lt(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &aux_type,
                                                sizeof aux_type),
                 "aux type");
    }
    set_epilogue_pointers(p, bias, aux);
    /* column-major layouts: op(A) is m x k, op(B) is k x n, D is m x n */
    check_lt(cublasLtMatrixLayoutCreate(&p->a, lt_type(key->ta), key->trans_a ? key->k : key->m,
                                        key->trans_a ? key->m : key->k, key->lda),
             "layout A");
    check_lt(cublasLtMatrixLayoutCreate(&p->b, lt_type(key->tb), key->trans_b ? key->n : key->k,
                                        key->trans_b ? key->k : key->n, key->ldb),
             "layout B");
    check_lt(cublasLtMatrixLayoutCreate(&p->d, lt_type(key->td), key->m, key->n, key->ldd), "layout D");
    cublasLtMatmulPreference_t pref;
    check_lt(cublasLtMatmulPreferenceCreate(&pref), "preference");
    size_t ws = LT_WORKSPACE_BYTES;
    uint32_t al_a = key->align_a, al_b = key->align_b, al_d = key->align_d;
    check_lt(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
             "workspace");
    check_lt(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a,
                                                  sizeof al_a), "alignment");
    check_lt(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b,
                                                  sizeof al_b), "alignment");
    check_lt(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_d,
                                                  sizeof al_d), "alignment");
    check_lt(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_d,
                                                  sizeof al_d), "alignment");
    cublasLtMatmulHeuristicResult_t cand[N_ALGOS];
    int n_cand = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(cb->lt, p->desc, p->a, p->b, p->d, p->d, pref,
                                                       cb->opt.autotune ? N_ALGOS : 1, cand, &n_cand);
    cublasLtMatmulPreferenceDestroy(pref);
    int n_ok = 0; /* cublasLt.h: each result's own state says whether it may be used */
    for (int i = 0; st == CUBLAS_STATUS_SUCCESS && i < n_cand; i++)
        if (cand[i].state == CUBLAS_STATUS_SUCCESS)
            cand[n_ok++] = cand[i];
    n_cand = n_ok;
    p->supported = st == CUBLAS_STATUS_SUCCESS && n_cand > 0;
    if (p->supported) {
        p->algo = cand[0].algo;
        if (cb->opt.autotune && n_cand > 1)
            autotune(cb, p, cand, n_cand, A, B, bias);
    }
    return p;
}

/* D (m x n, column-major, ld ldd) = op(A) op(B) + beta D, with an epilogue
 * (bias of length m, GELU with the pre-activation in aux). Returns false if
 * cuBLASLt has no algorithm for the epilogue; errors otherwise exit. */
static bool gemm(cuda_backend *cb, void *D, int td, int ldd, const void *A, int ta, bool trans_a, int lda,
                 const void *B, int tb, bool trans_b, int ldb, int m, int n, int k, float beta,
                 cublasLtEpilogue_t epi, const float *bias, void *aux, int ld_aux)
{
    if (bias && alignment(bias) < 16)
        return false; /* the epilogue reads the bias in 16-byte vectors */
    if (aux && ld_aux % 8)
        return false; /* cublasLt.h: the GELU input's leading dimension must be divisible by 8 */
    gemm_key key;
    memset(&key, 0, sizeof key); /* compared with memcmp: no stray padding */
    key.m = m, key.n = n, key.k = k, key.lda = lda, key.ldb = ldb, key.ldd = ldd, key.ld_aux = aux ? ld_aux : 0;
    key.ta = ta, key.tb = tb, key.td = td, key.trans_a = trans_a, key.trans_b = trans_b, key.epilogue = epi;
    key.align_a = alignment(A), key.align_b = alignment(B), key.align_d = alignment(D);
    key.align_bias = bias ? alignment(bias) : 0, key.align_aux = aux ? alignment(aux) : 0;
    gemm_plan *p = plan_for(cb, &key, A, B, bias, aux);
    if (!p->supported) {
        if (epi != CUBLASLT_EPILOGUE_DEFAULT)
            return false;
        fprintf(stderr, "trainer: cublasLt has no algorithm for a %dx%dx%d GEMM of %s x %s -> %s\n", m, n, k,
                tr_dtype_name((tr_dtype)ta), tr_dtype_name((tr_dtype)tb), tr_dtype_name((tr_dtype)td));
        exit(1);
    }
    set_epilogue_pointers(p, bias, aux);
    float alpha = 1.0f;
    check_lt(cublasLtMatmul(cb->lt, p->desc, &alpha, A, p->a, B, p->b, &beta, D, p->d, D, p->d, &p->algo,
                            cb->lt_workspace, LT_WORKSPACE_BYTES, cb->compute),
             "cublasLtMatmul");
    return true;
}

/* out (N,OC) = inp (N,C) @ w (OC,C)^T: in column-major terms out^T (OC x N)
 * = w^T (w stored C x OC, transposed) times inp^T (C x N). */
static bool linear(cuda_backend *cb, void *out, const void *inp, const void *w, int dt, int N, int C, int OC,
                   cublasLtEpilogue_t epi, const float *bias, void *aux)
{
    return gemm(cb, out, dt, OC, w, dt, true, C, inp, dt, false, C, OC, N, C, 0.0f, epi, bias, aux, OC);
}

static void matmul_forward(tr_backend *be, tr_tensor *out, const tr_tensor *inp, const tr_tensor *w,
                           const tr_tensor *bias, int N, int C, int OC)
{
    OP("matmul_forward");
    int dt = -1;
    void *o = act(op_name, "out", out, &dt);
    const void *x = act(op_name, "inp", inp, &dt), *W = act(op_name, "weight", w, &dt);
    const float *b = f32(op_name, "bias", bias);
    int err = 0;
    if (!b || !linear(cb, o, x, W, dt, N, C, OC, CUBLASLT_EPILOGUE_BIAS, b, NULL)) {
        linear(cb, o, x, W, dt, N, C, OC, CUBLASLT_EPILOGUE_DEFAULT, NULL, NULL);
        if (b)
            err = kc_bias_add(o, dt, b, N, OC, cb->compute);
    }
    DONE(err);
}

static void matmul_bias_gelu_forward(tr_backend *be, tr_tensor *pre, tr_tensor *out, const tr_tensor *inp,
                                     const tr_tensor *w, const tr_tensor *bias, int N, int C, int OC)
{
    OP("matmul_bias_gelu_forward");
    int dt = -1;
    void *p = act(op_name, "pre", pre, &dt), *o = act(op_name, "out", out, &dt);
    const void *x = act(op_name, "inp", inp, &dt), *W = act(op_name, "weight", w, &dt);
    const float *b = f32(op_name, "bias", bias);
    int err = 0;
    if (!linear(cb, o, x, W, dt, N, C, OC, CUBLASLT_EPILOGUE_GELU_AUX_BIAS, b, p)) {
        linear(cb, p, x, W, dt, N, C, OC, CUBLASLT_EPILOGUE_DEFAULT, NULL, NULL);
        err = kc_bias_gelu(p, o, dt, b, N, OC, cb->compute);
    }
    DONE(err);
}

static void matmul_backward(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *dbias,
                            const tr_tensor *dout, const tr_tensor *inp, const tr_tensor *w, int N, int C, int OC,
                            bool add_dparams)
{
    OP("matmul_backward");
    int dt = -1;
    const void *d = act(op_name, "dout", dout, &dt), *x = act(op_name, "inp", inp, &dt),
               *W = act(op_name, "weight", w, &dt);
    void *dx = act(op_name, "dinp", dinp, &dt);
    float *dW = f32(op_name, "dweight", dw), *db = f32(op_name, "dbias", dbias);
    /* dinp^T (C x N) += w^T as stored (C x OC) times dout^T (OC x N) */
    if (dx)
        gemm(cb, dx, dt, C, W, dt, false, C, d, dt, false, OC, C, N, OC, 1.0f, CUBLASLT_EPILOGUE_DEFAULT, NULL,
             NULL, 0);
    /* dw^T (C x OC) (+)= inp^T (C x N) times dout (N x OC, dout^T transposed) */
    gemm(cb, dW, KC_F32, C, x, dt, false, C, d, dt, true, OC, C, OC, N, add_dparams ? 1.0f : 0.0f,
         CUBLASLT_EPILOGUE_DEFAULT, NULL, NULL, 0);
    int err = 0;
    if (db)
        err = kc_dbias(db, d, dt, N, OC, add_dparams, scratch(cb, kc_dbias_scratch_bytes(N, OC)), cb->compute);
    DONE(err);
}

/* ---- the other ops: one launcher each ---- */

static void encoder_forward(tr_backend *be, tr_tensor *out, const tr_tensor *inp, const tr_tensor *wte,
                            const tr_tensor *wpe, int B, int T, int C)
{
    OP("encoder_forward");
    int dt = -1;
    void *o = act(op_name, "out", out, &dt);
    const void *e = act(op_name, "wte", wte, &dt), *p = act(op_name, "wpe", wpe, &dt);
    DONE(kc_encoder_forward(o, dt, i32(op_name, inp), e, p, B, T, C, cb->compute));
}

static void encoder_backward(tr_backend *be, tr_tensor *dwte, tr_tensor *dwpe, const tr_tensor *dout,
                             const tr_tensor *inp, int B, int T, int C, bool add_dparams)
{
    OP("encoder_backward");
    int dt = -1;
    const void *d = act(op_name, "dout", dout, &dt);
    DONE(kc_encoder_backward(f32(op_name, "dwte", dwte), f32(op_name, "dwpe", dwpe), d, dt, i32(op_name, inp), B, T,
                             C, (int)dwpe->shape[0], add_dparams, cb->compute));
}

static void layernorm_forward(tr_backend *be, tr_tensor *out, tr_tensor *mean, tr_tensor *rstd,
                              const tr_tensor *inp, const tr_tensor *w, const tr_tensor *b, int N, int C)
{
    OP("layernorm_forward");
    int dt = -1;
    void *o = act(op_name, "out", out, &dt);
    DONE(kc_layernorm_forward(o, dt, f32(op_name, "mean", mean), f32(op_name, "rstd", rstd), f32(op_name, "inp", inp),
                              f32(op_name, "weight", w), f32(op_name, "bias", b), N, C, cb->compute));
}

static void layernorm_backward(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *db,
                               const tr_tensor *dout, const tr_tensor *inp, const tr_tensor *w,
                               const tr_tensor *mean, const tr_tensor *rstd, int N, int C, bool add_dparams)
{
    OP("layernorm_backward");
    int dt = -1;
    const void *d = act(op_name, "dout", dout, &dt);
    float *s = scratch(cb, kc_layernorm_backward_scratch_bytes(N, C));
    DONE(kc_layernorm_backward(f32(op_name, "dinp", dinp), f32(op_name, "dweight", dw), f32(op_name, "dbias", db), d,
                               dt, f32(op_name, "inp", inp), f32(op_name, "weight", w), f32(op_name, "mean", mean),
                               f32(op_name, "rstd", rstd), add_dparams, s, N, C, cb->compute));
}

static void residual_layernorm_forward(tr_backend *be, tr_tensor *res, tr_tensor *out, tr_tensor *mean,
                                       tr_tensor *rstd, const tr_tensor *a, const tr_tensor *b, const tr_tensor *w,
                                       const tr_tensor *bias, int N, int C)
{
    OP("residual_layernorm_forward");
    int dt = -1;
    void *o = act(op_name, "out", out, &dt);
    const void *y = act(op_name, "b", b, &dt);
    DONE(kc_residual_layernorm_forward(f32(op_name, "res", res), o, dt, f32(op_name, "mean", mean),
                                       f32(op_name, "rstd", rstd), f32(op_name, "a", a), y, f32(op_name, "weight", w),
                                       f32(op_name, "bias", bias), N, C, cb->compute));
}

static void residual_layernorm_backward(tr_backend *be, tr_tensor *da, tr_tensor *db, tr_tensor *dres,
                                        tr_tensor *dw, tr_tensor *dbias, const tr_tensor *dout, const tr_tensor *res,
                                        const tr_tensor *w, const tr_tensor *mean, const tr_tensor *rstd, int N,
                                        int C, bool add_dparams)
{
    OP("residual_layernorm_backward");
    int dt = -1;
    void *y = act(op_name, "db", db, &dt);
    const void *d = act(op_name, "dout", dout, &dt);
    float *s = scratch(cb, kc_layernorm_backward_scratch_bytes(N, C));
    DONE(kc_residual_layernorm_backward(f32(op_name, "da", da), y, f32(op_name, "dres", dres),
                                        f32(op_name, "dweight", dw), f32(op_name, "dbias", dbias), d, dt,
                                        f32(op_name, "res", res), f32(op_name, "weight", w), f32(op_name, "mean", mean),
                                        f32(op_name, "rstd", rstd), add_dparams, s, N, C, cb->compute));
}

/* ---- attention: cuDNN's fused attention (attention_cudnn.c) or the own kernel ---- */

/* Whether attention on activations of dtype dt at this shape runs on cuDNN,
 * and its workspace then: --attention own never; cudnn always, or an error
 * naming why it cannot; auto when cuDNN loaded, dt is bf16 or fp16 and cuDNN
 * has plans for the shape (else the own kernel, said once). */
static bool use_cudnn(cuda_backend *cb, int dt, int B, int T, int C, int NH, size_t *workspace_bytes)
{
    *workspace_bytes = 0;
    if (cb->opt.attention == TR_CUDA_ATTENTION_OWN)
        return false;
    bool must = cb->opt.attention == TR_CUDA_ATTENTION_CUDNN;
    if (dt == KC_F32) {
        if (!must)
            return false;
        fprintf(stderr, "trainer: --attention cudnn: cuDNN's fused attention has no fp32; train with --amp bf16 "
                        "or fp16, or --attention own\n");
        exit(1);
    }
#ifdef HAVE_CUDNN
    if (cb->cudnn) {
        if (tr_attn_cudnn_prepare(cb->cudnn, (tr_dtype)dt, B, T, NH, C / NH, workspace_bytes) == TR_OK)
            return true;
        if (must) {
            fprintf(stderr, "trainer: --attention cudnn: %s\n", tr_error_last());
            exit(1);
        }
        if (!cb->cudnn_fallback_said)
            fprintf(stderr, "trainer: attention runs on the own kernel: %s\n", tr_error_last());
        cb->cudnn_fallback_said = true;
        return false;
    }
#else
    (void)B, (void)T, (void)C, (void)NH;
#endif
    if (must) { /* tr_backend_cuda_new refused this already; kept for callers that change the options */
        fprintf(stderr, "trainer: --attention cudnn: %s\n", cb->cudnn_why);
        exit(1);
    }
    return false;
}

static void attention_layout(tr_backend *be, tr_dtype act_dt, int B, int T, int C, int NH, tr_tensor *att,
                             tr_tensor *scr)
{
    size_t ws;
    if (use_cudnn(cb_of(be), (int)act_dt, B, T, C, NH, &ws)) {
        *att = (tr_tensor){NULL, TR_F32, TR_CUDA, 3, {B, NH, T}};
        *scr = (tr_tensor){NULL, TR_F32, TR_CUDA, 1, {0}};
    } else {
        *att = (tr_tensor){NULL, act_dt, TR_CUDA, 4, {B, NH, T, T}};
        *scr = (tr_tensor){NULL, TR_F32, TR_CUDA, 4, {B, NH, T, T}};
    }
}

#ifdef HAVE_CUDNN
/* The softmax statistics fused attention keeps in att: (B,NH,T) fp32. */
static float *cudnn_stats(const char *op, const tr_tensor *att, int B, int T, int NH)
{
    float *s = f32(op, "att (softmax statistics)", att);
    if (tr_tensor_numel(att) != (int64_t)B * NH * T) {
        fprintf(stderr, "trainer: %s: cuDNN attention keeps (B,NH,T) = %lld softmax statistics in att, which holds "
                        "%lld (see attention_layout)\n",
                op, (long long)B * NH * T, (long long)tr_tensor_numel(att));
        exit(1);
    }
    return s;
}

static void cudnn_check(const char *op, int rc)
{
    if (rc < 0) {
        fprintf(stderr, "trainer: cuda: %s: %s\n", op, tr_error_last());
        exit(1);
    }
}
#endif

static void attention_forward(tr_backend *be, tr_tensor *out, tr_tensor *att, const tr_tensor *qkv, int B, int T,
                              int C, int NH)
{
    OP("attention_forward");
    int dt = -1;
    void *o = act(op_name, "out", out, &dt);
    const void *x = act(op_name, "qkv", qkv, &dt);
    size_t ws;
    if (use_cudnn(cb, dt, B, T, C, NH, &ws)) {
#ifdef HAVE_CUDNN
        cudnn_check(op_name, tr_attn_cudnn_forward(cb->cudnn, o, cudnn_stats(op_name, att, B, T, NH), x,
                                                   (tr_dtype)dt, B, T, NH, C / NH, scratch(cb, ws), cb->compute));
#endif
        DONE(0);
        return;
    }
    void *a = act(op_name, "att", att, &dt);
    DONE(kc_attention_forward(o, a, x, dt, B, T, C, NH, cb->compute));
}

static void attention_backward(tr_backend *be, tr_tensor *dqkv, tr_tensor *scr, const tr_tensor *dout,
                               const tr_tensor *qkv, const tr_tensor *out, const tr_tensor *att, int B, int T, int C,
                               int NH)
{
    OP("attention_backward");
    int dt = -1;
    void *dq = act(op_name, "dqkv", dqkv, &dt);
    const void *d = act(op_name, "dout", dout, &dt), *q = act(op_name, "qkv", qkv, &dt);
    size_t ws;
    if (use_cudnn(cb, dt, B, T, C, NH, &ws)) {
#ifdef HAVE_CUDNN
        const void *o = act(op_name, "out", out, &dt);
        cudnn_check(op_name, tr_attn_cudnn_backward(cb->cudnn, dq, d, q, o, cudnn_stats(op_name, att, B, T, NH),
                                                    (tr_dtype)dt, B, T, NH, C / NH, scratch(cb, ws), cb->compute));
#endif
        DONE(0);
        return;
    }
    const void *a = act(op_name, "att", att, &dt);
    DONE(kc_attention_backward(dq, f32(op_name, "scratch", scr), d, q, a, dt, B, T, C, NH, cb->compute));
}

static void gelu_forward(tr_backend *be, tr_tensor *out, const tr_tensor *inp)
{
    OP("gelu_forward");
    int dt = -1;
    void *o = act(op_name, "out", out, &dt);
    DONE(kc_gelu_forward(o, act(op_name, "inp", inp, &dt), dt, (long)tr_tensor_numel(inp), cb->compute));
}

static void gelu_backward(tr_backend *be, tr_tensor *dinp, const tr_tensor *inp, const tr_tensor *dout)
{
    OP("gelu_backward");
    int dt = -1;
    void *dx = act(op_name, "dinp", dinp, &dt);
    const void *x = act(op_name, "inp", inp, &dt), *d = act(op_name, "dout", dout, &dt);
    DONE(kc_gelu_backward(dx, x, d, dt, (long)tr_tensor_numel(inp), cb->compute));
}

static void residual_forward(tr_backend *be, tr_tensor *out, const tr_tensor *a, const tr_tensor *b)
{
    OP("residual_forward");
    int dt = -1;
    const void *y = act(op_name, "b", b, &dt);
    DONE(kc_residual_forward(f32(op_name, "out", out), f32(op_name, "a", a), y, dt, (long)tr_tensor_numel(a),
                             cb->compute));
}

static void residual_backward(tr_backend *be, tr_tensor *da, tr_tensor *db, const tr_tensor *dout)
{
    OP("residual_backward");
    int dt = -1;
    void *y = act(op_name, "db", db, &dt);
    DONE(kc_residual_backward(f32(op_name, "da", da), y, dt, f32(op_name, "dout", dout), (long)tr_tensor_numel(dout),
                              cb->compute));
}

static void crossentropy_forward(tr_backend *be, tr_tensor *losses, tr_tensor *probs, const tr_tensor *logits,
                                 const tr_tensor *targets, int N, int V, int Vp)
{
    OP("crossentropy_forward");
    int dt = -1;
    const void *l = act(op_name, "logits", logits, &dt);
    DONE(kc_crossentropy_forward(f32(op_name, "losses", losses), f32(op_name, "probs", probs), l, dt,
                                 i32(op_name, targets), N, V, Vp, cb->compute));
}

static void crossentropy_backward(tr_backend *be, tr_tensor *dlogits, const tr_tensor *probs,
                                  const tr_tensor *targets, float dloss, int N, int V, int Vp)
{
    OP("crossentropy_backward");
    int dt = -1;
    void *d = act(op_name, "dlogits", dlogits, &dt);
    DONE(kc_crossentropy_backward(d, dt, f32(op_name, "probs", probs), i32(op_name, targets), dloss,
                                  tr_cuda_step_loss_scale(cb->step), N, V, Vp,
                                  cb->compute));
}

static void crossentropy_fused_forward(tr_backend *be, tr_tensor *losses, tr_tensor *logits,
                                       const tr_tensor *targets, float dloss, int N, int V, int Vp)
{
    OP("crossentropy_fused_forward");
    int dt = -1;
    void *l = act(op_name, "logits", logits, &dt);
    DONE(kc_crossentropy_fused_forward(f32(op_name, "losses", losses), l, dt, i32(op_name, targets), dloss,
                                       tr_cuda_step_loss_scale(cb->step), N, V, Vp,
                                       cb->compute));
}

static void cast(tr_backend *be, tr_tensor *dst, const tr_tensor *src)
{
    OP("cast");
    int ddt = -1, sdt = -1;
    void *d = act(op_name, "dst", dst, &ddt);
    const void *s = act(op_name, "src", src, &sdt);
    DONE(kc_cast(d, ddt, s, sdt, (long)tr_tensor_numel(src), cb->compute));
}

/* ---- optimizer ops: fp32 master weights and state ---- */

static void adamw(tr_backend *be, tr_tensor *param, const tr_tensor *grad, tr_tensor *m, tr_tensor *v, float lr,
                  float beta1, float beta2, float eps, float weight_decay, int t)
{
    OP("adamw");
    DONE(kc_adamw(f32(op_name, "param", param), f32(op_name, "grad", grad), f32(op_name, "m", m), f32(op_name, "v", v),
                  (long)tr_tensor_numel(param), lr, beta1, beta2, eps, weight_decay, t, cb->compute));
}

static void adamw_fused(tr_backend *be, tr_tensor *param, const tr_tensor *grad, tr_tensor *m, tr_tensor *v,
                        const size_t *bounds, const float *decay, int n_ranges, float lr, float beta1, float beta2,
                        float eps, float grad_scale, int t)
{
    OP("adamw_fused");
    if (n_ranges < 1 || n_ranges > KC_MAX_RANGES) {
        fprintf(stderr, "trainer: adamw_fused: %d ranges (the cuda kernel takes 1 to %d)\n", n_ranges, KC_MAX_RANGES);
        exit(1);
    }
    kc_ranges r = {.n = n_ranges};
    memcpy(r.bounds, bounds, (n_ranges + 1) * sizeof *bounds);
    memcpy(r.decay, decay, n_ranges * sizeof *decay);
    DONE(kc_adamw_fused(f32(op_name, "param", param), f32(op_name, "grad", grad), f32(op_name, "m", m),
                        f32(op_name, "v", v), &r, lr, beta1, beta2, eps, grad_scale, t, cb->compute));
}

static void sgd(tr_backend *be, tr_tensor *param, const tr_tensor *grad, tr_tensor *buf, float lr, float momentum,
                float weight_decay, int first)
{
    OP("sgd");
    DONE(kc_sgd(f32(op_name, "param", param), f32(op_name, "grad", grad), f32(op_name, "buf", buf),
                (long)tr_tensor_numel(param), lr, momentum, weight_decay, first, cb->compute));
}

/* One reduction, read back with one synchronization. */
static kc_reduction reduce(cuda_backend *cb, const char *op, const tr_tensor *x)
{
    if (tr_cuda_step_capturing(cb->step))
        tr_cuda_step_refuse("a reduction read back to the host");
    void *s = scratch(cb, kc_sumsq_scratch_bytes());
    int err = kc_sumsq_finite(cb->red_dev, f32(op, "x", x), (long)tr_tensor_numel(x), s, cb->compute);
    if (err)
        fail_cuda(op, (cudaError_t)err);
    check(cudaMemcpyAsync(cb->red_host, cb->red_dev, sizeof *cb->red_host, cudaMemcpyDeviceToHost, cb->compute),
          "reading a reduction back");
    check(cudaStreamSynchronize(cb->compute), op);
    return *cb->red_host;
}

static double sumsq(tr_backend *be, const tr_tensor *x)
{
    OP("sumsq");
    double s = reduce(cb, op_name, x).sumsq;
    DONE(0);
    return s;
}

static int all_finite(tr_backend *be, const tr_tensor *x)
{
    OP("all_finite");
    int ok = reduce(cb, op_name, x).finite;
    DONE(0);
    return ok;
}

static double sumsq_finite(tr_backend *be, const tr_tensor *x, int *finite)
{
    OP("sumsq_finite");
    kc_reduction r = reduce(cb, op_name, x);
    *finite = r.finite;
    DONE(0);
    return r.sumsq;
}

static void scale(tr_backend *be, tr_tensor *x, float s)
{
    OP("scale");
    DONE(kc_scale(f32(op_name, "x", x), s, (long)tr_tensor_numel(x), cb->compute));
}

static void ema(tr_backend *be, tr_tensor *e, const tr_tensor *x, float decay)
{
    OP("ema");
    DONE(kc_ema(f32(op_name, "ema", e), f32(op_name, "x", x), decay, (long)tr_tensor_numel(x), cb->compute));
}

/* ---- making and freeing the backend ---- */

static const tr_backend table = {
    .name = "cuda",
    .device = TR_CUDA,
    .n_threads = 1,
    .copy_h2d = copy_h2d,
    .copy_d2h = copy_d2h,
    .memset0 = memset0,
    .synchronize = synchronize,
    .host_alloc = host_alloc,
    .host_free = host_free,
    .encoder_forward = encoder_forward,
    .encoder_backward = encoder_backward,
    .layernorm_forward = layernorm_forward,
    .layernorm_backward = layernorm_backward,
    .matmul_forward = matmul_forward,
    .matmul_backward = matmul_backward,
    .attention_layout = attention_layout,
    .attention_forward = attention_forward,
    .attention_backward = attention_backward,
    .gelu_forward = gelu_forward,
    .gelu_backward = gelu_backward,
    .residual_forward = residual_forward,
    .residual_backward = residual_backward,
    .crossentropy_forward = crossentropy_forward,
    .crossentropy_backward = crossentropy_backward,
    .residual_layernorm_forward = residual_layernorm_forward,
    .residual_layernorm_backward = residual_layernorm_backward,
    .matmul_bias_gelu_forward = matmul_bias_gelu_forward,
    .crossentropy_fused_forward = crossentropy_fused_forward,
    .cast = cast,
    .adamw = adamw,
    .adamw_fused = adamw_fused,
    .sgd = sgd,
    .sumsq = sumsq,
    .all_finite = all_finite,
    .sumsq_finite = sumsq_finite,
    .scale = scale,
    .ema = ema,
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
    cb->opt = *opt;
    snprintf(cb->device_name, sizeof cb->device_name, "cuda:%d", opt->device);
    snprintf(cb->description, sizeof cb->description, "%.100s, sm_%d%d, %d SMs, %.1f GiB, driver %d.%d", prop.name,
             prop.major, prop.minor, prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0, driver / 1000,
             driver % 1000 / 10);
    cb->be.mem = (tr_mem_ops){seg_alloc_plain, seg_free_plain, cb, cb->device_name};
    if (opt->expandable_segments) {
        if ((rc = vmm_init(cb, opt->device, prop.totalGlobalMem)) < 0) {
            free(cb);
            return rc;
        }
        cb->be.mem.seg_alloc = seg_alloc_vmm;
        cb->be.mem.seg_free = seg_free_vmm;
    }
    if ((rc = attention_init(cb)) < 0) {
        if (cb->vmm.on)
            cb->vmm.address_free(cb->vmm.base, cb->vmm.reserved);
        free(cb);
        return rc;
    }
    check(cudaStreamCreateWithFlags(&cb->compute, cudaStreamNonBlocking), "creating the compute stream");
    check(cudaStreamCreateWithFlags(&cb->copy, cudaStreamNonBlocking), "creating the copy stream");
    for (int i = 0; i < N_STAGES; i++) {
        check(cudaEventCreateWithFlags(&cb->stages[i].copied, cudaEventDisableTiming), "cudaEventCreate");
        check(cudaEventCreateWithFlags(&cb->stages[i].consumed, cudaEventDisableTiming), "cudaEventCreate");
    }
    check_lt(cublasLtCreate(&cb->lt), "cublasLtCreate");
    check(cudaMalloc(&cb->lt_workspace, LT_WORKSPACE_BYTES), "cudaMalloc of cuBLASLt's workspace");
    check(cudaMalloc((void **)&cb->red_dev, sizeof *cb->red_dev), "cudaMalloc");
    check(cudaHostAlloc((void **)&cb->red_host, sizeof *cb->red_host, cudaHostAllocDefault), "cudaHostAlloc");
    if ((rc = tr_cuda_step_new(&cb->step, cb->compute, opt->sync_every_op)) < 0) {
        tr_backend_cuda_free(&cb->be);
        return rc;
    }
    *out = &cb->be;
    return TR_OK;
}

void tr_backend_cuda_free(tr_backend *be)
{
    if (!be)
        return;
    cuda_backend *cb = cb_of(be);
    check(cudaDeviceSynchronize(), "waiting for the device at the end");
    tr_cuda_step_free(cb->step);
    for (int i = 0; i < cb->n_plans; i++) {
        gemm_plan *p = &cb->plans[i];
        cublasLtMatrixLayoutDestroy(p->a);
        cublasLtMatrixLayoutDestroy(p->b);
        cublasLtMatrixLayoutDestroy(p->d);
        cublasLtMatmulDescDestroy(p->desc);
    }
    free(cb->plans);
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
    if (cb->vmm.on) {
        for (int i = 0; i < cb->vmm.n; i++) { /* segments the allocator did not give back */
            cb->vmm.unmap(cb->vmm.base + cb->vmm.ranges[i].offset, cb->vmm.ranges[i].size);
            cb->vmm.release(cb->vmm.ranges[i].handle);
        }
        cb->vmm.address_free(cb->vmm.base, cb->vmm.reserved);
        free(cb->vmm.ranges);
    }
    free(cb);
}

const char *tr_backend_cuda_describe(const tr_backend *be) { return ((const cuda_backend *)be)->description; }

void *tr_backend_cuda_compute_stream(tr_backend *be, int *device)
{
    *device = cb_of(be)->opt.device;
    return cb_of(be)->compute;
}

tr_cuda_step *tr_backend_cuda_step(tr_backend *be) { return cb_of(be)->step; }
