/* nvtx.c: the NVTX v3 injection: InitializeInjectionNvtx2 fills the CORE and
 * CORE2 (domains) callback tables of the program's NVTX with the functions
 * below, which record marks, push/pop and start/end ranges, domains,
 * categories, registered strings and thread names the way nsys writes them
 * to NVTX_EVENTS.
 *
 * Push/pop ranges are kept on a per-thread stack until their pop and then
 * written as one complete row; start/end ranges are written as a start and
 * an end record that the writer pairs (the end may come from another
 * thread). The NVTX memory API is in nvtx_mem.c. Nothing here locks.
 *
 * Capture window (window.c, the region's gate): outside it a push/pop range
 * is still kept on the stack (levels, and the ranges that open a window)
 * but written only when it overlaps a window; marks and start/end ranges
 * are written when they happen (start) inside one. Names (domains,
 * categories, threads, strings) are always written.
 *
 * A start/end range is one event, dropped at most once: a start that finds
 * its ring full is counted and its id carries RANGE_DROPPED, so its end is
 * ignored; an end that finds its ring full puts the id in the region's set
 * of lost ends, which the launcher reads to drop (and count) the range it
 * already holds.
 *
 * Registered strings (nvtxDomainRegisterString) are copied once into the
 * region's string area; records refer to them by id. A string that finds
 * the area full is kept here and copied into each record instead.
 *
 * Fork: a child's region starts with its parent's strings (ring.c), so the
 * handles it inherited name what they named; the domains and categories
 * the parent named are kept (names.c) and written again into the child's
 * part before its first record.
 */
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "capture.h"
#include "clock.h"
#include "names.h"
#include "nvtx.h"
#include "ring.h"
#include "session.h"
#include "warn.h"
#include "window.h"

#define MAX_TEXT_BYTES 1024   /* longer messages are truncated */
#define STACK_DEPTH 256       /* deeper pushes are dropped (and counted) */
#define STACK_TEXT_BYTES 16384

/* A domain handle points to one of these (never freed: NVTX handles may
 * outlive nvtxDomainDestroy in a racy program). */
typedef struct gt_domain {
    int64_t id;
} gt_domain;

typedef struct open_range {     /* a pushed range waiting for its pop */
    uint64_t start;             /* stamp */
    int64_t domain_id;
    uint64_t payload;
    uint64_t text_id;           /* registered string, else text is in the stack's arena */
    uint32_t text_off, text_len;
    uint32_t category, color;
    uint64_t gate;              /* the capture window's gate at the push (shm.h) */
    int64_t window_key;         /* for gt_cap_window_pop, when `window` */
    int32_t level;              /* 0-based nesting level within its domain */
    uint8_t has_color, payload_kind, has_text, window;
    uint8_t nest_only;          /* itt.c's: written only where it nests (gt_nvtx_push_nested) */
    uint8_t broken;             /* nest_only and it did not nest: not written */
} open_range;

struct gt_nvtx_stack {
    int depth;                  /* entries in `e` */
    int n_overflow;             /* pushes beyond STACK_DEPTH not yet popped */
    open_range e[STACK_DEPTH];
    char text[STACK_TEXT_BYTES + 8]; /* + 8: pop copies whole 8-byte words */
};

static _Atomic int64_t next_domain_id = 1;
static _Atomic int64_t next_range_id = 1;

/* Marks the id of a range whose start was dropped (ids count up from 1 and
 * never reach it). */
#define RANGE_DROPPED ((uint64_t)1 << 62)
/* Marks the id of a range that started outside the capture window (not written). */
#define RANGE_OUTSIDE ((uint64_t)1 << 61)

/* This thread's stack: allocated at its first push, freed at its exit
 * (a pthread key of this file's own) and, in a fork child, dropped (the
 * parent's open ranges are the parent's). */
static __thread struct gt_nvtx_stack *my_stack_ptr __attribute__((tls_model("initial-exec")));
static pthread_key_t stack_key;
static bool have_stack_key;
static pthread_once_t stack_key_once = PTHREAD_ONCE_INIT;

static void stack_at_thread_exit(void *p)
{
    free(p);
    my_stack_ptr = NULL;
}

