#!/bin/sh
# bench_gpu.sh: the trainer against PyTorch on one GPU, GPT-2 small's shape on
# both sides: the trainer's gpt2-124m (12 layers, width 768, 12 heads,
# context 1024) on an llm.c .bin (vocabulary 50257, padded to 50304), bf16,
# fused kernels and AdamW, with cuDNN's attention and with its own kernel;
# bench/bench_gpu_torch.py's model of the same shape with bf16 autocast,
# fused AdamW and scaled_dot_product_attention, eager and torch.compile.
# Each trainer run takes the largest batch that fits (tried from 64 down);
# PyTorch runs at the batch of the trainer's cuDNN run (smaller if it does
# not fit). Prints one line per run: batch, tokens/s and ms/step (the median
# of the steps after the first 5), MFU (6N + 12 L C T FLOPs per token
# against the GPU's dense bf16 peak, bench_gpu_torch.py's table).
#
# Data: --data FILE.bin, an llm.c token file (GPT-2 tokens). Without one, a
# .bin is made of text's bytes (the fortunes, else the trainer's sources) as
# token ids: the GPT-2 vocabulary's shape (the embedding and LM head of
# 50304 rows) with a text's bytes, not GPT-2's tokenization; speed does not
# depend on which tokens come. GPT-2 tokens need tiktoken's BPE file, which
# it downloads: on a machine with the network, llm.c's
# dev/data/tinyshakespeare.py writes tiny_shakespeare_val.bin; carry that.
#
# usage, from the source root: bench/bench_gpu.sh [BUILD_DIR] [--data FILE.bin] [--steps N] [--batch B]
#                                                  [--attention "cudnn own"]
#   BUILD_DIR  the build tree with trainer/trainer (default _build-gpu)
#   --steps N  steps per run (default 25; the first 5 are not timed)
#   --batch B  one batch for every run instead of the search
#   --attention MODES  the trainer's attention kernels to run (default: cudnn own)
set -u
cd "$(dirname "$0")/.." || exit 1
SRC=$(pwd)
# Python with the machine's own libraries when device_check.sh carried some (GT_PYTHON)
PY=${GT_PYTHON:-python3}
BUILD=_build-gpu
case ${1:-} in --*|"") ;; *) BUILD=$1; shift ;; esac
DATA="" STEPS=25 BATCH="" MODES="cudnn own"
while [ $# -gt 0 ]; do
    case $1 in
    --data) DATA=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    --batch) BATCH=$2; shift 2 ;;
    --attention) MODES=$2; shift 2 ;;
    *) echo "bench_gpu.sh: unknown argument '$1' (see the header of bench/bench_gpu.sh)"; exit 2 ;;
    esac
