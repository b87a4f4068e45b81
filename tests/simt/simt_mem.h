/* simt_mem.h: device memory for kernels run by the SIMT emulator
 * (tests/simt/simt.h), callable from C tests. A buffer ends where a page
 * without access begins, so reading or writing past its end stops the
 * kernel; the few bytes of alignment slack around it hold a canary checked
 * after every launch; fresh memory is filled with 0xff bytes, a NaN in
 * every float format, so results built from unwritten memory show.
 * A failed launch (a bad configuration, a fault, a broken canary, a
 * divergent barrier) returns its error from cudaGetLastError, as on a GPU,
 * and simt_last_failure() says what went wrong, in which kernel, block and
 * thread. */
#ifndef GT_SIMT_MEM_H
#define GT_SIMT_MEM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* NULL if the memory cannot be mapped. Aligned to 16 bytes. */
void *simt_alloc(size_t n_bytes);
/* Accepts NULL. */
void simt_free(void *p);
/* The message of the last failed launch ("" if none failed). */
const char *simt_last_failure(void);
/* The number of launches run and of threads they ran. */
long simt_n_launches(void);
long simt_n_threads(void);

#ifdef __cplusplus
}
#endif
#endif
