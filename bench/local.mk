# bench: programs that print figures; dated results with the machine and the
# command are in bench/results/. Built by make, never run by make check.
# Every dated results file travels in the tarball, as the README cites them.
EXTRA_DIST += bench/results
noinst_PROGRAMS += bench/bench_store_write
bench_bench_store_write_SOURCES = bench/bench_store_write.c
bench_bench_store_write_CPPFLAGS = $(ANALYZE_CPPFLAGS)
bench_bench_store_write_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
bench_bench_store_write_LDADD = libtrace/store/libgtstore.la $(SQLITE_LIBS)

# gtrace report on a synthetic 10 M-event trace (written once, then reused).
noinst_PROGRAMS += bench/bench_report
bench_bench_report_SOURCES = bench/bench_report.c
bench_bench_report_CPPFLAGS = $(ANALYZE_CPPFLAGS)
bench_bench_report_LDADD = libtrace/analyze/libgtanalyze.la $(M_LIBS)

# The linear layer's backward GEMMs: OpenBLAS against kernels/cpu/gemm.c.
noinst_PROGRAMS += bench/bench_gemm
bench_bench_gemm_SOURCES = bench/bench_gemm.c
bench_bench_gemm_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/kernels
bench_bench_gemm_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS) $(BLAS_CFLAGS)
bench_bench_gemm_LDADD = kernels/libkernels_cpu.la $(BLAS_LIBS) $(M_LIBS)

# gtrace-view on a big trace, headless: first frame, load, frame times.
if HAVE_GTK
noinst_PROGRAMS += bench/bench_viewer
bench_bench_viewer_SOURCES = bench/bench_viewer.c
bench_bench_viewer_CPPFLAGS = $(ANALYZE_CPPFLAGS)
bench_bench_viewer_CFLAGS = $(AM_CFLAGS) $(GTK_CFLAGS) -I$(top_srcdir)/viewer
bench_bench_viewer_LDADD = viewer/libgtview.la $(GTK_LIBS) $(M_LIBS)
endif

# The trainer against PyTorch on a GPU, GPT-2 small's shape (tokens/s, MFU):
# bench/bench_gpu.sh, which tests/gpu/device_check.sh runs as its part bench.
EXTRA_DIST += bench/bench_gpu.sh bench/bench_gpu_torch.py

# PyTorch's side of bench_cnn.sh; tests/integration/trainer_cnn_torch.sh builds its nets from it.
EXTRA_DIST += bench/bench_cnn.sh bench/bench_cnn_torch.py

# A long run recorded whole, with a capture window and with a flight recorder.
EXTRA_DIST += bench/bench_long_run.sh

# Every step on a 100 M-event trace under /usr/bin/time -v and ulimit -v:
# memory per event (bench/results/2026-12-03-scale-100m.md).
EXTRA_DIST += bench/bench_scale.sh

# Whole-process timings of two commands in turn (the results' A/B figures).
EXTRA_DIST += bench/alternate.py

# What --pytorch costs (in one process, hooks off and on), torch's own
# profiler on the same step, and how often gtrace diff calls noise a change.
EXTRA_DIST += bench/bench_pytorch_overhead.sh bench/bench_pytorch_overhead.py bench/bench_pytorch_profiler.py \
              bench/bench_diff_noise.sh

# bench/bench_itt: what the ITT collector (capture/itt.c) costs an op, run
# under gtrace with INTEL_LIBITTNOTIFY64 set to libgtrace.so.
noinst_PROGRAMS += bench/bench_itt
bench_bench_itt_SOURCES = bench/bench_itt.c
bench_bench_itt_CPPFLAGS = -I$(top_srcdir)/libtrace/capture
bench_bench_itt_LDADD = $(PTHREAD_LIBS) $(DL_LIBS)
