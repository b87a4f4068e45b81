# bench_pytorch_overhead.py: what gtrace's --pytorch hooks cost, measured in
# one process with the hooks turned off and on between rounds, so both sides
# share the machine's state of the moment. Run under gtrace without
# --pytorch (the capture library on, the hooks installed by this script),
# OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive; prints figures, asserts nothing.
#
#   python3 bench_pytorch_overhead.py calls PYTHON_DIR NVTX_LIB [FEATURES] [ROUNDS]
#   python3 bench_pytorch_overhead.py step PYTHON_DIR NVTX_LIB [FEATURES] [PAIRS]
#   python3 bench_pytorch_overhead.py phases PYTHON_DIR NVTX_LIB [FEATURES] [PAIRS]
#   python3 bench_pytorch_overhead.py run [STEPS]
#
# `calls`: the price of one module call: forward and backward of an
# nn.Sequential of 48 nn.Linear(4, 4) on a (2, 4) tensor, 100 iterations a
# block, blocks off and on in turn, ROUNDS (default 30) pairs; prints the
# median per call (49 module calls an iteration) off and on and the median of
# the pairs' differences, in ns, CPU time of the process. Then the same
# forward-only, under torch.no_grad() (no backward ranges).
#
# `step`: the training step of a 26-module MLP (12 blocks of Linear(256,
# 256) + ReLU in two Sequentials, batch 128, SGD, a DataLoader), 6 to 11 ms
# on one core (WIDTH=N: Linear(N, N), for another step time); PAIRS
# (default 150) pairs of one step off and one on, the order alternating; prints the median step off and on, the median of the
# pairs' differences and their mean (us and % of the step off). With module
# backward ranges on one step in N (backward-every=N, the default) the
# median is an unsampled step's price and the mean the price per step, the
# sampled steps included (it is the noisier figure); a second line splits
# the pairs by whether the step had them and gives the price per step from
# the two medians, ((N - 1) * without + with) / N.
#
# FEATURES: a --pytorch list (backward-every=N included), or `floor`: no
# hooks, and on the "on" side a TorchDispatchMode that names nothing (what
# any dispatch mode costs, the floor under `ops` mode); the calls' ranges
# have no optimizer steps, so every call is on step 0, which is sampled
# unless backward-every=0 (then a call with grad on and no backward range).
#
# `phases`: the same pairs, each step timed by phase (data, forward and loss,
# zero_grad, backward, optimizer step): the median of the pairs' differences
# per phase, over the steps without module backward ranges.
#
# `run`: the same training step STEPS times (default 300), nothing else: the
# program of whole-process comparisons (under gtrace and gtrace --pytorch).
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Hooks:
    """What gtrace_torch.hooks.install put in torch, to take out and put back:
    the wrapped functions (Module.__call__, backward, __next__, optimizer
    steps on 1.13), the global optimizer hooks (2.x) and the ops' dispatch
    mode or ITT profiler.
    Only functions whose code is the hooks' own: torch wraps functions too
    (an optimizer's step in its profiler hook and grad-mode decorators, with
    __wrapped__), and taking those out would make the side without gtrace
    cheaper than a program without gtrace is."""

    def __init__(self, hooks_module):
        import torch.optim.optimizer as om
        from torch.utils.data import dataloader
        self.tables = [getattr(om, n) for n in ("_global_optimizer_pre_hooks", "_global_optimizer_post_hooks")
                       if hasattr(om, n)]
        self.saved = [dict(t) for t in self.tables]
        self.swaps = []  # (owner, attribute, gtrace's, torch's)
        for owner, name in [(torch.autograd, "backward"), (dataloader._BaseDataLoaderIter, "__next__"),
                            (nn.Module, "__call__")] + [(c, "step") for c in torch.optim.Optimizer.__subclasses__()]:
            f = owner.__dict__.get(name)
            code = getattr(f, "__code__", None)
            if code is not None and code.co_filename == hooks_module.__file__ and hasattr(f, "__wrapped__"):
                self.swaps.append((owner, name, f, f.__wrapped__))
        self.mode = getattr(hooks_module, "_op_mode", None)
        self.itt = getattr(hooks_module, "_op_itt", None)  # ops through ITT (2.x), else None
        self.on = True

    def set(self, on):
        if on == self.on:
            return
        self.on = on
        for t, saved in zip(self.tables, self.saved):
            t.clear()
            if on:
                t.update(saved)
        for owner, name, ours, theirs in self.swaps:
            setattr(owner, name, ours if on else theirs)
        if self.mode is not None:
            if on:
                self.mode.__enter__()
            else:
                self.mode.__exit__(None, None, None)
        if self.itt is not None:
            if on:
                self.itt.on()
            else:
                self.itt.off()


