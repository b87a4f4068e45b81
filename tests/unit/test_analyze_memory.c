/* test_analyze_memory.c: memory diagnostics on traces of a caching allocator
 * (NVTX memory API heaps and regions) and of plain cudaMalloc/cudaFree:
 * peaks, fragmentation, leaks, spikes, and the allocator state at a time and
 * at a step, with who allocated each block; two processes whose heaps have
 * the same handles and addresses; rows with impossible times and sizes. */
#include "analyze_fixture.h"
#include "analyze_int.h"

#include <pthread.h>
#include <string.h>

#define HEAP1 0x10000000ULL
#define HEAP2 0x20000000ULL

/* Six 10 ms steps from 2 ms. Weights (8 MiB) made once in "init"; each step
 * makes 4 MiB of activations in "forward" and frees them, and appends 4 KiB
 * to a cache ("cache_append") it never frees: the leak. Step 3 also takes
 * 40 MiB for 0.8 ms in "attention": the spike. A second heap of 32 MiB is
 * registered when step 4 starts. */
static gt_trace *allocator_trace(void)
{
    fx f;
    fx_open(&f, "alloc.sqlite");
    fx_heap(&f, 1 * US, GT_HEAP_REGISTER, 1, HEAP1, 64 * MIB);
    fx_range(&f, 0, 1 * MS, "init");
    fx_heap(&f, 500 * US, GT_REGION_REGISTER, 1, HEAP1, 8 * MIB);
    for (int i = 0; i < 6; i++) {
        char name[32];
        int64_t t0 = 2 * MS + i * 10 * MS;
        snprintf(name, sizeof name, "step %d", i);
        fx_range(&f, t0, t0 + 10 * MS, name);
        fx_kernel(&f, t0, t0 + 100 * US, t0 + 9 * MS, "k");
        if (i == 4)
            fx_heap(&f, t0, GT_HEAP_REGISTER, 2, HEAP2, 32 * MIB);
        fx_range(&f, t0 + 1 * MS, t0 + 5 * MS, "forward");
        fx_heap(&f, t0 + 1500 * US, GT_REGION_REGISTER, 1, HEAP1 + 0x800000, 4 * MIB);
        fx_heap(&f, t0 + 6 * MS, GT_REGION_UNREGISTER, 1, HEAP1 + 0x800000, 0);
        fx_range(&f, t0 + 6 * MS, t0 + 7 * MS, "cache_append");
        fx_heap(&f, t0 + 6500 * US, GT_REGION_REGISTER, 1, HEAP1 + 0x1000000 + (uint64_t)i * 0x1000, 4096);
        if (i == 3) {
            fx_range(&f, t0 + 2 * MS, t0 + 3 * MS, "attention");
            fx_heap(&f, t0 + 2100 * US, GT_REGION_REGISTER, 1, HEAP1 + 0x2000000, 40 * MIB);
            fx_heap(&f, t0 + 2900 * US, GT_REGION_UNREGISTER, 1, HEAP1 + 0x2000000, 0);
        }
    }
    return fx_close(&f);
}

static void test_analyze_memory__peaks_and_fragmentation(void)
{
    gt_trace *t = allocator_trace();
    gt_report *r = fx_report(t, NULL);
    const gt_memory *m = &r->memory;
    CU_ASSERT_TRUE(m->has_blocks);
    CU_ASSERT_TRUE(m->has_segments);
    CU_ASSERT_EQUAL(m->peak_allocated_bytes, 52 * MIB + 3 * 4096);
    CU_ASSERT_EQUAL(m->peak_allocated_ns, 32 * MS + 2100 * US);
    CU_ASSERT_EQUAL(m->peak_reserved_bytes, 96 * MIB);
    CU_ASSERT_EQUAL(m->peak_reserved_ns, 42 * MS);
    /* at the allocated peak (in step 3) the one 64 MiB heap was reserved */
    double frag = (double)(64 * MIB - (52 * MIB + 3 * 4096)) / (double)(64 * MIB);
    CU_ASSERT_DOUBLE_EQUAL(m->fragmentation, frag, 1e-9);
    CU_ASSERT_EQUAL(m->end_allocated_bytes, 8 * MIB + 6 * 4096);
    CU_ASSERT_EQUAL(m->n_block_allocs, 1 + 6 * 2 + 1);
    CU_ASSERT_EQUAL(m->n_block_frees, 6 + 1);
    CU_ASSERT_EQUAL(r->steps[3].n_block_allocs, 3);
    CU_ASSERT_EQUAL(r->steps[3].allocated_end_bytes, 8 * MIB + 4 * 4096);
    gt_report_free(r);
    gt_trace_free(t);
}

static void test_analyze_memory__leak_and_spike(void)
{
    gt_trace *t = allocator_trace();
    gt_report *r = fx_report(t, NULL);
    const gt_memory *m = &r->memory;
    CU_ASSERT_EQUAL_FATAL(m->n_leaks, 1); /* the weights, made once, are no leak */
    const gt_leak *l = &m->leaks[0];
    CU_ASSERT_STRING_EQUAL(l->origin, "step 0 > cache_append");
    CU_ASSERT_EQUAL(l->n_alive, 6);
    CU_ASSERT_EQUAL(l->alive_bytes, 6 * 4096);
    CU_ASSERT_EQUAL(l->n_steps_grew, 6);
    CU_ASSERT_DOUBLE_EQUAL(l->bytes_per_step, 4096.0, 1e-9);
    CU_ASSERT_TRUE(fx_fired(r, "memory_leak"));

    CU_ASSERT_EQUAL_FATAL(m->n_spikes, 1); /* 4 MiB activations are under a tenth of the peak */
    const gt_spike *s = &m->spikes[0];
    CU_ASSERT_EQUAL(s->bytes, 40 * MIB);
    CU_ASSERT_EQUAL(s->step, 3);
    CU_ASSERT_EQUAL(s->end_ns - s->start_ns, 800 * US);
    CU_ASSERT_STRING_EQUAL(s->origin, "step 3 > forward > attention");
    gt_report_free(r);
    gt_trace_free(t);
}

