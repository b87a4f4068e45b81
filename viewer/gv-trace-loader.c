/* gv-trace-loader.c: loading a trace into tracks of lanes (see
 * gv-trace-model.h), on a thread of its own.
 *
 * The loader thread merges the reader's time-ordered iterators, so every
 * lane is appended in start order and stays sorted without a sort, and
 * NVTX depths come from a per-thread stack of open ranges. It writes past
 * each lane's published count without the lock and takes the lock only to
 * swap in a grown copy of an array, add a lane or a track, or publish. Then
 * it loads the one analysis (gt_analysis) and puts what that found into
 * lanes: idle gaps with their causes, compute ops. It computes nothing the
 * analysis computes. */
#include "gt_open_any.h"
#include "gv-names.h"
#include "gv-trace-model-private.h"
#include "gv-trace-model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define FIRST_PUBLISH_US 150000   /* the first rows go out early: the first frame */
#define PUBLISH_US 300000
#define REPORT_TOP_N 50
#define LOADER_NICE 10 /* the loader's weight is a tenth of the drawing thread's */
/* Lane keys: a thread's marks above its NVTX depths, a device's syncs below its streams. */
#define MARK_LANE_KEY (-1)
#define SYNC_LANE_KEY ((int64_t)1 << 40)

/* ---- lanes and names ------------------------------------------------------------ */

typedef struct dev_state {
    GvTrack *track;
    GvLane *gaps; /* filled from the analysis */
} dev_state;

/* What a thread's NVTX lane at one depth holds, told by its ranges' names:
 * a lane named after it ("steps", "phases", "modules", "ops") reads better
 * than "NVTX ranges, depth 2". */
typedef enum range_kind {
    RANGE_STEP,
    RANGE_PHASE,
    RANGE_MODULE, /* a dotted name: "encoder.layers.3" (or a Python call's "model.forward") */
    RANGE_OP,
    RANGE_WORD,   /* one identifier: a root module ("Net") or a child ("fc1"), or anything */
    RANGE_OTHER,
    N_RANGE_KINDS
} range_kind;
#define NAMED_DEPTHS 32

typedef struct thread_state {
    GvTrack *track;
    GArray *open_ends; /* ends of the open NVTX ranges: the depth stack */
    GvLane *api, *driver, *marks;
    const char *ranges; /* what its NVTX lanes hold: "NVTX ranges", "python calls" */
    uint32_t kinds[NAMED_DEPTHS][N_RANGE_KINDS]; /* ranges by kind at each depth */
} thread_state;

typedef struct loader {
    GvTraceModel *m;
    gt_trace *t;
    GHashTable *name_of_id;  /* gt_string_id -> name + 1 */
    GHashTable *name_of_str; /* char* (in m->names) -> name + 1 */
    GHashTable *slot_of_color;
    GHashTable *devs;    /* device id -> dev_state */
    GHashTable *threads; /* global tid -> thread_state */
    GByteArray *kind_of_name; /* name index -> range_kind + 1, 0 not yet told */
    gboolean failed_oom;
} loader;

static void *lane_slot(loader *ld, GvLane *l)
{
    if (l->n_loaded == l->cap) {
        size_t cap;
        GvItem *p = gv_lane_grown_copy(l, &cap), *old;
        if (!p) {
            ld->failed_oom = TRUE;
            return NULL;
        }
        g_mutex_lock(&ld->m->lock);
        old = l->items;
        l->items = p;
        l->cap = cap;
        g_mutex_unlock(&ld->m->lock);
        free(old);
    }
    return &l->items[l->n_loaded];
}

static void lane_append(loader *ld, GvLane *l, const GvItem *it)
{
    GvItem *slot = lane_slot(ld, l);
    if (!slot)
        return;
    *slot = *it;
    l->n_loaded++;
    if (gt_sat_sub(it->end_ns, it->start_ns) > l->max_dur_ns)
        l->max_dur_ns = gt_sat_sub(it->end_ns, it->start_ns);
}

static uint32_t name_of_string(loader *ld, const char *s)
{
    gpointer v = g_hash_table_lookup(ld->name_of_str, s);
    if (v)
        return GPOINTER_TO_UINT(v) - 1;
    char *copy = g_strdup(s);
    g_mutex_lock(&ld->m->lock);
    uint32_t idx = ld->m->names->len;
    g_ptr_array_add(ld->m->names, copy);
    g_mutex_unlock(&ld->m->lock);
    g_hash_table_insert(ld->name_of_str, copy, GUINT_TO_POINTER(idx + 1));
    return idx;
}

/* The full name behind short name idx, kept for the search (a line each,
 * each once: the few a short name stands for). Under the model's lock: the
 * search reads them while rows come in. */
