/* ring.c: the per-thread rings, in this process image's shared region
 * (shm.h), and the region itself: made once per image (memfd), described,
 * and handed to the launcher over its socket.
 *
 * A thread gets a ring at its first event: a FREE one of the region (a ring
 * the launcher emptied after its thread exited), else a new one carved from
 * the region, else none (the region's cap is reached): its events are then
 * dropped and counted. A new ring's pages are faulted in when it is carved
 * (a ring is GTRACE_BUFFER_KB, 1008 KiB by default: with the thread's NVTX
 * stack under 1 MiB a thread), so recording never faults.
 *
 * The producer's path (gt_cap_reserve, gt_cap_commit) reads and writes only
 * its thread's state and its ring: no lock, no system call, no allocation.
 * It keeps the launcher's `tail` as last read and reads it again only when
 * the ring looks full (or more than a quarter full, to ask for a read: the
 * launcher then has three quarters of the ring's time to run), so the
 * launcher's cache line is not pulled at every event. The wake-up (a byte
 * on the socket) is sent at most once until the launcher has read.
 *
 * This file does not know what records mean: nvtx.c, nvtx_mem.c, stacks.c
 * and cupti.c write them; the launcher (record/drain.c) reads them. It calls
 * nothing above it (capture.h): a layer that keeps per-thread state of its
 * own (nvtx.c's stacks) frees it through a pthread key of its own.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ring.h"
#include "warn.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

__thread gt_cap_tls gt_cap_tls_state __attribute__((tls_model("initial-exec")));
#define tls gt_cap_tls_state
_Atomic int gt_cap_active;

static _Atomic uint64_t own_gate;   /* the gate before there is a region */
_Atomic uint64_t *gt_cap_gate = &own_gate;
static gt_shm_header *region;       /* this image's region; NULL: capture is off */
static char *region_data;
static int region_sock = -1;        /* the connection to the launcher */
static _Atomic int64_t no_region_dropped[GT_SHM_KINDS]; /* counted where nobody reads (no launcher) */

static pthread_key_t ring_key;
static bool have_ring_key;
static pthread_once_t ring_key_once = PTHREAD_ONCE_INIT;

/* Fork: the parent's region (still mapped in the child) and how much of its
 * string area was used when it forked, until the child's region has a copy. */
static gt_shm_header *parent_region;
static uint64_t strings_at_fork;
/* What the layers above write first in a fork child (gt_cap_after_fork_hook). */
#define MAX_FORK_HOOKS 4
static void (*fork_hooks[MAX_FORK_HOOKS])(void);
static _Atomic int n_fork_hooks;
static _Atomic int fork_hooks_pending; /* a fork child that has not claimed a ring yet */

int32_t gt_cap_tid(void)
{
    if (__builtin_expect(tls.tid == 0, 0))
        tls.tid = (int32_t)syscall(SYS_gettid);
    return tls.tid;
}

static void count_drop(gt_shm_ring *r, gt_event_kind kind)
{
    if (kind >= GT_EV_N_KINDS)
        return;
    if (r)
        atomic_fetch_add_explicit(&r->dropped[kind], 1, memory_order_relaxed);
    else if (region && atomic_load_explicit(&gt_cap_active, memory_order_relaxed))
        atomic_fetch_add_explicit(&region->orphan_dropped[kind], 1, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&no_region_dropped[kind], 1, memory_order_relaxed);
}

static void thread_exit(void *p)
{
    gt_shm_ring *r = p;
    (void)r;
    if (tls.ring && tls.ring == p) {
        /* Every record is published (head is stored at each commit): the
         * launcher reads the ring to its end and frees it. Only its thread
         * moves a LIVE ring; the launcher frees DEAD ones only. */
        GT_ASSERT(atomic_load_explicit(&tls.ring->state, memory_order_relaxed) == GT_RING_LIVE);
        atomic_store_explicit(&tls.ring->state, GT_RING_DEAD, memory_order_release);
    }
    tls.ring = NULL;
    tls.state = 2;
}

static void make_key(void)
{
    have_ring_key = pthread_key_create(&ring_key, thread_exit) == 0;
}

/* Faults a new ring's pages in now, once, rather than one by one in the
 * middle of the program's hot loops (a reused ring's pages are in already). */
