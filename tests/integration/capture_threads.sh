#!/bin/sh
# N threads x M push/pop ranges (each with one nested range) give exactly
# N x M rows of each, on N threads, each inner inside its outer, with the
# threads' NVTX names; the program's output is unchanged and gtrace info
# and the summary count the same rows.
. "$(dirname "$0")/capture_common.sh"
N=6; M=700
"$GTRACE" -o t.sqlite "$SAMPLES/nvtx_threads" $N $M >out.txt 2>err.txt
expect_eq "exit status" 0 $?
expect_eq "program output" "done $N x $M" "$(cat out.txt)"
expect_eq "outer ranges" $((N * M)) "$(nvtx_count t.sqlite outer 59)"
expect_eq "inner ranges" $((N * M)) "$(nvtx_count t.sqlite inner 59)"
expect_eq "threads with ranges" $N "$(q t.sqlite 'SELECT count(DISTINCT globalTid) FROM NVTX_EVENTS WHERE eventType = 59')"
expect_eq "ranges per thread" "$(($N * 2 * $M))" "$(q t.sqlite 'SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59')"
expect_eq "max ranges on one thread" $((2 * M)) \
    "$(q t.sqlite 'SELECT max(c) FROM (SELECT count(*) c FROM NVTX_EVENTS WHERE eventType = 59 GROUP BY globalTid)')"
expect_eq "inner ranges nested in an outer range of their thread" $((N * M)) "$(q t.sqlite "
    SELECT count(DISTINCT n.rowid) FROM NVTX_EVENTS n
    JOIN NVTX_EVENTS o ON o.globalTid = n.globalTid AND o.start <= n.start AND o.end >= n.end
    WHERE $NT = 'inner' AND coalesce(o.text, (SELECT value FROM StringIds WHERE id = o.textId)) = 'outer'")"
expect_eq "ranges that end before they start" 0 "$(q t.sqlite 'SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59 AND end < start')"
expect_eq "threads named worker-N" $N "$(q t.sqlite "SELECT count(DISTINCT t.globalTid) FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId WHERE s.value LIKE 'worker-%'")"
expect_eq "NvtxThread events" $N "$(q t.sqlite 'SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 39')"
expect_eq "dropped" "" "$(q t.sqlite 'SELECT sum(count) FROM GTRACE_DROPPED_EVENTS')"
total=$((N * M * 2 + N))
grep -q "nvtx  *$total\$" err.txt || fail "summary does not count $total nvtx events: $(cat err.txt)"
"$GTRACE" info t.sqlite >info.txt || fail "gtrace info failed"
grep -q "^origin  *gtrace\$" info.txt || fail "info: origin: $(cat info.txt)"
grep -q "^  nvtx  *$total\$" info.txt || fail "info: counts: $(cat info.txt)"
grep -q "^processes  *1\$" info.txt || fail "info: processes: $(cat info.txt)"
echo "all good"
