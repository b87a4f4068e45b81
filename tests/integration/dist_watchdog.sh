#!/bin/sh
# dist_watchdog.sh: a rank that stalls makes the others stop with a message
# naming the collective and the rank, instead of hanging: rank 1 sleeps 30 s
# before a barrier that rank 0 waits for under a 2 s watchdog. The outer
# timeout only turns a hang into a failure; nothing is asserted on time.
set -u
command -v mpirun >/dev/null 2>&1 || { echo "skip: no mpirun (apt-get install openmpi-bin)"; exit 77; }
. "$GT_TOP_SRCDIR/tests/integration/dist_common.sh"
out=$(timeout 120 sh -c ". '$GT_TOP_SRCDIR/tests/integration/dist_common.sh'; dist_mpirun 2 '$GT_TOP_BUILDDIR/tests/integration/dist_test' stall 30" 2>&1); rc=$?
echo "$out"
[ "$rc" -ne 124 ] || { echo "FAIL: the job hung (killed by the outer timeout)"; exit 1; }
[ "$rc" -ne 0 ] || { echo "FAIL: the job succeeded although rank 1 stalled past the timeout"; exit 1; }
echo "$out" | grep -q "rank 0 of 2: barrier after the stall did not complete within 2 s" ||
    { echo "FAIL: no message naming the stalled collective on rank 0"; exit 1; }
echo "$out" | grep -q "rank 0: passed the barrier" && { echo "FAIL: rank 0 passed the barrier"; exit 1; }
echo "ok: the stalled job stopped with a clear error (status $rc)"
