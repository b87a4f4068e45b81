/* cupti_records.c: CUPTI activity records -> trace rows (see cupti_records.h).
 * Field by field, with CUPTI's enums renumbered to the ENUM_* tables nsys
 * writes (libtrace/store/schema.c). Knows nothing of rings or of CUPTI's
 * library: cupti.c calls these from its buffer callback.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_records.h"

int32_t gt_cupti_mem_kind(uint32_t cupti_kind)
{
    /* CUPTI: 0 unknown, 1 pageable, 2 pinned, 3 device, 4 array, 5 managed,
     * 6 device static, 7 managed static. nsys: the same minus one, unknown 7. */
    return cupti_kind >= CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE && cupti_kind <= CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC
               ? (int32_t)cupti_kind - 1
               : GT_MEM_UNKNOWN;
}

int32_t gt_cupti_launch_type(uint32_t cupti_launch_type)
{
    /* CUPTI: 0 regular, 1 cooperative single device, 2 cooperative multi
     * device, 3 command list. nsys: 0 unknown, then the first three plus one. */
    return cupti_launch_type <= CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE ? (int32_t)cupti_launch_type + 1
                                                                                   : 0;
}

static bool timed(uint64_t start, uint64_t end)
{
    return start != CUPTI_TIMESTAMP_UNKNOWN && end != CUPTI_TIMESTAMP_UNKNOWN && end >= start;
}

bool gt_cupti_kernel_row(gt_kernel *out, const CUpti_ActivityKernel10 *k, int64_t shift_ns, int64_t pid)
{
    memset(out, 0, sizeof *out);
    if (!timed(k->start, k->end))
        return false;
    out->start_ns = (int64_t)k->start + shift_ns;
    out->end_ns = (int64_t)k->end + shift_ns;
    out->global_pid = gt_global_pid(pid);
    out->device_id = (int32_t)k->deviceId;
    out->context_id = (int32_t)k->contextId;
    out->stream_id = (int32_t)k->streamId;
    out->correlation_id = k->correlationId;
    out->grid_x = k->gridX;
    out->grid_y = k->gridY;
    out->grid_z = k->gridZ;
    out->block_x = k->blockX;
    out->block_y = k->blockY;
    out->block_z = k->blockZ;
    out->registers_per_thread = k->registersPerThread;
    out->static_shared_bytes = k->staticSharedMemory;
    out->dynamic_shared_bytes = k->dynamicSharedMemory;
    out->local_per_thread_bytes = (int32_t)k->localMemoryPerThread;
    out->local_total_bytes = (int64_t)k->localMemoryTotal_v2;
    out->grid_id = k->gridId;
    out->launch_type = gt_cupti_launch_type(k->launchType);
    out->cache_config = k->cacheConfig.config.executed; /* CUfunc_cache, as ENUM_CUDA_FUNC_CACHE_CONFIG */
    out->shared_limit_config = (int32_t)k->shmemLimitConfig; /* as ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG */
    out->graph_node_id = (int64_t)k->graphNodeId;
    return true;
}

bool gt_cupti_memcpy_row(gt_memcpy *out, const CUpti_ActivityMemcpy6 *m, int64_t shift_ns, int64_t pid)
{
    memset(out, 0, sizeof *out);
    if (!timed(m->start, m->end))
        return false;
    out->start_ns = (int64_t)m->start + shift_ns;
    out->end_ns = (int64_t)m->end + shift_ns;
    out->global_pid = gt_global_pid(pid);
    out->device_id = (int32_t)m->deviceId;
    out->context_id = (int32_t)m->contextId;
    out->stream_id = (int32_t)m->streamId;
    out->correlation_id = m->correlationId;
    out->bytes = (int64_t)m->bytes;
    out->copy_kind = m->copyKind; /* CUpti_ActivityMemcpyKind numbers as ENUM_CUDA_MEMCPY_OPER */
    out->src_kind = gt_cupti_mem_kind(m->srcKind);
    out->dst_kind = gt_cupti_mem_kind(m->dstKind);
    out->src_device_id = (int32_t)m->deviceId;
    out->dst_device_id = (int32_t)m->deviceId;
    return true;
}

bool gt_cupti_memset_row(gt_memset *out, const CUpti_ActivityMemset4 *m, int64_t shift_ns, int64_t pid)
{
    memset(out, 0, sizeof *out);
    if (!timed(m->start, m->end))
        return false;
    out->start_ns = (int64_t)m->start + shift_ns;
    out->end_ns = (int64_t)m->end + shift_ns;
    out->global_pid = gt_global_pid(pid);
    out->device_id = (int32_t)m->deviceId;
    out->context_id = (int32_t)m->contextId;
    out->stream_id = (int32_t)m->streamId;
    out->correlation_id = m->correlationId;
    out->value = (int32_t)m->value;
    out->bytes = (int64_t)m->bytes;
    out->mem_kind = gt_cupti_mem_kind(m->memoryKind);
    return true;
}

