# trainer: the reference trainer (see the "Trainer" section of ARCHITECTURE.md).
# libtrainer.la is everything but main(): the unit suites link it. It builds
# without NVTX (the annotations become no-ops), but the trainer program is
# only built with NVTX headers: a trainer that tools cannot see defeats its
# purpose as the reference program gtrace users profile.
noinst_LTLIBRARIES += trainer/libtrainer.la
trainer_libtrainer_la_SOURCES = \
	trainer/error.h trainer/error.c \
	trainer/nvtx.h trainer/nvtx.c \
	trainer/tensor.h trainer/tensor.c \
	trainer/alloc.h trainer/alloc.c trainer/mem_ops.h \
	trainer/backend.h trainer/backend_cpu.c trainer/op_roles.h trainer/op_roles.c \
	trainer/rng.h \
	trainer/gpt.h trainer/model_gpt.c \
	trainer/model.h trainer/model_cnn.h trainer/model_cnn.c \
	trainer/optim.h trainer/optim.c \
	trainer/train.h trainer/train.c \
	trainer/data.h trainer/data.c \
	trainer/data_idx.h trainer/data_idx.c \
	trainer/ckpt.h trainer/ckpt.c trainer/ckpt_io.h trainer/ckpt_io.c \
	trainer/ckpt_cnn.h trainer/ckpt_cnn.c
TRAINER_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/trainer -I$(top_srcdir)/kernels $(NVTX_CPPFLAGS)
trainer_libtrainer_la_CPPFLAGS = $(TRAINER_CPPFLAGS)
trainer_libtrainer_la_CFLAGS = $(AM_CFLAGS) -O2 $(OPENMP_CFLAGS) $(BLAS_CFLAGS) $(ZLIB_CFLAGS)
trainer_libtrainer_la_LIBADD = kernels/libkernels_cpu.la $(ZLIB_LIBS) $(BLAS_LIBS) $(PTHREAD_LIBS) $(M_LIBS) $(DL_LIBS)

# Installed as gtrace-trainer (a plain "trainer" in bindir would collide with
# anything of that name); in the build tree, for the tests and the benchmarks,
# it stays trainer/trainer. So it is built as a noinst program and installed
# by the rules below, which honour --program-prefix and the like.
if HAVE_NVTX
noinst_PROGRAMS += trainer/trainer
dist_man_MANS += trainer/gtrace-trainer.1
install-exec-local: install-trainer
uninstall-local: uninstall-trainer
trainer_trainer_SOURCES = trainer/main.c trainer/options.h trainer/options.c trainer/flags.h trainer/flags.c \
	trainer/plug.h trainer/plug.c \
	trainer/run_cnn.h trainer/run_cnn.c \
	trainer/memlimit.h trainer/memlimit.c
trainer_trainer_CPPFLAGS = $(TRAINER_CPPFLAGS)
trainer_trainer_CFLAGS = $(AM_CFLAGS) -O2 $(OPENMP_CFLAGS)
trainer_trainer_LDFLAGS = $(AM_LDFLAGS) $(OPENMP_CFLAGS)
trainer_trainer_LDADD = trainer/libtrainer.la

TESTS += tests/integration/trainer_cli.sh tests/integration/trainer_train.sh \
	tests/integration/trainer_safetensors.sh tests/integration/trainer_optimizations.sh \
	tests/integration/trainer_ckpt_safety.sh tests/integration/trainer_memlimit.sh tests/integration/trainer_cnn.sh \
	tests/integration/trainer_cnn_advice.sh tests/integration/trainer_cnn_ckpt.sh tests/integration/trainer_cnn_torch.sh \
	tests/integration/trainer_flags.sh tests/integration/trainer_ckpt_flags.sh
endif
EXTRA_DIST += tests/integration/trainer_cli.sh tests/integration/trainer_train.sh \
	tests/integration/trainer_safetensors.sh tests/integration/trainer_optimizations.sh \
	tests/integration/trainer_ckpt_safety.sh tests/integration/trainer_memlimit.sh tests/integration/trainer_cnn.sh \
	tests/integration/trainer_cnn_advice.sh tests/integration/trainer_cnn_common.sh tests/integration/trainer_cnn_ckpt.sh \
	tests/integration/trainer_cnn_torch.sh tests/integration/trainer_flags.sh tests/integration/trainer_ckpt_flags.sh

