# libtrace/nvtxlib: libgtrace-nvtx.so, the NVTX 3 API compiled from the carried
# headers into a library other languages load (the PyTorch package uses it
# through ctypes). Needs only the headers; links only libc and libdl.
# Loaded by path (gtrace --pytorch names it in GTRACE_NVTX_LIB), so, like
# libgtrace.so, a module in $(pkglibdir).
if HAVE_NVTX
pkglib_LTLIBRARIES += libtrace/nvtxlib/libgtrace-nvtx.la
libtrace_nvtxlib_libgtrace_nvtx_la_SOURCES = libtrace/nvtxlib/nvtx_export.c
libtrace_nvtxlib_libgtrace_nvtx_la_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
libtrace_nvtxlib_libgtrace_nvtx_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
libtrace_nvtxlib_libgtrace_nvtx_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared \
	-export-symbols-regex '^nvtx(Initialize|Mark(Ex|A|W)|Range(StartEx|StartA|StartW|End|PushEx|PushA|PushW|Pop)|NameCategory(A|W)|NameOsThread(A|W)|Domain(Create(A|W)|Destroy|MarkEx|RangeStartEx|RangeEnd|RangePushEx|RangePop|NameCategory(A|W)|RegisterString(A|W)))$$'
libtrace_nvtxlib_libgtrace_nvtx_la_LIBADD = $(DL_LIBS)
endif
