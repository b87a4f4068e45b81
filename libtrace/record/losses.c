/* losses.c: the collector records what a part lost when its file could
 * not take it (the table is described in losses.h), and says it through the
 * engine's message hook.
 *
 * Runs on the collector thread, once per part, at its end.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "losses.h"
#include "record_int.h"

_Static_assert(GT_EV_N_KINDS <= GT_LOSS_KINDS, "the loss table has a count for every kind");

static gt_loss_table *map_table(const char *dir)
{
    if (!dir || !*dir)
        return NULL;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, GT_LOSSES_NAME) >= (int)sizeof path)
        return NULL;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    void *p = MAP_FAILED;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= (off_t)sizeof(gt_loss_table))
        p = mmap(NULL, sizeof(gt_loss_table), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return NULL;
    gt_loss_table *t = p;
    if (memcmp(t->magic, GT_LOSSES_MAGIC, sizeof t->magic) != 0) {
        munmap(p, sizeof *t);
        return NULL;
    }
    return t;
}

void gt_record_report_losses(const char *parts_dir, int64_t pid64, const char *part, const int64_t *n_lost,
                          const char *reason)
{
    int64_t total = 0;
    for (int k = 0; k < GT_EV_N_KINDS; k++)
        total += n_lost[k];
    int pid = (int)pid64;
    char line[400];
    int n = snprintf(line, sizeof line, "gtrace: process %d lost %lld events that are not in the trace%s%s%s\n", pid,
                     (long long)total, *reason ? " (" : "", reason, *reason ? ")" : "");
    if (n > 0)
        gt_record_say("%.*s", (int)((size_t)n < sizeof line ? (size_t)n : sizeof line - 1), line);
    gt_loss_table *t = map_table(parts_dir);
    if (!t)
        return;
    gt_loss_slot *slot = NULL;
    for (int i = 0; i < GT_LOSS_SLOTS && !slot; i++) {
        int64_t free_pid = 0;
        if (atomic_compare_exchange_strong(&t->slots[i].pid, &free_pid, (int64_t)pid))
            slot = &t->slots[i];
    }
    if (!slot) {
        atomic_fetch_add(&t->n_unrecorded, 1);
    } else {
        memset(slot->n_lost, 0, sizeof slot->n_lost);
        memcpy(slot->n_lost, n_lost, GT_EV_N_KINDS * sizeof *n_lost);
        snprintf(slot->part, sizeof slot->part, "%s", part);
        snprintf(slot->reason, sizeof slot->reason, "%s", reason);
        atomic_store(&slot->complete, 1);
    }
    munmap(t, sizeof *t);
}
