#!/bin/sh
# trainer_cuda.sh: the trainer on --backend cuda against --backend cpu, the
# same model code on both: the losses of the first steps must agree (fp32
# closely; bf16/fp16 within their precision, both backends store the same
# low-precision formats), for each switch the two backends share (amp, fuse,
# checkpointing, accumulation, optimizers, clipping, EMA) and for the CUDA
# switches against the plain CPU run (pinned memory, expandable segments,
# sync after every op, autotuning). Then the errors a user meets: a device
# out of range and out of memory (the allocator's statistics in the message).
# Exits 77 without a usable GPU or without the CUDA backend.
# Paths: GT_TOP_BUILDDIR/GT_TOP_SRCDIR (make check sets them), else the
# build tree given as $1 (device_check.sh passes it).
set -u
BUILD=${1:-${GT_TOP_BUILDDIR:-}}
SRC=${GT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
TRAINER=$BUILD/trainer/trainer
[ -x "$TRAINER" ] || { echo "skip: no trainer in '$BUILD'"; exit 77; }
[ -x "$BUILD/tests/gpu/test_cuda_ops" ] || { echo "skip: built without the CUDA backend"; exit 77; }
# the fortunes when installed, else the trainer's own sources (any text will do)
DATA=/usr/share/games/fortunes
[ -d "$DATA" ] || DATA=$SRC/trainer
TMP=$(mktemp -d "${TMPDIR:-/tmp}/trainer_cuda.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

probe=$("$TRAINER" --backend cuda --steps 0 --data "$DATA" 2>&1)
case $probe in
*"no NVIDIA driver"*|*"no CUDA device"*|*"built without the CUDA toolkit"*)
    echo "skip: $probe"; exit 77 ;;
esac

STEPS=6
COMMON="--steps $STEPS --data $DATA --eval-every 0 --log-every 1 --workers 0 --threads 2"
fails=0

# losses NAME ARGS...: the per-step losses of one run, one per line, in $TMP/NAME
losses() {
    run=$1; shift # (sh has no locals: not $name, which the callers use)
    if ! "$TRAINER" $COMMON "$@" >"$TMP/$run.out" 2>&1 </dev/null; then
        echo "FAIL: trainer $* exited non-zero:"; cat "$TMP/$run.out"; fails=$((fails + 1)); return 1
    fi
    sed -n 's/^step [0-9]*\/[0-9]* loss \([-0-9.naif]*\).*/\1/p' "$TMP/$run.out" >"$TMP/$run.loss"
    [ "$(wc -l <"$TMP/$run.loss")" -eq "$STEPS" ] || {
        echo "FAIL: $run: expected $STEPS loss lines"; cat "$TMP/$run.out"; fails=$((fails + 1)); return 1; }
}

# compare WHAT REF GOT RTOL: every step's loss within RTOL (relative)
compare() {
    if paste "$TMP/$2.loss" "$TMP/$3.loss" | awk -v tol="$4" -v what="$1" -v steps="$STEPS" '
        NF != 2 { bad++; next }
        { d = $1 - $2; if (d < 0) d = -d; r = d / ($1 > 0 ? $1 : 1); if (r > worst) worst = r
          if (!(r <= tol)) bad++ }
        END { if (NR != steps) bad++
              if (bad) { printf "FAIL %-40s %d step(s) differ by more than %g (worst %.2e)\n", what, bad, tol, worst; exit 1 }
              printf "ok   %-40s worst relative difference %.2e (tolerance %g)\n", what, worst, tol }'; then :
    else
        echo "  cpu: $(tr '\n' ' ' <"$TMP/$2.loss")"; echo "  gpu: $(tr '\n' ' ' <"$TMP/$3.loss")"; fails=$((fails + 1))
    fi
}

# switches both backends have: the same flags on each
while read -r tol flags; do
    name=$(echo "$flags" | tr -c 'a-z0-9\n' '_')
    losses "cpu$name" --backend cpu $flags && losses "gpu$name" --backend cuda $flags &&
        compare "${flags:-fp32}" "cpu$name" "gpu$name" "$tol"
done <<EOF
2e-3
3e-2 --amp bf16
1e-2 --amp fp16
2e-3 --fuse on
3e-2 --fuse on --amp bf16
2e-3 --checkpoint blocks
2e-3 --checkpoint selective
2e-3 --accum 2
2e-3 --optimizer sgd
2e-3 --clip 0.5 --lr-schedule cosine --warmup 2
2e-3 --ema 0.9
3e-2 --amp bf16 --fuse on --checkpoint selective --accum 2
EOF

# CUDA-only switches change how the GPU runs, not what it computes
losses cpu_ref --backend cpu
while read -r tol flags; do
    name=$(echo "$flags" | tr -c 'a-z0-9\n' '_')
    losses "gpu$name" --backend cuda $flags && compare "$flags" cpu_ref "gpu$name" "$tol"
done <<EOF
2e-3 --pin-memory on
2e-3 --pin-memory on --workers 2
2e-3 --expandable-segments on
2e-3 --sync-every-op on
2e-3 --autotune on
2e-2 --tf32 on
EOF

# errors by name
out=$("$TRAINER" --backend cuda --device 1023 --steps 1 --data "$DATA" 2>&1)
if [ $? -ne 0 ] && echo "$out" | grep -q "device(s)"; then echo "ok   --device 1023 is refused: $out"
else echo "FAIL: --device 1023: $out"; fails=$((fails + 1)); fi
for seg in off on; do
    out=$("$TRAINER" --backend cuda --expandable-segments $seg --mem-limit 3M --steps 1 --data "$DATA" 2>&1)
    if [ $? -ne 0 ] && echo "$out" | grep -q "out of memory"; then echo "ok   --mem-limit 3M (expandable $seg): $(echo "$out" | grep "out of memory")"
    else echo "FAIL: --mem-limit 3M did not fail with an out-of-memory message: $out"; fails=$((fails + 1)); fi
done
# a real device OOM: a model far larger than any GPU
out=$("$TRAINER" --backend cuda --layers 1024 --width 16384 --heads 128 --steps 1 --data "$DATA" 2>&1)
if [ $? -ne 0 ] && echo "$out" | grep -q "out of memory"; then echo "ok   a model larger than the GPU: $(echo "$out" | grep "out of memory")"
else echo "FAIL: a model larger than the GPU: $out"; fails=$((fails + 1)); fi

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all good"
