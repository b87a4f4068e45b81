/* simt.cc: the runtime of the SIMT emulator (tests/simt/simt.h): launches,
 * the fiber scheduler of a block, the warp's exchanges and votes, device
 * memory with guard pages and canaries, and the one CUDA runtime call the
 * launchers make (cudaGetLastError). It is not a GPU: see simt.h for what
 * it can and cannot tell. One launch at a time, on the calling thread. */
#include "simt.h"

#include <csetjmp>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

namespace simt {

enum state { READY, AT_WARP, AT_BLOCK, DONE };
enum warp_op { OP_SYNCWARP, OP_EXCHANGE, OP_BALLOT };
static const char *const op_names[] = {"__syncwarp", "a shuffle", "a vote"};

struct thread_state {
    ucontext_t ctx;
    uint3 idx;
    int lane, warp;
    state st;
    unsigned mask; /* of the warp operation it waits at */
    warp_op op;
    uint64_t slot; /* what it offers the warp */
};

static thread_state *cur; /* the fiber running */
uint3 block_idx;
dim3 block_dim, grid_dim;

enum { MAX_THREADS = 1024, WARP_LANES = 32, STACK_BYTES = 64 << 10, FILL = 0xff };

static thread_state threads[MAX_THREADS];
static char *stacks; /* MAX_THREADS times (guard page, stack) */
static size_t page_bytes;
static ucontext_t sched;
static int n_block_threads;
static const launch_config *running;
static void (*body_fn)(void *);
static void *body_ctx;
static bool failed; /* the running launch failed: its fibers are dropped */
static bool descending; /* this launch runs its threads from the last */
static char failure[640];
static cudaError_t last_error = cudaSuccess;
static long n_launches, n_threads_run;
static sigjmp_buf fault_jmp;
/* the kernels' __shared__ arrays (simt.h), found by the linker */
extern "C" char __start_simt_shared[] __attribute__((weak)), __stop_simt_shared[] __attribute__((weak));
static volatile sig_atomic_t in_fiber;

/* ---- device memory ---- */

struct allocation {
    char *region;   /* guard page, data pages, guard page */
    size_t region_bytes;
    char *start;    /* the buffer: its end is at most 15 bytes before the tail guard */
    size_t n_bytes;
};
static std::vector<allocation> allocations;

static char *data_begin(const allocation &a) { return a.region + page_bytes; }
static char *data_end(const allocation &a) { return a.region + a.region_bytes - page_bytes; }

/* "N bytes past the end of a buffer of M bytes", or where else addr is */
static void describe_address(char *out, size_t n, const char *addr)
{
    for (const allocation &a : allocations) {
        if (addr >= a.region && addr < a.start) {
            snprintf(out, n, "%zu bytes before the start of a buffer of %zu bytes", (size_t)(a.start - addr),
                     a.n_bytes);
            return;
        }
        if (addr >= a.start + a.n_bytes && addr < a.region + a.region_bytes) {
            snprintf(out, n, "byte %zu past the end of a buffer of %zu bytes",
                     (size_t)(addr - (a.start + a.n_bytes)), a.n_bytes);
            return;
        }
    }
    if (stacks && addr >= stacks && addr < stacks + (size_t)MAX_THREADS * (page_bytes + STACK_BYTES)) {
        snprintf(out, n, "the guard page of a thread's stack (a stack overflow)");
        return;
    }
    snprintf(out, n, "%p, which is no device buffer (freed, a host pointer, or wild)", (const void *)addr);
}

/* ---- failures ---- */

static void vfail(const thread_state *t, cudaError_t err, const char *fmt, va_list ap)
{
    if (failed)
        return; /* the first failure is the one to read */
    const launch_config &c = *running;
    int n = snprintf(failure, sizeof failure, "%s<<<(%u,%u,%u), (%u,%u,%u)>>> block (%u,%u,%u)", c.name, c.grid.x,
                     c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z, block_idx.x, block_idx.y, block_idx.z);
    if (t && n < (int)sizeof failure)
        n += snprintf(failure + n, sizeof failure - n, " thread (%u,%u,%u)", t->idx.x, t->idx.y, t->idx.z);
    if (n < (int)sizeof failure)
        n += snprintf(failure + n, sizeof failure - n, ": ");
    if (n < (int)sizeof failure)
        vsnprintf(failure + n, sizeof failure - n, fmt, ap);
    failed = true;
    last_error = err;
    fprintf(stderr, "simt: %s\n", failure);
}

static void fail(const thread_state *t, cudaError_t err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(t, err, fmt, ap);
    va_end(ap);
}

/* From inside a fiber: the launch stops here; the fiber is never resumed. */
[[noreturn]] static void fail_here(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(cur, cudaErrorLaunchFailure, fmt, ap);
    va_end(ap);
    swapcontext(&cur->ctx, &sched);
    abort(); /* not reached */
}

static void on_fault(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    if (!in_fiber) { /* not a kernel's: the default action */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    char where[200];
    describe_address(where, sizeof where, (const char *)info->si_addr);
    fail(cur, cudaErrorIllegalAddress, "invalid memory access at %s", where);
    siglongjmp(fault_jmp, 1);
}

static void install_fault_handler(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    static char alt[64 << 10];
    stack_t ss = {};
    ss.ss_sp = alt;
    ss.ss_size = sizeof alt;
    sigaltstack(&ss, NULL);
    struct sigaction sa = {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
}

/* ---- the threads of a block ---- */

uint3 thread_idx(void) { return cur->idx; }
int lane(void) { return cur->lane; }

static void wait_at(state s, unsigned mask, warp_op op)
{
    thread_state *me = cur;
    me->st = s;
    me->mask = mask;
    me->op = op;
    swapcontext(&me->ctx, &sched);
}

void syncthreads(void) { wait_at(AT_BLOCK, 0, OP_SYNCWARP); }

static void check_own_lane(unsigned mask, const char *what)
{
    if (!(mask >> cur->lane & 1u))
        fail_here("%s with mask 0x%08x, which leaves out the calling lane %d", what, mask, cur->lane);
}

void syncwarp(unsigned mask)
{
    check_own_lane(mask, "__syncwarp");
    wait_at(AT_WARP, mask, OP_SYNCWARP);
}

uint64_t exchange(unsigned mask, uint64_t v, int src_lane)
{
    check_own_lane(mask, "a shuffle");
    cur->slot = v;
    wait_at(AT_WARP, mask, OP_EXCHANGE);
    if (src_lane < 0 || src_lane >= WARP_LANES || !(mask >> src_lane & 1u))
        fail_here("a shuffle reads lane %d, which is not in its mask 0x%08x (the value is undefined)", src_lane,
                  mask);
    uint64_t r = threads[cur->warp * WARP_LANES + src_lane].slot;
    wait_at(AT_WARP, mask, OP_EXCHANGE); /* no lane offers again before all have read */
    return r;
}

unsigned ballot(unsigned mask, int pred)
{
    check_own_lane(mask, "a vote");
    cur->slot = pred != 0;
    wait_at(AT_WARP, mask, OP_BALLOT);
    unsigned bits = 0;
    for (int l = 0; l < WARP_LANES; l++)
        if (mask >> l & 1u)
            bits |= (unsigned)threads[cur->warp * WARP_LANES + l].slot << l;
    wait_at(AT_WARP, mask, OP_BALLOT);
    return bits;
}

static void thread_main(void)
{
    body_fn(body_ctx);
    cur->st = DONE; /* returns to sched through uc_link */
}

/* Releases the lanes of every warp operation all its lanes have reached;
 * stops the launch where one never can be. Returns whether any moved. */
static bool release_warps(void)
{
    bool moved = false;
    for (int i = 0; i < n_block_threads && !failed; i++) {
        thread_state *t = &threads[i];
        if (t->st != AT_WARP)
            continue;
        int base = t->warp * WARP_LANES;
        bool all_there = true;
        for (int l = 0; l < WARP_LANES; l++) {
            if (!(t->mask >> l & 1u))
                continue;
            if (base + l >= n_block_threads) {
                fail(t, cudaErrorLaunchFailure, "%s with mask 0x%08x names lane %d, which a block of %d threads "
                     "does not have", op_names[t->op], t->mask, l, n_block_threads);
                return false;
            }
            const thread_state *o = &threads[base + l];
            if (o->st == DONE) {
                fail(t, cudaErrorLaunchFailure, "%s with mask 0x%08x waits for lane %d, which has exited",
                     op_names[t->op], t->mask, l);
                return false;
            }
            if (o->st == AT_WARP && (o->mask != t->mask || o->op != t->op)) {
                fail(t, cudaErrorLaunchFailure, "%s with mask 0x%08x meets lane %d at %s with mask 0x%08x",
                     op_names[t->op], t->mask, l, op_names[o->op], o->mask);
                return false;
            }
            if (o->st != AT_WARP)
                all_there = false;
        }
        if (!all_there)
            continue;
        for (int l = 0; l < WARP_LANES; l++)
            if (t->mask >> l & 1u)
                threads[base + l].st = READY;
        moved = true;
    }
    return moved;
}

/* Runs the block's threads to completion, switching at barriers. Threads
 * that exited count as arrived at __syncthreads, as on the hardware. */
static void run_block(void)
{
    unsigned bx = block_dim.x, by = block_dim.y;
    for (int i = 0; i < n_block_threads; i++) {
        thread_state *t = &threads[i];
        t->idx = uint3{i % bx, i / bx % by, i / (bx * by)};
        t->lane = i % WARP_LANES;
        t->warp = i / WARP_LANES;
        t->st = READY;
        getcontext(&t->ctx);
        t->ctx.uc_stack.ss_sp = stacks + (size_t)i * (page_bytes + STACK_BYTES) + page_bytes;
        t->ctx.uc_stack.ss_size = STACK_BYTES;
        t->ctx.uc_link = &sched;
        makecontext(&t->ctx, thread_main, 0);
    }
    n_threads_run += n_block_threads;
    if (__start_simt_shared) /* as on a GPU, shared memory starts undefined: NaNs show reads of it */
        memset(__start_simt_shared, FILL, (size_t)(__stop_simt_shared - __start_simt_shared));
    for (;;) {
        for (int k = 0; k < n_block_threads && !failed; k++) {
            thread_state *t = &threads[descending ? n_block_threads - 1 - k : k];
            if (t->st != READY)
                continue;
            cur = t;
            in_fiber = 1;
            swapcontext(&sched, &t->ctx);
            in_fiber = 0;
        }
        if (failed)
            return;
        if (release_warps())
            continue;
        if (failed)
            return;
        int n_done = 0, n_block = 0;
        for (int i = 0; i < n_block_threads; i++)
            n_done += threads[i].st == DONE, n_block += threads[i].st == AT_BLOCK;
        if (n_done == n_block_threads)
            return;
        if (n_done + n_block == n_block_threads) {
            for (int i = 0; i < n_block_threads; i++)
                if (threads[i].st == AT_BLOCK)
                    threads[i].st = READY;
            continue;
        }
        for (int i = 0; i < n_block_threads; i++)
            if (threads[i].st == AT_WARP) {
                fail(&threads[i], cudaErrorLaunchFailure, "deadlock: it waits at %s with mask 0x%08x while "
                     "other threads of its warp wait at __syncthreads", op_names[threads[i].op], threads[i].mask);
                return;
            }
        return; /* not reached: a thread that is not done waits somewhere */
    }
}

static bool canaries_intact(void)
{
    for (const allocation &a : allocations) {
        for (const char *p = a.start - 1; p >= data_begin(a); p--)
            if ((unsigned char)*p != FILL) {
                fail(NULL, cudaErrorLaunchFailure, "wrote %zu bytes before the start of a buffer of %zu bytes",
                     (size_t)(a.start - p), a.n_bytes);
                return false;
            }
        for (const char *p = a.start + a.n_bytes; p < data_end(a); p++)
            if ((unsigned char)*p != FILL) {
                fail(NULL, cudaErrorLaunchFailure, "wrote byte %zu past the end of a buffer of %zu bytes",
                     (size_t)(p - (a.start + a.n_bytes)), a.n_bytes);
                return false;
            }
    }
    return true;
}

static bool prepare(void)
{
    if (stacks)
        return true;
    page_bytes = (size_t)sysconf(_SC_PAGESIZE);
    size_t bytes = (size_t)MAX_THREADS * (page_bytes + STACK_BYTES);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return false;
    stacks = (char *)p;
    for (int i = 0; i < MAX_THREADS; i++)
        mprotect(stacks + (size_t)i * (page_bytes + STACK_BYTES), page_bytes, PROT_NONE);
    install_fault_handler();
    return true;
}

void run(const launch_config &c, void (*body)(void *), void *ctx)
{
    running = &c;
    failed = false;
    block_idx = uint3{0, 0, 0};
    unsigned long n = (unsigned long)c.block.x * c.block.y * c.block.z;
    if (c.block.x == 0 || c.block.y == 0 || c.block.z == 0 || n > MAX_THREADS || c.block.z > 64 || c.grid.x == 0 ||
        c.grid.y == 0 || c.grid.z == 0 || c.grid.x > 0x7fffffffu || c.grid.y > 65535 || c.grid.z > 65535) {
        fail(NULL, cudaErrorInvalidConfiguration, "invalid launch configuration (%lu threads per block)", n);
        return;
    }
    if (c.smem_bytes) {
        fail(NULL, cudaErrorNotSupported, "%zu bytes of dynamic shared memory: not emulated", c.smem_bytes);
        return;
    }
    if (!prepare()) {
        fail(NULL, cudaErrorMemoryAllocation, "cannot map the threads' stacks");
        return;
    }
    n_launches++;
    descending = n_launches % 2 == 0; /* lanes that read others' writes without a sync show either way */
    n_block_threads = (int)n;
    body_fn = body;
    body_ctx = ctx;
    block_dim = c.block;
    grid_dim = c.grid;
    if (sigsetjmp(fault_jmp, 1) == 0) {
        for (unsigned z = 0; z < c.grid.z && !failed; z++)
            for (unsigned y = 0; y < c.grid.y && !failed; y++)
                for (unsigned x = 0; x < c.grid.x && !failed; x++) {
                    block_idx = uint3{x, y, z};
                    run_block();
                }
    }
    in_fiber = 0;
    if (!failed)
        canaries_intact();
}

} /* namespace simt */

using namespace simt;

extern "C" void *simt_alloc(size_t n_bytes)
{
    if (!prepare())
        return NULL;
    size_t data = (n_bytes + page_bytes - 1) / page_bytes * page_bytes;
    if (data == 0)
        data = page_bytes;
    allocation a;
    a.region_bytes = data + 2 * page_bytes;
    void *p = mmap(NULL, a.region_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    a.region = (char *)p;
    if (mprotect(a.region + page_bytes, data, PROT_READ | PROT_WRITE) != 0) {
        munmap(p, a.region_bytes);
        return NULL;
    }
    a.n_bytes = n_bytes;
    a.start = (char *)((uintptr_t)(data_end(a) - n_bytes) & ~(uintptr_t)15);
    memset(data_begin(a), FILL, data);
    allocations.push_back(a);
    return a.start;
}

extern "C" void simt_free(void *p)
{
    for (size_t i = 0; i < allocations.size(); i++)
        if (allocations[i].start == p) {
            munmap(allocations[i].region, allocations[i].region_bytes);
            allocations.erase(allocations.begin() + (long)i);
            return;
        }
}

extern "C" const char *simt_last_failure(void) { return failure; }
extern "C" long simt_n_launches(void) { return n_launches; }
extern "C" long simt_n_threads(void) { return n_threads_run; }

/* The CUDA runtime's error of the last launch, cleared by reading it. */
extern "C" cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}
