/* losses.h: the loss table, shared by libgtrace.so (capture/losses.c) and the
 * launcher (cli/assemble.c), which include it.
 *
 * A traced process whose part file cannot take what it recorded (a full
 * disk, a file size limit, an I/O error) must still tell the launcher how
 * many events it lost, and it cannot count on writing a file to do so. The
 * launcher therefore makes this table in the parts directory, at full size
 * and with its blocks allocated, before the program starts; a process that
 * lost events claims a slot (a compare-and-swap on `pid`) in its shared
 * mapping, fills it in and sets `complete` last. Stores into allocated
 * pages of a mapped file need no disk space and ignore RLIMIT_FSIZE.
 * The launcher reads the table once every traced process has ended.
 *
 * A slot holds the whole account of one part (one process image): its
 * counts replace any dropped counts the part file holds, and they stand for
 * the part when the file is missing (it could not even be created).
 */
#ifndef GT_CAPTURE_LOSSES_H
#define GT_CAPTURE_LOSSES_H

#include <stdatomic.h>
#include <stdint.h>

#define GT_LOSSES_NAME "losses"       /* in GTRACE_PARTS_DIR */
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

#endif
