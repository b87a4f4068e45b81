/* export_memviz.c: the trace's allocator history as a PyTorch memory
 * snapshot (what torch.cuda.memory._snapshot() returns, pickled), which
 * torch.cuda._memory_viz and pytorch.org/memory_viz open:
 *   {'segments': [{'device', 'address', 'total_size', 'allocated_size',
 *                  'active_size', 'requested_size', 'stream', 'segment_type',
 *                  'segment_pool_id', 'is_expandable', 'frames',
 *                  'blocks': [{'address', 'size', 'requested_size', 'state',
 *                              'frames'}]}],
 *    'device_traces': [[{'action', 'addr', 'size', 'stream', 'time_us',
 *                        'frames'}]]}
 * Segments and blocks are the state at the end of the trace; the trace
 * entries are every allocation and free (alloc, free_requested,
 * free_completed, segment_alloc, segment_free). Frames are the NVTX ranges
 * that were open when the block was made, innermost first, then its call
 * stack. One device: gtrace's allocator events do not say which.
 *
 * The pickle is protocol 2, written by hand: dicts, lists, a tuple, ints,
 * bools and strings are all a snapshot holds. */
#include "analyze_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- a small pickler ---------------------------------------------------- */

static void p_byte(FILE *f, int b) { fputc(b, f); }

static void p_int(FILE *f, int64_t v)
{
    if (v >= INT32_MIN && v <= INT32_MAX) {
        uint32_t u = (uint32_t)(int32_t)v;
        p_byte(f, 'J'); /* BININT: 4 bytes, little-endian, signed */
        for (int i = 0; i < 4; i++)
            p_byte(f, (u >> (8 * i)) & 0xff);
        return;
    }
    /* LONG1: n bytes of two's complement, little-endian; 8 always suffice
     * for int64, plus one for uint64 addresses with the top bit set. */
    p_byte(f, 0x8a);
    p_byte(f, 8);
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++)
        p_byte(f, (u >> (8 * i)) & 0xff);
}

static void p_uint(FILE *f, uint64_t v)
{
    if (v <= INT64_MAX) {
        p_int(f, (int64_t)v);
        return;
    }
    p_byte(f, 0x8a);
    p_byte(f, 9);
    for (int i = 0; i < 8; i++)
        p_byte(f, (v >> (8 * i)) & 0xff);
    p_byte(f, 0); /* a positive number: a zero sign byte */
}

static void p_str(FILE *f, const char *s)
{
    /* BINUNICODE must be UTF-8: bytes that are not become '?'. */
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)p);
    p_byte(f, 'X');
    for (int i = 0; i < 4; i++)
        p_byte(f, (int)((n >> (8 * i)) & 0xff));
    while (*p) {
        int k = an_utf8_len(p);
        if (k == 0) {
            p_byte(f, '?');
            p++;
        } else {
            fwrite(p, 1, (size_t)k, f);
            p += k;
        }
    }
}

static void p_bool(FILE *f, bool b) { p_byte(f, b ? 0x88 : 0x89); }
static void p_dict_begin(FILE *f) { p_byte(f, '}'); p_byte(f, '('); } /* EMPTY_DICT MARK */
static void p_dict_end(FILE *f) { p_byte(f, 'u'); }                   /* SETITEMS */
static void p_list_begin(FILE *f) { p_byte(f, ']'); p_byte(f, '('); } /* EMPTY_LIST MARK */
static void p_list_end(FILE *f) { p_byte(f, 'e'); }                   /* APPENDS */
static void p_key_int(FILE *f, const char *k, int64_t v) { p_str(f, k); p_int(f, v); }
static void p_key_str(FILE *f, const char *k, const char *v) { p_str(f, k); p_str(f, v); }

/* ---- the snapshot ------------------------------------------------------- */

/* Frames of an allocation: its NVTX ranges innermost first, then its stack. */
static void p_frames(FILE *f, const an_model *m, int64_t tid, int64_t t_ns, int64_t callchain)
{
    p_str(f, "frames");
    p_list_begin(f);
    for (int64_t r = tid ? an_model_range_at(m, tid, t_ns) : -1; r >= 0; r = m->ranges[r].parent) {
        p_dict_begin(f);
        p_key_str(f, "filename", "nvtx");
        p_key_int(f, "line", 0);
        p_key_str(f, "name", an_str(m, m->ranges[r].text));
        p_dict_end(f);
    }
    const gt_frame *fr = NULL;
    size_t n = 0;
    if (callchain && m->t && gt_trace_callchain(m->t, callchain, &fr, &n) == 0) {
        for (size_t i = 0; i < n; i++) {
            p_dict_begin(f);
            p_key_str(f, "filename", an_str(m, fr[i].module));
            p_key_int(f, "line", 0);
            p_key_str(f, "name", *an_str(m, fr[i].symbol) ? an_str(m, fr[i].symbol) : "??");
            p_dict_end(f);
        }
    }
    p_list_end(f);
}

