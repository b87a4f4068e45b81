/* test_analyze_oom.c: the report's Out of memory section on hand-built
 * traces: a mark of a category named "oom" in a caching allocator's heap
 * (step, phase, largest blocks by region name, the largest free gap and the
 * fragmentation verdict, growth since the previous step, each fix's
 * estimate), the importer's "out of memory on cuda:N" mark and a category
 * of another name, and a trace without a failure. */
#include "analyze_fixture.h"

#include <string.h>

#define HEAP 0x10000000ULL
#define OOM_CAT 3

static void region_name(fx *f, int64_t t, uint64_t addr, const char *name)
{
    gt_event ev = {.kind = GT_EV_HEAP};
    ev.u.heap.start_ns = t;
    ev.u.heap.global_tid = TID;
    ev.u.heap.operation = GT_REGION_NAME;
    ev.u.heap.address = addr;
    ev.u.heap.name = fx_s(f, name);
    fx_add(f, &ev);
}

static void block(fx *f, int64_t t, uint64_t addr, int64_t bytes, const char *name)
{
    fx_heap(f, t, GT_REGION_REGISTER, 1, addr, bytes);
    region_name(f, t + 1, addr, name);
}

/* A 16 MiB heap: parameters and gradients (4 MiB each) at 0 and 4 MiB.
 * Step 0 makes 2 MiB of activations in its forward and frees them in its
 * backward; step 1 makes 2 MiB at 8 MiB and 1 MiB at 12 MiB in its forward,
 * then fails to get 4 MiB: 5 MiB is free, in gaps of 2 and 3 MiB. */
static gt_trace *fragmented_trace(void)
{
    fx f;
    fx_open(&f, "oom_frag.sqlite");
    fx_heap(&f, 1 * US, GT_HEAP_REGISTER, 1, HEAP, 16 * MIB);
    fx_range(&f, 0, 1 * MS, "init");
    block(&f, 100 * US, HEAP, 4 * MIB, "parameters");
    block(&f, 200 * US, HEAP + 4 * MIB, 4 * MIB, "gradients");
    fx_range(&f, 2 * MS, 12 * MS, "step 0");
    fx_range(&f, 3 * MS, 6 * MS, "forward");
    block(&f, 3500 * US, HEAP + 8 * MIB, 2 * MIB, "block activations");
    fx_range(&f, 7 * MS, 10 * MS, "backward");
    fx_heap(&f, 9 * MS, GT_REGION_UNREGISTER, 1, HEAP + 8 * MIB, 0);
    fx_range(&f, 12 * MS, 22 * MS, "step 1");
    fx_range(&f, 13 * MS, 20 * MS, "forward");
    block(&f, 13500 * US, HEAP + 8 * MIB, 2 * MIB, "block activations");
    block(&f, 14 * MS, HEAP + 12 * MIB, 1 * MIB, "block activations");
    fx_category_on(&f, 100, 7, OOM_CAT, "oom", TID);
    fx_nvtx(&f, GT_NVTX_MARK, 15 * MS, -1, "out of memory on cpu: requested=4194304", 7, OOM_CAT, TID, 4 * MIB);
    return fx_close(&f);
}

static const gt_oom_fix *fix(const gt_oom *o, const char *name)
{
    for (size_t i = 0; i < o->n_fixes; i++)
        if (strcmp(o->fixes[i].fix, name) == 0)
            return &o->fixes[i];
    return NULL;
}

