#!/bin/sh
# pytorch_window.sh: capture windows and the flight recorder under
# `gtrace --pytorch`, on pytorch_window.py (a small MLP, 10 steps; Debian's
# python3-torch, skipped, 77, without it). The steps are those --pytorch
# marks (an optimizer step ends each).
#  - --capture=steps:5-7 keeps exactly steps 5, 6 and 7, no range written
#    lies outside them and they hold the ranges a whole run's do; steps:1,8-9
#    two windows;
#  - --capture=nvtx:forward: the forward phases, the steps and modules in
#    them, no backward or optimizer range; nvtx:body.1 (a module's qualified
#    name): its calls, what holds them, no sibling module;
#  - --capture=signal: closed until SIGUSR1 to gtrace while paused after
#    step 3: steps 4 to 9 (step 4 was open when the window opened);
#  - --flight-recorder: SIGUSR2 to gtrace while paused after step 2 dumps
#    steps 0-2; after a pause longer than the recorder, SIGUSR2 to the
#    Python process after step 9 dumps exactly steps 5-9, and the dump at exit
#    is the third;
#  - a CUDA memory snapshot the process leaves (pytorch_snapshot.py, as
#    gtrace_torch/memory.py does on a GPU) goes into the recorder's dump at
#    exit, with no pickle left beside it.
. "$GT_TOP_SRCDIR/tests/integration/pytorch_common.sh"
PROG="$GT_TOP_SRCDIR/tests/integration/pytorch_window.py"
steps() { q "$1" "SELECT group_concat(t, ',') FROM (SELECT $NT AS t FROM NVTX_EVENTS n WHERE $NT LIKE 'step %' ORDER BY n.start)"; }
config() { q "$1" "SELECT value FROM GTRACE_RUN_CONFIG WHERE globalPid = 0 AND key = '$2'"; }
# wait_for FILE: up to 120 s (python and torch start slowly on a busy machine)
wait_for() {
    i=0
    while [ ! -e "$1" ] && [ $i -lt 12000 ]; do sleep 0.01; i=$((i + 1)); done
    [ -e "$1" ] || { kill -9 "$gt" 2>/dev/null; fail "no $1: $(cat err.txt)"; }
}

# ---- steps:5-7 ----------------------------------------------------------------
"$GTRACE" --pytorch -o all.sqlite "$PY" "$PROG" --steps 10 >out.txt 2>err.txt || fail "whole run: $(cat err.txt)"
"$GTRACE" --pytorch -o win.sqlite --capture=steps:5-7 "$PY" "$PROG" --steps 10 >out.txt 2>err.txt ||
    fail "steps:5-7: $(cat err.txt)"
expect_eq "whole run: steps" "step 0,step 1,step 2,step 3,step 4,step 5,step 6,step 7,step 8,step 9" "$(steps all.sqlite)"
expect_eq "steps:5-7: steps" "step 5,step 6,step 7" "$(steps win.sqlite)"
W="(SELECT (SELECT min(start) FROM NVTX_EVENTS n WHERE $NT = 'step 5') AS a,
           (SELECT max(end) FROM NVTX_EVENTS n WHERE $NT = 'step 7') AS b) w"
expect_eq "steps:5-7: NVTX rows outside the steps" 0 \
    "$(q win.sqlite "SELECT count(*) FROM NVTX_EVENTS, $W WHERE eventType IN (34, 59, 60) AND (coalesce(end, start) < a OR start > b)")"
inside() { q "$1" "SELECT count(*) FROM NVTX_EVENTS, $W WHERE eventType = 59 AND start >= a AND end <= b"; }
n_win=$(inside win.sqlite)
[ "$n_win" -gt 30 ] || fail "steps:5-7: only $n_win ranges inside the steps"
expect_eq "steps:5-7: the ranges inside them, as a whole run's" "$(inside all.sqlite)" "$n_win"
"$GTRACE" report --json win.sqlite >win.json || fail "report of the window failed"
expect_eq "steps:5-7: steps the report finds" 3 "$(steps_of win.json)"
"$GTRACE" --pytorch -o two.sqlite --capture=steps:1,8-9 "$PY" "$PROG" --steps 10 >out.txt 2>err.txt ||
    fail "steps:1,8-9: $(cat err.txt)"
expect_eq "steps:1,8-9: steps" "step 1,step 8,step 9" "$(steps two.sqlite)"

# ---- nvtx:forward and nvtx:MODULE ---------------------------------------------
"$GTRACE" --pytorch -o fw.sqlite --capture=nvtx:forward "$PY" "$PROG" --steps 4 >out.txt 2>err.txt ||
    fail "nvtx:forward: $(cat err.txt)"
