#!/bin/sh
# import_kineto.sh: `gtrace import` on real torch.profiler traces
# (tests/fixtures/pytorch, PyTorch 2.15.0): every cpu_op, annotation, Python
# call and [memory] event of each file is in the trace (counted by Python's
# json module on the same files), ProfilerStep#N are the steps the report
# finds, collectives carry their bytes, two ranks are two processes on one
# clock, memory totals are Kineto's last ones; a Kineto file of a GPU run
# (gtrace's own Chrome export of the nsys cloverleaf fixture) comes back with
# the same kernels, calls, copies and idle gaps; bad files, an existing
# output and a failed import over one leave everything as it was.
# Skipped (77) without python3.
set -eu
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipped"; exit 77; }
GTRACE=${GT_TOP_BUILDDIR:-.}/libtrace/cli/gtrace
FX=${GT_FIXTURES:-${GT_TOP_SRCDIR:-.}/tests/fixtures}/pytorch
NSYS=${GT_FIXTURES:-${GT_TOP_SRCDIR:-.}/tests/fixtures}/nsys/cloverleaf-cuda-nsys2024.5.sqlite
DIR=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-import-kineto-XXXXXX")
trap 'rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$GTRACE" import "$FX"/mlp_1rank/*.pt.trace.json.gz -o "$DIR/mlp.sqlite" > "$DIR/mlp.out"
"$GTRACE" import "$FX"/ddp_2rank/rank0.*.pt.trace.json.gz "$FX"/ddp_2rank/rank1.*.pt.trace.json.gz \
    -o "$DIR/ddp.sqlite" > "$DIR/ddp.out"
"$GTRACE" import -o "$DIR/plain.sqlite" "$FX/plain.json" > "$DIR/plain.out"
for t in mlp ddp plain; do
    "$GTRACE" report --json "$DIR/$t.sqlite" > "$DIR/$t.report.json"
    "$GTRACE" memory --json "$DIR/$t.sqlite" --at 1000s > "$DIR/$t.memory.json"
    "$GTRACE" export "$DIR/$t.sqlite" --format chrome -o "$DIR/$t.chrome.json" 2>/dev/null
done

python3 - "$DIR" <<'PY'
import collections, gzip, json, sqlite3, sys
d = sys.argv[1]
ELEM = {"float": 4, "double": 8, "c10::Half": 2, "c10::BFloat16": 2, "int": 4, "long int": 8}