static void populate(char *p, size_t bytes)
{
    if (madvise(p, bytes, MADV_POPULATE_WRITE) == 0)
        return;
    long page = sysconf(_SC_PAGESIZE);
    for (size_t off = 0; off < bytes; off += (size_t)(page > 0 ? page : 4096))
        ((volatile char *)p)[off] = 0; /* nobody reads a ring before its producer writes it */
}

/* A ring for this thread, or NULL (counted by the caller). */
static gt_shm_ring *ring_claim(void)
{
    gt_shm_header *h = region;
    if (!h || !atomic_load_explicit(&gt_cap_active, memory_order_relaxed)) {
        tls.state = region ? 2 : 0;
        return NULL;
    }
    pthread_once(&ring_key_once, make_key);
    gt_shm_ring *rings = (gt_shm_ring *)((char *)h + h->header_bytes);
    gt_shm_ring *r = NULL;
    uint32_t idx = 0;
    uint32_t n = atomic_load_explicit(&h->n_carved, memory_order_acquire);
    for (uint32_t i = 0; i < n && !r; i++) {
        uint32_t expected = GT_RING_FREE;
        if (atomic_load_explicit(&rings[i].state, memory_order_relaxed) == GT_RING_FREE
            && atomic_compare_exchange_strong_explicit(&rings[i].state, &expected, GT_RING_CLAIMED,
                                                       memory_order_acquire, memory_order_relaxed)) {
            r = &rings[i];
            idx = i;
        }
    }
    while (!r) {
        n = atomic_load_explicit(&h->n_carved, memory_order_relaxed);
        if (n >= h->n_rings)
            break;
        if (atomic_compare_exchange_weak_explicit(&h->n_carved, &n, n + 1, memory_order_acq_rel, memory_order_relaxed)) {
            r = &rings[n];
            idx = n;
            /* UNUSED until now, so no other thread took it (shm.h). */
            GT_ASSERT(atomic_load_explicit(&r->state, memory_order_relaxed) == GT_RING_UNUSED);
            atomic_store_explicit(&r->state, GT_RING_CLAIMED, memory_order_relaxed);
            populate(region_data + (uint64_t)n * h->ring_bytes, h->ring_bytes);
        }
    }
    if (!r) {
        static _Atomic int once;
        gt_cap_warn_once(&once, "every event buffer of process %d is taken (%u threads; GTRACE_BUFFER_TOTAL_MB): "
                                "events of further threads are dropped and counted", (int)getpid(), h->n_rings);
        tls.state = 2;
        return NULL;
    }
    /* Asked afresh, not from the thread-local cache: a ring names its thread
     * for every record in it, so a stale id would give them to another. */
    tls.tid = (int32_t)syscall(SYS_gettid);
    r->tid = tls.tid;
    char name[17] = "";
    if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0)
        name[0] = '\0';
    memset(r->name, 0, sizeof r->name);
    memcpy(r->name, name, strnlen(name, 16));
    atomic_fetch_add_explicit(&r->generation, 1, memory_order_relaxed);
    tls.ring = r;
    tls.data = region_data + (uint64_t)idx * h->ring_bytes;
    tls.cap = h->ring_bytes;
    tls.quarter = h->ring_bytes / 4;
    tls.head = atomic_load_explicit(&r->head, memory_order_relaxed);
    tls.off = tls.head % tls.cap;
    tls.tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    tls.reserved_head = tls.head;
    tls.state = 1;
    /* CLAIMED, by this thread alone: the launcher reads LIVE and DEAD rings only */
    GT_ASSERT(atomic_load_explicit(&r->state, memory_order_relaxed) == GT_RING_CLAIMED);
    atomic_store_explicit(&r->state, GT_RING_LIVE, memory_order_release);
    if (have_ring_key)
        pthread_setspecific(ring_key, r);
    return r;
}

/* ring_claim, and in a fork child, the first time a thread gets a ring, the
 * layers' hooks first: what they write comes before the thread's record. */
static gt_shm_ring *claim_ring(void)
{
    gt_shm_ring *r = ring_claim();
    if (r && atomic_load_explicit(&fork_hooks_pending, memory_order_relaxed)
        && atomic_exchange_explicit(&fork_hooks_pending, 0, memory_order_acq_rel)) {
        int n = atomic_load_explicit(&n_fork_hooks, memory_order_acquire);
        for (int i = 0; i < n && i < MAX_FORK_HOOKS; i++)
            if (fork_hooks[i])
                fork_hooks[i]();
    }
    return r;
}

