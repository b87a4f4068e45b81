#!/bin/sh
# bench_capture_rings.sh OLD_BUILDDIR NEW_BUILDDIR: two builds of gtrace side
# by side, every measure alternating old and new in one run (so load from
# anything else on the machine falls on both alike); medians and new/old.
#   1. NVTX push+pop cost under capture (bench_capture pushpop, best of 5
#      blocks of 200,000 pairs per run; a ring that holds them all), ROUNDS runs each.
#   2. Sustained rate: bench_capture rate for 2 s at each RATES (pairs/s; a
#      pair is two events) on 1 and 2 threads, default buffers; rows and drops.
#   3. Resident memory of a traced process with 1 and 200 recording threads.
#   4. SIGKILL at a random point of a burst of 1,000,000 ranges: ranges the
#      program completed (capture_probe counted, from NEW's build) against
#      rows in the trace.
#   5. The trainer (gpt-tiny, STEPS steps, no loader thread): untraced, old
#      and new traced, ROUNDS rounds; the seconds it reports for its steps.
# Prints the figures; asserts nothing. Environment: ROUNDS [7], RATES
# ["250000 500000 1000000 1500000 2000000"], STEPS [10], KILLS [3].
set -eu
OLD=${1:?usage: bench_capture_rings.sh OLD_BUILDDIR NEW_BUILDDIR}
NEW=${2:?usage: bench_capture_rings.sh OLD_BUILDDIR NEW_BUILDDIR}
ROUNDS=${ROUNDS:-7}
RATES=${RATES:-"250000 500000 1000000 1500000 2000000"}
STEPS=${STEPS:-10}
KILLS=${KILLS:-3}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
PROBE="$NEW/tests/integration/capture_probe"
P="$NEW/bench/bench_capture"  # one NVTX program for both sides

median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
build_of() { [ "$1" = old ] && echo "$OLD" || echo "$NEW"; }
drops() { sqlite3 "$1" "SELECT coalesce(sum(count), 0) FROM GTRACE_DROPPED_EVENTS"; }

echo "machine: $(nproc) cores, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC')"

echo "== 1. push+pop under capture (ns per pair; $ROUNDS runs each, alternated) =="
for r in $(seq "$ROUNDS"); do
    "$P" pushpop 200000 | sed 's/.* \([0-9.]*\) ns.*/\1/' >>"$W/pp.none"
    for v in old new; do
        B=$(build_of $v)
        GTRACE_BUFFER_KB=131072 "$B/libtrace/cli/gtrace" -o "$W/pp.sqlite" --force "$P" pushpop 200000 \
            2>/dev/null | sed 's/.* \([0-9.]*\) ns.*/\1/' >>"$W/pp.$v" || true
        echo "$(drops "$W/pp.sqlite")" >>"$W/pp.$v.drops"
    done
done
for v in none old new; do
    echo "$v: runs $(tr '\n' ' ' <"$W/pp.$v")-> median $(median <"$W/pp.$v") ns/pair"
done
echo "dropped per run: old $(tr '\n' ' ' <"$W/pp.old.drops"), new $(tr '\n' ' ' <"$W/pp.new.drops")"
echo "new/old: $(echo "$(median <"$W/pp.new") $(median <"$W/pp.old")" | awk '{printf "%.2f", $1 / $2}')"

echo "== 2. sustained rate, default buffers (2 s each; pairs/s, events = 2 x pairs) =="
for threads in 1 2; do
    for rate in $RATES; do
        for v in old new; do
            B=$(build_of $v)
            "$B/libtrace/cli/gtrace" -o "$W/r.sqlite" --force "$P" rate "$rate" 2 "$threads" \
                >"$W/out" 2>/dev/null || [ $? -eq 3 ]
            rows=$(sqlite3 "$W/r.sqlite" "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59")
            echo "$v threads $threads target $rate pairs/s: $(sed 's/.*emitted //' "$W/out"), rows $rows, dropped $(drops "$W/r.sqlite")"
        done
    done
done

echo "== 3. resident memory of the traced process (kB) =="
for n in 1 200; do
    printf 'untraced: '; "$P" threads $n
    for v in old new; do
        B=$(build_of $v)
        printf '%s: ' $v
        "$B/libtrace/cli/gtrace" -o "$W/m.sqlite" --force "$P" threads $n 2>/dev/null || true
    done
done

echo "== 4. SIGKILL during a burst of 1,000,000 ranges (ring large enough for all) =="
for k in $(seq "$KILLS"); do
    for v in old new; do
        B=$(build_of $v)
        rm -f "$W/count.bin"
        T=$(( ($$ * 7919 + k * 104729 + $(date +%N | sed 's/^0*//;s/^$/0/')) % 900000 + 1000 ))
        GTRACE_BUFFER_KB=131072 "$B/libtrace/cli/gtrace" -o "$W/k.sqlite" --force "$PROBE" counted 1000000 "$W/count.bin" \
            >"$W/kout" 2>/dev/null &
        gt=$!
        prog=""
        i=0
        while [ $i -lt 600 ]; do
            [ -n "$prog" ] || prog=$(pgrep -P $gt -x capture_probe | head -n 1) || true
            if [ -n "$prog" ] && [ -s "$W/count.bin" ]; then
                c=$(od -An -t d8 "$W/count.bin" | tr -d ' ')
                [ "${c:-0}" -ge $T ] && break
                [ -s "$W/kout" ] && break
            fi
            i=$((i + 1))
            sleep 0.01
        done
        kill -KILL "$prog" 2>/dev/null || true
        wait $gt || true
        done_n=$(od -An -t d8 "$W/count.bin" | tr -d ' ')
        rows=$(sqlite3 "$W/k.sqlite" "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59" 2>/dev/null || echo "no trace")
        echo "$v: completed $done_n, in the trace $rows, dropped $(drops "$W/k.sqlite" 2>/dev/null || echo -)"
    done
done

echo "== 5. trainer gpt-tiny, $STEPS steps ($ROUNDS rounds: untraced, old, new; the trainer's own step time) =="
T="$NEW/trainer/trainer --model gpt-tiny --steps $STEPS --workers 0 --eval-every 0"
for r in $(seq "$ROUNDS"); do
    for v in none old new; do
        B=$(build_of $v)
        if [ $v = none ]; then
            $T >"$W/t" 2>&1 || true
        else
            "$B/libtrace/cli/gtrace" -o "$W/t.sqlite" --force $T >"$W/t" 2>&1 || true
        fi
        sed -n 's/.* steps in \([0-9.]*\) s.*/\1/p' "$W/t" >>"$W/tr.$v"
    done
done
for v in none old new; do
    echo "$v: $(tr '\n' ' ' <"$W/tr.$v")-> median $(median <"$W/tr.$v") s"
done
for v in old new; do
    echo "$v/untraced: $(echo "$(median <"$W/tr.$v") $(median <"$W/tr.none")" | awk '{printf "%.3f", $1 / $2}')"
done
