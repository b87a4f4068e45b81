/* record_int.h: what the files of the recording engine share (private to
 * libtrace/record; gt_record.h is its public face). */
#ifndef GT_RECORD_INT_H
#define GT_RECORD_INT_H

#include "gt_record.h"

/* Says `fmt` as it is, through the message hook (say.c). */
void gt_record_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Says "gtrace: " and the message, and a new line. */
void gt_record_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The collector (collect.c): the thread that reads the traced processes'
 * rings and writes their parts into `parts_dir`. Made (its socket listening)
 * before the program starts; started once it is forked; finished once every
 * traced process has ended (it reads every region one last time). */
typedef struct gt_collector gt_collector;
int gt_collector_new(gt_collector **out, const char *parts_dir, int flush_ms);
/* The socket's name for GTRACE_SOCKET ("@..." : an abstract name). */
const char *gt_collector_socket(const gt_collector *c);
int gt_collector_start(gt_collector *c);
void gt_collector_finish(gt_collector *c);
void gt_collector_free(gt_collector *c);

/* The launcher's side of the capture window (the region's gate, shm.h):
 * closed at monotonic times before `open_ns` and from `close_ns` (0:
 * never), or always (`closed`: --capture=signal), each SIGUSR1 the other
 * way round. Set before gt_collector_start; the reader applies it to every
 * region as it arrives and at every read. */
typedef struct gt_launcher_window {
    bool on;
    bool closed;
    int64_t open_ns, close_ns;
} gt_launcher_window;
/* Returns the file that holds the launcher's side for processes that start
 * (GTRACE_CAPTURE_GATE: "1" closed, "0" open), in the parts folder. */
const char *gt_collector_set_window(gt_collector *c, const gt_launcher_window *w);
/* SIGUSR1s got (run.c's handler counts them). */
extern volatile sig_atomic_t gt_record_n_toggles;

/* --flight-recorder (flight.h): the writer keeps what it reads in `f`
 * instead of writing parts; a dump is written when a traced process asks
 * (SIGUSR2 to it) or gtrace gets SIGUSR2 (counted here by run.c's handler),
 * and at a process's first out-of-memory mark. Set before
 * gt_collector_start; the last dump is the caller's, once it finished. */
typedef struct gt_flight gt_flight;
void gt_collector_set_flight(gt_collector *c, gt_flight *f);
extern volatile sig_atomic_t gt_record_n_dump_signals;

/* Creates the loss table in a fresh parts directory (losses.h). */
int gt_record_make_losses(const char *parts_dir);
/* Removes every file gtrace puts in a parts directory (not the directory). */
void gt_record_remove_parts(const char *parts_dir);

/* The CUDA memory snapshots in a parts folder made parts of the trace
 * (snapshots.c); t0_ns: the run's monotonic zero, utc_t0_ns: the wall clock
 * then. NULL only when out of memory. */
gt_record_snapshots *gt_record_import_snapshots(const char *parts, int64_t t0_ns, int64_t utc_t0_ns);
/* The same, the parts written into the folder `into` (a flight recorder's
 * dump) and the pickles left in `parts` until gt_record_snapshots_taken
 * says whether that trace was written (then they go; else each is said not
 * to be in the trace, for gt_record_keep_snapshots). */
gt_record_snapshots *gt_record_import_snapshots_into(const char *parts, const char *into, int64_t t0_ns,
                                                     int64_t utc_t0_ns);
void gt_record_snapshots_taken(const char *parts, gt_record_snapshots *res, bool written);
/* Says what became of each, and moves those not in the trace beside it as
 * OUTPUT.NAME. True when one could not be read. */
bool gt_record_keep_snapshots(const char *parts, const char *output, const gt_record_snapshots *res);
void gt_record_snapshots_free(gt_record_snapshots *s);

#endif
