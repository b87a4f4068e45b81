/* capture.h: what the parts of libgtrace.so share (private; nothing outside
 * libtrace/capture includes it).
 *
 * Data flow: a producer (an NVTX callback, a CUPTI buffer callback) writes a
 * record into its thread's ring (gt_cap_reserve / gt_cap_commit). The rings
 * are in a region of shared memory (shm.h) that the gtrace launcher maps:
 * it reads them, turns records into trace rows and writes the trace. This
 * process holds no SQLite and no thread of its own; producers never lock,
 * never make a system call on the way and never wait for the launcher.
 */
#ifndef GT_CAPTURE_H
#define GT_CAPTURE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "shm.h"

/* What the library exports (everything else is hidden). */
#define GT_EXPORT __attribute__((visibility("default")))

/* ---- the clock (clock.c) ---------------------------------------------- */

/* CLOCK_MONOTONIC at the trace's zero (the launcher's start, shared by every
 * traced process through GTRACE_T0_NS; else this process's start). */
extern int64_t gt_cap_t0_ns;
/* Stamps are raw TSC ticks (invariant TSC on x86-64), else CLOCK_MONOTONIC ns. */
extern bool gt_cap_use_tsc;

#if defined(__x86_64__)
#include <x86intrin.h>
static inline uint64_t gt_cap_stamp_tsc(void) { return __rdtsc(); }
#else
static inline uint64_t gt_cap_stamp_tsc(void) { return 0; }
#endif

/* A producer's timestamp: cheap; gt_cap_stamp_to_ns turns it into trace time. */
static inline uint64_t gt_cap_stamp(void)
{
    if (__builtin_expect(gt_cap_use_tsc, 1))
        return gt_cap_stamp_tsc();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Nanoseconds since the trace's zero, now (any thread). */
static inline int64_t gt_cap_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - gt_cap_t0_ns;
}

/* Decides how producers stamp (at session start, before any event). */
void gt_cap_clock_init(void);

/* ---- per-thread rings ------------------------------------------------- */

/* This thread's producer state (buffer.c): one block in the static TLS, so
 * that the inline path below reaches it without a call. */
typedef struct gt_cap_tls {
    gt_shm_ring *ring;              /* NULL: none yet, or none to be had */
    char *data;                     /* the ring's bytes */
    uint64_t mask;                  /* ring bytes - 1 */
    uint64_t head;                  /* bytes published */
    uint64_t reserved_head;         /* head once the reserved record is committed */
    uint64_t tail;                  /* the launcher's tail, as last read */
    struct gt_nvtx_stack *nvtx;
    int32_t tid;
    uint8_t state;                  /* 0: no ring yet; 1: has one; 2: exiting, or none to be had */
    uint8_t busy;                   /* a record is being written (re-entry from a signal handler) */
} gt_cap_tls;
extern __thread gt_cap_tls gt_cap_tls_state __attribute__((tls_model("initial-exec")));

/* 1 while events are recorded in this process. */
extern _Atomic int gt_cap_active;

/* The paths of gt_cap_reserve and gt_cap_commit that are not the common one. */
void *gt_cap_reserve_slow(uint16_t type, size_t body_bytes, size_t text_bytes, gt_event_kind kind, bool count_full);
void gt_cap_commit_half_full(void);

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
    uint64_t off = head & t->mask;
    /* The common case: a ring, room before its end and before the launcher's tail. */
    if (__builtin_expect(t->ring != NULL && !t->busy && text_bytes <= UINT16_MAX && need <= (t->mask + 1) / 4
                             && off + need <= t->mask + 1 && (head - t->tail) + need <= t->mask + 1
                             && atomic_load_explicit(&gt_cap_active, memory_order_relaxed),
                         1)) {
        t->busy = 1;
        rec_hdr *h = (rec_hdr *)(t->data + off);
        h->size_bytes = (uint32_t)need;
        h->type = type;
        h->text_bytes = (uint16_t)text_bytes;
        t->reserved_head = head + need;
        return h;
    }
    return gt_cap_reserve_slow(type, body_bytes, text_bytes, kind, true);
}