static void add_full_name(loader *ld, uint32_t idx, const char *full)
{
    GPtrArray *fn = ld->m->full_names;
    g_mutex_lock(&ld->m->lock);
    if (fn->len <= idx)
        g_ptr_array_set_size(fn, (gint)idx + 1);
    char *had = g_ptr_array_index(fn, idx);
    size_t n = strlen(full);
    gboolean seen = FALSE;
    for (const char *at = had; at && (at = strstr(at, full)) != NULL; at += n)
        if ((at == had || at[-1] == '\n') && (at[n] == '\n' || at[n] == 0)) {
            seen = TRUE;
            break;
        }
    if (!seen) {
        g_ptr_array_index(fn, idx) = had ? g_strconcat(had, "\n", full, NULL) : g_strdup(full);
        g_free(had);
    }
    g_mutex_unlock(&ld->m->lock);
}

/* How a string id becomes a name: as it is; a runtime call without nsys's
 * version suffix (cudaLaunchKernel_v7000); a kernel by its short name
 * (gv-names.h), which is what it is coloured by; the search also reads
 * the full names behind it (add_full_name). */
typedef enum name_how { NAME_AS_IS = 0, NAME_API = 1, NAME_KERNEL = 2 } name_how;

static uint32_t name_of_id(loader *ld, gt_string_id id, name_how how)
{
    if (id == 0)
        return 0;
    /* Shifted as unsigned: a damaged trace's id may be anything int64 holds. */
    gint64 key = (gint64)(((guint64)id << 2) | (guint64)how);
    gpointer v = g_hash_table_lookup(ld->name_of_id, &key);
    if (v)
        return GPOINTER_TO_UINT(v) - 1;
    const char *s = gt_trace_string(ld->t, id);
    char base[512];
    const char *full = s;
    if (how == NAME_API)
        s = gt_api_base_name(s, base, sizeof base);
    else if (how == NAME_KERNEL)
        s = gv_short_kernel_name(base, sizeof base, s);
    uint32_t idx = name_of_string(ld, s);
    if (how == NAME_KERNEL && full && strcmp(full, s) != 0)
        add_full_name(ld, idx, full);
    g_hash_table_insert(ld->name_of_id, g_memdup2(&key, sizeof key), GUINT_TO_POINTER(idx + 1));
    return idx;
}

static uint16_t color_slot(loader *ld, uint32_t argb)
{
    gpointer v = g_hash_table_lookup(ld->slot_of_color, GUINT_TO_POINTER(argb));
    if (v)
        return (uint16_t)GPOINTER_TO_UINT(v);
    if (ld->m->colors->len >= 65534)
        return 0;
    g_mutex_lock(&ld->m->lock);
    g_array_append_val(ld->m->colors, argb);
    uint16_t slot = (uint16_t)ld->m->colors->len; /* slot + 1 */
    g_mutex_unlock(&ld->m->lock);
    g_hash_table_insert(ld->slot_of_color, GUINT_TO_POINTER(argb), GUINT_TO_POINTER(slot));
    return slot;
}

static int cmp_track(gconstpointer a, gconstpointer b)
{
    const GvTrack *x = *(GvTrack *const *)a, *y = *(GvTrack *const *)b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->kind == GV_TRACK_DEVICE && (x->key < 0) != (y->key < 0)) /* CPU ops after the GPUs */
        return x->key < 0 ? 1 : -1;
    return x->key < y->key ? -1 : x->key > y->key;
}

static GvTrack *add_track(loader *ld, GvTrackKind kind, int64_t key, char *title)
{
    GvTrack *tr = g_new0(GvTrack, 1);
    tr->kind = kind;
    tr->key = key;
    tr->title = title;
    g_mutex_lock(&ld->m->lock);
    g_ptr_array_add(ld->m->tracks, tr);
    g_ptr_array_sort(ld->m->tracks, cmp_track);
    ld->m->layout_serial = gv_trace_model_next_layout_serial();
    g_mutex_unlock(&ld->m->lock);
    return tr;
}

static GvLane *add_lane(loader *ld, GvTrack *tr, GvItemKind kind, int64_t key, const char *label)
{
    GvLane *l = g_new0(GvLane, 1);
    l->kind = kind;
    l->key = key;
    g_strlcpy(l->label, label, sizeof l->label);
    g_mutex_lock(&ld->m->lock);
    if (tr->n_lanes == tr->cap_lanes) {
        tr->cap_lanes = tr->cap_lanes ? 2 * tr->cap_lanes : 4;
        tr->lanes = g_renew(GvLane *, tr->lanes, tr->cap_lanes);
    }
    size_t at = tr->n_lanes;
    while (at > 0 && tr->lanes[at - 1]->key > key) { /* lanes stay ordered by key */
        tr->lanes[at] = tr->lanes[at - 1];
        at--;
    }
    tr->lanes[at] = l;
    tr->n_lanes++;
    ld->m->layout_serial = gv_trace_model_next_layout_serial();
    g_mutex_unlock(&ld->m->lock);
    return l;
}

