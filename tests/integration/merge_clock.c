/* merge_clock.c: three traces of one run taken on three hosts, written with
 * known clocks, and the check of what `gtrace merge` made of them.
 *
 *   merge_clock write A B C   writes the parts
 *   merge_clock later D       writes B's part of a later run (its zero B's
 *                             plus 4999 us, same pid, same GPU): not a copy
 *   merge_clock check M [4|amended]  checks the merged trace M of A B C (or
 *                             of that and D: 4 processes; or with C
 *                             amended: its drift, 0, corrected); exit 0 when right
 *   merge_clock nostart X     writes a trace without a session start (bad input)
 *   merge_clock amend X       adds C's end-of-run clock to X (gt_trace_add_config),
 *                             as the launcher does to a trace renamed into place;
 *                             exit 0 when added, 3 when X is not a gtrace trace
 *
 * The story: things happen at true wall-clock instants
 *     W_j = U + j * L,  L = 4001 * 4999 ns,  j = 1..N_STEPS,
 * and each host records them on its own clock. A starts 4001000 ns after U
 * and its clock runs slow: wall = utc0_A + t * 4001/4000 (+250 ppm). B
 * starts at U, clock fast: wall = U + t * 4999/5000 (-200 ppm). C starts
 * 2000500 ns after U with no drift, and holds no end-of-run clock (an older
 * trace: offset only). Every instant is a whole nanosecond on every clock,
 * so the merged trace, on A's clock from the earliest zero (U), must hold
 * each event of step j at exactly j * 4999 * 4000 ns in every part, and the
 * session start U. All three use pid 4242: B's and C's must move.
 * Each part has every kind of event the copy moves (kernel, memcpy, memset,
 * API call, sync, NVTX range, GPU memory, heap event, CPU op), callchains,
 * strings interned in another order, a rank, and B counts 5 dropped NVTX
 * events. Each has a GPU 0: A's and C's the same (one UUID: one node), B's
 * another (another node): in the merged trace B's is GPU 1, with its events. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_store.h"

#define N_STEPS 40
#define PID 4242
#define U_NS INT64_C(1700000000000000000)
#define L_NS INT64_C(20000999) /* 4001 * 4999 */
#define MERGED_STEP_NS INT64_C(19996000) /* L * 4000 / 4001 */

typedef struct host {
    int64_t utc0_ns;       /* its zero, on the wall clock */
    int64_t num, den;      /* wall = utc0 + t * num / den */
    int64_t end_ns;        /* end-of-run pair: its time, 0 for none */
    const char *command;
    const char *rank;
    int64_t n_dropped_nvtx;
    const char *gpu_uuid;
} host;

static const host hosts[3] = {
    {U_NS + 4001000, 4001, 4000, 1000000000, "trainer --rank 0", "0", 0, "GPU-0a0a0a0a-node-a"},
    {U_NS, 4999, 5000, 1000000000, "trainer --rank 1", "1", 5, "GPU-0b0b0b0b-node-b"},
    {U_NS + 2000500, 1, 1, 0, "trainer --rank 2", "2", 0, "GPU-0a0a0a0a-node-a"},
};

static int64_t local_time(const host *h, int64_t wall)
{
    return (wall - h->utc0_ns) * h->den / h->num; /* whole by construction */
}

static int check_rc(int rc, const char *what)
{
    if (rc != 0) {
        fprintf(stderr, "merge_clock: %s: %s\n", what, gt_error_last());
        exit(99);
    }
    return rc;
}

static gt_string_id intern(gt_writer *w, const char *s)
{
    gt_string_id id;
    check_rc(gt_writer_intern(w, s, &id), "intern");
    return id;
}

