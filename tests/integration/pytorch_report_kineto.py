# pytorch_report_kineto.py: writes a torch.profiler trace in the shape torch
# 2.5 writes with with_stack=True: ProfilerStep#N ranges of RANGE_US while
# the steps' work (a DataLoader batch, a forward op, an autograd op, an
# optimizer step, each with the ATen op it calls) runs between them, the
# steps 15-38 ms apart. Prints the steps it made, "N START_NS END_NS" a line,
# each from its ProfilerStep's start to the next one's (the last to the end
# of its work), relative to the first event.
#
#   python3 pytorch_report_kineto.py OUT.json RANGE_US
import json
import sys

out, range_us = sys.argv[1], float(sys.argv[2])
gaps_ms = [15, 22, 38, 30, 18, 26, 21, 33]  # from one step's start to the next
pid = tid = 4321
ev = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}},
      {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": "thread 4321 (python)"}}]
t0 = 1000.0  # us
t, steps = t0, []


def x(cat, name, ts, dur):
    ev.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": {}})


for n, gap in enumerate(gaps_ms + [None]):
    x("user_annotation", "ProfilerStep#%d" % (n + 2), t, range_us)
    w = t + 40
    x("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", w, 500)
    x("cpu_op", "aten::linear", w + 600, 5000)
    x("cpu_op", "aten::addmm", w + 700, 4500)
    x("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", w + 6000, 6000)
    x("cpu_op", "aten::mm", w + 6100, 5000)
    x("user_annotation", "Optimizer.step#SGD.step", w + 12500, 2000)
    x("cpu_op", "aten::add_", w + 12600, 1500)
    end = w + 14500
    nxt = t + gap * 1000 if gap is not None else end
    steps.append((n + 2, t, nxt))
    t = nxt
with open(out, "w") as f:
    json.dump({"schemaVersion": 1, "deviceProperties": [], "baseTimeNanoseconds": 1790857026000000000,
               "traceEvents": ev, "traceName": out, "displayTimeUnit": "ms"}, f)
for n, s, e in steps:
    print(n, round((s - t0) * 1000), round((e - t0) * 1000))
