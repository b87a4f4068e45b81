#!/bin/sh
# pytorch_backward_sampled.sh: module backward ranges on sampled steps
# (`--pytorch=...,backward-every=N`): a node pre-hook costs torch more than a
# forward range, so by default (N = 25) only the first ten steps and every
# 25th step after carry "NAME backward" ranges; every step has its forward
# ranges and its backward phase. 27 steps of pytorch_train.py's CNN
# (in-place ReLUs), the losses bit for bit those of the run without --pytorch:
#   - default: "Net backward" in steps 0-9 and 25 alone, "Net" in all 27;
#     the report says which steps the module table's backward figures are
#     from ("module_backward_steps"; its text heading) and those figures are
#     the sums of those steps' ranges, read from the trace;
#   - backward-every=4: steps 0-3 and every 4th (N under ten: the first N);
#   - backward-every=1: in every step, and the report says nothing of it;
#   - backward-every=0: none, the backward phase in every step;
#   - modules without steps, backward-every=4: each torch.autograd.backward
#     counts, so backwards 0-4, 8, 12, 16, 20 and 24 have them;
#   - a bad N is refused with one line and exit 2.
# Debian's python3-torch (1.13); GT_PYTORCH_PYTHONS may name more Pythons
# with torch (a 2.x in a virtual environment), each checked the same way.
. "$GT_TOP_SRCDIR/tests/integration/pytorch_common.sh"
STEPS=27

# per_step TRACE NAME: how many NAME ranges start in each step, "N:count" a step
per_step() {
    q "$1" "SELECT group_concat(k || ':' || c, ' ') FROM (SELECT CAST(substr(sn, 6) AS INTEGER) k, c FROM (
        SELECT (SELECT $NT FROM NVTX_EVENTS n WHERE n.rowid = s.rowid) sn,
               (SELECT count(*) FROM NVTX_EVENTS n WHERE n.eventType = 59 AND n.globalTid = s.globalTid
                  AND $NT = '$2' AND s.start <= n.start AND n.start < s.\"end\") c
        FROM NVTX_EVENTS s WHERE s.eventType = 59
          AND coalesce(s.text, (SELECT value FROM StringIds WHERE id = s.textId)) GLOB 'step [0-9]*')
        ORDER BY k)"
}

# expected STEPS SAMPLED...: "N:1" for the sampled steps, "N:0" for the others
expected() {
    n=$1
    shift
    out= k=0
    while [ $k -lt "$n" ]; do
        c=0
        for s in "$@"; do [ "$s" = $k ] && c=1; done
        out="$out${out:+ }$k:$c"
        k=$((k + 1))
    done
    echo "$out"
}

