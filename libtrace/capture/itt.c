/* itt.c: an ITT collector (Intel's Instrumentation and Tracing Technology
 * API), so that PyTorch 2.x's ITT profiler (RecordFunction callbacks in
 * C++, torch.autograd.profiler.emit_itt) names every op at C speed.
 *
 * How it is reached: a program's static part of ITT (ittnotify_static.c,
 * inside libtorch_cpu.so) loads, at its first ITT call, the library named
 * by INTEL_LIBITTNOTIFY64 (gtrace --pytorch sets it to libgtrace.so, which
 * is already loaded) and, when it exports __itt_api_init, hands it its
 * table of function pointers to fill. We fill four: domain and string
 * handle creation, task begin and end; every other entry gets the static
 * part's own null function (ITT allows it), so nothing else costs a call.
 *
 * What it writes: each task of the "PyTorch" domain (torch's, one per
 * RecordFunction: "aten::addmm", "AddmmBackward0", a user's
 * record_function) becomes a push/pop range in a domain of ours also
 * named "PyTorch", category 1 ("compute"), what gtrace_torch's dispatch
 * mode writes, so the report's op tables, diff and viewer read them alike.
 * Not written: torch's own names of the phases gtrace marks itself (the
 * autograd engine's evaluate_function, which wraps the node hooks that
 * open module backward ranges; Optimizer.step#, Optimizer.zero_grad#,
 * enumerate(DataLoader)#), and any task that does not nest with gtrace's
 * ranges (gt_nvtx_push_nested). Every other task is a range: an op that
 * calls an op of its name as its only child (aten::div_ of a scalar calls
 * aten::div_ of a tensor) is two, where key_averages() merges them into
 * one. Tasks of other domains (oneDNN's) are
 * ignored: other domains get a disabled handle, so their callers skip us.
 *
 * String handles: torch asks for one on every op, with the op's name, so
 * they are found in a hash of the names, lock-free (CAS into a fixed
 * table), each made once with its registered string. Not here: the rest of
 * ITT (frames, counters, markers, ids), shapes (ITT gets names only). */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "itt_abi.h"
#include "nvtx.h"
#include "ring.h"
#include "session.h"
#include "warn.h"

#define TORCH_DOMAIN "PyTorch"
#define COMPUTE 1              /* the category of ops (gtrace_torch/nvtx.py) */
#define N_SLOTS 16384          /* distinct names; a power of two */
#define MAX_DEPTH 256          /* the NVTX stack's depth (nvtx.c) */
#define NAME_MAGIC 0x67747274  /* in a string handle's extra1: one of ours */

static const unsigned char itt_magic[8] = ITT_MAGIC;

/* ---- names ------------------------------------------------------------- */

typedef struct itt_name {
    itt_string_handle h;       /* what callers hold */
    uint64_t hash;
    const void *text;          /* the registered string (nvtx.c) */
    bool skip;                 /* not written (a phase gtrace marks itself) */
    char name[];
} itt_name;

static _Atomic(itt_name *) slots[N_SLOTS];
static const void *our_domain;               /* ours, named TORCH_DOMAIN */
static _Atomic(const itt_domain *) torch_domain; /* the caller's, once seen */
static itt_domain enabled_domain = {.flags = 1, .nameA = TORCH_DOMAIN};
static itt_domain disabled_domain = {.flags = 0, .nameA = ""};
static _Atomic int once_full, once_version;
static _Atomic long n_tasks;                 /* tasks of the torch domain seen (gt_itt_tasks) */

static const char *const skipped[] = {
    "autograd::engine::evaluate_function:", "Optimizer.step#", "Optimizer.zero_grad#",
    "enumerate(DataLoader)#", "gtrace::",
};

