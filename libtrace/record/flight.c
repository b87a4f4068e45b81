/* flight.c: the flight recorder (--flight-recorder=30s or =256M). The
 * collector's writer hands each read of a process's rings here instead of
 * writing it into a part; the reads are kept in arrival order and the
 * oldest fall out once they are older than the window (or the reads held
 * pass its size). So the traced process pays what normal capture costs and
 * the launcher holds at most the window, whatever the run's length.
 *
 * What falls out is not simply forgotten: what a trace of the window needs
 * from before it is folded into a small state per process, written first
 * in every dump: names (domains, categories, threads), call stacks, GPUs,
 * start/end ranges still open, and the memory live set: every heap,
 * region (a caching allocator's block, with its last size and name) and
 * device allocation registered and not yet given back, with its own time.
 * A dump is so, inside its window, what a whole-run trace says: `gtrace
 * memory --at T` finds the blocks allocated before the window began.
 *
 * A dump puts one part per process image into a folder of the parts
 * directory, through the same drain as normal capture (drain.c), and
 * assembles them (assemble.c) into the output, or its numbered sibling.
 * The last dump, at the end, also takes in the CUDA memory snapshots that
 * `--pytorch` processes left at their exit (snapshots.c), as a normal
 * run's trace does; earlier dumps have none to take (a process writes its
 * snapshot as it exits).
 * Runs on one thread at a time: the collector's writer, then, once it has
 * stopped, the launcher's main thread for the last dump.
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "drain.h"
#include "flight.h"
#include "record_int.h"
#include "tsc_clock.h"

typedef struct blob {          /* one segment (drain.h) of one record or thread */
    char *data;
    size_t n_bytes;
} blob;

enum { K_EMPTY = 0, K_HEAP = 1, K_REGION = 2, K_DEVMEM = 3, K_RANGE = 4, K_GONE = 255 };

typedef struct live {          /* what a dump writes first, by (kind, a, b) */
    uint8_t kind;              /* K_* */
    uint64_t a, b;             /* heap id; region address; device address, device; range id */
    uint64_t heap;             /* a region's heap (its registration's) */
    int64_t seq;               /* order of first registration */
    blob reg, resize, name;    /* a range: its start in `reg` */
} live;

typedef struct name_key {      /* names are kept once per thing named, the last naming */
    int32_t event_type;
    int64_t domain_id;
    uint32_t category;
    int32_t os_tid;
} name_key;

typedef struct kept {
    name_key key;              /* event_type 0: not a name (stack, GPU, thread) */
    blob b;
} kept;

#define MAX_OOM_CATS 16

struct gt_flight_proc {
    struct gt_flight_proc *next;
    int64_t pid;
    const gt_shm_header *h;    /* the live region, or `own` once the process ended */
    gt_shm_header *own;
    uint32_t n_rings;
    bool ended;
    bool oom_seen;
    size_t n_chunks;           /* in the window */
    int64_t dropped[GT_EV_N_KINDS]; /* at its end */
    kept *kept;
    size_t n_kept, cap_kept;
    live *table;               /* open addressing */
    size_t n_slots, n_used, n_gone;
    int64_t next_seq;
    struct { int64_t domain; uint32_t category; } oom_cats[MAX_OOM_CATS];
    int n_oom_cats;
};

typedef struct fl_chunk {
    struct fl_chunk *next;
    gt_flight_proc *p;
    int64_t read_ns;
    size_t n_bytes;
    char *data;
} fl_chunk;

struct gt_flight {
    gt_flight_options o;
    fl_chunk *head, *tail;
    size_t held_bytes;
    int64_t window_start_ns;   /* monotonic: the newest read fallen out (0: none) */
    gt_flight_proc *procs;
    int n_dumps, n_written;
    char last_output[PATH_MAX];
};

#define CHUNK_OVERHEAD ((size_t)sizeof(fl_chunk) + 16)

/* ---- blobs and the live table -------------------------------------------- */

