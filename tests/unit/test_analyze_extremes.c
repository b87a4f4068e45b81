/* test_analyze_extremes.c: the analysis on rows a damaged trace can hold:
 * times and sizes at the ends of int64, durations whose sum passes
 * INT64_MAX, names that are not UTF-8; and the Chrome export of a trace
 * without NVTX ranges. Run under --enable-sanitizers, UBSan stops at the
 * first overflow; without it the figures asserted here are wrong. */
#include "analyze_fixture.h"
#include "analyze_int.h"

#include <CUnit/CUnit.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Strict UTF-8 (RFC 3629), written apart from the code under test: decodes
 * each sequence and checks the code point's range. */
static bool utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (len == 0 || i + len > n)
            return false;
        uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_cp[len] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
            return false;
        i += len;
    }
    return true;
}

typedef struct membuf { char *p; size_t n; FILE *f; } membuf;

static void mb_open(membuf *b)
{
    memset(b, 0, sizeof *b);
    b->f = open_memstream(&b->p, &b->n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b->f);
}

static void mb_close(membuf *b)
{
    fclose(b->f);
    b->f = NULL;
}

static size_t count_of(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

/* What the model computes with: times within AN_TIME_LIMIT_NS, ends not
 * before starts, sizes from 0 to AN_BYTES_LIMIT. */
static void test_analyze_model__row_ok(void)
{
    gt_event ev = {.kind = GT_EV_KERNEL};
    ev.u.kernel.start_ns = 10;
    ev.u.kernel.end_ns = 20;
    CU_ASSERT_TRUE(an_row_ok(&ev));
    ev.u.kernel.start_ns = INT64_MIN;
    CU_ASSERT_FALSE(an_row_ok(&ev));
    ev.u.kernel.start_ns = 10;
    ev.u.kernel.end_ns = INT64_MAX;
    CU_ASSERT_FALSE(an_row_ok(&ev));
    ev.u.kernel.end_ns = 9; /* ends before it starts */
    CU_ASSERT_FALSE(an_row_ok(&ev));

    ev = (gt_event){.kind = GT_EV_MEMCPY};
    ev.u.memcpy.start_ns = 0;
    ev.u.memcpy.end_ns = 5;
    ev.u.memcpy.bytes = 4096;
    CU_ASSERT_TRUE(an_row_ok(&ev));
    ev.u.memcpy.bytes = -1;
    CU_ASSERT_FALSE(an_row_ok(&ev));
    ev.u.memcpy.bytes = INT64_MAX;
    CU_ASSERT_FALSE(an_row_ok(&ev));

    ev = (gt_event){.kind = GT_EV_HEAP};
    ev.u.heap.start_ns = -AN_TIME_LIMIT_NS;
    ev.u.heap.bytes = 0;
    CU_ASSERT_TRUE(an_row_ok(&ev));
    ev.u.heap.bytes = INT64_MIN;
    CU_ASSERT_FALSE(an_row_ok(&ev));

    ev = (gt_event){.kind = GT_EV_NVTX};
    ev.u.nvtx.start_ns = 100;
    ev.u.nvtx.end_ns = -1; /* a mark */
    CU_ASSERT_TRUE(an_row_ok(&ev));
    ev.u.nvtx.start_ns = INT64_MAX;
    CU_ASSERT_FALSE(an_row_ok(&ev));
}

/* The rows out of range that the reader hands over are left out of the
 * model, counted, and the report says how many; the span is that of the rest. */
static void test_analyze_model__refused_rows_counted(void)
{
    fx f;
    fx_open(&f, "extreme-refused.sqlite");
    fx_kernel(&f, 1000 * US, 1010 * US, 1020 * US, "k");
    fx_api(&f, INT64_MIN, 5, "cudaFree_v3020", 0);
    fx_api(&f, 2000 * US, INT64_MAX, "cudaMalloc_v3020", 0);
    fx_api(&f, 3000 * US, 2999 * US, "cudaMemset_v3020", 0); /* ends before it starts */
    gt_trace *t = fx_close(&f);
    int64_t handed_over = 0; /* the reader may refuse such rows itself */
    gt_iter *it = NULL;
    gt_event ev;
    CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, GT_EV_API, INT64_MIN, INT64_MAX), 0);
    while (gt_iter_next(it, &ev) == 1)
        handed_over += !an_row_ok(&ev);
    gt_iter_free(it);
    an_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(an_model_load(&m, t), 0);
    CU_ASSERT_EQUAL(m->n_refused, handed_over);
    CU_ASSERT_EQUAL(m->n_apis, 1); /* the launch */
    CU_ASSERT_EQUAL(m->span_start_ns, 1000 * US);
    CU_ASSERT_EQUAL(m->span_end_ns, 1020 * US);
    an_model_free(m);
    gt_report *r = fx_report(t, NULL);
    CU_ASSERT_EQUAL(r->n_refused, handed_over);
    CU_ASSERT_EQUAL(r->wall_ns, 20 * US);
    membuf b;
    mb_open(&b);
    gt_report_print_json(r, b.f);
    gt_report_print_text(r, b.f);
    mb_close(&b);
    char want[64];
    snprintf(want, sizeof want, "\"refused_rows\":%lld,", (long long)handed_over);
    CU_ASSERT_PTR_NOT_NULL(strstr(b.p, want));
    CU_ASSERT_EQUAL(strstr(b.p, "rows left out") != NULL, handed_over > 0);
    free(b.p);
    gt_report_free(r);
    gt_trace_free(t);
}

