/* backend_cuda_core.c: what the CUDA backend's parts share (backend_cuda_core.h):
 * fail-fast checks, an op's end, refusals, the kernels' workspace. */
#include "backend_cuda_core.h"

#include "backend_cuda_step.h"

#include <stdio.h>
#include <stdlib.h>

void tr_cuda_fail(const char *what, cudaError_t err)
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

void tr_cuda_check(cudaError_t err, const char *what)
{
    if (err != cudaSuccess)
        tr_cuda_fail(what, err);
}

void tr_cuda_check_lt(cublasStatus_t st, const char *what)
{
    if (st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "trainer: cublasLt: %s: status %d\n", what, (int)st);
        exit(1);
    }
}

void tr_cuda_op_done(cuda_backend *cb, const char *op, int err)
{
    if (err)
        tr_cuda_fail(op, (cudaError_t)err);
    if (cb->opt.sync_every_op)
        tr_cuda_check(cudaStreamSynchronize(cb->compute), op);
    tr_nvtx_pop();
}

void tr_cuda_refuse(const char *op, const char *what, const tr_tensor *t, const char *wanted)
{
    fprintf(stderr, "trainer: the cuda backend has no %s kernel for %s as %s (it takes %s)\n", op, what,
            tr_dtype_name(t->dtype), wanted);
    exit(1);
}

void *tr_cuda_scratch(cuda_backend *cb, size_t n_bytes)
{
    if (n_bytes <= cb->scratch_bytes)
        return cb->scratch;
    if (tr_cuda_step_capturing(cb->step)) /* the warm-up steps sized it: a shape not seen there */
        tr_cuda_step_refuse("the kernels' workspace had to grow (cudaMalloc)");
    tr_cuda_check(cudaStreamSynchronize(cb->compute), "growing the kernel workspace");
    if (!tr_cuda_step_retire(cb->step, cb->scratch)) /* a captured graph's kernels still use it */
        tr_cuda_check(cudaFree(cb->scratch), "cudaFree of the kernel workspace");
    cb->scratch = NULL;
    size_t n = n_bytes + n_bytes / 2;
    tr_cuda_check(cudaMalloc(&cb->scratch, n), "cudaMalloc of the kernel workspace");
    cb->scratch_bytes = n;
    return cb->scratch;
}
