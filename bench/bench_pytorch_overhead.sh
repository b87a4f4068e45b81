#!/bin/sh
# bench_pytorch_overhead.sh BUILDDIR [ROUNDS] [PYTHON...]: what the --pytorch
# hooks cost, measured in one process with the hooks off and on between
# rounds (bench_pytorch_overhead.py): the price of one module call (forward
# and backward with its backward range and without one; forward only) and
# the step of a 26-module MLP (6 to 11 ms on one idle core; WIDTH below)
# with steps,modules (backward ranges on one step in 25, the default), with
# backward ranges on every step, each phase of a step (steps,modules), with
# steps,modules,ops, and under an empty dispatch mode (what any costs: the
# floor under ops). Each round
# runs every PYTHON (default /usr/bin/python3) under gtrace without
# --pytorch, for each copy of the hooks in HOOKS (default: this tree's
# libtrace/python; name two, "OLD NEW", to compare versions round by round).
# PAIRS (default 400) pairs of steps a step figure, a quarter of that with ops
# (through ITT on torch 2.x and the RecordFunction callback on 1.13, as
# --pytorch does; GTRACE_TORCH_OPS=dispatch: the dispatch mode); WIDTH (default 256) the MLP's layer width, for the
# step time wanted.
# Prints every figure and the load; asserts nothing.
# OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive on every run.
set -eu
B=${1:?usage: bench_pytorch_overhead.sh BUILDDIR [ROUNDS] [PYTHON...]}
ROUNDS=${2:-3}
PAIRS=${PAIRS:-400}  # steps off and on a figure (a step's own spread is 5-10%: 400 pairs for 0.5%)
shift
[ $# -gt 0 ] && shift
PYS=${*:-/usr/bin/python3}
TOP="$(cd "$(dirname "$0")/.." && pwd)"
HOOKS=${HOOKS:-"$TOP/libtrace/python"}
G="$B/libtrace/cli/gtrace"
L="$B/libtrace/nvtxlib/.libs/libgtrace-nvtx.so"
S="$TOP/bench/bench_pytorch_overhead.py"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
# The C wrapper of module calls (libtrace/python/fast.c), as gtrace --pytorch
# passes it, when BUILDDIR has one (GTRACE_TORCH_FAST=none: the Python one).
F="$B/libtrace/python/.libs/_gtrace_fast.so"
if [ -z "${GTRACE_TORCH_FAST:-}" ] && [ -f "$F" ]; then
    GTRACE_TORCH_FAST=$F
    GTRACE_TORCH_FAST_SUFFIX=$(sed -n 's/^#define GT_PYTHON_EXT_SUFFIX "\(.*\)"$/\1/p' "$B/config.h")
    export GTRACE_TORCH_FAST GTRACE_TORCH_FAST_SUFFIX
fi
# Ops through torch's ITT profiler where it has one (2.x), as gtrace
# --pytorch=...,ops sets it up: libgtrace.so the ITT collector
# (GTRACE_TORCH_OPS=dispatch: the dispatch mode; hooks without itt.py use it).
C="$B/libtrace/capture/.libs/libgtrace.so"
if [ -z "${INTEL_LIBITTNOTIFY64:-}" ] && [ -f "$C" ]; then
    INTEL_LIBITTNOTIFY64=$C
    GTRACE_ITT_LIB=$C
    export INTEL_LIBITTNOTIFY64 GTRACE_ITT_LIB
fi
# On a torch without ITT (Debian's 1.13): the RecordFunction callback
# (record_ops.cpp), as gtrace --pytorch=...,ops passes it, when BUILDDIR has one.
R="$B/libtrace/python/.libs/_gtrace_torch_ops.so"
if [ -z "${GTRACE_TORCH_OPS_LIB:-}" ] && [ -f "$R" ]; then
    GTRACE_TORCH_OPS_LIB=$R
    GTRACE_TORCH_CPU_LIB=$(sed -n 's/^#define GT_TORCH_CPU_LIB "\(.*\)"$/\1/p' "$B/config.h")
    export GTRACE_TORCH_OPS_LIB GTRACE_TORCH_CPU_LIB
fi
echo "machine: $(getconf _NPROCESSORS_ONLN) cores, $(uname -sr), $(date -u +%Y-%m-%dT%H:%MZ), MLP width ${WIDTH:-256}"
echo "C module wrapper: ${GTRACE_TORCH_FAST:-none}"
echo "ITT collector: ${GTRACE_ITT_LIB:-none}, RecordFunction callback: ${GTRACE_TORCH_OPS_LIB:-none}, ops: ${GTRACE_TORCH_OPS:-itt or the callback where torch has them}"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for py in $PYS; do
        echo "round $r, $py, load $(cut -d' ' -f1 /proc/loadavg)"
        "$G" -o "$W/t.sqlite" --force "$py" "$S" step - "$L" floor $((PAIRS / 4)) 2>/dev/null | \
            sed -n 's/^step/step, an empty dispatch mode (the floor under ops):/p'
        for h in $HOOKS; do
            echo "round $r, $py, hooks $h, load $(cut -d' ' -f1 /proc/loadavg)"
            "$G" -o "$W/t.sqlite" --force "$py" "$S" calls "$h" "$L" steps,modules,backward-every=1 20 \
                2>/dev/null | sed -n 's/^calls/calls, backward ranges:/p'
            "$G" -o "$W/t.sqlite" --force "$py" "$S" calls "$h" "$L" steps,modules,backward-every=0 20 \
                2>/dev/null | sed -n 's/^calls forward+backward/calls, no backward ranges: forward+backward/p'
            for f in steps,modules steps,modules,backward-every=1; do
                "$G" -o "$W/t.sqlite" --force "$py" "$S" step "$h" "$L" $f "$PAIRS" 2>/dev/null | sed -n "s/^step/step $f/p"
            done
            "$G" -o "$W/t.sqlite" --force "$py" "$S" phases "$h" "$L" steps,modules "$PAIRS" 2>/dev/null | grep '^phases'
            "$G" -o "$W/t.sqlite" --force "$py" "$S" step "$h" "$L" steps,modules,ops $((PAIRS / 4)) 2>/dev/null | \
                sed -n 's/^step/step steps,modules,ops/p'
        done
    done
    r=$((r + 1))
done
