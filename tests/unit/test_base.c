/* test_base.c: libtrace/base (gt_base.h, error.c): saturating arithmetic at
 * the int64 ends, the lower- and upper-bound searches against a linear scan
 * (duplicates, empty arrays, keys beyond both ends), the comparators, the
 * status names and one-line messages, and what the asserts do: in a debug
 * build (GT_DEBUG) a failed one aborts naming the file, line and expression;
 * in a release build GT_ALWAYS and GT_NEVER are their expression's value.
 * And the JSON writer (gt_json.h, json.c): commas and nesting, escaping
 * (RFC 3629's forbidden bytes become U+FFFD), numbers, layout, and the error
 * it keeps for a failed write or a misuse. */
#include "gt_base.h"
#include "gt_json.h"
#include "gt_test.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_base__saturating(void)
{
    CU_ASSERT_EQUAL(gt_sat_add(1, 2), 3);
    CU_ASSERT_EQUAL(gt_sat_add(INT64_MAX, 1), INT64_MAX);
    CU_ASSERT_EQUAL(gt_sat_add(INT64_MAX, INT64_MAX), INT64_MAX);
    CU_ASSERT_EQUAL(gt_sat_add(INT64_MIN, -1), INT64_MIN);
    CU_ASSERT_EQUAL(gt_sat_add(INT64_MIN, INT64_MAX), -1);
    CU_ASSERT_EQUAL(gt_sat_add(INT64_MAX - 5, 5), INT64_MAX);
    CU_ASSERT_EQUAL(gt_sat_sub(5, 7), -2);
    CU_ASSERT_EQUAL(gt_sat_sub(INT64_MIN, 1), INT64_MIN);
    CU_ASSERT_EQUAL(gt_sat_sub(INT64_MAX, -1), INT64_MAX);
    CU_ASSERT_EQUAL(gt_sat_sub(0, INT64_MIN), INT64_MAX); /* -INT64_MIN does not fit */
    CU_ASSERT_EQUAL(gt_sat_sub(-1, INT64_MIN), INT64_MAX);
    CU_ASSERT_EQUAL(gt_sat_sub(INT64_MIN, INT64_MAX), INT64_MIN);
    CU_ASSERT_EQUAL(gt_sat_sub(INT64_MAX, INT64_MAX), 0);
}

typedef struct span {
    int32_t tag;
    int64_t start_ns, end_ns;
} span;

static bool starts_before(const void *elem, const void *key)
{
    return ((const span *)elem)->start_ns < *(const int64_t *)key;
}

/* Every key from below the first to above the last, on sorted arrays with
 * runs of equal starts, of every length up to 40. */
static void test_base__bounds_match_a_scan(void)
{
    span v[40];
    uint64_t x = 88172645463325252ull;
    for (size_t n = 0; n <= 40; n++) {
        int64_t t = -20;
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            t += (int64_t)(x % 3); /* 0: a run of equal starts */
            v[i] = (span){(int32_t)i, t, t + 1};
        }
        for (int64_t key = -25; key <= t + 5; key++) {
            size_t lower = 0, upper = 0;
            while (lower < n && v[lower].start_ns < key)
                lower++;
            while (upper < n && v[upper].start_ns <= key)
                upper++;
            CU_ASSERT_EQUAL(GT_LOWER_BOUND(v, n, start_ns, key), lower);
            CU_ASSERT_EQUAL(GT_UPPER_BOUND(v, n, start_ns, key), upper);
            CU_ASSERT_EQUAL(gt_lower_bound(v, n, sizeof *v, &key, starts_before), lower);
            CU_ASSERT_EQUAL(GT_LOWER_BOUND(v, n, end_ns, key + 1), lower); /* the second member */
        }
    }
    const span *none = NULL;
    CU_ASSERT_EQUAL(GT_LOWER_BOUND(none, 0, start_ns, 5), 0);
    CU_ASSERT_EQUAL(GT_UPPER_BOUND(none, 0, start_ns, INT64_MIN), 0);
    int64_t ends[] = {INT64_MIN, -1, 0, 0, INT64_MAX};
    CU_ASSERT_EQUAL(gt_lower_bound_i64(ends, 5, sizeof ends[0], 0, INT64_MIN), 0);
    CU_ASSERT_EQUAL(gt_upper_bound_i64(ends, 5, sizeof ends[0], 0, INT64_MIN), 1);
    CU_ASSERT_EQUAL(gt_lower_bound_i64(ends, 5, sizeof ends[0], 0, 0), 2);
    CU_ASSERT_EQUAL(gt_upper_bound_i64(ends, 5, sizeof ends[0], 0, 0), 4);
    CU_ASSERT_EQUAL(gt_upper_bound_i64(ends, 5, sizeof ends[0], 0, INT64_MAX), 5);
}

