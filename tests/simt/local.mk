# tests/simt: the CUDA kernels of kernels/cuda run on the CPU by a SIMT
# emulator (tests/simt/simt.h) against the CPU reference, so CI, which has no
# GPU, executes their real source. It needs CUDA's headers and a C++17
# compiler, not a GPU nor the CUDA runtime: each .cu is compiled by $(CXX)
# with its launches rewritten (launches.sed). tests/gpu runs them on a GPU.
if HAVE_SIMT
if HAVE_CUNIT
check_PROGRAMS += tests/simt/test_kernels_simt
TESTS += tests/simt/test_kernels_simt
tests_simt_test_kernels_simt_SOURCES = tests/simt/test_kernels_simt.c tests/simt/simt.cc tests/simt/simt.h \
	tests/simt/simt_mem.h
SIMT_GENERATED = tests/simt/gen/cast.cc tests/simt/gen/encoder.cc tests/simt/gen/layernorm.cc \
	tests/simt/gen/matmul.cc tests/simt/gen/attention.cc tests/simt/gen/gelu.cc tests/simt/gen/residual.cc \
	tests/simt/gen/crossentropy.cc tests/simt/gen/optim.cc tests/simt/gen/faulty_kernels.cc
nodist_tests_simt_test_kernels_simt_SOURCES = $(SIMT_GENERATED)
tests_simt_test_kernels_simt_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS) $(NVTX_CPPFLAGS) \
	-I$(top_srcdir)/tests/simt -I$(top_srcdir)/tests/unit -I$(top_srcdir)/kernels/cuda -I$(top_srcdir)/kernels
# Kernels compare threadIdx (unsigned) with ints, as CUDA code does.
tests_simt_test_kernels_simt_CXXFLAGS = -std=c++17 -O2 -include $(top_srcdir)/tests/simt/simt.h \
	-Wall -Wextra -Wno-sign-compare -Wno-unused-parameter $(SIMT_WERROR)
tests_simt_test_kernels_simt_LDADD = kernels/libkernels_cpu.la tests/unit/libgttest.la $(CUNIT_LIBS) $(DL_LIBS) $(M_LIBS)
CLEANFILES += $(SIMT_GENERATED)

tests/simt/gen/%.cc: $(top_srcdir)/kernels/cuda/%.cu $(top_srcdir)/tests/simt/launches.sed
	$(AM_V_GEN)$(MKDIR_P) tests/simt/gen && $(SED) -f $(top_srcdir)/tests/simt/launches.sed $< >$@.tmp && mv $@.tmp $@
tests/simt/gen/faulty_kernels.cc: $(top_srcdir)/tests/simt/faulty_kernels.cu $(top_srcdir)/tests/simt/launches.sed
	$(AM_V_GEN)$(MKDIR_P) tests/simt/gen && $(SED) -f $(top_srcdir)/tests/simt/launches.sed $< >$@.tmp && mv $@.tmp $@
endif
endif
EXTRA_DIST += tests/simt/test_kernels_simt.c tests/simt/simt.cc tests/simt/simt.h tests/simt/simt_mem.h \
	tests/simt/launches.sed tests/simt/faulty_kernels.cu
