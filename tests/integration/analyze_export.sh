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
# every flow ends on the kernel or copy of the same correlation id
dev = {e["args"]["correlation"] for e in ev if e.get("cat") in ("kernel", "gpu_memcpy")}
assert ends == dev
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
assert len(a0) == 1 and a0[0]["pid"] == 0 and a0[0]["tid"] == 7, a0
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
