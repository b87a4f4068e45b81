/* test_analyze_vocab.c: names as gtrace's text outputs show them: a long
 * name cut in the middle so both ends stay, and the diff's metric column,
 * where ten operators that share their first 48 characters must still read
 * apart; sizes on a unit's edge. */
#include "analyze_fixture.h"

#include <string.h>

#include "gt_vocab.h"

static void test_analyze_vocab__cut_middle(void)
{
    char buf[128];
    const char *name = "autograd::engine::evaluate_function: AddmmBackward0";
    CU_ASSERT_PTR_EQUAL(gt_cut_middle(buf, sizeof buf, name, 60, 30), name); /* fits: itself */
    CU_ASSERT_STRING_EQUAL(gt_cut_middle(buf, sizeof buf, name, 20, 10), "autograd:\xe2\x80\xa6" "mBackward0");
    CU_ASSERT_EQUAL(gt_text_width(buf), 20);
    /* the tail is held so at least one character of the head stays */
    CU_ASSERT_STRING_EQUAL(gt_cut_middle(buf, sizeof buf, "abcdefghij", 5, 9), "a\xe2\x80\xa6hij");
    /* never inside a character: "é" is two bytes, one column */
    CU_ASSERT_STRING_EQUAL(gt_cut_middle(buf, sizeof buf, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9x", 4, 2),
                           "\xc3\xa9\xe2\x80\xa6\xc3\xa9x");
    char small[5];
    gt_cut_middle(small, sizeof small, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9x", 4, 2);
    CU_ASSERT_STRING_EQUAL(small, "\xc3\xa9"); /* "é…" needs 6 bytes: no part of a character */
}

/* The metric column of `gtrace diff` for rows (text), one per line. */
static size_t diff_lines(char lines[][256], size_t max, gt_diff_row *rows, size_t n)
{
    gt_diff d = {.rows = rows, .n_rows = n, .noise_floor = 0.05};
    char *text = NULL;
    size_t len = 0, n_lines = 0;
    FILE *f = open_memstream(&text, &len);
    CU_ASSERT_EQUAL_FATAL(gt_diff_print_text(&d, f), 0);
    fclose(f);
    const char *p = strstr(text, "\nmetric");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    p = strchr(p + 1, '\n') + 1;
    for (; *p != '\n' && n_lines < max; n_lines++) {
        const char *e = strchr(p, '\n');
        snprintf(lines[n_lines], 256, "%.*s", (int)(e - p), p);
        p = e + 1;
    }
    free(text);
    return n_lines;
}

static void test_analyze_vocab__diff_long_similar_names(void)
{
    static const char *const ops[] = {"AddmmBackward0", "MmBackward0",  "NativeLayerNormBackward0",
                                      "GeluBackward0",  "ViewBackward0", "TBackward0",
                                      "SoftmaxBackward0", "MulBackward0", "AddBackward0", "EmbeddingBackward0"};
    gt_diff_row rows[12];
    char names[12][200], lines[12][256];
    memset(rows, 0, sizeof rows);
    for (size_t i = 0; i < 10; i++) {
        snprintf(names[i], sizeof names[i], "CPU op time per step: autograd::engine::evaluate_function: %s", ops[i]);
        rows[i] = (gt_diff_row){.metric = names[i], .unit = "ns", .before = 1000, .after = 1000, .lo = 0, .hi = 0};
    }
    /* two that differ only in the middle */
    snprintf(names[10], sizeof names[10], "CPU op time per step: aten::%s_left_%s", "xxxxxxxxxxxxxxxxxxxx",
             "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");
    snprintf(names[11], sizeof names[11], "CPU op time per step: aten::%s_rite_%s", "xxxxxxxxxxxxxxxxxxxx",
             "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");
    for (size_t i = 10; i < 12; i++)
        rows[i] = (gt_diff_row){.metric = names[i], .unit = "ns", .before = 1000, .after = 1000};
    CU_ASSERT_EQUAL_FATAL(diff_lines(lines, 12, rows, 12), 12);
    char cells[12][256];
    for (size_t i = 0; i < 12; i++) {
        /* the metric cell: up to the run of spaces before "1.00 us" */
        char *b = strstr(lines[i], "1.00 us");
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        size_t end = (size_t)(b - lines[i]);
        while (end > 0 && lines[i][end - 1] == ' ')
            end--;
        snprintf(cells[i], sizeof cells[i], "%.*s", (int)end, lines[i]);
        CU_ASSERT_TRUE(gt_text_width(cells[i]) <= 64);
        CU_ASSERT_NSTRING_EQUAL(cells[i], "CPU op time per step: ", 22);
        if (i < 10) /* both ends: the operator's own name at the end */
            CU_ASSERT_TRUE(strlen(cells[i]) >= strlen(ops[i]) &&
                           strcmp(cells[i] + strlen(cells[i]) - strlen(ops[i]), ops[i]) == 0);
    }
    for (size_t i = 0; i < 12; i++)
        for (size_t k = i + 1; k < 12; k++)
            CU_ASSERT_STRING_NOT_EQUAL(cells[i], cells[k]);
    /* every row's columns line up */
    for (size_t i = 1; i < 12; i++)
        CU_ASSERT_EQUAL(gt_text_width(lines[i]), gt_text_width(lines[0]));
}

static void test_analyze_vocab__diff_short_names_whole(void)
{
    gt_diff_row rows[2] = {{.metric = "step time median", .unit = "ns", .before = 5, .after = 5},
                           {.metric = "kernel time per step: sgemm", .unit = "ns", .before = 5, .after = 5}};
    char lines[2][256];
    CU_ASSERT_EQUAL_FATAL(diff_lines(lines, 2, rows, 2), 2);
    CU_ASSERT_NSTRING_EQUAL(lines[0], "step time median                                 ", 49); /* 48 wide, as ever */
    CU_ASSERT_NSTRING_EQUAL(lines[1], "kernel time per step: sgemm ", 28);
}

/* Sizes on a unit's edge: 1024 bytes is 1 KiB, one byte less is bytes;
 * 1 MiB exactly is 1 MiB, not 1024 KiB; a negative change reads the same. */
static void test_analyze_vocab__bytes_on_unit_edges(void)
{
    char b[32];
    CU_ASSERT_STRING_EQUAL(gt_fmt_bytes(b, sizeof b, 1023), "1023 B");
    CU_ASSERT_STRING_EQUAL(gt_fmt_bytes(b, sizeof b, 1024), "1.00 KiB");
    CU_ASSERT_STRING_EQUAL(gt_fmt_bytes(b, sizeof b, 1024.0 * 1024), "1.00 MiB");
    CU_ASSERT_STRING_EQUAL(gt_fmt_bytes(b, sizeof b, -1024), "-1.00 KiB");
}

static const gt_test_case cases[] = {
    {"test_analyze_vocab__cut_middle", test_analyze_vocab__cut_middle},
    {"test_analyze_vocab__diff_long_similar_names", test_analyze_vocab__diff_long_similar_names},
    {"test_analyze_vocab__diff_short_names_whole", test_analyze_vocab__diff_short_names_whole},
    {"test_analyze_vocab__bytes_on_unit_edges", test_analyze_vocab__bytes_on_unit_edges},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"analyze_vocab", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
