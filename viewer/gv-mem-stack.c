/* gv-mem-stack.c: stacking a process's blocks into bands (see the header).
 * The blocks are the analysis's lives of the block role; each start pushes
 * a band on top, each end takes one out and moves those above it down. At
 * one time ends go first, as the analysis replays frees first. */
#include "gv-mem-stack.h"
#include "gt_base.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MEM_POINTS (8u << 20) /* stacked layout cap (points of the bands) */

typedef struct stacker {
    GvMemBlock *blocks;
    GPtrArray *bands; /* per block: GArray of GvMemPoint (NULL: not stacked) */
    GArray *stack;    /* live block indices, bottom first */
    int64_t stack_bytes;
    size_t n_pts, dropped;
} stacker;

typedef struct edge { int64_t t_ns; size_t block; gboolean end; } edge;

static void band_add(stacker *b, size_t bi, int64_t t, int64_t offset)
{
    GArray *band = g_ptr_array_index(b->bands, bi);
    GvMemPoint p = {t, offset};
    g_array_append_val(band, p);
    b->n_pts++;
}

static void stack_push(stacker *b, size_t bi, int64_t t)
{
    if (b->n_pts >= MAX_MEM_POINTS) { /* past the cap: counted, not drawn */
        b->dropped++;
        return;
    }
    b->bands->pdata[bi] = g_array_new(FALSE, FALSE, sizeof(GvMemPoint));
    band_add(b, bi, t, b->stack_bytes);
    guint idx = (guint)bi;
    g_array_append_val(b->stack, idx);
    b->stack_bytes = gt_sat_add(b->stack_bytes, b->blocks[bi].bytes);
}

/* Takes a block off the stack; every block above it moves down by its size. */
static void stack_remove(stacker *b, size_t bi, int64_t t)
{
    if (!g_ptr_array_index(b->bands, bi))
        return; /* never stacked (past the cap): no search of the whole stack */
    guint pos = b->stack->len;
    while (pos > 0 && g_array_index(b->stack, guint, pos - 1) != bi) /* recent blocks go first */
        pos--;
    if (pos == 0)
        return;
    pos--;
    g_array_remove_index(b->stack, pos);
    int64_t bytes = b->blocks[bi].bytes;
    b->stack_bytes = gt_sat_add(b->stack_bytes, -bytes);
    GArray *band = g_ptr_array_index(b->bands, bi);
    band_add(b, bi, t, g_array_index(band, GvMemPoint, band->len - 1).offset_bytes); /* its end */
    for (guint k = pos; k < b->stack->len; k++) {
        guint above = g_array_index(b->stack, guint, k);
        GArray *ab = g_ptr_array_index(b->bands, above);
        band_add(b, above, t, g_array_index(ab, GvMemPoint, ab->len - 1).offset_bytes - bytes);
    }
}

static int cmp_edge(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    if (x->t_ns != y->t_ns)
        return x->t_ns < y->t_ns ? -1 : 1;
    if (x->end != y->end)
        return x->end ? -1 : 1; /* ends first */
    return (x->block > y->block) - (x->block < y->block);
}

GvMemory *gv_memory_from_series(const gt_mem_series *s)
{
    GvMemory *out = g_new0(GvMemory, 1);
    out->pid = s->pid;
    out->device_id = s->device_id;
    out->samples = s->samples;
    out->n_samples = s->n_samples;
    for (size_t i = 0; i < s->n_samples; i++) { /* the analysis's peaks: the first time each was reached */
        const gt_mem_sample *m = &s->samples[i];
        if (m->allocated_bytes > out->peak_allocated_bytes) {
            out->peak_allocated_bytes = m->allocated_bytes;
            out->peak_allocated_ns = m->t_ns;
        }
        if (m->reserved_bytes > out->peak_reserved_bytes) {
            out->peak_reserved_bytes = m->reserved_bytes;
            out->peak_reserved_ns = m->t_ns;
        }
    }
    out->max_reserved_bytes = out->peak_reserved_bytes;
    out->max_stack_bytes = out->peak_allocated_bytes;
    size_t n = 0;
    for (size_t i = 0; i < s->n_lives; i++)
        n += (s->lives[i].roles & GT_MEM_ROLE_BLOCK) != 0;
    out->blocks = g_new0(GvMemBlock, n ? n : 1);
    edge *edges = g_new(edge, 2 * n + 1);
    size_t n_edges = 0;
    for (size_t i = 0; i < s->n_lives; i++) {
        const gt_mem_life *l = &s->lives[i];
        if (!(l->roles & GT_MEM_ROLE_BLOCK))
            continue;
        size_t bi = out->n_blocks++;
        out->blocks[bi] = (GvMemBlock){l->from_ns, l->to_ns, l->alloc_ns, l->bytes, l->address, l->tid,
                                        l->callchain_id, 0, 0};
        edges[n_edges++] = (edge){l->from_ns, bi, FALSE};
        if (l->to_ns != INT64_MAX)
            edges[n_edges++] = (edge){l->to_ns, bi, TRUE};
    }
    qsort(edges, n_edges, sizeof *edges, cmp_edge);
    stacker b = {out->blocks, g_ptr_array_new(), g_array_new(FALSE, FALSE, sizeof(guint)), 0, 0, 0};
    g_ptr_array_set_size(b.bands, (guint)out->n_blocks);
    for (size_t i = 0; i < n_edges; i++) {
        if (edges[i].end)
            stack_remove(&b, edges[i].block, edges[i].t_ns);
        else
            stack_push(&b, edges[i].block, edges[i].t_ns);
        if (b.stack_bytes > out->max_stack_bytes)
            out->max_stack_bytes = b.stack_bytes;
    }
    g_free(edges);
    /* Bands into one array: a block's points are pts[first_pt .. first_pt + n_pts). */
    out->pts = g_new(GvMemPoint, b.n_pts ? b.n_pts : 1);
    for (guint i = 0; i < b.bands->len; i++) {
        GArray *band = g_ptr_array_index(b.bands, i);
        if (!band)
            continue;
        out->blocks[i].first_pt = out->n_pts;
        out->blocks[i].n_pts = band->len;
        memcpy(out->pts + out->n_pts, band->data, band->len * sizeof(GvMemPoint));
        out->n_pts += band->len;
        g_array_unref(band);
    }
    g_ptr_array_unref(b.bands);
    g_array_unref(b.stack);
    out->n_blocks_dropped = b.dropped;
    return out;
}

void gv_memory_free(GvMemory *m)
{
    if (!m)
        return;
    g_free(m->blocks);
    g_free(m->pts);
    g_free(m);
}
