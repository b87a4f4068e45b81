#!/bin/sh
# Events that find a thread's buffer full are counted, never silently lost:
# rows written plus events reported dropped is what the program did, and the
# run says it is incomplete.
. "$(dirname "$0")/capture_common.sh"
N=4; M=40000
GTRACE_BUFFER_KB=64 "$GTRACE" -o d.sqlite --flush-ms=1000 "$SAMPLES/nvtx_threads" $N $M >out.txt 2>err.txt
rc=$?
# Each thread names itself (one NVTX event) and makes 2*M push/pop ranges.
rows=$(q d.sqlite 'SELECT count(*) FROM NVTX_EVENTS')
dropped=$(q d.sqlite "SELECT coalesce(sum(count), 0) FROM GTRACE_DROPPED_EVENTS WHERE kind = 'nvtx'")
emitted=$((N * M * 2 + N))
echo "rows $rows, dropped $dropped, emitted $emitted"
expect_eq "rows + dropped" $emitted $((rows + dropped))
# A run that dropped events exits 3 (the program itself exited 0).
expect_eq "exit status" "$([ "$dropped" -gt 0 ] && echo 3 || echo 0)" $rc
if [ "$dropped" -gt 0 ]; then
    grep -q "DROPPED" err.txt || fail "the summary does not report $dropped dropped events: $(cat err.txt)"
    "$GTRACE" info d.sqlite | grep -q "^dropped  *nvtx  *$dropped\$" || fail "gtrace info does not report the drops"
fi
echo "all good"
