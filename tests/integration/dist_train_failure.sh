#!/bin/sh
# dist_train_failure.sh: a rank that stalls (SIGSTOP) or dies (SIGKILL) in
# the middle of training stops the whole job with an error instead of a
# hang. Stall: the other rank's watchdog (--dist-timeout 3) names the
# collective it waited for. Death: mpirun sees the rank go and ends the job.
# The outer timeout only turns a hang into a failure; nothing is asserted
# on time. Skips (77) without mpirun or the fortunes data.
set -u
command -v mpirun >/dev/null 2>&1 || { echo "skip: no mpirun (apt-get install openmpi-bin)"; exit 77; }
data=/usr/share/games/fortunes
[ -d "$data" ] || { echo "skip: $data is missing (apt-get install fortunes)"; exit 77; }
. "$GT_TOP_SRCDIR/tests/integration/dist_common.sh"
tr="$GT_TOP_BUILDDIR/trainer/trainer"
tmp=$(mktemp -d "${GT_TMPDIR:-/tmp}/dist-failure.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
for how in STOP KILL; do
    timeout 120 mpirun --oversubscribe --bind-to none -np 2 "$tr" --model gpt-tiny --layers 2 --width 64 \
        --steps 1000000 --threads 1 --workers 0 --eval-every 0 --log-every 1 --batch 4 --dist ddp \
        --dist-timeout 3 > "$tmp/out.$how" 2>&1 &
    job=$!
    # wait until training runs, then hit the rank that is not rank 0
    i=0
    victim=""
    while [ -z "$victim" ] && [ $i -lt 600 ]; do
        sleep 0.1; i=$((i + 1))
        grep -q '^step 3/' "$tmp/out.$how" 2>/dev/null || continue
        # only this job's ranks: children of its mpirun, the child of timeout
        for p in $(pgrep -P "$(pgrep -P $job | head -n 1)" 2>/dev/null); do
            [ -r "/proc/$p/environ" ] && tr '\0' '\n' < "/proc/$p/environ" | grep -qx 'OMPI_COMM_WORLD_RANK=1' &&
                victim=$p
        done
    done
    if [ -z "$victim" ]; then
        cat "$tmp/out.$how"; echo "FAIL ($how): could not find rank 1"; fails=1; kill $job 2>/dev/null; wait $job; continue
    fi
    kill -$how "$victim"
    wait $job; rc=$?
    out=$(cat "$tmp/out.$how")
    if [ "$rc" -eq 124 ]; then
        echo "$out" | tail -5; echo "FAIL ($how): the job hung"; fails=1; kill -KILL "$victim" 2>/dev/null
    elif [ "$rc" -eq 0 ]; then
        echo "FAIL ($how): the job reported success"; fails=1
    elif [ "$how" = STOP ] && ! echo "$out" | grep -q "rank 0 of 2: .* did not complete within 3 s"; then
        echo "$out" | tail -5; echo "FAIL (STOP): no watchdog message from rank 0"; fails=1
    else
        echo "$out" | grep -v '^step' | tail -4; echo "ok: rank 1 got SIG$how; the job stopped with status $rc"
    fi
done
exit $fails
