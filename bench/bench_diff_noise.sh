#!/bin/sh
# bench_diff_noise.sh: how often gtrace diff calls noise a change, and how
# often it finds a real one, on the trainer under whatever load the machine
# has. PAIRS times: traced runs of the trainer, RUNS of each side, in an
# order that turns each time (A, A', B; then A', B, A; then B, A, A'), so
# drifting load falls on every side alike: A and A' the same command, B the
# same with a known change (B_FLAGS). Then per round
#   gtrace diff A.. -- A'..  (A/A): the step time verdicts (p10 and median) and every CPU op's;
#   gtrace diff A.. -- B..   (A/B): the step time verdicts and changes;
# and the runs left out as busy. It prints every round, then the counts:
# A/A step-time verdicts that are not "same", A/A per-op verdicts that are
# not "same", A/B verdicts in the right direction; beside them what the old
# rule (any change over 1% of the medians) would have said on the same
# traces. Not part of make check: it prints figures, it asserts nothing.
#
#   bench/bench_diff_noise.sh [BUILD_DIR]   (default: the current directory)
#
# Environment (defaults in brackets):
#   PAIRS     rounds [20]
#   RUNS      runs of each side per round [1]
#   STEPS     steps per run [60]
#   THREADS   the trainer's --threads [2]
#   B_FLAGS   the change of B [--seq 58: 9% fewer tokens a step]
#   EXPECT    the right verdict of A/B [better]
set -eu
build=$(cd "${1:-.}" && pwd)
gtrace="$build/libtrace/cli/gtrace"
trainer="$build/trainer/trainer"
pairs=${PAIRS:-20}
runs=${RUNS:-1}
steps=${STEPS:-60}
threads=${THREADS:-2}
b_flags=${B_FLAGS:---seq 58}
expect=${EXPECT:-better}
for f in "$gtrace" "$trainer"; do
    [ -x "$f" ] || { echo "missing $f: build it first" >&2; exit 1; }
done
command -v python3 > /dev/null || { echo "python3 is needed" >&2; exit 1; }
export OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=passive
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-diff.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "machine: $(getconf _NPROCESSORS_ONLN) cores, $(lscpu | sed -n 's/^Model name: *//p')"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: trainer --model gpt-tiny --steps $steps --threads $threads [B: $b_flags], $pairs rounds of $runs run(s) a side"

