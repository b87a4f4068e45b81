# pytorch_train.py: a small CNN trained on Fashion-MNIST-shaped images, the
# program the pytorch_*.sh tests run under `gtrace --pytorch`. It knows
# nothing of gtrace. Images: Debian's dataset-fashion-mnist when installed
# (its first N training images), else N synthetic 28x28 images of 10 classes
# (a class is a bright band at its own rows, plus noise), seeded.
#
#   python3 pytorch_train.py [--batch B] [--steps S] [--images N]
#                            [--no-optimizer] [--raise-at S] [--threads T]
#                            [--inplace] [--losses] [--fail-backward-at S]
#                            [--fail-forward-at S] [--global-hooks]
#                            [--idle-before SECONDS]
#
# --inplace: each block's ReLU is an nn.ReLU(inplace=True) module, which
# changes the normalization's output in place (what full backward hooks on
# modules break); --losses prints every step's loss exactly (float.hex);
# --fail-backward-at S: at step S the backward raises once, after the loss's
# backward and before the model's (a hook on the model's output), and the
# program goes on with that batch again. --fail-forward-at S: at step S the
# second block's forward raises once, inside the model's, and the program
# goes on with that batch. --global-hooks: prints how many global module
# hooks torch holds at the end (each one sends every module call through
# torch's slow path). --idle-before: sleeps that long before the first step,
# as a program that loads its data before training does.
import argparse
import gzip
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

FMNIST = "/usr/share/dataset-fashion-mnist"


def images(n):
    img, lab = os.path.join(FMNIST, "train-images-idx3-ubyte.gz"), os.path.join(FMNIST, "train-labels-idx1-ubyte.gz")
    if os.path.exists(img) and os.path.exists(lab):
        with gzip.open(img) as f:
            x = torch.frombuffer(bytearray(f.read()[16:16 + n * 784]), dtype=torch.uint8)
        with gzip.open(lab) as f:
            y = torch.frombuffer(bytearray(f.read()[8:8 + n]), dtype=torch.uint8)
        return x.view(n, 1, 28, 28).float() / 255.0, y.long()
    g = torch.Generator().manual_seed(0)
    y = torch.randint(0, 10, (n,), generator=g)
    x = torch.rand(n, 1, 28, 28, generator=g) * 0.3
    for i in range(n):
        r = 2 + int(y[i]) * 2
        x[i, 0, r:r + 3, :] += 0.7
    return x, y


class Block(nn.Module):
    def __init__(self, cin, cout, inplace=False):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.norm = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True) if inplace else None

    def forward(self, x):
        if getattr(self, "fail", False):
            self.fail = False
            raise RuntimeError("a forward that fails on purpose")
        x = self.norm(self.conv(x))
        return F.max_pool2d(self.relu(x) if self.relu is not None else F.relu(x), 2)


class Net(nn.Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.features = nn.Sequential(Block(1, 8, inplace), Block(8, 16, inplace))
        self.head = nn.Linear(16 * 7 * 7, 10)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def fail(grad):
    raise RuntimeError("a backward that fails on purpose")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--images", type=int, default=320)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--no-optimizer", action="store_true")
    p.add_argument("--raise-at", type=int, default=-1)
    p.add_argument("--inplace", action="store_true")
    p.add_argument("--losses", action="store_true")
    p.add_argument("--fail-backward-at", type=int, default=-1)
    p.add_argument("--fail-forward-at", type=int, default=-1)
    p.add_argument("--global-hooks", action="store_true")
    p.add_argument("--idle-before", type=float, default=0)
    a = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(a.threads)
    x, y = images(a.images)
    loader = DataLoader(TensorDataset(x, y), batch_size=a.batch, shuffle=True, drop_last=True)
    model = Net(a.inplace)
    loss_fn = nn.CrossEntropyLoss()
    opt = None if a.no_optimizer else torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    time.sleep(a.idle_before)
    step = 0
    while step < a.steps:
        for xb, yb in loader:
            if step == a.raise_at:
                raise RuntimeError("stopped at step %d on purpose" % step)
            if step == a.fail_forward_at:
                a.fail_forward_at = -1
                model.features[1].fail = True
                try:
                    model(xb)
                except RuntimeError as e:
                    print("forward failed at step %d: %s" % (step, e))
            out = model(xb)
            loss = loss_fn(out, yb)
            if opt is not None:
                opt.zero_grad()
                if step == a.fail_backward_at:
                    a.fail_backward_at = -1
                    out.register_hook(fail)
                    try:
                        loss.backward()
                    except RuntimeError as e:
                        print("backward failed at step %d: %s" % (step, e))
                    loss = loss_fn(model(xb), yb)
                    opt.zero_grad()
                loss.backward()
                opt.step()
            if a.losses:
                print("loss %d %s" % (step, loss.item().hex()))
            step += 1
            if step == a.steps:
                break
    print("trained %d steps, last loss %.4f" % (step, loss.item()))
    if a.global_hooks:  # what sends every module call through torch's slow path
        mm = sys.modules["torch.nn.modules.module"]
        print("global module hooks %d" % sum(len(getattr(mm, n, {})) for n in (
            "_global_forward_pre_hooks", "_global_forward_hooks", "_global_backward_hooks",
            "_global_backward_pre_hooks")))
    with torch.no_grad():  # evaluation after the last step: in no step
        model.eval()
        model(x[:64])


if __name__ == "__main__":
    sys.exit(main())
