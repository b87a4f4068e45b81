#!/bin/sh
# pytorch_itt.sh: on PyTorch 2.x, `gtrace --pytorch=...,ops` names the ops
# through torch's ITT profiler and gtrace's ITT collector (libgtrace.so as
# INTEL_LIBITTNOTIFY64; libtrace/capture/itt.c), not the dispatch mode
# (PyTorch 2.5.1 from PyPI, pinned, in the throwaway environment
# pytorch_compile.sh uses; pytorch_itt.py: a small deterministic model, 6
# steps, step 4 under the program's own torch.profiler.profile()):
#   - the program's output, its losses bit for bit and what its own
#     profiler recorded (its raw events, the op names key_averages
#     lists), are those of the run without gtrace: gtrace's profiler
#     steps aside while the program's runs;
#   - the op ranges are RecordFunction's: autograd nodes (AddmmBackward0) and
#     composite ops (aten::linear), which the dispatch mode never sees;
#   - they nest: aten::linear inside its Linear module's range, each
#     AddmmBackward0 inside a module's backward range;
#   - in steps 1 to 3 the op names and counts are those torch's profiler
#     recorded for step 4, less the phases gtrace marks itself (the autograd
#     engine's evaluate_function, Optimizer.step#, Optimizer.zero_grad#);
#   - step 4 (the program profiling) has no op ranges of gtrace's but the
#     one before the profile begins;
#   - GTRACE_TORCH_OPS=dispatch: the dispatch mode names them (no autograd
#     node, no aten::linear), the output unchanged.
# Skips (77) when pip cannot reach the package index (or without python3-venv).
. "$GT_TOP_SRCDIR/tests/integration/capture_common.sh"
CAPTURE_WORK=$WORK
INTEROP_NAME=pytorch-itt
. "$GT_TOP_SRCDIR/tests/integration/interop_common.sh"
rmdir "$WORK" 2>/dev/null || rm -rf "$WORK"
WORK=$CAPTURE_WORK
SCRIPT="$GT_TOP_SRCDIR/tests/integration/pytorch_itt.py"
. "$GT_TOP_SRCDIR/tests/integration/pytorch_ops_common.sh"

pinned_venv torch "" "$TORCH2_PINS"
PY="$VENV/bin/python"
OMP_NUM_THREADS=1
export OMP_NUM_THREADS
count_of() { nvtx_count "$1" "$2" 59; }
field_losses() { "$PY" -c "import json, sys; print(json.load(open(sys.argv[1]))['losses'])" "$1"; }

"$PY" "$SCRIPT" > plain.json 2> err.txt || fail "without gtrace: $(cat err.txt)"
"$GTRACE" --pytorch=steps,modules,ops -o ops.sqlite "$PY" "$SCRIPT" > traced.json 2> err.txt ||
    fail "--pytorch=steps,modules,ops: the program failed: $(cat err.txt)"
grep -q "annotations are off" err.txt && fail "the hooks were not installed: $(cat err.txt)"
cmp -s plain.json traced.json || fail "the output differs from the run without gtrace: $(cat traced.json)"
echo "ok: the output (losses, the program's own profile) as without gtrace"
grep -q "Warning" err.txt && fail "torch warned under gtrace: $(cat err.txt)"

expect_eq "AddmmBackward0 ranges (ITT: autograd nodes; 3 Linear, 5 steps traced)" 15 \
    "$(count_of ops.sqlite AddmmBackward0)"
expect_eq "aten::linear ranges (ITT: composite ops)" 15 "$(count_of ops.sqlite aten::linear)"
expect_eq "op ranges in their own domain, category 1 named compute" 1 "$(q ops.sqlite "SELECT count(DISTINCT n.domainId)
    FROM NVTX_EVENTS n WHERE n.eventType = 59 AND n.category = 1 AND EXISTS (SELECT 1 FROM NVTX_EVENTS c
      WHERE c.eventType = 33 AND c.domainId = n.domainId AND c.category = 1 AND $(name_of c) = 'compute')")"
expect_eq "aten::linear inside a Linear module (0, 2, 4)" 15 "$(inside_module ops.sqlite aten::linear "IN ('0', '2', '4')")"
expect_eq "AddmmBackward0 inside a module's backward" 15 "$(inside_module ops.sqlite AddmmBackward0 "GLOB '[024] backward'")"

# the op names and counts of a step, against what torch's profiler recorded
torch_ops plain.json > torch.txt
[ "$(wc -l < torch.txt)" -gt 20 ] || fail "torch's profiler recorded too few ops: $(cat torch.txt)"
for s in 1 2 3; do
    ops_of_step ops.sqlite $s > step$s.txt
    diff torch.txt step$s.txt > d.txt || fail "step $s: the ops differ from torch's profiler's: $(cat d.txt)"
    echo "ok: step $s: $(wc -l < step$s.txt) op names, the counts torch's profiler recorded"
done
# step 4: only step 3's loss.detach(), which comes after its optimizer step
expect_eq "op ranges in step 4 (the program's profile: none of its ops)" "aten::detach|1 detach|1" \
    "$(ops_of_step ops.sqlite 4 | tr '\n' ' ' | sed 's/ $//')"

GTRACE_TORCH_OPS=dispatch "$GTRACE" --pytorch=steps,modules,ops -o dispatch.sqlite "$PY" "$SCRIPT" \
    > dispatch.json 2> err.txt || fail "GTRACE_TORCH_OPS=dispatch: the program failed: $(cat err.txt)"
expect_eq "dispatch mode: the losses as without gtrace" "$(field_losses plain.json)" "$(field_losses dispatch.json)"
expect_eq "dispatch mode: no autograd node ranges" 0 "$(count_of dispatch.sqlite AddmmBackward0)"
expect_eq "dispatch mode: aten::addmm ranges (3 Linear, 6 steps)" 18 "$(count_of dispatch.sqlite aten::addmm)"
echo "PASS"
