/* oom.c: the out-of-memory post-mortem (gt_oom): the first allocation that
 * failed, where (step, phase, ranges), what the allocator held (its largest
 * live blocks, the free bytes of its segments and their largest gap), what
 * grew since the previous step, and which fixes would have avoided it with
 * the memory each would save, estimated from the allocator's state.
 *
 * The failure is an NVTX mark, or the start of a range, of a category named
 * "oom" in its domain (the trainer's caching allocator), or a mark whose
 * message starts "out of memory" (a snapshot's oom action, imported). Its
 * figures are the message's key=value words in bytes; the integer payload is
 * the request when the message has none. The state is replayed as
 * `gtrace memory --at` does (memory_state.c); a trace with no allocator (a
 * CPU tensor's failure under --pytorch) has the message's figures alone,
 * -1 those it does not give, and no fixes estimated. Rendering is in
 * render_oom.c. */
#include "oom.h"
#include "pytorch_int.h"

#include <stdlib.h>
#include <string.h>

#define N_OOM_CATS 16

typedef struct oom_cat { int64_t pid, domain; int32_t category; } oom_cat;

typedef struct cand { /* a mark that may be a failure */
    int64_t t_ns, tid, domain, payload;
    int32_t category;
    gt_string_id text;
} cand;

typedef struct region_name { uint64_t address; int64_t t_ns; gt_string_id name; } region_name;

int64_t an_oom_figure(const char *msg, const char *key)
{
    size_t k = strlen(key);
    for (const char *p = msg; (p = strstr(p, key)) != NULL; p += k) {
        if ((p == msg || p[-1] == ' ') && p[k] == '=' && p[k + 1] >= '0' && p[k + 1] <= '9') {
            char *end;
            long long v = strtoll(p + k + 1, &end, 10);
            if (v >= 0 && v <= AN_BYTES_LIMIT)
                return v;
        }
    }
    return -1;
}

/* The importer's words: "N bytes requested", "F free". */
static int64_t number_before(const char *msg, const char *word)
{
    const char *p = strstr(msg, word);
    if (!p || p == msg)
        return -1;
    const char *q = p;
    while (q > msg && q[-1] >= '0' && q[-1] <= '9')
        q--;
    return q < p ? strtoll(q, NULL, 10) : -1;
}

static bool is_oom_text(const char *s) { return strncmp(s, "out of memory", 13) == 0; }

/* The trace's failures: marks of an "oom" category, or saying "out of memory". */
static int find_failures(const an_model *m, cand *first, int64_t *n_ooms)
{
    oom_cat cats[N_OOM_CATS];
    size_t n_cats = 0, n = 0, cap = 0;
    cand *v = NULL;
    gt_iter *it = NULL;
    gt_event ev;
    int rc;
    *n_ooms = 0;
    if ((rc = gt_iter_new(&it, m->t, GT_EV_NVTX, INT64_MIN, INT64_MAX)) < 0)
        return rc;
    while ((rc = gt_iter_next(it, &ev)) == 1) {
        const gt_nvtx *x = &ev.u.nvtx;
        if (x->event_type == GT_NVTX_CATEGORY && x->category != 0) {
            if (n_cats < N_OOM_CATS && strcmp(an_str(m, x->text), "oom") == 0)
                cats[n_cats++] = (oom_cat){gt_pid_of(x->global_tid), x->domain_id, x->category};
            continue;
        }
        if (x->event_type != GT_NVTX_MARK && x->event_type != GT_NVTX_PUSHPOP && x->event_type != GT_NVTX_STARTEND)
            continue;
        if (x->category == 0 && !(x->event_type == GT_NVTX_MARK && is_oom_text(an_str(m, x->text))))
            continue;
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 16;
            cand *nv = realloc(v, nc * sizeof *nv);
            if (!nv) {
                rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
                goto cleanup;
            }
            v = nv;
            cap = nc;
        }
        int64_t payload = -1;
        if (x->payload_kind == GT_PAYLOAD_U64 && x->payload.u64 <= (uint64_t)AN_BYTES_LIMIT)
            payload = (int64_t)x->payload.u64;
        else if (x->payload_kind == GT_PAYLOAD_I64 && x->payload.i64 >= 0 && x->payload.i64 <= AN_BYTES_LIMIT)
            payload = x->payload.i64;
        v[n++] = (cand){x->start_ns, x->global_tid, x->domain_id, payload, x->category, x->text};
    }
    if (rc < 0)
        goto cleanup;
    rc = 0;
    for (size_t i = 0; i < n; i++) {
        bool yes = v[i].category == 0;
        for (size_t c = 0; c < n_cats && !yes; c++)
            yes = cats[c].domain == v[i].domain && cats[c].category == v[i].category &&
                  (cats[c].pid == 0 || cats[c].pid == gt_pid_of(v[i].tid));
        if (!yes)
            continue;
        if (*n_ooms == 0 || v[i].t_ns < first->t_ns)
            *first = v[i];
        ++*n_ooms;
    }
