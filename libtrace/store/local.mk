# libtrace/store: the trace schema, writer and reader. A convenience library
# (PIC) linked into libgtrace.so, the gtrace CLI and the viewer.
noinst_LTLIBRARIES += libtrace/store/libgtstore.la
libtrace_store_libgtstore_la_SOURCES = \
	libtrace/store/gt_store.h \
	libtrace/store/events.c \
	libtrace/store/columns.h \
	libtrace/store/columns.c \
	libtrace/store/schema.h \
	libtrace/store/schema.c \
	libtrace/store/schema_enums.c \
	libtrace/store/gt_labels.h \
	libtrace/store/schema_finish.c \
	libtrace/store/writer_int.h \
	libtrace/store/writer_util.c \
	libtrace/store/writer_dict.c \
	libtrace/store/writer_rows.c \
	libtrace/store/writer.c \
	libtrace/store/amend.h \
	libtrace/store/amend.c \
	libtrace/store/summary.c \
	libtrace/store/close_mark.h \
	libtrace/store/close_mark.c \
	libtrace/store/reader_int.h \
	libtrace/store/reader_base.c \
	libtrace/store/reader.c \
	libtrace/store/reader_check.c \
	libtrace/store/reader_iter.c \
	libtrace/store/gt_store_bulk.h \
	libtrace/store/reader_bulk.c \
	libtrace/store/gt_store_spill.h \
	libtrace/store/spill.c
libtrace_store_libgtstore_la_CPPFLAGS = $(STORE_CPPFLAGS)
libtrace_store_libgtstore_la_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
libtrace_store_libgtstore_la_LIBADD = libtrace/base/libgtbase.la $(SQLITE_LIBS) $(PTHREAD_LIBS)

if HAVE_CUNIT
STORE_TESTS = tests/unit/test_store_writer tests/unit/test_store_schema tests/unit/test_store_failures \
	tests/unit/test_store_reader tests/unit/test_store_ranges tests/unit/test_store_refuse \
	tests/unit/test_store_roundtrip tests/unit/test_store_damage tests/unit/test_store_close_mark
check_PROGRAMS += $(STORE_TESTS)
TESTS += $(STORE_TESTS)
STORE_TEST_CFLAGS = $(AM_CFLAGS) $(CUNIT_CFLAGS) $(SQLITE_CFLAGS) -I$(top_srcdir)/tests/unit
STORE_TEST_LDADD = libtrace/store/libgtstore.la tests/unit/libgttest.la $(CUNIT_LIBS) $(SQLITE_LIBS)
STORE_WRITES = tests/unit/store_writes.c tests/unit/store_writes.h
STORE_CHECK = tests/unit/store_check.c tests/unit/store_check.h
tests_unit_test_store_writer_SOURCES = tests/unit/test_store_writer.c $(STORE_WRITES)
tests_unit_test_store_writer_CPPFLAGS = $(STORE_CPPFLAGS)
tests_unit_test_store_writer_CFLAGS = $(STORE_TEST_CFLAGS)
tests_unit_test_store_writer_LDADD = $(STORE_TEST_LDADD)
tests_unit_test_store_schema_SOURCES = tests/unit/test_store_schema.c $(STORE_WRITES)
tests_unit_test_store_schema_CPPFLAGS = $(STORE_CPPFLAGS)
tests_unit_test_store_schema_CFLAGS = $(STORE_TEST_CFLAGS)
tests_unit_test_store_schema_LDADD = $(STORE_TEST_LDADD)
tests_unit_test_store_failures_SOURCES = tests/unit/test_store_failures.c $(STORE_WRITES)
tests_unit_test_store_failures_CPPFLAGS = $(STORE_CPPFLAGS)
tests_unit_test_store_failures_CFLAGS = $(STORE_TEST_CFLAGS)
tests_unit_test_store_failures_LDADD = $(STORE_TEST_LDADD)
tests_unit_test_store_reader_SOURCES = tests/unit/test_store_reader.c $(STORE_CHECK)
tests_unit_test_store_reader_CPPFLAGS = $(STORE_CPPFLAGS)
tests_unit_test_store_reader_CFLAGS = $(STORE_TEST_CFLAGS)
tests_unit_test_store_reader_LDADD = $(STORE_TEST_LDADD)
tests_unit_test_store_ranges_SOURCES = tests/unit/test_store_ranges.c $(STORE_CHECK)
tests_unit_test_store_ranges_CPPFLAGS = $(STORE_CPPFLAGS)
tests_unit_test_store_ranges_CFLAGS = $(STORE_TEST_CFLAGS)
tests_unit_test_store_ranges_LDADD = $(STORE_TEST_LDADD)
tests_unit_test_store_refuse_SOURCES = tests/unit/test_store_refuse.c $(STORE_CHECK)
tests_unit_test_store_refuse_CPPFLAGS = $(STORE_CPPFLAGS)
tests_unit_test_store_refuse_CFLAGS = $(STORE_TEST_CFLAGS)
tests_unit_test_store_refuse_LDADD = $(STORE_TEST_LDADD)
tests_unit_test_store_roundtrip_SOURCES = tests/unit/test_store_roundtrip.c $(STORE_CHECK)
tests_unit_test_store_roundtrip_CPPFLAGS = $(STORE_CPPFLAGS)
tests_unit_test_store_roundtrip_CFLAGS = $(STORE_TEST_CFLAGS)
tests_unit_test_store_roundtrip_LDADD = $(STORE_TEST_LDADD)
tests_unit_test_store_damage_SOURCES = tests/unit/test_store_damage.c $(STORE_CHECK)
tests_unit_test_store_damage_CPPFLAGS = $(STORE_CPPFLAGS)
tests_unit_test_store_damage_CFLAGS = $(STORE_TEST_CFLAGS)
tests_unit_test_store_damage_LDADD = $(STORE_TEST_LDADD)
tests_unit_test_store_close_mark_SOURCES = tests/unit/test_store_close_mark.c $(STORE_CHECK)
tests_unit_test_store_close_mark_CPPFLAGS = $(STORE_CPPFLAGS)
tests_unit_test_store_close_mark_CFLAGS = $(STORE_TEST_CFLAGS)
tests_unit_test_store_close_mark_LDADD = $(STORE_TEST_LDADD)
endif

# Tools written for nsys exports (their queries, and nsys2prv from PyPI in a
# throwaway environment) on gtrace's traces.
TESTS += tests/integration/nsys_readers.sh
EXTRA_DIST += tests/integration/nsys_readers.sh tests/integration/interop_common.sh

# The CLI on damaged and hostile copies of an nsys export: views in place of
# tables refused at once, out-of-range rows refused, megabyte names cut.
TESTS += tests/integration/store_damage.sh
EXTRA_DIST += tests/integration/store_damage.sh
