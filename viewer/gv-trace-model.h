/* gv-trace-model.h: one trace as the viewer sees it: tracks of lanes of
 * sorted items, the memory timeline, and the analysis report.
 *
 * Loading runs on a thread of its own at a lower priority (the result comes
 * back through a GTask): the reader's iterators over every kind are merged by
 * start time and published in chunks, so the first rows are drawn while the
 * rest loads ("updated" fires on the main thread after each chunk); each
 * chunk also brings the lanes' level-of-detail pyramids up to date.
 * Then the trace is analysed once (gt_analysis_load): the report, the idle
 * gaps with their causes and the compute ops (put into lanes here), and the
 * memory series (stacked here) all come from it, and "analysed" fires. Readers of the tracks hold the model's lock
 * (gv_trace_model_lock) while they draw or search. This file knows nothing
 * about widgets or cairo. */
#ifndef GV_TRACE_MODEL_H
#define GV_TRACE_MODEL_H

#include <gio/gio.h>

#include "gt_analyze.h"
#include "gt_vocab.h"
#include "gv-lane.h"
#include "gv-mem-stack.h"

G_BEGIN_DECLS

#define GV_TYPE_TRACE_MODEL (gv_trace_model_get_type())
G_DECLARE_FINAL_TYPE(GvTraceModel, gv_trace_model, GV, TRACE_MODEL, GObject)

#define GV_ERROR (gv_error_quark())
GQuark gv_error_quark(void);

typedef enum GvTrackKind { GV_TRACK_DEVICE, GV_TRACK_THREAD } GvTrackKind;

/* A group of lanes with one title: a device (lane 0 its idle gaps, then one
 * lane per stream) or a host thread (its NVTX depths, then its API calls). */
typedef struct GvTrack {
    GvTrackKind kind;
    int64_t key;       /* device id (-1: CPU ops) or global thread id */
    char *title;
    GvLane **lanes; size_t n_lanes, cap_lanes;
} GvTrack;

GvTraceModel *gv_trace_model_new(void);

/* Opens `path` and loads it in a thread; `callback` gets the result when the
 * rows and the analysis are there (or when it failed). */
void gv_trace_model_load_async(GvTraceModel *self, const char *path, GCancellable *cancellable,
                               GAsyncReadyCallback callback, gpointer user_data);
gboolean gv_trace_model_load_finish(GvTraceModel *self, GAsyncResult *result, GError **error);
/* Loads in this thread, running the default main context until done (tests, screenshots). */
gboolean gv_trace_model_load(GvTraceModel *self, const char *path, GError **error);

/* The file given to load, "" before; "notify::path" says when it is set. */
const char *gv_trace_model_path(GvTraceModel *self);
gboolean gv_trace_model_is_loaded(GvTraceModel *self);   /* all rows are in */
gboolean gv_trace_model_is_analysed(GvTraceModel *self); /* report and memory are in */
double gv_trace_model_progress(GvTraceModel *self);      /* 0..1 of the events */
/* The file opens without its integrity check, which runs beside the loading;
 * when it fails later, the rows read so far stay and this says why (the load
 * fails with the same message). NULL: no problem (yet); the caller frees. */
char *gv_trace_model_get_problem(GvTraceModel *self);
int64_t gv_trace_model_n_items(GvTraceModel *self);      /* published so far */
/* What is loaded spans [start, end). */
void gv_trace_model_span(GvTraceModel *self, int64_t *out_start_ns, int64_t *out_end_ns);

/* Tracks, lanes and names: read under the lock. */
void gv_trace_model_lock(GvTraceModel *self);
void gv_trace_model_unlock(GvTraceModel *self);
size_t gv_trace_model_n_tracks(GvTraceModel *self);
/* Changes whenever a track or a lane is added (unique across models): what
 * drawing keys its cached lane titles on. */
guint64 gv_trace_model_layout_serial(GvTraceModel *self);
const GvTrack *gv_trace_model_track(GvTraceModel *self, size_t i);
const char *gv_trace_model_name(GvTraceModel *self, uint32_t name);
/* ARGB of an NVTX colour slot (GvItem.color - 1). */
uint32_t gv_trace_model_color(GvTraceModel *self, uint16_t slot);

/* After "analysed" (NULL before): borrowed. */
const gt_report *gv_trace_model_report(GvTraceModel *self);
/* The report kept in the trace at its close (gtrace report's text, as
 * `gtrace report` prints it), known before the first rows; NULL: the trace
 * keeps none this build reads. What the pages show until "analysed". The
 * caller frees. */
char *gv_trace_model_kept_report(GvTraceModel *self);
/* The kept report's section that starts with `heading` ("memory"), to its
 * blank line; NULL: none. The caller frees. */
