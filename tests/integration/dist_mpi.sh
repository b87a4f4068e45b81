#!/bin/sh
# dist_mpi.sh: trainer/dist.c's pieces (shards, configuration agreement,
# bucketed all-reduce and reduce-scatter, all-gather, memory accounting)
# under mpirun with 2 and 4 ranks. Skips (77) only without mpirun.
set -u
command -v mpirun >/dev/null 2>&1 || { echo "skip: no mpirun (apt-get install openmpi-bin)"; exit 77; }
. "$GT_TOP_SRCDIR/tests/integration/dist_common.sh"
fails=0
for np in 2 4; do
    out=$(dist_mpirun "$np" "$GT_TOP_BUILDDIR/tests/integration/dist_test" 2>&1); rc=$?
    echo "$out"
    [ "$rc" -eq 0 ] || { echo "FAIL: dist_test with $np ranks exited $rc"; fails=1; continue; }
    n_ok=$(echo "$out" | grep -c '^ok: ')
    [ "$n_ok" -eq 9 ] || { echo "FAIL: $np ranks: $n_ok of 9 checks reported ok"; fails=1; }
done
exit $fails