static void stack_in_fork_child(void)
{
    free(my_stack_ptr);
    my_stack_ptr = NULL;
    if (have_stack_key)
        pthread_setspecific(stack_key, NULL);
}

static void make_stack_key(void)
{
    have_stack_key = pthread_key_create(&stack_key, stack_at_thread_exit) == 0;
    pthread_atfork(NULL, NULL, stack_in_fork_child);
}

size_t gt_cap_wide_to_utf8(const wchar_t *w, char *out, size_t out_bytes)
{
    size_t n = 0;
    if (!w || out_bytes == 0)
        return 0;
    for (; *w; w++) {
        uint32_t c = (uint32_t)*w;
        char b[4];
        size_t k;
        if (c < 0x80) {
            b[0] = (char)c; k = 1;
        } else if (c < 0x800) {
            b[0] = (char)(0xc0 | (c >> 6)); b[1] = (char)(0x80 | (c & 0x3f)); k = 2;
        } else if (c < 0x10000) {
            b[0] = (char)(0xe0 | (c >> 12)); b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
            b[2] = (char)(0x80 | (c & 0x3f)); k = 3;
        } else if (c < 0x110000) {
            b[0] = (char)(0xf0 | (c >> 18)); b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
            b[2] = (char)(0x80 | ((c >> 6) & 0x3f)); b[3] = (char)(0x80 | (c & 0x3f)); k = 4;
        } else {
            b[0] = '?'; k = 1;
        }
        if (n + k + 1 > out_bytes)
            break;
        memcpy(out + n, b, k);
        n += k;
    }
    out[n] = '\0';
    return n;
}

/* ---- attributes ------------------------------------------------------- */

/* The parts of an event's attributes a record keeps. */
typedef struct attrs {
    const char *text;      /* NULL: none */
    size_t text_len;
    uint64_t text_id;      /* registered string (shm.h) */
    uint32_t category, color;
    uint8_t has_color, payload_kind;
    uint64_t payload;
    char wide_buf[MAX_TEXT_BYTES];
} attrs;

#define HAS_FIELD(a, f) ((a)->size >= offsetof(nvtxEventAttributes_t, f) + sizeof((a)->f))

/* A text_len that says: up to the NUL, at most MAX_TEXT_BYTES - 1 (push
 * measures it while it copies, in one pass). */
#define TEXT_LEN_UNKNOWN SIZE_MAX

static void set_text(attrs *o, const char *s)
{
    o->text = s;
    o->text_len = s ? strnlen(s, MAX_TEXT_BYTES - 1) : 0;
}

static void set_wide(attrs *o, const wchar_t *w)
{
    o->text_len = gt_cap_wide_to_utf8(w, o->wide_buf, sizeof o->wide_buf);
    o->text = w ? o->wide_buf : NULL;
}

/* A registered string's handle: its id with the top bit set, or (when the
 * region had no room) a copy of it, which a pointer never sets. */
#define REGISTERED_ID ((uint64_t)1 << 63)

static void set_registered(attrs *o, nvtxStringHandle_t handle)
{
    uint64_t h = (uint64_t)(uintptr_t)handle;
    if (h & REGISTERED_ID)
        o->text_id = h & ~REGISTERED_ID;
    else
        set_text(o, (const char *)handle);
}

const char *gt_nvtx_registered_text(const void *handle)
{
    uint64_t h = (uint64_t)(uintptr_t)handle;
    if (h & REGISTERED_ID)
        return gt_cap_registered_text(h & ~REGISTERED_ID);
    return handle;
}