class EmptyMode:
    """The floor under ops mode: a dispatch mode that only runs each op."""

    def __init__(self):
        from torch.utils._python_dispatch import TorchDispatchMode

        class Empty(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        self.mode = Empty()
        self.mode.__enter__()
        self.on = True

    def set(self, on):
        if on != self.on:
            self.on = on
            if on:
                self.mode.__enter__()
            else:
                self.mode.__exit__(None, None, None)


def install(python_dir, nvtx_lib, features):
    sys.path.insert(0, python_dir)
    from gtrace_torch import hooks
    hooks.install(torch, set(features.split(",")), nvtx_lib)
    return hooks


def calls(hooks, rounds):
    h = Hooks(hooks)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(4, 4) for _ in range(48)])
    x = torch.randn(2, 4)
    n_calls = 49

    def grad_block(k):
        c = time.process_time()
        for _ in range(k):
            model(x).sum().backward()
        return (time.process_time() - c) / (k * n_calls)

    def nograd_block(k):
        with torch.no_grad():
            c = time.process_time()
            for _ in range(k):
                model(x)
            return (time.process_time() - c) / (k * n_calls)

    for label, block in (("forward+backward", grad_block), ("forward, no_grad", nograd_block)):
        for i in range(6):
            h.set(i % 2 == 1)
            block(20)
        off, on, diff = [], [], []
        for i in range(rounds):
            first = i % 2 == 0
            h.set(first)
            a = block(100)
            h.set(not first)
            b = block(100)
            t_on, t_off = (a, b) if first else (b, a)
            on.append(t_on)
            off.append(t_off)
            diff.append(t_on - t_off)
        h.set(True)
        print("calls %s: off %.0f ns on %.0f ns diff %.0f ns a module call (pairs %d)"
              % (label, statistics.median(off) * 1e9, statistics.median(on) * 1e9,
                 statistics.median(diff) * 1e9, rounds))


class MLP(nn.Module):
    def __init__(self, width=256, blocks=12):
        super().__init__()
        half = blocks // 2
        self.encoder = nn.Sequential(*[m for _ in range(half) for m in (nn.Linear(width, width), nn.ReLU())])
        self.decoder = nn.Sequential(*[m for _ in range(blocks - half) for m in (nn.Linear(width, width), nn.ReLU())])

    def forward(self, x):
        return self.decoder(self.encoder(x))


