# libtrace/record: the recording engine (gt_record.h): the program run under
# libgtrace.so, its rings collected into parts, the parts assembled, traces
# merged on one clock. A convenience library for the gtrace CLI; it parses
# no command line and prints only through its message hook.
noinst_LTLIBRARIES += libtrace/record/libgtrecord.la
libtrace_record_libgtrecord_la_SOURCES = \
	libtrace/record/gt_record.h \
	libtrace/record/record_int.h \
	libtrace/record/say.c \
	libtrace/record/files.c \
	libtrace/record/dropped.c \
	libtrace/record/run.c \
	libtrace/record/snapshots.c \
	libtrace/record/leftovers.h \
	libtrace/record/leftovers.c \
	libtrace/record/collect.c \
	libtrace/record/flight.h \
	libtrace/record/flight.c \
	libtrace/record/drain.h \
	libtrace/record/drain.c \
	libtrace/record/tsc_clock.h \
	libtrace/record/tsc_clock.c \
	libtrace/record/losses.h \
	libtrace/record/losses.c \
	libtrace/record/schedstat.h \
	libtrace/record/schedstat.c \
	libtrace/record/assemble.c \
	libtrace/record/trace_copy.h \
	libtrace/record/trace_copy.c \
	libtrace/record/merge.c \
	libtrace/capture/shm.h
libtrace_record_libgtrecord_la_CPPFLAGS = $(STORE_CPPFLAGS) -I$(top_srcdir)/libtrace/import \
	-I$(top_srcdir)/libtrace/capture \
	-DGT_BINDIR='"$(bindir)"' -DGT_PKGLIBDIR='"$(pkglibdir)"' -DGT_PKGDATADIR='"$(pkgdatadir)"' \
	-DGT_SRCDIR='"$(abs_top_srcdir)"'
libtrace_record_libgtrecord_la_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
libtrace_record_libgtrecord_la_LIBADD = libtrace/record/libgtoutpath.la libtrace/import/libgtimport.la \
	libtrace/store/libgtstore.la $(SQLITE_LIBS) $(PTHREAD_LIBS) $(M_LIBS)

# Where a file may be written (gt_outpath.h): libc only, for the engine,
# gtrace and gtrace-view.
noinst_LTLIBRARIES += libtrace/record/libgtoutpath.la
libtrace_record_libgtoutpath_la_SOURCES = libtrace/record/gt_outpath.h libtrace/record/outpath.c

# The scheduler's account of each traced process (schedstat.c) on a
# CPU-bound program, alone and beside a busy loop on its CPU.
if HAVE_NVTX
TESTS += tests/integration/sched_wait.sh
check_PROGRAMS += tests/integration/sched_spin
tests_integration_sched_spin_SOURCES = tests/integration/sched_spin.c
tests_integration_sched_spin_CPPFLAGS = $(NVTX_CPPFLAGS)
tests_integration_sched_spin_LDADD = $(DL_LIBS)
tests/integration/sched_wait.log: tests/integration/sched_spin$(EXEEXT)
endif
EXTRA_DIST += tests/integration/sched_wait.sh
