/* test_analyze_edges.c: the memory diagnostics and the steps where real
 * traces differ from tidy ones: a process with both cudaMalloc'd buffers and
 * a caching allocator's blocks; the allocator state asked for at the very
 * nanosecond of a free and of an allocation; a block freed exactly when its
 * step ends; steps numbered from a resumed run ("step 10"), with a
 * framework's own "ProfilerStep#N" inside each; a cache that fills during
 * the first steps only (warm-up, no leak) beside two real leaks; an address
 * freed and taken again on one nanosecond; two threads with as many step
 * ranges; the Chrome export of a process with cudaMalloc only. */
#include "analyze_fixture.h"

#include <string.h>

#define HEAP1 0x10000000ULL
#define DEVBUF 0x7f0000000000ULL

/* One process, both levels: the allocator's 64 MiB heap with an 8 MiB block
 * in it, and a 100 MiB cudaMalloc outside the allocator (a communication
 * library's buffer). A 4 MiB block is made at 3 ms and freed at 5 ms. */
static gt_trace *mixed_trace(void)
{
    fx f;
    fx_open(&f, "mixed.sqlite");
    fx_range(&f, 0, 1 * MS, "init");
    fx_heap(&f, 100 * US, GT_HEAP_REGISTER, 1, HEAP1, 64 * MIB);
    fx_heap(&f, 200 * US, GT_REGION_REGISTER, 1, HEAP1, 8 * MIB);
    fx_devmem(&f, 2 * MS, GT_DEVMEM_ALLOC, DEVBUF, 100 * MIB);
    fx_heap(&f, 3 * MS, GT_REGION_REGISTER, 1, HEAP1 + 0x800000, 4 * MIB);
    fx_heap(&f, 5 * MS, GT_REGION_UNREGISTER, 1, HEAP1 + 0x800000, 0);
    return fx_close(&f);
}

/* The allocator's numbers count its own blocks and heaps; a cudaMalloc
 * beside them is counted as a device allocation, in neither. */
static void test_analyze_edges__device_beside_allocator(void)
{
    gt_trace *t = mixed_trace();
    gt_report *r = fx_report(t, NULL);
    const gt_memory *m = &r->memory;
    CU_ASSERT_TRUE(m->has_blocks);
    CU_ASSERT_TRUE(m->has_segments);
    CU_ASSERT_TRUE(m->has_device);
    CU_ASSERT_EQUAL(m->peak_allocated_bytes, 12 * MIB);
    CU_ASSERT_EQUAL(m->peak_allocated_ns, 3 * MS);
    CU_ASSERT_EQUAL(m->peak_reserved_bytes, 64 * MIB);
    CU_ASSERT_EQUAL(m->peak_reserved_ns, 100 * US);
    CU_ASSERT_EQUAL(m->end_allocated_bytes, 8 * MIB);
    CU_ASSERT_EQUAL(m->end_reserved_bytes, 64 * MIB);
    CU_ASSERT_EQUAL(m->n_dev_allocs, 1);
    CU_ASSERT_EQUAL(m->n_block_allocs, 2);
    gt_report_free(r);

    gt_mem_state *s = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at(&s, t, -1, 4 * MS), 0);
    CU_ASSERT_EQUAL(s->allocated_bytes, 12 * MIB);
    CU_ASSERT_EQUAL(s->reserved_bytes, 64 * MIB);
    CU_ASSERT_EQUAL(s->n_segments, 1);
    CU_ASSERT_EQUAL(s->n_blocks, 2);
    CU_ASSERT_EQUAL(s->n_unplaced, 0);
    gt_mem_state_free(s);
    gt_trace_free(t);
}

/* At the nanosecond of a free the block is gone; at the nanosecond of an
 * allocation it is there (the state after that instant's events). */
