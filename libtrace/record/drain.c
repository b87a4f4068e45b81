/* drain.c: the collector's side of the records: turns what a process's
 * rings hold into gt_event rows, resolves registered strings and interns
 * every string, converts stamps to trace time, and pairs the starts and ends
 * of start/end ranges (the end may be recorded on another thread, and
 * drained before its start).
 *
 * Every event is accounted for: a row is counted per kind while its batch
 * is open; a batch that fails (full disk, file size limit) moves its count
 * to the lost events, and once writing has failed the drain goes on pairing
 * and counting without writing (gt_drain_discard), so that what a process
 * emitted is exactly what its trace holds plus what it reports lost.
 *
 * Runs only on the collector thread, inside a gt_writer batch; it does not
 * know the rings or when batches begin and end (collect.c). What a record
 * says is not trusted: strings are read only up to the record's end, and a
 * registered string only from the part of the process's string area it
 * has filled. An event whose registered string is not there (an id its
 * process never made, or one of another process) is not written under a
 * wrong name: it is dropped, counted, and said at the end.
 */
#define _GNU_SOURCE
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drain.h"
#include "record_int.h"
#include "tsc_clock.h"

typedef struct pending {       /* half of a start/end range */
    int64_t range_id;          /* 0: free slot */
    bool have_start, have_end;
    bool end_lost;             /* its end found no room: the range is lost (counted) */
    bool start_dropped;        /* its start was dropped (counted): its end is ignored */
    gt_nvtx start;             /* when have_start */
    int64_t end_ns;            /* when have_end */
    int64_t end_global_tid;
} pending;

struct gt_drain {
    gt_writer *w;
    int64_t pid;
    const gt_shm_header *shm;  /* the process's region */
    int first_error;           /* the first gt_writer error, 0 if none */
    bool discarding;           /* writing failed: rows are counted as lost, not written */
    int64_t n_batch[GT_EV_N_KINDS]; /* rows added in the open batch */
    int64_t n_lost[GT_EV_N_KINDS];  /* rows that will never reach the file */
    pending *table;            /* open addressing on range_id */
    size_t n_slots, n_used;
    int32_t named[256];        /* threads named through NVTX (their OS name is not written) */
    size_t n_named;
    int64_t n_unresolved;      /* events dropped: their registered string is not in the region */
    uint64_t first_unresolved; /* the first such id */
};

int gt_drain_new(gt_drain **out, gt_writer *w, int64_t pid, const gt_shm_header *shm)
{
    gt_drain *d = calloc(1, sizeof *d);
    if (!d)
        return GT_ERR_NOMEM;
    d->w = w;
    d->pid = pid;
    d->shm = shm;
    d->n_slots = 256;
    d->table = calloc(d->n_slots, sizeof *d->table);
    if (!d->table) {
        free(d);
        return GT_ERR_NOMEM;
    }
    *out = d;
    return 0;
}

void gt_drain_free(gt_drain *d)
{
    if (!d)
        return;
    free(d->table);
    free(d);
}

int gt_drain_error(const gt_drain *d)
{
    return d->first_error;
}

static void check(gt_drain *d, int rc)
{
    if (rc != 0 && d->first_error == 0)
        d->first_error = rc;
}

/* Nothing more goes to the file once a call failed: the batch is lost anyway. */
static bool writing(const gt_drain *d)
{
    return !d->discarding && d->first_error == 0;
}

static gt_string_id intern(gt_drain *d, const char *s)
{
    gt_string_id id = 0;
    if (!s || !writing(d))
        return 0;
    check(d, gt_writer_intern(d->w, s, &id));
    return id;
}

/* Every event row goes through here, to be counted. */
static void add_row(gt_drain *d, const gt_event *ev)
{
    if (writing(d)) {
        int rc = gt_writer_add(d->w, ev);
        if (rc == 0) {
            d->n_batch[ev->kind]++;
            return;
        }
        check(d, rc);
    }
    d->n_lost[ev->kind]++;
}

void gt_drain_batch_begin(gt_drain *d)
{
    memset(d->n_batch, 0, sizeof d->n_batch);
}

void gt_drain_batch_end(gt_drain *d, bool committed)
{
    if (!committed)
        for (int k = 0; k < GT_EV_N_KINDS; k++)
            d->n_lost[k] += d->n_batch[k];
    memset(d->n_batch, 0, sizeof d->n_batch);
}

void gt_drain_discard(gt_drain *d)
{
    d->discarding = true;
    d->w = NULL;
}

