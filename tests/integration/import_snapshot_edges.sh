#!/bin/sh
# import_snapshot_edges.sh: a CUDA memory snapshot (written by Python's
# pickle in torch.cuda.memory._snapshot()'s format) of an allocator with
# expandable segments, imported and replayed at the exact nanoseconds of its
# actions: a block freed, then its whole segment unmapped (no segment left,
# not one of 0 bytes), an out-of-memory on a GPU with nothing free (the mark
# says "0 free"), then a plain segment filled by one block; the trace says
# it was imported from a snapshot. Then histories: two segments side by
# side, one released; one that does not add up (what overlaps is kept out);
# a size below zero, refused.
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

# ---- histories: neighbours, and what does not add up ---------------------------------
# Two cudaMalloc'd segments side by side, the second released by
# empty_cache(): it held 2 MiB from its segment_alloc to its segment_free,
# its neighbour all along. Then a history that does not add up (a map
# inside a mapped range; a segment freed over the start of one that lives
# on): what overlaps is kept out, and no byte is counted twice. A size
# below zero is refused.
python3 - "$DIR" << 'EOF'
import pickle, sys
d = sys.argv[1]
MiB = 1 << 20
# the times' first byte crosses 0x80 (t + 10 is 0x...86): pickle's LONG1 is
# little-endian, its sign in its last byte, not its first
t = 1_790_000_000_000_124
A, E, S = 0x7E0000000000, 0x7E1000000000, 0x7E2000000000
def act(action, addr, size, dt):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t + dt, "frames": []}
def seg(addr, size, expandable=False, blocks=()):
    return {"device": 0, "address": addr, "total_size": size, "stream": 0, "segment_type": "large",
            "is_expandable": expandable, "allocated_size": 0, "active_size": 0, "requested_size": 0,
            "blocks": list(blocks) or [{"address": addr, "size": size, "requested_size": 0, "state": "inactive"}]}
def dump(name, segments, trace):
    with open(f"{d}/{name}.pickle", "wb") as f:
        pickle.dump({"segments": segments, "device_traces": [trace]}, f)
def block(addr):  # a block allocated and freed first: the trace's zero is its time
    return [act("alloc", addr, 1 * MiB, 0), act("free_requested", addr, 1 * MiB, 1),
            act("free_completed", addr, 1 * MiB, 1)]
dump("neighbours", [seg(A, 2 * MiB)], block(A) + [
    act("segment_alloc", A + 2 * MiB, 2 * MiB, 10),
    act("segment_free", A + 2 * MiB, 2 * MiB, 20),
])
dump("overlaps", [seg(E, 4 * MiB, expandable=True), seg(S + 2 * MiB, 2 * MiB)], block(S + 2 * MiB) + [
    act("segment_map", E, 4 * MiB, 10),
    act("segment_map", E + 1 * MiB, 1 * MiB, 20),   # inside what is mapped
    act("segment_free", S, 4 * MiB, 30),            # over the start of S + 2 MiB, which lives on
])
dump("negative", [], [act("alloc", A, -1, 10)])
EOF

"$GTRACE" import "$DIR/neighbours.pickle" -o "$DIR/neighbours.sqlite" > /dev/null
"$GTRACE" import "$DIR/overlaps.pickle" -o "$DIR/overlaps.sqlite" > /dev/null
for at in 5000 10000 15000 20000 1000s; do
    "$GTRACE" memory --json "$DIR/neighbours.sqlite" --at "$at" > "$DIR/n-$at.json"
done
for at in 5000 15000 25000 35000 1000s; do
    "$GTRACE" memory --json "$DIR/overlaps.sqlite" --at "$at" > "$DIR/o-$at.json"
done
if "$GTRACE" import "$DIR/negative.pickle" -o "$DIR/negative.sqlite" > /dev/null 2> "$DIR/negative.err"; then
    echo "FAIL: a snapshot with a size below zero imported"; exit 1
fi
grep -q "negative.pickle: device_traces\[0\]\[0\] (alloc) lacks a valid addr or size" "$DIR/negative.err" ||
    { echo "FAIL: a size below zero: $(cat "$DIR/negative.err")"; exit 1; }
[ ! -e "$DIR/negative.sqlite" ] || { echo "FAIL: a refused snapshot left a trace"; exit 1; }

python3 - "$DIR" << 'EOF'
import json, sys
d = sys.argv[1]
MiB = 1 << 20
def reserved(prefix, at):
    p = json.load(open(f"{d}/{prefix}-{at}.json"))["processes"][0]
    return p["reserved_bytes"], len(p["segments"])
want = {
    "n": {"5000": (2 * MiB, 1), "10000": (4 * MiB, 2), "15000": (4 * MiB, 2), "20000": (2 * MiB, 1),
          "1000s": (2 * MiB, 1)},
    "o": {"5000": (2 * MiB, 1), "15000": (6 * MiB, 2), "25000": (6 * MiB, 2), "35000": (6 * MiB, 2),
          "1000s": (6 * MiB, 2)},
}
for prefix, w in want.items():
    for at, v in w.items():
        got = reserved(prefix, at)
        assert got == v, f"{prefix} at {at}: reserved, segments {got}, want {v}"
print("snapshot histories: neighbours, overlaps kept out, a negative size refused")
EOF
