/* library.h: the library's life (library.c), for the hooks around exec (hooks.c). */
#ifndef GT_CAPTURE_LIBRARY_H
#define GT_CAPTURE_LIBRARY_H

/* Moves what CUPTI still holds into the rings (before exec, at exit); the
 * launcher reads the rings. Does nothing in a vfork child. */
void gt_cap_flush(void);

#endif
