#!/bin/sh
# trainer_cnn_torch.sh: the CNNs against PyTorch itself (Debian's
# python3-torch), from the same parameters: the trainer's initial state,
# saved with --steps 0 --save, is loaded into PyTorch's nets
# (bench/bench_cnn_torch.py, the ones the speed comparison runs) by the
# flat layout model_cnn.h promises. With 64 training images and --batch 64
# every step sees the whole set, so its loss and BatchNorm statistics do
# not depend on the shuffle (and each step ends an epoch): cnn-resnet's losses over 4 AdamW steps
# (forward, backward, the update with decay on the weights only, BatchNorm's
# running averages) and its test loss after each (eval mode) must be
# PyTorch's, in fp32 and under --amp bf16 against torch.autocast("cpu");
# cnn-guide (dropout: no training comparison) is compared in eval mode.
# Skips (77) when /usr/bin/python3 has no torch.
. "$GT_TOP_SRCDIR/tests/integration/trainer_cnn_common.sh"
py=/usr/bin/python3
"$py" -c 'import torch' 2>/dev/null || { echo "SKIP: $py has no torch (apt-get install python3-torch)"; exit 77; }
a="--data $work/fm --train-images 64 --test-images 64 --batch 64 --seed 4 --log-every 1 --lr-schedule constant"

# run NAME ARGS...: the trainer's step losses, then its test losses, one per line, into $work/NAME
run() {
    name=$1; shift
    # shellcheck disable=SC2086
    timeout 300 "$tr" $a "$@" >"$work/$name.log" 2>&1 || { cat "$work/$name.log"; echo "FAIL: trainer $*"; fails=1; }
    { sed -n 's/^epoch [0-9]* step [0-9]*\/[0-9]* loss \([0-9.]*\) .*/\1/p' "$work/$name.log"
      sed -n 's/^epoch [0-9]* train loss .* test loss \([0-9.]*\) .*/\1/p' "$work/$name.log"; } >"$work/$name"
}
run resnet-init --model cnn-resnet --steps 0 --save "$work/resnet.st"
run guide-init --model cnn-guide --steps 0 --save "$work/guide.st"
run resnet --model cnn-resnet --epochs 4
run resnet-bf16 --model cnn-resnet --epochs 4 --amp bf16
run guide --model cnn-guide --steps 1 --lr 1e-9 # the update moves nothing the printed digits show

"$py" - "$GT_TOP_SRCDIR/bench" "$work" <<'PY' || fails=1
import gzip, json, struct, sys

import torch
import torch.nn.functional as F

sys.path.insert(0, sys.argv[1])
from bench_cnn_torch import Guide, ResNet  # the nets bench_cnn.sh compares against

work = sys.argv[2]
torch.set_num_threads(2)
bad = []

def idx(name, images):
    raw = gzip.open(f"{work}/fm/{name}", "rb").read()
    if images:
        n, h, w = struct.unpack(">III", raw[4:16])
        x = torch.frombuffer(bytearray(raw[16:]), dtype=torch.uint8).float().reshape(n, 1, h, w)
        return (x * (1.0 / 255.0) - 0.2860) / 0.3530  # run_cnn.c's normalization
    return torch.frombuffer(bytearray(raw[8:]), dtype=torch.uint8).long()

xtr, ytr = idx("train-images-idx3-ubyte.gz", True)[:64], idx("train-labels-idx1-ubyte.gz", False)[:64]
xte, yte = idx("t10k-images-idx3-ubyte.gz", True)[:64], idx("t10k-labels-idx1-ubyte.gz", False)[:64]

def load(model, path):
    """The trainer's flat parameters into model: every conv and linear weight
    in layer order, then per layer its conv bias, BatchNorm's weight and bias,
    its linear bias; the running statistics mean then var per BatchNorm."""
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    h = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    def tensor(name):
        lo, hi = h[name]["data_offsets"]
        if hi == lo:  # cnn-guide has no BatchNorm
            return torch.zeros(0)
        return torch.frombuffer(bytearray(data[lo:hi]), dtype=torch.float32)
    flat, stats = tensor("params"), tensor("bn_running_stats")
    layers = [m for m in model.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.BatchNorm2d, torch.nn.Linear))]
    order = [m.weight for m in layers if not isinstance(m, torch.nn.BatchNorm2d)]
    for m in layers:
        order += [m.weight, m.bias] if isinstance(m, torch.nn.BatchNorm2d) else [m.bias]
    if sum(p.numel() for p in order) != flat.numel():
        sys.exit(f"{path}: {flat.numel()} parameters, PyTorch's net has {sum(p.numel() for p in order)}")
    at = 0
    with torch.no_grad():
        for p in order:
            p.copy_(flat[at:at + p.numel()].reshape(p.shape))
            at += p.numel()
        at = 0
        for m in layers:
            if isinstance(m, torch.nn.BatchNorm2d):
                c = m.num_features
                m.running_mean.copy_(stats[at:at + c])
                m.running_var.copy_(stats[at + c:at + 2 * c])
                at += 2 * c
    return model

def compare(name, got, want, tol):
    print(f"{name}: trainer {' '.join(f'{v:.4f}' for v in got)}")
    print(f"{name}: PyTorch {' '.join(f'{v:.4f}' for v in want)}")
    if len(got) != len(want) or any(abs(g - w) > tol for g, w in zip(got, want)):
        bad.append(name)

def trainer_losses(name):
    return [float(v) for v in open(f"{work}/{name}").read().split()]

def eval_loss(model, amp):
    model.eval()
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp):
        out = model(xte)
    model.train()
    return F.cross_entropy(out.float(), yte).item()

for name, amp, tol in (("resnet", False, 3e-4), ("resnet-bf16", True, 5e-3)):
    torch.manual_seed(0)
    model = load(ResNet(), f"{work}/resnet.st")
    decay = [m.weight for m in model.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    ids = {id(p) for p in decay}
    rest = [p for p in model.parameters() if id(p) not in ids]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 1e-4}, {"params": rest, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    model.train()
    steps, tests = [], []
    for _ in range(4):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp):
            out = model(xtr)
        loss = F.cross_entropy(out.float(), ytr)
        loss.backward()
        opt.step()
        steps.append(loss.item())
        tests.append(eval_loss(model, amp))
    compare(name, trainer_losses(name), steps + tests, tol)

guide = load(Guide(), f"{work}/guide.st")
got = trainer_losses("guide")
compare("guide (eval)", got[1:], [eval_loss(guide, False)], 3e-4)
if bad:
    sys.exit("FAIL: the trainer's losses differ from PyTorch's: " + ", ".join(bad))
PY
exit $fails
