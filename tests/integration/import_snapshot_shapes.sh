#!/bin/sh
# import_snapshot_shapes.sh: `gtrace import` on snapshot pickles of hostile
# and extreme shapes (snapshot_shapes.py). Lists repeated through the memo,
# few bytes naming millions of actions or blocks, are refused with one line
# naming the file and exit 1, by import, memory and report alike; a stack
# shared by every block (as PyTorch shares them) imports. Many devices over
# many segments, and segments and history at decreasing addresses, import
# with every segment, block and action: the work is O(n log n), so a
# generous timeout catches a quadratic replay (the counts are the check).
set -eu
GTRACE=${GT_TOP_BUILDDIR:-.}/libtrace/cli/gtrace
SHAPES=${GT_TOP_SRCDIR:-.}/tests/integration/snapshot_shapes.py
command -v python3 >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
DIR=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-import-shapes-XXXXXX")
trap 'rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

refused() { # FILE: import, memory and report each say one line and exit 1
    f=$1
    for cmd in "import $f -o $DIR/bad.sqlite" "memory $f --at 1s" "report $f"; do
        rc=0
        # shellcheck disable=SC2086
        timeout 60 "$GTRACE" $cmd > /dev/null 2> "$DIR/err" || rc=$?
        [ "$rc" -eq 1 ] || fail "gtrace $cmd: exit $rc, want 1: $(cat "$DIR/err")"
        [ "$(wc -l < "$DIR/err")" -eq 1 ] || fail "gtrace $cmd: not one line: $(cat "$DIR/err")"
        grep -q "$f: lists repeated through the pickle's memo make more than [0-9]* values to replay" "$DIR/err" ||
            fail "gtrace $cmd: $(cat "$DIR/err")"
    done
    [ ! -e "$DIR/bad.sqlite" ] || fail "a trace was left for $f"
}
imports() { # FILE SUMMARY
    rm -f "$DIR/t.sqlite"
    timeout 60 "$GTRACE" import "$1" -o "$DIR/t.sqlite" > "$DIR/out" || fail "import of $1 failed"
    grep -q "$2" "$DIR/out" || fail "$(basename "$1"): $(cat "$DIR/out"), want '$2'"
}

# [L] * 2000, L = [E] * 2000: 8 KB naming 4,000,000 actions.
python3 "$SHAPES" repeat_traces "$DIR/traces.pickle" 2000 2000
refused "$DIR/traces.pickle"
# 4096 devices' segments sharing one list of 2000 blocks: 8,192,000 blocks.
python3 "$SHAPES" repeat_blocks "$DIR/blocks.pickle" 4096 2000
refused "$DIR/blocks.pickle"
# A repeat that stays within the bound imports, whole.
python3 "$SHAPES" repeat_blocks "$DIR/blocks2.pickle" 2 1000
imports "$DIR/blocks2.pickle" "2 segments, 2000 allocated blocks, 2002 memory events"

# 20,000 blocks and 20,000 allocs on one stack of 2000 frames: the stack is
# walked once, not per block (else it would be past the bound).
python3 "$SHAPES" shared_frames "$DIR/frames.pickle" 20000 2000
imports "$DIR/frames.pickle" "1 segments, 20000 allocated blocks, 20000 allocator actions, 40001 memory events"
python3 "$SHAPES" shared_frames "$DIR/frames2.pickle" 100 50
imports "$DIR/frames2.pickle" "1 segments, 100 allocated blocks, 100 allocator actions, 201 memory events"
"$GTRACE" memory "$DIR/t.sqlite" --at 1000s > "$DIR/state"
grep -q "by \[f0 < f1 < f2" "$DIR/state" || fail "no frames: $(head -5 "$DIR/state")"

# 100,000 devices (one empty list repeated) over 40,000 segments.
python3 "$SHAPES" many_devices "$DIR/devices.pickle" 100000 40000
imports "$DIR/devices.pickle" "40000 segments, 40000 memory events"
# 400,000 segments at decreasing addresses.
python3 "$SHAPES" down_segments "$DIR/down.pickle" 400000
imports "$DIR/down.pickle" "400000 segments, 400000 memory events"
# 200,000 segments and blocks allocated at decreasing addresses, undone from
# the end state and replayed.
python3 "$SHAPES" down_history "$DIR/history.pickle" 200000
imports "$DIR/history.pickle" "200000 segments, 200000 allocated blocks, 400000 allocator actions, 400000 memory events"
[ "$("$GTRACE" memory --json "$DIR/t.sqlite" --at 1000s |
    sed -n 's/.*"allocated_bytes":\([0-9]*\),"reserved_bytes":\([0-9]*\).*/\1 \2/p' | head -1)" = \
    "$((200000 * 4096)) $((200000 * 2097152))" ] || fail "history: the end state is not the snapshot's"
echo "import_snapshot_shapes: all checks passed"
