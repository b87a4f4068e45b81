#!/bin/sh
# SIGKILL at a random moment during a burst of 1,000,000 push/pop ranges:
# every range the program completed before it died is in the trace. The
# program stores how many it completed in a mapped file after each one (the
# count survives the kill); the trace holds that many, or one more (a range
# recorded before its count was stored). Buffers large enough for the whole
# burst, so that none is dropped.
. "$(dirname "$0")/capture_common.sh"
N=1000000
# A random point of the burst, from the shell's pid and the clock.
T=$(( ($$ * 7919 + $(date +%N | sed 's/^0*//;s/^$/0/')) % (N * 9 / 10) + 1000 ))
GTRACE_BUFFER_KB=131072 "$GTRACE" -o k.sqlite "$PROBE" counted $N count.bin >out.txt 2>err.txt &
gt=$!
probe_counted $gt $T $N
kill -KILL "$prog"
wait $gt
expect_eq "gtrace passes SIGKILL through" 137 $?
done_n=$(od -An -t d8 count.bin | tr -d ' ')
rows=$(nvtx_count k.sqlite counted 59)
dropped=$(q k.sqlite "SELECT coalesce(sum(count), 0) FROM GTRACE_DROPPED_EVENTS")
echo "killed after $done_n of $N ranges (aimed at $T); trace: $rows rows, $dropped dropped"
expect_eq "dropped" 0 "$dropped"
[ "$rows" -eq "$done_n" ] || [ "$rows" -eq $((done_n + 1)) ] ||
    fail "the program completed $done_n ranges before SIGKILL; the trace holds $rows"
echo "ok: every completed range is in the trace"
echo "all good"
