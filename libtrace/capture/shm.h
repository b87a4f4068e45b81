/* shm.h: the shared-memory region through which a traced process hands its
 * records to the launcher; included by libgtrace.so (buffer.c, session.c)
 * and by the launcher (record/collect.c, record/drain.c).
 *
 * Each traced process image creates one region (a memfd), maps it shared,
 * and sends its descriptor to the launcher over the unix socket named in
 * GTRACE_SOCKET. The launcher maps it too and keeps the mapping after the
 * process dies, so whatever a thread committed before a SIGKILL, a crash or
 * _exit is still read. The region's size is fixed when it is made (the
 * process-wide cap, GTRACE_BUFFER_TOTAL_MB); pages are only resident once a
 * thread writes to them.
 *
 * Layout (every offset a multiple of 4096 where it matters):
 *   gt_shm_header                       magic, clocks, counts, the process description
 *   gt_shm_ring[n_rings]                one descriptor per ring
 *   ring data                           n_rings * ring_bytes, ring i at data_offset + i * ring_bytes
 *
 * A ring is single-producer (the thread that claimed it) single-consumer
 * (the launcher): `head` and `tail` count bytes ever written and read,
 * records are 8-byte aligned and never wrap (a REC_PAD fills the end). A
 * thread claims a FREE ring (compare-and-swap on `state`) or carves a new
 * one (`n_carved`); at its exit the ring becomes DEAD, and the launcher
 * makes it FREE again once it has read it to the end. A thread that finds
 * no ring counts its events in `orphan_dropped`. A ring carved but not yet
 * handed out is UNUSED (0, as the region is made), never FREE: a thread
 * that counted it in `n_carved` before its carver marked it CLAIMED must
 * not take it too (two producers on one ring overwrite each other).
 *
 * The launcher trusts nothing it reads here: sizes are checked against the
 * ring, strings are bounded, a ring that makes no sense is no longer read.
 */
#ifndef GT_CAPTURE_SHM_H
#define GT_CAPTURE_SHM_H

#include <stdatomic.h>
#include <stdint.h>

#include "gt_store.h"

#define GT_SHM_MAGIC 0x34474e5254475447ull /* "GTGTRNG4" */
#define GT_SHM_KINDS 16                     /* room for gt_event_kind */
#define GT_SHM_INFO_BYTES 65536             /* the process description */
#define GT_SHM_STRINGS_BYTES (256 * 1024)   /* registered NVTX strings */
#define GT_SHM_LOST_END_SLOTS 4096
#define GT_SHM_MAX_RINGS 4096

_Static_assert(GT_EV_N_KINDS <= GT_SHM_KINDS, "a drop count for every kind");

#define GT_GATE_LAUNCHER 1ull          /* closed by the launcher */
#define GT_GATE_PROCESS 2ull           /* closed by the process */
#define GT_GATE_OPENED 4ull            /* one opening, counted above the bits */
#define GT_GATE_OPEN(g) (((g) & (GT_GATE_LAUNCHER | GT_GATE_PROCESS)) == 0)

/* Sets (closed) or clears `bit` of a gate word; an opening is counted. */
static inline void gt_gate_set(_Atomic uint64_t *gate, uint64_t bit, int closed)
{
    uint64_t old = atomic_load_explicit(gate, memory_order_relaxed), want;
    do {
        want = closed ? old | bit : old & ~bit;
        if (want == old)
            return;
        if (GT_GATE_OPEN(want))
            want += GT_GATE_OPENED;
    } while (!atomic_compare_exchange_weak_explicit(gate, &old, want, memory_order_relaxed, memory_order_relaxed));
}

enum { GT_RING_UNUSED = 0, GT_RING_CLAIMED = 1, GT_RING_LIVE = 2, GT_RING_DEAD = 3, GT_RING_FREE = 4 };

typedef struct gt_shm_ring {
    _Atomic uint64_t head;              /* bytes published by the producer */
    char pad0[56];
    _Atomic uint64_t tail;              /* bytes consumed by the launcher */
    char pad1[56];
    _Atomic uint32_t state;             /* GT_RING_* */
    _Atomic uint32_t generation;        /* +1 each time a thread claims it */
    int32_t tid;                        /* the thread that holds it */
    char name[20];                      /* its name when it claimed it */
    _Atomic int64_t dropped[GT_SHM_KINDS]; /* events its threads dropped, ever */
    char pad2[32];
} gt_shm_ring;
_Static_assert(sizeof(gt_shm_ring) == 320, "gt_shm_ring layout");

