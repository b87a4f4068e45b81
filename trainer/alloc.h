/* alloc.h: the caching allocator in front of a backend's memory, designed
 * like PyTorch's CUDACachingAllocator: sizes rounded to 512 bytes; a small
 * pool (requests <= 1 MiB, carved from 2 MiB segments) and a large pool
 * (20 MiB segments for requests under 10 MiB, else the request rounded up
 * to 2 MiB); best-fit reuse per stream; blocks split on allocation and
 * merged with free neighbours on release; a device capacity (--mem-limit).
 * When memory runs out it releases the cached segments and retries, then
 * fails with TR_ENOMEM and a message with requested, allocated, reserved and
 * limit. Every segment is announced as an NVTX heap and every block as an
 * NVTX region of it (nvtx3/nvToolsExtMem.h, "trainer" domain), so a tool
 * sees the allocator without knowing it. Thread-safe (one mutex).
 * It does not know tensors or the model: it hands out bytes. */
#ifndef TR_ALLOC_H
#define TR_ALLOC_H

#include "mem_ops.h"

#include <stddef.h>
#include <stdint.h>

#define TR_ALLOC_ROUND 512
#define TR_ALLOC_SMALL_MAX (1u << 20)        /* largest request of the small pool */
#define TR_ALLOC_SMALL_SEGMENT (2u << 20)    /* small pool segment size */
#define TR_ALLOC_LARGE_SEGMENT (20u << 20)   /* large pool segment for requests < 10 MiB */
#define TR_ALLOC_LARGE_ROUND (2u << 20)      /* larger requests get their own segment, rounded */

typedef struct tr_alloc_stats {
    size_t allocated_bytes;      /* held by live blocks (rounded sizes) */
    size_t requested_bytes;      /* what callers asked for */
    size_t reserved_bytes;       /* held in segments, live or cached */
    size_t peak_allocated_bytes;
    size_t peak_reserved_bytes;
    size_t n_segments;
    size_t n_live_blocks;
    size_t n_free_blocks;        /* cached, in the pools */
    uint64_t n_allocs, n_releases;
    uint64_t n_cache_hits;       /* allocations served from a cached block */
    uint64_t n_segment_allocs, n_segment_frees;
    uint64_t n_splits, n_merges;
    uint64_t n_ooms;             /* allocations that failed */
    size_t graph_pool_bytes;     /* free blocks a captured CUDA graph keeps for its replays */
} tr_alloc_stats;

typedef struct tr_alloc tr_alloc;

/* limit_bytes is the device's capacity (0: no limit but the device's own). */
int tr_alloc_new(tr_alloc **out, const tr_mem_ops *ops, size_t limit_bytes);
/* Releases every segment (live blocks included) and the allocator; NULL is fine. */
void tr_alloc_free(tr_alloc *a);

/* A block of at least n_bytes for use on stream; TR_ENOMEM or TR_EINVAL. */
int tr_alloc_malloc(tr_alloc *a, void **out, size_t n_bytes, int stream);
/* Gives a block back to its pool; TR_EINVAL if ptr is not a live block. NULL is fine. */
int tr_alloc_release(tr_alloc *a, void *ptr);
/* Grows or shrinks a live block in place (into a free neighbour, or giving
 * its tail back); TR_ENOSPC if it cannot grow in place. */
int tr_alloc_resize(tr_alloc *a, void *ptr, size_t n_bytes);
/* Names a live block for tools (NVTX region name); the name is copied by the tool. */
void tr_alloc_name(tr_alloc *a, void *ptr, const char *name);
/* Releases cached segments that hold no live block; returns the bytes released. */
size_t tr_alloc_empty_cache(tr_alloc *a);

void tr_alloc_get_stats(tr_alloc *a, tr_alloc_stats *out);
/* The rounded size a request gets (for tests and reports). */
size_t tr_alloc_round_size(size_t n_bytes);
/* The size of the live block at ptr, 0 if ptr is not one. */
size_t tr_alloc_block_size(tr_alloc *a, void *ptr);

/* CUDA graphs (--cuda-graph), as torch.cuda.graph's private pool. Between
 * capture_begin and capture_end the allocator never asks for a segment (a
 * cudaMalloc would escape the graph: the request fails with TR_ENOMEM and a
 * message naming --cuda-graph) nor releases one, and every block it hands
 * out becomes the graph's: released, it goes to the graph's private pool,
 * which only allocations made during the capture search. After the capture
 * nothing else is given the graph's memory, so each replay finds its blocks
 * as the capture left them, and segments holding them are never released.
 * One capture at a time (TR_EINVAL otherwise). graph_release, once the graph
 * is destroyed, returns the pool to the cache. */
int tr_alloc_capture_begin(tr_alloc *a);
void tr_alloc_capture_end(tr_alloc *a);
int tr_alloc_graph_release(tr_alloc *a);

#endif
