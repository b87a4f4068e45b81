# record.py: ATen ops named through a RecordFunction callback in C++, for a
# torch without ITT (Debian's 1.13).
#
# torch 2.x reaches gtrace's collector through its ITT profiler (itt.py). A
# torch built without ITT has the same RecordFunctions, reachable only from
# C++: _gtrace_torch_ops.so (libtrace/python/record_ops.cpp) adds a global
# callback whose start and end are libgtrace.so's gt_torch_op_begin and
# gt_torch_op_end, the ranges the ITT path writes, with no Python an op.
#
# The module is built against one libtorch (configure's, named by
# $GTRACE_TORCH_CPU_LIB) and is loaded only into a process that maps that
# very file as its libtorch_cpu: loaded beside another torch, it would bring
# a second libtorch into the process. Otherwise, as when it was not built or
# $GTRACE_TORCH_OPS_LIB is "none", the caller's dispatch mode names the ops.
#
# Unlike the ITT profiler, the callback is global: it runs on every thread,
# beside a program's own profiler (whose callbacks are thread-local), so the
# program's profile stays what it is untraced and gtrace keeps its ops.
import atexit
import ctypes
import os
import sys

from .itt import Ops


def _mapped_libtorch_cpu():
    """The file this process maps as libtorch_cpu, else None."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rstrip("\n").split(None, 5)[-1]
                if os.path.basename(path).startswith("libtorch_cpu.so"):
                    return os.path.realpath(path)
    except OSError:
        pass
    return None


def start(torch):
    """Ops through the RecordFunction callback: an Ops, on; None when it
    cannot be used here (the caller names ops with its dispatch mode)."""
    del torch  # imported: its libtorch_cpu is mapped
    lib = os.environ.get("GTRACE_TORCH_OPS_LIB", "")
    want = os.environ.get("GTRACE_TORCH_CPU_LIB", "")
    if not lib or lib == "none" or not want or os.environ.get("GTRACE_TORCH_OPS") == "dispatch":
        return None
    if _mapped_libtorch_cpu() != os.path.realpath(want):
        return None
    try:
        ours = ctypes.CDLL(None)  # libgtrace.so, preloaded
        begin, end, init = ours.gt_torch_op_begin, ours.gt_torch_op_end, ours.gt_torch_ops_init
        ops = ctypes.CDLL(lib)
        start_ops, pause = ops.gtrace_ops_start, ops.gtrace_ops_pause
    except (OSError, AttributeError) as e:
        sys.stderr.write("gtrace: GTRACE_TORCH_OPS_LIB=%s: %s (ops go through the dispatch mode)\n" % (lib, e))
        return None
    if init() != 0:
        return None
    as_ptr = ctypes.c_void_p
    if start_ops(ctypes.cast(begin, as_ptr), ctypes.cast(end, as_ptr)) != 0:
        return None
    atexit.register(pause, 1)  # none after the program's end (as itt.py)
    return Ops(lambda: pause(1), lambda: pause(0))
