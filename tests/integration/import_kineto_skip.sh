#!/bin/sh
# import_kineto_skip.sh: one odd event of a torch.profiler trace is skipped,
# not the file: a time that is NaN or Infinity (Python's json.dump writes
# them when a script edits a trace), out of range (alone or with
# baseTimeNanoseconds), \u0000 or 16 MiB in a name; each is counted by why in
# one line on stderr and in the run config ("import.skipped"), and the other
# events are all imported. A UTF-8 byte-order mark is read past, an unread
# args string over 16 MiB is no trouble, and [memory] Bytes at the ends of
# int64 import (saturating, no overflow). Skipped (77) without python3.
set -eu
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipped"; exit 77; }
GTRACE=${GT_TOP_BUILDDIR:-.}/libtrace/cli/gtrace
DIR=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-import-skip-XXXXXX")
trap 'rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# imports FILE: stdout in $DIR/out, stderr in $DIR/err, the run config's
# import.skipped in $DIR/cfg
imp() {
    rm -f "$DIR/t.sqlite"
    "$GTRACE" import "$1" -o "$DIR/t.sqlite" > "$DIR/out" 2> "$DIR/err" || fail "import of $1: $(cat "$DIR/err")"
    python3 -c '
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
print("\n".join(v for (v,) in db.execute("SELECT value FROM GTRACE_RUN_CONFIG WHERE key = ?", ("import.skipped",))))
' "$DIR/t.sqlite" > "$DIR/cfg"
}
ops() { # the trace's NVTX ranges, by name in time order
    python3 -c '
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
print(" ".join(r[0] for r in db.execute("SELECT COALESCE(text, s.value) FROM NVTX_EVENTS n LEFT JOIN StringIds s "
                                       "ON s.id = n.textId WHERE n.eventType = 59 ORDER BY start, 1")))
' "$DIR/t.sqlite"
}
X='"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1'

# a time NaN, Infinity, out of range; a NUL in a name; NaN in unread args
printf '%s\n' '{"traceEvents": [' \
    "{$X, \"name\": \"a\", \"ts\": 1, \"dur\": 2}," \
    "{$X, \"name\": \"nan\", \"ts\": NaN, \"dur\": 2}," \
    "{$X, \"name\": \"inf\", \"ts\": 3, \"dur\": Infinity}," \
    "{$X, \"name\": \"minf\", \"ts\": -Infinity, \"dur\": 1}," \
    "{$X, \"name\": \"n\\u0000ul\", \"ts\": 3, \"dur\": 1}," \
    "{$X, \"name\": \"far\", \"ts\": 99999999999999999999.5, \"dur\": 1}," \
    "{$X, \"name\": \"farend\", \"ts\": 5, \"dur\": 9000000000000000}," \
    "{$X, \"name\": \"b\", \"ts\": 4, \"dur\": 1, \"args\": {\"x\": -Infinity, \"Sequence number\": NaN}}]}" \
    > "$DIR/odd.json"
imp "$DIR/odd.json"
[ "$(ops)" = "a b" ] || fail "odd.json: the readable events are not all in: $(ops)"
grep -q "2 cpu ops" "$DIR/out" || fail "odd.json: $(cat "$DIR/out")"
want='6 events (2 with a time out of range, 3 with a time that is NaN or Infinity, 1 with a \u0000 in a name)'
[ "$(cat "$DIR/cfg")" = "$want" ] || fail "odd.json: run config says '$(cat "$DIR/cfg")', want '$want'"
[ "$(wc -l < "$DIR/err")" -eq 1 ] || fail "odd.json: not one line on stderr: $(cat "$DIR/err")"
grep -qF "odd.json: skipped $want" "$DIR/err" || fail "odd.json: stderr says $(cat "$DIR/err")"

# a time in range that baseTimeNanoseconds (after the events) puts out of range
printf '%s\n' '{"traceEvents": [' "{$X, \"name\": \"a\", \"ts\": 1, \"dur\": 2}," \
    "{$X, \"name\": \"late\", \"ts\": 4000000000000000, \"dur\": 1}]," \
    '"baseTimeNanoseconds": 1790000000000000000}' > "$DIR/base.json"
