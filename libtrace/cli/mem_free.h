/* mem_free.h: the memory this process can still take (mem_free.c). */
#ifndef GT_MEM_FREE_H
#define GT_MEM_FREE_H

#include <stdint.h>

/* The lesser of the machine's available memory (MemAvailable of meminfo)
 * and the room under the process's cgroup v2 memory limit (self_cgroup's
 * "0::PATH" under cgroup_fs: memory.max less memory.current), in bytes; -1
 * when neither is known. */
int64_t gt_mem_free_at(const char *meminfo, const char *self_cgroup, const char *cgroup_fs);
/* gt_mem_free_at of /proc/meminfo, /proc/self/cgroup and /sys/fs/cgroup. */
int64_t gt_mem_free(void);

#endif
