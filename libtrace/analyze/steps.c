/* steps.c: finds training steps among NVTX ranges: the reference trainer's
 * "step N", and the names other programs use ("iteration 3", "train_step",
 * "Step#4"). Only the outermost step ranges count, on the thread that has
 * the most of them. It measures nothing inside the steps. */
#include "analyze_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool an_is_step_name(const char *s, int64_t *out_number)
{
    static const char *prefixes[] = {"train_step", "training_step", "train step", "step", "iteration", "iter"};
    size_t plen = 0;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t n = strlen(prefixes[i]);
        if (strncasecmp(s, prefixes[i], n) == 0) {
            plen = n;
            break;
        }
    }
    if (plen == 0)
        return false;
    /* "stepper" or "iterator" are not steps: after the word comes an end,
     * a separator or a digit. */
    const char *p = s + plen;
    if (*p && !isdigit((unsigned char)*p) && !strchr(" _#:=-.[(", *p))
        return false;
    *out_number = -1;
    while (*p && !isdigit((unsigned char)*p))
        p++;
    if (*p)
        *out_number = strtoll(p, NULL, 10);
    return true;
}

static int cmp_step(const void *a, const void *b)
{
    const gt_step *x = a, *y = b;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

int an_steps_find(an_steps *out, const an_model *m)
{
    out->v = NULL;
    out->n = 0;
    /* Pass 1: the thread with most outermost step ranges. */
    int64_t best_tid = 0;
    size_t best_n = 0, cur_n = 0;
    for (size_t i = 0; i < m->n_ranges; i++) {
        const an_range *r = &m->ranges[i];
        if (i > 0 && m->ranges[i - 1].tid != r->tid)
            cur_n = 0;
        int64_t num;
        if (!an_is_step_name(an_str(m, r->text), &num))
            continue;
        bool nested = false;
        for (int64_t p = r->parent; p >= 0 && !nested; p = m->ranges[p].parent)
            nested = an_is_step_name(an_str(m, m->ranges[p].text), &num);
        if (nested)
            continue;
        if (++cur_n > best_n) {
            best_n = cur_n;
            best_tid = r->tid;
        }
    }
    if (best_n == 0)
        return 0;
    gt_step *v = calloc(best_n, sizeof *v);
    if (!v)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory finding steps");
    size_t n = 0;
    for (size_t i = 0; i < m->n_ranges && n < best_n; i++) {
        const an_range *r = &m->ranges[i];
        int64_t num, pn;
        if (r->tid != best_tid || !an_is_step_name(an_str(m, r->text), &num))
            continue;
        bool nested = false;
        for (int64_t p = r->parent; p >= 0 && !nested; p = m->ranges[p].parent)
            nested = an_is_step_name(an_str(m, m->ranges[p].text), &pn);
        if (nested)
            continue;
        v[n].number = num;
        v[n].start_ns = r->start_ns;
        v[n].end_ns = r->end_ns;
        n++;
    }
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_step);
    /* Names without numbers are numbered by order, from 0 like the trainer. */
    for (size_t i = 0; i < n; i++)
        if (v[i].number < 0)
            v[i].number = (int64_t)i;
    out->v = v;
    out->n = n;
    return 0;
}