cleanup:
    gt_iter_free(it);
    free(v);
    return rc;
}

static int cmp_name(const void *pa, const void *pb)
{
    const region_name *a = pa, *b = pb;
    if (a->address != b->address)
        return a->address < b->address ? -1 : 1;
    return (a->t_ns > b->t_ns) - (a->t_ns < b->t_ns);
}

/* The NVTX region names process pid gave up to at_ns, by (address, time). */
static int region_names(const an_model *m, int64_t pid, int64_t at_ns, region_name **out, size_t *out_n)
{
    gt_iter *it = NULL;
    gt_event ev;
    size_t n = 0, cap = 0;
    region_name *v = NULL;
    int rc;
    *out = NULL;
    *out_n = 0;
    if ((rc = gt_iter_new(&it, m->t, GT_EV_HEAP, INT64_MIN, at_ns == INT64_MAX ? INT64_MAX : at_ns + 1)) < 0)
        return rc;
    while ((rc = gt_iter_next(it, &ev)) == 1) {
        const gt_heap_event *h = &ev.u.heap;
        if (h->operation != GT_REGION_NAME || h->name == 0 || gt_pid_of(h->global_tid) != pid || h->start_ns > at_ns)
            continue;
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 64;
            region_name *nv = realloc(v, nc * sizeof *nv);
            if (!nv) {
                rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
                goto cleanup;
            }
            v = nv;
            cap = nc;
        }
        v[n++] = (region_name){h->address, h->start_ns, h->name};
    }
    if (rc < 0)
        goto cleanup;
    rc = 0;
    if (n)
        qsort(v, n, sizeof *v, cmp_name);
    *out = v;
    *out_n = n;
    v = NULL;
cleanup:
    gt_iter_free(it);
    free(v);
    return rc;
}

/* The name the block at address made at alloc_ns was given last ("" none). */
static const char *block_name(const an_model *m, const region_name *v, size_t n, uint64_t address, int64_t alloc_ns)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first entry past (address, INT64_MAX) */
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].address <= address)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && v[lo - 1].address == address && v[lo - 1].t_ns >= alloc_ns)
        return an_str(m, v[lo - 1].name);
    return "";
}

/* The phase (0 data .. 3 optimizer) of the innermost range of tid at t; -1 none. */
static int phase_at(const an_model *m, int64_t tid, int64_t t_ns)
{
    for (int64_t k = tid ? an_model_range_at(m, tid, t_ns) : -1; k >= 0; k = m->ranges[k].parent) {
        int p = an_phase_of(an_str(m, m->ranges[k].text));
        if (p >= 0 && p <= 3)
            return p;
    }
    return -1;
}

static const char *const phase_label[4] = {"data", "forward", "backward", "optimizer"};

