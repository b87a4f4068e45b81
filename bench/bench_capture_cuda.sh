#!/bin/sh
# bench_capture_cuda.sh BUILDDIR: what kernel tracing costs on a GPU.
#  1. samples/cuda_many_kernels (200,000 launches of a tiny kernel, a sync
#     every 1,000): microseconds per launch untraced and under gtrace, and
#     whether every kernel reached the trace (no drops);
#  2. the trainer on the CUDA backend (gpt-small, bf16, fused): ms/step
#     untraced and under gtrace (the target: at most 2%).
# Three runs of each, every figure printed; nothing asserted on time.
# Exits 77 without a GPU. Needs sqlite3 (the CLI) on PATH.
set -u
B=${1:?usage: bench_capture_cuda.sh BUILDDIR}
G="$B/libtrace/cli/gtrace"
K="$B/samples/cuda_many_kernels"
T="$B/trainer/trainer"
DATA=${DATA:-/usr/share/games/fortunes}
[ -d "$DATA" ] || DATA=$(dirname "$0")/../trainer # any text will do
for f in "$G" "$K" "$T"; do [ -x "$f" ] || { echo "missing $f: build it first"; exit 99; }; done
command -v sqlite3 >/dev/null 2>&1 || { echo "sqlite3 (the CLI) is needed"; exit 99; }
"$K" 1000 100 >/dev/null 2>&1; [ $? = 77 ] && { echo "no GPU"; exit 77; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null), $(nproc) cores, $(date -u +%Y-%m-%d)"

echo "== tiny kernels: 200,000 launches, sync every 1,000 =="
for i in 1 2 3; do printf 'untraced: '; "$K" 200000 1000; done
for i in 1 2 3; do
    printf 'traced:   '
    "$G" -o "$W/k.sqlite" --force "$K" 200000 1000 2>"$W/err" || { cat "$W/err"; exit 1; }
    n=$(sqlite3 "$W/k.sqlite" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
    d=$(sqlite3 "$W/k.sqlite" "SELECT coalesce(sum(count), 0) FROM GTRACE_DROPPED_EVENTS")
    echo "          (kernels in the trace: $n of 200100, dropped events: $d)"
done

echo "== trainer --backend cuda --model gpt-small --amp bf16 --fuse on, 60 steps =="
# from the summary "trainer: 60 steps in S s, ..." (the first step, with its warm-up, included in both)
step_ms() { sed -n 's/^trainer: \([0-9]*\) steps in \([0-9.]*\) s.*/\1 \2/p' "$1" | awk '{ printf "%.2f", $2 * 1000 / $1 }'; }
flags="--backend cuda --model gpt-small --amp bf16 --fuse on --steps 60 --eval-every 0 --log-every 60 --data $DATA"
for i in 1 2 3; do
    "$T" $flags >"$W/u.log" 2>&1 || { cat "$W/u.log"; exit 1; }
    "$G" -o "$W/t.sqlite" --force "$T" $flags >"$W/t.log" 2>&1 || { cat "$W/t.log"; exit 1; }
    u=$(step_ms "$W/u.log") t=$(step_ms "$W/t.log")
    n=$(sqlite3 "$W/t.sqlite" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
    echo "run $i: untraced $u ms/step, traced $t ms/step ($(awk -v u="$u" -v t="$t" 'BEGIN { if (u > 0) printf "%+.1f%%", (t - u) / u * 100 }')), $n kernels recorded"
done
