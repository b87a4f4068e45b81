# libtrace/capture: libgtrace.so, injected into the traced program (LD_PRELOAD
# and NVTX_INJECTION64_PATH). Links only libc, pthreads and libdl (the gtrace
# launcher writes the trace); CUPTI is dlopened at run time. Needs the NVTX 3 headers.
# A module loaded by path, never linked against: no soname version, and
# installed in $(pkglibdir) (lib/gtrace), off the linker's path, where gtrace
# finds it relative to its own binary (libtrace/record/run.c).
if HAVE_NVTX
pkglib_LTLIBRARIES += libtrace/capture/libgtrace.la
libtrace_capture_libgtrace_la_SOURCES = \
	libtrace/capture/capture.h \
	libtrace/capture/shm.h \
	libtrace/capture/warn.h \
	libtrace/capture/warn.c \
	libtrace/capture/clock.h \
	libtrace/capture/clock.c \
	libtrace/capture/ring.h \
	libtrace/capture/ring.c \
	libtrace/capture/window.h \
	libtrace/capture/window.c \
	libtrace/capture/session.h \
	libtrace/capture/session.c \
	libtrace/capture/stacks.h \
	libtrace/capture/stacks.c \
	libtrace/capture/names.h \
	libtrace/capture/names.c \
	libtrace/capture/nvtx.h \
	libtrace/capture/nvtx.c \
	libtrace/capture/nvtx_mem.c \
	libtrace/capture/itt.c libtrace/capture/itt_abi.h \
	libtrace/capture/library.h \
	libtrace/capture/library.c \
	libtrace/capture/hooks.c
libtrace_capture_libgtrace_la_CPPFLAGS = $(STORE_CPPFLAGS) $(NVTX_CPPFLAGS)
libtrace_capture_libgtrace_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
libtrace_capture_libgtrace_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared \
	-export-symbols-regex '^(InitializeInjection|InitializeInjectionNvtx2|InitializeInjectionNvtxExtension|exec(ve|v|vp|vpe|l|lp|le)|cudaProfilerSt(art|op)|cuProfilerSt(art|op)|__itt_api_init|gt_itt_tasks|gt_torch_ops_init|gt_torch_op_(begin|end))$$'
libtrace_capture_libgtrace_la_LIBADD = $(PTHREAD_LIBS) $(DL_LIBS)
if HAVE_CUPTI
libtrace_capture_libgtrace_la_SOURCES += libtrace/capture/cupti_control.h libtrace/capture/cupti.c \
	libtrace/capture/cupti_records.h libtrace/capture/cupti_records.c
libtrace_capture_libgtrace_la_CPPFLAGS += $(CUPTI_CPPFLAGS) $(CUDA_CPPFLAGS)
endif
endif

# Unit test: CUPTI records (built as cupti_activity.h lays them out) to trace rows; no GPU needed.
if HAVE_CUPTI
if HAVE_CUNIT
check_PROGRAMS += tests/unit/test_capture_cupti
TESTS += tests/unit/test_capture_cupti
tests_unit_test_capture_cupti_SOURCES = tests/unit/test_capture_cupti.c \
	libtrace/capture/cupti_records.h libtrace/capture/cupti_records.c
tests_unit_test_capture_cupti_CPPFLAGS = $(STORE_CPPFLAGS) $(CUPTI_CPPFLAGS) $(CUDA_CPPFLAGS) \
	-I$(top_srcdir)/libtrace/capture -I$(top_srcdir)/tests/unit