/* The largest free gap of the heap segments of s (-1 none). */
static int64_t largest_gap(const gt_mem_state *s)
{
    int64_t best = -1;
    for (size_t i = 0; i < s->n_segments; i++) {
        const gt_mem_segment *g = &s->segments[i];
        if (!g->from_heap)
            continue;
        uint64_t at = g->address, end = g->address + (uint64_t)g->bytes;
        if (best < 0)
            best = 0;
        for (size_t b = g->first_block; b < g->first_block + g->n_blocks; b++) {
            const gt_mem_block *k = &s->blocks[b];
            if (k->address > at && (int64_t)(k->address - at) > best)
                best = (int64_t)(k->address - at);
            if (k->address + (uint64_t)k->bytes > at)
                at = k->address + (uint64_t)k->bytes;
        }
        if (end > at && (int64_t)(end - at) > best)
            best = (int64_t)(end - at);
    }
    return best;
}

static int cmp_block(const void *pa, const void *pb)
{
    const gt_oom_block *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return (a->address > b->address) - (a->address < b->address);
}

typedef struct live_block { /* a live block, and the state's block it is */
    gt_oom_block b;         /* first: cmp_block sorts these */
    const gt_mem_block *src;
} live_block;

/* "model.py:21": a frame's module that is a source line (a snapshot's Python frame). */
static bool is_file_line(const char *s)
{
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || !colon[1])
        return false;
    for (const char *p = colon + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

/* A block's origin as the section shows it: the NVTX range path it was
 * allocated in and up to four frames of its stack, each with its file:line
 * where the stack has one (Python frames); NULL: it has no stack. */
static char *origin_with_lines(const an_model *m, const gt_mem_block *b)
{
    const gt_frame *frames = NULL;
    size_t n = 0;
    if (!b->callchain_id || !m->t || gt_trace_callchain(m->t, b->callchain_id, &frames, &n) < 0 || n == 0)
        return NULL;
    char *path = an_model_range_path(m, b->global_tid ? an_model_range_at(m, b->global_tid, b->alloc_ns) : -1);
    if (!path)
        return NULL;
    char stack[1024] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && i < 4; i++) {
        const char *sym = an_str(m, frames[i].symbol), *mod = an_str(m, frames[i].module);
        bool line = is_file_line(mod);
        int w = snprintf(stack + used, sizeof stack - used, "%s%s%s%s", i ? " < " : "", *sym ? sym : "?",
                         line ? " " : "", line ? mod : "");
        if (w < 0 || (size_t)w >= sizeof stack - used)
            break;
        used += (size_t)w;
    }
    char *o = an_printf("%s%s[%s]", path, *path ? " " : "", stack);
    free(path);
    return o;
}

static int cmp_growth(const void *pa, const void *pb)
{
    const gt_oom_growth *a = pa, *b = pb;
    int64_t da = a->at_bytes - a->before_bytes, db = b->at_bytes - b->before_bytes;
    if (da != db)
        return da > db ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Adds bytes to the row named `name` (at: at the failure, else before). */
static int add_growth(gt_oom_growth **v, size_t *n, size_t *cap, const char *name, int64_t bytes, bool at)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i].name, name) == 0) {
            if (at)
                (*v)[i].at_bytes = gt_sat_add((*v)[i].at_bytes, bytes);
            else
                (*v)[i].before_bytes = gt_sat_add((*v)[i].before_bytes, bytes);
            return 0;
        }
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        gt_oom_growth *nv = realloc(*v, nc * sizeof *nv);
        if (!nv)
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        *v = nv;
        *cap = nc;
    }
    char *s = an_strdup(name);
    if (!s)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    (*v)[(*n)++] = (gt_oom_growth){s, at ? 0 : bytes, at ? bytes : 0};
    return 0;
}

/* A block's name for grouping: its region name, else the range path it was made in. */
static const char *group_name(const char *name, const char *origin) { return *name ? name : *origin ? origin : "(unnamed)"; }

static int add_fix(gt_oom *o, const char *fix, const char *option, int64_t saved, char *how)
{
    if (!how)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    o->fixes[o->n_fixes++] = (gt_oom_fix){fix, option, saved, saved > 0 && saved >= o->shortfall_bytes, how};
    return 0;
}

