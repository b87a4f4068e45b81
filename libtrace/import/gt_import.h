/* gt_import.h: PyTorch's own files as gtrace traces.
 *
 * Two kinds of input, told apart by their content:
 *  - Kineto traces: the Chrome trace JSON that torch.profiler writes
 *    (tensorboard_trace_handler, one file per rank, plain or gzipped, and
 *    prof.export_chrome_trace()). CPU ops, annotations, Python functions,
 *    kernels, copies, memsets, CUDA calls with their correlation ids, and
 *    the "[memory]" allocation events become the tables a capture writes.
 *  - CUDA caching allocator snapshots: the pickle that
 *    torch.cuda.memory._snapshot() / _dump_snapshot() writes (segments,
 *    blocks with their frames, device_traces). Read by a pickle reader that
 *    accepts data opcodes only and never runs anything.
 * Several files become one trace on one clock: every input is one process
 * (a rank), times are nanoseconds from the earliest event of all inputs.
 *
 * The output is written beside its final name and renamed into place when
 * complete: a failed import leaves no trace and an existing file untouched.
 */
#ifndef GT_IMPORT_H
#define GT_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "gt_store.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gt_import_format {
    GT_IMPORT_KINETO = 1,   /* Chrome trace JSON from torch.profiler (Kineto) */
    GT_IMPORT_SNAPSHOT = 2, /* torch.cuda.memory snapshot pickle */
} gt_import_format;

/* What one input became. Counts are rows written, by what they were. */
typedef struct gt_import_stats {
    gt_import_format format;
    int64_t pid;          /* the process it is in the trace */
    int32_t rank;         /* distributedInfo.rank; -1 unknown */
    /* Kineto */
    int64_t n_cpu_ops;    /* "cpu_op": NVTX ranges in a "compute" category */
    int64_t n_annotations; /* "user_annotation": NVTX ranges */
    int64_t n_steps;      /* of those, "ProfilerStep#N", written as "step N" */
    int64_t n_comms;      /* of those, collectives ("gloo:", "nccl:"...): "communication" */
    int64_t n_python;     /* "python_function": NVTX ranges */
    int64_t n_kernels, n_memcpy, n_memset, n_runtime, n_driver, n_sync;
    int64_t n_memory;     /* "[memory]" events imported */
    int64_t n_memory_other; /* "[memory]" events of another device, not imported */
    int64_t n_marks;      /* other instant events: NVTX marks */
    int64_t n_skipped;    /* events of no table (profiler spans, flows, metadata...) */
    int64_t last_allocated, last_reserved; /* the last imported "[memory]" totals */
    /* snapshots */
    int64_t n_segments, n_blocks;  /* in the snapshot (its final state) */
    int64_t n_actions;    /* device_traces entries replayed */
    int64_t n_ooms;
    int64_t n_heap_events; /* GTRACE_MEMORY_EVENTS rows written */
} gt_import_stats;

enum {
    GT_IMPORT_OVERWRITE = 1u << 0, /* replace an existing output */
};

/* Which format `path` holds, from its first bytes (gzip is looked through). */
int gt_import_detect(const char *path, gt_import_format *out_format);

/* Imports `inputs` into one new trace at `output`. On success *out_stats (if
 * not NULL) holds one gt_import_stats per input, in order; free() it.
 * Errors name the file and what is wrong in it (gt_error_last()). */
int gt_import_files(gt_import_stats **out_stats, const char *output, const char *const *inputs,
                    size_t n_inputs, unsigned flags);

/* One process's snapshot as a part of a run (gtrace --pytorch): the pickle
 * at `pickle` into a new trace at `part` (not replaced when it exists), its
 * segments, blocks, actions and frames as process `pid`'s memory events and
 * callchains. An action at wall-clock time W (time_us, microseconds since
 * the epoch) is at W * 1000 - wall_zero_ns: `wall_zero_ns` is the wall-clock
 * time at the run's zero, which is also the part's session start. The part
 * is written beside its name and renamed into place only when complete, so
 * a reader of the folder never sees half of one. *out_stats (if not NULL)
 * says what it became. Errors name the pickle and what is wrong in it. */
int gt_import_snapshot_part(gt_import_stats *out_stats, const char *part, const char *pickle, int64_t pid,
                            int64_t wall_zero_ns);

#ifdef __cplusplus
}
#endif
#endif /* GT_IMPORT_H */
