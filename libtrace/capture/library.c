/* library.c: libgtrace.so's life in a process image: its constructor starts
 * the session (session.c) and, in a process that already has the CUDA
 * driver loaded, CUPTI; before exec (hooks.c) and in its destructor, what
 * CUPTI still holds goes into the rings. The launcher reads the rings when
 * the image's connection closes, so nothing else is needed at the end.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include "library.h"
#include "ring.h"
#include "session.h"
#include "warn.h"
#ifdef HAVE_CUPTI
#include "cupti_control.h"
#endif

void gt_cap_flush(void)
{
    if (getpid() != atomic_load(&gt_cap_pid))
        return; /* a vfork child: the session is its parent's */
#ifdef HAVE_CUPTI
    gt_cupti_flush();
#endif
}

__attribute__((constructor)) static void capture_ctor(void)
{
    gt_cap_init();
#ifdef HAVE_CUPTI
    /* Normally the CUDA driver starts CUPTI (InitializeInjection, cupti.c);
     * a process that already has the driver loaded is subscribed now. */
    if (atomic_load(&gt_cap_active) && gt_cap_opts.cuda != 0) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (h) {
            dlclose(h);
            gt_cupti_start();
        }
    }
#endif
}

__attribute__((destructor)) static void capture_dtor(void)
{
    if (getpid() != atomic_load(&gt_cap_pid) || !atomic_load(&gt_cap_active))
        return;
    gt_cap_flush();
#ifdef HAVE_CUPTI
    const char *root = getenv("GTRACE_ROOT_PID");
    if (gt_cap_opts.cuda == 1 && !gt_cupti_started() && root && atoll(root) == getpid()) {
        static _Atomic int once;
        gt_cap_warn_once(&once, "--cuda=on: CUDA was not traced: the program did not initialize CUDA "
                                "(no GPU or driver?), or CUPTI could not be used (see above)");
    }
#endif
}
