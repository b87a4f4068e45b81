/* nvtx_features: one of each NVTX feature gtrace records, with known counts:
 *   - a domain "gt.sample" with category 7 named "io"; 3 ranges in it with a
 *     red color and int64 payloads 10, 20, 30 (pushed in the domain)
 *   - 2 marks "tick" (one ASCII, one wide) and 1 mark with a double payload 2.5
 *   - 4 registered-string ranges "registered"
 *   - push/pop ranges in the default domain: one with a 1,500-byte message
 *     (cut to 1,023), one "with-category" of category 3 around a "nested" one
 *   - 1 start/end range "handoff" started here and ended on another thread
 *   - 1 start/end range "local" started and ended here
 *   - the NVTX memory API: one heap (1 MiB pool "pool") with 3 regions
 *     registered, one resized, one named "blockB", two unregistered
 * and prints "ok" on stdout. */
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static nvtxRangeId_t handoff;

static void *ender(void *arg)
{
    (void)arg;
    nvtxRangeEnd(handoff);
    return NULL;
}

static void memory_api(nvtxDomainHandle_t d)
{
    static char pool[1 << 20];
    nvtxMemVirtualRangeDesc_t whole = {sizeof pool, pool};
    nvtxMemHeapDesc_t hd;
    memset(&hd, 0, sizeof hd);
    hd.extCompatID = NVTX_EXT_COMPATID_MEM;
    hd.structSize = sizeof hd;
    hd.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    hd.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    hd.typeSpecificDescSize = sizeof whole;
    hd.typeSpecificDesc = &whole;
    hd.messageType = NVTX_MESSAGE_TYPE_ASCII;
    hd.message.ascii = "pool";
    nvtxMemHeapHandle_t heap = nvtxMemHeapRegister(d, &hd);

    nvtxMemVirtualRangeDesc_t regions[3] = {{4096, pool}, {8192, pool + 4096}, {16384, pool + 12288}};
    nvtxMemRegionsRegisterBatch_t rb;
    memset(&rb, 0, sizeof rb);
    rb.extCompatID = NVTX_EXT_COMPATID_MEM;
    rb.structSize = sizeof rb;
    rb.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    rb.heap = heap;
    rb.regionCount = 3;
    rb.regionDescElementSize = sizeof regions[0];
    rb.regionDescElements = regions;
    nvtxMemRegionsRegister(d, &rb);

    nvtxMemVirtualRangeDesc_t bigger = {6144, pool};
    nvtxMemRegionsResizeBatch_t zb;
    memset(&zb, 0, sizeof zb);
    zb.extCompatID = NVTX_EXT_COMPATID_MEM;
    zb.structSize = sizeof zb;
    zb.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    zb.regionDescCount = 1;
    zb.regionDescElementSize = sizeof bigger;
    zb.regionDescElements = &bigger;
    nvtxMemRegionsResize(d, &zb);

    nvtxMemRegionNameDesc_t nd;
    memset(&nd, 0, sizeof nd);
    nd.regionRefType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    nd.nameType = NVTX_MESSAGE_TYPE_ASCII;
    nd.region.pointer = pool + 4096;
    nd.name.ascii = "blockB";
    nvtxMemRegionsNameBatch_t nb;
    memset(&nb, 0, sizeof nb);
    nb.extCompatID = NVTX_EXT_COMPATID_MEM;
    nb.structSize = sizeof nb;
    nb.regionCount = 1;
    nb.regionElementSize = sizeof nd;
    nb.regionElements = &nd;
    nvtxMemRegionsName(d, &nb);

    nvtxMemRegionRef_t refs[2];
    refs[0].pointer = pool;
    refs[1].pointer = pool + 4096;
    nvtxMemRegionsUnregisterBatch_t ub;
    memset(&ub, 0, sizeof ub);
    ub.extCompatID = NVTX_EXT_COMPATID_MEM;
    ub.structSize = sizeof ub;
    ub.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
    ub.refCount = 2;
    ub.refElementSize = sizeof refs[0];
    ub.refElements = refs;
    nvtxMemRegionsUnregister(d, &ub);
}

/* Event attributes of this NVTX version, every field unset. */
static nvtxEventAttributes_t attributes(void)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    return a;
}

int main(void)
{
    nvtxDomainHandle_t d = nvtxDomainCreateA("gt.sample");
    nvtxDomainNameCategoryA(d, 7, "io");
    for (int i = 1; i <= 3; i++) {
        nvtxEventAttributes_t a = attributes();
        a.category = 7;
        a.colorType = NVTX_COLOR_ARGB;
        a.color = 0xffff0000;
        a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
        a.payload.llValue = 10 * i;
        a.messageType = NVTX_MESSAGE_TYPE_ASCII;
        a.message.ascii = "domain-range";
        nvtxDomainRangePushEx(d, &a);
        nvtxDomainRangePop(d);
    }
    nvtxMarkA("tick");
    nvtxMarkW(L"tick");
    nvtxEventAttributes_t m = attributes();
    m.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
    m.payload.dValue = 2.5;
    m.messageType = NVTX_MESSAGE_TYPE_ASCII;
    m.message.ascii = "payload-mark";
    nvtxMarkEx(&m);

    nvtxStringHandle_t reg = nvtxDomainRegisterStringA(NULL, "registered");
    for (int i = 0; i < 4; i++) {
        nvtxEventAttributes_t a = attributes();
        a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a.message.registered = reg;
        nvtxRangePushEx(&a);
        nvtxRangePop();
    }

    static char long_text[1501];
    memset(long_text, 'L', 1500);
    nvtxRangePushA(long_text);
    nvtxRangePop();
    nvtxEventAttributes_t c = attributes();
    c.category = 3;
    c.messageType = NVTX_MESSAGE_TYPE_ASCII;
    c.message.ascii = "with-category";
    nvtxRangePushEx(&c);
    nvtxRangePushA("nested");
    nvtxRangePop();
    nvtxRangePop();

    handoff = nvtxRangeStartA("handoff");
    pthread_t t;
    pthread_create(&t, NULL, ender, NULL);
    pthread_join(t, NULL);
    nvtxRangeId_t local = nvtxRangeStartA("local");
    nvtxRangeEnd(local);

    memory_api(d);
    printf("ok\n");
    return 0;
}
