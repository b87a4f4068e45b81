# pytorch_compile.py: a small model trained with torch.compile'd parts, the
# program pytorch_compile.sh runs with and without `gtrace --pytorch`. It
# knows nothing of gtrace.
#
#   python3 pytorch_compile.py [--steps S]
#
# Net: body = Sequential(Linear, Block, Gate), head = Linear; a Block is
# x + relu(norm(fc(x))), a Gate x * sigmoid(fc(x)). body.1 is compiled with
# fullgraph=True, body.2 with torch.compile's defaults; Net, body, body.0,
# head and the loss (a CrossEntropyLoss module) run eagerly around them.
# Each step: a DataLoader batch, forward, backward, an SGD step. Then an
# evaluation without grad (body.1 and body.2 compiled again: grad mode is a
# guard), and one of the whole model compiled with fullgraph=True. Last,
# nine small modules of nine classes, each compiled (by dynamo alone:
# backend "eager") and called once: a graph each, as many as dynamo keeps
# for one frame's code (8) and one more.
# Prints one JSON line: what torch.compile did, from its own counters, and
# the losses (float.hex).
import argparse
import json
import re
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return x + torch.relu(self.norm(self.fc(x)))


class Gate(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return x * torch.sigmoid(self.fc(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), Block(32), Gate(32))
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.body(x))


def small_classes(n):
    """n module classes, each with a forward of its own (its own code)."""
    classes = []
    for i in range(n):
        scope = {"nn": nn, "torch": torch}
        exec(compile("class Small%d(nn.Module):\n"
                     "    def forward(self, x):\n"
                     "        return torch.tanh(x) * %d\n" % (i, i + 1), "<small %d>" % i, "exec"), scope)
        classes.append(scope["Small%d" % i])
    return classes


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=3)
    a = p.parse_args()
    torch.manual_seed(0)
    model = Net()
    model.body[1] = torch.compile(model.body[1], fullgraph=True)
    model.body[2] = torch.compile(model.body[2])
    x = torch.randn(64, 16)
    y = torch.randint(0, 4, (64,))
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(x, y), batch_size=16)
    losses = []
    step = 0
    while step < a.steps:
        for xb, yb in loader:
            loss = loss_fn(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item().hex())
            step += 1
            if step == a.steps:
                break
    with torch.no_grad():
        out = model(x[:16]) + torch.compile(model, fullgraph=True)(x[:16])
        for cls in small_classes(9):
            out = out + torch.compile(cls(), backend="eager")(out)

    from torch._dynamo.utils import counters, get_compilation_metrics
    compiles = [m for m in get_compilation_metrics() if hasattr(m, "co_name")]
    print(json.dumps({
        "torch": torch.__version__,
        "graph_breaks": sum(counters["graph_break"].values()),
        "break_reasons": sorted(counters["graph_break"]),
        "unique_graphs": counters["stats"]["unique_graphs"],
        "frames": counters["frames"]["total"],
        "frames_ok": counters["frames"]["ok"],
        # compile ids are FRAME/N: N > 0 is a recompilation of that frame
        "recompiles": sum(1 for m in compiles if int(re.split(r"[/_]", m.compile_id)[1]) > 0),
        "compiled": sorted("%s:%s" % (m.co_name, m.compile_id) for m in compiles),
        "losses": losses,
        "eval": out.sum().item().hex(),
    }, sort_keys=True))


if __name__ == "__main__":
    sys.exit(main())
