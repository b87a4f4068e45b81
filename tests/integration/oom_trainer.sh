#!/bin/sh
# oom_trainer.sh: the trainer under --mem-limit with a --batch whose
# activations do not fit. The trainer exits 1 with its OOM message, gtrace
# passes that status on, and `gtrace report` has an Out of memory section
# whose request, allocated, reserved and limit are the trainer's own figures
# (its message, in MiB to two decimals; the limit in bytes), whose largest
# live block and free bytes are those `gtrace memory --at` replays at that
# moment, and which names the step and phase it failed in.
set -eu
GTRACE=${GT_TOP_BUILDDIR:-.}/libtrace/cli/gtrace
TRAINER=${GT_TOP_BUILDDIR:-.}/trainer/trainer
command -v python3 >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
DIR=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-oom-XXXXXX")
trap 'rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

rc=0
timeout 300 "$GTRACE" -o "$DIR/t.sqlite" "$TRAINER" --steps 3 --eval-every 0 --batch 64 --mem-limit 64M \
    > "$DIR/out" 2> "$DIR/err" || rc=$?
[ "$rc" -eq 1 ] || fail "gtrace passed on exit $rc, want the trainer's 1: $(cat "$DIR/err")"
msg=$(grep "out of memory on cpu" "$DIR/err") || fail "no OOM message: $(cat "$DIR/err")"
"$GTRACE" report "$DIR/t.sqlite" > "$DIR/report.txt" || fail "report failed"
grep -q "^Out of memory  at .*step 0, forward" "$DIR/report.txt" || fail "no section: $(cat "$DIR/report.txt")"
"$GTRACE" report --json "$DIR/t.sqlite" > "$DIR/report.json" || fail "report --json failed"
t_ns=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["oom"]["t_ns"])' "$DIR/report.json")
start=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["start_ns"])' "$DIR/report.json")
"$GTRACE" memory "$DIR/t.sqlite" --at "$t_ns" --json > "$DIR/state.json" || fail "memory --at $t_ns failed"
python3 - "$DIR/report.json" "$DIR/state.json" "$msg" "$start" <<'PY' || exit 1
import json, re, sys
rep, state, msg = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
o = rep["oom"]
def mib(x):
    return "%.2f MiB" % (x / 1048576.0)
m = re.search(r"tried to allocate ([0-9.]+ MiB) \(a (\d+)-byte segment\).*allocated ([0-9.]+ MiB), "
              r"reserved ([0-9.]+ MiB), limit ([0-9.]+ MiB)", msg)
assert m, msg
want = {"requested_bytes": m.group(1), "allocated_bytes": m.group(3), "reserved_bytes": m.group(4)}
for k, v in want.items():
    assert mib(o[k]) == v, (k, o[k], v)
assert o["limit_bytes"] == 64 * 1048576, o["limit_bytes"]
assert o["free_bytes"] == o["reserved_bytes"] - o["allocated_bytes"], o
assert o["device_free_bytes"] == 64 * 1048576 - o["reserved_bytes"], o
assert o["step"] == 0 and o["phase"] == "forward", (o["step"], o["phase"])
s = state["processes"][0] if "processes" in state else state
assert s["allocated_bytes"] == o["allocated_bytes"], (s["allocated_bytes"], o["allocated_bytes"])
assert s["reserved_bytes"] == o["reserved_bytes"], (s["reserved_bytes"], o["reserved_bytes"])
blocks = sorted((b["bytes"] for g in s["segments"] for b in g["blocks"]), reverse=True)
assert [b["bytes"] for b in o["largest_blocks"]] == blocks[:len(o["largest_blocks"])], (o["largest_blocks"], blocks)
assert o["largest_blocks"][0]["name"] == "block activations", o["largest_blocks"][0]
fixes = {f["fix"]: f for f in o["fixes"]}
assert fixes["smaller micro-batch"]["saved_bytes"] == o["step_bytes"] // 2, fixes
assert len(fixes) == 5, fixes
PY
echo "ok: the OOM section has the trainer's figures"
