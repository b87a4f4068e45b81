#!/bin/sh
# bench_cnn_cpu.sh: CPU time per training step of the CNNs, the trainer
# against PyTorch, on one thread each (OMP_NUM_THREADS=1): what a step costs
# in processor time, which a loaded machine does not inflate the way it
# inflates wall time (bench_cnn.sh measures images/s of wall time). Each
# side runs SHORT and LONG steps in two processes; the difference of their
# user+system times over LONG-SHORT steps leaves out start-up (data
# loading, Python's imports). Sides alternate, the order reversed every
# other round; medians over ROUNDS. Not part of make check.
#
#   bench/bench_cnn_cpu.sh [TRAINER]   (default ./trainer/trainer, from the build dir)
#
# Environment: PYTHON [/usr/bin/python3], ROUNDS [3], SHORT [5], LONG [25],
# BATCH [64], MODELS [cnn-resnet cnn-guide], TRAINER_ARGS [none].
set -eu
here=$(cd "$(dirname "$0")" && pwd)
trainer=${1:-./trainer/trainer}
py=${PYTHON:-/usr/bin/python3}
rounds=${ROUNDS:-3}
short=${SHORT:-5}
long=${LONG:-25}
batch=${BATCH:-64}
models=${MODELS:-cnn-resnet cnn-guide}
targs=${TRAINER_ARGS:-}
[ -x "$trainer" ] || { echo "bench_cnn_cpu: no trainer at $trainer (build it, or pass its path)" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "bench_cnn_cpu: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
tv=$("$py" -c 'import torch; print(torch.__version__)') || { echo "bench_cnn_cpu: $py has no torch" >&2; exit 1; }
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 OMP_WAIT_POLICY=passive
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_cnn_cpu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

cpu_s() { /usr/bin/time -f "%U %S" -o "$tmp/t" "$@" > /dev/null 2>&1; awk '{ print $1 + $2 }' "$tmp/t"; }
# side MODEL STEPS: CPU seconds of one process
side_trainer() {
    # shellcheck disable=SC2086
    cpu_s "$trainer" --model "$1" --batch "$batch" --steps "$2" --train-images $((batch * (long + 1))) \
        --test-images 1 --log-every 1000 --threads 1 $targs
}
side_torch() { cpu_s "$py" "$here/bench_cnn_torch.py" "$1" "$batch" 0 "$2" 1; }
per_step() { # SIDE MODEL: ms per step
    a=$("side_$1" "$2" "$short"); b=$("side_$1" "$2" "$long")
    awk -v a="$a" -v b="$b" -v n=$((long - short)) 'BEGIN { printf "%.1f\n", (b - a) * 1000 / n }'
}
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "bench_cnn_cpu: batch $batch, 1 thread, CPU ms per step over $long-$short steps, $rounds rounds, torch $tv${targs:+, trainer $targs}"
for m in $models; do
    : > "$tmp/trainer"; : > "$tmp/torch"
    for r in $(seq 1 "$rounds"); do
        if [ $((r % 2)) -eq 1 ]; then order="trainer torch"; else order="torch trainer"; fi
        for s in $order; do
            v=$(per_step "$s" "$m"); echo "$v" >> "$tmp/$s"
            echo "  $m round $r $s: $v ms"
        done
    done
    a=$(median "$tmp/trainer"); b=$(median "$tmp/torch")
    echo "$m: trainer $a ms, torch $b ms per step; images/s of CPU time $(awk -v a="$a" -v b="$b" -v n="$batch" \
        'BEGIN { printf "%.0f against %.0f, ratio %.2f", n * 1000 / a, n * 1000 / b, b / a }')"
done