static void test_base__comparators(void)
{
    int64_t v[] = {3, INT64_MIN, 0, INT64_MAX, -7, 3};
    qsort(v, 6, sizeof v[0], gt_cmp_i64);
    const int64_t sorted[] = {INT64_MIN, -7, 0, 3, 3, INT64_MAX};
    CU_ASSERT_EQUAL(memcmp(v, sorted, sizeof v), 0);
    int64_t a = INT64_MIN, b = INT64_MAX; /* a difference would overflow */
    CU_ASSERT(gt_cmp_i64(&a, &b) < 0);
    CU_ASSERT(gt_cmp_i64(&b, &a) > 0);
    CU_ASSERT_EQUAL(gt_cmp_i64(&a, &a), 0);
    int64_t key = 3;
    const int64_t *hit = bsearch(&key, v, 6, sizeof v[0], gt_cmp_i64);
    CU_ASSERT_TRUE(hit == &v[3] || hit == &v[4]);
    const char *s[] = {"pear", "apple", "fig", "apple"};
    qsort(s, 4, sizeof s[0], gt_cmp_str);
    CU_ASSERT_STRING_EQUAL(s[0], "apple");
    CU_ASSERT_STRING_EQUAL(s[1], "apple");
    CU_ASSERT_STRING_EQUAL(s[2], "fig");
    CU_ASSERT_STRING_EQUAL(s[3], "pear");
    const char *fig = "fig";
    CU_ASSERT_PTR_EQUAL(bsearch(&fig, s, 4, sizeof s[0], gt_cmp_str), &s[2]);
}

static void test_base__status_and_message(void)
{
    CU_ASSERT_STRING_EQUAL(gt_status_name(GT_OK), "ok");
    CU_ASSERT_STRING_EQUAL(gt_status_name(GT_ERR_CORRUPT), "corrupt file");
    CU_ASSERT_STRING_EQUAL(gt_status_name(GT_ERR_EXISTS), "file exists");
    CU_ASSERT_STRING_EQUAL(gt_status_name(-100), "unknown error");
    gt_error_clear();
    CU_ASSERT_STRING_EQUAL(gt_error_last(), "");
    CU_ASSERT_EQUAL(gt_error_set(GT_ERR_IO, "%s: cannot read:\n\t  page %d\n", "a.sqlite", 3), GT_ERR_IO);
    CU_ASSERT_STRING_EQUAL(gt_error_last(), "a.sqlite: cannot read: page 3");
    gt_error_clear();
    CU_ASSERT_STRING_EQUAL(gt_error_last(), "");
}

static int n_evaluated;
static bool count(bool v)
{
    n_evaluated++;
    return v;
}

/* Runs `fn` in a child; its exit status, and what it wrote on stderr in `err`. */
static int in_child(void (*fn)(void), char *err, size_t err_bytes)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        fn();
        _exit(0);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < err_bytes && (r = read(fds[0], err + n, err_bytes - 1 - n)) > 0)
        n += (size_t)r;
    err[n] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

static void assert_false(void)
{
    int answer = 41;
    GT_ASSERT(answer == 42);
}

static void never_true(void)
{
    if (GT_NEVER(1 + 1 == 2))
        _exit(3); /* a release build handles the case */
}

static void test_base__asserts(void)
{
    n_evaluated = 0;
    CU_ASSERT_TRUE(GT_ALWAYS(count(true)));
    CU_ASSERT_FALSE(GT_NEVER(count(false)));
    CU_ASSERT_EQUAL(n_evaluated, 2); /* once each, in either build */
    GT_ASSERT(count(true));
    char err[512];
    int st = in_child(assert_false, err, sizeof err);
    int st2 = in_child(never_true, err + 256, sizeof err - 256);
#ifdef GT_DEBUG
    CU_ASSERT_EQUAL(n_evaluated, 3);
    CU_ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "test_base.c:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "assertion failed: answer == 42"));
    CU_ASSERT_TRUE(WIFSIGNALED(st2) && WTERMSIG(st2) == SIGABRT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err + 256, "never 1 + 1 == 2"));
