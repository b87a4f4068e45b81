#!/bin/sh
# bench_trainer.sh: tokens/s of the trainer against PyTorch on the CPU, side by
# side. Same model shape, batch, vocabulary, fp32 and AdamW on both sides, and
# the same thread policy: OMP_NUM_THREADS, OMP_WAIT_POLICY and the BLAS's
# thread count are set alike for every process (the trainer runs its BLAS
# single-threaded inside its own OpenMP team; PyTorch gets
# torch.set_num_threads, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS). The runs
# alternate, trainer and each PyTorch in turn, for ROUNDS rounds (the order
# reversed every other round), so load from anything else on the machine falls
# on every side alike. It prints every run, then per model the median tokens/s
# of each side, the ratio trainer / PyTorch of the medians, and the ratio of
# each round's pair of runs with its median (steadier when the load drifts).
# Not part of make check: it prints figures, it asserts nothing.
#
#   bench/bench_trainer.sh [TRAINER]   (default ./trainer/trainer, from the build dir)
#
# Environment (defaults in brackets):
#   PYTHONS       interpreters with torch, each one side ["/usr/bin/python3"]
#   COMPILE       yes: also a torch.compile side for each PyTorch 2.x [yes]
#   THREADS       threads on every side [2]
#   WAIT_POLICY   OMP_WAIT_POLICY on every side [passive]
#   ROUNDS        rounds (at least 5 for a figure worth quoting) [5]
#   WARMUP        steps not timed, on every side [3]
#   STEPS_TINY, STEPS_MID   timed steps per run [100, 15]
#   MODELS        which of "tiny mid" [tiny mid]
#
# Models: gpt-tiny (2 layers, width 128, 4 heads, T=64, batch 8) and a mid-size
# one (6 layers, width 384, 6 heads, T=128, batch 8; gpt-small's width at
# T=128). Vocabulary 256 (bytes; the trainer reads fortunes, PyTorch random
# bytes: the speed does not depend on the values). Both sides time the steps
# after WARMUP untimed ones (the trainer's per-step times, from --log-every 1;
# PyTorch's loop, which is where torch.compile compiles). The trainer runs
# without a loader thread (--workers 0) and without evaluation.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
trainer=${1:-./trainer/trainer}
pythons=${PYTHONS:-/usr/bin/python3}
compile=${COMPILE:-yes}
threads=${THREADS:-2}
policy=${WAIT_POLICY:-passive}
rounds=${ROUNDS:-5}
warmup=${WARMUP:-3}
steps_tiny=${STEPS_TINY:-100}
steps_mid=${STEPS_MID:-15}
models=${MODELS:-tiny mid}

[ -x "$trainer" ] || { echo "bench_trainer: no trainer at $trainer (build it, or pass its path)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_trainer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# the one thread policy, for every process this script starts
export OMP_NUM_THREADS="$threads" OMP_WAIT_POLICY="$policy" OPENBLAS_NUM_THREADS="$threads" \
    MKL_NUM_THREADS="$threads"

# sides: "trainer" then one per PyTorch (and its torch.compile), as "python|mode|label"
: > "$tmp/sides"
for py in $pythons; do
    v=$("$py" -c 'import torch; print(torch.__version__)' 2>/dev/null) ||
        { echo "bench_trainer: $py has no torch: left out" >&2; continue; }
    echo "$py|eager|torch $v eager" >> "$tmp/sides"
    case $v in
    1.*) ;;
    *) [ "$compile" = yes ] && echo "$py|compile|torch $v compile" >> "$tmp/sides" ;;
    esac
done

echo "date $(date -u +%Y-%m-%dT%H:%MZ); $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=$policy OPENBLAS_NUM_THREADS=$threads MKL_NUM_THREADS=$threads;" \
     "rounds $rounds; warm-up $warmup steps; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "sides: trainer ($trainer)$(while IFS='|' read -r _ _ label; do printf ', %s' "$label"; done < "$tmp/sides")"

# run_trainer L C NH T B STEPS: prints the trainer's tokens/s over the steps after the warm-up
run_trainer() {
    "$trainer" --model gpt-tiny --layers "$1" --width "$2" --heads "$3" --seq "$4" --batch "$5" \
        --steps $(($6 + warmup)) --eval-every 0 --workers 0 --threads "$threads" --log-every 1 > "$tmp/out" 2>&1 ||
        { cat "$tmp/out" >&2; echo "bench_trainer: the trainer failed" >&2; exit 1; }
    awk -v w="$warmup" -v tok=$(($4 * $5)) '
        /^step [0-9]+\/[0-9]+ loss/ { split($2, s, "/"); if (s[1] + 0 > w) { for (i = 1; i < NF; i++) if ($(i + 1) == "ms/step") ms += $i; n++ } }
        /^trainer: [0-9]+ steps in/ { rss = $NF; sub(/.*peak RSS /, "", rss) }
        END { if (n == 0 || ms <= 0) exit 1; printf "%.0f %d %.1f\n", n * tok / (ms / 1000), n, ms / n }' "$tmp/out"
}

