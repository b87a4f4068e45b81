/* problem.h: what the gallery's programs share. Each program shows one
 * performance problem in a CPU form that any machine can run and trace:
 * ranges of the NVTX category "compute" stand in for the device's kernels,
 * an allocator announced through the NVTX memory API (heaps are its
 * segments, regions its blocks, as trainer/alloc.c does) stands in for the
 * device's caching allocator, and the outermost "step N" ranges are the
 * training steps. With --fixed the same program runs with the problem
 * fixed (its twin). The allocator hands out addresses in a reserved range
 * it never touches, so a program "uses" hundreds of MiB at no cost.
 * Compute is spun (short ops) or slept (long ones) for a set time: the
 * programs show a trace's shape, they do not compute anything. */
#ifndef PROBLEM_H
#define PROBLEM_H

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PB_CAT_COMPUTE = 1 };

typedef struct pb_args {
    bool fixed; /* --fixed: the twin without the problem */
    int steps;  /* --steps N (default 24) */
} pb_args;

static nvtxDomainHandle_t pb_domain;

static inline pb_args pb_init(int argc, char **argv, const char *usage)
{
    pb_args a = {false, 24};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--fixed") == 0) {
            a.fixed = true;
        } else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0) {
            a.steps = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--fixed] [--steps N]\n  %s\n", argv[0], usage);
            exit(2);
        }
    }
    pb_domain = nvtxDomainCreateA("gallery");
    nvtxDomainNameCategoryA(pb_domain, PB_CAT_COMPUTE, "compute");
    return a;
}

static inline int64_t pb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Short waits are spun: a sleep under ~100 us oversleeps many times. */
static inline void pb_wait_us(double us)
{
    if (us < 200) {
        int64_t end = pb_now_ns() + (int64_t)(us * 1e3);
        while (pb_now_ns() < end)
            ;
        return;
    }
    struct timespec ts = {(time_t)(us / 1e6), (long)((us - (double)(time_t)(us / 1e6) * 1e6) * 1e3)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static inline void pb_push(const char *name, uint32_t category)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = category;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    nvtxDomainRangePushEx(pb_domain, &a);
}

static inline void pb_pop(void) { nvtxDomainRangePop(pb_domain); }

/* A host range (not device work): input, logging, launch overhead. */
static inline void pb_host(const char *name, double us)
{
    pb_push(name, 0);
    pb_wait_us(us);
    pb_pop();
}

/* A "kernel": a range of the category "compute". */
static inline void pb_compute(const char *name, double us)
{
    pb_push(name, PB_CAT_COMPUTE);
    pb_wait_us(us);
    pb_pop();
}

static inline void pb_step_push(int i)
{
    char name[32];
    snprintf(name, sizeof name, "step %d", i);
    pb_push(name, 0);
}

/* ---- the stand-in device allocator: segments (heaps) and blocks (regions) ---- */

#define PB_MIB ((uint64_t)1 << 20)

typedef struct pb_seg {
    uint64_t base, size;
    nvtxMemHeapHandle_t heap;
} pb_seg;

/* Addresses come from a range nothing maps: the announcements are all that
 * matters to a trace. */
static uint64_t pb_next_addr = (uint64_t)1 << 40;

/* A segment announced at base (memory the program mapped, or not). */
static inline pb_seg pb_seg_at(uint64_t base, uint64_t size, const char *name)
{
    pb_seg s = {base, size, NULL};
    nvtxMemVirtualRangeDesc_t range = {size, (void *)(uintptr_t)s.base};
    nvtxMemHeapDesc_t d;
    memset(&d, 0, sizeof d);
    d.extCompatID = NVTX_EXT_COMPATID_MEM;
    d.structSize = sizeof d;
    d.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    d.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    d.typeSpecificDescSize = sizeof range;
    d.typeSpecificDesc = &range;
    d.messageType = NVTX_MESSAGE_TYPE_ASCII;
    d.message.ascii = name;
    s.heap = nvtxMemHeapRegister(pb_domain, &d);
    return s;
}

static inline pb_seg pb_seg_new(uint64_t size, const char *name)
{
    uint64_t base = pb_next_addr;
    pb_next_addr += (size + PB_MIB - 1) / PB_MIB * PB_MIB + PB_MIB;
    return pb_seg_at(base, size, name);
}

static inline void pb_seg_free(pb_seg *s)
{
    if (s->heap)
        nvtxMemHeapUnregister(pb_domain, s->heap);
    s->heap = NULL;
}

/* A block at offset off of segment s. */
static inline uint64_t pb_block_new(const pb_seg *s, uint64_t off, uint64_t size)
{
    uint64_t ptr = s->base + off;
    if (!s->heap)
        return ptr;
    nvtxMemVirtualRangeDesc_t range = {size, (void *)(uintptr_t)ptr};
    nvtxMemRegionsRegisterBatch_t d;
    memset(&d, 0, sizeof d);
    d.extCompatID = NVTX_EXT_COMPATID_MEM;
    d.structSize = sizeof d;
    d.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    d.heap = s->heap;
    d.regionCount = 1;
    d.regionDescElementSize = sizeof range;
    d.regionDescElements = &range;
    nvtxMemRegionsRegister(pb_domain, &d);
    return ptr;
}

static inline void pb_block_free(const pb_seg *s, uint64_t ptr)
{
    if (!s->heap)
        return;
    nvtxMemRegionRef_t ref;
    ref.pointer = (void *)(uintptr_t)ptr;
    nvtxMemRegionsUnregisterBatch_t d;
    memset(&d, 0, sizeof d);
    d.extCompatID = NVTX_EXT_COMPATID_MEM;
    d.structSize = sizeof d;
    d.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    d.refCount = 1;
    d.refElementSize = sizeof ref;
    d.refElements = &ref;
    nvtxMemRegionsUnregister(pb_domain, &d);
}

#endif