static bool make_blob(blob *out, uint32_t kind, int32_t tid, const void *body, size_t body_bytes)
{
    size_t n = (body_bytes + 7) & ~(size_t)7;
    char *d = malloc(sizeof(seg_hdr) + n);
    if (!d)
        return false;
    seg_hdr h = {.kind = kind, .tid = tid, .n_bytes = n};
    memcpy(d, &h, sizeof h);
    memcpy(d + sizeof h, body, body_bytes);
    memset(d + sizeof h + body_bytes, 0, n - body_bytes);
    free(out->data);
    out->data = d;
    out->n_bytes = sizeof h + n;
    return true;
}

static void blob_free(blob *b)
{
    free(b->data);
    b->data = NULL;
    b->n_bytes = 0;
}

static size_t slot_of(const gt_flight_proc *p, uint8_t kind, uint64_t a, uint64_t b)
{
    uint64_t x = (a ^ (b * 0xff51afd7ed558ccdull) ^ kind) * 0x9e3779b97f4a7c15ull;
    return (size_t)(x >> 29) & (p->n_slots - 1);
}

static bool rehash(gt_flight_proc *p)
{
    size_t n = 64;
    while (n < (p->n_used + 1) * 4)
        n *= 2;
    live *t = calloc(n, sizeof *t);
    if (!t)
        return false;
    live *old = p->table;
    size_t n_old = p->n_slots;
    p->table = t;
    p->n_slots = n;
    p->n_gone = 0;
    for (size_t i = 0; i < n_old; i++) {
        if (old[i].kind == K_EMPTY || old[i].kind == K_GONE)
            continue;
        size_t s = slot_of(p, old[i].kind, old[i].a, old[i].b);
        while (t[s].kind != K_EMPTY)
            s = (s + 1) & (n - 1);
        t[s] = old[i];
    }
    free(old);
    return true;
}

/* The entry (kind, a, b); with `create`, a new one if there is none (NULL
 * only when out of memory). */
static live *find(gt_flight_proc *p, uint8_t kind, uint64_t a, uint64_t b, bool create)
{
    if (p->n_slots == 0 || (p->n_used + p->n_gone + 1) * 4 > p->n_slots * 3) {
        if (!create && p->n_slots == 0)
            return NULL;
        if (!rehash(p))
            return NULL;
    }
    size_t s = slot_of(p, kind, a, b), gone = SIZE_MAX;
    for (;; s = (s + 1) & (p->n_slots - 1)) {
        live *e = &p->table[s];
        if (e->kind == K_EMPTY)
            break;
        if (e->kind == K_GONE) {
            if (gone == SIZE_MAX)
                gone = s;
        } else if (e->kind == kind && e->a == a && e->b == b) {
            return e;
        }
    }
    if (!create)
        return NULL;
    if (gone != SIZE_MAX) {
        s = gone;
        p->n_gone--;
    }
    live *e = &p->table[s];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->a = a;
    e->b = b;
    e->seq = p->next_seq++;
    p->n_used++;
    return e;
}

static void erase(gt_flight_proc *p, live *e)
{
    if (!e)
        return;
    blob_free(&e->reg);
    blob_free(&e->resize);
    blob_free(&e->name);
    e->kind = K_GONE;
    p->n_used--;
    p->n_gone++;
}

/* A heap reset or unregistered: its regions go with it. */
static void erase_regions_of(gt_flight_proc *p, uint64_t heap)
{
    for (size_t i = 0; i < p->n_slots; i++)
        if (p->table[i].kind == K_REGION && p->table[i].heap == heap)
            erase(p, &p->table[i]);
}

/* ---- what falls out of the window ---------------------------------------- */