static void write_part(const char *path, int part_no, int64_t later_ns)
{
    host later = hosts[part_no];
    later.utc0_ns += later_ns; /* a multiple of num: every instant stays a whole ns */
    const host *h = &later;
    gt_writer *w;
    check_rc(gt_writer_open(&w, path, 0), path);
    /* strings interned in a different order per part: ids differ */
    if (part_no == 1)
        intern(w, "padding that shifts every id");
    gt_string_id step = intern(w, "step"), op = intern(w, "matmul_forward"), api = intern(w, "cudaLaunchKernel_v7000");
    gt_string_id kname = intern(w, "gemm_kernel"), heap = intern(w, "pool"), fn = intern(w, "alloc_block"),
                 lib = intern(w, "libtrainer.so");
    int64_t gpid = gt_global_pid(PID), gtid = gt_global_tid(PID, PID);
    check_rc(gt_writer_add_process(w, PID, "trainer"), "process");
    check_rc(gt_writer_add_thread_name(w, gtid, "trainer", 0), "thread");
    gt_gpu_info gpu = {.id = 0, .name = "GPU", .uuid = h->gpu_uuid, .sm_count = 1, .compute_major = 9};
    check_rc(gt_writer_add_gpu(w, &gpu), "gpu");
    gt_frame frames[2] = {{.symbol = fn, .module = lib}, {.symbol = op, .module = lib}};
    check_rc(gt_writer_add_callchain(w, 3, frames, 2), "callchain");
    check_rc(gt_writer_set_session_start(w, h->utc0_ns), "session start");
    check_rc(gt_writer_add_config(w, 0, "command_line", h->command), "config");
    check_rc(gt_writer_add_config(w, gpid, "env.OMPI_COMM_WORLD_RANK", h->rank), "config");
    if (h->end_ns) {
        char end[32], utc[32];
        snprintf(end, sizeof end, "%" PRId64, h->end_ns);
        snprintf(utc, sizeof utc, "%" PRId64, h->utc0_ns + h->end_ns * h->num / h->den);
        check_rc(gt_writer_add_config(w, 0, "clock_end_ns", end), "config");
        check_rc(gt_writer_add_config(w, 0, "clock_end_utc_ns", utc), "config");
    }
    if (h->n_dropped_nvtx)
        check_rc(gt_writer_add_dropped(w, gpid, GT_EV_NVTX, h->n_dropped_nvtx), "dropped");
    check_rc(gt_writer_begin(w), "begin");
    for (int64_t j = 1; j <= N_STEPS; j++) {
        int64_t s = local_time(h, U_NS + j * L_NS), e = local_time(h, U_NS + (j + 1) * L_NS);
        gt_event ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = GT_EV_KERNEL;
        ev.u.kernel = (gt_kernel){.start_ns = s, .end_ns = e, .global_pid = gpid, .stream_id = 7,
                                  .correlation_id = j, .demangled_name = kname, .short_name = kname,
                                  .grid_x = 1, .grid_y = 1, .grid_z = 1, .block_x = 1, .block_y = 1, .block_z = 1};
        check_rc(gt_writer_add(w, &ev), "kernel");
        ev.kind = GT_EV_MEMCPY;
        ev.u.memcpy = (gt_memcpy){.start_ns = s, .end_ns = e, .global_pid = gpid, .stream_id = 7, .bytes = 64,
                                  .copy_kind = GT_COPY_HTOD};
        check_rc(gt_writer_add(w, &ev), "memcpy");
        ev.kind = GT_EV_MEMSET;
        ev.u.memset = (gt_memset){.start_ns = s, .end_ns = e, .global_pid = gpid, .stream_id = 7, .bytes = 64};
        check_rc(gt_writer_add(w, &ev), "memset");
        ev.kind = GT_EV_API;
        ev.u.api = (gt_api_call){.start_ns = s, .end_ns = e, .global_tid = gtid, .correlation_id = j, .name = api,
                                 .callchain_id = 3};
        check_rc(gt_writer_add(w, &ev), "api");
        ev.kind = GT_EV_SYNC;
        ev.u.sync = (gt_sync){.start_ns = s, .end_ns = e, .global_pid = gpid, .stream_id = 7,
                              .sync_type = GT_SYNC_STREAM};
        check_rc(gt_writer_add(w, &ev), "sync");
        ev.kind = GT_EV_NVTX;
        ev.u.nvtx = (gt_nvtx){.start_ns = s, .end_ns = e, .event_type = GT_NVTX_PUSHPOP, .text = step,
                              .global_tid = gtid};
        check_rc(gt_writer_add(w, &ev), "nvtx");
        ev.kind = GT_EV_GPU_MEMORY;
        ev.u.gpu_memory = (gt_gpu_memory){.start_ns = s, .global_pid = gpid, .address = 0x1000 * (uint64_t)j,
                                          .bytes = 4096, .mem_kind = GT_MEM_DEVICE, .callchain_id = 3};
        check_rc(gt_writer_add(w, &ev), "gpu memory");
        ev.kind = GT_EV_HEAP;
        ev.u.heap = (gt_heap_event){.start_ns = s, .global_tid = gtid, .operation = GT_REGION_REGISTER,
                                    .heap_id = 1, .address = 0x1000 * (uint64_t)j, .bytes = 512, .name = heap,
                                    .callchain_id = 3};
        check_rc(gt_writer_add(w, &ev), "heap");
        ev.kind = GT_EV_CPU_OP;
        ev.u.cpu_op = (gt_cpu_op){.start_ns = s, .end_ns = e, .global_tid = gtid, .name = op, .stream_id = 1};
        check_rc(gt_writer_add(w, &ev), "cpu op");
    }
    check_rc(gt_writer_commit(w), "commit");
    check_rc(gt_writer_close(w), "close");
}

static int n_fail;

