#!/bin/sh
# bench_trainer.sh: tokens/s and peak memory of the trainer against PyTorch on
# the CPU, same model shape, batch, thread count, fp32 and AdamW, run one after
# the other (trainer, torch, trainer, torch, ...) so both see the same machine.
# Not part of make check: it prints figures, it asserts nothing.
#
#   bench/bench_trainer.sh [TRAINER] (default: ./trainer/trainer, run from the build dir)
#   THREADS=2 ROUNDS=2 STEPS_TINY=100 STEPS_MID=10 PYTHON=/usr/bin/python3
#
# Models: gpt-tiny (2 layers, width 128, 4 heads, T=64, batch 8) and a mid-size
# one (6 layers, width 384, 6 heads, T=128, batch 8; gpt-small's shape at
# T=128). Vocabulary 256 (bytes; the trainer reads fortunes, torch random
# bytes: the speed does not depend on the values). The trainer's figure is over
# all its steps (the first included); torch's excludes 3 warm-up steps.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
trainer=${1:-./trainer/trainer}
threads=${THREADS:-2}
rounds=${ROUNDS:-2}
python=${PYTHON:-/usr/bin/python3}
steps_tiny=${STEPS_TINY:-100}
steps_mid=${STEPS_MID:-10}

[ -x "$trainer" ] || { echo "bench_trainer: no trainer at $trainer (build it, or pass its path)" >&2; exit 1; }
have_torch=yes
"$python" -c 'import torch' 2>/dev/null || { have_torch=no; echo "bench_trainer: $python has no torch: trainer only" >&2; }

echo "date $(date -u +%Y-%m-%dT%H:%MZ); $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "threads $threads; load before: $(cut -d' ' -f1-3 /proc/loadavg)"

run() { # name layers width heads seq batch steps
    name=$1 L=$2 C=$3 NH=$4 T=$5 B=$6 steps=$7
    i=1
    while [ "$i" -le "$rounds" ]; do
        printf '%s round %d trainer: ' "$name" "$i"
        OMP_NUM_THREADS=$threads "$trainer" --model gpt-tiny --layers "$L" --width "$C" --heads "$NH" --seq "$T" \
            --batch "$B" --steps "$steps" --eval-every 0 --threads "$threads" | tail -n 1
        if [ "$have_torch" = yes ]; then
            printf '%s round %d ' "$name" "$i"
            OMP_NUM_THREADS=$threads "$python" "$here/bench_trainer_torch.py" --layers "$L" --width "$C" --heads "$NH" \
                --seq "$T" --batch "$B" --threads "$threads" --steps "$steps"
        fi
        i=$((i + 1))
    done
}

run gpt-tiny 2 128 4 64 8 "$steps_tiny"
run mid 6 384 6 128 8 "$steps_mid"
