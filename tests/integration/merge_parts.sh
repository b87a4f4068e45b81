#!/bin/sh
# merge_parts.sh: what gtrace merge makes of parts that overlap and of
# damaged end-of-run clocks. A part already inside a merged part (at any
# depth, in either order, or two merged parts made from one same trace)
# would put its events in twice: refused with one line, nothing written.
# A damaged end-of-run clock pair (not a number, out of range, ending
# before its start, half of it missing) is as good as none: one warning,
# the part's offset corrected, not its drift, as for a part without one;
# so is a wall clock that stepped (said, with how far). A part that starts
# 1 ns later has its events 1 ns later, rounded from 4000/4001 ns.
: "${GT_TOP_SRCDIR:?run through make check}"
. "$GT_TOP_SRCDIR/tests/integration/merge_common.sh"

"$CLOCK" write a.sqlite b.sqlite c.sqlite || exit 99
"$CLOCK" later d.sqlite || exit 99
"$GTRACE" merge a.sqlite b.sqlite -o ab.sqlite >/dev/null 2>&1 || { echo "FAIL: merge a b"; exit 1; }
"$GTRACE" merge b.sqlite c.sqlite -o bc.sqlite >/dev/null 2>&1 || { echo "FAIL: merge b c"; exit 1; }
"$GTRACE" merge ab.sqlite c.sqlite -o abc.sqlite >/dev/null 2>&1 || { echo "FAIL: merge ab c"; exit 1; }
sum_before=$(cksum a.sqlite b.sqlite ab.sqlite bc.sqlite abc.sqlite)

# overlap WANT PARTS...: exit 1, one line that holds WANT, nothing written
overlap() {
    want=$1; shift
    rm -f out.sqlite
    "$GTRACE" merge "$@" -o out.sqlite >stdout.txt 2>stderr.txt
    rc=$?
    echo "merge $*: exit $rc: $(cat stderr.txt)"
    [ "$rc" -eq 1 ] || { echo "FAIL: merge $*: exit $rc, expected 1"; fails=1; }
    [ "$(wc -l <stderr.txt)" -eq 1 ] || { echo "FAIL: merge $*: expected one line on stderr"; fails=1; }
    grep -q -- "^gtrace: merge: $want" stderr.txt || { echo "FAIL: merge $*: the message lacks '$want'"; fails=1; }
    [ ! -e out.sqlite ] || { echo "FAIL: merge $*: out.sqlite written"; fails=1; }
    ls -A | grep -q '^\.gtrace-merge-' && { echo "FAIL: merge $*: a temporary directory left"; fails=1; }
}
overlap "b.sqlite is already in ab.sqlite (merged into it before): each part is merged once" ab.sqlite b.sqlite
overlap "b.sqlite is already in ab.sqlite" b.sqlite ab.sqlite
overlap "a.sqlite is already in abc.sqlite" abc.sqlite a.sqlite
overlap "ab.sqlite and bc.sqlite were both merged from one trace (started at [0-9]* ns" ab.sqlite bc.sqlite
overlap "ab.sqlite is already in abc.sqlite" ab.sqlite abc.sqlite
cp a.sqlite a-copy.sqlite
overlap "a.sqlite and a-copy.sqlite are copies of one trace" a.sqlite c.sqlite a-copy.sqlite
[ "$(cksum a.sqlite b.sqlite ab.sqlite bc.sqlite abc.sqlite)" = "$sum_before" ] ||
    { echo "FAIL: a part changed"; fails=1; }

# Parts that do not overlap: every event once (360 a part).
"$GTRACE" merge abc.sqlite d.sqlite -o abcd.sqlite >out.txt 2>err.txt || { cat err.txt; echo "FAIL: merge abc d"; fails=1; }
grep -q '^gtrace: merged 2 traces into abcd.sqlite: 4 processes, 1440 events' out.txt ||
    { cat out.txt; echo "FAIL: abc + d: not 1440 events"; fails=1; }
"$CLOCK" check abcd.sqlite 4 || fails=1
overlap "d.sqlite is already in abcd.sqlite" abcd.sqlite d.sqlite

if ! command -v python3 >/dev/null 2>&1; then
    echo "skip: damaged end-of-run clocks (no python3)"
    exit "$fails"
