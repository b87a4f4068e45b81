/* gt_test.h: what every CUnit suite of gtrace shares: a runner that exits
 * with Automake's codes, scratch files, and the paths of the fixtures.
 * It does not know any module: suites include their module's header. */
#ifndef GT_TEST_H
#define GT_TEST_H

#include <CUnit/CUnit.h>
#include <stddef.h>

typedef struct gt_test_case {
    const char *name;
    void (*fn)(void);
} gt_test_case;

typedef struct gt_test_suite {
    const char *name;
    const gt_test_case *cases; /* ends with {NULL, NULL} */
} gt_test_suite;

/* Runs the suites (all, or those named in argv[1..]); returns the exit code:
 * 0 if every test passed, 1 otherwise. */
int gt_test_main(int argc, char **argv, const gt_test_suite *suites, size_t n_suites);

/* A fresh, empty scratch directory for this process (removed at exit). */
const char *gt_test_tmpdir(void);
/* A path inside the scratch directory; the returned buffer is the caller's (free()). */
char *gt_test_path(const char *name);
/* Absolute path of a fixture file under $GT_FIXTURES (caller frees); NULL and
 * a failed assertion if the fixture folder is missing. */
char *gt_test_fixture(const char *relpath);
/* Copies a file; 0 on success. */
int gt_test_copy(const char *from, const char *to);
/* Size of a file in bytes, -1 if it cannot be read. */
long long gt_test_file_size(const char *path);

#endif