# Benchmarks print figures and are never run by make check (results:
# bench/results/*-trainer-cpu.md). Run from the build dir:
#   $(top_srcdir)/bench/bench_trainer.sh ./trainer/trainer
#   $(top_srcdir)/bench/bench_optimizations.sh ./trainer/trainer (results: *-optimizations-cpu.md)
#   $(top_srcdir)/bench/bench_cnn.sh ./trainer/trainer (the CNNs against PyTorch; results: *-cnn-cpu.md)
EXTRA_DIST += bench/bench_trainer.sh bench/bench_trainer_torch.py bench/bench_optimizations.sh bench/bench_cnn.sh \
	bench/bench_cnn_torch.py bench/bench_cnn_cpu.sh bench/bench_trainer_same_bytes.sh \
	bench/bench_trainer_flag_errors.sh

if HAVE_CUNIT
TRAINER_TEST_CFLAGS = $(AM_CFLAGS) $(CUNIT_CFLAGS) $(OPENMP_CFLAGS)
TRAINER_TEST_LDADD = trainer/libtrainer.la tests/unit/libgttest.la $(CUNIT_LIBS)
check_PROGRAMS += tests/unit/test_trainer_alloc tests/unit/test_trainer_data tests/unit/test_trainer_model \
	tests/unit/test_trainer_train tests/unit/test_trainer_ckpt tests/unit/test_trainer_roles \
	tests/unit/test_trainer_cnn_ops tests/unit/test_trainer_cnn_data tests/unit/test_trainer_cnn_model
TESTS += tests/unit/test_trainer_alloc tests/unit/test_trainer_data tests/unit/test_trainer_model \
	tests/unit/test_trainer_train tests/unit/test_trainer_ckpt tests/unit/test_trainer_roles \
	tests/unit/test_trainer_cnn_ops tests/unit/test_trainer_cnn_data tests/unit/test_trainer_cnn_model