def load(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        return json.load(f)

def dims_elems(dims):
    first = dims[0]
    if first and isinstance(first[0], list):
        n = 0
        for t in first:
            p = 1
            for x in t:
                p *= x
            n += p
        return n
    p = 1
    for x in first:
        p *= x
    return p

def expected(path):
    """What the importer should write for one Kineto file, from the JSON."""
    doc = load(path)
    ev = doc["traceEvents"]
    x = [e for e in ev if e.get("ph") == "X"]
    mem = sorted((e for e in ev if e.get("name") == "[memory]"), key=lambda e: e["ts"])
    steps = [e for e in x if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]
    comms = [e for e in x if e.get("cat") == "user_annotation" and e["name"].split(":")[0] in ("gloo", "nccl")]
    base = doc.get("baseTimeNanoseconds", 0)
    return {
        "cpu_op": sum(e.get("cat") == "cpu_op" for e in x),
        "user_annotation": sum(e.get("cat") == "user_annotation" for e in x),
        "python_function": sum(e.get("cat") == "python_function" for e in x),
        "steps": sorted(int(e["name"].split("#")[1]) for e in steps),
        "step_starts": {int(e["name"].split("#")[1]): base + round(e["ts"] * 1000) for e in steps},
        "comm_bytes": sorted(dims_elems(e["args"]["Input Dims"]) * ELEM[e["args"]["Input type"][0]] for e in comms),
        "memory": len(mem),
        "last_allocated": mem[-1]["args"]["Total Allocated"] if mem else None,
        "rank": doc.get("distributedInfo", {}).get("rank", -1),
        "first_ns": min(base + round(e["ts"] * 1000) for e in ev
                        if (e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation", "python_function"))
                        or e.get("name") == "[memory]"),
    }

def check(name):
    db = sqlite3.connect(f"file:{d}/{name}.sqlite?mode=ro", uri=True)
    q = lambda sql, *a: db.execute(sql, a).fetchall()
    srcs = q("SELECT globalPid, value FROM GTRACE_RUN_CONFIG WHERE key = 'import.source' ORDER BY globalPid")
    assert srcs, name
    exp = {gpid: expected(path) for gpid, path in srcs}
    t0 = min(e["first_ns"] for e in exp.values())
    report = json.load(open(f"{d}/{name}.report.json"))
    memory = {p["pid"]: p for p in json.load(open(f"{d}/{name}.memory.json"))["processes"]}
    for gpid, e in exp.items():
        pid = (gpid >> 24) & 0xffffff
        lo, hi = gpid, gpid | 0xffffff
        rng = "eventType = 59 AND globalTid BETWEEN ? AND ?"
        n_cpu = q(f"SELECT count(*) FROM NVTX_EVENTS WHERE {rng} AND category = 1", lo, hi)[0][0]
        assert n_cpu == e["cpu_op"], (name, pid, n_cpu, e["cpu_op"])
        n_py = q(f"SELECT count(*) FROM NVTX_EVENTS WHERE {rng} AND (globalTid & 8388608) != 0", lo, hi)[0][0]
        assert n_py == e["python_function"], (name, pid, n_py, e["python_function"])
        n_ann = q(f"SELECT count(*) FROM NVTX_EVENTS WHERE {rng} AND (category IS NULL OR category = 2) "
                  "AND (globalTid & 8388608) = 0", lo, hi)[0][0]
        assert n_ann == e["user_annotation"], (name, pid, n_ann, e["user_annotation"])
        # the message: in text, or (a registered string) through textId, as nsys stores it
        steps = q(f"SELECT coalesce(n.text, s.value) AS v, n.start FROM NVTX_EVENTS n "
                  f"LEFT JOIN StringIds s ON s.id = n.textId "
                  f"WHERE {rng.replace('eventType', 'n.eventType').replace('globalTid', 'n.globalTid')} "
                  "AND v LIKE 'step %' ORDER BY n.start", lo, hi)
        assert sorted(int(v.split()[1]) for v, _ in steps) == e["steps"], (name, steps, e["steps"])
        # one clock: each step where Kineto put it, from the earliest event of all files
        for v, start in steps:
            assert start == e["step_starts"][int(v.split()[1])] - t0, (name, v, start)
        comm = sorted(r[0] for r in q(f"SELECT uint64Value FROM NVTX_EVENTS WHERE {rng} AND category = 2", lo, hi))
        assert comm == e["comm_bytes"], (name, comm, e["comm_bytes"])
        rank = q("SELECT value FROM GTRACE_RUN_CONFIG WHERE globalPid = ? AND key = 'env.RANK'", gpid)
        assert (int(rank[0][0]) if rank else -1) == e["rank"], (name, rank, e["rank"])
        if e["memory"]:
            assert memory[pid]["allocated_bytes"] == e["last_allocated"], (name, memory[pid], e["last_allocated"])
    # the report's steps: ProfilerStep#N of the files, by number
    want = sorted(set(s for e in exp.values() for s in e["steps"]))
    got = sorted(set(s["number"] for s in report["steps"]))
    assert got == want, (name, got, want)
    assert report["cpu_timeline"] is True, name
    # the Chrome export of the import holds every op again
    ch = json.load(open(f"{d}/{name}.chrome.json"))["traceEvents"]
    n_ops = sum(e.get("ph") == "X" and e.get("cat") == "user_annotation" for e in ch)
    want_ops = sum(e["cpu_op"] + e["user_annotation"] + e["python_function"] for e in exp.values())
    assert n_ops == want_ops, (name, n_ops, want_ops)
    return report

r = check("mlp")
assert len(r["steps"]) == 3, r["steps"]
r = check("ddp")
assert len(json.load(open(f"{d}/ddp.memory.json"))["processes"]) == 2
ranks = r["communication"]["ranks"]
assert sorted(x["rank"] for x in ranks) == [0, 1] and all(x["collectives"] == 3 for x in ranks), ranks
r = check("plain")
assert r["steps"] == [], r["steps"]
print("kineto fixtures: counts, steps, clock, collectives, memory OK")
PY

# The summary names each file, its rank and what it became.
grep -q "rank 1" "$DIR/ddp.out" || fail "no rank in the summary: $(cat "$DIR/ddp.out")"
grep -q "3 steps" "$DIR/mlp.out" || fail "no steps in the summary: $(cat "$DIR/mlp.out")"

# A GPU run's Kineto layout (gtrace's Chrome export of a real nsys trace):
# the same kernels, CUDA calls, copies, devices and idle gaps come back.
"$GTRACE" export "$NSYS" --format chrome -o "$DIR/clover.json" 2>/dev/null
"$GTRACE" import "$DIR/clover.json" -o "$DIR/clover.sqlite" > /dev/null
"$GTRACE" report --json "$NSYS" > "$DIR/clover.nsys.json"
"$GTRACE" report --json "$DIR/clover.sqlite" > "$DIR/clover.import.json"
python3 - "$DIR" <<'PY'
import json, sys
d = sys.argv[1]
a = json.load(open(f"{d}/clover.nsys.json"))
b = json.load(open(f"{d}/clover.import.json"))
assert a["events"]["kernel"] == b["events"]["kernel"] == 1312, (a["events"], b["events"])
for k in ("kernels", "kernel_names", "apis", "copies", "devices", "wall_ns"):
    assert a[k] == b[k], (k, str(a[k])[:400], str(b[k])[:400])
assert a["gaps"]["by_cause"] == b["gaps"]["by_cause"], (a["gaps"]["by_cause"], b["gaps"]["by_cause"])
print("GPU layout: kernels, calls, copies, gaps identical after export and import")
PY

# Two files on one clock, each by its own baseTimeNanoseconds, one of them
# after its events (Kineto wrote it last before 2.x): 1,000,500 ns and
# 1,000,000 + 500,250 ns after the same second, 499,750 ns apart.
cat > "$DIR/a.json" <<'EOF'
{"baseTimeNanoseconds": 1790000000000000000, "traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 10, "tid": 10, "ts": 1000.5, "dur": 10},
 {"ph": "i", "cat": "user_annotation", "name": "checkpoint", "pid": 10, "tid": 10, "ts": 1001, "s": "t"}]}
EOF
cat > "$DIR/b.json" <<'EOF'
{"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 20, "tid": 20, "ts": 500.25, "dur": 10}],
 "baseTimeNanoseconds": 1790000000001000000}
EOF
"$GTRACE" import "$DIR/b.json" "$DIR/a.json" -o "$DIR/ab.sqlite" > /dev/null
python3 - "$DIR/ab.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
rows = db.execute("SELECT (globalTid >> 24) & 16777215, start, eventType FROM NVTX_EVENTS "
                  "WHERE eventType IN (34, 59) ORDER BY start").fetchall()
assert rows == [(10, 0, 59), (10, 500, 34), (20, 499750, 59)], rows
PY

# Chrome's other form, a bare array of events
echo '[{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 1, "dur": 2}]' > "$DIR/bare.json"
"$GTRACE" import "$DIR/bare.json" -o "$DIR/bare.sqlite" | grep -q "1 cpu ops" || fail "a bare array of events"

# [memory] of an accelerator: its events are imported, the CPU's counted
# aside; the heap follows Total Reserved, the blocks Total Allocated (with
# 1 MiB allocated before the profiler started, freed during it).
cat > "$DIR/gpumem.json" <<'EOF'
{"baseTimeNanoseconds": 1790000000000000000, "traceEvents": [
 {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 1,
  "args": {"Addr": 4096, "Bytes": 64, "Total Allocated": 64, "Total Reserved": 0, "Device Id": -1, "Device Type": 0}},
 {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 2,
  "args": {"Addr": 139637976727552, "Bytes": 2097152, "Total Allocated": 3145728, "Total Reserved": 20971520, "Device Id": 0, "Device Type": 1}},
 {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 3,
  "args": {"Addr": 139637985116160, "Bytes": 4194304, "Total Allocated": 7340032, "Total Reserved": 20971520, "Device Id": 0, "Device Type": 1}},
 {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 4,
  "args": {"Addr": 139637976727552, "Bytes": -2097152, "Total Allocated": 5242880, "Total Reserved": 20971520, "Device Id": 0, "Device Type": 1}},
 {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 5,
  "args": {"Addr": 139630000000000, "Bytes": -1048576, "Total Allocated": 4194304, "Total Reserved": 4194304, "Device Id": 0, "Device Type": 1}},
 {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 5, "tid": 5, "ts": 6,
  "args": {"Addr": 8192, "Bytes": 32, "Total Allocated": 96, "Total Reserved": 0, "Device Id": -1, "Device Type": 0}}]}
EOF
"$GTRACE" import "$DIR/gpumem.json" -o "$DIR/gpumem.sqlite" > "$DIR/gpumem.out"
grep -q "4 memory events, 2 memory events of another device" "$DIR/gpumem.out" || fail "$(cat "$DIR/gpumem.out")"
# (times from the earliest event, the CPU's at 1 us: the device's at 1-4 us)
for at_want in "1000:3145728 20971520" "2500:7340032 20971520" "3500:5242880 20971520" \
               "4500:4194304 4194304"; do
    at=${at_want%%:*}
    got=$("$GTRACE" memory --json "$DIR/gpumem.sqlite" --at "$at" |
        sed -n 's/.*"allocated_bytes":\([0-9]*\),"reserved_bytes":\([0-9]*\).*/\1 \2/p' | head -1)
    [ "$got" = "${at_want#*:}" ] || fail "device [memory] at $at ns: $got, want ${at_want#*:}"
done

# ---- bad input: a clear line naming the file, exit 1, nothing written ----
expect_fail() { # FILE WORDS...: import FILE fails naming it and saying WORDS
    f=$1; shift
    if "$GTRACE" import "$f" -o "$DIR/bad.sqlite" > /dev/null 2> "$DIR/err"; then
        fail "import of $f succeeded"
    fi
    [ "$(wc -l < "$DIR/err")" -eq 1 ] || fail "not one line for $f: $(cat "$DIR/err")"
    grep -q "$f" "$DIR/err" || fail "message does not name $f: $(cat "$DIR/err")"
    grep -q "$*" "$DIR/err" || fail "message for $f lacks '$*': $(cat "$DIR/err")"
    [ ! -e "$DIR/bad.sqlite" ] || fail "a trace was left for $f"
    ls "$DIR" | grep -q 'import-' && fail "a partial file was left for $f"
    return 0
}
GZ=$(ls "$FX"/mlp_1rank/*.pt.trace.json.gz)
head -c 20000 "$GZ" > "$DIR/cut.json.gz"
expect_fail "$DIR/cut.json.gz" "unexpected end of file"
head -c 40000 "$FX/plain.json" > "$DIR/cut.json"
expect_fail "$DIR/cut.json" "truncated"
: > "$DIR/empty.json"
expect_fail "$DIR/empty.json" "empty"
echo "hello" > "$DIR/text.json"
expect_fail "$DIR/text.json" "neither a torch.profiler trace"
echo '{"schemaVersion": 1, "deviceProperties": []}' > "$DIR/noevents.json"
expect_fail "$DIR/noevents.json" "no traceEvents"
echo '{"traceEvents": [{"ph": "X", "ts": 1.5, "dur": 2 "name": "a"}]}' > "$DIR/comma.json"
expect_fail "$DIR/comma.json" "line 1: expected ',' or '}'"
python3 -c 'print("{\"traceEvents\": [{\"args\": " + "[" * 100 + "]" * 100 + "}]}")' > "$DIR/deep.json"
expect_fail "$DIR/deep.json" "nested more than 64 deep"
printf '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a\\ud800", "ts": 1}]}' > "$DIR/surrogate.json"
expect_fail "$DIR/surrogate.json" "surrogate"
expect_fail "$DIR/missing.json" "No such file"

# an existing output is kept unless --force; a failed --force import keeps it too
cp "$DIR/mlp.sqlite" "$DIR/keep.sqlite"
if "$GTRACE" import "$FX/plain.json" -o "$DIR/keep.sqlite" > /dev/null 2> "$DIR/err"; then
    fail "import replaced an existing file without --force"
fi
grep -q "exists (use --force" "$DIR/err" || fail "$(cat "$DIR/err")"
cmp -s "$DIR/keep.sqlite" "$DIR/mlp.sqlite" || fail "the existing output changed"
if "$GTRACE" import "$FX/plain.json" "$DIR/cut.json" --force -o "$DIR/keep.sqlite" > /dev/null 2>&1; then
    fail "an import with a truncated input succeeded"
fi
cmp -s "$DIR/keep.sqlite" "$DIR/mlp.sqlite" || fail "a failed --force import damaged the existing output"
"$GTRACE" import "$FX/plain.json" --force -o "$DIR/keep.sqlite" > /dev/null
cmp -s "$DIR/keep.sqlite" "$DIR/mlp.sqlite" && fail "--force did not replace the output"

# usage errors: exit 2
set +e
"$GTRACE" import "$FX/plain.json" > /dev/null 2>&1; [ $? -eq 2 ] || fail "no -o: not a usage error"
"$GTRACE" import -o "$DIR/x.sqlite" > /dev/null 2>&1; [ $? -eq 2 ] || fail "no input: not a usage error"
"$GTRACE" import --bogus "$FX/plain.json" -o "$DIR/x.sqlite" > /dev/null 2>&1; [ $? -eq 2 ] || fail "unknown option"
set -e
echo "import_kineto: all checks passed"