static void p_segments(FILE *f, const an_model *m, const gt_mem_state *st)
{
    p_str(f, "segments");
    p_list_begin(f);
    for (size_t i = 0; i < st->n_segments; i++) {
        const gt_mem_segment *g = &st->segments[i];
        p_dict_begin(f);
        p_key_int(f, "device", 0);
        p_str(f, "address");
        p_uint(f, g->address);
        p_key_int(f, "total_size", g->bytes);
        p_key_int(f, "allocated_size", g->allocated_bytes);
        p_key_int(f, "active_size", g->allocated_bytes);
        p_key_int(f, "requested_size", g->allocated_bytes);
        p_key_int(f, "stream", 0);
        /* PyTorch's small pool holds segments of 2 MiB */
        p_key_str(f, "segment_type", g->bytes <= 2 * 1024 * 1024 ? "small" : "large");
        p_str(f, "segment_pool_id");
        p_int(f, 0);
        p_int(f, 0);
        p_byte(f, 0x86); /* TUPLE2 */
        p_str(f, "is_expandable");
        p_bool(f, false);
        p_str(f, "frames");
        p_list_begin(f);
        p_list_end(f);
        p_str(f, "blocks");
        p_list_begin(f);
        /* blocks in address order, the gaps between them as inactive blocks,
         * as the allocator's own snapshot tiles a segment */
        uint64_t at = g->address;
        for (size_t b = g->first_block; b < g->first_block + g->n_blocks; b++) {
            const gt_mem_block *k = &st->blocks[b];
            if (k->address > at) {
                p_dict_begin(f);
                p_str(f, "address");
                p_uint(f, at);
                p_key_int(f, "size", (int64_t)(k->address - at));
                p_key_int(f, "requested_size", 0);
                p_key_str(f, "state", "inactive");
                p_str(f, "frames");
                p_list_begin(f);
                p_list_end(f);
                p_dict_end(f);
            }
            p_dict_begin(f);
            p_str(f, "address");
            p_uint(f, k->address);
            p_key_int(f, "size", k->bytes);
            p_key_int(f, "requested_size", k->bytes);
            p_key_str(f, "state", "active_allocated");
            p_frames(f, m, k->global_tid, k->alloc_ns, k->callchain_id);
            p_dict_end(f);
            if (k->address + (uint64_t)k->bytes > at)
                at = k->address + (uint64_t)k->bytes;
        }
        uint64_t end = g->address + (uint64_t)g->bytes;
        if (end > at) {
            p_dict_begin(f);
            p_str(f, "address");
            p_uint(f, at);
            p_key_int(f, "size", (int64_t)(end - at));
            p_key_int(f, "requested_size", 0);
            p_key_str(f, "state", "inactive");
            p_str(f, "frames");
            p_list_begin(f);
            p_list_end(f);
            p_dict_end(f);
        }
        p_list_end(f);
        p_dict_end(f);
    }
    p_list_end(f);
}

static void p_entry(FILE *f, const an_model *m, const an_mem_action *a, const char *action)
{
    p_dict_begin(f);
    p_key_str(f, "action", action);
    p_str(f, "addr");
    p_uint(f, a->address);
    p_key_int(f, "size", a->bytes);
    p_key_int(f, "stream", a->stream);
    p_key_int(f, "time_us", a->t_ns / 1000);
    p_frames(f, m, a->tid, a->alloc_ns, a->callchain);
    p_dict_end(f);
}

int gt_export_memviz(gt_trace *t, FILE *f)
{
    an_model *m = NULL;
    gt_mem_state *st = NULL;
    an_mem_action *acts = NULL;
    size_t n_acts = 0;
    int rc;
    if (!t || !f)
        return gt_error_set(GT_ERR_INVALID, "gt_export_memviz: missing argument");
    if ((rc = an_model_load(&m, t)) < 0 || (rc = an_memory_state(&st, m, INT64_MAX)) < 0 ||
        (rc = an_memory_actions(m, &acts, &n_acts)) < 0)
        goto cleanup;
    p_byte(f, 0x80); /* PROTO 2 */
    p_byte(f, 2);
    p_dict_begin(f);
    p_segments(f, m, st);
    p_str(f, "device_traces");
    p_list_begin(f);
    p_list_begin(f);
    for (size_t i = 0; i < n_acts; i++) {
        const an_mem_action *a = &acts[i];
        switch (a->action) {
        case AN_ACT_ALLOC: p_entry(f, m, a, "alloc"); break;
        case AN_ACT_FREE:
            /* one stream, nothing to wait for: the free completes at once */
            p_entry(f, m, a, "free_requested");
            p_entry(f, m, a, "free_completed");
            break;
        case AN_ACT_SEG_ALLOC: p_entry(f, m, a, "segment_alloc"); break;
        case AN_ACT_SEG_FREE: p_entry(f, m, a, "segment_free"); break;
        }
    }
    p_list_end(f);
    p_list_end(f);
    p_dict_end(f);
    p_byte(f, '.'); /* STOP */
    if (ferror(f))
        rc = gt_error_set(GT_ERR_IO, "memviz export: cannot write the output");
cleanup:
    free(acts);
    gt_mem_state_free(st);
    an_model_free(m);
    return rc;
}
