/* advice_memory.c: rules on the shape of the allocator's memory over the
 * steps, read from what memory.c measured (peaks, fragmentation, spikes)
 * and the allocator's segment events in the model: one temporary that sets
 * the peak (memory_spike) and a cache of segments no request fits
 * (memory_fragmentation); also the segment churn allocator_churn reads.
 * Each needs the instance again and again in the steps, so start-up
 * (loading, a first step filling the cache) never fires them alone. The
 * other rules are in advice.c. */
#include "advice_int.h"

#include <stdlib.h>
#include <string.h>

/* The step index holding t, from hint on (both ascend); n_steps: none. */
static size_t step_of(const gt_report *r, size_t *hint, int64_t t)
{
    while (*hint < r->n_steps && r->steps[*hint].end_ns <= t)
        (*hint)++;
    return *hint < r->n_steps && r->steps[*hint].start_ns <= t ? *hint : r->n_steps;
}

double an_seg_churn_per_step(const gt_report *r, const an_model *m, int64_t *out_n)
{
    int64_t n = 0;
    size_t si = 0;
    *out_n = 0;
    if (r->n_steps < 2)
        return 0;
    for (size_t i = 0; i < m->n_mem; i++) {
        const an_mem *e = &m->mem[i];
        if (e->op != AN_SEG_ALLOC && e->op != AN_SEG_FREE)
            continue;
        size_t s = step_of(r, &si, e->t_ns);
        n += s < r->n_steps && s > 0;
    }
    *out_n = n;
    return (double)n / (double)(r->n_steps - 1);
}

/* A temporary that sets the peak: a spike (a block of a tenth of the peak or
 * more that lived under half a median step, memory.c) of half the peak or
 * more, seen in 3 steps or more (in every step when there are fewer). */
static int rule_spike(rules *R, const gt_report *r)
{
    const gt_memory *mem = &r->memory;
    const char *rule = "memory_spike", *title = "A temporary sets the memory peak";
    const char *thr = "a block living under half a median step that is half the allocated peak or more, in 3 steps "
                      "or more";
    const char *sug = "Compute the temporary in chunks, or with a kernel that never materializes it (fused "
                      "attention: scaled_dot_product_attention; a fused or chunked loss), or free its inputs first: "
                      "the peak falls by most of its size.";
    int64_t peak = mem->peak_allocated_bytes;
    const gt_spike *top = NULL;
    int64_t seen[10];
    size_t n_seen = 0;
    for (size_t i = 0; i < mem->n_spikes && peak > 0; i++) {
        const gt_spike *s = &mem->spikes[i];
        if ((double)s->bytes * 2 < (double)peak || (mem->pid && s->pid != mem->pid))
            continue;
        if (!top)
            top = s;
        bool again = false;
        for (size_t k = 0; k < n_seen; k++)
            again |= seen[k] == s->step;
        if (!again && n_seen < sizeof seen / sizeof seen[0])
            seen[n_seen++] = s->step;
    }
    size_t need = r->n_steps < 3 ? (r->n_steps ? r->n_steps : 1) : 3;
    if (!top || n_seen < need)
        return an_advice_add_text(R, rule, title, thr, sug, 0, 0, 0, NULL, NULL);
    char b1[48], b2[48], t1[48];
    gt_fmt_bytes(b1, sizeof b1, (double)top->bytes);
    gt_fmt_bytes(b2, sizeof b2, (double)peak);
    gt_fmt_ns(t1, sizeof t1, (double)(top->end_ns - top->start_ns));
    char *ev = an_printf("a block of %s made in %s lived %s and is %.0f%% of the allocated peak (%s); such blocks "
                         "in %zu%s steps", b1, *top->origin ? top->origin : "(no NVTX range)", t1,
                         100.0 * (double)top->bytes / (double)peak, b2, n_seen,
                         n_seen == sizeof seen / sizeof seen[0] ? " or more" : "");
    if (!ev)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory writing advice");
    int rc = an_advice_add_text(R, rule, title, thr, sug, 0, top->start_ns, top->end_ns,
                                "a lower peak, by up to the temporary's size less one chunk; no step time", ev);
    free(ev);
    return rc;
}

/* Fragmentation that grows: half the reserved memory or more not allocated
 * at the allocated peak, and new segments reserved in 3 steps or more after
 * the first (a cache that keeps growing because nothing cached fits). */
static int rule_fragmentation(rules *R, const gt_report *r, const an_model *m)
{
    const gt_memory *mem = &r->memory;
    const char *rule = "memory_fragmentation", *title = "Fragmented allocator cache";
    const char *thr = "at the allocated peak, half the reserved memory or more not allocated, and new segments "
                      "reserved in 3 steps or more after the first";
    const char *sug = "Give the allocator shapes it can reuse: pad or bucket variable sizes (sequence lengths, "
                      "batch tails), or let segments grow in place (PYTORCH_CUDA_ALLOC_CONF="
                      "expandable_segments:True); empty_cache() only hands the cache back.";
    int64_t n_grew = 0, grew_bytes = 0, last = -1;
    size_t si = 0;
    for (size_t i = 0; i < m->n_mem && r->n_steps >= 2; i++) {
        const an_mem *e = &m->mem[i];
        if (e->op != AN_SEG_ALLOC || (mem->pid && gt_pid_of(e->tid) != mem->pid))
            continue;
        size_t s = step_of(r, &si, e->t_ns);
        if (s == r->n_steps || s == 0)
            continue;
        grew_bytes = gt_sat_add(grew_bytes, e->bytes);
        if ((int64_t)s != last)
            n_grew++, last = (int64_t)s;
    }
    if (mem->fragmentation < 0.5 || n_grew < 3)
        return an_advice_add_text(R, rule, title, thr, sug, 0, 0, 0, NULL, NULL);
    int64_t alloc = mem->peak_allocated_bytes;
    int64_t res = (int64_t)((double)alloc / (1 - mem->fragmentation) + 0.5); /* reserved at the allocated peak */
    char b1[48], b2[48], b3[48];
    gt_fmt_bytes(b1, sizeof b1, (double)alloc);
    gt_fmt_bytes(b2, sizeof b2, (double)res);
    gt_fmt_bytes(b3, sizeof b3, (double)grew_bytes);
    char *ev = an_printf("at the allocated peak (%s allocated) %s was reserved: %.1f%% cached but not allocated; "
                         "new segments were reserved in %lld of the %zu steps after the first (%s)",
                         b1, b2, 100 * mem->fragmentation, (long long)n_grew, r->n_steps - 1, b3);
    if (!ev)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory writing advice");
    int rc = an_advice_add_text(R, rule, title, thr, sug, 0, mem->peak_allocated_ns, mem->peak_allocated_ns,
                                "up to the cached but unallocated memory at the peak; no step time", ev);
    free(ev);
    return rc;
}

int an_rules_memory_shape(rules *R, const gt_report *r, const an_model *m)
{
    int rc = rule_spike(R, r);
    return rc < 0 ? rc : rule_fragmentation(R, r, m);
}