static GvLane *find_lane(GvTrack *tr, GvItemKind kind, int64_t key)
{
    for (size_t i = 0; i < tr->n_lanes; i++)
        if (tr->lanes[i]->kind == kind && tr->lanes[i]->key == key)
            return tr->lanes[i];
    return NULL;
}

static dev_state *device(loader *ld, int32_t id)
{
    dev_state *d = g_hash_table_lookup(ld->devs, GINT_TO_POINTER(id));
    if (d)
        return d;
    d = g_new0(dev_state, 1);
    char *title = NULL;
    if (id < 0) {
        title = g_strdup("CPU ops");
    } else {
        size_t n_gpus;
        const gt_gpu_info *g = gt_trace_gpus(ld->t, &n_gpus);
        for (size_t i = 0; i < n_gpus && !title; i++)
            if (g[i].id == id && g[i].name && *g[i].name)
                title = g_strdup_printf("GPU %d  %s", id, g[i].name);
        if (!title)
            title = g_strdup_printf("GPU %d", id);
    }
    d->track = add_track(ld, GV_TRACK_DEVICE, id, title);
    d->gaps = add_lane(ld, d->track, GV_ITEM_GAP, INT64_MIN, "idle");
    g_hash_table_insert(ld->devs, GINT_TO_POINTER(id), d);
    return d;
}

static thread_state *thread(loader *ld, int64_t tid)
{
    thread_state *ts = g_hash_table_lookup(ld->threads, &tid);
    if (ts)
        return ts;
    ts = g_new0(thread_state, 1);
    ts->open_ends = g_array_new(FALSE, FALSE, sizeof(int64_t));
    /* Titled by what a person knows it as: its name, its process's rank, then the ids. */
    const char *name = "";
    size_t n_threads, n_procs;
    const gt_thread *th = gt_trace_threads(ld->t, &n_threads);
    for (size_t i = 0; i < n_threads; i++)
        if (th[i].global_tid == tid && th[i].name)
            name = th[i].name;
    int32_t rank = -1;
    const gt_process *pr = gt_trace_processes(ld->t, &n_procs);
    for (size_t i = 0; i < n_procs; i++)
        if (pr[i].pid == gt_pid_of(tid))
            rank = pr[i].rank;
    g_autofree char *ranked = rank >= 0 ? g_strdup_printf("rank %d  ", rank) : g_strdup("");
    long long pid = (long long)gt_pid_of(tid), tid_ = (long long)gt_tid_of(tid);
    char *title = *name ? g_strdup_printf("%s%s  (%lld/%lld)", ranked, name, pid, tid_)
                        : g_strdup_printf("%sthread %lld/%lld", ranked, pid, tid_);
    ts->ranges = strstr(name, "python calls") ? "python calls" : "NVTX ranges";
    ts->track = add_track(ld, GV_TRACK_THREAD, tid, title);
    g_hash_table_insert(ld->threads, g_memdup2(&tid, sizeof tid), ts);
    return ts;
}

/* `gtrace --pytorch` names (libtrace/python/gtrace_torch): "step N", the
 * phases, modules by qualified name ("encoder.layers.3", "fc backward"), ATen
 * ops ("aten::mm"). */
static range_kind kind_of_range(const char *name)
{
    static const char *const phases[] = {"data", "forward", "backward", "optimizer"};
    if (gt_is_step_name(name))
        return RANGE_STEP;
    for (size_t i = 0; i < G_N_ELEMENTS(phases); i++)
        if (strcmp(name, phases[i]) == 0)
            return RANGE_PHASE;
    if (strstr(name, "::"))
        return RANGE_OP;
    size_t n = strlen(name);
    if (n > 9 && strcmp(name + n - 9, " backward") == 0)
        n -= 9;
    /* A qualified module name: identifiers joined by dots, no spaces. */
    gboolean dotted = FALSE;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (c == '.')
            dotted = i > 0 && i + 1 < n;
        else if (!g_ascii_isalnum(c) && c != '_')
            return RANGE_OTHER;
    }
    return dotted ? RANGE_MODULE : n > 0 ? RANGE_WORD : RANGE_OTHER;
}

/* kind_of_range, once per name: millions of ranges share a few names. */
static range_kind range_kind_of_name(loader *ld, uint32_t name)
{
    GByteArray *k = ld->kind_of_name;
    if (name >= k->len) {
        guint old = k->len;
        g_byte_array_set_size(k, name + 1);
        memset(k->data + old, 0, k->len - old);
    }
    if (k->data[name] == 0)
        k->data[name] = (guint8)(kind_of_range(gv_trace_model_name(ld->m, name)) + 1);
    return (range_kind)(k->data[name] - 1);
}

/* Each thread's NVTX lanes named by what at least 80% of their ranges are:
 * steps, phases, ops; modules only below a lane of phases (a root module
 * "Net" has no dot, a Python call "model.forward" has one). A thread of
 * python calls keeps its name. Under the model's lock: frames read the
 * labels. */
