/* backend_cuda.h: the CUDA backend (backend_cuda*.c), built only with the
 * CUDA toolkit (HAVE_CUDA). It fills the table of backend.h with the kernels
 * of kernels/cuda and cuBLASLt GEMMs; the model code is the same as on the
 * CPU. Each option is a switch of the trainer (trainer --help). */
#ifndef TR_BACKEND_CUDA_H
#define TR_BACKEND_CUDA_H

#include "backend.h"
#include "cuda_options.h"

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

#endif
