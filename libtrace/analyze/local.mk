# libtrace/analyze: summaries, idle gaps, memory, advice, diff and exports over
# the store's reader. A convenience library shared by the CLI and the viewer.
noinst_LTLIBRARIES += libtrace/analyze/libgtanalyze.la
libtrace_analyze_libgtanalyze_la_SOURCES = \
	libtrace/analyze/gt_analyze.h \
	libtrace/analyze/analyze_int.h \
	libtrace/analyze/gt_vocab.h \
	libtrace/analyze/vocab.c \
	libtrace/analyze/gt_metrics.h \
	libtrace/analyze/metrics.c \
	libtrace/analyze/util.c \
	libtrace/analyze/model.c \
	libtrace/analyze/model_index.c \
	libtrace/analyze/model_window.c \
	libtrace/analyze/model_int.h \
	libtrace/analyze/model_sort.c \
	libtrace/analyze/steps.c \
	libtrace/analyze/summary.c \
	libtrace/analyze/pytorch_int.h \
	libtrace/analyze/pytorch_tables.c \
	libtrace/analyze/gaps.c \
	libtrace/analyze/memory_int.h \
	libtrace/analyze/memory.c \
	libtrace/analyze/memory_history.c \
	libtrace/analyze/memory_leaks.c \
	libtrace/analyze/memory_state.c \
	libtrace/analyze/memory_at.c \
	libtrace/analyze/analysis.c \
	libtrace/analyze/comm.c \
	libtrace/analyze/rank_steps.c \
	libtrace/analyze/advice.c \
	libtrace/analyze/advice_int.h \
	libtrace/analyze/advice_add.c \
	libtrace/analyze/advice_memory.c \
	libtrace/analyze/report.c \
	libtrace/analyze/render.c \
	libtrace/analyze/report_kept.c \
	libtrace/analyze/report_window.c \
	libtrace/analyze/render_pytorch.c \
	libtrace/analyze/render_ranks.c \
	libtrace/analyze/oom.h \
	libtrace/analyze/oom.c \
	libtrace/analyze/render_oom.c \
	libtrace/analyze/diff_int.h \
	libtrace/analyze/stats.c \
	libtrace/analyze/diff_samples.c \
	libtrace/analyze/diff.c \
	libtrace/analyze/export_chrome.c \
	libtrace/analyze/export_ranks.c \
	libtrace/analyze/export_csv.c \
	libtrace/analyze/export_memviz.c
libtrace_analyze_libgtanalyze_la_CPPFLAGS = $(ANALYZE_CPPFLAGS)
# A kept report (report_kept.c) is used only by a build of the same
# analysis and store sources: their digest, made at build time.
nodist_libtrace_analyze_libgtanalyze_la_SOURCES = libtrace/analyze/analysis_id.c
CLEANFILES += libtrace/analyze/analysis_id.c
libtrace/analyze/analysis_id.c: $(libtrace_analyze_libgtanalyze_la_SOURCES) $(libtrace_store_libgtstore_la_SOURCES)
	$(AM_V_GEN)mkdir -p libtrace/analyze && \
	id=`cd $(srcdir) && cat $(libtrace_analyze_libgtanalyze_la_SOURCES) $(libtrace_store_libgtstore_la_SOURCES) | cksum | \
	  sed 's/ .*//'` && \
	printf 'const char gt_analysis_sources_id[] = "%s";\n' "$$id" > $@-t && mv $@-t $@
libtrace_analyze_libgtanalyze_la_LIBADD = libtrace/store/libgtstore.la $(M_LIBS) $(PTHREAD_LIBS)

if HAVE_CUNIT
check_PROGRAMS += tests/unit/test_analyze_report tests/unit/test_analyze_rules tests/unit/test_analyze_memory \
	tests/unit/test_analyze_diff tests/unit/test_analyze_comm tests/unit/test_analyze_vocab
TESTS += tests/unit/test_analyze_report tests/unit/test_analyze_rules tests/unit/test_analyze_memory \
	tests/unit/test_analyze_diff tests/unit/test_analyze_comm tests/unit/test_analyze_vocab
