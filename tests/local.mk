# Test harness shared by the unit suites: a CUnit runner and helpers.
if HAVE_CUNIT
check_LTLIBRARIES = tests/unit/libgttest.la
tests_unit_libgttest_la_SOURCES = tests/unit/gt_test.c tests/unit/gt_test.h
tests_unit_libgttest_la_CPPFLAGS = $(ANALYZE_CPPFLAGS)
tests_unit_libgttest_la_CFLAGS = $(AM_CFLAGS) $(CUNIT_CFLAGS)
tests_unit_libgttest_la_LIBADD = $(CUNIT_LIBS)
endif
EXTRA_DIST += tests/gt-test-env.sh.in tests/gt-timeout.sh tests/lsan.supp
# Real nsys exports the readers are tested on (tests/fixtures/README.md).
EXTRA_DIST += tests/fixtures/README.md \
	tests/fixtures/nsys/cloverleaf-cuda-nsys2024.5.sqlite \
	tests/fixtures/nsys/saxpy-mpi-cuda-nsys2022.2.sqlite
# Mutation testing: `make mutation`, and tests written against its survivors.
include $(top_srcdir)/tests/mutation/local.mk
# The layering ARCHITECTURE.md states, held to the tree's includes.
TESTS += tests/integration/layers.sh
EXTRA_DIST += tests/integration/layers.sh tests/integration/layers.py
# The documents name only files that are there; the results index is whole.
TESTS += tests/integration/docs_check.sh
EXTRA_DIST += tests/integration/docs_check.sh tests/integration/docs_check.py
# Enum labels are spelled once, in the store's ENUM_* rows.
TESTS += tests/integration/labels_once.sh
EXTRA_DIST += tests/integration/labels_once.sh tests/integration/labels_once.py
# Saturating arithmetic and the comparators live once, in libtrace/base.
TESTS += tests/integration/base_once.sh
EXTRA_DIST += tests/integration/base_once.sh tests/integration/base_once.py
# The report's metrics are spelled once, in libtrace/analyze/metrics.c.
TESTS += tests/integration/metrics_once.sh
EXTRA_DIST += tests/integration/metrics_once.sh tests/integration/metrics_once.py
# The Chrome export of 1 M events in a bounded address space (ulimit -v).
TESTS += tests/integration/export_chrome_bounded.sh
EXTRA_DIST += tests/integration/export_chrome_bounded.sh
# memory --at and --step read the memory part of a big trace only.
TESTS += tests/integration/memory_window.sh
EXTRA_DIST += tests/integration/memory_window.sh tests/integration/bounded_common.sh
# report --steps reads the window of a big trace that kept its facts.
TESTS += tests/integration/report_window.sh
EXTRA_DIST += tests/integration/report_window.sh
