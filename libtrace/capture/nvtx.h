/* nvtx.h: what nvtx.c lends the NVTX memory API (nvtx_mem.c). */
#ifndef GT_CAPTURE_NVTX_H
#define GT_CAPTURE_NVTX_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

/* The text of a registered string's handle (nvtxStringHandle_t). */
const char *gt_nvtx_registered_text(const void *handle);
/* The id of an nvtxDomainHandle_t (0: the default domain). */
int64_t gt_nvtx_domain_id(const void *handle);
/* Converts a wide string to UTF-8 in `out` (truncating); returns the bytes written without NUL. */
size_t gt_cap_wide_to_utf8(const wchar_t *w, char *out, size_t out_bytes);

#endif
