#!/bin/sh
# bench_cnn.sh: images/s of a CNN training step, the trainer (--model
# cnn-guide, cnn-resnet) against PyTorch on the CPU, side by side: the same
# shapes, batch, fp32, AdamW, and the same thread policy for every process
# (OMP_NUM_THREADS, OMP_WAIT_POLICY, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS;
# torch.set_num_threads). The runs alternate, trainer then PyTorch, the order
# reversed every other round, so load from anything else falls on both alike.
# Each run times STEPS steps after WARMUP untimed ones: the trainer's per-step
# lines (--log-every 1: data, forward, backward, optimizer), PyTorch's loop
# (zero_grad, forward, loss, backward, step). AMP=bf16 or fp16 runs both
# sides in mixed precision: the trainer's --amp, PyTorch's
# torch.autocast("cpu") (fp16 with a GradScaler where the PyTorch has a CPU
# one). It prints every run, then per
# model the median images/s of each side over all timed steps and the ratio.
# Not part of make check: it prints figures, it asserts nothing.
#
#   bench/bench_cnn.sh [TRAINER]   (default ./trainer/trainer, from the build dir)
#
# Environment (defaults in brackets):
#   PYTHON        an interpreter with torch [/usr/bin/python3]
#   DATA          Fashion-MNIST idx folder for the trainer [its default]
#   THREADS       threads on every side [2]
#   WAIT_POLICY   OMP_WAIT_POLICY on every side [passive]
#   ROUNDS        rounds [5]; BATCH [64]; WARMUP [3]; STEPS [10]
#   MODELS        [cnn-resnet cnn-guide]
#   TRAINER_ARGS  more trainer flags, e.g. "--layout nchw" [none]
#   AMP           off, bf16 or fp16 on both sides [off]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
trainer=${1:-./trainer/trainer}
py=${PYTHON:-/usr/bin/python3}
threads=${THREADS:-2}
policy=${WAIT_POLICY:-passive}
rounds=${ROUNDS:-5}
batch=${BATCH:-64}
warmup=${WARMUP:-3}
steps=${STEPS:-10}
models=${MODELS:-cnn-resnet cnn-guide}
data=${DATA:+--data $DATA}
targs=${TRAINER_ARGS:-}
amp=${AMP:-off}
case $amp in off|bf16|fp16) ;; *) echo "bench_cnn: AMP=$amp: expected off, bf16 or fp16" >&2; exit 1 ;; esac

[ -x "$trainer" ] || { echo "bench_cnn: no trainer at $trainer (build it, or pass its path)" >&2; exit 1; }
tv=$("$py" -c 'import torch; print(torch.__version__)') || { echo "bench_cnn: $py has no torch" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_cnn.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
export OMP_NUM_THREADS="$threads" OMP_WAIT_POLICY="$policy" OPENBLAS_NUM_THREADS="$threads" \
    MKL_NUM_THREADS="$threads"

# trainer MODEL OUT: images/s of each timed step (the per-step lines after the warm-up)
run_trainer() {
    n=$((warmup + steps))
    # shellcheck disable=SC2086
    "$trainer" --model "$1" $data --batch "$batch" --steps "$n" --train-images $((batch * (n + 1))) \
        --test-images 1 --log-every 1 --threads "$threads" --amp "$amp" $targs |
        sed -n 's/^epoch [0-9]* step \([0-9]*\)\/[0-9]* .* \([0-9.]*\) img\/s .*/\1 \2/p' |
        awk -v w="$warmup" '$1 > w { print $2 }' > "$2"
}
run_torch() {
    "$py" "$here/bench_cnn_torch.py" "$1" "$batch" "$warmup" "$steps" "$threads" "$amp" |
        awk -v b="$batch" '/^step_ms/ { printf "%.1f\n", b * 1000 / $2 }' > "$2"
}
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "bench_cnn: batch $batch, $threads threads, OMP_WAIT_POLICY=$policy, $rounds rounds of $steps timed steps" \
     "after $warmup, torch $tv, amp $amp${targs:+, trainer $targs}"
for m in $models; do
    : > "$tmp/$m.trainer"; : > "$tmp/$m.torch"
    for r in $(seq 1 "$rounds"); do
        if [ $((r % 2)) -eq 1 ]; then order="trainer torch"; else order="torch trainer"; fi
        for side in $order; do
            "run_$side" "$m" "$tmp/run"
            cat "$tmp/run" >> "$tmp/$m.$side"
            echo "  $m round $r $side: median $(median "$tmp/run") img/s over $(wc -l < "$tmp/run") steps"
        done
    done
    a=$(median "$tmp/$m.trainer"); b=$(median "$tmp/$m.torch")
    echo "$m: trainer $a img/s, torch $b img/s, ratio $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
done