static void read_attrs(attrs *o, const nvtxEventAttributes_t *a)
{
    o->text = NULL;
    o->text_len = 0;
    o->text_id = 0;
    o->category = o->color = 0;
    o->has_color = o->payload_kind = 0;
    o->payload = 0;
    if (!a)
        return;
    if (HAS_FIELD(a, category))
        o->category = a->category;
    if (HAS_FIELD(a, color) && a->colorType == NVTX_COLOR_ARGB) {
        o->has_color = 1;
        o->color = a->color;
    }
    if (HAS_FIELD(a, payload) && a->payloadType >= NVTX_PAYLOAD_TYPE_UNSIGNED_INT64
        && a->payloadType <= NVTX_PAYLOAD_TYPE_FLOAT) {
        /* nvtxPayloadType_t and gt_payload_kind number the kinds alike. */
        o->payload_kind = (uint8_t)a->payloadType;
        memcpy(&o->payload, &a->payload, sizeof o->payload);
    }
    if (HAS_FIELD(a, message)) {
        switch (a->messageType) {
        case NVTX_MESSAGE_TYPE_ASCII: set_text(o, a->message.ascii); break;
        case NVTX_MESSAGE_TYPE_UNICODE: set_wide(o, a->message.unicode); break;
        case NVTX_MESSAGE_TYPE_REGISTERED: set_registered(o, a->message.registered); break;
        default: break;
        }
    }
}

int64_t gt_nvtx_domain_id(const void *handle)
{
    return handle ? ((const gt_domain *)handle)->id : 0;
}
#define domain_id_of(d) gt_nvtx_domain_id(d)

/* Writes one NVTX record; the text is copied after it. False: dropped (and counted). */
static bool emit(int32_t event_type, uint64_t start, uint64_t end, int64_t range_id,
                 int64_t domain_id, const attrs *a, int32_t os_tid)
{
    size_t text_bytes = a->text ? a->text_len + 1 : 0;
    rec_nvtx *r = gt_cap_reserve(REC_NVTX, sizeof *r, text_bytes, GT_EV_NVTX);
    if (!r)
        return false;
    r->event_type = event_type;
    r->category = a->category;
    r->start = start;
    r->end = end;
    r->range_id = range_id;
    r->domain_id = domain_id;
    r->payload = a->payload;
    r->text_id = a->text_id;
    r->color = a->color;
    r->has_color = a->has_color;
    r->payload_kind = a->payload_kind;
    r->os_tid = os_tid;
    if (text_bytes) {
        char *t = (char *)(r + 1);
        memcpy(t, a->text, a->text_len);
        t[a->text_len] = '\0';
    }
    gt_cap_commit();
    return true;
}

/* ---- push / pop ------------------------------------------------------- */

/* This thread's stack, made at its first push; NULL when capture is off,
 * when the thread gets no ring (the region's cap) or there is no memory:
 * the push is then dropped and counted. */
static struct gt_nvtx_stack *my_stack(void)
{
    struct gt_nvtx_stack *s = my_stack_ptr;
    if (__builtin_expect(s != NULL, 1))
        return s;
    if (!atomic_load_explicit(&gt_cap_active, memory_order_relaxed) || !gt_cap_ring_take())
        return NULL;
    pthread_once(&stack_key_once, make_stack_key);
    s = malloc(sizeof *s);
    if (!s)
        return NULL;
    s->depth = 0;
    s->n_overflow = 0;
    my_stack_ptr = s;
    if (have_stack_key)
        pthread_setspecific(stack_key, s);
    return s;
}

