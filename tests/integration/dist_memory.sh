#!/bin/sh
# dist_memory.sh: memory of a distributed job, each process apart. gtrace
# runs mpirun -np 2 trainer --dist ddp --batch 4 --steps 10; both ranks land
# in one trace and both register their caching allocator's heaps with the
# same NVTX handles (1, 2, 3) at addresses of their own. Checked:
#   - gtrace report --json: two processes, each with the peak allocated and
#     reserved bytes the trainer printed (rank 0 prints; the ranks of a DDP
#     job hold the same shapes), never allocated above reserved, the same in
#     the text report;
#   - gtrace memory --step 5: each process's allocator, every block in a
#     segment of its own process (none "outside known segments"); --pid one;
#   - gtrace export --format memviz: one snapshot per process (OUT.pid<P>.pickle),
#     read by Python's pickle as plain data; in each, blocks tile their
#     segments, the trace puts every block in a live segment and never frees
#     a segment while a block in it lives; --pid writes one; /dev/stdout
#     takes one process, not two;
#   - a range name that is not UTF-8 becomes U+FFFD in the pickle.
# Skips (77) without Open MPI in this build, mpirun, the fortunes data or python3.
set -u
: "${GT_TOP_BUILDDIR:?run through make check}"
grep -q '^#define HAVE_MPI 1' "$GT_TOP_BUILDDIR/config.h" || { echo "skip: built without Open MPI"; exit 77; }
command -v mpirun >/dev/null 2>&1 || { echo "skip: no mpirun (apt-get install openmpi-bin)"; exit 77; }
data=/usr/share/games/fortunes
[ -d "$data" ] || { echo "skip: $data is missing (apt-get install fortunes)"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 not found"; exit 77; }
command -v sqlite3 >/dev/null 2>&1 || { echo "sqlite3 (the CLI) is needed by this test"; exit 99; }
. "$GT_TOP_SRCDIR/tests/integration/dist_common.sh"
GTRACE="$GT_TOP_BUILDDIR/libtrace/cli/gtrace"
TRAINER="$GT_TOP_BUILDDIR/trainer/trainer"
for f in "$GTRACE" "$TRAINER"; do
    [ -x "$f" ] || { echo "missing $f: build it first"; exit 99; }
done
WORK=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-dist-memory.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 99
fail() { echo "FAIL: $*"; exit 1; }

"$GTRACE" -o d.sqlite mpirun --oversubscribe --bind-to none -np 2 "$TRAINER" --dist ddp --batch 4 --steps 10 \
    > run.log 2>&1 || { cat run.log; fail "gtrace mpirun trainer --dist ddp"; }
line=$(grep 'trainer: 10 steps in' run.log)
echo "$line"
alloc=$(echo "$line" | sed -n 's/.*peak allocated \([0-9.]*\) MiB.*/\1/p')
reserved=$(echo "$line" | sed -n 's/.*peak reserved \([0-9.]*\) MiB.*/\1/p')
[ -n "$alloc" ] && [ -n "$reserved" ] || fail "the trainer printed no peak allocated and reserved: $line"

# ---- the report: each rank's figures, as the trainer printed them -----------
"$GTRACE" report --json d.sqlite > report.json || fail "gtrace report --json"
python3 - report.json "$alloc" "$reserved" <<'PY' || fail "the report's memory per process"
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
alloc, reserved = float(sys.argv[2]), float(sys.argv[3])
ok = True
def check(what, cond, got):
    global ok
    print(("ok: " if cond else "FAIL: ") + what + ": " + repr(got))
    ok = ok and cond
procs = m["processes"]
check("two processes with allocations", len(procs) == 2 and len({p["pid"] for p in procs}) == 2,
      [p["pid"] for p in procs])
for p in procs:
    who = "pid %d" % p["pid"]
    a, r = p["peak_allocated_bytes"] / 2**20, p["peak_reserved_bytes"] / 2**20
    # the trainer prints one decimal
    check(who + ": peak allocated = the trainer's %.1f MiB" % alloc, abs(a - alloc) <= 0.05 + 1e-9, a)
    check(who + ": peak reserved = the trainer's %.1f MiB" % reserved, abs(r - reserved) <= 0.05 + 1e-9, r)
    check(who + ": allocated <= reserved", p["peak_allocated_bytes"] <= p["peak_reserved_bytes"], (a, r))
check("the whole trace's figures are one process's", m["peak_allocated_bytes"] <= m["peak_reserved_bytes"],
      (m["peak_allocated_bytes"], m["peak_reserved_bytes"]))
t = m["total"]
check("both at once: allocated <= reserved", t is not None and t["peak_allocated_bytes"] <= t["peak_reserved_bytes"], t)
check("no row left out", m["skipped_rows"] == 0, m["skipped_rows"])
sys.exit(0 if ok else 1)
PY
"$GTRACE" report d.sqlite > report.txt || fail "gtrace report"
sed -n '/^memory/,/^advice/p' report.txt | grep -v spike
grep -q '^memory         2 processes, each its own allocator' report.txt || fail "the text report's memory is not per process"
[ "$(grep -c "^  rank [01] (pid [0-9]*): peak allocated $alloc" report.txt)" = 2 ] ||
    [ "$(grep -c "^  rank [01] (pid [0-9]*): peak allocated $(printf '%.2f' "$alloc")" report.txt)" = 2 ] ||
    fail "the text report does not give both ranks $alloc MiB"

# ---- the allocator at step 5, each process's own ----------------------------
"$GTRACE" memory d.sqlite --step 5 > mem.txt || fail "gtrace memory --step 5"
grep '^process\|allocator state' mem.txt
[ "$(grep -c '^process [0-9]*: allocator state at' mem.txt)" = 2 ] || fail "memory --step 5: not two processes"
! grep -q 'outside known segments' mem.txt || fail "memory --step 5: blocks outside known segments"
"$GTRACE" memory d.sqlite --step 5 --json > mem.json || fail "gtrace memory --step 5 --json"
pids=$(python3 - mem.json <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["processes"]
for p in s:
    assert not p["unplaced_blocks"], p["pid"]
    assert p["allocated_bytes"] <= p["reserved_bytes"], p["pid"]
    for g in p["segments"]:
        for b in g["blocks"]:
            assert g["address"] <= b["address"] and b["address"] + b["bytes"] <= g["address"] + g["bytes"], (p["pid"], b)
print(" ".join(str(p["pid"]) for p in s))
PY
) || fail "memory --step 5 --json: a block outside its process's segments"
echo "ok: memory --step 5: processes $pids, every block in a segment of its own process"
set -- $pids
[ $# = 2 ] || fail "memory --json: two processes expected, got '$pids'"
"$GTRACE" memory d.sqlite --step 5 --pid "$2" > one.txt || fail "gtrace memory --pid $2"
grep -q "^allocator state at" one.txt && ! grep -q '^process' one.txt || fail "memory --pid: $(head -n 2 one.txt)"
echo "ok: memory --pid $2: one process"

# ---- memviz: one snapshot per process ----------------------------------------
"$GTRACE" export d.sqlite --format memviz -o snap.pickle 2> export.err || { cat export.err; fail "export memviz"; }
cat export.err
[ ! -e snap.pickle ] || fail "export memviz wrote both processes into one snapshot"
cat > check_snapshot.py <<'PY'
import pickle, sys
def plain(x):
    if isinstance(x, dict):
        return all(isinstance(k, str) and plain(v) for k, v in x.items())
    if isinstance(x, (list, tuple)):
        return all(plain(v) for v in x)
    return isinstance(x, (int, float, str, bool)) or x is None
for path in sys.argv[1:]:
    s = pickle.load(open(path, "rb"))
    assert plain(s), path + ": not plain data"
    segs = s["segments"]  # the state at the end: the trainer gives its heaps back at exit
    for g in segs:
        at = g["address"]
        for b in g["blocks"]:  # blocks tile the segment
            assert b["address"] == at, (path, g["address"], b)
            at += b["size"]
        assert at == g["address"] + g["total_size"], (path, g["address"])
    # the trace: no segment freed while a block in it lives, no block outside a live segment
    live_segs, live_blocks = {}, {}
    traces = [t for t in s["device_traces"] if t]
    assert len(traces) == 1, path + ": %d device traces" % len(traces)
    assert any(e["action"] == "segment_alloc" for e in traces[0]), path + ": no segment in the trace"
    for e in traces[0]:
        a, n = e["addr"], e["size"]
        if e["action"] == "segment_alloc":
            live_segs[a] = n
        elif e["action"] == "segment_free":
            inside = [b for b in live_blocks if a <= b < a + live_segs.get(a, 0)]
            assert not inside, (path, "segment freed with live blocks", a, inside)
            live_segs.pop(a, None)
        elif e["action"] == "alloc":
            assert any(g <= a and a + n <= g + m for g, m in live_segs.items()), (path, "block outside segments", a)
            live_blocks[a] = n
        elif e["action"] == "free_completed":
            live_blocks.pop(a, None)
    print("ok: %s: %d segments, %d trace entries" % (path, len(segs), len(traces[0])))
PY
python3 check_snapshot.py snap.pid"$1".pickle snap.pid"$2".pickle || fail "memviz snapshots"
"$GTRACE" export d.sqlite --format memviz --pid "$1" -o one.pickle 2> /dev/null || fail "export memviz --pid"
python3 check_snapshot.py one.pickle || fail "memviz --pid"
cmp -s one.pickle snap.pid"$1".pickle || fail "export --pid $1 differs from snap.pid$1.pickle"
"$GTRACE" export d.sqlite --format memviz -o /dev/stdout > /dev/null 2> stdout.err &&
    fail "export memviz of two processes to /dev/stdout succeeded"
grep -q -- '--pid' stdout.err || fail "export to /dev/stdout: $(cat stdout.err)"
echo "ok: two processes to /dev/stdout refused: $(cat stdout.err)"
"$GTRACE" export d.sqlite --format memviz --pid "$2" -o /dev/stdout 2> /dev/null > piped.pickle ||
    fail "export memviz --pid to /dev/stdout"
python3 check_snapshot.py piped.pickle || fail "memviz through /dev/stdout"

# ---- names that are not UTF-8 -------------------------------------------------
cp d.sqlite bad.sqlite
sqlite3 bad.sqlite "UPDATE StringIds SET value = CAST(X'6261636bff776172c364' AS TEXT) WHERE value = 'backward'"
[ "$(sqlite3 bad.sqlite "SELECT count(*) FROM StringIds WHERE hex(value) = '6261636BFF776172C364'")" = 1 ] ||
    fail "no range named backward to damage"
"$GTRACE" export bad.sqlite --format memviz --pid "$1" -o bad.pickle 2> /dev/null || fail "export memviz of bad names"
python3 - bad.pickle <<'PY' || fail "memviz with names that are not UTF-8"
import pickle, sys
s = pickle.load(open(sys.argv[1], "rb"))
names = set()
def walk(x):
    if isinstance(x, dict):
        if "name" in x and isinstance(x["name"], str):
            names.add(x["name"])
        for v in x.values():
            walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
walk(s)
assert "back\ufffdwar\ufffdd" in names, sorted(names)[:20]
print("ok: an invalid name reads back as", ascii("back\ufffdwar\ufffdd"))
PY
echo "all dist_memory checks passed"
