/* nvtx_fork_strings: what a fork child inherits from NVTX, used there. The
 * parent names a domain "fork.domain", category 3 of it "compute", category
 * 5 of the default domain "io", registers the strings "forward" and
 * "Sequential#2 backward" and a heap "parent heap" (1 MiB), then forks:
 *
 *   each process first pushes a range named its role ("role parent",
 *   "role child", "role grandchild", "role second child"), ASCII;
 *   parent     before fork: "forward" (domain, category 3) around
 *              "Sequential#2 backward"; after its children: "forward", and
 *              "parent after fork", a string it registers then
 *   child      the parent's handles: "forward" (category 3) around
 *              "Sequential#2 backward", a mark "Sequential#2 backward", a
 *              start/end range "forward"; "io" (category 5, default domain,
 *              ASCII); 2 regions in the parent's heap; then registers
 *              "registered in the child" and pushes it; then forks:
 *   grandchild "forward", "registered in the child" (its parent's string),
 *              then registers "registered in the grandchild" and pushes it;
 *              1 region in the heap
 *   second child (forked by the parent after the first one ended and after
 *              it registered "parent after fork"): "parent after fork",
 *              "Sequential#2 backward"
 *
 * Every registered string's handle is pushed through nvtxDomainRangePushEx
 * with NVTX_MESSAGE_TYPE_REGISTERED. Prints "ok" on stdout.
 *
 * `nvtx_fork_strings bogus`: a range "role bogus", then a push/pop range, a
 * mark and a start/end range named by a string handle gtrace never made (as
 * a handle passed from another process would be), then "after bogus".
 * `nvtx_fork_strings many N`: the parent names categories 1..N of the
 * default domain "cat K", then forks a child that pushes "role many child"
 * with category N. */
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static nvtxDomainHandle_t dom;
static nvtxMemHeapHandle_t heap;
static char pool[1 << 20];

static nvtxEventAttributes_t registered(nvtxStringHandle_t s, uint32_t category)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = category;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = s;
    return a;
}

static void push(nvtxStringHandle_t s, uint32_t category)
{
    nvtxEventAttributes_t a = registered(s, category);
    nvtxDomainRangePushEx(dom, &a);
}

static void pop(void)
{
    nvtxDomainRangePop(dom);
}

static void range(nvtxStringHandle_t s, uint32_t category)
{
    push(s, category);
    pop();
}

static void role(const char *name)
{
    nvtxRangePushA(name);
    nvtxRangePop();
}

static void register_heap(void)
{
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
    hd.message.ascii = "parent heap";
    heap = nvtxMemHeapRegister(dom, &hd);
}

/* `n` regions of 4 KiB in the parent's heap, from `first` KiB on. */
static void regions(size_t first_kib, size_t n)
{
    nvtxMemVirtualRangeDesc_t r[4];
    for (size_t i = 0; i < n && i < 4; i++) {
        r[i].ptr = pool + (first_kib + 4 * i) * 1024;
        r[i].size = 4096;
    }
    nvtxMemRegionsRegisterBatch_t rb;
    memset(&rb, 0, sizeof rb);
    rb.extCompatID = NVTX_EXT_COMPATID_MEM;
    rb.structSize = sizeof rb;
    rb.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    rb.heap = heap;
    rb.regionCount = n;
    rb.regionDescElementSize = sizeof r[0];
    rb.regionDescElements = r;
    nvtxMemRegionsRegister(dom, &rb);
}

static int wait_ok(pid_t pid)
{
    int st = 0;
    return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* A handle with the form of gtrace's registered strings and an id no
 * process made (the library's own encoding: the top bit and offset + 1). */
static int bogus(void)
{
    role("role bogus");
    nvtxStringHandle_t h = (nvtxStringHandle_t)(uintptr_t)((1ull << 63) | 200000);
    nvtxEventAttributes_t a = registered(h, 0);
    nvtxRangePushEx(&a);
    nvtxRangePop();
    nvtxMarkEx(&a);
    nvtxRangeEnd(nvtxRangeStartEx(&a));
    role("after bogus");
    printf("ok\n");
    return 0;
}

static int many(int n)
{
    for (int k = 1; k <= n; k++) {
        char name[32];
        snprintf(name, sizeof name, "cat %d", k);
        nvtxNameCategoryA((uint32_t)k, name);
    }
    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    if (child == 0) {
        nvtxEventAttributes_t a;
        memset(&a, 0, sizeof a);
        a.version = NVTX_VERSION;
        a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        a.category = (uint32_t)n;
        a.messageType = NVTX_MESSAGE_TYPE_ASCII;
        a.message.ascii = "role many child";
        nvtxRangePushEx(&a);
        nvtxRangePop();
        _exit(0);
    }
    if (!wait_ok(child))
        return 1;
    printf("ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "bogus"))
        return bogus();
    if (argc > 2 && !strcmp(argv[1], "many"))
        return many(atoi(argv[2]));
    role("role parent");
    dom = nvtxDomainCreateA("fork.domain");
    nvtxDomainNameCategoryA(dom, 3, "compute");
    nvtxNameCategoryA(5, "io");
    nvtxStringHandle_t fwd = nvtxDomainRegisterStringA(dom, "forward");
    nvtxStringHandle_t bwd = nvtxDomainRegisterStringA(dom, "Sequential#2 backward");
    register_heap();
    push(fwd, 3);
    range(bwd, 3);
    pop();

    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    if (child == 0) {
        role("role child");
        push(fwd, 3);
        range(bwd, 3);
        pop();
        nvtxEventAttributes_t m = registered(bwd, 0);
        nvtxDomainMarkEx(dom, &m);
        nvtxEventAttributes_t se = registered(fwd, 3);
        nvtxRangeId_t id = nvtxDomainRangeStartEx(dom, &se);
        nvtxDomainRangeEnd(dom, id);
        nvtxEventAttributes_t io;
        memset(&io, 0, sizeof io);
        io.version = NVTX_VERSION;
        io.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        io.category = 5;
        io.messageType = NVTX_MESSAGE_TYPE_ASCII;
        io.message.ascii = "io";
        nvtxRangePushEx(&io);
        nvtxRangePop();
        regions(0, 2);
        nvtxStringHandle_t own = nvtxDomainRegisterStringA(dom, "registered in the child");
        range(own, 0);

        pid_t grandchild = fork();
        if (grandchild < 0)
            _exit(1);
        if (grandchild == 0) {
            role("role grandchild");
            range(fwd, 3);
            range(own, 0);
            nvtxStringHandle_t g = nvtxDomainRegisterStringA(dom, "registered in the grandchild");
            range(g, 0);
            regions(64, 1);
            _exit(0);
        }
        _exit(wait_ok(grandchild) ? 0 : 1);
    }
    if (!wait_ok(child)) {
        fprintf(stderr, "the child failed\n");
        return 1;
    }
    range(fwd, 3);
    nvtxStringHandle_t after = nvtxDomainRegisterStringA(dom, "parent after fork");
    range(after, 0);

    pid_t second = fork();
    if (second < 0) {
        perror("fork");
        return 1;
    }
    if (second == 0) {
        role("role second child");
        range(after, 0);
        range(bwd, 3);
        _exit(0);
    }
    if (!wait_ok(second)) {
        fprintf(stderr, "the second child failed\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}
