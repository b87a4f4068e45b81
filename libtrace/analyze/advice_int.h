/* advice_int.h: what advice.c shares with the rules in advice_memory.c: the
 * rule context and the call that adds a verdict. Private to the advice. */
#ifndef ADVICE_INT_H
#define ADVICE_INT_H

#include "analyze_int.h"

typedef struct rules rules; /* advice.c's context of one report's rules */

/* Adds a rule's verdict with its evidence already written; evidence NULL:
 * the rule is silent. Returns 0 or GT_ERR_NOMEM. */
int an_advice_add_text(rules *R, const char *rule, const char *title, const char *threshold, const char *suggestion,
                       int64_t gain_ns, int64_t from_ns, int64_t to_ns, const char *gain, const char *evidence);

/* Allocator segments reserved and released (heap register and unregister)
 * per step, the first step left out (it fills the cache); 0 with under two
 * steps. *out_n: those events in all. */
double an_seg_churn_per_step(const gt_report *r, const an_model *m, int64_t *out_n);

/* memory_spike and memory_fragmentation (advice_memory.c). */
int an_rules_memory_shape(rules *R, const gt_report *r, const an_model *m);

#endif
