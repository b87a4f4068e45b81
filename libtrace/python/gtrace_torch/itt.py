# itt.py: ATen ops named through PyTorch's ITT profiler (2.x), in C.
#
# torch's ITT profiler (what torch.autograd.profiler.emit_itt enters) is a
# RecordFunction callback in C++ that begins an ITT task at each op's start
# and ends it at its end: every op, backward node and record_function of
# the thread that enters it and of the threads autograd runs on. Under
# `gtrace --pytorch=...,ops` the launcher names libgtrace.so as the ITT
# collector (INTEL_LIBITTNOTIFY64, GTRACE_ITT_LIB), which makes each task
# the op range the dispatch mode would write (libtrace/capture/itt.c); the
# per-op cost is torch's callback and a push, no Python, and the dispatch
# mode's floor (a Python mode costs more per op than the range) is gone.
#
# Used when torch has ITT, the collector answers a probe (a task it counts
# and does not write), and GTRACE_TORCH_OPS is not "dispatch"; otherwise
# the dispatch mode names the ops (torch 1.13, a build without ITT, shapes:
# ITT gives names only). The profiler is entered with _enable_profiler, as
# emit_itt does, without emit_itt's _run_on_profiler_start: Python code
# that asks torch.autograd.profiler._is_profiler_enabled (inductor's
# kernels) runs as untraced.
#
# A program's own profiler (torch.profiler.profile, emit_nvtx, emit_itt)
# cannot be on with ours on one thread (torch refuses: "Profiler is already
# enabled on this thread"; a legacy profile turns ours off). So
# torch.autograd.profiler's _prepare_profiler and _enable_profiler turn
# ours off on the calling thread, and its _disable_profiler (the program's
# profile ends) turns it on again: what the program profiles has no op
# ranges of gtrace's (a program's emit_itt's tasks come to the collector:
# they are its ranges), and its key_averages() are those of the run
# without gtrace. gtrace's dispatch mode is not entered meanwhile: it would
# change them (nested ops counted twice).
import atexit
import ctypes
import os
import threading

PROBE = "gtrace::probe"  # itt.c writes no task whose name starts with "gtrace::"


class Ops:
    """Ours, on: off() and on() turn it off and on again on the calling
    thread (as the program's own profiler does; bench/ toggles it too)."""

    def __init__(self, off, on):
        self.off, self.on = off, on


def start(torch):
    """Ops through ITT if it reaches gtrace's collector: an Ops, on (on this
    thread); None: the caller names them with its dispatch mode."""
    lib = os.environ.get("GTRACE_ITT_LIB", "")
    if not lib or os.environ.get("INTEL_LIBITTNOTIFY64") != lib or os.environ.get("GTRACE_TORCH_OPS") == "dispatch":
        return None
    try:
        itt = torch.profiler.itt
        profiler = torch.autograd.profiler
        autograd = torch._C._autograd
        if not itt.is_available():
            return None
        config = profiler.ProfilerConfig(profiler.ProfilerState.ITT, False, False, False, False, False,
                                         profiler._ExperimentalConfig())
        enable, disable = autograd._enable_profiler, autograd._disable_profiler
        profiler_type, itt_type = autograd._profiler_type, torch._C._profiler.ActiveProfilerType.ITT
        wrapped = (profiler._prepare_profiler, profiler._enable_profiler, profiler._disable_profiler)
        collector = ctypes.CDLL(lib)
        collector.gt_itt_tasks.restype = ctypes.c_long
        itt.range_push(PROBE)  # ITT's first call loads the collector
        itt.range_pop()
        if collector.gt_itt_tasks() <= 0:
            return None
        enable(config, set())
    except Exception:  # a torch whose ITT differs: the dispatch mode
        return None

    paused = threading.local()  # .on: ours is off on this thread while the program profiles

    def pause():
        if not getattr(paused, "on", False) and profiler_type() == itt_type:
            disable()
            paused.on = True

    def resume():
        if getattr(paused, "on", False):
            paused.on = False
            enable(config, set())

    prepare_impl, enable_impl, disable_impl = wrapped

    def _prepare_profiler(*args, **kwargs):
        pause()
        return prepare_impl(*args, **kwargs)

    def _enable_profiler(*args, **kwargs):
        pause()
        return enable_impl(*args, **kwargs)

    def _disable_profiler(*args, **kwargs):
        try:
            return disable_impl(*args, **kwargs)
        finally:
            resume()

    def at_exit():
        """Ours off before torch's exit: a profiler still on then is a
        warning on the program's stderr ("Leaked callback handle")."""
        if profiler_type() == itt_type:
            disable()

    profiler._prepare_profiler = _prepare_profiler
    profiler._enable_profiler = _enable_profiler
    profiler._disable_profiler = _disable_profiler
    atexit.register(at_exit)
    return Ops(pause, resume)
