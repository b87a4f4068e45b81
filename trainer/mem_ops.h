/* mem_ops.h: where the caching allocator's segments come from, apart from
 * alloc.h so that a backend (backend.h) gives its device memory without
 * depending on the allocator that carves it. */
#ifndef TR_MEM_OPS_H
#define TR_MEM_OPS_H

#include <stddef.h>

/* Where segments come from: the backend's device memory. seg_alloc returns
 * NULL when the device is full. */
typedef struct tr_mem_ops {
    void *(*seg_alloc)(size_t bytes, void *ctx);
    void (*seg_free)(void *ptr, size_t bytes, void *ctx);
    void *ctx;
    const char *device; /* for messages: "cpu", "cuda:0" */
} tr_mem_ops;

#endif
