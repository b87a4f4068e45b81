#!/bin/sh
# oom_snapshot.sh: `gtrace report` on a CUDA memory snapshot whose history
# ends in an out-of-memory error (oom_snapshot.py, hand-made as the tests'
# snapshots are). The Out of memory section gives the request and the
# device's free memory of the snapshot's oom action, the allocated, reserved
# and cached-but-free bytes and the largest free gap of the state replayed at
# that moment, the three live blocks largest first with their Python frames
# (file:line), and the cause: 5 MiB asked with 7 MiB free in gaps of 4 and
# 3 MiB is fragmentation (1 MiB short of the largest gap); 8 MiB asked is
# real use (4 MiB short). The JSON and text sections agree.
set -eu
GTRACE=${GT_TOP_BUILDDIR:-.}/libtrace/cli/gtrace
command -v python3 >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
DIR=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-oom-snapshot-XXXXXX")
trap 'rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for case in "frag 5 fragmentation 1" "use 8 real-use 4"; do
    set -- $case
    name=$1 req=$2 cause=$(echo "$3" | tr - ' ') short=$4
    python3 "${GT_TOP_SRCDIR:-.}/tests/integration/oom_snapshot.py" "$DIR/$name.pickle" "$req"
    "$GTRACE" report "$DIR/$name.pickle" > "$DIR/$name.txt" 2>/dev/null || fail "$name: report failed"
    "$GTRACE" report --json "$DIR/$name.pickle" > "$DIR/$name.json" 2>/dev/null || fail "$name: report --json failed"
    python3 - "$DIR/$name.json" "$DIR/$name.txt" "$req" "$cause" "$short" <<'PY' || fail "$name: $(cat "$DIR/$name.txt")"
import json, sys
MiB = 1 << 20
o = json.load(open(sys.argv[1]))["oom"]
text = open(sys.argv[2]).read()
req, cause, short = int(sys.argv[3]) * MiB, sys.argv[4], int(sys.argv[5]) * MiB
want = {"failures": 1, "requested_bytes": req, "device_free_bytes": MiB, "allocated_bytes": 13 * MiB,
        "reserved_bytes": 20 * MiB, "free_bytes": 7 * MiB, "largest_gap_bytes": 4 * MiB,
        "shortfall_bytes": short, "cause": cause, "step": -1, "phase": ""}
for k, v in want.items():
    assert o[k] == v, (k, o[k], v)
frames = " < forward model.py:12 < train_step train.py:40]"
blocks = [(b["bytes"], b["address"] - 0x7F0000000000, b["origin"]) for b in o["largest_blocks"]]
assert blocks == [(6 * MiB, 0, "[embed model.py:21" + frames), (4 * MiB, 10 * MiB, "[mlp model.py:23" + frames),
                  (3 * MiB, 17 * MiB, "[head model.py:25" + frames)], blocks
fixes = {f["fix"]: f for f in o["fixes"]}
assert fixes["expandable segments"]["saved_bytes"] == 3 * MiB, fixes["expandable segments"]
assert fixes["expandable segments"]["enough"] == (3 * MiB >= short), fixes["expandable segments"]
lines = ["  requested      %d.00 MiB (%d bytes)" % (req // MiB, req),
         "  allocated      13.00 MiB   reserved 20.00 MiB   reserved but free 7.00 MiB   device free 1.00 MiB",
         "  largest gap    4.00 MiB in the reserved segments",
         "    %10s  %-28s %s" % ("6.00 MiB", "(unnamed)", "[embed model.py:21" + frames)]
for line in lines:
    assert line + "\n" in text, line
assert ("  cause          %s" % cause) in text, cause
print("ok: %s, %d MiB short; blocks %s" % (cause, short // MiB, [b[0] // MiB for b in blocks]))
PY
done
echo "all good"
