/* test_viewer_fixture.h: a small trace written with gt_writer whose every
 * item the viewer tests know: one GPU stream with three kernels and the two
 * gaps between them (host-wait, then kernel-wait), their launches on one
 * thread, two levels of NVTX ranges, and an allocator heap with two blocks.
 * Times in ns:
 *   NVTX    "step 0" [0, 6 ms)   "forward" [0.4 ms, 3 ms)
 *   API     launch A [0.5, 0.6 ms) corr 1; launch B [3.5, 3.6 ms) corr 2;
 *           launch C [4.1, 4.2 ms) corr 3
 *   stream 7: kernA [1, 2 ms)  kernB [4, 5 ms)  kernC [5.01, 5.5 ms)
 *   gaps:   [2, 4 ms) host-wait (B launched at 3.5 ms); [5, 5.01 ms) kernel-wait
 *   heap 0x1000 of 1 MiB at 0.1 ms; blocks 0x1000 256 KiB at 1 ms (freed at 3 ms),
 *           0x41000 128 KiB at 2 ms (never freed)
 *   marks   "loss scale" at 2.5 ms (payload 65536.0), "skipped step" at 5.2 ms
 *           (payload int32 -3)
 *   sync    cudaStreamSynchronize [5.05, 5.52 ms) corr 4; its stream sync on
 *           stream 7 [5.06, 5.51 ms)
 *
 * fx_write_steps writes a training-like trace for the compare view: NVTX
 * "step k" ranges back to back, each with one launch and one kernel. */
#ifndef TEST_VIEWER_FIXTURE_H
#define TEST_VIEWER_FIXTURE_H

#include <stdio.h>

#include "gt_store.h"

#define FX_PID 4242
#define FX_MS 1000000LL

static inline int fx_write(const char *path)
{
    gt_writer *w = NULL;
    int rc = gt_writer_open(&w, path, GT_WRITE_OVERWRITE);
    if (rc < 0)
        return rc;
    int64_t pid = gt_global_pid(FX_PID), tid = gt_global_tid(FX_PID, FX_PID);
    gt_string_id kn[3], launch, step, fwd, pool;
    gt_writer_intern(w, "kernA", &kn[0]);
    gt_writer_intern(w, "kernB", &kn[1]);
    gt_writer_intern(w, "kernC", &kn[2]);
    gt_writer_intern(w, "cudaLaunchKernel_v7000", &launch);
    gt_writer_intern(w, "step 0", &step);
    gt_writer_intern(w, "forward", &fwd);
    gt_writer_intern(w, "pool", &pool);
    gt_writer_add_process(w, FX_PID, "fixture");
    gt_writer_add_thread_name(w, tid, "main", 0);
    gt_writer_begin(w);
    const int64_t ks[3][2] = {{1 * FX_MS, 2 * FX_MS}, {4 * FX_MS, 5 * FX_MS}, {5 * FX_MS + 10000, 5 * FX_MS + FX_MS / 2}};
    const int64_t as[3] = {FX_MS / 2, 3 * FX_MS + FX_MS / 2, 4 * FX_MS + FX_MS / 10};
    for (int i = 0; i < 3; i++) {
        gt_event e = {.kind = GT_EV_API};
        e.u.api = (gt_api_call){.start_ns = as[i], .end_ns = as[i] + FX_MS / 10, .global_tid = tid,
                                .correlation_id = i + 1, .name = launch, .event_class = GT_API_RUNTIME};
        gt_writer_add(w, &e);
        gt_event k = {.kind = GT_EV_KERNEL};
        k.u.kernel = (gt_kernel){.start_ns = ks[i][0], .end_ns = ks[i][1], .global_pid = pid, .device_id = 0,
                                 .context_id = 1, .stream_id = 7, .correlation_id = i + 1, .demangled_name = kn[i],
                                 .short_name = kn[i], .grid_x = 64, .grid_y = 1, .grid_z = 1, .block_x = 256,
                                 .block_y = 1, .block_z = 1, .registers_per_thread = 32, .launch_type = 1};
        gt_writer_add(w, &k);
    }
    gt_event n = {.kind = GT_EV_NVTX};
    n.u.nvtx = (gt_nvtx){.start_ns = 0, .end_ns = 6 * FX_MS, .event_type = GT_NVTX_PUSHPOP, .text = step,
                         .global_tid = tid};
    gt_writer_add(w, &n);
    n.u.nvtx.start_ns = 4 * FX_MS / 10;
    n.u.nvtx.end_ns = 3 * FX_MS;
    n.u.nvtx.text = fwd;
    gt_writer_add(w, &n);
    gt_string_id scale, skipped, sync_call;
    gt_writer_intern(w, "loss scale", &scale);
    gt_writer_intern(w, "skipped step", &skipped);
    gt_writer_intern(w, "cudaStreamSynchronize_v3020", &sync_call);
    gt_event mk = {.kind = GT_EV_NVTX};
    mk.u.nvtx = (gt_nvtx){.start_ns = 2 * FX_MS + FX_MS / 2, .end_ns = -1, .event_type = GT_NVTX_MARK, .text = scale,
                          .global_tid = tid, .payload_kind = GT_PAYLOAD_DOUBLE};
    mk.u.nvtx.payload.f64 = 65536.0;
    gt_writer_add(w, &mk);
    mk.u.nvtx.start_ns = 5 * FX_MS + FX_MS / 5;
    mk.u.nvtx.text = skipped;
    mk.u.nvtx.payload_kind = GT_PAYLOAD_I32;
    mk.u.nvtx.payload.i32 = -3;
    gt_writer_add(w, &mk);
    gt_event sc = {.kind = GT_EV_API};
    sc.u.api = (gt_api_call){.start_ns = 5 * FX_MS + FX_MS / 20, .end_ns = 5 * FX_MS + 52 * FX_MS / 100,
                             .global_tid = tid, .correlation_id = 4, .name = sync_call, .event_class = GT_API_RUNTIME};
    gt_writer_add(w, &sc);
    gt_event sy = {.kind = GT_EV_SYNC};
    sy.u.sync = (gt_sync){.start_ns = 5 * FX_MS + 6 * FX_MS / 100, .end_ns = 5 * FX_MS + 51 * FX_MS / 100,
                          .global_pid = pid, .device_id = 0, .context_id = 1, .stream_id = 7, .correlation_id = 4,
                          .sync_type = GT_SYNC_STREAM};
    gt_writer_add(w, &sy);
    const struct { int64_t t; int op; uint64_t addr; int64_t bytes; } mem[] = {
        {FX_MS / 10, GT_HEAP_REGISTER, 0x1000, 1 << 20},
        {1 * FX_MS, GT_REGION_REGISTER, 0x1000, 256 << 10},
        {2 * FX_MS, GT_REGION_REGISTER, 0x41000, 128 << 10},
        {3 * FX_MS, GT_REGION_UNREGISTER, 0x1000, 256 << 10},
    };
    for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++) {
        gt_event h = {.kind = GT_EV_HEAP};
        h.u.heap = (gt_heap_event){.start_ns = mem[i].t, .global_tid = tid, .operation = mem[i].op,
                                   .heap_id = 0x1000, .address = mem[i].addr, .bytes = mem[i].bytes,
                                   .heap_usage = 1, .memory_type = 1, .name = mem[i].op == GT_HEAP_REGISTER ? pool : 0};
        gt_writer_add(w, &h);
    }
    if ((rc = gt_writer_commit(w)) < 0) {
        gt_writer_free(w);
        return rc;
    }
    return gt_writer_close(w);
}