static void test_analyze_edges__state_on_the_nanosecond(void)
{
    gt_trace *t = mixed_trace();
    gt_mem_state *s = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at(&s, t, -1, 5 * MS), 0);
    CU_ASSERT_EQUAL(s->allocated_bytes, 8 * MIB);
    CU_ASSERT_EQUAL(s->n_blocks, 1);
    gt_mem_state_free(s);
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at(&s, t, -1, 5 * MS - 1), 0);
    CU_ASSERT_EQUAL(s->allocated_bytes, 12 * MIB);
    CU_ASSERT_EQUAL(s->n_blocks, 2);
    gt_mem_state_free(s);
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at(&s, t, -1, 3 * MS), 0);
    CU_ASSERT_EQUAL(s->allocated_bytes, 12 * MIB);
    gt_mem_state_free(s);
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at(&s, t, -1, 3 * MS - 1), 0);
    CU_ASSERT_EQUAL(s->allocated_bytes, 8 * MIB);
    gt_mem_state_free(s);
    gt_trace_free(t);
}

/* torch.cuda.empty_cache() before the peak: a 32 MiB heap given back at
 * 1 ms, then 40 MiB of blocks at 2 ms in the 64 MiB heap left. The
 * fragmentation at the peak is of what was reserved then, not of the
 * larger amount reserved earlier. */
static void test_analyze_edges__empty_cache_before_peak(void)
{
    fx f;
    fx_open(&f, "emptycache.sqlite");
    fx_heap(&f, 100 * US, GT_HEAP_REGISTER, 1, HEAP1, 64 * MIB);
    fx_heap(&f, 150 * US, GT_HEAP_REGISTER, 2, HEAP1 + 0x8000000, 32 * MIB);
    fx_heap(&f, 200 * US, GT_REGION_REGISTER, 2, HEAP1 + 0x8000000, 1 * MIB);
    fx_heap(&f, 900 * US, GT_REGION_UNREGISTER, 2, HEAP1 + 0x8000000, 0);
    fx_heap(&f, 1 * MS, GT_HEAP_UNREGISTER, 2, HEAP1 + 0x8000000, 0);
    fx_heap(&f, 2 * MS, GT_REGION_REGISTER, 1, HEAP1, 40 * MIB);
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    const gt_memory *m = &r->memory;
    CU_ASSERT_EQUAL(m->peak_reserved_bytes, 96 * MIB);
    CU_ASSERT_EQUAL(m->peak_reserved_ns, 150 * US);
    CU_ASSERT_EQUAL(m->peak_allocated_bytes, 40 * MIB);
    CU_ASSERT_EQUAL(m->peak_allocated_ns, 2 * MS);
    CU_ASSERT_EQUAL(m->end_reserved_bytes, 64 * MIB);
    CU_ASSERT_DOUBLE_EQUAL(m->fragmentation, 24.0 / 64.0, 1e-9);
    gt_report_free(r);
    gt_trace_free(t);
}

/* A block just past its heap's last byte is in no segment. */
static void test_analyze_edges__block_past_heap_end(void)
{
    fx f;
    fx_open(&f, "pastend.sqlite");
    fx_heap(&f, 100 * US, GT_HEAP_REGISTER, 1, HEAP1, 1 * MIB);
    fx_heap(&f, 200 * US, GT_REGION_REGISTER, 1, HEAP1 + 1 * MIB - 4096, 4096);
    fx_heap(&f, 300 * US, GT_REGION_REGISTER, 1, HEAP1 + 1 * MIB, 4096);
    gt_trace *t = fx_close(&f);
    gt_mem_state *s = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at(&s, t, -1, 1 * MS), 0);
    CU_ASSERT_EQUAL(s->n_blocks, 2);
    CU_ASSERT_EQUAL_FATAL(s->n_segments, 1);
    CU_ASSERT_EQUAL(s->segments[0].n_blocks, 1);
    CU_ASSERT_EQUAL(s->segments[0].allocated_bytes, 4096);
    CU_ASSERT_EQUAL(s->n_unplaced, 1);
    gt_mem_state_free(s);
    gt_trace_free(t);
}