static int push(nvtxDomainHandle_t d, const attrs *a, uint8_t nest_only)
{
    uint64_t now = gt_cap_stamp();
    struct gt_nvtx_stack *s = my_stack();
    if (!s) {
        gt_cap_drop(GT_EV_NVTX);
        return -1;
    }
    if (s->depth == STACK_DEPTH) {
        s->n_overflow++;
        gt_cap_drop(GT_EV_NVTX);
        return s->depth + s->n_overflow - 1;
    }
    int64_t dom = domain_id_of(d);
    open_range *e = &s->e[s->depth];
    uint32_t off = s->depth ? s->e[s->depth - 1].text_off + s->e[s->depth - 1].text_len : 0;
    e->start = now;
    e->domain_id = dom;
    e->payload = a->payload;
    e->text_id = a->text_id;
    e->category = a->category;
    e->color = a->color;
    e->has_color = a->has_color;
    e->payload_kind = a->payload_kind;
    e->text_off = off;
    e->text_len = 0;
    e->has_text = a->text != NULL;
    if (a->text) {
        size_t room = off < STACK_TEXT_BYTES ? STACK_TEXT_BYTES - off : 0;
        size_t len;
        if (a->text_len == TEXT_LEN_UNKNOWN) {
            char *to = s->text + off;
            if (room > MAX_TEXT_BYTES - 1)
                room = MAX_TEXT_BYTES - 1;
            for (len = 0; len < room && a->text[len]; len++)
                to[len] = a->text[len];
        } else {
            len = a->text_len < room ? a->text_len : room;
            memcpy(s->text + off, a->text, len);
        }
        e->text_len = (uint32_t)len;
    }
    e->window = 0;
    if (__builtin_expect(gt_cap_window_mode != 0, 0)) {
        const char *t = a->text ? s->text + off : a->text_id ? gt_cap_registered_text(a->text_id) : NULL;
        size_t t_len = a->text ? e->text_len : t ? strlen(t) : 0;
        e->window = gt_cap_window_push(t, t_len, &e->window_key);
    }
    e->gate = gt_cap_gate_now();
    e->nest_only = nest_only;
    e->broken = 0;
    e->level = 0;
    for (int i = s->depth - 1; i >= 0; i--) {
        if (s->e[i].domain_id == dom) {
            e->level = s->e[i].level + 1;
            break;
        }
    }
    s->depth++;
    return e->level;
}

static int pop(nvtxDomainHandle_t d)
{
    uint64_t now = gt_cap_stamp();
    struct gt_nvtx_stack *s = my_stack_ptr;
    if (!s)
        return -1;
    if (s->n_overflow > 0) {
        s->n_overflow--;
        return s->depth + s->n_overflow;
    }
    int64_t dom = domain_id_of(d);
    int i = s->depth - 1;
    while (i >= 0 && s->e[i].domain_id != dom)
        i--;
    if (i < 0)
        return -1; /* a pop without a push: NVTX reports an error, nsys writes nothing */
    open_range *e = &s->e[i];
    int level = e->level;
    /* A nest-only range that ends before a range opened inside it, or one
     * open when a range around it ends, does not nest: not written. */
    if (__builtin_expect(i != s->depth - 1, 0)) {
        e->broken |= e->nest_only;
        for (int k = i + 1; k < s->depth; k++)
            s->e[k].broken |= s->e[k].nest_only;
    }
    /* Written when it overlaps a capture window: open at its push or now,
     * or one opened (and closed) in between. */
    uint64_t gate = gt_cap_gate_now();
    bool inside = GT_GATE_OPEN(gate) || GT_GATE_OPEN(e->gate) || (gate >> 2) != (e->gate >> 2);
    if (__builtin_expect(!inside || e->broken, 0)) {
        /* outside every window, or a nest-only range that did not nest: nothing is written */
    }
    /* The short form when nothing but a category and a text says more than
     * the times, written straight from the open range; else emit's. */
    else if (__builtin_expect(!e->has_color && !e->payload_kind && !e->text_id && (uint64_t)dom <= UINT32_MAX, 1)) {
        size_t text_bytes = e->has_text ? e->text_len + 1 : 0;
        rec_pushpop *r = gt_cap_reserve(REC_PUSHPOP, sizeof *r, text_bytes, GT_EV_NVTX);
        if (r) {
            r->start = e->start;
            r->end = now;
            r->category = e->category;
            r->domain_id = (uint32_t)dom;
            if (text_bytes) {
                /* Whole words: the record's text area is rounded up to 8
                 * bytes and the stack's arena has 8 bytes to spare. */
                char *t = (char *)(r + 1);
                const char *from = s->text + e->text_off;
                for (size_t k = 0; k < e->text_len; k += 8)
                    memcpy(t + k, from + k, 8);
                t[e->text_len] = '\0';
            }
            gt_cap_commit();
        }
    } else {
        attrs a; /* not zeroed: its 1 KiB conversion buffer is not used here */
        a.text = e->has_text ? s->text + e->text_off : NULL;
        a.text_len = e->text_len;
        a.text_id = e->text_id;
        a.category = e->category;
        a.color = e->color;
        a.has_color = e->has_color;
        a.payload_kind = e->payload_kind;
        a.payload = e->payload;
        emit(GT_NVTX_PUSHPOP, e->start, now, 0, dom, &a, 0);
    }
    if (__builtin_expect(e->window, 0))
        gt_cap_window_pop(e->window_key);
    if (i != s->depth - 1)
        memmove(&s->e[i], &s->e[i + 1], (size_t)(s->depth - 1 - i) * sizeof s->e[0]);
    s->depth--;
    return level;
}

