/* render_oom.c: the report's Out of memory section (oom.c) as text and as
 * JSON; render.c places it. It computes nothing. */
#include "oom.h"

#include <string.h>

static const char *by(char *b, double v)
{
    gt_fmt_bytes(b, 40, v);
    return b;
}

/* A figure the trace may not know (-1). */
static const char *maybe(char *b, int64_t v)
{
    return v < 0 ? "unknown" : by(b, (double)v);
}

void an_oom_print_text(const gt_report *r, FILE *f)
{
    const gt_oom *o = r->oom;
    char a[40], b[40], c[40], d[40];
    if (!o)
        return;
    fprintf(f, "\nOut of memory  at +%.3f ms (pid %lld)", (double)(o->t_ns - r->start_ns) / 1e6, (long long)o->pid);
    if (o->step >= 0)
        fprintf(f, ", step %lld", (long long)o->step);
    else if (o->prev_step >= 0) /* in a step never closed (the program died in it) */
        fprintf(f, ", after step %lld", (long long)o->prev_step);
    if (*o->phase)
        fprintf(f, ", %s", o->phase);
    if (o->n_ooms > 1)
        fprintf(f, "; the first of %lld failures", (long long)o->n_ooms);
    fprintf(f, "\n  %s\n", o->message);
    if (*o->range_path)
        fprintf(f, "  in             %s\n", o->range_path);
    if (o->requested_bytes >= 0)
        fprintf(f, "  requested      %s (%lld bytes)\n", by(a, (double)o->requested_bytes),
                (long long)o->requested_bytes);
    else
        fprintf(f, "  requested      unknown\n");
    fprintf(f, "  allocated      %s   reserved %s   reserved but free %s", maybe(a, o->allocated_bytes),
            maybe(b, o->reserved_bytes), maybe(c, o->free_bytes));
    if (o->limit_bytes >= 0)
        fprintf(f, "   limit %s", by(d, (double)o->limit_bytes));
    if (o->device_free_bytes >= 0)
        fprintf(f, "   device free %s", by(d, (double)o->device_free_bytes));
    fputc('\n', f);
    if (o->largest_gap_bytes >= 0)
        fprintf(f, "  largest gap    %s in the reserved segments\n", by(a, (double)o->largest_gap_bytes));
    if (o->reserved_bytes < 0 && o->allocated_bytes < 0)
        fprintf(f, "  cause          unknown: no allocator state in the trace then, and the error gave no "
                   "allocated or reserved figure\n");
    else
        fprintf(f, "  cause          %s: %s short of what it needed\n",
                o->fragmentation ? "fragmentation (enough was free, in no gap large enough)"
                                 : "real use (the live blocks and the request exceed the memory)",
                by(a, (double)o->shortfall_bytes));
    if (o->n_blocks)
        fprintf(f, "  largest live blocks\n");
    for (size_t i = 0; i < o->n_blocks; i++) {
        const gt_oom_block *k = &o->blocks[i];
        fprintf(f, "    %10s  %-28s %s\n", by(a, (double)k->bytes), *k->name ? k->name : "(unnamed)",
                *k->origin ? k->origin : "");
    }
    if (o->prev_step >= 0) {
        fprintf(f, "  grew since step %lld's end%s\n", (long long)o->prev_step, o->n_growth ? "" : ": nothing");
        for (size_t i = 0; i < o->n_growth; i++) {
            const gt_oom_growth *g = &o->growth[i];
            fprintf(f, "    +%-10s %s -> %s  %s\n", by(a, (double)(g->at_bytes - g->before_bytes)),
                    by(b, (double)g->before_bytes), by(c, (double)g->at_bytes), g->name);
        }
    }
    if (!o->n_fixes)
        fprintf(f, "  fixes          not estimated: the trace holds no allocator state then (on a GPU, gtrace "
                   "--pytorch records the CUDA allocator's)\n");
    else
        fprintf(f, "  fixes          the memory each would save, estimated from the live blocks\n");
    for (size_t i = 0; i < o->n_fixes; i++) {
        const gt_oom_fix *x = &o->fixes[i];
        fprintf(f, "    %-26s %10s  %s  %s\n      estimate: %s\n", x->fix, by(a, (double)x->saved_bytes),
                x->enough ? "enough" : "not enough", x->option, x->how);
    }
}

void an_oom_print_json(const gt_report *r, gt_json *j)
{
    const gt_oom *o = r->oom;
    gt_json_key(j, "oom");
    if (!o) {
        gt_json_null(j);
        return;
    }
    gt_json_object(j);
    gt_json_kv_int(j, "t_ns", o->t_ns);
    gt_json_kv_int(j, "pid", o->pid);
    gt_json_kv_int(j, "failures", o->n_ooms);
    gt_json_kv_str(j, "message", o->message);
    gt_json_kv_int(j, "step", o->step);
    gt_json_kv_str(j, "phase", o->phase);
    gt_json_kv_str(j, "range_path", o->range_path);
    gt_json_kv_int(j, "requested_bytes", o->requested_bytes);
    gt_json_kv_int(j, "allocated_bytes", o->allocated_bytes);
    gt_json_kv_int(j, "reserved_bytes", o->reserved_bytes);
    gt_json_kv_int(j, "free_bytes", o->free_bytes);
    gt_json_kv_int(j, "limit_bytes", o->limit_bytes);
    gt_json_kv_int(j, "device_free_bytes", o->device_free_bytes);
    gt_json_kv_int(j, "largest_gap_bytes", o->largest_gap_bytes);
    gt_json_kv_int(j, "shortfall_bytes", o->shortfall_bytes);
    gt_json_kv_str(j, "cause", o->reserved_bytes < 0 && o->allocated_bytes < 0 ? "unknown"
                               : o->fragmentation ? "fragmentation" : "real use");
    gt_json_kv_int(j, "step_bytes", o->step_bytes);
    gt_json_key(j, "largest_blocks");
    gt_json_array(j);
    for (size_t i = 0; i < o->n_blocks; i++) {
        gt_json_object(j);
        gt_json_kv_str(j, "name", o->blocks[i].name);
        gt_json_kv_str(j, "origin", o->blocks[i].origin);
        gt_json_kv_int(j, "address", (int64_t)o->blocks[i].address);
        gt_json_kv_int(j, "bytes", o->blocks[i].bytes);
        gt_json_end(j);
    }
    gt_json_end(j);
    gt_json_kv_int(j, "previous_step", o->prev_step);
    gt_json_key(j, "growth");
    gt_json_array(j);
    for (size_t i = 0; i < o->n_growth; i++) {
        gt_json_object(j);
        gt_json_kv_str(j, "name", o->growth[i].name);
        gt_json_kv_int(j, "before_bytes", o->growth[i].before_bytes);
        gt_json_kv_int(j, "at_bytes", o->growth[i].at_bytes);
        gt_json_end(j);
    }
    gt_json_end(j);
    gt_json_key(j, "fixes");
    gt_json_array(j);
    for (size_t i = 0; i < o->n_fixes; i++) {
        const gt_oom_fix *x = &o->fixes[i];
        gt_json_object(j);
        gt_json_kv_str(j, "fix", x->fix);
        gt_json_kv_str(j, "option", x->option);
        gt_json_kv_int(j, "saved_bytes", x->saved_bytes);
        gt_json_kv_bool(j, "enough", x->enough);
        gt_json_kv_str(j, "how", x->how);
        gt_json_end(j);
    }
    gt_json_end(j);
    gt_json_end(j);
}