/* Eight 10 ms steps of a resumed run, "step 10" to "step 17", each holding
 * the framework's own "ProfilerStep#N". Per step: 4 MiB of activations made
 * at 1.5 ms and freed exactly when the step ends; 64 KiB appended to a
 * "kv_cache" (every step) and 4 KiB to "cache_append" (not in steps 12 and
 * 15), never freed: two leaks; 16 KiB of "autotune" entries in the first
 * three steps only: a warm-up, no leak. Step 13 holds 20 MiB in "staging"
 * for 7 ms (too long for a spike); step 14 takes 40 MiB for 0.5 ms in
 * "attention": the spike. Each step starts with a 1 MiB copy to the device,
 * its call and the copy both on the step's first nanosecond, and ends with
 * a short kernel, "gemm" in odd steps and "softmax" in even ones. Step 15
 * prefetches 60 MiB on its first nanosecond, the one step 14's activations
 * are freed on, and keeps it 9 ms. Step 16 reallocates a 2 MiB buffer: the
 * new one made at 4 ms on the nanosecond the old one is freed; freed at 8 ms
 * and another 2 MiB made at 8.5 ms: the same bytes as its peak, later.
 * After the loop, on the nanosecond step 17 ends, one more kv_cache entry
 * (the run's final save): allocated in no step. */
static gt_trace *resumed_trace(void)
{
    fx f;
    fx_open(&f, "resumed.sqlite");
    fx_heap(&f, 1 * US, GT_HEAP_REGISTER, 1, HEAP1, 256 * MIB);
    fx_range(&f, 0, 1 * MS, "init");
    fx_heap(&f, 500 * US, GT_REGION_REGISTER, 1, HEAP1, 8 * MIB);
    for (int i = 0; i < 8; i++) {
        char name[32];
        int64_t t0 = 2 * MS + i * 10 * MS;
        uint64_t base = HEAP1 + 0x1000000;
        snprintf(name, sizeof name, "step %d", 10 + i);
        fx_range(&f, t0, t0 + 10 * MS, name);
        snprintf(name, sizeof name, "ProfilerStep#%d", 10 + i);
        fx_range(&f, t0 + 10 * US, t0 + 10 * MS - 10 * US, name);
        fx_copy(&f, t0, t0 + 30 * US, "cudaMemcpyAsync_v3020", t0, t0 + 200 * US, GT_COPY_HTOD, GT_MEM_PINNED, 1 * MIB);
        fx_kernel(&f, t0 + 20 * US, t0 + 300 * US, t0 + 9 * MS, "k");
        fx_kernel(&f, t0 + 9 * MS, t0 + 9100 * US, t0 + 9600 * US, i % 2 ? "gemm" : "softmax");
        fx_range(&f, t0 + 1 * MS, t0 + 2 * MS, "forward");
        fx_heap(&f, t0 + 1500 * US, GT_REGION_REGISTER, 1, HEAP1 + 0x800000, 4 * MIB);
        fx_heap(&f, t0 + 10 * MS, GT_REGION_UNREGISTER, 1, HEAP1 + 0x800000, 0);
        fx_range(&f, t0 + 3 * MS, t0 + 4 * MS, "kv_cache");
        fx_heap(&f, t0 + 3500 * US, GT_REGION_REGISTER, 1, base + (uint64_t)i * 0x10000, 64 * 1024);
        if (i != 2 && i != 5) {
            fx_range(&f, t0 + 5 * MS, t0 + 6 * MS, "cache_append");
            fx_heap(&f, t0 + 5500 * US, GT_REGION_REGISTER, 1, base + 0x100000 + (uint64_t)i * 0x1000, 4096);
        }
        if (i < 3) {
            fx_range(&f, t0 + 6 * MS, t0 + 7 * MS, "autotune");
            fx_heap(&f, t0 + 6500 * US, GT_REGION_REGISTER, 1, base + 0x200000 + (uint64_t)i * 0x4000, 16 * 1024);
        }
        if (i == 3) {
            fx_range(&f, t0 + 2 * MS, t0 + 9500 * US, "staging");
            fx_heap(&f, t0 + 2100 * US, GT_REGION_REGISTER, 1, HEAP1 + 0x2000000, 20 * MIB);
            fx_heap(&f, t0 + 9100 * US, GT_REGION_UNREGISTER, 1, HEAP1 + 0x2000000, 0);
        }
        if (i == 5) {
            fx_heap(&f, t0, GT_REGION_REGISTER, 1, HEAP1 + 0x8000000, 60 * MIB);
            fx_heap(&f, t0 + 9 * MS, GT_REGION_UNREGISTER, 1, HEAP1 + 0x8000000, 0);
        }
        if (i == 6) {
            fx_heap(&f, t0 + 2 * MS, GT_REGION_REGISTER, 1, HEAP1 + 0x6000000, 2 * MIB);
            fx_heap(&f, t0 + 4 * MS, GT_REGION_REGISTER, 1, HEAP1 + 0x6200000, 2 * MIB);
            fx_heap(&f, t0 + 4 * MS, GT_REGION_UNREGISTER, 1, HEAP1 + 0x6000000, 0);
            fx_heap(&f, t0 + 8 * MS, GT_REGION_UNREGISTER, 1, HEAP1 + 0x6200000, 0);
            fx_heap(&f, t0 + 8500 * US, GT_REGION_REGISTER, 1, HEAP1 + 0x6400000, 2 * MIB);
            fx_heap(&f, t0 + 9500 * US, GT_REGION_UNREGISTER, 1, HEAP1 + 0x6400000, 0);
        }
        if (i == 4) {
            fx_range(&f, t0 + 7 * MS, t0 + 8 * MS, "attention");
            fx_heap(&f, t0 + 7100 * US, GT_REGION_REGISTER, 1, HEAP1 + 0x4000000, 40 * MIB);
            fx_heap(&f, t0 + 7600 * US, GT_REGION_UNREGISTER, 1, HEAP1 + 0x4000000, 0);
        }
    }
    fx_range(&f, 82 * MS, 83 * MS, "kv_cache");
    fx_heap(&f, 82 * MS, GT_REGION_REGISTER, 1, HEAP1 + 0x1000000 + 8 * 0x10000, 64 * 1024);
    return fx_close(&f);
}

