# bench_pytorch.py: the time of a CPU training step of a small CNN (two conv
# blocks and a linear head, batch 64 of 28x28 images, SGD), for
# bench_pytorch.sh. Times every step after a warm-up, in wall time
# (perf_counter) and in the process's CPU time (process_time: all its threads,
# gtrace's writer included, but not the time it waits for a core on a loaded
# machine), and prints both medians in microseconds. PyTorch runs on one
# thread; the same seed and data every run.
#
#   python3 bench_pytorch.py [STEPS] [WARMUP]
#   python3 bench_pytorch.py calls [N]
#   python3 bench_pytorch.py inprocess PYTHON_DIR NVTX_LIB
#   python3 bench_pytorch.py toggle PYTHON_DIR NVTX_LIB [FEATURES] [STEPS]
#
# `calls`: what one module call costs, the unit of --pytorch's price: N
# forwards of 50 nn.Identity in an nn.Sequential on a 1-element tensor,
# timed in CPU time; prints the cost of one module call in nanoseconds. The
# difference between a run under --pytorch and one without is the price of a
# hook pair (push and pop) per module call.
#
# `inprocess` (run under gtrace without --pytorch): the same training step
# in one process, 4 blocks of 15 steps before gtrace_torch's hooks are
# installed (steps,modules) and 4 after, alternating no further (hooks stay);
# prints the median CPU time of a step before and after. One process, one
# memory layout: what runs differ in (start-up, placement on a loaded
# machine) is out of the comparison.
#
# `toggle` (run under gtrace without --pytorch): the hooks installed once
# (FEATURES, default steps,modules), then turned off and on again every
# step (torch's global hook tables emptied and refilled, the wrapped
# functions, Module.__call__ among them, swapped back), STEPS steps (default 400) in pairs of one step
# without and one with, in an order that alternates; prints the median CPU
# time of a step without and with, and the median of the pairs'
# differences. Neighbouring steps share the machine's state of the moment
# (load, the allocator's pages), so this sees differences of a few tenths
# of a percent where separate runs see noise of several percent.
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Block(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.norm = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.max_pool2d(F.relu(self.norm(self.conv(x))), 2)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(Block(1, 16), Block(16, 32))
        self.head = nn.Sequential(nn.Linear(32 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def calls(n):
    torch.set_num_threads(1)
    model = nn.Sequential(*[nn.Identity() for _ in range(50)])
    x = torch.ones(1)
    with torch.no_grad():
        for _ in range(100):
            model(x)
        best = None
        for _ in range(5):
            c = time.process_time()
            for _ in range(n):
                model(x)
            t = (time.process_time() - c) / (n * 51)
            best = t if best is None or t < best else best
    print("call_ns %.0f" % (best * 1e9))


def setup():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    n = 64 * 160
    x, y = torch.rand(n, 1, 28, 28), torch.randint(0, 10, (n,))
    loader = DataLoader(TensorDataset(x, y), batch_size=64)
    model, loss_fn = Net(), nn.CrossEntropyLoss()
    return loader, model, loss_fn, torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


def inprocess(python_dir, nvtx_lib):
    loader, model, loss_fn, opt = setup()
    it = iter(loader)

    def block(k):
        cpu = []
        for _ in range(k):
            c = time.process_time()
            xb, yb = next(it)
            loss = loss_fn(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            cpu.append(time.process_time() - c)
        return statistics.median(cpu)

    block(10)
    before = [block(15) for _ in range(4)]
    sys.path.insert(0, python_dir)
    from gtrace_torch import hooks
    hooks.install(torch, {"steps", "modules"}, nvtx_lib)
    after = [block(15) for _ in range(4)]
    print("inprocess_us %.1f %.1f" % (statistics.median(before) * 1e6, statistics.median(after) * 1e6))


class Hooks:
    """What gtrace_torch.hooks.install put in torch, to take out and put back."""

    def __init__(self):
        import torch.nn.modules.module as mm
        import torch.optim.optimizer as om
        from torch.utils.data import dataloader
        self.tables = [getattr(mm, n) for n in ("_global_forward_pre_hooks", "_global_forward_hooks",
                                                 "_global_forward_hooks_always_called") if hasattr(mm, n)]
        self.tables += [getattr(om, n) for n in ("_global_optimizer_pre_hooks", "_global_optimizer_post_hooks")
                        if hasattr(om, n)]
        self.saved = [dict(t) for t in self.tables]
        self.swaps = []  # (owner, attribute, gtrace's, torch's)
        it = dataloader._BaseDataLoaderIter
        for owner, name in [(torch.autograd, "backward"), (it, "__next__"), (torch.nn.Module, "__call__")] + \
                [(c, "step") for c in torch.optim.Optimizer.__subclasses__()]:
            f = owner.__dict__.get(name)
            if f is not None and hasattr(f, "__wrapped__"):
                self.swaps.append((owner, name, f, f.__wrapped__))

    def set(self, on):
        for t, saved in zip(self.tables, self.saved):
            t.clear()
            if on:
                t.update(saved)
        for owner, name, ours, theirs in self.swaps:
            setattr(owner, name, ours if on else theirs)


def toggle(python_dir, nvtx_lib, features, n_steps):
    loader, model, loss_fn, opt = setup()
    state = {"it": iter(loader)}

    def step():
        c = time.process_time()
        try:
            xb, yb = next(state["it"])
        except StopIteration:
            state["it"] = iter(loader)
            xb, yb = next(state["it"])
        loss = loss_fn(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return time.process_time() - c

    sys.path.insert(0, python_dir)
    from gtrace_torch import hooks
    hooks.install(torch, set(features.split(",")), nvtx_lib)
    h = Hooks()
    for i in range(10):
        h.set(i % 2 == 1)
        step()
    off, on, diff = [], [], []
    for i in range(n_steps // 2):
        first = i % 2 == 0  # the order within a pair alternates
        h.set(first)
        a = step()
        h.set(not first)
        b = step()
        t_on, t_off = (a, b) if first else (b, a)
        on.append(t_on)
        off.append(t_off)
        diff.append(t_on - t_off)
    h.set(True)
    m_off, m_on, m_d = statistics.median(off), statistics.median(on), statistics.median(diff)
    print("toggle_us off %.1f on %.1f diff %.1f (%+.2f%%) pairs %d" % (m_off * 1e6, m_on * 1e6, m_d * 1e6,
                                                                       100 * m_d / m_off, len(diff)))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "toggle":
        return toggle(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "steps,modules",
                      int(sys.argv[5]) if len(sys.argv) > 5 else 400)
    if len(sys.argv) > 1 and sys.argv[1] == "inprocess":
        return inprocess(sys.argv[2], sys.argv[3])
    if len(sys.argv) > 1 and sys.argv[1] == "calls":
        return calls(int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    torch.manual_seed(0)
    torch.set_num_threads(1)
    n = 64 * (steps + warmup)
    x, y = torch.rand(n, 1, 28, 28), torch.randint(0, 10, (n,))
    loader = DataLoader(TensorDataset(x, y), batch_size=64)
    model, loss_fn = Net(), nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    wall, cpu = [], []
    it = iter(loader)
    for i in range(steps + warmup):
        t, c = time.perf_counter(), time.process_time()
        xb, yb = next(it)
        loss = loss_fn(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if i >= warmup:
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
    print("step_us %.1f cpu_us %.1f" % (statistics.median(wall) * 1e6, statistics.median(cpu) * 1e6))


if __name__ == "__main__":
    main()
