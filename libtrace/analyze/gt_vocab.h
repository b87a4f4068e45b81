/* gt_vocab.h: the words and numbers gtrace shows, one spelling for the CLI's
 * renderers and the viewer: API names without nsys's version suffix, copy
 * directions, durations, sizes and the cells of a diff. Plain functions of
 * their arguments (no state), writing into the caller's buffer. */
#ifndef GT_VOCAB_H
#define GT_VOCAB_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel" (into buf; a name without
 * the suffix is returned as it is, not copied). */
const char *gt_api_base_name(const char *name, char *buf, size_t n);
/* A copy's direction (GT_COPY_*): "HtoD", "DtoH"...; -1: "memset";
 * anything else: "unknown". */
const char *gt_copy_kind_name(int copy_kind);
/* "1.250 ms", "56.70 us", "2.000 s", "980 ns"; into buf, which is returned. */
const char *gt_fmt_ns(char *buf, size_t n, double ns);
/* "1.50 MiB", "512 B"; into buf, which is returned. */
const char *gt_fmt_bytes(char *buf, size_t n, double bytes);
/* s as it reads in a column `width` characters wide (UTF-8 code points):
 * s itself when it fits, else its first characters, "…" and its last `tail`
 * characters (tail is held to width - 2), so both ends of a long name stay.
 * Into buf when cut (truncated to n bytes, never inside a character). */
const char *gt_cut_middle(char *buf, size_t n, const char *s, size_t width, size_t tail);
/* The characters (UTF-8 code points) of s, as a column counts them. */
size_t gt_text_width(const char *s);
/* A value of a diff row in its unit ("ns", "bytes", "%", "GB/s", "count"). */
const char *gt_diff_cell(char *buf, size_t n, const char *unit, double v);
/* A diff row's relative change: "+12.5%". */
const char *gt_diff_change(char *buf, size_t n, double change);

#ifdef __cplusplus
}
#endif
#endif /* GT_VOCAB_H */
