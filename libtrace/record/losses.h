/* losses.h: the loss table, written by the launcher's collector
 * (losses.c) and read by its assembly (assemble.c).
 *
 * A part file that cannot take what a process recorded (a full disk, a
 * file size limit, an I/O error) must still say how many events were lost,
 * and that cannot count on writing a file. The launcher therefore makes
 * this table in the parts directory, at full size and with its blocks
 * allocated, before the program starts; the collector claims a slot (a
 * compare-and-swap on `pid`) in a shared mapping, fills it in and sets
 * `complete` last. Stores into allocated pages of a mapped file need no
 * disk space and ignore RLIMIT_FSIZE. The assembly reads the table once
 * every part is finished.
 *
 * A slot holds the whole account of one part (one process image): its
 * counts replace any dropped counts the part file holds, and they stand for
 * the part when the file is missing (it could not even be created).
 */
#ifndef GT_RECORD_LOSSES_H
#define GT_RECORD_LOSSES_H

#include <stdatomic.h>
#include <stdint.h>

#include "gt_store.h"

#define GT_LOSSES_NAME "losses"       /* in the run's parts directory */
#define GT_LOSSES_MAGIC "GTLOSS1"     /* 8 bytes with its NUL */
#define GT_LOSS_SLOTS 128
#define GT_LOSS_KINDS 16              /* room for gt_event_kind */

typedef struct gt_loss_slot {
    _Atomic int64_t pid;              /* 0: free */
    _Atomic int32_t complete;         /* 1 once the rest is written */
    int32_t pad;
    int64_t n_lost[GT_LOSS_KINDS];    /* per gt_event_kind: emitted and not in the part */
    char part[48];                    /* the part's file name, "PID-K.sqlite" */
    char reason[128];                 /* why writing stopped ("" for full buffers only) */
} gt_loss_slot;
_Static_assert(sizeof(gt_loss_slot) == 320, "gt_loss_slot layout");

typedef struct gt_loss_table {
    char magic[8];                    /* GT_LOSSES_MAGIC */
    _Atomic int64_t n_unrecorded;     /* processes that lost events and found no free slot */
    int64_t pad[6];
    gt_loss_slot slots[GT_LOSS_SLOTS];
} gt_loss_table;
_Static_assert(sizeof(gt_loss_table) == 64 + GT_LOSS_SLOTS * 320, "gt_loss_table layout");

/* Records what the part `part` of process `pid` lost (GT_EV_N_KINDS counts)
 * in the table of `parts_dir`, and says so (gt_record_say). `reason`: why
 * writing stopped, "" if it did not. */
void gt_record_report_losses(const char *parts_dir, int64_t pid, const char *part, const int64_t *n_lost,
                          const char *reason);

#endif
