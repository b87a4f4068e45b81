#!/bin/sh
# pytorch_fork.sh: `gtrace --pytorch` on a program whose work runs in fork
# children (pytorch_fork.py): a multiprocessing Pool (fork) of 2 workers, each
# training its own model 3 steps, and a DataLoader with 2 workers (fork)
# whose items a module makes. The --pytorch hooks register their range
# names once (nvtxDomainRegisterStringA) in the parent, before the children
# are forked, and the children register more of their own: every child's
# ranges carry exactly the names they were pushed with ("step N", the
# phases, each module's and its backward's), its steps hold their phases,
# and nothing is dropped or unresolved. (Before, a child resolved its
# parent's handles in its own string table: "forward" read as a child's
# module name cut at the front, "ntial".) The same names when the Pool is
# forked in the middle of the program's own training (--train-first), where
# a worker's model is named after the program's ("Sequential#2"), and its
# steps exactly as there: "step 0" to "step 2", each holding its phases.
# (Before, a child inherited the parent's open step, lead optimizer and step
# owner: its own optimizer steps neither closed nor opened a step, and it had
# none.) Last, a child forked (os.fork) while another thread of the parent
# holds the hooks' naming lock names and trains its own model: the same
# ranges as a pool worker's. (Before, the lock stayed held in the child,
# which hung.) Debian's python3-torch (1.13); GT_PYTORCH_PYTHONS may name more
# Pythons with torch, each checked the same way.
GT_SAN_TORCH=yes # runs under the sanitizers too (pytorch_common.sh)
. "$GT_TOP_SRCDIR/tests/integration/pytorch_common.sh"
SCRIPT="$GT_TOP_SRCDIR/tests/integration/pytorch_fork.py"
PID="((n.globalTid >> 24) & 16777215)"

# names_of TRACE PID [SQL]: "name|count" of its push/pop ranges (those SQL
# keeps), comma-separated
names_of() {
    q "$1" "SELECT group_concat(x, ',') FROM (SELECT $NT || '|' || count(*) x FROM NVTX_EVENTS n
        WHERE n.eventType = 59 AND $PID = $2 ${3:+AND $3} GROUP BY $NT ORDER BY $NT)"
}

# The ranges of a pool worker: its model (Sequential: Linear, ReLU, Linear,
# named "0", "1", "2" in it) and the loss, each forward and backward, in 3
# steps, each with its phases.
POOL="0|3,0 backward|3,1|3,1 backward|3,2|3,2 backward|3,MSELoss|3,MSELoss backward|3,Sequential|3"
POOL="$POOL,Sequential backward|3,backward|3,forward|6,optimizer|3,step 0|1,step 1|1,step 2|1"
# A loader worker: 2 batches of 2 items, each made by the Encoder (a forward
# outside any step: a loader worker steps no optimizer).
LOADER="Encoder|4,forward|4,proj|4"
# The program itself: the Encoder once, then 4 steps on its own model (the
# 5th batch request ends the loader, in a step no optimizer closes).
MAIN="0|4,0 backward|4,1|4,1 backward|4,2|4,2 backward|4,Encoder|1,MSELoss|4,MSELoss backward|4,Sequential|4"
MAIN="$MAIN,Sequential backward|4,backward|4,data|5,forward|9,optimizer|4,proj|1,step 0|1,step 1|1,step 2|1,step 3|1"

# run PYTHON TAG [ARGS]: one traced run of the script (trace TAG.sqlite) with
# nothing lost; sets trace, pool, loader and main (the pids).
run() {
    py=$1 tag=$2
    shift 2
    trace="$tag.sqlite"
    "$GTRACE" --pytorch -o "$trace" "$py" "$SCRIPT" --workers 2 --steps 3 --loader-workers 2 "$@" > out.txt 2> err.txt ||
        fail "$tag: gtrace --pytorch: $(cat err.txt)"
    expect_eq "$tag: the program ran" done "$(tail -n 1 out.txt)"
    grep -q "annotations are off" err.txt && fail "$tag: the hooks were not installed: $(cat err.txt)"
    grep -qi "unresolved\|does not hold\|dropped" err.txt && fail "$tag: the summary reports a loss: $(cat err.txt)"
    expect_eq "$tag: dropped events" 0 "$(q "$trace" 'SELECT count(*) FROM GTRACE_DROPPED_EVENTS')"
    expect_eq "$tag: processes" 5 "$(q "$trace" 'SELECT count(*) FROM PROCESSES')"
    pool=$(sed -n 's/^pool worker //p' out.txt)
    loader=$(sed -n 's/^loader worker //p' out.txt)
    expect_eq "$tag: pool workers" 2 "$(echo "$pool" | wc -w)"
    expect_eq "$tag: loader workers" 2 "$(echo "$loader" | wc -w)"
    main=$(q "$trace" "SELECT pid FROM PROCESSES WHERE pid NOT IN ($(echo $pool $loader | tr ' ' ','))")
    for pid in $loader; do
        expect_eq "$tag: loader worker $pid: its ranges" "$LOADER" "$(names_of "$trace" "$pid")"
    done
    # The names stay registered strings (nsys's textId) in every process.
    expect_eq "$tag: ranges named by text, not by registered string" 0 \
        "$(q "$trace" "SELECT count(*) FROM NVTX_EVENTS n WHERE n.eventType = 59 AND n.textId IS NULL")"
    # Each process names the domain "PyTorch" and its category "compute".
    expect_eq "$tag: processes that name the PyTorch domain and its compute category" "5|5" \
        "$(q "$trace" "SELECT count(DISTINCT CASE WHEN n.eventType = 75 AND n.text = 'PyTorch' THEN $PID END) || '|' ||
                              count(DISTINCT CASE WHEN n.eventType = 33 AND n.text = 'compute' THEN $PID END)
                       FROM NVTX_EVENTS n")"
}

