/* test_import_json.c: libtrace/import's streaming JSON reader: the tokens and
 * texts of every kind of value (escapes, surrogate pairs, strings longer than
 * the read buffer), gzip read the same as plain, Kineto's microseconds read
 * exactly into nanoseconds, Python's NaN and Infinity, a byte-order mark,
 * strings with \u0000 or over 16 MiB flagged and read past, and malformed
 * inputs refused with the line and what was expected, never read past. */
#include "config.h"

#include "gt_test.h"
#include "import_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static char *write_file(const char *name, const char *text, size_t n)
{
    char *p = gt_test_path(name);
    FILE *f = fopen(p, "wb");
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT_FATAL(fwrite(text, 1, n, f) == n);
    fclose(f);
    return p;
}

static char *write_gz(const char *name, const char *text, size_t n)
{
    char *p = gt_test_path(name);
    gzFile g = gzopen(p, "wb");
    CU_ASSERT_FATAL(g != NULL);
    CU_ASSERT_FATAL(gzwrite(g, text, (unsigned)n) == (int)n);
    gzclose(g);
    return p;
}

/* Reads every token of `path` into a compact description: one letter per
 * token, texts in brackets. */
static int describe(const char *path, char *out, size_t out_bytes)
{
    json_reader *r = NULL;
    json_tok t;
    int rc = json_open(&r, path);
    size_t n = 0;
    out[0] = '\0';
    while (rc == 0) {
        if ((rc = json_next(r, &t)) < 0 || t == JT_EOF)
            break;
        static const char letters[] = "E{}[]ksntfz";
        n += (size_t)snprintf(out + n, out_bytes - n, "%c", letters[t]);
        if (t == JT_KEY || t == JT_STR || t == JT_NUM)
            n += (size_t)snprintf(out + n, out_bytes - n, "(%s)", json_text(r, NULL));
        if (n >= out_bytes)
            break;
    }
    json_free(r);
    return rc;
}

static void test_import_json__tokens(void)
{
    static const char doc[] =
        "{\"a\": [1, -2.5e3, 0.125, true, false, null, \"x\\\"y\\\\z\\/\\n\"],\n"
        " \"\\u00e9t\\u00E9\": {\"\": []}, \"emoji\": \"\\ud83d\\ude00\", \"raw\": \"caf\xc3\xa9\"}  \n";
    char *p = write_file("tokens.json", doc, sizeof doc - 1);
    char got[512];
    CU_ASSERT_EQUAL_FATAL(describe(p, got, sizeof got), 0);
    CU_ASSERT_STRING_EQUAL(got, "{k(a)[n(1)n(-2.5e3)n(0.125)tfzs(x\"y\\z/\n)]k(\xc3\xa9t\xc3\xa9){k()[]}"
                                "k(emoji)s(\xf0\x9f\x98\x80)k(raw)s(caf\xc3\xa9)}");
    /* the same document gzipped reads the same */
    char *g = write_gz("tokens.json.gz", doc, sizeof doc - 1);
    char got_gz[512];
    CU_ASSERT_EQUAL_FATAL(describe(g, got_gz, sizeof got_gz), 0);
    CU_ASSERT_STRING_EQUAL(got_gz, got);
    free(p);
    free(g);
}

/* A string four times the reader's buffer, and skipping a big nested value. */
static void test_import_json__long_values_and_skip(void)
{
    size_t n = 256 * 1024;
    char *doc = malloc(n + 128);
    CU_ASSERT_FATAL(doc != NULL);
    size_t k = (size_t)sprintf(doc, "[{\"skip\": [[1, {\"q\": [2]}], \"s\"]}, \"");
    for (size_t i = 0; i < n; i++)
        doc[k++] = (char)('a' + i % 26);
    k += (size_t)sprintf(doc + k, "\", 7]");
    char *p = write_file("long.json", doc, k);
    json_reader *r = NULL;
    json_tok t;
    size_t len;
    CU_ASSERT_EQUAL_FATAL(json_open(&r, p), 0);
    CU_ASSERT(json_next(r, &t) == 0 && t == JT_ARR);
    CU_ASSERT(json_next(r, &t) == 0 && t == JT_OBJ);
    CU_ASSERT(json_next(r, &t) == 0 && t == JT_KEY);
    CU_ASSERT(json_next(r, &t) == 0 && t == JT_ARR);
    CU_ASSERT_EQUAL(json_skip(r, t), 0);
    CU_ASSERT_EQUAL(json_depth(r), 2);
    CU_ASSERT(json_next(r, &t) == 0 && t == JT_OBJ_END);
    CU_ASSERT(json_next(r, &t) == 0 && t == JT_STR);
    const char *s = json_text(r, &len);
    CU_ASSERT_EQUAL(len, n);
    CU_ASSERT(s[0] == 'a' && s[n - 1] == (char)('a' + (n - 1) % 26));
    CU_ASSERT(json_next(r, &t) == 0 && t == JT_NUM);
    CU_ASSERT_STRING_EQUAL(json_text(r, NULL), "7");
    CU_ASSERT(json_next(r, &t) == 0 && t == JT_ARR_END);
    CU_ASSERT(json_next(r, &t) == 0 && t == JT_EOF);
    json_free(r);
    free(doc);
    free(p);
}

