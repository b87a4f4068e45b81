# kernels/cuda: the CUDA kernels and their C-callable launchers, one libtool
# library built with nvcc (build-aux/nvcc-lt), one file per op family beside
# kernels/cpu/<family>.c. Only with the CUDA toolkit. The GPU tests exit 77
# (skipped) on a machine without a usable GPU.
if HAVE_CUDA
if HAVE_NVTX
noinst_LTLIBRARIES += kernels/cuda/libgtkernels_cuda.la
kernels_cuda_libgtkernels_cuda_la_SOURCES = kernels/cuda/kernels_cuda.h kernels/cuda/common.cuh \
	kernels/cuda/cast.cu kernels/cuda/encoder.cu kernels/cuda/layernorm.cu kernels/cuda/matmul.cu \
	kernels/cuda/attention.cu kernels/cuda/gelu.cu kernels/cuda/residual.cu kernels/cuda/crossentropy.cu \
	kernels/cuda/optim.cu kernels/cuda/pool.cu
kernels_cuda_libgtkernels_cuda_la_LIBADD = $(CUDA_LDFLAGS) $(CUDA_LIBS) -lstdc++

check_PROGRAMS += tests/gpu/test_cuda_cast
TESTS += tests/gpu/test_cuda_cast
tests_gpu_test_cuda_cast_SOURCES = tests/gpu/test_cuda_cast.c
tests_gpu_test_cuda_cast_CPPFLAGS = $(AM_CPPFLAGS) $(CUDA_CPPFLAGS) -I$(top_srcdir)/kernels/cuda
tests_gpu_test_cuda_cast_LDADD = kernels/cuda/libgtkernels_cuda.la $(CUDA_LDFLAGS) $(CUDA_LIBS) $(M_LIBS)

# Every op of the CUDA backend against the CPU backend, all three dtypes;
# the trainer on both backends; --cuda-graph against the eager step
# (cuda_graph.sh checks its refusals without a GPU too); device_check.sh
# runs all of it on a GPU.
if HAVE_CUBLASLT
check_PROGRAMS += tests/gpu/test_cuda_ops
TESTS += tests/gpu/test_cuda_ops tests/gpu/trainer_cuda.sh tests/gpu/cuda_graph.sh tests/gpu/trainer_cnn_cuda.sh
tests_gpu_test_cuda_ops_SOURCES = tests/gpu/test_cuda_ops.c
tests_gpu_test_cuda_ops_CPPFLAGS = $(TRAINER_CPPFLAGS)
tests_gpu_test_cuda_ops_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_gpu_test_cuda_ops_LDFLAGS = $(AM_LDFLAGS) $(OPENMP_CFLAGS)
tests_gpu_test_cuda_ops_LDADD = trainer/libtrainer.la $(M_LIBS)

# cuDNN's fused attention (trainer/attention_cudnn.c): its numerics against
# the CPU on a GPU; its graphs accepted by cuDNN for an H100 without one
# (deviceless plans, kernels compiled by NVRTC): this one runs in CI; the
# trainer's --attention switch (refusals without a GPU, the rest with one).
if HAVE_CUDNN
check_PROGRAMS += tests/gpu/test_cuda_attention tests/gpu/test_cudnn_attention_plans
TESTS += tests/gpu/test_cuda_attention tests/gpu/test_cudnn_attention_plans tests/gpu/trainer_attention.sh
tests_gpu_test_cuda_attention_SOURCES = tests/gpu/test_cuda_attention.c
tests_gpu_test_cuda_attention_CPPFLAGS = $(TRAINER_CPPFLAGS)
tests_gpu_test_cuda_attention_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_gpu_test_cuda_attention_LDFLAGS = $(AM_LDFLAGS) $(OPENMP_CFLAGS)
tests_gpu_test_cuda_attention_LDADD = trainer/libtrainer.la $(M_LIBS)
tests_gpu_test_cudnn_attention_plans_SOURCES = tests/gpu/test_cudnn_attention_plans.c
tests_gpu_test_cudnn_attention_plans_CPPFLAGS = $(TRAINER_CPPFLAGS)
tests_gpu_test_cudnn_attention_plans_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS)
tests_gpu_test_cudnn_attention_plans_LDFLAGS = $(AM_LDFLAGS) $(OPENMP_CFLAGS)
tests_gpu_test_cudnn_attention_plans_LDADD = trainer/libtrainer.la $(DL_LIBS) $(M_LIBS)
endif
endif
endif
endif
EXTRA_DIST += tests/gpu/test_cuda_ops.c tests/gpu/trainer_cuda.sh tests/gpu/device_check.sh tests/gpu/cuda_graph.sh \
	tests/gpu/trainer_cnn_cuda.sh
EXTRA_DIST += tests/gpu/test_cuda_attention.c tests/gpu/test_cudnn_attention_plans.c tests/gpu/trainer_attention.sh \
	tests/gpu/cudnn_path.sh trainer/attention_cudnn.h trainer/attention_cudnn.c
EXTRA_DIST += kernels/cuda/kernels_cuda.h kernels/cuda/common.cuh kernels/cuda/cast.cu kernels/cuda/encoder.cu \
	kernels/cuda/layernorm.cu kernels/cuda/matmul.cu kernels/cuda/attention.cu kernels/cuda/gelu.cu \
	kernels/cuda/residual.cu kernels/cuda/crossentropy.cu kernels/cuda/optim.cu kernels/cuda/pool.cu
