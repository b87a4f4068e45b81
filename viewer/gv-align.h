/* gv-align.h: the time mapping between two traces compared side by side.
 *
 * Step k of trace A is paired with step k of trace B (by step number; by
 * position when the two share no number), and time is mapped piecewise
 * linearly between the pairs' boundaries: A's start of step k goes to B's
 * start of step k, A's end to B's end, and a time inside the step to the same
 * fraction of B's step. Outside the common steps time is shifted by the
 * nearest boundary's offset; without common steps, by the offset between the
 * traces' starts. The map is exact at every boundary and never decreases.
 * Plain C; no GObject, no drawing. */
#ifndef GV_ALIGN_H_INCLUDED
#define GV_ALIGN_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "gt_analyze.h"

/* Two steps with one number, one in each trace (side 0: A, side 1: B). */
typedef struct GvStepPair {
    int64_t number;
    int64_t start_ns[2], end_ns[2];
} GvStepPair;

typedef struct GvAlign {
    int64_t *knots[2];  /* matching times, strictly increasing on both sides */
    size_t n_knots;
    int64_t shift_ns;   /* B minus A when there are no knots */
    GvStepPair *pairs;  /* in time order on both sides */
    size_t n_pairs;
} GvAlign;

/* Pairs a's steps with b's and builds the knots. a_start_ns, b_start_ns:
 * where the traces start (the shift when no step pairs up). Either list may
 * be empty. Returns 0, or -1 when out of memory (*al is then empty). */
int gv_align_init(GvAlign *al, const gt_step *a, size_t n_a, const gt_step *b, size_t n_b, int64_t a_start_ns,
                  int64_t b_start_ns);
void gv_align_clear(GvAlign *al);

/* t on side `from` (0: A, 1: B) mapped to the other side. */
int64_t gv_align_map(const GvAlign *al, int from, int64_t t_ns);
/* The piece of side `from`'s time holding t, over which the map is linear:
 * [*out_p0, *out_p1), INT64_MIN and INT64_MAX at the open ends; returns the
 * piece's slope (other side's ns per ns of `from`). */
double gv_align_piece(const GvAlign *al, int from, int64_t t_ns, int64_t *out_p0, int64_t *out_p1);
/* The pair whose step on `side` holds t (start <= t < end), or NULL. */
const GvStepPair *gv_align_pair_at(const GvAlign *al, int side, int64_t t_ns);

#endif /* GV_ALIGN_H_INCLUDED */
