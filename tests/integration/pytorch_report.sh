#!/bin/sh
# pytorch_report.sh: `gtrace report` on a `gtrace --pytorch=steps,modules,ops`
# trace of pytorch_report.py, which runs torch.profiler over the same steps:
# the report's ops by self time are those of torch's key_averages() sorted
# by self CPU time, its module table has the script's modules, its phase
# table the four phases (and the rest of the step), shares summing to 100%.
#
# The rule held: at least 4 of torch's top 5 ATen ops by self time are in
# the report's top 5, or the op that calls them is. gtrace sees ops at the
# Python dispatch key, so an op that hands its work to another below that key
# is one op to gtrace and two to torch (aten::relu calls aten::clamp_min:
# gtrace's relu is torch's clamp_min); the 5th may be a near tie.
# The self times of an op both name with the same number of calls, measured
# in one run by both: gtrace's at most 10% over torch's (its range lies
# inside torch's event), and under it by at most 25% plus 100 us a call
# (torch's event includes gtrace's dispatch hook, tens of us a call on a
# loaded machine).
# The ops of the dispatch mode: on torch 2.x gtrace names ops through
# torch's ITT profiler, which steps aside while the program's own profiler
# runs (itt.py), so a comparison in one run needs the mode
# (pytorch_itt.sh compares the ITT path with torch's own names).
. "$GT_TOP_SRCDIR/tests/integration/pytorch_common.sh"
GTRACE_TORCH_OPS=dispatch
export GTRACE_TORCH_OPS
STEPS=8
"$GTRACE" --pytorch=steps,modules,ops -o t.sqlite "$PY" "$GT_TOP_SRCDIR/tests/integration/pytorch_report.py" \
    torch.json --steps $STEPS > out.txt 2> err.txt || fail "the traced run: $(cat err.txt)"
"$GTRACE" report t.sqlite --json --steps 0:$((STEPS - 1)) > report.json || fail "report --json"
"$GTRACE" report t.sqlite --steps 0:$((STEPS - 1)) > report.txt || fail "report"
for h in "^phases " "^ops by self time " "^modules "; do
    grep -q "$h" report.txt || fail "no '$h' table in the text report: $(cat report.txt)"
done
"$PY" - report.json torch.json <<'PY' || fail "the report against torch's key_averages"
import json, sys
rep, tor = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ours = rep["ops"][:5]
theirs = [e for e in tor["ops"] if e["name"].startswith("aten::")][:5]
names = set(o["name"] for o in ours)
both = set(e["name"] for e in theirs if e["name"] in names or names & set(tor["callers"].get(e["name"], [])))
print("gtrace top 5 by self time:", ", ".join("%s %.1f ms" % (o["name"], o["self_ns"] / 1e6) for o in ours))
print("torch  top 5 by self time:", ", ".join("%s %.1f ms" % (e["name"], e["self_us"] / 1e3) for e in theirs))
assert len(both) >= 4, "only %d of torch's top 5 found" % len(both)
by_torch = {e["name"]: e for e in theirs}
for o in ours:
    e = by_torch.get(o["name"])
    if e is None or e["count"] != o["n"]:
        continue
    ours_us, torch_us = o["self_ns"] / 1e3, e["self_us"]
    assert torch_us * 0.75 - 100 * e["count"] <= ours_us <= torch_us * 1.10, \
        "%s: self %.0f us, torch %.0f us in %d calls" % (o["name"], ours_us, torch_us, e["count"])
# the ops are self times: never over their totals, and nothing nests at the dispatch key
for o in rep["ops"]:
    assert 0 <= o["self_ns"] <= o["total_ns"], o
mods = {m["name"]: m for m in rep["modules"]}
want = ["Net", "body", "body.0", "body.1", "body.2", "body.3", "head", "CrossEntropyLoss"]
assert sorted(mods) == sorted(want), sorted(mods)
for name in want:
    m = mods[name]
    assert m["forward_calls"] == 8 and m["backward_calls"] == 8, m
    assert 0 <= m["forward_self_ns"] <= m["forward_total_ns"] and 0 <= m["backward_self_ns"] <= m["backward_total_ns"], m
assert abs(sum(m["share"] for m in rep["modules"]) - 1) < 1e-4
# a module's total is its self plus its submodules' totals
for outer, inner in (("Net", ["body", "head"]), ("body", ["body.%d" % i for i in range(4)])):
    for d in ("forward", "backward"):
        got = mods[outer][d + "_total_ns"] - mods[outer][d + "_self_ns"]
        assert got == sum(mods[i][d + "_total_ns"] for i in inner), (outer, d)
phases = {p["name"]: p for p in rep["phases"]}
assert sorted(phases) == sorted(["data", "forward", "backward", "optimizer", "other"]), sorted(phases)
total = sum(p["share"] for p in rep["phases"])
assert abs(total - 1) < 0.001, total
step_ns = sum(s["end_ns"] - s["start_ns"] for s in rep["steps"])
# forward is the outermost module calls: the model's and the loss's forward times
fwd = mods["Net"]["forward_total_ns"] + mods["CrossEntropyLoss"]["forward_total_ns"]
assert fwd <= phases["forward"]["total_ns"] <= fwd * 1.10 + 1e6, (fwd, phases["forward"])
print("phases:", ", ".join("%s %.1f%%" % (p["name"], 100 * p["share"]) for p in rep["phases"]),
      "of %.1f ms" % (step_ns / 1e6))
print("ok: %d of torch's top 5 ops found (%d by name); modules %s" % (len(both), len(names & set(e["name"] for e in theirs)),
                                                       ", ".join(m["name"] for m in rep["modules"])))
PY
echo "all good"
