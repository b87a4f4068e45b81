/* oom: a caching allocator that runs out of memory through fragmentation.
 * A 56 MiB device holds 16 MiB of weights; each step's forward takes four
 * 8 MiB activations from a cached 32 MiB segment, and its backward frees
 * the 2nd and 4th (their gradients are done) before it asks for a gradient
 * buffer that grows with the sequence length: 4, 8, then 12 MiB. Step 2's
 * 12 MiB fits in no 8 MiB gap and the device has 8 MiB left for a new
 * segment: out of memory, with 16 MiB cached and free. The failure is an
 * NVTX mark of the category "oom" with the allocator's figures (the
 * trainer's convention, ARCHITECTURE.md); the program then exits 1.
 * --fixed frees the 3rd and 4th instead (adjacent: a 16 MiB gap), and every
 * step fits. --exit: at the failure the program exits at once, its ranges
 * open, as one that stops at its first CUDA error does (llm.c's cudaCheck):
 * the step it died in is not in the trace.
 *
 * The allocator is real, if small: segments are NVTX heaps, blocks regions
 * (named), each request goes to the smallest free gap of a cached segment
 * that holds it, else to a new segment if the device has room. */
#include "problem.h"

#define DEVICE_BYTES (56 * PB_MIB)
#define MAX_SEGS 8
#define MAX_BLOCKS 16

enum { CAT_OOM = 2 };

typedef struct blk { uint64_t off, size; } blk;
typedef struct seg {
    pb_seg s;
    blk blocks[MAX_BLOCKS]; /* by offset */
    int n_blocks;
} seg;

typedef struct cache {
    seg segs[MAX_SEGS];
    int n_segs;
    uint64_t allocated, reserved;
} cache;

static void name_block(uint64_t ptr, const char *name)
{
    nvtxMemRegionNameDesc_t nd;
    memset(&nd, 0, sizeof nd);
    nd.regionRefType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    nd.nameType = NVTX_MESSAGE_TYPE_ASCII;
    nd.region.pointer = (void *)(uintptr_t)ptr;
    nd.name.ascii = name;
    nvtxMemRegionsNameBatch_t d;
    memset(&d, 0, sizeof d);
    d.extCompatID = NVTX_EXT_COMPATID_MEM;
    d.structSize = sizeof d;
    d.regionCount = 1;
    d.regionElementSize = sizeof nd;
    d.regionElements = &nd;
    nvtxMemRegionsName(pb_domain, &d);
}

/* The free gap of g before its block i (i == n_blocks: after the last); its offset in *out_off. */
static uint64_t gap_at(const seg *g, int i, uint64_t *out_off)
{
    uint64_t start = i == 0 ? 0 : g->blocks[i - 1].off + g->blocks[i - 1].size;
    uint64_t end = i == g->n_blocks ? g->s.size : g->blocks[i].off;
    *out_off = start;
    return end - start;
}

static void oom_mark(const cache *c, uint64_t size)
{
    char msg[320];
    snprintf(msg, sizeof msg,
             "out of memory on sample: requested=%llu segment=%llu allocated=%llu reserved=%llu free=%llu "
             "limit=%llu device_free=%llu",
             (unsigned long long)size, (unsigned long long)size, (unsigned long long)c->allocated,
             (unsigned long long)c->reserved, (unsigned long long)(c->reserved - c->allocated),
             (unsigned long long)DEVICE_BYTES, (unsigned long long)(DEVICE_BYTES - c->reserved));
    nvtxEventAttributes_t ev;
    memset(&ev, 0, sizeof ev);
    ev.version = NVTX_VERSION;
    ev.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    ev.category = CAT_OOM;
    ev.messageType = NVTX_MESSAGE_TYPE_ASCII;
    ev.message.ascii = msg;
    ev.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    ev.payload.ullValue = size;
    nvtxDomainMarkEx(pb_domain, &ev);
}

/* A block of `size`: the smallest cached gap that holds it, else a new
 * segment; 0 when the device has no room (the OOM is marked). */
