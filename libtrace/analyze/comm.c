/* comm.c: communication of a distributed job, per rank and per step: how
 * long collectives were in flight, how much of that compute hid (overlap) and
 * how much the rank had nothing else to do (exposed: what the step waits
 * for), after HTA's communication/computation overlap.
 *
 * A rank is a process; with NCCL, one device of a process. Communication is
 * NCCL kernels (names starting "nccl") on a device, NVTX ranges of a
 * category named "communication" on the process's threads, or CPU ops that
 * are collectives (PyTorch's c10d::allreduce_..., gloo:/nccl: annotations:
 * `gtrace --pytorch=ops` marks them as ops like any other); a process with
 * NCCL kernels is measured on its devices only (its host ranges would mix a
 * host view into a device one; when it has one device, the payloads of those
 * ranges still give the bytes). Compute is what the rest of the report calls
 * the device timeline: the process's kernels that are not NCCL's (on that
 * device), or its CPU ops that are no collective on a trace without
 * kernels. Each rank is measured
 * in its own steps (its process's step ranges), else in the report's steps,
 * else over the analysed window. It judges nothing: advice.c does. */
#include "analyze_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* A sorted list of disjoint intervals. */
typedef struct span { int64_t s, e; } span;
typedef struct spans {
    span *v;
    size_t n, cap;
} spans;

/* Adds [s, e); intervals come in start order, so a union is built as they come. */
static int spans_add(spans *x, int64_t s, int64_t e)
{
    if (e <= s)
        return 0;
    if (x->n > 0 && s <= x->v[x->n - 1].e) {
        if (e > x->v[x->n - 1].e)
            x->v[x->n - 1].e = e;
        return 0;
    }
    if (x->n == x->cap) {
        size_t ncap = x->cap ? x->cap * 2 : 64;
        span *nv = realloc(x->v, ncap * sizeof *nv);
        if (!nv)
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory measuring communication");
        x->v = nv;
        x->cap = ncap;
    }
    x->v[x->n++] = (span){s, e};
    return 0;
}

static int spans_intersect(spans *out, const spans *a, const spans *b)
{
    size_t i = 0, j = 0;
    int rc = 0;
    while (i < a->n && j < b->n && rc == 0) {
        int64_t s = a->v[i].s > b->v[j].s ? a->v[i].s : b->v[j].s;
        int64_t e = a->v[i].e < b->v[j].e ? a->v[i].e : b->v[j].e;
        rc = spans_add(out, s, e);
        if (a->v[i].e < b->v[j].e)
            i++;
        else
            j++;
    }
    return rc;
}

/* Time the intervals cover inside [from, to). */
static int64_t spans_len(const spans *x, int64_t from, int64_t to)
{
    size_t lo = GT_UPPER_BOUND(x->v, x->n, e, from); /* the first interval that ends after `from` */
    int64_t len = 0;
    for (size_t i = lo; i < x->n && x->v[i].s < to; i++) {
        int64_t s = x->v[i].s > from ? x->v[i].s : from, e = x->v[i].e < to ? x->v[i].e : to;
        if (e > s)
            len += e - s;
    }
    return len;
}

static void spans_free(spans *x)
{
    free(x->v);
    memset(x, 0, sizeof *x);
}

/* One collective: where it came from and what it says. */
typedef struct item {
    int64_t start_ns, end_ns, bytes; /* bytes -1: unknown */
    gt_string_id name;
} item;

typedef struct unit {
    int64_t pid;
    int32_t device;
    gt_comm_source source;
    spans comm, compute, overlap;
    item *items; size_t n_items, cap_items; /* by start */
    item *sized; size_t n_sized, cap_sized;  /* NCCL units: the host ranges that give bytes, by start */
} unit;

typedef struct kind_acc {
    char *name;
    int64_t n, total_ns, exposed_ns;
} kind_acc;

