# libtrace/base: status codes and messages, asserts, saturating arithmetic,
# searching and comparing (gt_base.h). Inline but for the per-thread message
# (error.c): a convenience library the store links, so every user of the
# store has it; the capture library takes the header alone.
noinst_LTLIBRARIES += libtrace/base/libgtbase.la
libtrace_base_libgtbase_la_SOURCES = \
	libtrace/base/gt_base.h \
	libtrace/base/error.c
libtrace_base_libgtbase_la_CPPFLAGS = $(BASE_CPPFLAGS)
