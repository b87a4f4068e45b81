/* render.c: a report and an allocator state as text for a terminal (one
 * screen for the report: the essentials first, details capped at top_n rows)
 * and as JSON (everything, numbers in ns and bytes). It computes nothing. */
#include "gt_metrics.h"
#include "oom.h"
#include "pytorch_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Numbers as text: each call of NS() or BY() in a function formats into the
 * next of its eight buffers `nb` (counter `nbi`), so one printf takes up to
 * eight. */
static const char *fmt_ns(char (*nb)[40], int *i, double ns)
{
    char *b = nb[(*i)++ % 8];
    gt_fmt_ns(b, 40, ns);
    return b;
}
static const char *fmt_bytes(char (*nb)[40], int *i, double bytes)
{
    char *b = nb[(*i)++ % 8];
    gt_fmt_bytes(b, 40, bytes);
    return b;
}
#define NS(x) fmt_ns(nb, &nbi, (double)(x))
#define BY(x) fmt_bytes(nb, &nbi, (double)(x))

/* A record's fields as JSON: each key, where its value is, and its type
 * (J_U64 is written as the int64 of its bits). A metric's key is the
 * registry's (gt_metrics.h): JM names the metric, not the key. */
typedef enum jtype { J_I64, J_I32, J_U64, J_DBL, J_STR, J_BOOL } jtype;
typedef struct jfield { const char *key; size_t off; jtype type; int metric; /* gt_metric_id + 1; 0: key */ } jfield;
#define JF(T, field, key, type) {key, offsetof(T, field), type, 0}
#define JM(T, field, id, type) {NULL, offsetof(T, field), type, (id) + 1}

/* The fields of `rec`, into the object open in j. */
static void jfields(gt_json *j, const void *rec, const jfield *fs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *p = (const char *)rec + fs[i].off;
        int64_t i64;
        int32_t i32;
        uint64_t u64;
        double d;
        const char *s;
        bool yes;
        gt_json_key(j, fs[i].metric ? gt_metric_key((gt_metric_id)(fs[i].metric - 1)) : fs[i].key);
        switch (fs[i].type) {
        case J_I64: memcpy(&i64, p, sizeof i64); gt_json_int(j, i64); break;
        case J_I32: memcpy(&i32, p, sizeof i32); gt_json_int(j, i32); break;
        case J_U64: memcpy(&u64, p, sizeof u64); gt_json_int(j, (int64_t)u64); break;
        case J_DBL: memcpy(&d, p, sizeof d); gt_json_num(j, d); break;
        case J_STR: memcpy(&s, p, sizeof s); gt_json_str(j, s); break;
        case J_BOOL: memcpy(&yes, p, sizeof yes); gt_json_bool(j, yes); break;
        }
    }
}
#define JFIELDS(j, rec, table) jfields((j), (rec), (table), sizeof(table) / sizeof(table)[0])

static double rel_ms(const gt_report *r, int64_t t)
{
    return (double)(t - r->start_ns) / 1e6;
}

typedef struct worst_step { size_t rank, step; } worst_step;

/* The Communication section: per rank (a line each), the collectives by
 * kind, then each step, or the steps with most exposed time when many. */