static void keep(gt_flight_proc *p, const name_key *key, uint32_t kind, int32_t tid, const void *body, size_t n)
{
    if (key->event_type != 0 || kind == SEG_THREAD)
        for (size_t i = 0; i < p->n_kept; i++) {
            kept *k = &p->kept[i];
            bool same = kind == SEG_THREAD ? k->key.event_type == 0 && k->key.os_tid == tid && k->b.data
                                                 && ((seg_hdr *)k->b.data)->kind == SEG_THREAD
                                           : !memcmp(&k->key, key, sizeof *key);
            if (same) {
                make_blob(&k->b, kind, tid, body, n);
                return;
            }
        }
    if (p->n_kept == p->cap_kept) {
        size_t cap = p->cap_kept ? p->cap_kept * 2 : 64;
        kept *v = realloc(p->kept, cap * sizeof *v);
        if (!v)
            return;
        p->kept = v;
        p->cap_kept = cap;
    }
    kept *k = &p->kept[p->n_kept];
    memset(k, 0, sizeof *k);
    k->key = *key;
    if (kind == SEG_THREAD)
        k->key.os_tid = tid;
    if (make_blob(&k->b, kind, tid, body, n))
        p->n_kept++;
}

static void fold_heap(gt_flight_proc *p, int32_t tid, const rec_event *r)
{
    const gt_heap_event *h = &r->ev.u.heap;
    live *e = NULL;
    switch (h->operation) {
    case GT_HEAP_REGISTER:
        if ((e = find(p, K_HEAP, h->heap_id, 0, true)))
            make_blob(&e->reg, SEG_RECORDS, tid, r, r->h.size_bytes);
        break;
    case GT_HEAP_UNREGISTER:
        erase(p, find(p, K_HEAP, h->heap_id, 0, false));
        erase_regions_of(p, h->heap_id);
        break;
    case GT_HEAP_RESET: erase_regions_of(p, h->heap_id); break;
    case GT_REGION_REGISTER:
        erase(p, find(p, K_REGION, h->address, 0, false)); /* a new block at that address */
        if ((e = find(p, K_REGION, h->address, 0, true))) {
            e->heap = h->heap_id;
            make_blob(&e->reg, SEG_RECORDS, tid, r, r->h.size_bytes);
        }
        break;
    case GT_REGION_RESIZE:
        if ((e = find(p, K_REGION, h->address, 0, true)))
            make_blob(&e->resize, SEG_RECORDS, tid, r, r->h.size_bytes);
        break;
    case GT_REGION_UNREGISTER: erase(p, find(p, K_REGION, h->address, 0, false)); break;
    case GT_REGION_NAME:
        if ((e = find(p, K_REGION, h->address, 0, true)))
            make_blob(&e->name, SEG_RECORDS, tid, r, r->h.size_bytes);
        break;
    default: break;
    }
}

static void fold_record(gt_flight_proc *p, int32_t tid, const rec_hdr *rec)
{
    uint32_t size = rec->size_bytes;
    switch (rec->type) {
    case REC_NVTX: {
        const rec_nvtx *r = (const rec_nvtx *)rec;
        if (size < sizeof *r)
            return;
        if (r->event_type == GT_NVTX_CATEGORY || r->event_type == GT_NVTX_DOMAIN_CREATE
            || r->event_type == GT_NVTX_THREAD_NAME) {
            name_key key = {.event_type = r->event_type, .domain_id = r->domain_id, .category = r->category,
                            .os_tid = r->os_tid};
            keep(p, &key, SEG_RECORDS, tid, rec, size);
        } else if (r->event_type == GT_NVTX_STARTEND && r->end == 0 && r->range_id) {
            live *e = find(p, K_RANGE, (uint64_t)r->range_id, 0, true);
            if (e)
                make_blob(&e->reg, SEG_RECORDS, tid, rec, size);
        }
        break;
    }
    case REC_RANGE_END: {
        const rec_range_end *r = (const rec_range_end *)rec;
        if (size >= sizeof *r)
            erase(p, find(p, K_RANGE, (uint64_t)r->range_id, 0, false));
        break;
    }
    case REC_EVENT: {
        const rec_event *r = (const rec_event *)rec;
        if (size < sizeof *r)
            return;
        if (r->ev.kind == GT_EV_HEAP) {
            fold_heap(p, tid, r);
        } else if (r->ev.kind == GT_EV_GPU_MEMORY) {
            const gt_gpu_memory *g = &r->ev.u.gpu_memory;
            uint64_t dev = (uint64_t)(uint32_t)g->device_id;
            if (g->operation == GT_DEVMEM_FREE) {
                erase(p, find(p, K_DEVMEM, g->address, dev, false));
            } else {
                live *e = find(p, K_DEVMEM, g->address, dev, true);
                if (e)
                    make_blob(&e->reg, SEG_RECORDS, tid, rec, size);
            }
        }
        break;
    }
    case REC_CALLCHAIN:
    case REC_GPU: {
        name_key none = {0};
        keep(p, &none, SEG_RECORDS, tid, rec, size);
        break;
    }
    default: break;
    }
}

