/* memory_at.c: the allocator of one process at one moment, for callers
 * that hold only the model (the OOM post-mortem, the memviz export): its
 * history made (memory.c) and replayed (memory_state.c). */
#include "analyze_int.h"

/* The allocator of process pid (-1: the first with allocation events) at
 * at_ns, its history replayed from the model. */
int an_memory_state(gt_mem_state **out, const an_model *m, int64_t pid, int64_t at_ns)
{
    an_mem_hist *v = NULL;
    size_t n = 0, k;
    int rc;
    *out = NULL;
    if ((rc = an_memory_hists(&v, &n, m)) == 0 &&
        (rc = an_mem_hist_find(&k, v, n, pid, m->t ? gt_trace_path(m->t) : "trace")) == 0)
        rc = an_mem_hist_state(out, m, &v[k], at_ns);
    an_mem_hists_free(v, n);
    return rc;
}
