/* test_viewer_model.h: what the viewer's headless suites share (model,
 * render): the fixture trace loaded into a model, a lane found by kind,
 * a pixel of a drawn surface. */
#ifndef TEST_VIEWER_MODEL_H
#define TEST_VIEWER_MODEL_H

#include "gt_test.h"
#include "test_viewer_fixture.h"

#include <stdint.h>
#include <stdlib.h>

#include "gv-render.h"

static inline GvTraceModel *load_fixture(void)
{
    char *path = gt_test_path("fixture.sqlite");
    CU_ASSERT_EQUAL_FATAL(fx_write(path), 0);
    GvTraceModel *m = gv_trace_model_new();
    GError *error = NULL;
    gboolean ok = gv_trace_model_load(m, path, &error);
    if (!ok)
        fprintf(stderr, "load: %s\n", error->message);
    CU_ASSERT_TRUE_FATAL(ok);
    free(path);
    return m;
}

/* The first lane of kind lk on a track of `kind`; its track and lane
 * indices in *ti and *li (0 when there is none). */
static inline const GvLane *lane_of(GvTraceModel *m, GvTrackKind kind, GvItemKind lk, size_t *ti, size_t *li)
{
    if (ti)
        *ti = 0;
    if (li)
        *li = 0;
    for (size_t t = 0; t < gv_trace_model_n_tracks(m); t++) {
        const GvTrack *tr = gv_trace_model_track(m, t);
        for (size_t l = 0; tr->kind == kind && l < tr->n_lanes; l++)
            if (tr->lanes[l]->kind == lk) {
                if (ti)
                    *ti = t;
                if (li)
                    *li = l;
                return tr->lanes[l];
            }
    }
    return NULL;
}

static inline uint32_t pixel(cairo_surface_t *s, int x, int y)
{
    cairo_surface_flush(s);
    const unsigned char *d = cairo_image_surface_get_data(s);
    return *(const uint32_t *)(d + y * cairo_image_surface_get_stride(s) + 4 * x) & 0xffffff;
}

#endif
