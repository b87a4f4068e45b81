/* nvtx.h: what nvtx.c lends the NVTX memory API (nvtx_mem.c) and the ITT
 * collector (itt.c). */
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

/* For itt.c: a domain (as nvtxDomainCreateA), a name for one of its
 * categories, a registered string (as nvtxDomainRegisterStringA; NULL: no
 * memory). */
const void *gt_nvtx_domain_new(const char *name);
void gt_nvtx_name_category(const void *domain, uint32_t category, const char *name);
const void *gt_nvtx_register_string(const char *s, size_t len);
/* A push/pop range of `domain` named by a registered string, written only
 * where it nests with the thread's other ranges: one that ends while a
 * range opened inside it is open, or is open when a range around it ends,
 * is dropped (an ITT task around a Python hook that opens a step). */
int gt_nvtx_push_nested(const void *domain, uint32_t category, const void *string);
int gt_nvtx_pop_nested(const void *domain);

#endif