/* A range with no message at all (nvtxRangePushEx with messageType unknown)
 * is still written, with no text. */

static int NVTX_API range_push_ex(const nvtxEventAttributes_t *ea)
{
    attrs a;
    read_attrs(&a, ea);
    return push(NULL, &a, 0);
}

static int NVTX_API range_push_a(const char *msg)
{
    attrs a;
    read_attrs(&a, NULL);
    a.text = msg;
    a.text_len = TEXT_LEN_UNKNOWN;
    return push(NULL, &a, 0);
}

static int NVTX_API range_push_w(const wchar_t *msg)
{
    attrs a;
    read_attrs(&a, NULL);
    set_wide(&a, msg);
    return push(NULL, &a, 0);
}

static int NVTX_API range_pop(void)
{
    return pop(NULL);
}

static int NVTX_API domain_range_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *ea)
{
    attrs a;
    read_attrs(&a, ea);
    return push(d, &a, 0);
}

static int NVTX_API domain_range_pop(nvtxDomainHandle_t d)
{
    return pop(d);
}

/* ---- start / end ------------------------------------------------------ */

static nvtxRangeId_t range_start(nvtxDomainHandle_t d, const attrs *a)
{
    uint64_t now = gt_cap_stamp();
    int64_t id = atomic_fetch_add_explicit(&next_range_id, 1, memory_order_relaxed);
    if (!GT_GATE_OPEN(gt_cap_gate_now()))
        return (nvtxRangeId_t)((uint64_t)id | RANGE_OUTSIDE);
    if (!emit(GT_NVTX_STARTEND, now, 0, id, domain_id_of(d), a, 0))
        return (nvtxRangeId_t)((uint64_t)id | RANGE_DROPPED);
    return (nvtxRangeId_t)id;
}

static void range_end(nvtxRangeId_t id)
{
    uint64_t now = gt_cap_stamp();
    if (id == 0 || (id & (RANGE_DROPPED | RANGE_OUTSIDE)))
        return; /* never started, its start was dropped and counted, or it began outside a capture window */
    rec_range_end *r = gt_cap_reserve_quiet(REC_RANGE_END, sizeof *r, 0);
    if (!r) {
        /* The range is dropped, and counted once the writer has it. With
         * the set full (thousands of ends waiting for the writer) it stays
         * as a range that never ended: in the trace once, not lost twice. */
        static _Atomic int once;
        if (!gt_cap_note_lost_end((int64_t)id))
            gt_cap_warn_once(&once, "buffers full: some start/end ranges lost their end and are written as never ended");
        return;
    }
    r->range_id = (int64_t)id;
    r->end = now;
    gt_cap_commit();
}

static nvtxRangeId_t NVTX_API range_start_ex(const nvtxEventAttributes_t *ea)
{
    attrs a;
    read_attrs(&a, ea);
    return range_start(NULL, &a);
}

static nvtxRangeId_t NVTX_API range_start_a(const char *msg)
{
    attrs a;
    read_attrs(&a, NULL);
    set_text(&a, msg);
    return range_start(NULL, &a);
}

static nvtxRangeId_t NVTX_API range_start_w(const wchar_t *msg)
{
    attrs a;
    read_attrs(&a, NULL);
    set_wide(&a, msg);
    return range_start(NULL, &a);
}

static void NVTX_API range_end_cb(nvtxRangeId_t id)
{
    range_end(id);
}

static nvtxRangeId_t NVTX_API domain_range_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *ea)
{
    attrs a;
    read_attrs(&a, ea);
    return range_start(d, &a);
}

static void NVTX_API domain_range_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    (void)d;
    range_end(id);
}

/* ---- marks ------------------------------------------------------------ */

