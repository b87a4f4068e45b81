/* advice_int.h: what the advice's files share: the rule context and the
 * calls that add a verdict (advice_add.c, under both advice.c and
 * advice_memory.c). Private to the advice. */
#ifndef ADVICE_INT_H
#define ADVICE_INT_H

#include "analyze_int.h"

/* API name id -> class, cached: traces repeat a few names millions of times. */
typedef struct api_cache {
    gt_string_id keys[4096];
    int8_t cls[4096];
    bool used[4096];
} api_cache;

/* The context of one report's rules. */
typedef struct rules {
    gt_report *r;
    const an_model *m;
    api_cache cache;
    size_t cap; /* r->advice's room */
} rules;

/* Adds a rule's verdict, its evidence formatted; evidence_fmt NULL: the rule
 * is silent. Returns 0 or GT_ERR_NOMEM. */
int an_advice_add(rules *R, const char *rule, const char *title, const char *threshold, const char *suggestion,
                  int64_t gain_ns, int64_t from_ns, int64_t to_ns, const char *gain, const char *evidence_fmt, ...)
    __attribute__((format(printf, 10, 11)));

/* The same with the evidence already written; evidence NULL: silent. */
int an_advice_add_text(rules *R, const char *rule, const char *title, const char *threshold, const char *suggestion,
                       int64_t gain_ns, int64_t from_ns, int64_t to_ns, const char *gain, const char *evidence);

/* Allocator segments reserved and released (heap register and unregister)
 * per step, the first step left out (it fills the cache); 0 with under two
 * steps. *out_n: those events in all. */
double an_seg_churn_per_step(const gt_report *r, const an_model *m, int64_t *out_n);

/* memory_spike and memory_fragmentation (advice_memory.c). */
int an_rules_memory_shape(rules *R, const gt_report *r, const an_model *m);

#endif
