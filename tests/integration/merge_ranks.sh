#!/bin/sh
# merge_ranks.sh: gtrace merge on real traces taken one per rank.
#   - every trace gtrace writes holds its end-of-run clock pair (run entries
#     clock_end_ns, clock_end_utc_ns): a one-process trace renamed into place
#     whole and a trace assembled from several processes' parts alike; the
#     pair comes after every event and after the start time;
#   - two ranks of nvtx_threads (SLURM_PROCID 0 and 1, gtrace -o t.%r.sqlite),
#     merged: the counts of every kind add up, both processes are there with
#     their ranks, and gtrace report reads the result;
#   - with Open MPI, mpirun -np 2 gtrace -o r.%r.sqlite trainer --dist ddp,
#     merged: both ranks in gtrace info, and gtrace report's communication
#     section shows the two ranks (skipped without Open MPI, mpirun or the
#     fortunes data).
: "${GT_TOP_SRCDIR:?run through make check}"
. "$GT_TOP_SRCDIR/tests/integration/merge_common.sh"
for f in "$SAMPLES/nvtx_threads" "$SAMPLES/nvtx_fork"; do
    [ -x "$f" ] || { echo "missing $f: build it first"; exit 99; }
done
command -v sqlite3 >/dev/null 2>&1 || { echo "sqlite3 (the CLI) is needed by this test"; exit 99; }

# check_clock TRACE: its end-of-run pair is there, after its events and its start.
check_clock() {
    r=$(sqlite3 "$1" "SELECT
        (SELECT CAST(value AS INTEGER) FROM GTRACE_RUN_CONFIG WHERE globalPid = 0 AND key = 'clock_end_ns') >=
            max((SELECT max(\"end\") FROM NVTX_EVENTS), (SELECT max(start) FROM NVTX_EVENTS)),
        (SELECT CAST(value AS INTEGER) FROM GTRACE_RUN_CONFIG WHERE globalPid = 0 AND key = 'clock_end_utc_ns') >
            (SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME),
        (SELECT count(*) FROM GTRACE_RUN_CONFIG WHERE globalPid = 0 AND key LIKE 'clock_end_%')")
    [ "$r" = "1|1|2" ] || { echo "FAIL: $1: its end-of-run clock pair (after events, after start, 2 entries): $r"; fails=1; }
    echo "ok: $1 holds its end-of-run clock pair"
}

# count TRACE KIND: the number gtrace info gives for a kind (0 when absent)
count() {
    "$GTRACE" info "$1" | awk -v k="$2" '$1 == k && NF == 2 { n = $2 } END { print n + 0 }'
}

for r in 0 1; do
    SLURM_PROCID=$r "$GTRACE" -o t.%r.sqlite "$SAMPLES/nvtx_threads" 3 20 >run$r.txt 2>&1 ||
        { cat run$r.txt; echo "FAIL: gtrace nvtx_threads as rank $r"; exit 1; }
    check_clock t.$r.sqlite
done
"$GTRACE" -o fork.sqlite "$SAMPLES/nvtx_fork" >fork.txt 2>&1 || { cat fork.txt; echo "FAIL: gtrace nvtx_fork"; exit 1; }
check_clock fork.sqlite

"$GTRACE" merge t.0.sqlite t.1.sqlite fork.sqlite -o all.sqlite >merge.txt 2>&1 ||
    { cat merge.txt; echo "FAIL: gtrace merge"; exit 1; }
cat merge.txt
"$GTRACE" info all.sqlite >info.txt 2>&1 || { cat info.txt; echo "FAIL: gtrace info all.sqlite"; fails=1; }
cat info.txt
for k in nvtx heap cpu_op; do
    a=$(count t.0.sqlite $k); b=$(count t.1.sqlite $k); c=$(count fork.sqlite $k); m=$(count all.sqlite $k)
    [ "$m" -eq $((a + b + c)) ] || { echo "FAIL: $k: $m in the merged trace, $a + $b + $c in the parts"; fails=1; }
    echo "ok: $k: $a + $b + $c = $m"
done
np=0
for t in t.0.sqlite t.1.sqlite fork.sqlite; do
    np=$((np + $(sqlite3 $t 'SELECT count(*) FROM PROCESSES')))
done
grep -q "^processes  $np\$" info.txt || { echo "FAIL: $np processes expected in the merged trace"; fails=1; }
for r in 0 1; do
    grep -q "^  [0-9]* *nvtx_threads *rank $r\$" info.txt || { echo "FAIL: no process of rank $r"; fails=1; }
done
"$GTRACE" report all.sqlite >report.txt 2>&1 || { cat report.txt; echo "FAIL: gtrace report all.sqlite"; fails=1; }

# The distributed trainer, one trace per rank.
data=/usr/share/games/fortunes
if ! grep -q '^#define HAVE_MPI 1' "$GT_TOP_BUILDDIR/config.h"; then
    echo "skip: the trainer's ranks: built without Open MPI"
elif ! command -v mpirun >/dev/null 2>&1; then
    echo "skip: the trainer's ranks: no mpirun"
elif [ ! -d "$data" ]; then
    echo "skip: the trainer's ranks: no $data"
else
    . "$GT_TOP_SRCDIR/tests/integration/dist_common.sh"
    dist_mpirun 2 "$GTRACE" -o r.%r.sqlite "$GT_TOP_BUILDDIR/trainer/trainer" --model gpt-tiny --layers 2 --width 64 \
        --steps 3 --batch 4 --threads 1 --workers 0 --eval-every 0 --log-every 1 --dist ddp >mpi.txt 2>&1 ||
        { cat mpi.txt; echo "FAIL: mpirun gtrace trainer --dist ddp"; exit 1; }
    check_clock r.0.sqlite
    check_clock r.1.sqlite
    "$GTRACE" merge r.0.sqlite r.1.sqlite -o ranks.sqlite >rmerge.txt 2>&1 ||
        { cat rmerge.txt; echo "FAIL: gtrace merge r.0 r.1"; exit 1; }
    cat rmerge.txt
    "$GTRACE" info ranks.sqlite >rinfo.txt 2>&1 || { cat rinfo.txt; echo "FAIL: gtrace info ranks.sqlite"; fails=1; }
    for r in 0 1; do
        grep -q "^  [0-9]* *trainer *rank $r\$" rinfo.txt || { echo "FAIL: trainer: no process of rank $r"; fails=1; }
    done
    for k in nvtx heap cpu_op; do
        a=$(count r.0.sqlite $k); b=$(count r.1.sqlite $k); m=$(count ranks.sqlite $k)
        [ "$m" -eq $((a + b)) ] || { echo "FAIL: trainer: $k: $m merged, $a + $b in the parts"; fails=1; }
    done
    "$GTRACE" report ranks.sqlite >rreport.txt 2>&1 || { cat rreport.txt; echo "FAIL: gtrace report ranks.sqlite"; fails=1; }
    sed -n '/^communication/,/^$/p' rreport.txt
    grep -q '^communication  2 ranks' rreport.txt || { echo "FAIL: the report's communication section lacks 2 ranks"; fails=1; }
    for r in 0 1; do
        grep -q "^  rank $r (pid [0-9]*) " rreport.txt || { echo "FAIL: the report does not name rank $r"; fails=1; }
    done
fi

[ "$fails" -eq 0 ] && echo "PASS: merge of real per-rank traces"
exit "$fails"