static void mark(nvtxDomainHandle_t d, const attrs *a)
{
    if (!GT_GATE_OPEN(gt_cap_gate_now()))
        return;
    emit(GT_NVTX_MARK, gt_cap_stamp(), 0, 0, domain_id_of(d), a, 0);
}

static void NVTX_API mark_ex(const nvtxEventAttributes_t *ea)
{
    attrs a;
    read_attrs(&a, ea);
    mark(NULL, &a);
}

static void NVTX_API mark_a(const char *msg)
{
    attrs a;
    read_attrs(&a, NULL);
    set_text(&a, msg);
    mark(NULL, &a);
}

static void NVTX_API mark_w(const wchar_t *msg)
{
    attrs a;
    read_attrs(&a, NULL);
    set_wide(&a, msg);
    mark(NULL, &a);
}

static void NVTX_API domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *ea)
{
    attrs a;
    read_attrs(&a, ea);
    mark(d, &a);
}

/* ---- names: categories, threads, domains, registered strings ---------- */

static void name_category(nvtxDomainHandle_t d, uint32_t category, attrs *a)
{
    a->category = category;
    emit(GT_NVTX_CATEGORY, gt_cap_stamp(), 0, 0, domain_id_of(d), a, 0);
    gt_name n = {.kind = GT_NAME_CATEGORY, .domain_id = domain_id_of(d), .id = category, .text = a->text,
                 .text_len = a->text_len};
    gt_names_keep(&n);
}

static void NVTX_API name_category_a(uint32_t category, const char *name)
{
    attrs a;
    read_attrs(&a, NULL);
    set_text(&a, name);
    name_category(NULL, category, &a);
}

static void NVTX_API name_category_w(uint32_t category, const wchar_t *name)
{
    attrs a;
    read_attrs(&a, NULL);
    set_wide(&a, name);
    name_category(NULL, category, &a);
}

static void NVTX_API domain_name_category_a(nvtxDomainHandle_t d, uint32_t category, const char *name)
{
    attrs a;
    read_attrs(&a, NULL);
    set_text(&a, name);
    name_category(d, category, &a);
}

static void NVTX_API domain_name_category_w(nvtxDomainHandle_t d, uint32_t category, const wchar_t *name)
{
    attrs a;
    read_attrs(&a, NULL);
    set_wide(&a, name);
    name_category(d, category, &a);
}

static void name_thread(uint32_t tid, attrs *a)
{
    emit(GT_NVTX_THREAD_NAME, gt_cap_stamp(), 0, 0, 0, a, (int32_t)tid);
}

static void NVTX_API name_os_thread_a(uint32_t tid, const char *name)
{
    attrs a;
    read_attrs(&a, NULL);
    set_text(&a, name);
    name_thread(tid, &a);
}

static void NVTX_API name_os_thread_w(uint32_t tid, const wchar_t *name)
{
    attrs a;
    read_attrs(&a, NULL);
    set_wide(&a, name);
    name_thread(tid, &a);
}

static nvtxDomainHandle_t domain_create(attrs *a)
{
    gt_domain *d = malloc(sizeof *d);
    if (!d) {
        gt_cap_drop(GT_EV_NVTX);
        return NULL; /* the default domain: the program goes on */
    }
    d->id = atomic_fetch_add_explicit(&next_domain_id, 1, memory_order_relaxed);
    emit(GT_NVTX_DOMAIN_CREATE, gt_cap_stamp(), 0, 0, d->id, a, 0);
    gt_name n = {.kind = GT_NAME_DOMAIN, .domain_id = d->id, .text = a->text, .text_len = a->text_len};
    gt_names_keep(&n);
    return (nvtxDomainHandle_t)d;
}

static nvtxDomainHandle_t NVTX_API domain_create_a(const char *name)
{
    attrs a;
    read_attrs(&a, NULL);
    set_text(&a, name);
    return domain_create(&a);
}

static nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t *name)
{
    attrs a;
    read_attrs(&a, NULL);
    set_wide(&a, name);
    return domain_create(&a);
}

static void NVTX_API domain_destroy(nvtxDomainHandle_t d)
{
    attrs a;
    read_attrs(&a, NULL);
    if (d) {
        emit(76 /* NvtxDomainDestroy */, gt_cap_stamp(), 0, 0, domain_id_of(d), &a, 0);
        gt_names_forget(GT_NAME_DOMAIN, (uint64_t)domain_id_of(d));
    }
}