/* A sum of durations past INT64_MAX saturates. */
static void test_analyze_util__dist_saturates(void)
{
    int64_t d[5] = {INT64_MAX / 2, 3, INT64_MAX / 2, INT64_MAX / 2, 7};
    gt_dist g;
    an_dist(&g, d, 5);
    CU_ASSERT_EQUAL(g.n, 5);
    CU_ASSERT_EQUAL(g.total_ns, INT64_MAX);
    CU_ASSERT_EQUAL(g.min_ns, 3);
    CU_ASSERT_EQUAL(g.max_ns, INT64_MAX / 2);
    CU_ASSERT_TRUE(g.mean_ns > 0);
    CU_ASSERT_EQUAL(gt_sat_add(INT64_MIN, -1), INT64_MIN);
    CU_ASSERT_EQUAL(gt_sat_add(INT64_MAX, 1), INT64_MAX);
    CU_ASSERT_EQUAL(gt_sat_add(-5, 7), 2);
}

/* 1,100 calls of 2^53 ns each (times a reader accepts): their total is past
 * INT64_MAX and saturates in the report instead of wrapping negative. */
static void test_analyze_report__sums_saturate(void)
{
    fx f;
    fx_open(&f, "extreme-sums.sqlite");
    const int64_t half = (int64_t)1 << 52;
    for (int i = 0; i < 1100; i++)
        fx_api(&f, -half + i, half + i, "cudaStreamSynchronize_v3020", 0);
    fx_kernel(&f, 0, 10 * US, 20 * US, "k");
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    const gt_name_row *row = NULL;
    for (size_t i = 0; i < r->n_apis; i++)
        if (strcmp(r->apis[i].name, "cudaStreamSynchronize") == 0)
            row = &r->apis[i];
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    CU_ASSERT_EQUAL(row->d.n, 1100);
    CU_ASSERT_EQUAL(row->d.total_ns, INT64_MAX);
    CU_ASSERT_TRUE(row->share >= 0 && row->share <= 1);
    const gt_advice *a = fx_rule(r, "cuda_api_sync");
    CU_ASSERT_TRUE(a->gain_ns >= 0);
    membuf b;
    mb_open(&b);
    CU_ASSERT_EQUAL(gt_report_print_json(r, b.f), 0);
    CU_ASSERT_EQUAL(gt_report_print_text(r, b.f), 0);
    mb_close(&b);
    free(b.p);
    gt_report_free(r);
    gt_trace_free(t);
}

/* A report whose names are not UTF-8 (and hold control characters) is
 * valid UTF-8 JSON. */
static void test_analyze_report__json_names_not_utf8(void)
{
    fx f;
    fx_open(&f, "extreme-names.sqlite");
    fx_kernel(&f, 0, 10 * US, 20 * US, "gemm\xed\xa0\x80\xff\x01");
    fx_range(&f, 0, 100 * US, "step 1 \xc0\xaf\xf4\x90\x80\x80");
    gt_trace *t = fx_close(&f);
    gt_report *r = fx_report(t, NULL);
    membuf b;
    mb_open(&b);
    CU_ASSERT_EQUAL(gt_report_print_json(r, b.f), 0);
    mb_close(&b);
    CU_ASSERT_TRUE(utf8_valid((const unsigned char *)b.p, b.n));
    CU_ASSERT_TRUE(count_of(b.p, "gemm\\ufffd\\ufffd\\ufffd\\ufffd\\u0001") > 0);
    free(b.p);
    gt_report_free(r);
    gt_trace_free(t);
}