char *gv_trace_model_kept_section(GvTraceModel *self, const char *heading);
/* Processes with allocation events (0 before the analysis, or without any). */
size_t gv_trace_model_n_memories(GvTraceModel *self);
/* The i-th process's memory, by pid; the first is an empty one for a trace
 * without allocation events; NULL past the end or before the analysis. */
const GvMemory *gv_trace_model_memory_nth(GvTraceModel *self, size_t i);
const GvMemory *gv_trace_model_memory(GvTraceModel *self); /* the first */
const GvMemory *gv_trace_model_memory_of_pid(GvTraceModel *self, int64_t pid); /* NULL: none */
/* Process pid's allocator of `device` (-1: the process's first); NULL: none. */
const GvMemory *gv_trace_model_memory_of(GvTraceModel *self, int64_t pid, int32_t device);

/* A position of an item: track, lane, index. */
typedef struct GvItemRef { size_t track, lane, index; } GvItemRef;

/* The launch of device work, or the device work of a launch (same correlation id). */
gboolean gv_trace_model_find_related(GvTraceModel *self, const GvItemRef *of, GvItemRef *out);
/* The first item after after_ns whose name contains `text` (any case), or before
 * before_ns when backwards. */
gboolean gv_trace_model_search(GvTraceModel *self, const char *text, int64_t after_ns, gboolean backwards,
                               GvItemRef *out);
/* The same over the items of one name (the top table's n/p). Under the lock. */
gboolean gv_trace_model_next_named(GvTraceModel *self, uint32_t name, int64_t after_ns, gboolean backwards,
                                   GvItemRef *out);
/* A byte per name id (*out_n of them; the caller frees): 1 where the name,
 * or a full kernel name it stands for, contains `text` (any case). Under the lock. */
guint8 *gv_trace_model_match_names(GvTraceModel *self, const char *text, size_t *out_n);
/* Items whose names match (the search's items), and the rank (1-based, in
 * the search's order) of the one at `at` (0 when NULL). Under the lock. */
size_t gv_trace_model_count_matches(GvTraceModel *self, const guint8 *match, size_t n_match, const GvItemRef *at,
                                    size_t *out_rank);
/* Lines that describe an item (name, times, launch configuration, launch
 * call); the caller frees. Takes the lock itself. */
char *gv_trace_model_describe(GvTraceModel *self, const GvItemRef *ref);
/* The details panel's text: the description, the item's place (track and
 * lane) and, for a CUDA call or the work it launched, the call's stack where
 * the trace has one. The caller frees. Takes the lock itself. */
char *gv_trace_model_details(GvTraceModel *self, const GvItemRef *ref);
/* Lines that describe a merged box of `count` items from `first`. */
char *gv_trace_model_describe_run(GvTraceModel *self, const GvItemRef *first, size_t count);

/* Process pid's allocator segments and blocks at t, from the loaded analysis
 * (gt_analysis_state_at: nothing is read again), or NULL with *error set;
 * NULL without error before the analysis. _at: the first process's. */
gt_mem_state *gv_trace_model_memory_state_of(GvTraceModel *self, int64_t pid, int64_t t_ns, GError **error);
/* The same for one of the process's devices (-1: as _of). */
gt_mem_state *gv_trace_model_memory_state_of_device(GvTraceModel *self, int64_t pid, int32_t device, int64_t t_ns,
                                                    GError **error);
gt_mem_state *gv_trace_model_memory_state_at(GvTraceModel *self, int64_t t_ns, GError **error);
/* Who in process pid allocated the block at `address` made at made_ns ("" unknown); the caller frees. */
char *gv_trace_model_block_origin(GvTraceModel *self, int64_t pid, uint64_t address, int64_t made_ns);
/* Appends callchain id's frames to s, innermost first, one "\n  function  file:line"
 * each (a snapshot's frames keep their file and line); FALSE: no stack, or the
 * trace is busy. */
gboolean gv_trace_model_append_callchain(GvTraceModel *self, int64_t callchain_id, GString *s);
/* After "analysed" (NULL before): the analysis itself, borrowed. */
const gt_analysis *gv_trace_model_analysis(GvTraceModel *self);
/* One side of gtrace diff from the loaded analysis (gt_diff_run_of_analysis:
 * each step's samples, nothing read again); any thread. The run borrows the
 * model's report: free it before the model. FALSE with error before the
 * analysis or on failure. */
gboolean gv_trace_model_diff_run(GvTraceModel *self, gt_diff_run **out, GError **error);


G_END_DECLS

#endif /* GV_TRACE_MODEL_H */
