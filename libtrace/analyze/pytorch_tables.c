/* pytorch_tables.c: the report's PyTorch tables from the NVTX ranges
 * `gtrace --pytorch` writes (hooks.py): each phase's time per step (data,
 * forward, backward, optimizer, and the rest of the step), modules by self
 * time (a module's range less its submodules' ranges, forward and "NAME
 * backward" apart), and CPU ops by self time (an op less the ops it called),
 * the order torch's key_averages() sorts by, with or without kernels. An imported torch.profiler
 * trace has no module or forward ranges; its DataLoader, optimizer and
 * autograd ranges are phases. It renders nothing. */
#include "pytorch_int.h"

#include <stdlib.h>
#include <string.h>

enum { PH_DATA, PH_FORWARD, PH_BACKWARD, PH_OPTIMIZER, PH_OTHER, N_PH };
static const char *const phase_names[N_PH] = {"data", "forward", "backward", "optimizer", "other"};

int an_phase_of(const char *s)
{
    for (int p = 0; p < PH_OTHER; p++)
        if (strcmp(s, phase_names[p]) == 0)
            return p;
    /* torch.profiler's own record_function names */
    if (strncmp(s, "enumerate(DataLoader)", 21) == 0)
        return PH_DATA;
    if (strncmp(s, "Optimizer.step#", 15) == 0 || strncmp(s, "Optimizer.zero_grad#", 20) == 0)
        return PH_OPTIMIZER;
    if (strncmp(s, "autograd::engine::evaluate_function:", 36) == 0)
        return PH_BACKWARD;
    return -1;
}

/* ---- sums by name ------------------------------------------------------- */

typedef struct acc {
    char *name; /* owned */
    int64_t n[2], self_ns[2], total_ns[2]; /* [0] forward or op, [1] backward */
} acc;

/* Sums per string id (open addressing; millions of ranges, a few hundred
 * names), folded by name at the end. */
typedef struct id_sums {
    gt_string_id *keys; /* 0: empty */
    int64_t (*v)[6];    /* n, self, total for dir 0, then dir 1 */
    size_t cap, n;
} id_sums;

static int sums_add(id_sums *h, gt_string_id id, int dir, int64_t self_ns, int64_t total_ns)
{
    if (h->n * 2 >= h->cap) {
        size_t ncap = h->cap ? h->cap * 2 : 256;
        gt_string_id *k = calloc(ncap, sizeof *k);
        int64_t(*v)[6] = calloc(ncap, sizeof *v);
        if (!k || !v) {
            free(k);
            free(v);
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        }
        for (size_t i = 0; i < h->cap; i++) {
            if (!h->keys[i])
                continue;
            size_t j = ((uint64_t)h->keys[i] * 0x9e3779b97f4a7c15ULL >> 20) & (ncap - 1);
            while (k[j])
                j = (j + 1) & (ncap - 1);
            k[j] = h->keys[i];
            memcpy(v[j], h->v[i], sizeof v[j]);
        }
        free(h->keys);
        free(h->v);
        h->keys = k;
        h->v = v;
        h->cap = ncap;
    }
    size_t j = ((uint64_t)id * 0x9e3779b97f4a7c15ULL >> 20) & (h->cap - 1);
    while (h->keys[j] && h->keys[j] != id)
        j = (j + 1) & (h->cap - 1);
    if (!h->keys[j]) {
        h->keys[j] = id;
        h->n++;
    }
    h->v[j][3 * dir] += 1;
    h->v[j][3 * dir + 1] = gt_sat_add(h->v[j][3 * dir + 1], self_ns);
    h->v[j][3 * dir + 2] = gt_sat_add(h->v[j][3 * dir + 2], total_ns);
    return 0;
}

static void sums_free(id_sums *h)
{
    free(h->keys);
    free(h->v);
}

/* An op's name without the input shapes hooks.py may add ("aten::mm [32,
 * 64] [64, 10]"): key_averages() groups by name alone. */
static char *op_key(const char *s)
{
    const char *cut = strstr(s, " [");
    if (cut) {
        for (const char *p = cut; *p; p++)
            if (!strchr(" [],0123456789", *p)) {
                cut = NULL;
                break;
            }
    }
    return cut ? an_printf("%.*s", (int)(cut - s), s) : an_strdup(s);
}

