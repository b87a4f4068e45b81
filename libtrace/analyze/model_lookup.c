/* model_lookup.c: what the analyses ask the loaded model about a thread at
 * a time: the NVTX range it was in, the path of ranges to it, the origin of
 * an allocation. It loads nothing (model.c does) and computes no statistics. */
#include "analyze_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t an_model_range_at(const an_model *m, int64_t tid, int64_t t_ns)
{
    /* The last range of the thread starting at or before t; the innermost
     * range containing t is it or one of its ancestors (ranges nest). */
    size_t lo = 0, hi = m->n_ranges;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const an_range *r = &m->ranges[mid];
        if (r->tid < tid || (r->tid == tid && r->start_ns <= t_ns))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || m->ranges[lo - 1].tid != tid)
        return -1;
    int64_t i = (int64_t)lo - 1;
    while (i >= 0 && m->ranges[i].end_ns <= t_ns)
        i = m->ranges[i].parent;
    return i;
}

char *an_model_range_path(const an_model *m, int64_t i)
{
    const char *names[64];
    int n = 0;
    size_t len = 1;
    for (int64_t k = i; k >= 0 && n < 64; k = m->ranges[k].parent) {
        names[n] = an_str(m, m->ranges[k].text);
        len += strlen(names[n]) + 3;
        n++;
    }
    char *p = malloc(len);
    if (!p)
        return NULL;
    p[0] = '\0';
    for (int k = n - 1; k >= 0; k--) {
        strcat(p, names[k]);
        if (k > 0)
            strcat(p, " > ");
    }
    return p;
}

char *an_model_origin(const an_model *m, int64_t tid, int64_t t_ns, int64_t callchain)
{
    char *path = an_model_range_path(m, tid ? an_model_range_at(m, tid, t_ns) : -1);
    if (!path || callchain == 0 || !m->t)
        return path;
    const gt_frame *frames = NULL;
    size_t n = 0;
    if (gt_trace_callchain(m->t, callchain, &frames, &n) < 0 || n == 0)
        return path;
    /* The first frames name the caller best; three keep a line readable. */
    char stack[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && i < 3; i++) {
        const char *sym = an_str(m, frames[i].symbol);
        int w = snprintf(stack + used, sizeof stack - used, "%s%s", i ? " < " : "", *sym ? sym : "?");
        if (w < 0 || (size_t)w >= sizeof stack - used)
            break;
        used += (size_t)w;
    }
    char *o = an_printf("%s%s[%s]", path, *path ? " " : "", stack);
    free(path);
    return o;
}
