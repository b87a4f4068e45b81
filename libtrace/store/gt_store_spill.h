/* gt_store_spill.h: maps kept on disk in a private temporary SQLite file
 * (deleted when closed) behind a page cache of fixed size, for code that
 * must remember something per event of a trace of any size in bounded
 * memory (the Chrome export's correlation ids, launches and NVTX
 * projections): a few bits per int64 key (gt_flagmap), two integers and a
 * tag per key (gt_pairmap), and time spans grown per key and read back in
 * time order (gt_spanmap).
 * It holds no trace and reads none; the store owns it because the store is
 * the code that speaks SQL. Part of the store's public API (gt_store.h
 * conventions: 0 or a negative gt_status, gt_error_last()). */
#ifndef GT_STORE_SPILL_H
#define GT_STORE_SPILL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gt_flagmap gt_flagmap;

/* An empty map; its file goes where SQLite puts temporary files
 * (SQLITE_TMPDIR, TMPDIR, /var/tmp, /tmp). */
int gt_flagmap_new(gt_flagmap **out);
/* Sets `bits` of key's flags (a key not there is added). */
int gt_flagmap_or(gt_flagmap *m, int64_t key, unsigned bits);
/* key's flags, 0 for a key never set. */
int gt_flagmap_get(gt_flagmap *m, int64_t key, unsigned *out_bits);
/* Closes and deletes its file; NULL is fine. */
void gt_flagmap_free(gt_flagmap *m);

/* Two integers and a small tag by key: the last put of a key is what get
 * gives (1), or 0 for a key never put. */
typedef struct gt_pairmap gt_pairmap;
int gt_pairmap_new(gt_pairmap **out);
int gt_pairmap_put(gt_pairmap *m, int64_t key, int64_t x, int64_t y, int tag);
int gt_pairmap_get(gt_pairmap *m, int64_t key, int64_t *x, int64_t *y, int *tag);
void gt_pairmap_free(gt_pairmap *m);

/* Spans by key (a, b, c): each key's earliest start, latest end and count. */
typedef struct gt_spanmap gt_spanmap;
typedef struct gt_span_row {
    int64_t a, b, c;
    int64_t start_ns, end_ns, n;
} gt_span_row;

int gt_spanmap_new(gt_spanmap **out);
/* Widens key (a, b, c)'s span to hold [start_ns, end_ns] and counts one. */
int gt_spanmap_add(gt_spanmap *m, int64_t a, int64_t b, int64_t c, int64_t start_ns, int64_t end_ns);
/* Calls fn for every key, by (start_ns, a, b, c); fn's negative return
 * stops it and is returned. No add after it. */
typedef int (*gt_span_fn)(void *ctx, const gt_span_row *row);
int gt_spanmap_each(gt_spanmap *m, gt_span_fn fn, void *ctx);
void gt_spanmap_free(gt_spanmap *m);

#ifdef __cplusplus
}
#endif
#endif /* GT_STORE_SPILL_H */