/* The loop's steps, not the framework's ranges nested in them, with their
 * own numbers; a step's end state has freed what was freed at its end. */
static void test_analyze_edges__resumed_steps(void)
{
    gt_trace *t = resumed_trace();
    gt_report *r = fx_report(t, NULL);
    CU_ASSERT_EQUAL_FATAL(r->n_steps, 8);
    for (size_t i = 0; i < 8; i++) {
        CU_ASSERT_EQUAL(r->steps[i].number, 10 + (int64_t)i);
        CU_ASSERT_EQUAL(r->steps[i].start_ns, 2 * MS + (int64_t)i * 10 * MS);
        CU_ASSERT_EQUAL(r->steps[i].end_ns, 12 * MS + (int64_t)i * 10 * MS);
    }
    /* step 10's end: weights, one kv_cache, one cache_append and one
     * autotune entry, and its activations: freed at its end, that is at the
     * first nanosecond of step 11, whose frees count that one */
    CU_ASSERT_EQUAL(r->steps[0].allocated_end_bytes, 8 * MIB + 4 * MIB + 64 * 1024 + 4096 + 16 * 1024);
    CU_ASSERT_EQUAL(r->steps[0].n_block_frees, 0);
    CU_ASSERT_EQUAL(r->steps[1].n_block_frees, 1);
    CU_ASSERT_EQUAL(r->steps[7].allocated_end_bytes, 12 * MIB + 8 * 64 * 1024 + 6 * 4096 + 3 * 16 * 1024);
    gt_report_free(r);
    gt_trace_free(t);
}

static void test_analyze_edges__leaks_beside_warm_up(void)
{
    gt_trace *t = resumed_trace();
    gt_report *r = fx_report(t, NULL);
    const gt_memory *m = &r->memory;
    CU_ASSERT_EQUAL_FATAL(m->n_leaks, 2); /* not the weights, not autotune */
    CU_ASSERT_STRING_EQUAL(m->leaks[0].origin, "step 10 > ProfilerStep#10 > kv_cache");
    CU_ASSERT_EQUAL(m->leaks[0].alive_bytes, 9 * 64 * 1024);
    CU_ASSERT_EQUAL(m->leaks[0].n_steps_grew, 8);
    /* the entry made as the last step ended is not one of a step's */
    CU_ASSERT_DOUBLE_EQUAL(m->leaks[0].bytes_per_step, 64 * 1024.0, 1e-9);
    CU_ASSERT_STRING_EQUAL(m->leaks[1].origin, "step 10 > ProfilerStep#10 > cache_append");
    CU_ASSERT_EQUAL(m->leaks[1].n_alive, 6);
    CU_ASSERT_EQUAL(m->leaks[1].n_steps_grew, 6);
    /* over the eight steps, not over the six it grew in */
    CU_ASSERT_DOUBLE_EQUAL(m->leaks[1].bytes_per_step, 6 * 4096.0 / 8, 1e-9);
    /* the process's own list, biggest first too */
    CU_ASSERT_EQUAL_FATAL(m->n_procs, 1);
    CU_ASSERT_EQUAL_FATAL(m->procs[0].n_leaks, 2);
    CU_ASSERT_EQUAL(m->procs[0].leaks[0].alive_bytes, 9 * 64 * 1024);
    CU_ASSERT_EQUAL(m->procs[0].leaks[1].alive_bytes, 6 * 4096);

    CU_ASSERT_EQUAL_FATAL(m->n_spikes, 1); /* not "staging": it lived most of its step */
    CU_ASSERT_EQUAL(m->spikes[0].bytes, 40 * MIB);
    CU_ASSERT_EQUAL(m->spikes[0].step, 14);
    CU_ASSERT_EQUAL(m->spikes[0].end_ns - m->spikes[0].start_ns, 500 * US);
    gt_report_free(r);
    gt_trace_free(t);
}

