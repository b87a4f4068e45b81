/* backend_cuda_core.h: private to the CUDA backend's files: its struct, and
 * what its parts share (backend_cuda_core.c): the fail-fast checks, an op's
 * NVTX range and end, the dtype roles' accessors, the kernels' workspace.
 * The parts, none of which calls back into the one that makes the backend:
 *   backend_cuda.c        making and freeing it, its table, memory, copies and streams
 *   backend_cuda_ops.c    the ops on kernels/cuda, attention on cuDNN or the own kernel
 *   backend_cuda_gemm.c   cuBLASLt GEMMs: one plan per shape, autotuning, the matmul ops
 *   backend_cuda_vmm.c    expandable segments (the driver's virtual memory API)
 *   backend_cuda_step.c   the step decided on the device and its CUDA graph (step_ops) */
#ifndef TR_BACKEND_CUDA_CORE_H
#define TR_BACKEND_CUDA_CORE_H

#include "config.h"

#include "backend.h"
#include "cuda_options.h"
#include "kernels_cuda.h"
#include "nvtx.h"
#include "op_roles.h"

/* cublasLt.h declares a function without a prototype */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cublasLt.h>
#pragma GCC diagnostic pop
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
    struct tr_cuda_step *step; /* the step decided on the device, its CUDA graph (backend_cuda_step.c) */
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

static inline cuda_backend *cb_of(tr_backend *be) { return (cuda_backend *)be; }

/* ---- errors: programs fail fast with the op and a hint (llm.c's cudaCheck) ---- */

void tr_cuda_fail(const char *what, cudaError_t err) __attribute__((noreturn));
void tr_cuda_check(cudaError_t err, const char *what);
void tr_cuda_check_lt(cublasStatus_t st, const char *what);
/* An op's end: the launch's error, then with --sync-every-op the wait that
 * shows what synchronization costs (and names the op that failed); closes
 * the op's NVTX range. */
void tr_cuda_op_done(cuda_backend *cb, const char *op, int err);

/* An op opens one NVTX range (category "compute", as on the CPU) ... */
#define OP(name)                      \
    cuda_backend *cb = cb_of(be);     \
    const char *op_name = name;       \
    tr_nvtx_push_op(name)
/* ... and ends with the launch's error. */
#define DONE(err) tr_cuda_op_done(cb, op_name, (err))

/* ---- dtype roles: op_roles.h's table, checked as the CPU backend checks it ---- */

/* The op's tensors against their roles; the activation dtype (KC_*, the order of tr_dtype). */
#define ROLES(...) ((int)TR_OP_ROLES(be, op_name, __VA_ARGS__))
/* A checked tensor's data (NULL for an absent optional one). */
static inline void *tr_cuda_data(const tr_tensor *t) { return t ? t->data : NULL; }
#define D(t) tr_cuda_data(t)
#define F(t) ((float *)tr_cuda_data(t))
#define I(t) ((const int32_t *)tr_cuda_data(t))
/* What the roles allow but a layout does not (attention's saved tensor): exits. */
void tr_cuda_refuse(const char *op, const char *what, const tr_tensor *t, const char *wanted);

/* The kernels' workspace, grown between ops (the first step sizes it). */
void *tr_cuda_scratch(cuda_backend *cb, size_t n_bytes);

/* ---- the parts ---- */

/* backend_cuda_ops.c, backend_cuda_gemm.c: their ops into the table */
void tr_cuda_ops_fill(tr_backend *table);
void tr_cuda_gemm_fill(tr_backend *table);
/* The GEMM plans' cuBLASLt objects. */
void tr_cuda_gemm_free(cuda_backend *cb);
/* backend_cuda_vmm.c: --expandable-segments. The driver's entry points and
 * the reserved range; then seg_alloc/seg_free are these two. */
int tr_cuda_vmm_init(cuda_backend *cb, int device, size_t total_bytes);
void *tr_cuda_vmm_seg_alloc(size_t n, void *ctx);
void tr_cuda_vmm_seg_free(void *ptr, size_t n, void *ctx);
/* Unmaps what the allocator did not give back and frees the range. */
void tr_cuda_vmm_free(cuda_backend *cb);

#endif