/* Publishes the record gt_cap_reserve returned. */
static inline void gt_cap_commit(void)
{
    gt_cap_tls *t = &gt_cap_tls_state;
    uint64_t head = t->reserved_head;
    atomic_store_explicit(&t->ring->head, head, memory_order_release);
    t->head = head;
    t->busy = 0;
    if (__builtin_expect(head - t->tail > (t->mask + 1) / 2, 0))
        gt_cap_commit_half_full();
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

/* This thread's kernel thread id (cached). */
int32_t gt_cap_tid(void);

/* Where this thread's NVTX push/pop stack hangs (nvtx.c allocates it; the
 * thread's exit frees it with gt_nvtx_stack_free). NULL when capture is off. */
struct gt_nvtx_stack;
struct gt_nvtx_stack **gt_cap_nvtx_slot_slow(void);
static inline struct gt_nvtx_stack **gt_cap_nvtx_slot(void)
{
    if (__builtin_expect(gt_cap_tls_state.ring != NULL, 1))
        return &gt_cap_tls_state.nvtx;
    return gt_cap_nvtx_slot_slow();
}

/* ---- the region (buffer.c) -------------------------------------------- */

/* Makes this process image's region and hands it to the launcher through
 * `sock_fd` (a connected socket); false when it cannot (said once). */
bool gt_cap_region_open(int sock_fd, const char *info, size_t info_bytes, int64_t utc_t0_ns, bool is_root);
/* In a fork child: forget the parent's region and this thread's ring. */
void gt_cap_rings_after_fork(void);
/* Asks the launcher to read the rings now (a ring is half full, a waiting
 * producer). Async-signal-safe; at most one wake-up in flight. */
void gt_cap_wake_launcher(void);
/* A registered string kept in the region: its id (0: no room). */
uint64_t gt_cap_register_string(const char *s, size_t len);
/* The text of a registered string id, in this process's mapping (NULL: none). */
const char *gt_cap_registered_text(uint64_t id);

/* ---- session (session.c) --------------------------------------------- */

typedef struct gt_cap_options {
    int flush_ms;           /* GTRACE_FLUSH_MS (recorded; the launcher reads at that interval) */
    int n_stack_frames;     /* GTRACE_STACKS: 0 = no stacks */
    int cuda;               /* GTRACE_CUDA: 0 off, 1 on, 2 auto */
    size_t ring_bytes;      /* GTRACE_BUFFER_KB * 1024, a power of two */
    size_t region_bytes;    /* GTRACE_BUFFER_TOTAL_MB * 2^20: every ring of the process */
} gt_cap_options;
extern gt_cap_options gt_cap_opts;

/* The pid the session belongs to (changes in a fork child). */
extern _Atomic int gt_cap_pid;

/* Says `what` once on stderr (prefixed "gtrace: "), never more than once per key. */
void gt_cap_warn_once(_Atomic int *once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Starts the session once (constructor, or the first NVTX call when the
 * library was only dlopened as an NVTX injection). */
void gt_cap_init(void);

/* Allocates a fresh callchain id (unique in the process). */
int64_t gt_cap_next_callchain_id(void);

/* ---- NVTX (nvtx.c, nvtx_mem.c) ----------------------------------------- */
void gt_nvtx_stack_free(struct gt_nvtx_stack *s);
/* The text of a registered string's handle (nvtxStringHandle_t). */
const char *gt_nvtx_registered_text(const void *handle);
/* The id of an nvtxDomainHandle_t (0: the default domain). */
int64_t gt_nvtx_domain_id(const void *handle);

/* Converts a wide string to UTF-8 in `out` (truncating); returns the bytes written without NUL. */
size_t gt_cap_wide_to_utf8(const wchar_t *w, char *out, size_t out_bytes);

/* ---- CUDA through CUPTI (cupti.c; absent without CUPTI headers) -------- */
#ifdef HAVE_CUPTI
/* Loads libcupti and subscribes, unless --cuda=off. Says why once if it cannot. */
void gt_cupti_start(void);
/* Flushes CUPTI's activity buffers into the rings (before the final drain). */
void gt_cupti_flush(void);
/* Whether CUPTI records this process (for the --cuda=on message at exit). */
bool gt_cupti_started(void);
#endif

/* Records the current stack once per distinct stack; returns its id (0: none).
 * `skip`: frames of the caller's own machinery to leave out. */
int64_t gt_cap_stack_id(int skip);
/* Loads what backtrace() needs, early (stacks.c). */
void gt_cap_stacks_init(void);

#endif /* GT_CAPTURE_H */
