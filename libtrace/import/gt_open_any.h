/* gt_open_any.h: a file given where a trace goes, for the gtrace CLI
 * (report, diff, memory, export) and gtrace-view alike: a trace (gtrace's
 * or an nsys export) is opened as it is; a file of PyTorch's own (a
 * torch.profiler Kineto JSON trace, plain or gzipped, or a CUDA memory
 * snapshot pickle) is first imported (libtrace/import) into a temporary
 * trace that is removed when the program exits. Decided by content, never
 * by name. Safe to call from several threads (the viewer loads the two
 * traces of a comparison at once). */
#ifndef GT_OPEN_ANY_H
#define GT_OPEN_ANY_H

#include "gt_import.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The file to open for `path`: *out_path (malloc'd, the caller frees it) is
 * `path` itself, *out_format 0, for anything that is not PyTorch's; else
 * the temporary trace it was imported into, *out_format its format.
 * Returns 0, or a negative gt_status with gt_error_last() naming `path` and
 * what is wrong in it (no temporary is then left behind, at exit). */
int gt_open_any(char **out_path, gt_import_format *out_format, const char *path);

/* "torch.profiler trace" or "CUDA memory snapshot", for messages. */
const char *gt_open_any_format_name(gt_import_format format);

#ifdef __cplusplus
}
#endif
#endif /* GT_OPEN_ANY_H */