typedef struct gt_shm_header {
    uint64_t magic;                     /* GT_SHM_MAGIC */
    uint64_t header_bytes;              /* sizeof(gt_shm_header) */
    uint64_t region_bytes;              /* the whole region */
    uint64_t ring_bytes;                /* one ring, a multiple of 4 KiB */
    uint64_t data_offset;               /* where ring 0's data begins */
    int64_t pid;
    int64_t t0_ns;                      /* CLOCK_MONOTONIC at the trace's zero */
    int64_t utc_t0_ns;                  /* CLOCK_REALTIME at the same moment */
    uint32_t n_rings;                   /* descriptors */
    uint32_t stamp_tsc;                 /* 1: stamps are TSC ticks; 0: CLOCK_MONOTONIC ns */
    uint32_t is_root;                   /* the process the launcher started (not a fork child) */
    uint32_t info_bytes;                /* bytes used in `info` */
    _Atomic uint32_t n_carved;          /* rings handed out so far */
    _Atomic uint32_t wake_pending;      /* a wake-up was sent and not yet seen */
    _Atomic uint64_t strings_used;      /* bytes used in `strings` */
    _Atomic int64_t orphan_dropped[GT_SHM_KINDS]; /* events of threads without a ring */
    /* The capture window (window.c): bit 0 set while the launcher holds it
     * closed (--delay, --duration, SIGUSR1), bit 1 while the process does
     * (--capture=steps:, nvtx:); above them, how often it opened. Events are
     * recorded while both bits are clear (GT_GATE_OPEN). */
    _Atomic uint64_t gate;
    /* Asked for a flight recorder's dump (--flight-recorder): +1 at each
     * SIGUSR2 the process gets (window.c); the launcher dumps when it moves. */
    _Atomic uint64_t dump_requests;
    _Atomic int64_t n_lost_ends;        /* ids in lost_ends */
    _Atomic int64_t lost_ends[GT_SHM_LOST_END_SLOTS]; /* start/end ranges whose end found no room */
    /* The process: its name, then "key\0value\0" pairs (GTRACE_RUN_CONFIG). */
    char info[GT_SHM_INFO_BYTES];
    /* Registered NVTX strings, NUL-terminated, referenced by offset + 1. A
     * fork child's region starts with its parent's, as used when it forked
     * (the handles it inherited keep their ids). Only ids up to
     * strings_used name a string: the launcher drops (and counts) the others. */
    char strings[GT_SHM_STRINGS_BYTES];
} gt_shm_header;

/* ---- records in the rings --------------------------------------------- */

enum {
    REC_PAD = 0,       /* filler up to the end of the ring */
    REC_NVTX = 1,      /* rec_nvtx: marks, push/pop ranges, names, start of start/end ranges */
    REC_RANGE_END = 2, /* rec_range_end: the end of a start/end range */
    REC_EVENT = 3,     /* rec_event: any gt_event (CUPTI, the NVTX memory API) */
    REC_CALLCHAIN = 4, /* rec_callchain: a new distinct stack, symbolized */
    REC_GPU = 5,       /* rec_gpu: a device's description */
    REC_PUSHPOP = 6,   /* rec_pushpop: a push/pop range without color, payload or registered string */
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
    uint64_t text_id;      /* a registered string (offset in `strings` + 1), or 0: the text follows */
    uint32_t color;        /* ARGB */
    uint8_t has_color;
    uint8_t payload_kind;  /* gt_payload_kind */
    uint8_t pad[2];
    int32_t os_tid;        /* the thread a NvtxThread event names; 0 otherwise */
    int32_t pad2;
} rec_nvtx;
_Static_assert(sizeof(rec_nvtx) == 80, "rec_nvtx layout");

/* The common push/pop range in 32 bytes plus its text (a REC_NVTX takes 80):
 * a ring holds more than twice as many, and the launcher has that much
 * longer to read it. */
typedef struct rec_pushpop {
    rec_hdr h;
    uint64_t start;        /* stamps (gt_cap_stamp) */
    uint64_t end;
    uint32_t category;
    uint32_t domain_id;    /* 0: the default domain */
} rec_pushpop;
_Static_assert(sizeof(rec_pushpop) == 32, "rec_pushpop layout");

typedef struct rec_range_end {
    rec_hdr h;
    int64_t range_id;
    uint64_t end;          /* stamp */
} rec_range_end;
_Static_assert(sizeof(rec_range_end) == 24, "rec_range_end layout");

/* A gt_event whose string ids are 0: its strings follow the body in this
 * order: nvtx text; api name; kernel demangled, short, mangled; heap name.
 * Times are ns since the zero, except a heap event's start_ns, which holds
 * a stamp (gt_cap_stamp) until the launcher converts it. */
typedef struct rec_event {
    rec_hdr h;
    gt_event ev;
} rec_event;

#define GT_CAP_MAX_FRAMES 64
/* Return addresses, innermost first, then per frame its symbol and module
 * as two strings ("" when unknown), symbolized by the process (dladdr). */
typedef struct rec_callchain {
    rec_hdr h;
    int64_t callchain_id;
    int64_t n_frames;
    uint64_t ips[];       /* (n_frames) */
} rec_callchain;

/* A gt_gpu_info whose strings follow the body: name, bus location, uuid, chip name. */
typedef struct rec_gpu {
    rec_hdr h;
    gt_gpu_info gpu;
} rec_gpu;

#endif /* GT_CAPTURE_SHM_H */
