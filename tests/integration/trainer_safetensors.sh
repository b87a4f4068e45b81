#!/bin/sh
# trainer_safetensors.sh: a trainer checkpoint read by something that is not
# the trainer. Debian's PyTorch (/usr/bin/python3 with python3-torch) parses
# the safetensors header with json + struct, checks every name, dtype, shape
# and offset, loads the weights with torch.frombuffer and runs the GPT forward
# on them; its loss must equal the one the trainer prints for the same weights
# and tokens. The data repeats with period T, so every sample, hence every
# batch, is the same sequence, whatever the loader's order.
# Skips (77) when /usr/bin/python3 has no torch.
set -u
py=/usr/bin/python3
[ -x "$py" ] && "$py" -c 'import torch' 2>/dev/null || { echo "skip: $py has no torch (apt-get install python3-torch)"; exit 77; }
trainer="$GT_TOP_BUILDDIR/trainer/trainer"
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
T=16
"$py" -c "import sys; sys.stdout.write('The quick brown.' * 300)" >"$dir/text.txt"
common="--data $dir/text.txt --layers 2 --width 32 --heads 4 --seq $T --batch 2 --eval-every 0 --seed 5 --threads 1"
# 2 steps, save; then resume for 1 step: its loss line is the forward of the saved weights.
"$trainer" $common --steps 2 --save "$dir/ck.safetensors" >"$dir/a.log" 2>&1 || { cat "$dir/a.log"; echo "FAIL: train+save"; exit 1; }
"$trainer" $common --steps 1 --resume "$dir/ck.safetensors" >"$dir/b.log" 2>&1 || { cat "$dir/b.log"; echo "FAIL: resume"; exit 1; }
cat "$dir/a.log" "$dir/b.log"
loss=$(sed -n 's/^step 3\/3 loss \([0-9.]*\).*/\1/p' "$dir/b.log")
[ -n "$loss" ] || { echo "FAIL: no 'step 3/3 loss' line after the resume"; exit 1; }

"$py" - "$dir/ck.safetensors" "$dir/text.txt" "$T" "$loss" <<'PY'
import json, math, struct, sys
import torch
import torch.nn.functional as F

path, text, T, want = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
raw = open(path, "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
header = json.loads(raw[8:8 + n])
meta = header.pop("__metadata__")
data = raw[8 + n:]
fail = []
def check(cond, what):
    if not cond:
        fail.append(what)

shape = dict(kv.split("=") for kv in meta["shape"].split(","))
L, C, NH, maxT, V = (int(shape[k]) for k in ("layers", "width", "heads", "context", "vocab"))
Vp = (V + 63) // 64 * 64
check((L, C, NH, V) == (2, 32, 4, 256), f"metadata shape {meta['shape']}")
check(meta["step"] == "2" and meta["optimizer_t"] == "2" and meta["optimizer"] == "adamw", f"metadata step/optimizer_t {meta}")
expect = {"wte.weight": [Vp, C], "wpe.weight": [maxT, C],
          "blocks.ln_1.weight": [L, C], "blocks.ln_1.bias": [L, C],
          "blocks.attn.qkv.weight": [L, 3 * C, C], "blocks.attn.qkv.bias": [L, 3 * C],
          "blocks.attn.proj.weight": [L, C, C], "blocks.attn.proj.bias": [L, C],
          "blocks.ln_2.weight": [L, C], "blocks.ln_2.bias": [L, C],
          "blocks.mlp.fc.weight": [L, 4 * C, C], "blocks.mlp.fc.bias": [L, 4 * C],
          "blocks.mlp.proj.weight": [L, C, 4 * C], "blocks.mlp.proj.bias": [L, C],
          "ln_f.weight": [C], "ln_f.bias": [C]}
names = list(expect) + ["optimizer.m." + k for k in expect] + ["optimizer.v." + k for k in expect]
check(sorted(header) == sorted(names), f"tensor names {sorted(set(header) ^ set(names))}")
w, end = {}, 0
for name in sorted(header, key=lambda k: header[k]["data_offsets"][0]):
    e = header[name]
    lo, hi = e["data_offsets"]
    base = name.split("optimizer.")[-1][2:] if name.startswith("optimizer.") else name
    check(e["dtype"] == "F32", f"{name} dtype {e['dtype']}")
    check(e["shape"] == expect.get(base), f"{name} shape {e['shape']}")
    check(lo == end and hi - lo == 4 * math.prod(e["shape"]), f"{name} offsets {lo},{hi}")
    end = hi
    w[name] = torch.frombuffer(bytearray(data[lo:hi]), dtype=torch.float32).view(e["shape"])
check(end == len(data), f"data is {len(data)} bytes, the tensors end at {end}")
if fail:
    print("FAIL:", *fail, sep="\n  ")
    sys.exit(1)
check(torch.all(w["wte.weight"][V:] == 0).item(), "the padding rows of wte are not zero")
check(torch.all(w["optimizer.v.wte.weight"][:V] >= 0).item(), "Adam's v has negative entries")

# The forward, llm.c's GPT-2, from the file's tensors only.
tok = torch.tensor(list(open(text, "rb").read()[:T + 1]), dtype=torch.long)
x = w["wte.weight"][tok[:T]] + w["wpe.weight"][:T]
hs = C // NH
mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
for l in range(L):
    g = lambda k: w["blocks." + k][l]
    h = F.layer_norm(x, (C,), g("ln_1.weight"), g("ln_1.bias"), 1e-5)
    q, k, v = F.linear(h, g("attn.qkv.weight"), g("attn.qkv.bias")).split(C, dim=1)
    q, k, v = (z.view(T, NH, hs).transpose(0, 1) for z in (q, k, v))
    att = (q @ k.transpose(1, 2) / math.sqrt(hs)).masked_fill(~mask, float("-inf")).softmax(-1)
    y = (att @ v).transpose(0, 1).reshape(T, C)
    x = x + F.linear(y, g("attn.proj.weight"), g("attn.proj.bias"))
    h = F.layer_norm(x, (C,), g("ln_2.weight"), g("ln_2.bias"), 1e-5)
    h = F.gelu(F.linear(h, g("mlp.fc.weight"), g("mlp.fc.bias")), approximate="tanh")
    x = x + F.linear(h, g("mlp.proj.weight"), g("mlp.proj.bias"))
x = F.layer_norm(x, (C,), w["ln_f.weight"], w["ln_f.bias"], 1e-5)
logits = (x @ w["wte.weight"].t())[:, :V]
loss = F.cross_entropy(logits, tok[1:]).item()
print(f"torch forward of {path}: loss {loss:.5f}; the trainer printed {want:.4f}")
if abs(loss - want) > 2e-4:
    print("FAIL: the losses differ")
    sys.exit(1)
print("ok: %d tensors, names/dtypes/shapes/offsets as written, forward agrees" % len(header))
PY