/* In a fork child, before its first record: the domains and categories its
 * parent named, named again in the child's own part; those the table could
 * not keep are dropped, counted. */
static void rename_one(const gt_name *n)
{
    attrs a;
    read_attrs(&a, NULL);
    a.text = n->text;
    a.text_len = n->text ? n->text_len : 0;
    if (n->kind == GT_NAME_CATEGORY) {
        a.category = (uint32_t)n->id;
        emit(GT_NVTX_CATEGORY, gt_cap_stamp(), 0, 0, n->domain_id, &a, 0);
    } else {
        emit(GT_NVTX_DOMAIN_CREATE, gt_cap_stamp(), 0, 0, n->domain_id, &a, 0);
    }
}

static void rename_in_fork_child(void)
{
    int64_t n_unkept = gt_names_each(GT_NAME_DOMAIN, rename_one) + gt_names_each(GT_NAME_CATEGORY, rename_one);
    for (int64_t i = 0; i < n_unkept; i++)
        gt_cap_drop(GT_EV_NVTX);
}

static void hook_fork_children(void)
{
    gt_cap_after_fork_hook(rename_in_fork_child);
}

/* The string goes to the region once; records carry its id. */
static nvtxStringHandle_t register_string(const char *s, size_t len)
{
    uint64_t id = gt_cap_register_string(s, len);
    if (id)
        return (nvtxStringHandle_t)(uintptr_t)(id | REGISTERED_ID);
    char *copy = malloc(len + 1); /* never freed: handles live as long as the program */
    if (!copy)
        return NULL;
    memcpy(copy, s, len);
    copy[len] = '\0';
    return (nvtxStringHandle_t)copy;
}

static nvtxStringHandle_t NVTX_API domain_register_string_a(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    return s ? register_string(s, strnlen(s, MAX_TEXT_BYTES - 1)) : NULL;
}

static nvtxStringHandle_t NVTX_API domain_register_string_w(nvtxDomainHandle_t d, const wchar_t *s)
{
    char buf[MAX_TEXT_BYTES];
    (void)d;
    if (!s)
        return NULL;
    size_t n = gt_cap_wide_to_utf8(s, buf, sizeof buf);
    return register_string(buf, n);
}

/* Resources (naming OS or CUDA objects) are accepted and not recorded. */
static char resource_token;

static nvtxResourceHandle_t NVTX_API domain_resource_create(nvtxDomainHandle_t d, nvtxResourceAttributes_t *attribs)
{
    (void)d;
    (void)attribs;
    return (nvtxResourceHandle_t)&resource_token;
}

static void NVTX_API domain_resource_destroy(nvtxResourceHandle_t r)
{
    (void)r;
}

static void NVTX_API nvtx_initialize(const void *reserved)
{
    (void)reserved;
    gt_cap_init();
}

/* ---- for other parts of the library (itt.c) ----------------------------- */

const void *gt_nvtx_domain_new(const char *name)
{
    return domain_create_a(name);
}

void gt_nvtx_name_category(const void *domain, uint32_t category, const char *name)
{
    domain_name_category_a((nvtxDomainHandle_t)domain, category, name);
}

const void *gt_nvtx_register_string(const char *s, size_t len)
{
    return register_string(s, len < MAX_TEXT_BYTES ? len : MAX_TEXT_BYTES - 1);
}

int gt_nvtx_push_nested(const void *domain, uint32_t category, const void *string)
{
    attrs a;
    read_attrs(&a, NULL);
    a.category = category;
    set_registered(&a, (nvtxStringHandle_t)string);
    return push((nvtxDomainHandle_t)domain, &a, 1);
}

int gt_nvtx_pop_nested(const void *domain)
{
    return pop((nvtxDomainHandle_t)domain);
}

/* ---- the injection entry point ---------------------------------------- */

static void set_slot(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer fn)
{
    if (id < size && table[id])
        *table[id] = fn;
}

#define FN(f) ((NvtxFunctionPointer)(void (*)(void))(f))

