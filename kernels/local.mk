# kernels: the trainer's compute ops. kernels/ops.h declares every op; each
# op family has a CPU reference in kernels/cpu/<family>.c (fp32, OpenMP,
# CBLAS for GEMMs) and, with the CUDA backend, kernels/cuda/<family>.cu beside
# it. The CPU part is always built: it is what CI runs and what the CUDA
# kernels are tested against.
noinst_LTLIBRARIES += kernels/libkernels_cpu.la
kernels_libkernels_cpu_la_SOURCES = \
	kernels/ops.h \
	kernels/cpu/encoder.c \
	kernels/cpu/layernorm.c \
	kernels/cpu/matmul.c \
	kernels/cpu/gemm.c \
	kernels/cpu/attention.c \
	kernels/cpu/gelu.c \
	kernels/cpu/residual.c \
	kernels/cpu/crossentropy.c \
	kernels/cpu/adamw.c \
	kernels/cpu/optim.c \
	kernels/cpu/cast.c \
	kernels/cpu/conv.c \
	kernels/cpu/conv_nhwc.c \
	kernels/cpu/batchnorm.c \
	kernels/cpu/pool.c \
	kernels/lowp.h kernels/scaler.h kernels/step_state.h \
	kernels/cpu/cpu.h kernels/cpu/blas.c
kernels_libkernels_cpu_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/kernels
# The optimization level is the builder's CFLAGS (default -O2): -O3 measured
# no faster on the trainer (bench/results/2026-11-26-trainer-vs-pytorch-quiet.md).
kernels_libkernels_cpu_la_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS) $(BLAS_CFLAGS)
kernels_libkernels_cpu_la_LIBADD = $(BLAS_LIBS) $(PTHREAD_LIBS) $(M_LIBS)

# Each op's forward against a plain reference and its backward against
# finite differences.
if HAVE_CUNIT
check_PROGRAMS += tests/unit/test_kernels_ops
TESTS += tests/unit/test_kernels_ops
tests_unit_test_kernels_ops_SOURCES = tests/unit/test_kernels_ops.c
tests_unit_test_kernels_ops_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/kernels -I$(top_srcdir)/tests/unit
tests_unit_test_kernels_ops_CFLAGS = $(AM_CFLAGS) $(CUNIT_CFLAGS) $(OPENMP_CFLAGS)
tests_unit_test_kernels_ops_LDADD = kernels/libkernels_cpu.la tests/unit/libgttest.la $(CUNIT_LIBS) $(M_LIBS)
endif
