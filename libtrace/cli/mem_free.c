/* mem_free.c: how much memory this process can still take before the
 * kernel kills it for memory, for the launcher's one big allocation of its
 * own (keeping the report at close loads the whole trace). */
#include "mem_free.h"

#include <stdio.h>
#include <string.h>

/* "MemAvailable:" of a meminfo file, in bytes; -1 when absent. */
static int64_t mem_available(const char *meminfo)
{
    FILE *f = fopen(meminfo, "r");
    char line[256];
    long long kib = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1)
            break;
    fclose(f);
    return kib >= 0 ? (int64_t)kib * 1024 : -1;
}

/* A file holding one number ("max" or unreadable: -1). */
static int64_t number_in(const char *path)
{
    FILE *f = fopen(path, "r");
    long long v = -1;
    if (!f)
        return -1;
    if (fscanf(f, "%lld", &v) != 1)
        v = -1;
    fclose(f);
    return v;
}

/* The room left under this process's cgroup v2 memory limit (memory.max
 * less memory.current), or -1: no limit, or not cgroup v2. */
static int64_t cgroup_room(const char *self_cgroup, const char *cgroup_fs)
{
    FILE *f = fopen(self_cgroup, "r");
    char line[1024], path[2048];
    int64_t room = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "0::", 3) != 0)
            continue;
        line[strcspn(line, "\n")] = '\0';
        const char *rel = line + 3;
        snprintf(path, sizeof path, "%s%s/memory.max", cgroup_fs, strcmp(rel, "/") ? rel : "");
        int64_t max = number_in(path);
        snprintf(path, sizeof path, "%s%s/memory.current", cgroup_fs, strcmp(rel, "/") ? rel : "");
        int64_t cur = number_in(path);
        if (max >= 0 && cur >= 0)
            room = max > cur ? max - cur : 0;
        break;
    }
    fclose(f);
    return room;
}

int64_t gt_mem_free_at(const char *meminfo, const char *self_cgroup, const char *cgroup_fs)
{
    int64_t avail = mem_available(meminfo), room = cgroup_room(self_cgroup, cgroup_fs);
    if (avail < 0 || (room >= 0 && room < avail))
        return room;
    return avail;
}

int64_t gt_mem_free(void)
{
    return gt_mem_free_at("/proc/meminfo", "/proc/self/cgroup", "/sys/fs/cgroup");
}