/* More short-lived blocks than the report lists: the ten biggest, and
 * among blocks of one size the first made, biggest first, then by time.
 * The replay reuses the record of each freed block: the spikes are noted
 * as they end, the leak read off the live records at the end. */
static void test_analyze_memory__spikes_kept_as_they_end(void)
{
    static const int mib[] = {1, 2, 8, 3, 8, 4, 8, 5, 8, 6, 8, 7, 8, 1, 8};
    fx f;
    fx_open(&f, "spikes.sqlite");
    fx_heap(&f, 1 * US, GT_HEAP_REGISTER, 1, HEAP1, 256 * MIB);
    fx_heap(&f, 2 * US, GT_REGION_REGISTER, 1, HEAP1, 16 * MIB); /* held throughout */
    for (int i = 0; i < 6; i++) {
        char name[16];
        snprintf(name, sizeof name, "step %d", i);
        fx_range(&f, (1 + 10 * i) * MS, (11 + 10 * i) * MS, name);
        fx_range(&f, (2 + 10 * i) * MS, (2 + 10 * i) * MS + 500 * US, "cache");
        fx_heap(&f, (2 + 10 * i) * MS + 100 * US, GT_REGION_REGISTER, 1, HEAP1 + 0x8000000 + (uint64_t)i * 4096, 4096);
    }
    for (size_t k = 0; k < sizeof mib / sizeof mib[0]; k++) {
        int64_t t0 = 3 * MS + (int64_t)k * 3 * MS; /* one at a time, each 100 us */
        fx_heap(&f, t0, GT_REGION_REGISTER, 1, HEAP1 + 32 * MIB, mib[k] * MIB);
        fx_heap(&f, t0 + 100 * US, GT_REGION_UNREGISTER, 1, HEAP1 + 32 * MIB, 0);
    }
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    const gt_memory *m = &r->memory;
    /* a tenth of the 24 MiB peak: the 1 and 2 MiB blocks are no spikes; of
     * the 12 others the 4 and 3 MiB ones are the eleventh and twelfth */
    static const int want[] = {8, 8, 8, 8, 8, 8, 8, 7, 6, 5};
    CU_ASSERT_EQUAL_FATAL(m->n_spikes, 10);
    for (size_t k = 0; k < 10; k++) {
        CU_ASSERT_EQUAL(m->spikes[k].bytes, want[k] * MIB);
        CU_ASSERT_EQUAL(m->spikes[k].end_ns - m->spikes[k].start_ns, 100 * US);
        if (k > 0 && want[k] == want[k - 1])
            CU_ASSERT_TRUE(m->spikes[k].start_ns > m->spikes[k - 1].start_ns);
    }
    CU_ASSERT_EQUAL(m->spikes[0].start_ns, 3 * MS + 2 * 3 * MS); /* the first 8 MiB block */
    CU_ASSERT_EQUAL_FATAL(m->n_leaks, 1); /* 4 KiB a step, never freed */
    CU_ASSERT_EQUAL(m->leaks[0].n_alive, 6);
    CU_ASSERT_EQUAL(m->leaks[0].first_ns, 2 * MS + 100 * US);
    CU_ASSERT_EQUAL(m->leaks[0].last_ns, 52 * MS + 100 * US);
    CU_ASSERT_STRING_EQUAL(m->leaks[0].origin, "step 0 > cache");
    gt_report_free(r);
    gt_trace_free(t);
}

/* The same steps with the cache freed every step: no leak, rule silent. */
static void test_analyze_memory__no_leak(void)
{
    fx f;
    fx_open(&f, "noleak.sqlite");
    fx_heap(&f, 1 * US, GT_HEAP_REGISTER, 1, HEAP1, 64 * MIB);
    fx_heap(&f, 500 * US, GT_REGION_REGISTER, 1, HEAP1, 8 * MIB);
    for (int i = 0; i < 6; i++) {
        char name[32];
        int64_t t0 = 2 * MS + i * 10 * MS;
        snprintf(name, sizeof name, "step %d", i);
        fx_range(&f, t0, t0 + 10 * MS, name);
        fx_heap(&f, t0 + 6500 * US, GT_REGION_REGISTER, 1, HEAP1 + 0x1000000, 4096);
        fx_heap(&f, t0 + 9 * MS, GT_REGION_UNREGISTER, 1, HEAP1 + 0x1000000, 0);
    }
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    CU_ASSERT_EQUAL(r->memory.n_leaks, 0);
    CU_ASSERT_FALSE(fx_fired(r, "memory_leak"));
    CU_ASSERT_EQUAL(r->memory.end_allocated_bytes, 8 * MIB);
    gt_report_free(r);
    gt_trace_free(t);
}

static void test_analyze_memory__state_at_time_and_step(void)
{
    gt_trace *t = allocator_trace();
    gt_mem_state *s = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at(&s, t, -1, 1500 * US), 0);
    CU_ASSERT_EQUAL(s->allocated_bytes, 8 * MIB);
    CU_ASSERT_EQUAL(s->reserved_bytes, 64 * MIB);
    CU_ASSERT_EQUAL_FATAL(s->n_segments, 1);
    CU_ASSERT_EQUAL(s->segments[0].address, HEAP1);
    CU_ASSERT_TRUE(s->segments[0].from_heap);
    CU_ASSERT_EQUAL_FATAL(s->n_blocks, 1);
    CU_ASSERT_STRING_EQUAL(s->blocks[0].origin, "init");
    gt_mem_state_free(s);

    /* at step 3's peak: weights, activations, three cache entries, the spike */
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at_step(&s, t, -1, 3), 0);
    CU_ASSERT_EQUAL(s->step, 3);
    CU_ASSERT_EQUAL(s->at_ns, 32 * MS + 2100 * US);
    CU_ASSERT_EQUAL(s->allocated_bytes, 52 * MIB + 3 * 4096);
    CU_ASSERT_EQUAL_FATAL(s->n_segments, 1);
    CU_ASSERT_EQUAL(s->segments[0].n_blocks, 6);
    CU_ASSERT_EQUAL(s->segments[0].allocated_bytes, 52 * MIB + 3 * 4096);
    CU_ASSERT_EQUAL(s->n_unplaced, 0);
    bool spike = false, fwd = false;
    for (size_t i = 0; i < s->n_blocks; i++) {
        spike |= s->blocks[i].bytes == 40 * MIB && strcmp(s->blocks[i].origin, "step 3 > forward > attention") == 0;
        fwd |= s->blocks[i].bytes == 4 * MIB && strcmp(s->blocks[i].origin, "step 3 > forward") == 0;
    }
    CU_ASSERT_TRUE(spike);
    CU_ASSERT_TRUE(fwd);
    /* blocks of a segment are in address order */
    for (size_t i = 1; i < s->n_blocks; i++)
        CU_ASSERT_TRUE(s->blocks[i - 1].address < s->blocks[i].address);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_mem_state_print_text(s, m), 0);
    CU_ASSERT_EQUAL(gt_mem_state_print_json(s, m), 0);
    fclose(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "step 3 > forward > attention"));
    free(buf);
    gt_mem_state_free(s);

    CU_ASSERT_EQUAL(gt_memory_state_at_step(&s, t, -1, 99), GT_ERR_NOTFOUND);
    CU_ASSERT_PTR_NULL(s);
    gt_trace_free(t);
}

