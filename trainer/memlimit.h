/* memlimit.h: the trainer under an address-space or data-size limit
 * (ulimit -v, ulimit -d) on the CPU backend, where OpenBLAS's per-thread
 * buffers would otherwise make the first matrix product hang. */
#ifndef TR_MEMLIMIT_H
#define TR_MEMLIMIT_H

#include "backend.h"
#include "gpt.h"
#include "options.h"

#include <stddef.h>

/* Refuses (exit 1, with the numbers and the ways out) a run whose model
 * states and BLAS buffers cannot fit the limit; else the caching
 * allocator's capacity that keeps room for the buffers. 0: no limit. */
size_t tr_memlimit_cap(const tr_options *o, const tr_backend *be, const tr_gpt_config *cfg);

#endif
