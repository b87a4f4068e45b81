/* steps.c: finds training steps among NVTX ranges: the reference trainer's
 * "step N", and the names other programs use ("iteration 3", "train_step",
 * "Step#4", PyTorch profiler's "ProfilerStep#4"). Only the outermost step ranges count, on the thread that has
 * the most of them (in the whole trace, or in one process: each rank of a
 * distributed job has its own). It measures nothing inside the steps. */
#include "analyze_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool an_is_step_name(const char *s, int64_t *out_number)
{
    static const char *prefixes[] = {"ProfilerStep", "train_step", "training_step", "train step", "step",
                                     "iteration", "iter"};
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

bool gt_is_step_name(const char *name)
{
    int64_t number;
    return name && an_is_step_name(name, &number);
}

/* an_is_step_name by string id, remembered: millions of ranges share a few
 * hundred names. Open addressing; a full or missing table just asks again. */
typedef struct name_cache {
    gt_string_id *keys; /* 0: empty slot (id 0 is no name, asked directly) */
    int64_t *numbers;   /* the step number; INT64_MIN: not a step */
    size_t cap, n;
} name_cache;

static bool is_step(name_cache *c, const an_model *m, gt_string_id id, int64_t *out_number)
{
    if (id == 0 || c->cap == 0 || c->n * 2 >= c->cap)
        return an_is_step_name(an_str(m, id), out_number);
    size_t h = ((uint64_t)id * 0x9e3779b97f4a7c15ULL >> 32) & (c->cap - 1);
    while (c->keys[h] != 0 && c->keys[h] != id)
        h = (h + 1) & (c->cap - 1);
    if (c->keys[h] == 0) {
        int64_t num;
        c->keys[h] = id;
        c->numbers[h] = an_is_step_name(an_str(m, id), &num) ? num : INT64_MIN;
        c->n++;
    }
    *out_number = c->numbers[h];
    return c->numbers[h] != INT64_MIN;
}

static int cmp_step(const void *a, const void *b)
{
    const gt_step *x = a, *y = b;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

int an_steps_find(an_steps *out, const an_model *m)
{
    return an_steps_find_pid(out, m, -1);
}

int an_steps_find_pid(an_steps *out, const an_model *m, int64_t pid)
{
    out->v = NULL;
    out->n = 0;
    name_cache c = {NULL, NULL, 64, 0};
    while (c.cap < 2 * m->n_ranges && c.cap < (1u << 16))
        c.cap *= 2;
    c.keys = calloc(c.cap, sizeof *c.keys);
    c.numbers = malloc(c.cap * sizeof *c.numbers);
    if (!c.keys || !c.numbers)
        c.cap = 0;
    /* Pass 1: the thread with most outermost step ranges. */
    int64_t best_tid = 0;
    size_t best_n = 0, cur_n = 0;
    for (size_t i = 0; i < m->n_ranges; i++) {
        const an_range *r = &m->ranges[i];
        if (i > 0 && m->ranges[i - 1].tid != r->tid)
            cur_n = 0;
        int64_t num;
        if ((pid >= 0 && gt_pid_of(r->tid) != pid) || !is_step(&c, m, r->text, &num))
            continue;
        bool nested = false;
        for (int64_t p = r->parent; p >= 0 && !nested; p = m->ranges[p].parent)
            nested = is_step(&c, m, m->ranges[p].text, &num);
        if (nested)
            continue;
        if (++cur_n > best_n) {
            best_n = cur_n;
            best_tid = r->tid;
        }
    }
    gt_step *v = best_n ? calloc(best_n, sizeof *v) : NULL;
    if (best_n == 0 || !v) {
        free(c.keys);
        free(c.numbers);
        return best_n == 0 ? 0 : gt_error_set(GT_ERR_NOMEM, "analyze: out of memory finding steps");
    }
    size_t n = 0;
    for (size_t i = 0; i < m->n_ranges && n < best_n; i++) {
        const an_range *r = &m->ranges[i];
        int64_t num, pn;
        if (r->tid != best_tid || !is_step(&c, m, r->text, &num))
            continue;
        bool nested = false;
        for (int64_t p = r->parent; p >= 0 && !nested; p = m->ranges[p].parent)
            nested = is_step(&c, m, m->ranges[p].text, &pn);
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
    free(c.keys);
    free(c.numbers);
    out->v = v;
    out->n = n;
    return 0;
}

int an_steps_selected(gt_step **out, size_t *out_n, const an_model *m, int64_t pid, const gt_report_options *opt)
{
    an_steps all = {0};
    int rc = an_steps_find_pid(&all, m, pid);
    *out = NULL;
    *out_n = 0;
    if (rc < 0)
        return rc;
    size_t n = 0;
    for (size_t i = 0; i < all.n; i++) {
        const gt_step *s = &all.v[i];
        if (opt && ((opt->step_first >= 0 && s->number < opt->step_first) ||
                    (opt->step_last >= 0 && s->number > opt->step_last)))
            continue;
        all.v[n++] = *s;
    }
    if (n == 0) {
        free(all.v);
        return 0;
    }
    *out = all.v;
    *out_n = n;
    return 0;
}
