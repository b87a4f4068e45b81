/* names.c: the names this process image gave through NVTX, kept for its
 * fork children. A domain, a category and a memory heap are named once, in
 * one record of the process that named them, and every later event refers
 * to them by id; a fork child keeps using those ids (its memory is a copy
 * of its parent's) but its records go to a trace part of its own, where
 * nothing names them. So nvtx.c and nvtx_mem.c keep here what they named,
 * and a fork child writes it again into its own part (its first record
 * makes it: ring.h's gt_cap_after_fork_hook) from what the table held when
 * it forked (names marked at fork, by an atfork child handler of this
 * file's own).
 *
 * A fixed table of slots and a fixed arena for their texts, in this
 * process's own memory (a fork child gets a copy): no lock, no allocation.
 * A slot is claimed by compare-and-swap; a domain destroyed or a heap
 * unregistered frees its slot for the next name; a generation in the state
 * word tells a reader that a slot changed while it read it. A name that
 * finds no room is counted; the children count it as dropped and it is said
 * once. This file writes no record and knows nothing of the rings.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "names.h"
#include "warn.h"

#define N_SLOTS 4096
#define ARENA_BYTES (256 * 1024)
#define MAX_TEXT_BYTES 1024 /* the callers cut their texts at 1023 bytes */

/* A slot's state word: the state in the low two bits, whether a fork child
 * inherited it (set in the child at fork), a generation above. */
enum { ST_FREE = 0, ST_BUSY = 1, ST_KEPT = 2, ST_GONE = 3 };
#define ST_MASK 3u
#define INHERITED 4u
#define GEN_ONE 8u

typedef struct slot {
    _Atomic uint32_t state;
    uint8_t kind;           /* gt_name_kind */
    uint8_t has_text;
    int32_t usage, type;
    int64_t domain_id;
    uint64_t id, address;
    int64_t bytes;
    uint32_t text_off, text_cap, text_len; /* in the arena */
} slot;

static slot slots[N_SLOTS];
static _Atomic uint32_t n_slots;      /* slots ever claimed: [0, n_slots) */
static char arena[ARENA_BYTES];
static _Atomic uint32_t arena_used;
static _Atomic int64_t n_unkept[GT_NAME_N_KINDS]; /* names the table had no room for, ever */
static int64_t n_unkept_at_fork[GT_NAME_N_KINDS]; /* in a fork child: its parent's, when it forked */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static uint32_t st_of(uint32_t s)
{
    return s & ST_MASK;
}

/* In a fork child (one thread): what it inherits is what was kept when it forked. */
static void names_in_fork_child(void)
{
    uint32_t n = atomic_load_explicit(&n_slots, memory_order_acquire);
    if (n > N_SLOTS)
        n = N_SLOTS;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = atomic_load_explicit(&slots[i].state, memory_order_relaxed);
        s = st_of(s) == ST_KEPT ? s | INHERITED : s & ~INHERITED;
        if (st_of(s) == ST_BUSY) {
            /* Another thread of the parent was writing it: not the child's,
             * nor is its text area (its bounds may be half written). */
            s = (s & ~ST_MASK) | ST_GONE;
            slots[i].text_cap = 0;
        }
        atomic_store_explicit(&slots[i].state, s, memory_order_relaxed);
    }
    for (int k = 0; k < GT_NAME_N_KINDS; k++)
        n_unkept_at_fork[k] = atomic_load_explicit(&n_unkept[k], memory_order_relaxed);
}

static void register_fork_handler(void)
{
    pthread_atfork(NULL, NULL, names_in_fork_child);
}

/* Whether kept slot `e` (its state read as `s`) is a category `n` names;
 * `same`: with the same text. False when the slot changed while read. */
static bool is_category(const slot *e, uint32_t s, const gt_name *n, size_t len, bool *same)
{
    if (e->kind != GT_NAME_CATEGORY || e->domain_id != n->domain_id || e->id != n->id)
        return false;
    *same = e->has_text == (n->text != NULL) && e->text_len == len && !memcmp(arena + e->text_off, n->text, len);
    return atomic_load_explicit(&e->state, memory_order_acquire) == s;
}

/* A slot in state BUSY for this thread (its old state in *old), or NULL. */
static slot *claim(uint32_t *old)
{
    uint32_t n = atomic_load_explicit(&n_slots, memory_order_acquire);
    for (uint32_t i = 0; i < n && i < N_SLOTS; i++) {
        uint32_t s = atomic_load_explicit(&slots[i].state, memory_order_relaxed);
        if (st_of(s) == ST_GONE
            && atomic_compare_exchange_strong_explicit(&slots[i].state, &s, ((s & ~(ST_MASK | INHERITED)) + GEN_ONE) | ST_BUSY,
                                                       memory_order_acquire, memory_order_relaxed)) {
            *old = s;
            return &slots[i];
        }
    }
    uint32_t i = atomic_fetch_add_explicit(&n_slots, 1, memory_order_acq_rel);
    if (i >= N_SLOTS) {
        atomic_store_explicit(&n_slots, N_SLOTS, memory_order_relaxed); /* no wrap, however many come */
        return NULL;
    }
    /* FREE until now: nobody else has it. */
    *old = ST_FREE;
    atomic_store_explicit(&slots[i].state, GEN_ONE | ST_BUSY, memory_order_relaxed);
    return &slots[i];
}

static void not_kept(gt_name_kind kind)
{
    static _Atomic int once;
    atomic_fetch_add_explicit(&n_unkept[kind], 1, memory_order_relaxed);
    gt_cap_warn_once(&once, "more NVTX domains, categories and heaps than gtrace keeps for fork children (%d, "
                            "%d KiB of names): a fork child drops the rest of them, counted", N_SLOTS,
                     ARENA_BYTES / 1024);
}

