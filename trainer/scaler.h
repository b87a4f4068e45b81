/* scaler.h: loss scaling for mixed precision, with torch.cuda.amp.GradScaler's
 * semantics and defaults. The loss is multiplied by the scale S before the
 * backward, so small fp16 gradients do not flush to zero; the gradients are
 * divided by S before the step. If any gradient is inf or NaN the step is
 * skipped and S is multiplied by the backoff (0.5); after growth_interval
 * (2000) good steps in a row S is multiplied by the growth (2.0). A fixed
 * scale (--loss-scale S) skips bad steps too but never changes. */
#ifndef TR_SCALER_H
#define TR_SCALER_H

#include <stdbool.h>
#include <stdint.h>

typedef struct tr_scaler {
    bool enabled, dynamic;
    float scale;
    float growth, backoff;
    int growth_interval;
    int good_steps;   /* in a row, since the last change */
    int64_t n_skipped;
} tr_scaler;

/* No scaling: scale 1, never skips (fp32 and bf16 without --loss-scale). */
void tr_scaler_off(tr_scaler *s);
void tr_scaler_fixed(tr_scaler *s, float scale);
/* GradScaler(init_scale, growth_factor=2, backoff_factor=0.5, growth_interval) */
void tr_scaler_dynamic(tr_scaler *s, float init_scale, int growth_interval);
/* After the gradients were checked: true if the step is to be taken. Updates
 * the scale as GradScaler.update does. */
bool tr_scaler_update(tr_scaler *s, bool found_inf);

#endif
