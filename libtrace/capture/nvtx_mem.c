/* nvtx_mem.c: the NVTX memory extension (nvToolsExtMem.h), through
 * InitializeInjectionNvtxExtension: heaps (an allocator's pools) and regions
 * (the blocks it hands out) registered, resized, unregistered and named,
 * written to GTRACE_MEMORY_EVENTS. This is how a caching allocator tells the
 * trace what it does with the memory it holds.
 *
 * Only virtual-address regions (NVTX_MEM_TYPE_VIRTUAL_ADDRESS) carry an
 * address and a size; other types are written with 0 for both. Permissions
 * are accepted and not recorded. Nothing here locks.
 *
 * Fork: the heaps registered and not unregistered are kept (names.c) and
 * registered again in a fork child's own part before its first record, so
 * the regions the child registers in them belong to a heap of its process.
 * Regions are not carried over (the child's memory is its own).
 */
#include "config.h"

#include <pthread.h>
#include <string.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>

#include "capture.h"
#include "clock.h"
#include "names.h"
#include "nvtx.h"
#include "ring.h"
#include "session.h"

#define MAX_NAME_BYTES 1024

static _Atomic uint64_t next_heap_id = 1;
static _Atomic uint64_t next_permissions_id = 1;

/* The text of an NVTX message, as UTF-8 in `buf` or a registered string. */
static const char *message_text(uint32_t type, nvtxMessageValue_t m, char *buf, size_t buf_bytes)
{
    switch (type) {
    case NVTX_MESSAGE_TYPE_ASCII: return m.ascii;
    case NVTX_MESSAGE_TYPE_UNICODE: gt_cap_wide_to_utf8(m.unicode, buf, buf_bytes); return m.unicode ? buf : NULL;
    case NVTX_MESSAGE_TYPE_REGISTERED: return gt_nvtx_registered_text(m.registered);
    default: return NULL;
    }
}

/* One memory event of domain `domain_id`. */
static void emit_in(int32_t op, int64_t domain_id, uint64_t heap_id, uint64_t address, int64_t bytes, int32_t usage,
                    int32_t type, const char *name)
{
    uint64_t now = gt_cap_stamp();
    size_t name_len = name ? strnlen(name, MAX_NAME_BYTES - 1) : 0;
    size_t text_bytes = name ? name_len + 1 : 0;
    rec_event *r = gt_cap_reserve(REC_EVENT, sizeof *r, text_bytes, GT_EV_HEAP);
    if (!r)
        return;
    memset(&r->ev, 0, sizeof r->ev);
    r->ev.kind = GT_EV_HEAP;
    gt_heap_event *h = &r->ev.u.heap;
    h->start_ns = (int64_t)now; /* a stamp: the launcher converts it (shm.h) */
    h->operation = op;
    h->heap_id = heap_id;
    h->address = address;
    h->bytes = bytes;
    h->heap_usage = usage;
    h->memory_type = type;
    h->domain_id = domain_id;
    if (name) {
        char *t = (char *)(r + 1);
        memcpy(t, name, name_len);
        t[name_len] = '\0';
    }
    gt_cap_commit();
}

static void emit(int32_t op, nvtxDomainHandle_t domain, uint64_t heap_id, uint64_t address,
                 int64_t bytes, int32_t usage, int32_t type, const char *name)
{
    emit_in(op, gt_nvtx_domain_id(domain), heap_id, address, bytes, usage, type, name);
}

/* The i-th element of a batch array with the caller's element size. */
static const void *element(const void *base, size_t element_bytes, size_t i)
{
    return (const char *)base + i * element_bytes;
}

static nvtxMemHeapHandle_t NVTX_API heap_register(nvtxDomainHandle_t domain, nvtxMemHeapDesc_t const *desc)
{
    uint64_t id = atomic_fetch_add_explicit(&next_heap_id, 1, memory_order_relaxed);
    if (!desc)
        return (nvtxMemHeapHandle_t)(uintptr_t)id;
    uint64_t address = 0;
    int64_t bytes = 0;
    if (desc->type == NVTX_MEM_TYPE_VIRTUAL_ADDRESS && desc->typeSpecificDesc
        && desc->typeSpecificDescSize >= sizeof(nvtxMemVirtualRangeDesc_t)) {
        const nvtxMemVirtualRangeDesc_t *v = desc->typeSpecificDesc;
        address = (uint64_t)(uintptr_t)v->ptr;
        bytes = (int64_t)v->size;
    }
    char buf[MAX_NAME_BYTES];
    const char *name = message_text(desc->messageType, desc->message, buf, sizeof buf);
    emit(GT_HEAP_REGISTER, domain, id, address, bytes, (int32_t)desc->usage, (int32_t)desc->type, name);
    gt_name kept = {.kind = GT_NAME_HEAP, .domain_id = gt_nvtx_domain_id(domain), .id = id, .address = address,
                    .bytes = bytes, .usage = (int32_t)desc->usage, .type = (int32_t)desc->type, .text = name,
                    .text_len = name ? strnlen(name, MAX_NAME_BYTES - 1) : 0};
    gt_names_keep(&kept);
    return (nvtxMemHeapHandle_t)(uintptr_t)id;
}

