/* stacks.c: call stacks of the threads that allocate device memory, stored
 * once per distinct stack. A stack is hashed; the first thread to insert its
 * hash into a fixed lock-free table gets a new callchain id, symbolizes the
 * return addresses (dladdr: only this process knows its modules) and writes
 * them to its ring (REC_CALLCHAIN). A full table gives 0 (no stack) rather
 * than waiting.
 */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <string.h>

#include "ring.h"
#include "session.h"
#include "stacks.h"

#define N_SLOTS 65536 /* distinct stacks remembered per process */
#define NAME_BYTES 240 /* a symbol or module name is cut there */

/* Per frame "symbol\0module\0" into `out` (room for 2 * NAME_BYTES per frame);
 * returns the bytes written. */
static size_t symbolize(void *const *ips, int n, char *out)
{
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        Dl_info info;
        memset(&info, 0, sizeof info);
        /* A return address points after the call: look up the byte before it. */
        uintptr_t ip = (uintptr_t)ips[i];
        int found = dladdr((void *)(i > 0 && ip ? ip - 1 : ip), &info);
        const char *names[2] = {found && info.dli_sname ? info.dli_sname : "",
                                found && info.dli_fname ? info.dli_fname : ""};
        for (int k = 0; k < 2; k++) {
            size_t l = strnlen(names[k], NAME_BYTES - 1);
            memcpy(out + len, names[k], l);
            out[len + l] = '\0';
            len += l + 1;
        }
    }
    return len;
}

static _Atomic uint64_t slot_hash[N_SLOTS];
static _Atomic int64_t slot_id[N_SLOTS];
static __thread int in_backtrace;

static uint64_t hash_ips(void *const *ips, int n)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) {
        h ^= (uint64_t)(uintptr_t)ips[i];
        h *= 1099511628211ull;
    }
    return h ? h : 1;
}

int64_t gt_cap_stack_id(int skip)
{
    int want = gt_cap_opts.n_stack_frames;
    if (want <= 0 || in_backtrace)
        return 0;
    void *ips[GT_CAP_MAX_FRAMES + 8];
    if (skip < 0)
        skip = 0;
    if (skip > 8)
        skip = 8;
    in_backtrace = 1; /* backtrace() may load libgcc_s and allocate the first time */
    int n = backtrace(ips, want + skip + 1 < (int)(sizeof ips / sizeof ips[0]) ? want + skip + 1
                                                                               : (int)(sizeof ips / sizeof ips[0]));
    in_backtrace = 0;
    /* Frame 0 is this function; then `skip` frames of the hook. */
    int first = 1 + skip;
    if (n <= first)
        return 0;
    int n_frames = n - first;
    if (n_frames > want)
        n_frames = want;
    uint64_t h = hash_ips(ips + first, n_frames);
    for (uint64_t i = h & (N_SLOTS - 1), probes = 0; probes < 64; i = (i + 1) & (N_SLOTS - 1), probes++) {
        uint64_t cur = atomic_load_explicit(&slot_hash[i], memory_order_acquire);
        if (cur == 0) {
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong(&slot_hash[i], &expected, h)) {
                int64_t id = gt_cap_next_callchain_id();
                char names[GT_CAP_MAX_FRAMES * 2 * NAME_BYTES];
                size_t names_bytes = symbolize(ips + first, n_frames, names);
                size_t body = sizeof(rec_callchain) + (size_t)n_frames * sizeof(uint64_t);
                rec_callchain *r = gt_cap_reserve(REC_CALLCHAIN, body, names_bytes, GT_EV_GPU_MEMORY);
                if (!r) {
                    atomic_store_explicit(&slot_id[i], -1, memory_order_release);
                    return 0;
                }
                r->callchain_id = id;
                r->n_frames = n_frames;
                for (int k = 0; k < n_frames; k++)
                    r->ips[k] = (uint64_t)(uintptr_t)ips[first + k];
                memcpy((char *)r + body, names, names_bytes);
                gt_cap_commit();
                atomic_store_explicit(&slot_id[i], id, memory_order_release);
                return id;
            }
            cur = expected;
        }
        if (cur == h) {
            int64_t id = 0;
            /* Another thread is writing this stack's record: its id comes in a
             * moment (bounded: a signal handler on that very thread must not spin forever). */
            for (int spin = 0; spin < 100000 && id == 0; spin++)
                id = atomic_load_explicit(&slot_id[i], memory_order_acquire);
            return id > 0 ? id : 0;
        }
    }
    return 0;
}

void gt_cap_stacks_init(void)
{
    /* The first backtrace() loads libgcc_s (dlopen, malloc): do it now, not
     * inside the program's first cudaMalloc. */
    void *ips[2];
    in_backtrace = 1;
    (void)backtrace(ips, 2);
    in_backtrace = 0;
}