static void expect(int ok, const char *what, long long got)
{
    if (!ok) {
        printf("FAIL: %s (got %lld)\n", what, got);
        n_fail++;
    }
}

/* Every event of a kind: step j of each of the three processes, at exactly
 * j * MERGED_STEP_NS, lasting one step. */
static void check_kind(gt_trace *t, gt_event_kind kind, const int64_t *pids, int n_pids)
{
    const int32_t devices[4] = {0, 1, 0, 1}; /* of each process: A's and C's GPU, B's */
    int seen[4][N_STEPS + 1];
    memset(seen, 0, sizeof seen);
    gt_iter *it;
    check_rc(gt_iter_new(&it, t, kind, INT64_MIN, INT64_MAX), "iterate");
    gt_event ev;
    int more;
    char what[128];
    while ((more = gt_iter_next(it, &ev)) == 1) {
        int64_t s = gt_event_start(&ev), e = gt_event_end(&ev), id;
        int32_t device = -1;
        switch (kind) {
        case GT_EV_API: id = ev.u.api.global_tid; break;
        case GT_EV_NVTX: id = ev.u.nvtx.global_tid; break;
        case GT_EV_HEAP: id = ev.u.heap.global_tid; break;
        case GT_EV_CPU_OP: id = ev.u.cpu_op.global_tid; break;
        case GT_EV_KERNEL: id = ev.u.kernel.global_pid, device = ev.u.kernel.device_id; break;
        case GT_EV_MEMCPY: id = ev.u.memcpy.global_pid, device = ev.u.memcpy.device_id; break;
        case GT_EV_MEMSET: id = ev.u.memset.global_pid, device = ev.u.memset.device_id; break;
        case GT_EV_SYNC: id = ev.u.sync.global_pid, device = ev.u.sync.device_id; break;
        default: id = ev.u.gpu_memory.global_pid, device = ev.u.gpu_memory.device_id; break;
        }
        int p = 0;
        while (p < n_pids && pids[p] != gt_pid_of(id))
            p++;
        int64_t j = s / MERGED_STEP_NS;
        snprintf(what, sizeof what, "%s at %lld ns: a part's process, at a whole step", gt_event_kind_name(kind),
                 (long long)s);
        expect(p < n_pids && s % MERGED_STEP_NS == 0 && j >= 1 && j <= N_STEPS, what, gt_pid_of(id));
        if (!(p < n_pids && s % MERGED_STEP_NS == 0 && j >= 1 && j <= N_STEPS))
            continue;
        seen[p][j]++;
        snprintf(what, sizeof what, "%s of step %lld of pid %lld lasts one step", gt_event_kind_name(kind),
                 (long long)j, (long long)pids[p]);
        expect(e == s || e - s == MERGED_STEP_NS, what, e - s);
        snprintf(what, sizeof what, "%s of pid %lld on its part's GPU", gt_event_kind_name(kind), (long long)pids[p]);
        expect(device == -1 || device == devices[p], what, device);
        if (kind == GT_EV_API)
            expect(!strcmp(gt_trace_string(t, ev.u.api.name), "cudaLaunchKernel_v7000"), "API name", 0);
        if (kind == GT_EV_NVTX)
            expect(!strcmp(gt_trace_string(t, ev.u.nvtx.text), "step"), "NVTX text", 0);
        if (kind == GT_EV_CPU_OP)
            expect(!strcmp(gt_trace_string(t, ev.u.cpu_op.name), "matmul_forward"), "CPU op name", 0);
        int64_t chain = kind == GT_EV_API ? ev.u.api.callchain_id : kind == GT_EV_HEAP ? ev.u.heap.callchain_id
                      : kind == GT_EV_GPU_MEMORY ? ev.u.gpu_memory.callchain_id : -1;
        if (chain >= 0) {
            const gt_frame *f;
            size_t n = 0;
            int ok = chain != 0 && gt_trace_callchain(t, chain, &f, &n) == 0 && n == 2 &&
                     !strcmp(gt_trace_string(t, f[0].symbol), "alloc_block") &&
                     !strcmp(gt_trace_string(t, f[1].module), "libtrainer.so");
            expect(ok, "the callchain of an event, with its frames' strings", chain);
        }
    }
    expect(more == 0, "iteration to the end", more);
    gt_iter_free(it);
    for (int p = 0; p < n_pids; p++)
        for (int j = 1; j <= N_STEPS; j++) {
            snprintf(what, sizeof what, "%s of step %d of pid %lld once", gt_event_kind_name(kind), j,
                     (long long)pids[p]);
            expect(seen[p][j] == 1, what, seen[p][j]);
        }
}