void gt_cap_after_fork_hook(void (*fn)(void))
{
    int i = atomic_fetch_add_explicit(&n_fork_hooks, 1, memory_order_acq_rel);
    if (i < MAX_FORK_HOOKS)
        fork_hooks[i] = fn;
}

void gt_cap_request_dump(void)
{
    gt_shm_header *h = region;
    if (h) {
        atomic_fetch_add_explicit(&h->dump_requests, 1, memory_order_relaxed);
        atomic_store_explicit(&h->wake_pending, 0, memory_order_relaxed); /* a byte goes even if one is pending */
        gt_cap_wake_launcher();
    }
}

void gt_cap_wake_launcher(void)
{
    gt_shm_header *h = region;
    if (h && region_sock >= 0 && !atomic_exchange_explicit(&h->wake_pending, 1, memory_order_relaxed)) {
        int saved = errno;
        ssize_t n = send(region_sock, "w", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)n;
        errno = saved;
    }
}

#define reserve gt_cap_reserve_slow

void *gt_cap_reserve_quiet(uint16_t type, size_t body_bytes, size_t text_bytes)
{
    return reserve(type, body_bytes, text_bytes, GT_EV_N_KINDS, false);
}

void *gt_cap_reserve_wait(uint16_t type, size_t body_bytes, size_t text_bytes, gt_event_kind kind, int max_wait_ms)
{
    for (int waited = 0;; waited++) {
        void *p = reserve(type, body_bytes, text_bytes, kind, waited >= max_wait_ms);
        if (p || waited >= max_wait_ms || !atomic_load_explicit(&gt_cap_active, memory_order_relaxed) || !tls.ring
            || tls.busy)
            return p;
        gt_cap_wake_launcher();
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

void *gt_cap_reserve_slow(uint16_t type, size_t body_bytes, size_t text_bytes, gt_event_kind kind, bool count_full)
{
    gt_shm_ring *r = tls.ring;
    if (__builtin_expect(r == NULL, 0)) {
        if (tls.state == 0)
            r = claim_ring();
        if (!r) {
            count_drop(NULL, kind);
            return NULL;
        }
    }
    if (__builtin_expect(tls.busy || !atomic_load_explicit(&gt_cap_active, memory_order_relaxed), 0)) {
        count_drop(r, kind);
        return NULL;
    }
    uint64_t need = (body_bytes + text_bytes + 7) & ~(uint64_t)7;
    uint64_t cap = tls.cap;
    uint64_t head = tls.head, off = tls.off == cap ? 0 : tls.off; /* the last record ended at the end */
    uint64_t contig = cap - off;
    uint64_t total = need <= contig ? need : contig + need;
    if (__builtin_expect(text_bytes > UINT16_MAX || need > cap / 4, 0)) {
        count_drop(r, kind);
        return NULL;
    }
    if (__builtin_expect((head - tls.tail) + total > cap, 0)) {
        tls.tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        if ((head - tls.tail) + total > cap) {
            if (count_full)
                count_drop(r, kind);
            gt_cap_wake_launcher();
            return NULL;
        }
    }
    tls.busy = 1;
    if (need > contig) {
        rec_hdr *pad = (rec_hdr *)(tls.data + off);
        pad->size_bytes = (uint32_t)contig;
        pad->type = REC_PAD;
        pad->text_bytes = 0;
        head += contig;
        off = 0;
    }
    rec_hdr *h = (rec_hdr *)(tls.data + off);
    h->size_bytes = (uint32_t)need;
    h->type = type;
    h->text_bytes = (uint16_t)text_bytes;
    tls.reserved_head = head + need;
    tls.off = off + need;
    return h;
}

void gt_cap_commit_filling(void)
{
    /* The tail as last read says more than a quarter full: read it again. */
    tls.tail = atomic_load_explicit(&tls.ring->tail, memory_order_acquire);
    if (tls.head - tls.tail > tls.quarter)
        gt_cap_wake_launcher();
}

void gt_cap_drop(gt_event_kind kind)
{
    count_drop(tls.ring, kind);
}

bool gt_cap_ring_take(void)
{
    if (!tls.ring && tls.state == 0)
        claim_ring();
    return tls.ring != NULL;
}

bool gt_cap_note_lost_end(int64_t id)
{
    gt_shm_header *h = region;
    if (!h)
        return false;
    uint64_t x = (uint64_t)id * 0x9e3779b97f4a7c15ull;
    for (unsigned k = 0; k < 64; k++) {
        _Atomic int64_t *slot = &h->lost_ends[(x + k) & (GT_SHM_LOST_END_SLOTS - 1)];
        int64_t empty = 0;
        if (atomic_compare_exchange_strong_explicit(slot, &empty, id, memory_order_release, memory_order_relaxed)) {
            atomic_fetch_add_explicit(&h->n_lost_ends, 1, memory_order_release);
            return true;
        }
    }
    return false;
}

uint64_t gt_cap_register_string(const char *s, size_t len)
{
    gt_shm_header *h = region;
    if (!h)
        return 0;
    uint64_t at = atomic_fetch_add_explicit(&h->strings_used, len + 1, memory_order_relaxed);
    if (at + len + 1 > GT_SHM_STRINGS_BYTES)
        return 0;
    memcpy(h->strings + at, s, len);
    h->strings[at + len] = '\0';
    return at + 1;
}

const char *gt_cap_registered_text(uint64_t id)
{
    gt_shm_header *h = region;
    if (!h || id == 0 || id > GT_SHM_STRINGS_BYTES
        || id > atomic_load_explicit(&h->strings_used, memory_order_relaxed))
        return NULL;
    return h->strings + (id - 1);
}

/* A fork child's region starts with its parent's strings, as they were at
 * fork: the handles the child inherited keep their ids (offset + 1). */
static void inherit_strings(gt_shm_header *h)
{
    const gt_shm_header *from = parent_region;
    parent_region = NULL;
    if (!from)
        return;
    uint64_t used = strings_at_fork < GT_SHM_STRINGS_BYTES ? strings_at_fork : GT_SHM_STRINGS_BYTES;
    memcpy(h->strings, from->strings, used);
    atomic_store_explicit(&h->strings_used, used, memory_order_relaxed);
}

/* ---- the region --------------------------------------------------------- */

static size_t round_up(size_t x, size_t to)
{
    return (x + to - 1) / to * to;
}

gt_ring_layout gt_ring_layout_of(size_t ring_bytes, size_t region_bytes)
{
    gt_ring_layout l;
    l.ring_bytes = ring_bytes;
    l.n_rings = region_bytes / ring_bytes;
    if (l.n_rings < 1)
        l.n_rings = 1;
    if (l.n_rings > GT_SHM_MAX_RINGS)
        l.n_rings = GT_SHM_MAX_RINGS;
    l.data_offset = round_up(sizeof(gt_shm_header) + l.n_rings * sizeof(gt_shm_ring), 4096);
    l.total_bytes = l.data_offset + l.n_rings * ring_bytes;
    return l;
}

/* Writes the region's header: its layout and the process it belongs to. */
static void describe(gt_shm_header *h, const gt_ring_layout *l, int64_t t0_ns, int64_t utc_t0_ns, bool stamp_tsc,
                     bool is_root, const char *info, size_t info_bytes)
{
    h->magic = GT_SHM_MAGIC;
    h->header_bytes = sizeof(gt_shm_header);
    h->region_bytes = l->total_bytes;
    h->ring_bytes = l->ring_bytes;
    h->data_offset = l->data_offset;
    h->pid = getpid();
    h->t0_ns = t0_ns;
    h->utc_t0_ns = utc_t0_ns;
    h->n_rings = (uint32_t)l->n_rings;
    h->stamp_tsc = stamp_tsc;
    h->is_root = is_root;
    if (info_bytes > GT_SHM_INFO_BYTES)
        info_bytes = GT_SHM_INFO_BYTES;
    memcpy(h->info, info, info_bytes);
    h->info_bytes = (uint32_t)info_bytes;
}

/* From now on threads take their rings from the region at `mem`. */
static void adopt(void *mem, const gt_ring_layout *l, int sock_fd)
{
    region = mem;
    atomic_store_explicit(&region->gate, atomic_load_explicit(gt_cap_gate, memory_order_relaxed),
                          memory_order_relaxed);
    gt_cap_gate = &region->gate;
    region_data = (char *)mem + l->data_offset;
    region_sock = sock_fd;
}

void gt_ring_region_init(void *mem, const gt_ring_layout *l, int64_t t0_ns, int64_t utc_t0_ns, bool stamp_tsc,
                         bool is_root, const char *info, size_t info_bytes, int sock_fd)
{
    describe(mem, l, t0_ns, utc_t0_ns, stamp_tsc, is_root, info, info_bytes);
    adopt(mem, l, sock_fd);
}

bool gt_cap_region_open(int sock_fd, const char *info, size_t info_bytes, int64_t utc_t0_ns, bool is_root,
                        size_t ring_bytes, size_t region_bytes)
{
    static _Atomic int once;
    gt_ring_layout l = gt_ring_layout_of(ring_bytes, region_bytes);
    /* A memfd's size counts against RLIMIT_FSIZE (beyond it ftruncate raises
     * SIGXFSZ): under a file size limit the region is made to fit. */
    struct rlimit fsize;
    if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY && l.total_bytes > fsize.rlim_cur) {
        l.n_rings = fsize.rlim_cur > l.data_offset ? (fsize.rlim_cur - l.data_offset) / ring_bytes : 0;
        l.total_bytes = l.data_offset + l.n_rings * ring_bytes;
        if (l.n_rings == 0) {
            gt_cap_warn_once(&once, "the file size limit (%llu bytes) leaves no room for event buffers: "
                                    "process %d is not recorded", (unsigned long long)fsize.rlim_cur, (int)getpid());
            return false;
        }
    }
    /* The launcher seals it against shrinking before it maps it. */
    int fd = (int)syscall(SYS_memfd_create, "gtrace-rings", 3u /* MFD_CLOEXEC | MFD_ALLOW_SEALING */);
    if (fd < 0) {
        gt_cap_warn_once(&once, "cannot make shared memory for the events (%s): recording is off", strerror(errno));
        return false;
    }
    void *p = MAP_FAILED;
    if (ftruncate(fd, (off_t)l.total_bytes) == 0)
        p = mmap(NULL, l.total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        gt_cap_warn_once(&once, "cannot map %zu bytes of shared memory for the events (%s): recording is off",
                         l.total_bytes, strerror(errno));
        close(fd);
        return false;
    }
    gt_shm_header *h = p;
    describe(h, &l, gt_cap_t0_ns, utc_t0_ns, gt_cap_use_tsc, is_root, info, info_bytes);
    inherit_strings(h);

    /* The descriptor and who sends it: the launcher checks the pid. */
    int64_t pid = h->pid;
    char cbuf[CMSG_SPACE(sizeof(int))];
    memset(cbuf, 0, sizeof cbuf);
    struct iovec iov = {.iov_base = &pid, .iov_len = sizeof pid};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    ssize_t n;
    do {
        n = sendmsg(sock_fd, &msg, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    close(fd);
    if (n != (ssize_t)sizeof pid) {
        gt_cap_warn_once(&once, "cannot reach the gtrace launcher (%s): recording is off in process %d",
                         strerror(errno), (int)getpid());
        munmap(p, l.total_bytes);
        return false;
    }
    adopt(p, &l, sock_fd);
    return true;
}

void gt_cap_rings_before_fork(void)
{
    gt_shm_header *h = region;
    strings_at_fork = h ? atomic_load_explicit(&h->strings_used, memory_order_acquire) : 0;
}

void gt_cap_rings_after_fork(void)
{
    /* The parent's region stays mapped here (the parent and the launcher
     * use it) and is never written again by this process; its strings are
     * copied into the child's region when it is made. */
    parent_region = region;
    atomic_store_explicit(&own_gate, atomic_load_explicit(gt_cap_gate, memory_order_relaxed), memory_order_relaxed);
    gt_cap_gate = &own_gate;
    atomic_store_explicit(&fork_hooks_pending, 1, memory_order_relaxed);
    region = NULL;
    region_data = NULL;
    if (region_sock >= 0)
        close(region_sock);
    region_sock = -1;
    tls.ring = NULL;
    tls.state = 0;
    tls.busy = 0;
    tls.tid = 0;
    tls.head = tls.tail = tls.reserved_head = tls.off = 0;
    if (have_ring_key)
        pthread_setspecific(ring_key, NULL);
}
