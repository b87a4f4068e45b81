# samples: small programs the capture tests run under gtrace (NVTX ones need
# the NVTX 3 headers; CUDA ones the toolkit). Built by `make check`.
if HAVE_NVTX
check_PROGRAMS += samples/nvtx_threads samples/nvtx_features samples/exit_with \
	samples/nvtx_sigkill samples/nvtx_crash samples/nvtx_fork samples/nvtx_fork_stress \
	samples/nvtx_fork_strings samples/nvtx_steps
samples_nvtx_threads_SOURCES = samples/nvtx_threads.c
samples_nvtx_threads_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_nvtx_threads_LDADD = $(PTHREAD_LIBS) $(DL_LIBS)
samples_nvtx_features_SOURCES = samples/nvtx_features.c
samples_nvtx_features_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_nvtx_features_LDADD = $(PTHREAD_LIBS) $(DL_LIBS)
samples_exit_with_SOURCES = samples/exit_with.c
samples_exit_with_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_exit_with_LDADD = $(DL_LIBS)
samples_nvtx_sigkill_SOURCES = samples/nvtx_sigkill.c
samples_nvtx_sigkill_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_nvtx_sigkill_LDADD = $(DL_LIBS)
samples_nvtx_crash_SOURCES = samples/nvtx_crash.c
samples_nvtx_crash_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_nvtx_crash_LDADD = $(DL_LIBS)
samples_nvtx_fork_SOURCES = samples/nvtx_fork.c
samples_nvtx_fork_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_nvtx_fork_LDADD = $(DL_LIBS)
samples_nvtx_fork_stress_SOURCES = samples/nvtx_fork_stress.c
samples_nvtx_fork_stress_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_nvtx_fork_stress_LDADD = $(PTHREAD_LIBS) $(DL_LIBS)
samples_nvtx_fork_strings_SOURCES = samples/nvtx_fork_strings.c
samples_nvtx_fork_strings_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_nvtx_fork_strings_LDADD = $(DL_LIBS)
samples_nvtx_steps_SOURCES = samples/nvtx_steps.c
samples_nvtx_steps_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CPPFLAGS)
samples_nvtx_steps_LDADD = $(DL_LIBS)
endif

# CUDA samples for tests/gpu: one nvcc command each (they only need cudart).
if HAVE_CUDA
GT_CUDA_SAMPLES = samples/cuda_ops$(EXEEXT) samples/cuda_probe$(EXEEXT) samples/cuda_many_kernels$(EXEEXT)
samples/cuda_ops$(EXEEXT): samples/cuda_ops.cu
	$(AM_V_CC)$(MKDIR_P) samples && $(NVCC) $(NVCC_FLAGS) -g -Xlinker -export-dynamic -o $@ $(srcdir)/samples/cuda_ops.cu -L$(CUDA_HOME)/lib64 -Xlinker -rpath=$(CUDA_HOME)/lib64 $(DL_LIBS)
samples/cuda_probe$(EXEEXT): samples/cuda_probe.cu
	$(AM_V_CC)$(MKDIR_P) samples && $(NVCC) $(NVCC_FLAGS) -o $@ $(srcdir)/samples/cuda_probe.cu
samples/cuda_many_kernels$(EXEEXT): samples/cuda_many_kernels.cu
	$(AM_V_CC)$(MKDIR_P) samples && $(NVCC) $(NVCC_FLAGS) -o $@ $(srcdir)/samples/cuda_many_kernels.cu
CLEANFILES += $(GT_CUDA_SAMPLES)
endif
EXTRA_DIST += samples/cuda_ops.cu samples/cuda_probe.cu samples/cuda_many_kernels.cu
include $(srcdir)/samples/problems/local.mk
