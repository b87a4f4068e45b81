# libtrace/cli: gtrace, its command lines and what it prints; recording,
# assembling and merging are the engine's (libtrace/record), opening
# PyTorch's files the import's (libtrace/import/libgtopen).
bin_PROGRAMS += libtrace/cli/gtrace
libtrace_cli_gtrace_SOURCES = \
	libtrace/cli/cli.h \
	libtrace/cli/main.c \
	libtrace/cli/flags.h \
	libtrace/cli/flags.c \
	libtrace/cli/flag_tables.c \
	libtrace/cli/output.c \
	libtrace/cli/record.c \
	libtrace/cli/mem_free.h \
	libtrace/cli/mem_free.c \
	libtrace/cli/recover.c \
	libtrace/cli/merge_cmd.c \
	libtrace/cli/info.c \
	libtrace/cli/analyze_cmds.c \
	libtrace/cli/import_cmd.c \
	libtrace/cli/open_trace.c
libtrace_cli_gtrace_CPPFLAGS = $(ANALYZE_CPPFLAGS) -I$(top_srcdir)/libtrace/import -I$(top_srcdir)/libtrace/record
libtrace_cli_gtrace_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
libtrace_cli_gtrace_LDADD = libtrace/record/libgtrecord.la libtrace/record/libgtoutpath.la libtrace/import/libgtopen.la libtrace/import/libgtimport.la libtrace/analyze/libgtanalyze.la libtrace/store/libgtstore.la $(SQLITE_LIBS) $(PTHREAD_LIBS) $(M_LIBS)
dist_man_MANS += libtrace/cli/gtrace.1

# Each flag described once: the tables against --help, gtrace.1 and the
# parsing in the commands (gtrace_flags.sh); the parser and the value checks
# made of a table (test_cli_flags).
TESTS += tests/integration/gtrace_flags.sh
EXTRA_DIST += tests/integration/gtrace_flags.sh
if HAVE_CUNIT
check_PROGRAMS += tests/unit/test_cli_flags
TESTS += tests/unit/test_cli_flags
tests_unit_test_cli_flags_SOURCES = tests/unit/test_cli_flags.c libtrace/cli/flags.c libtrace/cli/flag_tables.c \
	libtrace/cli/flags.h
tests_unit_test_cli_flags_CPPFLAGS = -I$(top_srcdir)/libtrace/cli -I$(top_srcdir)/libtrace/base -I$(top_srcdir)/tests/unit
tests_unit_test_cli_flags_CFLAGS = $(AM_CFLAGS) $(CUNIT_CFLAGS)
tests_unit_test_cli_flags_LDADD = tests/unit/libgttest.la $(CUNIT_LIBS)
# the memory free, from meminfo and cgroup files made by the test
check_PROGRAMS += tests/unit/test_cli_mem_free
TESTS += tests/unit/test_cli_mem_free
tests_unit_test_cli_mem_free_SOURCES = tests/unit/test_cli_mem_free.c libtrace/cli/mem_free.c libtrace/cli/mem_free.h
tests_unit_test_cli_mem_free_CPPFLAGS = -I$(top_srcdir)/libtrace/cli -I$(top_srcdir)/tests/unit
tests_unit_test_cli_mem_free_CFLAGS = $(AM_CFLAGS) $(CUNIT_CFLAGS)
tests_unit_test_cli_mem_free_LDADD = tests/unit/libgttest.la $(CUNIT_LIBS)
endif

# make install staged under a DESTDIR, and the installed programs, library,
# Python package and man pages used from there (needs the trainer: NVTX).
if HAVE_NVTX
TESTS += tests/integration/install.sh
endif
EXTRA_DIST += tests/integration/install.sh

# The analysis subcommands on real traces, and their errors (needs the NVTX
# samples the capture tests build).
if HAVE_NVTX
TESTS += tests/integration/cli_analyze.sh
endif
EXTRA_DIST += tests/integration/cli_analyze.sh

# The report kept in the trace at close (--summary): the same bytes as the
# analysis, used only while the trace is as it was closed.
if HAVE_NVTX
TESTS += tests/integration/report_summary.sh
endif
EXTRA_DIST += tests/integration/report_summary.sh

# gtrace diff's verdicts on runs of a sample with a controlled per-step delay.
if HAVE_NVTX
TESTS += tests/integration/diff_verdicts.sh
endif
EXTRA_DIST += tests/integration/diff_verdicts.sh

# gtrace --pytorch on a small CNN (Debian's python3-torch; skipped, 77, without it).
if HAVE_NVTX
TESTS += tests/integration/pytorch_train.sh tests/integration/pytorch_cli.sh
endif
# report|diff|memory|export on torch.profiler JSON and snapshot pickles (the fixtures).
TESTS += tests/integration/pytorch_open.sh
EXTRA_DIST += tests/integration/pytorch_open.sh
# gtrace info on them too.
TESTS += tests/integration/info_pytorch.sh
EXTRA_DIST += tests/integration/info_pytorch.sh
EXTRA_DIST += tests/integration/pytorch_train.sh tests/integration/pytorch_cli.sh \
	tests/integration/pytorch_common.sh tests/integration/pytorch_train.py

# gtrace merge: three parts written with known clock offsets and drifts,
# merged to the nanosecond (merge_clock.c writes and checks them); every kind
# of bad input; real per-rank traces of the samples and, with Open MPI, of
# the distributed trainer (needs the NVTX samples).
check_PROGRAMS += tests/integration/merge_clock
tests_integration_merge_clock_SOURCES = tests/integration/merge_clock.c
tests_integration_merge_clock_CPPFLAGS = $(STORE_CPPFLAGS)
tests_integration_merge_clock_LDADD = libtrace/store/libgtstore.la $(SQLITE_LIBS)
TESTS += tests/integration/merge_clock.sh tests/integration/merge_errors.sh tests/integration/merge_parts.sh
# One output rule for gtrace's writers, the trainer's --save and gtrace-view's PNG.
TESTS += tests/integration/output_audit.sh
EXTRA_DIST += tests/integration/output_audit.sh
if HAVE_NVTX
TESTS += tests/integration/merge_ranks.sh
endif
EXTRA_DIST += tests/integration/merge_clock.sh tests/integration/merge_errors.sh tests/integration/merge_ranks.sh \
	tests/integration/merge_common.sh tests/integration/merge_parts.sh
