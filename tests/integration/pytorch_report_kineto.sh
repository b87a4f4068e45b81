#!/bin/sh
# pytorch_report_kineto.sh: the steps of an imported torch.profiler trace.
# torch 2.5 with with_stack=True writes ProfilerStep#N ranges of 18-40 us
# while its steps are 15-38 ms apart: such a trace's steps are the spans
# from one ProfilerStep's start to the next one's (the last to the end of
# its work), and the report says so; two such traces of the same work with
# ranges of 25.10 us and 39.49 us have the same step times (diff: "same",
# not "+57.3% WORSE"). The fixtures' ProfilerStep ranges, which cover
# their steps, are the steps as they are. The ops of the import by self
# time, and its DataLoader, autograd and optimizer ranges as phases.
. "$GT_TOP_SRCDIR/tests/integration/capture_common.sh"
PY=$(command -v python3) || { echo "SKIP: no python3"; exit 77; }
MAKE="$GT_TOP_SRCDIR/tests/integration/pytorch_report_kineto.py"
"$PY" "$MAKE" k25.json 25.10 > want.txt || fail "writing the trace"
"$PY" "$MAKE" k39.json 39.49 > want39.txt || fail "writing the second trace"
cmp -s want.txt want39.txt || fail "the two traces do not have the same steps"
for k in k25 k39; do
    "$GTRACE" report $k.json --json > $k.report.json 2> err.txt || fail "report $k.json: $(cat err.txt)"
    "$PY" - $k.report.json want.txt <<'PY' || fail "the steps of $k.json"
import json, sys
r = json.load(open(sys.argv[1]))
want = [tuple(int(v) for v in l.split()) for l in open(sys.argv[2])]
got = [(s["number"], s["start_ns"] - r["start_ns"], s["end_ns"] - r["start_ns"]) for s in r["steps"]]
assert got == want, (got, want)
assert r["steps_note"].startswith("ProfilerStep#N spans"), r["steps_note"]
ops = [(o["name"], o["self_ns"], o["total_ns"]) for o in r["ops"]]
n = len(want)
assert ops[0] == ("aten::mm", n * 5000000, n * 5000000), ops
assert ("aten::linear", n * 500000, n * 5000000) in ops, ops  # less the addmm it called
phases = {p["name"]: p for p in r["phases"]}
assert sorted(phases) == ["backward", "data", "optimizer", "other"], sorted(phases)
assert phases["data"]["total_ns"] == n * 500000 and phases["optimizer"]["total_ns"] == n * 2000000, phases
assert abs(sum(p["share"] for p in r["phases"]) - 1) < 1e-4
print("ok: %d steps from %.0f to %.0f ms, as spans" % (n, got[0][1] / 1e6, got[-1][2] / 1e6))
PY
done
"$GTRACE" report k25.json > report.txt 2>/dev/null || fail "report (text)"
grep -q "^steps          ProfilerStep#N spans: " report.txt || fail "the report does not say how it took the steps: $(head -5 report.txt)"
"$GTRACE" diff --json k25.json k39.json > diff.json 2> err.txt || fail "diff: $(cat err.txt)"
"$PY" - diff.json <<'PY' || fail "diff of the same steps"
import json, sys
rows = {r["metric"]: r for r in json.load(open(sys.argv[1]))["rows"]}
for m in ("step time mean", "step time median", "step time p95"):
    assert rows[m]["verdict"] == "same" and rows[m]["before"] == rows[m]["after"], rows[m]
print("ok: diff says the step time is the same: %.3f ms" % (rows["step time median"]["before"] / 1e6))
PY

# The fixtures: each step its ProfilerStep range, as torch wrote it.
for f in "$GT_FIXTURES"/pytorch/mlp_1rank/*.json.gz "$GT_FIXTURES"/pytorch/ddp_2rank/*.json.gz; do
    "$GTRACE" report "$f" --json > fx.json 2>/dev/null || fail "report $f"
    "$PY" - fx.json "$f" <<'PY' || fail "the steps of $f"
import gzip, json, sys
r = json.load(open(sys.argv[1]))
ev = json.load(gzip.open(sys.argv[2]))["traceEvents"]
want = sorted((int(e["name"].split("#")[1]), round(e["dur"] * 1000)) for e in ev
              if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#"))
got = [(s["number"], s["end_ns"] - s["start_ns"]) for s in r["steps"]]
assert len(got) == len(want) and all(g[0] == w[0] and abs(g[1] - w[1]) <= 1 for g, w in zip(got, want)), (got, want)
assert r["steps_note"] == "", r["steps_note"]
print("ok: %s: %d steps, their ranges" % (sys.argv[2].rsplit("/", 1)[-1], len(got)))
PY
done
echo "all good"
