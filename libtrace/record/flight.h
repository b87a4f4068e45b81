/* flight.h: the flight recorder (--flight-recorder, flight.c): the
 * launcher keeps the last N seconds (or bytes) of what it read from the
 * rings and writes a trace of them on demand. Private to libtrace/record. */
#ifndef GT_RECORD_FLIGHT_H
#define GT_RECORD_FLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gt_record.h"
#include "shm.h"

typedef struct gt_flight gt_flight;
typedef struct gt_flight_proc gt_flight_proc;

typedef struct gt_flight_options {
    int64_t keep_ns;        /* the last this long (0: by size) */
    int64_t keep_bytes;     /* or the last this many bytes of records */
    const char *spec;       /* as given ("30s", "256M"), for the trace's run entries */
    const char *output;     /* the first dump; the next are numbered (gt_flight_dump_path) */
    bool force;             /* an existing regular file there may be replaced */
    const char *parts_dir;  /* where dumps are put together */
    int64_t t0_ns;          /* the run's monotonic zero */
    gt_record_run_info run; /* its strings are the caller's, alive until gt_flight_free */
} gt_flight_options;

int gt_flight_new(gt_flight **out, const gt_flight_options *o);
void gt_flight_free(gt_flight *f);

/* A process image whose rings are read (`h` its region, `n_rings` as
 * checked when it arrived, read until gt_flight_proc_end). Owned by `f`;
 * NULL when out of memory. */
gt_flight_proc *gt_flight_proc_new(gt_flight *f, int64_t pid, const gt_shm_header *h, uint32_t n_rings);
/* One read of its rings (segments, drain.h), taken at monotonic `read_ns`;
 * takes `data` (malloc'd). What falls out of the window on the way is
 * folded into what a dump writes first (names, stacks, the memory live set,
 * ranges still open). True when it holds the process's first
 * out-of-memory mark (analyze/oom.c's: a mark of a category named "oom",
 * or one saying "out of memory"). */
bool gt_flight_add(gt_flight *f, gt_flight_proc *p, char *data, size_t n_bytes, int64_t read_ns);
/* The process image ended: its region's header is copied (strings,
 * description, drop counts) before it is unmapped. */
void gt_flight_proc_end(gt_flight *f, gt_flight_proc *p);

/* Writes what the recorder holds as a trace: the first dump at the output,
 * dump N at gt_flight_dump_path's name. `reason` ("exit", "SIGUSR2",
 * "out of memory", "signal 6") goes into the trace's run entries. Says
 * where it wrote (or why not) through the message hook; 0 or a gt_status.
 * Called on one thread at a time (the collector's writer, then the end). */
int gt_flight_dump(gt_flight *f, const char *reason);
/* The dump at the end, once every traced process has ended: the CUDA memory
 * snapshots they left in the parts folder (snapshots.c) go into it as into
 * a normal run's trace; what became of each is *out_snapshots's (NULL: none
 * looked for), for gt_record_keep_snapshots. */
int gt_flight_dump_last(gt_flight *f, const char *reason, gt_record_snapshots **out_snapshots);
/* The last trace written (empty: none), and how many. */
const char *gt_flight_last_output(const gt_flight *f);
int gt_flight_n_written(const gt_flight *f);
/* The name of dump `n` (1: `output`; else ".N" before a ".sqlite" at its
 * end, or after it). */
void gt_flight_dump_path(char *out, size_t out_bytes, const char *output, int n);

#endif