static void print_comm(const gt_report *r, FILE *f)
{
    enum { ALL_STEPS_MAX = 6, N_WORST = 5 };
    char nb[8][40], lb[64];
    int nbi = 0;
    const gt_comm *c = &r->comm;
    bool nccl = false, nvtx = false;
    size_t max_steps = 0, n_pairs = 0;
    for (size_t i = 0; i < c->n_ranks; i++) {
        nccl = nccl || c->ranks[i].source == GT_COMM_NCCL;
        nvtx = nvtx || c->ranks[i].source == GT_COMM_NVTX;
        if (c->ranks[i].n_steps > max_steps)
            max_steps = c->ranks[i].n_steps;
        n_pairs += c->ranks[i].n_steps;
    }
    fprintf(f, "\ncommunication  %zu rank%s: %s%s%s; compute: %s\n", c->n_ranks, c->n_ranks == 1 ? "" : "s",
            nccl ? "NCCL kernels" : "", nccl && nvtx ? " and " : "",
            nvtx ? (c->collective_ops ? "collective ops (c10d::, gloo:, nccl:) or NVTX ranges of a \"communication\" category"
                          : "NVTX ranges of a \"communication\" category")
                 : "",
            r->cpu_timeline ? "CPU ops" : "kernels that are not NCCL's");
    fprintf(f, "  %s, mean over ranks: comm %s, exposed %s, overlap %s, %.1f%% hidden, %.1f collectives\n",
            c->per_step ? "per step" : "over the window (no steps)", NS(c->comm_ns), NS(c->exposed_ns),
            NS(c->overlap_ns), 100 * c->hidden, c->collectives);
    fprintf(f, "  %-30s %5s %11s %11s %11s %11s %7s %8s %11s %12s\n", c->per_step ? "rank, per step" : "rank",
            "steps", "comm", "compute", "overlap", "exposed", "hidden", "exposed%", gt_metric_label(GT_M_COLLECTIVES),
            "bytes");
    for (size_t i = 0; i < c->n_ranks; i++) {
        const gt_comm_rank *k = &c->ranks[i];
        double n = k->n_steps ? (double)k->n_steps : 1;
        char who[96];
        snprintf(who, sizeof who, "%s %s", an_rank_label(lb, sizeof lb, k), k->name);
        char bytes[40] = "unknown";
        if (k->n_bytes_known > 0)
            gt_fmt_bytes(bytes, sizeof bytes, (double)k->bytes / n);
        fprintf(f, "  %-30.30s %5zu %11s %11s %11s %11s %6.1f%% %7.1f%% %11.1f %12s\n", who, k->n_steps,
                NS((double)k->comm_ns / n), NS((double)k->compute_ns / n), NS((double)k->overlap_ns / n),
                NS((double)k->exposed_ns / n), 100 * k->hidden, 100 * k->exposed_share, (double)k->n_collectives / n,
                bytes);
    }
    if (c->n_ranks > 1 && c->most_exposed >= 0 && c->slowest >= 0) {
        const gt_comm_rank *e = &c->ranks[c->most_exposed], *s = &c->ranks[c->slowest];
        double ne = e->n_steps ? (double)e->n_steps : 1, ns = s->n_steps ? (double)s->n_steps : 1;
        fprintf(f, "  most exposed: %s, %s%s (%.1f%% of its %s)", an_rank_label(lb, sizeof lb, e),
                NS((double)e->exposed_ns / ne), c->per_step ? " per step" : "", 100 * e->exposed_share,
                c->per_step ? gt_metric_label(GT_M_STEP_TIME) : "time");
        fprintf(f, "; slowest: %s, %s of compute%s\n", an_rank_label(lb, sizeof lb, s), NS((double)s->compute_ns / ns),
                c->per_step ? " per step" : "");
    }
    fprintf(f, "  (exposed: communication while no compute ran, what the step waits for; hidden: overlap / comm)\n");
    if (c->n_kinds > 0)
        fprintf(f, "  %-36s %7s %11s %11s\n", "collectives by name, all ranks", "n", "time", "exposed");
    for (size_t i = 0; i < c->n_kinds && i < 5; i++) {
        const gt_comm_kind *k = &c->kinds[i];
        fprintf(f, "  %-36.60s %7lld %11s %11s\n", k->name, (long long)k->n, NS(k->total_ns), NS(k->exposed_ns));
    }
    if (n_pairs == 0)
        return;
    worst_step *w = malloc(n_pairs * sizeof *w);
    size_t n_w = 0;
    if (!w)
        return; /* the per-step lines are a detail; the JSON has them all */
    for (size_t i = 0; i < c->n_ranks; i++)
        for (size_t j = 0; j < c->ranks[i].n_steps; j++)
            w[n_w++] = (worst_step){i, j};
    bool all = max_steps <= ALL_STEPS_MAX;
    if (!all) { /* the N_WORST with most exposed time, by selection: N_WORST is tiny */
        for (size_t a = 0; a < N_WORST && a < n_w; a++)
            for (size_t b = a + 1; b < n_w; b++) {
                const gt_comm_step *x = &c->ranks[w[a].rank].steps[w[a].step], *y = &c->ranks[w[b].rank].steps[w[b].step];
                if (y->exposed_ns > x->exposed_ns) {
                    worst_step t = w[a];
                    w[a] = w[b];
                    w[b] = t;
                }
            }
        fprintf(f, "  the %d steps with most exposed communication, of %zu (rank x step):\n", N_WORST < (int)n_w ? N_WORST : (int)n_w, n_w);
        n_w = n_w < N_WORST ? n_w : N_WORST;
    }
    for (size_t i = 0; i < n_w; i++) {
        const gt_comm_rank *k = &c->ranks[w[i].rank];
        const gt_comm_step *st = &k->steps[w[i].step];
        fprintf(f, "  step %-5lld %-16s comm %10s  compute %10s  overlap %10s  exposed %10s  %lld collectives\n",
                (long long)st->number, an_rank_label(lb, sizeof lb, k), NS(st->comm_ns), NS(st->compute_ns),
                NS(st->overlap_ns), NS(st->exposed_ns), (long long)st->n_collectives);
    }
    free(w);
}

/* ---- the Memory section: one walk, a text and a JSON back end ------------ */

/* The walk visits the whole trace's allocator, then each process's (with
 * its rank), and for each its leaks, then its spikes; each back end writes
 * what it shows of them. */
typedef struct mem_sink mem_sink;
typedef struct mem_sink_ops {
    void (*begin)(mem_sink *s);
    /* an allocator: the whole trace's (proc -1) or process proc's, its
     * rank from the Communication section (-1 unknown) */
    void (*allocator)(mem_sink *s, const gt_memory *m, ptrdiff_t proc, int32_t rank);
    void (*leak)(mem_sink *s, const gt_leak *l, size_t i);
    void (*spikes)(mem_sink *s); /* after the leaks, before the first spike */
    void (*spike)(mem_sink *s, const gt_spike *sp, size_t i);
    void (*allocator_end)(mem_sink *s, ptrdiff_t proc);
    void (*end)(mem_sink *s);    /* the total over processes, rows left out */
} mem_sink_ops;

struct mem_sink {
    const mem_sink_ops *ops;
    const gt_report *r;
    FILE *f;
    gt_json *j;                  /* JSON: the writer, f unused */
    const char *indent;          /* text: the allocator walked is shown, its lines so indented */
};

/* A process's rank, as the Communication section knows it; -1 unknown. */
static int32_t proc_rank(const gt_report *r, int64_t pid)
{
    for (size_t i = 0; i < r->comm.n_ranks; i++)
        if (r->comm.ranks[i].pid == pid && r->comm.ranks[i].rank >= 0)
            return r->comm.ranks[i].rank;
    return -1;
}

static void walk_allocator(mem_sink *s, const gt_memory *m, ptrdiff_t proc, int32_t rank)
{
    s->ops->allocator(s, m, proc, rank);
    for (size_t i = 0; i < m->n_leaks; i++)
        s->ops->leak(s, &m->leaks[i], i);
    s->ops->spikes(s);
    for (size_t i = 0; i < m->n_spikes; i++)
        s->ops->spike(s, &m->spikes[i], i);
    s->ops->allocator_end(s, proc);
}

static void walk_memory(mem_sink *s)
{
    const gt_memory *mem = &s->r->memory;
    s->ops->begin(s);
    walk_allocator(s, mem, -1, -1);
    for (size_t i = 0; i < mem->n_procs; i++)
        walk_allocator(s, &mem->procs[i], (ptrdiff_t)i, proc_rank(s->r, mem->procs[i].pid));
    s->ops->end(s);
}

/* Text: one allocator (the whole trace's), or a line and its figures per
 * process and their sum at one moment when one memory holds them all. */
static bool mem_has_events(const gt_memory *m) { return m->has_blocks || m->has_segments || m->has_device; }

