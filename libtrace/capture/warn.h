/* warn.h: how libgtrace.so speaks (warn.c): once per thing, on stderr. */
#ifndef GT_CAPTURE_WARN_H
#define GT_CAPTURE_WARN_H

#include <stdatomic.h>

/* Says `what` once on stderr (prefixed "gtrace: "), never more than once per key. */
void gt_cap_warn_once(_Atomic int *once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
