#!/bin/sh
# pytorch_threads.sh: a step belongs to the thread that steps the optimizer.
# 50 threads run 20 forwards each, then the main thread trains 3 steps
# (pytorch_threads.py): the trace has exactly "step 0", "step 1" and "step 2",
# on the main thread, with the step's batch, forward, backward and optimizer
# step inside each, and `gtrace report` finds the 3 steps; each worker thread
# has its 20 forward ranges and no step; threads calling the model at once
# name it once ("Net", never "Net#2"). The same when the main thread runs a
# forward first and the training runs on a thread of its own.
# Debian's python3-torch (1.13); GT_PYTORCH_PYTHONS may name more Pythons
# with torch, each checked the same way.
GT_SAN_TORCH=yes # runs under the sanitizers too (pytorch_common.sh)
. "$GT_TOP_SRCDIR/tests/integration/pytorch_common.sh"
SCRIPT="$GT_TOP_SRCDIR/tests/integration/pytorch_threads.py"
TID="(n.globalTid & 16777215)"

# check PYTHON TAG THREADS FORWARDS [--train-thread]: one traced run, checked
check() {
    py=$1 tag=$2 threads=$3 forwards=$4
    shift 4
    tag="$tag${*:+ $*}"
    trace="$tag.sqlite"
    "$GTRACE" --pytorch -o "$trace" "$py" "$SCRIPT" --threads "$threads" --forwards "$forwards" --steps 3 "$@" \
        > out.txt 2> err.txt || fail "$tag: gtrace --pytorch: $(cat err.txt)"
    grep -q "trained 3 steps" out.txt || fail "$tag: the program did not run: $(cat out.txt)"
    grep -q "annotations are off" err.txt && fail "$tag: the hooks were not installed: $(cat err.txt)"
    trainer=$(sed -n 's/^trainer tid //p' out.txt)
    [ -n "$trainer" ] || fail "$tag: no trainer tid: $(cat out.txt)"
    for s in 0 1 2; do
        expect_eq "$tag: range 'step $s'" 1 "$(count_of "$trace" "step $s")"
    done
    expect_eq "$tag: a step after the last optimizer step" 0 "$(count_of "$trace" "step 3")"
    expect_eq "$tag: steps on the training thread" 3 "$(q "$trace" "SELECT count(*) FROM NVTX_EVENTS n
        WHERE n.eventType = 59 AND $NT LIKE 'step %' AND $TID = $trainer")"
    "$GTRACE" report --json "$trace" > r.json || fail "$tag: report --json"
    expect_eq "$tag: steps found by the report" 3 "$(steps_of r.json)"
    # Each step on the training thread holds its batch, forwards (the model,
    # the loss), backward and optimizer step.
    phases=$(q "$trace" "SELECT group_concat(k || '=' || c, ' ') FROM (SELECT $NT k, count(*) c
        FROM NVTX_EVENTS n JOIN NVTX_EVENTS p ON p.globalTid = n.globalTid AND p.eventType = 59
          AND p.start <= n.start AND n.\"end\" <= p.\"end\"
          AND coalesce(p.text, (SELECT value FROM StringIds WHERE id = p.textId)) LIKE 'step %'
        WHERE n.eventType = 59 AND $TID = $trainer
          AND $NT IN ('data', 'forward', 'backward', 'optimizer') GROUP BY 1 ORDER BY 1)")
    expect_eq "$tag: phases inside the steps" "backward=3 data=3 forward=6 optimizer=3" "$phases"
    # The forward ranges of each thread but the training one: every worker's 20
    # (and with --train-thread the main thread's 1).
    per=$(q "$trace" "SELECT group_concat(c || 'x' || k, ' ') FROM (SELECT c, count(*) k FROM (
        SELECT count(*) c FROM NVTX_EVENTS n WHERE n.eventType = 59 AND $NT = 'forward' AND $TID != $trainer
        GROUP BY n.globalTid) GROUP BY c ORDER BY c)")
    want="${forwards}x$threads"
    [ $# -gt 0 ] && want="1x1 $want"
    expect_eq "$tag: forwards per other thread (FORWARDSxTHREADS)" "$want" "$per"
    expect_eq "$tag: step ranges on other threads" 0 "$(q "$trace" "SELECT count(*) FROM NVTX_EVENTS n
        WHERE n.eventType = 59 AND $NT LIKE 'step %' AND $TID != $trainer")"
    total=$((threads * forwards + 3))
    [ $# -gt 0 ] && total=$((total + 1))
    expect_eq "$tag: module 'Net'" $total "$(count_of "$trace" Net)"
    expect_eq "$tag: module 'body.0'" $total "$(count_of "$trace" body.0)"
    expect_eq "$tag: the model named twice" 0 "$(q "$trace" "SELECT count(*) FROM NVTX_EVENTS n
        WHERE n.eventType = 59 AND $NT LIKE 'Net#%'")"
}

run_all() {
    check "$1" "$2" 50 20
    check "$1" "$2" 8 5 --train-thread
}
run_all "$PY" "torch-$("$PY" -c 'import torch; print(torch.__version__)')"
for py in ${GT_PYTORCH_PYTHONS:-}; do
    "$py" -c "import torch" 2>/dev/null || fail "GT_PYTORCH_PYTHONS: $py cannot import torch"
    run_all "$py" "torch-$("$py" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
done
echo "PASS"
