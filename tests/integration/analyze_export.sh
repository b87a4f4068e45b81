#!/bin/sh
# analyze_export.sh: the exports of libtrace/analyze, validated by Python:
# Chrome trace JSON parses and holds every kernel with its launch flow and
# escaped names intact; the memory snapshot pickle loads with pickle and has
# the keys and actions memory_viz reads; the CSVs parse (RFC 4180) with one
# row per event. On a synthetic trace and on the nsys cloverleaf export.
# Skipped (77) without python3.
set -eu
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipped"; exit 77; }
TOOL=${GT_TOP_BUILDDIR:-.}/tests/integration/analyze_export
GTRACE=${GT_TOP_BUILDDIR:-.}/libtrace/cli/gtrace
# export TRACE FORMAT OUT: through the real CLI, quietly
export_as() { "$GTRACE" export "$1" --format "$2" -o "$3" 2>/dev/null; }
DIR=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-analyze-export-XXXXXX")
trap 'rm -rf "$DIR"' EXIT

"$TOOL" synth "$DIR/s.sqlite"
"$TOOL" memedge "$DIR/m.sqlite"
export_as "$DIR/m.sqlite" memviz "$DIR/m.pickle"
export_as "$DIR/s.sqlite" chrome "$DIR/s.json"
export_as "$DIR/s.sqlite" memviz "$DIR/s.pickle"
"$GTRACE" report --json "$DIR/s.sqlite" > "$DIR/r.json"
export_as "$DIR/s.sqlite" csv "$DIR/csv"

python3 - "$DIR" <<'PY'
import csv, json, pickle, pickletools, sys
d = sys.argv[1]

def viewer_invariants(path):
    """What PyTorch's memory_viz page needs of a snapshot (checked against
    its MemoryViz.js, see bench/results/2026-11-21-memviz.md): blocks tile
    their segment; every block lives inside a segment at every moment of the
    trace; the trace, replayed, ends in the snapshot's state; no APPENDS of
    more than 1,000 items (the page's unpickler spreads one onto the stack)."""
    raw = open(path, "rb").read()
    s = pickle.loads(raw)
    levels = []
    for op, arg, pos in pickletools.genops(raw):
        if op.name == "MARK":
            levels.append(0)
        elif op.name in ("APPENDS", "SETITEMS"):
            n = levels.pop()
            assert op.name != "APPENDS" or n <= 1000, (path, pos, n)
        elif levels:
            levels[-1] += len(op.stack_after) - len(op.stack_before)
    for seg in s["segments"]:
        assert sum(b["size"] for b in seg["blocks"]) == seg["total_size"], seg["address"]
        at = seg["address"]
        for b in seg["blocks"]:
            assert b["address"] == at and b["requested_size"] <= b["size"]
            at += b["size"]
        assert seg["allocated_size"] == sum(b["size"] for b in seg["blocks"] if b["state"] == "active_allocated")
    segs, blocks = {}, {}
    def inside(a, n):
        return any(sa <= a and a + n <= sa + sn for sa, sn in segs.items())
    for e in s["device_traces"][0]:
        a, n = e["addr"], e["size"]
        if e["action"] == "segment_alloc":
            segs[a] = n
        elif e["action"] == "segment_free":
            assert not any(sa <= b < sa + segs[a] for b in blocks for sa in [a]), "segment freed under a live block"
            del segs[a]
        elif e["action"] == "alloc":
            assert inside(a, n), ("block outside every segment", e)
            blocks[a] = n
        elif e["action"] == "free_completed":
            del blocks[a]
    assert segs == {g["address"]: g["total_size"] for g in s["segments"]}, (segs, s["segments"])
    live = {b["address"]: b["size"] for g in s["segments"] for b in g["blocks"] if b["state"] == "active_allocated"}
    assert blocks == live, (blocks, live)
    return s

m = viewer_invariants(d + "/m.pickle")
acts = [e["action"] for e in m["device_traces"][0]]
assert acts.count("alloc") == 1500 + 4 and acts.count("free_completed") == 1500 + 2, acts.count("alloc")
# the destroyed heap: its block freed, then the segment
tail = [(e["action"], e["addr"]) for e in m["device_traces"][0] if e["addr"] in (0x7f1000000000 + (1 << 20), 0x7f1000000000)]
assert [x for x, _ in tail] == ["segment_alloc", "alloc", "free_requested", "free_completed", "segment_free"], tail
# the blocks of the unregistered heap: each in a segment of its own
own = [g for g in m["segments"] if g["address"] == 0x7e0000000000 + (4 << 20)]
assert len(own) == 1 and own[0]["total_size"] == 3 << 20 and own[0]["blocks"][0]["state"] == "active_allocated"
assert len(m["segments"]) == 2 and sum(g["allocated_size"] for g in m["segments"]) == 4 << 20
print("memviz at the allocator's edges: ok")

