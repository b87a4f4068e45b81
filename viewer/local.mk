# viewer: gtrace-view (GTK 3 + cairo). The models and the drawing are a
# convenience library, so the tests and bench/bench_viewer use the same code
# as the program, with or without a display.
if HAVE_GTK
noinst_LTLIBRARIES += viewer/libgtview.la
viewer_libgtview_la_SOURCES = \
	viewer/gv-lane.h viewer/gv-lane.c \
	viewer/gv-names.h viewer/gv-names.c \
	viewer/gv-align.h viewer/gv-align.c \
	viewer/gv-trace-model.h viewer/gv-trace-model-private.h viewer/gv-trace-model.c \
	viewer/gv-trace-loader.c viewer/gv-trace-describe.c viewer/gv-trace-details.c \
	viewer/gv-mem-stack.h viewer/gv-mem-stack.c \
	viewer/gv-view.h viewer/gv-view.c viewer/gv-colors.h \
	viewer/gv-render.h viewer/gv-render-private.h viewer/gv-render.c viewer/gv-render-overlay.c \
	viewer/gv-render-layout.c \
	viewer/gv-timeline.h viewer/gv-timeline.c \
	viewer/gv-range-stats.h viewer/gv-range-stats.c \
	viewer/gv-range-view.h viewer/gv-range-view.c \
	viewer/gv-top-view.h viewer/gv-top-view.c \
	viewer/gv-memory-view.h viewer/gv-memory-view.c viewer/gv-mem-steps.h viewer/gv-mem-steps.c \
	viewer/gv-summary.h viewer/gv-summary.c \
	viewer/gv-compare.h viewer/gv-compare.c \
	viewer/gv-window.h viewer/gv-window.c
# The viewer reads traces through the analysis, opens PyTorch files through
# the import's opener (libgtopen) and writes by the engine's output rule
# (libgtoutpath).
VIEWER_CPPFLAGS = $(ANALYZE_CPPFLAGS) -I$(top_srcdir)/libtrace/record -I$(top_srcdir)/libtrace/import
viewer_libgtview_la_CPPFLAGS = $(VIEWER_CPPFLAGS)
viewer_libgtview_la_CFLAGS = $(AM_CFLAGS) $(GTK_CFLAGS)
viewer_libgtview_la_LIBADD = libtrace/record/libgtoutpath.la libtrace/import/libgtopen.la libtrace/analyze/libgtanalyze.la $(GTK_LIBS) $(M_LIBS)

bin_PROGRAMS += viewer/gtrace-view
dist_man_MANS += viewer/gtrace-view.1
viewer_gtrace_view_SOURCES = viewer/main.c
viewer_gtrace_view_CPPFLAGS = $(VIEWER_CPPFLAGS)
viewer_gtrace_view_CFLAGS = $(AM_CFLAGS) $(GTK_CFLAGS)
viewer_gtrace_view_LDADD = viewer/libgtview.la $(GTK_LIBS)

# The model, the level of detail and headless drawing (no display needed).
if HAVE_CUNIT
check_PROGRAMS += tests/unit/test_viewer_model tests/unit/test_viewer_lane tests/unit/test_viewer_render
TESTS += tests/unit/test_viewer_model tests/unit/test_viewer_lane tests/unit/test_viewer_render
VIEWER_TEST_CFLAGS = $(AM_CFLAGS) $(GTK_CFLAGS) $(CUNIT_CFLAGS) $(SQLITE_CFLAGS) -I$(top_srcdir)/tests/unit -I$(top_srcdir)/viewer
VIEWER_TEST_LDADD = viewer/libgtview.la tests/unit/libgttest.la $(GTK_LIBS) $(CUNIT_LIBS) $(SQLITE_LIBS) $(M_LIBS)
tests_unit_test_viewer_model_SOURCES = tests/unit/test_viewer_model.c tests/unit/test_viewer_model.h \
	tests/unit/test_viewer_fixture.h
