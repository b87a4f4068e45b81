"""pytorch_snapshot.py: a Python process run by `gtrace --pytorch` that leaves
a CUDA memory snapshot in the run's parts folder as gtrace_torch/memory.py
does, without a GPU: the hand-built snapshot of make_snapshots.py (PyTorch
2.x's format), its history stamped on the wall clock now, inside an NVTX
range "allocate" that this process pushes through libgtrace-nvtx.so, as the
PyTorch annotations do. Prints "pid PID t0_us T" (T: the history's start).

    pytorch_snapshot.py FIXTURES_DIR good|truncated|hostile|oom|both

oom: the snapshot an out-of-memory error leaves (pytorch-PID-oom.pickle)
only, as of a process killed after it; both: that one and the one at exit.
"""
import os
import pickle
import sys
import time

from gtrace_torch import nvtx

sys.path.insert(0, sys.argv[1])
import make_snapshots  # noqa: E402

kind = sys.argv[2]
parts = os.environ["GTRACE_PARTS_DIR"]
pid = os.getpid()
with open(os.path.join(parts, "pytorch-%d.clock" % pid), "w") as f:
    f.write("%d %d\n" % (time.time_ns(), time.monotonic_ns()))

nv = nvtx.Nvtx(os.environ["GTRACE_NVTX_LIB"])
nv.push(nv.handle("allocate"))
t0_us = time.time_ns() // 1000
snap = make_snapshots.snapshot_p4(t0_us)
while time.time_ns() // 1000 <= t0_us + 60:
    time.sleep(0.0001)  # the history's last action (t0 + 50 us) is before the pop
nv.pop()

data = pickle.dumps(snap, protocol=4)
if kind == "truncated":
    data = data[:len(data) // 2]
elif kind == "hostile":
    data = pickle.dumps({"segments": [make_snapshots.Evil()]}, protocol=4)
for suffix in {"oom": ["-oom"], "both": ["", "-oom"]}.get(kind, [""]):
    path = os.path.join(parts, "pytorch-%d%s.pickle" % (pid, suffix))
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.replace(path + ".tmp", path)
print("pid %d t0_us %d" % (pid, t0_us))
