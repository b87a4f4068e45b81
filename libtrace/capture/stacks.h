/* stacks.h: call stacks stored once per distinct stack (stacks.c). */
#ifndef GT_CAPTURE_STACKS_H
#define GT_CAPTURE_STACKS_H

#include <stdint.h>

/* Records the current stack once per distinct stack; returns its id (0: none).
 * `skip`: frames of the caller's own machinery to leave out. */
int64_t gt_cap_stack_id(int skip);
/* Loads what backtrace() needs, early. */
void gt_cap_stacks_init(void);

#endif