tests_unit_test_capture_cupti_CFLAGS = $(AM_CFLAGS) $(CUNIT_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_test_capture_cupti_LDADD = tests/unit/libgttest.la $(CUNIT_LIBS) $(SQLITE_LIBS)
endif
endif

# Unit test: the ring layer (ring.c) on a region in the test's own memory.
if HAVE_CUNIT
check_PROGRAMS += tests/unit/test_capture_ring
TESTS += tests/unit/test_capture_ring
tests_unit_test_capture_ring_SOURCES = tests/unit/test_capture_ring.c \
	libtrace/capture/ring.h libtrace/capture/ring.c libtrace/capture/shm.h \
	libtrace/capture/clock.h libtrace/capture/clock.c libtrace/capture/warn.h libtrace/capture/warn.c
tests_unit_test_capture_ring_CPPFLAGS = $(STORE_CPPFLAGS) -I$(top_srcdir)/libtrace/capture -I$(top_srcdir)/tests/unit
tests_unit_test_capture_ring_CFLAGS = $(AM_CFLAGS) $(CUNIT_CFLAGS)
tests_unit_test_capture_ring_LDADD = tests/unit/libgttest.la $(CUNIT_LIBS) $(PTHREAD_LIBS)
endif

# Integration tests: gtrace on the samples (samples/local.mk), read back with sqlite3.
if HAVE_NVTX
TESTS += tests/integration/capture_threads.sh tests/integration/capture_features.sh \
	tests/integration/capture_exit.sh tests/integration/capture_errors.sh \
	tests/integration/capture_kill.sh tests/integration/capture_fork.sh \
	tests/integration/capture_drops.sh tests/integration/capture_ends.sh \
	tests/integration/capture_losses.sh tests/integration/capture_output.sh \
	tests/integration/capture_fullfs.sh tests/integration/capture_kill_burst.sh \
	tests/integration/capture_claim.sh tests/integration/capture_launcher_killed.sh \
	tests/integration/capture_fork_strings.sh tests/integration/capture_window.sh \
	tests/integration/capture_window_memory.sh tests/integration/capture_profiler.sh \
	tests/integration/capture_flight.sh
# Windows and the flight recorder under --pytorch (Debian's python3-torch; 77 without it).
TESTS += tests/integration/pytorch_window.sh
check_PROGRAMS += tests/integration/capture_probe tests/integration/capture_profiler_probe
tests_integration_capture_profiler_probe_SOURCES = tests/integration/capture_profiler_probe.c
tests_integration_capture_profiler_probe_CPPFLAGS = $(NVTX_CPPFLAGS)
tests_integration_capture_profiler_probe_LDADD = $(DL_LIBS)
tests_integration_capture_probe_SOURCES = tests/integration/capture_probe.c
tests_integration_capture_probe_CPPFLAGS = $(STORE_CPPFLAGS) $(NVTX_CPPFLAGS)
tests_integration_capture_probe_LDADD = $(PTHREAD_LIBS) $(DL_LIBS)
endif
EXTRA_DIST += tests/integration/capture_ends.sh tests/integration/capture_losses.sh \
	tests/integration/capture_output.sh tests/integration/capture_fullfs.sh \
	tests/integration/capture_kill_burst.sh tests/integration/capture_claim.sh \
	tests/integration/capture_launcher_killed.sh tests/integration/capture_fork_strings.sh \
	tests/integration/capture_window.sh tests/integration/capture_window_memory.sh \
	tests/integration/capture_profiler.sh tests/integration/capture_flight.sh \
	tests/integration/pytorch_window.sh tests/integration/pytorch_window.py
EXTRA_DIST += tests/integration/capture_common.sh tests/integration/capture_threads.sh \
	tests/integration/capture_features.sh tests/integration/capture_exit.sh \
	tests/integration/capture_errors.sh tests/integration/capture_kill.sh \
	tests/integration/capture_fork.sh tests/integration/capture_drops.sh

# Processes a program leaves running (named, waited for within a bound,
# passed SIGTERM on); the parts of a killed launcher read and recovered.
if HAVE_NVTX
TESTS += tests/integration/capture_leftover.sh tests/integration/recover.sh
endif
EXTRA_DIST += tests/integration/capture_leftover.sh tests/integration/recover.sh

# Fork children of a PyTorch program (a Pool, DataLoader workers) under --pytorch:
# the names the parent registered stay right in them (Debian's python3-torch;
# skipped, 77, without it).
if HAVE_NVTX
TESTS += tests/integration/pytorch_fork.sh
endif
EXTRA_DIST += tests/integration/pytorch_fork.sh tests/integration/pytorch_fork.py

# GPU test (exits 77 without a GPU): a CUDA sample with known counts (samples/local.mk).
if HAVE_CUDA
if HAVE_CUPTI
TESTS += tests/gpu/capture_cuda.sh tests/gpu/pytorch_cuda.sh tests/gpu/capture_profiler_cuda.sh
tests/gpu/capture_cuda.log: samples/cuda_ops$(EXEEXT) samples/cuda_probe$(EXEEXT)
tests/gpu/capture_profiler_cuda.log: samples/cuda_probe$(EXEEXT)
endif
endif
EXTRA_DIST += tests/gpu/capture_cuda.sh tests/gpu/pytorch_cuda.sh tests/gpu/pytorch_cuda.py \
	tests/gpu/capture_profiler_cuda.sh

# Benchmark (bench/bench_capture.sh runs it; figures in bench/results/).
if HAVE_NVTX
noinst_PROGRAMS += bench/bench_capture
bench_bench_capture_SOURCES = bench/bench_capture.c
bench_bench_capture_CPPFLAGS = $(STORE_CPPFLAGS) $(NVTX_CPPFLAGS)
bench_bench_capture_LDADD = $(PTHREAD_LIBS) $(DL_LIBS)
endif
EXTRA_DIST += bench/bench_capture.sh bench/bench_capture_rings.sh bench/bench_capture_goals.sh
# On a GPU: tracing cost on tiny kernels and on the CUDA trainer (samples/cuda_many_kernels);
# prepare_device.sh builds and stages what a device session runs (tests/gpu/device_check.sh).
EXTRA_DIST += bench/bench_capture_cuda.sh tests/gpu/prepare_device.sh
