#!/bin/sh
# oom_allocator.sh: samples/problems/oom, a caching allocator on a 56 MiB
# device that fragments and runs out in step 2's backward (12 MiB asked,
# 16 MiB cached and free in two 8 MiB gaps, 8 MiB left on the device).
# gtrace passes its exit status on, and the report's Out of memory section
# has every figure as the program's own arithmetic gives it: the request,
# allocated, reserved, free, limit, device free, the largest gap, the 4 MiB
# shortfall and fragmentation as the cause; step 2 and its backward; the live
# blocks by size with their names; what grew since step 1's end; each fix's
# estimate from those blocks. Its --fixed twin runs every step: no section.
# With --exit the program dies in step 2 with its ranges open (as one that
# stops at its first CUDA error): that step is not in the trace, so the
# section names none, only the step before it ("after step 1").
. "$(dirname "$0")/capture_common.sh"
command -v python3 >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
PROG="$SAMPLES/problems/oom"
[ -x "$PROG" ] || { echo "missing $PROG"; exit 99; }

st=0
"$GTRACE" -o oom.sqlite "$PROG" >out.txt 2>err.txt || st=$?
expect_eq "exit status passed on" 1 "$st"
grep -q "^out of memory in step 2: 12 MiB asked, 16 MiB cached and free$" err.txt || fail "the program said: $(cat err.txt)"
"$GTRACE" report oom.sqlite >report.txt || fail "report failed"
"$GTRACE" report --json oom.sqlite >report.json || fail "report --json failed"
grep -q "^Out of memory  at .*, step 2, backward$" report.txt || fail "no section: $(cat report.txt)"
t_ns=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["oom"]["t_ns"])' report.json)
"$GTRACE" memory oom.sqlite --at "$t_ns" --json >state.json || fail "memory --at $t_ns failed"
python3 - report.json state.json <<'PY' || fail "$(sed -n '/^Out of memory/,/^advice/p' report.txt)"
import json, sys
MiB = 1 << 20
o = json.load(open(sys.argv[1]))["oom"]
want = {"step": 2, "phase": "backward", "range_path": "step 2 > backward", "failures": 1,
        "requested_bytes": 12 * MiB, "allocated_bytes": 32 * MiB, "reserved_bytes": 48 * MiB,
        "free_bytes": 16 * MiB, "limit_bytes": 56 * MiB, "device_free_bytes": 8 * MiB,
        "largest_gap_bytes": 8 * MiB, "shortfall_bytes": 4 * MiB, "cause": "fragmentation",
        "step_bytes": 16 * MiB, "previous_step": 1}
for k, v in want.items():
    assert o[k] == v, (k, o[k], v)
blocks = [(b["bytes"] // MiB, b["name"]) for b in o["largest_blocks"]]
assert blocks == [(16, "weights"), (8, "activations"), (8, "activations")], blocks
growth = [(g["name"], g["before_bytes"], g["at_bytes"]) for g in o["growth"]]
assert growth == [("activations", 0, 16 * MiB)], growth
fixes = {f["fix"]: (f["saved_bytes"] // MiB, f["enough"]) for f in o["fixes"]}
assert fixes == {"activation checkpointing": (8, True), "smaller micro-batch": (8, True),
                 "expandable segments": (8, True), "set_to_none gradients": (0, False),
                 "mixed precision": (8, True)}, fixes
# the state the section read is the one gtrace memory --at replays
s = json.load(open(sys.argv[2]))
s = s["processes"][0] if "processes" in s else s
assert (s["allocated_bytes"], s["reserved_bytes"]) == (32 * MiB, 48 * MiB), s
print("ok: every figure of the section")
PY

"$GTRACE" -o fixed.sqlite "$PROG" --fixed >out.txt 2>err.txt || fail "the fixed twin failed: $(cat err.txt)"
expect_eq "fixed: it ran" ok "$(cat out.txt)"
"$GTRACE" report --json fixed.sqlite >fixed.json || fail "report --json of the twin failed"
expect_eq "fixed: no section" None "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["oom"])' fixed.json)"

st=0
"$GTRACE" -o exit.sqlite "$PROG" --exit >out.txt 2>err.txt || st=$?
expect_eq "--exit: exit status passed on" 1 "$st"
"$GTRACE" report exit.sqlite >exit.txt || fail "--exit: report failed"
grep -q "^Out of memory  at .*, after step 1$" exit.txt || fail "--exit: $(sed -n '/^Out of memory/,/^  in/p' exit.txt)"
"$GTRACE" report --json exit.sqlite >exit.json || fail "--exit: report --json failed"
expect_eq "--exit: step, previous step, requested" "-1 1 12582912" \
    "$(python3 -c 'import json,sys; o = json.load(open(sys.argv[1]))["oom"]; print(o["step"], o["previous_step"], o["requested_bytes"])' exit.json)"
echo "all good"