void gt_drain_take_lost(gt_drain *d, int64_t *out)
{
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        out[k] += d->n_lost[k];
        d->n_lost[k] = 0;
    }
}

int64_t gt_drain_stamp_to_ns(const gt_drain *d, uint64_t stamp)
{
    if (d->shm->stamp_tsc)
        return gt_clock_tsc_to_mono(stamp) - d->shm->t0_ns;
    return (int64_t)stamp - d->shm->t0_ns;
}

/* `s` if a NUL ends it before `end`, else NULL. */
static const char *bounded(const char *s, const char *end)
{
    if (!s || s >= end || !memchr(s, '\0', (size_t)(end - s)))
        return NULL;
    return s;
}

/* A registered string of the process, by id (shm.h): NULL unless it lies in
 * the part of the area the process has filled. A string is written before
 * any record names it, and a record is read after its ring's head, so the
 * area's use as read now covers every id the process has handed out. */
static const char *registered(const gt_drain *d, uint64_t id)
{
    uint64_t used = atomic_load_explicit(&d->shm->strings_used, memory_order_acquire);
    if (used > GT_SHM_STRINGS_BYTES)
        used = GT_SHM_STRINGS_BYTES;
    if (id == 0 || id > used)
        return NULL;
    return bounded(d->shm->strings + (id - 1), d->shm->strings + used);
}

/* ---- start/end pairing ------------------------------------------------ */

static size_t slot_of(const gt_drain *d, int64_t id)
{
    uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & (d->n_slots - 1);
}

static pending *find(gt_drain *d, int64_t id, bool create);

static bool grow(gt_drain *d)
{
    pending *old = d->table;
    size_t n_old = d->n_slots;
    pending *t = calloc(n_old * 2, sizeof *t);
    if (!t)
        return false;
    d->table = t;
    d->n_slots = n_old * 2;
    d->n_used = 0;
    for (size_t i = 0; i < n_old; i++) {
        if (old[i].range_id) {
            pending *p = find(d, old[i].range_id, true);
            *p = old[i];
        }
    }
    free(old);
    return true;
}

static pending *find(gt_drain *d, int64_t id, bool create)
{
    /* at most half full, so every probe run ends at a free slot */
    GT_ASSERT(d->n_used * 2 <= d->n_slots);
    if (create && (d->n_used + 1) * 2 > d->n_slots && !grow(d))
        return NULL;
    for (size_t i = slot_of(d, id);; i = (i + 1) & (d->n_slots - 1)) {
        pending *p = &d->table[i];
        if (p->range_id == id) {
            /* a range whose start and end are both in was written and erased at once */
            GT_ASSERT(!(p->have_start && p->have_end));
            return p;
        }
        if (p->range_id == 0) {
            if (!create)
                return NULL;
            memset(p, 0, sizeof *p);
            p->range_id = id;
            d->n_used++;
            return p;
        }
    }
}

/* Removes a slot, moving back the entries of its probe run (no tombstones). */
static void erase(gt_drain *d, pending *p)
{
    size_t i = (size_t)(p - d->table);
    d->table[i].range_id = 0;
    d->n_used--;
    for (size_t j = (i + 1) & (d->n_slots - 1); d->table[j].range_id; j = (j + 1) & (d->n_slots - 1)) {
        pending e = d->table[j];
        d->table[j].range_id = 0;
        d->n_used--;
        pending *q = find(d, e.range_id, true);
        GT_ASSERT(q != NULL); /* the table does not grow while it shrinks */
        *q = e;
    }
}

static void write_range(gt_drain *d, pending *p)
{
    GT_ASSERT(p->have_start && !p->end_lost); /* a range is written from its start, never once lost */
    gt_event ev;
    ev.kind = GT_EV_NVTX;
    ev.u.nvtx = p->start;
    ev.u.nvtx.end_ns = p->end_ns;
    ev.u.nvtx.end_global_tid = p->end_global_tid != p->start.global_tid ? p->end_global_tid : 0;
    add_row(d, &ev);
}

/* ---- records ---------------------------------------------------------- */

/* An NVTX event whose registered string the region does not hold: dropped,
 * counted (a start/end range once: its end is ignored when it comes). */
static void unresolved(gt_drain *d, const rec_nvtx *r)
{
    if (d->n_unresolved++ == 0)
        d->first_unresolved = r->text_id;
    d->n_lost[GT_EV_NVTX]++;
    if (r->event_type != GT_NVTX_STARTEND)
        return;
    pending *p = find(d, r->range_id, true);
    if (!p) {
        check(d, GT_ERR_NOMEM);
        return;
    }
    if (p->have_end || p->end_lost)
        erase(d, p);
    else
        p->start_dropped = true;
}