ANALYZE_TEST_CFLAGS = $(AM_CFLAGS) $(CUNIT_CFLAGS) -I$(top_srcdir)/tests/unit
ANALYZE_TEST_LDADD = libtrace/analyze/libgtanalyze.la tests/unit/libgttest.la $(CUNIT_LIBS) $(M_LIBS)
tests_unit_test_analyze_report_SOURCES = tests/unit/test_analyze_report.c tests/unit/analyze_fixture.h
tests_unit_test_analyze_report_CPPFLAGS = $(ANALYZE_CPPFLAGS)
tests_unit_test_analyze_report_CFLAGS = $(ANALYZE_TEST_CFLAGS)
tests_unit_test_analyze_report_LDADD = $(ANALYZE_TEST_LDADD)
tests_unit_test_analyze_rules_SOURCES = tests/unit/test_analyze_rules.c tests/unit/analyze_fixture.h
tests_unit_test_analyze_rules_CPPFLAGS = $(ANALYZE_CPPFLAGS)
tests_unit_test_analyze_rules_CFLAGS = $(ANALYZE_TEST_CFLAGS)
tests_unit_test_analyze_rules_LDADD = $(ANALYZE_TEST_LDADD)
tests_unit_test_analyze_memory_SOURCES = tests/unit/test_analyze_memory.c tests/unit/analyze_fixture.h
tests_unit_test_analyze_memory_CPPFLAGS = $(ANALYZE_CPPFLAGS)
tests_unit_test_analyze_memory_CFLAGS = $(ANALYZE_TEST_CFLAGS)
tests_unit_test_analyze_memory_LDADD = $(ANALYZE_TEST_LDADD)
tests_unit_test_analyze_vocab_SOURCES = tests/unit/test_analyze_vocab.c tests/unit/analyze_fixture.h
tests_unit_test_analyze_vocab_CPPFLAGS = $(ANALYZE_CPPFLAGS)
tests_unit_test_analyze_vocab_CFLAGS = $(ANALYZE_TEST_CFLAGS)
tests_unit_test_analyze_vocab_LDADD = $(ANALYZE_TEST_LDADD)
tests_unit_test_analyze_diff_SOURCES = tests/unit/test_analyze_diff.c tests/unit/analyze_fixture.h
tests_unit_test_analyze_diff_CPPFLAGS = $(ANALYZE_CPPFLAGS)
tests_unit_test_analyze_diff_CFLAGS = $(ANALYZE_TEST_CFLAGS)
tests_unit_test_analyze_diff_LDADD = $(ANALYZE_TEST_LDADD)
tests_unit_test_analyze_comm_SOURCES = tests/unit/test_analyze_comm.c tests/unit/analyze_fixture.h
tests_unit_test_analyze_comm_CPPFLAGS = $(ANALYZE_CPPFLAGS)
tests_unit_test_analyze_comm_CFLAGS = $(ANALYZE_TEST_CFLAGS)
tests_unit_test_analyze_comm_LDADD = $(ANALYZE_TEST_LDADD)
# the model loaded through the store's bulk reads, on good and damaged traces
check_PROGRAMS += tests/unit/test_analyze_load
TESTS += tests/unit/test_analyze_load
tests_unit_test_analyze_load_SOURCES = tests/unit/test_analyze_load.c tests/unit/analyze_fixture.h
tests_unit_test_analyze_load_CPPFLAGS = $(ANALYZE_CPPFLAGS)
tests_unit_test_analyze_load_CFLAGS = $(ANALYZE_TEST_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_test_analyze_load_LDADD = $(ANALYZE_TEST_LDADD) $(SQLITE_LIBS)
# the CSV export read back: header and rows agree, field by field, for every kind
check_PROGRAMS += tests/unit/test_analyze_csv
TESTS += tests/unit/test_analyze_csv
tests_unit_test_analyze_csv_SOURCES = tests/unit/test_analyze_csv.c tests/unit/analyze_fixture.h
tests_unit_test_analyze_csv_CPPFLAGS = $(ANALYZE_CPPFLAGS)
tests_unit_test_analyze_csv_CFLAGS = $(ANALYZE_TEST_CFLAGS)
tests_unit_test_analyze_csv_LDADD = $(ANALYZE_TEST_LDADD)
endif

# The exports, checked by Python (json, pickle, csv) through a small driver.
check_PROGRAMS += tests/integration/analyze_export
tests_integration_analyze_export_SOURCES = tests/integration/analyze_export.c
tests_integration_analyze_export_CPPFLAGS = $(ANALYZE_CPPFLAGS)
tests_integration_analyze_export_LDADD = libtrace/analyze/libgtanalyze.la $(M_LIBS)
TESTS += tests/integration/analyze_export.sh
EXTRA_DIST += tests/integration/analyze_export.sh
# ... each CSV column described once: no header or row written by hand.
TESTS += tests/integration/csv_once.sh
EXTRA_DIST += tests/integration/csv_once.sh tests/integration/csv_once.py
# The out-of-memory post-mortem on the trainer under --mem-limit; its unit suite.
TESTS += tests/integration/oom_trainer.sh
EXTRA_DIST += tests/integration/oom_trainer.sh
# ... on a --pytorch script whose allocation fails (Debian's python3-torch; 77 without it).
if HAVE_NVTX
TESTS += tests/integration/oom_pytorch.sh
endif
EXTRA_DIST += tests/integration/oom_pytorch.sh
# ... on a snapshot whose history ends in an OOM, and on a caching allocator
# that fragments and runs out (samples/problems/oom): the figures exactly.
TESTS += tests/integration/oom_snapshot.sh
if HAVE_NVTX
TESTS += tests/integration/oom_allocator.sh
endif
EXTRA_DIST += tests/integration/oom_snapshot.sh tests/integration/oom_snapshot.py tests/integration/oom_allocator.sh
if HAVE_CUNIT
check_PROGRAMS += tests/unit/test_analyze_oom
TESTS += tests/unit/test_analyze_oom
tests_unit_test_analyze_oom_SOURCES = tests/unit/test_analyze_oom.c tests/unit/analyze_fixture.h
tests_unit_test_analyze_oom_CPPFLAGS = $(ANALYZE_CPPFLAGS)
tests_unit_test_analyze_oom_CFLAGS = $(ANALYZE_TEST_CFLAGS)
tests_unit_test_analyze_oom_LDADD = $(ANALYZE_TEST_LDADD)
endif
# A memory snapshot of two devices: an allocator per device.
TESTS += tests/integration/memory_devices.sh
EXTRA_DIST += tests/integration/memory_devices.sh

# Holistic Trace Analysis (pinned, in a throwaway environment) on the Chrome
# exports of the nsys fixtures, a synthetic GPU trace and 2 trainer ranks.
TESTS += tests/integration/hta_interop.sh
EXTRA_DIST += tests/integration/hta_interop.sh tests/integration/hta_interop.py

# gtrace report on a trace of the CPU trainer (NVTX "compute" ranges as ops);
# its Communication section, and each process's memory, on 2 ranks of the
# distributed trainer (skip without Open MPI).
if HAVE_NVTX
TESTS += tests/integration/report_trainer.sh tests/integration/dist_report.sh tests/integration/dist_memory.sh
endif
EXTRA_DIST += tests/integration/report_trainer.sh tests/integration/dist_report.sh tests/integration/dist_memory.sh

# The report's PyTorch tables on a `--pytorch` trace, against torch.profiler's
# key_averages() of the same run (Debian's python3-torch; skipped, 77, without it).
if HAVE_NVTX
TESTS += tests/integration/pytorch_report.sh
endif
EXTRA_DIST += tests/integration/pytorch_report.sh tests/integration/pytorch_report.py
# torchrun DDP over gloo, 2 ranks: steps by rank, the slowest rank per step,
# communication from the collective ops (skipped, 77, without torch.distributed).
if HAVE_NVTX
TESTS += tests/integration/pytorch_ddp.sh
endif
EXTRA_DIST += tests/integration/pytorch_ddp.sh tests/integration/pytorch_ddp.py
# An imported torch.profiler trace with torch 2.5's short ProfilerStep ranges: its steps as spans.
TESTS += tests/integration/pytorch_report_kineto.sh
EXTRA_DIST += tests/integration/pytorch_report_kineto.sh tests/integration/pytorch_report_kineto.py
