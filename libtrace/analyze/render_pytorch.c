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

static void jkey(FILE *f, const char *k)
{
    an_json_str(f, k);
    fputc(':', f);
}

void an_pytorch_print_json(const gt_report *r, FILE *f)
{
    jkey(f, "phases");
    fputc('[', f);
    for (size_t i = 0; i < r->n_phases; i++) {
        const gt_phase_row *p = &r->phases[i];
        fputs(i ? ",{" : "{", f);
        jkey(f, "name"); an_json_str(f, p->name);
        fprintf(f, ",\"n\":%lld,\"total_ns\":%lld,", (long long)p->d.n, (long long)p->d.total_ns);
        jkey(f, "median_ns"); an_json_num(f, p->d.median_ns); fputc(',', f);
        jkey(f, "mean_ns"); an_json_num(f, p->d.mean_ns); fputc(',', f);
        jkey(f, "share"); an_json_num(f, p->share);
        fputc('}', f);
    }
    fprintf(f, "],\"module_names\":%lld,", (long long)r->n_module_names);
    jkey(f, "module_backward_steps"); /* sampled: the steps the backward figures are from; null: all */
    if (r->n_bwd_steps) {
        for (size_t i = 0; i < r->n_bwd_steps; i++)
            fprintf(f, "%c%lld", i ? ',' : '[', (long long)r->bwd_steps[i]);
        fputs("],", f);
    } else {
        fputs("null,", f);
    }
    jkey(f, "modules");
    fputc('[', f);
    for (size_t i = 0; i < r->n_modules; i++) {
        const gt_module_row *m = &r->modules[i];
        fputs(i ? ",{" : "{", f);
        jkey(f, "name"); an_json_str(f, m->name);
        fprintf(f, ",\"forward_calls\":%lld,\"backward_calls\":%lld,\"self_ns\":%lld,\"forward_self_ns\":%lld,"
                   "\"forward_total_ns\":%lld,\"backward_self_ns\":%lld,\"backward_total_ns\":%lld,",
                (long long)m->n_forward, (long long)m->n_backward, (long long)gt_sat_add(m->fwd_self_ns, m->bwd_self_ns),
                (long long)m->fwd_self_ns, (long long)m->fwd_total_ns, (long long)m->bwd_self_ns,
                (long long)m->bwd_total_ns);
        jkey(f, "share"); an_json_num(f, m->share);
        fputc('}', f);
    }
    fprintf(f, "],\"op_names\":%lld,\"ops_nest\":%s,", (long long)r->n_op_names, r->ops_nest ? "true" : "false");
    jkey(f, "ops");
    fputc('[', f);
    for (size_t i = 0; i < r->n_ops; i++) {
        const gt_op_row *o = &r->ops[i];
        fputs(i ? ",{" : "{", f);
        jkey(f, "name"); an_json_str(f, o->name);
        fprintf(f, ",\"n\":%lld,\"self_ns\":%lld,\"total_ns\":%lld,", (long long)o->n, (long long)o->self_ns,
                (long long)o->total_ns);
        jkey(f, "share"); an_json_num(f, o->share);
        fputc('}', f);
    }
    fputs("],", f);
}