static void nvtx_record(gt_drain *d, int32_t tid, const rec_nvtx *r)
{
    if (r->h.size_bytes < sizeof *r)
        return;
    const char *end = (const char *)r + r->h.size_bytes;
    const char *text = r->text_id ? registered(d, r->text_id) : (r->h.text_bytes ? bounded((const char *)(r + 1), end) : NULL);
    if (r->text_id && !text) {
        unresolved(d, r);
        return;
    }
    gt_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = GT_EV_NVTX;
    gt_nvtx *n = &ev.u.nvtx;
    n->start_ns = gt_drain_stamp_to_ns(d, r->start);
    n->end_ns = r->end ? gt_drain_stamp_to_ns(d, r->end) : -1;
    n->event_type = r->event_type;
    n->range_id = r->range_id;
    n->category = (int32_t)r->category;
    n->has_color = r->has_color;
    n->color = r->color;
    n->text = intern(d, text);
    n->text_registered = r->text_id != 0; /* nsys: textId, else text */
    n->global_tid = gt_global_tid(d->pid, r->os_tid ? r->os_tid : tid);
    n->domain_id = r->domain_id;
    n->payload_kind = (gt_payload_kind)r->payload_kind;
    memcpy(&n->payload, &r->payload, sizeof n->payload);

    if (r->event_type == GT_NVTX_STARTEND) {
        pending *p = find(d, r->range_id, true);
        if (!p) {
            check(d, GT_ERR_NOMEM);
            d->n_lost[GT_EV_NVTX]++;
            return;
        }
        if (p->end_lost) {
            d->n_lost[GT_EV_NVTX]++;
            erase(d, p);
            return;
        }
        p->have_start = true;
        p->start = *n;
        if (p->have_end) {
            write_range(d, p);
            erase(d, p);
        }
        return;
    }
    if (r->event_type == GT_NVTX_THREAD_NAME && text) {
        if (writing(d))
            check(d, gt_writer_add_thread_name(d->w, n->global_tid, text, 0));
        if (d->n_named < sizeof d->named / sizeof d->named[0])
            d->named[d->n_named++] = r->os_tid;
    }
    add_row(d, &ev);
}

/* The short form of a push/pop range (no color, payload or registered string). */
static void pushpop_record(gt_drain *d, int32_t tid, const rec_pushpop *r)
{
    if (r->h.size_bytes < sizeof *r)
        return;
    const char *end = (const char *)r + r->h.size_bytes;
    gt_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = GT_EV_NVTX;
    gt_nvtx *n = &ev.u.nvtx;
    n->start_ns = gt_drain_stamp_to_ns(d, r->start);
    n->end_ns = gt_drain_stamp_to_ns(d, r->end);
    n->event_type = GT_NVTX_PUSHPOP;
    n->category = (int32_t)r->category;
    n->text = intern(d, r->h.text_bytes ? bounded((const char *)(r + 1), end) : NULL);
    n->global_tid = gt_global_tid(d->pid, tid);
    n->domain_id = r->domain_id;
    add_row(d, &ev);
}

static void range_end_record(gt_drain *d, int32_t tid, const rec_range_end *r)
{
    if (r->h.size_bytes < sizeof *r)
        return;
    pending *p = find(d, r->range_id, true);
    if (!p) {
        check(d, GT_ERR_NOMEM);
        return;
    }
    if (p->start_dropped) {
        erase(d, p);
        return;
    }
    p->have_end = true;
    p->end_ns = gt_drain_stamp_to_ns(d, r->end);
    p->end_global_tid = gt_global_tid(d->pid, tid);
    if (p->have_start) {
        write_range(d, p);
        erase(d, p);
    }
}

void gt_drain_range_lost(gt_drain *d, int64_t range_id)
{
    pending *p = find(d, range_id, true);
    if (!p) {
        check(d, GT_ERR_NOMEM);
        return;
    }
    if (p->have_start) {
        d->n_lost[GT_EV_NVTX]++;
        erase(d, p);
    } else if (p->start_dropped) {
        erase(d, p); /* counted once, when its start was dropped */
    } else {
        p->end_lost = true; /* its start is still in a ring */
    }
}

/* The strings after a rec_event, in the order shm.h gives. */
static const char *next_text(const char **cursor, const char *end)
{
    const char *s = bounded(*cursor, end);
    if (!s) {
        *cursor = end;
        return NULL;
    }
    *cursor += strlen(s) + 1;
    return s;
}

