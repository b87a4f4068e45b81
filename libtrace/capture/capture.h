/* capture.h: what the parts of libgtrace.so share (private; nothing outside
 * libtrace/capture includes it).
 *
 * Data flow: a producer (an NVTX callback, a CUPTI buffer callback) writes a
 * record into its thread's ring (gt_cap_reserve / gt_cap_commit); the one
 * writer thread (session.c) drains every ring, turns records into gt_event
 * rows (drain.c) and commits them to the trace through gt_writer_*.
 * Producers never lock, never call SQLite and never wait for the writer.
 */
#ifndef GT_CAPTURE_H
#define GT_CAPTURE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gt_store.h"

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
/* Writer thread: a (TSC, CLOCK_MONOTONIC) pair, taken before each drain. */
void gt_cap_clock_sample(void);
/* Writer thread: a stamp in trace time (ns since the zero). */
int64_t gt_cap_stamp_to_ns(uint64_t stamp);

/* ---- records in the per-thread rings --------------------------------- */

enum {
    REC_PAD = 0,       /* filler up to the end of the ring */
    REC_NVTX = 1,      /* rec_nvtx: marks, push/pop ranges, names, start of start/end ranges */
    REC_RANGE_END = 2, /* rec_range_end: the end of a start/end range */
    REC_EVENT = 3,     /* rec_event: any gt_event (CUPTI, the NVTX memory API) */
    REC_CALLCHAIN = 4, /* rec_callchain: raw return addresses of a new distinct stack */
    REC_GPU = 5,       /* rec_gpu: a device's description */
};

typedef struct rec_hdr {
    uint32_t size_bytes; /* the whole record, a multiple of 8 */
    uint16_t type;       /* REC_* */
    uint16_t text_bytes; /* NUL-terminated strings after the body, back to back */
} rec_hdr;
_Static_assert(sizeof(rec_hdr) == 8, "rec_hdr is 8 bytes");

typedef struct rec_nvtx {
    rec_hdr h;
    int32_t event_type;    /* GT_NVTX_* */
    uint32_t category;
    uint64_t start;        /* stamps (gt_cap_stamp) */
    uint64_t end;          /* 0: instant, or a start/end range still open */
    int64_t range_id;      /* start/end ranges; 0 otherwise */
    int64_t domain_id;     /* 0: the default domain */
    uint64_t payload;      /* bits of the payload union */
    const char *text_ref;  /* a registered string (never freed), or NULL: the text follows */
    uint32_t color;        /* ARGB */
    uint8_t has_color;
    uint8_t payload_kind;  /* gt_payload_kind */
    uint8_t pad[2];
    int32_t os_tid;        /* the thread a NvtxThread event names; 0 otherwise */
    int32_t pad2;
} rec_nvtx;
_Static_assert(sizeof(rec_nvtx) == 80, "rec_nvtx layout");

typedef struct rec_range_end {
    rec_hdr h;
    int64_t range_id;
    uint64_t end;          /* stamp */
} rec_range_end;
_Static_assert(sizeof(rec_range_end) == 24, "rec_range_end layout");

/* A gt_event whose string ids are 0: its strings follow the body in this
 * order: nvtx text; api name; kernel demangled, short, mangled; heap name.
 * Times are ns since the zero, except a heap event's start_ns, which holds
 * a stamp (gt_cap_stamp) until the writer converts it. */
typedef struct rec_event {
    rec_hdr h;
    gt_event ev;
} rec_event;

#define GT_CAP_MAX_FRAMES 64
typedef struct rec_callchain {
    rec_hdr h;
    int64_t callchain_id;
    int64_t n_frames;
    uint64_t ips[];       /* (n_frames), innermost first */
} rec_callchain;

/* A gt_gpu_info whose strings follow the body: name, bus location, uuid, chip name. */
typedef struct rec_gpu {
    rec_hdr h;
    gt_gpu_info gpu;
} rec_gpu;

/* ---- per-thread rings ------------------------------------------------- */

/* Reserves a record of `body_bytes` plus `text_bytes` of strings in this
 * thread's ring and returns where to write it (the header is filled in), or
 * NULL when the ring is full or capture is off: the event is then counted
 * as dropped under `kind`. Never blocks, never locks. */
