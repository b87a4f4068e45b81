/* cupti_records.h: CUPTI activity records turned into trace rows (private to
 * libtrace/capture). Pure functions: no CUPTI call, no state, no ring, so a
 * unit test can feed them records laid out as cupti_activity.h defines.
 * Strings (names) are left to the caller, which copies them into its ring.
 *
 * Times: `shift_ns` is added to a CUPTI timestamp to get trace time (ns
 * since the trace's zero). Enums are renumbered to nsys's where they differ.
 */
#ifndef GT_CUPTI_RECORDS_H
#define GT_CUPTI_RECORDS_H

#include <stdbool.h>
#include <stdint.h>

#include <cupti.h>

#include "gt_store.h"

/* The record layouts read below are those of CUPTI 13.0 (CUPTI_API_VERSION
 * 130000): CUpti_ActivityKernel10 appeared there. Later versions append
 * fields (Kernel8 to Kernel10 did), so a newer CUPTI's records read the same. */
#define GT_CUPTI_MIN_VERSION 130000u

/* CUpti_ActivityMemoryKind -> ENUM_CUDA_MEM_KIND (nsys: one less, unknown 7). */
int32_t gt_cupti_mem_kind(uint32_t cupti_kind);
/* CUpti_ActivityLaunchType (regular 0) -> ENUM_CUDA_KERNEL_LAUNCH_TYPE (unknown 0, regular 1). */
int32_t gt_cupti_launch_type(uint32_t cupti_launch_type);

/* Each returns false when the record has no usable time (CUPTI_TIMESTAMP_UNKNOWN
 * start or end: CUPTI could not time it, or a forced flush returned it
 * incomplete); the caller counts it as dropped. Names are left 0. */
bool gt_cupti_kernel_row(gt_kernel *out, const CUpti_ActivityKernel10 *k, int64_t shift_ns, int64_t pid);
bool gt_cupti_memcpy_row(gt_memcpy *out, const CUpti_ActivityMemcpy6 *m, int64_t shift_ns, int64_t pid);
bool gt_cupti_memset_row(gt_memset *out, const CUpti_ActivityMemset4 *m, int64_t shift_ns, int64_t pid);
bool gt_cupti_sync_row(gt_sync *out, const CUpti_ActivitySynchronization2 *s, int64_t shift_ns, int64_t pid,
                       int32_t device_id);
/* Runtime or driver call; name and callchain left 0. */
bool gt_cupti_api_row(gt_api_call *out, const CUpti_ActivityAPI *a, bool runtime, int64_t shift_ns);
/* Allocations and releases; false for other operations or no time. `pid`
 * stands in when the record has none. Callchain left 0. */
bool gt_cupti_memory_row(gt_gpu_memory *out, const CUpti_ActivityMemory4 *m, int64_t shift_ns, int64_t pid);
/* A device's description; its strings are left NULL: the name is d->name,
 * the uuid is gt_cupti_uuid's. */
void gt_cupti_gpu_row(gt_gpu_info *out, const CUpti_ActivityDevice5 *d);
/* The device's UUID as nsys writes it: "cf6b97c0-bf53-a39e-febd-9532190b5766". */
void gt_cupti_uuid(char out[37], const CUuuid *uuid);

/* A kernel's short name from its demangled name, as nsys shows it:
 * "void ns::foo<int>(float*, int)" -> "foo". Allocated (free()); NULL
 * when out of memory. */
char *gt_cupti_short_name(const char *demangled);

#endif /* GT_CUPTI_RECORDS_H */
