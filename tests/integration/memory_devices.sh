#!/bin/sh
# memory_devices.sh: a CUDA memory snapshot of one process on two devices
# is two allocators, one per device, in `gtrace report` (text and JSON) and
# `gtrace memory` (text and JSON): each device's own peaks, fragmentation
# and state, and no "all at once" sum, since no one memory holds them both.
# cuda:0: a 20 MiB segment; 8 MiB, then 4 MiB more allocated (peak 12 MiB,
#         40% of the segment unused then), the 4 MiB freed.
# cuda:1: a 64 MiB segment; 32 MiB allocated and freed (peak 32 MiB, 50%
#         unused), then 16 MiB allocated and kept.
# As one allocator it would read a peak of 40 MiB in 84 MiB.
set -eu
GTRACE=${GT_TOP_BUILDDIR:-.}/libtrace/cli/gtrace
command -v python3 >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
DIR=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-memory-devices-XXXXXX")
trap 'rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 - "$DIR/two.pickle" <<'PY'
import pickle, sys
MIB = 1 << 20
B0, B1 = 0x7F0000000000, 0x7F1000000000
T = 1_790_000_000_000_000

def act(action, addr, size, t):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": T + t, "frames": []}

def block(addr, size, state):
    return {"address": addr, "size": size, "requested_size": size, "state": state, "frames": []}

def segment(dev, addr, size, blocks):
    return {"device": dev, "address": addr, "total_size": size, "stream": 0, "segment_type": "large",
            "blocks": blocks}

snap = {
    "segments": [
        segment(0, B0, 20 * MIB, [block(B0, 8 * MIB, "active_allocated"), block(B0 + 8 * MIB, 12 * MIB, "inactive")]),
        segment(1, B1, 64 * MIB, [block(B1, 16 * MIB, "active_allocated"), block(B1 + 16 * MIB, 48 * MIB, "inactive")]),
    ],
    "device_traces": [
        [act("segment_alloc", B0, 20 * MIB, 1), act("alloc", B0, 8 * MIB, 2), act("alloc", B0 + 8 * MIB, 4 * MIB, 3),
         act("free_requested", B0 + 8 * MIB, 4 * MIB, 4), act("free_completed", B0 + 8 * MIB, 4 * MIB, 5)],
        [act("segment_alloc", B1, 64 * MIB, 10), act("alloc", B1, 32 * MIB, 11),
         act("free_requested", B1, 32 * MIB, 12), act("free_completed", B1, 32 * MIB, 13),
         act("alloc", B1, 16 * MIB, 14)],
    ],
}
with open(sys.argv[1], "wb") as f:
    pickle.dump(snap, f, protocol=4)
PY
"$GTRACE" import "$DIR/two.pickle" -o "$DIR/two.sqlite" > /dev/null || fail "import failed"

# the report, text: a line per device, each with its own figures
"$GTRACE" report "$DIR/two.sqlite" > "$DIR/report.txt" || fail "report failed"
grep -q '^memory  *2 allocators, one per process and device$' "$DIR/report.txt" ||
    fail "no line for two allocators: $(sed -n '/^memory/,$p' "$DIR/report.txt")"
grep -Eq '^  pid [0-9]+, cuda:0: peak allocated 12\.00 MiB at .*, peak reserved 20\.00 MiB, fragmentation 40\.0%$' \
    "$DIR/report.txt" || fail "cuda:0's figures: $(sed -n '/^memory/,$p' "$DIR/report.txt")"
grep -Eq '^  pid [0-9]+, cuda:1: peak allocated 32\.00 MiB at .*, peak reserved 64\.00 MiB, fragmentation 50\.0%$' \
    "$DIR/report.txt" || fail "cuda:1's figures: $(sed -n '/^memory/,$p' "$DIR/report.txt")"
! grep -q 'at once' "$DIR/report.txt" || fail "a sum over two devices: $(grep 'at once' "$DIR/report.txt")"

# the report, JSON: exact bytes per device, no total
"$GTRACE" report --json "$DIR/two.sqlite" > "$DIR/report.json" || fail "report --json failed"
python3 - "$DIR/report.json" <<'PY' || fail "report --json: wrong memory figures"
import json, sys
MIB = 1 << 20
mem = json.load(open(sys.argv[1]))["memory"]
procs = mem["processes"]
got = [(p["device_id"], p["peak_allocated_bytes"], p["peak_reserved_bytes"], p["end_allocated_bytes"],
        round(p["fragmentation"], 6)) for p in procs]
want = [(0, 12 * MIB, 20 * MIB, 8 * MIB, 0.4), (1, 32 * MIB, 64 * MIB, 16 * MIB, 0.5)]
if got != want or procs[0]["pid"] != procs[1]["pid"] or mem["total"] is not None:
    sys.exit("got %s, total %s; want %s, total null" % (got, mem["total"], want))
# the whole trace's figures: the allocator that reserved most
if (mem["device_id"], mem["peak_allocated_bytes"]) != (1, 32 * MIB):
    sys.exit("whole: device %s peak %s" % (mem["device_id"], mem["peak_allocated_bytes"]))
PY

# the allocator state, text and JSON: each device's own segments and blocks
"$GTRACE" memory "$DIR/two.sqlite" --at 1s > "$DIR/state.txt" || fail "memory --at failed"
grep -Eq '^process [0-9]+, cuda:0: allocator state at [0-9]+ ns: allocated 8\.00 MiB, reserved 20\.00 MiB, 1 segments, 1 blocks$' \
    "$DIR/state.txt" || fail "cuda:0's state: $(cat "$DIR/state.txt")"
grep -Eq '^process [0-9]+, cuda:1: allocator state at [0-9]+ ns: allocated 16\.00 MiB, reserved 64\.00 MiB, 1 segments, 1 blocks$' \
    "$DIR/state.txt" || fail "cuda:1's state: $(cat "$DIR/state.txt")"
"$GTRACE" memory "$DIR/two.sqlite" --at 1s --json > "$DIR/state.json" || fail "memory --json failed"
python3 - "$DIR/state.json" <<'PY' || fail "memory --json: wrong states"
import json, sys
MIB = 1 << 20
ps = json.load(open(sys.argv[1]))["processes"]
got = [(p["device_id"], p["allocated_bytes"], p["reserved_bytes"], [s["bytes"] for s in p["segments"]]) for p in ps]
want = [(0, 8 * MIB, 20 * MIB, [20 * MIB]), (1, 16 * MIB, 64 * MIB, [64 * MIB])]
if got != want:
    sys.exit("got %s, want %s" % (got, want))
PY
# --pid names the process: both its devices
pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["processes"][0]["pid"])' "$DIR/state.json")
[ "$("$GTRACE" memory "$DIR/two.sqlite" --at 1s --pid "$pid" | grep -c 'allocator state')" -eq 2 ] ||
    fail "--pid $pid: not both devices"
echo "memory_devices: two devices, two allocators"