void *gt_cap_reserve(uint16_t type, size_t body_bytes, size_t text_bytes, gt_event_kind kind);
/* The same, for threads that may wait (CUPTI's buffer callbacks, never the
 * program's own calls): when the ring is full it wakes the writer and waits
 * for room, up to `max_wait_ms`, before dropping. */
void *gt_cap_reserve_wait(uint16_t type, size_t body_bytes, size_t text_bytes, gt_event_kind kind, int max_wait_ms);
/* The same, counting nothing when it returns NULL: the caller accounts for it. */
void *gt_cap_reserve_quiet(uint16_t type, size_t body_bytes, size_t text_bytes);
/* Publishes the record gt_cap_reserve returned. */
void gt_cap_commit(void);
/* Counts an event dropped for a reason other than a full ring. */
void gt_cap_drop(gt_event_kind kind);

/* This thread's kernel thread id (cached). */
int32_t gt_cap_tid(void);

/* Where this thread's NVTX push/pop stack hangs (nvtx.c allocates it; the
 * ring frees it with gt_nvtx_stack_free). NULL when capture is off. */
struct gt_nvtx_stack;
struct gt_nvtx_stack **gt_cap_nvtx_slot(void);

/* ---- the rings, seen from the writer thread (buffer.c) ---------------- */

typedef struct gt_tbuf gt_tbuf;
/* Calls `fn` on every record waiting in every ring, oldest first per ring,
 * and frees the rings of threads that have exited and been drained. Only
 * the writer thread calls it. Returns the number of records. */
int64_t gt_cap_drain_rings(void (*fn)(void *ctx, int32_t tid, const rec_hdr *rec), void *ctx,
                           void (*on_new_thread)(void *ctx, int32_t tid, const char *name));
/* Adds every ring's drop counts (since the last call) to `out` (GT_EV_N_KINDS). */
void gt_cap_take_dropped(int64_t *out);
/* In a fork child: forget the parent's rings (their threads are gone). */
void gt_cap_rings_after_fork(void);
/* Wakes the writer early (rings filling up, stop). Async-signal-safe. */
void gt_cap_wake_writer(void);
/* The pipe the writer thread polls; -1 before the session starts. */
extern int gt_cap_wake_pipe[2];

/* ---- session (session.c) --------------------------------------------- */

typedef struct gt_cap_options {
    int flush_ms;           /* GTRACE_FLUSH_MS */
    int n_stack_frames;     /* GTRACE_STACKS: 0 = no stacks */
    int cuda;               /* GTRACE_CUDA: 0 off, 1 on, 2 auto */
    size_t ring_bytes;      /* GTRACE_BUFFER_KB * 1024, a power of two */
} gt_cap_options;
extern gt_cap_options gt_cap_opts;

/* 1 while events are recorded in this process. */
extern _Atomic int gt_cap_active;
/* The pid the session belongs to (changes in a fork child). */
extern _Atomic int gt_cap_pid;

/* Says `what` once on stderr (prefixed "gtrace: "), never more than once per key. */
void gt_cap_warn_once(_Atomic int *once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Starts the session once (constructor, or the first NVTX call when the
 * library was only dlopened as an NVTX injection). */
void gt_cap_init(void);

/* Writer thread, at the end of a session that lost events its part file
 * does not count: says so on stderr and records them in the launcher's loss
 * table (losses.c). `part`: the part's file name; `n_lost`: GT_EV_N_KINDS
 * counts; `reason`: why writing stopped, "" if it did not. */
void gt_cap_report_losses(const char *part, const int64_t *n_lost, const char *reason);

/* Allocates a fresh callchain id for the writer (unique in the process). */
int64_t gt_cap_next_callchain_id(void);

/* ---- NVTX (nvtx.c, nvtx_mem.c) ----------------------------------------- */
void gt_nvtx_stack_free(struct gt_nvtx_stack *s);
/* Writer thread: calls `fn` with each start/end range whose end found its
 * ring full (the range is dropped), and forgets them. */
void gt_nvtx_take_lost_ends(void (*fn)(void *ctx, int64_t range_id), void *ctx);
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