check() {
    py=$1 tag=$2
    "$GTRACE" -o plain.sqlite --force "$py" "$TRAIN" --steps $STEPS --inplace --losses > plain.txt 2> err.txt ||
        fail "$tag: without --pytorch: $(cat err.txt)"
    for spec in steps,modules steps,modules,backward-every=1 steps,modules,backward-every=0 \
                steps,modules,backward-every=4 modules,backward-every=4; do
        "$GTRACE" --pytorch=$spec -o "$spec.sqlite" --force "$py" "$TRAIN" --steps $STEPS --inplace --losses \
            > marked.txt 2> err.txt || fail "$tag: --pytorch=$spec: $(cat err.txt)"
        grep -q "annotations are off" err.txt && fail "$tag: --pytorch=$spec: the hooks are off: $(cat err.txt)"
        cmp -s plain.txt marked.txt || { diff plain.txt marked.txt; fail "$tag: --pytorch=$spec: the losses differ"; }
    done
    echo "ok: $tag: the same losses with and without each --pytorch"

    all=$(expected $STEPS $(seq 0 $((STEPS - 1))))
    expect_eq "$tag: default: 'Net' in each step" "$all" "$(per_step steps,modules.sqlite Net)"
    expect_eq "$tag: default: 'Net backward' in steps 0-9, 25" \
        "$(expected $STEPS 0 1 2 3 4 5 6 7 8 9 25)" "$(per_step steps,modules.sqlite 'Net backward')"
    expect_eq "$tag: default: 'features.0.conv backward' in steps 0-9, 25" \
        "$(expected $STEPS 0 1 2 3 4 5 6 7 8 9 25)" "$(per_step steps,modules.sqlite 'features.0.conv backward')"
    expect_eq "$tag: every=4: 'Net backward' in steps 0-3, 4, 8, ... 24" \
        "$(expected $STEPS 0 1 2 3 4 8 12 16 20 24)" "$(per_step steps,modules,backward-every=4.sqlite 'Net backward')"
    expect_eq "$tag: default: the backward phase in each step" "$all" "$(per_step steps,modules.sqlite backward)"
    expect_eq "$tag: every=1: 'Net backward' in each step" "$all" \
        "$(per_step steps,modules,backward-every=1.sqlite 'Net backward')"
    expect_eq "$tag: every=0: no module backward range" 0 "$(q steps,modules,backward-every=0.sqlite \
        "SELECT count(*) FROM NVTX_EVENTS n WHERE n.eventType = 59 AND $NT GLOB '* backward'")"
    expect_eq "$tag: every=0: the backward phase in each step" "$all" \
        "$(per_step steps,modules,backward-every=0.sqlite backward)"
    expect_eq "$tag: every=0: 'Net' in each step" "$all" "$(per_step steps,modules,backward-every=0.sqlite Net)"
    expect_eq "$tag: modules, every=4: 'Net backward' ranges" 10 "$(count_of modules,backward-every=4.sqlite 'Net backward')"
    expect_eq "$tag: modules, every=4: 'Net' ranges" $((STEPS + 1)) "$(count_of modules,backward-every=4.sqlite Net)"

    # the report: which steps, and the figures of those steps' ranges
    "$GTRACE" report --json --top 100 steps,modules.sqlite > r.json || fail "$tag: report --json"
    "$GTRACE" report steps,modules.sqlite > r.txt || fail "$tag: report"
    sums=$(q steps,modules.sqlite "SELECT count(*) || ' ' || sum(n.\"end\" - n.start) FROM NVTX_EVENTS n
        WHERE n.eventType = 59 AND $NT = 'Net backward'")
    "$py" - r.json "$sums" $STEPS <<'PY' || fail "$tag: the report's module table"
import json, sys
r, (n_bwd, bwd_ns), steps = json.load(open(sys.argv[1])), map(int, sys.argv[2].split()), int(sys.argv[3])
assert len(r["steps"]) == steps, len(r["steps"])
assert r["module_backward_steps"] == list(range(10)) + [25], r["module_backward_steps"]
net = [m for m in r["modules"] if m["name"] == "Net"]
assert len(net) == 1, [m["name"] for m in r["modules"]]
net = net[0]
assert net["forward_calls"] == steps + 1, net  # and the evaluation after the last step
assert net["backward_calls"] == n_bwd == 11, (net, n_bwd)
assert net["backward_total_ns"] == bwd_ns, (net, bwd_ns)
print("ok: the report: backward from steps %s, Net's backward %d calls, %d ns, as the trace's ranges"
      % (r["module_backward_steps"], n_bwd, bwd_ns))
PY
    grep -q "bwd: sampled, the 11 steps of $STEPS with backward ranges (0-9, 25); fwd: every step" r.txt ||
        fail "$tag: the module table does not say its backward is sampled: $(grep -A2 '^modules' r.txt)"
    echo "ok: $tag: $(grep 'bwd: sampled' r.txt)"
    "$GTRACE" report --json steps,modules,backward-every=1.sqlite > r1.json || fail "$tag: report --json (every=1)"
    expect_eq "$tag: every=1: module_backward_steps" None \
        "$("$py" -c "import json, sys; print(json.load(open(sys.argv[1]))['module_backward_steps'])" r1.json)"
}

check "$PY" "torch-$("$PY" -c 'import torch; print(torch.__version__)')"
for py in ${GT_PYTORCH_PYTHONS:-}; do
    "$py" -c "import torch" 2>/dev/null || fail "GT_PYTORCH_PYTHONS: $py cannot import torch"
    check "$py" "torch-$("$py" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
done

for bad in backward-every=x backward-every=-1 backward-every= backward-every=2000000 steps,backward-every=3x; do
    "$GTRACE" --pytorch=$bad -o bad.sqlite "$PY" -c 'pass' > out.txt 2> err.txt && fail "--pytorch=$bad was taken"
    expect_eq "--pytorch=$bad: exit status" 2 $?
    expect_eq "--pytorch=$bad: one line on stderr" 1 "$(wc -l < err.txt)"
done
echo "PASS"