/* Whether allocator i shares its process with another (one per device). */
static bool shares_pid(const gt_memory *mem, size_t i)
{
    return (i > 0 && mem->procs[i - 1].pid == mem->procs[i].pid) ||
           (i + 1 < mem->n_procs && mem->procs[i + 1].pid == mem->procs[i].pid);
}

static void text_begin(mem_sink *s)
{
    const gt_memory *mem = &s->r->memory;
    size_t n_pids = 0;
    for (size_t i = 0; i < mem->n_procs; i++)
        n_pids += i == 0 || mem->procs[i].pid != mem->procs[i - 1].pid;
    fprintf(s->f, "\nmemory");
    if (!mem_has_events(mem))
        fprintf(s->f, "         no allocation events\n");
    else if (mem->n_procs <= 1)
        fprintf(s->f, "         ");
    else if (n_pids < mem->n_procs)
        fprintf(s->f, "         %zu allocators, one per process and device\n", mem->n_procs);
    else
        fprintf(s->f, "         %zu processes, each its own allocator\n", mem->n_procs);
}

static void text_allocator(mem_sink *s, const gt_memory *m, ptrdiff_t proc, int32_t rank)
{
    const gt_report *r = s->r;
    bool many = r->memory.n_procs > 1;
    char nb[8][40];
    int nbi = 0;
    FILE *f = s->f;
    s->indent = NULL;
    if (!mem_has_events(&r->memory) || many != (proc >= 0))
        return;
    s->indent = many ? "    " : "  ";
    if (many && rank >= 0)
        fprintf(f, "  rank %d (pid %lld", rank, (long long)m->pid);
    else if (many)
        fprintf(f, "  pid %lld", (long long)m->pid);
    if (many && m->device_id >= 0 && shares_pid(&r->memory, (size_t)proc))
        fprintf(f, ", cuda:%d", m->device_id);
    if (many)
        fputs(rank >= 0 ? "): " : ": ", f);
    fprintf(f, "%s %s at +%.3f ms, %s %s", gt_metric_label(GT_M_PEAK_ALLOCATED), BY(m->peak_allocated_bytes),
            rel_ms(r, m->peak_allocated_ns), gt_metric_label(GT_M_PEAK_RESERVED), BY(m->peak_reserved_bytes));
    if (m->total_device_bytes)
        fprintf(f, " of %s", BY(m->total_device_bytes));
    fprintf(f, ", fragmentation %.1f%%\n", 100 * m->fragmentation);
    fprintf(f, "%schurn: %lld device allocs, %lld frees; %lld block allocs, %lld frees", s->indent,
            (long long)m->n_dev_allocs, (long long)m->n_dev_frees, (long long)m->n_block_allocs,
            (long long)m->n_block_frees);
    if (r->n_steps)
        fprintf(f, "; per step after the first: %.1f device, %.1f block", m->dev_churn_per_step,
                m->block_churn_per_step);
    fputc('\n', f);
}

static void text_leak(mem_sink *s, const gt_leak *l, size_t i)
{
    char nb[8][40];
    int nbi = 0;
    (void)i;
    if (s->indent)
        fprintf(s->f, "%sleak: %s alive in %lld allocations, +%s per step over %lld steps, from %s\n", s->indent,
                BY(l->alive_bytes), (long long)l->n_alive, BY(l->bytes_per_step), (long long)l->n_steps_grew,
                *l->origin ? l->origin : "(no range)");
}

static void text_nothing(mem_sink *s) { (void)s; }

static void text_spike(mem_sink *s, const gt_spike *sp, size_t i)
{
    char nb[8][40];
    int nbi = 0;
    if (!s->indent || i >= 5)
        return;
    fprintf(s->f, "%sspike: %s for %s at +%.3f ms", s->indent, BY(sp->bytes), NS(sp->end_ns - sp->start_ns),
            rel_ms(s->r, sp->start_ns));
    if (sp->step >= 0)
        fprintf(s->f, " (step %lld)", (long long)sp->step);
    fprintf(s->f, ", from %s\n", *sp->origin ? sp->origin : "(no range)");
}

static void text_allocator_end(mem_sink *s, ptrdiff_t proc) { (void)s; (void)proc; }

static void text_end(mem_sink *s)
{
    const gt_memory *mem = &s->r->memory;
    char nb[8][40];
    int nbi = 0;
    if (mem_has_events(mem) && mem->n_procs > 1 && mem->total_one_pool)
        fprintf(s->f, "  all %zu at once: %s %s at +%.3f ms, %s %s at +%.3f ms\n", mem->n_procs,
                gt_metric_label(GT_M_PEAK_ALLOCATED), BY(mem->total_peak_allocated_bytes),
                rel_ms(s->r, mem->total_peak_allocated_ns), gt_metric_label(GT_M_PEAK_RESERVED),
                BY(mem->total_peak_reserved_bytes), rel_ms(s->r, mem->total_peak_reserved_ns));
    if (mem->n_skipped_rows > 0)
        fprintf(s->f, "  %lld allocation rows with impossible times or sizes left out\n",
                (long long)mem->n_skipped_rows);
}

static const mem_sink_ops text_ops = {
    text_begin, text_allocator, text_leak, text_nothing, text_spike, text_allocator_end, text_end,
};

static void print_memory(const gt_report *r, FILE *f)
{
    mem_sink s = {&text_ops, r, f, NULL, NULL};
    walk_memory(&s);
}

/* JSON: the whole trace's figures (the process that reserved most, every
 * process's leaks and spikes), each process's, the total; everything. */
static void json_begin(mem_sink *s) { gt_json_object(s->j); }