/* The fixes, each estimated from the live blocks at the failure. */
static int estimate_fixes(gt_oom *o, int64_t fwd_bytes, int64_t fwd_largest, int64_t grad_bytes, int phase)
{
    char b1[40], b2[40];
    int rc;
    if (!(o->fixes = calloc(5, sizeof *o->fixes)))
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    gt_fmt_bytes(b1, sizeof b1, (double)fwd_bytes);
    gt_fmt_bytes(b2, sizeof b2, (double)fwd_largest);
    int64_t ckpt = fwd_bytes - fwd_largest;
    if ((rc = add_fix(o, "activation checkpointing", "--checkpoint blocks (torch.utils.checkpoint)", ckpt,
                      an_printf("the live blocks this step's forward made (%s) less the largest of them (%s), "
                                "which one recomputed block still needs", b1, b2))) < 0)
        return rc;
    gt_fmt_bytes(b1, sizeof b1, (double)o->step_bytes);
    if ((rc = add_fix(o, "smaller micro-batch", "--batch B/2 --accum 2", o->step_bytes / 2,
                      an_printf("half the live blocks made in this step so far (%s): activations and their "
                                "gradients scale with the micro-batch", b1))) < 0)
        return rc;
    gt_fmt_bytes(b1, sizeof b1, (double)o->free_bytes);
    gt_fmt_bytes(b2, sizeof b2, (double)(o->largest_gap_bytes > 0 ? o->largest_gap_bytes : 0));
    int64_t gap = o->largest_gap_bytes > 0 ? o->largest_gap_bytes : 0;
    if ((rc = add_fix(o, "expandable segments", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
                      o->free_bytes > gap ? o->free_bytes - gap : 0,
                      an_printf("the reserved but free bytes (%s) beyond the largest free gap (%s): what one "
                                "growing segment could hand out that no gap could", b1, b2))) < 0)
        return rc;
    gt_fmt_bytes(b1, sizeof b1, (double)grad_bytes);
    bool before_backward = phase == 0 || phase == 1;
    if ((rc = add_fix(o, "set_to_none gradients", "optimizer.zero_grad(set_to_none=True)",
                      before_backward ? grad_bytes : 0,
                      an_printf(before_backward ? "the live blocks named like \"grad\" made before this step (%s): "
                                                  "freed until the backward writes them"
                                    : phase < 0 ? "none: it failed in no phase range, so whether the gradients (%s) "
                                                  "were needed is unknown"
                                                : "none: it failed after the backward began, when the gradients "
                                                  "(%s) are needed", b1))) < 0)
        return rc;
    gt_fmt_bytes(b1, sizeof b1, (double)fwd_bytes);
    return add_fix(o, "mixed precision", "--amp bf16 (torch.autocast)", fwd_bytes / 2,
                   an_printf("half the live blocks this step's forward made (%s): activations kept in 16 bits "
                             "instead of 32 (none if they already are)", b1));
}

