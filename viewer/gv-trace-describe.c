/* gv-trace-describe.c: the hover text of an item or of a merged box (what
 * the timeline shows under the pointer): names, times, the launch and its
 * kernel, a kernel's launch configuration read back from the trace, a gap's
 * cause as the analysis gave it. It reads the model; it changes nothing. */
#include "gv-trace-model-private.h"
#include "gv-trace-model.h"

#include <string.h>

static const char *gap_cause_words(int cause)
{
    switch (cause) {
    case GT_GAP_HOST_WAIT: return "host-wait: the next work was not launched yet";
    case GT_GAP_KERNEL_WAIT: return "kernel-wait: queued, launch overhead (< 30 us)";
    default: return "other: queued, waited on events or other streams";
    }
}

/* Times are said from the trace's start, as the axis counts them. Under the lock. */
static int64_t since_start(GvTraceModel *self, int64_t t_ns)
{
    return gt_sat_sub(t_ns, self->span_start_ns);
}

/* Launch configuration and exact name of a kernel, read back from the trace. */
static void describe_kernel(GvTraceModel *self, const GvItem *it, GString *s)
{
    if (!gv_trace_model_is_analysed(self) || !g_mutex_trylock(&self->trace_lock)) {
        g_string_append(s, "\n(launch configuration after loading)");
        return;
    }
    gt_iter *iter = NULL;
    gt_event ev;
    if (gt_iter_new(&iter, self->trace, GT_EV_KERNEL, it->start_ns, gt_sat_add(it->start_ns, 1)) == 0) {
        while (gt_iter_next(iter, &ev) == 1) {
            const gt_kernel *k = &ev.u.kernel;
            if (k->start_ns != it->start_ns || k->correlation_id != it->corr)
                continue;
            const char *full = gt_trace_string(self->trace, k->demangled_name);
            if (*full && strcmp(full, gv_trace_model_name(self, it->name)) != 0)
                g_string_append_printf(s, "\n%s", full);
            g_string_append_printf(s, "\ngrid (%d, %d, %d)  block (%d, %d, %d)\nregisters/thread %d  shared %d + %d B",
                                   k->grid_x, k->grid_y, k->grid_z, k->block_x, k->block_y, k->block_z,
                                   k->registers_per_thread, k->static_shared_bytes, k->dynamic_shared_bytes);
            g_string_append_printf(s, "\ndevice %d  stream %d  correlation %lld", k->device_id, k->stream_id,
                                   (long long)k->correlation_id);
            break;
        }
        gt_iter_free(iter);
    }
    g_mutex_unlock(&self->trace_lock);
}

/* A mark's payload, from the bytes kept in its corr. */
static void append_payload(GString *s, const GvItem *it)
{
    union { uint64_t u64; int64_t i64; double f64; uint32_t u32; int32_t i32; float f32; } p;
    memcpy(&p, &it->corr, sizeof p);
    switch (it->aux) {
    case GT_PAYLOAD_U64: g_string_append_printf(s, "\npayload %llu", (unsigned long long)p.u64); break;
    case GT_PAYLOAD_I64: g_string_append_printf(s, "\npayload %lld", (long long)p.i64); break;
    case GT_PAYLOAD_DOUBLE: g_string_append_printf(s, "\npayload %.10g", p.f64); break;
    case GT_PAYLOAD_U32: g_string_append_printf(s, "\npayload %u", p.u32); break;
    case GT_PAYLOAD_I32: g_string_append_printf(s, "\npayload %d", p.i32); break;
    case GT_PAYLOAD_FLOAT: g_string_append_printf(s, "\npayload %.7g", (double)p.f32); break;
    default: g_string_append(s, "\nno payload"); break;
    }
}

