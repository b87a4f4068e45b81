#!/usr/bin/env python3
"""bench_gpu_torch.py: the PyTorch side of bench/bench_gpu.sh, on a GPU.

The trainer's GPT in PyTorch at the trainer's gpt2-124m shape by default: 12
layers, width 768, 12 heads, context 1024, GPT-2's vocabulary (50257) padded
to 50304 as llm.c and the trainer pad it, pre-LayerNorm blocks, one packed
qkv Linear, causal attention through F.scaled_dot_product_attention (flash
attention on Hopper), tanh GELU, the LM head tied to the token embedding.
Trained with bf16 autocast and fused AdamW (betas 0.9/0.95, decay 0.1 on
matrices and embeddings), eager and under torch.compile. Tokens come from an
llm.c .bin file (--data) or are random: speed does not depend on them.

For each mode it prints one line: tokens/s and ms/step (median of the timed
steps), the model FLOP utilization (MFU) and the peak memory. FLOPs per
token: 6 N (N the parameters, the tied embedding once) + 12 L C T for
attention, llm.c's and PaLM's estimate; it counts the masked half of causal
attention as done, as they do. MFU is against the GPU's dense bf16 peak:
H100 SXM and H200 989 TFLOP/s, H100 PCIe 756, A100 312 (--peak-tflops for
others; the name comes from torch.cuda.get_device_name).

  python3 bench/bench_gpu_torch.py --batch 16 --steps 30 --compile both
  python3 bench/bench_gpu_torch.py --device cpu --tiny     # a smoke test anywhere

--print-peak prints the peak and the device name (bench_gpu.sh's MFU of the
trainer uses it). --tiny is a 2-layer, 64-wide model on 64 tokens, a few steps: it checks the
script runs (on torch 1.13's CPU build too, which has neither
scaled_dot_product_attention nor torch.compile: then the attention is written
out and compile is reported as unavailable; on a GPU both are required).
"""
import argparse
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PEAK_BF16_TFLOPS = [  # dense bf16 tensor-core peaks, by a substring of the device name (first match)
    ("H100 PCIe", 756.0),
    ("H100", 989.4),
    ("H200", 989.4),
    ("GH200", 989.4),
    ("A100", 312.0),
]
HAS_SDPA = hasattr(F, "scaled_dot_product_attention")


class Block(nn.Module):
    def __init__(self, C, NH):
        super().__init__()
        self.NH = NH
        self.ln1 = nn.LayerNorm(C)
        self.qkv = nn.Linear(C, 3 * C)
        self.proj = nn.Linear(C, C)
        self.ln2 = nn.LayerNorm(C)
        self.fc = nn.Linear(C, 4 * C)
        self.fcproj = nn.Linear(4 * C, C)

    def attention(self, q, k, v):
        if HAS_SDPA:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        T = q.shape[-2]  # torch < 2.0 (the CPU smoke test only)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
        mask = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
        return att.masked_fill(~mask, float("-inf")).softmax(dim=-1) @ v

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (z.view(B, T, self.NH, C // self.NH).transpose(1, 2) for z in (q, k, v))
        y = self.attention(q, k, v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.proj(y)
        return x + self.fcproj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, V, L, C, NH, T):
        super().__init__()
        Vp = (V + 63) // 64 * 64  # the trainer's padding of the vocabulary
        self.V = V
        self.wte = nn.Embedding(Vp, C)
        self.wpe = nn.Embedding(T, C)
        self.blocks = nn.ModuleList(Block(C, NH) for _ in range(L))
        self.lnf = nn.LayerNorm(C)
        for n, p in self.named_parameters():  # GPT-2's initialization, as trainer/model_gpt.c
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * L) if n.endswith("proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)
            elif n.endswith(".bias"):
                nn.init.zeros_(p)
        with torch.no_grad():
            self.wte.weight[V:].zero_()

    def forward(self, idx, targets):
        T = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))
        for b in self.blocks:
            x = b(x)
        logits = self.lnf(x) @ self.wte.weight.t()  # the tied LM head, over the padded vocabulary
        return F.cross_entropy(logits[..., : self.V].float().flatten(0, 1), targets.flatten())


def optimizer(model, lr, fused):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}]
    kw = {"fused": True} if fused else {}
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), eps=1e-8, **kw)


def batches(args, device):
    """(inputs, targets) batches: windows of the .bin's tokens, or random tokens."""
    if args.data:
        import numpy as np
        raw = np.fromfile(args.data, dtype=np.int32, count=256)
        if raw.size < 256 or raw[0] != 20240520 or raw[1] != 1:
            sys.exit(f"bench_gpu_torch: {args.data} is not an llm.c token file (magic 20240520, version 1)")
        tokens = np.memmap(args.data, dtype=np.uint16, mode="r", offset=1024, shape=(int(raw[2]),))
        if tokens.size < args.batch * args.seq + 1:
            sys.exit(f"bench_gpu_torch: {args.data} holds {tokens.size} tokens, fewer than one batch")
        if int(tokens.max()) >= args.vocab:
            sys.exit(f"bench_gpu_torch: {args.data} has token ids >= the vocabulary ({args.vocab})")
    g = torch.Generator().manual_seed(1337)
    k = 0
    while True:
        if args.data:
            n = args.batch * args.seq
            start = (k * n) % (tokens.size - n - 1)
            chunk = torch.from_numpy(tokens[start : start + n + 1].astype("int64"))
            x, y = chunk[:-1].view(args.batch, args.seq), chunk[1:].view(args.batch, args.seq)
        else:
            xy = torch.randint(0, args.vocab, (args.batch, args.seq + 1), generator=g)
            x, y = xy[:, :-1], xy[:, 1:]
        k += 1
        yield x.to(device, non_blocking=True), y.to(device, non_blocking=True)


