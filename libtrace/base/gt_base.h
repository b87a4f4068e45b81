/* gt_base.h: what every part of libtrace shares at the bottom: status codes
 * and the per-thread one-line message (error.c), asserts in SQLite's three
 * tiers, int64 arithmetic that saturates, a lower-bound search and the
 * comparators qsort and bsearch take.
 *
 * Everything but the message is inline here, so the capture library takes
 * this header without linking anything; the store links error.c (libgtbase)
 * for all its users. It includes nothing of gtrace.
 */
#ifndef GT_BASE_H
#define GT_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef GT_DEBUG
#include <stdio.h>
#include <stdlib.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes and messages (error.c) -------------------------------- */

typedef enum gt_status {
    GT_OK = 0,
    GT_ERR_NOMEM = -1,    /* an allocation failed */
    GT_ERR_IO = -2,       /* the file could not be read or written */
    GT_ERR_CORRUPT = -3,  /* the file is damaged or truncated */
    GT_ERR_NOTTRACE = -4, /* SQLite, but neither a gtrace trace nor an nsys export */
    GT_ERR_VERSION = -5,  /* a schema version this build does not know */
    GT_ERR_INVALID = -6,  /* a bad argument */
    GT_ERR_NOTFOUND = -7, /* no such file, or no such item */
    GT_ERR_FULL = -8,     /* the disk (or the file's size limit) is full */
    GT_ERR_EXISTS = -9,   /* the output file exists and overwriting was not asked for */
} gt_status;

/* Message of the last failure on this thread ("" if none): one line, control
 * characters (a damaged schema's newlines, quoted by SQLite) made spaces. Borrowed. */
const char *gt_error_last(void);
/* Sets this thread's message; returns `status` so callers can `return gt_error_set(...)`. */
int gt_error_set(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gt_error_clear(void);
/* A short name for a status: "out of memory", "corrupt file"... */
const char *gt_status_name(int status);

/* ---- asserts ------------------------------------------------------------- */

/* SQLite's tiers. GT_ASSERT(x): x is proven; checked in a debug build
 * (GT_DEBUG, which `configure --enable-sanitizers` sets), nothing in a
 * release build (x is still compiled, never run). GT_ALWAYS(x) and
 * GT_NEVER(x): x is believed always (never) true, yet the code handles the
 * other case, as in `if (GT_NEVER(n > cap)) return GT_ERR_INVALID;`: a
 * debug build stops there, a release build is x. A failure names the file,
 * the line and the expression on stderr, then aborts. Bad input is never
 * asserted on: it gets an error (STYLE.md). */
#ifdef GT_DEBUG
__attribute__((noreturn, cold)) static inline void gt_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}
#define GT_ASSERT(x) ((x) ? (void)0 : gt_assert_fail(__FILE__, __LINE__, #x))
#define GT_ALWAYS(x) ((x) ? true : (gt_assert_fail(__FILE__, __LINE__, "always " #x), false))
#define GT_NEVER(x) ((x) ? (gt_assert_fail(__FILE__, __LINE__, "never " #x), true) : false)
#else
#define GT_ASSERT(x) ((void)sizeof(!(x)))
#define GT_ALWAYS(x) (!!(x))
#define GT_NEVER(x) (!!(x))
#endif

/* ---- int64 arithmetic that stops at the ends ------------------------------ */

/* Times and sizes read from a file may be anything an int64 holds: sums and
 * differences of them saturate instead of overflowing. */
static inline int64_t gt_sat_add(int64_t a, int64_t b)
{
    int64_t s;
    if (__builtin_add_overflow(a, b, &s))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return s;
}

static inline int64_t gt_sat_sub(int64_t a, int64_t b)
{
    int64_t s;
    if (__builtin_sub_overflow(a, b, &s))
        return b < 0 ? INT64_MAX : INT64_MIN;
    return s;
}

/* ---- searching sorted arrays ----------------------------------------------- */

/* The first of `n` elements `elem_bytes` apart, sorted by the int64_t
 * `field_offset` bytes into each, whose field is not below `key` (upper:
 * above `key`); `n` when there is none. */
static inline size_t gt_lower_bound_i64(const void *base, size_t n, size_t elem_bytes, size_t field_offset,
                                        int64_t key)
{
    size_t lo = 0, hi = n; /* base may be NULL when n is 0: no pointer arithmetic outside the loop */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t v;
        memcpy(&v, (const char *)base + mid * elem_bytes + field_offset, sizeof v);
        if (v < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline size_t gt_upper_bound_i64(const void *base, size_t n, size_t elem_bytes, size_t field_offset,
                                        int64_t key)
{
    size_t lo = 0, hi = n; /* base may be NULL when n is 0: no pointer arithmetic outside the loop */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t v;
        memcpy(&v, (const char *)base + mid * elem_bytes + field_offset, sizeof v);
        if (v <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The same over array `arr` of structs by member `field`, which must be an
 * int64_t (anything else does not compile): GT_LOWER_BOUND(acts, n, start_ns, t). */
#define GT_LOWER_BOUND(arr, n, field, key)                                                                   \
    _Generic((arr)->field, int64_t: gt_lower_bound_i64)((arr), (n), sizeof *(arr),                             \
                                                       offsetof(__typeof__(*(arr)), field), (key))
#define GT_UPPER_BOUND(arr, n, field, key)                                                                   \
    _Generic((arr)->field, int64_t: gt_upper_bound_i64)((arr), (n), sizeof *(arr),                             \
                                                       offsetof(__typeof__(*(arr)), field), (key))

/* The first of `n` elements for which `before(element, key)` is false, the
 * array being ordered so that those for which it is true come first; `n`
 * when there is none. For orders on more than one int64 member. */
static inline size_t gt_lower_bound(const void *base, size_t n, size_t elem_bytes, const void *key,
                                    bool (*before)(const void *elem, const void *key))
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (before((const char *)base + mid * elem_bytes, key))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- comparators for qsort and bsearch -------------------------------------- */

/* int64_t elements, ascending. */
static inline int gt_cmp_i64(const void *a, const void *b)
{
    int64_t x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return (x > y) - (x < y);
}

/* Elements that are `char *`, by strcmp. */
static inline int gt_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

#ifdef __cplusplus
}
#endif

#endif /* GT_BASE_H */