static void event_record(gt_drain *d, int32_t tid, const rec_event *r)
{
    if (r->h.size_bytes < sizeof *r || r->ev.kind < 0 || r->ev.kind >= GT_EV_N_KINDS)
        return;
    gt_event ev = r->ev;
    const char *cur = (const char *)(r + 1);
    const char *end = (const char *)r + r->h.size_bytes;
    switch (ev.kind) {
    case GT_EV_NVTX: ev.u.nvtx.text = intern(d, next_text(&cur, end)); break;
    case GT_EV_API: ev.u.api.name = intern(d, next_text(&cur, end)); break;
    case GT_EV_KERNEL:
        ev.u.kernel.demangled_name = intern(d, next_text(&cur, end));
        ev.u.kernel.short_name = intern(d, next_text(&cur, end));
        ev.u.kernel.mangled_name = intern(d, next_text(&cur, end));
        break;
    case GT_EV_HEAP:
        ev.u.heap.start_ns = gt_drain_stamp_to_ns(d, (uint64_t)ev.u.heap.start_ns);
        ev.u.heap.name = intern(d, next_text(&cur, end));
        ev.u.heap.global_tid = gt_global_tid(d->pid, tid);
        break;
    case GT_EV_CPU_OP: ev.u.cpu_op.name = intern(d, next_text(&cur, end)); break;
    default: break;
    }
    add_row(d, &ev);
}

static void callchain_record(gt_drain *d, const rec_callchain *r)
{
    if (!writing(d) || r->h.size_bytes < sizeof *r || r->n_frames < 0)
        return;
    gt_frame frames[GT_CAP_MAX_FRAMES];
    const char *end = (const char *)r + r->h.size_bytes;
    size_t n = (size_t)r->n_frames < GT_CAP_MAX_FRAMES ? (size_t)r->n_frames : GT_CAP_MAX_FRAMES;
    if (sizeof *r + n * sizeof r->ips[0] > r->h.size_bytes)
        return;
    const char *cur = (const char *)&r->ips[r->n_frames <= GT_CAP_MAX_FRAMES ? r->n_frames : 0];
    if (r->n_frames > GT_CAP_MAX_FRAMES)
        cur = end; /* not what the process writes: addresses only */
    for (size_t i = 0; i < n; i++) {
        char hex[32];
        uint64_t ip = r->ips[i];
        const char *sym = next_text(&cur, end);
        const char *module = next_text(&cur, end);
        frames[i].original_ip = ip;
        frames[i].unresolved = !sym || !*sym;
        if (sym && *sym) {
            frames[i].symbol = intern(d, sym);
        } else {
            snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)ip);
            frames[i].symbol = intern(d, hex);
        }
        frames[i].module = intern(d, module ? module : "");
    }
    check(d, gt_writer_add_callchain(d->w, r->callchain_id, frames, n));
}

static void gpu_record(gt_drain *d, const rec_gpu *r)
{
    if (!writing(d) || r->h.size_bytes < sizeof *r)
        return;
    gt_gpu_info g = r->gpu;
    const char *cur = (const char *)(r + 1);
    const char *end = (const char *)r + r->h.size_bytes;
    g.name = next_text(&cur, end);
    g.bus_location = next_text(&cur, end);
    g.uuid = next_text(&cur, end);
    g.chip_name = next_text(&cur, end);
    check(d, gt_writer_add_gpu(d->w, &g));
}

void gt_drain_record(gt_drain *d, int32_t tid, const rec_hdr *rec)
{
    switch (rec->type) {
    case REC_NVTX: nvtx_record(d, tid, (const rec_nvtx *)rec); break;
    case REC_PUSHPOP: pushpop_record(d, tid, (const rec_pushpop *)rec); break;
    case REC_RANGE_END: range_end_record(d, tid, (const rec_range_end *)rec); break;
    case REC_EVENT: event_record(d, tid, (const rec_event *)rec); break;
    case REC_CALLCHAIN: callchain_record(d, (const rec_callchain *)rec); break;
    case REC_GPU: gpu_record(d, (const rec_gpu *)rec); break;
    default: break;
    }
}