/* No allocator: cudaMalloc'd buffers are both segments and blocks, and the
 * thread of the cudaMalloc call says which range made them. */
static void test_analyze_memory__device_allocations(void)
{
    fx f;
    fx_open(&f, "dev.sqlite");
    fx_range(&f, 0, 1 * MS, "load_model");
    fx_devmem(&f, 100 * US, GT_DEVMEM_ALLOC, 0x7f0000000000ULL, 100 * MIB);
    fx_range(&f, 2 * MS, 3 * MS, "scratch");
    fx_devmem(&f, 2100 * US, GT_DEVMEM_ALLOC, 0x7f0010000000ULL, 20 * MIB);
    fx_devmem(&f, 2500 * US, GT_DEVMEM_FREE, 0x7f0010000000ULL, 20 * MIB);
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    CU_ASSERT_TRUE(r->memory.has_device);
    CU_ASSERT_FALSE(r->memory.has_blocks);
    CU_ASSERT_EQUAL(r->memory.peak_allocated_bytes, 120 * MIB);
    CU_ASSERT_EQUAL(r->memory.peak_reserved_bytes, 120 * MIB);
    CU_ASSERT_EQUAL(r->memory.end_reserved_bytes, 100 * MIB);
    CU_ASSERT_EQUAL(r->memory.n_dev_allocs, 2);
    CU_ASSERT_EQUAL(r->memory.n_dev_frees, 1);
    gt_report_free(r);
    gt_mem_state *s = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at(&s, t, -1, 2200 * US), 0);
    CU_ASSERT_EQUAL_FATAL(s->n_segments, 2);
    CU_ASSERT_FALSE(s->segments[0].from_heap);
    CU_ASSERT_EQUAL_FATAL(s->n_blocks, 2);
    CU_ASSERT_STRING_EQUAL(s->blocks[0].origin, "load_model");
    CU_ASSERT_STRING_EQUAL(s->blocks[1].origin, "scratch");
    gt_mem_state_free(s);
    gt_trace_free(t);
}

/* One process, an allocator on each of two devices (their threads named
 * "cuda:N allocator", as a snapshot import names them): a block of the
 * second device is found by its own history, and says who made it. */