run() { # run OUT FLAGS...
    out=$1
    shift
    # shellcheck disable=SC2086
    "$gtrace" -o "$out" "$trainer" --model gpt-tiny --steps "$steps" --threads "$threads" "$@" > /dev/null 2>&1 ||
        { echo "a traced run failed: $out" >&2; exit 1; }
}
i=1
while [ "$i" -le "$pairs" ]; do
    k=1
    while [ "$k" -le "$runs" ]; do
        case $(((i + k) % 3)) in
        1) run "$work/a$i.$k.sqlite"; run "$work/c$i.$k.sqlite"; run "$work/b$i.$k.sqlite" $b_flags ;;
        2) run "$work/c$i.$k.sqlite"; run "$work/b$i.$k.sqlite" $b_flags; run "$work/a$i.$k.sqlite" ;;
        0) run "$work/b$i.$k.sqlite" $b_flags; run "$work/a$i.$k.sqlite"; run "$work/c$i.$k.sqlite" ;;
        esac
        k=$((k + 1))
    done
    # shellcheck disable=SC2046
    "$gtrace" diff --json $(ls "$work"/a$i.*.sqlite) -- $(ls "$work"/c$i.*.sqlite) > "$work/aa$i.json"
    # shellcheck disable=SC2046
    "$gtrace" diff --json $(ls "$work"/a$i.*.sqlite) -- $(ls "$work"/b$i.*.sqlite) > "$work/ab$i.json"
    rm -f "$work"/*$i.*.sqlite
    i=$((i + 1))
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work" "$pairs" "$expect" <<'PY'
import json, sys
work, pairs, expect = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def rows(p):
    return {r["metric"]: r for r in json.load(open(p))["rows"]}
def old(r):  # the rule before intervals: a change over 1% of the larger value
    scale = max(abs(r["before"]), abs(r["after"]))
    if scale == 0 or abs(r["after"] - r["before"]) <= 0.01 * scale:
        return "same"
    return "better" if r["after"] < r["before"] else "worse"
def fmt(r):
    iv = r["interval"]
    return "%+6.1f%% [%+6.1f%%, %+6.1f%%] %-6s" % (100 * r["change"], 100 * iv[0], 100 * iv[1], r["verdict"]) if iv \
        else "%+6.1f%% %-22s" % (100 * r["change"], r["verdict"])
def busy(p):
    return sum(r.get("busy", False) for r in json.load(open(p))["runs"])
aa_st = aa_st_old = ab_ok = ab_ok_old = ops = ops_not = ops_old = aa_p10 = ab_p10 = n_busy = n_runs = 0
ab_changes, ab_p10_changes = [], []
print("round  A/A step time p10 | median                                    A/A ops not same   "
      "A/B step time p10 | median                                    busy runs A/A, A/B")
for i in range(1, pairs + 1):
    aa, ab = rows("%s/aa%d.json" % (work, i)), rows("%s/ab%d.json" % (work, i))
    s, b = aa["step time median"], ab["step time median"]
    s10, b10 = aa["step time p10"], ab["step time p10"]
    aa_st += s["verdict"] != "same"
    aa_st_old += old(s) != "same"
    ab_ok += b["verdict"] == expect
    ab_ok_old += old(b) == expect
    aa_p10 += s10["verdict"] != "same"
    ab_p10 += b10["verdict"] == expect
    ab_changes.append(b["change"])
    ab_p10_changes.append(b10["change"])
    nb = (busy("%s/aa%d.json" % (work, i)), busy("%s/ab%d.json" % (work, i)))
    n_busy += sum(nb)
    n_runs += len(json.load(open("%s/aa%d.json" % (work, i)))["runs"]) * 2
    op = [r for m, r in aa.items() if m.startswith("CPU op time per step: ") and r["verdict"] not in ("new", "gone")]
    n_not = sum(r["verdict"] != "same" for r in op)
    ops += len(op)
    ops_not += n_not
    ops_old += sum(old(r) != "same" for r in op)
    print("%5d  %s | %s  %2d of %2d           %s | %s  %d, %d" % (i, fmt(s10), fmt(s), n_not, len(op), fmt(b10), fmt(b),
                                                              nb[0], nb[1]))
ab_changes.sort()
ab_p10_changes.sort()
print()
print("A/A step time p10 verdicts not same:    %d of %d" % (aa_p10, pairs))
print("A/B step time p10 verdicts '%s':     %d of %d; median change %+.1f%%"
      % (expect, ab_p10, pairs, 100 * ab_p10_changes[len(ab_p10_changes) // 2]))
print("runs left out as busy: %d of %d" % (n_busy, n_runs))
print("A/A step time median verdicts not same: %d of %d (old 1%% rule: %d of %d)" % (aa_st, pairs, aa_st_old, pairs))
print("A/A per-op verdicts not same:    %d of %d = %.1f%% (old 1%% rule: %d = %.1f%%)"
      % (ops_not, ops, 100.0 * ops_not / max(ops, 1), ops_old, 100.0 * ops_old / max(ops, 1)))
print("A/B step time median verdicts '%s':  %d of %d (old 1%% rule: %d of %d); median change %+.1f%%"
      % (expect, ab_ok, pairs, ab_ok_old, pairs, 100 * ab_changes[len(ab_changes) // 2]))
# what the diffs said the runs can tell (the "between runs" line), over the A/A rounds
spread = [json.load(open("%s/aa%d.json" % (work, i)))["between_runs"] for i in range(1, pairs + 1)]
spread = [x for x in spread if x]
if spread:
    med = lambda v: sorted(v)[len(v) // 2]
    print("between runs (A/A): spread %.1f%% (sd of ln p10, median of %d rounds), smallest change found %.1f%%, "
          "runs a side for the noise floor %d" % (100 * med([x["step_time_p10_sd"] for x in spread]), len(spread),
                                                 100 * med([x["smallest_change"] for x in spread]),
                                                 med([x["runs_for_noise_floor"] for x in spread])))
PY
