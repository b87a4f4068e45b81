# libtrace/base: status codes and messages, asserts, saturating arithmetic,
# searching and comparing (gt_base.h), the JSON writer (gt_json.h). Inline
# but for the per-thread message (error.c) and the writer (json.c): a
# convenience library the store links, so every user of the store has them;
# the capture library takes gt_base.h alone.
noinst_LTLIBRARIES += libtrace/base/libgtbase.la
libtrace_base_libgtbase_la_SOURCES = \
	libtrace/base/gt_base.h \
	libtrace/base/error.c \
	libtrace/base/gt_json.h \
	libtrace/base/json.c
libtrace_base_libgtbase_la_CPPFLAGS = $(BASE_CPPFLAGS)

if HAVE_CUNIT
check_PROGRAMS += tests/unit/test_base
TESTS += tests/unit/test_base
tests_unit_test_base_SOURCES = tests/unit/test_base.c
tests_unit_test_base_CPPFLAGS = $(BASE_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_base_CFLAGS = $(AM_CFLAGS) $(CUNIT_CFLAGS)
tests_unit_test_base_LDADD = libtrace/base/libgtbase.la tests/unit/libgttest.la $(CUNIT_LIBS)
endif