/* Step names other programs write: "train_step" with no number (numbered
 * 0, 1, 2 in order), "iteration-7" and "step[3]" (the number after a
 * separator). */
static void test_analyze_edges__step_names(void)
{
    static const char *const names[][3] = {
        {"train_step", "train_step", "train_step"},
        {"iteration-7", "iteration-8", "iteration-9"},
        {"step[3]", "step[4]", "step[5]"},
    };
    static const int64_t first[] = {0, 7, 3};
    for (int k = 0; k < 3; k++) {
        fx f;
        fx_open(&f, "stepnames.sqlite");
        for (int i = 0; i < 3; i++) {
            int64_t t0 = 1 * MS + i * 5 * MS;
            fx_range(&f, t0, t0 + 5 * MS, names[k][i]);
            fx_kernel(&f, t0 + 10 * US, t0 + 100 * US, t0 + 4 * MS, "k");
        }
        gt_trace *t = fx_close(&f);
        gt_report *r = fx_report(t, NULL);
        CU_ASSERT_EQUAL_FATAL(r->n_steps, 3);
        for (int i = 0; i < 3; i++) {
            CU_ASSERT_EQUAL(r->steps[i].number, first[k] + i);
            CU_ASSERT_EQUAL(r->steps[i].start_ns, 1 * MS + i * 5 * MS);
        }
        gt_report_free(r);
        gt_trace_free(t);
    }
}

/* A CPU-only trace (CPU ops are the device): gaps of 20 us (under HTA's
 * 30 us: waiting on the previous op), then 100, 50 and 200 us (the host
 * was late). --top 2 lists the two longest. */
static void test_analyze_edges__cpu_gaps(void)
{
    static const int64_t gap_us[] = {20, 100, 50, 200};
    fx f;
    fx_open(&f, "cpugaps.sqlite");
    int64_t t = 0;
    for (int i = 0; i < 5; i++) {
        fx_cpu_op(&f, t, t + 1 * MS, "aten::mm");
        t += 1 * MS + (i < 4 ? gap_us[i] * US : 0);
    }
    gt_trace *tr = fx_close(&f);
    gt_report_options opt;
    gt_report_options_init(&opt);
    opt.top_n = 2;
    gt_report *r = fx_report(tr, &opt);
    CU_ASSERT_TRUE(r->cpu_timeline);
    CU_ASSERT_EQUAL(r->gaps.n_gaps, 4);
    CU_ASSERT_EQUAL(r->gaps.n_by_cause[GT_GAP_KERNEL_WAIT], 1);
    CU_ASSERT_EQUAL(r->gaps.n_by_cause[GT_GAP_HOST_WAIT], 3);
    CU_ASSERT_EQUAL(r->gaps.idle_by_cause_ns[GT_GAP_HOST_WAIT], 350 * US);
    CU_ASSERT_EQUAL_FATAL(r->gaps.n_longest, 2);
    int64_t a = r->gaps.longest[0].end_ns - r->gaps.longest[0].start_ns;
    int64_t b = r->gaps.longest[1].end_ns - r->gaps.longest[1].start_ns;
    CU_ASSERT_EQUAL(a > b ? a : b, 200 * US);
    CU_ASSERT_EQUAL(a > b ? b : a, 100 * US);
    gt_report_free(r);
    gt_trace_free(tr);
}

