#!/bin/sh
# diff_verdicts.sh: gtrace diff's verdicts on traces of samples/nvtx_steps, a
# loop whose step time is set (slept, so a loaded machine moves it little,
# with a +-2% jitter between steps and a warm-up step 0 three times longer):
#   - A/A (the same command twice, other jitter): step time and every op the same;
#   - A/B, "forward" 30% of the step longer: step time and forward worse,
#     backward the same; B/A: better;
#   - warm-up step 0 named and left out, kept with --keep-warmup;
#   - several runs a side (A1 A2 -- B1 B2) still say worse;
#   - three runs a side, 23% faster after, one run after slowed from first
#     step to last (+46% over before, as beside another program): that run
#     is named and left out, the fastest steps (step time p10) are better;
#     --keep-busy keeps it (the median's verdict is not checked: on a loaded
#     machine the medians of sleeping steps move a lot from run to run);
#     the runs' scheduler's account set (each ran 1 s on a CPU): the slowed
#     run, waiting for a CPU 23% of its time against 1%, is left out with
#     that evidence; waiting 1.2%, it slept longer, not beside another
#     program, and is kept;
#   - 4 steps a side (3 after the warm-up): too few steps, no verdict;
#   - text and --json give the same verdicts; --noise-floor 50 makes +30% the same.
. "$GT_TOP_SRCDIR/tests/integration/capture_common.sh"
STEPS="$SAMPLES/nvtx_steps"
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 is needed"; exit 77; }

# expect_fail WHAT STATUS PATTERN CMD...: CMD exits with STATUS and says PATTERN on stderr
expect_fail() {
    what=$1 want=$2 pattern=$3; shift 3
    "$@" > out.txt 2> err.txt && fail "$what: succeeded"
    got=$?
    [ "$got" = "$want" ] || fail "$what: exit status $got, expected $want ($(cat err.txt))"
    grep -q -- "$pattern" err.txt || fail "$what: stderr lacks '$pattern': $(cat err.txt)"
    echo "ok: $what -> $got: $(head -n 1 err.txt)"
}

