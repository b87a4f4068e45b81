/* scaler.c: the loss scaler of scaler.h. */
#include "scaler.h"

void tr_scaler_off(tr_scaler *s) { *s = (tr_scaler){.scale = 1.0f, .growth = 1.0f, .backoff = 1.0f}; }

void tr_scaler_fixed(tr_scaler *s, float scale)
{
    *s = (tr_scaler){.enabled = true, .scale = scale, .growth = 1.0f, .backoff = 1.0f};
}

void tr_scaler_dynamic(tr_scaler *s, float init_scale, int growth_interval)
{
    *s = (tr_scaler){.enabled = true, .dynamic = true, .scale = init_scale, .growth = 2.0f, .backoff = 0.5f,
                     .growth_interval = growth_interval};
}

bool tr_scaler_update(tr_scaler *s, bool found_inf)
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
