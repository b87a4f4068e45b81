#!/bin/sh
# import_counts.sh: `gtrace import` of every file under tests/fixtures/pytorch,
# one at a time, gives the rows `gtrace info` counts below. The numbers are
# recorded once and each is also derived here from the file itself (Python's
# json and pickle modules): a Kineto trace's NVTX rows are its cpu_op,
# user_annotation and python_function events, its marks and the two
# categories; its heap rows are one per "[memory]" event and one per change of
# the allocator's size (reserved, or allocated where nothing is reserved); a
# snapshot's NVTX rows are its "oom" and "snapshot" actions. A hostile pickle
# is refused with the line recorded for it. A fixture added without its
# numbers here fails the test. Then the device side (gtrace's Chrome export
# of the nsys cloverleaf trace, and a file with every kind of device
# activity): each category becomes the rows of its table, with the copy,
# memset and sync kinds its name says.
# Skipped (77) without python3.
set -eu
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipped"; exit 77; }
FIXTURES=${GT_FIXTURES:-${GT_TOP_SRCDIR:-.}/tests/fixtures}
FX=$FIXTURES/pytorch
NSYS=$FIXTURES/nsys/cloverleaf-cuda-nsys2024.5.sqlite
GTRACE=${GT_TOP_BUILDDIR:-.}/libtrace/cli/gtrace
DIR=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-import-counts-XXXXXX")
trap 'rm -rf "$DIR"' EXIT

# FILE (below tests/fixtures/pytorch) | what `gtrace info` counts, or the error
cat > "$DIR/expected" <<'EOF'
mlp_1rank/mlp.1795650204571289367.pt.trace.json.gz|nvtx 981 heap 172
ddp_2rank/rank0.1795650210654061099.pt.trace.json.gz|nvtx 452 heap 268
ddp_2rank/rank1.1795650210657406776.pt.trace.json.gz|nvtx 452 heap 268
plain.json|nvtx 222 heap 114
snapshot_p4.pickle|nvtx 2 heap 9
snapshot_p2.pickle|heap 8
bad_memo.pickle|error: memo reference 7 out of range at offset 3
deep.pickle|error: containers nested more than 256 deep at offset 1320
evil_global.pickle|error: pickle opcode GLOBAL at offset 23 is not data; refusing to run code
evil_stack_global.pickle|error: pickle opcode STACK_GLOBAL at offset 43 is not data; refusing to run code
huge_length.pickle|error: truncated: the pickle ends inside BINUNICODE8 at offset 2
truncated.pickle|error: truncated: the pickle ends inside FRAME at offset 2
EOF

# "kind n kind n...": the events section of `gtrace info`
info_counts() {
    "$GTRACE" info "$1" | awk '/^events/ { on = 1; next } on && /^  / { printf "%s%s %s", sep, $1, $2; sep = " "; next } on { exit }'
}

n=0
for path in $(cd "$FX" && find . -type f \( -name '*.json' -o -name '*.json.gz' -o -name '*.pickle' \) | sed 's|^\./||' | sort); do
    want=$(awk -F'|' -v f="$path" '$1 == f { print $2 }' "$DIR/expected")
    [ -n "$want" ] || fail "$path: no counts recorded for this fixture"
    rm -f "$DIR/t.sqlite"
    case $want in
    error:*)
        if "$GTRACE" import "$FX/$path" -o "$DIR/t.sqlite" > /dev/null 2> "$DIR/err"; then
            fail "$path: imported"
        fi
        [ "$(cat "$DIR/err")" = "gtrace: import: $FX/$path: ${want#error: }" ] || fail "$path: $(cat "$DIR/err")"
        [ ! -e "$DIR/t.sqlite" ] || fail "$path: a trace was left"
        ;;
    *)
        "$GTRACE" import "$FX/$path" -o "$DIR/t.sqlite" > /dev/null
        got=$(info_counts "$DIR/t.sqlite")
        [ "$got" = "$want" ] || fail "$path: gtrace info counts '$got', want '$want'"
        ;;
    esac
    n=$((n + 1))
done
[ "$n" -eq "$(wc -l < "$DIR/expected")" ] || fail "$n fixtures for $(wc -l < "$DIR/expected") recorded"

# The two ranks together: one process each, the sums of the two.
"$GTRACE" import "$FX"/ddp_2rank/rank0.*.gz "$FX"/ddp_2rank/rank1.*.gz -o "$DIR/ddp.sqlite" > /dev/null
[ "$(info_counts "$DIR/ddp.sqlite")" = "nvtx 904 heap 536" ] || fail "ddp: $(info_counts "$DIR/ddp.sqlite")"
[ "$("$GTRACE" info "$DIR/ddp.sqlite" | sed -n 's/^processes *//p')" = 2 ] || fail "ddp: not two processes"

# The recorded numbers, from the files themselves.
python3 - "$FX" "$DIR/expected" <<'PY'
import gzip, json, pickle, sys
fx, expected = sys.argv[1], sys.argv[2]

