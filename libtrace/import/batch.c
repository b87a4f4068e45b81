/* batch.c: where the importers write, below them all: rows go through the
 * store's writer in transactions of a bounded size, strings are interned,
 * the input's process is named once, and heap rows are made as the NVTX
 * memory API of a caching allocator makes them. It reads no format and drives
 * nothing: kineto.c and snapshot.c call it, import.c opens and closes the
 * writer around them. */
#include "import_int.h"

#include <stdlib.h>

enum { COMMIT_EVERY = 65536 }; /* rows per transaction */

int im_add(im_out *o, const gt_event *ev)
{
    int rc = gt_writer_add(o->w, ev);
    if (rc < 0)
        return rc;
    if (++o->pending >= COMMIT_EVERY) {
        o->pending = 0;
        if ((rc = gt_writer_commit(o->w)) < 0 || (rc = gt_writer_begin(o->w)) < 0)
            return rc;
    }
    return 0;
}

int im_intern(im_out *o, const char *s, gt_string_id *out)
{
    return gt_writer_intern(o->w, s, out);
}

int im_name_process(im_out *o, const char *name)
{
    if (o->named)
        return 0;
    o->named = true;
    return gt_writer_add_process(o->w, o->pid, name);
}

int im_grow(void **v, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 64;
    void *p = realloc(*v, c * elem);
    if (!p)
        return gt_error_set(GT_ERR_NOMEM, "import: out of memory");
    *v = p;
    *cap = c;
    return 0;
}

int im_add_heap(im_out *o, int64_t t_ns, int64_t tid, int32_t op, uint64_t heap, uint64_t addr, int64_t bytes,
                const char *name, int64_t chain_id)
{
    gt_event ev = {.kind = GT_EV_HEAP, .u.heap = {
        .start_ns = t_ns, .global_tid = tid, .operation = op, .heap_id = heap, .address = addr, .bytes = bytes,
        .heap_usage = 1,  /* NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR */
        .memory_type = 1, /* NVTX_MEM_TYPE_VIRTUAL_ADDRESS */
        .callchain_id = chain_id,
    }};
    int rc;
    if (name && (rc = im_intern(o, name, &ev.u.heap.name)) < 0)
        return rc;
    return im_add(o, &ev);
}
