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
[ $((rows + dropped)) -le $emitted ] || fail "rows + dropped = $((rows + dropped)) is more than the $emitted events emitted"
# Known defect of the shared rings: under heavy drops the launcher sometimes
# loses one thread's records without counting them (about 1 run in 6, up to
# 0.5% of the events here). Until it is found, more than 1% uncounted fails.
lost=$((emitted - rows - dropped))
[ $((lost * 100)) -le $emitted ] || fail "$lost events are neither in the trace nor counted as dropped"
[ "$lost" -eq 0 ] || echo "note: $lost events neither in the trace nor counted (the known defect)"
# A run that dropped events exits 3 (the program itself exited 0).
expect_eq "exit status" "$([ "$dropped" -gt 0 ] && echo 3 || echo 0)" $rc
if [ "$dropped" -gt 0 ]; then
    grep -q "DROPPED" err.txt || fail "the summary does not report $dropped dropped events: $(cat err.txt)"
    "$GTRACE" info d.sqlite | grep -q "^dropped  *nvtx  *$dropped\$" || fail "gtrace info does not report the drops"
fi
echo "all good"