static void name_range_lanes(loader *ld)
{
    static const char *const label[N_RANGE_KINDS] = {"steps", "phases", "modules", "ops", NULL, NULL};
    GHashTableIter it;
    gpointer value;
    g_mutex_lock(&ld->m->lock);
    g_hash_table_iter_init(&it, ld->threads);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        thread_state *ts = value;
        if (strcmp(ts->ranges, "NVTX ranges") != 0)
            continue;
        int64_t phase_depth = INT64_MAX;
        for (size_t j = 0; j < ts->track->n_lanes; j++) {
            const GvLane *l = ts->track->lanes[j];
            const uint32_t *k = l->kind == GV_ITEM_NVTX && l->key >= 0 && l->key < NAMED_DEPTHS ? ts->kinds[l->key] : NULL;
            if (k && k[RANGE_PHASE] > 0 && l->key < phase_depth)
                phase_depth = l->key;
        }
        for (size_t j = 0; j < ts->track->n_lanes; j++) {
            GvLane *l = ts->track->lanes[j];
            if (l->kind != GV_ITEM_NVTX || l->key < 0 || l->key >= NAMED_DEPTHS)
                continue;
            const uint32_t *k = ts->kinds[l->key];
            uint64_t total = 0;
            for (int i = 0; i < N_RANGE_KINDS; i++)
                total += k[i];
            int best = RANGE_OTHER;
            for (int i = 0; i < RANGE_WORD; i++)
                if (i != RANGE_MODULE && total > 0 && k[i] * 5 >= total * 4)
                    best = i;
            if (best == RANGE_OTHER && l->key > phase_depth && (k[RANGE_MODULE] + k[RANGE_WORD]) * 5 >= total * 4)
                best = RANGE_MODULE;
            if (label[best] == NULL)
                continue;
            if (best == RANGE_STEP || best == RANGE_PHASE)
                g_strlcpy(l->label, label[best], sizeof l->label);
            else
                g_snprintf(l->label, sizeof l->label, "%s, depth %d", label[best], (int)l->key);
        }
    }
    g_mutex_unlock(&ld->m->lock);
}

static void thread_state_free(gpointer p)
{
    thread_state *ts = p;
    g_array_unref(ts->open_ends);
    g_free(ts);
}

static GvLane *stream_lane(loader *ld, dev_state *d, int32_t stream, GvItemKind kind, const char *fmt)
{
    GvLane *l = find_lane(d->track, kind == GV_ITEM_CPU_OP ? GV_ITEM_CPU_OP : GV_ITEM_KERNEL, stream);
    if (!l) {
        char label[64];
        snprintf(label, sizeof label, fmt, stream);
        l = add_lane(ld, d->track, kind == GV_ITEM_CPU_OP ? GV_ITEM_CPU_OP : GV_ITEM_KERNEL, stream, label);
    }
    return l;
}