static int analyse(gt_oom *o, const an_model *m, const cand *c, int top_n)
{
    gt_mem_state *st = NULL, *prev = NULL;
    region_name *names = NULL;
    size_t n_names = 0, cap_growth = 0;
    an_steps steps = {0};
    live_block *all = NULL;
    int rc;
    const char *msg = an_str(m, c->text);
    o->t_ns = c->t_ns;
    o->tid = c->tid;
    o->pid = gt_pid_of(c->tid);
    o->step = o->prev_step = -1;
    if (!(o->message = an_strdup(msg)) || !(o->phase = an_strdup("")))
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    o->requested_bytes = an_oom_figure(msg, "requested");
    if (o->requested_bytes < 0)
        o->requested_bytes = c->payload >= 0 ? c->payload : number_before(msg, " bytes requested");
    o->allocated_bytes = an_oom_figure(msg, "allocated");
    o->reserved_bytes = an_oom_figure(msg, "reserved");
    o->limit_bytes = an_oom_figure(msg, "limit");
    o->device_free_bytes = an_oom_figure(msg, "device_free");
    if (o->device_free_bytes < 0 && strncmp(msg, "out of memory on cuda:", 22) == 0)
        o->device_free_bytes = number_before(msg, " free");
    int64_t state_pid = o->pid; /* whose allocator: its own, else the trace's first */
    if ((rc = an_memory_state(&st, m, state_pid, o->t_ns)) == GT_ERR_NOTFOUND)
        rc = an_memory_state(&st, m, state_pid = -1, o->t_ns);
    if (rc < 0)
        goto cleanup;
    if (state_pid < 0 && st->pid == 0 && st->n_segments == 0 && st->n_blocks == 0) {
        gt_mem_state_free(st); /* no allocator in the trace (a CPU tensor's failure): the mark's figures alone */
        st = NULL;
    }
    if (st) {
        o->pid = st->pid ? st->pid : o->pid;
        if (o->allocated_bytes < 0)
            o->allocated_bytes = st->allocated_bytes;
        if (o->reserved_bytes < 0)
            o->reserved_bytes = st->reserved_bytes;
    }
    o->free_bytes = an_oom_figure(msg, "free");
    if (o->free_bytes < 0 && o->reserved_bytes >= 0 && o->allocated_bytes >= 0)
        o->free_bytes = o->reserved_bytes > o->allocated_bytes ? o->reserved_bytes - o->allocated_bytes : 0;
    o->largest_gap_bytes = st ? largest_gap(st) : -1;
    /* short: of the request in the largest gap, or of what the device had to
     * give (a new segment: `segment=`, else the request) in its free memory */
    int64_t gap = o->largest_gap_bytes > 0 ? o->largest_gap_bytes : 0;
    int64_t dev_free = o->device_free_bytes > 0 ? o->device_free_bytes : 0;
    int64_t req = o->requested_bytes > 0 ? o->requested_bytes : 0;
    int64_t seg = an_oom_figure(msg, "segment");
    int64_t from_dev = seg > req ? seg : req;
    int64_t short_gap = req > gap ? req - gap : 0, short_dev = from_dev > dev_free ? from_dev - dev_free : 0;
    o->shortfall_bytes = short_gap < short_dev ? short_gap : short_dev;
    o->fragmentation = o->shortfall_bytes > 0 && o->free_bytes >= req && gap < req;
    /* where: the step, the phase and the ranges open on its thread */
    int phase = phase_at(m, o->tid, o->t_ns);
    if (phase >= 0) {
        free(o->phase);
        if (!(o->phase = an_strdup(phase_label[phase])))
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    }
    if (!(o->range_path = an_model_range_path(m, an_model_range_at(m, o->tid, o->t_ns)))) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        goto cleanup;
    }
    if ((rc = an_steps_find_pid(&steps, m, o->pid)) < 0 || (steps.n == 0 && (rc = an_steps_find(&steps, m)) < 0))
        goto cleanup;
    /* the step it failed in holds its moment (a step left open when the
     * program died is not in the trace: then none); growth is measured from
     * the last step that ended before it */
    int64_t step_start = INT64_MIN, prev_end = INT64_MIN;
    for (size_t i = 0; i < steps.n && steps.v[i].start_ns <= o->t_ns; i++) {
        if (steps.v[i].end_ns < o->t_ns) {
            o->prev_step = steps.v[i].number;
            prev_end = steps.v[i].end_ns;
        } else {
            o->step = steps.v[i].number;
            step_start = steps.v[i].start_ns;
        }
    }
    if ((rc = region_names(m, o->pid, o->t_ns, &names, &n_names)) < 0)
        goto cleanup;
    /* the live blocks, by size; what this step made, what its forward made */
    int64_t fwd_bytes = 0, fwd_largest = 0, grad_bytes = 0;
    size_t n_live = st ? st->n_blocks : 0;
    if (n_live && !(all = calloc(n_live, sizeof *all))) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        goto cleanup;
    }
    for (size_t i = 0; i < n_live; i++) {
        const gt_mem_block *b = &st->blocks[i];
        const char *name = block_name(m, names, n_names, b->address, b->alloc_ns);
        all[i] = (live_block){{(char *)name, b->origin ? b->origin : (char *)"", b->address, b->bytes}, b};
        if ((rc = add_growth(&o->growth, &o->n_growth, &cap_growth, group_name(name, all[i].b.origin), b->bytes,
                             true)) < 0)
            goto cleanup;
        if (step_start != INT64_MIN && b->alloc_ns >= step_start) {
            o->step_bytes = gt_sat_add(o->step_bytes, b->bytes);
            if (phase_at(m, b->global_tid, b->alloc_ns) == 1) {
                fwd_bytes = gt_sat_add(fwd_bytes, b->bytes);
                if (b->bytes > fwd_largest)
                    fwd_largest = b->bytes;
            }
        } else if (strstr(name, "grad")) {
            grad_bytes = gt_sat_add(grad_bytes, b->bytes);
        }
    }
    if (n_live)
        qsort(all, n_live, sizeof *all, cmp_block);
    o->n_blocks = n_live < (size_t)top_n ? n_live : (size_t)top_n;
    if (o->n_blocks && !(o->blocks = calloc(o->n_blocks, sizeof *o->blocks))) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        goto cleanup;
    }
    for (size_t i = 0; i < o->n_blocks; i++) {
        o->blocks[i] = (gt_oom_block){NULL, origin_with_lines(m, all[i].src), all[i].b.address, all[i].b.bytes};
        if (!o->blocks[i].origin)
            o->blocks[i].origin = an_strdup(all[i].b.origin);
        if (!(o->blocks[i].name = an_strdup(all[i].b.name)) || !o->blocks[i].origin) {
            rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
            goto cleanup;
        }
    }
    /* growth: the same groups at the previous step's end */
    if (!st)
        o->prev_step = -1; /* nothing to measure it by */
    if (o->prev_step >= 0) {
        if ((rc = an_memory_state(&prev, m, state_pid, prev_end)) < 0)
            goto cleanup;
        for (size_t i = 0; i < prev->n_blocks; i++) {
            const gt_mem_block *b = &prev->blocks[i];
            const char *name = block_name(m, names, n_names, b->address, b->alloc_ns);
            if ((rc = add_growth(&o->growth, &o->n_growth, &cap_growth, group_name(name, b->origin ? b->origin : ""),
                                 b->bytes, false)) < 0)
                goto cleanup;
        }
    }
    if (o->n_growth)
        qsort(o->growth, o->n_growth, sizeof *o->growth, cmp_growth);
    size_t keep = 0;
    for (size_t i = 0; i < o->n_growth; i++) {
        if (keep < (size_t)top_n && o->growth[i].at_bytes > o->growth[i].before_bytes)
            o->growth[keep++] = o->growth[i];
        else
            free(o->growth[i].name);
    }
    o->n_growth = keep;
    rc = st ? estimate_fixes(o, fwd_bytes, fwd_largest, grad_bytes, phase) : 0; /* none from no live blocks */
