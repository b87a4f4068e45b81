#!/bin/sh
# bench_optimizations.sh: step time and peak memory of the trainer with each
# optimization switch on and off, on the backend it runs on. Each
# configuration runs ROUNDS times, interleaved (config 1, 2, ..., then in reverse),
# every run with the same threads and OMP_WAIT_POLICY, so load from anything
# else on the machine falls on every configuration alike. It prints each
# configuration's median step time, every round's, and its ratio to the
# baseline's median. Not part of make check: it prints figures, it asserts nothing.
#
#   bench/bench_optimizations.sh [TRAINER] (default ./trainer/trainer, from the build dir)
#   MODEL=gpt-mini STEPS=20 ROUNDS=5 THREADS=2 OMP_WAIT_POLICY=passive
#   MODEL=cnn-resnet (or cnn-guide): the CNN's switches, batch 64, DATA=idx folder [the trainer's default]
#
# ms/step is the mean over a run's steps after the first (the trainer prints
# the total; the first step pays page faults and the allocator's warm-up);
# a CNN's comes from its per-step images/s.
# Memory figures are the caching allocator's: the same in every round.
set -eu
trainer=${1:-./trainer/trainer}
model=${MODEL:-gpt-mini}
steps=${STEPS:-20}
rounds=${ROUNDS:-5}
threads=${THREADS:-2}
[ -x "$trainer" ] || { echo "bench_optimizations: no trainer at $trainer" >&2; exit 1; }
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} OMP_NUM_THREADS="$threads"

echo "date $(date -u +%Y-%m-%dT%H:%MZ); $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "model $model, $steps steps, median of $rounds rounds, $threads threads, OMP_WAIT_POLICY=$OMP_WAIT_POLICY;" \
     "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

case $model in cnn-*)
    cnn=yes
    configs="default (nhwc)|
bias-before-bn off|--bias-before-bn off
layout nchw|--layout nchw
conv-autotune on (nchw)|--conv-autotune on
amp bf16|--amp bf16
amp fp16|--amp fp16
fuse on|--fuse on
accum 2 (half batch)|--accum 2 --batch 32
sgd|--optimizer sgd --lr 0.05"
    [ "$model" = cnn-resnet ] && configs="$configs
checkpoint blocks|--checkpoint blocks" ;;
*)
    cnn=no
    configs="baseline|--preset baseline
fuse on|--preset baseline --fuse on
amp bf16|--preset baseline --amp bf16
amp fp16|--preset baseline --amp fp16
checkpoint selective|--preset baseline --checkpoint selective
checkpoint blocks|--preset baseline --checkpoint blocks
accum 2 (half batch)|--preset baseline --accum 2 --batch 4
workers 1|--preset baseline --workers 1
sgd|--preset baseline --optimizer sgd --lr 0.05
optimized|--preset optimized" ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n_configs=$(echo "$configs" | wc -l)
r=1
while [ "$r" -le "$rounds" ]; do
    # odd rounds run the configurations in order, even rounds in reverse, so a
    # drift of the machine's load does not favour the ones that come first
    if [ $((r % 2)) -eq 1 ]; then order=$(seq 1 "$n_configs"); else order=$(seq "$n_configs" -1 1); fi
    for i in $order; do
        line=$(echo "$configs" | sed -n "${i}p")
        name=${line%%|*} args=${line#*|}
        # shellcheck disable=SC2086
        if [ $cnn = yes ]; then
            "$trainer" --model "$model" --steps "$steps" --batch 64 --train-images $((64 * (steps + 1))) \
                --test-images 1 ${DATA:+--data "$DATA"} --log-every 1 --threads "$threads" $args
        else
            "$trainer" --model "$model" --steps "$steps" --eval-every 0 --log-every 1 --threads "$threads" $args
        fi >"$tmp/$i.$r" 2>&1 || { echo "$name: failed"; cat "$tmp/$i.$r"; }
    done
    r=$((r + 1))
done

# median of the numbers on stdin
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-22s %9s %8s %9s %11s %11s %10s  %s\n' config "ms/step" "vs base" "tok/s" "peak alloc" "peak acts" "final loss" \
    "ms/step of each round"
i=0
echo "$configs" | while IFS='|' read -r name args; do
    i=$((i + 1))
    : > "$tmp/$i.ms"
    for f in "$tmp/$i".[0-9]*; do
        # mean ms/step of steps 2..N from the per-step lines (a CNN's: 64 images per step at its img/s)
        if [ $cnn = yes ]; then
            grep -E '^epoch [0-9]+ step [0-9]+/' "$f" | tail -n +2 | sed -E 's/.* ([0-9.]+) img\/s .*/\1/' |
                awk '$1 > 0 { print 64000 / $1 }'
        else
            grep -E '^step [0-9]+/' "$f" | tail -n +2 | sed -E 's/.* ([0-9.]+) ms\/step.*/\1/'
        fi | awk '{ s += $1; n++ } END { if (n) printf "%.2f\n", s / n }' >> "$tmp/$i.ms"
    done
    [ -s "$tmp/$i.ms" ] || { echo "$name: no run finished"; continue; }
    med=$(median < "$tmp/$i.ms")
    [ "$i" -eq 1 ] && echo "$med" > "$tmp/base"
    f=$tmp/$i.1
    line=$(grep '^trainer: .* steps in' "$f")
    alloc=$(echo "$line" | sed -E 's/.*peak allocated ([0-9.]+ MiB).*/\1/')
    acts=$(echo "$line" | sed -E 's/.*peak activations ([0-9.]+ MiB).*/\1/')
    loss=$(echo "$line" | sed -E 's/.*final loss ([0-9.]+);.*/\1/')
    if [ $cnn = yes ]; then
        acts=-
        tpb=64 # images per step: the tok/s column reads img/s
    else
        tpb=$(grep '^trainer: data' "$f" | sed -E 's/.*batch ([0-9]+) x ([0-9]+)( x ([0-9]+) micro-batches)?.*/\1 \2 \4/' |
            awk '{ print $1 * $2 * ($3 ? $3 : 1) }')
    fi
    tok=$(awk -v t="$tpb" -v ms="$med" 'BEGIN { printf "%.0f", t / (ms / 1000) }')
    vs=$(awk -v a="$med" -v b="$(cat "$tmp/base")" 'BEGIN { printf "%.2fx", a / b }')
    printf '%-22s %9.1f %8s %9s %11s %11s %10s  %s\n' "$name" "$med" "$vs" "$tok" "$alloc" "$acts" "$loss" \
        "$(sort -n "$tmp/$i.ms" | tr '\n' ' ')"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
