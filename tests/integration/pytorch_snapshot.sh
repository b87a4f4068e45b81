#!/bin/sh
# pytorch_snapshot.sh: a CUDA memory snapshot that a Python process leaves in
# the run's parts folder (as gtrace_torch/memory.py does on a GPU) goes into
# the trace itself, as that process's memory events and stacks on the
# trace's clock. No GPU: pytorch_snapshot.py writes make_snapshots.py's
# hand-built snapshot (PyTorch 2.x's format) with its history stamped now,
# inside an NVTX range of its own. Then gtrace report shows the process's
# allocator with the snapshot's peak, gtrace memory --pid P --at T its blocks
# with their Python frames, every memory event lies in the run and under the
# process's pid; no pickle is left beside the trace. A damaged and a hostile
# pickle each give one line naming it, exit 3 (the trace is incomplete), a
# trace with the rest of the run, and the pickle kept beside it. The snapshot
# of an out-of-memory error goes in when the process left no other; beside
# one at exit it is kept beside the trace for gtrace import.
. "$GT_TOP_SRCDIR/tests/integration/capture_common.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
PROG="$GT_TOP_SRCDIR/tests/integration/pytorch_snapshot.py"
FX="$GT_TOP_SRCDIR/tests/fixtures/pytorch"
MiB=1048576
GP="(globalTid >> 24) & 16777215" # the pid of a global thread id

# ---- a good snapshot ----------------------------------------------------------
"$GTRACE" --pytorch -o good.sqlite python3 "$PROG" "$FX" good > good.out 2> good.err ||
    fail "gtrace --pytorch exited $?: $(cat good.err)"
cat good.err
PID=$(sed -n 's/^pid \([0-9]*\) .*/\1/p' good.out)
T0_US=$(sed -n 's/.* t0_us \([0-9]*\)$/\1/p' good.out)
[ -n "$PID" ] && [ -n "$T0_US" ] || fail "the program printed: $(cat good.out)"
grep -q "CUDA memory     process $PID: 2 segments, 3 blocks, 10 actions" good.err ||
    fail "no account of the snapshot in the summary"
[ -z "$(ls | grep pickle)" ] || fail "a pickle left beside the trace: $(ls)"

# Under the process's own pid: its NVTX range's and its memory events'.
expect_eq "pid of the NVTX range" "$PID" "$(q good.sqlite "SELECT DISTINCT $GP FROM NVTX_EVENTS n WHERE $NT = 'allocate'")"
expect_eq "pids of the memory events" "$PID" "$(q good.sqlite "SELECT group_concat(DISTINCT $GP) FROM GTRACE_MEMORY_EVENTS")"
expect_eq "process rows" 1 "$(q good.sqlite "SELECT count(*) FROM PROCESSES WHERE pid = $PID")"

# On the trace's clock: the history (t0 + 10 us to t0 + 50 us, stamped inside
# the range) lies inside the range, and the state before it (registered a
# nanosecond before its first action at most) too.
RANGE=$(q good.sqlite "SELECT start || ' ' || end FROM NVTX_EVENTS n WHERE $NT = 'allocate'")
FIRST=$(q good.sqlite "SELECT min(start) FROM GTRACE_MEMORY_EVENTS")
LAST=$(q good.sqlite "SELECT max(start) FROM GTRACE_MEMORY_EVENTS")
set -- $RANGE
[ "$FIRST" -ge "$1" ] && [ "$LAST" -le "$2" ] ||
    fail "memory events from $FIRST to $LAST, outside the range $1 to $2"
echo "ok: memory events $FIRST..$LAST inside the range $1..$2"
SESSION=$(q good.sqlite "SELECT value FROM TARGET_INFO_SESSION_START_TIME" 2>/dev/null ||
          q good.sqlite "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME")
[ -n "$SESSION" ] || fail "no start time in the trace"
# the OOM mark at t0 + 30 us on the wall clock, within a millisecond
OOM=$(q good.sqlite "SELECT n.start FROM NVTX_EVENTS n WHERE $NT LIKE 'out of memory on cuda:0%'")
WALL_US=$(( (SESSION + OOM) / 1000 ))
D=$(( WALL_US - T0_US - 30 ))
[ "$D" -ge -1000 ] && [ "$D" -le 1000 ] || fail "the OOM is at $WALL_US us on the wall clock, not $T0_US + 30"
echo "ok: the OOM mark at t0 + 30 us (off by $D us)"

# report: the process's allocator and its peak (512 B from before the
# history, 8 MiB + 4 MiB + 1 KiB allocated at t0 + 13 us; 22 MiB reserved).
"$GTRACE" report --json good.sqlite > report.json || fail "gtrace report failed"
"$GTRACE" report good.sqlite > report.txt || fail "gtrace report failed"
python3 - "$PID" $((12 * MiB + 1536)) $((22 * MiB)) report.json <<'PY' || fail "report: $(cat report.txt)"
import json, sys
pid, peak, reserved = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
r = json.load(open(sys.argv[4]))
def walk(o, path=""):
    if isinstance(o, dict):
        for k, v in o.items():
            yield from walk(v, path + "." + k)
        yield path, o
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from walk(v, path + "[%d]" % i)
found = [(p, o) for p, o in walk(r) if isinstance(o, dict) and o.get("pid") == pid and "peak_allocated_bytes" in o]
assert found, "no memory of process %d in the report" % pid
p, o = found[0]
assert o["peak_allocated_bytes"] == peak, (p, o)
print("ok: report %s: peak %d bytes" % (p, peak))
PY

