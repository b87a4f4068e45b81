#!/bin/sh
# pytorch_train.sh: `gtrace --pytorch` on a small CNN (pytorch_train.py) that
# knows nothing of gtrace: the report finds exactly the steps it ran, the
# trace names its modules by their qualified names and its phases, `ops`
# makes ATen ops the report's top CPU ops, and two batch sizes compared with
# gtrace diff show their step times.
GT_SAN_TORCH=yes # runs under the sanitizers too (pytorch_common.sh)
. "$GT_TOP_SRCDIR/tests/integration/pytorch_common.sh"

# ---- steps and modules (the default) ---------------------------------------
"$GTRACE" --pytorch -o b32.sqlite "$PY" "$TRAIN" --steps 6 --batch 32 > out.txt 2> err.txt ||
    fail "gtrace --pytorch: $(cat err.txt)"
grep -q "trained 6 steps" out.txt || fail "the program did not run: $(cat out.txt)"
grep -q "annotations are off" err.txt && fail "the hooks were not installed: $(cat err.txt)"
"$GTRACE" report --json b32.sqlite > r32.json || fail "report --json"
expect_eq "steps found by the report" 6 "$(steps_of r32.json)"
for s in 0 1 2 3 4 5; do
    expect_eq "range 'step $s'" 1 "$(count_of b32.sqlite "step $s")"
done
expect_eq "a step after the last optimizer step" 0 "$(count_of b32.sqlite "step 6")"
# Each step: one batch, the model and the loss forward, one backward, one optimizer step.
expect_eq "data ranges" 6 "$(count_of b32.sqlite data)"
expect_eq "backward ranges" 6 "$(count_of b32.sqlite backward)"
expect_eq "optimizer ranges" 6 "$(count_of b32.sqlite optimizer)"
# 6 training steps and one evaluation after them; the loss is a root of its own.
expect_eq "forward ranges" 13 "$(count_of b32.sqlite forward)"
for m in Net features features.0 features.0.conv features.0.norm features.1 features.1.conv features.1.norm head; do
    expect_eq "module '$m'" 7 "$(count_of b32.sqlite "$m")"
done
expect_eq "module CrossEntropyLoss" 6 "$(count_of b32.sqlite CrossEntropyLoss)"
# Nesting: a module's range lies inside its parent's, the phases inside their step.
inside=$(q b32.sqlite "SELECT count(*) FROM NVTX_EVENTS c, NVTX_EVENTS p
    WHERE c.eventType = 59 AND p.eventType = 59
      AND coalesce(c.text, (SELECT value FROM StringIds WHERE id = c.textId)) = 'features.1.conv'
      AND coalesce(p.text, (SELECT value FROM StringIds WHERE id = p.textId)) = 'features.1'
      AND p.start <= c.start AND c.end <= p.\"end\"")
expect_eq "features.1.conv inside features.1" 7 "$inside"
inside=$(q b32.sqlite "SELECT count(*) FROM NVTX_EVENTS c, NVTX_EVENTS p
    WHERE c.eventType = 59 AND p.eventType = 59
      AND coalesce(c.text, (SELECT value FROM StringIds WHERE id = c.textId)) IN ('data', 'backward', 'optimizer')
      AND coalesce(p.text, (SELECT value FROM StringIds WHERE id = p.textId)) LIKE 'step %'
      AND p.start <= c.start AND c.end <= p.\"end\"")
expect_eq "phases inside a step" 18 "$inside"
# Steps tile the loop: each begins where the one before ended.
gaps=$(q b32.sqlite "SELECT count(*) FROM NVTX_EVENTS a, NVTX_EVENTS b
    WHERE coalesce(a.text, (SELECT value FROM StringIds WHERE id = a.textId)) = 'step 2'
      AND coalesce(b.text, (SELECT value FROM StringIds WHERE id = b.textId)) = 'step 3'
      AND b.start >= a.\"end\" AND b.start - a.\"end\" < 1000000")
expect_eq "step 3 starts where step 2 ends" 1 "$gaps"
expect_eq "ATen ops without ops" 0 "$(q b32.sqlite "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59 AND category = 1")"

# ---- batch 64 against batch 32: gtrace diff --------------------------------
"$GTRACE" --pytorch -o b64.sqlite "$PY" "$TRAIN" --steps 6 --batch 64 --images 640 > out.txt 2> err.txt ||
    fail "gtrace --pytorch, batch 64: $(cat err.txt)"