t = json.load(open(d + "/s.json", encoding="utf-8"))
ev = t["traceEvents"]
cats = {}
for e in ev:
    cats[e.get("cat")] = cats.get(e.get("cat"), 0) + 1
assert cats.get("kernel") == 8, cats
assert cats.get("gpu_memcpy") == 4, cats
assert cats.get("cuda_runtime") == 12, cats
assert cats.get("user_annotation") == 8, cats
starts = {e["id"] for e in ev if e["ph"] == "s"}
ends = {e["id"] for e in ev if e["ph"] == "f"}
assert len(starts) == 12 and starts == ends, (starts, ends)
# every flow starts on a call and ends on the kernel or copy of the same
# correlation id, one start and one end per id
corr_at = {(e["pid"], e["tid"], e["ts"], e["cat"] in ("kernel", "gpu_memcpy")): e["args"]["correlation"]
           for e in ev if e["ph"] == "X" and e.get("cat") in ("cuda_runtime", "kernel", "gpu_memcpy")}
pairs = {}
for e in ev:
    if e["ph"] in ("s", "f"):
        pairs.setdefault(e["id"], []).append(corr_at[(e["pid"], e["tid"], e["ts"], e["ph"] == "f")])
assert all(len(v) == 2 and v[0] == v[1] for v in pairs.values()), pairs
assert {v[0] for v in pairs.values()} == {e["args"]["correlation"] for e in ev if e.get("cat") in ("kernel", "gpu_memcpy")}
names = {e["name"] for e in ev if e["ph"] == "X"}
assert 'void gemm<float, 128>(float const*, "quoted", a\\b)' in names, names
assert "tab\there, comma, newline\nend \u2713" in names, names
k = [e for e in ev if e.get("cat") == "kernel"]
assert k[0]["pid"] == 0 and k[0]["tid"] == 7 and abs(k[0]["dur"] - 250.0) < 1e-9, k[0]
meta = [e for e in ev if e["ph"] == "M" and e["name"] == "thread_name"]
assert meta and meta[0]["args"]["name"] == 'main "thread"', meta

