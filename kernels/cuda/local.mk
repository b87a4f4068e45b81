# kernels/cuda: the CUDA kernels and their C-callable launchers, one libtool
# library built with nvcc (build-aux/nvcc-lt). Only with the CUDA toolkit.
if HAVE_CUDA
if HAVE_NVTX
noinst_LTLIBRARIES += kernels/cuda/libgtkernels_cuda.la
kernels_cuda_libgtkernels_cuda_la_SOURCES = kernels/cuda/kernels_cuda.h kernels/cuda/cast.cu
kernels_cuda_libgtkernels_cuda_la_LIBADD = $(CUDA_LDFLAGS) $(CUDA_LIBS) -lstdc++

check_PROGRAMS += tests/gpu/test_cuda_cast
TESTS += tests/gpu/test_cuda_cast
tests_gpu_test_cuda_cast_SOURCES = tests/gpu/test_cuda_cast.c
tests_gpu_test_cuda_cast_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS) -I$(top_srcdir)/kernels/cuda
tests_gpu_test_cuda_cast_LDADD = kernels/cuda/libgtkernels_cuda.la $(CUDA_LDFLAGS) $(CUDA_LIBS) $(M_LIBS)
endif
endif
EXTRA_DIST += kernels/cuda/cast.cu