static const gt_name_row *find_row(const gt_name_row *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return &v[i];
    return NULL;
}

/* gtrace report --steps 11:12 --top 2: what starts on the window's end (the
 * first nanosecond of step 13) is not in it; the top rows are the top 2. */
static void test_analyze_edges__report_window_on_step_edges(void)
{
    gt_trace *t = resumed_trace();
    gt_report_options opt;
    gt_report_options_init(&opt);
    opt.step_first = 11;
    opt.step_last = 12;
    opt.top_n = 2;
    gt_report *r = fx_report(t, &opt);
    CU_ASSERT_EQUAL_FATAL(r->n_steps, 2);
    CU_ASSERT_EQUAL(r->start_ns, 12 * MS);
    CU_ASSERT_EQUAL(r->end_ns, 32 * MS);
    const gt_copy_row *htod = NULL;
    for (size_t i = 0; i < r->n_copies; i++)
        if (r->copies[i].copy_kind == GT_COPY_HTOD)
            htod = &r->copies[i];
    CU_ASSERT_PTR_NOT_NULL_FATAL(htod);
    CU_ASSERT_EQUAL(htod->n, 2);
    CU_ASSERT_EQUAL(htod->bytes, 2 * MIB);
    CU_ASSERT_EQUAL(htod->n_pinned, 2);
    CU_ASSERT_EQUAL(htod->n_pageable, 0);
    const gt_name_row *copy_call = find_row(r->apis, r->n_apis, "cudaMemcpyAsync");
    CU_ASSERT_PTR_NOT_NULL_FATAL(copy_call);
    CU_ASSERT_EQUAL(copy_call->d.n, 2);
    CU_ASSERT_EQUAL(copy_call->d.total_ns, 2 * 30 * US);
    /* kernels "k" (8.7 ms a step), "gemm" (step 11), "softmax" (step 12) */
    CU_ASSERT_EQUAL(r->n_kernel_names, 3);
    CU_ASSERT_EQUAL_FATAL(r->n_kernels, 2);
    CU_ASSERT_STRING_EQUAL(r->kernels[0].name, "k");
    CU_ASSERT_EQUAL(r->kernels[0].d.n, 2);
    CU_ASSERT_EQUAL(r->kernels[0].d.total_ns, 2 * 8700 * US);
    CU_ASSERT_DOUBLE_EQUAL(r->kernels[0].share, 17400.0 / 18400.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(r->kernels[1].share, 500.0 / 18400.0, 1e-9);
    gt_report_free(r);
    gt_trace_free(t);
}

/* gtrace memory --step 14: the moment of step 14's peak, by its number:
 * not step 15's prefetch on the nanosecond step 14 ends. */
static void test_analyze_edges__state_at_resumed_step(void)
{
    gt_trace *t = resumed_trace();
    gt_mem_state *s = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at_step(&s, t, -1, 14), 0);
    CU_ASSERT_EQUAL(s->step, 14);
    CU_ASSERT_EQUAL(s->at_ns, 42 * MS + 7100 * US);
    CU_ASSERT_EQUAL(s->allocated_bytes, 8 * MIB + 4 * MIB + 40 * MIB + 5 * 64 * 1024 + 4 * 4096 + 3 * 16 * 1024);
    gt_mem_state_free(s);
    /* step 16's peak: when its kv_cache and cache_append entries were made
     * with the new buffer (not the instant both buffers were counted, nor
     * the later moment that held as much) */
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at_step(&s, t, -1, 16), 0);
    CU_ASSERT_EQUAL(s->at_ns, 62 * MS + 5500 * US);
    CU_ASSERT_EQUAL(s->allocated_bytes, 8 * MIB + 4 * MIB + 2 * MIB + 7 * 64 * 1024 + 5 * 4096 + 3 * 16 * 1024);
    gt_mem_state_free(s);
    CU_ASSERT_EQUAL(gt_memory_state_at_step(&s, t, -1, 4), GT_ERR_NOTFOUND);
    gt_trace_free(t);
}

/* gtrace memory --step 2 of a step that opens by freeing what step 1 left
 * (its activations, on the step's first nanosecond) and then allocates
 * less: the step's peak is its own 2 MiB at 12 ms, not its first instant,
 * where it holds nothing, for the 8 MiB it held before it began. */
