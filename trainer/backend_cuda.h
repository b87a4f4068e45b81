/* backend_cuda.h: the CUDA backend (backend_cuda.c), built only with the
 * CUDA toolkit (HAVE_CUDA). It fills the table of backend.h with the kernels
 * of kernels/cuda and cuBLASLt GEMMs; the model code is the same as on the
 * CPU. Each option is a switch of the trainer (trainer --help). */
#ifndef TR_BACKEND_CUDA_H
#define TR_BACKEND_CUDA_H

#include "backend.h"

#include <stdbool.h>

/* --attention: who runs attention (backend_cuda.c, attention_cudnn.h) */
typedef enum tr_cuda_attention {
    TR_CUDA_ATTENTION_AUTO,  /* cuDNN's fused attention for bf16/fp16 where cuDNN loads and has a plan, else own */
    TR_CUDA_ATTENTION_CUDNN, /* cuDNN or an error naming why not (fp32, no cuDNN, no plan for the shape) */
    TR_CUDA_ATTENTION_OWN,   /* the own kernel (kernels/cuda/attention.cu) */
} tr_cuda_attention;

typedef struct tr_cuda_options {
    int device;               /* --device N */
    tr_cuda_attention attention; /* --attention auto|cudnn|own */
    bool pin_memory;          /* --pin-memory: pinned staging buffers, copies that overlap compute */
    bool expandable_segments; /* --expandable-segments: segments mapped into one reserved VA range */
    bool sync_every_op;       /* --sync-every-op: wait for the GPU after every op (what syncs cost) */
    bool autotune;            /* --autotune: time cuBLASLt's candidate algorithms once per GEMM shape */
    bool tf32;                /* --tf32: fp32 GEMMs on tensor cores with TF32 inputs */
} tr_cuda_options;

/* Opens the device and makes the streams, cuBLASLt handle and workspaces.
 * Errors name the cause: no driver, a driver older than the toolkit, no
 * device, a device out of range or too old for the built kernels. */
int tr_backend_cuda_new(tr_backend **out, const tr_cuda_options *opt);
/* Waits for the device and releases what tr_backend_cuda_new made; the
 * caching allocator must have given its segments back first. NULL is fine. */
void tr_backend_cuda_free(tr_backend *be);
/* One line about the device for the trainer's banner ("NVIDIA H100 80GB
 * HBM3, sm_90, 79.1 GiB, driver 13.0"); borrowed. */
const char *tr_backend_cuda_describe(const tr_backend *be);

/* The compute stream (a cudaStream_t) every op runs on, and the device in
 * *device: for NCCL (dist_nccl.c), which orders its stream against it. */
void *tr_backend_cuda_compute_stream(tr_backend *be, int *device);

#endif
