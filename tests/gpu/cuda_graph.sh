#!/bin/sh
# cuda_graph.sh: --cuda-graph, the training step captured once into a CUDA
# graph and replayed. First what is refused by name (no GPU needed); then,
# on a GPU, each configuration trained with the graph off and on: the step's
# work and its kernels are the same, so the printed losses, loss scales and
# gradient norms of every step and the checkpoints at the end (weights,
# optimizer state, the loss scaler's state) must be identical, byte for
# byte: fp16 with a dynamic loss scale that starts far too high (the scaler
# skips steps and backs off), bf16 with clipping and a cosine schedule,
# accumulation, checkpointing, fusion, SGD, the EMA, evaluation between
# replays, loader workers with pinned memory, expandable segments, and a
# resumed run against the uninterrupted one. Then what the graph saves on a
# launch-bound model (gpt-tiny): the step times, printed, never asserted.
# Exits 77 without a usable GPU or without the CUDA backend.
# Paths: GT_TOP_BUILDDIR/GT_TOP_SRCDIR (make check sets them), else the
# build tree given as $1 (device_check.sh passes it).
set -u
BUILD=${1:-${GT_TOP_BUILDDIR:-}}
SRC=${GT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
TRAINER=$BUILD/trainer/trainer
[ -x "$TRAINER" ] || { echo "skip: no trainer in '$BUILD'"; exit 77; }
DATA=/usr/share/games/fortunes
[ -d "$DATA" ] || DATA=$SRC/trainer # any text will do
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuda_graph.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fails=0

# refused NAME EXPECTED ARGS...: exit status 2 and EXPECTED in the message
refused() {
    what=$1 expected=$2; shift 2
    out=$("$TRAINER" --data "$DATA" --steps 1 "$@" 2>&1 </dev/null); rc=$?
    if [ $rc -eq 2 ] && echo "$out" | grep -q -- "$expected"; then echo "ok   refused: $what: $out"
    else echo "FAIL: $what: exit $rc, expected 2 and '$expected': $out"; fails=$((fails + 1)); fi
}
refused "--cuda-graph on the cpu backend" "needs --backend cuda" --cuda-graph on
refused "--cuda-graph with --sync-every-op" "with --sync-every-op" --backend cuda --cuda-graph on --sync-every-op on
refused "--cuda-graph yes" "expected on or off" --backend cuda --cuda-graph yes
"$TRAINER" --help | grep -q -- "--cuda-graph on|off" || { echo "FAIL: --help does not show --cuda-graph"; fails=$((fails + 1)); }

probe=$("$TRAINER" --backend cuda --steps 0 --data "$DATA" 2>&1)
case $probe in
*"no NVIDIA driver"*|*"no CUDA device"*|*"built without the CUDA toolkit"*|*"needs a GPU"*)
    [ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
    echo "skip: $probe"; exit 77 ;;
esac

STEPS=20
COMMON="--backend cuda --steps $STEPS --data $DATA --log-every 1 --workers 0"
# the own attention kernel where cuDNN's is the default: two runs of it are the same bits
"$TRAINER" --help | grep -q -- "--attention" && COMMON="$COMMON --attention own"

# train NAME ARGS...: one run; its per-step lines (loss, lr, scale, norm) in $TMP/NAME.steps
train() {
    run=$1; shift
    if ! "$TRAINER" $COMMON "$@" >"$TMP/$run.out" 2>&1 </dev/null; then
        echo "FAIL: trainer $* exited non-zero:"; tail -20 "$TMP/$run.out"; fails=$((fails + 1)); return 1
    fi
    # the step lines without the timings; validation losses as they are
    sed -n -e 's/^\(step [0-9]*\/[0-9]* loss [^ ]* lr [^ ]*\( scale [^ ]*\)\{0,1\}\( (skipped[^)]*)\)\{0,1\}\( norm [^ ]*\)\{0,1\}\).*/\1/p' \
        -e '/val loss/p' -e '/^trainer: loss scale/p' "$TMP/$run.out" >"$TMP/$run.steps"
}

# same WHAT ARGS...: the graph off and on must print the same steps and save the same checkpoint
same() {
    what=$1; shift
    name=$(echo "$what" | tr -c 'a-z0-9\n' '_')
    train "$name.off" --cuda-graph off --save "$TMP/$name.off.safetensors" "$@" &&
        train "$name.on" --cuda-graph on --save "$TMP/$name.on.safetensors" "$@" || return 1
    n=$(grep -c '^step [0-9]*/' "$TMP/$name.on.steps")
    replays=$(sed -n 's/^trainer: cuda graph: .* \([0-9][0-9]*\) replay(s)$/\1/p' "$TMP/$name.on.out")
    if [ "$n" -ne "$STEPS" ]; then
        echo "FAIL $what: $n step lines, expected $STEPS"; tail -5 "$TMP/$name.on.out"; fails=$((fails + 1))
    elif [ -z "$replays" ] || [ "$replays" -lt $((STEPS - 3)) ]; then
        echo "FAIL $what: the step was not captured and replayed:"; grep "cuda graph" "$TMP/$name.on.out"
        fails=$((fails + 1))
    elif ! cmp -s "$TMP/$name.off.steps" "$TMP/$name.on.steps"; then
        echo "FAIL $what: the graph changes what is printed:"; diff "$TMP/$name.off.steps" "$TMP/$name.on.steps" | head
        fails=$((fails + 1))
    elif ! cmp -s "$TMP/$name.off.safetensors" "$TMP/$name.on.safetensors"; then
        echo "FAIL $what: the checkpoints differ ($(cmp "$TMP/$name.off.safetensors" "$TMP/$name.on.safetensors"))"
        fails=$((fails + 1))
    else
        printf 'ok   %-58s %d replays, same steps and checkpoint; %s\n' "$what" "$replays" \
            "$(grep '^trainer: loss scale' "$TMP/$name.on.out" || tail -1 "$TMP/$name.on.steps")"
    fi
}

# fp16: 2^30 overflows the first backwards, the scaler skips them and halves the scale
same "fp16, dynamic scale from 2^30, clip, cosine" --amp fp16 --init-scale 1073741824 --clip 1 \
    --lr-schedule cosine --warmup 2 --eval-every 0
if ! grep -q "[1-9][0-9]* step(s) skipped" "$TMP/fp16__dynamic_scale_from_2_30__clip__cosine.on.out"; then
    echo "FAIL: fp16 from 2^30: no step was skipped, the test does not test the scaler:"
    grep "loss scale" "$TMP/fp16__dynamic_scale_from_2_30__clip__cosine.on.out"; fails=$((fails + 1))
fi
same "bf16, clip 0.5, cosine" --amp bf16 --clip 0.5 --lr-schedule cosine --warmup 2 --eval-every 0
same "fp32, fused, accum 2, ema, eval between replays" --fuse on --accum 2 --ema 0.9 --eval-every 5 --eval-batches 2
same "bf16, fused, selective checkpointing, accum 2" --amp bf16 --fuse on --checkpoint selective --accum 2 \
    --eval-every 0
same "fp16, fixed scale 1024, blocks checkpointing, onecycle" --amp fp16 --loss-scale 1024 --checkpoint blocks \
    --lr-schedule onecycle --eval-every 0
same "sgd, clip, unfused" --optimizer sgd --clip 0.5 --eval-every 0
same "pinned memory, 2 loader workers" --pin-memory on --workers 2 --amp bf16 --fuse on --eval-every 0
same "expandable segments" --expandable-segments on --amp bf16 --eval-every 0

# cuDNN's fused attention captured too (where this trainer has it): its backward may add in any
# order, so the losses are compared within bf16's precision rather than bit for bit
if "$TRAINER" --help | grep -q -- "--attention"; then
    A="--amp bf16 --fuse on --eval-every 0"
    if train cudnn.off $A --attention auto --cuda-graph off && train cudnn.on $A --attention auto --cuda-graph on; then
        if grep -q "attention runs on the own kernel" "$TMP/cudnn.on.out"; then
            echo "ok   (cuDNN attention not available here: $(grep -m1 'own kernel' "$TMP/cudnn.on.out"))"
        elif paste "$TMP/cudnn.off.steps" "$TMP/cudnn.on.steps" | awk -v steps="$STEPS" '
                $1 == "step" && $3 == "loss" { n++; d = $4 - $(NF / 2 + 4); if (d < 0) d = -d
                                               if (!(d <= 2e-2 * $4)) bad++ }
                END { exit !(n == steps && !bad) }' &&
             grep -q "replay(s)" "$TMP/cudnn.on.out"; then
            echo "ok   cuDNN attention (--attention auto, bf16) captured: losses within 2e-2 of the eager run"
        else
            echo "FAIL: cuDNN attention with --cuda-graph:"; paste "$TMP/cudnn.off.steps" "$TMP/cudnn.on.steps" | head
            grep "cuda graph" "$TMP/cudnn.on.out"; fails=$((fails + 1))
        fi
    fi
fi

# a resumed graph run goes on as the uninterrupted one (the scaler's state is in the checkpoint)
R="--amp fp16 --init-scale 1073741824 --clip 1 --eval-every 0 --cuda-graph on"
if train whole $R --save "$TMP/whole.safetensors" &&
   train first $R --steps $((STEPS / 2)) --save "$TMP/half.safetensors" &&
   train second $R --steps $((STEPS / 2)) --resume "$TMP/half.safetensors" --save "$TMP/resumed.safetensors"; then
    if cmp -s "$TMP/whole.safetensors" "$TMP/resumed.safetensors"; then
        echo "ok   a graph run resumed at step $((STEPS / 2)) ends as the uninterrupted one, byte for byte"
    else
        echo "FAIL: a resumed graph run differs from the uninterrupted one"; fails=$((fails + 1))
    fi
fi

# what the graph saves where launches dominate: gpt-tiny's tiny kernels
echo "speed: gpt-tiny, 300 steps, the trainer's summary (not asserted)"
for g in off on; do
    for flags in "" "--amp bf16 --fuse on"; do
        label=$(echo "${flags:-fp32}" | tr ' ' '_')
        line=$("$TRAINER" --backend cuda --model gpt-tiny --steps 300 --eval-every 0 --log-every 300 --data "$DATA" \
            --cuda-graph $g $flags 2>&1 | grep -E "^trainer: [0-9]+ steps")
        echo "  --cuda-graph $g ${flags:-(fp32)}: $line"
        echo "$g $label $line" >>"$TMP/speed"
    done
done
awk '{ for (i = 1; i <= NF; i++) if ($i == "tok/s;") t[$1, $2] = $(i - 1) }
     END { for (k in t) { split(k, a, SUBSEP); if (a[1] == "on" && t["off", a[2]] > 0)
               printf "  speed-up with the graph (%s): %.2fx\n", a[2], t[k] / t["off", a[2]] } }' "$TMP/speed"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all good"