typedef struct ctx {
    const an_model *m;
    unit *units; size_t n_units, cap_units;
    /* name id -> its class (NAME_*), remembered (open addressing) */
    gt_string_id class_keys[4096];
    int8_t class_val[4096]; /* 0 unknown */
    kind_acc *kinds; size_t n_kinds, cap_kinds;
    struct { gt_string_id id; size_t kind; } name_kind[4096]; /* name id -> kind + 1, remembered */
    bool collective_ops; /* some communication is collective CPU ops */
} ctx;

static bool is_nccl_name(const char *s)
{
    if (strncmp(s, "void ", 5) == 0) /* demangled templates */
        s += 5;
    return strncmp(s, "nccl", 4) == 0;
}

/* A CPU op that is a collective: PyTorch's c10d dispatcher ops (1.13 and
 * 2.x, functional collectives too), the ProcessGroup's record_function
 * annotations ("gloo:all_reduce", "nccl:all_reduce") and 2.x's
 * record_param_comms. Not DDP's "DistributedDataParallel.forward": it holds
 * the model's compute. */
static bool is_collective_op_name(const char *s)
{
    static const char *const prefixes[] = {"c10d::", "c10d_functional::", "_c10d_functional::", "gloo:",
                                           "nccl:", "ProcessGroupGloo", "ProcessGroupNCCL", "record_param_comms"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(s, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

enum { NAME_OTHER = 1, NAME_NCCL = 2, NAME_COLLECTIVE_OP = 3 };

static int name_class(const char *s)
{
    return is_nccl_name(s) ? NAME_NCCL : is_collective_op_name(s) ? NAME_COLLECTIVE_OP : NAME_OTHER;
}

static int class_of(ctx *c, gt_string_id name)
{
    size_t h = ((uint64_t)name * 0x9e3779b97f4a7c15ULL >> 40) & 4095;
    for (size_t probe = 0; probe < 4096; probe++, h = (h + 1) & 4095) {
        if (c->class_val[h] == 0) {
            c->class_keys[h] = name;
            c->class_val[h] = (int8_t)name_class(an_str(c->m, name));
            return c->class_val[h];
        }
        if (c->class_keys[h] == name)
            return c->class_val[h];
    }
    return name_class(an_str(c->m, name));
}

static bool is_nccl(ctx *c, const an_act *a)
{
    return a->kind == GT_EV_KERNEL && class_of(c, a->name) == NAME_NCCL;
}

static bool is_collective_op(ctx *c, const an_act *a)
{
    return a->kind == GT_EV_CPU_OP && class_of(c, a->name) == NAME_COLLECTIVE_OP;
}

/* The unit of (pid, device, source), made when missing; NULL: out of memory. */
static unit *unit_of(ctx *c, int64_t pid, int32_t device, gt_comm_source source)
{
    for (size_t i = c->n_units; i > 0; i--) /* the last one made is the likely one */
        if (c->units[i - 1].pid == pid && c->units[i - 1].device == device && c->units[i - 1].source == source)
            return &c->units[i - 1];
    if (c->n_units == c->cap_units) {
        size_t ncap = c->cap_units ? c->cap_units * 2 : 8;
        unit *nu = realloc(c->units, ncap * sizeof *nu);
        if (!nu) {
            gt_error_set(GT_ERR_NOMEM, "analyze: out of memory measuring communication");
            return NULL;
        }
        c->units = nu;
        c->cap_units = ncap;
    }
    unit *u = &c->units[c->n_units++];
    memset(u, 0, sizeof *u);
    u->pid = pid;
    u->device = device;
    u->source = source;
    return u;
}

static int push_item(item **v, size_t *n, size_t *cap, item x)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        item *nv = realloc(*v, ncap * sizeof *nv);
        if (!nv)
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory measuring communication");
        *v = nv;
        *cap = ncap;
    }
    (*v)[(*n)++] = x;
    return 0;
}

static int add_item(unit *u, int64_t s, int64_t e, int64_t bytes, gt_string_id name)
{
    int rc = push_item(&u->items, &u->n_items, &u->cap_items, (item){s, e, bytes, name});
    return rc < 0 ? rc : spans_add(&u->comm, s, e);
}

/* The NCCL units of a process: how many, and the first. */
static size_t nccl_units_of(ctx *c, int64_t pid, unit **first)
{
    size_t n = 0;
    *first = NULL;
    for (size_t i = 0; i < c->n_units; i++)
        if (c->units[i].pid == pid && c->units[i].source == GT_COMM_NCCL && n++ == 0)
            *first = &c->units[i];
    return n;
}

/* The first collective CPU op at or after acts[j]; n_acts: none. */
static size_t next_collective_op(ctx *c, size_t j)
{
    while (j < c->m->n_acts && !is_collective_op(c, &c->m->acts[j]))
        j++;
    return j;
}

/* Units and their communication: NCCL kernels, then the host's
 * communication of the processes without them: NVTX ranges and collective
 * CPU ops, merged in start order (each unit's intervals come by start). */
static int find_units(ctx *c)
{
    const an_model *m = c->m;
    int rc;
    for (size_t i = 0; i < m->n_acts; i++) {
        const an_act *a = &m->acts[i];
        if (!is_nccl(c, a))
            continue;
        unit *u = unit_of(c, a->pid, a->device, GT_COMM_NCCL);
        if (!u)
            return GT_ERR_NOMEM;
        if ((rc = add_item(u, a->start_ns, a->end_ns, -1, a->name)) < 0)
            return rc;
    }
    size_t n_nccl = c->n_units;
    size_t i = 0, j = next_collective_op(c, 0);
    while (i < m->n_comms || j < m->n_acts) {
        bool range = j == m->n_acts || (i < m->n_comms && m->comms[i].start_ns <= m->acts[j].start_ns);
        an_comm x;
        if (range) {
            x = m->comms[i++];
        } else {
            const an_act *a = &m->acts[j];
            x = (an_comm){a->start_ns, a->end_ns, a->tid, -1, a->name};
            j = next_collective_op(c, j + 1);
            c->collective_ops = true;
        }
        int64_t pid = gt_pid_of(x.tid);
        unit *nu = NULL;
        size_t n_nu = n_nccl > 0 ? nccl_units_of(c, pid, &nu) : 0;
        if (n_nu == 1 && x.bytes >= 0 &&
            (rc = push_item(&nu->sized, &nu->n_sized, &nu->cap_sized, (item){x.start_ns, x.end_ns, x.bytes, x.name})) < 0)
            return rc;
        if (n_nu > 0)
            continue;
        unit *u = unit_of(c, pid, -1, GT_COMM_NVTX);
        if (!u)
            return GT_ERR_NOMEM;
        if ((rc = add_item(u, x.start_ns, x.end_ns, x.bytes, x.name)) < 0)
            return rc;
    }
    return 0;
}

/* Compute of each unit: the process's device timeline without NCCL (NCCL
 * units: on their device only; CPU ops have device -1). */
static int find_compute(ctx *c)
{
    const an_model *m = c->m;
    int rc;
    for (size_t i = 0; i < m->n_acts; i++) {
        const an_act *a = &m->acts[i];
        if ((a->kind != GT_EV_KERNEL && a->kind != GT_EV_CPU_OP) || is_nccl(c, a) || is_collective_op(c, a))
            continue;
        for (size_t k = 0; k < c->n_units; k++) {
            unit *u = &c->units[k];
            if (u->pid != a->pid || (u->source == GT_COMM_NCCL && u->device != a->device))
                continue;
            if ((rc = spans_add(&u->compute, a->start_ns, a->end_ns)) < 0)
                return rc;
        }
    }
    for (size_t k = 0; k < c->n_units; k++)
        if ((rc = spans_intersect(&c->units[k].overlap, &c->units[k].comm, &c->units[k].compute)) < 0)
            return rc;
    return 0;
}

/* "allreduce bucket 3" -> "allreduce bucket"; a kernel's argument list and a
 * leading "void " go too. */
static void kind_name(const char *s, char *buf, size_t n)
{
    if (strncmp(s, "void ", 5) == 0)
        s += 5;
    snprintf(buf, n, "%s", s);
    char *paren = strchr(buf, '(');
    if (paren && paren > buf)
        *paren = '\0';
    size_t len = strlen(buf), k = len;
    while (k > 0 && isdigit((unsigned char)buf[k - 1]))
        k--;
    if (k < len && k > 1 && (buf[k - 1] == ' ' || buf[k - 1] == '#'))
        buf[k - 1] = '\0';
    len = strlen(buf);
    while (len > 1 && buf[len - 1] == ' ')
        buf[--len] = '\0';
}

/* The kind of a collective's name, made when missing; -1: out of memory. */
static int64_t kind_of(ctx *c, gt_string_id id)
{
    size_t h = ((uint64_t)id * 0x9e3779b97f4a7c15ULL >> 40) & 4095, probe = 0;
    for (; probe < 4096; probe++, h = (h + 1) & 4095) {
        if (c->name_kind[h].kind == 0)
            break;
        if (c->name_kind[h].id == id)
            return (int64_t)c->name_kind[h].kind - 1;
    }
    char buf[512];
    kind_name(an_str(c->m, id), buf, sizeof buf);
    size_t k = 0;
    while (k < c->n_kinds && strcmp(c->kinds[k].name, buf) != 0)
        k++;
    if (k == c->n_kinds) {
        if (c->n_kinds == c->cap_kinds) {
            size_t ncap = c->cap_kinds ? c->cap_kinds * 2 : 16;
            kind_acc *nk = realloc(c->kinds, ncap * sizeof *nk);
            if (!nk)
                return -1;
            c->kinds = nk;
            c->cap_kinds = ncap;
        }
        if (!(c->kinds[k].name = an_strdup(buf)))
            return -1;
        c->kinds[k].n = c->kinds[k].total_ns = c->kinds[k].exposed_ns = 0;
        c->n_kinds++;
    }
    if (probe < 4096) {
        c->name_kind[h].id = id;
        c->name_kind[h].kind = k + 1;
    }
    return (int64_t)k;
}

/* The first item that starts at or after t (items by start). */
static size_t first_from(const item *v, size_t n, int64_t t)
{
    return GT_LOWER_BOUND(v, n, start_ns, t);
}

static int measure_unit(ctx *c, gt_comm_rank *rk, const unit *u, const gt_report *r, const gt_report_options *opt)
{
    const an_model *m = c->m;
    gt_step *own = NULL;
    size_t n_own = 0;
    int rc = an_steps_selected(&own, &n_own, m, u->pid, opt);
    if (rc < 0)
        return rc;
    rk->pid = u->pid;
    rk->device_id = u->device;
    rk->source = u->source;
    rk->own_steps = n_own > 0;
    const gt_step *steps = n_own ? own : r->steps;
    size_t n_steps = n_own ? n_own : r->n_steps;
    gt_step whole = {0};
    if (n_steps == 0) { /* no steps anywhere: the window, as one */
        whole.number = -1;
        whole.start_ns = r->start_ns;
        whole.end_ns = r->end_ns;
        steps = &whole;
    }
    size_t n_win = n_steps ? n_steps : 1;
    rk->steps = calloc(n_win, sizeof *rk->steps);
    const char *pname = "";
    rk->rank = -1;
    if (m->t) {
        size_t n_proc = 0;
        const gt_process *p = gt_trace_processes(m->t, &n_proc);
        for (size_t i = 0; i < n_proc; i++)
            if (p[i].pid == u->pid) {
                pname = p[i].name ? p[i].name : "";
                rk->rank = p[i].rank;
            }
    }
    rk->name = an_strdup(pname);
    if (!rk->steps || !rk->name) {
        free(own);
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory measuring communication");
    }
    rk->n_steps = n_steps;
    for (size_t w = 0; w < n_win; w++) {
        gt_comm_step *st = &rk->steps[w];
        int64_t a = steps[w].start_ns, b = steps[w].end_ns;
        st->number = steps[w].number;
        st->start_ns = a;
        st->end_ns = b;
        st->comm_ns = spans_len(&u->comm, a, b);
        st->compute_ns = spans_len(&u->compute, a, b);
        st->overlap_ns = spans_len(&u->overlap, a, b);
        st->exposed_ns = st->comm_ns - st->overlap_ns;
        /* the collectives that start in the step */
        for (size_t i = first_from(u->items, u->n_items, a); i < u->n_items && u->items[i].start_ns < b; i++) {
            const item *x = &u->items[i];
            st->n_collectives++;
            if (x->bytes >= 0) {
                st->bytes = gt_sat_add(st->bytes, x->bytes);
                st->n_bytes_known++;
            }
            int64_t k = kind_of(c, x->name);
            if (k < 0) {
                free(own);
                return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory measuring communication");
            }
            int64_t d = x->end_ns - x->start_ns;
            c->kinds[k].n++;
            c->kinds[k].total_ns = gt_sat_add(c->kinds[k].total_ns, d);
            c->kinds[k].exposed_ns = gt_sat_add(c->kinds[k].exposed_ns, d - spans_len(&u->compute, x->start_ns, x->end_ns));
        }
        /* NCCL: bytes from the host's ranges */
        for (size_t i = first_from(u->sized, u->n_sized, a); i < u->n_sized && u->sized[i].start_ns < b; i++) {
            st->bytes = gt_sat_add(st->bytes, u->sized[i].bytes);
            st->n_bytes_known++;
        }
        /* sums saturate: a damaged trace's steps may overlap and add past INT64_MAX */
        rk->span_ns = gt_sat_add(rk->span_ns, b - a);
        rk->comm_ns = gt_sat_add(rk->comm_ns, st->comm_ns);
        rk->compute_ns = gt_sat_add(rk->compute_ns, st->compute_ns);
        rk->overlap_ns = gt_sat_add(rk->overlap_ns, st->overlap_ns);
        rk->exposed_ns = gt_sat_add(rk->exposed_ns, st->exposed_ns);
        rk->n_collectives += st->n_collectives;
        rk->bytes = gt_sat_add(rk->bytes, st->bytes);
        rk->n_bytes_known += st->n_bytes_known;
    }
    rk->hidden = rk->comm_ns > 0 ? (double)rk->overlap_ns / (double)rk->comm_ns : 0;
    rk->exposed_share = rk->span_ns > 0 ? (double)rk->exposed_ns / (double)rk->span_ns : 0;
    free(own);
    return 0;
}

static int cmp_unit(const void *a, const void *b)
{
    const unit *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->device > y->device) - (x->device < y->device);
}

