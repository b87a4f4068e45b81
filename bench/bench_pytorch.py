# bench_pytorch.py: the time of a CPU training step of a small CNN (two conv
# blocks and a linear head, batch 64 of 28x28 images, SGD), for
# bench_pytorch.sh. Times every step after a warm-up with perf_counter and
# prints the median in microseconds; the same seed and data every run.
#
#   python3 bench_pytorch.py [STEPS] [WARMUP]
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


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    torch.manual_seed(0)
    torch.set_num_threads(1)
    n = 64 * (steps + warmup)
    x, y = torch.rand(n, 1, 28, 28), torch.randint(0, 10, (n,))
    loader = DataLoader(TensorDataset(x, y), batch_size=64)
    model, loss_fn = Net(), nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    times = []
    it = iter(loader)
    for i in range(steps + warmup):
        t = time.perf_counter()
        xb, yb = next(it)
        loss = loss_fn(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if i >= warmup:
            times.append(time.perf_counter() - t)
    print("step_us %.1f" % (statistics.median(times) * 1e6))


if __name__ == "__main__":
    main()