char *gv_trace_model_describe(GvTraceModel *self, const GvItemRef *ref)
{
    g_return_val_if_fail(GV_IS_TRACE_MODEL(self), NULL);
    char a[32], b[32];
    GString *s = g_string_new(NULL);
    GvItem copy = {0};
    const GvTrack *tr;
    const char *name;
    gv_trace_model_lock(self);
    const GvItem *it = gv_trace_model_item_at(self, ref);
    if (!it)
        goto done;
    copy = *it;
    tr = gv_trace_model_track(self, ref->track);
    name = gv_trace_model_name(self, it->name);
    static const char *const kind_words[] = {"kernel", "memcpy", "memset", "CPU op", "CUDA call", "NVTX range",
                                             "idle gap", "NVTX mark", "CUDA synchronization"};
    _Static_assert(sizeof kind_words / sizeof kind_words[0] == GV_ITEM_N_KINDS, "a word for every kind");
    if (it->kind == GV_ITEM_GAP)
        g_string_append(s, "idle");
    else
        g_string_append_printf(s, "%s  %s", name, kind_words[it->kind]);
    if (it->kind == GV_ITEM_MARK) /* an instant */
        g_string_append_printf(s, "\n%s at %s", tr->title, gt_fmt_ns(b, sizeof b, since_start(self, it->start_ns)));
    else
        g_string_append_printf(s, "\n%s, %s at %s", gt_fmt_ns(a, sizeof a, gt_sat_sub(it->end_ns, it->start_ns)), tr->title,
                               gt_fmt_ns(b, sizeof b, since_start(self, it->start_ns)));
    if (it->kind == GV_ITEM_MARK) {
        append_payload(s, it);
    } else if (it->kind == GV_ITEM_GAP) {
        g_string_append_printf(s, "\n%s", gap_cause_words(it->aux));
        const gt_report *r = gv_trace_model_report(self);
        for (size_t i = 0; r && i < r->gaps.n_longest; i++) {
            const gt_gap *g = &r->gaps.longest[i];
            if (g->start_ns == it->start_ns && g->end_ns == it->end_ns) {
                if (g->nvtx_path && *g->nvtx_path)
                    g_string_append_printf(s, "\nhost in %s", g->nvtx_path);
                if (g->api && *g->api)
                    g_string_append_printf(s, "\nhost in %s", g->api);
            }
        }
    } else if (it->kind == GV_ITEM_NVTX) {
        g_string_append_printf(s, "\ndepth %d", it->aux);
    } else if (it->kind == GV_ITEM_API && it->aux) {
        g_string_append(s, "\nreturned an error");
    }
    GvItemRef rel;
    if (gv_trace_model_find_related(self, ref, &rel)) {
        const GvItem *ri = gv_trace_model_item_at(self, &rel);
        const char *how = it->kind == GV_ITEM_SYNC   ? "waited in"
                          : ri->kind == GV_ITEM_SYNC ? "waited:"
                          : it->kind == GV_ITEM_API  ? "launched"
                                                     : "launched by";
        g_string_append_printf(s, "\n%s %s (%s, at %s)", how, gv_trace_model_name(self, ri->name),
                               gt_fmt_ns(a, sizeof a, gt_sat_sub(ri->end_ns, ri->start_ns)),
                               gt_fmt_ns(b, sizeof b, since_start(self, ri->start_ns)));
        if (it->kind != GV_ITEM_API)
            g_string_append_printf(s, " on %s", gv_trace_model_track(self, rel.track)->title);
    }
done:
    gv_trace_model_unlock(self);
    if (it && copy.kind == GV_ITEM_KERNEL)
        describe_kernel(self, &copy, s);
    return g_string_free(s, FALSE);
}

char *gv_trace_model_describe_run(GvTraceModel *self, const GvItemRef *first, size_t count)
{
    g_return_val_if_fail(GV_IS_TRACE_MODEL(self), NULL);
    char a[32], b[32];
    gv_trace_model_lock(self);
    const GvItem *it = gv_trace_model_item_at(self, first);
    char *out = NULL;
    if (it) {
        const GvLane *l = gv_trace_model_track(self, first->track)->lanes[first->lane];
        size_t last = first->index + count - 1 < l->n ? first->index + count - 1 : l->n - 1;
        int64_t busy = 0;
        for (size_t k = first->index; k <= last && k < first->index + 100000; k++)
            busy = gt_sat_add(busy, gt_sat_sub(l->items[k].end_ns, l->items[k].start_ns));
        out = g_strdup_printf("%zu items merged at this zoom (%s): %s ... %s\nfrom %s, busy %s\nzoom in to see them",
                              count, l->label, gv_trace_model_name(self, it->name),
                              gv_trace_model_name(self, l->items[last].name), gt_fmt_ns(a, sizeof a, since_start(self, it->start_ns)),
                              gt_fmt_ns(b, sizeof b, busy));
    }
    gv_trace_model_unlock(self);
    return out ? out : g_strdup("");
}