/* A module range's name, and whether it is a backward one ("NAME backward"). */
static char *module_key(const char *s, int *dir)
{
    size_t n = strlen(s);
    *dir = n > 9 && strcmp(s + n - 9, " backward") == 0;
    return *dir ? an_printf("%.*s", (int)(n - 9), s) : an_strdup(s);
}

static int cmp_acc_name(const void *a, const void *b)
{
    return strcmp(((const acc *)a)->name, ((const acc *)b)->name);
}

static int64_t acc_self(const acc *x) { return gt_sat_add(x->self_ns[0], x->self_ns[1]); }

static int cmp_acc_self(const void *a, const void *b)
{
    const acc *x = a, *y = b;
    int64_t sx = acc_self(x), sy = acc_self(y);
    if (sx != sy)
        return sx < sy ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* The sums of h by name (key makes a name from a range's), by self time,
 * most first; *out_n names. */
static int fold(acc **out, size_t *out_n, const id_sums *h, const an_model *m, bool modules)
{
    acc *v = calloc(h->n ? h->n : 1, sizeof *v);
    size_t n = 0;
    *out = NULL;
    *out_n = 0;
    if (!v)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    for (size_t i = 0; i < h->cap; i++) {
        if (!h->keys[i])
            continue;
        int dir = 0;
        const char *s = an_str(m, h->keys[i]);
        v[n].name = modules ? module_key(s, &dir) : op_key(s);
        if (!v[n].name) {
            for (size_t k = 0; k < n; k++)
                free(v[k].name);
            free(v);
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        }
        /* a module's "NAME backward" ranges count as NAME's backward */
        for (int d = 0; d < 2; d++) {
            int to = modules ? dir : d;
            v[n].n[to] += h->v[i][3 * d];
            v[n].self_ns[to] = gt_sat_add(v[n].self_ns[to], h->v[i][3 * d + 1]);
            v[n].total_ns[to] = gt_sat_add(v[n].total_ns[to], h->v[i][3 * d + 2]);
        }
        n++;
    }
    qsort(v, n, sizeof *v, cmp_acc_name);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (w > 0 && strcmp(v[w - 1].name, v[i].name) == 0) {
            for (int d = 0; d < 2; d++) {
                v[w - 1].n[d] += v[i].n[d];
                v[w - 1].self_ns[d] = gt_sat_add(v[w - 1].self_ns[d], v[i].self_ns[d]);
                v[w - 1].total_ns[d] = gt_sat_add(v[w - 1].total_ns[d], v[i].total_ns[d]);
            }
            free(v[i].name);
            continue;
        }
        v[w++] = v[i];
    }
    qsort(v, w, sizeof *v, cmp_acc_self);
    *out = v;
    *out_n = w;
    return 0;
}

static void accs_free(acc *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i].name);
    free(v);
}

/* ---- which ranges are what ---------------------------------------------- */