static void fold_one(void *p, int32_t tid, const rec_hdr *rec)
{
    fold_record(p, tid, rec);
}

static void fold_segment(void *ctx, const seg_hdr *h, const char *body)
{
    gt_flight_proc *p = ctx;
    if (h->kind == SEG_THREAD) {
        name_key none = {0};
        keep(p, &none, SEG_THREAD, h->tid, body, h->n_bytes);
    } else if (h->kind == SEG_LOST_END) {
        int64_t id;
        memcpy(&id, body, sizeof id);
        erase(p, find(p, K_RANGE, (uint64_t)id, 0, false));
    }
}

/* Folds the segments into the live-set state (they leave the window). */
static void fold_records(gt_flight_proc *p, const char *data, size_t n_bytes)
{
    gt_segment_visitor v = {fold_one, fold_segment, p};
    gt_segments_walk(data, n_bytes, &v);
}

static void proc_free(gt_flight_proc *p)
{
    for (size_t i = 0; i < p->n_kept; i++)
        blob_free(&p->kept[i].b);
    free(p->kept);
    for (size_t i = 0; i < p->n_slots; i++)
        if (p->table[i].kind != K_EMPTY && p->table[i].kind != K_GONE)
            erase(p, &p->table[i]);
    free(p->table);
    free(p->own);
    free(p);
}

/* A process that ended and has nothing left in the window is forgotten. */
static void forget_if_done(gt_flight *f, gt_flight_proc *p)
{
    if (!p->ended || p->n_chunks > 0)
        return;
    for (gt_flight_proc **pp = &f->procs; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            proc_free(p);
            return;
        }
}

static void evict(gt_flight *f, int64_t now_ns)
{
    while (f->head) {
        fl_chunk *k = f->head;
        bool old = f->o.keep_ns > 0 && k->read_ns < now_ns - f->o.keep_ns;
        bool over = f->o.keep_bytes > 0 && f->held_bytes > (size_t)f->o.keep_bytes;
        if (!old && !over)
            break;
        f->head = k->next;
        if (!f->head)
            f->tail = NULL;
        f->held_bytes -= k->n_bytes + CHUNK_OVERHEAD;
        if (k->read_ns > f->window_start_ns)
            f->window_start_ns = k->read_ns;
        fold_records(k->p, k->data, k->n_bytes);
        k->p->n_chunks--;
        forget_if_done(f, k->p);
        free(k->data);
        free(k);
    }
}

/* ---- out-of-memory marks -------------------------------------------------- */

/* The message of an NVTX record: registered (in the region's strings) or after its body. */
static const char *message_of(const gt_flight_proc *p, const rec_hdr *rec, size_t body_bytes, uint64_t text_id)
{
    const char *end;
    const char *s;
    if (text_id) {
        uint64_t used = atomic_load_explicit(&p->h->strings_used, memory_order_acquire);
        if (used > GT_SHM_STRINGS_BYTES)
            used = GT_SHM_STRINGS_BYTES;
        if (text_id > used)
            return NULL;
        s = p->h->strings + (text_id - 1);
        end = p->h->strings + used;
    } else {
        if (!rec->text_bytes)
            return NULL;
        s = (const char *)rec + body_bytes;
        end = (const char *)rec + rec->size_bytes;
    }
    return s < end && memchr(s, '\0', (size_t)(end - s)) ? s : NULL;
}

static bool oom_category(const gt_flight_proc *p, int64_t domain, uint32_t category)
{
    for (int i = 0; category && i < p->n_oom_cats; i++)
        if (p->oom_cats[i].domain == domain && p->oom_cats[i].category == category)
            return true;
    return false;
}