# a step's forwards: the model's and the loss module's (an outermost module call each)
expect_eq "nvtx:forward: forward ranges" 8 "$(count_of fw.sqlite forward)"
expect_eq "nvtx:forward: the model's ranges" 4 "$(count_of fw.sqlite Net)"
expect_eq "nvtx:forward: backward ranges" 0 "$(q fw.sqlite "SELECT count(*) FROM NVTX_EVENTS n WHERE $NT LIKE '%backward'")"
expect_eq "nvtx:forward: optimizer ranges" 0 "$(count_of fw.sqlite optimizer)"
expect_eq "nvtx:forward: steps holding a forward" "step 0,step 1,step 2,step 3" "$(steps fw.sqlite)"
"$GTRACE" --pytorch -o mod.sqlite --capture=nvtx:body.1 "$PY" "$PROG" --steps 4 >out.txt 2>err.txt ||
    fail "nvtx:body.1: $(cat err.txt)"
expect_eq "nvtx:body.1: its calls" 4 "$(count_of mod.sqlite body.1)"
expect_eq "nvtx:body.1: what it calls" 4 "$(count_of mod.sqlite body.1.lin)"
expect_eq "nvtx:body.1: what holds it" "4 4" "$(count_of mod.sqlite body) $(count_of mod.sqlite Net)"
expect_eq "nvtx:body.1: its siblings" "0 0 0" \
    "$(count_of mod.sqlite body.0) $(count_of mod.sqlite body.2) $(count_of mod.sqlite head)"

# ---- signal ---------------------------------------------------------------------
"$GTRACE" --pytorch -o sig.sqlite --capture=signal --flush-ms=20 "$PY" "$PROG" --steps 10 --pause-after 3 \
    >out.txt 2>err.txt &
gt=$!
wait_for paused.3
kill -USR1 "$gt"
i=0
while [ "$(cat .gtrace-parts-*/window.gate 2>/dev/null)" != 0 ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i + 1)); done
: >resume.3
wait "$gt" || fail "signal: gtrace exited $?: $(cat err.txt)"
expect_eq "signal: steps after SIGUSR1" "step 4,step 5,step 6,step 7,step 8,step 9" "$(steps sig.sqlite)"

# ---- the flight recorder ------------------------------------------------------------
rm -f paused.* resume.*
"$GTRACE" --pytorch -o fl.sqlite --flight-recorder=2s --flush-ms=20 "$PY" "$PROG" --steps 10 --pause-after 2,4,9 \
    >out.txt 2>err.txt &
gt=$!
wait_for paused.2
kill -USR2 "$gt"
wait_for fl.sqlite
: >resume.2
wait_for paused.4
sleep 4 # steps 0-4 fall out of the 2 s recorder
: >resume.4
wait_for paused.9
kill -USR2 "$(pgrep -P "$gt" | head -n 1)"
wait_for fl.2.sqlite
: >resume.9
wait "$gt" || fail "flight recorder: gtrace exited $?: $(cat err.txt)"
expect_eq "dump 1 (SIGUSR2 to gtrace): why" "SIGUSR2" "$(config fl.sqlite flight_dump)"
expect_eq "dump 1: steps" "step 0,step 1,step 2" "$(steps fl.sqlite)"
expect_eq "dump 2 (SIGUSR2 to python): why" "SIGUSR2" "$(config fl.2.sqlite flight_dump)"
expect_eq "dump 2: the last steps" "step 5,step 6,step 7,step 8,step 9" "$(steps fl.2.sqlite)"
[ "$(config fl.2.sqlite flight_window_start_ns)" -gt 0 ] || fail "dump 2: nothing fell out of the recorder"
expect_eq "dump 3 (the end): why" "exit 0" "$(config fl.3.sqlite flight_dump)"
[ ! -e fl.4.sqlite ] || fail "a fourth dump"

# ---- a CUDA memory snapshot into the recorder's dump ----------------------------------
FX="$GT_TOP_SRCDIR/tests/fixtures/pytorch"
"$GTRACE" --pytorch -o snap.sqlite --flight-recorder=30s "$PY" "$GT_TOP_SRCDIR/tests/integration/pytorch_snapshot.py" \
    "$FX" good >out.txt 2>err.txt || fail "snapshot: gtrace exited $?: $(cat err.txt)"
P=$(sed -n 's/^pid \([0-9]*\) .*/\1/p' out.txt)
grep -q "CUDA memory     process $P: 2 segments, 3 blocks, 10 actions" err.txt ||
    fail "snapshot: not in the dump: $(cat err.txt)"
[ -z "$(ls | grep pickle)" ] || fail "snapshot: a pickle beside the dump: $(ls)"
expect_eq "snapshot: memory events in the dump" 9 "$(q snap.sqlite "SELECT count(*) FROM GTRACE_MEMORY_EVENTS")"
expect_eq "snapshot: their pid" "$P" \
    "$(q snap.sqlite "SELECT group_concat(DISTINCT (globalTid >> 24) & 16777215) FROM GTRACE_MEMORY_EVENTS")"
expect_eq "snapshot: the range it was made in" 1 "$(count_of snap.sqlite allocate)"
echo "all good"
