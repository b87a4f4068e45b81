/* ring.h: the ring layer of libgtrace.so (ring.c): this process image's
 * region of per-thread rings in shared memory (shm.h), handed to the
 * launcher; reserving, writing and publishing records; counting what is
 * dropped. It knows no record's meaning and calls nothing above it.
 */
#ifndef GT_CAPTURE_RING_H
#define GT_CAPTURE_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gt_base.h"
#include "shm.h"

/* This thread's producer state: one block in the static TLS, so that the
 * inline path below reaches it without a call. */
typedef struct gt_cap_tls {
    gt_shm_ring *ring;              /* NULL: none yet, or none to be had */
    char *data;                     /* the ring's bytes */
    uint64_t cap;                   /* ring bytes: any multiple of 4 KiB */
    uint64_t quarter;               /* cap / 4: the largest record, and when to ask for a read */
    uint64_t off;                   /* where the next record goes: head modulo cap, or cap at the ring's
                                     * end (the slow path wraps it); moved on when a record is reserved */
    uint64_t head;                  /* bytes published */
    uint64_t reserved_head;         /* head once the reserved record is committed */
    uint64_t tail;                  /* the launcher's tail, as last read */
    int32_t tid;
    uint8_t state;                  /* 0: no ring yet; 1: has one; 2: exiting, or none to be had */
    uint8_t busy;                   /* a record is being written (re-entry from a signal handler) */
} gt_cap_tls;
extern __thread gt_cap_tls gt_cap_tls_state __attribute__((tls_model("initial-exec")));

/* 1 while events are recorded in this process (set by the session). */
extern _Atomic int gt_cap_active;

/* The capture window's gate word (shm.h): the region's, or this process
 * image's own until it has one (a fork child's starts as its parent's was). */
extern _Atomic uint64_t *gt_cap_gate;
static inline uint64_t gt_cap_gate_now(void)
{
    return atomic_load_explicit(gt_cap_gate, memory_order_relaxed);
}
/* Closes or opens this process's side of the gate (GT_GATE_PROCESS), or sets
 * the launcher's side before the launcher has seen the region. */
static inline void gt_cap_gate_set(uint64_t bit, bool closed)
{
    gt_gate_set(gt_cap_gate, bit, closed);
}

/* The paths of gt_cap_reserve and gt_cap_commit that are not the common one. */
void *gt_cap_reserve_slow(uint16_t type, size_t body_bytes, size_t text_bytes, gt_event_kind kind, bool count_full);
void gt_cap_commit_filling(void);

/* Reserves a record of `body_bytes` plus `text_bytes` of strings in this
 * thread's ring and returns where to write it (the header is filled in), or
 * NULL when the ring is full or capture is off: the event is then counted
 * as dropped under `kind`. Never blocks, never locks, makes no system call
 * unless the ring is full. */
static inline void *gt_cap_reserve(uint16_t type, size_t body_bytes, size_t text_bytes, gt_event_kind kind)
{
    gt_cap_tls *t = &gt_cap_tls_state;
    uint64_t need = (body_bytes + text_bytes + 7) & ~(uint64_t)7;
    uint64_t head = t->head;
    uint64_t off = t->off;
    /* The common case: a ring, room before its end and before the launcher's tail. */
    if (__builtin_expect(t->ring != NULL && !t->busy && text_bytes <= UINT16_MAX && need <= t->quarter
                             && off + need <= t->cap && (head - t->tail) + need <= t->cap
                             && atomic_load_explicit(&gt_cap_active, memory_order_relaxed),
                         1)) {
        t->busy = 1;
        rec_hdr *h = (rec_hdr *)(t->data + off);
        h->size_bytes = (uint32_t)need;
        h->type = type;
        h->text_bytes = (uint16_t)text_bytes;
        t->reserved_head = head + need;
        t->off = off + need; /* a reserved record is always committed */
        return h;
    }
    return gt_cap_reserve_slow(type, body_bytes, text_bytes, kind, true);
}