static void test_analyze_edges__step_peak_after_opening_free(void)
{
    fx f;
    fx_open(&f, "openfree.sqlite");
    fx_range(&f, 0, 10 * MS, "step 1");
    fx_range(&f, 10 * MS, 20 * MS, "step 2");
    fx_heap(&f, 100 * US, GT_HEAP_REGISTER, 1, HEAP1, 64 * MIB);
    fx_heap(&f, 1 * MS, GT_REGION_REGISTER, 1, HEAP1, 8 * MIB);
    fx_heap(&f, 10 * MS, GT_REGION_UNREGISTER, 1, HEAP1, 0);
    fx_heap(&f, 12 * MS, GT_REGION_REGISTER, 1, HEAP1 + 16 * MIB, 2 * MIB);
    fx_heap(&f, 15 * MS, GT_REGION_UNREGISTER, 1, HEAP1 + 16 * MIB, 0);
    gt_trace *t = fx_close(&f);
    gt_mem_state *s = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at_step(&s, t, -1, 2), 0);
    CU_ASSERT_EQUAL(s->at_ns, 12 * MS);
    CU_ASSERT_EQUAL(s->allocated_bytes, 2 * MIB);
    CU_ASSERT_EQUAL(s->n_blocks, 1);
    gt_mem_state_free(s);
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at_step(&s, t, -1, 1), 0);
    CU_ASSERT_EQUAL(s->at_ns, 1 * MS);
    CU_ASSERT_EQUAL(s->allocated_bytes, 8 * MIB);
    gt_mem_state_free(s);
    gt_trace_free(t);
}

/* gtrace report --steps 2:2 with a kernel launched in step 1 that runs into
 * step 2 (a long GEMM across the boundary): the device is busy in step 2
 * from its start to the kernel's end, 4 ms of its 6. */
static void test_analyze_edges__kernel_across_step_start(void)
{
    fx f;
    fx_open(&f, "across.sqlite");
    fx_gpu(&f, 9, 80 * 1024 * MIB);
    fx_range(&f, 0, 4 * MS, "step 1");
    fx_range(&f, 4 * MS, 10 * MS, "step 2");
    fx_kernel(&f, 1 * MS, 2 * MS, 8 * MS, "gemm");
    gt_trace *t = fx_close(&f);
    gt_report_options opt;
    gt_report_options_init(&opt);
    opt.step_first = 2;
    opt.step_last = 2;
    gt_report *r = fx_report(t, &opt);
    CU_ASSERT_EQUAL_FATAL(r->n_devices, 1);
    CU_ASSERT_EQUAL(r->devices[0].busy_ns, 4 * MS);
    gt_report_free(r);
    gt_trace_free(t);
}

/* The allocator hands a freed block's address out again on the same
 * nanosecond (an 8 MiB block freed at 3 ms, a 4 MiB one made there): the
 * new block lives on, the old one is gone, and nothing is counted twice. */
static void test_analyze_edges__address_reused_on_the_nanosecond(void)
{
    fx f;
    fx_open(&f, "reuse.sqlite");
    fx_heap(&f, 100 * US, GT_HEAP_REGISTER, 1, HEAP1, 64 * MIB);
    fx_heap(&f, 1 * MS, GT_REGION_REGISTER, 1, HEAP1, 8 * MIB);
    fx_heap(&f, 3 * MS, GT_REGION_UNREGISTER, 1, HEAP1, 0);
    fx_heap(&f, 3 * MS, GT_REGION_REGISTER, 1, HEAP1, 4 * MIB);
    gt_trace *t = fx_close(&f);
    gt_mem_state *s = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at(&s, t, -1, 3 * MS), 0);
    CU_ASSERT_EQUAL(s->allocated_bytes, 4 * MIB);
    CU_ASSERT_EQUAL(s->n_blocks, 1);
    gt_mem_state_free(s);
    gt_report *r = fx_report(t, NULL);
    CU_ASSERT_EQUAL(r->memory.peak_allocated_bytes, 8 * MIB);
    CU_ASSERT_EQUAL(r->memory.end_allocated_bytes, 4 * MIB);
    CU_ASSERT_EQUAL(r->memory.n_block_allocs, 2);
    gt_report_free(r);
    gt_trace_free(t);
}

