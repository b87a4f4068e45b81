# pytorch_cuda.py: a small CNN trained on the GPU, knowing nothing of gtrace;
# prints its pid and the caching allocator's own peaks at the end.
import argparse
import os
import torch
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=8)
a = p.parse_args()
torch.manual_seed(0)
dev = torch.device("cuda")
model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                      nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(64, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
x = torch.randn(64, 3, 32, 32, device=dev)
y = torch.randint(0, 10, (64,), device=dev)
for step in range(a.steps):
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
torch.cuda.synchronize()
# requested: the bytes asked for (what the snapshot's history records);
# allocated: the blocks that held them, rounded up by the allocator
stats = torch.cuda.memory_stats()
print("pid %d requested_peak %d max_memory_allocated %d max_memory_reserved %d loss %.4f" % (
    os.getpid(), stats["requested_bytes.all.peak"], torch.cuda.max_memory_allocated(),
    torch.cuda.max_memory_reserved(), loss.item()))
