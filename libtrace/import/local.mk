# libtrace/import: PyTorch's own files (torch.profiler Kineto traces, CUDA
# memory snapshot pickles) into gtrace traces through the store's writer.
# A convenience library for the gtrace CLI.
noinst_LTLIBRARIES += libtrace/import/libgtimport.la
libtrace_import_libgtimport_la_SOURCES = \
	libtrace/import/gt_import.h \
	libtrace/import/import_int.h \
	libtrace/import/import.c \
	libtrace/import/json.c \
	libtrace/import/kineto.c \
	libtrace/import/pickle.c \
	libtrace/import/snapshot.c
libtrace_import_libgtimport_la_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS)
libtrace_import_libgtimport_la_LIBADD = libtrace/store/libgtstore.la $(ZLIB_LIBS)
