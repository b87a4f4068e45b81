#!/bin/sh
# import_snapshot.sh: `gtrace import` on PyTorch CUDA memory snapshot pickles
# (tests/fixtures/pytorch, written by Python's pickle in the format
# torch.cuda.memory._snapshot() returns): the allocator's state the snapshot
# ends in (expected.txt), and at moments of its history, as `gtrace memory`
# replays it; the OOM as a mark; blocks with their frames; the memviz export
# of the import gives back the snapshot's segments and blocks (checked by
# Python when there is one). Hostile pickles (code, deep nesting, huge
# lengths, truncation, a memo reference to nothing) are refused with one line
# naming the file and exit 1, run nothing, write nothing.
set -eu
GTRACE=${GT_TOP_BUILDDIR:-.}/libtrace/cli/gtrace
FX=${GT_FIXTURES:-${GT_TOP_SRCDIR:-.}/tests/fixtures}/pytorch
DIR=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-import-snapshot-XXXXXX")
trap 'rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# allocated and reserved bytes at a time of the first process's allocator on
# a device (0 unless given), from the JSON: each device is an allocator
state_at() { # TRACE TIME [DEVICE]
    "$GTRACE" memory --json "$1" --at "$2" | tr '{' '\n' |
        sed -n 's/.*"device_id":'"${3:-0}"',.*"allocated_bytes":\([0-9]*\),"reserved_bytes":\([0-9]*\).*/\1 \2/p' | head -1
}
expect_state() { # TRACE TIME ALLOCATED RESERVED [DEVICE]
    got=$(state_at "$1" "$2" "${5:-0}")
    [ "$got" = "$3 $4" ] || fail "$(basename "$1") at $2 on device ${5:-0}: allocated/reserved $got, want $3 $4"
}
# expected.txt: "NAME device D: segments N allocated A reserved R"
end_of() { # NAME DEVICE FIELD
    awk -v n="$1" -v d="$2:" -v f="$3" '$1 == n && $3 == d { for (i = 1; i < NF; i++) if ($i == f) s += $(i + 1) } END { print s + 0 }' \
        "$FX/expected.txt"
}

"$GTRACE" import "$FX/snapshot_p4.pickle" -o "$DIR/p4.sqlite" > "$DIR/p4.out"
"$GTRACE" import "$FX/snapshot_p2.pickle" -o "$DIR/p2.sqlite" > "$DIR/p2.out"
grep -q "2 segments, 3 allocated blocks, 10 allocator actions, 1 out-of-memory events" "$DIR/p4.out" ||
    fail "p4 summary: $(cat "$DIR/p4.out")"

# The end states the snapshots give.
expect_state "$DIR/p4.sqlite" 1000s "$(end_of snapshot_p4 0 allocated)" "$(end_of snapshot_p4 0 reserved)"
for d in 0 1; do
    expect_state "$DIR/p2.sqlite" 1000s "$(end_of snapshot_p2 $d allocated)" "$(end_of snapshot_p2 $d reserved)" $d
done

# The history (make_snapshots.py; times from the first action): p4 starts
# with a 2 MiB segment holding 512 B from before its history (at 0), maps
# 20 MiB with its first action (a nanosecond later, not to share the time
# with that state), allocates 8 MiB at 1 us, 4 MiB at 2 us and 1 KiB at 3 us,
# frees the
# 4 MiB at 11 us, allocates 2 MiB at 30 us and asks for its free at 31 us
# (allocated no more, as PyTorch counts, while its streams finish).
MiB=1048576
expect_state "$DIR/p4.sqlite" 0 512 $((2 * MiB))
expect_state "$DIR/p4.sqlite" 1 512 $((22 * MiB))
expect_state "$DIR/p4.sqlite" 5us $((512 + 12 * MiB + 1024)) $((22 * MiB))
expect_state "$DIR/p4.sqlite" 15us $((512 + 8 * MiB + 1024)) $((22 * MiB))
expect_state "$DIR/p4.sqlite" 30500 $((512 + 10 * MiB + 1024)) $((22 * MiB))
expect_state "$DIR/p4.sqlite" 35us $((512 + 8 * MiB + 1024)) $((22 * MiB))
# p2: device 0's expandable segment maps 4 MiB, holds 3 MiB, grows by 4 MiB
# at 2 us for a 4 MiB block (3 us) freed at 4 us, unmapped at 5 us; device 1
# has no history: its 2 MiB segment with 4 KiB in use from the start.
expect_state "$DIR/p2.sqlite" 1500 $((3 * MiB)) $((4 * MiB))
expect_state "$DIR/p2.sqlite" 3500 $((7 * MiB)) $((8 * MiB))
expect_state "$DIR/p2.sqlite" 4500 $((3 * MiB)) $((8 * MiB))
expect_state "$DIR/p2.sqlite" 5500 $((3 * MiB)) $((4 * MiB))
for t in 0 1500 3500 5500; do
    expect_state "$DIR/p2.sqlite" $t 4096 $((2 * MiB)) 1
done

# Who allocated: the frames (innermost first) of each block.
"$GTRACE" memory "$DIR/p4.sqlite" --at 1000s > "$DIR/p4.state"
grep -q "0x7f0000000000 .*linear < forward" "$DIR/p4.state" || fail "no frames: $(cat "$DIR/p4.state")"
# The OOM and the snapshot's mark, with their figures.
"$GTRACE" export "$DIR/p4.sqlite" --format chrome -o "$DIR/p4.json" 2>/dev/null
grep -q "out of memory on cuda:0: 67108864 bytes requested, 3145728 free" "$DIR/p4.json" || fail "no OOM mark"

