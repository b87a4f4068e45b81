"""pytorch_window.py: a small MLP trained for some steps, the program the
pytorch_window.sh and oom_pytorch.sh tests run under `gtrace --pytorch`. It
knows nothing of gtrace; its data are seeded random numbers.

    pytorch_window.py [--steps N] [--pause-after S,...] [--oom-at S]
                      [--oom-in forward|backward|optimizer|loop]
                      [--oom-kind raise|cpu] [--catch]

--pause-after S,...: after step S's optimizer step, creates ./paused.S and
waits until ./resume.S exists (for a signal sent, or time let pass, meanwhile). --oom-at S: in step S an
allocation fails where --oom-in says: in the forward of the module "body.1",
in the backward of that module's output, in the optimizer's step, or in the
training loop itself outside them; --oom-kind raise raises
torch.cuda.OutOfMemoryError with the message PyTorch 1.13's caching
allocator gives (20.00 MiB requested), cpu asks the CPU allocator for 1 PiB
(a real failure). Without --catch the error ends the program; with it the
loop prints it, skips the batch and goes on.
"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn

MESSAGE = ("CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; "
           "14.12 GiB already allocated; 17.75 MiB free; 14.80 GiB reserved in total by PyTorch) "
           "If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.")


def fail_allocation(kind):
    if kind == "raise":
        raise torch.cuda.OutOfMemoryError(MESSAGE)
    torch.empty(1 << 50, dtype=torch.uint8)  # 1 PiB: the CPU allocator refuses it


class Failing(nn.Module):
    """A linear layer whose forward (or its backward) fails when armed."""

    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, n)
        self.armed = None  # "forward", "backward" or None
        self.kind = "raise"

    def forward(self, x):
        if self.armed == "forward":
            self.armed = None
            fail_allocation(self.kind)
        y = self.lin(x)
        if self.armed == "backward":
            self.armed = None
            kind = self.kind

            def hook(grad):
                fail_allocation(kind)
            y.register_hook(hook)
        return torch.relu(y)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), Failing(32), nn.Linear(32, 32))
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.body(x))


class SGD(torch.optim.SGD):
    armed = False
    kind = "raise"

    def step(self, closure=None):
        if self.armed:
            self.armed = False
            fail_allocation(self.kind)
        return super().step(closure)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--pause-after", default="")
    p.add_argument("--oom-at", type=int, default=-1)
    p.add_argument("--oom-in", default="forward", choices=("forward", "backward", "optimizer", "loop"))
    p.add_argument("--oom-kind", default="raise", choices=("raise", "cpu"))
    p.add_argument("--catch", action="store_true")
    a = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Net()
    opt = SGD(model.parameters(), lr=0.01)
    loss_fn = nn.MSELoss()
    failing = model.body[1]
    failing.kind = opt.kind = a.oom_kind
    pauses = {int(s) for s in a.pause_after.split(",") if s}
    for step in range(a.steps):
        x, y = torch.randn(8, 16), torch.randn(8, 4)
        try:
            if step == a.oom_at:
                if a.oom_in in ("forward", "backward"):
                    failing.armed = a.oom_in
                elif a.oom_in == "optimizer":
                    opt.armed = True
            out = model(x)
            loss = loss_fn(out, y)
            opt.zero_grad()
            loss.backward()
            if step == a.oom_at and a.oom_in == "loop":
                fail_allocation(a.oom_kind)
            opt.step()
        except RuntimeError as e:
            if not a.catch:
                raise
            print("step %d: %s: %s" % (step, type(e).__name__, str(e).split(".")[0]))
            continue
        print("step %d loss %.4f" % (step, loss.item()), flush=True)
        if step in pauses:
            open("paused.%d" % step, "w").close()
            deadline = time.time() + 120
            while not os.path.exists("resume.%d" % step) and time.time() < deadline:
                time.sleep(0.01)
    return 0


if __name__ == "__main__":
    sys.exit(main())