static void test_analyze_memory__origin_on_second_device(void)
{
    fx f;
    fx_open(&f, "origin-dev1.sqlite");
    int64_t t0 = gt_global_tid(PID, 10), t1 = gt_global_tid(PID, 11);
    CU_ASSERT_EQUAL_FATAL(gt_writer_add_thread_name(f.w, t0, "cuda:0 allocator", 0), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_add_thread_name(f.w, t1, "cuda:1 allocator", 0), 0);
    uint64_t h0 = 0x7f0000000000ULL, h1 = 0x7f1000000000ULL;
    fx_range_cat(&f, 0, 1 * MS, "embed", 0, 0, t0);
    fx_heap_on(&f, t0, 100 * US, GT_HEAP_REGISTER, 1, h0, 64 * MIB);
    fx_heap_on(&f, t0, 200 * US, GT_REGION_REGISTER, 1, h0, 8 * MIB);
    fx_range_cat(&f, 2 * MS, 3 * MS, "decoder", 0, 0, t1);
    fx_heap_on(&f, t1, 2100 * US, GT_HEAP_REGISTER, 2, h1, 64 * MIB);
    fx_heap_on(&f, t1, 2200 * US, GT_REGION_REGISTER, 2, h1, 16 * MIB);
    gt_trace *t = fx_close(&f);
    gt_analysis *a = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_analysis_load(&a, t, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(gt_analysis_n_memories(a), 2);
    gt_mem_series s0, s1;
    CU_ASSERT_EQUAL_FATAL(gt_analysis_memory(&s0, a, 0), 0);
    CU_ASSERT_EQUAL_FATAL(gt_analysis_memory(&s1, a, 1), 0);
    CU_ASSERT_EQUAL(s0.device_id, 0);
    CU_ASSERT_EQUAL(s1.device_id, 1);
    char *o0 = gt_analysis_block_origin(a, PID, h0, 200 * US);
    char *o1 = gt_analysis_block_origin(a, PID, h1, 2200 * US);
    char *none = gt_analysis_block_origin(a, PID, h1, 2300 * US);
    CU_ASSERT_STRING_EQUAL(o0, "embed");
    CU_ASSERT_STRING_EQUAL(o1, "decoder");
    CU_ASSERT_STRING_EQUAL(none, "");
    free(o0);
    free(o1);
    free(none);
    gt_analysis_free(a);
    gt_trace_free(t);
}

/* A heap reset gives back every block of that heap, none of another. */
static void test_analyze_memory__heap_reset(void)
{
    fx f;
    fx_open(&f, "reset.sqlite");
    fx_heap(&f, 1 * US, GT_HEAP_REGISTER, 1, HEAP1, 64 * MIB);
    fx_heap(&f, 2 * US, GT_HEAP_REGISTER, 2, HEAP2, 64 * MIB);
    fx_heap(&f, 10 * US, GT_REGION_REGISTER, 1, HEAP1, MIB);
    fx_heap(&f, 11 * US, GT_REGION_REGISTER, 1, HEAP1 + MIB, MIB);
    fx_heap(&f, 12 * US, GT_REGION_REGISTER, 2, HEAP2, 3 * MIB);
    fx_heap(&f, 20 * US, GT_REGION_RESIZE, 2, HEAP2, 5 * MIB);
    fx_heap(&f, 30 * US, GT_HEAP_RESET, 1, 0, 0);
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    CU_ASSERT_EQUAL(r->memory.peak_allocated_bytes, 7 * MIB);
    CU_ASSERT_EQUAL(r->memory.end_allocated_bytes, 5 * MIB);
    CU_ASSERT_EQUAL(r->memory.end_reserved_bytes, 128 * MIB);
    gt_report_free(r);
    gt_trace_free(t);
}

/* nvtxMemHeapUnregister names the heap by its handle only (address 0, as
 * the capture writes it): its segment goes, and so do the blocks still in it. */
static void test_analyze_memory__heap_unregister(void)
{
    fx f;
    fx_open(&f, "unregister.sqlite");
    fx_heap(&f, 1 * US, GT_HEAP_REGISTER, 1, HEAP1, 64 * MIB);
    fx_heap(&f, 2 * US, GT_HEAP_REGISTER, 2, HEAP2, 32 * MIB);
    fx_heap(&f, 10 * US, GT_REGION_REGISTER, 1, HEAP1, MIB);
    fx_heap(&f, 11 * US, GT_REGION_REGISTER, 1, HEAP1 + MIB, 2 * MIB);
    fx_heap(&f, 12 * US, GT_REGION_REGISTER, 2, HEAP2, 4 * MIB);
    fx_heap(&f, 20 * US, GT_REGION_UNREGISTER, 1, HEAP1, 0);
    fx_heap(&f, 30 * US, GT_HEAP_UNREGISTER, 1, 0, 0); /* one block still in it */
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    CU_ASSERT_EQUAL(r->memory.peak_allocated_bytes, 7 * MIB);
    CU_ASSERT_EQUAL(r->memory.peak_reserved_bytes, 96 * MIB);
    CU_ASSERT_EQUAL(r->memory.end_allocated_bytes, 4 * MIB);
    CU_ASSERT_EQUAL(r->memory.end_reserved_bytes, 32 * MIB);
    gt_report_free(r);
    gt_mem_state *st = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at(&st, t, -1, 25 * US), 0);
    CU_ASSERT_EQUAL(st->n_segments, 2);
    CU_ASSERT_EQUAL(st->allocated_bytes, 6 * MIB);
    gt_mem_state_free(st);
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at(&st, t, -1, 40 * US), 0);
    CU_ASSERT_EQUAL(st->n_segments, 1);
    CU_ASSERT_EQUAL(st->segments[0].address, HEAP2);
    CU_ASSERT_EQUAL(st->n_blocks, 1);
    CU_ASSERT_EQUAL(st->n_unplaced, 0);
    CU_ASSERT_EQUAL(st->reserved_bytes, 32 * MIB);
    gt_mem_state_free(st);
    gt_trace_free(t);
}


/* A heap event of another process: its thread's global id carries its pid. */
static void heap_on(fx *f, int64_t pid, int64_t t, int op, uint64_t heap, uint64_t addr, int64_t bytes)
{
    fx_heap_on(f, gt_global_tid(pid, pid), t, op, heap, addr, bytes);
}

#define RANK0 5001
#define RANK1 5002

/* Two ranks of a job, as the trainer's DDP run: each registers heap 1 at
 * the same virtual address (their own address spaces), 24 MiB, and puts the
 * same blocks in it; rank 1 a little later, and it frees a block rank 0
 * keeps. Each rank: peak allocated 16 MiB, reserved 24 MiB. Replayed as one
 * process, the handles and addresses collide: allocated came out above
 * reserved and blocks fell outside any known segment. */
static gt_trace *two_ranks_trace(void)
{
    fx f;
    fx_open(&f, "two_ranks.sqlite");
    fx_process(&f, RANK0, "trainer");
    fx_process(&f, RANK1, "trainer");
    for (int r = 0; r < 2; r++) {
        int64_t pid = r ? RANK1 : RANK0, t0 = r * 50 * US;
        for (int i = 0; i < 4; i++) {
            char name[32];
            snprintf(name, sizeof name, "step %d", i);
            fx_range_cat(&f, t0 + (1 + i) * MS, t0 + (2 + i) * MS, name, 0, 0, gt_global_tid(pid, pid));
        }
        heap_on(&f, pid, t0 + 1 * US, GT_HEAP_REGISTER, 1, HEAP1, 16 * MIB);
        heap_on(&f, pid, t0 + 2 * US, GT_HEAP_REGISTER, 2, HEAP2, 8 * MIB);
        heap_on(&f, pid, t0 + 10 * US, GT_REGION_REGISTER, 1, HEAP1, 8 * MIB);
        heap_on(&f, pid, t0 + 3 * MS + 100 * US, GT_REGION_REGISTER, 1, HEAP1 + 8 * MIB, 4 * MIB);
        heap_on(&f, pid, t0 + 3 * MS + 200 * US, GT_REGION_REGISTER, 2, HEAP2, 4 * MIB);
        heap_on(&f, pid, t0 + 3 * MS + 900 * US, GT_REGION_UNREGISTER, 1, HEAP1 + 8 * MIB, 0);
        heap_on(&f, pid, t0 + 3 * MS + 950 * US, GT_REGION_UNREGISTER, 2, HEAP2, 0);
        if (r == 1)
            heap_on(&f, pid, t0 + 5 * MS + 500 * US, GT_REGION_UNREGISTER, 1, HEAP1, 0);
    }
    return fx_close(&f);
}