static void test_analyze_oom__fragmentation(void)
{
    gt_trace *t = fragmented_trace();
    gt_report *r = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_report_compute(&r, t, NULL), 0);
    const gt_oom *o = r->oom;
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_EQUAL(o->n_ooms, 1);
    CU_ASSERT_EQUAL(o->t_ns, 15 * MS);
    CU_ASSERT_EQUAL(o->step, 1);
    CU_ASSERT_STRING_EQUAL(o->phase, "forward");
    CU_ASSERT_STRING_EQUAL(o->range_path, "step 1 > forward");
    CU_ASSERT_EQUAL(o->requested_bytes, 4 * MIB);
    CU_ASSERT_EQUAL(o->allocated_bytes, 11 * MIB); /* 4 + 4 + 2 + 1, replayed */
    CU_ASSERT_EQUAL(o->reserved_bytes, 16 * MIB);
    CU_ASSERT_EQUAL(o->free_bytes, 5 * MIB);
    CU_ASSERT_EQUAL(o->largest_gap_bytes, 3 * MIB); /* [13, 16) MiB; [10, 12) is 2 */
    CU_ASSERT_EQUAL(o->shortfall_bytes, 1 * MIB);
    CU_ASSERT_TRUE(o->fragmentation);
    CU_ASSERT_EQUAL(o->limit_bytes, -1);
    CU_ASSERT_EQUAL_FATAL(o->n_blocks, 4);
    CU_ASSERT_STRING_EQUAL(o->blocks[0].name, "parameters");
    CU_ASSERT_STRING_EQUAL(o->blocks[1].name, "gradients");
    CU_ASSERT_EQUAL(o->blocks[2].bytes, 2 * MIB);
    CU_ASSERT_STRING_EQUAL(o->blocks[2].origin, "step 1 > forward");
    CU_ASSERT_EQUAL(o->blocks[3].bytes, 1 * MIB);
    CU_ASSERT_EQUAL(o->prev_step, 0);
    CU_ASSERT_EQUAL_FATAL(o->n_growth, 1);
    CU_ASSERT_STRING_EQUAL(o->growth[0].name, "block activations");
    CU_ASSERT_EQUAL(o->growth[0].before_bytes, 0);
    CU_ASSERT_EQUAL(o->growth[0].at_bytes, 3 * MIB);
    CU_ASSERT_EQUAL(o->step_bytes, 3 * MIB);
    CU_ASSERT_EQUAL_FATAL(o->n_fixes, 5);
    CU_ASSERT_EQUAL(fix(o, "activation checkpointing")->saved_bytes, 1 * MIB); /* 3 less the 2 MiB block */
    CU_ASSERT_TRUE(fix(o, "activation checkpointing")->enough);
    CU_ASSERT_EQUAL(fix(o, "smaller micro-batch")->saved_bytes, 3 * MIB / 2);
    CU_ASSERT_EQUAL(fix(o, "expandable segments")->saved_bytes, 2 * MIB); /* 5 free less the 3 MiB gap */
    CU_ASSERT_EQUAL(fix(o, "set_to_none gradients")->saved_bytes, 4 * MIB);
    CU_ASSERT_EQUAL(fix(o, "mixed precision")->saved_bytes, 3 * MIB / 2);
    FILE *f = tmpfile();
    CU_ASSERT_EQUAL(gt_report_print_text(r, f), 0);
    CU_ASSERT_EQUAL(gt_report_print_json(r, f), 0);
    fclose(f);
    gt_report_free(r);
    gt_trace_free(t);
}

/* The importer's mark (no category), a later failure, and a mark of a
 * category of another name that says requested= but is no failure. */
static void test_analyze_oom__imported_mark(void)
{
    fx f;
    fx_open(&f, "oom_import.sqlite");
    fx_heap(&f, 1 * US, GT_HEAP_REGISTER, 1, HEAP, 8 * MIB);
    fx_heap(&f, 10 * US, GT_REGION_REGISTER, 1, HEAP, 7 * MIB);
    fx_category_on(&f, 20 * US, 0, 5, "other", TID);
    fx_nvtx(&f, GT_NVTX_MARK, 30 * US, -1, "requested=99", 0, 5, TID, -1);
    fx_nvtx(&f, GT_NVTX_MARK, 40 * US, -1, "out of memory on cuda:0: 2097152 bytes requested, 0 free", 0, 0, TID, -1);
    fx_nvtx(&f, GT_NVTX_MARK, 50 * US, -1, "out of memory on cuda:0: 1048576 bytes requested, 0 free", 0, 0, TID, -1);
    gt_trace *t = fx_close(&f);
    gt_report *r = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_report_compute(&r, t, NULL), 0);
    const gt_oom *o = r->oom;
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_EQUAL(o->n_ooms, 2);
    CU_ASSERT_EQUAL(o->t_ns, 40 * US);
    CU_ASSERT_EQUAL(o->requested_bytes, 2 * MIB);
    CU_ASSERT_EQUAL(o->device_free_bytes, 0);
    CU_ASSERT_EQUAL(o->allocated_bytes, 7 * MIB);
    CU_ASSERT_EQUAL(o->reserved_bytes, 8 * MIB);
    CU_ASSERT_EQUAL(o->largest_gap_bytes, 1 * MIB);
    CU_ASSERT_EQUAL(o->shortfall_bytes, 1 * MIB);
    CU_ASSERT_FALSE(o->fragmentation); /* 1 MiB free, 2 asked: real use */
    CU_ASSERT_EQUAL(o->step, -1);
    CU_ASSERT_STRING_EQUAL(o->phase, "");
    gt_report_free(r);
    gt_trace_free(t);
}

static void test_analyze_oom__none(void)
{
    fx f;
    fx_open(&f, "oom_none.sqlite");
    fx_heap(&f, 1 * US, GT_HEAP_REGISTER, 1, HEAP, 8 * MIB);
    fx_nvtx(&f, GT_NVTX_MARK, 30 * US, -1, "loss scale", 0, 0, TID, -1);
    gt_trace *t = fx_close(&f);
    gt_report *r = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_report_compute(&r, t, NULL), 0);
    CU_ASSERT_PTR_NULL(r->oom);
    gt_report_free(r);
    gt_trace_free(t);
}

static const gt_test_case cases[] = {
    {"test_analyze_oom__fragmentation", test_analyze_oom__fragmentation},
    {"test_analyze_oom__imported_mark", test_analyze_oom__imported_mark},
    {"test_analyze_oom__none", test_analyze_oom__none},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"analyze_oom", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
