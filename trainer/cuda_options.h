/* cuda_options.h: the CUDA backend's switches (trainer --help), apart from
 * backend_cuda.h so the backend's parts (backend_cuda_core.h) read them
 * without depending on the file that makes the backend. */
#ifndef TR_CUDA_OPTIONS_H
#define TR_CUDA_OPTIONS_H

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

#endif