/* Ranks in job order; processes whose rank is unknown after, by pid. */
static int cmp_rank(const void *a, const void *b)
{
    const gt_comm_rank *x = a, *y = b;
    if ((x->rank < 0) != (y->rank < 0))
        return x->rank < 0 ? 1 : -1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->device_id > y->device_id) - (x->device_id < y->device_id);
}

static int cmp_kind(const void *a, const void *b)
{
    const kind_acc *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns < y->total_ns ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* The means over ranks and who stands out. */
static void summarise(gt_comm *cm)
{
    int64_t all_comm = 0, all_overlap = 0;
    double worst_exposed = -1, worst_compute = -1;
    cm->per_step = cm->n_ranks > 0;
    cm->most_exposed = cm->slowest = -1;
    for (size_t i = 0; i < cm->n_ranks; i++) {
        const gt_comm_rank *rk = &cm->ranks[i];
        double per = rk->n_steps ? (double)rk->n_steps : 1;
        cm->per_step = cm->per_step && rk->n_steps > 0;
        cm->comm_ns += (double)rk->comm_ns / per;
        cm->compute_ns += (double)rk->compute_ns / per;
        cm->overlap_ns += (double)rk->overlap_ns / per;
        cm->exposed_ns += (double)rk->exposed_ns / per;
        cm->collectives += (double)rk->n_collectives / per;
        all_comm = gt_sat_add(all_comm, rk->comm_ns);
        all_overlap = gt_sat_add(all_overlap, rk->overlap_ns);
        if ((double)rk->exposed_ns / per > worst_exposed) {
            worst_exposed = (double)rk->exposed_ns / per;
            cm->most_exposed = (int64_t)i;
        }
        if ((double)rk->compute_ns / per > worst_compute) {
            worst_compute = (double)rk->compute_ns / per;
            cm->slowest = (int64_t)i;
        }
    }
    if (cm->n_ranks > 0) {
        double n = (double)cm->n_ranks;
        cm->comm_ns /= n;
        cm->compute_ns /= n;
        cm->overlap_ns /= n;
        cm->exposed_ns /= n;
        cm->collectives /= n;
    }
    cm->hidden = all_comm > 0 ? (double)all_overlap / (double)all_comm : 0;
}

int an_comm_measure(gt_comm *cm, const an_model *m, const gt_report *r, const gt_report_options *opt)
{
    memset(cm, 0, sizeof *cm);
    cm->most_exposed = cm->slowest = -1;
    ctx *c = calloc(1, sizeof *c);
    int rc;
    if (!c)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory measuring communication");
    c->m = m;
    if ((rc = find_units(c)) < 0 || c->n_units == 0 || (rc = find_compute(c)) < 0)
        goto cleanup;
    qsort(c->units, c->n_units, sizeof *c->units, cmp_unit);
    cm->ranks = calloc(c->n_units, sizeof *cm->ranks);
    if (!cm->ranks) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory measuring communication");
        goto cleanup;
    }
    cm->n_ranks = c->n_units;
    cm->collective_ops = c->collective_ops;
    for (size_t k = 0; k < c->n_units; k++)
        if ((rc = measure_unit(c, &cm->ranks[k], &c->units[k], r, opt)) < 0)
            goto cleanup;
    qsort(cm->ranks, cm->n_ranks, sizeof *cm->ranks, cmp_rank);
    summarise(cm);
    /* collectives by kind, the top_n longest */
    size_t top_n = opt && opt->top_n > 0 ? (size_t)opt->top_n : 10;
    if (c->n_kinds > 1)
        qsort(c->kinds, c->n_kinds, sizeof *c->kinds, cmp_kind);
    cm->n_kind_names = (int64_t)c->n_kinds;
    size_t n_keep = c->n_kinds < top_n ? c->n_kinds : top_n;
    cm->kinds = calloc(n_keep ? n_keep : 1, sizeof *cm->kinds);
    if (!cm->kinds) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory measuring communication");
        goto cleanup;
    }
    for (size_t k = 0; k < n_keep; k++) {
        cm->kinds[k] = (gt_comm_kind){c->kinds[k].name, c->kinds[k].n, c->kinds[k].total_ns, c->kinds[k].exposed_ns};
        c->kinds[k].name = NULL; /* moved */
    }
    cm->n_kinds = n_keep;
cleanup:
    for (size_t k = 0; k < c->n_units; k++) {
        spans_free(&c->units[k].comm);
        spans_free(&c->units[k].compute);
        spans_free(&c->units[k].overlap);
        free(c->units[k].items);
        free(c->units[k].sized);
    }
    free(c->units);
    for (size_t k = 0; k < c->n_kinds; k++)
        free(c->kinds[k].name);
    free(c->kinds);
    free(c);
    if (rc < 0)
        an_comm_clear(cm);
    return rc;
}

void an_comm_clear(gt_comm *cm)
{
    for (size_t i = 0; i < cm->n_ranks; i++) {
        free(cm->ranks[i].name);
        free(cm->ranks[i].steps);
    }
    free(cm->ranks);
    for (size_t i = 0; i < cm->n_kinds; i++)
        free(cm->kinds[i].name);
    free(cm->kinds);
    memset(cm, 0, sizeof *cm);
    cm->most_exposed = cm->slowest = -1;
}