static void test_analyze_memory__two_processes_same_handles(void)
{
    gt_trace *t = two_ranks_trace();
    gt_report *r = fx_report(t, NULL);
    const gt_memory *m = &r->memory;
    CU_ASSERT_EQUAL_FATAL(m->n_procs, 2);
    for (size_t i = 0; i < 2; i++) {
        const gt_memory *p = &m->procs[i];
        CU_ASSERT_EQUAL(p->pid, i ? RANK1 : RANK0);
        CU_ASSERT_EQUAL(p->peak_allocated_bytes, 16 * MIB);
        CU_ASSERT_EQUAL(p->peak_reserved_bytes, 24 * MIB);
        CU_ASSERT_TRUE(p->peak_allocated_bytes <= p->peak_reserved_bytes);
        CU_ASSERT_EQUAL(p->n_block_allocs, 3);
    }
    CU_ASSERT_EQUAL(m->procs[0].end_allocated_bytes, 8 * MIB);
    CU_ASSERT_EQUAL(m->procs[1].end_allocated_bytes, 0);
    /* the whole trace: a process's own figures, never a mix */
    CU_ASSERT_EQUAL(m->peak_allocated_bytes, 16 * MIB);
    CU_ASSERT_EQUAL(m->peak_reserved_bytes, 24 * MIB);
    /* both at once: the ranks' peaks overlap (step 2 of both), so 32 of 48 MiB */
    CU_ASSERT_TRUE(m->total_one_pool);
    CU_ASSERT_EQUAL(m->total_peak_allocated_bytes, 32 * MIB);
    CU_ASSERT_EQUAL(m->total_peak_reserved_bytes, 48 * MIB);
    char *buf = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(gt_report_print_text(r, mf), 0);
    fclose(mf);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "2 processes, each its own allocator"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "pid 5001: peak allocated 16.00 MiB"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "pid 5002: peak allocated 16.00 MiB"));
    free(buf);
    gt_report_free(r);

    /* each process's allocator apart: every block in a segment of its own process */
    gt_mem_states *ss = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_memory_states_at_step(&ss, t, -1, 2), 0);
    CU_ASSERT_EQUAL_FATAL(ss->n, 2);
    for (size_t i = 0; i < 2; i++) {
        const gt_mem_state *s = ss->v[i];
        CU_ASSERT_EQUAL(s->pid, i ? RANK1 : RANK0);
        CU_ASSERT_EQUAL(s->allocated_bytes, 16 * MIB);
        CU_ASSERT_EQUAL(s->reserved_bytes, 24 * MIB);
        CU_ASSERT_EQUAL(s->n_segments, 2);
        CU_ASSERT_EQUAL(s->n_blocks, 3);
        CU_ASSERT_EQUAL(s->n_unplaced, 0);
    }
    gt_mem_states_free(ss);
    /* one process asked for: its state only; at 5.6 ms rank 1 freed its weights */
    gt_mem_state *s = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at(&s, t, RANK1, 5600 * US), 0);
    CU_ASSERT_EQUAL(s->pid, RANK1);
    CU_ASSERT_EQUAL(s->allocated_bytes, 0);
    CU_ASSERT_EQUAL(s->reserved_bytes, 24 * MIB);
    gt_mem_state_free(s);
    /* one state of a trace with two processes must say which */
    CU_ASSERT_EQUAL(gt_memory_state_at(&s, t, -1, 5600 * US), GT_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "2 processes"));
    CU_ASSERT_EQUAL(gt_memory_state_at(&s, t, 777, 5600 * US), GT_ERR_NOTFOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "5001 and 5002"));
    int64_t *pids = NULL;
    size_t n_pids = 0;
    CU_ASSERT_EQUAL_FATAL(gt_memory_pids(&pids, &n_pids, t), 0);
    CU_ASSERT_EQUAL_FATAL(n_pids, 2);
    CU_ASSERT_EQUAL(pids[0], RANK0);
    CU_ASSERT_EQUAL(pids[1], RANK1);
    free(pids);
    gt_trace_free(t);
}

/* Two processes whose allocators act at the same times: the actions handed
 * out one at a time (an_memory_each_action) are the actions kept
 * (an_memory_actions), in time order, at one time by pid, and add up to
 * what each process still holds. A block made where one was freed takes
 * the freed one's record while handing out: nothing changes. */
typedef struct act_seen { an_mem_action v[256]; size_t n; int answer; } act_seen;

static int see_action(void *ctx, const an_mem_action *a)
{
    act_seen *s = ctx;
    if (s->n < 256)
        s->v[s->n] = *a;
    s->n++;
    return s->answer;
}

