# Test harness shared by the unit suites: a CUnit runner and helpers.
if HAVE_CUNIT
check_LTLIBRARIES = tests/unit/libgttest.la
tests_unit_libgttest_la_SOURCES = tests/unit/gt_test.c tests/unit/gt_test.h
tests_unit_libgttest_la_CFLAGS = $(AM_CFLAGS) $(CUNIT_CFLAGS)
tests_unit_libgttest_la_LIBADD = $(CUNIT_LIBS)
endif
EXTRA_DIST += tests/gt-test-env.sh.in
