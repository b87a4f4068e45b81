/* nvtx.h: the trainer's NVTX annotations, all in the "trainer" domain.
 * Ranges for steps, phases and ops; the domain handle for the memory API
 * (alloc.c). Without NVTX headers every call is a no-op. NVTX v3 is
 * header-only and loads a tool only if NVTX_INJECTION64_PATH is set, so the
 * annotations cost a branch each when nothing traces the trainer. */
#ifndef TR_NVTX_H
#define TR_NVTX_H

#include "config.h"

#include <stdint.h>

#ifdef HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
typedef nvtxDomainHandle_t tr_nvtx_domain_t;
#else
typedef void *tr_nvtx_domain_t;
#endif

/* The "trainer" domain, created on first use (thread-safe). */
tr_nvtx_domain_t tr_nvtx_domain(void);
/* Push/pop a range; name must outlive the call only (it is copied or registered). */
void tr_nvtx_push(const char *name);
void tr_nvtx_pop(void);
/* A range named after a static string (phases): registered once, then by handle. */
void tr_nvtx_push_static(const char *name);
/* An op (a compute kernel of the CPU backend): like tr_nvtx_push_static, in
 * the category TR_NVTX_COMPUTE, named "compute" once when the domain is made.
 * Profilers read ranges of a category named "compute" as device work, so a
 * trace of the CPU backend has the shape of a GPU trace. */
enum { TR_NVTX_COMPUTE = 1 };
void tr_nvtx_push_op(const char *name);
/* Communication (dist.c): a start/end range, not a push/pop one, because a
 * collective in flight overlaps the op ranges of the thread that started it.
 * Category TR_NVTX_COMMUNICATION, named "communication"; the payload is the
 * bytes this rank sends (gtrace report sums them per step). Returns the id
 * that ends it (0 without a tool). */
enum { TR_NVTX_COMMUNICATION = 2 };
uint64_t tr_nvtx_start_comm(const char *name, uint64_t bytes);
void tr_nvtx_end(uint64_t id);

/* A mark with a number as its payload (the loss scale, a skipped step). */
void tr_nvtx_mark_value(const char *name, double value);

#endif
