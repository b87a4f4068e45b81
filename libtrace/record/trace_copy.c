/* trace_copy.c: traces copied into one new trace through the store's reader
 * and writer (see trace_copy.h). Events are read kind by kind in time order
 * and written in batches of ROWS_PER_BATCH; a signal the launcher caught
 * (gt_record_stop_signal) stops the copy. It knows nothing of parts
 * directories, loss tables or clocks: its callers say what goes in and how
 * times and pids move. */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record_int.h"
#include "trace_copy.h"

#define ROWS_PER_BATCH 50000
#define MAX_FRAMES 128

volatile sig_atomic_t gt_record_stop_signal;

typedef struct id_set { /* a small growing set of int64 (processes, GPUs) */
    int64_t *v;
    size_t n, cap;
} id_set;

static bool set_has(const id_set *s, int64_t x)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == x)
            return true;
    return false;
}

static int set_add(id_set *s, int64_t x)
{
    if (set_has(s, x))
        return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        int64_t *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return gt_error_set(GT_ERR_NOMEM, "out of memory copying the trace");
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = x;
    return 0;
}

/* Callchain ids of one trace, old to new: open addressing, keys != 0. */
typedef struct id_map {
    int64_t (*slots)[2]; /* (cap) */
    size_t n, cap;
} id_map;