/* Publishes the record gt_cap_reserve returned. */
static inline void gt_cap_commit(void)
{
    gt_cap_tls *t = &gt_cap_tls_state;
    uint64_t head = t->reserved_head;
    /* a record was reserved, and it fits before the launcher's tail */
    GT_ASSERT(t->busy && head > t->head && head - t->tail <= t->cap);
    atomic_store_explicit(&t->ring->head, head, memory_order_release);
    t->head = head;
    t->busy = 0;
    if (__builtin_expect(head - t->tail > t->quarter, 0))
        gt_cap_commit_filling();
}

/* The same, for threads that may wait (CUPTI's buffer callbacks, never the
 * program's own calls): when the ring is full it wakes the launcher and waits
 * for room, up to `max_wait_ms`, before dropping. */
void *gt_cap_reserve_wait(uint16_t type, size_t body_bytes, size_t text_bytes, gt_event_kind kind, int max_wait_ms);
/* The same, counting nothing when it returns NULL: the caller accounts for it. */
void *gt_cap_reserve_quiet(uint16_t type, size_t body_bytes, size_t text_bytes);
/* Counts an event dropped for a reason other than a full ring. */
void gt_cap_drop(gt_event_kind kind);
/* The end of start/end range `range_id` found no room: the launcher drops
 * (and counts) the range. False when the set of such ids is full. */
bool gt_cap_note_lost_end(int64_t range_id);

/* Takes this thread's ring now if it has none yet; whether it has one (false:
 * capture is off, or every ring of the region is taken). For state a layer
 * keeps per thread beside its records: no ring, no state to keep. */
bool gt_cap_ring_take(void);

/* This thread's kernel thread id (cached). */
int32_t gt_cap_tid(void);

/* ---- the region ---------------------------------------------------------- */

/* The shape of a region: rings of `ring_bytes` (a multiple of 4 KiB), as many as
 * `region_bytes` holds (at least one, at most GT_SHM_MAX_RINGS). */
typedef struct gt_ring_layout {
    size_t ring_bytes;
    size_t n_rings;
    size_t data_offset;             /* where ring 0's data begins */
    size_t total_bytes;             /* the whole region */
} gt_ring_layout;
gt_ring_layout gt_ring_layout_of(size_t ring_bytes, size_t region_bytes);

/* Lays out a region at `mem` (zeroed, layout.total_bytes long) and makes it
 * this process image's: threads take their rings from it. `sock_fd` (-1:
 * none) is where wake-ups go. */
void gt_ring_region_init(void *mem, const gt_ring_layout *layout, int64_t t0_ns, int64_t utc_t0_ns,
                         bool stamp_tsc, bool is_root, const char *info, size_t info_bytes, int sock_fd);

/* Makes this process image's region (a memfd) and hands it to the launcher
 * through `sock_fd` (a connected socket); false when it cannot (said once). */
bool gt_cap_region_open(int sock_fd, const char *info, size_t info_bytes, int64_t utc_t0_ns, bool is_root,
                        size_t ring_bytes, size_t region_bytes);
/* Before fork, in the parent: notes how much of the region's string area is
 * used (what a child inherits). */
void gt_cap_rings_before_fork(void);
/* In a fork child: forget the parent's region and this thread's ring; the
 * child's region, when it is made, starts with the parent's registered
 * strings (their handles keep their ids). */
void gt_cap_rings_after_fork(void);
/* `fn` runs in a fork child (and its own children) when a thread first gets
 * a ring there, before that thread's first record: what a layer above must
 * write again in the child's own trace part (names given before the fork).
 * Register at most 4, once each, before forks happen. */
void gt_cap_after_fork_hook(void (*fn)(void));
/* Asks the launcher to read the rings now (a ring is a quarter full, a waiting
 * producer). Async-signal-safe; at most one wake-up in flight. */
void gt_cap_wake_launcher(void);
/* Asks the launcher for a flight recorder's dump (shm.h's dump_requests)
 * and wakes it. Async-signal-safe; nothing before the region exists. */
void gt_cap_request_dump(void);
/* A registered string kept in the region: its id (0: no room). */
uint64_t gt_cap_register_string(const char *s, size_t len);
/* The text of a registered string id, in this process's mapping (NULL: none,
 * or not an id of this region). */
const char *gt_cap_registered_text(uint64_t id);

#endif /* GT_CAPTURE_RING_H */
