#!/bin/sh
# bench_pytorch.sh BUILDDIR [ROUNDS] [PYTHON]: what `gtrace --pytorch` costs a
# CPU training step (bench_pytorch.py: median step time of 40 steps after 5
# warm-up steps, one thread). Each round runs, in turn: the program under
# gtrace without --pytorch (the baseline: the same capture library, no
# annotations), under --pytorch (steps,modules: the default) and under
# --pytorch=steps,modules,ops. Prints every round, the medians over rounds and
# each mode's ratio to the baseline. Writes only scratch traces in a temp dir.
set -eu
B=${1:?usage: bench_pytorch.sh BUILDDIR [ROUNDS] [PYTHON]}
ROUNDS=${2:-7}
PY=${3:-/usr/bin/python3}
G="$B/libtrace/cli/gtrace"
S="$(cd "$(dirname "$0")" && pwd)/bench_pytorch.py"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
echo "machine: $(nproc) cores, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "python: $PY, torch $("$PY" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
run() { # MODE: prints the step time in us
    case $1 in
    base) "$G" -o "$W/t.sqlite" --force "$PY" "$S" 2>/dev/null ;;
    pytorch) "$G" --pytorch -o "$W/t.sqlite" --force "$PY" "$S" 2>/dev/null ;;
    ops) "$G" --pytorch=steps,modules,ops -o "$W/t.sqlite" --force "$PY" "$S" 2>/dev/null ;;
    esac | sed -n 's/^step_us //p'
}
for mode in base pytorch ops; do : > "$W/$mode"; done
echo "round  base_us  pytorch_us  ops_us"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    line="$r"
    for mode in base pytorch ops; do
        v=$(run $mode)
        [ -n "$v" ] || { echo "run failed: $mode"; exit 1; }
        echo "$v" >> "$W/$mode"
        line="$line  $v"
    done
    echo "$line"
    r=$((r + 1))
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
b=$(median "$W/base") p=$(median "$W/pytorch") o=$(median "$W/ops")
echo "median base $b us, --pytorch $p us, --pytorch=steps,modules,ops $o us"
awk -v b="$b" -v p="$p" -v o="$o" 'BEGIN {printf "ratio --pytorch/base %.3f (%+.1f%%), ops/base %.3f (%+.1f%%)\n", p/b, 100*(p/b-1), o/b, 100*(o/b-1)}'