static const jfield allocator_fields[] = {
    JF(gt_memory, pid, "pid", J_I64), JF(gt_memory, device_id, "device_id", J_I32),
    JF(gt_memory, has_blocks, "has_blocks", J_BOOL), JF(gt_memory, has_segments, "has_segments", J_BOOL),
    JF(gt_memory, has_device, "has_device", J_BOOL),
    JM(gt_memory, peak_allocated_bytes, GT_M_PEAK_ALLOCATED, J_I64),
    JF(gt_memory, peak_allocated_ns, "peak_allocated_ns", J_I64),
    JM(gt_memory, peak_reserved_bytes, GT_M_PEAK_RESERVED, J_I64),
    JF(gt_memory, peak_reserved_ns, "peak_reserved_ns", J_I64),
    JF(gt_memory, end_allocated_bytes, "end_allocated_bytes", J_I64),
    JF(gt_memory, end_reserved_bytes, "end_reserved_bytes", J_I64),
    JF(gt_memory, fragmentation, "fragmentation", J_DBL),
    JF(gt_memory, total_device_bytes, "total_device_bytes", J_I64),
    JF(gt_memory, n_dev_allocs, "device_allocs", J_I64), JF(gt_memory, n_dev_frees, "device_frees", J_I64),
    JF(gt_memory, n_block_allocs, "block_allocs", J_I64), JF(gt_memory, n_block_frees, "block_frees", J_I64),
    JF(gt_memory, dev_churn_per_step, "device_churn_per_step", J_DBL),
    JF(gt_memory, block_churn_per_step, "block_churn_per_step", J_DBL),
};
static const jfield leak_fields[] = {
    JF(gt_leak, pid, "pid", J_I64), JF(gt_leak, origin, "origin", J_STR), JF(gt_leak, n_alive, "n_alive", J_I64),
    JF(gt_leak, alive_bytes, "alive_bytes", J_I64), JF(gt_leak, n_steps_grew, "steps_grew", J_I64),
    JF(gt_leak, bytes_per_step, "bytes_per_step", J_DBL), JF(gt_leak, first_ns, "first_ns", J_I64),
    JF(gt_leak, last_ns, "last_ns", J_I64),
};
static const jfield spike_fields[] = {
    JF(gt_spike, pid, "pid", J_I64), JF(gt_spike, origin, "origin", J_STR), JF(gt_spike, address, "address", J_U64),
    JF(gt_spike, bytes, "bytes", J_I64), JF(gt_spike, start_ns, "start_ns", J_I64),
    JF(gt_spike, end_ns, "end_ns", J_I64), JF(gt_spike, step, "step", J_I64),
};
static const jfield total_fields[] = {
    JM(gt_memory, total_peak_allocated_bytes, GT_M_PEAK_ALLOCATED, J_I64),
    JF(gt_memory, total_peak_allocated_ns, "peak_allocated_ns", J_I64),
    JM(gt_memory, total_peak_reserved_bytes, GT_M_PEAK_RESERVED, J_I64),
    JF(gt_memory, total_peak_reserved_ns, "peak_reserved_ns", J_I64),
};

static void json_allocator(mem_sink *s, const gt_memory *m, ptrdiff_t proc, int32_t rank)
{
    if (proc >= 0) {
        gt_json_object(s->j);
        gt_json_kv_int(s->j, "rank", rank);
    }
    JFIELDS(s->j, m, allocator_fields);
    gt_json_key(s->j, "leaks");
    gt_json_array(s->j);
}

/* An element of an array: an object of the record's fields. */
static void json_element(gt_json *j, const void *rec, const jfield *fs, size_t n)
{
    gt_json_object(j);
    jfields(j, rec, fs, n);
    gt_json_end(j);
}

static void json_leak(mem_sink *s, const gt_leak *l, size_t i)
{
    (void)i;
    json_element(s->j, l, leak_fields, sizeof leak_fields / sizeof leak_fields[0]);
}

static void json_spikes(mem_sink *s)
{
    gt_json_end(s->j);
    gt_json_key(s->j, "spikes");
    gt_json_array(s->j);
}

static void json_spike(mem_sink *s, const gt_spike *sp, size_t i)
{
    (void)i;
    json_element(s->j, sp, spike_fields, sizeof spike_fields / sizeof spike_fields[0]);
}

static void json_allocator_end(mem_sink *s, ptrdiff_t proc)
{
    gt_json_end(s->j);
    if (proc >= 0) {
        gt_json_end(s->j);
        return;
    }
    gt_json_key(s->j, "processes"); /* the whole trace's: its processes follow */
    gt_json_array(s->j);
}

static void json_end(mem_sink *s)
{
    const gt_memory *mem = &s->r->memory;
    gt_json *j = s->j;
    gt_json_end(j);
    gt_json_key(j, "total");
    if (mem->n_procs > 1 && mem->total_one_pool) {
        gt_json_object(j);
        JFIELDS(j, mem, total_fields);
        gt_json_end(j);
    } else {
        gt_json_null(j);
    }
    gt_json_kv_int(j, "skipped_rows", mem->n_skipped_rows);
    gt_json_end(j);
}

static const mem_sink_ops json_ops = {
    json_begin, json_allocator, json_leak, json_spikes, json_spike, json_allocator_end, json_end,
};

static void print_memory_json(const gt_report *r, gt_json *j)
{
    mem_sink s = {&json_ops, r, NULL, j, NULL};
    walk_memory(&s);
}