bool gt_cupti_sync_row(gt_sync *out, const CUpti_ActivitySynchronization2 *s, int64_t shift_ns, int64_t pid,
                       int32_t device_id)
{
    memset(out, 0, sizeof *out);
    if (!timed(s->start, s->end))
        return false;
    out->start_ns = (int64_t)s->start + shift_ns;
    out->end_ns = (int64_t)s->end + shift_ns;
    out->global_pid = gt_global_pid(pid);
    out->device_id = device_id;
    out->context_id = (int32_t)s->contextId;
    out->stream_id = s->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1 : (int32_t)s->streamId;
    out->correlation_id = s->correlationId;
    out->sync_type = (int32_t)s->type; /* CUpti_ActivitySynchronizationType numbers as ENUM_CUPTI_SYNC_TYPE */
    out->event_id = s->cudaEventId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1 : (int64_t)s->cudaEventId;
    return true;
}

bool gt_cupti_api_row(gt_api_call *out, const CUpti_ActivityAPI *a, bool runtime, int64_t shift_ns)
{
    memset(out, 0, sizeof *out);
    if (!timed(a->start, a->end))
        return false;
    out->start_ns = (int64_t)a->start + shift_ns;
    out->end_ns = (int64_t)a->end + shift_ns;
    out->global_tid = gt_global_tid(a->processId, a->threadId);
    out->correlation_id = a->correlationId;
    out->event_class = runtime ? GT_API_RUNTIME : GT_API_DRIVER;
    out->return_value = (int32_t)a->returnValue;
    return true;
}

bool gt_cupti_memory_row(gt_gpu_memory *out, const CUpti_ActivityMemory4 *m, int64_t shift_ns, int64_t pid)
{
    memset(out, 0, sizeof *out);
    if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
        out->operation = GT_DEVMEM_ALLOC;
    else if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
        out->operation = GT_DEVMEM_FREE;
    else
        return false;
    if (m->timestamp == CUPTI_TIMESTAMP_UNKNOWN)
        return false;
    out->start_ns = (int64_t)m->timestamp + shift_ns;
    out->global_pid = gt_global_pid(m->processId ? m->processId : pid);
    out->device_id = (int32_t)m->deviceId;
    out->context_id = (int32_t)m->contextId;
    out->address = m->address;
    out->pc = m->PC;
    out->bytes = (int64_t)m->bytes;
    out->mem_kind = gt_cupti_mem_kind(m->memoryKind);
    out->correlation_id = m->correlationId;
    out->stream_id = (int32_t)m->streamId;
    return true;
}

void gt_cupti_gpu_row(gt_gpu_info *out, const CUpti_ActivityDevice5 *d)
{
    memset(out, 0, sizeof *out);
    out->id = (int32_t)d->id;
    out->total_memory_bytes = (int64_t)d->globalMemorySize;
    out->l2_cache_bytes = d->l2CacheSize;
    out->memory_bandwidth_bytes_per_s = (int64_t)d->globalMemoryBandwidth * 1000; /* CUPTI: kB/s */
    out->clock_rate_hz = (int64_t)d->coreClockRate * 1000;                      /* CUPTI: kHz */
    out->sm_count = (int32_t)d->numMultiprocessors;
    out->compute_major = (int32_t)d->computeCapabilityMajor;
    out->compute_minor = (int32_t)d->computeCapabilityMinor;
    out->max_threads_per_block = (int32_t)d->maxThreadsPerBlock;
    out->threads_per_warp = (int32_t)d->numThreadsPerWarp;
    out->max_shmem_per_block = d->maxSharedMemoryPerBlock;
    out->max_shmem_per_sm = d->maxSharedMemoryPerMultiprocessor;
    out->max_registers_per_block = (int32_t)d->maxRegistersPerBlock;
    out->max_registers_per_sm = (int32_t)d->maxRegistersPerMultiprocessor;
    out->async_engines = (int32_t)d->numMemcpyEngines;
}

void gt_cupti_uuid(char out[37], const CUuuid *uuid)
{
    const unsigned char *u = (const unsigned char *)uuid->bytes;
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
             u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

char *gt_cupti_short_name(const char *demangled)
{
    /* A '(' at template depth 0 opens the parameters, unless it opens
     * "(anonymous namespace)", which is a scope like any other. */
    static const char anonymous[] = "(anonymous namespace)";
    const char *end = demangled + strlen(demangled);
    int depth = 0;
    for (const char *p = demangled; *p; p++) {
        if (*p == '<') {
            depth++;
        } else if (*p == '>') {
            depth--;
        } else if (*p == '(' && depth == 0) {
            if (!strncmp(p, anonymous, sizeof anonymous - 1)) {
                p += sizeof anonymous - 2;
                continue;
            }
            if (p != demangled) {
                end = p;
                break;
            }
        }
    }
    /* Drop template arguments at the end, then keep the last component. */
    const char *stop = end;
    if (stop > demangled && stop[-1] == '>') {
        int d = 0;
        const char *p = stop - 1;
        for (; p >= demangled; p--) {
            if (*p == '>')
                d++;
            else if (*p == '<' && --d == 0)
                break;
        }
        if (p >= demangled)
            stop = p;
    }
    const char *start = stop;
    while (start > demangled && start[-1] != ':' && start[-1] != ' ')
        start--;
    if (start == stop) { /* nothing left: keep the name whole rather than an empty one */
        start = demangled;
        stop = demangled + strlen(demangled);
    }
    size_t n = (size_t)(stop - start);
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, start, n);
        s[n] = '\0';
    }
    return s;
}