static void scan_oom(gt_flight_proc *p, int32_t tid, const rec_hdr *rec)
{
    (void)tid;
    if (rec->type == REC_PUSHPOP && rec->size_bytes >= sizeof(rec_pushpop)) {
        const rec_pushpop *r = (const rec_pushpop *)rec;
        if (oom_category(p, r->domain_id, r->category))
            p->oom_seen = true;
        return;
    }
    if (rec->type != REC_NVTX || rec->size_bytes < sizeof(rec_nvtx))
        return;
    const rec_nvtx *r = (const rec_nvtx *)rec;
    if (r->event_type == GT_NVTX_CATEGORY) {
        const char *name = message_of(p, rec, sizeof *r, r->text_id);
        if (name && !strcmp(name, "oom") && p->n_oom_cats < MAX_OOM_CATS
            && !oom_category(p, r->domain_id, r->category)) {
            p->oom_cats[p->n_oom_cats].domain = r->domain_id;
            p->oom_cats[p->n_oom_cats++].category = r->category;
        }
        return;
    }
    if (r->event_type != GT_NVTX_MARK && r->event_type != GT_NVTX_STARTEND && r->event_type != GT_NVTX_PUSHPOP)
        return;
    if (oom_category(p, r->domain_id, r->category)) {
        p->oom_seen = true;
    } else if (r->event_type == GT_NVTX_MARK) {
        const char *m = message_of(p, rec, sizeof *r, r->text_id);
        if (m && !strncmp(m, "out of memory", 13))
            p->oom_seen = true;
    }
}

static void scan_one(void *p, int32_t tid, const rec_hdr *rec)
{
    scan_oom(p, tid, rec);
}

/* Looks for an out-of-memory mark among the records of the segments. */
static void scan_records(gt_flight_proc *p, const char *data, size_t n_bytes)
{
    gt_segment_visitor v = {scan_one, NULL, p};
    gt_segments_walk(data, n_bytes, &v);
}

/* ---- the window ------------------------------------------------------------ */

int gt_flight_new(gt_flight **out, const gt_flight_options *o)
{
    gt_flight *f = calloc(1, sizeof *f);
    if (!f)
        return gt_error_set(GT_ERR_NOMEM, "out of memory");
    f->o = *o;
    *out = f;
    return 0;
}

void gt_flight_free(gt_flight *f)
{
    if (!f)
        return;
    for (fl_chunk *k = f->head; k;) {
        fl_chunk *next = k->next;
        free(k->data);
        free(k);
        k = next;
    }
    for (gt_flight_proc *p = f->procs; p;) {
        gt_flight_proc *next = p->next;
        proc_free(p);
        p = next;
    }
    free(f);
}

gt_flight_proc *gt_flight_proc_new(gt_flight *f, int64_t pid, const gt_shm_header *h, uint32_t n_rings)
{
    gt_flight_proc *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->pid = pid;
    p->h = h;
    p->n_rings = n_rings;
    p->next = f->procs;
    f->procs = p;
    return p;
}

bool gt_flight_add(gt_flight *f, gt_flight_proc *p, char *data, size_t n_bytes, int64_t read_ns)
{
    fl_chunk *k = malloc(sizeof *k);
    char *small = n_bytes ? realloc(data, n_bytes) : NULL; /* the reader's chunk grew by doubling */
    if (small)
        data = small;
    bool had_oom = p->oom_seen;
    scan_records(p, data, n_bytes);
    if (!k) { /* no memory to keep it: what it holds still counts for what comes after */
        fold_records(p, data, n_bytes);
        free(data);
        return !had_oom && p->oom_seen;
    }
    *k = (fl_chunk){.next = NULL, .p = p, .read_ns = read_ns, .n_bytes = n_bytes, .data = data};
    if (f->tail)
        f->tail->next = k;
    else
        f->head = k;
    f->tail = k;
    f->held_bytes += n_bytes + CHUNK_OVERHEAD;
    p->n_chunks++;
    evict(f, read_ns);
    return !had_oom && p->oom_seen;
}