def kineto(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        ev = json.load(f)["traceEvents"]
    x = [e for e in ev if e.get("ph") == "X"]
    nvtx = 2 + sum(e.get("cat") in ("cpu_op", "user_annotation", "python_function") for e in x)
    nvtx += sum(e.get("ph") in ("i", "I") and e.get("name") != "[memory]" and isinstance(e.get("pid"), int)
                and e.get("cat") in ("cpu_instant_event", "user_annotation") for e in ev)
    mem = [e["args"] for e in sorted((e for e in ev if e.get("name") == "[memory]"), key=lambda e: e["ts"])]
    dev = [a for a in mem if a.get("Device Type", 0) != 0]
    mem = dev or mem
    heap, size = 0, 0
    if mem:
        before = max(mem[0]["Total Allocated"] - mem[0]["Bytes"], 0)
        if max(before, mem[0].get("Total Reserved", 0)) > 0:
            heap, size = 1, max(before, mem[0].get("Total Reserved", 0))
        heap += before > 0 # what was allocated before the profiler started
    for a in mem:
        s = max(a.get("Total Reserved", 0), a["Total Allocated"])
        heap += 1 + (s != size)
        size = s
    return {"nvtx": nvtx, "heap": heap}

def snapshot(path):
    d = pickle.load(open(path, "rb"))
    actions = [a["action"] for t in d.get("device_traces", []) for a in t]
    return {"nvtx": sum(a in ("oom", "snapshot") for a in actions)}

for line in open(expected):
    path, want = line.rstrip("\n").split("|")
    if want.startswith("error:"):
        continue
    w = dict(zip(want.split()[::2], map(int, want.split()[1::2])))
    got = snapshot(f"{fx}/{path}") if path.endswith(".pickle") else kineto(f"{fx}/{path}")
    for k, v in got.items():
        assert w.get(k, 0) == v, (path, k, w.get(k, 0), v)
print("recorded counts agree with the files")
PY

# ---- the device side ----------------------------------------------------------
# A GPU run's layout: each category's events are the rows of its table.
"$GTRACE" export "$NSYS" --format chrome -o "$DIR/clover.json" 2>/dev/null
"$GTRACE" import "$DIR/clover.json" -o "$DIR/clover.sqlite" > /dev/null
want=$(python3 - "$DIR/clover.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
n = lambda *cats: sum(e.get("ph") == "X" and e.get("cat") in cats for e in ev)
print(f"kernel {n('kernel')} memcpy {n('gpu_memcpy')} cuda_api {n('cuda_runtime', 'cuda_driver')} "
      f"sync {n('cuda_sync')} nvtx 2")
PY
)
[ "$want" = "kernel 1312 memcpy 279 cuda_api 3048 sync 1312 nvtx 2" ] || fail "clover's JSON: $want"
[ "$(info_counts "$DIR/clover.sqlite")" = "$want" ] || fail "clover: $(info_counts "$DIR/clover.sqlite"), want $want"

# Every device activity, its kinds from its name (nsys's numbers: copy
# kinds 1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP; memory kinds 0 pageable, 1 pinned,
# 2 device, 4 managed, 7 unknown; sync 1 event, 2 stream wait, 3 stream,
# 4 context, 0 unknown), on the device and stream the args name.
python3 - "$DIR/gpu.json" <<'PY'
import json, sys
ev = []
def add(cat, name, **args):
    ev.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 7, "ts": len(ev) + 1, "dur": 0.5,
               "args": dict({"device": 1, "stream": 7, "context": 3, "correlation": len(ev) + 100}, **args)})
for name in ("Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH (Device -> Pinned)",
             "Memcpy DtoD (Device -> Device)", "Memcpy PtoP (Device -> Device)", "Memcpy HtoD", "copy"):
    add("gpu_memcpy", name, bytes=4096)
for name in ("Memset (Device)", "Memset (Pinned)", "Memset (Managed)", "Memset (Pageable)"):
    add("gpu_memset", name, bytes=512)
for name in ("Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync", "Sync"):
    add("cuda_sync", name)
add("kernel", "gemm", grid=[4, 2, 1], block=[128, 1, 1], **{"registers per thread": 32, "shared memory": 1024})
ev.append({"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 9, "tid": 9, "ts": 30, "dur": 1,
           "args": {"correlation": 500}})
json.dump({"traceEvents": ev, "deviceProperties": [{"id": 1, "name": "Test GPU", "totalGlobalMem": 1 << 34,
           "computeMajor": 9, "computeMinor": 0, "numSms": 132, "warpSize": 32}]}, open(sys.argv[1], "w"))
PY
"$GTRACE" import "$DIR/gpu.json" -o "$DIR/gpu.sqlite" > /dev/null
python3 - "$DIR/gpu.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
q = lambda sql: db.execute(sql).fetchall()
rows = q("SELECT copyKind, srcKind, dstKind, bytes, deviceId, streamId, contextId FROM CUPTI_ACTIVITY_KIND_MEMCPY "
         "ORDER BY start")
assert rows == [(1, 0, 2, 4096, 1, 7, 3), (2, 2, 1, 4096, 1, 7, 3), (8, 2, 2, 4096, 1, 7, 3),
                (10, 2, 2, 4096, 1, 7, 3), (1, 7, 7, 4096, 1, 7, 3), (0, 7, 7, 4096, 1, 7, 3)], rows
rows = q("SELECT memKind, bytes FROM CUPTI_ACTIVITY_KIND_MEMSET ORDER BY start")
assert rows == [(2, 512), (1, 512), (4, 512), (0, 512)], rows
rows = q("SELECT syncType, correlationId FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION ORDER BY start")
assert rows == [(1, 110), (2, 111), (3, 112), (4, 113), (0, 114)], rows
rows = q("SELECT gridX, gridY, gridZ, blockX, registersPerThread, staticSharedMemory, s.value "
         "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName")
assert rows == [(4, 2, 1, 128, 32, 1024, "gemm")], rows
rows = q("SELECT eventClass, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME")
assert rows == [(1, 500)], rows
rows = q("SELECT id, name, totalMemory, computeMajor, smCount FROM TARGET_INFO_GPU")
assert rows == [(1, "Test GPU", 1 << 34, 9, 132)], rows
print("device activities: tables and kinds as their names say")
PY
echo "import_counts: all checks passed"
