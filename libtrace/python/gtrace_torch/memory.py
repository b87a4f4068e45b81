# memory.py: the CUDA caching allocator's history, for programs on a GPU.
#
# At start: torch.cuda.memory._record_memory_history (2.x's signature, else
# 1.13's), and the two clocks read together. At exit, and when the allocator
# reports an out-of-memory error (2.x: _cuda_attach_out_of_memory_observer),
# the snapshot (torch.cuda.memory._snapshot(): segments, blocks, device_traces)
# is pickled into the run's parts folder as pytorch-PID[-oom].pickle, beside
# pytorch-PID.clock: "realtime_ns monotonic_ns" at start. PyTorch stamps the
# snapshot's actions with time_us on the wall clock (microseconds since the
# epoch), so an action is at time_us * 1000 - TARGET_INFO_SESSION_START_TIME
# on the trace's clock; the clock file gives the wall clock's offset from the
# monotonic clock the capture stamps with, should the two drift apart. The
# launcher takes the files from the parts folder (record.c).
import atexit
import os
import pickle
import time

_MAX_ENTRIES = 100000


def _write(torch, suffix):
    parts = os.environ.get("GTRACE_PARTS_DIR")
    if not parts:
        return
    path = os.path.join(parts, "pytorch-%d%s.pickle" % (os.getpid(), suffix))
    snap = torch.cuda.memory._snapshot()
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        pickle.dump(snap, f)
    os.replace(tmp, path)


def start(torch):
    mem = torch.cuda.memory
    try:
        mem._record_memory_history(enabled="all", context="all", stacks="python", max_entries=_MAX_ENTRIES)
    except TypeError:
        mem._record_memory_history(True, trace_alloc_max_entries=_MAX_ENTRIES, trace_alloc_record_context=True)
    parts = os.environ.get("GTRACE_PARTS_DIR")
    if parts:
        with open(os.path.join(parts, "pytorch-%d.clock" % os.getpid()), "w") as f:
            f.write("%d %d\n" % (time.time_ns(), time.monotonic_ns()))

    def at_exit():
        try:
            _write(torch, "")
        except Exception as e:
            import sys
            sys.stderr.write("gtrace: no CUDA memory snapshot: %s\n" % (e,))

    atexit.register(at_exit)
    attach = getattr(torch._C, "_cuda_attach_out_of_memory_observer", None)
    if attach is not None:
        def on_oom(device, alloc, device_alloc, device_free):
            try:
                _write(torch, "-oom")
            except Exception:
                pass
        attach(on_oom)
