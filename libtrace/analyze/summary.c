/* summary.c: the measured part of a report: device utilization, step times,
 * top kernels (or CPU ops), the CUDA API summary and copies with bandwidth,
 * pageable versus pinned. Idle gaps, memory and advice live in their own
 * files; this one judges nothing. */
#include "analyze_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct group {
    gt_string_id key;
    int64_t n, total_ns;
    int64_t slot; /* index among the top groups; -1 */
} group;

static int cmp_group_total(const void *a, const void *b)
{
    const group *x = *(const group *const *)a, *y = *(const group *const *)b;
    if (x->total_ns != y->total_ns)
        return x->total_ns < y->total_ns ? 1 : -1;
    return (x->key > y->key) - (x->key < y->key);
}

/* Groups n (key, duration) pairs by key in one hash pass, keeps the top_n by
 * total time and only for those collects durations for percentiles, so a
 * trace of millions of kernels is not sorted whole. */
static int top_by_name(gt_name_row **out, size_t *out_n, int64_t *out_n_names, const an_model *m,
                       const gt_string_id *keys, const int64_t *durs, size_t n, size_t top_n, bool api)
{
    size_t cap = 64, n_groups = 0;
    while (cap < n / 4 + 64)
        cap *= 2;
    int rc = 0;
    int64_t *slots = NULL; /* hash slot -> group index + 1 */
    group *groups = NULL, **order = NULL;
    int64_t *buf = NULL, *fill = NULL, *off = NULL;
    size_t *member = NULL;
    gt_name_row *rows = NULL;
    size_t n_rows = 0;

    *out = NULL;
    *out_n = 0;
    *out_n_names = 0;
    slots = calloc(cap, sizeof *slots);
    groups = malloc(cap / 2 * sizeof *groups);
    member = malloc((n ? n : 1) * sizeof *member);
    if (!slots || !groups || !member)
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        size_t h = ((uint64_t)keys[i] * 0x9e3779b97f4a7c15ULL >> 16) & (cap - 1);
        while (slots[h] && groups[slots[h] - 1].key != keys[i])
            h = (h + 1) & (cap - 1);
        if (!slots[h]) {
            if (n_groups + 1 > cap / 2) {
                /* grow and rehash */
                size_t ncap = cap * 2;
                int64_t *ns = calloc(ncap, sizeof *ns);
                group *ng = realloc(groups, ncap / 2 * sizeof *groups);
                if (!ns || !ng) {
                    free(ns);
                    if (ng)
                        groups = ng;
                    goto nomem;
                }
                groups = ng;
                for (size_t g = 0; g < n_groups; g++) {
                    size_t hh = ((uint64_t)groups[g].key * 0x9e3779b97f4a7c15ULL >> 16) & (ncap - 1);
                    while (ns[hh])
                        hh = (hh + 1) & (ncap - 1);
                    ns[hh] = (int64_t)g + 1;
                }
                free(slots);
                slots = ns;
                cap = ncap;
                i--; /* redo this key against the new table */
                continue;
            }
            groups[n_groups] = (group){keys[i], 0, 0, -1};
            slots[h] = (int64_t)++n_groups;
        }
        group *g = &groups[slots[h] - 1];
        g->n++;
        g->total_ns = gt_sat_add(g->total_ns, durs[i]);
        member[i] = (size_t)(slots[h] - 1);
    }
    *out_n_names = (int64_t)n_groups;
    if (n_groups == 0)
        goto cleanup;

    order = malloc(n_groups * sizeof *order);
    if (!order)
        goto nomem;
    for (size_t g = 0; g < n_groups; g++)
        order[g] = &groups[g];
    qsort(order, n_groups, sizeof *order, cmp_group_total);
    n_rows = n_groups < top_n ? n_groups : top_n;
    int64_t all_ns = 0, n_member = 0;
    for (size_t g = 0; g < n_groups; g++)
        all_ns = gt_sat_add(all_ns, groups[g].total_ns);
    off = malloc((n_rows + 1) * sizeof *off);
    fill = calloc(n_rows, sizeof *fill);
    if (!off || !fill)
        goto nomem;
    off[0] = 0;
    for (size_t k = 0; k < n_rows; k++) {
        order[k]->slot = (int64_t)k;
        off[k + 1] = off[k] + order[k]->n;
    }
    n_member = off[n_rows];
    buf = malloc(((size_t)n_member + 1) * sizeof *buf);
    rows = calloc(n_rows, sizeof *rows);
    if (!buf || !rows)
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        int64_t s = groups[member[i]].slot;
        if (s >= 0)
            buf[off[s] + fill[s]++] = durs[i];
    }
    for (size_t k = 0; k < n_rows; k++) {
        char base[512];
        const char *name = an_str(m, order[k]->key);
        rows[k].name = an_strdup(api ? gt_api_base_name(name, base, sizeof base) : name);
        if (!rows[k].name)
            goto nomem;
        an_dist(&rows[k].d, buf + off[k], (size_t)order[k]->n);
        rows[k].share = all_ns > 0 ? (double)order[k]->total_ns / (double)all_ns : 0;
    }
    *out = rows;
    *out_n = n_rows;
    rows = NULL;
    goto cleanup;