static void take_event(loader *ld, const gt_event *ev)
{
    switch (ev->kind) {
    case GT_EV_KERNEL: {
        const gt_kernel *k = &ev->u.kernel;
        dev_state *d = device(ld, k->device_id);
        GvLane *l = stream_lane(ld, d, k->stream_id, GV_ITEM_KERNEL, "stream %d");
        /* nsys's short name drops the template arguments that tell kernels apart: ours keeps the first. */
        gt_string_id nm = k->demangled_name && *gt_trace_string(ld->t, k->demangled_name) ? k->demangled_name
                          : k->short_name                                                ? k->short_name
                                                                                         : k->mangled_name;
        GvItem it = {k->start_ns, k->end_ns, k->correlation_id, name_of_id(ld, nm, NAME_KERNEL), GV_ITEM_KERNEL, 0,
                     0};
        lane_append(ld, l, &it);
        break;
    }
    case GT_EV_MEMCPY: {
        const gt_memcpy *c = &ev->u.memcpy;
        dev_state *d = device(ld, c->device_id);
        GvLane *l = stream_lane(ld, d, c->stream_id, GV_ITEM_KERNEL, "stream %d");
        int kind = c->copy_kind >= 0 && c->copy_kind <= GT_COPY_PTOP ? c->copy_kind : 0;
        char name[32];
        snprintf(name, sizeof name, "Memcpy %s", gt_copy_kind_name(kind));
        GvItem it = {c->start_ns, c->end_ns, c->correlation_id, name_of_string(ld, name), GV_ITEM_MEMCPY,
                     (uint8_t)kind, 0};
        lane_append(ld, l, &it);
        break;
    }
    case GT_EV_MEMSET: {
        const gt_memset *s = &ev->u.memset;
        dev_state *d = device(ld, s->device_id);
        GvLane *l = stream_lane(ld, d, s->stream_id, GV_ITEM_KERNEL, "stream %d");
        GvItem it = {s->start_ns, s->end_ns, s->correlation_id, name_of_string(ld, "Memset"), GV_ITEM_MEMSET, 0, 0};
        lane_append(ld, l, &it);
        break;
    }
    case GT_EV_CPU_OP: {
        const gt_cpu_op *o = &ev->u.cpu_op;
        dev_state *d = device(ld, -1);
        GvLane *l = stream_lane(ld, d, o->stream_id, GV_ITEM_CPU_OP, "stream %d");
        GvItem it = {o->start_ns, o->end_ns, 0, name_of_id(ld, o->name, NAME_AS_IS), GV_ITEM_CPU_OP, 0, 0};
        lane_append(ld, l, &it);
        break;
    }
    case GT_EV_API: {
        const gt_api_call *a = &ev->u.api;
        thread_state *ts = thread(ld, a->global_tid);
        gboolean driver = a->event_class == GT_API_DRIVER;
        GvLane **lp = driver ? &ts->driver : &ts->api;
        if (!*lp)
            *lp = add_lane(ld, ts->track, GV_ITEM_API, driver ? 1000001 : 1000000,
                           driver ? "CUDA driver" : "CUDA API");
        GvItem it = {a->start_ns, a->end_ns, a->correlation_id, name_of_id(ld, a->name, NAME_API), GV_ITEM_API,
                     (uint8_t)(a->return_value != 0), 0};
        lane_append(ld, *lp, &it);
        break;
    }
    case GT_EV_NVTX: {
        const gt_nvtx *n = &ev->u.nvtx;
        if (n->event_type == GT_NVTX_MARK) {
            thread_state *ts = thread(ld, n->global_tid);
            if (!ts->marks)
                ts->marks = add_lane(ld, ts->track, GV_ITEM_MARK, MARK_LANE_KEY, "NVTX marks");
            /* An instant: its payload's bytes ride in corr, their type in aux. */
            _Static_assert(sizeof n->payload == sizeof(int64_t), "an NVTX payload fits in an item's corr");
            int64_t bits;
            memcpy(&bits, &n->payload, sizeof bits);
            GvItem it = {n->start_ns, n->start_ns, n->payload_kind == GT_PAYLOAD_NONE ? 0 : bits,
                         name_of_id(ld, n->text, NAME_AS_IS), GV_ITEM_MARK, (uint8_t)n->payload_kind,
                         n->has_color ? color_slot(ld, n->color) : 0};
            lane_append(ld, ts->marks, &it);
            break;
        }
        if ((n->event_type != GT_NVTX_PUSHPOP && n->event_type != GT_NVTX_STARTEND) || n->end_ns < n->start_ns)
            break;
        thread_state *ts = thread(ld, n->global_tid);
        GArray *st = ts->open_ends;
        while (st->len > 0 && g_array_index(st, int64_t, st->len - 1) <= n->start_ns)
            g_array_set_size(st, st->len - 1);
        int depth = (int)st->len;
        g_array_append_val(st, n->end_ns);
        GvLane *l = find_lane(ts->track, GV_ITEM_NVTX, depth);
        if (!l) {
            char label[64]; /* nested ones by how deep: "python calls, depth 3" */
            if (depth == 0)
                snprintf(label, sizeof label, "%s", ts->ranges);
            else
                snprintf(label, sizeof label, "%s, depth %d", ts->ranges, depth);
            l = add_lane(ld, ts->track, GV_ITEM_NVTX, depth, label);
        }
        uint32_t name = name_of_id(ld, n->text, NAME_AS_IS);
        if (depth < NAMED_DEPTHS)
            ts->kinds[depth][range_kind_of_name(ld, name)]++;
        GvItem it = {n->start_ns, n->end_ns, 0, name, GV_ITEM_NVTX, (uint8_t)(depth > 255 ? 255 : depth),
                     n->has_color ? color_slot(ld, n->color) : 0};
        lane_append(ld, l, &it);
        break;
    }
    case GT_EV_SYNC: {
        const gt_sync *y = &ev->u.sync;
        if (y->end_ns < y->start_ns)
            break;
        static const char *const what[] = {"sync", "event sync", "stream wait event", "stream sync", "context sync"};
        int type = y->sync_type >= 0 && y->sync_type <= GT_SYNC_CONTEXT ? y->sync_type : GT_SYNC_UNKNOWN;
        char name[64];
        if (y->stream_id >= 0) /* nsys writes -1 (as 2^32 - 1) for no stream */
            snprintf(name, sizeof name, "%s (stream %d)", what[type], y->stream_id);
        else
            snprintf(name, sizeof name, "%s", what[type]);
        dev_state *d = device(ld, y->device_id);
        GvLane *l = find_lane(d->track, GV_ITEM_SYNC, SYNC_LANE_KEY);
        if (!l)
            l = add_lane(ld, d->track, GV_ITEM_SYNC, SYNC_LANE_KEY, "sync");
        GvItem it = {y->start_ns, y->end_ns, y->correlation_id, name_of_string(ld, name), GV_ITEM_SYNC, (uint8_t)type,
                     0};
        lane_append(ld, l, &it);
        break;
    }
    default:
        break;
    }
}