/* The first range of thread tid starting at or after t (ranges are by tid, start). */
static size_t first_range(const an_model *m, int64_t tid, int64_t t)
{
    size_t lo = 0, hi = m->n_ranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const an_range *r = &m->ranges[mid];
        if (r->tid < tid || (r->tid == tid && r->start_ns < t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

enum { K_NONE, K_OP, K_FWD_MODULE, K_BWD_MODULE };

/* A trace with kernels: its "compute" ranges are no device, so the model
 * keeps them apart (compute_ranges); they are found among its ranges by
 * thread and times (inline texts have ids of their own per handle). Only
 * when some range's name looks like an op's ("aten::mm"). */
static void mark_device_trace_ops(uint8_t *kind, const an_model *m)
{
    bool opish = false;
    for (size_t i = 0; i < m->n_ranges && !opish; i++)
        opish = (i == 0 || m->ranges[i].text != m->ranges[i - 1].text) && strstr(an_str(m, m->ranges[i].text), "::");
    for (size_t i = 0; opish && i < m->n_compute_ranges; i++) {
        const an_span *c = &m->compute_ranges[i];
        for (size_t j = first_range(m, c->tid, c->start_ns);
             j < m->n_ranges && m->ranges[j].tid == c->tid && m->ranges[j].start_ns == c->start_ns; j++)
            if (m->ranges[j].end_ns == c->end_ns)
                kind[j] = K_OP;
    }
}

/* Marks each range: an op (an NVTX compute range the CPU timeline has, or
 * one inside it on its thread), or a module: a range in a "forward" phase,
 * a range "NAME backward", or a range NAME where "NAME backward" exists
 * (modules without steps). A name with "::" is no module (qualified module
 * names are dotted): on a trace with kernels the CPU timeline has no ops,
 * and hooks.py's "aten::mm" ranges are in the forward all the same. */
static int mark_ranges(uint8_t *kind, const an_model *m)
{
    int rc = 0;
    if (!m->cpu_timeline)
        mark_device_trace_ops(kind, m);
    for (size_t a = 0; a < m->n_acts; a++) {
        const an_act *op = &m->acts[a];
        if (op->kind != GT_EV_CPU_OP || !op->nvtx)
            continue;
        for (size_t j = first_range(m, op->tid, op->start_ns);
             j < m->n_ranges && m->ranges[j].tid == op->tid && m->ranges[j].start_ns < op->end_ns; j++)
            if (m->ranges[j].end_ns <= op->end_ns)
                kind[j] = K_OP;
    }
    /* the names NAME of the "NAME backward" ranges, sorted */
    char **backs = NULL;
    size_t n_backs = 0, cap = 0;
    for (size_t i = 0; i < m->n_ranges && rc == 0; i++) {
        const char *s = an_str(m, m->ranges[i].text);
        size_t n = strlen(s);
        if (kind[i] == K_OP || n <= 9 || strcmp(s + n - 9, " backward") != 0 || strstr(s, "::"))
            continue;
        kind[i] = K_BWD_MODULE;
        if (n_backs > 0 && i > 0 && m->ranges[i - 1].text == m->ranges[i].text)
            continue; /* the same name again, as often */
        if (n_backs == cap) {
            char **nb = realloc(backs, (cap = cap ? 2 * cap : 64) * sizeof *nb);
            if (!nb) {
                rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
                break;
            }
            backs = nb;
        }
        if (!(backs[n_backs] = an_printf("%.*s", (int)(n - 9), s)))
            rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        else
            n_backs++;
    }
    if (n_backs > 1)
        qsort(backs, n_backs, sizeof *backs, gt_cmp_str);
    for (size_t i = 0; i < m->n_ranges && rc == 0; i++) {
        if (kind[i] != K_NONE)
            continue;
        const an_range *r = &m->ranges[i];
        const char *s = an_str(m, r->text);
        bool named = n_backs && *s && bsearch(&s, backs, n_backs, sizeof *backs, gt_cmp_str);
        bool in_forward = false;
        for (int64_t p = r->parent; p >= 0 && !in_forward && !named; p = m->ranges[p].parent)
            in_forward = an_phase_of(an_str(m, m->ranges[p].text)) == PH_FORWARD;
        if ((named || in_forward) && an_phase_of(s) < 0 && !strstr(s, "::"))
            kind[i] = K_FWD_MODULE;
    }
    for (size_t i = 0; i < n_backs; i++)
        free(backs[i]);
    free(backs);
    return rc;
}

/* ---- the tables --------------------------------------------------------- */

/* The step r->steps[k] that t falls in; -1 none. */
static ptrdiff_t step_at(const gt_report *r, int64_t t)
{
    size_t lo = GT_UPPER_BOUND(r->steps, r->n_steps, start_ns, t);
    if (lo == 0 || t >= r->steps[lo - 1].end_ns)
        return -1;
    return (ptrdiff_t)lo - 1;
}

/* The thread of the steps: the one whose step range starts the first step. */
static int64_t step_tid(const gt_report *r, const an_model *m)
{
    int64_t num;
    for (size_t i = 0; r->n_steps && i < m->n_ranges; i++)
        if (m->ranges[i].start_ns == r->steps[0].start_ns && an_is_step_name(an_str(m, m->ranges[i].text), &num))
            return m->ranges[i].tid;
    return 0;
}

static int phases(gt_report *r, const an_model *m)
{
    int64_t tid = step_tid(r, m);
    if (r->n_steps == 0 || tid == 0)
        return 0;
    int64_t *per = calloc(r->n_steps * N_PH, sizeof *per); /* (step, phase) */
    int64_t *col = malloc(r->n_steps * sizeof *col);
    int rc = 0;
    bool any = false;
    if (!per || !col) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        goto cleanup;
    }
    /* the outermost phase ranges of the step thread, each in the step it starts in */
    for (size_t i = first_range(m, tid, INT64_MIN); i < m->n_ranges && m->ranges[i].tid == tid; i++) {
        const an_range *x = &m->ranges[i];
        int ph = an_phase_of(an_str(m, x->text));
        if (ph < 0)
            continue;
        bool nested = false;
        for (int64_t p = x->parent; p >= 0 && !nested; p = m->ranges[p].parent)
            nested = an_phase_of(an_str(m, m->ranges[p].text)) >= 0;
        ptrdiff_t k = step_at(r, x->start_ns);
        if (nested || k < 0)
            continue;
        int64_t end = x->end_ns < r->steps[k].end_ns ? x->end_ns : r->steps[k].end_ns;
        per[(size_t)k * N_PH + ph] += end - x->start_ns;
        any = true;
    }
    if (!any)
        goto cleanup;
    int64_t all_ns = 0;
    for (size_t k = 0; k < r->n_steps; k++) {
        int64_t in = 0, len = r->steps[k].end_ns - r->steps[k].start_ns;
        for (int p = 0; p < PH_OTHER; p++)
            in += per[k * N_PH + p];
        per[k * N_PH + PH_OTHER] = len > in ? len - in : 0;
        all_ns = gt_sat_add(all_ns, len);
    }
    r->phases = calloc(N_PH, sizeof *r->phases);
    if (!r->phases) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        goto cleanup;
    }
    for (int p = 0; p < N_PH; p++) {
        gt_phase_row *row = &r->phases[r->n_phases];
        int64_t sum = 0;
        for (size_t k = 0; k < r->n_steps; k++)
            sum += col[k] = per[k * N_PH + p];
        if (sum == 0 && p != PH_OTHER)
            continue; /* a phase the program never had (no DataLoader) */
        if (!(row->name = an_strdup(phase_names[p]))) {
            rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
            goto cleanup;
        }
        an_dist(&row->d, col, r->n_steps);
        row->share = all_ns > 0 ? (double)sum / (double)all_ns : 0;
        r->n_phases++;
    }
cleanup:
    free(per);
    free(col);
    return rc;
}

static int fill_modules(gt_report *r, const acc *v, size_t n, size_t top_n)
{
    int64_t all = 0;
    for (size_t i = 0; i < n; i++)
        all = gt_sat_add(all, acc_self(&v[i]));
    r->n_module_names = (int64_t)n;
    size_t k = n < top_n ? n : top_n;
    if (k == 0)
        return 0;
    if (!(r->modules = calloc(k, sizeof *r->modules)))
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    for (size_t i = 0; i < k; i++) {
        gt_module_row *row = &r->modules[r->n_modules];
        if (!(row->name = an_strdup(v[i].name)))
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        row->n_forward = v[i].n[0];
        row->n_backward = v[i].n[1];
        row->fwd_self_ns = v[i].self_ns[0];
        row->fwd_total_ns = v[i].total_ns[0];
        row->bwd_self_ns = v[i].self_ns[1];
        row->bwd_total_ns = v[i].total_ns[1];
        row->share = all > 0 ? (double)acc_self(&v[i]) / (double)all : 0;
        r->n_modules++;
    }
    return 0;
}

/* The steps with module backward ranges, where some steps have none: the
 * backward figures are those steps' (--pytorch backward-every=N). */
static int fill_backward_steps(gt_report *r, const uint8_t *bwd_step)
{
    size_t n = 0;
    for (size_t k = 0; k < r->n_steps && bwd_step; k++)
        n += bwd_step[k];
    if (n == 0 || n == r->n_steps || !r->n_modules)
        return 0;
    if (!(r->bwd_steps = malloc(n * sizeof *r->bwd_steps)))
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    for (size_t k = 0; k < r->n_steps; k++)
        if (bwd_step[k])
            r->bwd_steps[r->n_bwd_steps++] = r->steps[k].number;
    return 0;
}

static int fill_ops(gt_report *r, const acc *v, size_t n, size_t top_n)
{
    int64_t all = 0;
    for (size_t i = 0; i < n; i++)
        all = gt_sat_add(all, v[i].self_ns[0]);
    r->n_op_names = (int64_t)n;
    size_t k = n < top_n ? n : top_n;
    if (k == 0)
        return 0;
    if (!(r->ops = calloc(k, sizeof *r->ops)))
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    for (size_t i = 0; i < k; i++) {
        gt_op_row *row = &r->ops[r->n_ops];
        if (!(row->name = an_strdup(v[i].name)))
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        row->n = v[i].n[0];
        row->self_ns = v[i].self_ns[0];
        row->total_ns = v[i].total_ns[0];
        row->share = all > 0 ? (double)row->self_ns / (double)all : 0;
        r->n_ops++;
    }
    return 0;
}

int an_pytorch_tables(gt_report *r, const an_model *m, const gt_report_options *opt)
{
    size_t top_n = opt && opt->top_n > 0 ? (size_t)opt->top_n : 10;
    uint8_t *kind = calloc(m->n_ranges ? m->n_ranges : 1, 1);
    int64_t *child_ns = calloc(m->n_ranges ? m->n_ranges : 1, sizeof *child_ns);
    id_sums mods = {0}, ops = {0};
    acc *v = NULL;
    uint8_t *bwd_step = NULL; /* per step: some module backward range starts in it */
    size_t n = 0;
    int rc;
    if (!kind || !child_ns) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        goto cleanup;
    }
    if ((rc = phases(r, m)) < 0 || (rc = mark_ranges(kind, m)) < 0)
        goto cleanup;
    /* self time: a range less its direct children of its own kind (a
     * backward module's children in backward, an op's the ops it called) */
    for (size_t i = 0; i < m->n_ranges; i++) {
        int64_t p = m->ranges[i].parent;
        if (kind[i] != K_NONE && p >= 0 && kind[p] == kind[i])
            child_ns[p] = gt_sat_add(child_ns[p], m->ranges[i].end_ns - m->ranges[i].start_ns);
    }
    if (r->n_steps && !(bwd_step = calloc(r->n_steps, 1))) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        goto cleanup;
    }
    for (size_t i = 0; i < m->n_ranges && rc == 0; i++) {
        const an_range *x = &m->ranges[i];
        if (kind[i] == K_NONE || x->start_ns < r->start_ns || x->start_ns >= r->end_ns)
            continue;
        int64_t total = x->end_ns - x->start_ns, self = total > child_ns[i] ? total - child_ns[i] : 0;
        ptrdiff_t k = kind[i] == K_BWD_MODULE && bwd_step ? step_at(r, x->start_ns) : -1;
        if (k >= 0)
            bwd_step[k] = 1;
        if (kind[i] == K_OP) {
            r->ops_nest = r->ops_nest || child_ns[i] > 0;
            rc = sums_add(&ops, x->text, 0, self, total);
        } else {
            rc = sums_add(&mods, x->text, kind[i] == K_BWD_MODULE, self, total);
        }
    }
    /* GTRACE_CPU_OPS rows do not nest: self is their time */
    for (size_t a = 0; a < m->n_acts && rc == 0; a++) {
        const an_act *op = &m->acts[a];
        if (op->kind == GT_EV_CPU_OP && !op->nvtx && op->start_ns >= r->start_ns && op->start_ns < r->end_ns)
            rc = sums_add(&ops, op->name, 0, op->end_ns - op->start_ns, op->end_ns - op->start_ns);
    }
    if (rc < 0)
        goto cleanup;
    if ((rc = fold(&v, &n, &mods, m, true)) < 0 || (rc = fill_modules(r, v, n, top_n)) < 0 ||
        (rc = fill_backward_steps(r, bwd_step)) < 0)
        goto cleanup;
    accs_free(v, n);
    v = NULL;
    if ((rc = fold(&v, &n, &ops, m, false)) < 0 || (rc = fill_ops(r, v, n, top_n)) < 0)
        goto cleanup;
cleanup:
    accs_free(v, n);
    sums_free(&mods);
    sums_free(&ops);
    free(bwd_step);
    free(kind);
    free(child_ns);
    return rc;
}

void an_pytorch_clear(gt_report *r)
{
    for (size_t i = 0; i < r->n_phases; i++)
        free(r->phases[i].name);
    free(r->phases);
    for (size_t i = 0; i < r->n_modules; i++)
        free(r->modules[i].name);
    free(r->modules);
    for (size_t i = 0; i < r->n_ops; i++)
        free(r->ops[i].name);
    free(r->ops);
    free(r->bwd_steps);
    r->bwd_steps = NULL;
    r->n_bwd_steps = 0;
    r->phases = NULL;
    r->modules = NULL;
    r->ops = NULL;
    r->n_phases = r->n_modules = r->n_ops = 0;
}
