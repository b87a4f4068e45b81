#!/bin/sh
# bench_scale.sh: every step a user takes on a big trace, each one process
# under /usr/bin/time -v: peak RSS, CPU, wall, exit status and memory per
# event. Writing the trace (bench_report's synthetic GPU-shaped run), keeping
# its report as the launcher does at close, `gtrace report` (kept, and
# --no-summary), `--steps A:B`, `memory --at T`, `export --format chrome`
# (to /dev/null, and one file per rank into DIR/ranks/, removed after) and
# bench_viewer's first frames and pans.
#
#   sh ../bench/bench_scale.sh [EVENTS] [DIR] [STEPS...]   (from a build folder)
#
# EVENTS 100000000 and DIR /tmp/scale by default; the trace is DIR/scale-EVENTS.sqlite,
# written once and reused. STEPS: any of write keep report nosummary steps
# memory export ranks viewer (all by default). CEIL_KB (2097152: 2 GiB) is the
# `ulimit -v` the reading steps run under; NOLIMIT=1 runs them without one
# (to see what they would take). Nothing is asserted: it prints figures.
set -u
N=${1:-100000000}
D=${2:-/tmp/scale}
[ $# -ge 2 ] && shift 2 || shift $#
STEPS=${*:-write keep report nosummary steps memory export ranks viewer}
CEIL_KB=${CEIL_KB:-2097152}
NOLIMIT=${NOLIMIT:-0}
B=$(pwd)
T=$D/scale-$N.sqlite
mkdir -p "$D"
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive

echo "bench_scale: $N events, $T, ceiling $CEIL_KB KB (ulimit -v), nolimit $NOLIMIT"
echo "machine: $(getconf _NPROCESSORS_ONLN) CPUs, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-10s %6s %9s %9s %10s %8s  %s\n' step exit wall_s cpu_s rss_MB B/event note

# run NAME LIMIT CMD...: one process under time -v (LIMIT 1: under ulimit -v)
run() {
    name=$1 lim=$2
    shift 2
    tv=$D/time-$name.txt
    if [ "$lim" = 1 ] && [ "$NOLIMIT" != 1 ]; then
        note="ulimit -v $CEIL_KB"
        (ulimit -v "$CEIL_KB" && exec /usr/bin/time -v -o "$tv" "$@") > "$D/out-$name.txt" 2> "$D/err-$name.txt"
    else
        note="no limit"
        /usr/bin/time -v -o "$tv" "$@" > "$D/out-$name.txt" 2> "$D/err-$name.txt"
    fi
    rc=$?
    rc=$(sed -n "s/.*Exit status: //p" "$tv" | grep . || echo "$rc")
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tv" |
           awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }')
    user=$(sed -n 's/.*User time (seconds): //p' "$tv")
    sys=$(sed -n 's/.*System time (seconds): //p' "$tv")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tv")
    cpu=$(echo "$user $sys" | awk '{ printf "%.2f", $1 + $2 }')
    mb=$(echo "$rss" | awk '{ printf "%.1f", $1 / 1024 }')
    bpe=$(echo "$rss $N" | awk '{ printf "%.1f", $1 * 1024 / $2 }')
    err=$(grep -v '^Command exited' "$D/err-$name.txt" | head -n 1 | cut -c1-100)
    printf '%-10s %6s %9s %9s %10s %8s  %s%s\n' "$name" "$rc" "$wall" "$cpu" "$mb" "$bpe" "$note" \
        "${err:+; stderr: $err}"
}

# the last step's number, from the kept report (the window is two steps in the middle)
window() {
    "$B/libtrace/cli/gtrace" report --json "$T" 2> /dev/null | grep -o '"number":[0-9]*' |
        tail -n 1 | cut -d: -f2
}

for s in $STEPS; do
    case $s in
    write) [ -f "$T" ] || run write 0 nice -n 5 "$B/bench/bench_report" -n "$N" -f "$T" --no-summary --no-runs
           ls -l "$T" | awk '{ printf "trace: %.1f MB\n", $5 / 1e6 }' ;;
    keep) run keep 0 nice -n 5 "$B/bench/bench_report" -f "$T" --keep-only ;;
    report) run report 1 nice -n 5 "$B/libtrace/cli/gtrace" report "$T" ;;
    nosummary) run nosummary 1 nice -n 5 "$B/libtrace/cli/gtrace" report --no-summary "$T" ;;
    steps) ns=$(window)
           a=$(( ${ns:-2} / 2 ))
           run steps 1 nice -n 5 "$B/libtrace/cli/gtrace" report --steps "$a:$((a + 1))" "$T" ;;
    memory) # the middle of the trace (--at counts from its start), from the kept report's head
            wall=$("$B/libtrace/cli/gtrace" report --json "$T" 2> /dev/null | head -c 400 |
                   sed -n 's/.*"wall_ns":\([0-9]*\).*/\1/p')
            run memory 1 nice -n 5 "$B/libtrace/cli/gtrace" memory --at "$(( ${wall:-2} / 2 ))" "$T" ;;
    export) run export 1 nice -n 5 "$B/libtrace/cli/gtrace" export "$T" --format chrome -o /dev/null --force ;;
    ranks) # one file per rank, the folder HTA reads (written, measured, removed)
           rm -rf "$D/ranks"
           run ranks 1 nice -n 5 "$B/libtrace/cli/gtrace" export "$T" --format chrome -o "$D/ranks/"
           du -sm "$D/ranks" | awk '{ printf "ranks: %d MB in the folder\n", $1 }'
           rm -rf "$D/ranks" ;;
    viewer) if [ -x "$B/bench/bench_viewer" ]; then
                run viewer 0 nice -n 5 "$B/bench/bench_viewer" -r 1 -i "$T"
                grep -i 'first\|frames\|pans\|rows in' "$D/out-viewer.txt" | head -n 12
            else
                echo "viewer: no bench_viewer in this build (no GTK)"
            fi ;;
    *) echo "bench_scale: unknown step $s" >&2; exit 2 ;;
    esac
done
