#!/bin/sh
# import_snapshot_edges.sh: a CUDA memory snapshot (written by Python's
# pickle in torch.cuda.memory._snapshot()'s format) of an allocator with
# expandable segments, imported and replayed at the exact nanoseconds of its
# actions: a block freed, then its whole segment unmapped (no segment left,
# not one of 0 bytes), an out-of-memory on a GPU with nothing free (the mark
# says "0 free"), then a plain segment filled by one block; the trace says
# it was imported from a snapshot.
set -eu
GTRACE=${GT_TOP_BUILDDIR:-.}/libtrace/cli/gtrace
DIR=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-snapshot-edges-XXXXXX")
trap 'rm -rf "$DIR"' EXIT
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }

python3 - "$DIR/edges.pickle" << 'EOF'
import pickle, sys
MiB = 1 << 20
t = 1_790_000_000_000_000  # microseconds since the epoch
B, C = 0x7F0000000000, 0x7F0010000000
fr = [{"filename": "train.py", "line": 12, "name": "forward"}]
def act(action, addr, size, dt, **kw):
    return dict({"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t + dt, "frames": fr}, **kw)
trace = [
    act("segment_map", B, 4 * MiB, 0),
    act("alloc", B, 1 * MiB, 1),
    act("free_requested", B, 1 * MiB, 2),
    act("free_completed", B, 1 * MiB, 2),
    act("segment_unmap", B, 4 * MiB, 3),
    act("oom", 0, 64 * MiB, 4, device_free=0),
    act("segment_alloc", C, 2 * MiB, 5),
    act("alloc", C, 2 * MiB, 6),
]
segments = [{"device": 0, "address": C, "total_size": 2 * MiB, "stream": 0, "segment_type": "large",
             "is_expandable": False, "allocated_size": 2 * MiB, "active_size": 2 * MiB,
             "requested_size": 2 * MiB,
             "blocks": [{"address": C, "size": 2 * MiB, "requested_size": 2 * MiB,
                         "state": "active_allocated", "frames": fr}]}]
with open(sys.argv[1], "wb") as f:
    pickle.dump({"segments": segments, "device_traces": [trace]}, f)
EOF

"$GTRACE" import "$DIR/edges.pickle" -o "$DIR/edges.sqlite" > "$DIR/import.out"
for at in 1500 2000 2500 3000 3500 6000 1000s; do
    "$GTRACE" memory --json "$DIR/edges.sqlite" --at "$at" > "$DIR/at-$at.json"
done

python3 - "$DIR" << 'EOF'
import json, sqlite3, sys
d = sys.argv[1]
MiB = 1 << 20
def state(at):
    p = json.load(open(f"{d}/at-{at}.json"))["processes"][0]
    return p["allocated_bytes"], p["reserved_bytes"], len(p["segments"])
want = {
    "1500": (1 * MiB, 4 * MiB, 1),   # the block in its segment
    "2000": (0, 4 * MiB, 1),         # on the nanosecond of its free: gone
    "2500": (0, 4 * MiB, 1),
    "3000": (0, 0, 0),               # the whole segment unmapped: none left
    "3500": (0, 0, 0),
    "6000": (2 * MiB, 2 * MiB, 1),   # a plain segment filled by one block
    "1000s": (2 * MiB, 2 * MiB, 1),  # the snapshot's end state
}
for at, w in want.items():
    got = state(at)
    assert got == w, f"at {at}: allocated, reserved, segments {got}, want {w}"
db = sqlite3.connect(f"{d}/edges.sqlite")
texts = [r[0] for r in db.execute(
    "SELECT coalesce(n.text, s.value) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId")]
oom = [x for x in texts if x and x.startswith("out of memory")]
assert oom == ["out of memory on cuda:0: 67108864 bytes requested, 0 free"], oom
fmt = [r[0] for r in db.execute("SELECT value FROM GTRACE_RUN_CONFIG WHERE key = 'import.format'")]
assert fmt == ["snapshot"], fmt
print("snapshot edges: states at the actions' nanoseconds and the OOM ok")
EOF
