# pytorch_ddp.py: a small MLP trained with DistributedDataParallel over gloo
# on the CPU, one process per rank, as torchrun starts it (RANK, WORLD_SIZE,
# MASTER_ADDR, MASTER_PORT from the environment). The program the
# pytorch_ddp.sh test runs under `gtrace --pytorch torchrun`. It knows
# nothing of gtrace. Small buckets (bucket_cap_mb) so that each backward
# all-reduces in a few buckets, as a real model does.
#
#   torchrun --nproc_per_node=2 pytorch_ddp.py [--steps S] [--ops]
#
# Each rank prints "rank R: S steps, loss L" at the end; rank 1 works a
# little more per step (a bigger batch), so it is the rank the others wait
# for.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--width", type=int, default=512)
    a = ap.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, a.width), nn.ReLU(), nn.Linear(a.width, a.width), nn.ReLU(),
                          nn.Linear(a.width, 10))
    ddp = DDP(model, bucket_cap_mb=0.1)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(rank)
    batch = 32 if rank == 0 else 256
    loss = None
    for _ in range(a.steps):
        x = torch.randn(batch, 64, generator=g)
        y = torch.randint(0, 10, (batch,), generator=g)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(ddp(x), y)
        loss.backward()
        opt.step()
    print("rank %d: %d steps, loss %.4f" % (rank, a.steps, loss.item()), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
