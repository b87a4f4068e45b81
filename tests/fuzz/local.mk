# tests/fuzz: every reader entry point (gtrace info, report, memory, diff,
# export; gtrace-view's headless views) on damaged traces, and gtrace import
# on damaged torch.profiler traces and snapshots; see README.md.
TESTS += tests/fuzz/fuzz.sh
EXTRA_DIST += tests/fuzz/fuzz.sh tests/fuzz/fuzz.py tests/fuzz/mutate.py tests/fuzz/mutate_import.py \
	tests/fuzz/README.md

# The analysis and the viewer's lanes on the rows the fuzzing found them
# failing on: times and sizes at the ends of int64, sums past INT64_MAX,
# names that are not UTF-8, lanes out of order.
if HAVE_CUNIT
check_PROGRAMS += tests/unit/test_analyze_extremes
TESTS += tests/unit/test_analyze_extremes
tests_unit_test_analyze_extremes_SOURCES = tests/unit/test_analyze_extremes.c tests/unit/analyze_fixture.h
tests_unit_test_analyze_extremes_CPPFLAGS = $(ANALYZE_CPPFLAGS)
tests_unit_test_analyze_extremes_CFLAGS = $(AM_CFLAGS) $(CUNIT_CFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_analyze_extremes_LDADD = libtrace/analyze/libgtanalyze.la tests/unit/libgttest.la $(CUNIT_LIBS) $(M_LIBS)
if HAVE_GTK
check_PROGRAMS += tests/unit/test_viewer_extremes
TESTS += tests/unit/test_viewer_extremes
tests_unit_test_viewer_extremes_SOURCES = tests/unit/test_viewer_extremes.c
tests_unit_test_viewer_extremes_CPPFLAGS = $(VIEWER_CPPFLAGS)
tests_unit_test_viewer_extremes_CFLAGS = $(AM_CFLAGS) $(GTK_CFLAGS) $(CUNIT_CFLAGS) -I$(top_srcdir)/tests/unit -I$(top_srcdir)/viewer
tests_unit_test_viewer_extremes_LDADD = viewer/libgtview.la tests/unit/libgttest.la $(GTK_LIBS) $(CUNIT_LIBS) $(M_LIBS)
endif
endif

# fuzz.sh's inputs and outputs (failing inputs included) go with `make clean`.
clean-local: clean-fuzz-work
clean-fuzz-work:
	-rm -rf tests/fuzz/work
.PHONY: clean-fuzz-work
