/* events.c: facts about event kinds that every reader and writer shares:
 * their names, the table each lives in, and their time span. */
#include "gt_store.h"

static const struct {
    const char *name;
    const char *table;
} kinds[GT_EV_N_KINDS] = {
    [GT_EV_KERNEL] = {"kernel", "CUPTI_ACTIVITY_KIND_KERNEL"},
    [GT_EV_MEMCPY] = {"memcpy", "CUPTI_ACTIVITY_KIND_MEMCPY"},
    [GT_EV_MEMSET] = {"memset", "CUPTI_ACTIVITY_KIND_MEMSET"},
    [GT_EV_API] = {"cuda_api", "CUPTI_ACTIVITY_KIND_RUNTIME"},
    [GT_EV_SYNC] = {"sync", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"},
    [GT_EV_NVTX] = {"nvtx", "NVTX_EVENTS"},
    [GT_EV_GPU_MEMORY] = {"gpu_memory", "CUDA_GPU_MEMORY_USAGE_EVENTS"},
    [GT_EV_HEAP] = {"heap", "GTRACE_MEMORY_EVENTS"},
    [GT_EV_CPU_OP] = {"cpu_op", "GTRACE_CPU_OPS"},
};

const char *gt_event_kind_name(gt_event_kind kind)
{
    return (unsigned)kind < GT_EV_N_KINDS ? kinds[kind].name : "unknown";
}

const char *gt_event_kind_table(gt_event_kind kind)
{
    return (unsigned)kind < GT_EV_N_KINDS ? kinds[kind].table : NULL;
}

int64_t gt_event_start(const gt_event *ev)
{
    switch (ev->kind) {
    case GT_EV_KERNEL: return ev->u.kernel.start_ns;
    case GT_EV_MEMCPY: return ev->u.memcpy.start_ns;
    case GT_EV_MEMSET: return ev->u.memset.start_ns;
    case GT_EV_API: return ev->u.api.start_ns;
    case GT_EV_SYNC: return ev->u.sync.start_ns;
    case GT_EV_NVTX: return ev->u.nvtx.start_ns;
    case GT_EV_GPU_MEMORY: return ev->u.gpu_memory.start_ns;
    case GT_EV_HEAP: return ev->u.heap.start_ns;
    case GT_EV_CPU_OP: return ev->u.cpu_op.start_ns;
    case GT_EV_N_KINDS: break;
    }
    return 0;
}

int64_t gt_event_end(const gt_event *ev)
{
    switch (ev->kind) {
    case GT_EV_KERNEL: return ev->u.kernel.end_ns;
    case GT_EV_MEMCPY: return ev->u.memcpy.end_ns;
    case GT_EV_MEMSET: return ev->u.memset.end_ns;
    case GT_EV_API: return ev->u.api.end_ns;
    case GT_EV_SYNC: return ev->u.sync.end_ns;
    case GT_EV_NVTX: return ev->u.nvtx.end_ns < 0 ? ev->u.nvtx.start_ns : ev->u.nvtx.end_ns;
    case GT_EV_CPU_OP: return ev->u.cpu_op.end_ns;
    case GT_EV_GPU_MEMORY:
    case GT_EV_HEAP:
    case GT_EV_N_KINDS: break;
    }
    return gt_event_start(ev);
}