static void publish(loader *ld, GMainContext *ctx, int64_t n_items, int64_t start, int64_t end)
{
    GvTraceModel *m = ld->m;
    /* Only this thread adds tracks and lanes: it reads them without the lock.
     * Each lane's pyramid is brought up to date before the lock (gv-lane.h),
     * and one hold swaps them all in: a frame waits for a few stores per
     * lane, not for the pyramids' work, nor for a loader preempted in between. */
    for (guint i = 0; i < m->tracks->len; i++) {
        GvTrack *tr = g_ptr_array_index(m->tracks, i);
        for (size_t j = 0; j < tr->n_lanes; j++)
            if (tr->lanes[j]->n != tr->lanes[j]->n_loaded) /* out of memory: the lane draws item by item */
                gv_lane_lod_prepare(tr->lanes[j], tr->lanes[j]->n_loaded);
    }
    g_mutex_lock(&m->lock);
    for (guint i = 0; i < m->tracks->len; i++) {
        GvTrack *tr = g_ptr_array_index(m->tracks, i);
        for (size_t j = 0; j < tr->n_lanes; j++)
            if (tr->lanes[j]->n != tr->lanes[j]->n_loaded)
                gv_lane_publish(tr->lanes[j], tr->lanes[j]->n_loaded);
    }
    m->n_items = n_items;
    m->span_start_ns = start;
    m->span_end_ns = end;
    g_mutex_unlock(&m->lock);
    gv_trace_model_emit_later(m, ctx, FALSE);
}

/* ---- the loading task ------------------------------------------------------------ */

static const gt_event_kind merged_kinds[] = {GT_EV_KERNEL, GT_EV_MEMCPY, GT_EV_MEMSET, GT_EV_CPU_OP, GT_EV_API,
                                             GT_EV_SYNC, GT_EV_NVTX, GT_EV_GPU_MEMORY, GT_EV_HEAP};
#define N_MERGED (sizeof merged_kinds / sizeof merged_kinds[0])

/* The report kept in t (report_kept.c), read once the first rows are on
 * screen so the summary and memory pages have something to say long before
 * the analysis on a big trace; none, or one an older build made, leaves
 * them waiting for it. Not before the first rows: it is handed out only
 * once the file's close mark is found to hold, which hashes the whole file
 * (seconds at 100 M events). */
static void keep_report(GvTraceModel *self, gt_trace *t)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    if (!f)
        return;
    int rc = gt_report_print_kept(t, false, f);
    if (fclose(f) != 0 || rc < 0) {
        free(text);
        gt_error_clear();
        return;
    }
    g_mutex_lock(&self->lock);
    self->kept_report = g_strdup(text);
    g_mutex_unlock(&self->lock);
    free(text);
}

static gboolean load_rows(loader *ld, GMainContext *ctx, GCancellable *cancellable, GError **error)
{
    gt_iter *its[N_MERGED] = {0};
    gt_event cur[N_MERGED];
    gboolean has[N_MERGED] = {0};
    gboolean ok = FALSE;
    int rc;
    int64_t n = 0, span_start = INT64_MAX, span_end = INT64_MIN;
    gint64 t_begin = g_get_monotonic_time(), t_last = 0;
    gboolean counted = FALSE;
    for (size_t k = 0; k < N_MERGED; k++) {
        if ((rc = gt_iter_new(&its[k], ld->t, merged_kinds[k], INT64_MIN, INT64_MAX)) < 0 ||
            (rc = gt_iter_next(its[k], &cur[k])) < 0) {
            gv_trace_model_fail(error, rc);
            goto cleanup;
        }
        has[k] = rc == 1;
    }
    for (;;) {
        size_t best = N_MERGED;
        int64_t best_start = INT64_MAX;
        for (size_t k = 0; k < N_MERGED; k++)
            if (has[k] && (best == N_MERGED || gt_event_start(&cur[k]) < best_start)) {
                best = k;
                best_start = gt_event_start(&cur[k]);
            }
        if (best == N_MERGED)
            break;
        take_event(ld, &cur[best]);
        if (ld->failed_oom) {
            g_set_error(error, GV_ERROR, -GT_ERR_NOMEM, "%s: out of memory after %lld events", ld->m->path,
                        (long long)n);
            goto cleanup;
        }
        int64_t end = gt_event_end(&cur[best]);
        if (best_start < span_start)
            span_start = best_start;
        if (end > span_end)
            span_end = end;
        n++;
        if ((rc = gt_iter_next(its[best], &cur[best])) < 0) {
            gv_trace_model_fail(error, rc);
            goto cleanup;
        }
        has[best] = rc == 1;
        if ((n & 4095) == 0) {
            gint64 now = g_get_monotonic_time();
            if (now - (t_last ? t_last : t_begin) >= (t_last ? PUBLISH_US : FIRST_PUBLISH_US)) {
                publish(ld, ctx, n, span_start, span_end);
                t_last = g_get_monotonic_time();
                if (!counted) { /* the total, for progress: after the first rows, not before */
                    keep_report(ld->m, ld->t);
                    int64_t total = 0, c;
                    for (size_t k = 0; k < N_MERGED; k++)
                        if (gt_trace_count(ld->t, merged_kinds[k], &c) == 0)
                            total += c;
                    g_mutex_lock(&ld->m->lock);
                    ld->m->n_total = total;
                    g_mutex_unlock(&ld->m->lock);
                    counted = TRUE;
                }
            }
            if (g_cancellable_set_error_if_cancelled(cancellable, error))
                goto cleanup;
        }
    }
    name_range_lanes(ld);
    if (!counted) /* rows too few to publish before the last */
        keep_report(ld->m, ld->t);
    publish(ld, ctx, n, span_start == INT64_MAX ? 0 : span_start, span_end == INT64_MIN ? 0 : span_end);
    ok = TRUE;
cleanup:
    for (size_t k = 0; k < N_MERGED; k++)
        gt_iter_free(its[k]);
    return ok;
}

