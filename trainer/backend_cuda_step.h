/* backend_cuda_step.h: private to the CUDA backend. The step decided on the
 * device and its CUDA graph (backend_cuda_step.c: backend.h's step_ops over
 * kernels/step_state.h; the backend's step_ctx is the tr_cuda_step), and
 * what the backend's other parts ask of them: whether the compute stream is
 * being captured (then nothing may allocate, synchronize or copy from memory
 * a replay would not find again), and the device loss scale the
 * cross-entropy backward multiplies its dloss by. It calls none of them. */
#ifndef TR_BACKEND_CUDA_STEP_H
#define TR_BACKEND_CUDA_STEP_H

#include "backend.h"
#include "step_state.h"

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct tr_cuda_step tr_cuda_step;

extern const tr_step_ops tr_cuda_step_ops;

/* Nothing on the device until the state is loaded or a graph captured. */
int tr_cuda_step_new(tr_cuda_step **out, cudaStream_t compute, bool sync_every_op);
/* Destroys the graph and frees the state; NULL is fine. */
void tr_cuda_step_free(tr_cuda_step *s);
/* The compute stream is being captured. */
bool tr_cuda_step_capturing(const tr_cuda_step *s);
/* [p, p + n) lies in the pinned inputs of the capture. */
bool tr_cuda_step_is_input(const tr_cuda_step *s, const void *p, size_t n);
/* The device step's loss scale (device memory), NULL before the state is loaded. */
const float *tr_cuda_step_loss_scale(const tr_cuda_step *s);
/* Device memory the backend replaces (its kernels' workspace, grown): while
 * a graph exists it may still read it, so it is kept, freed with the graph
 * (true); false: no graph, the caller frees it. */
bool tr_cuda_step_retire(tr_cuda_step *s, void *dev);
/* Exits naming what the captured step tried that a graph cannot hold. */
void tr_cuda_step_refuse(const char *what);

#endif