void gt_names_keep(const gt_name *n)
{
    if (!n || (unsigned)n->kind >= GT_NAME_N_KINDS)
        return;
    pthread_once(&fork_once, register_fork_handler);
    size_t len = n->text ? n->text_len : 0;
    if (len > MAX_TEXT_BYTES - 1)
        len = MAX_TEXT_BYTES - 1;
    uint32_t n_now = atomic_load_explicit(&n_slots, memory_order_acquire);
    if (n->kind == GT_NAME_CATEGORY) {
        /* A category named again as it was: kept once. */
        for (uint32_t i = 0; i < n_now && i < N_SLOTS; i++) {
            uint32_t s = atomic_load_explicit(&slots[i].state, memory_order_acquire);
            bool same = false;
            if (st_of(s) == ST_KEPT && is_category(&slots[i], s, n, len, &same) && same)
                return;
        }
    }
    uint32_t old;
    slot *e = claim(&old);
    if (!e) {
        not_kept(n->kind);
        return;
    }
    if (n->text && (old == ST_FREE || e->text_cap < len + 1)) {
        uint32_t at = atomic_fetch_add_explicit(&arena_used, (uint32_t)(len + 1), memory_order_relaxed);
        if (at + len + 1 > ARENA_BYTES) {
            atomic_store_explicit(&arena_used, ARENA_BYTES, memory_order_relaxed);
            uint32_t s = atomic_load_explicit(&e->state, memory_order_relaxed);
            e->text_cap = old == ST_FREE ? 0 : e->text_cap;
            atomic_store_explicit(&e->state, (s & ~ST_MASK) | ST_GONE, memory_order_release);
            not_kept(n->kind);
            return;
        }
        e->text_off = at;
        e->text_cap = (uint32_t)(len + 1);
    } else if (old == ST_FREE) {
        e->text_off = e->text_cap = 0;
    }
    e->kind = (uint8_t)n->kind;
    e->domain_id = n->domain_id;
    e->id = n->id;
    e->address = n->address;
    e->bytes = n->bytes;
    e->usage = n->usage;
    e->type = n->type;
    e->has_text = n->text != NULL;
    e->text_len = (uint32_t)len;
    if (n->text) {
        memcpy(arena + e->text_off, n->text, len);
        arena[e->text_off + len] = '\0';
    }
    uint32_t s = atomic_load_explicit(&e->state, memory_order_relaxed);
    atomic_store_explicit(&e->state, (s & ~ST_MASK) | ST_KEPT, memory_order_release);
    if (n->kind != GT_NAME_CATEGORY)
        return;
    /* A category named anew: its earlier name is not inherited. */
    for (uint32_t i = 0; i < n_now && i < N_SLOTS; i++) {
        slot *o = &slots[i];
        uint32_t so = atomic_load_explicit(&o->state, memory_order_acquire);
        bool same = false;
        if (o != e && st_of(so) == ST_KEPT && is_category(o, so, n, len, &same))
            atomic_compare_exchange_strong_explicit(&o->state, &so, (so & ~ST_MASK) | ST_GONE, memory_order_acq_rel,
                                                    memory_order_relaxed);
    }
}

void gt_names_forget(gt_name_kind kind, uint64_t id_or_domain)
{
    uint32_t n = atomic_load_explicit(&n_slots, memory_order_acquire);
    for (uint32_t i = 0; i < n && i < N_SLOTS; i++) {
        slot *e = &slots[i];
        uint32_t s = atomic_load_explicit(&e->state, memory_order_acquire);
        if (st_of(s) != ST_KEPT || e->kind != (uint8_t)kind)
            continue;
        uint64_t key = kind == GT_NAME_DOMAIN ? (uint64_t)e->domain_id : e->id;
        if (key == id_or_domain
            && atomic_compare_exchange_strong_explicit(&e->state, &s, (s & ~ST_MASK) | ST_GONE, memory_order_acq_rel,
                                                       memory_order_relaxed))
            return;
    }
}

int64_t gt_names_each(gt_name_kind kind, void (*fn)(const gt_name *n))
{
    if ((unsigned)kind >= GT_NAME_N_KINDS)
        return 0;
    uint32_t n = atomic_load_explicit(&n_slots, memory_order_acquire);
    for (uint32_t i = 0; i < n && i < N_SLOTS; i++) {
        const slot *e = &slots[i];
        uint32_t s = atomic_load_explicit(&e->state, memory_order_acquire);
        if (st_of(s) != ST_KEPT || !(s & INHERITED) || e->kind != (uint8_t)kind)
            continue;
        char text[MAX_TEXT_BYTES];
        gt_name copy = {.kind = kind, .domain_id = e->domain_id, .id = e->id, .address = e->address,
                        .bytes = e->bytes, .usage = e->usage, .type = e->type, .text = NULL, .text_len = 0};
        if (e->has_text) {
            copy.text_len = e->text_len < MAX_TEXT_BYTES ? e->text_len : MAX_TEXT_BYTES - 1;
            memcpy(text, arena + e->text_off, copy.text_len);
            text[copy.text_len] = '\0';
            copy.text = text;
        }
        /* Another thread of this child may have reused the slot meanwhile: then not inherited. */
        if (atomic_load_explicit(&e->state, memory_order_acquire) != s)
            continue;
        fn(&copy);
    }
    return n_unkept_at_fork[kind];
}
