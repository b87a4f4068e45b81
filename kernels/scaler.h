/* scaler.h: loss scaling for mixed precision, with torch.cuda.amp.GradScaler's
 * semantics and defaults. The loss is multiplied by the scale S before the
 * backward, so small fp16 gradients do not flush to zero; the gradients are
 * divided by S before the step. If any gradient is inf or NaN the step is
 * skipped and S is multiplied by the backoff (0.5); after growth_interval
 * (2000) good steps in a row S is multiplied by the growth (2.0). A fixed
 * scale (--loss-scale S) skips bad steps too but never changes.
 * Everything here is inline and also compiled for the GPU: the step decided
 * on the device (step_state.h, kernels/cuda/optim.cu) runs this code, in the
 * same float and double arithmetic as the trainer's step on the host
 * (trainer/train.c). It lives with the kernels, which run it; the trainer
 * includes it. */
#ifndef TR_SCALER_H
#define TR_SCALER_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __CUDACC__
#define TR_SCALER_FN static inline __host__ __device__
#else
#define TR_SCALER_FN static inline
#endif

typedef struct tr_scaler {
    bool enabled, dynamic;
    float scale;
    float growth, backoff;
    int growth_interval;
    int good_steps;   /* in a row, since the last change */
    int64_t n_skipped;
} tr_scaler;

/* Plain stores, no compound literal: this is C and CUDA C++ alike. */
TR_SCALER_FN void tr_scaler_set(tr_scaler *s, bool enabled, bool dynamic, float scale, float growth, float backoff,
                                int growth_interval)
{
    s->enabled = enabled;
    s->dynamic = dynamic;
    s->scale = scale;
    s->growth = growth;
    s->backoff = backoff;
    s->growth_interval = growth_interval;
    s->good_steps = 0;
    s->n_skipped = 0;
}

/* No scaling: scale 1, never skips (fp32 and bf16 without --loss-scale). */
TR_SCALER_FN void tr_scaler_off(tr_scaler *s) { tr_scaler_set(s, false, false, 1.0f, 1.0f, 1.0f, 0); }

TR_SCALER_FN void tr_scaler_fixed(tr_scaler *s, float scale) { tr_scaler_set(s, true, false, scale, 1.0f, 1.0f, 0); }

/* GradScaler(init_scale, growth_factor=2, backoff_factor=0.5, growth_interval) */
TR_SCALER_FN void tr_scaler_dynamic(tr_scaler *s, float init_scale, int growth_interval)
{
    tr_scaler_set(s, true, true, init_scale, 2.0f, 0.5f, growth_interval);
}

/* A dynamic scale saved by a checkpoint (scale 0: none saved; a fixed or no
 * scaler keeps its own): false, changing nothing, if its good steps are not
 * below the growth interval (no run saves that). */
TR_SCALER_FN bool tr_scaler_resume(tr_scaler *s, double scale, int good_steps)
{
    if (!s->dynamic || scale <= 0)
        return true;
    if (good_steps >= s->growth_interval)
        return false;
    s->scale = (float)scale;
    s->good_steps = good_steps;
    return true;
}

/* After the gradients were checked: true if the step is to be taken. Updates
 * the scale as GradScaler.update does. */
TR_SCALER_FN bool tr_scaler_update(tr_scaler *s, bool found_inf)
{
    if (!s->enabled)
        return true;
    if (found_inf) {
        s->n_skipped++;
        s->good_steps = 0;
        if (s->dynamic)
            s->scale *= s->backoff;
        return false;
    }
    if (s->dynamic && ++s->good_steps == s->growth_interval) {
        s->scale *= s->growth;
        s->good_steps = 0;
    }
    return true;
}

/* What the optimizer multiplies the gradients by: 1/S (unscaling), times the
 * clipping factor when clip > 0 and the norm exceeds it (clip_grad_norm_'s
 * clip / (norm + 1e-6)). checked: the gradient check ran (a scaler or
 * clipping is on) and gave sumsq (of the scaled gradients) and finite.
 * *grad_norm: the unscaled norm before clipping, NaN when not checked or not
 * finite. Call before tr_scaler_update: S is this step's scale. */
TR_SCALER_FN float tr_scaler_grad_scale(const tr_scaler *s, float clip, bool checked, double sumsq, bool finite,
                                        float *grad_norm)
{
    float grad_scale = 1.0f / s->scale;
    *grad_norm = NAN;
    if (checked && finite) {
        double norm = sqrt(sumsq) / s->scale;
        *grad_norm = (float)norm;
        if (clip > 0 && norm > clip)
            grad_scale *= (float)(clip / (norm + 1e-6));
    }
    return grad_scale;
}

#endif