tests_unit_test_viewer_model_CPPFLAGS = $(VIEWER_CPPFLAGS)
tests_unit_test_viewer_model_CFLAGS = $(VIEWER_TEST_CFLAGS)
tests_unit_test_viewer_model_LDADD = $(VIEWER_TEST_LDADD)
tests_unit_test_viewer_lane_SOURCES = tests/unit/test_viewer_lane.c
tests_unit_test_viewer_lane_CPPFLAGS = $(VIEWER_CPPFLAGS)
tests_unit_test_viewer_lane_CFLAGS = $(VIEWER_TEST_CFLAGS)
tests_unit_test_viewer_lane_LDADD = $(VIEWER_TEST_LDADD)
tests_unit_test_viewer_render_SOURCES = tests/unit/test_viewer_render.c tests/unit/test_viewer_model.h \
	tests/unit/test_viewer_fixture.h
tests_unit_test_viewer_render_CPPFLAGS = $(VIEWER_CPPFLAGS)
tests_unit_test_viewer_render_CFLAGS = $(VIEWER_TEST_CFLAGS)
tests_unit_test_viewer_render_LDADD = $(VIEWER_TEST_LDADD)
endif

# The viewer's gaps, causes, ops and memory peaks are gtrace report's.
if HAVE_CUNIT
check_PROGRAMS += tests/unit/test_viewer_agree
TESTS += tests/unit/test_viewer_agree
tests_unit_test_viewer_agree_SOURCES = tests/unit/test_viewer_agree.c
tests_unit_test_viewer_agree_CPPFLAGS = $(VIEWER_CPPFLAGS)
tests_unit_test_viewer_agree_CFLAGS = $(AM_CFLAGS) $(GTK_CFLAGS) $(CUNIT_CFLAGS) -I$(top_srcdir)/tests/unit -I$(top_srcdir)/viewer
tests_unit_test_viewer_agree_LDADD = viewer/libgtview.la tests/unit/libgttest.la $(GTK_LIBS) $(CUNIT_LIBS) $(M_LIBS)
endif

# The window under Xvfb: synthetic input, screenshots, the trainer, the CLI.
if HAVE_CUNIT
check_PROGRAMS += tests/unit/test_viewer_ui
tests_unit_test_viewer_ui_SOURCES = tests/unit/test_viewer_ui.c tests/unit/test_viewer_fixture.h \
	tests/unit/test_viewer_input.h
tests_unit_test_viewer_ui_CPPFLAGS = $(VIEWER_CPPFLAGS)
tests_unit_test_viewer_ui_CFLAGS = $(AM_CFLAGS) $(GTK_CFLAGS) $(CUNIT_CFLAGS) -I$(top_srcdir)/tests/unit -I$(top_srcdir)/viewer
tests_unit_test_viewer_ui_LDADD = viewer/libgtview.la tests/unit/libgttest.la $(GTK_LIBS) $(CUNIT_LIBS) $(M_LIBS)
TESTS += tests/integration/viewer_ui.sh
# The window under a window manager: header bar, range statistics, search.
check_PROGRAMS += tests/unit/test_viewer_window
tests_unit_test_viewer_window_SOURCES = tests/unit/test_viewer_window.c tests/unit/test_viewer_input.h \
	tests/unit/test_viewer_fixture.h
tests_unit_test_viewer_window_CPPFLAGS = $(VIEWER_CPPFLAGS)
tests_unit_test_viewer_window_CFLAGS = $(VIEWER_TEST_CFLAGS)
tests_unit_test_viewer_window_LDADD = $(VIEWER_TEST_LDADD)
# The first view of a --pytorch trace: its steps, not the imports before them.
check_PROGRAMS += tests/unit/test_viewer_fit
tests_unit_test_viewer_fit_SOURCES = tests/unit/test_viewer_fit.c tests/unit/test_viewer_input.h
tests_unit_test_viewer_fit_CPPFLAGS = $(VIEWER_CPPFLAGS)
tests_unit_test_viewer_fit_CFLAGS = $(VIEWER_TEST_CFLAGS)
tests_unit_test_viewer_fit_LDADD = $(VIEWER_TEST_LDADD)
if HAVE_NVTX
TESTS += tests/integration/viewer_pytorch.sh
endif
EXTRA_DIST += tests/integration/viewer_pytorch.sh
# Names and layout: short kernel names, the panel's width, borders, lane names.
check_PROGRAMS += tests/unit/test_viewer_layout
tests_unit_test_viewer_layout_SOURCES = tests/unit/test_viewer_layout.c tests/unit/test_viewer_input.h \
	tests/unit/test_viewer_fixture.h
