# pytorch_fork.py: a PyTorch program whose work runs in fork children, for
# pytorch_fork.sh (under gtrace --pytorch).
#
#   0. With --train-first N: the program first trains a Sequential of its own
#      N steps, so the Pool's workers are forked in the middle of its training.
#   1. A multiprocessing Pool of --workers processes (fork), made before the
#      program's first module call (unless --train-first): each worker takes
#      one task (a barrier holds the first until the others have theirs) and
#      trains its own
#      Sequential(Linear, ReLU, Linear) with MSELoss and SGD for --steps
#      steps: forward, backward, optimizer step.
#   2. Then the program itself: an Encoder module it calls once, then a
#      DataLoader with --loader-workers workers (fork) over a dataset whose
#      items the Encoder makes (in the workers: the module the parent named),
#      batches of 2 of 4 * loader_workers items, and a training step per
#      batch on a Sequential of its own.
#
# Prints "pool worker PID" for each pool worker, "loader worker PID" for
# each DataLoader worker, then "done". OMP_NUM_THREADS=1 is expected.
#
# With --lock-held-at-fork, only this: a thread calls a module of a new type
# whose named_modules() waits (the --pytorch hooks name a new model's tree
# under their lock, so it holds the lock meanwhile), and the program forks
# (os.fork) while it waits; the child trains a Sequential of its own --steps
# steps (naming it takes that lock), prints "fork child PID" and exits. The
# parent waits for it at most 20 s ("fork child hung" and exit 1 after), then
# lets the thread go, prints "done".
import argparse
import multiprocessing as mp
import os
import sys
import threading
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, get_worker_info

barrier = None


def init_worker(b):
    global barrier
    barrier = b


def model():
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


def train(seed_steps):
    barrier.wait(timeout=60)  # one task per worker
    return train_alone(seed_steps)


def train_alone(seed_steps):
    seed, steps = seed_steps
    torch.manual_seed(seed)
    net = model()
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    loss_fn = nn.MSELoss()
    for _ in range(steps):
        x, y = torch.randn(4, 8), torch.randn(4, 4)
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
    return os.getpid()


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        return torch.tanh(self.proj(x))


class Items(Dataset):
    def __init__(self, n):
        self.n = n
        self.encoder = Encoder()

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        with torch.no_grad():
            x = self.encoder(torch.full((8,), float(i)))
        info = get_worker_info()
        return x, torch.zeros(4), os.getpid() if info is not None else 0


class Slow(nn.Module):
    """A module whose named_modules() waits for `release` once `entered` is set."""

    def __init__(self, entered, release):
        super().__init__()
        self.entered, self.release = entered, release

    def named_modules(self, *args, **kwargs):
        self.entered.set()
        self.release.wait(60)
        yield from super().named_modules(*args, **kwargs)

    def forward(self, x):
        return x + 1


def lock_held_at_fork(steps):
    entered, release = threading.Event(), threading.Event()
    slow = Slow(entered, release)
    t = threading.Thread(target=lambda: slow(torch.zeros(1)))
    t.start()
    entered.wait(60)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            train_alone((0, steps))
            os.write(1, b"fork child %d\n" % os.getpid())
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + 20
    status = None
    while status is None and time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        status = status if done else None
        time.sleep(0.05)
    if status is None:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        print("fork child hung")
    release.set()
    t.join()
    if status != 0:
        return 1
    print("done")
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--loader-workers", type=int, default=2)
    p.add_argument("--train-first", type=int, default=0)
    p.add_argument("--lock-held-at-fork", action="store_true")
    a = p.parse_args()
    if a.lock_held_at_fork:
        return lock_held_at_fork(a.steps)
    ctx = mp.get_context("fork")
    if a.train_first:
        torch.manual_seed(1)
        first = model()
        opt = torch.optim.SGD(first.parameters(), lr=0.05)
        for _ in range(a.train_first):
            opt.zero_grad()
            first(torch.randn(4, 8)).square().mean().backward()
            opt.step()
    b = ctx.Barrier(a.workers)
    with ctx.Pool(a.workers, initializer=init_worker, initargs=(b,)) as pool:
        pids = pool.map(train, [(k, a.steps) for k in range(a.workers)], chunksize=1)
    for pid in sorted(set(pids)):
        print("pool worker", pid)

    torch.manual_seed(0)
    items = Items(4 * a.loader_workers)
    with torch.no_grad():
        items.encoder(torch.zeros(8))  # the parent names the Encoder first
    loader = DataLoader(items, batch_size=2, num_workers=a.loader_workers,
                        multiprocessing_context=ctx)
    net = model()
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    loss_fn = nn.MSELoss()
    seen = set()
    for x, y, pid in loader:
        seen.update(int(v) for v in pid)
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
    for pid in sorted(seen):
        print("loader worker", pid)
    print("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
