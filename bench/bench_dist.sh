#!/bin/sh
# bench_dist.sh: distributed training on CPU ranks: step time, model-state
# memory per rank (expected by the ZeRO accounting and measured by the
# caching allocator), peak allocated, and the communication hidden behind
# compute, for one process with the global batch, DDP (one bucket and
# small buckets) and ZeRO stages 1-3. Prints a Markdown table.
# Usage (from the build directory): bench_dist.sh [TRAINER] [RANKS] [STEPS] [MODEL ARGS...]
# The numbers describe this machine only: ranks that share a few cores
# compete for them, so this shows correctness and overlap, not scaling.
set -u
tr=${1:-./trainer/trainer}; np=${2:-2}; steps=${3:-30}
[ $# -gt 3 ] && { shift 3; model="$*"; } || model="--model gpt-tiny --batch 8"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/integration/dist_common.sh"
common="$model --steps $steps --threads 1 --workers 0 --eval-every 0 --log-every 1000000"
batch=$(echo "$model" | sed -n 's/.*--batch \([0-9]*\).*/\1/p')
row() { # row LABEL OUTPUT
    echo "$2" | tr '\r' '\n' | awk -v label="$1" -v steps="$steps" '
        /^trainer: [0-9]+ steps in/ { for (i = 1; i <= NF; i++) { if ($i == "in") t = $(i + 1); if ($i == "allocated") pa = $(i + 1) } }
        /model states: expected/ { for (i = 1; i <= NF; i++) { if ($i == "expected") e = $(i + 1); if ($i == "measured") m = $(i + 1); if ($i == "figure") p = $(i + 1) } }
        /communication per step/ { for (i = 1; i <= NF; i++) { if ($i == "collectives,") c = $(i - 1); if ($i == "flight,") f = $(i - 3); if ($i == "exposed,") x = $(i - 2); if ($i == "hidden") h = $(i - 1) } }
        END { printf "| %s | %.1f | %s | %s | %s | %s | %s | %s | %s | %s |\n", label, t * 1000 / steps,
              e == "" ? "-" : e, m == "" ? "-" : m, p == "" ? "-" : p, pa, c == "" ? "-" : c, f == "" ? "-" : f,
              x == "" ? "-" : x, h == "" ? "-" : h }'
}
echo "| run | ms/step | states expected MiB | states measured MiB | ZeRO paper MiB | peak allocated MiB | collectives/step | comm in flight ms | exposed ms | hidden |"
echo "|---|---|---|---|---|---|---|---|---|---|"
gb=$((batch * np))
row "1 process, batch $gb" "$("$tr" $(echo "$common" | sed "s/--batch $batch/--batch $gb/") 2>&1)"
for mode in "ddp" "ddp --bucket-mb 0.25" "fsdp --zero 1" "fsdp --zero 2" "fsdp --zero 3"; do
    row "$np ranks x batch $batch, --dist $mode" "$(dist_mpirun "$np" "$tr" $common --dist $mode 2>&1)"
done