# run_torch PY MODE L C NH T B STEPS: prints PyTorch's tokens/s and its line
run_torch() {
    flag=""
    [ "$2" = compile ] && flag=--compile
    "$1" "$here/bench_trainer_torch.py" --layers "$3" --width "$4" --heads "$5" --seq "$6" --batch "$7" \
        --threads "$threads" --steps "$8" --warmup-steps "$warmup" $flag > "$tmp/out" 2>&1 ||
        { cat "$tmp/out" >&2; echo "bench_trainer: $1 bench_trainer_torch.py $flag failed" >&2; exit 1; }
    sed -n 's/.* \([0-9][0-9]*\) tok\/s,.*/\1/p' "$tmp/out" | tail -n 1
}

# median of the numbers on stdin
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

bench() { # name layers width heads seq batch steps
    name=$1 L=$2 C=$3 NH=$4 T=$5 B=$6 steps=$7
    echo
    echo "== $name: $L layers, width $C, $NH heads, T=$T, batch $B, fp32, AdamW, $steps timed steps"
    : > "$tmp/$name.trainer"
    n_sides=0
    while IFS='|' read -r _ _ _; do n_sides=$((n_sides + 1)); done < "$tmp/sides"
    i=1
    while [ "$i" -le "$rounds" ]; do
        # odd rounds: trainer first; even rounds: PyTorch sides first, in reverse order
        if [ $((i % 2)) -eq 1 ]; then order="t $(seq 1 "$n_sides" | tr '\n' ' ')"; else order="$(seq "$n_sides" -1 1 | tr '\n' ' ') t"; fi
        for s in $order; do
            if [ "$s" = t ]; then
                r=$(run_trainer "$L" "$C" "$NH" "$T" "$B" "$steps")
                set -- $r
                echo "$1" >> "$tmp/$name.trainer"
                printf '%s round %d trainer: %s tok/s (%s steps, %s ms/step; load %s)\n' "$name" "$i" "$1" "$2" "$3" \
                    "$(cut -d' ' -f1 /proc/loadavg)"
            else
                line=$(sed -n "${s}p" "$tmp/sides")
                py=${line%%|*} rest=${line#*|}
                mode=${rest%%|*} label=${rest#*|}
                tps=$(run_torch "$py" "$mode" "$L" "$C" "$NH" "$T" "$B" "$steps")
                echo "$tps" >> "$tmp/$name.side$s"
                printf '%s round %d %s: %s tok/s (load %s)\n' "$name" "$i" "$label" "$tps" "$(cut -d' ' -f1 /proc/loadavg)"
            fi
        done
        i=$((i + 1))
    done
    mt=$(median < "$tmp/$name.trainer")
    echo "-- $name medians over $rounds rounds (tokens/s); ratio = trainer / PyTorch"
    printf '%s trainer: median %.0f  rounds %s\n' "$name" "$mt" "$(tr '\n' ' ' < "$tmp/$name.trainer")"
    s=1
    while [ "$s" -le "$n_sides" ]; do
        label=$(sed -n "${s}p" "$tmp/sides" | cut -d'|' -f3)
        ms=$(median < "$tmp/$name.side$s")
        # per round: the trainer's run over this side's run of the same round
        paste "$tmp/$name.trainer" "$tmp/$name.side$s" | awk '$2 > 0 { printf "%.2f\n", $1 / $2 }' > "$tmp/$name.ratio$s"
        printf '%s %s: median %.0f  rounds %s\n' "$name" "$label" "$ms" "$(tr '\n' ' ' < "$tmp/$name.side$s")"
        printf '%s   ratio of the medians %s; per round %s(median %s)\n' "$name" \
            "$(awk -v a="$mt" -v b="$ms" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')" \
            "$(tr '\n' ' ' < "$tmp/$name.ratio$s")" "$(median < "$tmp/$name.ratio$s")"
        s=$((s + 1))
    done
}

for m in $models; do
    case $m in
    tiny) bench gpt-tiny 2 128 4 64 8 "$steps_tiny" ;;
    mid) bench mid 6 384 6 128 8 "$steps_mid" ;;
    *) echo "bench_trainer: unknown model $m (tiny, mid)" >&2; exit 1 ;;
    esac
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
