/* advice_add.c: how a rule's verdict is added to the report (its
 * threshold, suggestion, evidence and gain copied), for the rules in
 * advice.c and advice_memory.c. No rule is here. */
#include "advice_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *vfmt(const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    char *p = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (p)
        vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

int an_advice_add(rules *R, const char *rule, const char *title, const char *threshold, const char *suggestion,
                  int64_t gain_ns, int64_t from_ns, int64_t to_ns, const char *gain, const char *evidence_fmt, ...)
{
    gt_report *r = R->r;
    if (r->n_advice == R->cap) {
        size_t ncap = R->cap ? R->cap * 2 : 16;
        gt_advice *na = realloc(r->advice, ncap * sizeof *na);
        if (!na)
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory writing advice");
        r->advice = na;
        R->cap = ncap;
    }
    gt_advice *a = &r->advice[r->n_advice];
    memset(a, 0, sizeof *a);
    a->rule = rule;
    a->title = title;
    a->fired = evidence_fmt != NULL;
    a->threshold = an_strdup(threshold);
    a->suggestion = an_strdup(suggestion);
    a->gain = an_strdup(a->fired && gain ? gain : "");
    if (a->fired) {
        va_list ap;
        va_start(ap, evidence_fmt);
        a->evidence = vfmt(evidence_fmt, ap);
        va_end(ap);
        a->gain_ns = gain_ns;
        a->from_ns = from_ns;
        a->to_ns = to_ns;
    } else {
        a->evidence = an_strdup("");
    }
    r->n_advice++;
    if (!a->threshold || !a->suggestion || !a->gain || !a->evidence)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory writing advice");
    return 0;
}

int an_advice_add_text(rules *R, const char *rule, const char *title, const char *threshold, const char *suggestion,
                       int64_t gain_ns, int64_t from_ns, int64_t to_ns, const char *gain, const char *evidence)
{
    if (!evidence)
        return an_advice_add(R, rule, title, threshold, suggestion, 0, 0, 0, NULL, NULL);
    return an_advice_add(R, rule, title, threshold, suggestion, gain_ns, from_ns, to_ns, gain, "%s", evidence);
}
