/* buffer.c: one ring per thread that records events, drained by the writer.
 *
 * Each ring is single-producer (its thread) single-consumer (the writer
 * thread): `head` and `tail` count bytes ever written and read, records are
 * 8-byte aligned and never wrap (a REC_PAD fills the end instead). A full
 * ring drops the event and counts it; nothing here locks or waits. Rings
 * sit on a list the producers push onto with a CAS and only the writer
 * unlinks from (threads that exited, once drained).
 *
 * Rings are mapped with MAP_POPULATE: their pages are faulted in when the
 * thread records its first event, not one by one in the middle of the
 * program's hot loops.
 *
 * This file does not know what records mean: nvtx.c and cupti.c write them,
 * drain.c reads them.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "session.h"

struct gt_tbuf {
    _Atomic uint64_t head;           /* bytes published by the producer */
    char pad0[56];
    _Atomic uint64_t tail;           /* bytes consumed by the writer */
    char pad1[56];
    uint64_t reserved_head;          /* producer: head once the reserved record is committed */
    uint64_t mask;                   /* ring bytes - 1 */
    char *data;                      /* (mask + 1) bytes, mmap'ed */
    int32_t tid;
    _Atomic int dead;                /* its thread exited */
    bool announced;                  /* writer: the thread's name was written */
    _Atomic int64_t dropped[GT_EV_N_KINDS];
    int64_t taken[GT_EV_N_KINDS];    /* writer: drops already reported */
    struct gt_nvtx_stack *nvtx;
    char name[17];
    struct gt_tbuf *next;
};

int gt_cap_wake_pipe[2] = {-1, -1};
static _Atomic int wake_pending;

static _Atomic(gt_tbuf *) rings;
/* Drops with no ring to count them in (no memory for a ring, thread exiting). */
static _Atomic int64_t orphan_dropped[GT_EV_N_KINDS];
/* Drops of rings the writer already freed, not yet reported. */
static int64_t retired_dropped[GT_EV_N_KINDS];

static __thread gt_tbuf *tls_ring;
static __thread int tls_state;   /* 0: no ring yet; 1: has one; 2: thread exiting or no memory */
static __thread int tls_busy;    /* a record is being written (re-entry from a signal handler) */
static __thread int32_t tls_tid;

static pthread_key_t ring_key;
static bool have_ring_key;
static pthread_once_t ring_key_once = PTHREAD_ONCE_INIT;

int32_t gt_cap_tid(void)
{
    if (__builtin_expect(tls_tid == 0, 0))
        tls_tid = (int32_t)syscall(SYS_gettid);
    return tls_tid;
}

static void thread_exit(void *p)
{
    gt_tbuf *r = p;
    tls_ring = NULL;
    tls_state = 2;
    atomic_store_explicit(&r->dead, 1, memory_order_release);
}

static void make_key(void)
{
    have_ring_key = pthread_key_create(&ring_key, thread_exit) == 0;
}

static void ring_free(gt_tbuf *r)
{
    munmap(r->data, r->mask + 1);
    gt_nvtx_stack_free(r->nvtx);
    free(r);
}

static gt_tbuf *ring_create(void)
{
    if (!atomic_load_explicit(&gt_cap_active, memory_order_relaxed))
        return NULL;
    pthread_once(&ring_key_once, make_key);
    size_t bytes = gt_cap_opts.ring_bytes;
    gt_tbuf *r = calloc(1, sizeof *r);
    void *data = MAP_FAILED;
    if (r)
        data = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (!r || data == MAP_FAILED) {
        static _Atomic int once;
        gt_cap_warn_once(&once, "no memory for an event buffer (%zu bytes): events of some threads are dropped and counted", bytes);
        free(r);
        tls_state = 2;
        return NULL;
    }
    r->data = data;
    r->mask = bytes - 1;
    r->tid = gt_cap_tid();
    if (prctl(PR_GET_NAME, r->name, 0, 0, 0) != 0)
        r->name[0] = '\0';
    gt_tbuf *old = atomic_load_explicit(&rings, memory_order_relaxed);
    do {
        r->next = old;
    } while (!atomic_compare_exchange_weak_explicit(&rings, &old, r, memory_order_release,
                                                    memory_order_relaxed));
    if (have_ring_key)
        pthread_setspecific(ring_key, r);
    tls_ring = r;
    tls_state = 1;
    return r;
}

