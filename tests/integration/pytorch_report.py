# pytorch_report.py: an MLP trained from a DataLoader with SGD, the program
# pytorch_report.sh runs under `gtrace --pytorch=steps,modules,ops`. The
# training loop runs inside torch.profiler, so PyTorch measures the same
# steps itself; its key_averages() go to OUT as JSON, sorted by self CPU
# time as torch's own table() sorts them, with the ATen ops that call each
# ATen op in torch's own event tree. It knows nothing of gtrace.
#
#   python3 pytorch_report.py OUT [--steps S]
import argparse
import json

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        # wide enough that the ops' work, not the cost of a call, orders them
        self.body = nn.Sequential(nn.Linear(512, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU())
        self.head = nn.Linear(2048, 10)

    def forward(self, x):
        return self.head(self.body(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=8)
    args = ap.parse_args()
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    # whole batches, so the loader's time is a copy, not a collation per sample
    x = torch.randn(args.steps, 128, 512, generator=g)
    y = torch.randint(0, 10, (args.steps, 128), generator=g)
    loader = DataLoader(TensorDataset(x, y), batch_size=None)
    net, loss_fn = Net(), nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    # (set_to_none: gradients are dropped, not zeroed by zero_ and fill_)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for xb, yb in loader:
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(net(xb), yb)
            loss.backward()
            opt.step()
    rows = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    # the ATen ops that call each ATen op (aten::zero_ calls aten::fill_)
    callers = {}
    for e in prof.events():
        p = e.cpu_parent
        if p is not None and e.name.startswith("aten::") and p.name.startswith("aten::") and p.name != e.name:
            callers.setdefault(e.name, set()).add(p.name)
    with open(args.out, "w") as f:
        json.dump({"ops": [{"name": e.key, "count": e.count, "self_us": e.self_cpu_time_total,
                            "total_us": e.cpu_time_total} for e in rows],
                   "callers": {k: sorted(v) for k, v in callers.items()}}, f)
    print("trained %d steps, loss %.4f" % (args.steps, loss.item()))


main()
