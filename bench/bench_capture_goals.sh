#!/bin/sh
# bench_capture_goals.sh OLD_BUILDDIR NEW_BUILDDIR: the capture's goals, two
# builds side by side, every measure alternating old and new in one run (so
# load from anything else on the machine falls on both alike); medians and
# new/old. Both sides trace the same programs (NEW's bench_capture).
#   1. NVTX push+pop under capture, ring in cache (bench_capture paced:
#      100 blocks of 2,000 pairs, 20 ms apart; median block), ROUNDS runs each.
#   2. Sustained rate with default buffers: 1,000,000 pairs/s (2,000,000
#      events/s) from one thread and 1,500,000 pairs/s from two, RATE_SECONDS
#      each, ROUNDS runs each; rows written and events dropped.
#   3. Resident memory of the traced process: 1 and 200 recording threads,
#      and 200 under a 64 MiB process cap (GTRACE_BUFFER_TOTAL_MB=64).
# The load average is printed before and after. Prints the figures; asserts
# nothing. Environment: ROUNDS [5], RATE_SECONDS [2].
set -eu
OLD=${1:?usage: bench_capture_goals.sh OLD_BUILDDIR NEW_BUILDDIR}
NEW=${2:?usage: bench_capture_goals.sh OLD_BUILDDIR NEW_BUILDDIR}
ROUNDS=${ROUNDS:-5}
SECONDS_EACH=${RATE_SECONDS:-2}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
P="$NEW/bench/bench_capture"

median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
build_of() { [ "$1" = old ] && echo "$OLD" || echo "$NEW"; }
drops() { sqlite3 "$1" "SELECT coalesce(sum(count), 0) FROM GTRACE_DROPPED_EVENTS"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "machine: $(nproc) cores, $(uname -sr), $(date -u '+%Y-%m-%d %H:%M UTC'), load $(load)"

echo "== 1. push+pop under capture, ring in cache (ns per pair, median block; $ROUNDS runs each, alternated) =="
for r in $(seq "$ROUNDS"); do
    for v in old new; do
        "$(build_of $v)/libtrace/cli/gtrace" -o "$W/pc.sqlite" --force "$P" paced 200000 2000 2>/dev/null \
            | sed 's/.* median \([0-9.]*\) ns.*/\1/' >>"$W/pc.$v"
        drops "$W/pc.sqlite" >>"$W/pc.$v.drops"
    done
done
for v in old new; do
    echo "$v: $(tr '\n' ' ' <"$W/pc.$v")-> median $(median <"$W/pc.$v") ns/pair; dropped $(tr '\n' ' ' <"$W/pc.$v.drops")"
done
echo "new/old: $(echo "$(median <"$W/pc.new") $(median <"$W/pc.old")" | awk '{printf "%.2f", $1 / $2}')"

echo "== 2. sustained rate, default buffers ($SECONDS_EACH s each, $ROUNDS runs each, alternated) =="
for spec in "1 1000000" "2 1500000"; do
    set -- $spec
    for r in $(seq "$ROUNDS"); do
        for v in old new; do
            "$(build_of $v)/libtrace/cli/gtrace" -o "$W/r.sqlite" --force "$P" rate "$2" "$SECONDS_EACH" "$1" \
                >"$W/out" 2>/dev/null || [ $? -eq 3 ]
            rows=$(sqlite3 "$W/r.sqlite" "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59")
            d=$(drops "$W/r.sqlite")
            echo "$v threads $1 target $2 pairs/s: $(sed 's/.*emitted //' "$W/out"), rows $rows, dropped $d"
            echo "$d" >>"$W/rate.$1.$v"
        done
    done
    for v in old new; do
        echo "$v threads $1: dropped per run $(tr '\n' ' ' <"$W/rate.$1.$v")-> median $(median <"$W/rate.$1.$v")"
    done
done

echo "== 3. resident memory of the traced process (kB): 1 and 200 recording threads, 200 under a 64 MiB cap =="
for spec in "1 256" "200 256" "200 64"; do
    set -- $spec
    [ "$2" != 256 ] || echo "$1 threads untraced: $("$P" threads "$1")"
    for v in old new; do
        m=$(GTRACE_BUFFER_TOTAL_MB=$2 "$(build_of $v)/libtrace/cli/gtrace" -o "$W/m.sqlite" --force "$P" threads "$1" \
            2>/dev/null) || true
        echo "$1 threads $v, GTRACE_BUFFER_TOTAL_MB=$2: $m; rows $(sqlite3 "$W/m.sqlite" "SELECT count(*) FROM NVTX_EVENTS"), dropped $(drops "$W/m.sqlite")"
    done
done
echo "load at the end: $(load)"
