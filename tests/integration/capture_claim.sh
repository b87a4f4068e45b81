#!/bin/sh
# Threads that take their buffers at the same moment each get one of their
# own: 64 threads start together (nvtx_threads waits for all of them), ten
# times over; every run has every event, on 64 threads. Two threads once
# shared a buffer when one counted a buffer its carver had not yet marked
# as taken: they overwrote each other, and one thread's events were neither
# in the trace nor counted as dropped.
. "$(dirname "$0")/capture_common.sh"
N=64; M=20
for round in 1 2 3 4 5 6 7 8 9 10; do
    rm -f c.sqlite
    GTRACE_BUFFER_KB=64 "$GTRACE" -o c.sqlite "$SAMPLES/nvtx_threads" $N $M >out.txt 2>err.txt
    expect_eq "round $round: exit status" 0 $?
    expect_eq "round $round: events" $((N * M * 2 + N)) "$(q c.sqlite 'SELECT count(*) FROM NVTX_EVENTS')"
    expect_eq "round $round: threads with ranges" $N \
        "$(q c.sqlite 'SELECT count(DISTINCT globalTid) FROM NVTX_EVENTS WHERE eventType = 59')"
    expect_eq "round $round: the most ranges on one thread" $((2 * M)) \
        "$(q c.sqlite 'SELECT max(c) FROM (SELECT count(*) c FROM NVTX_EVENTS WHERE eventType = 59 GROUP BY globalTid)')"
done
echo "all good"