int gt_report_print_text(const gt_report *r, FILE *f)
{
    char nb[8][40];
    int nbi = 0;
    fprintf(f, "gtrace report: %s (%s)\n", r->path, r->origin == GT_ORIGIN_NSYS ? "nsys export" : "gtrace trace");
    fprintf(f, "%-15s%s", gt_metric_label(GT_M_WALL), NS(r->wall_ns));
    if (r->n_steps)
        fprintf(f, "   steps %lld..%lld (%zu)", (long long)r->steps[0].number,
                (long long)r->steps[r->n_steps - 1].number, r->n_steps);
    fputc('\n', f);
    if (r->steps_note && *r->steps_note)
        fprintf(f, "steps          %s\n", r->steps_note);
    if (r->n_refused > 0)
        fprintf(f, "rows left out  %lld: times or sizes out of range (a damaged trace?)\n", (long long)r->n_refused);
    if (r->n_steps)
        fprintf(f, "%-15smean %s  median %s  p95 %s  min %s  max %s\n", gt_metric_label(GT_M_STEP_TIME),
                NS(r->step_time.mean_ns),
                NS(r->step_time.median_ns), NS(r->step_time.p95_ns), NS(r->step_time.min_ns), NS(r->step_time.max_ns));
    else
        fprintf(f, "%-15sno steps (no NVTX range named \"step N\")\n", gt_metric_label(GT_M_STEP_TIME));
    if (r->cpu_timeline)
        fprintf(f, "device         none: no kernels in this trace; CPU compute ops stand in for kernels "
                   "(NVTX ranges of a \"compute\" category, GTRACE_CPU_OPS)\n");
    for (size_t i = 0; i < r->n_devices; i++) {
        const gt_device_util *d = &r->devices[i];
        if (d->device_id < 0)
            fprintf(f, "cpu ops      busy %5.1f%% (%s)  idle %s\n", 100 * d->utilization, NS(d->busy_ns),
                    NS(d->span_ns - d->busy_ns));
        else
            fprintf(f, "device  %-3d  busy %5.1f%% (%s, kernels %s)  idle %s\n", d->device_id, 100 * d->utilization,
                    NS(d->busy_ns), NS(d->kernel_ns), NS(d->span_ns - d->busy_ns));
    }
    if (r->n_devices == 0)
        fprintf(f, "device         no device activity (no kernels, copies or CPU ops)\n");
    an_pytorch_print_phases(r, f);

    const gt_gaps *g = &r->gaps;
    fprintf(f, "\nidle gaps      %lld gaps, %s:", (long long)g->n_gaps, NS(g->idle_ns));
    for (int c = 0; c < GT_GAP_N_CAUSES; c++)
        fprintf(f, "  %s %s (%lld)", gt_gap_cause_name((gt_gap_cause)c), NS(g->idle_by_cause_ns[c]),
                (long long)g->n_by_cause[c]);
    fputc('\n', f);
    for (size_t i = 0; i < g->n_activity && i < 5; i++) {
        const gt_gap_activity *a = &g->activity[i];
        fprintf(f, "  host during gaps: %-30s %-28s %s in %lld gaps\n", *a->nvtx ? a->nvtx : "(no range)",
                *a->api ? a->api : "(no CUDA call)", NS(a->total_ns), (long long)a->n_gaps);
    }
    for (size_t i = 0; i < g->n_longest && i < 5; i++) {
        const gt_gap *x = &g->longest[i];
        fprintf(f, "  longest: %s at +%.3f ms, %s, host in %s%s%s\n", NS(x->end_ns - x->start_ns), rel_ms(r, x->start_ns),
                gt_gap_cause_name(x->cause), *x->nvtx_path ? x->nvtx_path : "(no range)", *x->api ? " / " : "", x->api);
    }

    an_rank_steps_print_text(r, f);
    if (r->comm.n_ranks > 0)
        print_comm(r, f);

    fprintf(f, "\n%s (%lld names)\n", r->cpu_timeline ? "top CPU ops" : "top kernels", (long long)r->n_kernel_names);
    for (size_t i = 0; i < r->n_kernels; i++) {
        const gt_name_row *k = &r->kernels[i];
        fprintf(f, "  %5.1f%%  %10s  %7lld x  mean %-10s  %.70s\n", 100 * k->share, NS(k->d.total_ns), (long long)k->d.n,
                NS(k->d.mean_ns), k->name);
    }
    an_pytorch_print_tables(r, f);
    if (r->n_apis) {
        fprintf(f, "\nCUDA API\n");
        for (size_t i = 0; i < r->n_apis; i++) {
            const gt_name_row *a = &r->apis[i];
            fprintf(f, "  %5.1f%%  %10s  %7lld x  mean %-10s max %-10s %s\n", 100 * a->share, NS(a->d.total_ns),
                    (long long)a->d.n, NS(a->d.mean_ns), NS(a->d.max_ns), a->name);
        }
    }
    if (r->n_copies) {
        fprintf(f, "\ncopies\n");
        for (size_t i = 0; i < r->n_copies; i++) {
            const gt_copy_row *c = &r->copies[i];
            fprintf(f, "  %-7s %6lld x  %10s  %10s  %7.2f GB/s  pageable %lld, pinned %lld\n", gt_copy_kind_name(c->copy_kind),
                    (long long)c->n, BY(c->bytes), NS(c->total_ns), c->gb_per_s, (long long)c->n_pageable,
                    (long long)c->n_pinned);
        }
    }

    print_memory(r, f);
    an_oom_print_text(r, f);

    size_t n_fired = 0;
    for (size_t i = 0; i < r->n_advice; i++)
        n_fired += r->advice[i].fired;
    fprintf(f, "\nadvice         %zu of %zu rules fired\n", n_fired, r->n_advice);
    for (size_t i = 0; i < r->n_advice; i++) {
        const gt_advice *a = &r->advice[i];
        if (!a->fired)
            continue;
        fprintf(f, "* %s [%s]\n    evidence: %s\n", a->title, a->rule, a->evidence);
        if (a->to_ns > a->from_ns)
            fprintf(f, "    where: +%.3f ms .. +%.3f ms\n", rel_ms(r, a->from_ns), rel_ms(r, a->to_ns));
        fprintf(f, "    fix: %s\n    gain: %s", a->suggestion, a->gain);
        if (a->gain_ns > 0)
            fprintf(f, " (%s)", NS(a->gain_ns));
        fputc('\n', f);
    }
    return ferror(f) ? gt_error_set(GT_ERR_IO, "cannot write the report") : 0;
}

/* ---- JSON --------------------------------------------------------------- */

static void jnames(gt_json *j, const char *k, const gt_name_row *rows, size_t n)
{
    gt_json_key(j, k);
    gt_json_array(j);
    for (size_t i = 0; i < n; i++) {
        gt_json_object(j);
        gt_json_kv_str(j, "name", rows[i].name);
        gt_json_kv_num(j, "share", rows[i].share);
        an_json_dist(j, "time", &rows[i].d);
        gt_json_end(j);
    }
    gt_json_end(j);
}

