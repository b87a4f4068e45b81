"""bench_cnn_torch.py: PyTorch's side of bench_cnn.sh: the same two CNNs as
the trainer's --model cnn-guide and cnn-resnet (shapes, conv biases, BatchNorm
momentum and eps), fp32 or autocast's bf16/fp16 (AMP), AdamW, batch B of
1x28x28 images, NCHW. Prints one line per timed step: "step_ms <ms>" (after
WARMUP untimed steps).

    python3 bench_cnn_torch.py MODEL BATCH WARMUP STEPS THREADS [AMP: off|bf16|fp16]
"""
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Guide(nn.Module):  # PyTorch's examples/mnist Net
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = self.dropout1(F.max_pool2d(x, 2))
        x = self.dropout2(F.relu(self.fc1(torch.flatten(x, 1))))
        return self.fc2(x)


class Block(nn.Module):
    def __init__(self, c, oc, stride):
        super().__init__()
        self.c1 = nn.Conv2d(c, oc, 3, stride, 1)
        self.b1 = nn.BatchNorm2d(oc)
        self.c2 = nn.Conv2d(oc, oc, 3, 1, 1)
        self.b2 = nn.BatchNorm2d(oc)
        self.short = None
        if stride != 1 or c != oc:
            self.short = nn.Sequential(nn.Conv2d(c, oc, 1, stride, 0), nn.BatchNorm2d(oc))

    def forward(self, x):
        y = self.b2(self.c2(F.relu(self.b1(self.c1(x)))))
        return F.relu(y + (self.short(x) if self.short is not None else x))


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.blocks = nn.Sequential(Block(16, 16, 1), Block(16, 32, 2), Block(32, 64, 2))
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(F.avg_pool2d(x, 7), 1))


def main():
    model_name, batch, warmup, steps, threads = sys.argv[1], *map(int, sys.argv[2:6])
    amp = sys.argv[6] if len(sys.argv) > 6 else "off"
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(amp)
    scaler = None
    if amp == "fp16":  # the trainer's dynamic loss scale; PyTorch 1.13 has no CPU GradScaler
        try:
            scaler = torch.amp.GradScaler("cpu")
        except (AttributeError, TypeError):
            scaler = None
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = Guide() if model_name == "cnn-guide" else ResNet()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    x = torch.randn(batch, 1, 28, 28)
    y = torch.randint(0, 10, (batch,))
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=dtype, enabled=dtype is not None):
            logits = model(x)
        loss = F.cross_entropy(logits.float(), y)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        loss.item()
        if i >= warmup:
            print(f"step_ms {(time.perf_counter() - t0) * 1e3:.3f}", flush=True)


if __name__ == "__main__":
    main()