"$GTRACE" report --json b64.sqlite > r64.json || fail "report --json, batch 64"
expect_eq "steps at batch 64" 6 "$(steps_of r64.json)"
# --keep-warmup: every step a sample, so the diff's mean is the report's (6 steps: too few for a verdict)
"$GTRACE" diff --json --keep-warmup b32.sqlite b64.sqlite > diff.json || fail "diff --json"
"$PY" - diff.json r32.json r64.json <<'PY' || fail "the diff does not show the step times"
import json, sys
d = json.load(open(sys.argv[1]))
r32, r64 = (json.load(open(p))["step_time"] for p in sys.argv[2:4])
rows = {r["metric"]: r for r in d["rows"]}
row = rows["step time mean"]
assert abs(row["before"] - r32["mean_ns"]) <= 1e-9 * r32["mean_ns"], (row, r32)
assert abs(row["after"] - r64["mean_ns"]) <= 1e-9 * r64["mean_ns"], (row, r64)
assert row["before"] > 0 and row["after"] > 0, row
assert abs(row["change"] - (row["after"] - row["before"]) / row["before"]) < 1e-4, row
print("ok: step time mean %.3f ms -> %.3f ms (%+.1f%%)" % (row["before"] / 1e6, row["after"] / 1e6, 100 * row["change"]))
PY
"$GTRACE" diff b32.sqlite b64.sqlite > diff.txt || fail "diff"
grep -q "step time mean" diff.txt || fail "diff lacks the step time: $(cat diff.txt)"

# ---- ops: ATen ops in a "compute" category, the report's top CPU ops ----------
"$GTRACE" --pytorch=steps,modules,ops -o ops.sqlite "$PY" "$TRAIN" --steps 3 > out.txt 2> err.txt ||
    fail "gtrace --pytorch=steps,modules,ops: $(cat err.txt)"
# (--top 40: the three ops are among the ten slowest in the plain build, not
# always under the sanitizers, where the small ops slow down most)
"$GTRACE" report --json --top 40 ops.sqlite > rops.json || fail "report --json with ops"
expect_eq "steps with ops" 3 "$(steps_of rops.json)"
"$PY" - rops.json <<'PY' || fail "the report's top ops are not ATen ops"
import json, sys
r = json.load(open(sys.argv[1]))
names = [k["name"] for k in r["kernels"]]
assert r["cpu_timeline"], "no CPU timeline"
# the op the program called (torch 2.x, ITT: what key_averages shows,
# aten::conv2d around aten::convolution), or the dispatch mode's (1.13)
for ops in (("aten::convolution", "aten::conv2d"), ("aten::convolution_backward", "ConvolutionBackward0"),
            ("aten::native_batch_norm", "aten::batch_norm")):
    assert any(op in names for op in ops), (ops, names[:20])
print("ok: top ops:", ", ".join(names[:5]))
PY
"$GTRACE" report ops.sqlite | grep -q "top CPU ops" || fail "the text report lacks its top CPU ops"
# An op is inside the module that ran it.
inside=$(q ops.sqlite "SELECT count(*) FROM NVTX_EVENTS c, NVTX_EVENTS p
    WHERE c.eventType = 59 AND c.category = 1 AND p.eventType = 59
      AND coalesce(c.text, (SELECT value FROM StringIds WHERE id = c.textId)) = 'aten::addmm'
      AND coalesce(p.text, (SELECT value FROM StringIds WHERE id = p.textId)) = 'head'
      AND p.start <= c.start AND c.end <= p.\"end\"")
expect_eq "aten::addmm inside head (3 steps, 1 evaluation)" 4 "$inside"

# ---- shapes: an op's name carries its inputs' shapes --------------------------
"$GTRACE" --pytorch=steps,shapes -o shapes.sqlite "$PY" "$TRAIN" --steps 2 > out.txt 2> err.txt ||
    fail "gtrace --pytorch=steps,shapes: $(cat err.txt)"
expect_eq "aten::addmm of a batch of 32" 2 "$(count_of shapes.sqlite "aten::addmm [10] [32, 784] [784, 10]")"
expect_eq "modules without modules" 0 "$(count_of shapes.sqlite features.0.conv)"
echo "PASS"