static void NVTX_API heap_unregister(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap)
{
    emit(GT_HEAP_UNREGISTER, domain, (uint64_t)(uintptr_t)heap, 0, 0, 0, 0, NULL);
    gt_names_forget(GT_NAME_HEAP, (uint64_t)(uintptr_t)heap);
}

/* In a fork child, before its first record: its parent's heaps, registered
 * again in its own part; those the table could not keep are dropped, counted. */
static void register_again(const gt_name *n)
{
    emit_in(GT_HEAP_REGISTER, n->domain_id, n->id, n->address, n->bytes, n->usage, n->type, n->text);
}

static void heaps_in_fork_child(void)
{
    int64_t n_unkept = gt_names_each(GT_NAME_HEAP, register_again);
    for (int64_t i = 0; i < n_unkept; i++)
        gt_cap_drop(GT_EV_HEAP);
}

static void hook_fork_children(void)
{
    gt_cap_after_fork_hook(heaps_in_fork_child);
}

static void NVTX_API heap_reset(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap)
{
    emit(GT_HEAP_RESET, domain, (uint64_t)(uintptr_t)heap, 0, 0, 0, 0, NULL);
}

static void NVTX_API regions_register(nvtxDomainHandle_t domain, nvtxMemRegionsRegisterBatch_t const *b)
{
    if (!b || !b->regionDescElements)
        return;
    bool virt = b->regionType == NVTX_MEM_TYPE_VIRTUAL_ADDRESS
                && b->regionDescElementSize >= sizeof(nvtxMemVirtualRangeDesc_t);
    for (size_t i = 0; i < b->regionCount; i++) {
        uint64_t address = 0;
        int64_t bytes = 0;
        if (virt) {
            const nvtxMemVirtualRangeDesc_t *v = element(b->regionDescElements, b->regionDescElementSize, i);
            address = (uint64_t)(uintptr_t)v->ptr;
            bytes = (int64_t)v->size;
        }
        emit(GT_REGION_REGISTER, domain, (uint64_t)(uintptr_t)b->heap, address, bytes, 0,
             (int32_t)b->regionType, NULL);
        /* A region's handle is its address: later calls may name it either way. */
        if (b->regionHandleElementsOut)
            b->regionHandleElementsOut[i] = (nvtxMemRegionHandle_t)(uintptr_t)address;
    }
}

static void NVTX_API regions_resize(nvtxDomainHandle_t domain, nvtxMemRegionsResizeBatch_t const *b)
{
    if (!b || !b->regionDescElements || b->regionType != NVTX_MEM_TYPE_VIRTUAL_ADDRESS
        || b->regionDescElementSize < sizeof(nvtxMemVirtualRangeDesc_t))
        return;
    for (size_t i = 0; i < b->regionDescCount; i++) {
        const nvtxMemVirtualRangeDesc_t *v = element(b->regionDescElements, b->regionDescElementSize, i);
        emit(GT_REGION_RESIZE, domain, 0, (uint64_t)(uintptr_t)v->ptr, (int64_t)v->size, 0,
             (int32_t)b->regionType, NULL);
    }
}

static uint64_t ref_address(uint32_t ref_type, nvtxMemRegionRef_t ref)
{
    /* Handles are addresses (regions_register), so both kinds read the same. */
    return ref_type == NVTX_MEM_REGION_REF_TYPE_HANDLE ? (uint64_t)(uintptr_t)ref.handle
                                                       : (uint64_t)(uintptr_t)ref.pointer;
}

