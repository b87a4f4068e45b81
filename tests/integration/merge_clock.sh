#!/bin/sh
# merge_clock.sh: gtrace merge puts parts taken on hosts whose clocks differ
# onto one clock, exactly. merge_clock writes three traces of one run with
# known offsets and drifts (+250 ppm, -200 ppm, and one with no end-of-run
# clock: offset only), all three with pid 4242; the merged trace must hold
# every event of every kind at the step it belongs to, to the nanosecond,
# with three distinct processes and their ranks, and B's GPU apart from A's
# and C's (merge_clock check). Then
# the merged trace merged again with a fourth part keeps those times,
# `gtrace info` lists the parts and the ranks, and C with an end-of-run
# clock added afterwards (gt_trace_add_config) is corrected for its drift.
: "${GT_TOP_SRCDIR:?run through make check}"
. "$GT_TOP_SRCDIR/tests/integration/merge_common.sh"

"$CLOCK" write a.sqlite b.sqlite c.sqlite || { echo "FAIL: writing the parts"; exit 1; }
"$GTRACE" merge a.sqlite b.sqlite c.sqlite -o all.sqlite >out.txt 2>err.txt ||
    { cat out.txt err.txt; echo "FAIL: gtrace merge a b c"; exit 1; }
cat out.txt err.txt
"$CLOCK" check all.sqlite || fails=1
grep -q '^gtrace: merge: b.sqlite: pid 4242 is also in an earlier part; it is pid 16777215 in the merged trace$' err.txt ||
    { echo "FAIL: the pid b.sqlite shares with a.sqlite: no line says it moved"; fails=1; }
grep -q '^gtrace: merge: c.sqlite holds no end-of-run clock' err.txt ||
    { echo "FAIL: c.sqlite, corrected for its offset only: no line says so"; fails=1; }
grep -q '^gtrace: merge: b.sqlite: its GPU 0 is GPU 1 in the merged trace (another GPU than the one an earlier part calls so, by its UUID)$' err.txt ||
    { echo "FAIL: b.sqlite's GPU 0, another than a.sqlite's: no line says it moved"; fails=1; }
[ "$(wc -l <err.txt)" -eq 4 ] || { echo "FAIL: expected 4 lines on stderr"; fails=1; }
grep -q '^gtrace: merged 3 traces into all.sqlite: 3 processes, 1080 events, on the clock of a.sqlite$' out.txt ||
    { echo "FAIL: the summary line"; fails=1; }

"$GTRACE" info all.sqlite >info.txt 2>&1 || { cat info.txt; echo "FAIL: gtrace info all.sqlite"; fails=1; }
cat info.txt
grep -q '^merged     3 parts$' info.txt || { echo "FAIL: info: no 'merged 3 parts'"; fails=1; }
grep -q '^  2: b.sqlite, starts at +0 ns, drift -200000 ppb$' info.txt || { echo "FAIL: info: part 2's line"; fails=1; }
for r in 0 1 2; do
    grep -q "^  [0-9]* *trainer *rank $r\$" info.txt || { echo "FAIL: info: no process of rank $r"; fails=1; }
done

# Merged again, with B's part of a later run: a merged trace is a part like
# any other. Its own end-of-run clock is its first part's, so it goes onto
# the wall clock exactly, and the fourth process's events land on the same
# steps as the three others'.
"$CLOCK" later d.sqlite || exit 99
"$GTRACE" merge all.sqlite d.sqlite -o again.sqlite >out2.txt 2>err2.txt ||
    { cat out2.txt err2.txt; echo "FAIL: gtrace merge all d"; fails=1; }
cat out2.txt err2.txt
"$CLOCK" check again.sqlite 4 || fails=1

# The end-of-run clock added to a finished trace (what the launcher does to
# a trace renamed into place whole): C is then corrected for its drift (0),
# and its events still land on their steps. An nsys export is refused and
# left as it was.
"$CLOCK" amend c.sqlite || { echo "FAIL: adding the end-of-run clock to c.sqlite"; fails=1; }
"$GTRACE" merge a.sqlite b.sqlite c.sqlite -o amended.sqlite >out3.txt 2>err3.txt ||
    { cat out3.txt err3.txt; echo "FAIL: gtrace merge a b c (c amended)"; fails=1; }
cat out3.txt err3.txt
grep -q 'no end-of-run clock' err3.txt && { echo "FAIL: c.sqlite still said to lack its end-of-run clock"; fails=1; }
grep -q '^  c.sqlite: starts at 2.000 ms, its clock +0.000 ppm against its wall clock$' out3.txt ||
    { echo "FAIL: c.sqlite: its drift (0) corrected"; fails=1; }
"$CLOCK" check amended.sqlite amended || { echo "FAIL: c amended: the merged trace"; fails=1; }
nsys="$GT_FIXTURES/nsys/saxpy-mpi-cuda-nsys2022.2.sqlite"
if [ -f "$nsys" ]; then
    cp "$nsys" nsys.sqlite
    sum=$(cksum <nsys.sqlite)
    "$CLOCK" amend nsys.sqlite 2>amend.txt
    rc=$?
    cat amend.txt
    [ "$rc" -eq 3 ] || { echo "FAIL: an nsys export amended (exit $rc, 3 expected)"; fails=1; }
    [ "$(cksum <nsys.sqlite)" = "$sum" ] || { echo "FAIL: the nsys export changed"; fails=1; }
fi

[ "$fails" -eq 0 ] && echo "PASS: merge on one clock"
exit "$fails"
