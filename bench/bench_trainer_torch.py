#!/usr/bin/python3
"""bench_trainer_torch.py: the PyTorch side of bench/bench_trainer.sh.

The trainer's GPT (llm.c's GPT-2 shapes: token and position embeddings,
pre-LayerNorm blocks, causal attention from one packed qkv Linear, tanh GELU
MLP, final LayerNorm, LM head tied to the token embedding) in plain PyTorch,
fp32 on the CPU, trained with AdamW (betas 0.9/0.95, eps 1e-8, decay 0.1 on
matrices and embeddings only, as trainer/optim.c does) on byte tokens.
--compile wraps the model in torch.compile (PyTorch 2.x; the optimizer stays
eager). It prints one line: tokens/s over the steps after the warm-up ones
(compilation happens there), the thread settings it ran with, and the peak RSS.

Threads: --threads sets torch.set_num_threads; the caller sets the same
OMP_NUM_THREADS, OMP_WAIT_POLICY and BLAS thread count (OPENBLAS_NUM_THREADS,
MKL_NUM_THREADS) it gives the trainer. For example:
  OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive OPENBLAS_NUM_THREADS=2 \
  /usr/bin/python3 bench/bench_trainer_torch.py --layers 2 --width 128 --heads 4 \
      --seq 64 --batch 8 --threads 2 --steps 50
"""
import argparse
import math
import os
import resource
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, C, NH, T):
        super().__init__()
        self.NH = NH
        self.ln1 = nn.LayerNorm(C)
        self.qkv = nn.Linear(C, 3 * C)
        self.proj = nn.Linear(C, C)
        self.ln2 = nn.LayerNorm(C)
        self.fc = nn.Linear(C, 4 * C)
        self.fcproj = nn.Linear(4 * C, C)
        self.register_buffer("mask", torch.tril(torch.ones(T, T, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (z.view(B, T, self.NH, C // self.NH).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // self.NH))
        att = att.masked_fill(~self.mask[:T, :T], float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.proj(y)
        return x + self.fcproj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, V, L, C, NH, T):
        super().__init__()
        Vp = (V + 63) // 64 * 64  # the trainer pads the vocabulary the same way
        self.V = V
        self.wte = nn.Embedding(Vp, C)
        self.wpe = nn.Embedding(T, C)
        self.blocks = nn.ModuleList(Block(C, NH, T) for _ in range(L))
        self.lnf = nn.LayerNorm(C)
        for n, p in self.named_parameters():  # GPT-2's init, as trainer/model_gpt.c
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * L) if n.endswith("proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)
            elif n.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, idx, targets):
        T = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(T))
        for b in self.blocks:
            x = b(x)
        logits = self.lnf(x) @ self.wte.weight.t()
        logits = logits[..., : self.V]
        return F.cross_entropy(logits.reshape(-1, self.V), targets.reshape(-1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=256)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup-steps", type=int, default=3)
    ap.add_argument("--compile", action="store_true", help="torch.compile the model (PyTorch 2.x)")
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(1337)
    m = GPT(a.vocab, a.layers, a.width, a.heads, a.seq)
    decay = [p for n, p in m.named_parameters() if p.dim() == 2]
    other = [p for n, p in m.named_parameters() if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                            lr=3e-3, betas=(0.9, 0.95), eps=1e-8)
    n_params = sum(p.numel() for p in m.parameters())
    fwd = m
    if a.compile:
        if not hasattr(torch, "compile"):
            print(f"bench_trainer_torch: torch {torch.__version__} has no torch.compile", file=sys.stderr)
            return 2
        fwd = torch.compile(m)
    g = torch.Generator().manual_seed(1)
    data = torch.randint(0, a.vocab, (a.steps + a.warmup_steps, a.batch, a.seq + 1), generator=g)

    def step(i):
        x, y = data[i, :, :-1], data[i, :, 1:]
        loss = fwd(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()

    for i in range(a.warmup_steps):
        step(i)
    t0 = time.perf_counter()
    for i in range(a.steps):
        loss = step(a.warmup_steps + i)
    dt = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    env = " ".join(f"{k}={os.environ.get(k, '-')}" for k in
                   ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"))
    print(f"torch {torch.__version__}{' compile' if a.compile else ' eager'}: {n_params / 1e6:.2f}M parameters, "
          f"batch {a.batch} x {a.seq}, {torch.get_num_threads()} thread(s) ({env}): "
          f"{a.steps} steps after {a.warmup_steps} warm-up in {dt:.2f} s, "
          f"{a.steps * a.batch * a.seq / dt:.0f} tok/s, {dt / a.steps * 1e3:.1f} ms/step, "
          f"last loss {loss:.4f}, peak RSS {rss:.1f} MiB")


if __name__ == "__main__":
    sys.exit(main())
