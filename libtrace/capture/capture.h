/* capture.h: libgtrace.so in layers (private; nothing outside
 * libtrace/capture includes it). Each file calls only the layers below it;
 * what a lower layer must tell a higher one goes through a hook the higher
 * one registers (pthread keys, pthread_atfork).
 *
 *   library.c, hooks.c         the library's life: constructor, destructor, exec
 *   cupti.c (+cupti_records.c) CUDA through CUPTI: activity records into the rings
 *   nvtx_mem.c                 the NVTX memory API
 *   nvtx.c                     NVTX marks, ranges, names; each thread's push/pop stack
 *   names.c                    the domains, categories and heaps named, for fork children
 *   stacks.c                   distinct call stacks, symbolized (REC_CALLCHAIN)
 *   session.c                  options, the connection to the launcher, fork
 *   ring.c                     the region of per-thread rings (shm.h): claim,
 *                              reserve, commit, drops; knows no record's meaning
 *   clock.c, warn.c            stamps; saying a thing once on stderr
 *
 * Data flow: a producer (an NVTX callback, a CUPTI buffer callback) writes a
 * record into its thread's ring (gt_cap_reserve / gt_cap_commit, ring.h).
 * The rings are in a region of shared memory that the gtrace launcher maps:
 * it reads them, turns records into trace rows and writes the trace. This
 * process holds no SQLite and no thread of its own; producers never lock,
 * never make a system call on the way and never wait for the launcher.
 */
#ifndef GT_CAPTURE_H
#define GT_CAPTURE_H

/* What the library exports (everything else is hidden). */
#define GT_EXPORT __attribute__((visibility("default")))

#endif /* GT_CAPTURE_H */