# Snapshots and a Kineto trace in one import: a process each.
"$GTRACE" import "$FX/snapshot_p4.pickle" "$FX/snapshot_p2.pickle" "$FX/plain.json" -o "$DIR/all.sqlite" > /dev/null
[ "$("$GTRACE" memory --json "$DIR/all.sqlite" --at 1000s | grep -o '"pid":[0-9]*' | sort -u | wc -l)" -eq 3 ] ||
    fail "three inputs are not three processes"

# memory_viz's view of the import is the snapshot's (Python, when there is one)
if command -v python3 >/dev/null 2>&1; then
    "$GTRACE" export "$DIR/p4.sqlite" --format memviz -o "$DIR/p4.memviz.pickle" 2>/dev/null
    python3 - "$FX/snapshot_p4.pickle" "$DIR/p4.memviz.pickle" <<'PY'
import pickle, sys
a = pickle.load(open(sys.argv[1], "rb"))
b = pickle.load(open(sys.argv[2], "rb"))
segs = lambda s: sorted((g["address"], g["total_size"]) for g in s["segments"])
blocks = lambda s: sorted((k["address"], k["size"]) for g in s["segments"] for k in g["blocks"]
                          if k["state"] == "active_allocated")
assert segs(a) == segs(b), (segs(a), segs(b))
assert blocks(a) == blocks(b), (blocks(a), blocks(b))
print("memviz export of the import: same segments and blocks as the snapshot")
PY
fi

# A history replayed ends in the state its snapshot gives, when many actions
# share a microsecond too: gtrace's memviz export of the DDP ranks' imported
# Kineto memory (resizes as a segment freed and allocated again in the same
# microsecond), imported back.
KT=$(ls "$FX"/ddp_2rank/rank0.*.pt.trace.json.gz)
"$GTRACE" import "$KT" -o "$DIR/ddp0.sqlite" > /dev/null
"$GTRACE" export "$DIR/ddp0.sqlite" --format memviz -o "$DIR/ddp0.pickle" 2>/dev/null
"$GTRACE" import "$DIR/ddp0.pickle" -o "$DIR/ddp0.back.sqlite" > "$DIR/ddp0.back.out"
want=$(sed -n 's/^ *\([0-9]*\) segments, \([0-9]*\) allocated blocks.*/\1 segments, \2 blocks/p' "$DIR/ddp0.back.out")
got=$("$GTRACE" memory "$DIR/ddp0.back.sqlite" --at 1000s | sed -n 's/.*, \([0-9]* segments, [0-9]* blocks\)$/\1/p')
[ -n "$want" ] && [ "$got" = "$want" ] || fail "replayed history ends in '$got', the snapshot in '$want'"
if command -v python3 >/dev/null 2>&1; then
    python3 - "$DIR/ddp0.pickle" "$(state_at "$DIR/ddp0.back.sqlite" 1000s)" <<'PY'
import pickle, sys
s = pickle.load(open(sys.argv[1], "rb"))
alloc = sum(b["size"] for g in s["segments"] for b in g["blocks"] if b["state"] == "active_allocated")
res = sum(g["total_size"] for g in s["segments"])
assert sys.argv[2] == f"{alloc} {res}", (sys.argv[2], alloc, res)
PY
fi

# ---- hostile and wrong pickles ----------------------------------------------
rm -f /tmp/gtrace-import-pwned
expect_fail() { # FILE WORDS...
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
expect_fail "$FX/evil_global.pickle" "pickle opcode GLOBAL at offset 23 is not data; refusing to run code"
expect_fail "$FX/evil_stack_global.pickle" "pickle opcode STACK_GLOBAL at offset"
[ ! -e /tmp/gtrace-import-pwned ] || fail "a pickle ran code"
expect_fail "$FX/deep.pickle" "nested more than 256 deep"
expect_fail "$FX/huge_length.pickle" "truncated: the pickle ends inside BINUNICODE8"
expect_fail "$FX/truncated.pickle" "truncated"
expect_fail "$FX/bad_memo.pickle" "memo reference 7 out of range"
printf '\200\002].' > "$DIR/list.pickle"
expect_fail "$DIR/list.pickle" "not a memory snapshot: the pickle holds no dict"
printf '\200\002}.' > "$DIR/nosegs.pickle"
expect_fail "$DIR/nosegs.pickle" "no 'segments' list"
printf '\200\001}.' > "$DIR/proto1.pickle"
expect_fail "$DIR/proto1.pickle" "protocol 1"
printf '\200\002}(X\010\000\000\000segmentsh\000u.' > "$DIR/memo_fwd.pickle"
expect_fail "$DIR/memo_fwd.pickle" "memo reference 0 out of range"
printf '\200\002}(X\010\000\000\000segments]' > "$DIR/nostop.pickle"
expect_fail "$DIR/nostop.pickle" "truncated"
printf '\200\002}(X\010\000\000\000segments]\141u.' > "$DIR/underflow.pickle"
expect_fail "$DIR/underflow.pickle" "APPEND"
echo "import_snapshot: all checks passed"