/* The Chrome export of a trace with kernels and no NVTX range (nsys's
 * cloverleaf, the CPU trainer's): nothing to project, and valid JSON. */
static void test_export_chrome__without_ranges(void)
{
    fx f;
    fx_open(&f, "chrome-no-ranges.sqlite");
    fx_kernel(&f, 0, 10 * US, 20 * US, "k1 \xed\xa0\x80");
    fx_kernel(&f, 30 * US, 40 * US, 50 * US, "k2");
    gt_trace *t = fx_close(&f);
    membuf b;
    mb_open(&b);
    CU_ASSERT_EQUAL(gt_export_chrome(t, b.f), 0);
    mb_close(&b);
    CU_ASSERT_TRUE(utf8_valid((const unsigned char *)b.p, b.n));
    CU_ASSERT_EQUAL(count_of(b.p, "\"cat\":\"kernel\""), 2);
    CU_ASSERT_EQUAL(count_of(b.p, "gpu_user_annotation"), 0);
    CU_ASSERT_TRUE(count_of(b.p, "k1 \\ufffd\\ufffd\\ufffd") == 1);
    free(b.p);
    gt_trace_free(t);
}

/* A row at INT64_MIN (a damaged or hand-made file) is left out of the
 * export; the base time is that of the rows in range. */
static void test_export_chrome__rows_out_of_range(void)
{
    fx f;
    fx_open(&f, "chrome-extreme.sqlite");
    fx_kernel(&f, 1000 * US, 1010 * US, 1020 * US, "k");
    fx_api(&f, INT64_MIN, 5, "cudaFree_v3020", 0);
    fx_api(&f, 2000 * US, INT64_MAX, "cudaMalloc_v3020", 0);
    gt_trace *t = fx_close(&f);
    membuf b;
    mb_open(&b);
    CU_ASSERT_EQUAL(gt_export_chrome(t, b.f), 0);
    mb_close(&b);
    CU_ASSERT_TRUE(count_of(b.p, "\"baseTimeNanoseconds\":1000000,") == 1);
    CU_ASSERT_EQUAL(count_of(b.p, "cudaFree"), 0);
    CU_ASSERT_EQUAL(count_of(b.p, "cudaMalloc"), 0);
    free(b.p);
    /* the CSV keeps every row the reader gives; a duration past int64 saturates */
    mb_open(&b);
    CU_ASSERT_EQUAL(gt_export_csv_kind(t, GT_EV_API, b.f), 0);
    mb_close(&b);
    if (strstr(b.p, "-9223372036854775808,5,")) /* where the reader hands the row over */
        CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "-9223372036854775808,5,9223372036854775807,"));
    free(b.p);
    gt_trace_free(t);
}

/* Device and stream ids are whatever the file says: INT32_MAX sorts after
 * the host like any other device. */
static void test_export_chrome__device_id_int32_max(void)
{
    fx f;
    fx_open(&f, "chrome-device-max.sqlite");
    fx_kernel_on(&f, PID, INT32_MAX, INT32_MAX, 100 * US, 110 * US, "k");
    fx_kernel_on(&f, PID, INT32_MIN, 7, 200 * US, 210 * US, "k");
    gt_trace *t = fx_close(&f);
    membuf b;
    mb_open(&b);
    CU_ASSERT_EQUAL(gt_export_chrome(t, b.f), 0);
    mb_close(&b);
    CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "\"pid\":2147483647,\"tid\":0,\"args\":{\"sort_index\":2164260863}"));
    free(b.p);
    gt_trace_free(t);
}

static const gt_test_case cases[] = {
    {"test_analyze_model__row_ok", test_analyze_model__row_ok},
    {"test_analyze_model__refused_rows_counted", test_analyze_model__refused_rows_counted},
    {"test_analyze_util__dist_saturates", test_analyze_util__dist_saturates},
    {"test_analyze_report__sums_saturate", test_analyze_report__sums_saturate},
    {"test_analyze_report__json_names_not_utf8", test_analyze_report__json_names_not_utf8},
    {"test_export_chrome__without_ranges", test_export_chrome__without_ranges},
    {"test_export_chrome__rows_out_of_range", test_export_chrome__rows_out_of_range},
    {"test_export_chrome__device_id_int32_max", test_export_chrome__device_id_int32_max},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"analyze_extremes", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
