/* gt_test.c: the CUnit runner and scratch-file helpers of gt_test.h. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "gt_test.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[4096];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    return remove(path);
}

static void remove_tmpdir(void)
{
    if (tmpdir[0] && !getenv("GT_TEST_KEEP"))
        nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *gt_test_tmpdir(void)
{
    if (!tmpdir[0]) {
        const char *base = getenv("GT_TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/gt-test-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(tmpdir)) {
            fprintf(stderr, "gt_test: cannot create a scratch directory %s: %s\n", tmpdir, strerror(errno));
            exit(99); /* Automake: hard error */
        }
        atexit(remove_tmpdir);
    }
    return tmpdir;
}

char *gt_test_path(const char *name)
{
    const char *dir = gt_test_tmpdir();
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

char *gt_test_fixture(const char *relpath)
{
    const char *dir = getenv("GT_FIXTURES");
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    size_t n = strlen(dir) + strlen(relpath) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, relpath);
    if (access(p, R_OK) != 0) {
        fprintf(stderr, "gt_test: fixture %s is missing (configure --with-fixtures=DIR)\n", p);
        free(p);
        CU_FAIL_FATAL("fixture missing");
        return NULL;
    }
    return p;
}

int gt_test_copy(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    int rc = -1;
    if (in && out) {
        char buf[65536];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, in)) > 0)
            if (fwrite(buf, 1, n, out) != n)
                goto cleanup;
        rc = ferror(in) ? -1 : 0;
    }
cleanup:
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        rc = -1;
    return rc;
}

long long gt_test_file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

static int wanted(int argc, char **argv, const char *name)
{
    if (argc < 2)
        return 1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return 1;
    return 0;
}

int gt_test_main(int argc, char **argv, const gt_test_suite *suites, size_t n_suites)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 99;
    for (size_t i = 0; i < n_suites; i++) {
        if (!wanted(argc, argv, suites[i].name))
            continue;
        CU_pSuite s = CU_add_suite(suites[i].name, NULL, NULL);
        if (!s)
            return 99;
        for (const gt_test_case *c = suites[i].cases; c->name; c++)
            if (!CU_add_test(s, c->name, c->fn))
                return 99;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    unsigned run = CU_get_number_of_tests_run();
    CU_cleanup_registry();
    return (failed == 0 && run > 0) ? 0 : 1;
}
