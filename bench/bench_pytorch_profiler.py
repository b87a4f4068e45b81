# bench_pytorch_profiler.py: what torch's own profiler costs on the step of
# bench_pytorch_overhead.py (a 26-module MLP, about 10 ms on one core) when
# it records CPU ops only: the yardstick for gtrace's ops mode, whose
# TorchDispatchMode has a floor of its own (bench_pytorch_overhead.py's
# `floor`). Blocks of 5 steps, in turn without and inside
# torch.profiler.profile(activities=[CPU]) (the profile's start and its
# processing at the end are outside the timed block); prints the medians of
# CPU time a step and their ratio; asserts nothing. Run untraced, with
# OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive.
#
#   python3 bench_pytorch_profiler.py [BLOCKS]   (default 12)
import os
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_pytorch_overhead as overhead  # noqa: E402


def main():
    blocks = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    step = overhead.setup()
    for _ in range(10):
        step()

    def block(n):
        c = time.process_time()
        for _ in range(n):
            step()
        return (time.process_time() - c) / n

    off, on = [], []
    n_events = 0
    for _ in range(blocks):
        off.append(block(5))
        with profile(activities=[ProfilerActivity.CPU]) as p:
            on.append(block(5))
        n_events = len(p.events())
    a, b = statistics.median(off), statistics.median(on)
    print("torch %s: a step %.0f us, inside the profiler (CPU ops) %.0f us: %.3fx; %d events in 5 steps"
          % (torch.__version__, a * 1e6, b * 1e6, b / a, n_events))
    return 0


if __name__ == "__main__":
    sys.exit(main())
