/* session.h: the capture session of one process image (session.c): its
 * options, its start, its connection to the launcher, fork. */
#ifndef GT_CAPTURE_SESSION_H
#define GT_CAPTURE_SESSION_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* A thread's ring by default: with its NVTX stack, under 1 MiB a thread. */
#define GT_CAP_DEFAULT_RING_KB 1008

typedef struct gt_cap_options {
    int flush_ms;           /* GTRACE_FLUSH_MS (recorded; the launcher reads at that interval) */
    int n_stack_frames;     /* GTRACE_STACKS: 0 = no stacks */
    int cuda;               /* GTRACE_CUDA: 0 off, 1 on, 2 auto */
    size_t ring_bytes;      /* GTRACE_BUFFER_KB * 1024, rounded up to whole pages */
    size_t region_bytes;    /* GTRACE_BUFFER_TOTAL_MB * 2^20: every ring of the process */
} gt_cap_options;
extern gt_cap_options gt_cap_opts;

/* The pid the session belongs to (changes in a fork child). */
extern _Atomic int gt_cap_pid;

/* Starts the session once (the constructor, or the first NVTX call when the
 * library was only dlopened as an NVTX injection). */
void gt_cap_init(void);

/* Allocates a fresh callchain id (unique in the process). */
int64_t gt_cap_next_callchain_id(void);

#endif
