#!/bin/sh
# pytorch_ddp.sh: `gtrace --pytorch torchrun --nproc_per_node=2` on
# pytorch_ddp.py (DistributedDataParallel over gloo on the CPU, 4 steps,
# rank 1 with a bigger batch). Both ranks land in one trace, each named by
# the RANK torchrun gives it; the report has:
#   - Steps by rank: ranks 0 and 1, each with its 4 steps, and for each of
#     the 4 steps the slowest rank (by work: the step less the communication
#     it waited for);
#   - with --pytorch=steps,modules,ops, a Communication section from the
#     collectives among the ops (c10d::allreduce_, the reducer's bucket
#     all-reduces; c10d::broadcast_): both ranks, an all-reduce in every step,
#     all-reduce time above 0, and the collectives not counted as compute
#     (exposed + overlap = communication, exposed above 0: a collective is
#     no compute op on the CPU timeline);
#   - with plain --pytorch (no ops): Steps by rank from the step times.
# torch 1.13's torchrun on Python 3.11 cannot read its own default
# --redirects/--tee ("0": enum.Flag no longer lists a zero member), so they
# are given as 1 (stdout to a log and the console), which every torch reads.
# Skips (77) without a Python whose torch has torch.distributed with gloo.
. "$GT_TOP_SRCDIR/tests/integration/pytorch_common.sh"
"$PY" -c "import torch.distributed as d, sys; sys.exit(0 if d.is_available() and d.is_gloo_available() else 1)" \
    2>/dev/null || { echo "SKIP: torch.distributed with gloo is not available in $PY"; exit 77; }
SCRIPT="$GT_TOP_SRCDIR/tests/integration/pytorch_ddp.py"
STEPS=4