static uint64_t cache_alloc(cache *c, uint64_t size, const char *name)
{
    int best_seg = -1, best_i = 0;
    uint64_t best_gap = UINT64_MAX, best_off = 0;
    for (int s = 0; s < c->n_segs; s++) {
        const seg *g = &c->segs[s];
        for (int i = 0; i <= g->n_blocks && g->n_blocks < MAX_BLOCKS; i++) {
            uint64_t off, gap = gap_at(g, i, &off);
            if (gap >= size && gap < best_gap) {
                best_gap = gap;
                best_seg = s;
                best_i = i;
                best_off = off;
            }
        }
    }
    if (best_seg < 0) {
        if (c->n_segs == MAX_SEGS || c->reserved + size > DEVICE_BYTES) {
            oom_mark(c, size);
            return 0;
        }
        best_seg = c->n_segs++;
        c->segs[best_seg] = (seg){pb_seg_new(size, "sample allocator segment"), {{0, 0}}, 0};
        c->reserved += size;
        best_i = 0;
        best_off = 0;
    }
    seg *g = &c->segs[best_seg];
    memmove(&g->blocks[best_i + 1], &g->blocks[best_i], (size_t)(g->n_blocks - best_i) * sizeof *g->blocks);
    g->blocks[best_i] = (blk){best_off, size};
    g->n_blocks++;
    c->allocated += size;
    uint64_t ptr = pb_block_new(&g->s, best_off, size);
    name_block(ptr, name);
    return ptr;
}

/* A segment of `size` made up front, its first block taken. */
static uint64_t cache_reserve(cache *c, uint64_t size, const char *name)
{
    c->segs[c->n_segs] = (seg){pb_seg_new(size, "sample allocator segment"), {{0, 0}}, 0};
    c->n_segs++;
    c->reserved += size;
    return cache_alloc(c, size, name);
}

static void cache_free(cache *c, uint64_t ptr)
{
    for (int s = 0; s < c->n_segs; s++) {
        seg *g = &c->segs[s];
        for (int i = 0; i < g->n_blocks; i++)
            if (g->s.base + g->blocks[i].off == ptr) {
                pb_block_free(&g->s, ptr);
                c->allocated -= g->blocks[i].size;
                memmove(&g->blocks[i], &g->blocks[i + 1], (size_t)(g->n_blocks - i - 1) * sizeof *g->blocks);
                g->n_blocks--;
                return;
            }
    }
}

int main(int argc, char **argv)
{
    bool exit_at_once = argc > 1 && strcmp(argv[argc - 1], "--exit") == 0;
    pb_args a = pb_init(argc - exit_at_once, argv,
                        "a caching allocator that fragments and runs out (--fixed: adjacent frees) [--exit]");
    nvtxDomainNameCategoryA(pb_domain, CAT_OOM, "oom");
    static cache c;
    cache_reserve(&c, 16 * PB_MIB, "weights");
    uint64_t pool = cache_reserve(&c, 32 * PB_MIB, "activations");
    cache_free(&c, pool); /* a cached segment, empty */
    for (int i = 0; i < a.steps; i++) {
        uint64_t act[4], grad_bytes = (uint64_t)(i < 2 ? 4 + 4 * i : 12) * PB_MIB;
        pb_step_push(i);
        pb_push("forward", 0);
        for (int k = 0; k < 4; k++)
            act[k] = cache_alloc(&c, 8 * PB_MIB, "activations");
        pb_compute("matmul", 300);
        pb_pop();
        pb_push("backward", 0);
        cache_free(&c, act[a.fixed ? 2 : 1]);
        cache_free(&c, act[3]);
        uint64_t grad = cache_alloc(&c, grad_bytes, "grad buffer");
        if (!grad) {
            if (exit_at_once)
                exit(1);
            pb_pop();
            pb_pop();
            fprintf(stderr, "out of memory in step %d: %llu MiB asked, %llu MiB cached and free\n", i,
                    (unsigned long long)(grad_bytes / PB_MIB),
                    (unsigned long long)((c.reserved - c.allocated) / PB_MIB));
            return 1;
        }
        pb_compute("matmul backward", 300);
        cache_free(&c, grad);
        pb_pop();
        cache_free(&c, act[0]);
        cache_free(&c, act[a.fixed ? 1 : 2]);
        pb_push("optimizer", 0);
        pb_compute("sgd", 100);
        pb_pop();
        pb_pop();
    }
    puts("ok");
    return 0;
}
