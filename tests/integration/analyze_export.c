/* analyze_export.c: writes the synthetic trace analyze_export.sh exports
 * with `gtrace export` and `gtrace report`:
 *   analyze_export synth OUT.sqlite   a small trace with steps, kernels, copies,
 *                                     NVTX ranges, a caching allocator's heap
 *                                     and blocks, and names that need escaping
 *   analyze_export memedge OUT.sqlite an allocator at its edges: 1,500 blocks
 *                                     come and go, a heap is destroyed with a
 *                                     block still in it, blocks of a heap that
 *                                     was never registered
 * Exits 0, or 1 with the store's message. */
#include "gt_analyze.h"

#include <stdlib.h>
#include <string.h>

#define US 1000LL
#define MIB (1024LL * 1024)

static int add(gt_writer *w, const gt_event *ev)
{
    return gt_writer_add(w, ev);
}

static int synth(const char *path)
{
    gt_writer *w = NULL;
    int rc = gt_writer_open(&w, path, GT_WRITE_OVERWRITE);
    if (rc < 0)
        return rc;
    const int64_t pid = 777, tid = gt_global_tid(777, 778);
    gt_string_id launch, kname, odd, step_ids[4], fwd, copy_api;
    char buf[32];
    if ((rc = gt_writer_begin(w)) < 0 || (rc = gt_writer_add_process(w, pid, "synth")) < 0 ||
        (rc = gt_writer_add_thread_name(w, tid, "main \"thread\"", 0)) < 0 ||
        (rc = gt_writer_intern(w, "cudaLaunchKernel_v7000", &launch)) < 0 ||
        (rc = gt_writer_intern(w, "void gemm<float, 128>(float const*, \"quoted\", a\\b)", &kname)) < 0 ||
        (rc = gt_writer_intern(w, "tab\there, comma, newline\nend \xe2\x9c\x93", &odd)) < 0 ||
        (rc = gt_writer_intern(w, "forward", &fwd)) < 0 ||
        (rc = gt_writer_intern(w, "cudaMemcpyAsync_v3020", &copy_api)) < 0)
        goto cleanup;
    for (int i = 0; i < 4; i++) {
        snprintf(buf, sizeof buf, "step %d", i);
        if ((rc = gt_writer_intern(w, buf, &step_ids[i])) < 0)
            goto cleanup;
    }
    gt_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = GT_EV_HEAP;
    ev.u.heap = (gt_heap_event){1 * US, tid, GT_HEAP_REGISTER, 1, 0x7f0000000000ULL, 64 * MIB, 1, 2, 0, 0, 0};
    if ((rc = add(w, &ev)) < 0)
        goto cleanup;
    int64_t corr = 0;
    for (int i = 0; i < 4; i++) {
        int64_t t0 = 10 * US + i * 1000 * US;
        memset(&ev, 0, sizeof ev);
        ev.kind = GT_EV_NVTX;
        ev.u.nvtx = (gt_nvtx){.start_ns = t0, .end_ns = t0 + 900 * US, .event_type = GT_NVTX_PUSHPOP,
                              .text = step_ids[i], .global_tid = tid};
        if ((rc = add(w, &ev)) < 0)
            goto cleanup;
        ev.u.nvtx.start_ns = t0 + 10 * US;
        ev.u.nvtx.end_ns = t0 + 500 * US;
        ev.u.nvtx.text = i == 2 ? odd : fwd;
        if ((rc = add(w, &ev)) < 0)
            goto cleanup;
        /* a block per step, freed in the next step; one kept (a leak of sorts) */
        memset(&ev, 0, sizeof ev);
        ev.kind = GT_EV_HEAP;
        ev.u.heap = (gt_heap_event){t0 + 20 * US, tid, GT_REGION_REGISTER, 1, 0x7f0000000000ULL + (uint64_t)i * MIB,
                                    MIB, 1, 2, 0, 0, 0};
        if ((rc = add(w, &ev)) < 0)
            goto cleanup;
        if (i > 0 && i < 3) {
            ev.u.heap.start_ns = t0 + 30 * US;
            ev.u.heap.operation = GT_REGION_UNREGISTER;
            ev.u.heap.address = 0x7f0000000000ULL + (uint64_t)(i - 1) * MIB;
            if ((rc = add(w, &ev)) < 0)
                goto cleanup;
        }
        /* a pageable input copy, then two kernels */
        memset(&ev, 0, sizeof ev);
        ev.kind = GT_EV_API;
        ev.u.api = (gt_api_call){t0 + 40 * US, t0 + 60 * US, tid, ++corr, copy_api, GT_API_RUNTIME, 0, 0};
        if ((rc = add(w, &ev)) < 0)
            goto cleanup;
        memset(&ev, 0, sizeof ev);
        ev.kind = GT_EV_MEMCPY;
        ev.u.memcpy = (gt_memcpy){t0 + 45 * US, t0 + 55 * US, gt_global_pid(pid), 0, 1, 7, corr, MIB,
                                  GT_COPY_HTOD, GT_MEM_PAGEABLE, GT_MEM_DEVICE, 0, 0};
        if ((rc = add(w, &ev)) < 0)
            goto cleanup;
        for (int k = 0; k < 2; k++) {
            memset(&ev, 0, sizeof ev);
            ev.kind = GT_EV_API;
            ev.u.api = (gt_api_call){t0 + 100 * US + k * 10 * US, t0 + 105 * US + k * 10 * US, tid, ++corr, launch,
                                     GT_API_RUNTIME, 0, 0};
            if ((rc = add(w, &ev)) < 0)
                goto cleanup;
            memset(&ev, 0, sizeof ev);
            ev.kind = GT_EV_KERNEL;
            gt_kernel *kk = &ev.u.kernel;
            kk->start_ns = t0 + 200 * US + k * 300 * US;
            kk->end_ns = kk->start_ns + 250 * US;
            kk->global_pid = gt_global_pid(pid);
            kk->context_id = 1;
            kk->stream_id = 7;
            kk->correlation_id = corr;
            kk->demangled_name = kk->short_name = kk->mangled_name = kname;
            kk->grid_x = kk->grid_y = kk->grid_z = kk->block_x = kk->block_y = kk->block_z = 1;
            if ((rc = add(w, &ev)) < 0)
                goto cleanup;
        }
    }
    if ((rc = gt_writer_commit(w)) < 0)
        goto cleanup;
    rc = gt_writer_close(w);
    w = NULL;
cleanup:
    gt_writer_free(w);
    return rc;
}