static void test_analyze_memory__actions_in_order(void)
{
    fx f;
    fx_open(&f, "actions.sqlite");
    fx_process(&f, RANK0, "a");
    fx_process(&f, RANK1, "b");
    for (int r = 1; r >= 0; r--) { /* rank 1's rows written first */
        int64_t pid = r ? RANK1 : RANK0;
        heap_on(&f, pid, 1 * US, GT_HEAP_REGISTER, 1, HEAP1, 16 * MIB);
        for (int i = 0; i < 50; i++) {
            uint64_t at = HEAP1 + (uint64_t)(i % 4) * MIB;
            heap_on(&f, pid, (10 + i) * US, GT_REGION_REGISTER, 1, at, MIB);
            heap_on(&f, pid, (10 + i) * US + 500, GT_REGION_UNREGISTER, 1, at, 0);
        }
        heap_on(&f, pid, 100 * US, GT_REGION_REGISTER, 1, HEAP1, (r + 1) * MIB);
    }
    gt_trace *t = fx_close(&f);
    an_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(an_model_load(&m, t), 0);
    an_mem_action *v = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(an_memory_actions(m, &v, &n), 0);
    CU_ASSERT_EQUAL_FATAL(n, 2 * (1 + 50 + 50 + 1)); /* the segment, 50 blocks made and freed, one kept */
    int64_t held[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        if (i > 0) {
            CU_ASSERT_TRUE(v[i - 1].t_ns < v[i].t_ns || (v[i - 1].t_ns == v[i].t_ns && v[i - 1].pid < v[i].pid));
            CU_ASSERT_TRUE(v[i - 1].seq < v[i].seq);
        }
        int64_t *h = &held[v[i].pid == RANK1];
        *h += v[i].action == AN_ACT_ALLOC ? v[i].bytes : v[i].action == AN_ACT_FREE ? -v[i].bytes : 0;
    }
    CU_ASSERT_EQUAL(held[0], 1 * MIB);
    CU_ASSERT_EQUAL(held[1], 2 * MIB);
    act_seen *s = calloc(1, sizeof *s);
    CU_ASSERT_EQUAL(an_memory_each_action(m, -1, see_action, s), 0);
    CU_ASSERT_EQUAL_FATAL(s->n, n);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT_TRUE(s->v[i].t_ns == v[i].t_ns && s->v[i].pid == v[i].pid && s->v[i].action == v[i].action &&
                       s->v[i].address == v[i].address && s->v[i].bytes == v[i].bytes);
    /* one process's; a stop after the first; a failure passed on */
    *s = (act_seen){.answer = 0};
    CU_ASSERT_EQUAL(an_memory_each_action(m, RANK1, see_action, s), 0);
    CU_ASSERT_EQUAL(s->n, n / 2);
    CU_ASSERT_EQUAL(s->v[0].pid, RANK1);
    *s = (act_seen){.answer = 1};
    CU_ASSERT_EQUAL(an_memory_each_action(m, -1, see_action, s), 0);
    CU_ASSERT_EQUAL(s->n, 1);
    *s = (act_seen){.answer = GT_ERR_IO};
    CU_ASSERT_EQUAL(an_memory_each_action(m, -1, see_action, s), GT_ERR_IO);
    CU_ASSERT_EQUAL(s->n, 1);
    free(s);
    free(v);
    an_model_free(m);
    gt_trace_free(t);
}

/* The allocator at a moment from a replay up to it (an_memory_states_at,
 * what gtrace memory uses) is the state the whole history gives
 * (an_mem_states, what the viewer uses): at every event's time, just
 * before and after, and at every step's peak, on each trace here. */
static void same_state_replayed(const gt_mem_state *a, const gt_mem_state *b)
{
    CU_ASSERT_EQUAL(a->pid, b->pid);
    CU_ASSERT_EQUAL(a->device_id, b->device_id);
    CU_ASSERT_EQUAL(a->at_ns, b->at_ns);
    CU_ASSERT_EQUAL(a->step, b->step);
    CU_ASSERT_EQUAL(a->allocated_bytes, b->allocated_bytes);
    CU_ASSERT_EQUAL(a->reserved_bytes, b->reserved_bytes);
    CU_ASSERT_EQUAL(a->n_unplaced, b->n_unplaced);
    CU_ASSERT_EQUAL_FATAL(a->n_segments, b->n_segments);
    CU_ASSERT_EQUAL_FATAL(a->n_blocks, b->n_blocks);
    for (size_t i = 0; i < a->n_segments; i++)
        CU_ASSERT_TRUE(a->segments[i].address == b->segments[i].address && a->segments[i].bytes == b->segments[i].bytes &&
                       a->segments[i].alloc_ns == b->segments[i].alloc_ns &&
                       a->segments[i].allocated_bytes == b->segments[i].allocated_bytes &&
                       a->segments[i].first_block == b->segments[i].first_block &&
                       a->segments[i].n_blocks == b->segments[i].n_blocks);
    for (size_t i = 0; i < a->n_blocks; i++)
        CU_ASSERT_TRUE(a->blocks[i].address == b->blocks[i].address && a->blocks[i].bytes == b->blocks[i].bytes &&
                       a->blocks[i].alloc_ns == b->blocks[i].alloc_ns && a->blocks[i].global_tid == b->blocks[i].global_tid &&
                       strcmp(a->blocks[i].origin, b->blocks[i].origin) == 0);
}

static void same_states(const an_model *m, const an_mem_hist *v, size_t n, int64_t pid, int64_t at_ns, int64_t step)
{
    gt_mem_states *h = NULL, *r = NULL;
    int rh = an_mem_states(&h, m, v, n, pid, at_ns, step), rr = an_memory_states_at(&r, m, pid, at_ns, step);
    CU_ASSERT_EQUAL_FATAL(rh, rr);
    if (rh == 0) {
        CU_ASSERT_EQUAL_FATAL(h->n, r->n);
        for (size_t i = 0; i < h->n; i++)
            same_state_replayed(h->v[i], r->v[i]);
    }
    gt_mem_states_free(h);
    gt_mem_states_free(r);
}

/* Device allocations only (segments that are their own blocks), one made
 * and freed in the same nanosecond as another, and step 1 at its peak twice
 * (120 MiB at 2.1 and 2.7 ms, other blocks: the step's peak is the first);
 * and no allocation at all. */
static gt_trace *device_trace(void)
{
    fx f;
    fx_open(&f, "dev_state.sqlite");
    fx_range(&f, 0, 1 * MS, "step 0");
    fx_devmem(&f, 100 * US, GT_DEVMEM_ALLOC, 0x7f0000000000ULL, 100 * MIB);
    fx_range(&f, 2 * MS, 3 * MS, "step 1");
    fx_devmem(&f, 2100 * US, GT_DEVMEM_ALLOC, 0x7f0010000000ULL, 20 * MIB);
    fx_devmem(&f, 2500 * US, GT_DEVMEM_FREE, 0x7f0010000000ULL, 20 * MIB);
    fx_devmem(&f, 2500 * US, GT_DEVMEM_ALLOC, 0x7f0010000000ULL, 8 * MIB);
    fx_devmem(&f, 2700 * US, GT_DEVMEM_ALLOC, 0x7f0020000000ULL, 12 * MIB);
    return fx_close(&f);
}