def rows_named(ev):
    # every row an event lands on has a name: processes, threads, streams
    pnames = {e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    tnames = {(e["pid"], e["tid"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    used = {(e["pid"], e["tid"]) for e in ev if e["ph"] in ("X", "i", "s", "f")}
    assert {p for p, _ in used} <= pnames, ({p for p, _ in used} - pnames)
    assert used <= tnames, used - tnames
    assert {e["pid"] for e in ev if e["ph"] == "C"} <= pnames
rows_named(ev)
assert {"name": "stream 7"} in [e["args"] for e in ev if e["ph"] == "M" and e["pid"] == 0 and e["tid"] == 7]
assert {"name": "GPU 0"} in [e["args"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"]

# NVTX ranges on the device (Kineto's gpu_user_annotation): each step and its
# forward range span the copy and the two kernels they launched on stream 7
ann = [e for e in ev if e.get("cat") == "gpu_user_annotation"]
assert len(ann) == 8, ann
a0 = [e for e in ann if e["name"] == "step 0"]
assert len(a0) == 1 and a0[0]["pid"] == 0 and a0[0]["tid"] == 0x10000000 + 7, a0  # the row beside stream 7's
assert "stream" not in a0[0]["args"]  # HTA would count it as a kernel
copy0 = min((e for e in ev if e.get("cat") == "gpu_memcpy"), key=lambda e: e["ts"])
last_k0 = sorted((e for e in ev if e.get("cat") == "kernel"), key=lambda e: e["ts"])[1]
assert abs(a0[0]["ts"] - copy0["ts"]) < 1e-9 and abs(a0[0]["ts"] + a0[0]["dur"] - last_k0["ts"] - last_k0["dur"]) < 1e-6, a0
assert a0[0]["args"]["activities"] == 3
assert sorted(e["name"] for e in ann if abs(e["ts"] - a0[0]["ts"]) < 1e-9) == ["forward", "step 0"]

# memory: a counter of allocated/reserved bytes and Kineto's [memory] events
cnt = [e for e in ev if e["ph"] == "C"]
assert cnt and all(set(e["args"]) == {"allocated", "reserved"} for e in cnt), cnt
assert cnt[-1]["args"] == {"allocated": 2 << 20, "reserved": 64 << 20}, cnt[-1]
assert max(e["args"]["allocated"] for e in cnt) == 2 << 20
assert [e["ts"] for e in cnt] == sorted(e["ts"] for e in cnt)
mem = [e for e in ev if e.get("name") == "[memory]"]
assert [e["args"]["Bytes"] for e in mem] == [1 << 20, 1 << 20, -(1 << 20), 1 << 20, -(1 << 20), 1 << 20], mem
assert all(e["ph"] == "i" and e["cat"] == "cpu_instant_event" and e["pid"] == 777 and e["tid"] == 778 for e in mem)
assert [e["args"]["Total Allocated"] for e in mem] == [1 << 20, 2 << 20, 1 << 20, 2 << 20, 1 << 20, 2 << 20]
assert all(e["args"]["Total Reserved"] == 64 << 20 and e["args"]["Device Type"] == 1 for e in mem)

s = viewer_invariants(d + "/s.pickle")
assert set(s) >= {"segments", "device_traces"}, s.keys()
seg = s["segments"]
assert len(seg) == 1
for key in ("device", "address", "total_size", "allocated_size", "active_size", "requested_size",
            "stream", "segment_type", "blocks"):
    assert key in seg[0], key
assert seg[0]["total_size"] == 64 << 20 and seg[0]["allocated_size"] == 2 << 20
assert sum(b["size"] for b in seg[0]["blocks"]) == seg[0]["total_size"]
live = [b for b in seg[0]["blocks"] if b["state"] == "active_allocated"]
assert len(live) == 2 and all(b["frames"] for b in live)
tr = s["device_traces"]
assert len(tr) == 1
acts = [e["action"] for e in tr[0]]
assert acts.count("alloc") == 4 and acts.count("free_requested") == 2 and acts.count("free_completed") == 2
assert acts.count("segment_alloc") == 1
assert set(acts) <= {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free"}
for e in tr[0]:
    assert {"action", "addr", "size", "stream", "time_us", "frames"} <= set(e)
a0 = [e for e in tr[0] if e["action"] == "alloc"][0]
assert [f["name"] for f in a0["frames"]] == ["forward", "step 0"], a0

rows = list(csv.reader(open(d + "/csv/kernel.csv", newline="", encoding="utf-8")))
assert rows[0][0] == "start_ns" and len(rows) == 9, len(rows)
assert rows[1][8] == 'void gemm<float, 128>(float const*, "quoted", a\\b)'
nv = list(csv.reader(open(d + "/csv/nvtx.csv", newline="", encoding="utf-8")))
assert any(r[-1] == "tab\there, comma, newline\nend \u2713" for r in nv[1:])
assert all(len(r) == len(nv[0]) for r in nv)
r = json.load(open(d + "/r.json", encoding="utf-8"))
assert [s["number"] for s in r["steps"]] == [0, 1, 2, 3]
assert r["kernels"][0]["name"] == 'void gemm<float, 128>(float const*, "quoted", a\\b)'
assert r["kernels"][0]["time"]["n"] == 8
fired = {a["rule"] for a in r["advice"] if a["fired"]}
assert "pageable_copies" in fired and "cuda_memcpy_async" in fired, fired
assert r["memory"]["peak_allocated_bytes"] == 2 << 20
print("synthetic trace: exports and report ok")
PY

# ---- chrome, one file per rank (HTA's folder) or one process ---------------------------
"$GTRACE" export "$DIR/s.sqlite" --format chrome -o "$DIR/ranks/" 2>/dev/null
"$GTRACE" export "$DIR/s.sqlite" --format chrome --pid 777 -o "$DIR/p777.json" 2>/dev/null
if "$GTRACE" export "$DIR/s.sqlite" --format chrome -o "$DIR/ranks/" 2>"$DIR/err"; then
    echo "FAIL: a rank's file replaced without --force"; exit 1
fi
grep -q 'exists' "$DIR/err" || { cat "$DIR/err"; echo "FAIL: no word of the existing file"; exit 1; }
if "$GTRACE" export "$DIR/s.sqlite" --format chrome --pid 1 -o "$DIR/p1.json" 2>"$DIR/err"; then
    echo "FAIL: --pid of a process the trace lacks"; exit 1
fi
[ "$(wc -l <"$DIR/err")" -eq 1 ] && grep -q 'process 1 has no events' "$DIR/err" ||
    { cat "$DIR/err"; echo "FAIL: --pid 1: not the one-line error"; exit 1; }
python3 - "$DIR" <<'PY'
import glob, json, os, re, sys
d = sys.argv[1]
files = glob.glob(d + "/ranks/*")
assert len(files) == 1 and re.fullmatch(r"[^_/]+_777\.\d+\.pt\.trace\.json", os.path.basename(files[0])), files
head = open(files[0]).readline()
assert re.search(r'"rank":\s+0\b', head), head  # HTA's own pattern, on the first line
for f in files + [d + "/p777.json"]:
    t = json.load(open(f))
    assert t["distributedInfo"]["rank"] == 0 and t["distributedInfo"]["world_size"] == 1, t["distributedInfo"]
    ev = t["traceEvents"]
    assert {e["pid"] for e in ev if e.get("cat") == "cuda_runtime"} == {777}
    steps = sorted(e["name"] for e in ev if e.get("name", "").startswith("ProfilerStep#"))
    assert steps == ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"], steps
    assert all(not re.search(r"_v\d+$", e["name"]) for e in ev if e.get("cat") == "cuda_runtime")
print("chrome per rank and per process: ok")
PY

# ---- memviz at a moment, and in PyTorch 1.13's form ---------------------------------
# The synthetic allocator: blocks made at 30, 1030, 2030 and 3030 us (steps
# 0-3), the first two freed at 1040 and 2040 us.
"$GTRACE" export "$DIR/s.sqlite" --format memviz --at 1035us -o "$DIR/at.pickle" 2>/dev/null
"$GTRACE" export "$DIR/s.sqlite" --format memviz --step 1 -o "$DIR/step.pickle" 2>/dev/null
"$GTRACE" export "$DIR/s.sqlite" --format memviz --at 2035us --memviz-format 1.13 -o "$DIR/old.pickle" 2>/dev/null
"$GTRACE" memory "$DIR/s.sqlite" --step 1 --json >"$DIR/step.json"
for bad in "--at 1s --step 1" "--at soon" "--step x" "--memviz-format 3"; do
    # shellcheck disable=SC2086 # the options split on purpose
    if "$GTRACE" export "$DIR/s.sqlite" --format memviz $bad -o "$DIR/bad.pickle" 2>"$DIR/err"; then
        echo "FAIL: export --format memviz $bad succeeded"; exit 1
    fi
    head -n 1 "$DIR/err" | grep -q '^gtrace: export: ' || { cat "$DIR/err"; echo "FAIL: export $bad: no error line"; exit 1; }
done
if "$GTRACE" export "$DIR/s.sqlite" --format chrome --at 1s -o "$DIR/bad.json" 2>/dev/null; then
    echo "FAIL: --at accepted for chrome"; exit 1
fi
python3 - "$DIR" <<'PY'
import json, pickle, sys
d = sys.argv[1]
def live(s):
    return sorted((b["address"], b["size"]) for g in s["segments"] for b in g["blocks"] if b["state"] == "active_allocated")
end = pickle.load(open(d + "/s.pickle", "rb"))
allocs = [e for e in end["device_traces"][0] if e["action"] == "alloc"]
a = pickle.load(open(d + "/at.pickle", "rb"))
# at 1035 us: the blocks of steps 0 and 1, and the trace up to then
assert live(a) == sorted((e["addr"], e["size"]) for e in allocs[:2]), live(a)
assert [e["action"] for e in a["device_traces"][0]] == ["segment_alloc", "alloc", "alloc"], a["device_traces"]
assert all(e["time_us"] <= 1035 for e in a["device_traces"][0])
# --step 1: the moment `gtrace memory --step 1` shows (the step's peak)
st = pickle.load(open(d + "/step.pickle", "rb"))
m = json.load(open(d + "/step.json"))["processes"][0]
assert live(st) == sorted((b["address"], b["bytes"]) for g in m["segments"] for b in g["blocks"]), (live(st), m)
assert max(e["time_us"] for e in st["device_traces"][0]) * 1000 <= m["at_ns"]
# 1.13: a list of segments; active blocks carry their origin in "history"
o = pickle.load(open(d + "/old.pickle", "rb"))
assert isinstance(o, list) and len(o) == 1, type(o)
blocks = [b for b in o[0]["blocks"] if b["state"] == "active_allocated"]
assert sorted(b["size"] for b in blocks) == [1 << 20, 1 << 20] and sum(b["size"] for b in o[0]["blocks"]) == o[0]["total_size"]
hist = [h for b in blocks for h in b["history"]]
assert sorted(h["frames"][-1]["name"] for h in hist) == ["step 1", "step 2"], hist
print("memviz at a moment, and 1.13's form: ok")
PY
# PyTorch's own memory_viz on them: Debian's python3-torch (1.13) reads the
# 1.13 form; a torch 2.x (GT_TORCH2_PYTHON: a python that imports one) the 2.x
# form, at the end, at a time and at a step.
py113=
for py in python3 /usr/bin/python3; do # Debian's torch is the system python's
    if "$py" -c 'import torch, sys; sys.exit(0 if torch.__version__.startswith("1.13") else 1)' 2>/dev/null; then
        py113=$py; break
    fi
done
if [ -n "$py113" ]; then
    "$py113" - "$DIR" <<'PY' || { echo "FAIL: torch 1.13's _memory_viz on the 1.13 form"; exit 1; }
import io, pickle, sys
from torch.cuda import _memory_viz as mv
o = pickle.load(open(sys.argv[1] + "/old.pickle", "rb"))
st = mv.stats(o)  # asserts that blocks add up to their segment
assert st["segments"] == 1 and st["active_allocated"].value == 2 << 20, st
flame = mv.memory(o, format_flamegraph=lambda lines: lines)
# each block under its origin, outermost range first (not <non-python>)
assert "stream_0;active_allocated;nvtx:0:step 1;nvtx:0:forward 1048576" in flame.split("\n"), flame
seg = mv.segments(o, format_flamegraph=lambda lines: lines)
assert "<non-python>" not in seg, seg
print("torch 1.13 _memory_viz: stats, memory, segments ok")
PY
else
    echo "note: no PyTorch 1.13 (python3-torch): its _memory_viz left out"
fi
if [ -n "${GT_TORCH2_PYTHON:-}" ]; then
    "$GT_TORCH2_PYTHON" - "$DIR" <<'PY' || { echo "FAIL: torch 2.x _memory_viz"; exit 1; }
import pickle, sys
from torch.cuda import _memory_viz as mv
for name in ("s", "at", "step"):
    s = pickle.load(open(f"{sys.argv[1]}/{name}.pickle", "rb"))
    assert "total_allocated" in mv.segsum(s) and mv.trace(s), name
print("torch 2.x _memory_viz: segsum and trace ok")
PY
fi

FIX=${GT_FIXTURES:-}/nsys/cloverleaf-cuda-nsys2024.5.sqlite
if [ -r "$FIX" ]; then
    export_as "$FIX" chrome "$DIR/c.json"
    export_as "$FIX" memviz "$DIR/c.pickle"
    "$GTRACE" report --json "$FIX" > "$DIR/cr.json"
    export_as "$FIX" csv "$DIR/ccsv"
    python3 - "$DIR" <<'PY'
import csv, json, pickle, sys
d = sys.argv[1]
ev = json.load(open(d + "/c.json", encoding="utf-8"))["traceEvents"]
n = lambda c: sum(1 for e in ev if e.get("cat") == c)
# sqlite3: 1312 kernels, 279 memcpys, 3048 runtime calls
assert n("kernel") == 1312 and n("gpu_memcpy") == 279, (n("kernel"), n("gpu_memcpy"))
assert n("cuda_runtime") + n("cuda_driver") == 3048
flows = sum(1 for e in ev if e["ph"] == "f")
assert flows == 1312 + 279, flows
pnames = {e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
tnames = {(e["pid"], e["tid"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
used = {(e["pid"], e["tid"]) for e in ev if e["ph"] in ("X", "i", "s", "f")}
assert {p for p, _ in used} <= pnames and used <= tnames, (used - tnames)
s = pickle.load(open(d + "/c.pickle", "rb"))
assert s["segments"] == [] and s["device_traces"] == [[]]  # no memory events in this export
rows = list(csv.reader(open(d + "/ccsv/kernel.csv", newline="", encoding="utf-8")))
assert len(rows) == 1313, len(rows)
rows = list(csv.reader(open(d + "/ccsv/memcpy.csv", newline="", encoding="utf-8")))
assert len(rows) == 280 and sum(1 for r in rows[1:] if r[9] == "1" and r[10] == "0") == 254
r = json.load(open(d + "/cr.json", encoding="utf-8"))
assert r["origin"] == "nsys" and r["events"]["kernel"] == 1312
fired = {a["rule"] for a in r["advice"] if a["fired"]}
assert {"pageable_copies", "cuda_api_sync", "cuda_memcpy_sync"} <= fired, fired
print("cloverleaf: exports and report ok")
PY
else
    echo "fixture $FIX missing: cloverleaf part skipped"
fi
