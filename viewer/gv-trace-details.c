/* gv-trace-details.c: the details panel's text for one item: what the hover
 * text says (gv-trace-describe.c), where it sits, what a copy, memset or CPU
 * op was given, and the stack of the CUDA call behind it, read back from the
 * trace. It reads the model; it changes
 * nothing. */
#include "gv-trace-model-private.h"
#include "gv-trace-model.h"

/* The callchain id of the CUDA call that starts at start_ns with this
 * correlation id; 0: none. The caller holds trace_lock. */
static int64_t call_stack_id(GvTraceModel *self, int64_t start_ns, int64_t corr)
{
    gt_iter *iter = NULL;
    gt_event ev;
    int64_t id = 0;
    if (gt_iter_new(&iter, self->trace, GT_EV_API, start_ns, gt_sat_add(start_ns, 1)) != 0)
        return 0;
    while (gt_iter_next(iter, &ev) == 1)
        if (ev.u.api.start_ns == start_ns && ev.u.api.correlation_id == corr) {
            id = ev.u.api.callchain_id;
            break;
        }
    gt_iter_free(iter);
    return id;
}

/* The frames of callchain id; the caller holds trace_lock. */
static gboolean append_frames(GvTraceModel *self, int64_t id, const char *head, GString *s)
{
    const gt_frame *frames = NULL;
    size_t n = 0;
    if (id == 0 || gt_trace_callchain(self->trace, id, &frames, &n) != 0 || n == 0)
        return FALSE;
    g_string_append(s, head);
    for (size_t i = 0; i < n && i < 64; i++) {
        const char *sym = gt_trace_string(self->trace, frames[i].symbol);
        const char *mod = gt_trace_string(self->trace, frames[i].module);
        if (frames[i].unresolved || !*sym)
            g_string_append_printf(s, "\n  0x%llx  %s", (unsigned long long)frames[i].original_ip, mod);
        else
            g_string_append_printf(s, "\n  %s  %s", sym, mod);
    }
    if (n > 64)
        g_string_append_printf(s, "\n  ... %zu more", n - 64);
    return TRUE;
}

static void append_stack(GvTraceModel *self, const GvItem *call, GString *s)
{
    if (!gv_trace_model_is_analysed(self) || !g_mutex_trylock(&self->trace_lock))
        return;
    int64_t id = call_stack_id(self, call->start_ns, call->corr);
    append_frames(self, id, "\n\nstack of the call (innermost first)", s);
    g_mutex_unlock(&self->trace_lock);
}

gboolean gv_trace_model_append_callchain(GvTraceModel *self, int64_t callchain_id, GString *s)
{
    g_return_val_if_fail(GV_IS_TRACE_MODEL(self), FALSE);
    if (!gv_trace_model_is_analysed(self) || !g_mutex_trylock(&self->trace_lock))
        return FALSE;
    gboolean ok = append_frames(self, callchain_id, "", s);
    g_mutex_unlock(&self->trace_lock);
    return ok;
}

/* What a copy, a memset or a CPU op was given (bytes, value, flops), read
 * back from the trace: items keep only times and names. */
static void append_arguments(GvTraceModel *self, const GvItem *it, GString *s)
{
    gt_event_kind kind = it->kind == GV_ITEM_MEMCPY ? GT_EV_MEMCPY : it->kind == GV_ITEM_MEMSET ? GT_EV_MEMSET
                                                                                              : GT_EV_CPU_OP;
    if (!gv_trace_model_is_analysed(self) || !g_mutex_trylock(&self->trace_lock))
        return;
    gt_iter *iter = NULL;
    gt_event ev;
    char b[32];
    if (gt_iter_new(&iter, self->trace, kind, it->start_ns, gt_sat_add(it->start_ns, 1)) == 0) {
        while (gt_iter_next(iter, &ev) == 1) {
            if (kind == GT_EV_MEMCPY && ev.u.memcpy.end_ns == it->end_ns && ev.u.memcpy.correlation_id == it->corr) {
                g_string_append_printf(s, "\n\narguments\n  %s, %s (%lld B)", gt_copy_kind_name(ev.u.memcpy.copy_kind),
                                       gt_fmt_bytes(b, sizeof b, (double)ev.u.memcpy.bytes),
                                       (long long)ev.u.memcpy.bytes);
                break;
            }
            if (kind == GT_EV_MEMSET && ev.u.memset.end_ns == it->end_ns && ev.u.memset.correlation_id == it->corr) {
                g_string_append_printf(s, "\n\narguments\n  value %d, %s (%lld B)", ev.u.memset.value,
                                       gt_fmt_bytes(b, sizeof b, (double)ev.u.memset.bytes),
                                       (long long)ev.u.memset.bytes);
                break;
            }
            if (kind == GT_EV_CPU_OP && ev.u.cpu_op.end_ns == it->end_ns) {
                g_string_append(s, "\n\narguments");
                if (ev.u.cpu_op.flops)
                    g_string_append_printf(s, "\n  %lld flops", (long long)ev.u.cpu_op.flops);
                if (ev.u.cpu_op.bytes)
                    g_string_append_printf(s, "\n  %s read and written",
                                           gt_fmt_bytes(b, sizeof b, (double)ev.u.cpu_op.bytes));
                if (!ev.u.cpu_op.flops && !ev.u.cpu_op.bytes)
                    g_string_append(s, "\n  (none recorded)");
                break;
            }
        }
        gt_iter_free(iter);
    }
    g_mutex_unlock(&self->trace_lock);
}

char *gv_trace_model_details(GvTraceModel *self, const GvItemRef *ref)
{
    g_return_val_if_fail(GV_IS_TRACE_MODEL(self), NULL);
    char *about = gv_trace_model_describe(self, ref);
    GString *s = g_string_new(about);
    g_free(about);
    GvItem call = {0}, copy = {0};
    gboolean has_call = FALSE;
    gv_trace_model_lock(self);
    const GvItem *it = gv_trace_model_item_at(self, ref);
    if (it) {
        copy = *it;
        const GvTrack *tr = gv_trace_model_track(self, ref->track);
        g_string_append_printf(s, "\n\ntrack  %s\nlane  %s", tr->title, tr->lanes[ref->lane]->label);
        GvItemRef rel;
        if (it->kind == GV_ITEM_API) {
            call = *it;
            has_call = TRUE;
        } else if (gv_trace_model_find_related(self, ref, &rel)) {
            const GvItem *ri = gv_trace_model_item_at(self, &rel);
            if (ri && ri->kind == GV_ITEM_API) {
                call = *ri;
                has_call = TRUE;
            }
        }
    }
    gv_trace_model_unlock(self);
    if (it && (copy.kind == GV_ITEM_MEMCPY || copy.kind == GV_ITEM_MEMSET || copy.kind == GV_ITEM_CPU_OP))
        append_arguments(self, &copy, s);
    if (has_call && call.corr != 0)
        append_stack(self, &call, s);
    return g_string_free(s, FALSE);
}