GT_EXPORT int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);

int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
    static _Atomic int once_bad_table;
    static pthread_once_t fork_hook_once = PTHREAD_ONCE_INIT;
    gt_cap_init();
    if (!atomic_load(&gt_cap_active) || !get_export_table)
        return 0;
    pthread_once(&fork_hook_once, hook_fork_children);
    const NvtxExportTableCallbacks *cb = get_export_table(NVTX_ETID_CALLBACKS);
    if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable) {
        gt_cap_warn_once(&once_bad_table, "this program's NVTX has no callback table: NVTX is not recorded");
        return 0;
    }
    NvtxFunctionTable t = NULL;
    unsigned n = 0;
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) && t) {
        set_slot(t, n, NVTX_CBID_CORE_MarkEx, FN(mark_ex));
        set_slot(t, n, NVTX_CBID_CORE_MarkA, FN(mark_a));
        set_slot(t, n, NVTX_CBID_CORE_MarkW, FN(mark_w));
        set_slot(t, n, NVTX_CBID_CORE_RangeStartEx, FN(range_start_ex));
        set_slot(t, n, NVTX_CBID_CORE_RangeStartA, FN(range_start_a));
        set_slot(t, n, NVTX_CBID_CORE_RangeStartW, FN(range_start_w));
        set_slot(t, n, NVTX_CBID_CORE_RangeEnd, FN(range_end_cb));
        set_slot(t, n, NVTX_CBID_CORE_RangePushEx, FN(range_push_ex));
        set_slot(t, n, NVTX_CBID_CORE_RangePushA, FN(range_push_a));
        set_slot(t, n, NVTX_CBID_CORE_RangePushW, FN(range_push_w));
        set_slot(t, n, NVTX_CBID_CORE_RangePop, FN(range_pop));
        set_slot(t, n, NVTX_CBID_CORE_NameCategoryA, FN(name_category_a));
        set_slot(t, n, NVTX_CBID_CORE_NameCategoryW, FN(name_category_w));
        set_slot(t, n, NVTX_CBID_CORE_NameOsThreadA, FN(name_os_thread_a));
        set_slot(t, n, NVTX_CBID_CORE_NameOsThreadW, FN(name_os_thread_w));
    }
    t = NULL;
    n = 0;
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) && t) {
        set_slot(t, n, NVTX_CBID_CORE2_DomainMarkEx, FN(domain_mark_ex));
        set_slot(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, FN(domain_range_start_ex));
        set_slot(t, n, NVTX_CBID_CORE2_DomainRangeEnd, FN(domain_range_end));
        set_slot(t, n, NVTX_CBID_CORE2_DomainRangePushEx, FN(domain_range_push_ex));
        set_slot(t, n, NVTX_CBID_CORE2_DomainRangePop, FN(domain_range_pop));
        set_slot(t, n, NVTX_CBID_CORE2_DomainResourceCreate, FN(domain_resource_create));
        set_slot(t, n, NVTX_CBID_CORE2_DomainResourceDestroy, FN(domain_resource_destroy));
        set_slot(t, n, NVTX_CBID_CORE2_DomainNameCategoryA, FN(domain_name_category_a));
        set_slot(t, n, NVTX_CBID_CORE2_DomainNameCategoryW, FN(domain_name_category_w));
        set_slot(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, FN(domain_register_string_a));
        set_slot(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, FN(domain_register_string_w));
        set_slot(t, n, NVTX_CBID_CORE2_DomainCreateA, FN(domain_create_a));
        set_slot(t, n, NVTX_CBID_CORE2_DomainCreateW, FN(domain_create_w));
        set_slot(t, n, NVTX_CBID_CORE2_DomainDestroy, FN(domain_destroy));
        set_slot(t, n, NVTX_CBID_CORE2_Initialize, FN(nvtx_initialize));
    }
    const NvtxExportTableVersionInfo *vi = get_export_table(NVTX_ETID_VERSIONINFO);
    if (vi && vi->struct_size >= sizeof *vi && vi->SetInjectionNvtxVersion)
        vi->SetInjectionNvtxVersion(NVTX_VERSION);
    return 1;
}