static int heap_ev(gt_writer *w, int64_t t, int op, uint64_t heap, uint64_t addr, int64_t bytes)
{
    gt_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = GT_EV_HEAP;
    ev.u.heap = (gt_heap_event){t, gt_global_tid(777, 778), op, heap, addr, bytes, 1, 1, 0, 0, 0};
    return gt_writer_add(w, &ev);
}

static int memedge(const char *path)
{
    const uint64_t H1 = 0x7f0000000000ULL, H2 = 0x7f1000000000ULL, LOST = 0x7e0000000000ULL;
    gt_writer *w = NULL;
    int rc = gt_writer_open(&w, path, GT_WRITE_OVERWRITE);
    if (rc < 0)
        return rc;
    int64_t t = 1000;
    if ((rc = gt_writer_begin(w)) < 0 || (rc = gt_writer_add_process(w, 777, "memedge")) < 0 ||
        (rc = heap_ev(w, t++, GT_HEAP_REGISTER, 1, H1, 16 * MIB)) < 0 ||
        (rc = heap_ev(w, t++, GT_HEAP_REGISTER, 2, H2, 8 * MIB)) < 0)
        goto cleanup;
    for (int i = 0; i < 1500 && rc == 0; i++) { /* small blocks come and go */
        uint64_t a = H1 + (uint64_t)(i % 8) * 4096;
        rc = heap_ev(w, t++, GT_REGION_REGISTER, 1, a, 4096);
        if (rc == 0)
            rc = heap_ev(w, t++, GT_REGION_UNREGISTER, 1, a, 0);
    }
    /* a heap destroyed with a block still in it (the handle only, as nvtxMemHeapUnregister) */
    if (rc < 0 || (rc = heap_ev(w, t++, GT_REGION_REGISTER, 2, H2 + MIB, 2 * MIB)) < 0 ||
        (rc = heap_ev(w, t++, GT_HEAP_UNREGISTER, 2, 0, 0)) < 0)
        goto cleanup;
    /* blocks of a heap never registered: one freed, one kept */
    if ((rc = heap_ev(w, t++, GT_REGION_REGISTER, 3, LOST, MIB)) < 0 ||
        (rc = heap_ev(w, t++, GT_REGION_REGISTER, 3, LOST + 4 * MIB, 3 * MIB)) < 0 ||
        (rc = heap_ev(w, t++, GT_REGION_UNREGISTER, 3, LOST, 0)) < 0)
        goto cleanup;
    /* and one live block in the heap that stays */
    if ((rc = heap_ev(w, t++, GT_REGION_REGISTER, 1, H1 + 8 * MIB, MIB)) < 0 || (rc = gt_writer_commit(w)) < 0)
        goto cleanup;
    rc = gt_writer_close(w);
    w = NULL;
cleanup:
    gt_writer_free(w);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "synth") != 0 && strcmp(argv[1], "memedge") != 0)) {
        fprintf(stderr, "usage: %s synth|memedge OUT.sqlite\n", argv[0]);
        return 2;
    }
    if ((strcmp(argv[1], "synth") == 0 ? synth(argv[2]) : memedge(argv[2])) < 0) {
        fprintf(stderr, "analyze_export: %s\n", gt_error_last());
        return 1;
    }
    return 0;
}