/* What the analysis found, into lanes: each device's idle gaps with their
 * causes, and the CPU timeline's NVTX compute ops (one lane per thread;
 * GTRACE_CPU_OPS rows are in their stream lanes already). */
static gboolean add_analysed_lanes(loader *ld, const gt_analysis *a, GMainContext *ctx)
{
    size_t n_gaps, n_ops;
    const gt_gap_span *gaps = gt_analysis_gaps(a, &n_gaps);
    const gt_compute_op *ops = gt_analysis_compute_ops(a, &n_ops);
    for (size_t i = 0; i < n_gaps; i++) {
        GvItem g = {gaps[i].start_ns, gaps[i].end_ns, 0, 0, GV_ITEM_GAP, (uint8_t)gaps[i].cause, 0};
        lane_append(ld, device(ld, gaps[i].device_id)->gaps, &g);
    }
    for (size_t i = 0; i < n_ops; i++) {
        if (!ops[i].nvtx)
            continue;
        dev_state *d = device(ld, -1);
        int64_t key = gt_tid_of(ops[i].tid);
        GvLane *ol = find_lane(d->track, GV_ITEM_CPU_OP, key);
        if (!ol) {
            char label[64];
            snprintf(label, sizeof label, "ops of thread %lld", (long long)key);
            ol = add_lane(ld, d->track, GV_ITEM_CPU_OP, key, label);
        }
        GvItem op = {ops[i].start_ns, ops[i].end_ns, 0, name_of_string(ld, ops[i].name), GV_ITEM_CPU_OP, 0, 0};
        lane_append(ld, ol, &op);
    }
    if (ld->failed_oom)
        return FALSE;
    int64_t start, end;
    gv_trace_model_span(ld->m, &start, &end);
    publish(ld, ctx, ld->m->n_items, start, end);
    return TRUE;
}

/* Each process's memory series, stacked for drawing; a trace without
 * allocation events has none. */
static GvMemory **memories_of(const gt_analysis *a, size_t *out_n)
{
    size_t n = gt_analysis_n_memories(a);
    GvMemory **v = g_new0(GvMemory *, n ? n : 1);
    *out_n = 0;
    for (size_t i = 0; i < n; i++) {
        gt_mem_series s;
        if (gt_analysis_memory(&s, a, i) == 0 && s.n_samples > 0)
            v[(*out_n)++] = gv_memory_from_series(&s);
    }
    return v;
}

typedef struct load_data { char *path; GMainContext *ctx; } load_data;

static void load_data_free(gpointer p)
{
    load_data *d = p;
    g_free(d->path);
    g_main_context_unref(d->ctx);
    g_free(d);
}