void gt_flight_proc_end(gt_flight *f, gt_flight_proc *p)
{
    gt_drain_region_dropped(p->h, p->n_rings, p->dropped);
    p->own = malloc(sizeof *p->own);
    if (p->own) {
        memcpy(p->own, p->h, sizeof *p->own);
        p->h = p->own;
    } else { /* no copy of its strings: what it holds cannot be written any more */
        for (fl_chunk **kk = &f->head; *kk;) {
            fl_chunk *k = *kk;
            if (k->p != p) {
                f->tail = k;
                kk = &k->next;
                continue;
            }
            *kk = k->next;
            f->held_bytes -= k->n_bytes + CHUNK_OVERHEAD;
            free(k->data);
            free(k);
        }
        if (!f->head)
            f->tail = NULL;
        p->n_chunks = 0;
    }
    p->ended = true;
    forget_if_done(f, p);
}

/* ---- dumps ----------------------------------------------------------------- */

void gt_flight_dump_path(char *out, size_t out_bytes, const char *output, int n)
{
    size_t len = strlen(output);
    if (n <= 1)
        snprintf(out, out_bytes, "%s", output);
    else if (len > 7 && !strcmp(output + len - 7, ".sqlite"))
        snprintf(out, out_bytes, "%.*s.%d.sqlite", (int)(len - 7), output, n);
    else
        snprintf(out, out_bytes, "%s.%d", output, n);
}

static int64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_seq(const void *a, const void *b)
{
    int64_t x = (*(live *const *)a)->seq, y = (*(live *const *)b)->seq;
    return (x > y) - (x < y);
}

static void feed(gt_drain *d, const blob *b)
{
    if (b->data)
        gt_drain_segments(d, b->data, b->n_bytes);
}

/* What fell out of the window and still matters, oldest first. */
static int feed_state(gt_drain *d, gt_flight_proc *p)
{
    for (size_t i = 0; i < p->n_kept; i++)
        feed(d, &p->kept[i].b);
    live **order = p->n_used ? malloc(p->n_used * sizeof *order) : NULL;
    if (p->n_used && !order)
        return GT_ERR_NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < p->n_slots; i++)
        if (p->table[i].kind != K_EMPTY && p->table[i].kind != K_GONE)
            order[n++] = &p->table[i];
    if (n)
        qsort(order, n, sizeof *order, cmp_seq);
    for (size_t i = 0; i < n; i++) {
        feed(d, &order[i]->reg);
        feed(d, &order[i]->resize);
        feed(d, &order[i]->name);
    }
    free(order);
    return 0;
}

/* One transaction of `d`'s rows. */
static int commit(gt_writer *w, gt_drain *d)
{
    int rc = gt_drain_error(d);
    int rc2 = gt_writer_commit(w);
    gt_drain_batch_end(d, rc == 0 && rc2 == 0);
    return rc ? rc : rc2;
}

static int begin(gt_writer *w, gt_drain *d)
{
    gt_drain_batch_begin(d);
    return gt_writer_begin(w);
}

static int dump_proc(gt_flight *f, gt_flight_proc *p, const char *dir, int seq, int64_t end_ns)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%lld-%04d.sqlite", dir, (long long)p->pid, seq);
    gt_writer *w = NULL;
    gt_drain *d = NULL;
    int rc = gt_writer_open(&w, path, 0);
    if (rc == 0)
        rc = gt_drain_new(&d, w, p->pid, p->h);
    if (rc == 0 && (rc = begin(w, d)) == 0) {
        gt_drain_describe(w, p->pid, p->h);
        rc = feed_state(d, p);
        int rc2 = commit(w, d);
        rc = rc ? rc : rc2;
    }
    for (fl_chunk *k = f->head; k && rc == 0; k = k->next) {
        if (k->p != p)
            continue;
        if ((rc = begin(w, d)) == 0) {
            gt_drain_segments(d, k->data, k->n_bytes);
            rc = commit(w, d);
        }
    }
    if (rc == 0 && (rc = begin(w, d)) == 0) {
        int64_t dropped[GT_EV_N_KINDS] = {0};
        if (p->ended)
            memcpy(dropped, p->dropped, sizeof dropped);
        else
            gt_drain_region_dropped(p->h, p->n_rings, dropped);
        gt_drain_finish(d, end_ns - p->h->t0_ns);
        for (int kk = 0; kk < GT_EV_N_KINDS && rc == 0; kk++)
            if (dropped[kk] > 0)
                rc = gt_writer_add_dropped(w, gt_global_pid(p->pid), (gt_event_kind)kk, dropped[kk]);
        int rc2 = commit(w, d);
        rc = rc ? rc : rc2;
    }
    if (w) {
        int rc2 = gt_writer_close(w);
        rc = rc ? rc : rc2;
    }
    gt_drain_free(d);
    return rc;
}