nomem:
    rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory summarising names");
cleanup:
    if (rows)
        for (size_t k = 0; k < n_rows; k++)
            free(rows[k].name);
    free(rows);
    free(slots);
    free(groups);
    free(order);
    free(buf);
    free(fill);
    free(off);
    free(member);
    return rc;
}

size_t an_devices(int32_t ids[AN_MAX_DEVICES], const an_model *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n_acts; i++) {
        size_t k = 0;
        while (k < n && ids[k] != m->acts[i].device)
            k++;
        if (k == n && n < AN_MAX_DEVICES)
            ids[n++] = m->acts[i].device;
    }
    return n;
}

/* Every device of the trace, each measured in the window: a window read
 * has the device list of the whole trace kept for it. */
static int devices(gt_report *r, const an_model *m)
{
    int32_t ids[AN_MAX_DEVICES];
    size_t n = m->windowed ? m->whole.n_devices : an_devices(ids, m);
    if (m->windowed)
        memcpy(ids, m->whole.devices, n * sizeof *ids);
    if (n == 0)
        return 0;
    r->devices = calloc(n, sizeof *r->devices);
    if (!r->devices)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    r->n_devices = n;
    for (size_t k = 0; k < n; k++) {
        gt_device_util *d = &r->devices[k];
        d->device_id = ids[k];
        d->span_ns = r->end_ns - r->start_ns;
        d->busy_ns = an_busy(m, ids[k], false, r->start_ns, r->end_ns);
        d->kernel_ns = an_busy(m, ids[k], true, r->start_ns, r->end_ns);
        d->utilization = d->span_ns > 0 ? (double)d->busy_ns / (double)d->span_ns : 0;
    }
    return 0;
}

static int kernels_and_apis(gt_report *r, const an_model *m, size_t top_n)
{
    size_t n = m->n_acts > m->n_apis ? m->n_acts : m->n_apis;
    gt_string_id *keys = malloc((n ? n : 1) * sizeof *keys);
    int64_t *durs = malloc((n ? n : 1) * sizeof *durs);
    int rc = 0;
    if (!keys || !durs) {
        rc = gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        goto cleanup;
    }
    size_t k = 0;
    for (size_t i = an_first_act(m, r->start_ns); i < m->n_acts && m->acts[i].start_ns < r->end_ns; i++) {
        const an_act *a = &m->acts[i];
        if ((a->kind != GT_EV_KERNEL && a->kind != GT_EV_CPU_OP) || a->start_ns < r->start_ns)
            continue;
        keys[k] = a->name;
        durs[k++] = a->end_ns - a->start_ns;
    }
    if ((rc = top_by_name(&r->kernels, &r->n_kernels, &r->n_kernel_names, m, keys, durs, k, top_n, false)) < 0)
        goto cleanup;
    k = 0;
    for (size_t i = 0; i < m->n_apis; i++) {
        const an_api *a = &m->apis[i];
        if (a->start_ns < r->start_ns || a->start_ns >= r->end_ns)
            continue;
        keys[k] = a->name;
        durs[k++] = a->end_ns - a->start_ns;
    }
    int64_t n_api_names;
    rc = top_by_name(&r->apis, &r->n_apis, &n_api_names, m, keys, durs, k, top_n, true);
cleanup:
    free(keys);
    free(durs);
    return rc;
}