fi
# damage_of PART NAME SQL: PART changed by SQL, as NAME; damage: of b.sqlite
damage_of() {
    cp "$1" "$2"
    python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute(sys.argv[2])
db.commit()" "$2" "$3" || exit 99
}
damage() { damage_of b.sqlite "$@"; }
damage soon.sqlite "UPDATE GTRACE_RUN_CONFIG SET value = 'soon' WHERE key = 'clock_end_ns'"
damage huge.sqlite "UPDATE GTRACE_RUN_CONFIG SET value = '99999999999999999999999' WHERE key = 'clock_end_utc_ns'"
damage early.sqlite "UPDATE GTRACE_RUN_CONFIG SET value = '1000' WHERE key = 'clock_end_utc_ns'"
damage negative.sqlite "UPDATE GTRACE_RUN_CONFIG SET value = '-5' WHERE key = 'clock_end_ns'"
damage half.sqlite "DELETE FROM GTRACE_RUN_CONFIG WHERE key = 'clock_end_utc_ns'"
for p in soon huge early negative half; do
    rm -f out.sqlite
    "$GTRACE" merge a.sqlite $p.sqlite c.sqlite -o out.sqlite >out.txt 2>err.txt
    rc=$?
    cat err.txt
    [ "$rc" -eq 0 ] || { echo "FAIL: $p: exit $rc, expected 0"; fails=1; continue; }
    grep -q "^gtrace: merge: $p.sqlite holds no end-of-run clock it can use (damaged: clock_end_ns=.*, clock_end_utc_ns=.*): its clock offset is corrected, not its drift\$" err.txt ||
        { echo "FAIL: $p: no warning of its damaged end-of-run clock"; fails=1; }
    [ "$(grep -c 'end-of-run clock' err.txt)" -eq 2 ] || { echo "FAIL: $p: expected two warnings (it, c.sqlite)"; fails=1; }
    grep -q "^  $p.sqlite: starts at .*, offset only\$" out.txt || { cat out.txt; echo "FAIL: $p: not offset only"; fails=1; }
    grep -q '^gtrace: merged 3 traces into out.sqlite: 3 processes, 1080 events' out.txt ||
        { cat out.txt; echo "FAIL: $p: not every event"; fails=1; }
done

# A wall clock that stepped during the run: B's end-of-run pair 5 ms later
# than its start and length say (5000 ppm, past any drift): the step is
# said, and B is corrected for its offset only.
damage stepped.sqlite "UPDATE GTRACE_RUN_CONFIG SET value = '1700000001005000000' WHERE key = 'clock_end_utc_ns'"
"$GTRACE" merge a.sqlite stepped.sqlite c.sqlite -o out-stepped.sqlite >out.txt 2>err.txt ||
    { cat err.txt; echo "FAIL: stepped: merge failed"; fails=1; }
cat err.txt
grep -q '^gtrace: merge: stepped.sqlite: its wall clock moved 5.000 ms against its own clock during the run (a clock step?): its offset is corrected, not its drift$' err.txt ||
    { echo "FAIL: stepped: no line says its wall clock moved 5 ms"; fails=1; }
grep -q '^  stepped.sqlite: starts at .*, offset only$' out.txt || { cat out.txt; echo "FAIL: stepped: not offset only"; fails=1; }

# A part whose zero is 1 ns later (C's session start moved; its events too):
# on A's clock (+250 ppm) that is 4000/4001 ns, so each of its events lands
# at its step plus 1 ns, rounded, not truncated to the step.
damage_of c.sqlite c1.sqlite "UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + 1"
"$GTRACE" merge a.sqlite b.sqlite c1.sqlite -o out-c1.sqlite >out.txt 2>err.txt ||
    { cat err.txt; echo "FAIL: c1: merge failed"; fails=1; }
late=$(python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(' '.join(str(db.execute(q).fetchone()[0]) for q in (
    'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start % 19996000 = 0 AND \"end\" % 19996000 = 0',
    'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start % 19996000 = 1 AND \"end\" % 19996000 = 1',
    'SELECT count(*) FROM NVTX_EVENTS WHERE start % 19996000 = 1')))" out-c1.sqlite)
expect_late="80 40 40"
[ "$late" = "$expect_late" ] ||
    { echo "FAIL: c1: kernels on their step, 1 ns after it, NVTX ranges 1 ns after: $late, expected $expect_late"; fails=1; }
[ "$fails" -eq 0 ] && echo "PASS: merge refuses overlapping parts, and damaged clocks are as good as none"
exit "$fails"
