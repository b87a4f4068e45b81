#!/bin/sh
# Every event a program emits is in the trace or counted as dropped, exactly,
# and a run that lost events says so and exits 3 (the program exited 0):
# buffers overflowed by a burst, and a whole run under a file size limit
# (gtrace itself cannot write the trace: it says how many it lost, as
# many as the trace counts); a limit on the program alone loses nothing.
. "$(dirname "$0")/capture_common.sh"
# nvtx_rows TRACE / nvtx_dropped TRACE
nvtx_rows() { q "$1" 'SELECT count(*) FROM NVTX_EVENTS'; }
nvtx_dropped() { q "$1" "SELECT coalesce(sum(count), 0) FROM GTRACE_DROPPED_EVENTS WHERE kind = 'nvtx'"; }

# A burst: 500,000 start/end ranges, as many push/pop ranges and marks,
# into small buffers flushed rarely.
N=500000
GTRACE_BUFFER_KB=64 "$GTRACE" -o b.sqlite --flush-ms=500 "$PROBE" burst $N >out.txt 2>err.txt
rc=$?
expect_eq "program output" "emitted $((3 * N))" "$(cat out.txt)"
rows=$(nvtx_rows b.sqlite); dropped=$(nvtx_dropped b.sqlite)
echo "burst: rows $rows, dropped $dropped"
expect_eq "rows + dropped after a burst" $((3 * N)) $((rows + dropped))
[ "$dropped" -gt 0 ] || fail "the burst did not overflow the buffers (no test of the count)"
expect_eq "exit status of a run that dropped events" 3 $rc
grep -q "DROPPED" err.txt && grep -q "incomplete" err.txt || fail "the summary does not say events were lost: $(cat err.txt)"
expect_eq "start/end ranges that end before they start" 0 "$(q b.sqlite 'SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 60 AND end < start')"

# A file size limit on the program alone (always set by sh -c, as ulimit's
# unit differs between shells) does not stop its trace: gtrace writes it, and
# the program's buffers are made to fit under the limit (a busy machine may
# still fill them: then every event is counted and the run exits 3).
N=40000
"$GTRACE" -o f.sqlite --flush-ms=5 sh -c "ulimit -f 8192; exec \"$PROBE\" fill $N" >out.txt 2>err.txt
rc=$?
expect_eq "program output under a size limit" "emitted $N" "$(cat out.txt)"
rows=$(nvtx_rows f.sqlite); dropped=$(nvtx_dropped f.sqlite)
echo "size limit on the program: rows $rows, dropped $dropped"
expect_eq "rows + dropped under a size limit" $N $((rows + dropped))
[ "$rows" -gt 0 ] || fail "nothing recorded under a size limit"
expect_eq "exit status of a program under a size limit" "$([ "$dropped" -gt 0 ] && echo 3 || echo 0)" $rc

# The program's failure is its own: its exit code goes through unchanged.
"$GTRACE" -o g.sqlite --flush-ms=5 sh -c "ulimit -f 8192; \"$PROBE\" fill $N; exit 7" >out.txt 2>err.txt
expect_eq "exit status of a failing program" 7 $?

# The whole run under the limit: gtrace cannot write the trace either. It
# says so and exits 3, is not killed by SIGXFSZ, and leaves no half trace.
sh -c "ulimit -f 8192; exec \"$GTRACE\" -o w.sqlite --flush-ms=5 \"$PROBE\" fill $N" >out.txt 2>err.txt
rc=$?
expect_eq "exit status of a run under a size limit" 3 $rc
lost=$(sed -n 's/^gtrace: process [0-9]* lost \([0-9]*\) events that are not in the trace.*/\1/p' err.txt)
[ -n "$lost" ] || fail "no line says how many events were lost: $(cat err.txt)"
if [ -e w.sqlite ]; then
    rows=$(nvtx_rows w.sqlite); dropped=$(nvtx_dropped w.sqlite)
    expect_eq "rows + dropped of the limited run" $N $((rows + dropped))
    expect_eq "events said lost, as the trace counts them" "$dropped" "$lost"
else
    grep -q "no trace written" err.txt || fail "no trace and no word of it: $(cat err.txt)"
    [ "$lost" -gt 0 ] && [ "$lost" -le $N ] || fail "$lost events said lost, of $N"
fi
ls -a | grep -q '\.tmp' && fail "a temporary file was left: $(ls -a)"
[ -e w.sqlite ] && ls -a | grep -q gtrace-parts && fail "parts left behind: $(ls -a)"
echo "all good"
