/* scaler.c: the loss scaler of scaler.h (its update rules are inline there). */
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