#else
    CU_ASSERT_EQUAL(n_evaluated, 2); /* a release GT_ASSERT runs nothing */
    CU_ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CU_ASSERT_STRING_EQUAL(err, "");
    CU_ASSERT_TRUE(WIFEXITED(st2) && WEXITSTATUS(st2) == 3);
#endif
}

/* ---- the JSON writer ---------------------------------------------------- */

/* A writer into memory; json_text() finishes it and returns the text. */
typedef struct jbuf { char *p; size_t n; FILE *f; gt_json j; } jbuf;
static gt_json *jopen(jbuf *b)
{
    b->p = NULL;
    b->f = open_memstream(&b->p, &b->n);
    gt_json_init(&b->j, b->f);
    return &b->j;
}
static const char *jtext(jbuf *b, int *rc)
{
    *rc = gt_json_finish(&b->j);
    fclose(b->f);
    return b->p;
}

static size_t count_str(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

static void test_json__nesting(void)
{
    jbuf b;
    int rc;
    gt_json *j = jopen(&b);
    gt_json_object(j);
    gt_json_kv_int(j, "a", 1);
    gt_json_key(j, "b");
    gt_json_array(j);
    gt_json_array(j);
    gt_json_end(j);
    gt_json_object(j);
    gt_json_end(j);
    gt_json_int(j, 2);
    gt_json_null(j);
    gt_json_bool(j, false);
    gt_json_end(j);
    gt_json_kv_bool(j, "c", true);
    gt_json_kv_str(j, "d", NULL);
    gt_json_end(j);
    CU_ASSERT_STRING_EQUAL(jtext(&b, &rc), "{\"a\":1,\"b\":[[],{},2,null,false],\"c\":true,\"d\":\"\"}");
    CU_ASSERT_EQUAL(rc, 0);
    free(b.p);
}

static void test_json__numbers(void)
{
    jbuf b;
    int rc;
    gt_json *j = jopen(&b);
    gt_json_array(j);
    gt_json_int(j, INT64_MIN);
    gt_json_int(j, INT64_MAX);
    gt_json_uint(j, UINT64_MAX);
    gt_json_num(j, 3.0);      /* integers as integers */
    gt_json_num(j, -0.5);
    gt_json_num(j, 1.0 / 3);  /* six significant digits */
    gt_json_num(j, 1e20);     /* past 9e15: %g */
    gt_json_num(j, NAN);      /* JSON has no NaN or infinity */
    gt_json_num(j, -INFINITY);
    gt_json_milli(j, 1500);   /* thousandths: Chrome's microseconds from ns */
    gt_json_milli(j, -1);
    gt_json_milli(j, 0);
    gt_json_milli(j, INT64_MIN);
    gt_json_end(j);
    CU_ASSERT_STRING_EQUAL(jtext(&b, &rc), "[-9223372036854775808,9223372036854775807,18446744073709551615,3,-0.5,"
                                           "0.333333,1e+20,null,null,1.500,-0.001,0.000,-9223372036854775.808]");
    CU_ASSERT_EQUAL(rc, 0);
    free(b.p);
}

static bool utf8_valid(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = gt_utf8_len(p);
        if (n == 0)
            return false;
        p += n;
    }
    return true;
}

/* Strings: quotes, backslashes and control characters escaped; every byte
 * sequence RFC 3629 forbids becomes U+FFFD, so the document is UTF-8. */
