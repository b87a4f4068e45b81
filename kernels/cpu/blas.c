/* blas.c: the CBLAS thread rule of the CPU kernels (see cpu.h): the BLAS
 * runs on the calling thread only, the OpenMP team does the splitting. */
#include "config.h"
#include "cpu.h"

#include <pthread.h>

#ifdef HAVE_CBLAS
#include <cblas.h>
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void serial(void)
{
#if defined(HAVE_CBLAS) && defined(OPENBLAS_VERSION)
    openblas_set_num_threads(1);
#endif
}

void cpu_blas_serial(void) { pthread_once(&once, serial); }