void gt_segments_walk(const char *data, size_t n_bytes, const gt_segment_visitor *v)
{
    size_t off = 0;
    while (off + sizeof(seg_hdr) <= n_bytes) {
        seg_hdr h;
        memcpy(&h, data + off, sizeof h);
        off += sizeof h;
        if (h.n_bytes > n_bytes - off)
            break;
        const char *seg = data + off;
        if (h.kind == SEG_RECORDS) {
            for (uint64_t at = 0; at + sizeof(rec_hdr) <= h.n_bytes;) {
                const rec_hdr *rec = (const rec_hdr *)(seg + at);
                uint32_t size = rec->size_bytes;
                if (size < sizeof(rec_hdr) || (size & 7) || size > h.n_bytes - at)
                    break; /* not what a producer writes: the rest of this segment is skipped */
                if (rec->type != REC_PAD)
                    v->on_record(v->ctx, h.tid, rec);
                at += size;
            }
        } else if (v->on_segment && (h.kind != SEG_LOST_END || h.n_bytes >= sizeof(int64_t))) {
            v->on_segment(v->ctx, &h, seg);
        }
        off += h.n_bytes;
    }
}

static void drain_one_record(void *ctx, int32_t tid, const rec_hdr *rec)
{
    gt_drain_record(ctx, tid, rec);
}

static void drain_one_segment(void *ctx, const seg_hdr *h, const char *body)
{
    if (h->kind == SEG_THREAD) {
        gt_drain_thread(ctx, h->tid, body);
    } else if (h->kind == SEG_LOST_END) {
        int64_t id;
        memcpy(&id, body, sizeof id);
        gt_drain_range_lost(ctx, id);
    }
}

void gt_drain_segments(gt_drain *d, const char *data, size_t n_bytes)
{
    gt_segment_visitor v = {drain_one_record, drain_one_segment, d};
    gt_segments_walk(data, n_bytes, &v);
}

void gt_drain_region_dropped(const gt_shm_header *h, uint32_t n_rings, int64_t *out)
{
    const gt_shm_ring *rings = (const gt_shm_ring *)((const char *)h + sizeof *h);
    uint32_t n = atomic_load_explicit(&h->n_carved, memory_order_acquire);
    if (n > n_rings)
        n = n_rings;
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        int64_t v = atomic_load_explicit(&h->orphan_dropped[k], memory_order_relaxed);
        for (uint32_t i = 0; i < n; i++)
            v += atomic_load_explicit(&rings[i].dropped[k], memory_order_relaxed);
        out[k] += v > 0 ? v : 0;
    }
}

void gt_drain_describe(gt_writer *w, int64_t pid, const gt_shm_header *h)
{
    uint32_t info_bytes = h->info_bytes;
    if (info_bytes > GT_SHM_INFO_BYTES)
        info_bytes = GT_SHM_INFO_BYTES;
    const char *cur = h->info, *end = h->info + info_bytes;
    int64_t gpid = gt_global_pid(pid);
    const char *comm = memchr(cur, '\0', (size_t)(end - cur)) ? cur : "";
    gt_writer_add_process(w, pid, comm);
    gt_writer_set_session_start(w, h->utc_t0_ns);
    if (*comm || cur < end)
        cur += strlen(comm) + 1;
    while (cur < end) {
        const char *key = cur;
        const char *kend = memchr(key, '\0', (size_t)(end - key));
        if (!kend || kend + 1 >= end)
            break;
        const char *value = kend + 1;
        const char *vend = memchr(value, '\0', (size_t)(end - value));
        if (!vend)
            break;
        gt_writer_add_config(w, gpid, key, value);
        if (h->is_root)
            gt_writer_add_config(w, 0, key, value);
        cur = vend + 1;
    }
}

void gt_drain_thread(gt_drain *d, int32_t tid, const char *name)
{
    for (size_t i = 0; i < d->n_named; i++)
        if (d->named[i] == tid)
            return;
    if (name && *name && writing(d))
        check(d, gt_writer_add_thread_name(d->w, gt_global_tid(d->pid, tid), name, 0));
}

int64_t gt_drain_finish(gt_drain *d, int64_t end_ns)
{
    int64_t n_open = 0;
    size_t n_pending = 0;
    if (d->n_unresolved > 0)
        gt_record_say("gtrace: process %lld: %lld NVTX events named a registered string that its string table "
                        "does not hold (the first: id %llu): dropped, counted\n",
                (long long)d->pid, (long long)d->n_unresolved, (unsigned long long)d->first_unresolved);
    for (size_t i = 0; i < d->n_slots; i++) {
        pending *p = &d->table[i];
        n_pending += p->range_id != 0;
        if (p->range_id && p->have_start && !p->have_end) {
            /* Never ended: written as lasting until the end of the session. */
            p->end_ns = end_ns;
            p->end_global_tid = 0;
            write_range(d, p);
            n_open++;
        }
        p->range_id = 0;
    }
    GT_ASSERT(n_pending == d->n_used);
    d->n_used = 0;
    return n_open;
}