static void test_json__escaping(void)
{
    static const struct { const char *in; size_t n_bad; } cases[] = {
        {"ok \xe2\x9c\x93 \xf0\x9f\x98\x80", 0}, /* check mark, emoji: kept */
        {"\xed\xa0\x80", 3},                     /* a surrogate (U+D800) */
        {"\xe0\x80\xaf", 3},                     /* '/' overlong in 3 bytes */
        {"\xc0\xaf", 2},                         /* '/' overlong in 2 bytes */
        {"\xf4\x90\x80\x80", 4},                 /* past U+10FFFF */
        {"\xf5\x80\x80\x80", 4},
        {"\xff\xfe", 2},
        {"\xe2\x82", 2},                         /* cut short */
    };
    jbuf b;
    int rc;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gt_json_str(jopen(&b), cases[i].in);
        const char *out = jtext(&b, &rc);
        CU_ASSERT_TRUE(utf8_valid(out));
        CU_ASSERT_EQUAL(count_str(out, "\\ufffd"), cases[i].n_bad);
        CU_ASSERT_EQUAL(rc, 0);
        free(b.p);
    }
    gt_json *j = jopen(&b);
    gt_json_object(j);
    gt_json_kv_str(j, "k\"ey", "a\x01\x1b\"\\\n\r\t/\x7f");
    gt_json_end(j);
    CU_ASSERT_STRING_EQUAL(jtext(&b, &rc), "{\"k\\\"ey\":\"a\\u0001\\u001b\\\"\\\\\\n\\r\\t/\x7f\"}");
    free(b.p);
}

/* Layout: whitespace before the next item or bracket, json.dump's separators. */
static void test_json__layout(void)
{
    jbuf b;
    int rc;
    gt_json *j = jopen(&b);
    gt_json_object(j);
    gt_json_spaced(j, true);
    gt_json_kv_int(j, "a", 1);
    gt_json_kv_int(j, "b", 2);
    gt_json_spaced(j, false);
    gt_json_ws(j, "\n");
    gt_json_key(j, "c");
    gt_json_array(j);
    for (int i = 0; i < 2; i++) {
        gt_json_ws(j, "\n");
        gt_json_int(j, i);
    }
    gt_json_ws(j, "\n");
    gt_json_end(j);
    gt_json_end(j);
    gt_json_ws(j, "\n");
    CU_ASSERT_STRING_EQUAL(jtext(&b, &rc), "{\"a\": 1, \"b\": 2,\n\"c\":[\n0,\n1\n]}\n");
    CU_ASSERT_EQUAL(rc, 0);
    free(b.p);
}

static void value_without_key(void)
{
    jbuf b;
    gt_json *j = jopen(&b);
    gt_json_object(j);
    gt_json_int(j, 1);
    gt_json_end(j);
    int rc;
    jtext(&b, &rc);
    _exit(rc == GT_ERR_INVALID ? 3 : 4);
}

/* The error kept: a failed write is GT_ERR_IO, a container left open or a
 * value without its key GT_ERR_INVALID (the latter asserted in a debug build). */
static void test_json__errors(void)
{
    FILE *ro = fopen("/dev/null", "r"); /* every write fails */
    CU_ASSERT_PTR_NOT_NULL_FATAL(ro);
    gt_json j;
    gt_json_init(&j, ro);
    gt_json_object(&j);
    gt_json_kv_str(&j, "a", "b");
    gt_json_end(&j);
    CU_ASSERT_EQUAL(gt_json_finish(&j), GT_ERR_IO);
    fclose(ro);

    jbuf b;
    int rc;
    gt_json *w = jopen(&b);
    gt_json_array(w);
    gt_json_object(w);
    gt_json_end(w);
    jtext(&b, &rc);
    CU_ASSERT_EQUAL(rc, GT_ERR_INVALID);
    CU_ASSERT_STRING_EQUAL(b.p, "[{}");
    free(b.p);

    char err[256];
    int st = in_child(value_without_key, err, sizeof err);
#ifdef GT_DEBUG
    CU_ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "json.c:"));
#else
    CU_ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 3);
#endif
}

static const gt_test_case json_cases[] = {
    {"test_json__nesting", test_json__nesting},
    {"test_json__numbers", test_json__numbers},
    {"test_json__escaping", test_json__escaping},
    {"test_json__layout", test_json__layout},
    {"test_json__errors", test_json__errors},
    {NULL, NULL},
};

static const gt_test_case cases[] = {
    {"test_base__saturating", test_base__saturating},
    {"test_base__bounds_match_a_scan", test_base__bounds_match_a_scan},
    {"test_base__comparators", test_base__comparators},
    {"test_base__status_and_message", test_base__status_and_message},
    {"test_base__asserts", test_base__asserts},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"base", cases}, {"json", json_cases}};
    return gt_test_main(argc, argv, suites, 2);
}