rec() { # rec OUT STEPS EXTRA_PCT SEED
    "$GTRACE" -o "$1" "$STEPS" "$2" 3000 "$3" "$4" > out.txt 2> err.txt || fail "recording $1: $(cat err.txt)"
}
rec a1.sqlite 24 0 1
rec a2.sqlite 24 0 2
rec b1.sqlite 24 30 3
rec b2.sqlite 24 30 4
rec short.sqlite 4 0 5
rec b3.sqlite 24 30 6
rec slowed.sqlite 24 90 7
# sched TRACE [WAIT_NS]: the scheduler's account of its processes, as if each
# ran 1 s on a CPU and waited WAIT_NS for one; none without WAIT_NS. Sleeping
# steps give an account of no time, so the busy rule is tested on set ones.
sched() {
    q "$1" "DELETE FROM GTRACE_RUN_CONFIG WHERE key LIKE 'sched.%'" || fail "sched $1"
    [ $# -lt 2 ] || q "$1" "INSERT INTO GTRACE_RUN_CONFIG SELECT globalPid, 'sched.run_ns', '1000000000' FROM PROCESSES;
        INSERT INTO GTRACE_RUN_CONFIG SELECT globalPid, 'sched.wait_ns', '$2' FROM PROCESSES" || fail "sched $1"
}
for t in a1 a2 b1 b2 b3 slowed; do sched $t.sqlite; done

# verdict JSON METRIC: the verdict of a row of a diff --json
verdict() {
    python3 -c 'import json,sys; r={x["metric"]: x for x in json.load(open(sys.argv[1]))["rows"]}; print(r[sys.argv[2]]["verdict"])' "$1" "$2"
}
# text_verdict TEXT METRIC: the last words of a row of the text diff
text_verdict() {
    grep "^$2 " "$1" | sed 's/.*\] *//; s/.*%  *//'
}

"$GTRACE" diff --json a1.sqlite a2.sqlite > aa.json || fail "diff A/A"
"$GTRACE" diff a1.sqlite a2.sqlite > aa.txt || fail "diff A/A text"
for m in "step time median" "step time mean" "CPU op time per step: forward" "CPU op time per step: backward"; do
    expect_eq "A/A $m" same "$(verdict aa.json "$m")"
    expect_eq "A/A $m (text)" same "$(text_verdict aa.txt "$m")"
done
python3 - aa.json <<'PY' || fail "A/A rows that are not the same"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
bad = [r for r in rows if r["verdict"] not in ("same", "too few runs")]
assert not bad, bad
st = [r for r in rows if r["metric"] == "step time median"][0]
# (its interval may leave out 0: a 95% interval does so once in 20 A/A
# pairs, and a small steady difference between two runs is real; the
# noise floor keeps the verdict "same")
print("ok: A/A: %d rows, none better or worse; step time %+.1f%% in [%+.1f%%, %+.1f%%]"
      % (len(rows), 100 * st["change"], 100 * st["interval"][0], 100 * st["interval"][1]))
PY

"$GTRACE" diff --json a1.sqlite b1.sqlite > ab.json || fail "diff A/B"
"$GTRACE" diff a1.sqlite b1.sqlite > ab.txt || fail "diff A/B text"
expect_eq "A/B step time median" worse "$(verdict ab.json "step time median")"
expect_eq "A/B step time median (text)" worse "$(text_verdict ab.txt "step time median")"
expect_eq "A/B forward" worse "$(verdict ab.json "CPU op time per step: forward")"
expect_eq "A/B backward" same "$(verdict ab.json "CPU op time per step: backward")"
"$GTRACE" diff --json b1.sqlite a1.sqlite > ba.json || fail "diff B/A"
expect_eq "B/A step time median" better "$(verdict ba.json "step time median")"
expect_eq "B/A forward" better "$(verdict ba.json "CPU op time per step: forward")"
grep -Eq "warm-up left out: steps? 0[-)]" ab.txt || fail "the warm-up step is not named: $(head -n 4 ab.txt)"

"$GTRACE" diff --keep-warmup --json a1.sqlite a2.sqlite > keep.json || fail "diff --keep-warmup"
python3 - keep.json aa.json <<'PY' || fail "--keep-warmup"
import json, sys
k, d = (json.load(open(p)) for p in sys.argv[1:3])
assert all(r["warmup_steps"] == [] for r in k["runs"]), k["runs"]
# step 0 (3 steps long) is warm-up; a slow step right after it on a loaded machine may be too
assert all(r["warmup_steps"][0] == 0 for r in d["runs"]), d["runs"]
left = [24 - (r["warmup_steps"][1] + 1) for r in d["runs"]]
km = {r["metric"]: r for r in k["rows"]}["step time mean"]
dm = {r["metric"]: r for r in d["rows"]}["step time mean"]
# kept, step 0 raises the mean by about 2/24
assert km["samples"] == [24, 24] and dm["samples"] == left, (km, dm, left)
assert km["before"] > dm["before"] * 1.05, (km, dm)
print("ok: --keep-warmup: 24 samples a side, mean %.3f ms (warm-up left out: %.3f ms)" % (km["before"] / 1e6, dm["before"] / 1e6))
PY

"$GTRACE" diff --json a1.sqlite a2.sqlite -- b1.sqlite b2.sqlite > runs.json || fail "diff A1 A2 -- B1 B2"
expect_eq "2+2 runs step time median" worse "$(verdict runs.json "step time median")"
expect_eq "2+2 runs: runs listed" 4 "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["runs"]))' runs.json)"
"$GTRACE" diff --json a1.sqlite -- a2.sqlite b1.sqlite > mixed.json || fail "diff A1 -- A2 B1"
echo "ok: A1 -- A2 B1: step time $(verdict mixed.json "step time median") (one run of each after)"

"$GTRACE" diff --json b1.sqlite b2.sqlite b3.sqlite -- slowed.sqlite a1.sqlite a2.sqlite > busy.json ||
    fail "diff with a slowed run"
"$GTRACE" diff b1.sqlite b2.sqlite b3.sqlite -- slowed.sqlite a1.sqlite a2.sqlite > busy.txt || fail "diff text"
expect_eq "a slowed run left out: step time p10" better "$(verdict busy.json "step time p10")"
expect_eq "a slowed run left out (text)" better "$(text_verdict busy.txt "step time p10")"
grep -q "slowed.sqlite (24 steps; warm-up left out: step.*; left out: a busier machine, its fastest steps" busy.txt ||
    fail "the slowed run is not named: $(head -n 8 busy.txt)"
python3 - busy.json <<'PY' || fail "runs left out"
import json, sys
d = json.load(open(sys.argv[1]))
runs = {r["path"]: r for r in d["runs"]}
# a loaded machine may slow another run too; never the fastest of a side, never a side's only run
assert runs["slowed.sqlite"]["busy"] and runs["slowed.sqlite"]["fast_steps_slower"] > 0.3, d["runs"]
assert not all(runs[p]["busy"] for p in ("slowed.sqlite", "a1.sqlite", "a2.sqlite")), d["runs"]
assert not all(runs[p]["busy"] for p in ("b1.sqlite", "b2.sqlite", "b3.sqlite")), d["runs"]
kept = lambda side: sum(24 - (r["warmup_steps"][1] + 1 if r["warmup_steps"] else 0)
                        for r in d["runs"] if r["side"] == side and not r["busy"])
st = {r["metric"]: r for r in d["rows"]}["step time p10"]
assert st["samples"] == [kept("before"), kept("after")], (st, d["runs"])  # the steps of the runs kept
print("ok: slowed.sqlite left out (its fastest steps %+.0f%%); step time p10 %+.1f%% in [%+.1f%%, %+.1f%%]"
      % (100 * runs["slowed.sqlite"]["fast_steps_slower"], 100 * st["change"], 100 * st["interval"][0],
         100 * st["interval"][1]))
PY
"$GTRACE" diff --keep-busy --json b1.sqlite b2.sqlite b3.sqlite -- slowed.sqlite a1.sqlite a2.sqlite > kept.json ||
    fail "diff --keep-busy"
python3 - kept.json <<'PY' || fail "--keep-busy"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["keep_busy"] and not any(r["busy"] for r in d["runs"]), d["runs"]
kept = lambda side: sum(24 - (r["warmup_steps"][1] + 1 if r["warmup_steps"] else 0)
                        for r in d["runs"] if r["side"] == side)
st = {r["metric"]: r for r in d["rows"]}["step time p10"]
assert st["samples"] == [kept("before"), kept("after")], (st, d["runs"])
print("ok: --keep-busy: every run's steps, %d a side" % st["samples"][0])
PY

for t in a1 a2 b1 b2 b3; do sched $t.sqlite 10000000; done
sched slowed.sqlite 300000000
"$GTRACE" diff b1.sqlite b2.sqlite b3.sqlite -- slowed.sqlite a1.sqlite a2.sqlite > waited.txt || fail "diff, waited"
grep -q "slowed.sqlite (24 steps; .*; left out: a busier machine, its fastest steps .*, waited for a CPU 23.1% of its time, against 1.0% for the side's fastest run)" waited.txt ||
    fail "the slowed run's evidence: $(head -n 8 waited.txt)"
echo "ok: $(grep slowed.sqlite waited.txt)"
sched slowed.sqlite 12000000
"$GTRACE" diff --json b1.sqlite b2.sqlite b3.sqlite -- slowed.sqlite a1.sqlite a2.sqlite > slept.json || fail "diff, slept"
python3 - slept.json <<'PY' || fail "a slower run that did not wait"
import json, sys
d = json.load(open(sys.argv[1]))
runs = {r["path"]: r for r in d["runs"]}
s = runs["slowed.sqlite"]
assert not s["busy"] and s["fast_steps_slower"] > 0.3 and abs(s["cpu_wait_share"] - 12 / 1012) < 1e-6, s
assert not any(r["busy"] for r in d["runs"]), d["runs"]
print("ok: slowed.sqlite kept: %+.0f%% slower, waited %.1f%% against %.1f%%"
      % (100 * s["fast_steps_slower"], 100 * s["cpu_wait_share"], 100 * s["fastest_cpu_wait_share"]))
PY

"$GTRACE" diff --json short.sqlite b1.sqlite > short.json || fail "diff of a short run"
expect_eq "3 steps after warm-up" "too few steps" "$(verdict short.json "step time median")"
"$GTRACE" diff short.sqlite b1.sqlite | grep -q "^step time median .*too few steps$" || fail "text: too few steps"

"$GTRACE" diff --noise-floor 50 --json a1.sqlite b1.sqlite > floor.json || fail "diff --noise-floor 50"
expect_eq "+30% under a 50% floor" same "$(verdict floor.json "step time median")"
expect_fail "bad noise floor" 2 "noise-floor" "$GTRACE" diff --noise-floor much a1.sqlite b1.sqlite
expect_fail "nothing after --" 2 "two traces" "$GTRACE" diff a1.sqlite --
# The trainer's default run (start-up before step 0, a slow step 0, then busy steps): the report's
# utilization advice looks at the steps after the warm-up, so it stays silent.
TRAINER="$GT_TOP_BUILDDIR/trainer/trainer"
if [ -x "$TRAINER" ]; then
    OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive "$GTRACE" -o t.sqlite "$TRAINER" --model gpt-tiny --steps 100 \
        > out.txt 2> err.txt || fail "tracing the trainer: $(tail -n 3 err.txt)"
    "$GTRACE" report --json t.sqlite > t.json || fail "report on the trainer's trace"
    python3 - t.json <<'PY' || fail "utilization advice on the trainer's default run"
import json, sys
r = json.load(open(sys.argv[1]))
u = [a for a in r["advice"] if a["rule"] == "gpu_time_util"][0]
assert not u["fired"], u
print("ok: the trainer's default run: no utilization advice (%d steps)" % len(r["steps"]))
PY
fi
echo "all diff_verdicts checks passed"
