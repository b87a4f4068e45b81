#!/bin/sh
# bench_capture.sh BUILDDIR: NVTX push+pop cost untraced and traced, and the
# highest sustained rate of events gtrace records without dropping any.
# Prints the figures; writes nothing but scratch traces in a temp dir.
set -eu
B=${1:?usage: bench_capture.sh BUILDDIR}
G="$B/libtrace/cli/gtrace"
P="$B/bench/bench_capture"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
echo "machine: $(nproc) cores, $(uname -sr), $(date -u +%Y-%m-%d)"
echo "== push+pop cost (one thread, 200,000 pairs, best of 5; 3 runs each) =="
for i in 1 2 3; do printf 'untraced: '; "$P" pushpop 200000; done
# A ring large enough for every event: this is the cost of recording, not of dropping.
for i in 1 2 3; do
    printf 'traced:   '
    GTRACE_BUFFER_KB=524288 "$G" -o "$W/pp.sqlite" --force "$P" pushpop 200000 2>/dev/null || [ $? -eq 3 ]
    d=$(sqlite3 "$W/pp.sqlite" "SELECT coalesce(sum(count),0) FROM GTRACE_DROPPED_EVENTS")
    r=$(sqlite3 "$W/pp.sqlite" "SELECT count(*) FROM NVTX_EVENTS")
    echo "          ($r rows written, $d dropped)"
done
echo "== sustained rate without drops (2 s each; pairs = events) =="
for threads in 1 2; do
    for rate in 100000 250000 500000 1000000 2000000 4000000; do
        # gtrace exits 3 when events were dropped: that is a figure here, not a failure.
        "$G" -o "$W/r.sqlite" --force "$P" rate $rate 2 $threads >"$W/out" 2>/dev/null || [ $? -eq 3 ]
        d=$(sqlite3 "$W/r.sqlite" "SELECT coalesce(sum(count),0) FROM GTRACE_DROPPED_EVENTS")
        r=$(sqlite3 "$W/r.sqlite" "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59")
        echo "threads $threads target $rate/s: $(cat "$W/out" | sed 's/.*emitted //'), rows $r, dropped $d"
    done
done
