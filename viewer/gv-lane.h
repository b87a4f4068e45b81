/* gv-lane.h: one horizontal lane of the timeline as a sorted array of items,
 * and the level-of-detail walk that draws any zoom level in O(visible pixels).
 *
 * A lane holds items that (nearly) never overlap: kernels of one stream, NVTX
 * ranges of one depth on one thread, runtime calls of one thread, idle gaps
 * of one device. Items are sorted by start, so the visible range is found by
 * binary search, and a run of items narrower than a few pixels is skipped in
 * one more binary search (to the first item that starts a few pixels later)
 * and drawn as one box with a count. Plain C; no GObject, no drawing. */
#ifndef GV_LANE_H_INCLUDED
#define GV_LANE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

typedef enum GvItemKind {
    GV_ITEM_KERNEL = 0, GV_ITEM_MEMCPY, GV_ITEM_MEMSET, GV_ITEM_CPU_OP,
    GV_ITEM_API, GV_ITEM_NVTX, GV_ITEM_GAP, GV_ITEM_N_KINDS
} GvItemKind;

typedef struct GvItem { /* 32 bytes: 10 M of them fit in 320 MB */
    int64_t start_ns, end_ns;
    int64_t corr;     /* correlation id (launch <-> device work); 0 none */
    uint32_t name;    /* index into the model's names */
    uint8_t kind;     /* GvItemKind */
    uint8_t aux;      /* copy kind (memcpy), gap cause (gap), depth (nvtx) */
    uint16_t color;   /* NVTX colour slot + 1; 0: colour by name */
} GvItem;
_Static_assert(sizeof(GvItem) == 32, "GvItem is 32 bytes");

typedef struct GvLane {
    GvItem *items; size_t n, cap; /* n: published; the loader writes past n */
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
} GvBox;

/* Calls visit() for each box in [t0, t1) at ns_per_px, merging items narrower
 * than min_px. Returns the number of boxes. */
typedef void (*GvBoxFunc)(const GvLane *l, const GvBox *b, void *data);
size_t gv_lane_walk(const GvLane *l, int64_t t0_ns, int64_t t1_ns, double ns_per_px, double min_px,
                    GvBoxFunc visit, void *data);

/* The box under time t (within slop_ns), as drawn at ns_per_px; 0 if none. */
int gv_lane_hit(const GvLane *l, int64_t t_ns, double ns_per_px, double min_px, int64_t slop_ns, GvBox *out);

/* Doubles the capacity; -1 when out of memory. The loader calls it under
 * the model's lock (drawing may be reading the array). */
int gv_lane_grow(GvLane *l);

#endif /* GV_LANE_H_INCLUDED */