cleanup:
    free(all);
    free(names);
    free(steps.v);
    gt_mem_state_free(st);
    gt_mem_state_free(prev);
    return rc;
}

int an_oom(gt_report *r, const an_model *m, const gt_report_options *opt)
{
    cand first = {0};
    int64_t n_ooms = 0;
    r->oom = NULL;
    /* a window read of a trace without failures need not read its NVTX again */
    if (!m->t || (m->windowed && m->whole.n_ooms == 0))
        return 0;
    int rc = find_failures(m, &first, &n_ooms);
    if (rc < 0)
        return rc;
    if (n_ooms == 0)
        return 0;
    if (!(r->oom = calloc(1, sizeof *r->oom)))
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    r->oom->n_ooms = n_ooms;
    rc = analyse(r->oom, m, &first, opt && opt->top_n > 0 ? opt->top_n : 10);
    if (rc < 0) {
        an_oom_free(r->oom);
        r->oom = NULL;
    }
    return rc;
}

void an_oom_free(gt_oom *o)
{
    if (!o)
        return;
    free(o->message);
    free(o->phase);
    free(o->range_path);
    for (size_t i = 0; i < o->n_blocks; i++) {
        free(o->blocks[i].name);
        free(o->blocks[i].origin);
    }
    free(o->blocks);
    for (size_t i = 0; i < o->n_growth; i++)
        free(o->growth[i].name);
    free(o->growth);
    for (size_t i = 0; i < o->n_fixes; i++)
        free(o->fixes[i].how);
    free(o->fixes);
    free(o);
}
