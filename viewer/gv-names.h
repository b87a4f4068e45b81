/* gv-names.h: the short names the timeline shows and colours by, made from
 * the full names a trace keeps. Plain C; no GLib. */
#ifndef GV_NAMES_H
#define GV_NAMES_H

#include <stddef.h>

/* A C++ kernel's demangled name without its return type, arguments and
 * namespaces, keeping the first template argument that names something (a
 * functor, a lambda's enclosing function) rather than a number:
 *   void clover::par_ranged2d_kernel<PdV_kernel(bool, ...)::[lambda(int, int) (instance 2)]>(clover::Range2d, T1)
 *     -> par_ranged2d_kernel<PdV_kernel>
 *   void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, ...>(int, ...)
 *     -> vectorized_elementwise_kernel<FillFunctor>
 * A plain name comes back as it is. Writes at most n bytes (NUL included)
 * into out and returns out. */
char *gv_short_kernel_name(char *out, size_t n, const char *full);

#endif /* GV_NAMES_H */