static size_t slot_of(const id_map *m, int64_t key)
{
    uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15u;
    size_t i = (size_t)(h >> 20) & (m->cap - 1);
    while (m->slots[i][0] != 0 && m->slots[i][0] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

/* The new id of `key`, given the next free one when it is new. */
static int map_get(id_map *m, int64_t key, int64_t *next_id, int64_t *out)
{
    if (2 * (m->n + 1) > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        id_map grown = {calloc(cap, sizeof *grown.slots), 0, cap};
        if (!grown.slots)
            return gt_error_set(GT_ERR_NOMEM, "out of memory copying the trace");
        for (size_t i = 0; i < m->cap; i++)
            if (m->slots[i][0] != 0) {
                size_t j = slot_of(&grown, m->slots[i][0]);
                grown.slots[j][0] = m->slots[i][0];
                grown.slots[j][1] = m->slots[i][1];
                grown.n++;
            }
        free(m->slots);
        *m = grown;
    }
    size_t i = slot_of(m, key);
    if (m->slots[i][0] == 0) {
        m->slots[i][0] = key;
        m->slots[i][1] = (*next_id)++;
        m->n++;
    }
    *out = m->slots[i][1];
    return 0;
}

typedef struct dropped_row {
    int64_t global_pid;
    int64_t n[GT_EV_N_KINDS];
} dropped_row;

struct gt_copy {
    gt_writer *w;
    int64_t n_rows_in_batch;
    int64_t next_callchain_id;
    id_set pids, gpus;
    id_set config_pids; /* global pids whose entries were copied (no run_prefix) */
    dropped_row *dropped;
    size_t n_dropped;
};

int gt_copy_new(gt_copy **out, const char *path)
{
    gt_copy *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c)
        return gt_error_set(GT_ERR_NOMEM, "out of memory copying the trace");
    c->next_callchain_id = 1;
    int rc = gt_writer_open(&c->w, path, 0);
    if (rc == 0)
        rc = gt_writer_begin(c->w);
    if (rc != 0) {
        gt_copy_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

gt_writer *gt_copy_writer(gt_copy *c) { return c->w; }

int gt_copy_add_process(gt_copy *c, int64_t pid, const char *name)
{
    if (set_has(&c->pids, pid))
        return 0;
    int rc = set_add(&c->pids, pid);
    return rc != 0 ? rc : gt_writer_add_process(c->w, pid, name ? name : "");
}

int64_t gt_copy_global_id(const gt_copy_map *map, int64_t global_id)
{
    if (global_id == 0)
        return 0;
    int64_t pid = gt_pid_of(global_id);
    for (size_t i = 0; i < map->n_pids; i++)
        if (map->pids[i][0] == pid)
            return (global_id & ~((int64_t)0xffffff << 24)) | ((map->pids[i][1] & 0xffffff) << 24);
    return global_id;
}

static int64_t pid_of_map(const gt_copy_map *map, int64_t pid)
{
    return gt_pid_of(gt_copy_global_id(map, gt_global_pid(pid)));
}

static int32_t move_device(const gt_copy_map *map, int32_t id)
{
    for (size_t i = 0; i < map->n_devices; i++)
        if (map->devices[i][0] == id)
            return map->devices[i][1];
    return id;
}

static int64_t move_time(const gt_copy_map *map, int64_t t)
{
    return (int64_t)llroundl(map->offset_ns + (long double)t * map->scale);
}

/* Times and ids of one event, as the map says. */
static void move_event(const gt_copy_map *map, gt_event *ev)
{
    int64_t *start = NULL, *end = NULL, *gpid = NULL, *gtid = NULL;
    int32_t *device = NULL;
    switch (ev->kind) {
    case GT_EV_KERNEL:
        start = &ev->u.kernel.start_ns, end = &ev->u.kernel.end_ns, gpid = &ev->u.kernel.global_pid;
        device = &ev->u.kernel.device_id;
        break;
    case GT_EV_MEMCPY:
        start = &ev->u.memcpy.start_ns, end = &ev->u.memcpy.end_ns, gpid = &ev->u.memcpy.global_pid;
        device = &ev->u.memcpy.device_id;
        ev->u.memcpy.src_device_id = move_device(map, ev->u.memcpy.src_device_id);
        ev->u.memcpy.dst_device_id = move_device(map, ev->u.memcpy.dst_device_id);
        break;
    case GT_EV_MEMSET:
        start = &ev->u.memset.start_ns, end = &ev->u.memset.end_ns, gpid = &ev->u.memset.global_pid;
        device = &ev->u.memset.device_id;
        break;
    case GT_EV_API: start = &ev->u.api.start_ns; end = &ev->u.api.end_ns; gtid = &ev->u.api.global_tid; break;
    case GT_EV_SYNC:
        start = &ev->u.sync.start_ns, end = &ev->u.sync.end_ns, gpid = &ev->u.sync.global_pid;
        device = &ev->u.sync.device_id;
        break;
    case GT_EV_NVTX:
        start = &ev->u.nvtx.start_ns;
        if (ev->u.nvtx.end_ns >= ev->u.nvtx.start_ns) /* else -1: an instant event */
            end = &ev->u.nvtx.end_ns;
        gtid = &ev->u.nvtx.global_tid;
        ev->u.nvtx.end_global_tid = gt_copy_global_id(map, ev->u.nvtx.end_global_tid);
        break;
    case GT_EV_GPU_MEMORY:
        start = &ev->u.gpu_memory.start_ns, gpid = &ev->u.gpu_memory.global_pid;
        device = &ev->u.gpu_memory.device_id;
        break;
    case GT_EV_HEAP: start = &ev->u.heap.start_ns; gtid = &ev->u.heap.global_tid; break;
    case GT_EV_CPU_OP: start = &ev->u.cpu_op.start_ns; end = &ev->u.cpu_op.end_ns; gtid = &ev->u.cpu_op.global_tid; break;
    default: break;
    }
    if (map->offset_ns != 0 || map->scale != 1) {
        if (start)
            *start = move_time(map, *start);
        if (end)
            *end = move_time(map, *end);
    }
    if (gpid)
        *gpid = gt_copy_global_id(map, *gpid);
    if (gtid)
        *gtid = gt_copy_global_id(map, *gtid);
    if (device)
        *device = move_device(map, *device);
}

static int add_row(gt_copy *c, const gt_event *ev)
{
    if (gt_record_stop_signal)
        return gt_error_set(GT_ERR_IO, "interrupted by signal %d while writing the trace", (int)gt_record_stop_signal);
    int rc = gt_writer_add(c->w, ev);
    if (rc == 0 && ++c->n_rows_in_batch >= ROWS_PER_BATCH) {
        rc = gt_writer_commit(c->w);
        if (rc == 0)
            rc = gt_writer_begin(c->w);
        c->n_rows_in_batch = 0;
    }
    return rc;
}

static int remap(gt_writer *w, gt_trace *t, gt_string_id *id)
{
    if (*id == 0)
        return 0;
    return gt_writer_intern(w, gt_trace_string(t, *id), id);
}

/* The strings of an event interned in the copy; its callchain, if any, in *chain. */
static int remap_strings(gt_writer *w, gt_trace *t, gt_event *ev, int64_t **chain)
{
    int rc = 0;
    *chain = NULL;
    switch (ev->kind) {
    case GT_EV_KERNEL:
        rc = remap(w, t, &ev->u.kernel.demangled_name);
        if (rc == 0)
            rc = remap(w, t, &ev->u.kernel.short_name);
        if (rc == 0)
            rc = remap(w, t, &ev->u.kernel.mangled_name);
        break;
    case GT_EV_API: rc = remap(w, t, &ev->u.api.name); *chain = &ev->u.api.callchain_id; break;
    case GT_EV_NVTX: rc = remap(w, t, &ev->u.nvtx.text); break;
    case GT_EV_GPU_MEMORY: *chain = &ev->u.gpu_memory.callchain_id; break;
    case GT_EV_HEAP: rc = remap(w, t, &ev->u.heap.name); *chain = &ev->u.heap.callchain_id; break;
    case GT_EV_CPU_OP: rc = remap(w, t, &ev->u.cpu_op.name); break;
    default: break;
    }
    return rc;
}

/* The frames of every callchain the events named, under their new ids. */
static int copy_callchains(gt_copy *c, gt_trace *t, const id_map *chains)
{
    int rc = 0;
    for (size_t i = 0; i < chains->cap && rc == 0; i++) {
        if (chains->slots[i][0] == 0)
            continue;
        const gt_frame *frames;
        size_t n;
        if (gt_trace_callchain(t, chains->slots[i][0], &frames, &n) != 0)
            continue; /* referenced but never written (the process was killed first) */
        gt_frame copy[MAX_FRAMES];
        if (n > MAX_FRAMES)
            n = MAX_FRAMES;
        for (size_t f = 0; f < n && rc == 0; f++) {
            copy[f] = frames[f];
            rc = remap(c->w, t, &copy[f].symbol);
            if (rc == 0)
                rc = remap(c->w, t, &copy[f].module);
        }
        if (rc == 0)
            rc = gt_writer_add_callchain(c->w, chains->slots[i][1], copy, n);
    }
    return rc;
}

static int copy_events(gt_copy *c, gt_trace *t, const gt_copy_map *map)
{
    id_map chains = {0};
    int rc = 0;
    for (int k = 0; k < GT_EV_N_KINDS && rc == 0; k++) {
        gt_iter *it = NULL;
        rc = gt_iter_new(&it, t, (gt_event_kind)k, INT64_MIN, INT64_MAX);
        if (rc != 0)
            break;
        gt_event ev;
        int more;
        while (rc == 0 && (more = gt_iter_next(it, &ev)) == 1) {
            int64_t *chain;
            rc = remap_strings(c->w, t, &ev, &chain);
            if (rc == 0 && chain && *chain)
                rc = map_get(&chains, *chain, &c->next_callchain_id, chain);
            move_event(map, &ev);
            if (rc == 0)
                rc = add_row(c, &ev);
        }
        if (rc == 0 && more < 0)
            rc = more;
        gt_iter_free(it);
    }
    if (rc == 0)
        rc = copy_callchains(c, t, &chains);
    free(chains.slots);
    return rc;
}

/* One trace's entries (see gt_copy_map.run_prefix). */
typedef struct config_copy {
    gt_copy *c;
    const gt_copy_map *map;
    id_set seen_here;
} config_copy;

static bool is_run_key(const char *key)
{
    static const char *const keys[] = {"command_line", "gtrace_options", "root_pid", GT_RECORD_CLOCK_END_KEY,
                                       GT_RECORD_CLOCK_END_UTC_KEY};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strcmp(key, keys[i]))
            return true;
    return false;
}

static int copy_config_row(void *ctx, int64_t gpid, const char *key, const char *value)
{
    config_copy *cc = ctx;
    const gt_copy_map *map = cc->map;
    if (map->run_prefix) {
        if (gpid != 0)
            return gt_writer_add_config(cc->c->w, gt_copy_global_id(map, gpid), key, value);
        char name[512], moved[32];
        snprintf(name, sizeof name, "%s%s", map->run_prefix, key);
        if (!strcmp(key, "root_pid") && value) {
            snprintf(moved, sizeof moved, "%lld", (long long)pid_of_map(map, atoll(value)));
            value = moved;
        }
        return gt_writer_add_config(cc->c->w, 0, name, value);
    }
    if (set_has(&cc->c->config_pids, gpid))
        return 0;
    if (gpid == 0 && is_run_key(key))
        return 0;
    int rc = set_has(&cc->seen_here, gpid) ? 0 : set_add(&cc->seen_here, gpid);
    return rc != 0 ? rc : gt_writer_add_config(cc->c->w, gpid, key, value);
}

static int copy_config(gt_copy *c, gt_trace *t, const gt_copy_map *map)
{
    config_copy cc = {c, map, {0}};
    int rc = gt_trace_each_config(t, copy_config_row, &cc);
    for (size_t i = 0; i < cc.seen_here.n && rc == 0; i++)
        rc = set_add(&c->config_pids, cc.seen_here.v[i]);
    free(cc.seen_here.v);
    return rc;
}

static int copy_descriptions(gt_copy *c, gt_trace *t, const gt_copy_map *map)
{
    size_t n;
    int rc = 0;
    const gt_process *procs = gt_trace_processes(t, &n);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = gt_copy_add_process(c, pid_of_map(map, procs[i].pid), procs[i].name);
    const gt_thread *threads = gt_trace_threads(t, &n);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = gt_writer_add_thread_name(c->w, gt_copy_global_id(map, threads[i].global_tid),
                                       threads[i].name ? threads[i].name : "", 0);
    const gt_gpu_info *gpus = gt_trace_gpus(t, &n);
    for (size_t i = 0; i < n && rc == 0; i++) {
        gt_gpu_info gpu = gpus[i];
        gpu.id = move_device(map, gpu.id);
        if (set_has(&c->gpus, gpu.id))
            continue;
        rc = set_add(&c->gpus, gpu.id);
        if (rc == 0)
            rc = gt_writer_add_gpu(c->w, &gpu);
    }
    return rc;
}

int gt_copy_trace(gt_copy *c, gt_trace *t, const gt_copy_map *map, const int64_t *dropped)
{
    int rc = copy_descriptions(c, t, map);
    if (rc == 0)
        rc = copy_config(c, t, map);
    if (rc == 0)
        rc = copy_events(c, t, map);
    int64_t own[GT_EV_N_KINDS];
    if (!dropped) {
        gt_record_dropped(t, own);
        dropped = own;
    }
    size_t n;
    const gt_process *procs = gt_trace_processes(t, &n);
    if (rc == 0)
        rc = gt_copy_add_dropped(c, n ? gt_copy_global_id(map, procs[0].global_pid) : 0, dropped);
    return rc;
}

int gt_copy_add_dropped(gt_copy *c, int64_t gpid, const int64_t n[GT_EV_N_KINDS])
{
    dropped_row *row = NULL;
    for (size_t i = 0; i < c->n_dropped; i++)
        if (c->dropped[i].global_pid == gpid)
            row = &c->dropped[i];
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        if (n[k] <= 0)
            continue;
        if (!row) {
            dropped_row *v = realloc(c->dropped, (c->n_dropped + 1) * sizeof *v);
            if (!v)
                return gt_error_set(GT_ERR_NOMEM, "out of memory copying the trace");
            c->dropped = v;
            row = &c->dropped[c->n_dropped++];
            memset(row, 0, sizeof *row);
            row->global_pid = gpid;
        }
        row->n[k] += n[k];
    }
    return 0;
}

int gt_copy_finish(gt_copy *c)
{
    int rc = 0;
    for (size_t i = 0; i < c->n_dropped && rc == 0; i++)
        for (int k = 0; k < GT_EV_N_KINDS && rc == 0; k++)
            if (c->dropped[i].n[k] > 0)
                rc = gt_writer_add_dropped(c->w, c->dropped[i].global_pid, (gt_event_kind)k, c->dropped[i].n[k]);
    if (rc == 0)
        rc = gt_writer_commit(c->w);
    if (rc == 0) {
        rc = gt_writer_close(c->w);
        c->w = NULL;
    }
    gt_copy_free(c);
    return rc;
}

void gt_copy_free(gt_copy *c)
{
    if (!c)
        return;
    gt_writer_free(c->w);
    free(c->pids.v);
    free(c->gpus.v);
    free(c->config_pids.v);
    free(c->dropped);
    free(c);
}