done
case $BUILD in /*) ;; *) BUILD=$SRC/$BUILD ;; esac
TRAINER=$BUILD/trainer/trainer
[ -x "$TRAINER" ] || { echo "bench_gpu.sh: no trainer at $TRAINER"; exit 1; }
[ "$STEPS" -gt 5 ] 2>/dev/null || { echo "bench_gpu.sh: --steps must be more than 5"; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench_gpu.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
. "$SRC/tests/gpu/cudnn_path.sh"
cudnn_on_path

if [ -z "$DATA" ]; then
    TEXT=/usr/share/games/fortunes
    [ -d "$TEXT" ] || TEXT=$SRC/trainer
    DATA=$TMP/text_bytes.bin
    $PY - "$TEXT" "$DATA" <<'EOF' || exit 1
import array, os, struct, sys
src, out = sys.argv[1], sys.argv[2]
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs) if os.path.isdir(src) else [src]
data = b"".join(open(f, "rb").read() for f in files if os.path.isfile(f))
while len(data) < 4 << 20:  # enough windows of 1025 tokens for the largest batch
    data += data
with open(out, "wb") as f:  # llm.c's header: magic, version 1 (uint16 tokens), count; 256 int32 in all
    f.write(struct.pack("<256i", 20240520, 1, len(data), *([0] * 253)))
    array.array("H", list(data)).tofile(f)  # each byte one uint16 token; little-endian hosts, as llm.c
print(f"data: {out}: {len(data)} tokens, the bytes of {src} as GPT-2 token ids")
EOF
fi

set -- $($PY "$SRC/bench/bench_gpu_torch.py" --print-peak 2>/dev/null) 0 unknown
PEAK=$1; shift
GPU=$(echo "$*" | sed 's/ *0 unknown$//')
echo "== bench_gpu $(date -u +%Y-%m-%dT%H:%M:%SZ): ${GPU:-no GPU seen by PyTorch}; gpt2-124m shape, bf16, data $DATA"

COMMON="--backend cuda --model gpt2-124m --amp bf16 --fuse on --pin-memory on --workers 2 --lr 6e-4 --data $DATA
    --val-fraction 0 --eval-every 0 --log-every 1"
# trainer_run NAME BATCH STEPS FLAGS...: exit status, output in $TMP/NAME.out
trainer_run() {
    run_name=$1 run_batch=$2 run_steps=$3; shift 3 # (sh has no locals: names the callers do not use)
    "$TRAINER" $COMMON --batch "$run_batch" --steps "$run_steps" "$@" >"$TMP/$run_name.out" 2>&1 </dev/null
}
# largest_batch NAME FLAGS...: the largest batch of 64 48 32 24 16 12 8 4 2 1 that runs 2 steps
largest_batch() { # (run in $(...): its variables stay there)
    probe=$1.probe; shift
    for b in 64 48 32 24 16 12 8 4 2 1; do
        trainer_run "$probe" "$b" 2 "$@" && { echo "$b"; return 0; }
        grep -q "out of memory" "$TMP/$probe.out" || { cat "$TMP/$probe.out" >&2; return 1; }
    done
    return 1
}
# report NAME LABEL: the median step time of the timed steps, tok/s and MFU
report() {
    out=$TMP/$1.out
    params=$(sed -n 's/.*context [0-9]*, vocabulary [0-9]* (padded to [0-9]*); \([0-9]*\) parameters.*/\1/p' "$out")
    batch=$(sed -n 's/.*batch \([0-9]*\) x \([0-9]*\).*/\1 \2/p' "$out" | head -1)
    sed -n 's/^step \([0-9]*\)\/[0-9]* loss .* \([0-9.]*\) ms\/step.*/\1 \2/p' "$out" |
        awk -v skip=5 '$1 > skip { print $2 }' | sort -n | awk -v label="$2" -v params="$params" -v bt="$batch" -v peak="$PEAK" '
        { t[NR] = $1 }
        END {
            if (NR == 0) { printf "%-36s no timed steps\n", label; exit }
            ms = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
            split(bt, x, " "); tokens = x[1] * x[2]
            flops = (6 * params + 12 * 12 * 768 * x[2]) * tokens / (ms / 1000)
            mfu = peak > 0 ? sprintf("MFU %.1f%%", 100 * flops / (peak * 1e12)) : sprintf("%.1f TFLOP/s", flops / 1e12)
            printf "%-36s batch %-3d %8.0f tok/s %8.1f ms/step  %s\n", label, x[1], tokens / (ms / 1000), ms, mfu }'
    grep -E "^trainer: [0-9]+ steps in" "$out" | sed 's/^/    /'
}

# trainer rows: cuDNN's attention, the own kernel, and with a CUDA graph where the trainer has one
for mode in $MODES; do
    b=$BATCH
    [ -n "$b" ] || b=$(largest_batch "$mode" --attention "$mode") ||
        { echo "trainer --attention $mode: no batch runs"; continue; }
    [ "$mode" = cudnn ] && BATCH_CUDNN=$b
    if trainer_run "$mode" "$b" "$STEPS" --attention "$mode"; then report "$mode" "trainer --attention $mode"
    else echo "trainer --attention $mode failed:"; tail -5 "$TMP/$mode.out"; fi
done
if "$TRAINER" --help | grep -q -- "--cuda-graph"; then
    b=${BATCH:-${BATCH_CUDNN:-8}}
    if trainer_run graph "$b" "$STEPS" --attention cudnn --cuda-graph on; then
        report graph "trainer --attention cudnn --cuda-graph on"
    else echo "trainer --cuda-graph on failed:"; tail -5 "$TMP/graph.out"; fi
fi

# PyTorch at the trainer's cuDNN batch, halved until it fits
b=${BATCH:-${BATCH_CUDNN:-16}}
while [ "$b" -ge 1 ]; do
    if $PY "$SRC/bench/bench_gpu_torch.py" --batch "$b" --steps $((STEPS - 5)) --warmup 5 --lr 6e-4 --compile both \
        --data "$DATA" >"$TMP/torch.out" 2>&1; then
        grep -E "^torch" "$TMP/torch.out"
        break
    fi
    grep -q -i "out of memory" "$TMP/torch.out" ||
        { echo "bench_gpu_torch.py failed:"; tail -15 "$TMP/torch.out"; break; }
    echo "torch: batch $b does not fit; trying $((b / 2))"
    b=$((b / 2))
done