static const jfield comm_fields[] = {
    JF(gt_comm, per_step, "per_step", J_BOOL), JM(gt_comm, comm_ns, GT_M_COMM, J_DBL),
    JF(gt_comm, compute_ns, "compute_ns", J_DBL), JF(gt_comm, overlap_ns, "overlap_ns", J_DBL),
    JM(gt_comm, exposed_ns, GT_M_EXPOSED, J_DBL), JM(gt_comm, collectives, GT_M_COLLECTIVES, J_DBL),
    JM(gt_comm, hidden, GT_M_HIDDEN, J_DBL), JF(gt_comm, most_exposed, "most_exposed", J_I64),
    JF(gt_comm, slowest, "slowest", J_I64), JF(gt_comm, collective_ops, "collective_ops", J_BOOL),
};
static const jfield comm_rank_fields[] = {
    JF(gt_comm_rank, pid, "pid", J_I64), JF(gt_comm_rank, rank, "rank", J_I32),
    JF(gt_comm_rank, device_id, "device_id", J_I32),
};
static const jfield comm_rank_figures[] = { /* after its source */
    JF(gt_comm_rank, name, "name", J_STR), JF(gt_comm_rank, own_steps, "own_steps", J_BOOL),
    JF(gt_comm_rank, span_ns, "span_ns", J_I64), JM(gt_comm_rank, comm_ns, GT_M_COMM, J_I64),
    JF(gt_comm_rank, compute_ns, "compute_ns", J_I64), JF(gt_comm_rank, overlap_ns, "overlap_ns", J_I64),
    JM(gt_comm_rank, exposed_ns, GT_M_EXPOSED, J_I64), JM(gt_comm_rank, n_collectives, GT_M_COLLECTIVES, J_I64),
    JF(gt_comm_rank, bytes, "bytes", J_I64), JF(gt_comm_rank, n_bytes_known, "bytes_known", J_I64),
    JM(gt_comm_rank, hidden, GT_M_HIDDEN, J_DBL), JF(gt_comm_rank, exposed_share, "exposed_share", J_DBL),
};
static const jfield comm_step_fields[] = {
    JF(gt_comm_step, number, "number", J_I64), JF(gt_comm_step, start_ns, "start_ns", J_I64),
    JF(gt_comm_step, end_ns, "end_ns", J_I64), JM(gt_comm_step, comm_ns, GT_M_COMM, J_I64),
    JF(gt_comm_step, compute_ns, "compute_ns", J_I64), JF(gt_comm_step, overlap_ns, "overlap_ns", J_I64),
    JM(gt_comm_step, exposed_ns, GT_M_EXPOSED, J_I64), JM(gt_comm_step, n_collectives, GT_M_COLLECTIVES, J_I64),
    JF(gt_comm_step, bytes, "bytes", J_I64), JF(gt_comm_step, n_bytes_known, "bytes_known", J_I64),
};
static const jfield comm_kind_fields[] = {
    JF(gt_comm_kind, name, "name", J_STR), JF(gt_comm_kind, n, "n", J_I64),
    JF(gt_comm_kind, total_ns, "total_ns", J_I64), JM(gt_comm_kind, exposed_ns, GT_M_EXPOSED, J_I64),
};

static void print_comm_json(const gt_comm *c, gt_json *j)
{
    gt_json_key(j, "communication");
    gt_json_object(j);
    JFIELDS(j, c, comm_fields);
    gt_json_key(j, "ranks");
    gt_json_array(j);
    for (size_t i = 0; i < c->n_ranks; i++) {
        const gt_comm_rank *k = &c->ranks[i];
        gt_json_object(j);
        JFIELDS(j, k, comm_rank_fields);
        gt_json_kv_str(j, "source", k->source == GT_COMM_NCCL ? "nccl" : "nvtx");
        JFIELDS(j, k, comm_rank_figures);
        gt_json_key(j, "steps");
        gt_json_array(j);
        for (size_t s = 0; s < k->n_steps; s++)
            json_element(j, &k->steps[s], comm_step_fields, sizeof comm_step_fields / sizeof comm_step_fields[0]);
        gt_json_end(j);
        gt_json_end(j);
    }
    gt_json_end(j);
    gt_json_kv_int(j, "collective_names", c->n_kind_names);
    gt_json_key(j, "collectives_by_name");
    gt_json_array(j);
    for (size_t i = 0; i < c->n_kinds; i++)
        json_element(j, &c->kinds[i], comm_kind_fields, sizeof comm_kind_fields / sizeof comm_kind_fields[0]);
    gt_json_end(j);
    gt_json_end(j);
}

/* The end of a JSON document: its newline, then the writer's verdict. */
static int json_finish(gt_json *j, const char *what)
{
    gt_json_ws(j, "\n");
    int rc = gt_json_finish(j);
    return rc ? gt_error_set(rc, "cannot write the %s", what) : 0;
}

