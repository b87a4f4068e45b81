# libtrace/import: PyTorch's own files (torch.profiler Kineto traces, CUDA
# memory snapshot pickles) into gtrace traces through the store's writer.
# A convenience library for the gtrace CLI.
noinst_LTLIBRARIES += libtrace/import/libgtimport.la
libtrace_import_libgtimport_la_SOURCES = \
	libtrace/import/gt_import.h \
	libtrace/import/import_int.h \
	libtrace/import/addr_map.h \
	libtrace/import/addr_map.c \
	libtrace/import/import.c \
	libtrace/import/batch.c \
	libtrace/import/json.c \
	libtrace/import/kineto_int.h \
	libtrace/import/kineto.c \
	libtrace/import/kineto_json.c \
	libtrace/import/kineto_memory.c \
	libtrace/import/pickle.c \
	libtrace/import/snapshot.c
libtrace_import_libgtimport_la_CPPFLAGS = $(STORE_CPPFLAGS)
libtrace_import_libgtimport_la_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS)
libtrace_import_libgtimport_la_LIBADD = libtrace/store/libgtstore.la $(ZLIB_LIBS)

# A file given where a trace goes, PyTorch's imported on the fly
# (gt_open_any.h): for the CLI and gtrace-view.
noinst_LTLIBRARIES += libtrace/import/libgtopen.la
libtrace_import_libgtopen_la_SOURCES = libtrace/import/gt_open_any.h libtrace/import/open_any.c
libtrace_import_libgtopen_la_CPPFLAGS = $(STORE_CPPFLAGS)
libtrace_import_libgtopen_la_LIBADD = libtrace/import/libgtimport.la $(PTHREAD_LIBS)

# gtrace import on real torch.profiler traces and on snapshot pickles (good
# and hostile), through the CLI and the analyses.
TESTS += tests/integration/import_kineto.sh tests/integration/import_snapshot.sh
# Every fixture's rows, as recorded and as its own events count them; every
# kind of device activity into its table.
TESTS += tests/integration/import_counts.sh
# The report's Memory section of imported ranks, text and JSON alike.
TESTS += tests/integration/report_memory_ranks.sh
# Snapshot pickles whose memo repeats lists are refused; many devices and
# addresses coming downwards import in O(n log n).
TESTS += tests/integration/import_snapshot_shapes.sh
EXTRA_DIST += tests/integration/import_snapshot_shapes.sh tests/integration/snapshot_shapes.py
# Odd events of a Kineto trace (NaN, Infinity, \u0000, times out of range)
# skipped and counted, not the file.
TESTS += tests/integration/import_kineto_skip.sh
EXTRA_DIST += tests/integration/import_kineto_skip.sh
EXTRA_DIST += tests/integration/import_kineto.sh tests/integration/import_snapshot.sh \
	tests/integration/import_counts.sh tests/integration/report_memory_ranks.sh \
	tests/fixtures/pytorch/README.md tests/fixtures/pytorch/make_kineto.py \
	tests/fixtures/pytorch/make_snapshots.py tests/fixtures/pytorch/expected.txt \
	tests/fixtures/pytorch/plain.json \
	tests/fixtures/pytorch/mlp_1rank/mlp.1795650204571289367.pt.trace.json.gz \
	tests/fixtures/pytorch/ddp_2rank/rank0.1795650210654061099.pt.trace.json.gz \
	tests/fixtures/pytorch/ddp_2rank/rank1.1795650210657406776.pt.trace.json.gz \
	tests/fixtures/pytorch/snapshot_p4.pickle tests/fixtures/pytorch/snapshot_p2.pickle \
	tests/fixtures/pytorch/evil_global.pickle tests/fixtures/pytorch/evil_stack_global.pickle \
	tests/fixtures/pytorch/deep.pickle tests/fixtures/pytorch/huge_length.pickle \
	tests/fixtures/pytorch/truncated.pickle tests/fixtures/pytorch/bad_memo.pickle

# gtrace --pytorch: a CUDA memory snapshot left in the parts folder goes into
# the trace as its process's memory (a hand-built one: no GPU needed; the
# NVTX library the Python package loads needs NVTX).
if HAVE_NVTX
TESTS += tests/integration/pytorch_snapshot.sh
endif
EXTRA_DIST += tests/integration/pytorch_snapshot.sh tests/integration/pytorch_snapshot.py

if HAVE_CUNIT
check_PROGRAMS += tests/unit/test_import_json tests/unit/test_import_pickle
TESTS += tests/unit/test_import_json tests/unit/test_import_pickle
IMPORT_TEST_CFLAGS = $(AM_CFLAGS) $(CUNIT_CFLAGS) $(ZLIB_CFLAGS) -I$(top_srcdir)/libtrace/import -I$(top_srcdir)/tests/unit
IMPORT_TEST_LDADD = libtrace/import/libgtimport.la tests/unit/libgttest.la $(CUNIT_LIBS) $(ZLIB_LIBS)
tests_unit_test_import_json_SOURCES = tests/unit/test_import_json.c
tests_unit_test_import_json_CPPFLAGS = $(STORE_CPPFLAGS)
tests_unit_test_import_json_CFLAGS = $(IMPORT_TEST_CFLAGS)
tests_unit_test_import_json_LDADD = $(IMPORT_TEST_LDADD)
tests_unit_test_import_pickle_SOURCES = tests/unit/test_import_pickle.c
tests_unit_test_import_pickle_CPPFLAGS = $(STORE_CPPFLAGS)
tests_unit_test_import_pickle_CFLAGS = $(IMPORT_TEST_CFLAGS)
tests_unit_test_import_pickle_LDADD = $(IMPORT_TEST_LDADD)
endif
