/* gv-mem-stack.h: one process's memory series from the analysis, laid out
 * for drawing: its blocks stacked as PyTorch's memory_viz stacks them (a
 * block freed lets every block above it down by its size). Plain C; it
 * computes no figure the analysis has (totals and peaks are its). */
#ifndef GV_MEM_STACK_H
#define GV_MEM_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "gt_analyze.h"

/* An allocator block (NVTX memory region) or, without regions, a device
 * allocation, at one size (a resize ends one and starts the next). */
typedef struct GvMemBlock {
    int64_t alloc_ns, free_ns; /* this size's band; free_ns: INT64_MAX when never freed */
    int64_t made_ns;           /* when the allocation was made (what its origin is looked up by) */
    int64_t bytes;
    uint64_t address;
    int64_t tid;
    int64_t callchain_id;    /* its stack (0 none): frames with file:line from a snapshot */
    size_t first_pt, n_pts;  /* its band in the stacked layout: GvMemory.pts */
} GvMemBlock;

typedef struct GvMemPoint { int64_t t_ns, offset_bytes; } GvMemPoint;
typedef gt_mem_sample GvMemSample;

/* One process's allocator (heap handles and addresses are per process). */
typedef struct GvMemory {
    int64_t pid; /* 0: rows without a thread */
    int32_t device_id; /* a snapshot's device (one allocator each); -1: the process's whole */
    /* the report's figures for the process (gt_memory.procs), from the same replay */
    int64_t peak_allocated_bytes, peak_allocated_ns, peak_reserved_bytes, peak_reserved_ns;
    const GvMemSample *samples; size_t n_samples; /* after each event, by time (the analysis's) */
    GvMemBlock *blocks; size_t n_blocks;    /* by alloc time */
    GvMemPoint *pts; size_t n_pts;          /* band offsets, memory_viz's stacking */
    int64_t max_stack_bytes, max_reserved_bytes;
    size_t n_blocks_dropped; /* past the layout's cap: counted, not stacked */
} GvMemory;

/* The drawable memory of a series (NULL: out of memory); free with gv_memory_free. */
GvMemory *gv_memory_from_series(const gt_mem_series *s);
void gv_memory_free(GvMemory *m);

#endif /* GV_MEM_STACK_H */