tests_unit_test_viewer_layout_CPPFLAGS = $(VIEWER_CPPFLAGS)
tests_unit_test_viewer_layout_CFLAGS = $(VIEWER_TEST_CFLAGS)
tests_unit_test_viewer_layout_LDADD = $(VIEWER_TEST_LDADD)
# The details panel and the top kernels and ops table.
check_PROGRAMS += tests/unit/test_viewer_details
tests_unit_test_viewer_details_SOURCES = tests/unit/test_viewer_details.c tests/unit/test_viewer_input.h \
	tests/unit/test_viewer_fixture.h
tests_unit_test_viewer_details_CPPFLAGS = $(VIEWER_CPPFLAGS)
tests_unit_test_viewer_details_CFLAGS = $(VIEWER_TEST_CFLAGS)
tests_unit_test_viewer_details_LDADD = $(VIEWER_TEST_LDADD)
# The compare page's diff table.
check_PROGRAMS += tests/unit/test_viewer_compare
tests_unit_test_viewer_compare_SOURCES = tests/unit/test_viewer_compare.c tests/unit/test_viewer_input.h \
	tests/unit/test_viewer_fixture.h
tests_unit_test_viewer_compare_CPPFLAGS = $(VIEWER_CPPFLAGS)
tests_unit_test_viewer_compare_CFLAGS = $(VIEWER_TEST_CFLAGS)
tests_unit_test_viewer_compare_LDADD = $(VIEWER_TEST_LDADD)
# The memory page on a snapshot: hover, clicks, the per-step table.
check_PROGRAMS += tests/unit/test_viewer_memsnap
tests_unit_test_viewer_memsnap_SOURCES = tests/unit/test_viewer_memsnap.c tests/unit/test_viewer_input.h \
	tests/unit/test_viewer_fixture.h
tests_unit_test_viewer_memsnap_CPPFLAGS = $(VIEWER_CPPFLAGS)
tests_unit_test_viewer_memsnap_CFLAGS = $(VIEWER_TEST_CFLAGS)
tests_unit_test_viewer_memsnap_LDADD = $(VIEWER_TEST_LDADD)
# The memory page's process chooser, under Xvfb too.
check_PROGRAMS += tests/unit/test_viewer_memory
tests_unit_test_viewer_memory_SOURCES = tests/unit/test_viewer_memory.c tests/unit/test_viewer_fixture.h \
	tests/unit/test_viewer_input.h
tests_unit_test_viewer_memory_CPPFLAGS = $(VIEWER_CPPFLAGS)
tests_unit_test_viewer_memory_CFLAGS = $(AM_CFLAGS) $(GTK_CFLAGS) $(CUNIT_CFLAGS) -I$(top_srcdir)/tests/unit -I$(top_srcdir)/viewer
tests_unit_test_viewer_memory_LDADD = viewer/libgtview.la tests/unit/libgttest.la $(GTK_LIBS) $(CUNIT_LIBS) $(M_LIBS)
TESTS += tests/integration/viewer_memory.sh
endif
# PyTorch's files (the fixtures) in the viewer, imported on the fly.
TESTS += tests/integration/pytorch_view.sh
endif
EXTRA_DIST += tests/integration/viewer_ui.sh tests/integration/viewer_memory.sh viewer/screenshots \
	tests/integration/viewer_display.sh \
	tests/integration/pytorch_view.sh
# Screenshots the UI test writes into the build tree (copies for the README are in the sources).
CLEANFILES += viewer/screenshots/*.png
