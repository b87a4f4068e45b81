/* trace_copy.h: traces copied into one new trace, event by event, through
 * the store's reader and writer (private to libtrace/record). The assembly of
 * a run's parts (assemble.c) and `gtrace merge` (merge.c) both copy with it:
 * strings are interned again, callchain ids are renumbered per trace,
 * processes and GPUs are described once, and each trace's times, process
 * ids and GPU ids may be moved on the way (gt_copy_map). */
#ifndef GT_TRACE_COPY_H
#define GT_TRACE_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "gt_store.h"

/* How the times and process ids of one trace change on their way into the
 * copy, and where its run entries (GTRACE_RUN_CONFIG, global pid 0) go. */
typedef struct gt_copy_map {
    /* t' = round(offset_ns + t * scale); offset 0 and scale 1 keep every time */
    long double offset_ns;
    long double scale;
    const int64_t (*pids)[2]; /* (pid in the trace, pid in the copy) pairs; others are kept */
    size_t n_pids;
    const int32_t (*devices)[2]; /* (GPU id in the trace, in the copy) pairs; others are kept */
    size_t n_devices;
    /* NULL: the run entries of the first trace that has them stand, except
     * the run's own (command line, options, root pid, end clock), which the
     * caller writes; a process's entries come from the first trace that has
     * that process (an exec'd image does not repeat them). Else every trace
     * keeps all its entries, the run's under this prefix ("part.2."). */
    const char *run_prefix;
} gt_copy_map;

/* A map that changes nothing. */
#define GT_COPY_SAME ((gt_copy_map){.offset_ns = 0, .scale = 1})

typedef struct gt_copy gt_copy;

/* Creates the trace at `path` (which must not exist) and opens a batch. */
int gt_copy_new(gt_copy **out, const char *path);
/* The writer, for what the caller adds itself (session start, run entries). */
gt_writer *gt_copy_writer(gt_copy *c);
/* Describes a process, unless one with that pid is described already. */
int gt_copy_add_process(gt_copy *c, int64_t pid, const char *name);
/* Copies every description, entry and event of `t`. Its drop counts, one
 * per kind (NULL: those `t` holds), are counted for its first process. */
int gt_copy_trace(gt_copy *c, gt_trace *t, const gt_copy_map *map, const int64_t *dropped);
/* Counts drops for a process; the counts of one process are added up. */
int gt_copy_add_dropped(gt_copy *c, int64_t global_pid, const int64_t n[GT_EV_N_KINDS]);
/* Writes the drop counts, commits and closes the trace; always frees `c`. */
int gt_copy_finish(gt_copy *c);
/* Abandons the copy (the file stays, unfinished: the caller removes it). */
void gt_copy_free(gt_copy *c);

/* A global process or thread id with its pid bits moved as `map` says. */
int64_t gt_copy_global_id(const gt_copy_map *map, int64_t global_id);

#endif