# check_pool EXPECTED: each pool worker of the last run has exactly the
# ranges EXPECTED names, and each of its 3 steps holds its phases
check_pool() {
    for pid in $pool; do
        expect_eq "$tag: pool worker $pid: its ranges" "$1" "$(names_of "$trace" "$pid")"
        check_steps "$pid" "pool worker $pid"
    done
}

# check_steps PID WHO: the steps of process PID hold their phases: the
# model's and the loss's forward, the backward, the optimizer step; each
# module's range is in a forward.
check_steps() {
    for s in 0 1 2; do
        expect_eq "$tag: $2: the phases of step $s" "backward=1 forward=2 optimizer=1" \
            "$(q "$trace" "SELECT group_concat(k || '=' || c, ' ') FROM (SELECT $NT k, count(*) c
                FROM NVTX_EVENTS n JOIN NVTX_EVENTS p ON p.globalTid = n.globalTid AND p.eventType = 59
                  AND p.start <= n.start AND n.\"end\" <= p.\"end\"
                  AND coalesce(p.text, (SELECT value FROM StringIds WHERE id = p.textId)) = 'step $s'
                WHERE n.eventType = 59 AND $PID = $1 AND $NT IN ('data', 'forward', 'backward', 'optimizer')
                GROUP BY 1 ORDER BY 1)")"
    done
    expect_eq "$tag: $2: module ranges outside a forward" 0 \
        "$(q "$trace" "SELECT count(*) FROM NVTX_EVENTS n WHERE n.eventType = 59 AND $PID = $1
            AND $NT IN ('Sequential', 'Sequential#2', '0', '1', '2', 'MSELoss') AND NOT EXISTS (SELECT 1 FROM NVTX_EVENTS p
              WHERE p.globalTid = n.globalTid AND p.eventType = 59 AND p.start <= n.start AND n.\"end\" <= p.\"end\"
              AND coalesce(p.text, (SELECT value FROM StringIds WHERE id = p.textId)) = 'forward')")"
}

check() {
    run "$1" "$2"
    check_pool "$POOL"
    expect_eq "$tag: the program's own ranges" "$MAIN" "$(names_of "$trace" "$main")"

    # Forked in the middle of the program's training: the same ranges and
    # steps but the model's name.
    run "$1" "$2 forked mid-training" --train-first 2
    check_pool "$(echo "$POOL" | sed 's/Sequential/Sequential#2/g')"

    # Forked while another thread holds the naming lock.
    tag="$2 lock held at fork"
    trace="$tag.sqlite"
    "$GTRACE" --pytorch -o "$trace" "$1" "$SCRIPT" --lock-held-at-fork --steps 3 > out.txt 2> err.txt ||
        fail "$tag: gtrace --pytorch: $(cat out.txt) $(cat err.txt)"
    expect_eq "$tag: the program ran" done "$(tail -n 1 out.txt)"
    child=$(sed -n 's/^fork child //p' out.txt)
    expect_eq "$tag: fork children" 1 "$(echo "$child" | wc -w)"
    expect_eq "$tag: fork child $child: its ranges" "$POOL" "$(names_of "$trace" "$child")"
    check_steps "$child" "fork child $child"
}

check "$PY" "torch-$("$PY" -c 'import torch; print(torch.__version__)')"
for py in ${GT_PYTORCH_PYTHONS:-}; do
    "$py" -c "import torch" 2>/dev/null || fail "GT_PYTORCH_PYTHONS: $py cannot import torch"
    check "$py" "torch-$("$py" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
done
echo "PASS"
