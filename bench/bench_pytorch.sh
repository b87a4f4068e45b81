#!/bin/sh
# bench_pytorch.sh BUILDDIR [ROUNDS] [PYTHON]: what `gtrace --pytorch` costs a
# CPU training step (bench_pytorch.py: median step time of 40 steps after 5
# warm-up steps, one thread, in wall time and in the process's CPU time, which
# a loaded machine disturbs less). Each round runs, in turn: the program under
# gtrace without --pytorch (the baseline: the same capture library, no
# annotations), under --pytorch (steps,modules: the default) and under
# --pytorch=steps,modules,ops. Prints every round, the medians over rounds and
# each mode's ratio to the baseline. Then the price per module call
# (bench_pytorch.py calls: CPU time of one call of a trivial module, the best
# of 5 batches) without and with --pytorch, alternated the same way: the
# difference is what a module's push and pop cost, which with the number of
# module calls in a step predicts --pytorch's share on any model. Writes
# only scratch traces in a temp dir. Last, the in-process comparison
# (bench_pytorch.py inprocess: the step's CPU time in one process before and
# after the hooks are installed, under gtrace), once a round.
# Then, TOGGLE=1 (the default), the step with the hooks turned off and on
# every other step in one process (bench_pytorch.py toggle, 400 steps), once
# a round, for steps,modules and for no features at all (the control: what
# the method reads when nothing differs).
# MODES="base pytorch" leaves out the ops runs (the default is "base pytorch
# ops"); CALLS=0 leaves out the module calls, INPROCESS=0 and TOGGLE=0 the
# last parts. GTRACE_PYTHON_DIR names another copy of libtrace/python to
# measure (gtrace --pytorch takes it from there too), so two versions of the
# hooks can be compared in alternated runs.
set -eu
B=${1:?usage: bench_pytorch.sh BUILDDIR [ROUNDS] [PYTHON]}
ROUNDS=${2:-7}
PY=${3:-/usr/bin/python3}
G="$B/libtrace/cli/gtrace"
S="$(cd "$(dirname "$0")" && pwd)/bench_pytorch.py"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
MODES=${MODES:-base pytorch ops}
CALLS=${CALLS:-1}
INPROCESS=${INPROCESS:-1}
TOGGLE=${TOGGLE:-1}
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
echo "machine: $(nproc) cores, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "python: $PY, torch $("$PY" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
run() { # MODE: prints the step's wall and CPU time in us
    case $1 in
    base) "$G" -o "$W/t.sqlite" --force "$PY" "$S" 2>/dev/null ;;
    pytorch) "$G" --pytorch -o "$W/t.sqlite" --force "$PY" "$S" 2>/dev/null ;;
    ops) "$G" --pytorch=steps,modules,ops -o "$W/t.sqlite" --force "$PY" "$S" 2>/dev/null ;;
    esac | sed -n 's/^step_us \([0-9.]*\) cpu_us \([0-9.]*\)$/\1 \2/p'
}
for mode in base pytorch ops; do : > "$W/$mode.wall"; : > "$W/$mode.cpu"; done
echo "round  wall/cpu us: $MODES"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    line="$r"
    for mode in $MODES; do
        v=$(run $mode)
        [ -n "$v" ] || { echo "run failed: $mode"; exit 1; }
        echo "${v% *}" >> "$W/$mode.wall"
        echo "${v#* }" >> "$W/$mode.cpu"
        line="$line  ${v% *}/${v#* }"
    done
    echo "$line"
    r=$((r + 1))
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
for kind in wall cpu; do
    b=$(median "$W/base.$kind")
    for mode in $MODES; do
        [ "$mode" = base ] && continue
        m=$(median "$W/$mode.$kind")
        awk -v k="$kind" -v mode="$mode" -v b="$b" -v m="$m" \
            'BEGIN {printf "%s: median base %s us, %s %s us, ratio %.3f (%+.1f%%)\n", k, b, mode, m, m/b, 100*(m/b-1)}'
    done
done
if [ "$CALLS" = 1 ]; then
echo "module call: round  base_ns  pytorch_ns"
: > "$W/cb"; : > "$W/cp"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    # 600,000 ranges a run: a buffer that holds them all (this measures recording, not dropping).
    cb=$(GTRACE_BUFFER_KB=262144 "$G" -o "$W/c.sqlite" --force "$PY" "$S" calls 2>/dev/null | sed -n 's/^call_ns //p')
    cp=$(GTRACE_BUFFER_KB=262144 "$G" --pytorch -o "$W/c.sqlite" --force "$PY" "$S" calls 2>/dev/null | sed -n 's/^call_ns //p')
    [ -n "$cb" ] && [ -n "$cp" ] || { echo "run failed: calls"; exit 1; }
    echo "$cb" >> "$W/cb"; echo "$cp" >> "$W/cp"
    echo "module call: $r  $cb  $cp"
    r=$((r + 1))
done
cb=$(median "$W/cb") cp=$(median "$W/cp")
echo "module call: median base $cb ns, --pytorch $cp ns: $((${cp%.*} - ${cb%.*})) ns a call for its push and pop"
fi
PYDIR=${GTRACE_PYTHON_DIR:-"$(cd "$(dirname "$0")/.." && pwd)/libtrace/python"}
NVTXLIB="$B/libtrace/nvtxlib/.libs/libgtrace-nvtx.so"
echo "hooks from $PYDIR"
if [ "$TOGGLE" = 1 ]; then
echo "toggle: round  features  off_us  on_us  median of the differences"
: > "$W/tp"; : > "$W/tn"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for f in steps,modules none; do
        v=$("$G" -o "$W/g.sqlite" --force "$PY" "$S" toggle "$PYDIR" "$NVTXLIB" $f 400 2>/dev/null | sed -n 's/^toggle_us //p')
        [ -n "$v" ] || { echo "run failed: toggle $f"; exit 1; }
        d=$(echo "$v" | sed -n 's/.*(\([-+0-9.]*\)%).*/\1/p')
        if [ "$f" = none ]; then echo "$d" >> "$W/tn"; else echo "$d" >> "$W/tp"; fi
        echo "toggle: $r  $f  $v"
    done
    r=$((r + 1))
done
echo "toggle: median of the rounds' differences: steps,modules $(median "$W/tp")%, none (control) $(median "$W/tn")%"
fi
[ "$INPROCESS" = 1 ] || exit 0
echo "in-process: round  before_us  after_us"
: > "$W/ib"; : > "$W/ia"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    v=$("$G" -o "$W/i.sqlite" --force "$PY" "$S" inprocess "$PYDIR" "$NVTXLIB" 2>/dev/null | sed -n 's/^inprocess_us //p')
    [ -n "$v" ] || { echo "run failed: inprocess"; exit 1; }
    echo "${v% *}" >> "$W/ib"; echo "${v#* }" >> "$W/ia"
    echo "in-process: $r  ${v% *}  ${v#* }"
    r=$((r + 1))
done
ib=$(median "$W/ib") ia=$(median "$W/ia")
awk -v b="$ib" -v a="$ia" 'BEGIN {printf "in-process: median before %s us, after %s us, ratio %.3f (%+.1f%%)\n", b, a, a/b, 100*(a/b-1)}'