/* Two threads with as many step ranges each (a loader thread marking its
 * own "step N" too): the steps are the first thread's. */
static void test_analyze_edges__steps_of_two_threads(void)
{
    fx f;
    fx_open(&f, "twothreads.sqlite");
    int64_t t1 = gt_global_tid(PID, 10), t2 = gt_global_tid(PID, 11);
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "step %d", i);
        fx_range_cat(&f, i * 10 * MS, (i + 1) * 10 * MS, name, 0, 0, t1);
        snprintf(name, sizeof name, "step %d", 100 + i);
        fx_range_cat(&f, 1 * MS + i * 10 * MS, 2 * MS + i * 10 * MS, name, 0, 0, t2);
    }
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    CU_ASSERT_EQUAL_FATAL(r->n_steps, 3);
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(r->steps[i].number, (int64_t)i);
        CU_ASSERT_EQUAL(r->steps[i].start_ns, (int64_t)i * 10 * MS);
        CU_ASSERT_EQUAL(r->steps[i].end_ns, (int64_t)(i + 1) * 10 * MS);
    }
    gt_report_free(r);
    gt_trace_free(t);
}

/* A process with cudaMalloc only (no caching allocator): each buffer is
 * both a segment and a block to a reader of the Chrome export, so its
 * counter reserves 100 MiB with the allocation and gives it back. The
 * range of a worker thread keeps its thread in the CSV export. */
static void test_analyze_edges__device_only_in_chrome_export(void)
{
    fx f;
    fx_open(&f, "devonly.sqlite");
    fx_range_cat(&f, 0, 2 * MS, "load", 0, 0, gt_global_tid(PID, 77)); /* a worker thread's */
    fx_devmem(&f, 1 * MS, GT_DEVMEM_ALLOC, DEVBUF, 100 * MIB);
    fx_devmem(&f, 5 * MS, GT_DEVMEM_FREE, DEVBUF, 100 * MIB);
    gt_trace *t = fx_close(&f);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_export_chrome(t, m), 0);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"args\":{\"allocated\":104857600,\"reserved\":104857600}"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"args\":{\"allocated\":0,\"reserved\":0}"));
    CU_ASSERT_PTR_NULL(strstr(buf, "\"reserved\":209715200"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"ts\":1005.000")); /* the allocation, 1.005 ms in: zeros kept */
    free(buf);
    buf = NULL;
    m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_export_csv_kind(t, GT_EV_NVTX, m), 0);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\n0,2000000,4242,77,")); /* pid and tid apart */
    free(buf);
    gt_trace_free(t);
}

static const gt_test_case cases[] = {
    {"test_analyze_edges__device_beside_allocator", test_analyze_edges__device_beside_allocator},
    {"test_analyze_edges__state_on_the_nanosecond", test_analyze_edges__state_on_the_nanosecond},
    {"test_analyze_edges__block_past_heap_end", test_analyze_edges__block_past_heap_end},
    {"test_analyze_edges__empty_cache_before_peak", test_analyze_edges__empty_cache_before_peak},
    {"test_analyze_edges__resumed_steps", test_analyze_edges__resumed_steps},
    {"test_analyze_edges__leaks_beside_warm_up", test_analyze_edges__leaks_beside_warm_up},
    {"test_analyze_edges__state_at_resumed_step", test_analyze_edges__state_at_resumed_step},
    {"test_analyze_edges__step_names", test_analyze_edges__step_names},
    {"test_analyze_edges__cpu_gaps", test_analyze_edges__cpu_gaps},
    {"test_analyze_edges__report_window_on_step_edges", test_analyze_edges__report_window_on_step_edges},
    {"test_analyze_edges__step_peak_after_opening_free", test_analyze_edges__step_peak_after_opening_free},
    {"test_analyze_edges__kernel_across_step_start", test_analyze_edges__kernel_across_step_start},
    {"test_analyze_edges__address_reused_on_the_nanosecond", test_analyze_edges__address_reused_on_the_nanosecond},
    {"test_analyze_edges__steps_of_two_threads", test_analyze_edges__steps_of_two_threads},
    {"test_analyze_edges__device_only_in_chrome_export", test_analyze_edges__device_only_in_chrome_export},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"analyze_edges", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
