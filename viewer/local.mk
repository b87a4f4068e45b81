# viewer: gtrace-view (GTK 3 + cairo). The models and the drawing are a
# convenience library, so the tests and bench/bench_viewer use the same code
# as the program, with or without a display.
if HAVE_GTK
noinst_LTLIBRARIES += viewer/libgtview.la
viewer_libgtview_la_SOURCES = \
	viewer/gv-lane.h viewer/gv-lane.c \
	viewer/gv-trace-model.h viewer/gv-trace-model.c \
	viewer/gv-render.h viewer/gv-render.c \
	viewer/gv-timeline.h viewer/gv-timeline.c \
	viewer/gv-memory-view.h viewer/gv-memory-view.c \
	viewer/gv-summary.h viewer/gv-summary.c \
	viewer/gv-compare.h viewer/gv-compare.c \
	viewer/gv-window.h viewer/gv-window.c
viewer_libgtview_la_CFLAGS = $(AM_CFLAGS) $(GTK_CFLAGS)
viewer_libgtview_la_LIBADD = libtrace/analyze/libgtanalyze.la $(GTK_LIBS) $(M_LIBS)

bin_PROGRAMS += viewer/gtrace-view
viewer_gtrace_view_SOURCES = viewer/main.c
viewer_gtrace_view_CFLAGS = $(AM_CFLAGS) $(GTK_CFLAGS)
viewer_gtrace_view_LDADD = viewer/libgtview.la $(GTK_LIBS)
endif
