/* gv-lane.h: one horizontal lane of the timeline as a sorted array of items,
 * its level-of-detail pyramid, and the walk that draws any zoom level in
 * O(visible pixels).
 *
 * A lane holds items that (nearly) never overlap: kernels of one stream, NVTX
 * ranges of one depth on one thread, runtime calls of one thread, idle gaps
 * of one device, a thread's NVTX marks (instants), a device's synchronizations. Items are sorted by start. Items narrower than a few pixels
 * merge into one box with a count and their busy time. Zoomed in (fewer than
 * ~16 items per pixel) the walk goes item by item from a binary search;
 * zoomed out it reads the pyramid: per power-of-two time bucket the count,
 * busy time, latest end and longest item of the items starting in it, so a
 * frame reads about two buckets per pixel whatever the lane holds.
 * Plain C; no GObject, no drawing. */
#ifndef GV_LANE_H_INCLUDED
#define GV_LANE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

typedef enum GvItemKind {
    GV_ITEM_KERNEL = 0, GV_ITEM_MEMCPY, GV_ITEM_MEMSET, GV_ITEM_CPU_OP,
    GV_ITEM_API, GV_ITEM_NVTX, GV_ITEM_GAP, GV_ITEM_MARK, GV_ITEM_SYNC, GV_ITEM_N_KINDS
} GvItemKind;

typedef struct GvItem { /* 32 bytes: 10 M of them fit in 320 MB */
    int64_t start_ns, end_ns;
    int64_t corr;     /* correlation id (launch <-> device work, sync); 0 none; a mark's payload bits */
    uint32_t name;    /* index into the model's names */
    uint8_t kind;     /* GvItemKind */
    uint8_t aux;      /* copy kind (memcpy), gap cause (gap), depth (nvtx), payload kind (mark), sync type */
    uint16_t color;   /* NVTX colour slot + 1; 0: colour by name */
} GvItem;
_Static_assert(sizeof(GvItem) == 32, "GvItem is 32 bytes");

/* Items starting in [origin + b * 2^s, origin + (b + 1) * 2^s): 24 bytes. Its
 * count is the next bucket's first minus its first (the lane's count for the
 * last), so an empty bucket has first = the next item's index. */
typedef struct GvBucket {
    int64_t busy_ns;  /* sum of their durations */
    int64_t end_ns;   /* latest end among them (INT64_MIN: empty) */
    uint32_t first;   /* index of the first of them */
    uint32_t longest; /* index of the longest: the colour of a merged box */
} GvBucket;

enum { GV_LOD_MAX_LEVELS = 48, GV_LOD_MIN_ITEMS = 1024, GV_LOD_ITEMS_PER_BUCKET = 16 };

/* Level k has buckets 2^(shift + k) ns wide, each the sum of two of level k-1;
 * the top level has one bucket. Built as rows are published (gv_lane_lod_update). */
typedef struct GvLod {
    int shift, n_levels; /* n_levels 0: none (a lane of few items, or over 4 G items) */
    int64_t origin_ns;
    size_t n_items;      /* items it covers: the lane's published n */
    GvBucket *lv[GV_LOD_MAX_LEVELS];
    size_t n[GV_LOD_MAX_LEVELS], cap[GV_LOD_MAX_LEVELS];
} GvLod;

typedef struct GvLane {
    GvItem *items; size_t n, cap; /* n: published; the loader writes past n */
    GvLod lod;                    /* over items[0 .. n): what drawing reads */
    GvLod lod_spare;              /* the loader's, brought up to date outside the lock, then swapped in */
    size_t n_loaded;              /* the loader's own count (n catches up at each publish) */
    int64_t max_dur_ns;           /* longest item */
    int64_t key;                  /* stream id, NVTX depth...: orders lanes in a track */
    GvItemKind kind;              /* what its items are */
    char label[64];
} GvLane;

/* First index whose item ends after t (or starts at/after t): where drawing starts. */
size_t gv_lane_first_visible(const GvLane *l, int64_t t_ns);
/* First index with start >= t in [from, n). */
size_t gv_lane_lower_bound(const GvLane *l, size_t from, int64_t t_ns);

/* One box to draw: a single item (count 1, index of it) or a merged run. */
typedef struct GvBox {
    int64_t start_ns, end_ns;
    size_t first, count; /* items[first .. first+count) */
    int64_t busy_ns;     /* sum of their durations */
    size_t dominant;     /* the item whose colour the box takes (the longest, or of the busiest bucket) */
} GvBox;

/* Calls visit() for each box in [t0, t1) at ns_per_px, merging items narrower
 * than min_px. Returns the number of boxes. */
typedef void (*GvBoxFunc)(const GvLane *l, const GvBox *b, void *data);
size_t gv_lane_walk(const GvLane *l, int64_t t0_ns, int64_t t1_ns, double ns_per_px, double min_px,
                    GvBoxFunc visit, void *data);

/* The box under time t (within slop_ns), as drawn at ns_per_px; 0 if none. */
int gv_lane_hit(const GvLane *l, int64_t t_ns, double ns_per_px, double min_px, int64_t slop_ns, GvBox *out);

/* Brings the pyramid up to the published n (items past lod.n_items are new);
 * -1 when out of memory (the lane then has no pyramid and draws item by item). */
int gv_lane_lod_update(GvLane *l);
/* Publishing without holding readers up: the loader brings the spare pyramid
 * up to n items while drawing reads the other (no lock: only the loader
 * touches the spare and items past the published n), then, under the lock,
 * gv_lane_publish swaps the two and publishes n: a few stores. The spare is
 * then one publish behind and catches up at the next. */
int gv_lane_lod_prepare(GvLane *l, size_t n);
void gv_lane_publish(GvLane *l, size_t n);
void gv_lane_lod_free(GvLane *l);
/* The level the walk reads at ns_per_px, or -1: item by item. */
int gv_lane_lod_level(const GvLane *l, double ns_per_px);

/* The items in a new array of twice the capacity (*out_cap), or NULL when
 * out of memory. The loader copies without the model's lock (it alone writes
 * items; readers hold the lock), then swaps the array in under the lock, so
 * drawing never waits for a copy of hundreds of megabytes. */
GvItem *gv_lane_grown_copy(const GvLane *l, size_t *out_cap);

#endif /* GV_LANE_H_INCLUDED */
