/* gv-trace-model.c: the GvTraceModel object (see the header): its fields,
 * signals and accessors, finding items (related work, search) and the
 * memory queries, which the loaded analysis answers. Loading is in
 * gv-trace-loader.c, hover text in gv-trace-describe.c, the memory
 * layout in gv-mem-stack.c. */
#include "gv-trace-model-private.h"
#include "gv-trace-model.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One counter for all models: a serial names one layout of one model. */
guint64 gv_trace_model_next_layout_serial(void)
{
    static _Atomic uint64_t counter; /* two models load at once in a compare */
    return atomic_fetch_add(&counter, 1) + 1;
}

G_DEFINE_TYPE(GvTraceModel, gv_trace_model, G_TYPE_OBJECT)

/* What a trace without allocation events shows: nothing, for process 0. */
static const GvMemory empty_memory = {0};
G_DEFINE_QUARK(gv-error-quark, gv_error)

enum { SIG_UPDATED, SIG_ANALYSED, N_SIGNALS };
static guint signals[N_SIGNALS];
enum { PROP_0, PROP_PATH, N_PROPS };
static GParamSpec *props[N_PROPS];

/* |a - b|, at most INT64_MAX. */
static int64_t abs_diff(int64_t a, int64_t b) { return a > b ? gt_sat_sub(a, b) : gt_sat_sub(b, a); }

/* ---- the object ----------------------------------------------------------- */

static void track_free(gpointer p)
{
    GvTrack *tr = p;
    for (size_t i = 0; i < tr->n_lanes; i++) {
        gv_lane_lod_free(tr->lanes[i]);
        free(tr->lanes[i]->items);
        g_free(tr->lanes[i]);
    }
    g_free(tr->lanes);
    g_free(tr->title);
    g_free(tr);
}

static void memories_free(GvMemory **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        gv_memory_free(v[i]);
    g_free(v);
}

static void gv_trace_model_finalize(GObject *obj)
{
    GvTraceModel *self = GV_TRACE_MODEL(obj);
    g_ptr_array_unref(self->tracks);
    g_ptr_array_unref(self->names);
    g_ptr_array_unref(self->full_names);
    g_array_unref(self->colors);
    memories_free(self->memories, self->n_memories);
    gt_analysis_free(self->analysis);
    gt_trace_free(self->trace);
    g_free(self->path);
    g_free(self->problem);
    g_free(self->kept_report);
    g_mutex_clear(&self->lock);
    g_mutex_clear(&self->trace_lock);
    G_OBJECT_CLASS(gv_trace_model_parent_class)->finalize(obj);
}

static void gv_trace_model_get_property(GObject *obj, guint id, GValue *value, GParamSpec *pspec)
{
    if (id == PROP_PATH)
        g_value_set_string(value, GV_TRACE_MODEL(obj)->path);
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(obj, id, pspec);
}

void gv_trace_model_notify_path(GvTraceModel *self)
{
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_PATH]);
}