static void test_import_json__microseconds(void)
{
    static const struct { const char *s; bool ok; int64_t ns; } cases[] = {
        {"1.5", true, 1500},
        {"4793142779985.820", true, 4793142779985820LL},   /* Kineto's, exact */
        {"1790857026000000.001", true, 1790857026000000001LL},
        {"0.0004", true, 0},
        {"0.0005", true, 1},                               /* nearest */
        {"2.0009", true, 2001},
        {"-2.25", true, -2250},
        {"17", true, 17000},
        {"1e3", true, 1000000},
        {"1.0000007e3", true, 1000001},                    /* an exponent: nearest too */
        {"-1.0000007e3", true, -1000001},
        {"9223372036854775.807", true, INT64_MAX},
        {"9223372036854775.808", false, 0},
        {"99999999999999999999", false, 0},
        {"1.5x", false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t ns = 0;
        bool ok = json_us_to_ns(cases[i].s, &ns);
        CU_ASSERT_EQUAL(ok, cases[i].ok);
        if (ok && cases[i].ok && ns != cases[i].ns)
            fprintf(stderr, "%s -> %lld, want %lld\n", cases[i].s, (long long)ns, (long long)cases[i].ns);
        if (cases[i].ok)
            CU_ASSERT_EQUAL(ns, cases[i].ns);
    }
    int64_t v;
    CU_ASSERT(json_int("-9223372036854775808", &v) && v == INT64_MIN);
    CU_ASSERT(!json_int("9223372036854775808", &v));
    CU_ASSERT(!json_int("1.0", &v));
    CU_ASSERT(!json_int("", &v));
}

/* Malformed documents: each fails (never reads past the end) with a message
 * naming the file and saying what was wrong. */
static void test_import_json__errors(void)
{
    static const struct { const char *doc; const char *says; } cases[] = {
        {"", "empty"},
        {"[1, 2", "truncated"},
        {"[1,]", "unexpected ']'"},
        {"{\"a\" 1}", "expected ':'"},
        {"[1 2]", "expected ',' or ']'"},
        {"{\"a\": 1,}", "expected a key after ','"},
        {"{1: 2}", "expected a key or '}'"},
        {"[01]", "malformed number '01'"},
        {"[1.]", "malformed number"},
        {"[-]", "malformed number"},
        {"[1e]", "malformed number"},
        {"[tru]", "unknown word"},
        {"[\"abc", "ends inside a string"},
        {"[\"a\tb\"]", "control character"},
        {"[\"\\x\"]", "unknown escape"},
        {"[\"\\u12G4\"]", "4 hex digits"},
        {"[\"\\udc00\"]", "lone UTF-16 low surrogate"},
        {"[\"\\ud800x\"]", "high surrogate without its low half"},
        {"[Nan]", "unknown word"},
        {"[-Inf]", "unknown word"},
        {"[- Infinity]", "malformed number"},
        {"[1, \xef\xbb\xbf" "2]", "unexpected byte 0xef"},
        {"{\"a\": 1}}", "text after the end"},
        {"[1]\n[2]", "line 2: text after the end"},
        {"\x01", "unexpected byte 0x01"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *p = write_file("bad.json", cases[i].doc, strlen(cases[i].doc));
        char got[256];
        int rc = describe(p, got, sizeof got);
        CU_ASSERT_EQUAL(rc, GT_ERR_CORRUPT);
        CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), p));
        if (!strstr(gt_error_last(), cases[i].says)) {
            fprintf(stderr, "case %zu (%s): got '%s'\n", i, cases[i].doc, gt_error_last());
            CU_FAIL("message");
        }
        free(p);
    }
    /* nesting past JSON_MAX_DEPTH */
    char deep[2 * JSON_MAX_DEPTH + 8];
    memset(deep, '[', JSON_MAX_DEPTH + 1);
    memset(deep + JSON_MAX_DEPTH + 1, ']', JSON_MAX_DEPTH + 1);
    char *p = write_file("deep.json", deep, 2 * JSON_MAX_DEPTH + 2);
    char got[2048];
    CU_ASSERT_EQUAL(describe(p, got, sizeof got), GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "nested more than 64 deep"));
    free(p);
    /* a gzip stream cut short */
    static const char doc[] = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"aaaaaaaaaaaaaaaaaaaaaaaaa\"}]}";
    char *g = write_gz("cut.json.gz", doc, sizeof doc - 1);
    long long size = gt_test_file_size(g);
    CU_ASSERT_FATAL(size > 20);
    CU_ASSERT_FATAL(truncate(g, size - 12) == 0);
    int rc = describe(g, got, sizeof got);
    if (rc != GT_ERR_CORRUPT)
        fprintf(stderr, "cut gzip: %d %s [%s]\n", rc, gt_error_last(), got);
    CU_ASSERT_EQUAL(rc, GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), g));
    free(g);
    /* a missing file */
    CU_ASSERT_EQUAL(describe("/nonexistent/x.json", got, sizeof got), GT_ERR_NOTFOUND);
}