static void load_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
    GvTraceModel *self = source;
    load_data *d = task_data;
    GError *error = NULL;
    gt_trace *t = NULL;
    loader ld = {.m = self};
    gt_analysis *analysis = NULL;
    GvMemory **memories = NULL;
    size_t n_memories = 0;
    char *trace_path = NULL;
    gt_import_format fmt;
    int rc;

    g_mutex_lock(&self->trace_lock);
    /* A torch.profiler trace or a memory snapshot is imported here, off the
     * main thread, into a temporary trace removed at exit; the model keeps
     * the name it was given. */
    if ((rc = gt_open_any(&trace_path, &fmt, d->path)) < 0) {
        gv_trace_model_fail(&error, rc);
        goto cleanup;
    }
    if (fmt)
        fprintf(stderr, "gtrace-view: %s: imported as a %s (gtrace import keeps it as a trace)\n", d->path,
                gt_open_any_format_name(fmt));
    /* The integrity check of a big file (1.4 s for 500 MB) runs beside the
     * loading instead of before the first frame; its verdict is asked for
     * once the rows are in. */
    if ((rc = gt_trace_open(&t, trace_path, GT_OPEN_CHECK_LATER)) < 0) {
        gv_trace_model_fail(&error, rc);
        goto cleanup;
    }
    self->trace = t;
    ld.t = t;
    ld.name_of_id = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    ld.name_of_str = g_hash_table_new(g_str_hash, g_str_equal);
    ld.slot_of_color = g_hash_table_new(g_direct_hash, g_direct_equal);
    ld.devs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    ld.threads = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, thread_state_free);
    ld.kind_of_name = g_byte_array_new();
    if (!load_rows(&ld, d->ctx, cancellable, &error))
        goto cleanup;
    g_atomic_int_set(&self->loaded, TRUE);
    if ((rc = gt_trace_check(t)) < 0) {
        /* Damaged after all: the rows read stay on screen, the error beside them. */
        gv_trace_model_fail(&error, rc);
        g_mutex_lock(&self->lock);
        self->problem = g_strdup(error->message);
        g_mutex_unlock(&self->lock);
        gv_trace_model_emit_later(self, d->ctx, FALSE);
        goto cleanup;
    }
    gv_trace_model_emit_later(self, d->ctx, FALSE);

    gt_report_options opt;
    gt_report_options_init(&opt);
    opt.top_n = REPORT_TOP_N;
    if ((rc = gt_analysis_load(&analysis, t, &opt)) < 0) {
        gv_trace_model_fail(&error, rc);
        goto cleanup;
    }
    if (!add_analysed_lanes(&ld, analysis, d->ctx)) {
        g_set_error(&error, GV_ERROR, -GT_ERR_NOMEM, "%s: out of memory", d->path);
        goto cleanup;
    }
    memories = memories_of(analysis, &n_memories);
    g_mutex_lock(&self->lock);
    self->analysis = analysis;
    analysis = NULL;
    self->report = gt_analysis_report(self->analysis);
    self->memories = memories;
    self->n_memories = n_memories;
    g_mutex_unlock(&self->lock);
    g_atomic_int_set(&self->analysed, TRUE);
    gv_trace_model_emit_later(self, d->ctx, TRUE);
cleanup:
    if (ld.name_of_id) {
        g_hash_table_unref(ld.name_of_id);
        g_hash_table_unref(ld.name_of_str);
        g_hash_table_unref(ld.slot_of_color);
        g_hash_table_unref(ld.devs);
        g_hash_table_unref(ld.threads);
        g_byte_array_unref(ld.kind_of_name);
    }
    gt_analysis_free(analysis);
    free(trace_path);
    g_mutex_unlock(&self->trace_lock);
    if (error)
        g_task_return_error(task, error);
    else
        g_task_return_boolean(task, TRUE);
}

/* The loader's own thread, not one of GLib's pool: it lowers its priority
 * (Linux: per thread), so on a busy machine the main thread's frames come
 * before the loading, and the threads the loading starts (the store's
 * integrity check, the analysis) inherit it. */
static gpointer loader_main(gpointer p)
{
    GTask *task = p;
#ifdef __linux__
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), LOADER_NICE); /* refused: it runs as it was */
#endif
    load_thread(task, g_task_get_source_object(task), g_task_get_task_data(task), g_task_get_cancellable(task));
    g_object_unref(task);
    return NULL;
}

void gv_trace_model_load_async(GvTraceModel *self, const char *path, GCancellable *cancellable,
                               GAsyncReadyCallback callback, gpointer user_data)
{
    g_return_if_fail(GV_IS_TRACE_MODEL(self));
    g_return_if_fail(path != NULL);
    g_return_if_fail(!self->loading);
    self->loading = TRUE;
    self->path = g_strdup(path);
    gv_trace_model_notify_path(self);
    GTask *task = g_task_new(self, cancellable, callback, user_data);
    load_data *d = g_new0(load_data, 1);
    d->path = g_strdup(path);
    d->ctx = g_main_context_ref_thread_default();
    g_task_set_task_data(task, d, load_data_free);
    GError *error = NULL;
    GThread *th = g_thread_try_new("gv-loader", loader_main, task, &error); /* it owns the task's ref */
    if (!th) {
        g_task_return_error(task, error);
        g_object_unref(task);
        return;
    }
    g_thread_unref(th);
}

gboolean gv_trace_model_load_finish(GvTraceModel *self, GAsyncResult *result, GError **error)
{
    g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
    return g_task_propagate_boolean(G_TASK(result), error);
}

typedef struct sync_wait { gboolean done, ok; GError *error; } sync_wait;

static void sync_done(GObject *src, GAsyncResult *res, gpointer p)
{
    sync_wait *w = p;
    w->ok = gv_trace_model_load_finish(GV_TRACE_MODEL(src), res, &w->error);
    w->done = TRUE;
}

gboolean gv_trace_model_load(GvTraceModel *self, const char *path, GError **error)
{
    sync_wait w = {0};
    gv_trace_model_load_async(self, path, NULL, sync_done, &w);
    while (!w.done)
        g_main_context_iteration(NULL, TRUE);
    if (!w.ok)
        g_propagate_error(error, w.error);
    return w.ok;
}