tests_unit_test_trainer_alloc_SOURCES = tests/unit/test_trainer_alloc.c
tests_unit_test_trainer_alloc_CPPFLAGS = $(TRAINER_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_trainer_alloc_CFLAGS = $(TRAINER_TEST_CFLAGS)
tests_unit_test_trainer_alloc_LDFLAGS = $(AM_LDFLAGS) $(OPENMP_CFLAGS)
tests_unit_test_trainer_alloc_LDADD = $(TRAINER_TEST_LDADD)
tests_unit_test_trainer_data_SOURCES = tests/unit/test_trainer_data.c
tests_unit_test_trainer_data_CPPFLAGS = $(TRAINER_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_trainer_data_CFLAGS = $(TRAINER_TEST_CFLAGS)
tests_unit_test_trainer_data_LDFLAGS = $(AM_LDFLAGS) $(OPENMP_CFLAGS)
tests_unit_test_trainer_data_LDADD = $(TRAINER_TEST_LDADD)
tests_unit_test_trainer_model_SOURCES = tests/unit/test_trainer_model.c tests/unit/trainer_fixture.h
tests_unit_test_trainer_model_CPPFLAGS = $(TRAINER_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_trainer_model_CFLAGS = $(TRAINER_TEST_CFLAGS)
tests_unit_test_trainer_model_LDFLAGS = $(AM_LDFLAGS) $(OPENMP_CFLAGS)
tests_unit_test_trainer_model_LDADD = $(TRAINER_TEST_LDADD)
tests_unit_test_trainer_train_SOURCES = tests/unit/test_trainer_train.c tests/unit/trainer_fixture.h
tests_unit_test_trainer_train_CPPFLAGS = $(TRAINER_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_trainer_train_CFLAGS = $(TRAINER_TEST_CFLAGS)
tests_unit_test_trainer_train_LDFLAGS = $(AM_LDFLAGS) $(OPENMP_CFLAGS)
tests_unit_test_trainer_train_LDADD = $(TRAINER_TEST_LDADD)
tests_unit_test_trainer_ckpt_SOURCES = tests/unit/test_trainer_ckpt.c tests/unit/trainer_fixture.h
tests_unit_test_trainer_ckpt_CPPFLAGS = $(TRAINER_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_trainer_ckpt_CFLAGS = $(TRAINER_TEST_CFLAGS)
tests_unit_test_trainer_ckpt_LDFLAGS = $(AM_LDFLAGS) $(OPENMP_CFLAGS)
tests_unit_test_trainer_ckpt_LDADD = $(TRAINER_TEST_LDADD)
# The dtype roles (op_roles.h) the model asks for under each --amp, on the CPU
# backend, which refuses what the CUDA backend would.
tests_unit_test_trainer_roles_SOURCES = tests/unit/test_trainer_roles.c tests/unit/trainer_fixture.h
tests_unit_test_trainer_roles_CPPFLAGS = $(TRAINER_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_trainer_roles_CFLAGS = $(TRAINER_TEST_CFLAGS)
tests_unit_test_trainer_roles_LDFLAGS = $(AM_LDFLAGS) $(OPENMP_CFLAGS)
tests_unit_test_trainer_roles_LDADD = $(TRAINER_TEST_LDADD)
# The CNN's ops against plain loops and finite differences; its idx reader.
tests_unit_test_trainer_cnn_ops_SOURCES = tests/unit/test_trainer_cnn_ops.c
tests_unit_test_trainer_cnn_ops_CPPFLAGS = $(TRAINER_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_trainer_cnn_ops_CFLAGS = $(TRAINER_TEST_CFLAGS)
tests_unit_test_trainer_cnn_ops_LDFLAGS = $(AM_LDFLAGS) $(OPENMP_CFLAGS)
tests_unit_test_trainer_cnn_ops_LDADD = $(TRAINER_TEST_LDADD) $(M_LIBS)
tests_unit_test_trainer_cnn_model_SOURCES = tests/unit/test_trainer_cnn_model.c
tests_unit_test_trainer_cnn_model_CPPFLAGS = $(TRAINER_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_trainer_cnn_model_CFLAGS = $(TRAINER_TEST_CFLAGS)
tests_unit_test_trainer_cnn_model_LDFLAGS = $(AM_LDFLAGS) $(OPENMP_CFLAGS)
tests_unit_test_trainer_cnn_model_LDADD = $(TRAINER_TEST_LDADD) $(M_LIBS)
tests_unit_test_trainer_cnn_data_SOURCES = tests/unit/test_trainer_cnn_data.c
tests_unit_test_trainer_cnn_data_CPPFLAGS = $(TRAINER_CPPFLAGS) -I$(top_srcdir)/tests/unit $(ZLIB_CFLAGS)
tests_unit_test_trainer_cnn_data_CFLAGS = $(TRAINER_TEST_CFLAGS)
tests_unit_test_trainer_cnn_data_LDFLAGS = $(AM_LDFLAGS) $(OPENMP_CFLAGS)
tests_unit_test_trainer_cnn_data_LDADD = $(TRAINER_TEST_LDADD) $(ZLIB_LIBS)
endif

# Distributed training (trainer/dist.c, DDP and ZeRO over Open MPI): only
# with Open MPI. dist_test checks its pieces under mpirun with 2 and 4 ranks.
if HAVE_MPI
trainer_libtrainer_la_SOURCES += trainer/dist.h trainer/dist.c trainer/dist_gpt.h trainer/dist_gpt.c
trainer_libtrainer_la_CPPFLAGS += $(MPI_CFLAGS)
trainer_libtrainer_la_LIBADD += $(MPI_LIBS)
check_PROGRAMS += tests/integration/dist_test
tests_integration_dist_test_SOURCES = tests/integration/dist_test.c
tests_integration_dist_test_CPPFLAGS = $(TRAINER_CPPFLAGS)
tests_integration_dist_test_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_integration_dist_test_LDFLAGS = $(AM_LDFLAGS) $(OPENMP_CFLAGS)
tests_integration_dist_test_LDADD = trainer/libtrainer.la
TESTS += tests/integration/dist_mpi.sh tests/integration/dist_watchdog.sh
if HAVE_NVTX
TESTS += tests/integration/dist_train.sh tests/integration/dist_train_failure.sh tests/integration/dist_ckpt.sh
endif
endif
EXTRA_DIST += trainer/dist.h trainer/dist.c trainer/dist_gpt.h trainer/dist_gpt.c tests/integration/dist_mpi.sh \
	tests/integration/dist_watchdog.sh tests/integration/dist_common.sh tests/integration/dist_train.sh \
	tests/integration/dist_train_failure.sh tests/integration/dist_ckpt.sh bench/bench_dist.sh

# The CUDA backend (trainer/backend_cuda.c, --backend cuda): only with the
# CUDA toolkit, cuBLASLt and NVTX (the kernels library needs both). The
# trainer then links cudart and cuBLASLt, not libcuda: the driver API is
# reached through cudaGetDriverEntryPoint, so the trainer starts (and runs
# on the CPU) on machines without a driver.
if HAVE_CUDA
if HAVE_NVTX
if HAVE_CUBLASLT
TRAINER_CPPFLAGS += -DTR_CUDA_BACKEND $(CUDA_CPPFLAGS) -I$(top_srcdir)/kernels/cuda
trainer_libtrainer_la_SOURCES += trainer/backend_cuda.h trainer/backend_cuda.c trainer/cuda_options.h \
	trainer/backend_cuda_core.h trainer/backend_cuda_core.c trainer/backend_cuda_ops.c \
	trainer/backend_cuda_gemm.c trainer/backend_cuda_vmm.c trainer/backend_cuda_step.h trainer/backend_cuda_step.c
trainer_libtrainer_la_LIBADD += kernels/cuda/libgtkernels_cuda.la $(CUDA_LDFLAGS) $(CUBLASLT_LIBS) $(CUDA_LIBS)
# cuDNN's fused attention (--attention): built with cuDNN's headers, the
# library dlopened (the trainer starts without it and uses its own kernel)
if HAVE_CUDNN
trainer_libtrainer_la_SOURCES += trainer/attention_cudnn.h trainer/attention_cudnn.c
# the CNN's convolution and BatchNorm on cuDNN's classic API, dlopened as well
trainer_libtrainer_la_SOURCES += trainer/cnn_cudnn.h trainer/cnn_cudnn.c
endif
endif
endif
endif
EXTRA_DIST += trainer/backend_cuda.h trainer/backend_cuda.c trainer/cuda_options.h trainer/backend_cuda_core.h \
	trainer/backend_cuda_core.c trainer/backend_cuda_ops.c trainer/backend_cuda_gemm.c trainer/backend_cuda_vmm.c \
	trainer/backend_cuda_step.h trainer/backend_cuda_step.c trainer/cnn_cudnn.h trainer/cnn_cudnn.c

# NCCL for --dist on the CUDA backend (trainer/dist_nccl.c, behind dist.c's
# tr_dist_* API): only with Open MPI (start-up, small host reductions), the
# CUDA backend and NCCL. tests/gpu/dist_nccl.sh runs it on a GPU (77 without).
if HAVE_MPI
if HAVE_CUDA
if HAVE_NVTX
if HAVE_CUBLASLT
if HAVE_NCCL
TRAINER_CPPFLAGS += -DTR_DIST_NCCL
trainer_libtrainer_la_SOURCES += trainer/dist_nccl.h trainer/dist_nccl.c
trainer_libtrainer_la_LIBADD += $(NCCL_LIBS)
TESTS += tests/gpu/dist_nccl.sh
endif
endif
endif
endif
endif
EXTRA_DIST += trainer/dist_nccl.h trainer/dist_nccl.c tests/gpu/dist_nccl.sh tests/gpu/carry_mpi.sh

# trainer/trainer -> $(bindir)/gtrace-trainer (through libtool, as Automake
# installs bin_PROGRAMS, so install-strip strips it too).
GT_TRAINER_INSTALL_NAME = `echo gtrace-trainer | sed '$(transform)'`$(EXEEXT)
.PHONY: install-trainer uninstall-trainer
install-trainer: trainer/trainer$(EXEEXT)
	@$(NORMAL_INSTALL)
	$(MKDIR_P) "$(DESTDIR)$(bindir)"
	$(INSTALL_PROGRAM_ENV) $(LIBTOOL) $(AM_LIBTOOLFLAGS) $(LIBTOOLFLAGS) --mode=install \
	  $(INSTALL_PROGRAM) trainer/trainer$(EXEEXT) "$(DESTDIR)$(bindir)/$(GT_TRAINER_INSTALL_NAME)"
uninstall-trainer:
	@$(NORMAL_UNINSTALL)
	rm -f "$(DESTDIR)$(bindir)/$(GT_TRAINER_INSTALL_NAME)"