def peak_tflops(args, device):
    if args.peak_tflops:
        return args.peak_tflops, "given"
    if device.type != "cuda":
        return None, "cpu"
    name = torch.cuda.get_device_name(device)
    for key, peak in PEAK_BF16_TFLOPS:
        if key in name:
            return peak, name
    return None, name


def run(args, device, compiled):
    torch.manual_seed(1337)
    model = GPT(args.vocab, args.layers, args.width, args.heads, args.seq).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    opt = optimizer(model, args.lr, fused=device.type == "cuda")
    step_fn = model
    if compiled:
        step_fn = torch.compile(model)
    autocast = torch.autocast(device_type=device.type, dtype=torch.bfloat16)
    data = batches(args, device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    times, loss = [], float("nan")
    for step in range(args.warmup + args.steps):
        x, y = next(data)
        t0 = time.perf_counter()
        with autocast:
            out = step_fn(x, y)
        out.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        if step >= args.warmup:
            times.append(time.perf_counter() - t0)
        loss = out.item()
    ms = statistics.median(times) * 1e3
    tokens = args.batch * args.seq
    flops_per_token = 6 * n_params + 12 * args.layers * args.width * args.seq
    peak, gpu = peak_tflops(args, device)
    achieved = flops_per_token * tokens / (ms / 1e3) / 1e12
    if peak:
        mfu = f"MFU {100 * achieved / peak:.1f}% of {peak:g} TFLOP/s"
    else:
        mfu = f"{achieved:.1f} TFLOP/s (no peak known for {gpu})"
    mem = f", peak memory {torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB" if device.type == "cuda" else ""
    mode = "torch.compile" if compiled else "torch eager"
    print(f"{mode:13s} batch {args.batch} x {args.seq}, {args.steps} timed steps after {args.warmup}: "
          f"{tokens / (ms / 1e3):.0f} tok/s, {ms:.1f} ms/step, {mfu}{mem}; loss {loss:.4f}; "
          f"{n_params} parameters", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    ap.add_argument("--tiny", action="store_true", help="a 2-layer, 64-wide model, 3 timed steps: a smoke test")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--width", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--steps", type=int, default=30, help="timed steps (default 30)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed steps first (compilation, autotuning)")
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--compile", default="both", choices=["off", "on", "both"])
    ap.add_argument("--data", help="an llm.c .bin token file (default: random tokens)")
    ap.add_argument("--peak-tflops", type=float, help="the device's dense bf16 peak, if not in the table")
    ap.add_argument("--print-peak", action="store_true",
                    help="print the device's dense bf16 peak in TFLOP/s (0 if unknown) and its name, and exit")
    args = ap.parse_args()
    if args.tiny:
        args.layers, args.width, args.heads, args.seq, args.vocab = 2, 64, 4, 64, 256
        args.batch, args.steps, args.warmup = min(args.batch, 4), 3, 1
    device = torch.device(args.device)
    if args.print_peak:  # for bench_gpu.sh's MFU of the trainer: one table
        peak, name = peak_tflops(args, device) if device.type != "cuda" or torch.cuda.is_available() else (None, "none")
        print(f"{peak or 0:g} {name}")
        return
    if device.type == "cuda":
        if not torch.cuda.is_available():
            sys.exit("bench_gpu_torch: no CUDA device (use --device cpu --tiny for a smoke test)")
        if not HAS_SDPA:
            sys.exit(f"bench_gpu_torch: torch {torch.__version__} has no scaled_dot_product_attention (2.0+ needed)")
        torch.backends.cuda.matmul.allow_tf32 = True  # what fp32 leftovers under autocast use (the trainer's --tf32)
        print(f"device: {torch.cuda.get_device_name(device)}, torch {torch.__version__}", flush=True)
    else:
        print(f"device: cpu, torch {torch.__version__}"
              f"{'' if HAS_SDPA else ' (no scaled_dot_product_attention: attention written out)'}", flush=True)
    modes = {"off": [False], "on": [True], "both": [False, True]}[args.compile]
    for compiled in modes:
        if compiled and not hasattr(torch, "compile"):
            print(f"torch.compile  unavailable in torch {torch.__version__} (2.0+ needed): not run", flush=True)
            continue
        run(args, device, compiled)


if __name__ == "__main__":
    main()