imp "$DIR/base.json"
[ "$(ops)" = "a" ] || fail "base.json: $(ops)"
[ "$(cat "$DIR/cfg")" = "1 events (1 with a time out of range)" ] || fail "base.json: $(cat "$DIR/cfg")"
python3 -c '
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
assert db.execute("SELECT max(end) FROM NVTX_EVENTS WHERE eventType = 59").fetchone()[0] == 2000
' "$DIR/t.sqlite" || fail "base.json: the time span counts the skipped event"

# a byte-order mark, gzipped too; nothing skipped, nothing said
printf '\357\273\277{"traceEvents": [{%s, "name": "a", "ts": 1, "dur": 2}]}' "$X" > "$DIR/bom.json"
gzip -c "$DIR/bom.json" > "$DIR/bom.json.gz"
for f in bom.json bom.json.gz; do
    imp "$DIR/$f"
    [ "$(ops)" = "a" ] || fail "$f: $(ops)"
    [ ! -s "$DIR/err" ] && [ -z "$(cat "$DIR/cfg")" ] || fail "$f: skipped something: $(cat "$DIR/err")"
done

# 17 MiB strings: in an args value the importer does not read (imported),
# in a name (that event skipped)
python3 -c '
import json, sys
big = "x" * (17 << 20)
ev = lambda name, **kw: dict(ph="X", cat="cpu_op", pid=1, tid=1, ts=1, dur=2, name=name, **kw)
with open(sys.argv[1], "w") as f:
    json.dump({"traceEvents": [ev("a", args={"Call stack": big}), ev(big), ev("b")]}, f)
' "$DIR/long.json"
imp "$DIR/long.json"
[ "$(ops)" = "a b" ] || fail "long.json: $(ops)"
[ "$(cat "$DIR/cfg")" = "1 events (1 with a name over 16 MiB)" ] || fail "long.json: $(cat "$DIR/cfg")"

# [memory] Bytes and totals at the ends of int64: imported, no overflow
M='"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 5, "tid": 5'
D='"Total Reserved": 0, "Device Id": 0, "Device Type": 1'
printf '%s\n' '{"traceEvents": [' \
    "{$M, \"ts\": 1, \"args\": {\"Addr\": 4096, \"Bytes\": -9223372036854775808, \"Total Allocated\": 9223372036854775807, $D}}," \
    "{$M, \"ts\": 2, \"args\": {\"Addr\": 8192, \"Bytes\": -9223372036854775808, \"Total Allocated\": 0, $D}}," \
    "{$M, \"ts\": 3, \"args\": {\"Addr\": 8192, \"Bytes\": 9223372036854775807, \"Total Allocated\": -9223372036854775808, $D}}]}" \
    > "$DIR/mem.json"
imp "$DIR/mem.json"
grep -q "3 memory events" "$DIR/out" || fail "mem.json: $(cat "$DIR/out")"

# a device id at int32's end; a collective whose input sizes add past int64
printf '%s\n' '{"traceEvents": [' \
    "{$M, \"ts\": 1, \"args\": {\"Addr\": 4096, \"Bytes\": 64, \"Total Allocated\": 64, \"Total Reserved\": 64, \"Device Id\": 2147483646, \"Device Type\": 1}}," \
    "{$X, \"cat\": \"user_annotation\", \"name\": \"nccl:all_reduce\", \"ts\": 2, \"dur\": 1, \"args\": {\"Input Dims\": [[[4611686018427387904], [4611686018427387904]]], \"Input type\": [\"float\"]}}]}" \
    > "$DIR/ends.json"
imp "$DIR/ends.json"
grep -q "1 memory events" "$DIR/out" && grep -q "1 collectives" "$DIR/out" || fail "ends.json: $(cat "$DIR/out")"
echo "import_kineto_skip: all checks passed"