# memory --pid P --at T: the blocks and their Python frames at t0 + 25 us
# (after the 4 MiB block's free at t0 + 20 us): 512 B, 8 MiB, 1 KiB. On the
# trace's clock, 5 us before the OOM mark (the clocks' readings are some
# microseconds apart).
AT=$(( OOM - 5000 ))
"$GTRACE" memory good.sqlite --pid "$PID" --at "$AT" > state.txt || fail "gtrace memory failed"
cat state.txt
grep -q "0x7f0000000000 .*linear < forward" state.txt || fail "the 8 MiB block without its frames"
grep -q "0x7f0004000200 .*bias < forward" state.txt || fail "the 1 KiB block without its frames"
grep -q "0x7f0000800000" state.txt && fail "the 4 MiB block freed at t0 + 20 us is there at t0 + 25 us"
"$GTRACE" memory --json good.sqlite --pid "$PID" --at "$AT" > state.json
grep -q "\"allocated_bytes\":$((8 * MiB + 1536)),\"reserved_bytes\":$((22 * MiB))" state.json ||
    fail "allocated/reserved at t0 + 25 us: $(cat state.json)"
echo "ok: memory --pid $PID --at $AT"

# ---- a damaged and a hostile snapshot ----------------------------------------------
rm -f /tmp/gtrace-import-pwned
for kind in truncated hostile; do
    st=0
    "$GTRACE" --pytorch -o $kind.sqlite python3 "$PROG" "$FX" $kind > $kind.out 2> $kind.err || st=$?
    expect_eq "$kind: exit status" 3 "$st"
    P=$(sed -n 's/^pid \([0-9]*\) .*/\1/p' $kind.out)
    grep "pytorch-$P.pickle" $kind.err > $kind.line || fail "$kind: no line names the pickle: $(cat $kind.err)"
    expect_eq "$kind: lines naming the pickle" 1 "$(wc -l < $kind.line | tr -d ' ')"
    grep -q "is not in the trace (.*); kept as .*$kind.sqlite.pytorch-$P.pickle" $kind.line ||
        fail "$kind: unclear line: $(cat $kind.line)"
    echo "ok: $kind: $(cat $kind.line)"
    [ -f "$kind.sqlite.pytorch-$P.pickle" ] || fail "$kind: the pickle is not kept beside the trace"
    expect_eq "$kind: the NVTX range" 1 "$(nvtx_count $kind.sqlite allocate)"
    expect_eq "$kind: memory events" 0 "$(q $kind.sqlite "SELECT count(*) FROM GTRACE_MEMORY_EVENTS")"
done
[ ! -e /tmp/gtrace-import-pwned ] || fail "the hostile pickle ran code"
echo "ok: damaged and hostile snapshots"

# ---- the snapshot of an out-of-memory error ---------------------------------------
"$GTRACE" --pytorch -o oom.sqlite python3 "$PROG" "$FX" oom > oom.out 2> oom.err ||
    fail "oom: gtrace --pytorch exited $?: $(cat oom.err)"
P=$(sed -n 's/^pid \([0-9]*\) .*/\1/p' oom.out)
grep -q "CUDA memory     process $P: 2 segments, 3 blocks, 10 actions" oom.err || fail "oom: not in the trace: $(cat oom.err)"
expect_eq "oom: pids of the memory events" "$P" "$(q oom.sqlite "SELECT group_concat(DISTINCT $GP) FROM GTRACE_MEMORY_EVENTS")"
[ -z "$(ls | grep '^oom.*pickle')" ] || fail "oom: a pickle left beside the trace"
"$GTRACE" --pytorch -o both.sqlite python3 "$PROG" "$FX" both > both.out 2> both.err ||
    fail "both: gtrace --pytorch exited $?: $(cat both.err)"
P=$(sed -n 's/^pid \([0-9]*\) .*/\1/p' both.out)
expect_eq "both: memory events (the snapshot at exit's only)" 9 \
    "$(q both.sqlite "SELECT count(*) FROM GTRACE_MEMORY_EVENTS")"
[ -f "both.sqlite.pytorch-$P-oom.pickle" ] && [ ! -e "both.sqlite.pytorch-$P.pickle" ] ||
    fail "both: beside the trace: $(ls | grep '^both')"
grep -q "CUDA memory snapshot: both.sqlite.pytorch-$P-oom.pickle (gtrace import it)" both.err ||
    fail "both: the kept snapshot is not named: $(cat both.err)"
echo "ok: out-of-memory snapshots"
