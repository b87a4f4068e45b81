#!/bin/sh
# bench_diff_sample.sh: gtrace diff's verdicts where the change is known
# exactly: samples/nvtx_steps, a loop whose steps are slept (so the load of
# other programs moves them little), +-2% jitter between steps. PAIRS rounds
# of A, A' (the same, other jitter) and B (EXTRA_PCT% of the step longer),
# in an order that turns each round; then the A/A and A/B verdicts of the
# step time p10 and median and of each op, counted. The statistics alone, without
# the machine's load: bench_diff_noise.sh is the trainer under load. Not
# part of make check: it prints figures, it asserts nothing.
#
#   bench/bench_diff_sample.sh [BUILD_DIR]   (default: the current directory)
#
# Environment: PAIRS [20], STEPS [60], STEP_US [4000], EXTRA_PCT [10].
set -eu
build=$(cd "${1:-.}" && pwd)
gtrace="$build/libtrace/cli/gtrace"
sample="$build/samples/nvtx_steps"
pairs=${PAIRS:-20}
steps=${STEPS:-60}
step_us=${STEP_US:-4000}
extra=${EXTRA_PCT:-10}
for f in "$gtrace" "$sample"; do
    [ -x "$f" ] || { echo "missing $f: build it first (make samples/nvtx_steps)" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-diff-sample.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "machine: $(getconf _NPROCESSORS_ONLN) cores, $(lscpu | sed -n 's/^Model name: *//p'); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: nvtx_steps $steps $step_us [B: +$extra% of the step in forward], $pairs rounds"
run() { "$gtrace" -o "$1" "$sample" "$steps" "$step_us" "$2" "$3" > /dev/null 2>&1 || { echo "run failed" >&2; exit 1; }; }
i=1
while [ "$i" -le "$pairs" ]; do
    case $((i % 3)) in
    1) run "$work/a$i.sqlite" 0 $((3 * i)); run "$work/c$i.sqlite" 0 $((3 * i + 1)); run "$work/b$i.sqlite" "$extra" $((3 * i + 2)) ;;
    2) run "$work/c$i.sqlite" 0 $((3 * i + 1)); run "$work/b$i.sqlite" "$extra" $((3 * i + 2)); run "$work/a$i.sqlite" 0 $((3 * i)) ;;
    0) run "$work/b$i.sqlite" "$extra" $((3 * i + 2)); run "$work/a$i.sqlite" 0 $((3 * i)); run "$work/c$i.sqlite" 0 $((3 * i + 1)) ;;
    esac
    "$gtrace" diff --json "$work/a$i.sqlite" "$work/c$i.sqlite" > "$work/aa$i.json"
    "$gtrace" diff --json "$work/a$i.sqlite" "$work/b$i.sqlite" > "$work/ab$i.json"
    i=$((i + 1))
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work" "$pairs" <<'PY'
import json, sys
work, pairs = sys.argv[1], int(sys.argv[2])
rows = lambda p: {r["metric"]: r for r in json.load(open(p))["rows"]}
aa = ab = ops = ops_not = fwd = aa10 = ab10 = 0
changes = []
for i in range(1, pairs + 1):
    x, y = rows("%s/aa%d.json" % (work, i)), rows("%s/ab%d.json" % (work, i))
    aa += x["step time median"]["verdict"] != "same"
    ab += y["step time median"]["verdict"] == "worse"
    aa10 += x["step time p10"]["verdict"] != "same"
    ab10 += y["step time p10"]["verdict"] == "worse"
    fwd += y["CPU op time per step: forward"]["verdict"] == "worse"
    changes.append(y["step time median"]["change"])
    op = [r for m, r in x.items() if m.startswith("CPU op time per step: ")]
    ops += len(op)
    ops_not += sum(r["verdict"] != "same" for r in op)
changes.sort()
print("A/A step time p10 verdicts not same:    %d of %d" % (aa10, pairs))
print("A/B step time p10 verdicts 'worse':     %d of %d" % (ab10, pairs))
print("A/A step time median verdicts not same: %d of %d" % (aa, pairs))
print("A/A per-op verdicts not same:    %d of %d" % (ops_not, ops))
print("A/B step time median verdicts 'worse':  %d of %d (forward 'worse': %d of %d); median change %+.1f%%"
      % (ab, pairs, fwd, pairs, 100 * changes[len(changes) // 2]))
PY