static uint64_t hash_of(const char *s, size_t *len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    const char *p = s;
    for (; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    *len = (size_t)(p - s);
    return h;
}

static itt_name *name_new(const char *s, size_t len, uint64_t h)
{
    itt_name *n = malloc(sizeof *n + len + 1);
    if (!n)
        return NULL;
    memcpy(n->name, s, len + 1);
    n->hash = h;
    n->h = (itt_string_handle){.strA = n->name, .extra1 = NAME_MAGIC, .extra2 = n};
    n->skip = false;
    for (size_t i = 0; i < sizeof skipped / sizeof skipped[0]; i++)
        n->skip |= strncmp(s, skipped[i], strlen(skipped[i])) == 0;
    n->text = n->skip ? NULL : gt_nvtx_register_string(n->name, len);
    n->skip |= n->text == NULL;
    return n;
}

/* The name's entry: found, or made and put in its slot (a thread that
 * loses the race to the same slot frees its own and takes the winner's). */
static itt_name *name_of(const char *s)
{
    size_t len;
    uint64_t h = hash_of(s, &len);
    itt_name *made = NULL;
    for (size_t k = 0; k < N_SLOTS; k++) {
        _Atomic(itt_name *) *slot = &slots[(h + k) & (N_SLOTS - 1)];
        itt_name *n = atomic_load_explicit(slot, memory_order_acquire);
        if (!n) {
            if (!made && !(made = name_new(s, len, h)))
                return NULL;
            if (atomic_compare_exchange_strong_explicit(slot, &n, made, memory_order_acq_rel,
                                                        memory_order_acquire))
                return made;
        }
        if (n->hash == h && strcmp(n->name, s) == 0) {
            free(made); /* its registered string stays in the region, unused */
            return n;
        }
    }
    free(made);
    gt_cap_warn_once(&once_full, "ITT: more than %d task names; the others are not recorded", N_SLOTS);
    return NULL;
}

/* ---- the four functions ITT's callers reach ---------------------------- */

static itt_domain *domain_create(const char *name)
{
    return name && strcmp(name, TORCH_DOMAIN) == 0 ? &enabled_domain : &disabled_domain;
}

static itt_string_handle *string_handle_create(const char *name)
{
    itt_name *n = name ? name_of(name) : NULL;
    return n ? &n->h : NULL;
}

static bool is_torch_domain(const itt_domain *d)
{
    if (__builtin_expect(d == atomic_load_explicit(&torch_domain, memory_order_relaxed), 1))
        return true;
    if (!d || !d->nameA || strcmp(d->nameA, TORCH_DOMAIN) != 0)
        return false;
    atomic_store_explicit(&torch_domain, d, memory_order_relaxed);
    return true;
}

/* Per thread: the open tasks of the torch domain, and which were pushed
 * (a task's end does not say which task it ends: the innermost). */
static __thread int my_depth __attribute__((tls_model("initial-exec")));
static __thread uint8_t my_pushed[MAX_DEPTH] __attribute__((tls_model("initial-exec")));

/* The op range of name n opens on this thread (n NULL: a task with no
 * name of ours, counted on the stack so that its end pops nothing). */
static void op_begin(itt_name *n)
{
    int k = my_depth++;
    if (k >= MAX_DEPTH)
        return;
    my_pushed[k] = 0;
    if (!n)
        return;
    atomic_fetch_add_explicit(&n_tasks, 1, memory_order_relaxed);
    if (!n->skip)
        my_pushed[k] = gt_nvtx_push_nested(our_domain, COMPUTE, n->text) >= 0;
}

static void op_end(void)
{
    if (my_depth <= 0) /* a task a fork parent began */
        return;
    int k = --my_depth;
    if (k < MAX_DEPTH && my_pushed[k])
        gt_nvtx_pop_nested(our_domain);
}

static void task_begin(const itt_domain *d, itt_id id, itt_id parent, itt_string_handle *h)
{
    (void)id;
    (void)parent;
    if (!is_torch_domain(d))
        return;
    /* a handle made before this collector was loaded is the static part's */
    op_begin(!h ? NULL : h->extra1 == NAME_MAGIC ? h->extra2 : h->strA ? name_of(h->strA) : NULL);
}

static void task_end(const itt_domain *d)
{
    if (is_torch_domain(d))
        op_end();
}

/* ---- loading ----------------------------------------------------------- */

GT_EXPORT void __itt_api_init(itt_global *g, int init_groups);
GT_EXPORT long gt_itt_tasks(void);
GT_EXPORT int gt_torch_ops_init(void);
GT_EXPORT void gt_torch_op_begin(const char *name);
GT_EXPORT void gt_torch_op_end(void);

/* Our domain, made once (the ITT static part and the RecordFunction
 * callback may both ask); false: none (out of memory, capture off). */
static void make_domain(void)
{
    const void *d = gt_nvtx_domain_new(TORCH_DOMAIN);
    if (d)
        gt_nvtx_name_category(d, COMPUTE, "compute");
    our_domain = d;
}

static bool our_domain_made(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_domain);
    return our_domain != NULL;
}

typedef void (*fn_ptr)(void);

static void set_fn(void **slot, fn_ptr f)
{
    memcpy(slot, &f, sizeof f);
}

/* Called once by the static part, under its lock. */
void __itt_api_init(itt_global *g, int init_groups)
{
    (void)init_groups;
    gt_cap_init();
    if (!g || !g->api_list_ptr)
        return;
    bool ok = atomic_load(&gt_cap_active) && memcmp(g->magic, itt_magic, sizeof itt_magic) == 0
              && g->version_major == 3;
    if (!ok && atomic_load(&gt_cap_active))
        gt_cap_warn_once(&once_version, "ITT: an unknown ITT static part (version %lu): ops are not recorded",
                         g->version_major);
    if (ok && !our_domain_made())
        ok = false;
    for (itt_api_info *a = g->api_list_ptr; a->name; a++) {
        if (ok && !strcmp(a->name, "__itt_domain_create"))
            set_fn(a->func_ptr, (fn_ptr)domain_create);
        else if (ok && !strcmp(a->name, "__itt_string_handle_create"))
            set_fn(a->func_ptr, (fn_ptr)string_handle_create);
        else if (ok && !strcmp(a->name, "__itt_task_begin"))
            set_fn(a->func_ptr, (fn_ptr)task_begin);
        else if (ok && !strcmp(a->name, "__itt_task_end"))
            set_fn(a->func_ptr, (fn_ptr)task_end);
        else
            *a->func_ptr = a->null_func;
    }
    /* handles the static part made before: marked as ours, so a task finds its name at once */
    for (itt_string_handle *h = ok ? g->string_list : NULL; h; h = h->next) {
        itt_name *n = h->strA ? name_of(h->strA) : NULL;
        if (n) {
            h->extra2 = n;
            h->extra1 = NAME_MAGIC;
        }
    }
}

/* How many tasks of torch's domain this collector has seen (gtrace_torch
 * asks, after a probe, whether ITT reaches it). */
long gt_itt_tasks(void)
{
    return atomic_load_explicit(&n_tasks, memory_order_relaxed);
}

/* ---- RecordFunction callbacks (torch without ITT) ----------------------- */

/* torch 1.13 has no ITT: gtrace_torch's RecordFunction callback
 * (libtrace/python/record_ops.cpp) calls these at each op's start and end,
 * and the op becomes the same range, by the same rules, as through ITT. */
int gt_torch_ops_init(void)
{
    gt_cap_init();
    return atomic_load(&gt_cap_active) && our_domain_made() ? 0 : -1;
}

void gt_torch_op_begin(const char *name)
{
    op_begin(name ? name_of(name) : NULL);
}

void gt_torch_op_end(void)
{
    op_end();
}
