#!/bin/sh
# trainer_attention.sh: --attention auto|cudnn|own on the trainer. Without a
# GPU (any machine with the CUDA backend built): the refusals, by name, that
# come before the device opens. With a GPU: cuDNN's fused attention against
# the own kernel, the per-step losses of the same runs (bf16 and fp16, with
# fusion and both checkpointing modes, whose recomputation reruns the
# forward), the softmax statistics cuDNN keeps instead of the probabilities
# (the peak of activation memory drops), and auto's choice per dtype.
# Exits 77 without the CUDA backend, and without a GPU or cuDNN once the
# refusals, checked everywhere, passed (1 if one failed).
set -u
BUILD=${1:-${GT_TOP_BUILDDIR:-}}
SRC=${GT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
TRAINER=$BUILD/trainer/trainer
[ -x "$TRAINER" ] || { echo "skip: no trainer in '$BUILD'"; exit 77; }
DATA=/usr/share/games/fortunes
[ -d "$DATA" ] || DATA=$SRC/trainer
TMP=$(mktemp -d "${TMPDIR:-/tmp}/trainer_attention.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fails=0

probe=$("$TRAINER" --backend cuda --steps 0 --data "$DATA" 2>&1)
case $probe in *"built without the CUDA toolkit"*) echo "skip: $probe"; exit 77 ;; esac

# refused ERROR_TEXT ARGS...: the trainer exits non-zero naming the problem
refused() {
    want=$1; shift
    out=$("$TRAINER" --steps 1 --data "$DATA" "$@" 2>&1 </dev/null); rc=$?
    if [ $rc -ne 0 ] && echo "$out" | grep -q -- "$want"; then echo "ok   refused: $* -> $(echo "$out" | tail -1)"
    else echo "FAIL: trainer $* should be refused with '$want': $out"; fails=$((fails + 1)); fi
}
refused "switch of --backend cuda" --attention own
refused "switch of --backend cuda" --backend cpu --attention cudnn --amp bf16
refused "expected auto, cudnn or own" --backend cuda --attention flash
refused "has no fp32" --backend cuda --attention cudnn
refused "has no fp32" --backend cuda --attention cudnn --amp off

case $probe in
*"no NVIDIA driver"*|*"no CUDA device"*)
    [ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
    echo "skip: the GPU part: $probe"; exit 77 ;;
esac
case $("$TRAINER" --backend cuda --attention cudnn --amp bf16 --steps 0 --data "$DATA" 2>&1) in
*"does not load"*|*"or newer is needed"*)
    [ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
    echo "skip: the GPU part: no usable cuDNN here"; exit 77 ;;
esac

STEPS=6
COMMON="--backend cuda --steps $STEPS --data $DATA --seq 64 --eval-every 3 --eval-batches 2 --log-every 1 --workers 0"

# run NAME ARGS...: per-step losses in $TMP/NAME.loss, the whole output in $TMP/NAME.out
run() {
    run_name=$1; shift # (sh has no locals: not $name, which the callers use)
    # shellcheck disable=SC2086 # COMMON is a list of arguments
    if ! "$TRAINER" $COMMON "$@" >"$TMP/$run_name.out" 2>&1 </dev/null; then
        echo "FAIL: trainer $* exited non-zero:"; cat "$TMP/$run_name.out"; fails=$((fails + 1)); return 1
    fi
    sed -n 's/^step [0-9]*\/[0-9]* loss \([-0-9.naif]*\).*/\1/p' "$TMP/$run_name.out" >"$TMP/$run_name.loss"
    [ "$(wc -l <"$TMP/$run_name.loss")" -eq "$STEPS" ] || {
        echo "FAIL: $run_name: expected $STEPS loss lines"; cat "$TMP/$run_name.out"; fails=$((fails + 1)); return 1; }
}

# close WHAT A B RTOL: every step's loss within RTOL (relative)
close() {
    if paste "$TMP/$2.loss" "$TMP/$3.loss" | awk -v tol="$4" -v what="$1" '
        { d = $1 - $2; if (d < 0) d = -d; r = d / ($1 > 0 ? $1 : 1); if (r > worst) worst = r; if (!(r <= tol)) bad++ }
        END { if (bad || NR == 0) { printf "FAIL %-50s %d step(s) differ by more than %g (worst %.2e)\n", what, bad, tol, worst; exit 1 }
              printf "ok   %-50s worst relative difference %.2e (tolerance %g)\n", what, worst, tol }'; then :
    else
        echo "  own:   $(tr '\n' ' ' <"$TMP/$2.loss")"; echo "  cudnn: $(tr '\n' ' ' <"$TMP/$3.loss")"; fails=$((fails + 1))
    fi
}

peak() { sed -n 's/.*peak activations \([0-9.]*\) MiB.*/\1/p' "$TMP/$1.out"; }

while read -r tol flags; do
    name=$(echo "$flags" | tr -c 'a-z0-9\n' '_')
    # shellcheck disable=SC2086 # flags is a list of arguments
    run "own$name" $flags --attention own && run "cudnn$name" $flags --attention cudnn &&
        close "cudnn vs own: $flags" "own$name" "cudnn$name" "$tol"
done <<EOF
3e-2 --amp bf16
1e-2 --amp fp16
3e-2 --amp bf16 --fuse on
3e-2 --amp bf16 --checkpoint selective
3e-2 --amp bf16 --checkpoint blocks
3e-2 --amp bf16 --fuse on --accum 2 --checkpoint selective
EOF

# the statistics instead of the probabilities: less activation memory
own=$(peak own__amp_bf16) cudnn=$(peak cudnn__amp_bf16)
if [ -n "$own" ] && [ -n "$cudnn" ] && awk -v a="$cudnn" -v b="$own" 'BEGIN { exit !(a < b) }'; then
    echo "ok   peak activations: cudnn $cudnn MiB < own $own MiB"
else echo "FAIL: peak activations: cudnn '$cudnn' MiB, own '$own' MiB"; fails=$((fails + 1)); fi
if grep -q "attention: cuDNN" "$TMP/cudnn__amp_bf16.out"; then echo "ok   the banner names cuDNN's attention"
else echo "FAIL: no 'attention: cuDNN' in the banner:"; head -5 "$TMP/cudnn__amp_bf16.out"; fails=$((fails + 1)); fi

# auto: cuDNN for bf16 (the same statistics-sized activations), the own kernel for fp32
if run auto_bf16 --amp bf16; then # (run counts its own failure)
    if [ "$(peak auto_bf16)" = "$cudnn" ]; then echo "ok   auto takes cuDNN for bf16"
    else echo "FAIL: auto with bf16: peak activations $(peak auto_bf16) MiB, cudnn's $cudnn"; fails=$((fails + 1)); fi
fi
run own_fp32 --attention own && run auto_fp32 && close "auto vs own in fp32 (both the own kernel)" own_fp32 auto_fp32 0

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all good"