/* n steps of step_ns[k] each from t_first_ns on, numbered from first_number. */
static inline int fx_write_steps(const char *path, const int64_t *step_ns, int n, int64_t t_first_ns, int first_number)
{
    gt_writer *w = NULL;
    int rc = gt_writer_open(&w, path, GT_WRITE_OVERWRITE);
    if (rc < 0)
        return rc;
    int64_t pid = gt_global_pid(FX_PID), tid = gt_global_tid(FX_PID, FX_PID);
    gt_string_id kern, launch;
    gt_writer_intern(w, "train_kernel", &kern);
    gt_writer_intern(w, "cudaLaunchKernel_v7000", &launch);
    gt_writer_add_process(w, FX_PID, "steps");
    gt_writer_add_thread_name(w, tid, "main", 0);
    gt_writer_begin(w);
    int64_t t = t_first_ns;
    for (int k = 0; k < n; k++) {
        char name[32];
        snprintf(name, sizeof name, "step %d", first_number + k);
        gt_string_id sn;
        gt_writer_intern(w, name, &sn);
        int64_t d = step_ns[k];
        gt_event e = {.kind = GT_EV_NVTX};
        e.u.nvtx = (gt_nvtx){.start_ns = t, .end_ns = t + d, .event_type = GT_NVTX_PUSHPOP, .text = sn,
                             .global_tid = tid};
        gt_writer_add(w, &e);
        gt_event a = {.kind = GT_EV_API};
        a.u.api = (gt_api_call){.start_ns = t + d / 10, .end_ns = t + d / 10 + 50000, .global_tid = tid,
                                .correlation_id = k + 1, .name = launch, .event_class = GT_API_RUNTIME};
        gt_writer_add(w, &a);
        gt_event kn = {.kind = GT_EV_KERNEL};
        kn.u.kernel = (gt_kernel){.start_ns = t + d / 5, .end_ns = t + d / 2, .global_pid = pid, .device_id = 0,
                                  .context_id = 1, .stream_id = 7, .correlation_id = k + 1, .demangled_name = kern,
                                  .short_name = kern, .grid_x = 1, .grid_y = 1, .grid_z = 1, .block_x = 32,
                                  .block_y = 1, .block_z = 1, .launch_type = 1};
        gt_writer_add(w, &kn);
        t += d;
    }
    if ((rc = gt_writer_commit(w)) < 0) {
        gt_writer_free(w);
        return rc;
    }
    return gt_writer_close(w);
}

#endif /* TEST_VIEWER_FIXTURE_H */