static int check(const char *path, int n_pids, bool c_amended)
{
    gt_trace *t;
    check_rc(gt_trace_open(&t, path, 0), path);
    int64_t start = 0;
    expect(gt_trace_session_start(t, &start) == 0 && start == U_NS, "session start: the earliest part's zero",
           start);
    /* A keeps pid 4242; B's and C's move to free ids from the top (and D's,
     * merged into A B C, to the next). */
    const int64_t pids[4] = {PID, 0xffffff, 0xfffffe, 0xfffffd};
    const int ranks[4] = {0, 1, 2, 1};
    size_t n;
    const gt_process *procs = gt_trace_processes(t, &n);
    expect(n == (size_t)n_pids, "a process per part", (long long)n);
    for (size_t i = 0; i < n && i < 4; i++) {
        int p = 0;
        while (p < n_pids && pids[p] != procs[i].pid)
            p++;
        expect(p < n_pids && procs[i].rank == ranks[p], "each process with its part's rank", procs[i].pid);
    }
    for (int k = 0; k < GT_EV_N_KINDS; k++)
        check_kind(t, (gt_event_kind)k, pids, n_pids);
    const gt_gpu_info *gpus = gt_trace_gpus(t, &n);
    expect(n == 2 && gpus[0].id != gpus[1].id && strcmp(gpus[0].uuid, gpus[1].uuid) &&
           !strcmp(gpus[gpus[0].id == 1 ? 0 : 1].uuid, hosts[1].gpu_uuid), "two GPUs, B's as GPU 1", (long long)n);
    int64_t dropped = 0;
    expect(gt_trace_dropped(t, GT_EV_NVTX, &dropped) == 0 && dropped == 5 * (n_pids - 2), "B's 5 dropped NVTX events",
           dropped);
    if (n_pids == 4) {
        gt_trace_free(t);
        if (n_fail == 0)
            printf("ok: merged again, every event of the 4 processes at its step, exactly\n");
        return n_fail ? 1 : 0;
    }
    const char *v = gt_trace_meta(t, "part.2.command_line");
    expect(v && !strcmp(v, "trainer --rank 1"), "part 2's command line kept", 0);
    v = gt_trace_meta(t, "part.1.drift_ppb");
    expect(v && !strcmp(v, "250000"), "part 1's drift: +250 ppm", v ? atoll(v) : -1);
    v = gt_trace_meta(t, "part.2.drift_ppb");
    expect(v && !strcmp(v, "-200000"), "part 2's drift: -200 ppm", v ? atoll(v) : -1);
    v = gt_trace_meta(t, "part.3.drift_ppb");
    if (c_amended)
        expect(v && !strcmp(v, "0"), "part 3: its drift, 0", v ? atoll(v) : -1);
    else
        expect(v == NULL, "part 3: offset only", 0);
    /* The merged trace's own end pair is A's: merging it again stays exact. */
    v = gt_trace_meta(t, "clock_end_ns");
    int64_t a_end = (hosts[0].utc0_ns - U_NS) * 4000 / 4001 + hosts[0].end_ns;
    expect(v && atoll(v) == a_end, "the merged trace's end-of-run clock", v ? atoll(v) : -1);
    gt_trace_free(t);
    if (n_fail == 0)
        printf("ok: every event of every kind of the 3 parts at its step on the merged clock, exactly\n");
    return n_fail ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "write")) {
        for (int i = 0; i < 3; i++)
            write_part(argv[2 + i], i, 0);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "later")) {
        write_part(argv[2], 1, INT64_C(4999) * 1000);
        return 0;
    }
    if (argc >= 3 && argc <= 4 && !strcmp(argv[1], "check")) {
        const char *how = argc == 4 ? argv[3] : "";
        if (*how && strcmp(how, "4") && strcmp(how, "amended"))
            return 2;
        return check(argv[2], !strcmp(how, "4") ? 4 : 3, !strcmp(how, "amended"));
    }
    if (argc == 3 && !strcmp(argv[1], "amend")) {
        const char *const keys[] = {"clock_end_ns", "clock_end_utc_ns"};
        const char *const values[] = {"1000000000", "1700000001002000500"}; /* C's clock: no drift */
        int rc = gt_trace_add_config(argv[2], 0, keys, values, 2);
        if (rc != 0)
            fprintf(stderr, "merge_clock: %s\n", gt_error_last());
        return rc == 0 ? 0 : rc == GT_ERR_NOTTRACE ? 3 : 1;
    }
    if (argc == 3 && !strcmp(argv[1], "nostart")) {
        gt_writer *w;
        check_rc(gt_writer_open(&w, argv[2], 0), argv[2]);
        check_rc(gt_writer_add_process(w, PID, "trainer"), "process");
        check_rc(gt_writer_close(w), "close");
        return 0;
    }
    fprintf(stderr, "usage: merge_clock write A B C | later D | check MERGED [4|amended] | nostart TRACE | amend TRACE\n");
    return 2;
}