static const jfield report_window[] = {
    JF(gt_report, start_ns, "start_ns", J_I64), JF(gt_report, end_ns, "end_ns", J_I64),
    JM(gt_report, wall_ns, GT_M_WALL, J_I64), JF(gt_report, n_refused, "refused_rows", J_I64),
    JF(gt_report, cpu_timeline, "cpu_timeline", J_BOOL),
};
static const jfield step_fields[] = {
    JF(gt_step, number, "number", J_I64), JF(gt_step, start_ns, "start_ns", J_I64),
    JF(gt_step, end_ns, "end_ns", J_I64), JF(gt_step, busy_ns, "busy_ns", J_I64),
    JF(gt_step, n_dev_allocs, "device_allocs", J_I64), JF(gt_step, n_dev_frees, "device_frees", J_I64),
    JF(gt_step, n_block_allocs, "block_allocs", J_I64), JF(gt_step, n_block_frees, "block_frees", J_I64),
    JM(gt_step, allocated_end_bytes, GT_M_ALLOC_END, J_I64),
};
static const jfield device_fields[] = {
    JF(gt_device_util, device_id, "device_id", J_I32), JF(gt_device_util, busy_ns, "busy_ns", J_I64),
    JF(gt_device_util, kernel_ns, "kernel_ns", J_I64), JF(gt_device_util, span_ns, "span_ns", J_I64),
    JM(gt_device_util, utilization, GT_M_UTILIZATION, J_DBL),
};
static const jfield gaps_fields[] = {
    JF(gt_gaps, n_gaps, "n", J_I64), JM(gt_gaps, idle_ns, GT_M_IDLE, J_I64), JF(gt_gaps, n_long, "n_long", J_I64),
    JF(gt_gaps, long_ns, "long_ns", J_I64), JF(gt_gaps, loader_idle_ns, "loader_idle_ns", J_I64),
};
static const jfield gap_fields[] = {
    JF(gt_gap, device_id, "device_id", J_I32), JF(gt_gap, start_ns, "start_ns", J_I64),
    JF(gt_gap, end_ns, "end_ns", J_I64),
};
static const jfield gap_host_fields[] = { /* after its cause */
    JF(gt_gap, nvtx, "nvtx", J_STR), JF(gt_gap, nvtx_path, "nvtx_path", J_STR), JF(gt_gap, api, "api", J_STR),
    JF(gt_gap, api_overlap_ns, "api_overlap_ns", J_I64),
};
static const jfield activity_fields[] = {
    JF(gt_gap_activity, nvtx, "nvtx", J_STR), JF(gt_gap_activity, api, "api", J_STR),
    JF(gt_gap_activity, n_gaps, "n_gaps", J_I64), JM(gt_gap_activity, total_ns, GT_M_IDLE, J_I64),
};
static const jfield copy_fields[] = { /* after its kind */
    JF(gt_copy_row, n, "n", J_I64), JF(gt_copy_row, bytes, "bytes", J_I64),
    JF(gt_copy_row, total_ns, "total_ns", J_I64), JM(gt_copy_row, gb_per_s, GT_M_BANDWIDTH, J_DBL),
    JM(gt_copy_row, n_pageable, GT_M_PAGEABLE, J_I64), JF(gt_copy_row, pageable_bytes, "pageable_bytes", J_I64),
    JF(gt_copy_row, pageable_ns, "pageable_ns", J_I64), JF(gt_copy_row, n_pinned, "n_pinned", J_I64),
    JF(gt_copy_row, pinned_bytes, "pinned_bytes", J_I64), JF(gt_copy_row, pinned_ns, "pinned_ns", J_I64),
};
static const jfield advice_fields[] = {
    JF(gt_advice, rule, "rule", J_STR), JF(gt_advice, title, "title", J_STR),
    JM(gt_advice, fired, GT_M_ADVICE_FIRED, J_BOOL), JF(gt_advice, threshold, "threshold", J_STR),
    JF(gt_advice, evidence, "evidence", J_STR), JF(gt_advice, suggestion, "suggestion", J_STR),
    JF(gt_advice, gain, "gain", J_STR), JF(gt_advice, gain_ns, "gain_ns", J_I64),
    JF(gt_advice, from_ns, "from_ns", J_I64), JF(gt_advice, to_ns, "to_ns", J_I64),
};
#define JELEMENTS(j, key, v, n, table)                                                                              \
    do {                                                                                                           \
        gt_json_key((j), (key));                                                                                   \
        gt_json_array(j);                                                                                          \
        for (size_t i_ = 0; i_ < (n); i_++)                                                                        \
            json_element((j), &(v)[i_], (table), sizeof(table) / sizeof(table)[0]);                                \
        gt_json_end(j);                                                                                            \
    } while (0)

static void print_gaps_json(const gt_gaps *g, gt_json *j)
{
    gt_json_key(j, "gaps");
    gt_json_object(j);
    JFIELDS(j, g, gaps_fields);
    gt_json_key(j, "by_cause");
    gt_json_object(j);
    for (int c = 0; c < GT_GAP_N_CAUSES; c++) {
        gt_json_key(j, gt_gap_cause_name((gt_gap_cause)c));
        gt_json_object(j);
        gt_json_kv_int(j, "n", g->n_by_cause[c]);
        gt_json_kv_int(j, gt_metric_key(GT_M_IDLE_CAUSE), g->idle_by_cause_ns[c]);
        gt_json_end(j);
    }
    gt_json_end(j);
    gt_json_key(j, "longest");
    gt_json_array(j);
    for (size_t i = 0; i < g->n_longest; i++) {
        const gt_gap *x = &g->longest[i];
        gt_json_object(j);
        JFIELDS(j, x, gap_fields);
        gt_json_kv_str(j, "cause", gt_gap_cause_name(x->cause));
        JFIELDS(j, x, gap_host_fields);
        gt_json_end(j);
    }
    gt_json_end(j);
    JELEMENTS(j, "host_activity", g->activity, g->n_activity, activity_fields);
    gt_json_end(j);
}

int gt_report_print_json(const gt_report *r, FILE *f)
{
    gt_json jw, *j = &jw;
    gt_json_init(j, f);
    gt_json_object(j);
    gt_json_kv_str(j, "path", r->path);
    gt_json_kv_str(j, "origin", r->origin == GT_ORIGIN_NSYS ? "nsys" : "gtrace");
    JFIELDS(j, r, report_window);
    gt_json_kv_str(j, "steps_note", r->steps_note ? r->steps_note : "");
    gt_json_key(j, "events");
    gt_json_object(j);
    for (int k = 0; k < GT_EV_N_KINDS; k++)
        gt_json_kv_int(j, gt_event_kind_name((gt_event_kind)k), r->n_events[k]);
    gt_json_end(j);
    JELEMENTS(j, "steps", r->steps, r->n_steps, step_fields);
    an_json_dist(j, gt_metric_key(GT_M_STEP_TIME), &r->step_time);
    JELEMENTS(j, "devices", r->devices, r->n_devices, device_fields);
    print_gaps_json(&r->gaps, j);
    gt_json_kv_int(j, "kernel_names", r->n_kernel_names);
    jnames(j, "kernels", r->kernels, r->n_kernels);
    jnames(j, "apis", r->apis, r->n_apis);
    an_pytorch_print_json(r, j);
    gt_json_key(j, "copies");
    gt_json_array(j);
    for (size_t i = 0; i < r->n_copies; i++) {
        const gt_copy_row *c = &r->copies[i];
        gt_json_object(j);
        gt_json_kv_str(j, "kind", gt_copy_kind_name(c->copy_kind));
        JFIELDS(j, c, copy_fields);
        gt_json_end(j);
    }
    gt_json_end(j);
    gt_json_key(j, "memory");
    print_memory_json(r, j);
    an_oom_print_json(r, j);
    print_comm_json(&r->comm, j);
    an_rank_steps_print_json(r, j);
    JELEMENTS(j, "advice", r->advice, r->n_advice, advice_fields);
    gt_json_end(j);
    return json_finish(j, "report");
}