static void remove_dump_dir(const char *dir)
{
    gt_record_remove_parts(dir);
    rmdir(dir);
}

/* snaps: for the last dump, where the CUDA memory snapshots the processes
 * left (at their exit) go in with it; NULL: none taken. */
static int dump(gt_flight *f, const char *reason, gt_record_snapshots **snaps)
{
    int64_t now = gt_clock_mono_now();
    evict(f, now);
    int n = ++f->n_dumps;
    char output[PATH_MAX], target[PATH_MAX], dir[PATH_MAX + 32];
    gt_flight_dump_path(output, sizeof output, f->o.output, n);
    int rc = gt_record_check_output(output, f->o.force, NULL, 0, target, sizeof target);
    if (rc != 0) {
        gt_record_error("flight recorder: dump %d (%s) not written: %s", n, reason, gt_error_last());
        return rc;
    }
    snprintf(dir, sizeof dir, "%s/flight-%d", f->o.parts_dir, n);
    if (mkdir(dir, 0700) != 0) {
        rc = gt_error_set(GT_ERR_IO, "cannot create %s: %s", dir, strerror(errno));
        gt_record_error("flight recorder: dump %d (%s) not written: %s", n, reason, gt_error_last());
        return rc;
    }
    int seq = 0;
    for (gt_flight_proc *p = f->procs; p && rc == 0; p = p->next)
        rc = dump_proc(f, p, dir, seq++, now);
    if (rc == 0 && snaps)
        *snaps = gt_record_import_snapshots_into(f->o.parts_dir, dir, f->o.t0_ns, f->o.run.utc_t0_ns);
    gt_record_run_info run = f->o.run;
    run.end_ns = now - f->o.t0_ns;
    run.utc_end_ns = realtime_ns();
    if (rc == 0)
        rc = gt_record_assemble(dir, target, f->o.force, &run, NULL);
    if (rc == 0) {
        char start[32];
        int64_t start_ns = f->window_start_ns ? f->window_start_ns - f->o.t0_ns : 0;
        snprintf(start, sizeof start, "%lld", (long long)start_ns);
        const char *const keys[] = {"flight_recorder", "flight_dump", "flight_window_start_ns"};
        const char *const values[] = {f->o.spec, reason, start};
        if (gt_trace_add_config(target, 0, keys, values, 3) != 0)
            gt_record_error("flight recorder: %s: its window is not noted in the trace: %s", output,
                            gt_error_last());
        snprintf(f->last_output, sizeof f->last_output, "%s", output);
        f->n_written++;
        gt_record_error("flight recorder: dump %d (%s): %s", n, reason, output);
    } else {
        gt_record_error("flight recorder: dump %d (%s) not written: %s", n, reason, gt_error_last());
    }
    if (snaps)
        gt_record_snapshots_taken(f->o.parts_dir, *snaps, rc == 0);
    remove_dump_dir(dir);
    return rc;
}

int gt_flight_dump(gt_flight *f, const char *reason)
{
    return dump(f, reason, NULL);
}

int gt_flight_dump_last(gt_flight *f, const char *reason, gt_record_snapshots **out_snapshots)
{
    *out_snapshots = NULL;
    return dump(f, reason, out_snapshots);
}

const char *gt_flight_last_output(const gt_flight *f)
{
    return f->last_output;
}

int gt_flight_n_written(const gt_flight *f)
{
    return f->n_written;
}
