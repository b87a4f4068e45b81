#!/bin/sh
# bench_side_by_side.sh: gtrace against Holistic Trace Analysis (HTA) on the
# same traces: time and peak RSS to the first answer a user asks of a
# training trace (where the device's time went, and which kernels took it).
#   gtrace report            the report, from the summary kept in the trace
#   gtrace report --no-summary   the same, analysed from the events
#   HTA                      TraceAnalysis on gtrace's Chrome export, then
#                            its temporal and kernel breakdowns
# The traces are bench_report's synthetic GPU-shaped runs (NVTX steps,
# launches, kernels on two streams, copies, an allocator), one per size.
# Rounds alternate the three; medians of ROUNDS; the ratios to gtrace.
# HTA comes pinned from PyPI into a throwaway virtual environment (as the
# interop test pins it). Not part of make check: it prints figures.
#
#   bench/bench_side_by_side.sh [BUILD_DIR]   (default: the current directory)
#
# Environment: SIZES ["1000000 10000000"], ROUNDS [3], WORK [a temporary
# folder, kept: the traces are reused]; HTA_MAX_EVENTS [10000000]: larger
# sizes leave HTA out.
set -eu
build=$(cd "${1:-.}" && pwd)
src=$(cd "$(dirname "$0")" && pwd)
gtrace="$build/libtrace/cli/gtrace"
synth="$build/bench/bench_report"
sizes=${SIZES:-1000000 10000000}
rounds=${ROUNDS:-3}
hta_max=${HTA_MAX_EVENTS:-10000000}
for f in "$gtrace" "$synth"; do
    [ -x "$f" ] || { echo "missing $f: build it first" >&2; exit 1; }
done
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/bench-side.XXXXXX")}
mkdir -p "$work"

venv="${TMPDIR:-/tmp}/gtrace-bench-hta"
if [ ! -e "$venv/.complete" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --disable-pip-version-check -q --no-deps holistictraceanalysis==0.5.0
    "$venv/bin/python" -m pip install --disable-pip-version-check -q pandas==2.2.3 numpy==2.2.6 plotly==6.3.1 \
        networkx==3.6.1 psutil==7.1.3 PyYAML==6.0.3
    touch "$venv/.complete"
fi
hta_version=$("$venv/bin/python" -m pip show holistictraceanalysis 2>/dev/null | sed -n 's/^Version: //p')

echo "machine: $(getconf _NPROCESSORS_ONLN) cores, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/^Mem:/ {print $2}') GiB"
echo "gtrace $("$gtrace" --version 2>/dev/null | head -n 1), HTA $hta_version, $("$venv/bin/python" --version)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# timed NAME CMD...: one run; appends "wall cpu rss_kb" to $work/NAME.times
timed() {
    name=$1; shift
    /usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" "$@" > "$work/$name.out" 2> "$work/$name.err" ||
        { cat "$work/$name.err"; echo "$name failed" >&2; exit 1; }
    awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$work/time.txt" >> "$work/$name.times"
}
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
col() { awk -v c="$2" '{print $c}' "$work/$1.times" | median; }

for n in $sizes; do
    trace="$work/synthetic-$n.sqlite"
    [ -s "$trace" ] || "$synth" -n "$n" -f "$trace" --runs 1 --gtrace "$gtrace" > "$work/synth-$n.log" 2>&1 ||
        { cat "$work/synth-$n.log"; exit 1; }
    if [ "$n" -le "$hta_max" ] && [ ! -d "$work/chrome-$n" ]; then
        "$gtrace" export "$trace" --format chrome -o "$work/chrome-$n.tmp/" > /dev/null
        mv "$work/chrome-$n.tmp" "$work/chrome-$n"
    fi
    rm -f "$work"/*-"$n".times
    tools="report-$n full-$n"
    [ "$n" -le "$hta_max" ] && tools="$tools hta-$n"
    for r in $(seq "$rounds"); do
        # an order that turns each round, so drifting load falls on all alike
        set -- $tools
        case $(( r % 3 )) in
            1) order="$*" ;;
            2) order="$(echo "$*" | awk '{for (i = 2; i <= NF; i++) printf "%s ", $i; print $1}')" ;;
            0) order="$(echo "$*" | awk '{for (i = NF; i >= 1; i--) printf "%s ", $i; print ""}')" ;;
        esac
        for t in $order; do
            case $t in
                report-*) timed "$t" "$gtrace" report "$trace" ;;
                full-*) timed "$t" "$gtrace" report --no-summary "$trace" ;;
                hta-*) timed "$t" env HTA_DISABLE_NS_ROUNDING=1 "$venv/bin/python" "$src/bench_side_by_side_hta.py" "$work/chrome-$n" ;;
            esac
        done
    done
    mb=$(du -m "$trace" | cut -f1)
    json=""
    [ -d "$work/chrome-$n" ] && json=", its Chrome export $(du -sm "$work/chrome-$n" | cut -f1) MB"
    echo
    echo "$n events: the trace $mb MB$json; medians of $rounds alternated rounds"
    printf '  %-34s %9s %9s %11s %9s\n' tool "wall s" "CPU s" "peak RSS" "wall/gtrace"
    base=$(col "report-$n" 1)
    for t in $tools; do
        case $t in
            report-*) label="gtrace report (kept summary)" ;;
            full-*) label="gtrace report --no-summary" ;;
            hta-*) label="HTA temporal + kernel breakdown" ;;
        esac
        w=$(col "$t" 1) c=$(col "$t" 2) m=$(col "$t" 3)
        printf '  %-34s %9.2f %9.2f %8.0f MB %9.1fx\n' "$label" "$w" "$c" "$((m / 1024))" \
            "$(awk -v a="$w" -v b="$base" 'BEGIN {print (b > 0) ? a / b : 0}')"
    done
    [ -s "$work/hta-$n.out" ] && echo "  $(cat "$work/hta-$n.out")"
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "traces kept in $work"
