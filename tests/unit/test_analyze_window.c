/* test_analyze_window.c: a report of some steps (--steps A:B) loads the
 * device over the window only (model_window.c), and says what a report on
 * the whole model says: on a trace whose events straddle the window's edges
 * (a kernel that starts before it and ends inside, a kernel launched long
 * before it, an NVTX range enclosing it, memory allocated before it and
 * freed inside), the text and JSON are byte for byte those of the whole
 * load, and the windowed model holds each of those events. */
#include "analyze_fixture.h"
#include "analyze_int.h"

#include <stdio.h>

/* Steps 0..4 of 10 ms each; the window is steps 2:3, [20 ms, 40 ms). */
static gt_trace *straddling_trace(void)
{
    fx f;
    fx_open(&f, "window.sqlite");
    fx_gpu(&f, 8, 16 * 1024 * MIB);
    fx_range(&f, 0, 50 * MS, "epoch");      /* encloses the window */
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "step %d", i);
        fx_range(&f, i * 10 * MS, (i + 1) * 10 * MS, name);
        fx_kernel(&f, i * 10 * MS + 100 * US, i * 10 * MS + 200 * US, i * 10 * MS + 3 * MS, "gemm");
    }
    fx_kernel(&f, 17 * MS, 18 * MS, 22 * MS, "straddler");      /* starts before the window */
    fx_kernel(&f, 2 * MS, 25 * MS, 26 * MS, "queued_long_ago"); /* launched long before */
    fx_devmem(&f, 5 * MS, GT_DEVMEM_ALLOC, 0x10000, 64 * MIB);  /* before the window... */
    fx_devmem(&f, 31 * MS, GT_DEVMEM_FREE, 0x10000, 64 * MIB);  /* ...freed inside */
    fx_heap(&f, 3 * MS, GT_HEAP_REGISTER, 1, 0x100000, 256 * MIB);
    fx_heap(&f, 6 * MS, GT_REGION_REGISTER, 1, 0x100000, 32 * MIB);
    fx_heap(&f, 33 * MS, GT_REGION_UNREGISTER, 1, 0x100000, 32 * MIB);
    fx_heap(&f, 34 * MS, GT_REGION_REGISTER, 1, 0x200000, 8 * MIB);
    return fx_close(&f);
}

static char *render(const gt_report *r, bool json)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(json ? gt_report_print_json(r, f) : gt_report_print_text(r, f), 0);
    fclose(f);
    return buf;
}

static bool has_act(const an_model *m, int64_t start_ns, int64_t end_ns)
{
    for (size_t i = 0; i < m->n_acts; i++)
        if (m->acts[i].start_ns == start_ns && m->acts[i].end_ns == end_ns)
            return true;
    return false;
}

static void test_analyze_window__same_as_whole(void)
{
    gt_trace *t = straddling_trace();
    gt_report_options opt;
    gt_report_options_init(&opt);
    opt.step_first = 2;
    opt.step_last = 3;
    an_model *whole = NULL, *win = NULL;
    gt_report *rw = NULL, *rn = NULL;
    CU_ASSERT_EQUAL_FATAL(an_model_load(&whole, t), 0);
    int rc = an_report_build(&rw, whole, &opt, NULL, NULL);
    if (rc != 0)
        fprintf(stderr, "%s\n", gt_error_last());
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_EQUAL_FATAL(an_model_load_for(&win, t, &opt), 0);
    CU_ASSERT_EQUAL_FATAL(an_report_build(&rn, win, &opt, NULL, NULL), 0);
    /* the window read less: the kernels of steps 0, 1 and 4 stay out */
    CU_ASSERT(win->n_acts < whole->n_acts);
    CU_ASSERT(has_act(win, 18 * MS, 22 * MS));
    CU_ASSERT(has_act(win, 25 * MS, 26 * MS));
    CU_ASSERT_PTR_NOT_NULL(an_model_launch(win, 7)); /* queued_long_ago's call, at 2 ms */
    CU_ASSERT_EQUAL(win->n_ranges, whole->n_ranges);
    CU_ASSERT_EQUAL(win->n_mem, whole->n_mem);
    for (int json = 0; json < 2; json++) {
        char *a = render(rw, json), *b = render(rn, json);
        CU_ASSERT_STRING_EQUAL(b, a);
        if (strcmp(a, b) != 0)
            fprintf(stderr, "--- whole\n%s\n--- window\n%s\n", a, b);
        free(a);
        free(b);
    }
    /* and the report said what the window holds */
    CU_ASSERT_EQUAL(rn->n_steps, 2);
    CU_ASSERT_EQUAL(rn->start_ns, 20 * MS);
    CU_ASSERT_EQUAL(rn->end_ns, 40 * MS);
    gt_report_free(rw);
    gt_report_free(rn);
    an_model_free(whole);
    an_model_free(win);
    gt_trace_free(t);
}

static const gt_test_case cases[] = {
    {"test_analyze_window__same_as_whole", test_analyze_window__same_as_whole},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"analyze_window", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