static void NVTX_API regions_unregister(nvtxDomainHandle_t domain, nvtxMemRegionsUnregisterBatch_t const *b)
{
    if (!b || !b->refElements || b->refElementSize < sizeof(nvtxMemRegionRef_t))
        return;
    for (size_t i = 0; i < b->refCount; i++) {
        const nvtxMemRegionRef_t *ref = element(b->refElements, b->refElementSize, i);
        emit(GT_REGION_UNREGISTER, domain, 0, ref_address(b->refType, *ref), 0, 0, 0, NULL);
    }
}

static void NVTX_API regions_name(nvtxDomainHandle_t domain, nvtxMemRegionsNameBatch_t const *b)
{
    if (!b || !b->regionElements || b->regionElementSize < sizeof(nvtxMemRegionNameDesc_t))
        return;
    for (size_t i = 0; i < b->regionCount; i++) {
        const nvtxMemRegionNameDesc_t *d = element(b->regionElements, b->regionElementSize, i);
        char buf[MAX_NAME_BYTES];
        const char *name = message_text(d->nameType, d->name, buf, sizeof buf);
        emit(GT_REGION_NAME, domain, 0, ref_address(d->regionRefType, d->region), 0, 0, 0, name);
    }
}

static nvtxMemPermissionsHandle_t NVTX_API permissions_create(nvtxDomainHandle_t domain, int32_t flags)
{
    (void)domain;
    (void)flags;
    return (nvtxMemPermissionsHandle_t)(uintptr_t)atomic_fetch_add_explicit(&next_permissions_id, 1,
                                                                          memory_order_relaxed);
}

static void NVTX_API permissions_assign(nvtxDomainHandle_t d, nvtxMemPermissionsAssignBatch_t const *b)
{
    (void)d;
    (void)b;
}

static void NVTX_API permissions_destroy(nvtxDomainHandle_t d, nvtxMemPermissionsHandle_t p)
{
    (void)d;
    (void)p;
}

static void NVTX_API permissions_bind(nvtxDomainHandle_t d, nvtxMemPermissionsHandle_t p, uint32_t scope, uint32_t flags)
{
    (void)d;
    (void)p;
    (void)scope;
    (void)flags;
}

static void NVTX_API permissions_unbind(nvtxDomainHandle_t d, uint32_t scope)
{
    (void)d;
    (void)scope;
}

GT_EXPORT int NVTX_API InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *info);

int NVTX_API InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *info)
{
    static pthread_once_t fork_hook_once = PTHREAD_ONCE_INIT;
    gt_cap_init();
    if (!atomic_load(&gt_cap_active) || !info || info->moduleId != NVTX_EXT_MODULEID_MEM
        || info->segmentsCount < 1 || !info->segments)
        return 0; /* other extensions (payloads, counters) are not recorded: NVTX makes them no-ops */
    /* The slot layout is version 1's; a newer incompatible layout changes compatId's high byte. */
    if ((info->compatId & 0xff00) != (NVTX_EXT_COMPATID_MEM & 0xff00))
        return 0;
    pthread_once(&fork_hook_once, hook_fork_children);
    nvtxExtModuleSegment_t *seg = &info->segments[0];
    intptr_t *slots = seg->functionSlots;
    size_t n = seg->slotCount;
#define SLOT(id, fn) do { if ((id) < n) slots[id] = (intptr_t)(fn); } while (0)
    SLOT(NVTX3EXT_CBID_nvtxMemHeapRegister, heap_register);
    SLOT(NVTX3EXT_CBID_nvtxMemHeapUnregister, heap_unregister);
    SLOT(NVTX3EXT_CBID_nvtxMemHeapReset, heap_reset);
    SLOT(NVTX3EXT_CBID_nvtxMemRegionsRegister, regions_register);
    SLOT(NVTX3EXT_CBID_nvtxMemRegionsResize, regions_resize);
    SLOT(NVTX3EXT_CBID_nvtxMemRegionsUnregister, regions_unregister);
    SLOT(NVTX3EXT_CBID_nvtxMemRegionsName, regions_name);
    SLOT(NVTX3EXT_CBID_nvtxMemPermissionsAssign, permissions_assign);
    SLOT(NVTX3EXT_CBID_nvtxMemPermissionsCreate, permissions_create);
    SLOT(NVTX3EXT_CBID_nvtxMemPermissionsDestroy, permissions_destroy);
    SLOT(NVTX3EXT_CBID_nvtxMemPermissionsReset, permissions_destroy);
    SLOT(NVTX3EXT_CBID_nvtxMemPermissionsBind, permissions_bind);
    SLOT(NVTX3EXT_CBID_nvtxMemPermissionsUnbind, permissions_unbind);
#undef SLOT
    return 1;
}
