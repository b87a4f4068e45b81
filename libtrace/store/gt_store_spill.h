/* gt_store_spill.h: a map from int64 keys to a few bits each, kept on disk
 * in a private temporary SQLite file (deleted when closed) behind a page
 * cache of fixed size, for code that must remember something per event of a
 * trace of any size in bounded memory (the Chrome export's correlation ids).
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

#ifdef __cplusplus
}
#endif
#endif /* GT_STORE_SPILL_H */