/* Members and elements one at a time: keys cut to the caller's buffer,
 * nested values left to the caller, the close reported, not read past. */
static void test_import_json__members_and_elements(void)
{
    static const char doc[] = "{\"short\": [1, {\"x\": 2}, \"s\"], \"a_rather_long_key\": true, \"e\": {}}";
    char *p = write_file("members.json", doc, sizeof doc - 1);
    json_reader *r = NULL;
    json_tok t;
    char key[8];
    CU_ASSERT_EQUAL_FATAL(json_open(&r, p), 0);
    CU_ASSERT_EQUAL_FATAL(json_next(r, &t), 0);
    CU_ASSERT_EQUAL_FATAL(t, JT_OBJ);
    CU_ASSERT_EQUAL(json_next_member(r, key, sizeof key, &t), 1);
    CU_ASSERT_STRING_EQUAL(key, "short");
    CU_ASSERT_EQUAL_FATAL(t, JT_ARR);
    CU_ASSERT_EQUAL(json_next_element(r, &t), 1);
    CU_ASSERT_EQUAL(t, JT_NUM);
    CU_ASSERT_STRING_EQUAL(json_text(r, NULL), "1");
    CU_ASSERT_EQUAL(json_next_element(r, &t), 1);
    CU_ASSERT_EQUAL_FATAL(t, JT_OBJ);
    CU_ASSERT_EQUAL(json_skip(r, t), 0);
    CU_ASSERT_EQUAL(json_next_element(r, &t), 1);
    CU_ASSERT_EQUAL(t, JT_STR);
    CU_ASSERT_EQUAL(json_next_element(r, &t), 0); /* ] */
    CU_ASSERT_EQUAL(json_next_member(r, key, sizeof key, &t), 1);
    CU_ASSERT_STRING_EQUAL(key, "a_rathe"); /* cut to 8 bytes with its NUL */
    CU_ASSERT_EQUAL(t, JT_TRUE);
    CU_ASSERT_EQUAL(json_next_member(r, key, sizeof key, &t), 1);
    CU_ASSERT_STRING_EQUAL(key, "e");
    CU_ASSERT_EQUAL_FATAL(t, JT_OBJ);
    CU_ASSERT_EQUAL(json_next_member(r, key, sizeof key, &t), 0); /* the inner } */
    CU_ASSERT_EQUAL(json_depth(r), 1);
    CU_ASSERT_EQUAL(json_next_member(r, key, sizeof key, &t), 0); /* the outer } */
    CU_ASSERT_EQUAL(json_depth(r), 0);
    CU_ASSERT_EQUAL(json_next(r, &t), 0);
    CU_ASSERT_EQUAL(t, JT_EOF);
    json_free(r);
    /* a member cut short is the reader's error, naming the file */
    static const char cut[] = "{\"k\": ";
    char *c = write_file("member_cut.json", cut, sizeof cut - 1);
    CU_ASSERT_EQUAL_FATAL(json_open(&r, c), 0);
    CU_ASSERT_EQUAL_FATAL(json_next(r, &t), 0);
    CU_ASSERT_EQUAL(json_next_member(r, key, sizeof key, &t), GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), c));
    json_free(r);
    free(p);
    free(c);
}