# ddp_run NAME PYTORCH_FEATURES: the traced job into NAME.sqlite and its reports
ddp_run() {
    port=$("$PY" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
    # (a job of 4 steps takes seconds: 300 s means it hung)
    timeout -k 10 300 "$GTRACE" --pytorch$2 -o "$1.sqlite" "$PY" -m torch.distributed.run --nproc_per_node=2 --master_addr=127.0.0.1 \
        --master_port="$port" --redirects 1 --tee 1 --log_dir "$WORK/logs-$1" "$SCRIPT" --steps $STEPS \
        > "$1.out" 2> "$1.err" || fail "the traced torchrun job ($1): $(tail -n 20 "$1.err")"
    for r in 0 1; do
        grep -q "rank $r: $STEPS steps, loss" "$1.out" || fail "$1: rank $r did not finish: $(cat "$1.out")"
    done
    "$GTRACE" report "$1.sqlite" > "$1.txt" || fail "gtrace report ($1)"
    "$GTRACE" report --json "$1.sqlite" > "$1.json" || fail "gtrace report --json ($1)"
    sed -n '/^steps by rank/,/^top CPU ops/p' "$1.txt"
}

# the text's Steps by rank: both ranks named with their 4 steps, a slowest rank for each step
check_text_steps() {
    grep -q "^steps by rank  2 ranks, each its own steps; work: $2" "$1.txt" ||
        fail "$1: no Steps by rank section for 2 ranks ($2): $(cat "$1.txt")"
    for r in 0 1; do
        grep -Eq "^  rank $r \(pid [0-9]+\) python3? +$STEPS " "$1.txt" ||
            fail "$1: the Steps by rank section does not name rank $r with its $STEPS steps"
    done
    grep -q "^  slowest rank per step, by work" "$1.txt" || fail "$1: no slowest-rank line"
    n=$(grep -Ec "^  step [0-9]+ +slowest rank [01] \(pid [0-9]+\)" "$1.txt")
    expect_eq "$1: steps with their slowest rank named" "$STEPS" "$n"
}

ddp_run ops "=steps,modules,ops"
check_text_steps ops "the step less the communication it waited for"
grep -q '^communication  2 ranks: collective ops' ops.txt || fail "ops: no Communication section from the collective ops"
grep -Eq '^  c10d::allreduce_ +[0-9]+ +[0-9.]+ [mun]?s' ops.txt || fail "ops: no c10d::allreduce_ row among the collectives"
"$PY" - ops.json $STEPS <<'PY' || fail "ops: the report's figures"
import json, sys
r, steps = json.load(open(sys.argv[1])), int(sys.argv[2])
rs, c = r["rank_steps"], r["communication"]
def check(what, cond, got):
    print(("ok: " if cond else "FAIL: ") + what + ": " + repr(got))
    if not cond:
        sys.exit(1)
check("Steps by rank: ranks 0 and 1 from torchrun's RANK", [k["rank"] for k in rs["ranks"]] == [0, 1],
      [k["rank"] for k in rs["ranks"]])
check("each rank with its %d steps" % steps, all(k["step_time"]["n"] == steps for k in rs["ranks"]),
      [k["step_time"]["n"] for k in rs["ranks"]])
check("work less the exposed communication", rs["waits_known"] is True, rs["waits_known"])
check("%d steps matched, each with a slowest rank of the two" % steps,
      [s["number"] for s in rs["steps"]] == list(range(steps)) and
      all(s["ranks"] == 2 and s["slowest_rank"] in (0, 1) and s["slowest_work_ns"] >= s["fastest_work_ns"]
          for s in rs["steps"]), rs["steps"])
check("the slowest-step counts add up", sum(k["slowest_steps"] for k in rs["ranks"]) == steps,
      [k["slowest_steps"] for k in rs["ranks"]])
check("communication of ranks 0 and 1, from the collective ops", c["collective_ops"] is True and
      [k["rank"] for k in c["ranks"]] == [0, 1], [(k["rank"], k["source"]) for k in c["ranks"]])
for k in c["ranks"]:
    who = "rank %d" % k["rank"]
    check(who + ": its own %d steps, a collective in each" % steps,
          k["own_steps"] and len(k["steps"]) == steps and all(s["collectives"] >= 1 for s in k["steps"]),
          [s["collectives"] for s in k["steps"]])
    check(who + ": overlap + exposed = comm, exposed above 0 (collectives are no compute)",
          k["overlap_ns"] + k["exposed_ns"] == k["comm_ns"] and k["exposed_ns"] > 0, (k["comm_ns"], k["exposed_ns"]))
kinds = {x["name"]: x for x in c["collectives_by_name"]}
ar = kinds.get("c10d::allreduce_")
check("c10d::allreduce_: at least one a step a rank, time above 0",
      ar is not None and ar["n"] >= 2 * steps and ar["total_ns"] > 0, ar)
# a rank's waited time is its exposed communication in those steps
for k in rs["ranks"]:
    ck = [x for x in c["ranks"] if x["pid"] == k["pid"]][0]
    check("rank %d: waited = its exposed communication" % k["rank"], k["waited_ns"] == ck["exposed_ns"],
          (k["waited_ns"], ck["exposed_ns"]))
PY

ddp_run plain ""
check_text_steps plain "the step's time (no communication in the trace to take out)"
"$PY" - plain.json $STEPS <<'PY' || fail "plain: the report's figures"
import json, sys
r, steps = json.load(open(sys.argv[1])), int(sys.argv[2])
rs = r["rank_steps"]
assert [k["rank"] for k in rs["ranks"]] == [0, 1], rs["ranks"]
assert all(k["step_time"]["n"] == steps and k["waited_ns"] == 0 for k in rs["ranks"]), rs["ranks"]
assert rs["waits_known"] is False and len(rs["steps"]) == steps, rs
# without communication, work is the step's time: the slowest rank has the longest step
assert all(s["slowest_work_ns"] >= s["fastest_work_ns"] for s in rs["steps"]), rs["steps"]
assert r["communication"]["ranks"] == [], r["communication"]["ranks"]
print("ok: plain --pytorch: ranks 0 and 1, %d steps each, the slowest by step time" % steps)
PY
echo "ok: gtrace --pytorch torchrun: steps by rank, the slowest rank per step, communication from the collectives"