def setup():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    width = int(os.environ.get("WIDTH", "256"))  # the layers' width: set it for the step time wanted
    n = 128 * 64
    x, y = torch.randn(n, width), torch.randn(n, width)
    loader = DataLoader(TensorDataset(x, y), batch_size=128)
    model, loss_fn = MLP(width), nn.MSELoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.001)
    state = {"it": iter(loader)}

    def step(times=None):
        """One step; with `times`, each phase's wall time appended to it
        (CPU clocks read here spread by tens of us a phase)."""
        c = time.perf_counter_ns
        t0 = c()
        try:
            xb, yb = next(state["it"])
        except StopIteration:
            state["it"] = iter(loader)
            xb, yb = next(state["it"])
        t1 = c()
        loss = loss_fn(model(xb), yb)
        t2 = c()
        opt.zero_grad()
        t3 = c()
        loss.backward()
        t4 = c()
        opt.step()
        if times is not None:
            t5 = c()
            for name, d in zip(PHASES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
                times[name].append(d)

    return step


PHASES = ("data", "forward", "zero_grad", "backward", "optimizer")


def phase_pairs(hooks, pairs):
    """The price of each phase of a step without module backward ranges."""
    step = setup()
    h = Hooks(hooks)
    for i in range(20):
        h.set(i % 2 == 1)
        step()
    flag = getattr(hooks, "_sampled", None)
    diffs = {name: [] for name in PHASES}
    for i in range(pairs):
        first = i % 2 == 0
        t, sampled = {}, False
        for side in (first, not first):
            h.set(side)
            if side and flag is not None:
                sampled = flag[0]
            t[side] = {name: [] for name in PHASES}
            step(t[side])
        if not sampled:
            for name in PHASES:
                diffs[name].append(t[True][name][0] - t[False][name][0])
    h.set(True)
    print("phases (%d pairs without backward ranges): %s" % (
        len(diffs["data"]), ", ".join("%s %+.1f us" % (n, statistics.median(diffs[n]) / 1e3) for n in PHASES)))


def step_pairs(hooks, pairs):
    step = setup()
    h = Hooks(hooks) if hooks is not None else EmptyMode()  # after the optimizer is made (1.13 wraps its step)

    def timed():
        c = time.process_time()
        step()
        return time.process_time() - c

    for i in range(20):  # 10 steps on: the pairs' steps on are steps 10 on, sampled one in N (N <= 10)
        h.set(i % 2 == 1)
        timed()
    flag = getattr(hooks, "_sampled", None)  # whether the next step gets module backward ranges
    off, on, diff, kinds = [], [], [], []
    for i in range(pairs):
        first = i % 2 == 0
        t = {}
        for side in (first, not first):
            h.set(side)
            if side:
                kinds.append(flag[0] if flag is not None else None)
            t[side] = timed()
        on.append(t[True])
        off.append(t[False])
        diff.append(t[True] - t[False])
    h.set(True)
    m_off, m_d, mean_d = statistics.median(off), statistics.median(diff), statistics.mean(diff)
    print("step: off %.1f us on %.1f us diff %.1f us (%+.2f%%) mean diff %.1f us (%+.2f%%) pairs %d"
          % (m_off * 1e6, statistics.median(on) * 1e6, m_d * 1e6, 100 * m_d / m_off, mean_d * 1e6,
             100 * mean_d / m_off, pairs))
    every = getattr(hooks, "_backward_every", None)
    plain = [d for d, k in zip(diff, kinds) if k is False]
    marked = [d for d, k in zip(diff, kinds) if k is True]
    if flag is not None and plain and marked and every:
        # a step in `every` has backward ranges: the price per step, from the two medians
        u, b = statistics.median(plain), statistics.median(marked)
        per = ((every - 1) * u + b) / every
        print("step split: without backward ranges %.1f us (%+.2f%%, %d), with %.1f us (%+.2f%%, %d), "
              "per step at 1 in %d %.1f us (%+.2f%%)" % (u * 1e6, 100 * u / m_off, len(plain), b * 1e6,
                                                       100 * b / m_off, len(marked), every, per * 1e6,
                                                       100 * per / m_off))


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "run"
    if what == "run":
        step = setup()
        for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 300):
            step()
        return 0
    features = sys.argv[4] if len(sys.argv) > 4 else "steps,modules"
    h = install(sys.argv[2], sys.argv[3], features) if features != "floor" else None  # the hooks module
    print("torch %s, features %s" % (torch.__version__, features))
    if what == "calls":
        calls(h, int(sys.argv[5]) if len(sys.argv) > 5 else 30)
    elif what == "step":
        step_pairs(h, int(sys.argv[5]) if len(sys.argv) > 5 else 150)
    elif what == "phases":
        phase_pairs(h, int(sys.argv[5]) if len(sys.argv) > 5 else 150)
    return 0


if __name__ == "__main__":
    sys.exit(main())