static void gv_trace_model_class_init(GvTraceModelClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = gv_trace_model_finalize;
    G_OBJECT_CLASS(klass)->get_property = gv_trace_model_get_property;
    /* The file given to load (NULL before): windows take their titles from it. */
    props[PROP_PATH] = g_param_spec_string("path", "Path", "The trace's file as given", NULL,
                                           G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
    g_object_class_install_properties(G_OBJECT_CLASS(klass), N_PROPS, props);
    /* New rows were published (main thread). */
    signals[SIG_UPDATED] = g_signal_new("updated", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                        NULL, G_TYPE_NONE, 0);
    /* All rows, the report and the memory timeline are in (main thread). */
    signals[SIG_ANALYSED] = g_signal_new("analysed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                         NULL, G_TYPE_NONE, 0);
}

static void gv_trace_model_init(GvTraceModel *self)
{
    g_mutex_init(&self->lock);
    g_mutex_init(&self->trace_lock);
    self->tracks = g_ptr_array_new_with_free_func(track_free);
    self->names = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(self->names, g_strdup("")); /* name 0: none */
    self->full_names = g_ptr_array_new_with_free_func(g_free);
    self->colors = g_array_new(FALSE, FALSE, sizeof(uint32_t));
}

GvTraceModel *gv_trace_model_new(void)
{
    return g_object_new(GV_TYPE_TRACE_MODEL, NULL);
}

void gv_trace_model_lock(GvTraceModel *self) { g_mutex_lock(&self->lock); }
void gv_trace_model_unlock(GvTraceModel *self) { g_mutex_unlock(&self->lock); }
size_t gv_trace_model_n_tracks(GvTraceModel *self) { return self->tracks->len; }
guint64 gv_trace_model_layout_serial(GvTraceModel *self) { return self->layout_serial; }
const GvTrack *gv_trace_model_track(GvTraceModel *self, size_t i)
{
    return i < self->tracks->len ? g_ptr_array_index(self->tracks, i) : NULL;
}
const char *gv_trace_model_name(GvTraceModel *self, uint32_t name)
{
    return name < self->names->len ? g_ptr_array_index(self->names, name) : "";
}
uint32_t gv_trace_model_color(GvTraceModel *self, uint16_t slot)
{
    return slot < self->colors->len ? g_array_index(self->colors, uint32_t, slot) : 0xff808080u;
}
const char *gv_trace_model_path(GvTraceModel *self) { return self->path ? self->path : ""; }
gboolean gv_trace_model_is_loaded(GvTraceModel *self) { return g_atomic_int_get(&self->loaded); }
gboolean gv_trace_model_is_analysed(GvTraceModel *self) { return g_atomic_int_get(&self->analysed); }
const gt_report *gv_trace_model_report(GvTraceModel *self) { return gv_trace_model_is_analysed(self) ? self->report : NULL; }

char *gv_trace_model_kept_report(GvTraceModel *self)
{
    g_mutex_lock(&self->lock);
    char *s = g_strdup(self->kept_report);
    g_mutex_unlock(&self->lock);
    return s;
}

char *gv_trace_model_kept_section(GvTraceModel *self, const char *heading)
{
    char *all = gv_trace_model_kept_report(self);
    if (!all)
        return NULL;
    /* a section starts a line with its heading and ends at the next blank line */
    size_t n = strlen(heading);
    char *at = all, *found = NULL;
    while (at && *at) {
        if (strncmp(at, heading, n) == 0 && (at[n] == ' ' || at[n] == '\n')) {
            found = at;
            break;
        }
        at = strchr(at, '\n');
        at = at ? at + 1 : NULL;
    }
    char *end = found ? strstr(found, "\n\n") : NULL;
    char *s = found ? g_strndup(found, end ? (size_t)(end - found) : strlen(found)) : NULL;
    g_free(all);
    return s;
}
size_t gv_trace_model_n_memories(GvTraceModel *self)
{
    return gv_trace_model_is_analysed(self) ? self->n_memories : 0;
}
const GvMemory *gv_trace_model_memory_nth(GvTraceModel *self, size_t i)
{
    if (!gv_trace_model_is_analysed(self))
        return NULL;
    if (i < self->n_memories)
        return self->memories[i];
    return i == 0 ? &empty_memory : NULL;
}
const GvMemory *gv_trace_model_memory(GvTraceModel *self) { return gv_trace_model_memory_nth(self, 0); }
const GvMemory *gv_trace_model_memory_of_pid(GvTraceModel *self, int64_t pid)
{
    return gv_trace_model_memory_of(self, pid, -1);
}

const GvMemory *gv_trace_model_memory_of(GvTraceModel *self, int64_t pid, int32_t device)
{
    for (size_t i = 0; i < gv_trace_model_n_memories(self); i++)
        if (self->memories[i]->pid == pid && (device < 0 || self->memories[i]->device_id == device))
            return self->memories[i];
    return NULL;
}

char *gv_trace_model_get_problem(GvTraceModel *self)
{
    g_return_val_if_fail(GV_IS_TRACE_MODEL(self), NULL);
    g_mutex_lock(&self->lock);
    char *p = g_strdup(self->problem);
    g_mutex_unlock(&self->lock);
    return p;
}

double gv_trace_model_progress(GvTraceModel *self)
{
    double p;
    g_mutex_lock(&self->lock);
    p = self->loaded ? 1.0 : self->n_total > 0 ? (double)self->n_items / (double)self->n_total : 0.0;
    g_mutex_unlock(&self->lock);
    return p > 1.0 ? 1.0 : p;
}

int64_t gv_trace_model_n_items(GvTraceModel *self)
{
    g_mutex_lock(&self->lock);
    int64_t n = self->n_items;
    g_mutex_unlock(&self->lock);
    return n;
}

void gv_trace_model_span(GvTraceModel *self, int64_t *out_start_ns, int64_t *out_end_ns)
{
    g_mutex_lock(&self->lock);
    *out_start_ns = self->span_start_ns;
    *out_end_ns = self->span_end_ns > self->span_start_ns ? self->span_end_ns : gt_sat_add(self->span_start_ns, 1);
    g_mutex_unlock(&self->lock);
}

static gboolean emit_updated(gpointer p)
{
    g_signal_emit(p, signals[SIG_UPDATED], 0);
    return G_SOURCE_REMOVE;
}

static gboolean emit_analysed(gpointer p)
{
    g_signal_emit(p, signals[SIG_ANALYSED], 0);
    return G_SOURCE_REMOVE;
}

/* Runs fn on the main thread's context, always later: g_main_context_invoke
 * would run it right here when no thread happens to own the context. */
static void on_main(GMainContext *ctx, GSourceFunc fn, GvTraceModel *m)
{
    GSource *src = g_idle_source_new();
    g_source_set_priority(src, G_PRIORITY_DEFAULT);
    g_source_set_callback(src, fn, g_object_ref(m), g_object_unref);
    g_source_attach(src, ctx);
    g_source_unref(src);
}

void gv_trace_model_emit_later(GvTraceModel *self, GMainContext *ctx, gboolean analysed)
{
    on_main(ctx, analysed ? emit_analysed : emit_updated, self);
}

gboolean gv_trace_model_fail(GError **error, int status)
{
    g_set_error(error, GV_ERROR, -status, "%s", *gt_error_last() ? gt_error_last() : gt_status_name(status));
    return FALSE;
}

/* ---- queries ---------------------------------------------------------------------- */

const GvItem *gv_trace_model_item_at(GvTraceModel *self, const GvItemRef *r)
{
    const GvTrack *tr = gv_trace_model_track(self, r->track);
    if (!tr || r->lane >= tr->n_lanes || r->index >= tr->lanes[r->lane]->n)
        return NULL;
    return &tr->lanes[r->lane]->items[r->index];
}

/* Items with `corr` in lanes of `kinds`, searched from `t` forward (or back). */
static gboolean find_corr(GvTraceModel *self, int64_t corr, int64_t t, gboolean forward, gboolean want_api,
                          GvItemRef *out)
{
    gboolean found = FALSE;
    int64_t best_dist = INT64_MAX;
    for (size_t ti = 0; ti < self->tracks->len; ti++) {
        const GvTrack *tr = g_ptr_array_index(self->tracks, ti);
        for (size_t li = 0; li < tr->n_lanes; li++) {
            const GvLane *l = tr->lanes[li];
            if ((l->kind == GV_ITEM_API) != want_api || l->kind == GV_ITEM_GAP || l->kind == GV_ITEM_NVTX ||
                l->kind == GV_ITEM_MARK) /* a mark's corr is its payload */
                continue;
            size_t i = gv_lane_lower_bound(l, 0, t);
            /* Launch latency is short next to the items between: a bounded look. */
            for (size_t seen = 0; seen < 65536; seen++) {
                size_t k;
                if (forward) {
                    if (i + seen >= l->n)
                        break;
                    k = i + seen;
                } else {
                    if (seen >= i)
                        break;
                    k = i - 1 - seen;
                }
                if (l->items[k].corr == corr) {
                    int64_t dist = abs_diff(l->items[k].start_ns, t);
                    if (dist < best_dist) {
                        best_dist = dist;
                        *out = (GvItemRef){ti, li, k};
                        found = TRUE;
                    }
                    break;
                }
            }
        }
    }
    return found;
}

gboolean gv_trace_model_find_related(GvTraceModel *self, const GvItemRef *of, GvItemRef *out)
{
    g_return_val_if_fail(GV_IS_TRACE_MODEL(self), FALSE);
    const GvItem *it = gv_trace_model_item_at(self, of);
    if (!it || it->corr == 0)
        return FALSE;
    if (it->kind == GV_ITEM_API) /* device work starts after its launch */
        return find_corr(self, it->corr, it->start_ns, TRUE, FALSE, out);
    if (it->kind == GV_ITEM_KERNEL || it->kind == GV_ITEM_MEMCPY || it->kind == GV_ITEM_MEMSET ||
        it->kind == GV_ITEM_SYNC) /* the call started first */
        return find_corr(self, it->corr, gt_sat_add(it->start_ns, 1), FALSE, TRUE, out);
    return FALSE;
}

/* The first item after after_ns (before it, backwards) whose name the match
 * bytes mark, over every lane but the idle ones. */
static gboolean search_match(GvTraceModel *self, const guint8 *match, size_t n_match, int64_t after_ns,
                             gboolean backwards, GvItemRef *out)
{
    gboolean any = FALSE;
    for (size_t i = 0; i < n_match; i++)
        any |= match[i];
    gboolean found = FALSE;
    int64_t best = backwards ? INT64_MIN : INT64_MAX;
    for (size_t ti = 0; any && ti < self->tracks->len; ti++) {
        const GvTrack *tr = g_ptr_array_index(self->tracks, ti);
        for (size_t li = 0; li < tr->n_lanes; li++) {
            const GvLane *l = tr->lanes[li];
            if (l->kind == GV_ITEM_GAP)
                continue;
            if (!backwards) {
                for (size_t k = gv_lane_lower_bound(l, 0, gt_sat_add(after_ns, 1)); k < l->n && l->items[k].start_ns < best; k++)
                    if (l->items[k].name < n_match && match[l->items[k].name]) {
                        best = l->items[k].start_ns;
                        *out = (GvItemRef){ti, li, k};
                        found = TRUE;
                        break;
                    }
            } else {
                for (size_t k = gv_lane_lower_bound(l, 0, after_ns); k-- > 0 && l->items[k].start_ns > best;)
                    if (l->items[k].name < n_match && match[l->items[k].name]) {
                        best = l->items[k].start_ns;
                        *out = (GvItemRef){ti, li, k};
                        found = TRUE;
                        break;
                    }
            }
        }
    }
    return found;
}

gboolean gv_trace_model_search(GvTraceModel *self, const char *text, int64_t after_ns, gboolean backwards,
                               GvItemRef *out)
{
    g_return_val_if_fail(GV_IS_TRACE_MODEL(self), FALSE);
    if (!text || !*text)
        return FALSE;
    size_t n_match = 0;
    guint8 *match = gv_trace_model_match_names(self, text, &n_match);
    gboolean found = search_match(self, match, n_match, after_ns, backwards, out);
    g_free(match);
    return found;
}

gboolean gv_trace_model_next_named(GvTraceModel *self, uint32_t name, int64_t after_ns, gboolean backwards,
                                   GvItemRef *out)
{
    g_return_val_if_fail(GV_IS_TRACE_MODEL(self), FALSE);
    if (name >= self->names->len)
        return FALSE;
    guint8 *match = g_malloc0(self->names->len);
    match[name] = 1;
    gboolean found = search_match(self, match, self->names->len, after_ns, backwards, out);
    g_free(match);
    return found;
}

guint8 *gv_trace_model_match_names(GvTraceModel *self, const char *text, size_t *out_n)
{
    char *needle = g_utf8_casefold(text ? text : "", -1);
    guint8 *match = g_new0(guint8, self->names->len);
    for (guint i = 1; *needle && i < self->names->len; i++) {
        char *hay = g_utf8_casefold(g_ptr_array_index(self->names, i), -1);
        match[i] = strstr(hay, needle) != NULL;
        g_free(hay);
        const char *full = i < self->full_names->len ? g_ptr_array_index(self->full_names, i) : NULL;
        if (!match[i] && full) { /* a kernel's namespaces, template and function arguments */
            hay = g_utf8_casefold(full, -1);
            match[i] = strstr(hay, needle) != NULL;
            g_free(hay);
        }
    }
    g_free(needle);
    *out_n = self->names->len;
    return match;
}

size_t gv_trace_model_count_matches(GvTraceModel *self, const guint8 *match, size_t n_match, const GvItemRef *at,
                                    size_t *out_rank)
{
    size_t n = 0, before = 0;
    const GvItem *cur = at ? gv_trace_model_item_at(self, at) : NULL;
    for (size_t ti = 0; ti < self->tracks->len; ti++) {
        const GvTrack *tr = g_ptr_array_index(self->tracks, ti);
        for (size_t li = 0; li < tr->n_lanes; li++) {
            const GvLane *l = tr->lanes[li];
            if (l->kind == GV_ITEM_GAP) /* as the search: gaps are not named items */
                continue;
            for (size_t k = 0; k < l->n; k++) {
                const GvItem *it = &l->items[k];
                if (it->name >= n_match || !match[it->name])
                    continue;
                n++;
                /* The search's order: by start, then track and lane. */
                before += cur && (it->start_ns < cur->start_ns ||
                                  (it->start_ns == cur->start_ns && (ti < at->track || (ti == at->track && li < at->lane))));
            }
        }
    }
    if (out_rank)
        *out_rank = cur ? before + 1 : 0;
    return n;
}

const gt_analysis *gv_trace_model_analysis(GvTraceModel *self)
{
    return gv_trace_model_is_analysed(self) ? self->analysis : NULL;
}

gt_mem_state *gv_trace_model_memory_state_of(GvTraceModel *self, int64_t pid, int64_t t_ns, GError **error)
{
    return gv_trace_model_memory_state_of_device(self, pid, -1, t_ns, error);
}

gt_mem_state *gv_trace_model_memory_state_of_device(GvTraceModel *self, int64_t pid, int32_t device, int64_t t_ns,
                                                    GError **error)
{
    g_return_val_if_fail(GV_IS_TRACE_MODEL(self), NULL);
    const gt_analysis *a = gv_trace_model_analysis(self);
    if (!a)
        return NULL;
    gt_mem_state *st = NULL;
    gt_mem_states *all = NULL;
    int rc;
    /* the trace's statements are the main thread's once loaded: the handle
     * reads call stacks through them */
    g_mutex_lock(&self->trace_lock);
    if (device < 0 || !self->n_memories) {
        rc = gt_analysis_state_at(&st, a, self->n_memories ? pid : -1, t_ns);
    } else if ((rc = gt_analysis_states_at(&all, a, pid, t_ns)) == 0) { /* one state per device of pid */
        for (size_t i = 0; i < all->n && !st; i++)
            if (all->v[i]->device_id == device) {
                st = all->v[i];
                all->v[i] = NULL;
            }
        gt_mem_states_free(all);
        if (!st)
            rc = gt_error_set(GT_ERR_NOTFOUND, "%s: process %lld has no allocations on device %d", self->path,
                              (long long)pid, (int)device);
    }
    g_mutex_unlock(&self->trace_lock);
    if (rc < 0)
        gv_trace_model_fail(error, rc);
    return st;
}

gt_mem_state *gv_trace_model_memory_state_at(GvTraceModel *self, int64_t t_ns, GError **error)
{
    g_return_val_if_fail(GV_IS_TRACE_MODEL(self), NULL);
    const GvMemory *mem = gv_trace_model_memory(self);
    return gv_trace_model_memory_state_of(self, mem ? mem->pid : 0, t_ns, error);
}

gboolean gv_trace_model_diff_run(GvTraceModel *self, gt_diff_run **out, GError **error)
{
    g_return_val_if_fail(GV_IS_TRACE_MODEL(self), FALSE);
    *out = NULL;
    g_mutex_lock(&self->lock);
    const gt_analysis *a = self->analysed ? self->analysis : NULL;
    g_mutex_unlock(&self->lock);
    if (!a) {
        g_set_error(error, GV_ERROR, -GT_ERR_INVALID, "%s: not analysed yet", self->path ? self->path : "trace");
        return FALSE;
    }
    /* names are read from the trace's string table: the trace's lock */
    g_mutex_lock(&self->trace_lock);
    int rc = gt_diff_run_of_analysis(out, a);
    g_mutex_unlock(&self->trace_lock);
    return rc < 0 ? gv_trace_model_fail(error, rc) : TRUE;
}

char *gv_trace_model_block_origin(GvTraceModel *self, int64_t pid, uint64_t address, int64_t made_ns)
{
    g_return_val_if_fail(GV_IS_TRACE_MODEL(self), NULL);
    const gt_analysis *a = gv_trace_model_analysis(self);
    if (!a)
        return g_strdup("");
    g_mutex_lock(&self->trace_lock);
    char *o = gt_analysis_block_origin(a, pid, address, made_ns);
    g_mutex_unlock(&self->trace_lock);
    char *out = g_strdup(o ? o : "");
    free(o);
    return out;
}