static gt_trace *no_memory_trace(void)
{
    fx f;
    fx_open(&f, "no_mem.sqlite");
    fx_range(&f, 0, 1 * MS, "step 0");
    return fx_close(&f);
}

static void test_analyze_memory__state_by_replay(void)
{
    gt_trace *traces[] = {allocator_trace(), two_ranks_trace(), device_trace(), no_memory_trace()};
    for (size_t ti = 0; ti < sizeof traces / sizeof traces[0]; ti++) {
        an_model *m = NULL;
        an_mem_hist *v = NULL;
        size_t n = 0;
        CU_ASSERT_EQUAL_FATAL(an_model_load_memory(&m, traces[ti]), 0);
        CU_ASSERT_EQUAL_FATAL(an_memory_hists(&v, &n, m), 0);
        for (size_t i = 0; i < m->n_mem; i++)
            for (int64_t d = -1; d <= 1; d++)
                same_states(m, v, n, -1, m->mem[i].t_ns + d, -1);
        for (int64_t s = 0; s < 8; s++)
            same_states(m, v, n, -1, 0, s);
        same_states(m, v, n, RANK1, 3 * MS + 150 * US, -1);
        same_states(m, v, n, 777, 0, -1);
        if (ti == 2) { /* step 1 peaks twice: the first is its peak */
            gt_mem_states *r = NULL;
            CU_ASSERT_EQUAL_FATAL(an_memory_states_at(&r, m, -1, 0, 1), 0);
            CU_ASSERT_EQUAL_FATAL(r->n, 1);
            CU_ASSERT_TRUE(r->v[0]->at_ns >= 2100 * US && r->v[0]->at_ns < 2500 * US);
            CU_ASSERT_EQUAL(r->v[0]->allocated_bytes, 120 * MIB);
            gt_mem_states_free(r);
        }
        an_mem_hists_free(v, n);
        an_model_free(m);
        gt_trace_free(traces[ti]);
    }
}

/* Rows no replay can use (extreme times, negative or absurd sizes, a block
 * past the end of the address space) are left out and counted; the rest
 * replays as if they were not there. Nothing overflows (configure
 * --enable-sanitizers makes an overflow fail the test). */
static void test_analyze_memory__extreme_rows(void)
{
    /* sizes: negative, INT64_MAX, a block past the end of the address space */
    fx f;
    fx_open(&f, "extreme.sqlite");
    fx_heap(&f, 1 * US, GT_HEAP_REGISTER, 1, HEAP1, 64 * MIB);
    fx_heap(&f, 10 * US, GT_REGION_REGISTER, 1, HEAP1, MIB);
    fx_heap(&f, 20 * US, GT_REGION_REGISTER, 1, HEAP1 + 3 * MIB, -5);
    fx_heap(&f, 21 * US, GT_REGION_REGISTER, 1, HEAP1 + 4 * MIB, INT64_MAX);
    fx_heap(&f, 22 * US, GT_REGION_REGISTER, 1, UINT64_MAX - 10, MIB);
    fx_heap(&f, 23 * US, GT_HEAP_REGISTER, 2, 0, INT64_MAX);
    fx_heap(&f, 30 * US, GT_REGION_UNREGISTER, 1, HEAP1, 0);
    fx_range(&f, 0, 100 * US, "step 0");
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    /* the sizes out of range the model refuses at load; the wrapping block is the replay's to leave out */
    CU_ASSERT_EQUAL(r->memory.n_skipped_rows, 1);
    CU_ASSERT_EQUAL(r->memory.peak_allocated_bytes, MIB);
    CU_ASSERT_EQUAL(r->memory.end_allocated_bytes, 0);
    CU_ASSERT_EQUAL(r->memory.peak_reserved_bytes, 64 * MIB);
    gt_report_free(r);
    gt_trace_free(t);

    /* times at the int64 ends, and a step as wide as the analysis takes */
    fx_open(&f, "extreme_times.sqlite");
    fx_heap(&f, 1 * US, GT_HEAP_REGISTER, 1, HEAP1, 64 * MIB);
    fx_heap(&f, 10 * US, GT_REGION_REGISTER, 1, HEAP1, MIB);
    fx_heap(&f, INT64_MAX, GT_REGION_REGISTER, 1, HEAP1 + MIB, MIB);
    fx_heap(&f, INT64_MIN, GT_REGION_REGISTER, 1, HEAP1 + 2 * MIB, MIB);
    fx_heap(&f, 30 * US, GT_REGION_UNREGISTER, 1, HEAP1, 0);
    fx_range(&f, -GT_TIME_LIMIT_NS / 2, GT_TIME_LIMIT_NS / 2, "step 7"); /* the longest range the reader takes */
    t = fx_close(&f);
    gt_mem_state *s = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at(&s, t, -1, INT64_MAX), 0);
    CU_ASSERT_EQUAL(s->n_blocks, 0); /* the row at INT64_MAX was left out */
    CU_ASSERT_EQUAL(s->reserved_bytes, 64 * MIB);
    gt_mem_state_free(s);
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at(&s, t, -1, INT64_MIN), 0);
    CU_ASSERT_EQUAL(s->reserved_bytes, 0);
    CU_ASSERT_EQUAL(s->n_blocks, 0);
    gt_mem_state_free(s);
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at_step(&s, t, -1, 7), 0);
    CU_ASSERT_EQUAL(s->at_ns, 10 * US);
    CU_ASSERT_EQUAL(s->allocated_bytes, MIB);
    gt_mem_state_free(s);
    gt_trace_free(t);
}

/* One loaded analysis asked from four threads at once, each at its own
 * times (1 ms steps over the trace), answers as it does alone: the state
 * at a time keeps nothing between queries. */
typedef struct state_job {
    const gt_analysis *a;
    int64_t first_ns;
    int n_diff, n_done;
} state_job;

static bool same_state(const gt_mem_state *x, const gt_mem_state *y)
{
    if (x->allocated_bytes != y->allocated_bytes || x->reserved_bytes != y->reserved_bytes ||
        x->n_blocks != y->n_blocks || x->n_segments != y->n_segments || x->n_unplaced != y->n_unplaced)
        return false;
    for (size_t i = 0; i < x->n_blocks; i++)
        if (x->blocks[i].address != y->blocks[i].address || x->blocks[i].bytes != y->blocks[i].bytes ||
            strcmp(x->blocks[i].origin, y->blocks[i].origin) != 0)
            return false;
    return true;
}

