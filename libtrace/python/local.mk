# libtrace/python: the Python package `gtrace --pytorch` puts on a program's
# PYTHONPATH (a sitecustomize.py and the gtrace_torch package). Installed in
# $(pkgdatadir)/python; the launcher finds it there or in the source tree.
gtrace_pythondir = $(pkgdatadir)/python
dist_gtrace_python_DATA = libtrace/python/sitecustomize.py
gtrace_torchdir = $(pkgdatadir)/python/gtrace_torch
dist_gtrace_torch_DATA = \
	libtrace/python/gtrace_torch/__init__.py \
	libtrace/python/gtrace_torch/hooks.py \
	libtrace/python/gtrace_torch/itt.py \
	libtrace/python/gtrace_torch/memory.py \
	libtrace/python/gtrace_torch/nvtx.py \
	libtrace/python/gtrace_torch/oom.py \
	libtrace/python/gtrace_torch/record.py

# bench/bench_pytorch.sh BUILDDIR: what --pytorch costs a CPU training step.
EXTRA_DIST += bench/bench_pytorch.sh bench/bench_pytorch.py

# Module backward ranges, and the same losses with and without the marks
# (Debian's python3-torch; skipped, 77, without it).
if HAVE_NVTX
TESTS += tests/integration/pytorch_backward.sh
endif
EXTRA_DIST += tests/integration/pytorch_backward.sh

# Module backward ranges on sampled steps (backward-every=N), the report's
# module table saying which (Debian's python3-torch; skipped, 77, without it).
if HAVE_NVTX
TESTS += tests/integration/pytorch_backward_sampled.sh
endif
EXTRA_DIST += tests/integration/pytorch_backward_sampled.sh

# A step belongs to the thread that steps the optimizer: forwards first run
# on 50 other threads, then 3 steps on the main thread or on a thread of its
# own (Debian's python3-torch; skipped, 77, without it).
if HAVE_NVTX
TESTS += tests/integration/pytorch_threads.sh
endif
EXTRA_DIST += tests/integration/pytorch_threads.sh tests/integration/pytorch_threads.py

# torch.compile under gtrace --pytorch: no graph break, no recompilation
# (torch's own counters, with and without gtrace), compiled modules named
# (PyTorch 2.5.1 from PyPI in a throwaway virtual environment; skipped, 77,
# when pip cannot reach the index).
if HAVE_NVTX
TESTS += tests/integration/pytorch_compile.sh
endif
EXTRA_DIST += tests/integration/pytorch_compile.sh tests/integration/pytorch_compile.py

# The tests whose answers hang on the order autograd runs hooks in (torch
# 2.x: a tensor's hooks before its node's pre-hooks) again under 2.5.1.
if HAVE_NVTX
TESTS += tests/integration/pytorch_torch2.sh
endif
EXTRA_DIST += tests/integration/pytorch_torch2.sh

# On PyTorch 2.x the ops come through torch's ITT profiler into gtrace's
# ITT collector (capture/itt.c): autograd nodes and composite ops named,
# nested in the modules, the counts torch's profiler records; the program's
# own profiler and output unchanged (PyTorch 2.5.1 from PyPI in a throwaway
# virtual environment; skipped, 77, when pip cannot reach the index).
if HAVE_NVTX
TESTS += tests/integration/pytorch_itt.sh
endif
EXTRA_DIST += tests/integration/pytorch_itt.sh tests/integration/pytorch_itt.py tests/integration/pytorch_ops_common.sh

# On a torch without ITT (Debian's 1.13) the ops come through a global
# RecordFunction callback built for its libtorch (record_ops.cpp): autograd
# nodes and composite ops named, the counts torch's profiler records, the
# program's own profile and output unchanged (Debian's python3-torch and
# libtorch-dev; skipped, 77, without them).
if HAVE_NVTX
TESTS += tests/integration/pytorch_record_ops.sh
endif
EXTRA_DIST += tests/integration/pytorch_record_ops.sh

# _gtrace_fast.so: the common module call in C (fast.c), for the Python whose
# headers configure found; installed beside libgtrace-nvtx.so, where the
# launcher finds it ($GTRACE_TORCH_FAST).
if HAVE_PYTHON_DEV
pkglib_LTLIBRARIES += libtrace/python/_gtrace_fast.la
libtrace_python__gtrace_fast_la_SOURCES = libtrace/python/fast.c
libtrace_python__gtrace_fast_la_CFLAGS = $(AM_CFLAGS) $(PYTHON_CFLAGS) -fvisibility=hidden
libtrace_python__gtrace_fast_la_LDFLAGS = -module -avoid-version -shared
endif
EXTRA_DIST += libtrace/python/fast.c

# _gtrace_torch_ops.so: the ops of a torch without ITT through a RecordFunction
# callback (record_ops.cpp), for the libtorch configure found; the launcher
# finds it as it finds _gtrace_fast.so ($GTRACE_TORCH_OPS_LIB).
if HAVE_TORCH_OPS
pkglib_LTLIBRARIES += libtrace/python/_gtrace_torch_ops.la
libtrace_python__gtrace_torch_ops_la_SOURCES = libtrace/python/record_ops.cpp
libtrace_python__gtrace_torch_ops_la_CXXFLAGS = $(AM_CXXFLAGS) -std=c++17 -fvisibility=hidden
libtrace_python__gtrace_torch_ops_la_LDFLAGS = -module -avoid-version -shared
libtrace_python__gtrace_torch_ops_la_LIBADD = -ltorch_cpu -lc10
endif
EXTRA_DIST += libtrace/python/record_ops.cpp

# The C path and the Python one give the same ranges and output (Debian's
# python3-torch and python3-dev; skipped, 77, without them).
if HAVE_NVTX
TESTS += tests/integration/pytorch_fast.sh
endif
EXTRA_DIST += tests/integration/pytorch_fast.sh