void gt_cap_wake_writer(void)
{
    if (gt_cap_wake_pipe[1] >= 0 && !atomic_exchange_explicit(&wake_pending, 1, memory_order_relaxed)) {
        int saved = errno;
        ssize_t n = write(gt_cap_wake_pipe[1], "w", 1);
        (void)n;
        errno = saved;
    }
}

static void *reserve(uint16_t type, size_t body_bytes, size_t text_bytes, gt_event_kind kind, bool count_full);

void *gt_cap_reserve(uint16_t type, size_t body_bytes, size_t text_bytes, gt_event_kind kind)
{
    return reserve(type, body_bytes, text_bytes, kind, true);
}

void *gt_cap_reserve_quiet(uint16_t type, size_t body_bytes, size_t text_bytes)
{
    return reserve(type, body_bytes, text_bytes, GT_EV_N_KINDS, false);
}

void *gt_cap_reserve_wait(uint16_t type, size_t body_bytes, size_t text_bytes, gt_event_kind kind, int max_wait_ms)
{
    for (int waited = 0;; waited++) {
        void *p = reserve(type, body_bytes, text_bytes, kind, waited >= max_wait_ms);
        if (p || waited >= max_wait_ms || !atomic_load_explicit(&gt_cap_active, memory_order_relaxed)
            || !tls_ring || tls_busy)
            return p;
        gt_cap_wake_writer();
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void *reserve(uint16_t type, size_t body_bytes, size_t text_bytes, gt_event_kind kind, bool count_full)
{
    gt_tbuf *r = tls_ring;
    if (__builtin_expect(r == NULL, 0)) {
        if (tls_state == 0)
            r = ring_create();
        if (!r) {
            if (atomic_load_explicit(&gt_cap_active, memory_order_relaxed) && kind < GT_EV_N_KINDS)
                atomic_fetch_add_explicit(&orphan_dropped[kind], 1, memory_order_relaxed);
            return NULL;
        }
    }
    if (tls_busy || !atomic_load_explicit(&gt_cap_active, memory_order_relaxed)) {
        if (kind < GT_EV_N_KINDS)
            atomic_fetch_add_explicit(&r->dropped[kind], 1, memory_order_relaxed);
        return NULL;
    }
    uint64_t need = (body_bytes + text_bytes + 7) & ~(uint64_t)7;
    uint64_t cap = r->mask + 1;
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    uint64_t contig = cap - (head & r->mask);
    uint64_t total = need <= contig ? need : contig + need;
    if (text_bytes > UINT16_MAX || need > cap / 4) {
        if (kind < GT_EV_N_KINDS)
            atomic_fetch_add_explicit(&r->dropped[kind], 1, memory_order_relaxed);
        return NULL;
    }
    if ((head - tail) + total > cap) {
        if (count_full && kind < GT_EV_N_KINDS)
            atomic_fetch_add_explicit(&r->dropped[kind], 1, memory_order_relaxed);
        gt_cap_wake_writer();
        return NULL;
    }
    tls_busy = 1;
    if (need > contig) {
        rec_hdr *pad = (rec_hdr *)(r->data + (head & r->mask));
        pad->size_bytes = (uint32_t)contig;
        pad->type = REC_PAD;
        pad->text_bytes = 0;
        head += contig;
    }
    rec_hdr *h = (rec_hdr *)(r->data + (head & r->mask));
    h->size_bytes = (uint32_t)need;
    h->type = type;
    h->text_bytes = (uint16_t)text_bytes;
    r->reserved_head = head + need;
    return h;
}

void gt_cap_commit(void)
{
    gt_tbuf *r = tls_ring;
    atomic_store_explicit(&r->head, r->reserved_head, memory_order_release);
    tls_busy = 0;
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    if (r->reserved_head - tail > (r->mask + 1) / 2)
        gt_cap_wake_writer();
}

void gt_cap_drop(gt_event_kind kind)
{
    gt_tbuf *r = tls_ring;
    if (r)
        atomic_fetch_add_explicit(&r->dropped[kind], 1, memory_order_relaxed);
    else if (atomic_load_explicit(&gt_cap_active, memory_order_relaxed))
        atomic_fetch_add_explicit(&orphan_dropped[kind], 1, memory_order_relaxed);
}

struct gt_nvtx_stack **gt_cap_nvtx_slot(void)
{
    gt_tbuf *r = tls_ring;
    if (!r && tls_state == 0)
        r = ring_create();
    return r ? &r->nvtx : NULL;
}

static void take_ring_drops(gt_tbuf *r, int64_t *out)
{
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        int64_t n = atomic_load_explicit(&r->dropped[k], memory_order_relaxed);
        out[k] += n - r->taken[k];
        r->taken[k] = n;
    }
}

int64_t gt_cap_drain_rings(void (*fn)(void *ctx, int32_t tid, const rec_hdr *rec), void *ctx,
                           void (*on_new_thread)(void *ctx, int32_t tid, const char *name))
{
    atomic_store_explicit(&wake_pending, 0, memory_order_relaxed);
    int64_t n_records = 0;
    gt_tbuf *prev = NULL;
    gt_tbuf *r = atomic_load_explicit(&rings, memory_order_acquire);
    while (r) {
        gt_tbuf *next = r->next;
        /* Read `dead` before `head`: once dead, the head read after it is final. */
        int dead = atomic_load_explicit(&r->dead, memory_order_acquire);
        uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
        uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
        while (tail < head) {
            const rec_hdr *rec = (const rec_hdr *)(r->data + (tail & r->mask));
            if (rec->size_bytes == 0 || rec->size_bytes > r->mask + 1)
                break; /* cannot happen unless memory was overwritten: stop reading this ring */
            if (rec->type != REC_PAD) {
                fn(ctx, r->tid, rec);
                n_records++;
            }
            tail += rec->size_bytes;
        }
        atomic_store_explicit(&r->tail, tail, memory_order_release);
        /* After its first records, which may name it (nvtxNameOsThread). */
        if (!r->announced) {
            r->announced = true;
            if (on_new_thread)
                on_new_thread(ctx, r->tid, r->name);
        }
        /* Unlink a drained ring of an exited thread; the list head stays (producers CAS it). */
        if (dead && tail >= head && prev != NULL) {
            take_ring_drops(r, retired_dropped);
            prev->next = next;
            ring_free(r);
        } else {
            prev = r;
        }
        r = next;
    }
    return n_records;
}

void gt_cap_take_dropped(int64_t *out)
{
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        out[k] += retired_dropped[k] + atomic_exchange_explicit(&orphan_dropped[k], 0, memory_order_relaxed);
        retired_dropped[k] = 0;
    }
    for (gt_tbuf *r = atomic_load_explicit(&rings, memory_order_acquire); r; r = r->next)
        take_ring_drops(r, out);
}

void gt_cap_rings_after_fork(void)
{
    /* The child has one thread, this one: every other ring's thread is gone,
     * and this thread's ring holds the parent's events (the parent drains them). */
    gt_tbuf *r = atomic_load_explicit(&rings, memory_order_relaxed);
    while (r) {
        gt_tbuf *next = r->next;
        ring_free(r);
        r = next;
    }
    atomic_store_explicit(&rings, NULL, memory_order_relaxed);
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        atomic_store_explicit(&orphan_dropped[k], 0, memory_order_relaxed);
        retired_dropped[k] = 0;
    }
    tls_ring = NULL;
    tls_state = 0;
    tls_busy = 0;
    tls_tid = 0;
    if (have_ring_key)
        pthread_setspecific(ring_key, NULL);
    atomic_store_explicit(&wake_pending, 0, memory_order_relaxed);
}

bool gt_cap_have_rings(void)
{
    return atomic_load_explicit(&rings, memory_order_acquire) != NULL;
}
