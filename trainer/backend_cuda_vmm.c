/* backend_cuda_vmm.c: --expandable-segments for the CUDA backend: physical
 * memory (cuMemCreate) mapped into one reserved virtual range
 * (cuMemAddressReserve, cuMemMap, cuMemSetAccess) at the lowest free
 * address, in granularity-sized chunks, PyTorch's expandable_segments
 * mechanism. The driver API comes through cudaGetDriverEntryPoint, so the
 * trainer does not link libcuda. It knows segments, not the allocator's blocks. */
#include "backend_cuda_core.h"

#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

void *tr_cuda_vmm_seg_alloc(size_t n, void *ctx)
{
    cuda_backend *cb = ctx;
    size_t size = round_up(n, cb->vmm.granularity), off = 0;
    int at = 0; /* the lowest gap that fits, between ranges[at-1] and ranges[at] */
    for (; at < cb->vmm.n; at++) {
        if (cb->vmm.ranges[at].offset - off >= size)
            break;
        off = cb->vmm.ranges[at].offset + cb->vmm.ranges[at].size;
    }
    if (off + size > cb->vmm.reserved)
        return NULL;
    CUmemGenericAllocationHandle h;
    CUresult r = cb->vmm.create(&h, size, &cb->vmm.prop, 0);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
        return NULL;
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "trainer: cuda: cuMemCreate of %zu bytes: error %d\n", size, (int)r);
        exit(1);
    }
    CUdeviceptr p = cb->vmm.base + off;
    CUmemAccessDesc access = {.location = cb->vmm.prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    if ((r = cb->vmm.map(p, size, 0, h, 0)) != CUDA_SUCCESS ||
        (r = cb->vmm.set_access(p, size, &access, 1)) != CUDA_SUCCESS) {
        fprintf(stderr, "trainer: cuda: mapping %zu bytes into the expandable range: error %d\n", size, (int)r);
        exit(1);
    }
    if (cb->vmm.n == cb->vmm.cap) {
        int cap = cb->vmm.cap ? 2 * cb->vmm.cap : 64;
        vmm_range *v = realloc(cb->vmm.ranges, cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "trainer: out of host memory\n");
            exit(1);
        }
        cb->vmm.ranges = v;
        cb->vmm.cap = cap;
    }
    memmove(&cb->vmm.ranges[at + 1], &cb->vmm.ranges[at], (cb->vmm.n - at) * sizeof *cb->vmm.ranges);
    cb->vmm.ranges[at] = (vmm_range){off, size, h};
    cb->vmm.n++;
    return (void *)(uintptr_t)p;
}

void tr_cuda_vmm_seg_free(void *ptr, size_t n, void *ctx)
{
    (void)n;
    cuda_backend *cb = ctx;
    size_t off = (size_t)((CUdeviceptr)(uintptr_t)ptr - cb->vmm.base);
    for (int i = 0; i < cb->vmm.n; i++) {
        vmm_range *r = &cb->vmm.ranges[i];
        if (r->offset != off)
            continue;
        /* nothing queued may still read the pages */
        tr_cuda_check(cudaDeviceSynchronize(), "waiting before unmapping a segment");
        if (cb->vmm.unmap(cb->vmm.base + off, r->size) != CUDA_SUCCESS || cb->vmm.release(r->handle) != CUDA_SUCCESS) {
            fprintf(stderr, "trainer: cuda: unmapping a segment of the expandable range failed\n");
            exit(1);
        }
        memmove(r, r + 1, (cb->vmm.n - i - 1) * sizeof *r);
        cb->vmm.n--;
        return;
    }
    fprintf(stderr, "trainer: cuda: %p is not a segment of the expandable range\n", ptr);
    exit(1);
}

static int vmm_symbol(const char *name, void **fn)
{
    enum cudaDriverEntryPointQueryResult q;
    cudaError_t err = cudaGetDriverEntryPointByVersion(name, fn, 12000, cudaEnableDefault, &q);
    if (err != cudaSuccess || q != cudaDriverEntryPointSuccess || !*fn)
        return tr_error_set(TR_EINVAL, "--expandable-segments: the driver has no %s", name);
    return TR_OK;
}

int tr_cuda_vmm_init(cuda_backend *cb, int device, size_t total_bytes)
{
    struct { const char *name; void **fn; } syms[] = {
        {"cuMemCreate", (void **)&cb->vmm.create},
        {"cuMemRelease", (void **)&cb->vmm.release},
        {"cuMemAddressReserve", (void **)&cb->vmm.reserve},
        {"cuMemAddressFree", (void **)&cb->vmm.address_free},
        {"cuMemMap", (void **)&cb->vmm.map},
        {"cuMemUnmap", (void **)&cb->vmm.unmap},
        {"cuMemSetAccess", (void **)&cb->vmm.set_access},
        {"cuMemGetAllocationGranularity", (void **)&cb->vmm.granularity_of},
        {"cuDeviceGet", (void **)&cb->vmm.device_get},
        {"cuDeviceGetAttribute", (void **)&cb->vmm.device_attribute},
    };
    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
        int rc = vmm_symbol(syms[i].name, syms[i].fn);
        if (rc < 0)
            return rc;
    }
    CUdevice dev;
    int vmm_supported = 0;
    if (cb->vmm.device_get(&dev, device) != CUDA_SUCCESS ||
        cb->vmm.device_attribute(&vmm_supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev) !=
            CUDA_SUCCESS ||
        !vmm_supported) /* as PyTorch checks: cuMemCreate would fail with a bare error code */
        return tr_error_set(TR_EINVAL, "--expandable-segments: device %d does not support virtual memory management "
                                       "(cuMemCreate, cuMemMap); train without --expandable-segments", device);
    memset(&cb->vmm.prop, 0, sizeof cb->vmm.prop);
    cb->vmm.prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    cb->vmm.prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    cb->vmm.prop.location.id = device;
    if (cb->vmm.granularity_of(&cb->vmm.granularity, &cb->vmm.prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) !=
        CUDA_SUCCESS)
        return tr_error_set(TR_EINVAL, "--expandable-segments: the device gives no allocation granularity");
    /* virtual space for all of the device's memory, twice over for holes */
    cb->vmm.reserved = round_up(2 * total_bytes, cb->vmm.granularity);
    if (cb->vmm.reserve(&cb->vmm.base, cb->vmm.reserved, 0, 0, 0) != CUDA_SUCCESS)
        return tr_error_set(TR_ENOMEM, "--expandable-segments: cannot reserve %zu bytes of virtual addresses",
                            cb->vmm.reserved);
    cb->vmm.on = true;
    return TR_OK;
}

void tr_cuda_vmm_free(cuda_backend *cb)
{
    if (!cb->vmm.on)
        return;
    for (int i = 0; i < cb->vmm.n; i++) { /* segments the allocator did not give back */
        cb->vmm.unmap(cb->vmm.base + cb->vmm.ranges[i].offset, cb->vmm.ranges[i].size);
        cb->vmm.release(cb->vmm.ranges[i].handle);
    }
    cb->vmm.address_free(cb->vmm.base, cb->vmm.reserved);
    free(cb->vmm.ranges);
}