/* ---- allocator state ---------------------------------------------------- */

int gt_mem_state_print_text(const gt_mem_state *s, FILE *f)
{
    char nb[8][40];
    int nbi = 0;
    fprintf(f, "allocator state at %lld ns", (long long)s->at_ns);
    if (s->step >= 0)
        fprintf(f, " (step %lld, its peak)", (long long)s->step);
    fprintf(f, ": allocated %s, reserved %s, %zu segments, %zu blocks\n", BY(s->allocated_bytes), BY(s->reserved_bytes),
            s->n_segments, s->n_blocks);
    for (size_t i = 0; i < s->n_segments; i++) {
        const gt_mem_segment *g = &s->segments[i];
        fprintf(f, "segment 0x%llx  %s  %s used in %zu blocks%s\n", (unsigned long long)g->address, BY(g->bytes),
                BY(g->allocated_bytes), g->n_blocks, g->from_heap ? "" : " (device allocation)");
        for (size_t b = g->first_block; b < g->first_block + g->n_blocks; b++) {
            const gt_mem_block *k = &s->blocks[b];
            fprintf(f, "  block 0x%llx  %10s  at %lld ns  by %s\n", (unsigned long long)k->address, BY(k->bytes),
                    (long long)k->alloc_ns, *k->origin ? k->origin : "(no range)");
        }
    }
    for (size_t b = s->n_blocks - s->n_unplaced; b < s->n_blocks; b++) {
        const gt_mem_block *k = &s->blocks[b];
        fprintf(f, "block outside known segments 0x%llx  %s  at %lld ns  by %s\n", (unsigned long long)k->address,
                BY(k->bytes), (long long)k->alloc_ns, *k->origin ? k->origin : "(no range)");
    }
    return ferror(f) ? gt_error_set(GT_ERR_IO, "cannot write the memory state") : 0;
}

int gt_mem_states_print_text(const gt_mem_states *s, FILE *f)
{
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        bool per_device = (i > 0 && s->v[i - 1]->pid == s->v[i]->pid) ||
                          (i + 1 < s->n && s->v[i + 1]->pid == s->v[i]->pid);
        if (s->n > 1 && per_device && s->v[i]->device_id >= 0)
            fprintf(f, "%sprocess %lld, cuda:%d: ", i ? "\n" : "", (long long)s->v[i]->pid, s->v[i]->device_id);
        else if (s->n > 1)
            fprintf(f, "%sprocess %lld: ", i ? "\n" : "", (long long)s->v[i]->pid);
        rc = gt_mem_state_print_text(s->v[i], f);
    }
    return rc;
}

static void print_state_json(const gt_mem_state *s, gt_json *j)
{
    gt_json_object(j);
    gt_json_kv_int(j, "pid", s->pid);
    gt_json_kv_int(j, "device_id", s->device_id);
    gt_json_kv_int(j, "at_ns", s->at_ns);
    gt_json_kv_int(j, "step", s->step);
    gt_json_kv_int(j, "allocated_bytes", s->allocated_bytes);
    gt_json_kv_int(j, "reserved_bytes", s->reserved_bytes);
    gt_json_key(j, "segments");
    gt_json_array(j);
    for (size_t i = 0; i < s->n_segments; i++) {
        const gt_mem_segment *g = &s->segments[i];
        gt_json_object(j);
        gt_json_kv_int(j, "address", (int64_t)g->address);
        gt_json_kv_int(j, "bytes", g->bytes);
        gt_json_kv_int(j, "alloc_ns", g->alloc_ns);
        gt_json_kv_int(j, "allocated_bytes", g->allocated_bytes);
        gt_json_kv_bool(j, "from_heap", g->from_heap);
        gt_json_key(j, "blocks");
        gt_json_array(j);
        for (size_t b = g->first_block; b < g->first_block + g->n_blocks; b++) {
            const gt_mem_block *k = &s->blocks[b];
            gt_json_object(j);
            gt_json_kv_int(j, "address", (int64_t)k->address);
            gt_json_kv_int(j, "bytes", k->bytes);
            gt_json_kv_int(j, "alloc_ns", k->alloc_ns);
            gt_json_kv_int(j, "tid", gt_tid_of(k->global_tid));
            gt_json_kv_str(j, "origin", k->origin);
            gt_json_end(j);
        }
        gt_json_end(j);
        gt_json_end(j);
    }
    gt_json_end(j);
    gt_json_key(j, "unplaced_blocks");
    gt_json_array(j);
    for (size_t b = s->n_blocks - s->n_unplaced; b < s->n_blocks; b++) {
        const gt_mem_block *k = &s->blocks[b];
        gt_json_object(j);
        gt_json_kv_int(j, "address", (int64_t)k->address);
        gt_json_kv_int(j, "bytes", k->bytes);
        gt_json_kv_int(j, "alloc_ns", k->alloc_ns);
        gt_json_kv_str(j, "origin", k->origin);
        gt_json_end(j);
    }
    gt_json_end(j);
    gt_json_end(j);
}

int gt_mem_state_print_json(const gt_mem_state *s, FILE *f)
{
    gt_json j;
    gt_json_init(&j, f);
    print_state_json(s, &j);
    return json_finish(&j, "memory state");
}

int gt_mem_states_print_json(const gt_mem_states *s, FILE *f)
{
    gt_json j;
    gt_json_init(&j, f);
    gt_json_object(&j);
    gt_json_key(&j, "processes");
    gt_json_array(&j);
    for (size_t i = 0; i < s->n; i++)
        print_state_json(s->v[i], &j);
    gt_json_end(&j);
    gt_json_end(&j);
    return json_finish(&j, "memory state");
}
