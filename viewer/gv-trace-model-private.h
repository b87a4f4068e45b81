/* gv-trace-model-private.h: what the model's files share and its users do
 * not see: the object's fields, and the few functions its loader
 * (gv-trace-loader.c) and hover text (gv-trace-describe.c) need from the
 * object (gv-trace-model.c). It stands below gv-trace-model.h: the files
 * that use it include both. */
#ifndef GV_TRACE_MODEL_PRIVATE_H
#define GV_TRACE_MODEL_PRIVATE_H

#include <glib-object.h>

#include "gt_analyze.h"
#include "gt_base.h"
#include "gv-lane.h"
#include "gv-mem-stack.h"

struct _GvTraceModel {
    GObject parent_instance;
    GMutex lock;       /* tracks, lanes (arrays, published counts), names, colours, span */
    GMutex trace_lock; /* the gt_trace: the loader's until it is done, then the main thread's */
    char *path;
    gt_trace *trace;
    GPtrArray *tracks; /* GvTrack* */
    GPtrArray *names;  /* char* */
    GPtrArray *full_names; /* char* per name, NULL: none: the full names a short one stands for, a line each */
    GArray *colors;    /* uint32 ARGB */
    int64_t span_start_ns, span_end_ns;
    int64_t n_items, n_total;
    gboolean loaded, analysed, loading;
    gt_analysis *analysis; /* the one analysis: report, gaps, ops, memory */
    const gt_report *report;
    GvMemory **memories; size_t n_memories; /* one per process, by pid */
    char *problem; /* the integrity check's late verdict, when it failed */
    char *kept_report; /* the report kept in the trace (text), read before the rows */
    guint64 layout_serial; /* changes with every track or lane added */
};

struct GvItemRef;

/* A new layout serial (unique across models). */
guint64 gv_trace_model_next_layout_serial(void);
/* "updated" or "analysed", emitted later on ctx (the main thread's). */
void gv_trace_model_emit_later(struct _GvTraceModel *self, GMainContext *ctx, gboolean analysed);
/* Tells "notify::path" listeners (main thread, once the path is set). */
void gv_trace_model_notify_path(struct _GvTraceModel *self);
/* Sets *error from a store status and its message; FALSE. */
gboolean gv_trace_model_fail(GError **error, int status);
/* The item at r, or NULL; under the lock. */
const GvItem *gv_trace_model_item_at(struct _GvTraceModel *self, const struct GvItemRef *r);

#endif /* GV_TRACE_MODEL_PRIVATE_H */