static void *state_thread(void *p)
{
    state_job *j = p;
    for (int64_t t = j->first_ns; t < 60 * MS; t += 4 * MS, j->n_done++) {
        gt_mem_state *x = NULL, *between = NULL, *y = NULL;
        if (gt_analysis_state_at(&x, j->a, -1, t) != 0 || gt_analysis_state_at(&between, j->a, -1, t + MS) != 0 ||
            gt_analysis_state_at(&y, j->a, -1, t) != 0 || !same_state(x, y))
            j->n_diff++;
        gt_mem_state_free(x);
        gt_mem_state_free(between);
        gt_mem_state_free(y);
    }
    return NULL;
}

static void test_analyze_memory__state_queries_in_threads(void)
{
    gt_trace *t = allocator_trace();
    gt_analysis *a = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_analysis_load(&a, t, NULL), 0);
    gt_mem_state *want = NULL, *got = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_memory_state_at(&want, t, -1, 32 * MS + 2100 * US), 0);
    CU_ASSERT_EQUAL_FATAL(gt_analysis_state_at(&got, a, -1, 32 * MS + 2100 * US), 0);
    CU_ASSERT_TRUE(same_state(want, got));
    CU_ASSERT_EQUAL(got->allocated_bytes, 52 * MIB + 3 * 4096);
    gt_mem_state_free(want);
    gt_mem_state_free(got);
    state_job jobs[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (state_job){a, i * MS, 0, 0};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, state_thread, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CU_ASSERT_EQUAL(jobs[i].n_diff, 0);
        CU_ASSERT_TRUE(jobs[i].n_done >= 14);
    }
    gt_analysis_free(a);
    gt_trace_free(t);
}

/* 20,000 blocks, one in seven kept for good and one in five living 40 times
 * longer than the rest: the state at a time, read through the lives'
 * chunks and spans, holds exactly the lives a plain scan finds alive then. */
static void test_analyze_memory__state_from_chunked_lives(void)
{
    fx f;
    fx_open(&f, "many.sqlite");
    fx_heap(&f, 0, GT_HEAP_REGISTER, 1, HEAP1, 1LL << 40);
    enum { N = 20000 };
    for (int64_t i = 0; i < N; i++) {
        int64_t t = 1000 + i * 1000, bytes = 4096 + (i % 13) * 512;
        uint64_t addr = HEAP1 + (uint64_t)i * 16384;
        fx_heap(&f, t, GT_REGION_REGISTER, 1, addr, bytes);
        if (i % 7 != 0)
            fx_heap(&f, t + (i % 5 == 0 ? 40000 : 1500), GT_REGION_UNREGISTER, 1, addr, 0);
    }
    gt_trace *t = fx_close(&f);
    gt_analysis *a = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_analysis_load(&a, t, NULL), 0);
    gt_mem_series s;
    CU_ASSERT_EQUAL_FATAL(gt_analysis_memory(&s, a, 0), 0);
    CU_ASSERT_EQUAL(s.n_lives, N + 1); /* the blocks and the heap */
    int n_checked = 0, n_wrong = 0;
    for (int64_t at = -5; at < 1000 + (N + 50) * 1000; at += 7919 * 3) {
        size_t n_alive = 0;
        int64_t bytes = 0;
        for (size_t i = 0; i < s.n_lives; i++)
            if ((s.lives[i].roles & GT_MEM_ROLE_BLOCK) && s.lives[i].from_ns <= at && s.lives[i].to_ns > at) {
                n_alive++;
                bytes += s.lives[i].bytes;
            }
        gt_mem_state *st = NULL;
        if (gt_analysis_state_at(&st, a, -1, at) != 0 || st->n_blocks != n_alive || st->allocated_bytes != bytes)
            n_wrong++;
        n_checked++;
        gt_mem_state_free(st);
    }
    CU_ASSERT_TRUE(n_checked > 800);
    CU_ASSERT_EQUAL(n_wrong, 0);
    gt_mem_state *end = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_analysis_state_at(&end, a, -1, INT64_MAX), 0);
    CU_ASSERT_EQUAL(end->n_blocks, (N + 6) / 7); /* the kept ones */
    gt_mem_state_free(end);
    gt_analysis_free(a);
    gt_trace_free(t);
}

static const gt_test_case cases[] = {
    {"test_analyze_memory__origin_on_second_device", test_analyze_memory__origin_on_second_device},
    {"test_analyze_memory__state_from_chunked_lives", test_analyze_memory__state_from_chunked_lives},
    {"test_analyze_memory__state_queries_in_threads", test_analyze_memory__state_queries_in_threads},
    {"test_analyze_memory__peaks_and_fragmentation", test_analyze_memory__peaks_and_fragmentation},
    {"test_analyze_memory__leak_and_spike", test_analyze_memory__leak_and_spike},
    {"test_analyze_memory__no_leak", test_analyze_memory__no_leak},
    {"test_analyze_memory__state_at_time_and_step", test_analyze_memory__state_at_time_and_step},
    {"test_analyze_memory__device_allocations", test_analyze_memory__device_allocations},
    {"test_analyze_memory__heap_reset", test_analyze_memory__heap_reset},
    {"test_analyze_memory__heap_unregister", test_analyze_memory__heap_unregister},
    {"test_analyze_memory__two_processes_same_handles", test_analyze_memory__two_processes_same_handles},
    {"test_analyze_memory__actions_in_order", test_analyze_memory__actions_in_order},
    {"test_analyze_memory__spikes_kept_as_they_end", test_analyze_memory__spikes_kept_as_they_end},
    {"test_analyze_memory__state_by_replay", test_analyze_memory__state_by_replay},
    {"test_analyze_memory__extreme_rows", test_analyze_memory__extreme_rows},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"analyze_memory", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