/* What Python's json.dump writes beyond RFC 8259 (NaN, Infinity, -Infinity)
 * reads as numbers; a UTF-8 byte-order mark is read past, plain or gzipped. */
static void test_import_json__python_words_and_bom(void)
{
    static const char doc[] = "\xef\xbb\xbf[NaN, Infinity, -Infinity, {\"a\": -Infinity}]";
    char *p = write_file("python.json", doc, sizeof doc - 1);
    char *g = write_gz("python.json.gz", doc, sizeof doc - 1);
    char got[256];
    CU_ASSERT_EQUAL_FATAL(describe(p, got, sizeof got), 0);
    CU_ASSERT_STRING_EQUAL(got, "[n(NaN)n(Infinity)n(-Infinity){k(a)n(-Infinity)}]");
    CU_ASSERT_EQUAL_FATAL(describe(g, got, sizeof got), 0);
    CU_ASSERT_STRING_EQUAL(got, "[n(NaN)n(Infinity)n(-Infinity){k(a)n(-Infinity)}]");
    int64_t v;
    CU_ASSERT(!json_int("NaN", &v) && !json_us_to_ns("NaN", &v) && !json_us_to_ns("-Infinity", &v));
    free(p);
    free(g);
}

/* A string with \u0000, or over 16 MiB, is read to its end and flagged, so
 * that a caller can skip what holds it and read on; such a key reads as "". */
static void test_import_json__odd_strings_flagged(void)
{
    size_t n = (17u << 20) + 5;
    char *doc = malloc(n + 128);
    CU_ASSERT_FATAL(doc != NULL);
    size_t k = (size_t)sprintf(doc, "{\"a\\u0000b\": \"x\\u0000y\", \"k\": \"");
    memset(doc + k, 'z', n);
    k += n;
    k += (size_t)sprintf(doc + k, "\", \"after\": 1}");
    char *p = write_file("odd.json", doc, k);
    json_reader *r = NULL;
    json_tok t;
    char key[16];
    size_t len;
    CU_ASSERT_EQUAL_FATAL(json_open(&r, p), 0);
    CU_ASSERT(json_next(r, &t) == 0 && t == JT_OBJ);
    CU_ASSERT_EQUAL(json_next_member(r, key, sizeof key, &t), 1);
    CU_ASSERT_STRING_EQUAL(key, "");
    CU_ASSERT_EQUAL(t, JT_STR);
    CU_ASSERT_STRING_EQUAL(json_text(r, NULL), "xy");
    CU_ASSERT_EQUAL(json_text_flags(r), JSON_TEXT_NUL);
    CU_ASSERT_EQUAL(json_next_member(r, key, sizeof key, &t), 1);
    CU_ASSERT_STRING_EQUAL(key, "k");
    CU_ASSERT_EQUAL(t, JT_STR);
    json_text(r, &len);
    CU_ASSERT(len > 0 && len < 16u << 20);
    CU_ASSERT_EQUAL(json_text_flags(r), JSON_TEXT_CUT);
    CU_ASSERT_EQUAL(json_next_member(r, key, sizeof key, &t), 1);
    CU_ASSERT_STRING_EQUAL(key, "after");
    CU_ASSERT_EQUAL(json_text_flags(r), 0);
    CU_ASSERT_EQUAL(json_next_member(r, key, sizeof key, &t), 0);
    CU_ASSERT(json_next(r, &t) == 0 && t == JT_EOF);
    json_free(r);
    free(doc);
    free(p);
}

static const gt_test_case cases[] = {
    {"test_import_json__tokens", test_import_json__tokens},
    {"test_import_json__long_values_and_skip", test_import_json__long_values_and_skip},
    {"test_import_json__microseconds", test_import_json__microseconds},
    {"test_import_json__errors", test_import_json__errors},
    {"test_import_json__members_and_elements", test_import_json__members_and_elements},
    {"test_import_json__python_words_and_bom", test_import_json__python_words_and_bom},
    {"test_import_json__odd_strings_flagged", test_import_json__odd_strings_flagged},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"import_json", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