static int copies(gt_report *r, const an_model *m)
{
    gt_copy_row rows[GT_COPY_PTOP + 2];
    memset(rows, 0, sizeof rows);
    for (size_t i = 0; i < m->n_copies; i++) {
        const an_copy *c = &m->copies[i];
        if (c->start_ns < r->start_ns || c->start_ns >= r->end_ns)
            continue;
        int idx = c->copy_kind < 0 ? 0 : c->copy_kind <= GT_COPY_PTOP ? c->copy_kind + 1 : 1;
        gt_copy_row *row = &rows[idx];
        int64_t d = c->end_ns - c->start_ns;
        row->copy_kind = c->copy_kind < 0 ? -1 : idx - 1;
        row->n++;
        /* sums of many rows saturate (a damaged trace's sizes may add past INT64_MAX) */
        row->bytes = gt_sat_add(row->bytes, c->bytes);
        row->total_ns = gt_sat_add(row->total_ns, d);
        if (c->src_kind == GT_MEM_PAGEABLE || c->dst_kind == GT_MEM_PAGEABLE) {
            row->n_pageable++;
            row->pageable_bytes = gt_sat_add(row->pageable_bytes, c->bytes);
            row->pageable_ns = gt_sat_add(row->pageable_ns, d);
        } else if (c->src_kind == GT_MEM_PINNED || c->dst_kind == GT_MEM_PINNED) {
            row->n_pinned++;
            row->pinned_bytes = gt_sat_add(row->pinned_bytes, c->bytes);
            row->pinned_ns = gt_sat_add(row->pinned_ns, d);
        }
    }
    size_t n = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        n += rows[i].n > 0;
    if (n == 0)
        return 0;
    r->copies = calloc(n, sizeof *r->copies);
    if (!r->copies)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    /* Copies first (by direction), memset last. */
    for (size_t i = 1; i <= sizeof rows / sizeof rows[0]; i++) {
        gt_copy_row *row = &rows[i % (sizeof rows / sizeof rows[0])];
        if (row->n == 0)
            continue;
        row->gb_per_s = row->total_ns > 0 ? (double)row->bytes / (double)row->total_ns : 0;
        r->copies[r->n_copies++] = *row;
    }
    return 0;
}

int an_summary(gt_report *r, const an_model *m, const gt_report_options *opt)
{
    int rc;
    size_t top_n = opt && opt->top_n > 0 ? (size_t)opt->top_n : 10;
    r->cpu_timeline = m->cpu_timeline;
    if ((rc = devices(r, m)) < 0 || (rc = kernels_and_apis(r, m, top_n)) < 0 || (rc = copies(r, m)) < 0)
        return rc;
    /* Step times and per-step busy time. */
    if (r->n_steps > 0) {
        int64_t *d = malloc(r->n_steps * sizeof *d);
        if (!d)
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        for (size_t i = 0; i < r->n_steps; i++) {
            gt_step *s = &r->steps[i];
            d[i] = s->end_ns - s->start_ns;
            s->busy_ns = an_busy(m, AN_ANY_DEVICE, false, s->start_ns, s->end_ns);
        }
        an_dist(&r->step_time, d, r->n_steps);
        free(d);
    }
    return 0;
}
