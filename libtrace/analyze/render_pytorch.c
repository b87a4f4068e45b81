/* render_pytorch.c: the report's PyTorch tables (pytorch_tables.c) as text
 * and as JSON; render.c places them. It computes nothing. */
#include "pytorch_int.h"

#include <string.h>

static const char *ns(char *b, double v)
{
    gt_fmt_ns(b, 40, v);
    return b;
}

void an_pytorch_print_phases(const gt_report *r, FILE *f)
{
    char a[40];
    if (r->n_phases) {
        fprintf(f, "\nphases         per step, %zu steps: median, and share of the steps' time\n", r->n_steps);
        for (size_t i = 0; i < r->n_phases; i++) {
            const gt_phase_row *p = &r->phases[i];
            fprintf(f, "  %-10s %10s  %5.1f%%%s\n", p->name, ns(a, p->d.median_ns), 100 * p->share,
                    strcmp(p->name, "other") == 0 ? "  (in a step, in no phase)" : "");
        }
    }
}

/* "0-9, 10, 20, ...": step numbers, runs joined, the first 12 items. */
static void print_steps(FILE *f, const int64_t *v, size_t n)
{
    size_t items = 0;
    for (size_t i = 0; i < n; items++) {
        size_t j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1)
            j++;
        if (items == 12) {
            fputs(", ...", f);
            return;
        }
        fprintf(f, "%s%lld", items ? ", " : "", (long long)v[i]);
        if (j > i)
            fprintf(f, "-%lld", (long long)v[j]);
        i = j + 1;
    }
}

void an_pytorch_print_tables(const gt_report *r, FILE *f)
{
    char a[40], b[40], c[40], d[40], e[40];
    /* the ops by self time where it differs from "top CPU ops", or beside the other PyTorch tables */
    if (r->n_ops && (r->ops_nest || r->n_modules || r->n_phases)) {
        fprintf(f, "\nops by self time (%lld names; self: less the ops it called, as torch's key_averages)\n",
                (long long)r->n_op_names);
        for (size_t i = 0; i < r->n_ops; i++) {
            const gt_op_row *o = &r->ops[i];
            fprintf(f, "  %5.1f%%  self %10s  total %10s  %7lld x  %.70s\n", 100 * o->share, ns(a, (double)o->self_ns),
                    ns(b, (double)o->total_ns), (long long)o->n, o->name);
        }
    }
    if (r->n_modules) {
        fprintf(f, "\nmodules        %lld names, by self time (self: less its submodules)\n", (long long)r->n_module_names);
        if (r->n_bwd_steps) {
            fprintf(f, "  bwd: sampled, the %zu steps of %zu with backward ranges (", r->n_bwd_steps, r->n_steps);
            print_steps(f, r->bwd_steps, r->n_bwd_steps);
            fputs("); fwd: every step\n", f);
        }
        fprintf(f, "  %6s %10s %10s %10s %10s %10s %7s  %s\n", "self%", "self", "fwd self", "fwd total", "bwd self",
                "bwd total", "calls", "module");
        for (size_t i = 0; i < r->n_modules; i++) {
            const gt_module_row *m = &r->modules[i];
            fprintf(f, "  %5.1f%% %10s %10s %10s %10s %10s %7lld  %.60s\n", 100 * m->share,
                    ns(a, (double)gt_sat_add(m->fwd_self_ns, m->bwd_self_ns)), ns(b, (double)m->fwd_self_ns),
                    ns(c, (double)m->fwd_total_ns), ns(d, (double)m->bwd_self_ns), ns(e, (double)m->bwd_total_ns),
                    (long long)m->n_forward, m->name);
        }
    }
}

void an_pytorch_print_json(const gt_report *r, gt_json *j)
{
    gt_json_key(j, "phases");
    gt_json_array(j);
    for (size_t i = 0; i < r->n_phases; i++) {
        const gt_phase_row *p = &r->phases[i];
        gt_json_object(j);
        gt_json_kv_str(j, "name", p->name);
        gt_json_kv_int(j, "n", p->d.n);
        gt_json_kv_int(j, "total_ns", p->d.total_ns);
        gt_json_kv_num(j, "median_ns", p->d.median_ns);
        gt_json_kv_num(j, "mean_ns", p->d.mean_ns);
        gt_json_kv_num(j, "share", p->share);
        gt_json_end(j);
    }
    gt_json_end(j);
    gt_json_kv_int(j, "module_names", r->n_module_names);
    gt_json_key(j, "module_backward_steps"); /* sampled: the steps the backward figures are from; null: all */
    if (r->n_bwd_steps) {
        gt_json_array(j);
        for (size_t i = 0; i < r->n_bwd_steps; i++)
            gt_json_int(j, r->bwd_steps[i]);
        gt_json_end(j);
    } else {
        gt_json_null(j);
    }
    gt_json_key(j, "modules");
    gt_json_array(j);
    for (size_t i = 0; i < r->n_modules; i++) {
        const gt_module_row *m = &r->modules[i];
        gt_json_object(j);
        gt_json_kv_str(j, "name", m->name);
        gt_json_kv_int(j, "forward_calls", m->n_forward);
        gt_json_kv_int(j, "backward_calls", m->n_backward);
        gt_json_kv_int(j, "self_ns", gt_sat_add(m->fwd_self_ns, m->bwd_self_ns));
        gt_json_kv_int(j, "forward_self_ns", m->fwd_self_ns);
        gt_json_kv_int(j, "forward_total_ns", m->fwd_total_ns);
        gt_json_kv_int(j, "backward_self_ns", m->bwd_self_ns);
        gt_json_kv_int(j, "backward_total_ns", m->bwd_total_ns);
        gt_json_kv_num(j, "share", m->share);
        gt_json_end(j);
    }
    gt_json_end(j);
    gt_json_kv_int(j, "op_names", r->n_op_names);
    gt_json_kv_bool(j, "ops_nest", r->ops_nest);
    gt_json_key(j, "ops");
    gt_json_array(j);
    for (size_t i = 0; i < r->n_ops; i++) {
        const gt_op_row *o = &r->ops[i];
        gt_json_object(j);
        gt_json_kv_str(j, "name", o->name);
        gt_json_kv_int(j, "n", o->n);
        gt_json_kv_int(j, "self_ns", o->self_ns);
        gt_json_kv_int(j, "total_ns", o->total_ns);
        gt_json_kv_num(j, "share", o->share);
        gt_json_end(j);
    }
    gt_json_end(j);
}
