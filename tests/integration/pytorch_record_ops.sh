#!/bin/sh
# pytorch_record_ops.sh: on a torch without ITT (Debian's 1.13),
# `gtrace --pytorch=...,ops` names the ops through a global RecordFunction
# callback (_gtrace_torch_ops.so, libtrace/python/record_ops.cpp) built for
# that libtorch, not the dispatch mode (pytorch_itt.py: a small
# deterministic model, 6 steps, step 4 under the program's own
# torch.profiler.profile()):
#   - the program's output, its losses bit for bit and what its own
#     profiler recorded (its raw events, the op names key_averages
#     lists), are those of the run without gtrace;
#   - the op ranges are RecordFunction's: autograd nodes (AddmmBackward0)
#     and composite ops (aten::linear), which the dispatch mode never sees,
#     in their own domain's category "compute", nested in the modules;
#   - in every step, the one the program profiles too (the callback is
#     global, the profiler's are thread-local), the op names and counts are
#     those torch's profiler recorded for step 4, less the phases gtrace
#     marks itself;
#   - the module loads only where the process maps the libtorch it was built
#     for; GTRACE_TORCH_OPS=dispatch and GTRACE_TORCH_OPS_LIB=none give the
#     dispatch mode, the output unchanged; a GTRACE_TORCH_OPS_LIB that does
#     not load is one line on stderr, and the dispatch mode.
# Skips (77) without python3-torch, on a torch with ITT (pytorch_itt.sh),
# and where configure found no libtorch-dev (the module is not built).
. "$GT_TOP_SRCDIR/tests/integration/pytorch_common.sh"
SCRIPT="$GT_TOP_SRCDIR/tests/integration/pytorch_itt.py"
. "$GT_TOP_SRCDIR/tests/integration/pytorch_ops_common.sh"
LIB="$GT_TOP_BUILDDIR/libtrace/python/.libs/_gtrace_torch_ops.so"
[ -f "$LIB" ] || { echo "SKIP: _gtrace_torch_ops.so not built (configure found no libtorch: apt-get install libtorch-dev)"; exit 77; }
"$PY" -c "import torch, sys; sys.exit(0 if torch.profiler.itt.is_available() else 1)" 2>/dev/null &&
    { echo "SKIP: this torch has ITT: its ops come through it (pytorch_itt.sh)"; exit 77; }
field() { "$PY" -c "import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

"$PY" "$SCRIPT" > plain.json 2> err.txt || fail "without gtrace: $(cat err.txt)"
"$GTRACE" --pytorch=steps,modules,ops -o ops.sqlite "$PY" "$SCRIPT" > traced.json 2> err.txt ||
    fail "--pytorch=steps,modules,ops: the program failed: $(cat err.txt)"
grep -q "annotations are off" err.txt && fail "the hooks were not installed: $(cat err.txt)"
cmp -s plain.json traced.json || fail "the output differs from the run without gtrace: $(cat traced.json)"
echo "ok: the output (losses, the program's own profile) as without gtrace"

expect_eq "AddmmBackward0 ranges (autograd nodes; 3 Linear, 6 steps)" 18 "$(count_of ops.sqlite AddmmBackward0)"
expect_eq "aten::linear ranges (composite ops)" 18 "$(count_of ops.sqlite aten::linear)"
expect_eq "op ranges in their own domain, category 1 named compute" 1 "$(q ops.sqlite "SELECT count(DISTINCT n.domainId)
    FROM NVTX_EVENTS n WHERE n.eventType = 59 AND n.category = 1 AND EXISTS (SELECT 1 FROM NVTX_EVENTS c
      WHERE c.eventType = 33 AND c.domainId = n.domainId AND c.category = 1 AND $(name_of c) = 'compute')")"
expect_eq "aten::linear inside a Linear module (0, 2, 4)" 18 "$(inside_module ops.sqlite aten::linear "IN ('0', '2', '4')")"
expect_eq "AddmmBackward0 inside a module's backward (1 step in 10 sampled: all 6)" 18 \
    "$(inside_module ops.sqlite AddmmBackward0 "GLOB '[024] backward'")"

# the op names and counts of each step, against what torch's profiler recorded
torch_ops plain.json > torch.txt
[ "$(wc -l < torch.txt)" -gt 20 ] || fail "torch's profiler recorded too few ops: $(cat torch.txt)"
for s in 1 2 3; do
    ops_of_step ops.sqlite $s > step$s.txt
    diff torch.txt step$s.txt > d.txt || fail "step $s: the ops differ from torch's profiler's: $(cat d.txt)"
    echo "ok: step $s: $(wc -l < step$s.txt) op names, the counts torch's profiler recorded"
done
# step 4, profiled by the program too: its ops, and the profiler's own ranges
ops_of_step ops.sqlite 4 | grep -v '^\(aten::detach\|detach\)|' > step4.txt
grep -v '^\(aten::detach\|detach\)|' torch.txt > torch4.txt
diff torch4.txt step4.txt > d.txt || fail "step 4 (under the program's profiler): the ops differ: $(cat d.txt)"
echo "ok: step 4, under the program's own profiler: its ops as in the other steps"

# loaded only into the libtorch it was built for
GTRACE_TORCH_OPS_LIB=$LIB GTRACE_TORCH_CPU_LIB=/nonexistent/libtorch_cpu.so.1 \
    PYTHONPATH="$GT_TOP_SRCDIR/libtrace/python" "$PY" -c "
import torch
from gtrace_torch import record
assert record.start(torch) is None, 'loaded for another libtorch'
print('ok: not loaded for another libtorch')" || fail "the module was loaded for another libtorch"

for how in "GTRACE_TORCH_OPS=dispatch" "GTRACE_TORCH_OPS_LIB=none"; do
    env "$how" "$GTRACE" --pytorch=steps,modules,ops -o dispatch.sqlite --force "$PY" "$SCRIPT" \
        > dispatch.json 2> err.txt || fail "$how: the program failed: $(cat err.txt)"
    expect_eq "$how: the losses as without gtrace" "$(field plain.json losses)" "$(field dispatch.json losses)"
    expect_eq "$how: no autograd node ranges (the dispatch mode)" 0 "$(count_of dispatch.sqlite AddmmBackward0)"
    expect_eq "$how: aten::addmm ranges (3 Linear, 6 steps)" 18 \
        "$(count_of dispatch.sqlite aten::addmm)"
done
GTRACE_TORCH_OPS_LIB=/nonexistent/ops.so "$GTRACE" --pytorch=steps,modules,ops -o bad.sqlite "$PY" "$SCRIPT" \
    > bad.json 2> err.txt || fail "a GTRACE_TORCH_OPS_LIB that does not load: the program failed: $(cat err.txt)"
expect_eq "a bad GTRACE_TORCH_OPS_LIB: its line" 1 "$(grep -c '^gtrace: GTRACE_TORCH_OPS_LIB=/nonexistent/ops.so: .*(ops go through the dispatch mode)$' err.txt)"
expect_eq "a bad GTRACE_TORCH_OPS_LIB: the losses as without gtrace" "$(field plain.json losses)" "$(field bad.json losses)"
expect_eq "a bad GTRACE_TORCH_OPS_LIB: the dispatch mode's aten::addmm ranges" 18 "$(count_of bad.sqlite aten::addmm)"
echo "PASS"
